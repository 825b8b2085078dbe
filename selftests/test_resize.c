// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: ibv_resize_cq grow and shrink under traffic, SRQ resize with WQEs pending, SQD (SQ_DRAINED after the last ACK, SQD->RTS), receives posted in ERROR flushed
 *
 * Queues that change under traffic: ibv_resize_cq (grow and shrink with
 * unpolled CQEs, while CQEs are being produced, completion events and
 * ibv_cq_ex polling afterwards), SRQ resize with ibv_modify_srq
 * (IBV_SRQ_MAX_WR: pending receive WQEs keep their order, the limit
 * event still works), the SQD state (SQ_DRAINED only once every
 * outstanding send is acknowledged, nothing new starts until SQD->RTS)
 * and receives posted to a QP already in the error state (flushed
 * without any further action).  Every message is checked byte for byte
 * and every completion by wr_id, status, opcode and length, in order.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp.h"
#include "tap.h"
#include "util.h"

#define SLOT 4096
#define NSLOT 64

static struct dp_dev dev;
static uint8_t *sbuf, *rbuf;
static struct ibv_mr *smr, *rmr;

static uint32_t msg_len(uint64_t id)
{
	return 1 + (uint32_t)((id * 397) % SLOT);
}

static uint32_t msg_seed(uint64_t id)
{
	return (uint32_t)(id * 7919 + 11);
}

/* SEND of message id (length and pattern follow from it), signaled */
static int send_msg(struct ibv_qp *qp, uint64_t id)
{
	uint8_t *p = sbuf + (id % NSLOT) * SLOT;

	dp_fill(p, msg_len(id), msg_seed(id));
	return dp_post_send1(qp, id, IBV_WR_SEND, p, msg_len(id), smr->lkey,
			     0, 0, 0);
}

static void *rslot(uint64_t rid)
{
	return rbuf + (rid % NSLOT) * SLOT;
}

static int post_rq(struct ibv_qp *qp, uint64_t rid)
{
	memset(rslot(rid), 0, SLOT);
	return dp_post_recv1(qp, rid, rslot(rid), SLOT, rmr->lkey);
}

static int post_srq(struct ibv_srq *srq, uint64_t rid)
{
	struct ibv_sge sge = { .addr = (uintptr_t)rslot(rid), .length = SLOT,
			       .lkey = rmr->lkey };
	struct ibv_recv_wr wr = { .wr_id = rid, .sg_list = &sge,
				  .num_sge = 1 }, *bad = NULL;

	memset(rslot(rid), 0, SLOT);
	return ibv_post_srq_recv(srq, &wr, &bad);
}

/* receive completion rid holding message id, data checked */
static bool check_recv(const struct ibv_wc *wc, uint64_t rid, uint64_t id,
		       const char *what)
{
	struct dp_wc_want w = dp_want(rid, IBV_WC_RECV);
	long bad;

	w.byte_len = msg_len(id);
	if (!dp_check_wc(wc, &w, "%s: receive %llu", what,
			 (unsigned long long)rid))
		return false;
	bad = dp_verify(rslot(rid), msg_len(id), msg_seed(id));
	return tap_ok(bad < 0, "%s: message %llu byte for byte (first bad %ld)",
		      what, (unsigned long long)id, bad);
}

/* n send completions, wr_ids first .. first+n-1 in order */
static bool wait_sends(struct ibv_cq *cq, uint64_t first, int n,
		       const char *what)
{
	struct ibv_wc wc[64];
	int i, got;
	bool ok = true;

	got = dp_poll(cq, wc, n, DP_WAIT_MS);
	if (!tap_ok(got == n, "%s: %d send completions (got %d)", what, n, got))
		return false;
	for (i = 0; i < n; i++)
		if (wc[i].wr_id != first + i || wc[i].status != IBV_WC_SUCCESS)
			ok = false;
	return tap_ok(ok, "%s: sends %llu..%llu succeeded in order", what,
		      (unsigned long long)first,
		      (unsigned long long)(first + n - 1));
}

/* a connected RC pair; b receives on rcq (and srq if given) */
static void make_pair(struct dp_qp *a, struct dp_qp *b, struct ibv_cq *rcq,
		      struct ibv_srq *srq, const struct dp_conn *c)
{
	struct ibv_qp_cap cap = { .max_send_wr = 64, .max_recv_wr = 64,
				  .max_send_sge = 1, .max_recv_sge = 1 };

