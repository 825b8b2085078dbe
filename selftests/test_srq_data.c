// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: receives from an SRQ shared by two RC QPs (order, qp_num, byte_len, data), multi-SGE receives, the SRQ limit event once and disarmed
 *
 * SRQ data path: two RC QPs (loopback over the IPv4 RoCEv2 GID) share one
 * SRQ and one receive CQ; messages from two senders land in the SRQ's
 * buffers in posting order, each completion names its QP (qp_num) and
 * carries the exact byte_len, data byte for byte.  Multi-SGE SRQ receives.
 * The SRQ limit: armed with ibv_modify_srq(IBV_SRQ_LIMIT), dropping below
 * it raises IBV_EVENT_SRQ_LIMIT_REACHED exactly once (waited for with
 * poll() and a deadline) and disarms the limit (srq_limit reads 0).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp.h"
#include "tap.h"
#include "util.h"

#define SLOT 4096
#define NSLOT 32

static struct dp_dev dev;
static uint8_t *sbuf, *rbuf;
static struct ibv_mr *smr, *rmr;
static struct ibv_srq *srq;
static struct ibv_cq *rcq;
static struct dp_qp a1, a2, b1, b2;

static int post_srq(uint64_t wr_id, int nsge, uint32_t piece)
{
	struct ibv_sge sge[4];
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = sge,
				  .num_sge = nsge }, *bad = NULL;
	int i;

	for (i = 0; i < nsge; i++) {
		/* piece i of slot wr_id, with a 16-byte gap between */
		sge[i].addr = (uintptr_t)rbuf + (wr_id % NSLOT) * SLOT +
			      i * (piece + 16);
		sge[i].length = piece;
		sge[i].lkey = rmr->lkey;
	}
	return ibv_post_srq_recv(srq, &wr, &bad);
}


static void qp_make(struct dp_qp *q, bool on_srq)
{
	struct ibv_qp_cap cap = { .max_send_wr = 32, .max_recv_wr = 32,
				  .max_send_sge = 1, .max_recv_sge = 1 };

	q->d = &dev;
	q->scq = ibv_create_cq(dev.ctx, 64, NULL, NULL, 0);
	if (!on_srq)
		q->rcq = ibv_create_cq(dev.ctx, 64, NULL, NULL, 0);
	q->qp = dp_create_qp(&dev, IBV_QPT_RC, q->scq,
			     on_srq ? rcq : q->rcq, on_srq ? srq : NULL,
			     &cap);
	if (!q->qp)
		tap_bail("create QP: %s", strerror(errno));
}

static void connect2(struct dp_qp *x, struct dp_qp *y)
{
	struct dp_conn c;

	dp_conn_default(&c);
	if (dp_connect(x->qp, &dev, &dev.gid, y->qp->qp_num, &c) ||
	    dp_connect(y->qp, &dev, &dev.gid, x->qp->qp_num, &c))
		tap_bail("connect: %s", strerror(errno));
}

static void send_from(struct dp_qp *from, struct dp_qp *to, uint64_t wid,
		      uint32_t len, uint64_t want_rid, uint32_t piece,
		      int nsge)
{
	struct dp_wc_want w;
	char what[96];
	size_t base = (want_rid % NSLOT) * SLOT;
	long bad = -1;
	int i, r;
	uint8_t tmp[SLOT];

	snprintf(what, sizeof(what), "SRQ: %u B from QP %#x", len,
		 from->qp->qp_num);
	dp_fill(sbuf, len, (uint32_t)wid);
	r = dp_post_send1(from->qp, wid, IBV_WR_SEND, sbuf, len, smr->lkey,
			  0, 0, 0);
	if (!tap_ret_errno(r, 0, "%s: post", what))
		return;
	w = dp_want(wid, IBV_WC_SEND);
	dp_expect(from->scq, &w, "%s: sender completion", what);
	w = dp_want(want_rid, IBV_WC_RECV);
	w.byte_len = len;
	w.wc_flags = 0;
	w.flags_ignore = IBV_WC_GRH;
	w.qp_num = to->qp->qp_num;
	dp_expect(rcq, &w,
		  "%s: next SRQ receive (wr_id %#llx), qp_num %#x, byte_len %u",
		  what, (unsigned long long)want_rid, to->qp->qp_num, len);
	for (i = 0; i < nsge; i++)
		memcpy(tmp + i * piece, rbuf + base + i * (piece + 16), piece);
	bad = dp_verify(tmp, len, (uint32_t)wid);
	tap_ok(bad < 0, "%s: data byte-exact across %d SGEs", what, nsge);
}

