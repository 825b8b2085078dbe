// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: XRC: domains shared by processes, XRC SRQs, XRC_SEND/XRC_RECV QPs, ibv_open_qp; SENDs and WRITE/READ/atomics through a target, every error case; loopback and two namespaces
 *
 * XRC: domains opened on a file and shared by two processes, XRC SRQs
 * and their numbers, XRC_SEND and XRC_RECV QPs, ibv_open_qp, and the
 * data path: SENDs (one and several packets, with immediate) landing in
 * the SRQ the work request names, on that SRQ's CQ; RDMA WRITE, READ
 * and atomics through an XRC target, checked against the PD of the SRQ
 * named; every error case: an SRQ number that names nothing or an SRQ
 * of another domain (invalid request NAK, REM_INV_REQ_ERR, the target in
 * ERROR, rx_bad_xrc_srq counted), an rkey of another PD (REM_ACCESS_ERR),
 * posts on the wrong half of the pair.  On one device (loopback) and
 * between two rxe2 devices in two network namespaces.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dp.h"
#include "tap.h"
#include "util.h"

#define NSRQ	3
#define BUF	8192
#define MSG_BIG	3000		/* three packets at MTU 1024 */

static char xrcd_path[] = "/tmp/rxe2-xrcd-XXXXXX";

/* One side of an XRC connection: an initiator or a target with SRQs */
struct xrc_ini {
	struct dp_dev *d;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_qp_ex *qpx;
	struct ibv_mr *mr;	/* local buffers of SENDs and READs */
	uint8_t *buf;
};

struct xrc_tgt {
	struct dp_dev *d;
	struct ibv_xrcd *xrcd;
	struct ibv_qp *qp;
	struct ibv_cq *cq[NSRQ];
	struct ibv_srq *srq[NSRQ];
	uint32_t srqn[NSRQ];
	struct ibv_mr *mr;	/* receive buffers and the RDMA target */
	uint8_t *buf;
};

static struct ibv_xrcd *xrcd_open(struct ibv_context *ctx, int fd, int oflags)
{
	struct ibv_xrcd_init_attr a = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = fd,
		.oflags = oflags,
	};

	return ibv_open_xrcd(ctx, &a);
}

static struct ibv_srq *xsrq_create(struct dp_dev *d, struct ibv_pd *pd,
				   struct ibv_xrcd *xrcd, struct ibv_cq *cq)
{
	struct ibv_srq_init_attr_ex a = {
		.attr = { .max_wr = 16, .max_sge = 2 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC,
		.pd = pd,
		.xrcd = xrcd,
		.cq = cq,
	};

	return ibv_create_srq_ex(d->ctx, &a);
}

static struct ibv_qp *tgt_qp_create(struct dp_dev *d, struct ibv_xrcd *xrcd)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_XRCD,
		.xrcd = xrcd,
	};

	return ibv_create_qp_ex(d->ctx, &a);
}

static struct ibv_qp *ini_qp_create(struct dp_dev *d, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_XRC_SEND,
		.send_cq = cq,
		.cap = { .max_send_wr = 32, .max_send_sge = 2,
			 .max_inline_data = 64 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = d->pd,
		.send_ops_flags = IBV_QP_EX_WITH_SEND |
				  IBV_QP_EX_WITH_SEND_WITH_IMM |
				  IBV_QP_EX_WITH_RDMA_WRITE,
	};

	return ibv_create_qp_ex(d->ctx, &a);
}

/* the target's SRQs (on the domain xrcd) and its MR */
static void tgt_setup(struct xrc_tgt *t, struct dp_dev *d,
		      struct ibv_xrcd *xrcd)
{
	int i;

	memset(t, 0, sizeof(*t));
	t->d = d;
	t->xrcd = xrcd;
	t->buf = dp_alloc(BUF * NSRQ);
	t->mr = dp_reg(d->pd, t->buf, BUF * NSRQ, DP_ACCESS_ALL);
	for (i = 0; i < NSRQ; i++) {
		t->cq[i] = ibv_create_cq(d->ctx, 32, NULL, NULL, 0);
		t->srq[i] = t->cq[i] ? xsrq_create(d, d->pd, xrcd, t->cq[i]) :
				       NULL;
		if (!t->srq[i] || ibv_get_srq_num(t->srq[i], &t->srqn[i]))
			tap_bail("XRC SRQ %d: %s", i, strerror(errno));
	}
}

static void tgt_teardown(struct xrc_tgt *t)
{
	int i;

	for (i = 0; i < NSRQ; i++) {
		ibv_destroy_srq(t->srq[i]);
		ibv_destroy_cq(t->cq[i]);
	}
	ibv_dereg_mr(t->mr);
	free(t->buf);
}

