/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Helpers shared by the selftests: device lookup, resource counts, QPs. */
#ifndef RXE2_SELFTEST_UTIL_H
#define RXE2_SELFTEST_UTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#define PORT 1

/* $RXE2_DEV, or rxe2_0 */
const char *test_dev_name(void);
/* $RXE_DEV, or rxe0: the in-tree reference device */
const char *test_ref_dev_name(void);
/* Opens the named device or bails out of the test. */
struct ibv_context *test_open(const char *name);
/* The device under test is rxe2 (it carries the rxe2_abi sysfs attribute). */
bool test_is_rxe2(const char *name);

/*
 * Count of one object type ("pd", "cq", "qp", "mr", "srq", "ctx") that
 * `rdma resource show` reports for the device, or -1.
 */
int res_count(const char *dev, const char *type);
/* All counts of the device as one comparable string (empty on error). */
void res_snapshot(const char *dev, char *buf, size_t len);

/* The number a file (sysfs) starts with, or -1. */
long read_long(const char *path);

/*
 * How many times slower than usual this guest runs: selftests/run's
 * RXE2_TEST_TIMEOUT over its default 180 s (5 on the sanitizer kernel),
 * at least 1.  Tests stretch their time windows by it, as lib.sh's
 * scaled() does for the shell tests.
 */
int time_scale(void);

/* rdma_rxe2 module parameter value, or -1 when absent. */
long module_param(const char *name);

/*
 * Index of the RoCEv2 GID that holds an IPv4 address (::ffff:a.b.c.d) on
 * the port, -1 if there is none.  gid may be NULL.
 */
int find_ipv4_gid(struct ibv_context *ctx, union ibv_gid *gid);

/*
 * Attributes and exactly the attr_mask IBTA requires for moving a QP of
 * the given type into INIT, RTR and RTS.  The RTR address vector loops
 * back over the IPv4 GID at sgid_index to dgid and dest_qpn.
 */
void qp_attr_init(enum ibv_qp_type t, struct ibv_qp_attr *a, int *mask);
void qp_attr_rtr(enum ibv_qp_type t, int sgid_index, const union ibv_gid *dgid,
		 uint32_t dest_qpn, struct ibv_qp_attr *a, int *mask);
void qp_attr_rts(enum ibv_qp_type t, struct ibv_qp_attr *a, int *mask);

/* The same moves applied; each returns 0 or ibv_modify_qp's errno. */
int qp_to_init(struct ibv_qp *qp);
int qp_to_rtr(struct ibv_qp *qp, int sgid_index, const union ibv_gid *dgid);
int qp_to_rts(struct ibv_qp *qp);
/* The QP's current state, or -1 if ibv_query_qp fails. */
int qp_state(struct ibv_qp *qp);

#endif /* RXE2_SELFTEST_UTIL_H */