static void limit_event(void)
{
	struct ibv_srq_attr sa = { .srq_limit = 4 };
	struct ibv_async_event ev;
	bool got;
	int i, r, n = 0;

	/* 8 receives posted, limit 4: the event comes when 3 are left. */
	for (i = 0; i < 8; i++)
		n += !post_srq(0x100 + i, 1, 1024);
	tap_ret(n, 8, "SRQ limit: 8 receives posted");
	r = ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT);
	tap_ret_errno(r, 0, "SRQ limit: arm srq_limit 4");
	for (i = 0; i < 4; i++)
		send_from(i & 1 ? &a2 : &a1, i & 1 ? &b2 : &b1, 0x200 + i, 100,
			  0x100 + i, 1024, 1);
	got = dp_async_event(&dev, &ev, 200);
	tap_ok(!got, "SRQ limit: no event with 4 receives left (not below 4)");
	if (got)
		ibv_ack_async_event(&ev);
	send_from(&a1, &b1, 0x204, 100, 0x104, 1024, 1);
	got = dp_async_event(&dev, &ev, DP_WAIT_MS);
	tap_ok(got && ev.event_type == IBV_EVENT_SRQ_LIMIT_REACHED &&
	       ev.element.srq == srq,
	       "SRQ limit: IBV_EVENT_SRQ_LIMIT_REACHED for our SRQ with 3 left");
	if (got) {
		if (ev.event_type != IBV_EVENT_SRQ_LIMIT_REACHED)
			tap_diag("  event %s",
				 ibv_event_type_str(ev.event_type));
		ibv_ack_async_event(&ev);
	}
	memset(&sa, 0xff, sizeof(sa));
	r = ibv_query_srq(srq, &sa);
	tap_ok(!r && sa.srq_limit == 0,
	       "SRQ limit: disarmed after the event (srq_limit %u)",
	       sa.srq_limit);
	send_from(&a2, &b2, 0x205, 100, 0x105, 1024, 1);
	got = dp_async_event(&dev, &ev, 200);
	tap_ok(!got, "SRQ limit: no second event once disarmed");
	if (got)
		ibv_ack_async_event(&ev);
	for (i = 6; i < 8; i++)
		send_from(&a2, &b2, 0x200 + i, 10, 0x100 + i, 1024, 1);
}

int main(void)
{
	struct ibv_srq_init_attr si = { .attr = { .max_wr = 64, .max_sge = 4 } };

	dp_open(&dev, test_dev_name());
	sbuf = dp_alloc(SLOT);
	rbuf = dp_alloc(SLOT * NSLOT);
	smr = dp_reg(dev.pd, sbuf, SLOT, IBV_ACCESS_LOCAL_WRITE);
	rmr = dp_reg(dev.pd, rbuf, SLOT * NSLOT, IBV_ACCESS_LOCAL_WRITE);
	srq = ibv_create_srq(dev.pd, &si);
	rcq = ibv_create_cq(dev.ctx, 128, NULL, NULL, 0);
	if (!srq || !rcq)
		tap_bail("SRQ/CQ: %s", strerror(errno));
	qp_make(&a1, false);
	qp_make(&a2, false);
	qp_make(&b1, true);
	qp_make(&b2, true);
	connect2(&a1, &b1);
	connect2(&a2, &b2);

	/* Receives are consumed in posting order, whichever QP receives. */
	tap_ret_errno(post_srq(1, 1, 2048), 0, "post SRQ receive 1");
	tap_ret_errno(post_srq(2, 1, 2048), 0, "post SRQ receive 2");
	tap_ret_errno(post_srq(3, 4, 600), 0, "post SRQ receive 3 (4 SGEs)");
	tap_ret_errno(post_srq(4, 4, 600), 0, "post SRQ receive 4 (4 SGEs)");
	send_from(&a2, &b2, 0x11, 2000, 1, 2048, 1);
	send_from(&a1, &b1, 0x12, 0, 2, 2048, 1);
	send_from(&a1, &b1, 0x13, 2400, 3, 600, 4);
	send_from(&a2, &b2, 0x14, 1201, 4, 600, 4);
	limit_event();

	dp_qp_free(&a1);
	dp_qp_free(&a2);
	ibv_destroy_qp(b1.qp);
	ibv_destroy_qp(b2.qp);
	ibv_destroy_cq(b1.scq);
	ibv_destroy_cq(b2.scq);
	ibv_destroy_srq(srq);
	ibv_destroy_cq(rcq);
	ibv_dereg_mr(smr);
	ibv_dereg_mr(rmr);
	dp_close(&dev);
	return tap_done();
}
