// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: RC SENDs both ways at once on one pair (perftest's -b), with receive queues and with SRQs: progress both ways in every window, in order byte for byte, no RNR NAK
 *
 * SENDs in both directions at once on one RC QP pair (what perftest's
 * ib_send_bw -b does), with receive queues of their own and with each
 * QP fed by an SRQ: for about 2 s each side keeps 16 SENDs of 4 KiB in
 * flight and reposts every receive it consumes.  Asserted: progress in
 * both directions in every 250 ms window (no stall, no side starved;
 * run and windows stretched by time_scale() on a slower kernel),
 * every message received in order with its own stamp byte for byte, and
 * no RNR NAK (receives are always posted ahead: an RNR storm would mean
 * the responder missed them).  Nothing about speed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp.h"
#include "tap.h"
#include "util.h"

#define MSG	4096
#define DEPTH	16
#define RDEPTH	64
#define RUN_MS	2000
#define WIN_MS	250
#define NWIN	(RUN_MS / WIN_MS)

static struct dp_dev dev;

struct side {
	struct dp_qp q;
	struct ibv_srq *srq;
	struct ibv_mr *mr;	/* over both buffers */
	uint8_t *sbuf, *rbuf;	/* DEPTH send slots, RDEPTH receive slots */
	uint32_t sent, completed, received;
	unsigned int win_sent[NWIN], win_recv[NWIN];
	bool bad;
};

static int post_recv(struct side *s, uint32_t slot)
{
	struct ibv_sge sge = { .addr = (uintptr_t)(s->rbuf + slot * MSG),
			       .length = MSG, .lkey = s->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	return s->srq ? ibv_post_srq_recv(s->srq, &wr, &bad) :
			ibv_post_recv(s->q.qp, &wr, &bad);
}

static int post_send(struct side *s)
{
	uint8_t *p = s->sbuf + (s->sent % DEPTH) * MSG;

	dp_fill(p, MSG, s->sent);
	return dp_post_send1(s->q.qp, s->sent++, IBV_WR_SEND, p, MSG,
			     s->mr->lkey, 0, 0, 0);
}

/* one pass over a side: reap, repost, refill; false on any error */
static bool pump(struct side *s, int win)
{
	struct ibv_wc wc[16];
	int n, i;

	n = ibv_poll_cq(s->q.scq, 16, wc);
	for (i = 0; i < n; i++) {
		if (wc[i].status != IBV_WC_SUCCESS)
			return false;
		s->completed++;
		s->win_sent[win]++;
	}
	n = ibv_poll_cq(s->q.rcq, 16, wc);
	for (i = 0; i < n; i++) {
		uint8_t *p = s->rbuf + wc[i].wr_id * MSG;

		if (wc[i].status != IBV_WC_SUCCESS || wc[i].byte_len != MSG)
			return false;
		/* in order: the n-th receive holds the peer's n-th SEND */
		if (dp_verify(p, MSG, s->received) >= 0)
			s->bad = true;
		s->received++;
		s->win_recv[win]++;
		if (post_recv(s, wc[i].wr_id))
			return false;
	}
	while (s->sent - s->completed < DEPTH)
		if (post_send(s))
			return false;
	return n >= 0;
}

static bool make_side(struct side *s, bool srq)
{
	struct ibv_qp_cap cap = { .max_send_wr = DEPTH, .max_recv_wr = RDEPTH,
				  .max_send_sge = 1, .max_recv_sge = 1 };
	memset(s, 0, sizeof(*s));
	s->sbuf = dp_alloc((DEPTH + RDEPTH) * MSG);
	s->rbuf = s->sbuf + DEPTH * MSG;
	s->mr = dp_reg(dev.pd, s->sbuf, (DEPTH + RDEPTH) * MSG, DP_ACCESS_ALL);
	if (srq) {
		struct ibv_srq_init_attr sa = { .attr = { .max_wr = RDEPTH,
							  .max_sge = 1 } };

		s->srq = ibv_create_srq(dev.pd, &sa);
		if (!s->srq)
			return false;
	}
	s->q.d = &dev;
	s->q.scq = ibv_create_cq(dev.ctx, 256, NULL, NULL, 0);
	s->q.rcq = ibv_create_cq(dev.ctx, 256, NULL, NULL, 0);
	if (!s->q.scq || !s->q.rcq)
		return false;
	s->q.qp = dp_create_qp(&dev, IBV_QPT_RC, s->q.scq, s->q.rcq, s->srq,
			       &cap);
	return s->q.qp != NULL;
}

static void free_side(struct side *s)
{
	dp_qp_free(&s->q);
	if (s->srq)
		ibv_destroy_srq(s->srq);
	ibv_dereg_mr(s->mr);
	free(s->sbuf);
}

static void run(bool srq)
{
	const char *what = srq ? "bidirectional SENDs, SRQ-fed QPs" :
				 "bidirectional SENDs, RC QPs";
	long rnr0 = dp_hw_counter(dev.name, "send_rnr_err");
	uint64_t scale = time_scale();
	struct side a, b;
	struct dp_conn c;
	uint64_t t0, now;
	bool ok = true;
	uint32_t i;
	int w;

	if (!make_side(&a, srq) || !make_side(&b, srq))
		tap_bail("%s: resources: %s", what, strerror(errno));
	dp_conn_default(&c);
	if (dp_connect(a.q.qp, &dev, &dev.gid, b.q.qp->qp_num, &c) ||
	    dp_connect(b.q.qp, &dev, &dev.gid, a.q.qp->qp_num, &c))
		tap_bail("%s: connect", what);
	/* receives ahead of every SEND: posted once connected */
	for (i = 0; i < RDEPTH; i++)
		if (post_recv(&a, i) || post_recv(&b, i))
			tap_bail("%s: post_recv: %s", what, strerror(errno));
	t0 = dp_now_ms();
	while ((now = dp_now_ms()) - t0 < RUN_MS * scale && ok) {
		w = (now - t0) / (WIN_MS * scale);
		ok = pump(&a, w) && pump(&b, w);
	}
	tap_ok(ok, "%s: no error completion, no failed post", what);
	for (w = 0; w < NWIN; w++)
		if (!a.win_sent[w] || !b.win_sent[w] || !a.win_recv[w] ||
		    !b.win_recv[w])
			break;
	tap_ok(w == NWIN,
	       "%s: SENDs completed and received both ways in each of %d windows of %d ms (first empty: %d)",
	       what, NWIN, (int)(WIN_MS * scale), w < NWIN ? w : -1);
	tap_diag("%s: a->b %u sent %u received, b->a %u sent %u received",
		 what, a.completed, b.received, b.completed, a.received);
	tap_ok(!a.bad && !b.bad && a.received <= b.completed + DEPTH &&
	       b.received <= a.completed + DEPTH,
	       "%s: every message arrived in order, byte for byte", what);
	if (rnr0 >= 0)
		tap_ret(dp_hw_counter(dev.name, "send_rnr_err") - rnr0, 0,
			"%s: no RNR NAK", what);
	else
		tap_skip("%s: no send_rnr_err counter", what);
	free_side(&a);
	free_side(&b);
}

int main(void)
{
	dp_open(&dev, test_dev_name());
	run(false);
	run(true);
	dp_close(&dev);
	return tap_done();
}
