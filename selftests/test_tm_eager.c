// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: tag matching SRQs, EAGER messages: matched into 8 SGEs and over 3 packets, unexpected and NO_TAG messages, phase sync, masks and earliest first, two QPs, RNR, a CQ without TM info and a tag too short
 *
 * Tag matching of EAGER messages (the model and the setup: tm_lib.h):
 *  1. EAGER into a tag of 8 SGEs byte for byte, tag and app_ctx in the TM
 *     info, the tag consumed; a 3-packet EAGER completes twice (MATCH,
 *     then DATA_VALID);
 *  2. EAGER and RNDV without a tag: unexpected, whole in an SRQ WQE,
 *     counted by the device;
 *  3. phase sync: a tag added behind the device's count is not matched
 *     until a sync reaches the count at its ADD; a tag added in sync
 *     still matches once the SRQ is out of sync;
 *  4. NO_TAG, FIN, an unknown TMH opcode, messages shorter than a TMH:
 *     whole in SRQ WQEs, not counted, a live tag of their tag untouched;
 *  5. two QPs on the SRQ share its tags, completions name the QP;
 *  6. masks (both sides masked, as mlx5 matches: bits outside the mask
 *     do not count), earliest first;
 *  7. RNR: an unexpected message waits for an SRQ WQE, counted once;
 *  8. a TM SRQ whose CQ has no TM info (ibv_poll_cq); EAGER longer than
 *     its tag's buffer: LOC_LEN_ERR, the QP in ERROR, REM_INV_REQ_ERR at
 *     the sender.
 */
#include <errno.h>
#include <string.h>

#include "tap.h"
#include "tm_lib.h"
#include "util.h"

/*
 * A message outside tag matching: whole in an SRQ WQE with the given
 * completion opcode, and not counted (a SYNC without TM_SYNC, the counts
 * equal before, reports no TM_SYNC_REQ); five TAP lines.
 */
static void untagged(uint8_t op, uint64_t tag, uint32_t len, int opcode,
		     const char *what)
{
	uint64_t wqe = post_wqe();
	struct tm_want w = want(wqe, opcode);

	send_msg(&s1, op, tag, len, what);
	w.byte_len = len;
	w.qp_num = r1.qp->qp_num;
	expect_tm(&w, "%s: %s SUCCESS for SRQ WQE %#llx, byte_len %u, no TM flags",
		  what, opname(opcode), (unsigned long long)wqe, len);
	check_data(WQE_SLOT, sbuf, len, what);
	sync_op(SIG, 0, what);
}