static void ini_setup(struct xrc_ini *in, struct dp_dev *d)
{
	memset(in, 0, sizeof(*in));
	in->d = d;
	in->buf = dp_alloc(BUF);
	in->mr = dp_reg(d->pd, in->buf, BUF, DP_ACCESS_ALL);
	in->cq = ibv_create_cq(d->ctx, 64, NULL, NULL, 0);
	if (!in->cq)
		tap_bail("ibv_create_cq: %s", strerror(errno));
}

static void ini_teardown(struct xrc_ini *in)
{
	ibv_destroy_cq(in->cq);
	ibv_dereg_mr(in->mr);
	free(in->buf);
}

/* a fresh initiator and target QP, connected to each other */
static bool xrc_connect(struct xrc_ini *in, struct xrc_tgt *t)
{
	struct dp_conn c;

	dp_conn_default(&c);
	c.rd_atomic = 4;
	in->qp = ini_qp_create(in->d, in->cq);
	t->qp = tgt_qp_create(t->d, t->xrcd);
	if (!in->qp || !t->qp)
		return false;
	in->qpx = ibv_qp_to_qp_ex(in->qp);
	return !dp_connect(in->qp, in->d, &t->d->gid, t->qp->qp_num, &c) &&
	       !dp_connect(t->qp, t->d, &in->d->gid, in->qp->qp_num, &c);
}

static void xrc_disconnect(struct xrc_ini *in, struct xrc_tgt *t)
{
	if (in->qp)
		ibv_destroy_qp(in->qp);
	if (t->qp)
		ibv_destroy_qp(t->qp);
	in->qp = t->qp = NULL;
}

static void srq_post(struct xrc_tgt *t, int k, uint64_t wr_id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)t->buf + (size_t)k * BUF,
		.length = BUF,
		.lkey = t->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	if (ibv_post_srq_recv(t->srq[k], &wr, &bad))
		tap_bail("ibv_post_srq_recv: %s", strerror(errno));
}

/* ibv_post_send of one WR to the XRC SRQ srqn; 0 or the errno */
static int ini_post(struct xrc_ini *in, enum ibv_wr_opcode op, uint32_t srqn,
		    uint32_t len, uint32_t rkey, uint64_t raddr,
		    uint64_t wr_id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)in->buf,
		.length = len,
		.lkey = in->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	wr.qp_type.xrc.remote_srqn = srqn;
	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD || op == IBV_WR_ATOMIC_CMP_AND_SWP) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 5;
		wr.wr.atomic.swap = 0x1122334455667788ull;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	if (op == IBV_WR_SEND_WITH_IMM || op == IBV_WR_RDMA_WRITE_WITH_IMM)
		wr.imm_data = htobe32(0xabc00000 + (uint32_t)wr_id);
	return ibv_post_send(in->qp, &wr, &bad);
}

/* the initiator's completion of wr_id: success, opcode */
static void ini_done(struct xrc_ini *in, uint64_t wr_id, int opcode,
		     const char *what)
{
	struct dp_wc_want w = dp_want(wr_id, opcode);

	w.qp_num = in->qp->qp_num;
	dp_expect(in->cq, &w, "%s: the initiator's completion", what);
}

/* no completion on the other SRQs' CQs */
static void others_quiet(struct xrc_tgt *t, int k, const char *what)
{
	struct ibv_wc wc;
	int i, n = 0;

	for (i = 0; i < NSRQ; i++)
		if (i != k)
			n += dp_poll_none(t->cq[i], &wc, 0);
	tap_ok(n == 0, "%s: no completion on the other SRQs' CQs", what);
}

/* a SEND of len bytes to SRQ k lands there, byte for byte */
static void send_to_srq(struct xrc_ini *in, struct xrc_tgt *t, int k,
			uint32_t len, bool imm, const char *where)
{
	struct dp_wc_want w = dp_want(100 + k, IBV_WC_RECV);
	uint32_t seed = 0x5000 + k * 7 + len;
	enum ibv_wr_opcode op = imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND;
	long bad;

	memset(t->buf + (size_t)k * BUF, 0, BUF);
	dp_fill(in->buf, len, seed);
	srq_post(t, k, 100 + k);
	tap_ret_errno(ini_post(in, op, t->srqn[k], len, 0, 0, 10 + k), 0,
		      "%s: ibv_post_send %s of %u bytes to XRC SRQ %d", where,
		      imm ? "SEND_WITH_IMM" : "SEND", len, k);
	ini_done(in, 10 + k, IBV_WC_SEND, where);
	w.byte_len = len;
	w.qp_num = t->qp->qp_num;
	if (imm) {
		w.wc_flags = IBV_WC_WITH_IMM;
		w.imm = 0xabc00000 + 10 + k;
	}
	dp_expect(t->cq[k], &w,
		  "%s: the receive completes on SRQ %d's CQ, qp_num = XRC_RECV QP",
		  where, k);
	bad = dp_verify(t->buf + (size_t)k * BUF, len, seed);
	tap_ok(bad < 0, "%s: %u bytes landed in SRQ %d's buffer (first bad %ld)",
	       where, len, k, bad);
	others_quiet(t, k, where);
}

