/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Helpers shared by the data-path selftests: a device with a PD and its
 * IPv4 RoCEv2 GID, QPs connected to a peer with chosen path attributes,
 * bounded CQ polling, exact work-completion checks and byte patterns.
 * Nothing here ever blocks without a deadline.
 */
#ifndef RXE2_SELFTEST_DP_H
#define RXE2_SELFTEST_DP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>

/* Default deadline of one expected completion. */
#define DP_WAIT_MS 10000

struct dp_dev {
	const char *name;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_device_attr attr;
	struct ibv_port_attr port;
	union ibv_gid gid;
	int gidx;
	bool rxe2;
};

/* Opens the device, allocates a PD, finds the IPv4 GID; bails on error. */
void dp_open(struct dp_dev *d, const char *name);
void dp_close(struct dp_dev *d);
/* An AH to the device's own IPv4 GID (loopback); bails on error. */
struct ibv_ah *dp_loop_ah(struct dp_dev *d);
/* Re-reads the port attributes (active MTU after a netdev MTU change). */
int dp_query_port(struct dp_dev *d);

/* Connection parameters for dp_connect(); dp_conn_default() fills them. */
struct dp_conn {
	enum ibv_mtu mtu;
	uint8_t timeout;
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	uint8_t min_rnr_timer;
	uint8_t rd_atomic;
	uint32_t sq_psn;	/* of this QP */
	uint32_t rq_psn;	/* expected from the peer (its sq_psn) */
	unsigned int access;	/* qp_access_flags */
	uint32_t qkey;		/* UD */
};

void dp_conn_default(struct dp_conn *c);

/*
 * Creates a QP with the given caps on the PD (send and receive CQ, srq may
 * be NULL).  Returns NULL with errno set.
 */
struct ibv_qp *dp_create_qp(struct dp_dev *d, enum ibv_qp_type type,
			    struct ibv_cq *scq, struct ibv_cq *rcq,
			    struct ibv_srq *srq, const struct ibv_qp_cap *cap);

/*
 * RESET -> INIT -> RTR -> RTS towards the peer QP number over dgid (RC/UC,
 * XRC_SEND/XRC_RECV; UD ignores dgid/dqpn).  Returns 0 or the first
 * ibv_modify_qp error.
 */
int dp_connect(struct ibv_qp *qp, const struct dp_dev *d,
	       const union ibv_gid *dgid, uint32_t dqpn,
	       const struct dp_conn *c);

/* Milliseconds of CLOCK_MONOTONIC. */
uint64_t dp_now_ms(void);

/*
 * The device's next async event within ms (the caller acks it), or false;
 * makes the async fd non-blocking.
 */
bool dp_async_event(struct dp_dev *d, struct ibv_async_event *ev, int ms);

/*
 * Polls until n completions arrived or timeout_ms passed; returns how
 * many were stored in wc (or -1 when ibv_poll_cq fails).
 */
int dp_poll(struct ibv_cq *cq, struct ibv_wc *wc, int n, int timeout_ms);

/*
 * Extended polling (ibv_start_poll / next_poll / end_poll): up to n
 * completions of cq within DP_WAIT_MS, in as few sequences as they come;
 * read(cq, k, arg) takes the kth from the CQ's current entry.  Returns
 * how many were read.
 */
int dp_poll_ex(struct ibv_cq_ex *cq, int n,
	       void (*read)(struct ibv_cq_ex *cq, int k, void *arg), void *arg);

/* Sleeps for ms, then returns the number of completions found (>= 0). */
int dp_poll_none(struct ibv_cq *cq, struct ibv_wc *wc, int ms);

/* What dp_check_wc() compares; a negative field is not compared. */
struct dp_wc_want {
	uint64_t wr_id;
	int status;
	int opcode;
	long byte_len;
	long wc_flags;
	long imm;		/* host order; compared when WITH_IMM is set */
	long src_qp;
	long sl;		/* UD receive on rxe2/mlx5: the RoCE packet type */
	long qp_num;
	long inv_rkey;		/* compared when WITH_INV is set */
	unsigned int flags_ignore;	/* wc_flags bits not compared */
};

/* A want with every optional field "don't care" and status SUCCESS. */
struct dp_wc_want dp_want(uint64_t wr_id, int opcode);