/* EAGER of one packet into 8 SGEs, then of 3 packets into one. */
static void eager_tests(void)
{
	const char *what = "EAGER of 1016 B into 8 SGEs";
	struct tag t = { .tag = 0x0123456789abcdefull, .mask = ~0ull,
			 .id = 0x2001, .slot = 1 };
	struct tag m = { .tag = 0x77, .mask = ~0ull, .id = 0x2002, .slot = 2 };
	struct ibv_ops_wr op, *bad;
	struct ibv_sge sge[8];
	struct tm_want w;
	int i, r;

	/* pieces of 128 B with 16 B gaps: the gaps must keep the canary */
	memset(slot(t.slot), CANARY, SLOT);
	for (i = 0; i < 8; i++)
		sge[i] = slot_sge(t.slot, i * (128 + 16), 128);
	init_add(&op, &t, sge, 8, SIG, 0);
	r = post_ops(&op, &bad);
	t.handle = op.tm.handle;
	if (tap_ret_errno(r, 0, "%s: ADD tag %#llx with 8 SGEs", what,
			  (unsigned long long)t.tag))
		expect_op(op.wr_id, IBV_WC_TM_ADD, IBV_WC_SUCCESS, what);
	else
		tap_ok(false, "%s: TM_ADD completion (ADD refused)", what);
	send_msg(&s1, IBV_TMH_EAGER, t.tag, 1016, what);
	w = want_matched(&t, r1.qp->qp_num, 1000, msg_tag, msg_ctx);
	w.ignore = 0;
	expect_tm(&w, "%s: TM_RECV SUCCESS, MATCH|DATA_VALID, byte_len 1000, tag and app_ctx in host order",
		  what);
	check_scatter(t.slot, sge, 8, sbuf + TMH_LEN, 1000, what);
	del(t.handle, 0, 0, IBV_WC_TM_ERR, "EAGER: the matched tag is consumed");

	what = "EAGER of 2600 B (3 packets)";
	add(&m, SIG, 0, what);
	send_msg(&s1, IBV_TMH_EAGER, m.tag, 2600, what);
	w = want(m.id, IBV_WC_TM_RECV);
	w.byte_len = 0;
	w.flags = IBV_WC_TM_MATCH;
	w.qp_num = r1.qp->qp_num;
	w.tm = true;
	w.tag = msg_tag;
	w.priv = msg_ctx;
	expect_tm(&w, "%s: first TM_RECV: MATCH without DATA_VALID, byte_len 0, tag, app_ctx",
		  what);
	w.byte_len = 2600 - TMH_LEN;
	w.flags = IBV_WC_TM_DATA_VALID;
	w.tm = false;
	expect_tm(&w, "%s: second TM_RECV: DATA_VALID without MATCH, byte_len 2584",
		  what);
	check_data(m.slot, sbuf + TMH_LEN, 2600 - TMH_LEN, what);
	del(m.handle, 0, 0, IBV_WC_TM_ERR, "3-packet EAGER: the tag is consumed");
}

static void unexpected_msgs(void)
{
	struct tag l = { .tag = 0x4000, .mask = ~0ull, .id = 0x3001, .slot = 3 };

	unexpected(&s1, &r1, IBV_TMH_EAGER, NO_TAG | 1, 300,
		   "EAGER without a tag");
	sync_op(SIG, 0, "after an unexpected message, without TM_SYNC");
	unexpected(&s1, &r1, IBV_TMH_RNDV, NO_TAG | 2, 64,
		   "RNDV without a tag");
	add(&l, SIG | SYNC, dev_cnt, "ADD with TM_SYNC to the device's count");
	unexpected(&s1, &r1, IBV_TMH_EAGER, NO_TAG | 3, 100,
		   "EAGER without a tag, again");
	/* not only SYNC: any op carries the count */
	del(l.handle, SIG | SYNC, dev_cnt, IBV_WC_SUCCESS,
	    "DEL with TM_SYNC to the device's count");
	sync_op(SIG | SYNC, dev_cnt + 1,
		"software count one above the device's");
	sync_op(SIG | SYNC, dev_cnt, "software count back to the device's");
}

static void phase(void)
{
	struct tag a = { .tag = 0x4100, .mask = ~0ull, .id = 0x3101, .slot = 4 };
	struct tag b = { .tag = 0x4200, .mask = ~0ull, .id = 0x3102, .slot = 5 };
	struct tag c = { .tag = 0x4300, .mask = ~0ull, .id = 0x3103, .slot = 6 };

	/* added one behind the device: not eligible until synced */
	unexpected(&s1, &r1, IBV_TMH_EAGER, NO_TAG | 4, 100,
		   "phase: a message without a tag");
	add(&a, SIG | SYNC, dev_cnt - 1,
	    "phase: ADD with TM_SYNC one behind the device");
	unexpected(&s1, &r1, IBV_TMH_EAGER, a.tag, 100,
		   "phase: a message for the tag added behind");
	sync_op(SIG | SYNC, dev_cnt, "phase: sync to the device's count");
	eager(&s1, &r1, &a, a.tag, 200, "phase: once synced, the tag matches");

	/* eligible once synced to the count at its ADD, though still behind */
	unexpected(&s1, &r1, IBV_TMH_EAGER, NO_TAG | 5, 100,
		   "phase: another message without a tag");
	add(&b, SIG | SYNC, dev_cnt - 1,
	    "phase: ADD with TM_SYNC one behind the device, again");
	unexpected(&s1, &r1, IBV_TMH_EAGER, b.tag, 100,
		   "phase: a message for the second tag added behind");
	sync_op(SIG | SYNC, dev_cnt - 1,
		"phase: sync to the count at the ADD (one behind the device)");
	eager(&s1, &r1, &b, b.tag, 200,
	      "phase: synced to the count at its ADD, the tag matches");
	sync_op(SIG | SYNC, dev_cnt, "phase: sync to the device's count");

	/* added in sync: matches after an unexpected message too */
	add(&c, SIG, 0, "phase: ADD in sync");
	unexpected(&s1, &r1, IBV_TMH_EAGER, NO_TAG | 6, 100,
		   "phase: a message without a tag after the ADD");
	eager(&s1, &r1, &c, c.tag, 200,
	      "phase: the tag added in sync matches out of sync");
	sync_op(SIG | SYNC, dev_cnt, "phase: sync to the device's count");
}

