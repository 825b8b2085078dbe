// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: RC error completions: REM_ACCESS, LOC_PROT, REM_INV_REQ (misaligned atomics), RNR_RETRY_EXC, LOC_LEN, REM_OP, RETRY_EXC; the ERROR state, WR_FLUSH_ERR in order, posting in RESET/INIT/RTR
 *
 * RC error completions, each on a fresh loopback pair over the IPv4
 * RoCEv2 GID of the device under test:
 *   wrong rkey -> REM_ACCESS_ERR; lkey of another PD -> LOC_PROT_ERR;
 *   READ / WRITE / atomic on an MR lacking that remote right, and READ /
 *   WRITE past the end of the remote MR -> REM_ACCESS_ERR (memory
 *   beyond the MR untouched); misaligned atomic -> REM_INV_REQ_ERR (IBTA
 *   9.4.5: atomics need 8-byte aligned virtual addresses; the responder
 *   NAKs them as Invalid Request, as mlx5 and the rdma_rxe kernel do;
 *   rdma-core's rxe provider already refuses them at post time); RNR
 *   with rnr_retry 0 and 1
 *   -> RNR_RETRY_EXC_ERR, rnr_retry 7 recovers once a receive arrives;
 *   a SEND longer than the receive -> LOC_LEN_ERR at the responder and
 *   REM_INV_REQ_ERR at the requester;
 *   a SEND into a receive WQE that cannot be used (SGE past its MR, MR
 *   re-registered to other pages or another PD after the post; one or
 *   four packets, after an RNR NAK or not) -> LOC_PROT_ERR at the
 *   responder, REM_OP_ERR at the requester, and after a reset the pair
 *   works over the re-registered MR;
 *   QP access flags with MR-only bits: only the remote bits count;
 *   a destroyed peer QP -> RETRY_EXC_ERR; on rxe2 also the peer's netdev
 *   taken down (device to device over a veth pair) -> RETRY_EXC_ERR.
 * After an error the QP is in ERROR and the WRs behind it (send and
 * receive queues) flush with WR_FLUSH_ERR in posting order.  Posting to
 * QPs in RESET, INIT and RTR fails at once (IBTA 10.8.2, 11.4.1.1).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dp.h"
#include "tap.h"
#include "util.h"

#define BUFLEN 65536

static struct dp_dev dev;
static uint8_t *abuf, *bbuf, *small;
static struct ibv_mr *amr, *bmr, *smr;

static bool pair(const char *what, struct dp_conn *c, struct dp_qp *a,
		 struct dp_qp *b)
{
	int e = dp_pair(&dev, &dev, IBV_QPT_RC, &dp_small_cap, c, a, b);

	if (e) {
		tap_ok(false, "%s: set up a connected RC pair", what);
		tap_diag("  %s", strerror(e));
		return false;
	}
	return true;
}

/*
 * wr_ids first..first+n-1 complete with WR_FLUSH_ERR, in that order, on
 * cq; one TAP line.
 */
static void expect_flush(struct ibv_cq *cq, uint64_t first, int n,
			 const char *what)
{
	struct ibv_wc wc[16];
	int got, i;
	bool ok;

	got = dp_poll(cq, wc, n, DP_WAIT_MS);
	ok = got == n;
	for (i = 0; ok && i < n; i++)
		ok = wc[i].wr_id == first + i &&
		     wc[i].status == IBV_WC_WR_FLUSH_ERR;
	if (!tap_ok(ok, "%s: %d WRs flush with WR_FLUSH_ERR in order", what,
		    n)) {
		tap_diag("  got %d of %d completions", got, n);
		for (i = 0; i < got; i++)
			tap_diag("  wr_id %#llx status %s",
				 (unsigned long long)wc[i].wr_id,
				 dp_status_str(wc[i].status));
	}
	got = dp_poll_none(cq, wc, 50);
	tap_ok(got == 0, "%s: no completion beyond the flushed ones", what);
}

/*
 * Posts the failing WR (wr_id 0x100) followed by four good SENDs
 * (0x101..0x104) and three receives on the failing QP (0x200..0x202),
 * then checks the error, the ERROR state and the flushes.
 */
static void error_and_flush(const char *what, struct dp_qp *a,
			    enum ibv_wc_status st, enum ibv_wr_opcode op,
			    const void *laddr, uint32_t len, uint32_t lkey,
			    uint64_t raddr, uint32_t rkey)
{
	struct dp_wc_want w;
	int r = 0, i;

	for (i = 0; i < 3 && !r; i++)
		r = dp_post_recv1(a->qp, 0x200 + i, abuf + 4096 * i, 64,
				  amr->lkey);
	if (!r)
		r = dp_post_send1(a->qp, 0x100, op, laddr, len, lkey, raddr,
				  rkey, 0);
	for (i = 1; i <= 4 && !r; i++)
		r = dp_post_send1(a->qp, 0x100 + i, IBV_WR_SEND, abuf, 8,
				  amr->lkey, 0, 0, 0);
	if (!tap_ret_errno(r, 0, "%s: post the failing WR, 4 SENDs, 3 receives",
			   what))
		return;
	w = dp_want(0x100, -1);
	w.status = st;
	w.qp_num = a->qp->qp_num;
	dp_expect(a->scq, &w, "%s: %s", what, dp_status_str(st));
	expect_flush(a->scq, 0x101, 4, what);
	tap_ret(qp_state(a->qp), IBV_QPS_ERR, "%s: QP is in ERROR", what);
	expect_flush(a->rcq, 0x200, 3, "receive queue");

	/* IBTA 10.8.3.3: WRs posted in ERROR complete with a flush. */
	r = dp_post_send1(a->qp, 0x105, IBV_WR_SEND, abuf, 8, amr->lkey, 0,
			  0, 0);
	if (dev.rxe2 || !r) {
		tap_ret_errno(r, 0, "%s: post_send in ERROR accepted", what);
		expect_flush(a->scq, 0x105, 1, "post_send in ERROR");
	} else {
		tap_skip("%s: rdma_rxe refuses post_send in ERROR (%s)", what,
			 strerror(r));
	}
}

static void wrong_rkey(void)
{
	struct dp_qp a, b;
	struct dp_conn c;

	dp_conn_default(&c);
	if (!pair("wrong rkey", &c, &a, &b))
		return;
	memset(bbuf, 0, 256);
	dp_fill(abuf + 8192, 256, 7);
	error_and_flush("WRITE with a wrong rkey", &a, IBV_WC_REM_ACCESS_ERR,
			IBV_WR_RDMA_WRITE, abuf + 8192, 256, amr->lkey,
			(uintptr_t)bbuf, bmr->rkey ^ 0x80);
	tap_ok(dp_verify_byte(bbuf, 256, 0) < 0,
	       "WRITE with a wrong rkey: target memory untouched");
	dp_qp_free(&a);
	dp_qp_free(&b);
}

static void other_pd_lkey(void)
{
	struct ibv_pd *pd2 = ibv_alloc_pd(dev.ctx);
	struct ibv_mr *mr2;
	struct dp_qp a, b;
	struct dp_conn c;
	struct ibv_wc wc;
	uint8_t *buf2 = dp_alloc(4096);

	if (!pd2)
		tap_bail("ibv_alloc_pd: %s", strerror(errno));
	mr2 = dp_reg(pd2, buf2, 4096, IBV_ACCESS_LOCAL_WRITE);
	dp_conn_default(&c);
	if (pair("lkey of another PD", &c, &a, &b)) {
		dp_post_recv1(b.qp, 0x300, bbuf, 256, bmr->lkey);
		/* rdma_rxe answers LOC_QP_OP_ERR; IBTA and mlx5 LOC_PROT_ERR */
		error_and_flush(dev.rxe2 ?
				"(rxe2) SEND with the lkey of another PD's MR" :
				"SEND with the lkey of another PD's MR (rdma_rxe: LOC_QP_OP_ERR)",
				&a, dev.rxe2 ? IBV_WC_LOC_PROT_ERR :
					       IBV_WC_LOC_QP_OP_ERR,
				IBV_WR_SEND, buf2, 64, mr2->lkey, 0, 0);
		tap_ok(dp_poll_none(b.rcq, &wc, 50) == 0,
		       "lkey of another PD: nothing reached the responder");
		dp_qp_free(&a);
		dp_qp_free(&b);
	}
	ibv_dereg_mr(mr2);
	ibv_dealloc_pd(pd2);
	free(buf2);
}

/* smr covers small[0, 4096) of an 8192-byte buffer. */
static void past_end(enum ibv_wr_opcode op)
{
	const char *name = op == IBV_WR_RDMA_READ ? "READ" : "WRITE";
	char what[96];
	struct dp_qp a, b;
	struct dp_conn c;

	snprintf(what, sizeof(what), "%s of 100 B from 10 B before the MR end",
		 name);
	dp_conn_default(&c);
	if (!pair(what, &c, &a, &b))
		return;
	memset(small, 0x3c, 8192);
	memset(abuf + 8192, 0x3c, 256);
	error_and_flush(what, &a, IBV_WC_REM_ACCESS_ERR, op, abuf + 8192, 100,
			amr->lkey, (uintptr_t)small + 4096 - 10, smr->rkey);
	tap_ok(dp_verify_byte(small, 8192, 0x3c) < 0 &&
	       dp_verify_byte(abuf + 8192, 256, 0x3c) < 0,
	       "%s: neither side's memory changed", what);
	dp_qp_free(&a);
	dp_qp_free(&b);
}

static void misaligned_atomic(void)
{
	struct dp_qp a, b;
	struct dp_conn c;
	uint64_t v = 0x0102030405060708ull;

	if (dev.attr.atomic_cap == IBV_ATOMIC_NONE) {
		tap_skip("misaligned atomic: device has no atomics");
		return;
	}
	dp_conn_default(&c);
	if (!pair("misaligned atomic", &c, &a, &b))
		return;
	memcpy(bbuf + 1024, &v, 8);
	memcpy(bbuf + 1032, &v, 8);
	if (!dev.rxe2) {
		struct ibv_wc wc;
		int r = dp_post_send1(a.qp, 0x100, IBV_WR_ATOMIC_FETCH_AND_ADD,
				      abuf + 8192, 8, amr->lkey,
				      (uintptr_t)bbuf + 1028, bmr->rkey, 0);

		/* rdma-core's rxe provider checks alignment at post time */
		if (r == EINVAL)
			tap_ok(dp_poll_none(a.scq, &wc, 50) == 0,
			       "misaligned atomic: rdma_rxe's provider refuses it at post (EINVAL); REM_INV_REQ_ERR is checked on rxe2");
		else
			tap_ok(!r && dp_poll(a.scq, &wc, 1, DP_WAIT_MS) == 1 &&
			       wc.status == IBV_WC_REM_INV_REQ_ERR,
			       "misaligned atomic: REM_INV_REQ_ERR");
		goto out;
	}
	error_and_flush("(rxe2) FETCH_AND_ADD at a 4-byte aligned address", &a,
			IBV_WC_REM_INV_REQ_ERR, IBV_WR_ATOMIC_FETCH_AND_ADD,
			abuf + 8192, 8, amr->lkey, (uintptr_t)bbuf + 1028,
			bmr->rkey);
	tap_ok(!memcmp(bbuf + 1024, &v, 8) && !memcmp(bbuf + 1032, &v, 8),
	       "misaligned atomic: remote memory unchanged");
out:
	dp_qp_free(&a);
	dp_qp_free(&b);
}

static void rnr(int retries)
{
	struct dp_qp a, b;
	struct dp_conn c;
	char what[64];
	uint64_t t0;

	snprintf(what, sizeof(what), "RNR with rnr_retry %d", retries);
	dp_conn_default(&c);
	c.rnr_retry = retries;
	c.min_rnr_timer = 1;
	if (!pair(what, &c, &a, &b))
		return;
	t0 = dp_now_ms();
	error_and_flush(what, &a, IBV_WC_RNR_RETRY_EXC_ERR, IBV_WR_SEND, abuf,
			32, amr->lkey, 0, 0);
	tap_diag("%s: error after %llu ms", what,
		 (unsigned long long)(dp_now_ms() - t0));
	dp_qp_free(&a);
	dp_qp_free(&b);
}

/* rnr_retry 7 retries forever: a receive posted late still gets the SEND */
static void rnr_recovers(void)
{
	struct dp_qp a, b;
	struct dp_conn c;
	struct dp_wc_want w;
	struct ibv_wc wc;
	int r;

	dp_conn_default(&c);
	c.rnr_retry = 7;
	if (!pair("RNR recovery", &c, &a, &b))
		return;
	dp_fill(abuf, 40, 99);
	memset(bbuf, 0, 64);
	r = dp_post_send1(a.qp, 0x400, IBV_WR_SEND, abuf, 40, amr->lkey, 0, 0,
			  0);
	tap_ret_errno(r, 0, "RNR recovery: SEND posted before any receive");
	tap_ok(dp_poll_none(a.scq, &wc, 200) == 0,
	       "RNR recovery: no completion while the responder has no receive");
	r = dp_post_recv1(b.qp, 0x401, bbuf, 64, bmr->lkey);
	tap_ret_errno(r, 0, "RNR recovery: receive posted 200 ms later");
	w = dp_want(0x400, IBV_WC_SEND);
	dp_expect(a.scq, &w, "RNR recovery: SEND completes successfully");
	w = dp_want(0x401, IBV_WC_RECV);
	w.byte_len = 40;
	w.wc_flags = 0;
	w.flags_ignore = IBV_WC_GRH;
	dp_expect(b.rcq, &w, "RNR recovery: RECV of 40 B");
	tap_ok(dp_verify(bbuf, 40, 99) < 0, "RNR recovery: data byte-exact");
	dp_qp_free(&a);
	dp_qp_free(&b);
}

/* Timeout 10 (4.2 ms), retry_cnt 1: the error comes in well under 1 s. */
static void peer_gone(void)
{
	struct dp_qp a, b;
	struct dp_conn c;
	uint64_t t0;

	dp_conn_default(&c);
	c.timeout = 10;
	c.retry_cnt = 1;
	if (!pair("peer QP destroyed", &c, &a, &b))
		return;
	tap_ret_errno(ibv_destroy_qp(b.qp), 0,
		      "peer QP destroyed: destroy the responder QP");
	b.qp = NULL;
	t0 = dp_now_ms();
	error_and_flush("SEND to a destroyed peer QP", &a,
			IBV_WC_RETRY_EXC_ERR, IBV_WR_SEND, abuf, 32, amr->lkey,
			0, 0);
	tap_diag("peer QP destroyed: error after %llu ms",
		 (unsigned long long)(dp_now_ms() - t0));
	dp_qp_free(&a);
	dp_qp_free(&b);
}

/* An MR without the remote right the operation needs: REM_ACCESS_ERR. */
static void mr_access(enum ibv_wr_opcode op)
{
	const char *name = op == IBV_WR_RDMA_READ ? "READ from an MR without REMOTE_READ" :
			   op == IBV_WR_RDMA_WRITE ? "WRITE to an MR without REMOTE_WRITE" :
			   "FETCH_AND_ADD on an MR without REMOTE_ATOMIC";
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		  IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	struct ibv_mr *mr;
	struct dp_qp a, b;
	struct dp_conn c;
	uint8_t *t = dp_alloc(4096);

	if (op == IBV_WR_RDMA_READ)
		acc &= ~IBV_ACCESS_REMOTE_READ;
	else if (op == IBV_WR_RDMA_WRITE)
		acc &= ~IBV_ACCESS_REMOTE_WRITE;
	else
		acc &= ~IBV_ACCESS_REMOTE_ATOMIC;
	if (op != IBV_WR_RDMA_READ && dev.attr.atomic_cap == IBV_ATOMIC_NONE)
		acc &= ~IBV_ACCESS_REMOTE_ATOMIC;
	mr = dp_reg(dev.pd, t, 4096, acc);
	dp_conn_default(&c);
	if (pair(name, &c, &a, &b)) {
		memset(t, 0x11, 4096);
		memset(abuf + 8192, 0x22, 64);
		error_and_flush(name, &a, IBV_WC_REM_ACCESS_ERR, op,
				abuf + 8192, op == IBV_WR_ATOMIC_FETCH_AND_ADD ?
				8 : 64, amr->lkey, (uintptr_t)t, mr->rkey);
		tap_ok(dp_verify_byte(t, 4096, 0x11) < 0 &&
		       dp_verify_byte(abuf + 8192, 64, 0x22) < 0,
		       "%s: neither side's memory changed", name);
		dp_qp_free(&a);
		dp_qp_free(&b);
	}
	ibv_dereg_mr(mr);
	free(t);
}

/*
 * qp_access_flags carrying bits that only mean something for an MR (as
 * programs written for mlx5 pass them): the QP comes up, and only the
 * remote bits count: WRITE works, READ without REMOTE_READ is refused.
 */
static void qp_access_mr_bits(void)
{
	const char *what = "QP access REMOTE_WRITE plus MR-only bits";
	struct dp_wc_want w;
	struct dp_qp a, b;
	struct dp_conn c;

	dp_conn_default(&c);
	c.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_MW_BIND |
		   IBV_ACCESS_ZERO_BASED | IBV_ACCESS_ON_DEMAND |
		   IBV_ACCESS_HUGETLB | IBV_ACCESS_RELAXED_ORDERING;
	if (!pair(what, &c, &a, &b))
		return;
	memset(abuf + 8192, 0x5a, 256);
	memset(bbuf + 8192, 0, 256);
	tap_ret_errno(dp_post_send1(a.qp, 0x300, IBV_WR_RDMA_WRITE,
				    abuf + 8192, 256, amr->lkey,
				    (uintptr_t)(bbuf + 8192), bmr->rkey, 0),
		      0, "%s: post a WRITE", what);
	w = dp_want(0x300, IBV_WC_RDMA_WRITE);
	dp_expect(a.scq, &w, "%s: WRITE succeeds", what);
	tap_ok(dp_verify_byte(bbuf + 8192, 256, 0x5a) < 0,
	       "%s: WRITE placed all 256 bytes", what);
	error_and_flush("READ from a QP without REMOTE_READ (MR-only bits set)",
			&a, IBV_WC_REM_ACCESS_ERR, IBV_WR_RDMA_READ,
			abuf + 8192, 64, amr->lkey, (uintptr_t)(bbuf + 8192),
			bmr->rkey);
	dp_qp_free(&a);
	dp_qp_free(&b);
}

enum unusable_recv { RECV_SGE_PAST_MR, RECV_REREG_TRANSLATION, RECV_REREG_PD };

/* RESET both QPs and connect them again, as an application recovers */
static bool reconnect(struct dp_qp *a, struct dp_qp *b, struct dp_conn *c)
{
	struct ibv_qp_attr r = { .qp_state = IBV_QPS_RESET };

	return !ibv_modify_qp(a->qp, &r, IBV_QP_STATE) &&
	       !ibv_modify_qp(b->qp, &r, IBV_QP_STATE) &&
	       !dp_connect(a->qp, &dev, &dev.gid, b->qp->qp_num, c) &&
	       !dp_connect(b->qp, &dev, &dev.gid, a->qp->qp_num, c);
}

/*
 * A SEND whose receive WQE cannot be used (its SGE runs past the MR, or
 * its lkey was re-registered to other pages or another PD after it was
 * posted): the receive completes LOC_PROT_ERR, the responder NAKs with
 * Remote Operational Error, the SEND completes REM_OP_ERR (IBTA 9.9.3.1.2
 * class B/C), both QPs go to ERROR and flush.  Reset and reconnected,
 * the pair carries a SEND into the re-registered MR.
 */
static void recv_unusable(enum unusable_recv kind, uint32_t len,
			  bool rnr_first)
{
	static const char *const names[] = {
		[RECV_SGE_PAST_MR] = "SEND into a receive SGE past its MR",
		[RECV_REREG_TRANSLATION] = "SEND into a receive whose MR was re-registered to other pages",
		[RECV_REREG_PD] = "SEND into a receive whose MR was re-registered to another PD",
	};
	uint8_t *x = dp_alloc(8192), *y = dp_alloc(8192);
	struct ibv_pd *pd2 = ibv_alloc_pd(dev.ctx);
	struct dp_wc_want w;
	struct ibv_mr *m;
	struct dp_qp a, b;
	struct dp_conn c;
	int r;

	m = dp_reg(dev.pd, x, 4096, IBV_ACCESS_LOCAL_WRITE);
	char what[200];

	snprintf(what, sizeof(what), "%s (%u B%s)", names[kind], len,
		 rnr_first ? ", after an RNR NAK" : "");
	dp_conn_default(&c);
	c.rnr_retry = 7;
	/*
	 * After an RNR NAK the retry must come after the receive is posted
	 * and its MR re-registered: 491 ms (IBTA timer code 31) leaves time
	 * for both even under emulation.
	 */
	c.min_rnr_timer = rnr_first ? 31 : 1;
	if (!pd2 || !pair(what, &c, &a, &b))
		goto out;
	memset(x, 0x44, 8192);
	memset(y, 0x44, 8192);
	memset(abuf, 0x5e, len);
	/* traffic first, as an application that re-registers mid-run */
	r = dp_post_recv1(b.qp, 0x7ff, bbuf, len, bmr->lkey);
	r = r ?: dp_post_send1(a.qp, 0x8ff, IBV_WR_SEND, abuf, len, amr->lkey,
			       0, 0, 0);
	w = dp_want(0x8ff, IBV_WC_SEND);
	dp_expect(a.scq, &w, "%s: a first SEND succeeds", what);
	w = dp_want(0x7ff, IBV_WC_RECV);
	dp_expect(b.rcq, &w, "%s: its receive succeeds", what);
	if (rnr_first) {
		r = dp_post_send1(a.qp, 0x900, IBV_WR_SEND, abuf, len,
				  amr->lkey, 0, 0, 0);
		usleep(20000);
	}
	r = r ?: dp_post_recv1(b.qp, 0x800,
			       kind == RECV_SGE_PAST_MR ?
			       x + 4096 - len / 2 : x, len, m->lkey);
	r = r ?: dp_post_recv1(b.qp, 0x801, bbuf, len, bmr->lkey);
	if (kind == RECV_REREG_TRANSLATION)
		r = r ?: ibv_rereg_mr(m, IBV_REREG_MR_CHANGE_TRANSLATION, NULL,
				      y, 4096, 0);
	else if (kind == RECV_REREG_PD)
		r = r ?: ibv_rereg_mr(m, IBV_REREG_MR_CHANGE_PD, pd2, NULL, 0,
				      0);
	if (!tap_ret_errno(r, 0, "%s: post two receives (and rereg)", what))
		goto free_pair;
	if (!rnr_first)
		r = dp_post_send1(a.qp, 0x900, IBV_WR_SEND, abuf, len,
				  amr->lkey, 0, 0, 0);
	r = r ?: dp_post_send1(a.qp, 0x901, IBV_WR_SEND, abuf, len,
			       amr->lkey, 0, 0, 0);
	tap_ret_errno(r, 0, "%s: post two SENDs", what);
	w = dp_want(0x800, -1);
	w.status = IBV_WC_LOC_PROT_ERR;
	dp_expect(b.rcq, &w, "%s: receiver LOC_PROT_ERR", what);
	expect_flush(b.rcq, 0x801, 1, what);
	w = dp_want(0x900, -1);
	w.status = IBV_WC_REM_OP_ERR;
	dp_expect(a.scq, &w, "%s: sender REM_OP_ERR", what);
	expect_flush(a.scq, 0x901, 1, what);
	tap_ok(qp_state(a.qp) == IBV_QPS_ERR && qp_state(b.qp) == IBV_QPS_ERR,
	       "%s: both QPs in ERROR", what);
	/* past the MR's end nothing; before it, IBTA lets the head land */
	if (kind == RECV_SGE_PAST_MR)
		tap_ok(dp_verify_byte(x, 4096 - len / 2, 0x44) < 0 &&
		       dp_verify_byte(x + 4096, 4096, 0x44) < 0,
		       "%s: nothing written outside the SGE's part in the MR",
		       what);
	else
		tap_ok(dp_verify_byte(x, 8192, 0x44) < 0 &&
		       dp_verify_byte(y, 8192, 0x44) < 0,
		       "%s: no byte of either page set written", what);

	if (kind == RECV_REREG_PD)
		r = ibv_rereg_mr(m, IBV_REREG_MR_CHANGE_PD, dev.pd, NULL, 0, 0);
	if (!tap_ok(!r && reconnect(&a, &b, &c),
		    "%s: reset and reconnect both QPs", what))
		goto free_pair;
	r = dp_post_recv1(b.qp, 0x802, kind == RECV_REREG_TRANSLATION ?
			  y : x, 64, m->lkey);
	r = r ?: dp_post_send1(a.qp, 0x902, IBV_WR_SEND, abuf, 64, amr->lkey,
			       0, 0, 0);
	tap_ret_errno(r, 0, "%s: after reconnect, post a receive and a SEND",
		      what);
	w = dp_want(0x902, IBV_WC_SEND);
	dp_expect(a.scq, &w, "%s: after reconnect, SEND succeeds", what);
	w = dp_want(0x802, IBV_WC_RECV);
	w.byte_len = 64;
	dp_expect(b.rcq, &w, "%s: after reconnect, receive succeeds", what);
	tap_ok(dp_verify_byte(kind == RECV_REREG_TRANSLATION ? y : x, 64,
			      0x5e) < 0,
	       "%s: after reconnect, the 64 bytes are in the MR's pages", what);
free_pair:
	dp_qp_free(&a);
	dp_qp_free(&b);
out:
	ibv_dereg_mr(m);
	if (pd2)
		ibv_dealloc_pd(pd2);
	free(x);
	free(y);
}

/*
 * A SEND longer than the receive buffer: the responder completes the
 * receive with LOC_LEN_ERR and NAKs (Invalid Request): REM_INV_REQ_ERR.
 */
static void recv_too_short(void)
{
	const char *what = "SEND of 200 B into a 100 B receive";
	struct dp_wc_want w;
	struct dp_qp a, b;
	struct dp_conn c;

	dp_conn_default(&c);
	if (!pair(what, &c, &a, &b))
		return;
	memset(bbuf, 0x33, 4096);
	tap_ret_errno(dp_post_recv1(b.qp, 0x700, bbuf + 1024, 100, bmr->lkey),
		      0, "%s: post the short receive", what);
	/* rdma_rxe (6.1) answers REM_OP_ERR / LOC_QP_OP_ERR instead */
	if (!dev.rxe2)
		what = "SEND of 200 B into a 100 B receive (rdma_rxe: REM_OP_ERR, LOC_QP_OP_ERR)";
	else
		what = "(rxe2) SEND of 200 B into a 100 B receive";
	error_and_flush(what, &a, dev.rxe2 ? IBV_WC_REM_INV_REQ_ERR :
					     IBV_WC_REM_OP_ERR,
			IBV_WR_SEND, abuf, 200, amr->lkey, 0, 0);
	w = dp_want(0x700, -1);
	w.status = dev.rxe2 ? IBV_WC_LOC_LEN_ERR : IBV_WC_LOC_QP_OP_ERR;
	dp_expect(b.rcq, &w, "%s: responder %s", what,
		  dp_status_str(w.status));
	tap_ok(dp_verify_byte(bbuf, 1024, 0x33) < 0 &&
	       dp_verify_byte(bbuf + 1124, 4096 - 1124, 0x33) < 0,
	       "%s: nothing written outside the receive buffer", what);
	dp_qp_free(&a);
	dp_qp_free(&b);
}

static bool wait_port(enum ibv_port_state state, bool want_gid)
{
	uint64_t end = dp_now_ms() + 10000;

	do {
		if (!dp_query_port(&dev) && dev.port.state == state &&
		    (!want_gid || find_ipv4_gid(dev.ctx, NULL) >= 0))
			return true;
		usleep(50000);
	} while (dp_now_ms() < end);
	return false;
}

/*
 * rxe2, device to device: the peer's netdev goes down, the requester's
 * packets go nowhere, it retries retry_cnt times and gives up.
 */
static void peer_netdev_down(void)
{
	struct dp_dev d0, d1;
	struct dp_qp a, b;
	struct dp_conn c;
	struct ibv_mr *mr0;
	uint64_t t0;
	int e;

	if (!tap_ok(dp_veth_links(),
		    "(rxe2) peer netdev down: veth rxe2dp0/1 with links rxe2_dp0/1"))
		goto out;
	dp_open(&d0, "rxe2_dp0");
	dp_open(&d1, "rxe2_dp1");
	mr0 = dp_reg(d0.pd, abuf, BUFLEN, IBV_ACCESS_LOCAL_WRITE);
	dp_conn_default(&c);
	c.timeout = 10;
	c.retry_cnt = 1;
	e = dp_pair(&d0, &d1, IBV_QPT_RC, &dp_small_cap, &c, &a, &b);
	if (tap_ret_errno(e, 0, "(rxe2) peer netdev down: RC pair rxe2_dp0 <-> rxe2_dp1")) {
		tap_ret(dp_sh("ip link set dev rxe2dp1 down"), 0,
			"(rxe2) peer netdev down: ip link set dev rxe2dp1 down");
		t0 = dp_now_ms();
		/* error_and_flush uses amr's lkey: swap in d0's MR */
		{
			struct ibv_mr *saved = amr;

			amr = mr0;
			error_and_flush("(rxe2) SEND with the peer's netdev down", &a,
					IBV_WC_RETRY_EXC_ERR, IBV_WR_SEND, abuf,
					32, mr0->lkey, 0, 0);
			amr = saved;
		}
		tap_diag("peer netdev down: error after %llu ms",
			 (unsigned long long)(dp_now_ms() - t0));
		dp_qp_free(&a);
		dp_qp_free(&b);
	}
	ibv_dereg_mr(mr0);
	dp_close(&d0);
	dp_close(&d1);
out:
	tap_ok(!dp_veth_links_del(), "(rxe2) peer netdev down: links and veth removed");
}

/*
 * Loopback with the device's own netdev down: informational on both
 * (rdma_rxe and rxe2 loop their own packets back inside the driver).
 */
static void own_netdev_down(void)
{
	const char *nd = dp_netdev(&dev);
	char name[64];
	struct dp_qp a, b;
	struct dp_conn c;
	struct ibv_wc wc;
	int r, n;

	if (!nd) {
		tap_skip("netdev down: netdev of %s unknown", dev.name);
		return;
	}
	snprintf(name, sizeof(name), "%s", nd);
	dp_conn_default(&c);
	c.timeout = 10;
	c.retry_cnt = 1;
	if (!pair("netdev down", &c, &a, &b))
		return;
	r = dp_sh("ip link set dev %s down", name);
	tap_ok(!r && wait_port(IBV_PORT_DOWN, false),
	       "own netdev down: %s down, port DOWN", name);
	dp_post_recv1(b.qp, 0x500, bbuf, 64, bmr->lkey);
	r = dp_post_send1(a.qp, 0x100, IBV_WR_SEND, abuf, 32, amr->lkey, 0, 0,
			  0);
	n = dp_poll(a.scq, &wc, 1, DP_WAIT_MS);
	tap_ok(!r && n == 1,
	       "own netdev down: loopback SEND completes (status %s: not asserted)",
	       n == 1 ? dp_status_str(wc.status) : "none");
	dp_qp_free(&a);
	dp_qp_free(&b);
	r = dp_sh("ip link set dev %s up", name);
	tap_ok(!r && wait_port(IBV_PORT_ACTIVE, true),
	       "own netdev down: %s up again, port ACTIVE, IPv4 GID back",
	       name);
}

static void post_in_state(enum ibv_qp_state st)
{
	static const char *const names[] = { "RESET", "INIT", "RTR" };
	struct ibv_qp_attr attr;
	struct dp_qp a = { 0 };
	struct ibv_sge sge = { .addr = (uintptr_t)abuf, .length = 8,
			       .lkey = amr->lkey };
	struct ibv_send_wr swr, *sbad = NULL;
	struct ibv_recv_wr rwr = { .wr_id = 0x601, .sg_list = &sge,
				   .num_sge = 1 }, *rbad = NULL;
	struct dp_conn c;
	struct ibv_wc wc;
	int mask, r;

	a.scq = ibv_create_cq(dev.ctx, 16, NULL, NULL, 0);
	a.rcq = ibv_create_cq(dev.ctx, 16, NULL, NULL, 0);
	a.qp = a.scq && a.rcq ? dp_create_qp(&dev, IBV_QPT_RC, a.scq, a.rcq,
					     NULL, &dp_small_cap) : NULL;
	if (!a.qp)
		tap_bail("create QP: %s", strerror(errno));
	dp_conn_default(&c);
	if (st >= IBV_QPS_INIT) {
		qp_attr_init(IBV_QPT_RC, &attr, &mask);
		ibv_modify_qp(a.qp, &attr, mask);
	}
	if (st >= IBV_QPS_RTR) {
		qp_attr_rtr(IBV_QPT_RC, dev.gidx, &dev.gid, a.qp->qp_num,
			    &attr, &mask);
		ibv_modify_qp(a.qp, &attr, mask);
	}
	tap_ret(qp_state(a.qp), st, "post in %s: QP is in %s", names[st],
		names[st]);
	memset(&swr, 0, sizeof(swr));
	swr.wr_id = 0x600;
	swr.opcode = IBV_WR_SEND;
	swr.send_flags = IBV_SEND_SIGNALED;
	swr.sg_list = &sge;
	swr.num_sge = 1;
	r = ibv_post_send(a.qp, &swr, &sbad);
	if (dev.rxe2) {
		tap_ret_errno(r, EINVAL, "(rxe2) post_send in %s is EINVAL",
			      names[st]);
		tap_ok(sbad == &swr, "(rxe2) post_send in %s: bad_wr is the WR",
		       names[st]);
	} else {
		tap_ok(r != 0, "post_send in %s fails (%s)", names[st],
		       strerror(r));
	}
	r = ibv_post_recv(a.qp, &rwr, &rbad);
	if (st == IBV_QPS_RESET) {
		if (dev.rxe2)
			tap_ret_errno(r, EINVAL,
				      "(rxe2) post_recv in RESET is EINVAL");
		else
			tap_skip("post_recv in RESET: rdma_rxe's provider accepts it (%s)",
				 strerror(r));
	} else {
		tap_ret_errno(r, 0, "post_recv in %s is accepted", names[st]);
	}
	tap_ok(dp_poll_none(a.scq, &wc, 50) == 0,
	       "post in %s: no send completion", names[st]);
	dp_qp_free(&a);
}

int main(void)
{
	uint64_t t0 = dp_now_ms();
	int i;

	dp_open(&dev, test_dev_name());
	abuf = dp_alloc(BUFLEN);
	bbuf = dp_alloc(BUFLEN);
	small = dp_alloc(8192);
	amr = dp_reg(dev.pd, abuf, BUFLEN, DP_ACCESS_ALL);
	bmr = dp_reg(dev.pd, bbuf, BUFLEN, DP_ACCESS_ALL);
	smr = dp_reg(dev.pd, small, 4096, DP_ACCESS_ALL);

	post_in_state(IBV_QPS_RESET);
	post_in_state(IBV_QPS_INIT);
	post_in_state(IBV_QPS_RTR);
	wrong_rkey();
	other_pd_lkey();
	past_end(IBV_WR_RDMA_READ);
	past_end(IBV_WR_RDMA_WRITE);
	misaligned_atomic();
	mr_access(IBV_WR_RDMA_READ);
	mr_access(IBV_WR_RDMA_WRITE);
	if (dev.attr.atomic_cap != IBV_ATOMIC_NONE)
		mr_access(IBV_WR_ATOMIC_FETCH_AND_ADD);
	qp_access_mr_bits();
	recv_too_short();
	for (i = 0; i < 2; i++) {
		recv_unusable(RECV_SGE_PAST_MR, 64, i);
		recv_unusable(RECV_SGE_PAST_MR, 4096, i);
		recv_unusable(RECV_REREG_TRANSLATION, 64, i);
		recv_unusable(RECV_REREG_TRANSLATION, 4096, i);
		recv_unusable(RECV_REREG_PD, 64, i);
		recv_unusable(RECV_REREG_PD, 4096, i);
	}
	rnr(0);
	rnr(1);
	rnr_recovers();
	peer_gone();
	own_netdev_down();
	if (dev.rxe2)
		peer_netdev_down();
	else
		tap_skip("(rxe2) peer netdev down: needs two links in one namespace");

	ibv_dereg_mr(amr);
	ibv_dereg_mr(bmr);
	ibv_dereg_mr(smr);
	dp_close(&dev);
	tap_diag("took %llu ms", (unsigned long long)(dp_now_ms() - t0));
	return tap_done();
}