/* WRITE, READ and both atomics through the target, SRQ k's PD */
static void rdma_through(struct xrc_ini *in, struct xrc_tgt *t, int k,
			 const char *where)
{
	uint64_t raddr = (uintptr_t)t->buf + (size_t)k * BUF;
	struct dp_wc_want w = dp_want(20, IBV_WC_RDMA_WRITE);
	uint64_t v;
	long bad;

	w.qp_num = in->qp->qp_num;
	dp_fill(in->buf, 2000, 0x77);
	tap_ret_errno(ini_post(in, IBV_WR_RDMA_WRITE, t->srqn[k], 2000,
			       t->mr->rkey, raddr, 20), 0,
		      "%s: RDMA WRITE of 2000 bytes through SRQ %d", where, k);
	dp_expect(in->cq, &w, "%s: the WRITE completes", where);
	bad = dp_verify(t->buf + (size_t)k * BUF, 2000, 0x77);
	tap_ok(bad < 0, "%s: WRITE data byte-exact (first bad %ld)", where, bad);

	dp_fill(t->buf + (size_t)k * BUF, 2500, 0x99);
	memset(in->buf, 0, 2500);
	w = dp_want(21, IBV_WC_RDMA_READ);
	w.byte_len = 2500;
	tap_ret_errno(ini_post(in, IBV_WR_RDMA_READ, t->srqn[k], 2500,
			       t->mr->rkey, raddr, 21), 0,
		      "%s: RDMA READ of 2500 bytes through SRQ %d", where, k);
	dp_expect(in->cq, &w, "%s: the READ completes", where);
	bad = dp_verify(in->buf, 2500, 0x99);
	tap_ok(bad < 0, "%s: READ data byte-exact (first bad %ld)", where, bad);

	v = 40;
	memcpy(t->buf + (size_t)k * BUF, &v, 8);
	w = dp_want(22, IBV_WC_FETCH_ADD);
	tap_ret_errno(ini_post(in, IBV_WR_ATOMIC_FETCH_AND_ADD, t->srqn[k], 8,
			       t->mr->rkey, raddr, 22), 0,
		      "%s: FETCH_AND_ADD through SRQ %d", where, k);
	dp_expect(in->cq, &w, "%s: the FETCH_AND_ADD completes", where);
	memcpy(&v, in->buf, 8);
	tap_ret((long)v, 40, "%s: FETCH_AND_ADD returned the old value", where);
	memcpy(&v, t->buf + (size_t)k * BUF, 8);
	tap_ret((long)v, 45, "%s: target now holds 40 + 5", where);
	w = dp_want(23, IBV_WC_COMP_SWAP);
	tap_ret_errno(ini_post(in, IBV_WR_ATOMIC_CMP_AND_SWP, t->srqn[k], 8,
			       t->mr->rkey, raddr + 8, 23), 0,
		      "%s: CMP_AND_SWP through SRQ %d", where, k);
	dp_expect(in->cq, &w, "%s: the CMP_AND_SWP completes (compare fails)",
		  where);
	memcpy(&v, t->buf + (size_t)k * BUF + 8, 8);
	tap_ok(v != 0x1122334455667788ull,
	       "%s: a failed compare leaves the target as it was", where);
}

/*
 * xrc_odp_caps says SEND, WRITE, READ and SRQ receives work with ODP
 * MRs: an ODP MR in the SRQ's PD as the receive buffer and as the
 * target of a WRITE and a READ, pages faulted in by the target.
 */