static void not_tagged(void)
{
	struct tag live = { .tag = 0x4242, .mask = ~0ull, .id = 0x3201,
			    .slot = 7 };

	/* their TMH tag field names a live tag: it must stay untouched */
	add(&live, SIG, 0, "untagged messages: a live tag of their tag");
	untagged(IBV_TMH_NO_TAG, live.tag, 200, IBV_WC_TM_NO_TAG,
		 "NO_TAG message");
	untagged(IBV_TMH_FIN, live.tag, 100, IBV_WC_RECV, "FIN message");
	untagged(7, live.tag, 100, IBV_WC_RECV, "TMH opcode 7");
	untagged(IBV_TMH_EAGER, live.tag, 10, IBV_WC_RECV,
		 "10 B message (an EAGER TMH cut short)");
	untagged(IBV_TMH_EAGER, live.tag, 0, IBV_WC_RECV, "0 B message");
	del(live.handle, SIG, 0, IBV_WC_SUCCESS,
	    "untagged messages: the tag of their tag still live");
}

static void two_qps(void)
{
	struct tag x = { .tag = 0x6001, .mask = ~0ull, .id = 0x3401, .slot = 9 };
	struct tag y = { .tag = 0x6002, .mask = ~0ull, .id = 0x3402,
			 .slot = 10 };

	add(&x, SIG, 0, "two QPs: tag 1");
	add(&y, SIG, 0, "two QPs: tag 2");
	eager(&s2, &r2, &x, x.tag, 500, "two QPs: QP 2's message for tag 1");
	eager(&s1, &r1, &y, y.tag, 500, "two QPs: QP 1's message for tag 2");
	unexpected(&s2, &r2, IBV_TMH_EAGER, NO_TAG | 7, 100,
		   "two QPs: QP 2's message without a tag");
	sync_op(SIG | SYNC, dev_cnt, "two QPs: sync");
}