	memset(a, 0, sizeof(*a));
	memset(b, 0, sizeof(*b));
	a->d = b->d = &dev;
	a->scq = ibv_create_cq(dev.ctx, 128, NULL, NULL, 0);
	a->rcq = ibv_create_cq(dev.ctx, 128, NULL, NULL, 0);
	b->scq = ibv_create_cq(dev.ctx, 128, NULL, NULL, 0);
	b->rcq = rcq;
	if (!a->scq || !a->rcq || !b->scq || !rcq)
		tap_bail("create CQs: %s", strerror(errno));
	a->qp = dp_create_qp(&dev, IBV_QPT_RC, a->scq, a->rcq, NULL, &cap);
	b->qp = dp_create_qp(&dev, IBV_QPT_RC, b->scq, rcq, srq, &cap);
	if (!a->qp || !b->qp)
		tap_bail("create QPs: %s", strerror(errno));
	if (dp_connect(a->qp, &dev, &dev.gid, b->qp->qp_num, c))
		tap_bail("connect: %s", strerror(errno));
	if (dp_connect(b->qp, &dev, &dev.gid, a->qp->qp_num, c))
		tap_bail("connect: %s", strerror(errno));
}


/* no async event pending; one that is there is acknowledged (destroy waits) */
static bool no_event(void)
{
	struct ibv_async_event ev;

	if (!dp_async_event(&dev, &ev, 0))
		return true;
	tap_diag("unexpected async event %d", ev.event_type);
	ibv_ack_async_event(&ev);
	return false;
}

/* ------------------------------------------------------------------ */

static void test_cq_args(const struct ibv_device_attr *a)
{
	struct ibv_cq *cq = ibv_create_cq(dev.ctx, 16, NULL, NULL, 0);

	if (!cq)
		tap_bail("create CQ: %s", strerror(errno));
	tap_ret_errno(ibv_resize_cq(cq, 0), EINVAL, "resize_cq 0 -> EINVAL");
	tap_ret_errno(ibv_resize_cq(cq, -1), EINVAL, "resize_cq -1 -> EINVAL");
	tap_ret_errno(ibv_resize_cq(cq, a->max_cqe + 1), EINVAL,
		      "resize_cq max_cqe+1 -> EINVAL");
	tap_ok(cq->cqe >= 16, "a refused resize keeps cqe (%d)", cq->cqe);
	if (tap_ret_errno(ibv_resize_cq(cq, 100), 0, "resize_cq 16 -> 100"))
		tap_ok(cq->cqe >= 100, "cqe %d >= 100", cq->cqe);
	if (tap_ret_errno(ibv_resize_cq(cq, a->max_cqe), 0,
			  "resize_cq to max_cqe (%d)", a->max_cqe))
		tap_ok(cq->cqe >= a->max_cqe, "cqe %d >= max_cqe", cq->cqe);
	if (tap_ret_errno(ibv_resize_cq(cq, 1), 0, "resize_cq (empty) -> 1"))
		tap_ok(cq->cqe >= 1 && cq->cqe < 100, "cqe %d shrank", cq->cqe);
	tap_ret_errno(ibv_destroy_cq(cq), 0, "destroy the resized CQ");
}

/*
 * Twelve receive CQEs wait unpolled while the CQ shrinks, grows and
 * shrinks again with half of them polled; then more traffic.  The
 * sender's completions come after the receiver's CQEs (the ACK follows
 * the CQE), so waiting for them needs no look at the receive CQ.
 */
