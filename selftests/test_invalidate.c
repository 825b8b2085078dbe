// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: LOCAL_INV and SEND_WITH_INV of keys that cannot be invalidated (ibv_reg_mr MRs, type 1 windows, unknown keys): exact statuses, QPs to ERROR, the MR or window still usable
 *
 * Invalidation as user space sees it.  IBTA lets a consumer invalidate
 * only fast-registered MRs and memory windows; an MR from ibv_reg_mr can
 * be neither.  User space cannot fast-register (no ibv_ verb posts
 * IB_WR_REG_MR); type 2 memory windows can be invalidated, and
 * test_mw.c covers them.  Every key named here is one that must not be
 * invalidated:
 *
 * - SEND_WITH_INV naming an ibv_reg_mr rkey, or a key naming nothing:
 *   IBTA class J error at the responder.  The receive completes with
 *   REM_INV_REQ_ERR, the requester gets an invalid-request NAK
 *   (REM_INV_REQ_ERR), both QPs go to ERROR (later sends flush), and the
 *   named MR stays registered and usable (checked byte for byte with an
 *   RDMA WRITE through it on a fresh QP pair).
 * - IBV_WR_LOCAL_INV of an ibv_reg_mr key, or of a key naming nothing:
 *   completes with LOC_QP_OP_ERR, opcode LOCAL_INV (what rdma_rxe does),
 *   the QP goes to ERROR, the MR keeps working.
 *
 * - The rkey of a bound type 1 memory window (IBTA: type 1 windows are
 *   never invalidated, only rebound) and an unallocated window key:
 *   SEND_WITH_INV is the class J error above, LOCAL_INV LOC_QP_OP_ERR;
 *   the window keeps working.
 *
 * The successful paths (fast registration, LOCAL_INV and SEND_WITH_INV
 * of a fast-registered rkey, IB_WC_WITH_INVALIDATE with the rkey) are
 * kernel-only: test_nvme.sh drives them through nvme-rdma and nvmet-rdma.
 * The exact statuses are asserted on rxe2; on another device
 * (RXE2_DEV=rxe0) they are reported only.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp.h"
#include "tap.h"
#include "util.h"

#define LEN 4096

static struct dp_dev dev;
static uint8_t *abuf, *bbuf;
static struct ibv_mr *amr, *bmr;
static uint32_t seed = 7;

static bool pair(struct dp_qp *a, struct dp_qp *b)
{
	return !dp_rc_pair(&dev, a, b);
}

/* a status: exact on rxe2, reported on other devices */
static void want_status(struct ibv_cq *cq, uint64_t wr_id, int opcode,
			int status, const char *what)
{
	struct dp_wc_want w = dp_want(wr_id, opcode);
	struct ibv_wc wc;

	w.status = status;
	if (dev.rxe2) {
		dp_expect(cq, &w, "%s: %s", what, dp_status_str(status));
		return;
	}
	if (dp_poll(cq, &wc, 1, DP_WAIT_MS) == 1)
		tap_skip("%s: (not rxe2) status %s opcode %d", what,
			 dp_status_str(wc.status), wc.opcode);
	else
		tap_skip("%s: (not rxe2) no completion", what);
}

/* the MR pair still works: an RDMA WRITE A -> B through bmr, byte-exact */
static void mrs_alive(const char *why)
{
	struct dp_wc_want w = dp_want(0x77, IBV_WC_RDMA_WRITE);
	struct dp_qp a, b;

	if (!pair(&a, &b)) {
		tap_ok(false, "%s: new QP pair", why);
		return;
	}
	dp_fill(abuf, LEN, ++seed);
	memset(bbuf, 0, LEN);
	if (tap_ret_errno(dp_post_send1(a.qp, 0x77, IBV_WR_RDMA_WRITE, abuf,
					LEN, amr->lkey, (uintptr_t)bbuf,
					bmr->rkey, 0), 0,
			  "%s: post RDMA_WRITE lkey %#x -> rkey %#x", why,
			  amr->lkey, bmr->rkey) &&
	    dp_expect(a.scq, &w, "%s: RDMA_WRITE completes", why))
		tap_ok(dp_verify(bbuf, LEN, seed) < 0,
		       "%s: both MRs still valid, data byte-exact", why);
	else
		tap_skip("%s: no data to compare", why);
	dp_qp_free(&a);
	dp_qp_free(&b);
}

static void send_with_inv(uint32_t rkey, const char *what)
{
	struct ibv_sge sge = { .addr = (uintptr_t)abuf, .length = 64,
			       .lkey = amr->lkey };
	struct ibv_send_wr wr = { 0 }, *bad = NULL;
	struct dp_qp a, b;
	char name[128];

	snprintf(name, sizeof(name), "SEND_WITH_INV of %s (%#x)", what, rkey);
	if (!pair(&a, &b)) {
		tap_ok(false, "%s: QP pair", name);
		return;
	}
	tap_ret_errno(dp_post_recv1(b.qp, 0x51, bbuf, LEN, bmr->lkey), 0,
		      "%s: post receive", name);
	wr.wr_id = 0x50;
	wr.opcode = IBV_WR_SEND_WITH_INV;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.invalidate_rkey = rkey;
	tap_ret_errno(ibv_post_send(a.qp, &wr, &bad), 0, "%s: post", name);
	want_status(b.rcq, 0x51, -1, IBV_WC_REM_INV_REQ_ERR,
		    "responder's receive");
	want_status(a.scq, 0x50, -1, IBV_WC_REM_INV_REQ_ERR,
		    "requester (invalid request NAK)");
	/* the requester QP is in ERROR: a later SEND flushes */
	tap_ret_errno(dp_post_send1(a.qp, 0x53, IBV_WR_SEND, abuf, 64,
				    amr->lkey, 0, 0, 0), 0,
		      "%s: post SEND after the error", name);
	want_status(a.scq, 0x53, -1, IBV_WC_WR_FLUSH_ERR,
		    "requester in ERROR: the next SEND flushes");
	dp_qp_free(&a);
	dp_qp_free(&b);
	mrs_alive(name);
}

