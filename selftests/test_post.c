// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: post-time checks (a bad WR in a chain, full SQ/RQ/SRQ, too many SGEs), signalling (sq_sig_all, unsignaled WRs), 0-byte SENDs
 *
 * What the post verbs check at post time, and the signalling rules, on an
 * RC loopback pair over the IPv4 RoCEv2 GID:
 *   - a chain whose second WR is bad (too many SGEs, unknown opcode) fails
 *     with bad_wr at that WR while the first one is posted and completes;
 *   - a full send queue, receive queue or SRQ refuses the next WR (ENOMEM,
 *     as mlx5 and rdma_rxe do) with bad_wr at it, and is usable again
 *     once completions were polled;
 *   - post_recv / post_srq_recv with more than max_sge SGEs: EINVAL;
 *   - unsignaled WRs produce no completion (sq_sig_all 0) but a later
 *     signaled one does; with sq_sig_all 1 every WR completes;
 *   - a SEND with num_sge 0 is a valid 0-byte message.
 * The exact errno is asserted on rxe2 ("(rxe2)"); elsewhere a failure
 * with bad_wr set is enough.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp.h"
#include "tap.h"
#include "util.h"

#define DEPTH 8

static struct dp_dev dev;
static uint8_t *buf;
static struct ibv_mr *mr;

static void want_err(int r, int err, const char *what)
{
	if (dev.rxe2)
		tap_ret_errno(r, err, "(rxe2) %s: %s", what, strerror(err));
	else
		tap_ok(r != 0, "%s fails (%s)", what, strerror(r));
}

static void chain_bad_second(struct dp_qp *a, struct dp_qp *b, int bad_kind)
{
	struct ibv_sge sge[DEPTH + 1];
	struct ibv_send_wr wr[2], *bad = NULL;
	struct dp_wc_want w;
	struct ibv_wc wc;
	const char *what = bad_kind ? "chain with an unknown opcode second" :
				      "chain with too many SGEs second";
	int i, r;

	for (i = 0; i <= DEPTH; i++)
		sge[i] = (struct ibv_sge){ .addr = (uintptr_t)buf + 64 * i,
					   .length = 8, .lkey = mr->lkey };
	dp_post_recv1(b->qp, 0x50, buf + 8192, 64, mr->lkey);
	memset(wr, 0, sizeof(wr));
	wr[0].wr_id = 0x51;
	wr[0].opcode = IBV_WR_SEND;
	wr[0].send_flags = IBV_SEND_SIGNALED;
	wr[0].sg_list = sge;
	wr[0].num_sge = 1;
	wr[0].next = &wr[1];
	wr[1] = wr[0];
	wr[1].wr_id = 0x52;
	wr[1].next = NULL;
	if (bad_kind)
		wr[1].opcode = (enum ibv_wr_opcode)0x55;
	else
		wr[1].num_sge = DEPTH + 1;
	r = ibv_post_send(a->qp, wr, &bad);
	want_err(r, EINVAL, what);
	tap_ok(bad == &wr[1], "%s: bad_wr is the second WR", what);
	w = dp_want(0x51, IBV_WC_SEND);
	dp_expect(a->scq, &w, "%s: the first WR was posted and completes",
		  what);
	w = dp_want(0x50, IBV_WC_RECV);
	w.byte_len = 8;
	dp_expect(b->rcq, &w, "%s: its message arrived", what);
	tap_ok(dp_poll_none(a->scq, &wc, 50) == 0,
	       "%s: nothing of the bad WR completes", what);
}

static void sq_full(struct dp_qp *a, struct dp_qp *b, uint32_t depth)
{
	struct ibv_send_wr wr[1024 + 1], *bad = NULL;
	struct ibv_wc wc[1024];
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 4,
			       .lkey = mr->lkey };
	uint32_t i;
	int r, got;

	if (depth > 1024) {
		tap_skip("send queue depth %u too large to fill here", depth);
		return;
	}
	/* RDMA WRITEs: no receives needed */
	memset(wr, 0, sizeof(wr));
	for (i = 0; i <= depth; i++) {
		wr[i].wr_id = 0x1000 + i;
		wr[i].opcode = IBV_WR_RDMA_WRITE;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].sg_list = &sge;
		wr[i].num_sge = 1;
		wr[i].wr.rdma.remote_addr = (uintptr_t)buf + 16384;
		wr[i].wr.rdma.rkey = mr->rkey;
		wr[i].next = i < depth ? &wr[i + 1] : NULL;
	}
	(void)b;
	r = ibv_post_send(a->qp, wr, &bad);
	want_err(r, ENOMEM, "send queue of max_send_wr full, one more WR");
	tap_ok(bad == &wr[depth], "full send queue: bad_wr is WR %u", depth);
	got = dp_poll(a->scq, wc, depth, DP_WAIT_MS);
	tap_ret(got, depth, "full send queue: the %u posted WRs complete",
		depth);
	r = 0;
	for (i = 0; i < (uint32_t)got; i++)
		if (wc[i].wr_id != 0x1000 + i ||
		    wc[i].status != IBV_WC_SUCCESS)
			r++;
	tap_ret(r, 0, "full send queue: completions in order, SUCCESS");
	wr[0].next = NULL;
	r = ibv_post_send(a->qp, wr, &bad);
	tap_ret_errno(r, 0, "send queue usable again after polling");
	got = dp_poll(a->scq, wc, 1, DP_WAIT_MS);
	tap_ret(got, 1, "and that WR completes");
}