static void test_cq_pending(void)
{
	struct ibv_cq *rcq = ibv_create_cq(dev.ctx, 64, NULL, NULL, 0);
	struct ibv_wc wc[16];
	struct dp_qp a, b;
	struct dp_conn c;
	int i, got, round;

	dp_conn_default(&c);
	make_pair(&a, &b, rcq, NULL, &c);
	for (i = 0; i < 12; i++)
		post_rq(b.qp, 100 + i);
	for (i = 0; i < 12; i++)
		if (send_msg(a.qp, 1 + i))
			tap_bail("post send: %s", strerror(errno));
	wait_sends(a.scq, 1, 12, "before resize");

	tap_ret_errno(ibv_resize_cq(rcq, 11), EINVAL,
		      "resize below the 12 unpolled CQEs -> EINVAL");
	if (tap_ret_errno(ibv_resize_cq(rcq, 12), 0,
			  "shrink 64 -> 12 with 12 CQEs pending"))
		tap_ok(rcq->cqe >= 12 && rcq->cqe < 64, "cqe %d", rcq->cqe);
	if (tap_ret_errno(ibv_resize_cq(rcq, 300), 0,
			  "grow -> 300 with 12 CQEs pending"))
		tap_ok(rcq->cqe >= 300, "cqe %d", rcq->cqe);
	got = dp_poll(rcq, wc, 6, DP_WAIT_MS);
	if (tap_ok(got == 6, "poll 6 after the resizes (got %d)", got))
		for (i = 0; i < 6; i++)
			check_recv(&wc[i], 100 + i, 1 + i, "pending");
	tap_ret_errno(ibv_resize_cq(rcq, 7), 0,
		      "shrink -> 7 with 6 CQEs pending");
	got = dp_poll(rcq, wc, 16, 0);
	if (tap_ok(got == 6, "the other 6 follow, no more (got %d)", got))
		for (i = 0; i < 6; i++)
			check_recv(&wc[i], 106 + i, 7 + i, "pending");

	/* traffic into the 8-slot ring, twice round its end */
	for (round = 0; round < 3; round++) {
		uint64_t rid = 200 + round * 6, id = 20 + round * 6;

		for (i = 0; i < 6; i++)
			post_rq(b.qp, rid + i);
		for (i = 0; i < 6; i++)
			send_msg(a.qp, id + i);
		wait_sends(a.scq, id, 6, "after resize");
		got = dp_poll(rcq, wc, 6, DP_WAIT_MS);
		if (tap_ok(got == 6, "6 receives after the resize (got %d)",
			   got))
			for (i = 0; i < 6; i++)
				check_recv(&wc[i], rid + i, id + i, "after");
	}
	tap_ok(dp_poll_none(rcq, wc, 50) == 0, "nothing else on the CQ");

	dp_qp_free(&a);
	dp_qp_free(&b);
}

/*
 * Resizes while the responder produces CQEs: 48 messages in flight, the
 * receive CQ moved between 64 and 128 slots between polls.  Nothing may
 * be lost, duplicated or reordered.
 */
static void test_cq_concurrent(void)
{
	struct ibv_cq *rcq = ibv_create_cq(dev.ctx, 64, NULL, NULL, 0);
	struct ibv_wc wc[64];
	uint64_t end;
	struct dp_qp a, b;
	struct dp_conn c;
	int i, n = 0, resizes = 0, bad_resize = 0, bad = 0;

	dp_conn_default(&c);
	make_pair(&a, &b, rcq, NULL, &c);
	for (i = 0; i < 48; i++)
		post_rq(b.qp, 300 + i);
	for (i = 0; i < 48; i++)
		send_msg(a.qp, 400 + i);
	end = dp_now_ms() + DP_WAIT_MS;
	while (n < 48 && dp_now_ms() < end) {
		int got;

		if (ibv_resize_cq(rcq, (resizes & 1) ? 64 : 128))
			bad_resize++;
		resizes++;
		got = ibv_poll_cq(rcq, 3, wc);
		for (i = 0; i < got; i++, n++)
			if (wc[i].wr_id != 300 + (uint64_t)n ||
			    wc[i].status != IBV_WC_SUCCESS ||
			    wc[i].byte_len != msg_len(400 + n) ||
			    dp_verify(rslot(300 + n), msg_len(400 + n),
				      msg_seed(400 + n)) >= 0)
				bad++;
	}
	tap_ok(n == 48 && !bad && !bad_resize,
	       "48 receives across %d resizes: %d in order and intact, %d bad, %d failed resizes",
	       resizes, n, bad, bad_resize);
	wait_sends(a.scq, 400, 48, "concurrent");
	dp_qp_free(&a);
	dp_qp_free(&b);
}