static void local_inv(uint32_t key, const char *what)
{
	struct ibv_send_wr wr = { 0 }, *bad = NULL;
	struct dp_qp a, b;
	char name[128];

	snprintf(name, sizeof(name), "LOCAL_INV of %s (%#x)", what, key);
	if (!pair(&a, &b)) {
		tap_ok(false, "%s: QP pair", name);
		return;
	}
	wr.wr_id = 0x60;
	wr.opcode = IBV_WR_LOCAL_INV;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.invalidate_rkey = key;
	tap_ret_errno(ibv_post_send(a.qp, &wr, &bad), 0, "%s: post", name);
	want_status(a.scq, 0x60, IBV_WC_LOCAL_INV, IBV_WC_LOC_QP_OP_ERR,
		    "LOCAL_INV completion");
	tap_ret_errno(dp_post_send1(a.qp, 0x61, IBV_WR_SEND, abuf, 64,
				    amr->lkey, 0, 0, 0), 0,
		      "%s: post SEND after it", name);
	want_status(a.scq, 0x61, -1, IBV_WC_WR_FLUSH_ERR,
		    "QP in ERROR: the SEND flushes");
	dp_qp_free(&a);
	dp_qp_free(&b);
	mrs_alive(name);
}

/* a bound type 1 window: its rkey cannot be invalidated */
static void type1_window(void)
{
	struct ibv_mw_bind mb = { 0 };
	struct dp_wc_want w;
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	struct dp_qp a, b;

	mr = dp_reg(dev.pd, bbuf, LEN, IBV_ACCESS_LOCAL_WRITE |
		    IBV_ACCESS_MW_BIND);
	mw = ibv_alloc_mw(dev.pd, IBV_MW_TYPE_1);
	if (!mw) {
		tap_skip("type 1 window: ibv_alloc_mw: %s", strerror(errno));
		ibv_dereg_mr(mr);
		return;
	}
	if (!pair(&a, &b)) {
		tap_ok(false, "type 1 window: QP pair");
		goto out;
	}
	mb.wr_id = 0x80;
	mb.send_flags = IBV_SEND_SIGNALED;
	mb.bind_info.mr = mr;
	mb.bind_info.addr = (uintptr_t)bbuf;
	mb.bind_info.length = LEN;
	mb.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	w = dp_want(0x80, IBV_WC_BIND_MW);
	if (!tap_ret_errno(ibv_bind_mw(b.qp, mw, &mb), 0,
			   "type 1 window: ibv_bind_mw") ||
	    !dp_expect(b.scq, &w, "type 1 window: bound")) {
		dp_qp_free(&a);
		dp_qp_free(&b);
		goto out;
	}
	dp_qp_free(&a);
	dp_qp_free(&b);
	send_with_inv(mw->rkey, "a type 1 window's rkey");
	local_inv(mw->rkey, "a type 1 window's rkey");
	/* bits 31 and 30: the window key range, nothing allocated there */
	send_with_inv(0xffffff00u, "an unallocated window key");
	local_inv(0xffffff00u, "an unallocated window key");
	/* the window still opens bbuf */
	if (pair(&a, &b)) {
		dp_fill(abuf, 64, ++seed);
		memset(bbuf, 0, 64);
		w = dp_want(0x81, IBV_WC_RDMA_WRITE);
		if (tap_ret_errno(dp_post_send1(a.qp, 0x81, IBV_WR_RDMA_WRITE,
						abuf, 64, amr->lkey,
						(uintptr_t)bbuf, mw->rkey, 0),
				  0, "type 1 window: post WRITE") &&
		    dp_expect(a.scq, &w, "type 1 window: WRITE still works"))
			tap_ok(dp_verify(bbuf, 64, seed) < 0,
			       "type 1 window: data byte-exact");
		dp_qp_free(&a);
		dp_qp_free(&b);
	}
out:
	tap_ret_errno(ibv_dealloc_mw(mw), 0, "type 1 window: dealloc");
	tap_ret_errno(ibv_dereg_mr(mr), 0, "type 1 window: dereg its MR");
}

int main(void)
{
	const char *name = getenv("RXE2_DEV");

	dp_open(&dev, name ? name : "rxe2_0");
	abuf = dp_alloc(LEN);
	bbuf = dp_alloc(LEN);
	amr = dp_reg(dev.pd, abuf, LEN, DP_ACCESS_ALL);
	bmr = dp_reg(dev.pd, bbuf, LEN, DP_ACCESS_ALL);

	mrs_alive("baseline");
	send_with_inv(bmr->rkey, "the responder's ibv_reg_mr rkey");
	/* bit 30 flipped: a key in the ibv_reg_mr range that names nothing */
	send_with_inv(bmr->rkey ^ 0x40000000u, "a key naming no MR");
	/* bit 31: the fast-registration key range, nothing allocated */
	send_with_inv(0x80ffff00u, "an unallocated fast-registration key");
	local_inv(amr->lkey, "an ibv_reg_mr lkey");
	local_inv(amr->lkey ^ 0x40000000u, "a key naming no MR");
	type1_window();

	ibv_dereg_mr(amr);
	ibv_dereg_mr(bmr);
	free(abuf);
	free(bbuf);
	dp_close(&dev);
	return tap_done();
}