static void masks(void)
{
	struct tag m = { .tag = 0x1234, .mask = 0xffff, .id = 0x3601,
			 .slot = 21 };
	struct tag e = { .tag = 0xabcd1234, .mask = ~0ull, .id = 0x3602,
			 .slot = 22 };
	struct tag o = { .tag = 0x11234, .mask = 0xffff, .id = 0x3603,
			 .slot = 23 };
	struct tag a = { .tag = 0x5000, .mask = ~0ull, .id = 0x3604,
			 .slot = 24 };
	struct tag b = { .tag = 0x5000, .mask = ~0ull, .id = 0x3605,
			 .slot = 25 };

	add(&m, SIG, 0, "mask: tag 0x1234 mask 0xffff");
	add(&e, SIG, 0, "mask: tag 0xabcd1234, added after it");
	add(&o, SIG, 0, "mask: tag 0x11234 mask 0xffff (a bit outside)");
	add(&a, SIG, 0, "earliest first: tag 0x5000");
	add(&b, SIG, 0, "earliest first: tag 0x5000 again");
	eager(&s1, &r1, &m, 0xabcd1234, 300,
	      "mask: 0xabcd1234 matches 0x1234/0xffff, the earlier tag");
	eager(&s1, &r1, &e, 0xabcd1234, 300,
	      "mask: the next 0xabcd1234 matches the exact tag");
	/* both sides masked, as mlx5 matches for UCX */
	eager(&s1, &r1, &o, 0x21234, 100,
	      "mask: bits outside the mask do not count: 0x21234 matches 0x11234/0xffff");
	unexpected(&s1, &r1, IBV_TMH_EAGER, 0x11235, 100,
		   "mask: 0x11235 differs inside the mask: unexpected");
	eager(&s1, &r1, &a, 0x5000, 300,
	      "earliest first: the first of two equal tags");
	eager(&s1, &r1, &b, 0x5000, 300, "earliest first: then the second");
	del(o.handle, SIG, dev_cnt, IBV_WC_TM_ERR,
	    "mask: the tag with a bit outside its mask was consumed");
	sync_op(SIG | SYNC, dev_cnt, "mask: sync");
}

/* rnr_retry 7 (dp_conn_default): the sender waits for an SRQ WQE. */
static void rnr(void)
{
	const char *what = "RNR: unexpected message, no SRQ WQE";
	struct dp_wc_want w = dp_want(send_id, IBV_WC_SEND);
	struct ibv_wc wc;
	uint64_t wqe;
	int r;

	build(IBV_TMH_EAGER, NO_TAG | 8, 100);
	r = dp_post_send1(s1.qp, send_id++, IBV_WR_SEND, sbuf, 100,
			  smr->lkey, 0, 0, 0);
	tap_ret_errno(r, 0, "%s: post the SEND", what);
	tap_ret(dp_poll_none(s1.scq, &wc, 100), 0,
		"%s: the sender waits (RNR NAKs, rnr_retry 7)", what);
	expect_none("%s: nothing on the SRQ's CQ", what);
	wqe = post_wqe();
	w.qp_num = s1.qp->qp_num;
	dp_expect(s1.scq, &w, "%s: an SRQ WQE posted, the SEND completes",
		  what);
	expect_unexp(&r1, wqe, 100, what);
	sync_op(SIG | SYNC, dev_cnt, "RNR: counted once: sync");
}

static void add2(struct ibv_srq *s, struct ibv_cq *cq, struct tag *t,
		 uint32_t len, const char *what)
{
	struct ibv_sge sge = slot_sge(t->slot, 0, len);
	struct ibv_ops_wr op, *bad = NULL;
	struct dp_wc_want w;
	int r;

	memset(slot(t->slot), CANARY, SLOT);
	init_add(&op, t, &sge, 1, SIG, 0);
	r = ibv_post_srq_ops(s, &op, &bad);
	tap_ret_errno(r, 0, "%s: ADD tag %#llx (%u B)", what,
		      (unsigned long long)t->tag, len);
	w = dp_want(op.wr_id, IBV_WC_TM_ADD);
	w.wc_flags = 0;
	w.flags_ignore = IBV_WC_GRH;
	dp_expect(cq, &w, "%s: TM_ADD SUCCESS through ibv_poll_cq", what);
}

/*
 * A TM SRQ whose CQ has no TM info, polled with ibv_poll_cq, on a pair of
 * its own; last, eager data longer than the tag's buffer breaks the pair.
 */