/* an armed CQ stays armed across a resize; events work afterwards */
static void test_cq_events(void)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(dev.ctx);
	struct ibv_cq *rcq, *ev_cq;
	struct ibv_wc wc;
	struct dp_qp a, b;
	struct dp_conn c;
	void *ev_ctx;
	int round;

	if (!ch)
		tap_bail("comp channel: %s", strerror(errno));
	rcq = ibv_create_cq(dev.ctx, 16, (void *)0x5a, ch, 0);
	dp_conn_default(&c);
	make_pair(&a, &b, rcq, NULL, &c);
	for (round = 0; round < 2; round++) {
		struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };

		tap_ret_errno(ibv_req_notify_cq(rcq, 0), 0, "arm (round %d)",
			      round);
		tap_ret_errno(ibv_resize_cq(rcq, round ? 8 : 40), 0,
			      "resize the armed CQ (round %d)", round);
		post_rq(b.qp, 500 + round);
		send_msg(a.qp, 600 + round);
		tap_ok(poll(&pfd, 1, DP_WAIT_MS) == 1,
		       "completion event after the resize (round %d)", round);
		if (tap_ret_errno(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), 0,
				  "ibv_get_cq_event")) {
			tap_ok(ev_cq == rcq && ev_ctx == (void *)0x5a,
			       "the event names the resized CQ");
			ibv_ack_cq_events(rcq, 1);
		}
		if (tap_ret(dp_poll(rcq, &wc, 1, DP_WAIT_MS), 1, "its CQE"))
			check_recv(&wc, 500 + round, 600 + round, "event");
		wait_sends(a.scq, 600 + round, 1, "event");
	}
	dp_qp_free(&a);
	dp_qp_free(&b);
	ibv_destroy_comp_channel(ch);
}

/* ibv_cq_ex polling over a resized ring */
static void test_cq_ex(void)
{
	struct ibv_cq_init_attr_ex ia = {
		.cqe = 8,
		.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_QP_NUM,
	};
	struct ibv_poll_cq_attr pa = {};
	struct ibv_cq_ex *cqx = ibv_create_cq_ex(dev.ctx, &ia);
	struct dp_qp a, b;
	struct dp_conn c;
	int i, ret, n = 0;
	bool ok = true;

	if (!cqx) {
		tap_ok(false, "ibv_create_cq_ex: %s", strerror(errno));
		return;
	}
	dp_conn_default(&c);
	make_pair(&a, &b, ibv_cq_ex_to_cq(cqx), NULL, &c);
	for (i = 0; i < 6; i++)
		post_rq(b.qp, 700 + i);
	for (i = 0; i < 6; i++)
		send_msg(a.qp, 800 + i);
	wait_sends(a.scq, 800, 6, "cq_ex");
	tap_ret_errno(ibv_resize_cq(ibv_cq_ex_to_cq(cqx), 64), 0,
		      "resize the cq_ex with 6 CQEs pending");
	for (ret = ibv_start_poll(cqx, &pa); !ret; ret = ibv_next_poll(cqx)) {
		if (cqx->wr_id != 700 + (uint64_t)n ||
		    cqx->status != IBV_WC_SUCCESS ||
		    ibv_wc_read_opcode(cqx) != IBV_WC_RECV ||
		    ibv_wc_read_byte_len(cqx) != msg_len(800 + n) ||
		    ibv_wc_read_qp_num(cqx) != b.qp->qp_num ||
		    dp_verify(rslot(700 + n), msg_len(800 + n),
			      msg_seed(800 + n)) >= 0)
			ok = false;
		n++;
	}
	if (n)
		ibv_end_poll(cqx);
	tap_ok(ret == ENOENT && n == 6 && ok,
	       "start/next_poll: %d CQEs in order and intact (ret %d)", n, ret);
	dp_qp_free(&a);
	dp_qp_free(&b);
}

/* ------------------------------------------------------------------ */

