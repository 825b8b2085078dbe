/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the tag matching tests share (test_tm_basic, test_tm_eager,
 * test_tm_rndv, test_tm_errors; tm_lib.c).
 *
 * Tag matching: a TM SRQ (IBV_SRQT_TM) with its tag list driven by
 * ibv_post_srq_ops, fed by RC QPs looped back over the IPv4 RoCEv2 GID
 * whose SENDs start with a struct ibv_tmh.  The SRQ's CQ is an extended
 * CQ with IBV_WC_EX_WITH_TM_INFO; the tests keep their own model of the
 * device's and the software's unexpected-message counts and check
 * IBV_WC_TM_SYNC_REQ against it where mlx5 sets it: on ADD and DEL
 * completions while the counts differ (never on a SYNC's, and not on
 * an unexpected message's until software is 0x3fff behind).
 *
 * Each program makes the same objects: tm_open() the device (a device
 * that is not rxe2 and has no tag matching is a skip, rxe2 without it a
 * failure), the buffers and their MRs, the SRQ's CQ; tm_pairs() the main
 * SRQ (TAGS tags, OPS ops) and two RC pairs on it, s1 -> r1 and s2 -> r2;
 * tm_close() checks that the QPs' own receive CQs and the SRQ's CQ are
 * empty and destroys everything.  The setup's and the teardown's own
 * checks (tm_caps exactly: 64 B rendezvous header, 1024 tags, RC, 256
 * ops, 8 SGEs; the CQ, the SRQ, each destroy) are TAP lines of
 * test_tm_basic, which calls tm_open(true); the others print such a
 * check only when it fails, so the suite counts each once.
 */
#ifndef RXE2_TM_LIB_H
#define RXE2_TM_LIB_H

#include <stdbool.h>
#include <stdint.h>
#include <infiniband/tm_types.h>

#include "dp.h"

#define TMH_LEN ((uint32_t)sizeof(struct ibv_tmh))
#define SLOT 4096
#define NSLOT 48
#define WQE_SLOT (NSLOT - 1)	/* SRQ WQEs: one outstanding at a time */
#define CANARY 0xa5
#define TAGS 8			/* the main SRQ's max_num_tags: it fills */
#define OPS 8			/* and its max_ops */
#define NO_TAG 0xdead0000ull	/* | n: tag values no ADD uses */
#define TM_MASK (IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |              \
		 IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_TM)
#define SIG IBV_OPS_SIGNALED
#define SYNC IBV_OPS_TM_SYNC
#define RVH_LEN ((uint32_t)sizeof(struct ibv_rvh))
#define FIN_LEN (TMH_LEN + RVH_LEN)	/* a FIN: TMH and RVH, 32 B */
#define FIN_SLOT 64		/* the sender's FIN receive buffers */
#define NFIN 32
#define XREGIONS 5		/* xbuf: the senders' rendezvous data */

extern struct dp_dev dev;
extern struct ibv_cq_ex *tcq;		/* the TM SRQ's CQ, with TM info */
extern struct ibv_srq *srq;		/* TAGS tags, OPS ops */
extern struct dp_qp s1, r1, s2, r2;	/* senders; receivers on srq */
extern uint8_t *sbuf, *rbuf;		/* messages; tags' slots of SLOT B */
extern struct ibv_mr *smr, *rmr;
/*
 * Rendezvous: xbuf holds what senders offer (xmr remote-readable,
 * xmr_local the same bytes without REMOTE_READ), fbuf the senders' FIN
 * receive buffers (NFIN of FIN_SLOT, then one more).
 */
extern uint8_t *xbuf, *fbuf;
extern struct ibv_mr *xmr, *xmr_local, *fmr;

/* Unexpected messages as the device counts them and as software does. */
extern uint32_t dev_cnt, sw_cnt;
/* The message last built in sbuf: its TMH tag and app_ctx. */
extern uint64_t msg_tag;
extern uint32_t msg_ctx, seed;
extern uint64_t send_id, wqe_id, op_id;

/* A tagged buffer: by default one SGE over its whole slot of rbuf. */
struct tag {
	uint64_t tag, mask;
	uint64_t id;		/* recv_wr_id */
	int slot;
	uint32_t handle;
};

/* One completion of the SRQ's CQ as the extended getters read it. */
struct tm_wc {
	uint64_t wr_id, tag;
	int status, opcode;
	uint32_t byte_len, qp_num, priv;
	unsigned int flags;
};

