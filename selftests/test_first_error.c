// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: the first completion after a remote error names it (SEND into a re-registered receive, WRITE/READ/FETCH_ADD at a stale rkey), on shared and separate CQs, flushes after it; reset, it works again
 *
 * The first completion after a remote error names the cause, also on a
 * CQ that the QP's send and receive queues share (issue 37 item 2, as
 * mlx5 and rdma-core's test_mr.py rereg tests expect).
 *
 * The responder's MR is re-registered (CHANGE_TRANSLATION to other
 * pages, or CHANGE_PD to a PD the QP is not in) after the requester
 * learnt its address and rkey, or after the responder posted a receive
 * into it.  The requester, which has receives of its own posted, then
 * sends the WR that fails and one more:
 *   SEND into the stale receive: REM_OP_ERR (the receive LOC_PROT_ERR);
 *   RDMA WRITE, RDMA READ, FETCH_ADD to the stale rkey: REM_ACCESS_ERR.
 * On one shared CQ per side, and on separate ones: the requester's first
 * completion is the failing WR with that status, then its other SEND
 * and its receives flush (WR_FLUSH_ERR, each queue in posting order),
 * nothing more.  Then both QPs are reset and reconnected and the same
 * operation through the re-registered MR succeeds, byte for byte, and
 * its completions are the first each side polls: also when the
 * requester read only the error and left the flushes in its CQ (and the
 * responder all of its completions), which a reset removes, as on mlx5.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dp.h"
#include "tap.h"
#include "util.h"

#define LEN 256
#define SEND_ID 0x900		/* the failing WR; SEND_ID + 1 behind it */
#define RECV_ID 0x200		/* the requester's two receives */
#define PEER_RECV_ID 0x800	/* the responder's receive */

enum stale { STALE_TRANSLATION, STALE_PD };

static struct dp_dev dev;
static uint8_t *lbuf;		/* the requester's buffer */
static struct ibv_mr *lmr;

struct side {
	struct ibv_cq *scq, *rcq;	/* the same CQ when shared */
	struct ibv_qp *qp;
};

static bool side_create(struct side *s, bool shared)
{
	s->scq = ibv_create_cq(dev.ctx, 64, NULL, NULL, 0);
	s->rcq = shared ? s->scq : ibv_create_cq(dev.ctx, 64, NULL, NULL, 0);
	if (!s->scq || !s->rcq)
		return false;
	s->qp = dp_create_qp(&dev, IBV_QPT_RC, s->scq, s->rcq, NULL,
			     &dp_small_cap);
	return s->qp != NULL;
}

static void side_free(struct side *s)
{
	if (s->qp)
		ibv_destroy_qp(s->qp);
	if (s->rcq && s->rcq != s->scq)
		ibv_destroy_cq(s->rcq);
	if (s->scq)
		ibv_destroy_cq(s->scq);
}

static bool connect_both(struct side *a, struct side *b, bool reset)
{
	struct ibv_qp_attr r = { .qp_state = IBV_QPS_RESET };
	struct dp_conn c;

	dp_conn_default(&c);
	if (reset && (ibv_modify_qp(a->qp, &r, IBV_QP_STATE) ||
		      ibv_modify_qp(b->qp, &r, IBV_QP_STATE)))
		return false;
	return !dp_connect(a->qp, &dev, &dev.gid, b->qp->qp_num, &c) &&
	       !dp_connect(b->qp, &dev, &dev.gid, a->qp->qp_num, &c);
}

static const char *op_name(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_SEND:
		return "SEND into a stale receive";
	case IBV_WR_RDMA_WRITE:
		return "RDMA WRITE to a stale rkey";
	case IBV_WR_RDMA_READ:
		return "RDMA READ from a stale rkey";
	default:
		return "FETCH_ADD at a stale rkey";
	}
}

/* op from lbuf (8 bytes for FETCH_ADD, which adds 1) to raddr */
static int post_op(struct side *a, uint64_t id, enum ibv_wr_opcode op,
		   uint64_t raddr, uint32_t rkey)
{
	uint32_t len = op == IBV_WR_ATOMIC_FETCH_AND_ADD ? 8 : LEN;

	return dp_post_send1(a->qp, id, op, lbuf, len, lmr->lkey, raddr, rkey,
			     0);
}

static void print_wcs(const struct ibv_wc *wc, int n)
{
	int i;

	for (i = 0; i < n; i++)
		tap_diag("  wr_id %#llx status %s", (unsigned long long)wc[i].wr_id,
			 dp_status_str(wc[i].status));
}

/*
 * The requester's completions: the failing WR with status st first
 * (on the send CQ, which may be the receive CQ), then SEND_ID + 1 and
 * the two receives flushed, each queue in order, and nothing else.
 */
