// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Loss recovery that stays go-back-N on the wire (rxe/rxe2_reorder.c,
 * rxe2_req_skip(), rxe2_comp_reread(), the tail-loss probe), driven by
 * the device's fault file on an RC pair of one device at MTU 256, where
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
 *    timeout).
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
#define LEN		8192

static struct dp_dev dev;
static uint8_t *abuf, *bbuf;
static struct ibv_mr *amr, *bmr;

/* the counters a case looks at, read before and after it */
static const char *const names[] = {
	"out_of_order_held", "out_of_seq_request", "duplicate_request",
	"rcvd_seq_err", "completer_retry_err", "ack_timeouts",
	"read_rerequests", "tail_probes", "resend_skipped",
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
	dp_fault_write(&dev, "clear");
	return tap_ret(dp_fault_write(&dev, line), 0, "rule \"%s\" accepted",
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
	dp_fault_write(&dev, "clear");
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
		uint64_t t0 = dp_now_ms();

		rdma(&a, IBV_WR_RDMA_WRITE, 1024, 17, what);
		diag_all(what, &s);
		tap_diag("%s: completed in %llu ms", what,
			 (unsigned long long)(dp_now_ms() - t0));
		tap_ok(moved(&s, "tail_probes") >= 1, "%s: tail_probes +%ld",
		       what, moved(&s, "tail_probes"));
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

	dp_fault_write(&dev, "clear");
	ibv_dereg_mr(amr);
	ibv_dereg_mr(bmr);
	free(abuf);
	free(bbuf);
	dp_close(&dev);
	return tap_done();
}