static void odp_through(struct xrc_ini *in, struct xrc_tgt *t, int k)
{
	struct dp_wc_want w = dp_want(500, IBV_WC_RECV);
	uint8_t *b = dp_alloc(3 * 4096);
	struct ibv_mr *mr = ibv_reg_mr(t->d->pd, b, 3 * 4096,
				       DP_ACCESS_ALL | IBV_ACCESS_ON_DEMAND);
	struct ibv_sge sge = { (uintptr_t)b, 4096, 0 };
	struct ibv_recv_wr wr = { .wr_id = 500, .sg_list = &sge,
				  .num_sge = 1 }, *bad;
	long bad_at;

	if (!tap_ok(mr != NULL, "ODP MR in the SRQ's PD"))
		goto out;
	sge.lkey = mr->lkey;
	tap_ret_errno(ibv_post_srq_recv(t->srq[k], &wr, &bad), 0,
		      "a receive into the ODP MR on SRQ %d", k);
	dp_fill(in->buf, 1800, 0x0d1);
	tap_ret_errno(ini_post(in, IBV_WR_SEND, t->srqn[k], 1800, 0, 0, 80),
		      0, "SEND of 1800 bytes into it");
	ini_done(in, 80, IBV_WC_SEND, "ODP SEND");
	w.byte_len = 1800;
	w.qp_num = t->qp->qp_num;
	dp_expect(t->cq[k], &w, "ODP: the receive completes on SRQ %d's CQ", k);
	bad_at = dp_verify(b, 1800, 0x0d1);
	tap_ok(bad_at < 0, "ODP: SEND data byte-exact (first bad %ld)", bad_at);

	dp_fill(in->buf, 3000, 0x0d2);
	tap_ret_errno(ini_post(in, IBV_WR_RDMA_WRITE, t->srqn[k], 3000,
			       mr->rkey, (uintptr_t)b + 4096, 81), 0,
		      "WRITE of 3000 bytes to the ODP MR");
	ini_done(in, 81, IBV_WC_RDMA_WRITE, "ODP WRITE");
	bad_at = dp_verify(b + 4096, 3000, 0x0d2);
	tap_ok(bad_at < 0, "ODP: WRITE data byte-exact (first bad %ld)",
	       bad_at);
	memset(in->buf, 0, 3000);
	tap_ret_errno(ini_post(in, IBV_WR_RDMA_READ, t->srqn[k], 3000,
			       mr->rkey, (uintptr_t)b + 4096, 82), 0,
		      "READ of it back");
	ini_done(in, 82, IBV_WC_RDMA_READ, "ODP READ");
	bad_at = dp_verify(in->buf, 3000, 0x0d2);
	tap_ok(bad_at < 0, "ODP: READ data byte-exact (first bad %ld)", bad_at);
	ibv_dereg_mr(mr);
out:
	free(b);
}

/* WRITE_WITH_IMM takes a WQE of the SRQ named and completes there */
static void write_imm_to_srq(struct xrc_ini *in, struct xrc_tgt *t, int k)
{
	struct dp_wc_want w = dp_want(300, IBV_WC_RECV_RDMA_WITH_IMM);
	uint64_t raddr = (uintptr_t)t->buf + (size_t)k * BUF + 4096;
	long bad;

	dp_fill(in->buf, 1500, 0x31);
	srq_post(t, k, 300);
	tap_ret_errno(ini_post(in, IBV_WR_RDMA_WRITE_WITH_IMM, t->srqn[k], 1500,
			       t->mr->rkey, raddr, 30), 0,
		      "RDMA_WRITE_WITH_IMM of 1500 bytes through SRQ %d", k);
	w.byte_len = 1500;
	w.wc_flags = IBV_WC_WITH_IMM;
	w.imm = 0xabc00000 + 30;
	w.qp_num = t->qp->qp_num;
	dp_expect(t->cq[k], &w, "WRITE_WITH_IMM: completion on SRQ %d's CQ", k);
	ini_done(in, 30, IBV_WC_RDMA_WRITE, "WRITE_WITH_IMM");
	bad = dp_verify(t->buf + (size_t)k * BUF + 4096, 1500, 0x31);
	tap_ok(bad < 0, "WRITE_WITH_IMM data byte-exact (first bad %ld)", bad);
	others_quiet(t, k, "WRITE_WITH_IMM");
}

/* the extended API: wr_set_xrc_srqn names the SRQ; without it, EINVAL */
static void wr_api(struct xrc_ini *in, struct xrc_tgt *t)
{
	struct dp_wc_want w = dp_want(400, IBV_WC_RECV);
	long bad;

	dp_fill(in->buf, 700, 0x400);
	srq_post(t, 2, 400);
	ibv_wr_start(in->qpx);
	in->qpx->wr_id = 40;
	in->qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(in->qpx);
	ibv_wr_set_xrc_srqn(in->qpx, t->srqn[2]);
	ibv_wr_set_sge(in->qpx, in->mr->lkey, (uintptr_t)in->buf, 700);
	tap_ret_errno(ibv_wr_complete(in->qpx), 0,
		      "ibv_wr_send + ibv_wr_set_xrc_srqn(SRQ 2)");
	ini_done(in, 40, IBV_WC_SEND, "wr API");
	w.byte_len = 700;
	w.qp_num = t->qp->qp_num;
	dp_expect(t->cq[2], &w, "wr API: received on SRQ 2's CQ");
	bad = dp_verify(t->buf + 2 * BUF, 700, 0x400);
	tap_ok(bad < 0, "wr API: data byte-exact (first bad %ld)", bad);

	ibv_wr_start(in->qpx);
	ibv_wr_send(in->qpx);
	ibv_wr_set_sge(in->qpx, in->mr->lkey, (uintptr_t)in->buf, 8);
	tap_ret_errno(ibv_wr_complete(in->qpx), EINVAL,
		      "wr API: a WR without ibv_wr_set_xrc_srqn -> EINVAL");
}