static void expect_requester(struct side *a, enum ibv_wc_status st,
			     const char *what)
{
	struct ibv_wc wc[8];
	uint64_t next_send = SEND_ID + 1, next_recv = RECV_ID;
	int got, more, i;
	bool ok;

	got = dp_poll(a->scq, wc, a->scq == a->rcq ? 4 : 2, DP_WAIT_MS);
	ok = got >= 1 && wc[0].wr_id == SEND_ID && wc[0].status == st;
	if (!tap_ok(ok, "%s: the first completion is the failing WR with %s",
		    what, dp_status_str(st)))
		print_wcs(wc, got);
	if (a->rcq != a->scq && got >= 1) {
		more = dp_poll(a->rcq, wc + got, 2, DP_WAIT_MS);
		got += more > 0 ? more : 0;
	}
	ok = got == 4;
	for (i = 1; ok && i < got; i++) {
		/* by wr_id: a flushed completion's opcode is undefined */
		uint64_t *next = wc[i].wr_id < SEND_ID ? &next_recv :
							 &next_send;

		ok = wc[i].status == IBV_WC_WR_FLUSH_ERR &&
		     wc[i].wr_id == *next;
		(*next)++;
	}
	ok = ok && next_send == SEND_ID + 2 && next_recv == RECV_ID + 2;
	if (!tap_ok(ok, "%s: then the other SEND and both receives flush, each queue in order",
		    what))
		print_wcs(wc, got);
	tap_ok(dp_poll_none(a->scq, wc, 50) == 0 &&
	       dp_poll_none(a->rcq, wc, 0) == 0,
	       "%s: no further requester completion", what);
	tap_ret(qp_state(a->qp), IBV_QPS_ERR, "%s: requester QP in ERROR", what);
}

/* Only the requester's first completion: the failing WR with st */
static void expect_first(struct side *a, enum ibv_wc_status st,
			 const char *what)
{
	struct ibv_wc wc;
	int got = dp_poll(a->scq, &wc, 1, DP_WAIT_MS);

	if (!tap_ok(got == 1 && wc.wr_id == SEND_ID && wc.status == st,
		    "%s: the first completion is the failing WR with %s", what,
		    dp_status_str(st)))
		print_wcs(&wc, got);
}

/* The responder of a SEND: its receive LOC_PROT_ERR first */
static void expect_responder_recv(struct side *b, const char *what)
{
	struct dp_wc_want w = dp_want(PEER_RECV_ID, -1);

	w.status = IBV_WC_LOC_PROT_ERR;
	dp_expect(b->rcq, &w, "%s: the responder's receive LOC_PROT_ERR", what);
}

/* After reset and reconnect: op through the re-registered MR works */
static void after_reconnect(struct side *a, struct side *b,
			    enum ibv_wr_opcode op, uint8_t *target,
			    struct ibv_mr *m, const char *what)
{
	struct ibv_wc wc;
	int r;

	if (!tap_ok(connect_both(a, b, true), "%s: reset and reconnect both QPs",
		    what))
		return;
	dp_fill(lbuf, LEN, 7);
	memset(target, 0x11, LEN);
	if (op == IBV_WR_RDMA_READ) {
		dp_fill(target, LEN, 7);
		memset(lbuf, 0, LEN);
	}
	r = op == IBV_WR_SEND ?
		dp_post_recv1(b->qp, PEER_RECV_ID + 1, target, LEN, m->lkey) : 0;
	r = r ?: post_op(a, SEND_ID + 2, op, (uintptr_t)target, m->rkey);
	if (!tap_ret_errno(r, 0, "%s: after reconnect, post the operation",
			   what))
		return;
	r = dp_poll(a->scq, &wc, 1, DP_WAIT_MS);
	tap_ok(r == 1 && wc.wr_id == SEND_ID + 2 &&
	       wc.status == IBV_WC_SUCCESS,
	       "%s: after reconnect, it completes SUCCESS (%s)", what,
	       r == 1 ? dp_status_str(wc.status) : "no completion");
	if (op == IBV_WR_SEND) {
		struct dp_wc_want w = dp_want(PEER_RECV_ID + 1, IBV_WC_RECV);

		w.byte_len = LEN;
		dp_expect(b->rcq, &w, "%s: after reconnect, the receive", what);
	}
	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD)
		tap_ok(*(uint64_t *)lbuf == 0x1111111111111111ULL &&
		       *(uint64_t *)target == 0x1111111111111112ULL,
		       "%s: after reconnect, old value returned, 1 added", what);
	else if (op == IBV_WR_RDMA_READ)
		tap_ok(dp_verify(lbuf, LEN, 7) < 0,
		       "%s: after reconnect, the new pages read byte-exact", what);
	else
		tap_ok(dp_verify(target, LEN, 7) < 0,
		       "%s: after reconnect, the new pages hold the data byte-exact",
		       what);
	tap_ok(dp_poll_none(a->scq, &wc, 20) == 0 &&
	       dp_poll_none(a->rcq, &wc, 0) == 0 &&
	       dp_poll_none(b->scq, &wc, 0) == 0 &&
	       dp_poll_none(b->rcq, &wc, 0) == 0,
	       "%s: after reconnect, no other completion on either side", what);
}

