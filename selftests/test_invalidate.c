// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Invalidation as user space sees it.  IBTA lets a consumer invalidate
 * only fast-registered MRs and memory windows; an MR from ibv_reg_mr can
 * be neither.  User space cannot fast-register (no ibv_ verb posts
 * IB_WR_REG_MR), and rxe2 has no memory windows yet, so every key a
 * process can name here is one that must not be invalidated:
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
 * Memory windows: ibv_alloc_mw fails with EOPNOTSUPP and the provider
 * refuses IBV_WR_BIND_MW at post time with EINVAL (a BIND_MW WQE written
 * into the ring anyway would complete with LOC_QP_OP_ERR).
 *
 * The successful paths (fast registration, LOCAL_INV and SEND_WITH_INV
 * of a fast-registered rkey, IB_WC_WITH_INVALIDATE with the rkey) are
 * kernel-only: test_nvme.sh drives them through nvme-rdma and nvmet-rdma.
 * The exact statuses are asserted on rxe2; on another device
 * (RXE2_DEV=rxe0) they are reported only.
 */
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
	struct dp_conn c;
	int r;

	dp_conn_default(&c);
	r = dp_pair(&dev, &dev, IBV_QPT_RC, &dp_small_cap, &c, a, b);
	if (r)
		tap_diag("dp_pair: %s", strerror(r));
	return !r;
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

/* rxe2 has no memory windows yet: say so exactly */
static void memory_windows(void)
{
	struct ibv_send_wr wr = { 0 }, *bad = NULL;
	struct dp_qp a, b;

	if (!dev.rxe2) {
		tap_skip("memory windows: rxe2 only");
		return;
	}
	tap_null_errno(ibv_alloc_mw(dev.pd, IBV_MW_TYPE_2), EOPNOTSUPP,
		       "(rxe2) ibv_alloc_mw: EOPNOTSUPP (no memory windows yet)");
	if (!pair(&a, &b)) {
		tap_ok(false, "BIND_MW: QP pair");
		return;
	}
	wr.wr_id = 0x70;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = IBV_SEND_SIGNALED;
	tap_ret_errno(ibv_post_send(a.qp, &wr, &bad), EINVAL,
		      "(rxe2) post BIND_MW: EINVAL, refused by the provider");
	dp_qp_free(&a);
	dp_qp_free(&b);
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
	memory_windows();

	ibv_dereg_mr(amr);
	ibv_dereg_mr(bmr);
	free(abuf);
	free(bbuf);
	dp_close(&dev);
	return tap_done();
}