static void test_srq(const struct ibv_device_attr *da)
{
	struct ibv_srq_init_attr si = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_srq_attr sa;
	struct ibv_async_event ev;
	struct ibv_cq *rcq = ibv_create_cq(dev.ctx, 128, NULL, NULL, 0);
	struct ibv_srq *srq = ibv_create_srq(dev.pd, &si);
	struct ibv_wc wc[64];
	struct dp_qp a, b;
	struct dp_conn c;
	int i, got;

	tap_ok(da->device_cap_flags & IBV_DEVICE_SRQ_RESIZE,
	       "device_cap_flags has SRQ_RESIZE");
	if (!srq || !rcq)
		tap_bail("SRQ/CQ: %s", strerror(errno));
	dp_conn_default(&c);
	make_pair(&a, &b, rcq, srq, &c);

	for (i = 0; i < 10; i++)
		post_srq(srq, 1000 + i);
	memset(&sa, 0, sizeof(sa));
	sa.max_wr = 9;
	tap_ret_errno(ibv_modify_srq(srq, &sa, IBV_SRQ_MAX_WR), EINVAL,
		      "SRQ max_wr below the 10 pending WQEs -> EINVAL");
	sa.max_wr = da->max_srq_wr + 1;
	tap_ret_errno(ibv_modify_srq(srq, &sa, IBV_SRQ_MAX_WR), EINVAL,
		      "SRQ max_wr max_srq_wr+1 -> EINVAL");
	sa.max_wr = 40;
	tap_ret_errno(ibv_modify_srq(srq, &sa, IBV_SRQ_MAX_WR), 0,
		      "grow the SRQ 16 -> 40 with 10 WQEs pending");
	if (!ibv_query_srq(srq, &sa))
		tap_ok(sa.max_wr >= 40, "query: max_wr %u", sa.max_wr);
	/* 30 more than the old ring could hold */
	for (i = 10; i < 40; i++)
		if (post_srq(srq, 1000 + i))
			break;
	tap_ok(i == 40, "40 WQEs fit the grown SRQ (%d)", i);
	for (i = 0; i < 40; i++)
		send_msg(a.qp, 1100 + i);
	wait_sends(a.scq, 1100, 40, "SRQ grown");
	got = dp_poll(rcq, wc, 40, DP_WAIT_MS);
	if (tap_ok(got == 40, "40 receives (got %d)", got))
		for (i = 0; i < 40; i++)
			check_recv(&wc[i], 1000 + i, 1100 + i, "SRQ grown");

	/* shrink with WQEs pending, then arm the limit on the new ring */
	for (i = 0; i < 10; i++)
		post_srq(srq, 1200 + i);
	sa.max_wr = 10;
	tap_ret_errno(ibv_modify_srq(srq, &sa, IBV_SRQ_MAX_WR), 0,
		      "shrink the SRQ -> 10 with 10 WQEs pending");
	if (!ibv_query_srq(srq, &sa))
		tap_ok(sa.max_wr >= 10 && sa.max_wr < 40, "query: max_wr %u",
		       sa.max_wr);
	sa.srq_limit = 7;
	tap_ret_errno(ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT), 0,
		      "arm srq_limit 7 on the shrunk SRQ");
	sa.max_wr = 4;
	tap_ret_errno(ibv_modify_srq(srq, &sa, IBV_SRQ_MAX_WR), EINVAL,
		      "max_wr below the armed limit -> EINVAL");
	/* the event comes when fewer than 7 remain: at the 4th receive */
	for (i = 0; i < 3; i++)
		send_msg(a.qp, 1300 + i);
	wait_sends(a.scq, 1300, 3, "down to the limit");
	tap_ok(no_event(), "no limit event with 7 WQEs left");
	send_msg(a.qp, 1303);
	wait_sends(a.scq, 1303, 1, "below the limit");
	if (tap_ok(dp_async_event(&dev, &ev, DP_WAIT_MS), "an async event")) {
		tap_ok(ev.event_type == IBV_EVENT_SRQ_LIMIT_REACHED &&
		       ev.element.srq == srq, "SRQ_LIMIT_REACHED (%d)",
		       ev.event_type);
		ibv_ack_async_event(&ev);
	}
	if (!ibv_query_srq(srq, &sa))
		tap_ok(sa.srq_limit == 0, "the limit disarmed (%u)",
		       sa.srq_limit);
	for (i = 4; i < 10; i++)
		send_msg(a.qp, 1300 + i);
	wait_sends(a.scq, 1304, 6, "rest");
	got = dp_poll(rcq, wc, 10, DP_WAIT_MS);
	if (tap_ok(got == 10, "10 receives after the shrink (got %d)", got))
		for (i = 0; i < 10; i++)
			check_recv(&wc[i], 1200 + i, 1300 + i, "SRQ shrunk");

	ibv_destroy_qp(b.qp);
	b.qp = NULL;
	ibv_destroy_srq(srq);
	dp_qp_free(&a);
	dp_qp_free(&b);
}

/* ------------------------------------------------------------------ */

static int sq_draining(struct ibv_qp *qp, int *state)
{
	struct ibv_qp_attr at;
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp(qp, &at, IBV_QP_STATE, &ia))
		return -1;
	*state = at.qp_state;
	return at.sq_draining;
}

