// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: loss recovery that stays go-back-N on the wire, driven by fault rules: early packets kept, one NAK and one rewind, READ re-requests, tail-loss probes, and the counters that tell which
 *
 * Loss recovery that stays go-back-N on the wire (rxe/rxe2_reorder.c,
 * rxe2_req_skip(), rxe2_comp_reread(), the tail-loss probe), driven by
 * fault rules (configfs) on an RC pair of one device at MTU 256, where
 * an 8 KiB WRITE or READ is 32 packets with AckReq on the 16th and the
 * 32nd.  Every case checks the completion, the data byte for byte and
 * the port counters that tell how the loss was recovered:
 *
 *  - the third packet of a 1 KiB WRITE overtaken by the last: the
 *    responder keeps the early one (out_of_order_held +1), sends no NAK
 *    although it asks for an ACK, nothing is sent twice;
 *  - a WRITE packet lost in the middle: the packets behind it are kept,
 *    the third draws the sequence NAK (one), the requester goes back
 *    once, passes over what the ACK after the gap covers, and no ACK
 *    timeout passes; the same loss again on that pair, whose responder
 *    is now known to keep: the lost packet alone is resent (no
 *    duplicate at the responder);
 *  - the third response of a 1 KiB READ overtaken by the last: kept,
 *    the READ is not asked again;
 *  - a READ response lost in the middle: the READ is asked again for
 *    that response only (read_rerequests +1, one duplicate READ at the
 *    responder), no go-back-N and no timeout;
 *  - the last packet of a WRITE lost, with the ACK timeout at 1 s: a
 *    tail-loss probe resends it long before (tail_probes +1, no ACK
 *    timeout);
 *  - two READ gaps, the second at the READ's last response: once the
 *    answer to the first re-read is taken, the rest is asked for at once
 *    (read_rerequests +2, no probe), also with timeout 0 (no timer at
 *    all), which used to wait forever;
 *  - a SEND kept behind a lost WRITE packet, answered with an RNR NAK
 *    when its turn comes (a responder known to keep): no sequence NAK
 *    for the same PSN follows (out_of_seq_request +1, the WRITE's).
 * TAP output.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp.h"
#include "tap.h"
#include "util.h"

#define OP_WRITE_MIDDLE	0x07
#define OP_WRITE_LAST	0x08
#define OP_READ_MIDDLE	0x0e
#define OP_READ_LAST	0x0f
#define LEN		8192

static struct dp_dev dev;
static uint8_t *abuf, *bbuf;
static struct ibv_mr *amr, *bmr;

/* the counters a case looks at, read before and after it */
static const char *const names[] = {
	"out_of_order_held", "out_of_seq_request", "duplicate_request",
	"rcvd_seq_err", "completer_retry_err", "ack_timeouts",
	"read_rerequests", "tail_probes", "resend_skipped", "send_rnr_err",
	"rcvd_rnr_err",
};
#define NCTR (sizeof(names) / sizeof(names[0]))

struct snap {
	long v[NCTR];
};

static void snap(struct snap *s)
{
	size_t i;

	for (i = 0; i < NCTR; i++)
		s->v[i] = dp_hw_counter(dev.name, names[i]);
}

/* how much counter name moved since s */
static long moved(const struct snap *s, const char *name)
{
	size_t i;

	for (i = 0; i < NCTR; i++)
		if (!strcmp(names[i], name))
			return dp_hw_counter(dev.name, name) - s->v[i];
	tap_bail("no counter %s in the list", name);
	return 0;
}

static void diag_all(const char *what, const struct snap *s)
{
	char line[512];
	size_t i, n = 0;

	for (i = 0; i < NCTR; i++)
		n += snprintf(line + n, sizeof(line) - n, " %s +%ld", names[i],
			      dp_hw_counter(dev.name, names[i]) - s->v[i]);
	tap_diag("%s:%s", what, line);
}

static bool rule(const char *fmt, unsigned int qpn, int op)
{
	char line[256];

	snprintf(line, sizeof(line), fmt, qpn, op);
	dp_fault_write(dev.name, "clear");
	return tap_ret(dp_fault_write(dev.name, line), 0, "rule \"%s\" accepted",
		       line);
}

/* one more rule, next to those in place */
static bool rule_too(const char *fmt, unsigned int qpn, int op)
{
	char line[256];

	snprintf(line, sizeof(line), fmt, qpn, op);
	return tap_ret(dp_fault_write(dev.name, line), 0, "rule \"%s\" accepted",
		       line);
}

static bool pair(struct dp_qp *a, struct dp_qp *b, uint8_t timeout)
{
	struct dp_conn c;

	dp_conn_default(&c);
	c.mtu = IBV_MTU_256;
	c.timeout = timeout;
	return tap_ret(dp_pair(&dev, &dev, IBV_QPT_RC, &dp_small_cap, &c, a,
			       b), 0, "RC pair on %s, MTU 256", dev.name);
}

static void unpair(struct dp_qp *a, struct dp_qp *b)
{
	dp_fault_write(dev.name, "clear");
	dp_qp_free(a);
	dp_qp_free(b);
}

/* an RDMA op of len bytes of pattern seed, completed and checked */
static void rdma(struct dp_qp *a, enum ibv_wr_opcode op, uint32_t len,
		 uint32_t seed, const char *what)
{
	struct dp_wc_want w = dp_want(seed, op == IBV_WR_RDMA_READ ?
				      IBV_WC_RDMA_READ : IBV_WC_RDMA_WRITE);
	/* a READ brings bbuf into abuf, a WRITE takes abuf into bbuf */
	uint8_t *src = op == IBV_WR_RDMA_READ ? bbuf : abuf;
	uint8_t *dst = op == IBV_WR_RDMA_READ ? abuf : bbuf;

	dp_fill(src, len, seed);
	memset(dst, 0, len);
	if (dp_post_send1(a->qp, seed, op, abuf, len, amr->lkey,
			  (uintptr_t)bbuf, bmr->rkey, 0)) {
		tap_ok(false, "%s: post", what);
		return;
	}
	dp_expect(a->scq, &w, "%s: wr %u completes", what, seed);
	tap_ok(dp_verify(dst, len, seed) < 0, "%s: %u bytes exact", what, len);
}

static void write_overtaken(void)
{
	const char *what = "WRITE packet 3 of 4 overtaken by packet 4";
	struct dp_qp a, b;
	struct snap s;

	if (!pair(&a, &b, 14))
		return;
	snap(&s);
	/*
	 * 1 KiB: FIRST, MIDDLE, MIDDLE, LAST.  The second MIDDLE waits
	 * for the LAST, which asks for an ACK; one packet kept at the gap
	 * is no loss, even one that asks for an ACK.
	 */
	if (rule("reorder qpn=%u opcode=%d every=2 count=1", a.qp->qp_num,
		 OP_WRITE_MIDDLE)) {
		rdma(&a, IBV_WR_RDMA_WRITE, 1024, 11, what);
		diag_all(what, &s);
		tap_ret(moved(&s, "out_of_order_held"), 1,
			"%s: out_of_order_held +1", what);
		tap_ret(moved(&s, "out_of_seq_request"), 0,
			"%s: no sequence NAK", what);
		tap_ret(moved(&s, "duplicate_request"), 0,
			"%s: nothing sent twice", what);
		tap_ret(moved(&s, "completer_retry_err"), 0,
			"%s: no go-back-N", what);
	}
	unpair(&a, &b);
}

static void write_lost(void)
{
	const char *what = "WRITE packet 5 of 32 lost";
	struct dp_qp a, b;
	struct snap s;

	if (!pair(&a, &b, 14))
		return;
	snap(&s);
	if (rule("drop qpn=%u opcode=%d every=4 count=1", a.qp->qp_num,
		 OP_WRITE_MIDDLE)) {
		rdma(&a, IBV_WR_RDMA_WRITE, LEN, 12, what);
		diag_all(what, &s);
		tap_ok(moved(&s, "out_of_order_held") >= 3,
		       "%s: the packets behind it kept (%ld)", what,
		       moved(&s, "out_of_order_held"));
		tap_ret(moved(&s, "out_of_seq_request"), 1,
			"%s: one sequence NAK", what);
		tap_ret(moved(&s, "rcvd_seq_err"), 1,
			"%s: the requester got it", what);
		tap_ret(moved(&s, "completer_retry_err"), 1,
			"%s: one go-back-N", what);
		tap_ret(moved(&s, "ack_timeouts"), 0, "%s: no ACK timeout",
			what);
		tap_ok(moved(&s, "resend_skipped") >= 1,
		       "%s: the requester passed over what the ACK covered",
		       what);
	}

	/* now known to keep what comes early: the gap alone is resent */
	what = "again, a responder known to keep";
	snap(&s);
	if (rule("drop qpn=%u opcode=%d every=4 count=1", a.qp->qp_num,
		 OP_WRITE_MIDDLE)) {
		rdma(&a, IBV_WR_RDMA_WRITE, LEN, 18, what);
		diag_all(what, &s);
		tap_ret(moved(&s, "out_of_seq_request"), 1,
			"%s: one sequence NAK", what);
		tap_ret(moved(&s, "duplicate_request"), 0,
			"%s: only the lost packet resent", what);
		tap_ret(moved(&s, "ack_timeouts"), 0, "%s: no ACK timeout",
			what);
	}
	unpair(&a, &b);
}

static void read_overtaken(void)
{
	const char *what = "READ response 3 of 4 overtaken by response 4";
	struct dp_qp a, b;
	struct snap s;

	if (!pair(&a, &b, 14))
		return;
	snap(&s);
	if (rule("reorder qpn=%u opcode=%d every=2 count=1", b.qp->qp_num,
		 OP_READ_MIDDLE)) {
		rdma(&a, IBV_WR_RDMA_READ, 1024, 13, what);
		diag_all(what, &s);
		tap_ret(moved(&s, "out_of_order_held"), 1,
			"%s: out_of_order_held +1", what);
		tap_ret(moved(&s, "read_rerequests"), 0,
			"%s: the READ not asked again", what);
		tap_ret(moved(&s, "duplicate_request"), 0,
			"%s: no duplicate READ", what);
		tap_ret(moved(&s, "completer_retry_err"), 0,
			"%s: no go-back-N", what);
	}
	unpair(&a, &b);
}

static void read_lost(void)
{
	const char *what = "READ response 5 of 32 lost";
	struct dp_qp a, b;
	struct snap s;

	if (!pair(&a, &b, 14))
		return;
	snap(&s);
	if (rule("drop qpn=%u opcode=%d every=4 count=1", b.qp->qp_num,
		 OP_READ_MIDDLE)) {
		rdma(&a, IBV_WR_RDMA_READ, LEN, 14, what);
		diag_all(what, &s);
		tap_ret(moved(&s, "read_rerequests"), 1,
			"%s: the READ asked again once, for a part", what);
		tap_ret(moved(&s, "duplicate_request"), 1,
			"%s: one duplicate READ at the responder", what);
		tap_ret(moved(&s, "completer_retry_err"), 0,
			"%s: no go-back-N", what);
		tap_ret(moved(&s, "ack_timeouts"), 0, "%s: no ACK timeout",
			what);
	}
	unpair(&a, &b);
}

static void tail_lost(void)
{
	const char *what = "the last packet of a WRITE lost, timeout 1 s";
	struct dp_qp a, b;
	struct snap s;

	/* 4.096 us * 2^18: about 1.07 s */
	if (!pair(&a, &b, 18))
		return;
	/* round trips measured first: a probe needs them */
	rdma(&a, IBV_WR_RDMA_WRITE, 1024, 15, "before the loss");
	rdma(&a, IBV_WR_RDMA_WRITE, 1024, 16, "before the loss");
	snap(&s);
	if (rule("drop qpn=%u opcode=%d count=1", a.qp->qp_num,
		 OP_WRITE_LAST)) {
		uint64_t t0 = dp_now_ms(), ms;

		rdma(&a, IBV_WR_RDMA_WRITE, 1024, 17, what);
		/* before diag_all(): its sysfs reads take a while here */
		ms = dp_now_ms() - t0;
		diag_all(what, &s);
		tap_diag("%s: completed in %llu ms", what,
			 (unsigned long long)ms);
		tap_ok(moved(&s, "tail_probes") >= 1, "%s: tail_probes +%ld",
		       what, moved(&s, "tail_probes"));
		tap_ret(moved(&s, "ack_timeouts"), 0, "%s: no ACK timeout",
			what);
	}
	unpair(&a, &b);
}

static void read_two_gaps(uint8_t timeout)
{
	char what[96];
	struct dp_qp a, b;
	struct snap s;

	snprintf(what, sizeof(what),
		 "READ responses 5 and 32 of 32 lost, timeout %u", timeout);
	if (!pair(&a, &b, timeout))
		return;
	snap(&s);
	/*
	 * The 4th MIDDLE (PSN 5 of 32) and the LAST.  The three kept
	 * behind the first gap ask for response 5 alone; its answer comes
	 * after the whole stream, so once it and the 26 kept responses are
	 * taken nothing more can come: the LAST is asked for at once, not
	 * after a probe (10 ms) or, with timeout 0, never.
	 */
	if (rule("drop qpn=%u opcode=%d every=4 count=1", b.qp->qp_num,
		 OP_READ_MIDDLE) &&
	    rule_too("drop qpn=%u opcode=%d count=1", b.qp->qp_num,
		     OP_READ_LAST)) {
		rdma(&a, IBV_WR_RDMA_READ, LEN, 19 + timeout, what);
		diag_all(what, &s);
		tap_ret(moved(&s, "out_of_order_held"), 26,
			"%s: responses 6 to 31 kept", what);
		tap_ret(moved(&s, "read_rerequests"), 2,
			"%s: the READ asked again twice, for a part", what);
		tap_ret(moved(&s, "duplicate_request"), 2,
			"%s: two duplicate READs at the responder", what);
		tap_ret(moved(&s, "tail_probes"), 0, "%s: no probe", what);
		tap_ret(moved(&s, "completer_retry_err"), 0,
			"%s: no go-back-N", what);
		tap_ret(moved(&s, "ack_timeouts"), 0, "%s: no ACK timeout",
			what);
	}
	unpair(&a, &b);
}

/* a WRITE of 512 bytes and a SEND of 1 KiB, posted together */
static void write_and_send(struct dp_qp *a, struct dp_qp *b, uint32_t seed,
			   const char *what)
{
	struct ibv_sge sg[2] = {
		{ (uintptr_t)abuf, 512, amr->lkey },
		{ (uintptr_t)abuf + 1024, 1024, amr->lkey },
	};
	struct ibv_send_wr wr[2] = {}, *bad;
	struct dp_wc_want w;

	dp_fill(abuf, 512, seed);
	dp_fill(abuf + 1024, 1024, seed + 1);
	memset(bbuf, 0, 2048);
	if (dp_post_recv1(b->qp, seed + 1, bbuf + 1024, 1024, bmr->lkey)) {
		tap_ok(false, "%s: post recv", what);
		return;
	}
	wr[0].wr_id = seed;
	wr[0].sg_list = &sg[0];
	wr[0].num_sge = 1;
	wr[0].opcode = IBV_WR_RDMA_WRITE;
	wr[0].send_flags = IBV_SEND_SIGNALED;
	wr[0].wr.rdma.remote_addr = (uintptr_t)bbuf;
	wr[0].wr.rdma.rkey = bmr->rkey;
	wr[0].next = &wr[1];
	wr[1].wr_id = seed + 1;
	wr[1].sg_list = &sg[1];
	wr[1].num_sge = 1;
	wr[1].opcode = IBV_WR_SEND;
	wr[1].send_flags = IBV_SEND_SIGNALED;
	if (ibv_post_send(a->qp, wr, &bad)) {
		tap_ok(false, "%s: post", what);
		return;
	}
	w = dp_want(seed, IBV_WC_RDMA_WRITE);
	dp_expect(a->scq, &w, "%s: the WRITE completes", what);
	w = dp_want(seed + 1, IBV_WC_SEND);
	dp_expect(a->scq, &w, "%s: the SEND completes", what);
	w = dp_want(seed + 1, IBV_WC_RECV);
	w.byte_len = 1024;
	dp_expect(b->rcq, &w, "%s: its receive, 1024 bytes", what);
	tap_ok(dp_verify(bbuf, 512, seed) < 0, "%s: 512 bytes written", what);
	tap_ok(dp_verify(bbuf + 1024, 1024, seed + 1) < 0,
	       "%s: 1024 bytes received", what);
}

static void rnr_of_kept(void)
{
	const char *what = "a kept SEND answered with an RNR NAK";
	struct dp_qp a, b;
	struct snap s;

	if (!pair(&a, &b, 14))
		return;
	/* a loss first: the requester learns that the responder keeps */
	if (rule("drop qpn=%u opcode=%d every=4 count=1", a.qp->qp_num,
		 OP_WRITE_MIDDLE))
		rdma(&a, IBV_WR_RDMA_WRITE, LEN, 30, "a loss first");
	/*
	 * WRITE FIRST, LAST (lost), SEND FIRST, MIDDLE, MIDDLE, LAST: the
	 * SEND's packets are kept, the third draws the NAK for the WRITE's
	 * LAST, which comes again alone; then the SEND FIRST is taken from
	 * the kept ones and RNR NAKed, with the rest of the SEND kept past
	 * it.  That is no new gap: the RNR NAK stands for its PSN, and the
	 * requester waits the RNR timer, then sends it again.
	 */
	snap(&s);
	if (rule("drop qpn=%u opcode=%d count=1", a.qp->qp_num,
		 OP_WRITE_LAST) &&
	    rule_too("rnr_nak qpn=%u count=1", b.qp->qp_num, 0)) {
		write_and_send(&a, &b, 31, what);
		diag_all(what, &s);
		tap_ret(moved(&s, "send_rnr_err"), 1, "%s: one RNR NAK", what);
		tap_ret(moved(&s, "rcvd_rnr_err"), 1,
			"%s: the requester got it", what);
		tap_ret(moved(&s, "out_of_seq_request"), 1,
			"%s: one sequence NAK, the WRITE's", what);
		tap_ret(moved(&s, "rcvd_seq_err"), 1,
			"%s: the requester got that one", what);
		tap_ret(moved(&s, "ack_timeouts"), 0, "%s: no ACK timeout",
			what);
	}
	unpair(&a, &b);
}

int main(void)
{
	dp_open(&dev, test_dev_name());
	if (!dev.rxe2) {
		tap_skip("%s is not rxe2", dev.name);
		dp_close(&dev);
		return tap_done();
	}
	abuf = dp_alloc(LEN);
	bbuf = dp_alloc(LEN);
	amr = dp_reg(dev.pd, abuf, LEN, DP_ACCESS_ALL);
	bmr = dp_reg(dev.pd, bbuf, LEN, DP_ACCESS_ALL);

	write_overtaken();
	write_lost();
	read_overtaken();
	read_lost();
	tail_lost();
	read_two_gaps(14);
	read_two_gaps(0);
	rnr_of_kept();

	dp_fault_write(dev.name, "clear");
	ibv_dereg_mr(amr);
	ibv_dereg_mr(bmr);
	free(abuf);
	free(bbuf);
	dp_close(&dev);
	return tap_done();
}