static void first_error(enum ibv_wr_opcode op, enum stale how, bool shared,
			bool drain)
{
	uint8_t *old = dp_alloc(4096), *new = dp_alloc(4096);
	struct ibv_pd *pd2 = ibv_alloc_pd(dev.ctx);
	enum ibv_wc_status st = op == IBV_WR_SEND ? IBV_WC_REM_OP_ERR :
						    IBV_WC_REM_ACCESS_ERR;
	struct side a = { 0 }, b = { 0 };
	struct ibv_mr *m = NULL;
	char what[160];
	int r, i;

	snprintf(what, sizeof(what), "%s after rereg %s, %s CQ%s", op_name(op),
		 how == STALE_PD ? "CHANGE_PD" : "CHANGE_TRANSLATION",
		 shared ? "one shared" : "separate send and receive",
		 drain ? "" : ", flushes left in the CQ");
	if (pd2)
		m = ibv_reg_mr(dev.pd, old, 4096, DP_ACCESS_ALL);
	if (!tap_ok(m && side_create(&a, shared) && side_create(&b, shared) &&
		    connect_both(&a, &b, false), "%s: set up", what))
		goto out;
	memset(old, 0x33, 4096);
	memset(new, 0x44, 4096);
	for (i = 0, r = 0; i < 2 && !r; i++)
		r = dp_post_recv1(a.qp, RECV_ID + i, lbuf + 1024 + LEN * i, LEN,
				  lmr->lkey);
	if (op == IBV_WR_SEND)
		r = r ?: dp_post_recv1(b.qp, PEER_RECV_ID, old, LEN, m->lkey);
	if (how == STALE_TRANSLATION)
		r = r ?: ibv_rereg_mr(m, IBV_REREG_MR_CHANGE_TRANSLATION, NULL,
				      new, 4096, 0);
	else
		r = r ?: ibv_rereg_mr(m, IBV_REREG_MR_CHANGE_PD, pd2, NULL, 0,
				      0);
	dp_fill(lbuf, LEN, 3);
	r = r ?: post_op(&a, SEND_ID, op, (uintptr_t)old, m->rkey);
	r = r ?: dp_post_send1(a.qp, SEND_ID + 1, IBV_WR_SEND, lbuf, 8,
			       lmr->lkey, 0, 0, 0);
	if (!tap_ret_errno(r, 0, "%s: receives, rereg, the failing WR and a SEND",
			   what))
		goto out;
	if (drain) {
		expect_requester(&a, st, what);
		if (op == IBV_WR_SEND)
			expect_responder_recv(&b, what);
	} else {
		expect_first(&a, st, what);
		/* the flushes are in the CQs well before this */
		usleep(100000);
	}
	tap_ok(dp_verify_byte(old, 4096, 0x33) < 0 &&
	       dp_verify_byte(new, 4096, 0x44) < 0,
	       "%s: neither the old nor the new pages written", what);
	if (how == STALE_PD)
		r = ibv_rereg_mr(m, IBV_REREG_MR_CHANGE_PD, dev.pd, NULL, 0, 0);
	if (tap_ret_errno(r, 0, "%s: the MR back in the QPs' PD", what))
		after_reconnect(&a, &b, op, how == STALE_PD ? old : new, m,
				what);
out:
	side_free(&a);
	side_free(&b);
	if (m)
		ibv_dereg_mr(m);
	if (pd2)
		ibv_dealloc_pd(pd2);
	free(old);
	free(new);
}

int main(void)
{
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_SEND, IBV_WR_RDMA_WRITE, IBV_WR_RDMA_READ,
		IBV_WR_ATOMIC_FETCH_AND_ADD,
	};
	unsigned int i;
	int shared;

	dp_open(&dev, test_dev_name());
	lbuf = dp_alloc(4096);
	lmr = dp_reg(dev.pd, lbuf, 4096, DP_ACCESS_ALL);
	for (shared = 1; shared >= 0; shared--)
		for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
			if (ops[i] == IBV_WR_ATOMIC_FETCH_AND_ADD &&
			    dev.attr.atomic_cap == IBV_ATOMIC_NONE)
				continue;
			first_error(ops[i], STALE_TRANSLATION, shared, true);
			first_error(ops[i], STALE_PD, shared, true);
			first_error(ops[i], STALE_TRANSLATION, shared, false);
			first_error(ops[i], STALE_PD, shared, false);
		}
	ibv_dereg_mr(lmr);
	dp_close(&dev);
	return tap_done();
}