static void rq_full(struct dp_qp *b, uint32_t depth)
{
	struct ibv_recv_wr wr[1024 + 1], *bad = NULL;
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 64,
			       .lkey = mr->lkey };
	uint32_t i;
	int r;

	if (depth > 1024) {
		tap_skip("receive queue depth %u too large to fill here", depth);
		return;
	}
	memset(wr, 0, sizeof(wr));
	for (i = 0; i <= depth; i++) {
		wr[i].wr_id = 0x2000 + i;
		wr[i].sg_list = &sge;
		wr[i].num_sge = 1;
		wr[i].next = i < depth ? &wr[i + 1] : NULL;
	}
	r = ibv_post_recv(b->qp, wr, &bad);
	want_err(r, ENOMEM, "receive queue of max_recv_wr full, one more WR");
	tap_ok(bad == &wr[depth], "full receive queue: bad_wr is WR %u",
	       depth);
}

static void too_many_recv_sge(struct dp_qp *b, struct ibv_srq *srq,
			      uint32_t max)
{
	struct ibv_sge sge[64];
	struct ibv_recv_wr wr = { .wr_id = 0x3000, .sg_list = sge,
				  .num_sge = (int)max + 1 }, *bad = NULL;
	uint32_t i;
	int r;

	for (i = 0; i <= max && i < 64; i++)
		sge[i] = (struct ibv_sge){ .addr = (uintptr_t)buf,
					   .length = 4, .lkey = mr->lkey };
	r = ibv_post_recv(b->qp, &wr, &bad);
	want_err(r, EINVAL, "post_recv with max_recv_sge + 1 SGEs");
	tap_ok(bad == &wr, "post_recv with too many SGEs: bad_wr set");
	bad = NULL;
	r = ibv_post_srq_recv(srq, &wr, &bad);
	want_err(r, EINVAL, "post_srq_recv with max_sge + 1 SGEs");
	tap_ok(bad == &wr, "post_srq_recv with too many SGEs: bad_wr set");
}

static void srq_full(struct ibv_srq *srq, uint32_t depth)
{
	struct ibv_recv_wr *wr, *bad = NULL;
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 64,
			       .lkey = mr->lkey };
	uint32_t i;
	int r;

	wr = calloc(depth + 1, sizeof(*wr));
	if (!wr)
		tap_bail("calloc");
	for (i = 0; i <= depth; i++) {
		wr[i].wr_id = 0x4000 + i;
		wr[i].sg_list = &sge;
		wr[i].num_sge = 1;
		wr[i].next = i < depth ? &wr[i + 1] : NULL;
	}
	r = ibv_post_srq_recv(srq, wr, &bad);
	want_err(r, ENOMEM, "SRQ of max_wr full, one more WR");
	tap_ok(bad == &wr[depth], "full SRQ: bad_wr is WR %u", depth);
	free(wr);
}