static void posts_on_wrong_half(struct xrc_ini *in, struct xrc_tgt *t)
{
	struct ibv_sge sge = { (uintptr_t)in->buf, 8, in->mr->lkey };
	struct ibv_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 }, *rbad;
	struct ibv_send_wr swr = { .sg_list = &sge, .num_sge = 1,
				   .opcode = IBV_WR_SEND }, *sbad;

	tap_ret_errno(ibv_post_send(t->qp, &swr, &sbad), EINVAL,
		      "ibv_post_send on an XRC_RECV QP -> EINVAL");
	tap_ret_errno(ibv_post_recv(in->qp, &rwr, &rbad), EINVAL,
		      "ibv_post_recv on an XRC_SEND QP -> EINVAL");
	swr.qp_type.xrc.remote_srqn = 1u << 24;
	tap_ret_errno(ibv_post_send(in->qp, &swr, &sbad), EINVAL,
		      "ibv_post_send with a 25-bit remote_srqn -> EINVAL");
}

/*
 * A SEND naming srqn (no XRC SRQ of the target's domain): the initiator
 * gets REM_INV_REQ_ERR, the target goes to ERROR, the drop is counted.
 */
static void bad_srqn(struct xrc_ini *in, struct xrc_tgt *t, uint32_t srqn,
		     const char *what)
{
	long before = dp_hw_counter(t->d->name, "rx_bad_xrc_srq");
	struct dp_wc_want w = dp_want(50, IBV_WC_SEND);
	int i, n = 0;
	struct ibv_wc wc;

	if (!tap_ok(xrc_connect(in, t), "%s: a fresh XRC pair", what))
		goto out;
	w.status = IBV_WC_REM_INV_REQ_ERR;
	w.opcode = -1;
	tap_ret_errno(ini_post(in, IBV_WR_SEND, srqn, 64, 0, 0, 50), 0,
		      "%s: SEND to XRC SRQ %u posted", what, srqn);
	dp_expect(in->cq, &w, "%s: initiator completes REM_INV_REQ_ERR", what);
	tap_ret(qp_state(t->qp), IBV_QPS_ERR, "%s: the XRC_RECV QP is in ERROR",
		what);
	tap_ok(dp_hw_counter(t->d->name, "rx_bad_xrc_srq") > before,
	       "%s: rx_bad_xrc_srq counted it", what);
	for (i = 0; i < NSRQ; i++)
		n += dp_poll_none(t->cq[i], &wc, 0);
	tap_ok(n == 0, "%s: no SRQ's CQ saw a completion", what);
out:
	xrc_disconnect(in, t);
}

/* an rkey of an MR in another PD than the SRQ's: REM_ACCESS_ERR */
static void other_pd_rkey(struct xrc_ini *in, struct xrc_tgt *t)
{
	struct ibv_pd *pd2 = ibv_alloc_pd(t->d->ctx);
	uint8_t *b = dp_alloc(4096);
	struct ibv_mr *mr2 = pd2 ? dp_reg(pd2, b, 4096, DP_ACCESS_ALL) : NULL;
	struct dp_wc_want w = dp_want(60, IBV_WC_RDMA_WRITE);

	if (!mr2)
		tap_bail("second PD: %s", strerror(errno));
	if (tap_ok(xrc_connect(in, t), "other PD: a fresh XRC pair")) {
		w.status = IBV_WC_REM_ACCESS_ERR;
		w.opcode = -1;
		dp_fill(in->buf, 64, 3);
		tap_ret_errno(ini_post(in, IBV_WR_RDMA_WRITE, t->srqn[0], 64,
				       mr2->rkey, (uintptr_t)b, 60), 0,
			      "WRITE through SRQ 0 with an rkey of another PD");
		dp_expect(in->cq, &w, "the rkey of another PD -> REM_ACCESS_ERR");
		tap_ok(dp_verify_byte(b, 4096, 0) < 0,
		       "the other PD's memory is untouched");
	}
	xrc_disconnect(in, t);
	ibv_dereg_mr(mr2);
	ibv_dealloc_pd(pd2);
	free(b);
}