/*
 * The receiver stays in RESET while three sends go out, so none can be
 * acknowledged: SQD must wait.  When it connects, the retransmissions
 * are answered, the three complete and SQ_DRAINED follows; a fourth
 * send posted in SQD does not start until SQD->RTS.
 */
static void test_sqd(void)
{
	struct ibv_qp_cap cap = { .max_send_wr = 16, .max_recv_wr = 16,
				  .max_send_sge = 1, .max_recv_sge = 1 };
	struct ibv_async_event ev;
	struct ibv_qp_attr at;
	struct ibv_wc wc[8];
	struct dp_qp a = { .d = &dev }, b = { .d = &dev };
	struct dp_conn c;
	int i, st, got;

	dp_conn_default(&c);
	c.timeout = 17;		/* ~0.5 s between retransmissions */
	a.scq = ibv_create_cq(dev.ctx, 16, NULL, NULL, 0);
	a.rcq = ibv_create_cq(dev.ctx, 16, NULL, NULL, 0);
	b.scq = ibv_create_cq(dev.ctx, 16, NULL, NULL, 0);
	b.rcq = ibv_create_cq(dev.ctx, 16, NULL, NULL, 0);
	a.qp = dp_create_qp(&dev, IBV_QPT_RC, a.scq, a.rcq, NULL, &cap);
	b.qp = dp_create_qp(&dev, IBV_QPT_RC, b.scq, b.rcq, NULL, &cap);
	if (!a.qp || !b.qp)
		tap_bail("SQD QPs: %s", strerror(errno));
	if (dp_connect(a.qp, &dev, &dev.gid, b.qp->qp_num, &c))
		tap_bail("connect: %s", strerror(errno));

	for (i = 0; i < 3; i++)
		send_msg(a.qp, 1400 + i);
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_SQD;
	at.en_sqd_async_notify = 1;
	tap_ret_errno(ibv_modify_qp(a.qp, &at, IBV_QP_STATE |
				    IBV_QP_EN_SQD_ASYNC_NOTIFY), 0,
		      "RTS->SQD with 3 unacknowledged sends");
	tap_ok(sq_draining(a.qp, &st) == 1 && st == IBV_QPS_SQD,
	       "query: SQD, sq_draining 1");
	tap_ok(no_event(), "no SQ_DRAINED while they are outstanding");
	tap_ret_errno(send_msg(a.qp, 1403), 0, "post a send in SQD");

	if (dp_connect(b.qp, &dev, &dev.gid, a.qp->qp_num, &c))
		tap_bail("connect: %s", strerror(errno));
	for (i = 0; i < 4; i++)
		post_rq(b.qp, 1500 + i);
	if (tap_ok(dp_async_event(&dev, &ev, DP_WAIT_MS), "an async event after connect")) {
		tap_ok(ev.event_type == IBV_EVENT_SQ_DRAINED &&
		       ev.element.qp == a.qp, "SQ_DRAINED (%d)", ev.event_type);
		ibv_ack_async_event(&ev);
	}
	got = dp_poll(a.scq, wc, 3, 0);
	tap_ok(got == 3 && wc[0].wr_id == 1400 && wc[1].wr_id == 1401 &&
	       wc[2].wr_id == 1402 && !wc[0].status && !wc[1].status &&
	       !wc[2].status, "the 3 sends completed before the event (%d)",
	       got);
	tap_ok(sq_draining(a.qp, &st) == 0 && st == IBV_QPS_SQD,
	       "query: SQD, drained");
	tap_ok(dp_poll_none(a.scq, wc, 300) == 0,
	       "the send posted in SQD does not start");
	got = dp_poll(b.rcq, wc, 3, DP_WAIT_MS);
	if (tap_ok(got == 3, "3 receives (got %d)", got))
		for (i = 0; i < 3; i++)
			check_recv(&wc[i], 1500 + i, 1400 + i, "SQD");

	at.qp_state = IBV_QPS_RTS;
	tap_ret_errno(ibv_modify_qp(a.qp, &at, IBV_QP_STATE), 0, "SQD->RTS");
	wait_sends(a.scq, 1403, 1, "after SQD->RTS");
	if (tap_ret(dp_poll(b.rcq, wc, 1, DP_WAIT_MS), 1, "its receive"))
		check_recv(&wc[0], 1503, 1403, "SQD->RTS");

	/* nothing outstanding: drained at once */
	at.qp_state = IBV_QPS_SQD;
	tap_ret_errno(ibv_modify_qp(a.qp, &at, IBV_QP_STATE |
				    IBV_QP_EN_SQD_ASYNC_NOTIFY), 0,
		      "RTS->SQD with nothing outstanding");
	if (tap_ok(dp_async_event(&dev, &ev, DP_WAIT_MS), "an async event")) {
		tap_ok(ev.event_type == IBV_EVENT_SQ_DRAINED &&
		       ev.element.qp == a.qp, "SQ_DRAINED (%d)", ev.event_type);
		ibv_ack_async_event(&ev);
	}
	dp_qp_free(&a);
	dp_qp_free(&b);
}