/* One TAP line: the completion matches want exactly. */
bool dp_check_wc(const struct ibv_wc *wc, const struct dp_wc_want *w,
		 const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * Waits for exactly one completion on cq and checks it; one TAP line. A
 * missing completion is a failure naming the deadline.
 */
bool dp_expect(struct ibv_cq *cq, const struct dp_wc_want *w,
	       const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Fills buf with a pattern that depends on seed and each byte's offset. */
void dp_fill(void *buf, size_t len, uint32_t seed);
/* Index of the first byte that differs from dp_fill(seed), or -1. */
long dp_verify(const void *buf, size_t len, uint32_t seed);
/* Index of the first byte that differs from c, or -1. */
long dp_verify_byte(const void *buf, size_t len, uint8_t c);

/*
 * An rxe2dv query answered into buf (buflen bytes, 0xff before the call)
 * for inlen bytes, more than the reflen of the structure it knows: the
 * known fields equal ref, the unknown tail up to inlen reads 0, nothing
 * past inlen is written.  Three TAP lines.
 */
void dp_expect_longer_attr(const uint8_t *buf, size_t buflen,
			   const void *ref, size_t reflen, size_t inlen);

/*
 * Port 1's hw_counters entry NAME of device IBDEV (sysfs), or -1.  Waits
 * out ib_core's 10 ms cache of the counters first.
 */
long dp_hw_counter(const char *ibdev, const char *name);

/* Page-aligned, zeroed memory; bails on failure. */
void *dp_alloc(size_t len);

/* Registers buf with the given access; bails on failure. */
struct ibv_mr *dp_reg(struct ibv_pd *pd, void *buf, size_t len, int access);

/* Every remote access plus local write. */
#define DP_ACCESS_ALL                                                         \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |                   \
	 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

/* Name of a wc status for diagnostics. */
const char *dp_status_str(int status);

/* Runs a shell command; returns its exit status (or -1). */
int dp_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Fault injection, /sys/kernel/config/rxe2/IBDEV/ (rxe2_fault.c,
 * docs/knobs.md).  dp_fault_write() takes one line, a rule or "clear":
 *
 *   ACTION [qpn=Q] [opcode=OP] [every=N] [rate=N] [count=K] [ms=T]
 *
 * and makes rules/NNNN/ (a number one above the last), writes each field
 * to its file and enable last: 0, or the errno of the first mkdir, write
 * or enable that failed (EINVAL too for a word that is not a field), the
 * rule then removed.  "clear" removes every rule.  The directory of IBDEV
 * is made when needed and removed when no rule is left and tx_drop is 0,
 * as each directory pins the module.  dp_fault_read() lists the live
 * rules in name order (the order they went live in), one line each as
 * written, fields left out that read "any" or 0, with " matched=M
 * fired=F" added: "" without any, 0 or a read's errno.
 * dp_fault_tx_drop() writes tx_drop: 0 or the errno.  Every test
 * injects faults through these (shell tests: lib.sh's fault_*).
 */
int dp_fault_write(const char *ibdev, const char *line);
int dp_fault_read(const char *ibdev, char *buf, size_t len);
int dp_fault_tx_drop(const char *ibdev, unsigned int every);
/* VAL and a newline written to PATH, or PATH's first line read: 0 or errno */
int dp_cfs_put(const char *path, const char *val);
int dp_cfs_get(const char *path, char *buf, size_t len);

/*
 * Whether `rdma resource show RES` of device DEV (port 1 and FILTER,
 * e.g. "lqpn 17", when FILTER is not "") with -dd has the driver detail
 * "NAME V" (the rdma tool prints it as drv_NAME) exactly.
 */
bool dp_res_detail(const char *dev, const char *res, const char *filter,
		   const char *name, const char *v);

/* Netdev carrying the device's port (first GID's ndev), or NULL. */
const char *dp_netdev(const struct dp_dev *d);
/*
 * A packet socket on d's netdev for every protocol: what a tap (tcpdump)
 * sees there, with a receive buffer of rcvbuf bytes.  -1 on error.
 */
int dp_packet_socket(const struct dp_dev *d, int rcvbuf);

/*
 * Sets the netdev MTU and waits (bounded) until the port's active MTU is
 * at least want (an ibv_mtu).  Returns 0 or -1.
 */
int dp_set_mtu(struct dp_dev *d, const char *netdev, int mtu,
	       enum ibv_mtu want);

/* A QP with its own send and receive CQs. */
struct dp_qp {
	struct dp_dev *d;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
};

/*
 * Creates a and b (CQs of 256 entries, the given type and caps; srq may
 * be NULL) and connects them to each other with c.  Returns 0 or an errno;
 * on error whatever was created is freed.
 */
int dp_pair(struct dp_dev *da, struct dp_dev *db, enum ibv_qp_type type,
	    const struct ibv_qp_cap *cap, const struct dp_conn *c,
	    struct dp_qp *a, struct dp_qp *b);
/* dp_pair() of two RC QPs on one device, default connection, small caps */
int dp_rc_pair(struct dp_dev *d, struct dp_qp *a, struct dp_qp *b);
/* A UD QP (CQs of 256 entries) in RTS with c's Q_Key: 0 or an errno */
int dp_ud_qp(struct dp_dev *d, const struct ibv_qp_cap *cap,
	     const struct dp_conn *c, struct dp_qp *q);
void dp_qp_free(struct dp_qp *q);

/* One signaled (flags added) WR with one SGE (len 0: still one SGE). */
int dp_post_send1(struct ibv_qp *qp, uint64_t wr_id, enum ibv_wr_opcode op,
		  const void *addr, uint32_t len, uint32_t lkey,
		  uint64_t raddr, uint32_t rkey, unsigned int flags);
int dp_post_recv1(struct ibv_qp *qp, uint64_t wr_id, void *addr,
		  uint32_t len, uint32_t lkey);

/*
 * struct ibv_mr_init_attr of libibverbs 59 on (public ABI) and its
 * comp_mask bits, for ibv_reg_mr_ex() found with dlsym(): the headers
 * of 44 have neither.
 */
struct dp_mr_init_attr {
	size_t length;
	int access;
	uint64_t comp_mask;
	uint64_t iova;
	void *addr;
	int fd;
	uint64_t fd_offset;
	void *dmah;
	void *buf;
};

#define DP_REG_MR_MASK_IOVA	(1 << 0)
#define DP_REG_MR_MASK_ADDR	(1 << 1)
#define DP_REG_MR_MASK_DMAH	(1 << 4)

/* Small default caps: 64 WRs each way, one SGE, no inline. */
extern const struct ibv_qp_cap dp_small_cap;

/*
 * rxe2 device to device: a veth pair rxe2dp0 (198.18.7.1) / rxe2dp1
 * (198.18.7.2), MTU 9000, with rxe2 links rxe2_dp0 and rxe2_dp1 whose
 * IPv4 GIDs are present.  Returns false (diagnostics printed) on error.
 */
bool dp_veth_links(void);
/* Removes them again; returns 0 or the shell's status. */
int dp_veth_links_del(void);

#endif /* RXE2_SELFTEST_DP_H */