/*
 * A second process opens the same domain on the same file, opens our
 * XRC_RECV QP and makes an XRC SRQ of its own, in its PD: our SEND lands
 * in its buffer through the shared target.  Our rkey through its SRQ is
 * refused: the PD is the SRQ's, and its process's.
 */
static int child_main(int to_parent, int from_parent, uint32_t tgt_qpn)
{
	struct ibv_qp_open_attr oa = {
		.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
			     IBV_QP_OPEN_ATTR_TYPE,
		.qp_type = IBV_QPT_XRC_RECV,
	};
	uint32_t msg[2], go;
	struct ibv_xrcd *xrcd;
	struct ibv_srq *srq;
	struct ibv_qp *qp, *bogus;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct dp_dev d;
	struct ibv_wc wc;
	uint8_t *buf;
	int fd, ok = 0;

	dp_open(&d, test_dev_name());
	fd = open(xrcd_path, O_RDONLY);
	xrcd = fd >= 0 ? xrcd_open(d.ctx, fd, 0) : NULL;
	oa.xrcd = xrcd;
	oa.qp_num = tgt_qpn;
	qp = xrcd ? ibv_open_qp(d.ctx, &oa) : NULL;
	oa.qp_num = tgt_qpn + 1000;
	bogus = xrcd ? ibv_open_qp(d.ctx, &oa) : NULL;
	cq = ibv_create_cq(d.ctx, 8, NULL, NULL, 0);
	srq = xrcd && cq ? xsrq_create(&d, d.pd, xrcd, cq) : NULL;
	buf = dp_alloc(4096);
	mr = dp_reg(d.pd, buf, 4096, DP_ACCESS_ALL);
	msg[0] = (xrcd ? 1 : 0) | (qp ? 2 : 0) | (!bogus ? 4 : 0) |
		 (srq ? 8 : 0);
	msg[1] = 0;
	if (srq) {
		struct ibv_sge sge = { (uintptr_t)buf, 4096, mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = 77, .sg_list = &sge,
					  .num_sge = 1 }, *bad;

		ibv_get_srq_num(srq, &msg[1]);
		ibv_post_srq_recv(srq, &wr, &bad);
	}
	if (write(to_parent, msg, sizeof(msg)) != sizeof(msg) ||
	    read(from_parent, &go, sizeof(go)) != sizeof(go))
		return 1;
	if (srq && dp_poll(cq, &wc, 1, DP_WAIT_MS) == 1 &&
	    wc.status == IBV_WC_SUCCESS && wc.wr_id == 77 &&
	    wc.byte_len == 1000 && wc.qp_num == tgt_qpn &&
	    dp_verify(buf, 1000, 0xc41d) < 0)
		ok = 1;
	if (write(to_parent, &ok, sizeof(ok)) != sizeof(ok) ||
	    read(from_parent, &go, sizeof(go)) != sizeof(go))
		return 1;
	if (srq)
		ibv_destroy_srq(srq);
	if (qp)
		ibv_destroy_qp(qp);
	if (xrcd)
		ibv_close_xrcd(xrcd);
	return 0;
}