/* ------------------------------------------------------------------ */

static void expect_flushed(struct ibv_cq *cq, uint64_t first, int n,
			   const char *what)
{
	struct ibv_wc wc[8];
	int i, got = dp_poll(cq, wc, n, DP_WAIT_MS);
	bool ok = true;

	for (i = 0; i < got; i++)
		if (wc[i].wr_id != first + i ||
		    wc[i].status != IBV_WC_WR_FLUSH_ERR)
			ok = false;
	tap_ok(got == n && ok, "%s: %d WR_FLUSH_ERR in order (got %d)", what,
	       n, got);
}

/*
 * Receives posted to a QP in ERROR complete with WR_FLUSH_ERR without
 * anything else happening: after the QP's own flush is over (the first
 * receive's completion proves it ran), and after an error the kernel
 * raised itself.
 */
static void test_err_flush(void)
{
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_ERR };
	struct dp_qp a, b;
	struct dp_conn c;
	uint8_t byte;
	struct ibv_wc wc;

	dp_conn_default(&c);
	make_pair(&a, &b, ibv_create_cq(dev.ctx, 64, NULL, NULL, 0), NULL,
		  &c);
	tap_ret_errno(ibv_modify_qp(a.qp, &at, IBV_QP_STATE), 0, "RTS->ERR");
	tap_ret_errno(post_rq(a.qp, 1600), 0, "post_recv in ERR");
	expect_flushed(a.rcq, 1600, 1, "first");
	tap_ret_errno(post_rq(a.qp, 1601), 0, "post_recv in ERR");
	tap_ret_errno(post_rq(a.qp, 1602), 0, "post_recv in ERR");
	expect_flushed(a.rcq, 1601, 2, "after the QP's flush");

	/* the kernel moves b to ERROR: a send with a bad lkey */
	dp_post_send1(b.qp, 1700, IBV_WR_SEND, &byte, 1, smr->lkey ^ 0x80,
		      0, 0, 0);
	if (tap_ret(dp_poll(b.scq, &wc, 1, DP_WAIT_MS), 1, "bad lkey send"))
		tap_ok(wc.status == IBV_WC_LOC_PROT_ERR, "LOC_PROT_ERR (%s)",
		       dp_status_str(wc.status));
	tap_ret_errno(post_rq(b.qp, 1701), 0, "post_recv after a kernel ERR");
	expect_flushed(b.rcq, 1701, 1, "kernel ERR");
	dp_qp_free(&a);
	dp_qp_free(&b);
}

int main(void)
{
	const char *name = test_dev_name();

	dp_open(&dev, name);
	if (!dev.rxe2) {
		tap_skip("%s is not rxe2", name);
		dp_close(&dev);
		return tap_done();
	}
	sbuf = dp_alloc(SLOT * NSLOT);
	rbuf = dp_alloc(SLOT * NSLOT);
	smr = dp_reg(dev.pd, sbuf, SLOT * NSLOT, IBV_ACCESS_LOCAL_WRITE);
	rmr = dp_reg(dev.pd, rbuf, SLOT * NSLOT, IBV_ACCESS_LOCAL_WRITE);

	test_cq_args(&dev.attr);
	test_cq_pending();
	test_cq_concurrent();
	test_cq_events();
	test_cq_ex();
	test_srq(&dev.attr);
	test_sqd();
	test_err_flush();

	ibv_dereg_mr(smr);
	ibv_dereg_mr(rmr);
	dp_close(&dev);
	return tap_done();
}
