// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: tag matching SRQs, failures: rendezvous READ with a bad rkey, an unexpected message failing mid-way, a READ left and a cut-off EAGER flushed at RESET and destroy (fault rules), a failing WRITE with immediate after an unexpected message
 *
 * Tag matching when things fail, each on a fresh pair of its own (the
 * model and the setup: tm_lib.h):
 *  1. rendezvous READ with a bad rkey (one naming no MR, one of an MR
 *     without REMOTE_READ): MATCH, then REM_ACCESS_ERR for the tag, no
 *     FIN, both QPs in ERROR;
 *  2. an unexpected message that fails mid-way is not counted: a
 *     3-packet EAGER for no tag into the only SRQ WQE (100 B):
 *     LOC_LEN_ERR for that WQE, the receiving QP in ERROR,
 *     REM_INV_REQ_ERR at the sender, nothing else on the SRQ's CQ; the
 *     counts stay equal: an ADD completes without TM_SYNC_REQ and a
 *     message from a healthy pair matches its tag;
 *  3. a rendezvous READ left in the kernel SQ (a fault rule drops the
 *     receiver's READ requests): after the MATCH, RESET of the receiving
 *     QP, and in a second pair its destroy, completes the tag's buffer
 *     with WR_FLUSH_ERR, exactly once; no FIN at the sender; destroying
 *     the reset QP completes nothing again;
 *  4. a matched 3-packet EAGER cut off (the receiver with a send queue
 *     of its own; a fault rule drops the sender's SEND_LAST): MATCH
 *     (byte_len 0), no DATA_VALID; RESET of the receiving QP completes
 *     the buffer with WR_FLUSH_ERR; the tag is consumed;
 *  5. an unexpected message, then on the same QP an RDMA WRITE with
 *     immediate whose rkey names no MR: an error completion for the SRQ
 *     WQE it took, REM_ACCESS_ERR at the sender, the QP in ERROR; the
 *     counts stay as they were: on r1 an ADD completes without
 *     TM_SYNC_REQ and a message for it matches.
 * Fault rules are cleared after each check that sets one (and at exit).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "tm_lib.h"
#include "util.h"

/* The QP's state, polled every 5 ms until it is want or ms passed. */
static int wait_state(struct ibv_qp *qp, int want, int ms)
{
	uint64_t end = dp_now_ms() + ms;
	int st;

	for (;;) {
		st = qp_state(qp);
		if (st == want || dp_now_ms() > end)
			return st;
		usleep(5000);
	}
}

/*
 * An error completion on the SRQ's CQ, for wr_id of the QP qp_num (an
 * error's opcode and flags mean nothing); one TAP line.
 */
static void expect_tm_error(uint64_t wr_id, int status, uint32_t qp_num,
			    const char *whose, const char *what)
{
	struct tm_wc g;
	int n = dp_poll_ex(tcq, 1, read_wc, &g);

	if (tap_ok(n == 1 && g.wr_id == wr_id && g.status == status &&
		   g.qp_num == qp_num, "%s: %s for %s wr_id %#llx", what,
		   ibv_wc_status_str(status), whose,
		   (unsigned long long)wr_id))
		return;
	if (n == 1)
		tm_diag("got", &g);
	else
		tap_diag("  no completion within %d ms", DP_WAIT_MS);
}

/*
 * A rendezvous whose RVH names rkey, which the sender's responder
 * refuses for a READ, on a fresh pair of its own (both QPs break):
 * MATCH, then REM_ACCESS_ERR for the tag, no FIN, both QPs in ERROR.
 */
static void rndv_bad_rkey(uint32_t rkey, int tslot, const char *what)
{
	struct tag t = { .tag = 0x9200 + tslot, .mask = ~0ull,
			 .id = 0x3c00 + tslot, .slot = tslot };
	struct dp_qp s = { 0 }, r = { 0 };
	uint8_t *fb = fbuf + NFIN * FIN_SLOT;
	struct ibv_sge one = slot_sge(t.slot, 0, SLOT);
	struct tm_want w;
	struct ibv_wc wc;
	struct rndv m;
	int n, st;

	qp_make(&s, NULL);
	qp_make_tm(&r, what);
	connect2(&s, &r);
	add_sg(&t, &one, 1, what);
	memset(fb, CANARY, FIN_SLOT);
	n = dp_post_recv1(s.qp, 0x7000, fb, FIN_SLOT, fmr->lkey);
	if (n)
		tap_bail("ibv_post_recv on the sender: %s", strerror(n));
	rndv_build(&m, 0, t.tag, 64, rndv_src(4, 1000), rkey, 1000);
	/* acknowledged before the READ's NAK, or flushed by it */
	if (rndv_post(&s, &m, what)) {
		n = dp_poll(s.scq, &wc, 1, DP_WAIT_MS);
		if (!tap_ok(n == 1 && wc.wr_id == m.send_id &&
			    (wc.status == IBV_WC_SUCCESS ||
			     wc.status == IBV_WC_WR_FLUSH_ERR),
			    "%s: the sender's SEND completes (SUCCESS, or flushed once its QP failed)",
			    what))
			tap_diag("  %d completions; wr_id %#llx %s", n,
				 (unsigned long long)wc.wr_id,
				 n == 1 ? ibv_wc_status_str(wc.status) : "-");
		else
			tap_diag("  the SEND: %s", ibv_wc_status_str(wc.status));
	}
	w = want_rndv_match(&r, &t, &m);
	expect_tm(&w, "%s: TM_RECV SUCCESS, MATCH only, byte_len 0, tag, app_ctx",
		  what);
	expect_tm_error(t.id, IBV_WC_REM_ACCESS_ERR, r.qp->qp_num,
			"the READ fails: the tag's", what);
	tap_ret(wait_state(r.qp, IBV_QPS_ERR, 2000), IBV_QPS_ERR,
		"%s: the receiving QP in ERROR", what);
	st = wait_state(s.qp, IBV_QPS_ERR, 2000);
	tap_ret(st, IBV_QPS_ERR,
		"%s: the sender's QP in ERROR within 2 s (its responder NAKed the READ)",
		what);
	/* the FIN's receive WQE is flushed, if anything */
	n = dp_poll(s.rcq, &wc, 1, 200);
	if (!tap_ok(n == 0 || (n == 1 && wc.wr_id == 0x7000 &&
			       wc.status == IBV_WC_WR_FLUSH_ERR),
		    "%s: no FIN at the sender (its receive WQE unused or flushed)",
		    what))
		tap_diag("  wr_id %#llx %s byte_len %u",
			 (unsigned long long)wc.wr_id,
			 ibv_wc_status_str(wc.status), wc.byte_len);
	expect_none("%s: nothing more on the SRQ's CQ", what);
	tap_ret(ibv_poll_cq(r.scq, 1, &wc) + ibv_poll_cq(r.rcq, 1, &wc), 0,
		"%s: the receiving QP's own CQs got nothing", what);
	tap_ok(!ibv_destroy_qp(s.qp) && !ibv_destroy_qp(r.qp) &&
	       !ibv_destroy_cq(s.scq) && !ibv_destroy_cq(s.rcq) &&
	       !ibv_destroy_cq(r.scq) && !ibv_destroy_cq(r.rcq),
	       "%s: destroy the pair and its CQs", what);
}

static void rndv_errors(void)
{
	rndv_bad_rkey(xmr->rkey ^ 0x100, 42,
		      "RNDV naming rkey ^ 0x100 (no MR)");
	rndv_bad_rkey(xmr_local->rkey, 43,
		      "RNDV naming an MR without REMOTE_READ");
}

/*
 * An unexpected message that never completes is not counted: on a pair of
 * its own (s5, and r5 on the main SRQ with a send queue of its own), the
 * only SRQ WQE holds 100 B and an EAGER of 2600 B (3 packets) for no tag
 * arrives.  Its first packet does not fit: LOC_LEN_ERR for that SRQ WQE,
 * r5 to ERROR, REM_INV_REQ_ERR at the sender, the rest never placed.  The
 * device's count stays where it was (the model's dev_cnt too): an ADD in
 * sync completes without TM_SYNC_REQ and s1's message for its tag
 * matches it.  Called with no tag live and no SRQ WQE posted.
 */
static void unexp_abort(void)
{
	const char *what = "unexpected EAGER failing mid-message";
	struct tag t = { .tag = 0x9300, .mask = ~0ull, .id = 0x3d01,
			 .slot = 44 };
	struct ibv_sge sge = slot_sge(WQE_SLOT, 0, 100);
	struct ibv_recv_wr rw = { .wr_id = wqe_id++, .sg_list = &sge,
				  .num_sge = 1 }, *rbad;
	struct dp_qp s5 = { 0 }, r5 = { 0 };
	struct dp_wc_want dw;
	struct ibv_wc wc;
	uint64_t sid;
	int r;

	qp_make(&s5, NULL);
	qp_make(&r5, srq);
	connect2(&s5, &r5);
	/* the premise: the counts equal, as the device has them */
	sync_op(SIG | SYNC, dev_cnt, "before the failing message: sync");

	memset(slot(WQE_SLOT), CANARY, SLOT);
	r = ibv_post_srq_recv(srq, &rw, &rbad);
	if (r)
		tap_bail("ibv_post_srq_recv on the TM SRQ: %s", strerror(r));
	build(IBV_TMH_EAGER, NO_TAG | 10, 2600);
	sid = send_id++;
	r = dp_post_send1(s5.qp, sid, IBV_WR_SEND, sbuf, 2600, smr->lkey, 0,
			  0, 0);
	tap_ret_errno(r, 0, "%s: post the 2600 B SEND (3 packets)", what);

	expect_tm_error(rw.wr_id, IBV_WC_LOC_LEN_ERR, r5.qp->qp_num,
			"the 100 B SRQ WQE's", what);
	dw = dp_want(sid, -1);
	dw.status = IBV_WC_REM_INV_REQ_ERR;
	dw.qp_num = s5.qp->qp_num;
	dp_expect(s5.scq, &dw, "%s: REM_INV_REQ_ERR at the sender", what);
	tap_ret(wait_state(r5.qp, IBV_QPS_ERR, 2000), IBV_QPS_ERR,
		"%s: the receiving QP in ERROR", what);
	tap_ret(wait_state(s5.qp, IBV_QPS_ERR, 2000), IBV_QPS_ERR,
		"%s: the sender's QP in ERROR", what);
	tap_ok(dp_verify_byte(slot(WQE_SLOT) + 100, SLOT - 100, CANARY) < 0,
	       "%s: nothing written past the SRQ WQE's 100 B", what);
	/* the receiver's flush has no receive WQE of its own to complete */
	expect_none("%s: nothing more on the SRQ's CQ", what);
	tap_ret(ibv_poll_cq(r5.scq, 1, &wc) + ibv_poll_cq(r5.rcq, 1, &wc), 0,
		"%s: the receiving QP's own CQs got nothing", what);

	/* not counted: dev_cnt stays, the counts are still equal */
	add(&t, SIG, 0, "after the failed message, not counted");
	eager(&s1, &r1, &t, t.tag, 200,
	      "after the failed message: the tag added in sync matches");
	del(t.handle, 0, 0, IBV_WC_TM_ERR,
	    "after the failed message: the tag is consumed");

	tap_ok(!ibv_destroy_qp(s5.qp) && !ibv_destroy_qp(r5.qp) &&
	       !ibv_destroy_cq(s5.scq) && !ibv_destroy_cq(s5.rcq) &&
	       !ibv_destroy_cq(r5.scq) && !ibv_destroy_cq(r5.rcq),
	       "%s: destroy the broken pair and its CQs", what);
}

/* ------------------------------------------------------------------ */
/* Cut-off messages and a failing WRITE with immediate, with faults    */
/* ------------------------------------------------------------------ */

/* RC BTH opcodes the fault rules name */
#define OP_SEND_LAST	0x02
#define OP_READ_REQ	0x0c

static bool fault_live;

/* "clear": no rule outlives its check, a bail-out included */
static void fault_clear(void)
{
	int r = dp_fault_write(dev.name, "clear");

	if (r)
		tap_diag("  clearing the fault rules: %s",
			 strerror(r));
	fault_live = false;
}

static void fault_atexit(void)
{
	if (fault_live)
		fault_clear();
}

/* one fault rule alone; one TAP line */
static bool fault_rule(const char *what, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static bool fault_rule(const char *what, const char *fmt, ...)
{
	static bool registered;
	char line[256];
	va_list ap;
	int r;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (!registered && !atexit(fault_atexit))
		registered = true;
	fault_live = true;
	dp_fault_write(dev.name, "clear");
	r = dp_fault_write(dev.name, line);
	if (r)
		fault_clear();
	return tap_ret_errno(r, 0, "%s: fault rule \"%s\" accepted", what,
			     line);
}

/* the live rule as a diagnostic (matched/fired counts) */
static void fault_diag(const char *what)
{
	char buf[512], *nl;

	if (dp_fault_read(dev.name, buf, sizeof(buf)))
		return;
	nl = strchr(buf, '\n');
	if (nl)
		*nl = 0;
	tap_diag("  %s: the fault rule reads \"%s\"", what, buf);
}

/*
 * A rendezvous READ left in the kernel SQ of a QP without a send queue
 * (on a fresh pair of its own): the receiver's READ requests are
 * dropped, so after the MATCH the READ (and the FIN fenced behind it)
 * stays.  RESET (or, destroy: ibv_destroy_qp) of the receiver completes
 * the tag's buffer with WR_FLUSH_ERR, once; no FIN reaches the sender.
 * Matched, so not counted.
 */
static void rndv_left(bool destroy, int tslot, const char *what)
{
	struct tag t = { .tag = 0x9400 + tslot, .mask = ~0ull,
			 .id = 0x3e00 + tslot, .slot = tslot };
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_RESET };
	struct ibv_sge one = slot_sge(t.slot, 0, SLOT);
	uint8_t *fb = fbuf + NFIN * FIN_SLOT;
	struct dp_qp s = { 0 }, r = { 0 };
	struct tm_want w;
	struct ibv_wc wc;
	struct rndv m;
	uint32_t rqpn;
	int n;

	qp_make(&s, NULL);
	qp_make_tm(&r, what);
	connect2(&s, &r);
	rqpn = r.qp->qp_num;
	if (!fault_rule(what, "drop qpn=%u opcode=%d", rqpn, OP_READ_REQ)) {
		pair_destroy(&s, &r, what);
		return;
	}
	add_sg(&t, &one, 1, what);
	memset(fb, CANARY, FIN_SLOT);
	n = dp_post_recv1(s.qp, 0x7200 + tslot, fb, FIN_SLOT, fmr->lkey);
	if (n)
		tap_bail("ibv_post_recv on the sender: %s", strerror(n));
	rndv_build(&m, 0, t.tag, 64, rndv_src(4, 1000), xmr->rkey, 1000);
	/* acknowledged before the receiver is touched */
	if (rndv_post(&s, &m, what))
		rndv_sent(&s, &m, what);
	w = want_rndv_match(&r, &t, &m);
	expect_tm(&w, "%s: TM_RECV SUCCESS, MATCH only, byte_len 0, tag, app_ctx (the READ request dropped)",
		  what);
	fault_diag(what);
	if (destroy) {
		tap_ret_errno(ibv_destroy_qp(r.qp), 0,
			      "%s: ibv_destroy_qp of the receiving QP, its READ in the kernel SQ",
			      what);
		r.qp = NULL;
	} else {
		tap_ret_errno(ibv_modify_qp(r.qp, &qa, IBV_QP_STATE), 0,
			      "%s: ibv_modify_qp of the receiving QP to RESET, its READ in the kernel SQ",
			      what);
	}
	expect_tm_error(t.id, IBV_WC_WR_FLUSH_ERR, rqpn,
			"the READ left: the tag's", what);
	expect_none("%s: exactly one completion: nothing more on the SRQ's CQ",
		    what);
	n = dp_poll_none(s.rcq, &wc, 100);
	if (!tap_ret(n, 0, "%s: no FIN at the sender (its receive WQE unused)",
		     what) && n > 0)
		tap_diag("  wr_id %#llx %s byte_len %u",
			 (unsigned long long)wc.wr_id,
			 ibv_wc_status_str(wc.status), wc.byte_len);
	fault_clear();
	del(t.handle, 0, 0, IBV_WC_TM_ERR,
	    destroy ? "READ left at destroy: the tag is consumed" :
		      "READ left at RESET: the tag is consumed");
	pair_destroy(&s, &r, what);
	if (!destroy)
		expect_none("%s: destroying the reset QP completes nothing again",
			    what);
}

/*
 * A matched 3-packet EAGER cut off: on a fresh pair (the receiver with a
 * send queue of its own) the sender's SEND_LAST is dropped, every time
 * it is sent again.  The MATCH comes at the first packet; RESET of the
 * receiver then completes the buffer with WR_FLUSH_ERR (the SRQ's, and
 * reported matched).  Matched, so not counted.
 */
static void eager_cut_off(void)
{
	const char *what = "3-packet EAGER cut off by RESET";
	struct tag t = { .tag = 0x9500, .mask = ~0ull, .id = 0x3e10,
			 .slot = 28 };
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_RESET };
	struct dp_qp s = { 0 }, r = { 0 };
	struct tm_want w;
	uint32_t rqpn;
	int rc;

	qp_make(&s, NULL);
	qp_make(&r, srq);
	connect2(&s, &r);
	rqpn = r.qp->qp_num;
	if (!fault_rule(what, "drop qpn=%u opcode=%d", s.qp->qp_num,
			OP_SEND_LAST)) {
		pair_destroy(&s, &r, what);
		return;
	}
	add(&t, SIG, 0, what);
	build(IBV_TMH_EAGER, t.tag, 2600);
	rc = dp_post_send1(s.qp, send_id++, IBV_WR_SEND, sbuf, 2600, smr->lkey,
			   0, 0, 0);
	tap_ret_errno(rc, 0,
		      "%s: post the 2600 B SEND (3 packets, its SEND_LAST dropped)",
		      what);
	w = want(t.id, IBV_WC_TM_RECV);
	w.byte_len = 0;
	w.flags = IBV_WC_TM_MATCH;
	w.ignore = sync_req();
	w.qp_num = rqpn;
	w.tm = true;
	w.tag = msg_tag;
	w.priv = msg_ctx;
	expect_tm(&w, "%s: TM_RECV SUCCESS, MATCH only, byte_len 0, tag, app_ctx",
		  what);
	expect_none("%s: no DATA_VALID (the last packet never arrives)", what);
	fault_diag(what);
	tap_ret_errno(ibv_modify_qp(r.qp, &qa, IBV_QP_STATE), 0,
		      "%s: ibv_modify_qp of the receiving QP to RESET mid-message",
		      what);
	expect_tm_error(t.id, IBV_WC_WR_FLUSH_ERR, rqpn,
			"the matched buffer: the tag's", what);
	expect_none("%s: nothing more on the SRQ's CQ", what);
	fault_clear();
	del(t.handle, 0, 0, IBV_WC_TM_ERR, "EAGER cut off: the tag is consumed");
	pair_destroy(&s, &r, what);
	expect_none("%s: destroying the reset QP completes nothing again",
		    what);
}

/*
 * A completed unexpected message, then a WRITE with immediate that takes
 * an SRQ WQE and fails (its rkey names no MR) on the same QP, on a fresh
 * pair of its own: the message stays counted (the failure must not take
 * it out of the counts again).  The counts, synced after the message,
 * stay equal: on the healthy r1 an ADD completes without TM_SYNC_REQ and
 * a message for it matches.
 */
static void write_imm_after_unexp(void)
{
	const char *what = "failing WRITE with immediate after an unexpected message";
	struct tag t = { .tag = 0x9700, .mask = ~0ull, .id = 0x3e30,
			 .slot = 30 };
	struct dp_qp s = { 0 }, r = { 0 };
	struct dp_wc_want dw;
	struct ibv_wc wc;
	struct tm_wc g;
	uint64_t wqe, sid;
	int rc, n;

	qp_make(&s, NULL);
	qp_make(&r, srq);
	connect2(&s, &r);
	unexpected(&s, &r, IBV_TMH_EAGER, NO_TAG | 11, 100,
		   "WRITE with immediate after it: an EAGER without a tag");
	sync_op(SIG | SYNC, dev_cnt,
		"WRITE with immediate after an unexpected message: sync");

	wqe = post_wqe();
	sid = send_id++;
	rc = dp_post_send1(s.qp, sid, IBV_WR_RDMA_WRITE_WITH_IMM, sbuf, 8,
			   smr->lkey, (uintptr_t)xbuf, xmr->rkey ^ 0x100, 0);
	tap_ret_errno(rc, 0,
		      "%s: post an 8 B RDMA WRITE with immediate, rkey ^ 0x100 (no MR)",
		      what);
	n = dp_poll_ex(tcq, 1, read_wc, &g);
	if (n == 1)
		tap_diag("  the SRQ WQE's completion: %s",
			 ibv_wc_status_str(g.status));
	if (!tap_ok(n == 1 && g.wr_id == wqe && g.status != IBV_WC_SUCCESS &&
		    g.qp_num == r.qp->qp_num,
		    "%s: an error completion for the SRQ WQE %#llx it took",
		    what, (unsigned long long)wqe)) {
		if (n == 1)
			tm_diag("got", &g);
		else
			tap_diag("  no completion within %d ms", DP_WAIT_MS);
	}
	dw = dp_want(sid, -1);
	dw.status = IBV_WC_REM_ACCESS_ERR;
	dw.qp_num = s.qp->qp_num;
	dp_expect(s.scq, &dw, "%s: REM_ACCESS_ERR at the sender", what);
	tap_ret(wait_state(r.qp, IBV_QPS_ERR, 2000), IBV_QPS_ERR,
		"%s: the receiving QP in ERROR", what);
	expect_none("%s: nothing more on the SRQ's CQ", what);
	n = ibv_poll_cq(r.scq, 1, &wc) + ibv_poll_cq(r.rcq, 1, &wc);
	tap_ret(n, 0, "%s: the receiving QP's own CQs got nothing", what);

	/* the counts equal, as the model has them */
	add(&t, SIG, 0, "after the failed WRITE with immediate, counts equal");
	eager(&s1, &r1, &t, t.tag, 200,
	      "after the failed WRITE with immediate: a tag added in sync matches");
	del(t.handle, 0, 0, IBV_WC_TM_ERR,
	    "after the failed WRITE with immediate: the tag is consumed");
	pair_destroy(&s, &r, what);
}

int main(void)
{
	tm_open(false);
	tm_pairs();

	rndv_errors();
	unexp_abort();
	rndv_left(false, 45, "RNDV READ left at RESET");
	rndv_left(true, 46, "RNDV READ left at destroy");
	eager_cut_off();
	write_imm_after_unexp();
	tm_close();
	return tap_done();
}
