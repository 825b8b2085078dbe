// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: tag matching SRQs, rendezvous: RNDV handed to software, the device's READ and FIN on a QP without a send queue (1 and 8 SGEs, rvh.len 0, 4 in flight), a buffer too short, a 2-packet RNDV, max_rd_atomic 0
 *
 * Tag matching of RNDV messages (the model and the setup: tm_lib.h):
 *  1. RNDV into a tag on a QP with a send queue of its own
 *     (max_send_wr > 0): RNDV_INCOMPLETE, the headers in the buffer;
 *  2. rendezvous offload, on an RC QP made on the SRQ with max_send_wr
 *     0 (as rdma-core's own Python test_tm_rndv makes it): no send
 *     queue for the process (post_send EINVAL, query_qp caps 0); a
 *     matched one-packet RNDV completes MATCH (byte_len 0), the device
 *     READs rvh.len bytes from the sender into the tag's SGEs, sends
 *     the FIN (TMH with opcode FIN, the RVH as sent) into a receive WQE
 *     of the sender, and completes DATA_VALID (byte_len rvh.len); one
 *     SGE, 8 SGEs, a buffer of exactly rvh.len, rvh.len 0; a buffer
 *     smaller than rvh.len: RNDV_INCOMPLETE as in 1, no FIN; a 2-packet
 *     RNDV (longer than max_rndv_hdr_size): unexpected, the tag not
 *     consumed; 4 rendezvous of 3000 B in flight (SGE splits): MATCHes,
 *     FINs and DATA_VALIDs each in order; matched ones not counted, an
 *     unexpected RNDV is; the QP's send CQ stays empty;
 *  3. RNDV on a QP without a send queue connected with max_rd_atomic 0
 *     (fresh pair): handed to software, RNDV_INCOMPLETE with
 *     MATCH|DATA_VALID, the whole message in the buffer, no FIN.
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tap.h"
#include "tm_lib.h"

/*
 * The rendezvous offload's pair: s4 an ordinary RC QP, r4 on the SRQ
 * without a send queue.  s4's FIN receive WQEs over fbuf are counted by
 * fin_posted / fin_taken (a FIFO: its RQ consumes them in order).
 */
static struct dp_qp s4, r4;
static unsigned int fin_posted, fin_taken;

/* A FIN receive WQE on s4 over the next FIN buffer (canary-filled). */
static void fin_post(void)
{
	uint8_t *b = fbuf + (fin_posted % NFIN) * FIN_SLOT;
	int r;

	if (fin_posted - fin_taken >= NFIN)
		tap_bail("FIN buffers: %u outstanding", fin_posted - fin_taken);
	memset(b, CANARY, FIN_SLOT);
	r = dp_post_recv1(s4.qp, 0x6000 + fin_posted, b, FIN_SLOT, fmr->lkey);
	if (r)
		tap_bail("ibv_post_recv on the sender: %s", strerror(r));
	fin_posted++;
}

/*
 * m's FIN in the oldest FIN receive WQE of s4: RECV of 32 B, the bytes
 * of m->fin, nothing after them; two TAP lines.
 */
static void fin_expect(const struct rndv *m, const char *what)
{
	uint8_t *b = fbuf + (fin_taken % NFIN) * FIN_SLOT;
	struct dp_wc_want w = dp_want(0x6000 + fin_taken, IBV_WC_RECV);
	const uint8_t *img = m->fin;
	long bad = -1;
	uint32_t k;

	fin_taken++;
	w.byte_len = FIN_LEN;
	w.wc_flags = 0;
	w.flags_ignore = IBV_WC_GRH;
	w.qp_num = s4.qp->qp_num;
	dp_expect(s4.rcq, &w,
		  "%s: the FIN comes to the sender: RECV of 32 B in its receive WQE",
		  what);
	for (k = 0; k < FIN_SLOT && bad < 0; k++)
		if (b[k] != (k < FIN_LEN ? img[k] : CANARY))
			bad = k;
	if (!tap_ok(bad < 0,
		    "%s: the FIN is the TMH with opcode FIN (reserved, app_ctx, tag %#llx as sent) and the RVH as sent, nothing after",
		    what, (unsigned long long)m->tag))
		tap_diag("  FIN byte %ld is %#x, want %#x", bad, b[bad],
			 bad < FIN_LEN ? img[bad] : CANARY);
}

static struct tm_want want_rndv_data(const struct dp_qp *to,
				     const struct tag *t,
				     const struct rndv *m)
{
	struct tm_want w = want(t->id, IBV_WC_TM_RECV);

	w.byte_len = m->rlen;
	w.flags = IBV_WC_TM_DATA_VALID;
	w.ignore = sync_req();
	w.qp_num = to->qp->qp_num;
	w.tm = true;		/* tag 0, priv 0 */
	return w;
}

/*
 * One rendezvous the device performs: a tag over sge[n], an RNDV of len
 * bytes naming rlen bytes of region r; MATCH, FIN, DATA_VALID, the data
 * in the SGEs, the tag consumed.  Ten TAP lines.
 */
static void rndv_read1(struct tag *t, struct ibv_sge *sge, int n,
		       uint32_t len, int r, uint32_t rlen, const char *what)
{
	struct tm_want w;
	struct rndv m;
	char d[160];

	add_sg(t, sge, n, what);
	fin_post();
	rndv_build(&m, 0, t->tag, len, rndv_src(r, rlen), xmr->rkey, rlen);
	if (rndv_post(&s4, &m, what))
		rndv_sent(&s4, &m, what);
	w = want_rndv_match(&r4, t, &m);
	expect_tm(&w, "%s: TM_RECV SUCCESS, MATCH only, byte_len 0, tag %#llx, app_ctx",
		  what, (unsigned long long)m.tag);
	fin_expect(&m, what);
	w = want_rndv_data(&r4, t, &m);
	expect_tm(&w, "%s: TM_RECV SUCCESS for the same wr_id, DATA_VALID only, byte_len %u, tag 0, priv 0",
		  what, rlen);
	check_scatter(t->slot, sge, n, m.src, rlen, what);
	snprintf(d, sizeof(d), "%s: the tag is consumed", what);
	del(t->handle, 0, 0, IBV_WC_TM_ERR, d);
}

/*
 * A matched RNDV the device leaves to software: RNDV_INCOMPLETE with
 * MATCH|DATA_VALID, the whole message in the buffer, no FIN (a FIN
 * receive WQE posted for it stays unused).  Eight TAP lines.
 */
static void rndv_sw1(struct tag *t, struct ibv_sge *sge, uint32_t len,
		     uint32_t rlen, const char *what)
{
	struct ibv_wc wc;
	struct tm_want w;
	struct rndv m;
	char d[160];

	add_sg(t, sge, 1, what);
	fin_post();
	rndv_build(&m, 0, t->tag, len, rndv_src(0, rlen), xmr->rkey, rlen);
	if (rndv_post(&s4, &m, what))
		rndv_sent(&s4, &m, what);
	w = want_matched(t, r4.qp->qp_num, len, m.tag, m.ctx);
	w.status = IBV_WC_TM_RNDV_INCOMPLETE;
	expect_tm(&w, "%s: TM_RECV RNDV_INCOMPLETE, MATCH|DATA_VALID, byte_len %u, tag, app_ctx",
		  what, len);
	check_scatter(t->slot, sge, 1, m.hdr, len, what);
	tap_ret(dp_poll_none(s4.rcq, &wc, 100), 0,
		"%s: no FIN: the sender's receive WQE stays unused", what);
	snprintf(d, sizeof(d), "%s: the tag is consumed", what);
	del(t->handle, 0, 0, IBV_WC_TM_ERR, d);
}

/*
 * Four rendezvous in flight on s4/r4: tags of 3000 B or more (one of
 * them 2 SGEs, one 3 SGEs), four RNDV messages sent back to back, each
 * naming 3000 B of its own region (3 READ responses at MTU 1024).
 */
static void rndv_inflight(void)
{
	const char *what = "4 rendezvous in flight";
	struct tag t[4];
	struct ibv_sge sge[4][3];
	int nsge[4] = { 1, 2, 1, 3 };
	uint32_t mlen[4] = { 64, 32, 48, 64 };
	struct tm_wc g[8], *mg[4] = { 0 }, *dg[4] = { 0 };
	int pos_m[4] = { 0 }, pos_d[4] = { 0 };
	struct tm_want w;
	struct rndv m[4];
	int i, n, nm = 0, nd = 0, posted = 0;
	bool order = true;
	char d[160];

	for (i = 0; i < 4; i++) {
		t[i] = (struct tag){ .tag = 0x9100 + i, .mask = ~0ull,
				     .id = 0x3b00 + i, .slot = 32 + i };
		sge[i][0] = slot_sge(t[i].slot, 0, SLOT);
	}
	sge[1][0] = slot_sge(t[1].slot, 0, 1100);
	sge[1][1] = slot_sge(t[1].slot, 1200, 2500);
	sge[2][0] = slot_sge(t[2].slot, 0, 3000);	/* exactly rvh.len */
	sge[3][0] = slot_sge(t[3].slot, 0, 1000);
	sge[3][1] = slot_sge(t[3].slot, 1024, 1000);
	sge[3][2] = slot_sge(t[3].slot, 2048, 1500);
	for (i = 0; i < 4; i++) {
		snprintf(d, sizeof(d), "%s: tag %d", what, i + 1);
		add_sg(&t[i], sge[i], nsge[i], d);
	}
	for (i = 0; i < 4; i++) {
		fin_post();
		rndv_build(&m[i], 128 * i, t[i].tag, mlen[i],
			   rndv_src(i, 3000), xmr->rkey, 3000);
	}
	for (i = 0; i < 4; i++)
		posted += rndv_post(&s4, &m[i], what);
	tap_ret(posted, 4, "%s: 4 SENDs posted back to back", what);
	for (i = 0; i < 4; i++)
		rndv_sent(&s4, &m[i], what);

	/* MATCH k before DATA_VALID k; among themselves each kind in order */
	n = dp_poll_ex(tcq, 8, read_wc, g);
	if (!tap_ret(n, 8, "%s: 8 completions on the SRQ's CQ", what))
		tap_diag("  got %d within %d ms", n, DP_WAIT_MS);
	for (i = 0; i < n; i++) {
		if ((g[i].flags & IBV_WC_TM_MATCH) && nm < 4) {
			pos_m[nm] = i;
			mg[nm++] = &g[i];
		} else if (!(g[i].flags & IBV_WC_TM_MATCH) && nd < 4) {
			pos_d[nd] = i;
			dg[nd++] = &g[i];
		} else {
			tm_diag("a fifth of its kind", &g[i]);
		}
	}
	for (i = 0; i < 4; i++) {
		w = want_rndv_match(&r4, &t[i], &m[i]);
		if (!tap_ok(i < nm && tm_match(mg[i], &w),
			    "%s: MATCH completion %d: wr_id %#llx, byte_len 0, tag %#llx, app_ctx",
			    what, i + 1, (unsigned long long)t[i].id,
			    (unsigned long long)t[i].tag)) {
			if (i < nm)
				tm_diag("got", mg[i]);
			want_diag(&w);
		}
	}
	for (i = 0; i < 4; i++) {
		w = want_rndv_data(&r4, &t[i], &m[i]);
		if (!tap_ok(i < nd && tm_match(dg[i], &w),
			    "%s: DATA_VALID completion %d: wr_id %#llx, byte_len 3000, tag 0",
			    what, i + 1, (unsigned long long)t[i].id)) {
			if (i < nd)
				tm_diag("got", dg[i]);
			want_diag(&w);
		}
	}
	for (i = 0; i < 4; i++)
		if (i >= nm || i >= nd || pos_m[i] > pos_d[i])
			order = false;
	tap_ok(order, "%s: each tag's MATCH comes before its DATA_VALID",
	       what);
	for (i = 0; i < 4; i++) {
		snprintf(d, sizeof(d), "%s: FIN %d", what, i + 1);
		fin_expect(&m[i], d);
	}
	for (i = 0; i < 4; i++) {
		snprintf(d, sizeof(d), "%s: tag %d's %d SGE%s", what, i + 1,
			 nsge[i], nsge[i] > 1 ? "s" : "");
		check_scatter(t[i].slot, sge[i], nsge[i], m[i].src, 3000, d);
	}
	for (i = 0; i < 4; i++) {
		snprintf(d, sizeof(d), "%s: tag %d is consumed", what, i + 1);
		del(t[i].handle, 0, 0, IBV_WC_TM_ERR, d);
	}
}

/*
 * RNDV into a matching tag on r1, a QP with a send queue of its own
 * (max_send_wr 32): that send queue is the process's, so rxe2 does not
 * READ through it (it does for QPs made without one: rndv_offload()).
 * The rendezvous goes to software: the completion is RNDV_INCOMPLETE and
 * the tag's buffer holds the message as sent (TMH, RVH, the rest).  The
 * RVH names 512 real bytes of sbuf (remote-readable): a READ made by
 * mistake would find them, and would show as a completion too many.
 */
static void rndv_match(void)
{
	const char *what = "RNDV into a tag";
	struct tag t = { .tag = 0x5151, .mask = ~0ull, .id = 0x3301,
			 .slot = 8 };
	const uint32_t len = 64;
	struct ibv_rvh rvh;
	struct tm_want w;

	add(&t, SIG, 0, what);
	build(IBV_TMH_RNDV, t.tag, len);
	rvh.va = htobe64((uintptr_t)sbuf + 2048);
	rvh.rkey = htobe32(smr->rkey);
	rvh.len = htobe32(512);
	memcpy(sbuf + TMH_LEN, &rvh, sizeof(rvh));
	send_built(&s1, len, what);
	w = want_matched(&t, r1.qp->qp_num, len, msg_tag, msg_ctx);
	w.status = IBV_WC_TM_RNDV_INCOMPLETE;
	w.ignore = 0;
	expect_tm(&w, "%s: TM_RECV RNDV_INCOMPLETE, MATCH|DATA_VALID, byte_len 64, tag, app_ctx",
		  what);
	check_data(t.slot, sbuf, len, "RNDV into a tag: TMH|RVH|rest");
	del(t.handle, 0, 0, IBV_WC_TM_ERR, "RNDV: the tag is consumed");
}

/*
 * The rendezvous offload on s4 (an ordinary RC QP) and r4 (on the SRQ,
 * made with max_send_wr 0): r4's send queue is the device's.
 */
static void rndv_offload(void)
{
	const char *what = "QP without a send queue";
	struct tag a = { .tag = 0x9001, .mask = ~0ull, .id = 0x3a01,
			 .slot = 36 };
	struct tag b = { .tag = 0x9002, .mask = ~0ull, .id = 0x3a02,
			 .slot = 37 };
	struct tag c = { .tag = 0x9003, .mask = ~0ull, .id = 0x3a03,
			 .slot = 38 };
	struct tag e = { .tag = 0x9004, .mask = ~0ull, .id = 0x3a04,
			 .slot = 39 };
	struct tag f = { .tag = 0x9005, .mask = ~0ull, .id = 0x3a05,
			 .slot = 40 };
	struct tag h = { .tag = 0x9006, .mask = ~0ull, .id = 0x3a06,
			 .slot = 41 };
	struct ibv_send_wr wr, *bad = NULL;
	struct ibv_qp_init_attr ia;
	struct ibv_sge sge[8], one;
	struct ibv_qp_attr qa;
	struct ibv_wc wc;
	int i, r, n;

	qp_make(&s4, NULL);
	qp_make_tm(&r4, what);
	connect2(&s4, &r4);

	memset(&qa, 0, sizeof(qa));
	memset(&ia, 0, sizeof(ia));
	r = ibv_query_qp(r4.qp, &qa, IBV_QP_CAP, &ia);
	if (!tap_ok(!r && !qa.cap.max_send_wr && !qa.cap.max_send_sge &&
		    !qa.cap.max_inline_data && !ia.cap.max_send_wr &&
		    !ia.cap.max_send_sge && !ia.cap.max_inline_data,
		    "%s: ibv_query_qp: max_send_wr, max_send_sge, max_inline_data 0",
		    what))
		tap_diag("  ret %d; attr cap %u/%u/%u, init_attr cap %u/%u/%u",
			 r, qa.cap.max_send_wr, qa.cap.max_send_sge,
			 qa.cap.max_inline_data, ia.cap.max_send_wr,
			 ia.cap.max_send_sge, ia.cap.max_inline_data);
	one = (struct ibv_sge){ .addr = (uintptr_t)sbuf, .length = 16,
				.lkey = smr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0xbad;
	wr.sg_list = &one;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	r = ibv_post_send(r4.qp, &wr, &bad);
	if (!tap_ok(r == EINVAL && bad == &wr,
		    "%s: ibv_post_send in RTS is EINVAL, *bad the WR", what))
		tap_diag("  got %d (%s), *bad %s", r, strerror(r),
			 bad == &wr ? "the WR" : bad ? "another" : "NULL");

	/* the device's rendezvous, one at a time */
	one = slot_sge(a.slot, 0, SLOT);
	rndv_read1(&a, &one, 1, 64, 0, 2000,
		   "RNDV READ of 2000 B into one SGE");
	/* 16 B gaps between the pieces: they must keep the canary */
	for (i = 0; i < 8; i++)
		sge[i] = slot_sge(e.slot, i * (300 + 16), 300);
	rndv_read1(&e, sge, 8, 32, 1, 2400,
		   "RNDV READ of 2400 B into 8 SGEs of 300 B");
	one = slot_sge(b.slot, 0, 1000);
	rndv_read1(&b, &one, 1, 32, 2, 1000,
		   "RNDV READ of 1000 B into a 1000 B buffer");
	one = slot_sge(c.slot, 0, SLOT);
	rndv_read1(&c, &one, 1, 48, 3, 0, "RNDV with rvh.len 0");

	/* what the device leaves to software */
	one = slot_sge(f.slot, 0, 999);
	rndv_sw1(&f, &one, 64, 1000,
		 "RNDV naming 1000 B, a 999 B buffer");
	/* longer than max_rndv_hdr_size: unexpected, the tag stays */
	add(&h, SIG, dev_cnt, "RNDV of 2 packets: its tag");
	unexpected(&s4, &r4, IBV_TMH_RNDV, h.tag, 1500,
		   "RNDV message of 1500 B (2 packets)");
	del(h.handle, SIG, dev_cnt, IBV_WC_SUCCESS,
	    "RNDV of 2 packets: the tag was not consumed");
	sync_op(SIG | SYNC, dev_cnt, "RNDV of 2 packets: sync");

	rndv_inflight();

	/* matched rendezvous were not counted, an unexpected one is */
	sync_op(SIG, 0, "rendezvous offload: matched RNDVs not counted");
	unexpected(&s4, &r4, IBV_TMH_RNDV, NO_TAG | 9, 64,
		   "RNDV without a tag on a QP without a send queue");
	sync_op(SIG | SYNC, dev_cnt, "rendezvous offload: sync");

	n = ibv_poll_cq(r4.scq, 1, &wc);
	if (!tap_ret(n, 0, "%s: its send CQ got nothing", what) && n > 0)
		tap_diag("  wr_id %#llx %s opcode %d",
			 (unsigned long long)wc.wr_id,
			 ibv_wc_status_str(wc.status), wc.opcode);
	tap_ret(ibv_poll_cq(r4.rcq, 1, &wc), 0,
		"%s: its own recv_cq got nothing", what);
	tap_ret(ibv_poll_cq(s4.rcq, 1, &wc), 0,
		"rendezvous offload: the sender got nothing but the FINs");
	expect_none("rendezvous offload: nothing more on the SRQ's CQ");
	tap_ok(!ibv_destroy_qp(s4.qp) && !ibv_destroy_qp(r4.qp) &&
	       !ibv_destroy_cq(s4.scq) && !ibv_destroy_cq(s4.rcq) &&
	       !ibv_destroy_cq(r4.scq) && !ibv_destroy_cq(r4.rcq),
	       "rendezvous offload: destroy the pair and its CQs");
	s4.qp = r4.qp = NULL;
}

/*
 * A QP without a send queue connected with max_rd_atomic 0 may not READ:
 * a matched one-packet RNDV is handed to software (RNDV_INCOMPLETE,
 * MATCH|DATA_VALID, the whole message in the buffer), no FIN.  dp_conn's
 * rd_atomic sets max_rd_atomic (RTS) and max_dest_rd_atomic (RTR) alike;
 * nothing READs from the receiver, so 0 for both.
 */
static void rndv_no_rd_atomic(void)
{
	const char *what = "RNDV on a QP without a send queue, max_rd_atomic 0";
	struct tag t = { .tag = 0x9600, .mask = ~0ull, .id = 0x3e20,
			 .slot = 29 };
	struct ibv_sge one = slot_sge(t.slot, 0, SLOT);
	uint8_t *fb = fbuf + NFIN * FIN_SLOT;
	struct dp_qp s = { 0 }, r = { 0 };
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr qa;
	struct dp_conn c;
	struct tm_want w;
	struct ibv_wc wc;
	struct rndv m;
	int rc, n;

	qp_make(&s, NULL);
	qp_make_tm(&r, what);
	dp_conn_default(&c);
	rc = dp_connect(s.qp, &dev, &dev.gid, r.qp->qp_num, &c);
	c.rd_atomic = 0;
	if (!rc)
		rc = dp_connect(r.qp, &dev, &dev.gid, s.qp->qp_num, &c);
	if (rc)
		tap_bail("connect (the receiver with rd_atomic 0): %s",
			 strerror(rc));
	memset(&qa, 0, sizeof(qa));
	memset(&ia, 0, sizeof(ia));
	rc = ibv_query_qp(r.qp, &qa, IBV_QP_STATE | IBV_QP_MAX_QP_RD_ATOMIC,
			  &ia);
	if (!tap_ok(!rc && qa.qp_state == IBV_QPS_RTS && !qa.max_rd_atomic,
		    "%s: ibv_query_qp: RTS, max_rd_atomic 0", what))
		tap_diag("  ret %d, state %d, max_rd_atomic %u", rc,
			 qa.qp_state, qa.max_rd_atomic);

	add_sg(&t, &one, 1, what);
	memset(fb, CANARY, FIN_SLOT);
	n = dp_post_recv1(s.qp, 0x7300, fb, FIN_SLOT, fmr->lkey);
	if (n)
		tap_bail("ibv_post_recv on the sender: %s", strerror(n));
	rndv_build(&m, 0, t.tag, 64, rndv_src(3, 1000), xmr->rkey, 1000);
	if (rndv_post(&s, &m, what))
		rndv_sent(&s, &m, what);
	w = want_matched(&t, r.qp->qp_num, 64, m.tag, m.ctx);
	w.status = IBV_WC_TM_RNDV_INCOMPLETE;
	expect_tm(&w, "%s: TM_RECV RNDV_INCOMPLETE, MATCH|DATA_VALID, byte_len 64, tag, app_ctx",
		  what);
	check_scatter(t.slot, &one, 1, m.hdr, 64, what);
	n = dp_poll_none(s.rcq, &wc, 100);
	if (!tap_ret(n, 0, "%s: no FIN: the sender's receive WQE stays unused",
		     what) && n > 0)
		tap_diag("  wr_id %#llx %s byte_len %u",
			 (unsigned long long)wc.wr_id,
			 ibv_wc_status_str(wc.status), wc.byte_len);
	expect_none("%s: nothing more on the SRQ's CQ (no DATA_VALID)", what);
	del(t.handle, 0, 0, IBV_WC_TM_ERR,
	    "RNDV with max_rd_atomic 0: the tag is consumed");
	n = ibv_poll_cq(r.scq, 1, &wc) + ibv_poll_cq(r.rcq, 1, &wc);
	tap_ret(n, 0, "%s: the receiving QP's own CQs got nothing", what);
	pair_destroy(&s, &r, what);
}

int main(void)
{
	tm_open(false);
	tm_pairs();

	rndv_match();
	rndv_offload();
	rndv_no_rd_atomic();
	tm_close();
	return tap_done();
}