static void two_processes(struct xrc_ini *in, struct xrc_tgt *t)
{
	int up[2], down[2], ok = 0, status;
	uint32_t msg[2], go = 1;
	pid_t pid;

	if (!tap_ok(xrc_connect(in, t), "two processes: a fresh XRC pair"))
		goto out;
	if (pipe(up) || pipe(down))
		tap_bail("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		tap_bail("fork: %s", strerror(errno));
	if (pid == 0)
		_exit(child_main(up[1], down[0], t->qp->qp_num));
	if (read(up[0], msg, sizeof(msg)) != sizeof(msg))
		msg[0] = 0;
	tap_ok(msg[0] & 1, "child: ibv_open_xrcd on the same file, no O_CREAT");
	tap_ok(msg[0] & 2, "child: ibv_open_qp of our XRC_RECV QP");
	tap_ok(msg[0] & 4, "child: ibv_open_qp of a number not in the domain fails");
	tap_ok(msg[0] & 8, "child: an XRC SRQ of its own in the shared domain");
	dp_fill(in->buf, 1000, 0xc41d);
	tap_ret_errno(ini_post(in, IBV_WR_SEND, msg[1], 1000, 0, 0, 70), 0,
		      "SEND to the child's XRC SRQ %u", msg[1]);
	ini_done(in, 70, IBV_WC_SEND, "SEND to the child's SRQ");
	if (write(down[1], &go, sizeof(go)) != sizeof(go) ||
	    read(up[0], &ok, sizeof(ok)) != sizeof(ok))
		ok = 0;
	tap_ok(ok, "child: received 1000 bytes byte-exact on its SRQ's CQ");
	if (write(down[1], &go, sizeof(go)) != sizeof(go))
		tap_diag("child gone early");
	waitpid(pid, &status, 0);
	tap_ok(WIFEXITED(status) && !WEXITSTATUS(status), "child exits 0");
	tap_ret(qp_state(t->qp), IBV_QPS_RTS,
		"our XRC_RECV QP lives on after the child closed its handle");
	close(up[0]);
	close(up[1]);
	close(down[0]);
	close(down[1]);
	send_to_srq(in, t, 0, 100, false, "after the child");
out:
	xrc_disconnect(in, t);
}

static void data_path(struct dp_dev *di, struct dp_dev *dt,
		      struct ibv_xrcd *xrcd, const char *where)
{
	struct xrc_ini in;
	struct xrc_tgt t;
	int k;

	ini_setup(&in, di);
	tgt_setup(&t, dt, xrcd);
	if (tap_ok(xrc_connect(&in, &t), "%s: XRC_SEND and XRC_RECV QPs connected",
		   where)) {
		for (k = 0; k < NSRQ; k++)
			send_to_srq(&in, &t, k, 64 + k, false, where);
		send_to_srq(&in, &t, 1, MSG_BIG, false, where);
		send_to_srq(&in, &t, 2, 200, true, where);
		send_to_srq(&in, &t, 0, 0, false, where);
		rdma_through(&in, &t, 1, where);
		if (di == dt) {
			odp_through(&in, &t, 2);
			write_imm_to_srq(&in, &t, 0);
			wr_api(&in, &t);
			posts_on_wrong_half(&in, &t);
		}
	}
	xrc_disconnect(&in, &t);
	if (di == dt) {
		struct ibv_xrcd *other = xrcd_open(dt->ctx, -1, O_CREAT);
		struct ibv_cq *ocq = ibv_create_cq(dt->ctx, 8, NULL, NULL, 0);
		struct ibv_srq *osrq = other && ocq ?
			xsrq_create(dt, dt->pd, other, ocq) : NULL;
		uint32_t on = 0;

		bad_srqn(&in, &t, t.srqn[NSRQ - 1] + 1000, "no such SRQ");
		if (tap_ok(osrq && !ibv_get_srq_num(osrq, &on),
			   "an XRC SRQ of another domain"))
			bad_srqn(&in, &t, on, "SRQ of another domain");
		other_pd_rkey(&in, &t);
		two_processes(&in, &t);
		if (osrq)
			ibv_destroy_srq(osrq);
		if (ocq)
			ibv_destroy_cq(ocq);
		if (other)
			ibv_close_xrcd(other);
	}
	tgt_teardown(&t);
	ini_teardown(&in);
}

/* domain and SRQ verbs, and their errors */
static struct ibv_xrcd *objects(struct dp_dev *d, int fd)
{
	struct ibv_srq_init_attr_ex a = {
		.attr = { .max_wr = 4, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD,
		.srq_type = IBV_SRQT_BASIC,
		.pd = d->pd,
	};
	struct ibv_xrcd *xrcd, *again, *anon;
	struct ibv_srq *srq;
	struct ibv_cq *cq;
	uint32_t n;

	tap_ok(d->attr.device_cap_flags & IBV_DEVICE_XRC,
	       "device_cap_flags has IBV_DEVICE_XRC");
	again = xrcd_open(d->ctx, fd, 0);
	tap_null_errno(again, EAGAIN,
		       "ibv_open_xrcd of a new file without O_CREAT -> EAGAIN");
	xrcd = xrcd_open(d->ctx, fd, O_CREAT);
	if (!tap_ok(xrcd != NULL, "ibv_open_xrcd(fd, O_CREAT)"))
		tap_bail("no XRC domain: %s", strerror(errno));
	again = xrcd_open(d->ctx, fd, O_CREAT | O_EXCL);
	tap_null_errno(again, EINVAL,
		       "ibv_open_xrcd(O_CREAT | O_EXCL) of an open domain -> EINVAL");
	again = xrcd_open(d->ctx, fd, 0);
	if (tap_ok(again != NULL, "ibv_open_xrcd again on the same file"))
		tap_ret_errno(ibv_close_xrcd(again), 0, "its ibv_close_xrcd");
	/* a domain without a file: it goes at its only close, or EBUSY */
	anon = xrcd_open(d->ctx, -1, O_CREAT);
	if (!tap_ok(anon != NULL, "ibv_open_xrcd(-1, O_CREAT): no file"))
		tap_bail("no XRC domain: %s", strerror(errno));

	srq = ibv_create_srq_ex(d->ctx, &a);
	if (tap_ok(srq != NULL, "ibv_create_srq_ex IBV_SRQT_BASIC")) {
		tap_ret_errno(ibv_get_srq_num(srq, &n), EINVAL,
			      "ibv_get_srq_num of a basic SRQ -> EINVAL");
		ibv_destroy_srq(srq);
	}
	a.srq_type = IBV_SRQT_XRC;
	a.comp_mask |= IBV_SRQ_INIT_ATTR_XRCD;
	a.xrcd = anon;
	srq = ibv_create_srq_ex(d->ctx, &a);
	tap_null_errno(srq, EINVAL, "ibv_create_srq_ex XRC without a CQ -> EINVAL");
	cq = ibv_create_cq(d->ctx, 8, NULL, NULL, 0);
	a.comp_mask |= IBV_SRQ_INIT_ATTR_CQ;
	a.cq = cq;
	srq = ibv_create_srq_ex(d->ctx, &a);
	if (tap_ok(srq != NULL, "ibv_create_srq_ex IBV_SRQT_XRC")) {
		tap_ok(!ibv_get_srq_num(srq, &n) && n > 0 && n <= 0xffffff,
		       "ibv_get_srq_num: %u", n);
		tap_ret_errno(ibv_close_xrcd(anon), EBUSY,
			      "ibv_close_xrcd with an SRQ in it -> EBUSY");
		tap_ret_errno(ibv_destroy_srq(srq), 0, "ibv_destroy_srq (XRC)");
	}
	tap_ret_errno(ibv_close_xrcd(anon), 0, "then ibv_close_xrcd succeeds");
	a.srq_type = IBV_SRQT_TM;
	srq = ibv_create_srq_ex(d->ctx, &a);
	/* the test_tm_* make TM SRQs; without their attributes one is EINVAL */
	tap_null_errno(srq, EINVAL,
		       "ibv_create_srq_ex IBV_SRQT_TM without IBV_SRQ_INIT_ATTR_TM -> EINVAL");
	ibv_destroy_cq(cq);
	return xrcd;
}

/* two rxe2 devices in two network namespaces, over a veth */
static void two_namespaces(void)
{
	struct ibv_xrcd *xrcd;
	struct dp_dev d1, d2;
	uint64_t end;
	bool up;

	dp_sh("ip netns del xra 2>/dev/null; ip netns del xrb 2>/dev/null");
	up = !dp_sh("ip netns add xra && ip netns add xrb && "
		    "ip link add xrva netns xra type veth peer name xrvb netns xrb && "
		    "ip -n xra addr add 10.79.5.1/24 dev xrva && "
		    "ip -n xrb addr add 10.79.5.2/24 dev xrvb && "
		    "ip -n xra link set xrva up && ip -n xrb link set xrvb up && "
		    "ip netns exec xra rdma link add xrx0 type rxe2 netdev xrva && "
		    "ip netns exec xrb rdma link add xrx1 type rxe2 netdev xrvb");
	for (end = dp_now_ms() + 10000; up && dp_now_ms() < end; usleep(50000))
		if (!dp_sh("grep -qs ffff:0a4f:0501 /sys/class/infiniband/xrx0/ports/1/gids/* && "
			   "grep -qs ffff:0a4f:0502 /sys/class/infiniband/xrx1/ports/1/gids/*"))
			break;
	if (tap_ok(up && dp_now_ms() < end,
		   "rxe2 xrx0 (netns xra) and xrx1 (netns xrb) over a veth")) {
		dp_open(&d1, "xrx0");
		dp_open(&d2, "xrx1");
		xrcd = xrcd_open(d2.ctx, -1, O_CREAT);
		if (tap_ok(xrcd != NULL, "an XRC domain without a file on xrx1"))
			data_path(&d1, &d2, xrcd, "two namespaces");
		if (xrcd)
			ibv_close_xrcd(xrcd);
		dp_close(&d1);
		dp_close(&d2);
	}
	dp_sh("rdma link del xrx0; rdma link del xrx1; "
	      "ip netns del xra; ip netns del xrb");
}

int main(void)
{
	struct ibv_xrcd *xrcd;
	struct dp_dev d;
	bool rxe2;
	int fd;

	dp_open(&d, test_dev_name());
	rxe2 = d.rxe2;
	fd = mkstemp(xrcd_path);
	if (fd < 0)
		tap_bail("mkstemp: %s", strerror(errno));
	xrcd = objects(&d, fd);
	data_path(&d, &d, xrcd, "loopback");
	tap_ret_errno(ibv_close_xrcd(xrcd), 0, "ibv_close_xrcd");
	close(fd);
	unlink(xrcd_path);
	dp_close(&d);
	if (rxe2)
		two_namespaces();
	return tap_done();
}