static void plain_cq(void)
{
	const char *what = "CQ without TM info";
	struct ibv_cq_init_attr_ex ca = { .cqe = 64,
					  .wc_flags = IBV_WC_STANDARD_FLAGS };
	struct tag t = { .tag = 0x8001, .mask = ~0ull, .id = 0x3701,
			 .slot = 26 };
	struct tag l = { .tag = 0x8002, .mask = ~0ull, .id = 0x3702,
			 .slot = 27 };
	struct dp_qp s3 = { 0 }, r3 = { 0 };
	struct ibv_cq_ex *cx;
	struct ibv_cq *cq;
	struct dp_wc_want w;
	struct ibv_srq *s;
	struct ibv_wc wc;
	uint64_t sid;
	int r;

	cx = ibv_create_cq_ex(dev.ctx, &ca);
	if (!cx)
		tap_bail("ibv_create_cq_ex: %s", strerror(errno));
	cq = ibv_cq_ex_to_cq(cx);
	s = tm_srq(cq, TM_MASK, 4, 4);
	if (!tap_ok(s != NULL, "%s: a TM SRQ on it", what))
		tap_bail("TM SRQ: %s", strerror(errno));
	qp_make(&s3, NULL);
	qp_make(&r3, s);
	connect2(&s3, &r3);

	add2(s, cq, &t, SLOT, what);
	send_msg(&s3, IBV_TMH_EAGER, t.tag, 500, what);
	w = dp_want(t.id, IBV_WC_TM_RECV);
	w.byte_len = 500 - TMH_LEN;
	w.wc_flags = IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID;
	w.flags_ignore = IBV_WC_GRH;
	w.qp_num = r3.qp->qp_num;
	dp_expect(cq, &w, "%s: TM_RECV SUCCESS, MATCH|DATA_VALID, byte_len 484",
		  what);
	check_data(t.slot, sbuf + TMH_LEN, 500 - TMH_LEN, what);

	what = "EAGER of 200 B into a 64 B tag";
	add2(s, cq, &l, 64, what);
	build(IBV_TMH_EAGER, l.tag, TMH_LEN + 200);
	sid = send_id++;
	r = dp_post_send1(s3.qp, sid, IBV_WR_SEND, sbuf, TMH_LEN + 200,
			  smr->lkey, 0, 0, 0);
	tap_ret_errno(r, 0, "%s: post the SEND", what);
	w = dp_want(l.id, -1);
	w.status = IBV_WC_LOC_LEN_ERR;
	w.qp_num = r3.qp->qp_num;
	dp_expect(cq, &w, "%s: LOC_LEN_ERR for the tag's recv_wr_id", what);
	w = dp_want(sid, -1);
	w.status = IBV_WC_REM_INV_REQ_ERR;
	w.qp_num = s3.qp->qp_num;
	dp_expect(s3.scq, &w, "%s: REM_INV_REQ_ERR at the sender", what);
	tap_ret(qp_state(r3.qp), IBV_QPS_ERR, "%s: the receiving QP in ERROR",
		what);
	tap_ok(dp_verify_byte(slot(l.slot) + 64, SLOT - 64, CANARY) < 0,
	       "%s: nothing written past the 64 B", what);

	tap_ret(ibv_poll_cq(r3.rcq, 1, &wc), 0,
		"%s: the QP's own recv_cq got nothing", "TM SRQ 2");
	tap_ok(!ibv_destroy_qp(s3.qp) && !ibv_destroy_qp(r3.qp),
	       "TM SRQ 2: destroy its QPs");
	tap_ret_errno(ibv_destroy_srq(s), 0, "TM SRQ 2: destroy it");
	tap_ok(!ibv_destroy_cq(s3.scq) && !ibv_destroy_cq(s3.rcq) &&
	       !ibv_destroy_cq(r3.scq) && !ibv_destroy_cq(r3.rcq),
	       "TM SRQ 2: destroy the QPs' CQs");
	tap_ret_errno(ibv_destroy_cq(cq), 0, "TM SRQ 2: destroy its CQ");
}

int main(void)
{
	tm_open(false);
	tm_pairs();

	eager_tests();
	unexpected_msgs();
	phase();
	not_tagged();
	two_qps();
	masks();
	rnr();
	plain_cq();
	tm_close();
	return tap_done();
}