static void signalling(struct dp_qp *a, struct dp_qp *b, bool sig_all)
{
	struct ibv_wc wc[8];
	const char *what = sig_all ? "sq_sig_all 1" : "sq_sig_all 0";
	int i, r = 0, got;

	for (i = 0; i < 4 && !r; i++)
		r = dp_post_recv1(b->qp, 0x60 + i, buf + 8192 + 64 * i, 64,
				  mr->lkey);
	for (i = 0; i < 3 && !r; i++) {
		struct ibv_send_wr w = { .wr_id = 0x70 + i,
					 .opcode = IBV_WR_SEND },
			*bad = NULL;

		/* num_sge 0: a 0-byte message */
		r = ibv_post_send(a->qp, &w, &bad);
	}
	if (!r)
		r = dp_post_send1(a->qp, 0x73, IBV_WR_SEND, buf, 8, mr->lkey, 0,
				  0, 0);
	tap_ret_errno(r, 0, "%s: 3 unsignaled 0-byte SENDs and a signaled one",
		      what);
	got = dp_poll(b->rcq, wc, 4, DP_WAIT_MS);
	r = got == 4;
	for (i = 0; r && i < 4; i++)
		r = wc[i].status == IBV_WC_SUCCESS &&
		    wc[i].wr_id == (uint64_t)(0x60 + i) &&
		    wc[i].byte_len == (i < 3 ? 0u : 8u);
	tap_ok(r, "%s: 4 receives in order, byte_len 0, 0, 0, 8", what);
	got = dp_poll(a->scq, wc, sig_all ? 4 : 1, DP_WAIT_MS);
	if (sig_all) {
		r = got == 4;
		for (i = 0; r && i < 4; i++)
			r = wc[i].wr_id == (uint64_t)(0x70 + i) &&
			    wc[i].status == IBV_WC_SUCCESS;
		tap_ok(r, "%s: every WR completes, in order", what);
	} else {
		tap_ok(got == 1 && wc[0].wr_id == 0x73 &&
		       wc[0].status == IBV_WC_SUCCESS,
		       "%s: only the signaled WR completes", what);
	}
	tap_ok(dp_poll_none(a->scq, wc, 50) == 0, "%s: nothing more", what);
}

static void pair_with(struct dp_qp *a, struct dp_qp *b, bool sig_all)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC, .sq_sig_all = sig_all,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = DEPTH,
			 .max_send_sge = DEPTH, .max_recv_sge = DEPTH },
	};
	struct dp_qp *q[2] = { a, b };
	struct dp_conn c;
	int i;

	for (i = 0; i < 2; i++) {
		q[i]->d = &dev;
		q[i]->scq = ibv_create_cq(dev.ctx, 2048, NULL, NULL, 0);
		q[i]->rcq = ibv_create_cq(dev.ctx, 2048, NULL, NULL, 0);
		ia.send_cq = q[i]->scq;
		ia.recv_cq = q[i]->rcq;
		q[i]->qp = ia.send_cq && ia.recv_cq ?
			   ibv_create_qp(dev.pd, &ia) : NULL;
		if (!q[i]->qp)
			tap_bail("create QP: %s", strerror(errno));
	}
	dp_conn_default(&c);
	if (dp_connect(a->qp, &dev, &dev.gid, b->qp->qp_num, &c) ||
	    dp_connect(b->qp, &dev, &dev.gid, a->qp->qp_num, &c))
		tap_bail("connect: %s", strerror(errno));
}

int main(void)
{
	struct ibv_srq_init_attr si = { .attr = { .max_wr = DEPTH,
						  .max_sge = 2 } };
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr qa;
	struct ibv_srq_attr sa;
	struct ibv_srq *srq;
	struct dp_qp a, b;

	dp_open(&dev, test_dev_name());
	buf = dp_alloc(65536);
	mr = dp_reg(dev.pd, buf, 65536, DP_ACCESS_ALL);

	pair_with(&a, &b, false);
	ibv_query_qp(a.qp, &qa, IBV_QP_CAP, &ia);
	tap_diag("caps: max_send_wr %u max_recv_wr %u max_send_sge %u max_recv_sge %u",
		 ia.cap.max_send_wr, ia.cap.max_recv_wr, ia.cap.max_send_sge,
		 ia.cap.max_recv_sge);
	signalling(&a, &b, false);
	chain_bad_second(&a, &b, 0);
	/* rdma_rxe's provider queues an unknown opcode and breaks the QP */
	if (dev.rxe2)
		chain_bad_second(&a, &b, 1);
	else
		tap_skip("(rxe2) unknown opcode refused at post: rdma_rxe accepts it");
	sq_full(&a, &b, ia.cap.max_send_wr);
	srq = ibv_create_srq(dev.pd, &si);
	if (!srq)
		tap_bail("ibv_create_srq: %s", strerror(errno));
	ibv_query_srq(srq, &sa);
	too_many_recv_sge(&b, srq, ia.cap.max_recv_sge > sa.max_sge ?
				   ia.cap.max_recv_sge : sa.max_sge);
	srq_full(srq, sa.max_wr);
	rq_full(&b, ia.cap.max_recv_wr);
	ibv_destroy_srq(srq);
	dp_qp_free(&a);
	dp_qp_free(&b);

	pair_with(&a, &b, true);
	signalling(&a, &b, true);
	dp_qp_free(&a);
	dp_qp_free(&b);

	ibv_dereg_mr(mr);
	dp_close(&dev);
	return tap_done();
}