struct tm_want {
	uint64_t wr_id;
	int status, opcode;
	long byte_len;		/* -1: not compared */
	unsigned int flags;	/* wc_flags exactly, IBV_WC_GRH aside */
	unsigned int ignore;	/* further wc_flags not compared */
	long qp_num;		/* -1: not compared */
	bool tm;		/* tag and priv compared */
	uint64_t tag;
	uint32_t priv;
};

/* One single-packet (or longer) RNDV message in sbuf and what it names. */
struct rndv {
	uint8_t *hdr;		/* the message, in sbuf */
	uint32_t len;		/* its length */
	uint64_t tag;
	uint32_t ctx;		/* app_ctx */
	const uint8_t *src;	/* the sender's data (rvh.va) */
	uint32_t rkey, rlen;	/* rvh.rkey, rvh.len */
	uint64_t send_id;
	uint8_t fin[FIN_LEN];	/* its FIN: the TMH as FIN, the RVH */
};

/* setup and teardown (checks: the setup's checks as TAP lines) */
void tm_open(bool checks);
void tm_pairs(void);
void tm_close(void);

/* the tags' slots of rbuf */
uint8_t *slot(int i);
struct ibv_sge slot_sge(int i, uint32_t off, uint32_t len);

/* the SRQ's CQ: completions read, wanted and expected */
const char *opname(int opcode);
unsigned int sync_req(void);
void read_wc(struct ibv_cq_ex *cq, int k, void *arg);
struct tm_want want(uint64_t wr_id, int opcode);
bool tm_match(const struct tm_wc *g, const struct tm_want *w);
void tm_diag(const char *what, const struct tm_wc *g);
void want_diag(const struct tm_want *w);
bool expect_tm(const struct tm_want *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
bool expect_none(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
bool expect_op(uint64_t wr_id, int opcode, int status, const char *what);

/* the tag list: ibv_post_srq_ops with the model's counts */
int post_ops(struct ibv_ops_wr *op, struct ibv_ops_wr **bad);
void init_add(struct ibv_ops_wr *op, const struct tag *t,
	      struct ibv_sge *sge, int nsge, int flags, uint32_t unexp);
bool add(struct tag *t, int flags, uint32_t unexp, const char *what);
void del(uint32_t handle, int flags, uint32_t unexp, int status,
	 const char *what);
void sync_op(int flags, uint32_t unexp, const char *what);
void add_sg(struct tag *t, struct ibv_sge *sge, int n, const char *what);

/* messages: built, sent, and where they land */
void build(uint8_t op, uint64_t tag, uint32_t len);
void send_built(struct dp_qp *from, uint32_t len, const char *what);
void send_msg(struct dp_qp *from, uint8_t op, uint64_t tag, uint32_t len,
	      const char *what);
uint64_t post_wqe(void);
bool check_scatter(int s, const struct ibv_sge *sge, int n,
		   const uint8_t *data, uint32_t len, const char *what);
bool check_data(int s, const uint8_t *data, uint32_t len, const char *what);
struct tm_want want_matched(const struct tag *t, uint32_t qp_num,
			    uint32_t len, uint64_t tag, uint32_t ctx);
void expect_match(struct dp_qp *to, const struct tag *t, uint32_t len,
		  const char *what);
void eager(struct dp_qp *from, struct dp_qp *to, const struct tag *t,
	   uint64_t tag, uint32_t len, const char *what);
void expect_unexp(struct dp_qp *to, uint64_t wqe, uint32_t len,
		  const char *what);
void unexpected(struct dp_qp *from, struct dp_qp *to, uint8_t op,
		uint64_t tag, uint32_t len, const char *what);

/* SRQs, QPs and pairs */
struct ibv_srq *tm_srq(struct ibv_cq *cq, uint32_t mask, uint32_t tags,
		       uint32_t ops);
void qp_make(struct dp_qp *q, struct ibv_srq *s);
void qp_make_tm(struct dp_qp *q, const char *what);
void connect2(struct dp_qp *x, struct dp_qp *y);
void pair_destroy(struct dp_qp *s, struct dp_qp *r, const char *what);

/* rendezvous messages */
const uint8_t *rndv_src(int r, uint32_t rlen);
void rndv_build(struct rndv *m, uint32_t off, uint64_t tag, uint32_t len,
		const uint8_t *src, uint32_t rkey, uint32_t rlen);
bool rndv_post(struct dp_qp *from, struct rndv *m, const char *what);
void rndv_sent(struct dp_qp *from, const struct rndv *m, const char *what);
struct tm_want want_rndv_match(const struct dp_qp *to, const struct tag *t,
			       const struct rndv *m);

#endif /* RXE2_TM_LIB_H */
