// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: fault rules in configfs (rxe2/<ibdev>/rules/<name>/): every rule kind (drop, dup, corrupt, delay, reorder, rnr_nak, access_nak, remop_nak, odp_fail) with exact completions, data, the rule's counts and port counters; the files' errnos (ENOSPC, EBUSY, EINVAL, EACCES, ENODEV once the device is gone), the order rules are asked in, rmdir of the last transmit rule sending what it held; bad rule lines, clear
 *
 * Fault injection through configfs, /sys/kernel/config/rxe2/<ibdev>/
 * (rxe2_fault.c, docs/knobs.md): each rule kind on a pair of QPs of the
 * device under test, made from a rule line by dp_fault_write(), with the
 * exact completions, the data byte for byte, the rule's own matched and
 * fired counts (read back by dp_fault_read()) and the port counters it
 * moves:
 *
 *  - drop of one SEND: retransmitted after the ACK timeout, delivered
 *    once; drop of the responder's ACK: the request comes again
 *    (duplicate_request); a rule for another opcode matches nothing;
 *  - both ACKs of a 32-packet SEND dropped: one ACK timeout cuts the
 *    requester's window to 16 packets, and the ACK its resend draws,
 *    for a PSN sent before the rewind, moves it on (it was taken for a
 *    PSN never sent, and the SEND ended in RETRY_EXC_ERR): it covers
 *    all 32, so the other 16 are passed over, not resent;
 *  - UC, drop every=3 count=2 over 9 SENDs: messages 3 and 6 are lost,
 *    the other 7 arrive in order;
 *  - dup: the second copy is a duplicate request, one receive completes;
 *  - corrupt: the ICRC is wrong (rx_icrc_errors), then a retransmission;
 *  - delay ms=300, the ACK timeout at 1 s: a tail-loss probe resends the
 *    SEND long before either (tail_probes, no ACK timeout), it is
 *    received once, and the delayed copy is a duplicate when it comes;
 *  - reorder: the first of two SENDs overtaken: the second is kept until
 *    the first arrives (no sequence NAK, nothing sent twice), both
 *    delivered in order;
 *  - rnr_nak count=2: a WRITE passes (it takes no receive WQE), a SEND
 *    draws two RNR NAKs, then succeeds; with rnr_retry 1,
 *    RNR_RETRY_EXC_ERR;
 *  - access_nak opcode=WRITE_ONLY: a SEND passes, the WRITE completes
 *    REM_ACCESS_ERR, its target untouched, both QPs in ERROR, the next
 *    WR flushed;
 *  - remop_nak: REM_OP_ERR at the sender, the receive flushed;
 *  - a READ's response dropped, then a SEND into an unusable receive
 *    WQE: the responder's remote operational error NAK comes after the
 *    ACK that rewound the requester to the READ; it still ends the QP
 *    with REM_OP_ERR (not RETRY_EXC_ERR: the responder is in ERROR);
 *  - odp_fail: a WRITE into an ODP MR NAKed (REM_ACCESS_ERR), a SEND from
 *    one LOC_PROT_ERR, num_failed_resolutions; with the rule spent the
 *    same WRITE lands;
 *  - a transmit rule for another QP, two devices of one namespace: the
 *    pair's packets are still handed over, none crosses the namespace's
 *    lo (only those a rule acts on take the routed way, through lo);
 *  - rule lines: bad ones EINVAL, a ninth rule ENOSPC, "clear";
 *  - the files themselves, written one by one: a new rule's values, each
 *    field's range (EINVAL at the write), no such file (ENOENT), the
 *    counts read-only (EACCES), enable checking the whole rule (EINVAL),
 *    the fields of a live rule read-only (EBUSY), eight rules and a
 *    ninth mkdir ENOSPC, no directory but for an rxe2 device (ENODEV)
 *    and none beside rules/ (EPERM);
 *  - the order rules are asked in: dup then drop of one QP's SENDs, the
 *    first live rule that fires decides, its counts exact; the dup
 *    turned off and on again goes last (its counts from 0) and acts on
 *    the resend of the SEND the drop took;
 *  - a UC SEND held by delay ms=1000 stays held when another transmit
 *    rule is removed, and leaves at once (long before its 1 s) when the
 *    last one is;
 *  - a device removed (rdma link delete) under its directory: every file
 *    ENODEV, mkdir of a rule too, rmdir works; made again under the
 *    name, it has no rule live and tx_drop 0.
 * TAP output.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dp.h"
#include "tap.h"
#include "util.h"

#define OP_SEND_ONLY	0x04
#define OP_WRITE_ONLY	0x0a
#define OP_READ_RESP	0x10	/* READ response only */
#define OP_ACK		0x11

#define CFS		"/sys/kernel/config/rxe2"
#define NO_QPN		"16773120"	/* 0xfff000: no QP of the tests */

static struct dp_dev dev;
static uint8_t *abuf, *bbuf;
static struct ibv_mr *amr, *bmr;

/* CFS/DEV/REL ("" for the directory itself) */
static void cfs_path(char *path, size_t len, const char *d, const char *rel)
{
	snprintf(path, len, CFS "/%s%s%s", d, *rel ? "/" : "", rel);
}

/* mkdir, rmdir, a write (VAL and a newline) of CFS/DEV/REL: 0 or errno */
static int cfs_mk(const char *d, const char *rel)
{
	char path[512];

	cfs_path(path, sizeof(path), d, rel);
	return mkdir(path, 0755) ? errno : 0;
}

static int cfs_rm(const char *d, const char *rel)
{
	char path[512];

	cfs_path(path, sizeof(path), d, rel);
	return rmdir(path) ? errno : 0;
}

static int cfs_put(const char *d, const char *rel, const char *val)
{
	char path[512];

	cfs_path(path, sizeof(path), d, rel);
	return dp_cfs_put(path, val);
}

/* CFS/DEV/REL reads WANT (its first line) */
static bool cfs_is(const char *d, const char *rel, const char *want)
{
	char path[512], v[64];
	int r;

	cfs_path(path, sizeof(path), d, rel);
	r = dp_cfs_get(path, v, sizeof(v));
	if (r)
		return tap_ok(false, "rxe2/%s/%s reads \"%s\" (%s)", d, rel,
			      want, strerror(r));
	return tap_ok(!strcmp(v, want), "rxe2/%s/%s reads \"%s\" (got \"%s\")",
		      d, rel, want, v);
}

/* the read of CFS/DEV/REL fails with ERR */
static bool cfs_get_err(const char *d, const char *rel, int err)
{
	char path[512], v[64];

	cfs_path(path, sizeof(path), d, rel);
	return tap_ret_errno(dp_cfs_get(path, v, sizeof(v)), err,
			     "reading rxe2/%s/%s", d, rel);
}

static bool cfs_gone(const char *d, const char *rel)
{
	char path[512];

	cfs_path(path, sizeof(path), d, rel);
	return access(path, F_OK) && errno == ENOENT;
}

/* a rule of the files' own, written one field at a time: 0 or errno */
static int cfs_rule(const char *d, const char *name, const char *action,
		    const char *qpn, const char *more, const char *val)
{
	char rel[128];
	int r;

	snprintf(rel, sizeof(rel), "rules/%s", name);
	r = cfs_mk(d, rel);
	snprintf(rel, sizeof(rel), "rules/%s/action", name);
	if (!r)
		r = cfs_put(d, rel, action);
	snprintf(rel, sizeof(rel), "rules/%s/qpn", name);
	if (!r)
		r = cfs_put(d, rel, qpn);
	if (!r && more) {
		snprintf(rel, sizeof(rel), "rules/%s/%s", name, more);
		r = cfs_put(d, rel, val);
	}
	snprintf(rel, sizeof(rel), "rules/%s/enable", name);
	if (!r)
		r = cfs_put(d, rel, "1");
	return r;
}

/* writes one rule (or "clear"); 0 or the write's errno */
static int rule(const char *fmt, ...)
{
	char line[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	return dp_fault_write(dev.name, line);
}

static bool set_rule(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static bool set_rule(const char *fmt, ...)
{
	char line[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	rule("clear");
	return tap_ret(rule("%s", line), 0, "rule \"%s\" accepted", line);
}

/* the live rules as lines, with their counts */
static void rules(char *buf, size_t len)
{
	int r = dp_fault_read(dev.name, buf, len);

	if (r)
		tap_diag("reading the rules of %s: %s", dev.name, strerror(r));
}

/* exactly this one rule is live, with these counts; then clear it */
static void expect_rule(const char *what, const char *fmt, ...)
{
	char want[256], got[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(want, sizeof(want), fmt, ap);
	va_end(ap);
	strcat(want, "\n");
	rules(got, sizeof(got));
	tap_ok(!strcmp(got, want), "%s: the rule reads \"%.*s\" (got \"%.*s\")",
	       what, (int)strlen(want) - 1, want,
	       (int)(strlen(got) ? strlen(got) - 1 : 0), got);
	rule("clear");
}

static bool pair(struct dp_conn *c, enum ibv_qp_type t, struct dp_qp *a,
		 struct dp_qp *b)
{
	return tap_ret(dp_pair(&dev, &dev, t, &dp_small_cap, c, a, b), 0,
		       "%s pair on %s", t == IBV_QPT_RC ? "RC" : "UC",
		       dev.name);
}

static void unpair(struct dp_qp *a, struct dp_qp *b)
{
	rule("clear");
	dp_qp_free(a);
	dp_qp_free(b);
}

static bool want(struct ibv_cq *cq, uint64_t id, int opcode, int status,
		 const char *what)
{
	struct dp_wc_want w = dp_want(id, status ? -1 : opcode);

	w.status = status;
	return dp_expect(cq, &w, "%s: wr %lu %s", what, (unsigned long)id,
			 dp_status_str(status));
}

/* a SEND of len bytes of pattern seed from abuf+off into a posted recv */
static void send_msg(struct dp_qp *a, struct dp_qp *b, uint64_t id,
		     uint32_t len, uint32_t seed, uint32_t off)
{
	dp_fill(abuf + off, len, seed);
	dp_post_recv1(b->qp, id, bbuf + off, len, bmr->lkey);
	dp_post_send1(a->qp, id, IBV_WR_SEND, abuf + off, len, amr->lkey, 0,
		      0, 0);
}

static void delivered(struct dp_qp *a, struct dp_qp *b, uint64_t id,
		      uint32_t len, uint32_t seed, uint32_t off,
		      const char *what)
{
	want(a->scq, id, IBV_WC_SEND, 0, what);
	want(b->rcq, id, IBV_WC_RECV, 0, what);
	tap_ok(dp_verify(bbuf + off, len, seed) < 0, "%s: %u bytes exact",
	       what, len);
}

static long ctr(const char *name)
{
	return dp_hw_counter(dev.name, name);
}

/* drop one SEND, drop one ACK, a rule for another opcode */
static void drops(void)
{
	const char *what = "drop the SEND";
	struct dp_qp a, b;
	struct dp_conn c;
	long dup0, inj0;

	dp_conn_default(&c);
	if (!pair(&c, IBV_QPT_RC, &a, &b))
		return;
	inj0 = ctr("fault_injected");
	if (set_rule("drop qpn=%u opcode=%d count=1", a.qp->qp_num,
		     OP_SEND_ONLY)) {
		send_msg(&a, &b, 1, 100, 1, 0);
		delivered(&a, &b, 1, 100, 1, 0, what);
		expect_rule(what, "drop qpn=%u opcode=%d count=1 matched=1 fired=1",
			    a.qp->qp_num, OP_SEND_ONLY);
		tap_ret(ctr("fault_injected") - inj0, 1,
			"%s: fault_injected +1", what);
	}

	what = "drop the ACK";
	dup0 = ctr("duplicate_request");
	if (set_rule("drop qpn=%u opcode=%d count=1", b.qp->qp_num, OP_ACK)) {
		send_msg(&a, &b, 2, 200, 2, 0);
		delivered(&a, &b, 2, 200, 2, 0, what);
		expect_rule(what, "drop qpn=%u opcode=%d count=1 matched=1 fired=1",
			    b.qp->qp_num, OP_ACK);
		tap_ret(ctr("duplicate_request") - dup0, 1,
			"%s: duplicate_request +1", what);
	}

	what = "a rule for WRITEs, a SEND";
	if (set_rule("drop qpn=%u opcode=%d", a.qp->qp_num, OP_WRITE_ONLY)) {
		send_msg(&a, &b, 3, 300, 3, 0);
		delivered(&a, &b, 3, 300, 3, 0, what);
		expect_rule(what, "drop qpn=%u opcode=%d matched=0 fired=0",
			    a.qp->qp_num, OP_WRITE_ONLY);
	}
	unpair(&a, &b);
}

/*
 * 8 KiB at MTU 256: 32 packets, AckReq on the 16th and the 32nd.  Both
 * ACKs lost: the timeout resends 16 packets (the window after a
 * timeout), and the responder, which has all 32, acknowledges the 32nd:
 * the requester passes over the other 16 (rxe2_req_skip()).
 */
static void window_after_timeout(void)
{
	const char *what = "both ACKs of 32 packets dropped";
	long dup0 = ctr("duplicate_request"), to0 = ctr("ack_timeouts");
	long skip0 = ctr("resend_skipped");
	struct dp_qp a, b;
	struct dp_conn c;

	dp_conn_default(&c);
	c.mtu = IBV_MTU_256;
	if (!pair(&c, IBV_QPT_RC, &a, &b))
		return;
	if (set_rule("drop qpn=%u opcode=%d count=2", b.qp->qp_num, OP_ACK)) {
		send_msg(&a, &b, 1, 8192, 7, 0);
		delivered(&a, &b, 1, 8192, 7, 0, what);
		expect_rule(what, "drop qpn=%u opcode=%d count=2 matched=2 fired=2",
			    b.qp->qp_num, OP_ACK);
		tap_ret(ctr("ack_timeouts") - to0, 1, "%s: ack_timeouts +1",
			what);
		tap_ret(ctr("duplicate_request") - dup0, 16,
			"%s: duplicate_request +16 (one window resent)", what);
		tap_ret(ctr("resend_skipped") - skip0, 1,
			"%s: resend_skipped +1 (the rest passed over)", what);
	}
	unpair(&a, &b);
}

/* UC: every=3 count=2 over 9 SENDs loses exactly messages 3 and 6 */
static void uc_every(void)
{
	const char *what = "UC, drop every=3 count=2";
	static const uint32_t arrive[] = { 1, 2, 4, 5, 7, 8, 9 };
	struct ibv_wc wc[2];
	struct dp_qp a, b;
	struct dp_conn c;
	uint32_t i;

	dp_conn_default(&c);
	if (!pair(&c, IBV_QPT_UC, &a, &b))
		return;
	if (!set_rule("drop qpn=%u every=3 count=2", a.qp->qp_num))
		goto out;
	for (i = 1; i <= 9; i++)
		dp_post_recv1(b.qp, i, bbuf + i * 64, 64, bmr->lkey);
	for (i = 1; i <= 9; i++) {
		dp_fill(abuf + i * 64, 64, 100 + i);
		dp_post_send1(a.qp, i, IBV_WR_SEND, abuf + i * 64, 64,
			      amr->lkey, 0, 0, 0);
		want(a.scq, i, IBV_WC_SEND, 0, what);
	}
	/* receive WQEs are used in order: the nth holds the nth arrival */
	for (i = 0; i < 7; i++) {
		char w[64];

		snprintf(w, sizeof(w), "%s, arrival %u", what, i + 1);
		want(b.rcq, i + 1, IBV_WC_RECV, 0, w);
		tap_ok(dp_verify(bbuf + (i + 1) * 64, 64, 100 + arrive[i]) < 0,
		       "%s: receive %u holds message %u", what, i + 1,
		       arrive[i]);
	}
	tap_ret(dp_poll_none(b.rcq, wc, 200), 0,
		"%s: no further receive completes", what);
	/* spent at its second firing (message 6), it matched no more */
	expect_rule(what, "drop qpn=%u every=3 count=2 matched=6 fired=2",
		    a.qp->qp_num);
out:
	unpair(&a, &b);
}

/* dup, corrupt, delay, reorder of one SEND */
static void wire(void)
{
	const char *what = "dup the SEND";
	struct ibv_wc wc[2];
	struct dp_qp a, b;
	struct dp_conn c;
	long v0, v1, held0, dup0, dups, probe0, probes, to0;
	uint64_t t0;

	dp_conn_default(&c);
	c.timeout = 18;		/* ~1 s: no ACK timeout in a delay */
	if (!pair(&c, IBV_QPT_RC, &a, &b))
		return;
	v0 = ctr("duplicate_request");
	if (set_rule("dup qpn=%u opcode=%d count=1", a.qp->qp_num,
		     OP_SEND_ONLY)) {
		send_msg(&a, &b, 1, 64, 11, 0);
		delivered(&a, &b, 1, 64, 11, 0, what);
		tap_ret(dp_poll_none(b.rcq, wc, 200), 0,
			"%s: one receive only", what);
		tap_ret(ctr("duplicate_request") - v0, 1,
			"%s: duplicate_request +1", what);
		expect_rule(what, "dup qpn=%u opcode=%d count=1 matched=1 fired=1",
			    a.qp->qp_num, OP_SEND_ONLY);
	}

	what = "corrupt the SEND";
	v0 = ctr("rx_icrc_errors");
	if (set_rule("corrupt qpn=%u count=1", a.qp->qp_num)) {
		send_msg(&a, &b, 2, 64, 12, 0);
		delivered(&a, &b, 2, 64, 12, 0, what);
		tap_ret(ctr("rx_icrc_errors") - v0, 1,
			"%s: rx_icrc_errors +1", what);
		expect_rule(what, "corrupt qpn=%u count=1 matched=1 fired=1",
			    a.qp->qp_num);
	}

	/*
	 * Round trips measured first (the dup case gave one sample, these
	 * two more), so the probe is due two of them (at least 10 ms)
	 * after the SEND went out: a packet held 300 ms on a link that
	 * answers in microseconds is lost as far as the requester can tell.
	 */
	what = "delay the SEND 300 ms";
	send_msg(&a, &b, 6, 64, 16, 0);
	delivered(&a, &b, 6, 64, 16, 0, "a SEND before the delay");
	send_msg(&a, &b, 7, 64, 17, 0);
	delivered(&a, &b, 7, 64, 17, 0, "a SEND before the delay");
	v0 = ctr("duplicate_request");
	probe0 = ctr("tail_probes");
	to0 = ctr("ack_timeouts");
	if (set_rule("delay qpn=%u count=1 ms=300", a.qp->qp_num)) {
		t0 = dp_now_ms();
		send_msg(&a, &b, 3, 64, 13, 0);
		delivered(&a, &b, 3, 64, 13, 0, what);
		v1 = (long)(dp_now_ms() - t0);
		tap_diag("%s: completed in %ld ms", what, v1);
		probes = ctr("tail_probes") - probe0;
		tap_ok(probes >= 1,
		       "%s: a tail-loss probe resent it (tail_probes +%ld)",
		       what, probes);
		tap_ret(ctr("ack_timeouts") - to0, 0, "%s: no ACK timeout",
			what);
		/* the held copy leaves at 300 ms: wait for it */
		tap_ret(dp_poll_none(b.rcq, wc, 500), 0,
			"%s: one receive only", what);
		tap_ret(ctr("duplicate_request") - v0, 1,
			"%s: the delayed copy came as a duplicate", what);
		expect_rule(what, "delay qpn=%u count=1 ms=300 matched=1 fired=1",
			    a.qp->qp_num);
	}

	what = "reorder two SENDs";
	v0 = ctr("out_of_seq_request");
	held0 = ctr("out_of_order_held");
	dup0 = ctr("duplicate_request");
	probe0 = ctr("tail_probes");
	if (set_rule("reorder qpn=%u count=1", a.qp->qp_num)) {
		dp_fill(abuf, 64, 14);
		dp_fill(abuf + 64, 64, 15);
		dp_post_recv1(b.qp, 4, bbuf, 64, bmr->lkey);
		dp_post_recv1(b.qp, 5, bbuf + 64, 64, bmr->lkey);
		dp_post_send1(a.qp, 4, IBV_WR_SEND, abuf, 64, amr->lkey, 0, 0,
			      0);
		dp_post_send1(a.qp, 5, IBV_WR_SEND, abuf + 64, 64, amr->lkey,
			      0, 0, 0);
		delivered(&a, &b, 4, 64, 14, 0, what);
		delivered(&a, &b, 5, 64, 15, 64, what);
		tap_ret(ctr("out_of_order_held") - held0, 1,
			"%s: the overtaking SEND kept", what);
		tap_ret(ctr("out_of_seq_request") - v0, 0,
			"%s: no sequence NAK", what);
		/*
		 * Kept, not resent: only a tail-loss probe may send them
		 * again, which fires when no ACK came for 10 ms and a tick
		 * (a vCPU of a loaded TCG host stalls that long), and then
		 * resends at most the two SENDs outstanding.
		 */
		dups = ctr("duplicate_request") - dup0;
		probes = ctr("tail_probes") - probe0;
		tap_ok(!dups || (probes > 0 && dups <= 2 * probes),
		    "%s: nothing sent twice but by a tail-loss probe (duplicates +%ld, tail_probes +%ld)",
		    what, dups, probes);
		rule("clear");
	}
	unpair(&a, &b);
}

/* forced RNR NAKs: retried, then exhausted */
static void rnr(void)
{
	const char *what = "rnr_nak count=2, rnr_retry 7";
	struct dp_qp a, b;
	struct dp_conn c;
	long s0, r0;

	dp_conn_default(&c);
	if (!pair(&c, IBV_QPT_RC, &a, &b))
		return;
	s0 = ctr("send_rnr_err");
	r0 = ctr("rcvd_rnr_err");
	if (set_rule("rnr_nak qpn=%u count=2", b.qp->qp_num)) {
		/* a WRITE takes no receive WQE: never RNR NAKed */
		dp_fill(abuf + 512, 64, 20);
		dp_post_send1(a.qp, 9, IBV_WR_RDMA_WRITE, abuf + 512, 64,
			      amr->lkey, (uintptr_t)bbuf + 512, bmr->rkey, 0);
		want(a.scq, 9, IBV_WC_RDMA_WRITE, 0, "rnr_nak, a WRITE");
		tap_ok(dp_verify(bbuf + 512, 64, 20) < 0,
		       "rnr_nak, a WRITE: 64 bytes exact");
		send_msg(&a, &b, 1, 64, 21, 0);
		delivered(&a, &b, 1, 64, 21, 0, what);
		tap_ret(ctr("send_rnr_err") - s0, 2, "%s: send_rnr_err +2",
			what);
		tap_ret(ctr("rcvd_rnr_err") - r0, 2, "%s: rcvd_rnr_err +2",
			what);
		expect_rule(what, "rnr_nak qpn=%u count=2 matched=2 fired=2",
			    b.qp->qp_num);
	}
	unpair(&a, &b);

	what = "rnr_nak count=2, rnr_retry 1";
	c.rnr_retry = 1;
	if (!pair(&c, IBV_QPT_RC, &a, &b))
		return;
	if (set_rule("rnr_nak qpn=%u count=2", b.qp->qp_num)) {
		send_msg(&a, &b, 2, 64, 22, 0);
		want(a.scq, 2, IBV_WC_SEND, IBV_WC_RNR_RETRY_EXC_ERR, what);
		expect_rule(what, "rnr_nak qpn=%u count=2 matched=2 fired=2",
			    b.qp->qp_num);
	}
	unpair(&a, &b);
}

/* forced remote access and remote operational errors */
static void fatal_naks(void)
{
	const char *what = "access_nak on WRITEs";
	struct dp_qp a, b;
	struct dp_conn c;

	dp_conn_default(&c);
	if (!pair(&c, IBV_QPT_RC, &a, &b))
		return;
	if (set_rule("access_nak qpn=%u opcode=%d", b.qp->qp_num,
		     OP_WRITE_ONLY)) {
		send_msg(&a, &b, 1, 64, 31, 0);
		delivered(&a, &b, 1, 64, 31, 0, "access_nak, a SEND");
		memset(bbuf + 1024, 0x5a, 64);
		dp_fill(abuf + 1024, 64, 32);
		dp_post_send1(a.qp, 2, IBV_WR_RDMA_WRITE, abuf + 1024, 64,
			      amr->lkey, (uintptr_t)bbuf + 1024, bmr->rkey, 0);
		want(a.scq, 2, IBV_WC_RDMA_WRITE, IBV_WC_REM_ACCESS_ERR, what);
		tap_ok(dp_verify_byte(bbuf + 1024, 64, 0x5a) < 0,
		       "%s: the target untouched", what);
		tap_ret(qp_state(a.qp), IBV_QPS_ERR, "%s: requester in ERROR",
			what);
		tap_ret(qp_state(b.qp), IBV_QPS_ERR, "%s: responder in ERROR",
			what);
		dp_post_send1(a.qp, 3, IBV_WR_SEND, abuf, 8, amr->lkey, 0, 0,
			      0);
		want(a.scq, 3, IBV_WC_SEND, IBV_WC_WR_FLUSH_ERR, what);
		expect_rule(what, "access_nak qpn=%u opcode=%d matched=1 fired=1",
			    b.qp->qp_num, OP_WRITE_ONLY);
	}
	unpair(&a, &b);

	what = "remop_nak on a SEND";
	if (!pair(&c, IBV_QPT_RC, &a, &b))
		return;
	if (set_rule("remop_nak qpn=%u", b.qp->qp_num)) {
		send_msg(&a, &b, 4, 64, 33, 0);
		want(a.scq, 4, IBV_WC_SEND, IBV_WC_REM_OP_ERR, what);
		want(b.rcq, 4, IBV_WC_RECV, IBV_WC_WR_FLUSH_ERR, what);
		tap_ret(qp_state(b.qp), IBV_QPS_ERR, "%s: responder in ERROR",
			what);
		expect_rule(what, "remop_nak qpn=%u matched=1 fired=1",
			    b.qp->qp_num);
	}
	unpair(&a, &b);
}

/*
 * READ, SEND, SEND in one post; the READ's response is lost and the
 * second SEND's receive WQE runs past its MR.  The responder answers
 * the READ (dropped), ACKs the first SEND, completes the second receive
 * LOC_PROT_ERR with a remote operational error NAK and goes to ERROR.
 * The ACK rewinds the requester to the unanswered READ; the NAK, for a
 * PSN past the rewound one, must still end the QP with its own status.
 * The oldest unfinished WQE (the READ) carries it, the others flush.
 */
static void nak_after_rewind(void)
{
	const char *what = "a remote op NAK after a go-back-N rewind";
	struct ibv_sge sge[3] = {
		{ (uintptr_t)abuf + 4096, 64, amr->lkey },
		{ (uintptr_t)abuf, 64, amr->lkey },
		{ (uintptr_t)abuf + 64, 64, amr->lkey },
	};
	struct ibv_send_wr wr[3], *bad = NULL;
	struct dp_qp a, b;
	struct dp_conn c;
	int i;

	dp_conn_default(&c);
	if (!pair(&c, IBV_QPT_RC, &a, &b))
		return;
	memset(wr, 0, sizeof(wr));
	for (i = 0; i < 3; i++) {
		wr[i].wr_id = i + 1;
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].opcode = i ? IBV_WR_SEND : IBV_WR_RDMA_READ;
		wr[i].next = i < 2 ? &wr[i + 1] : NULL;
	}
	wr[0].wr.rdma.remote_addr = (uintptr_t)bbuf + 4096;
	wr[0].wr.rdma.rkey = bmr->rkey;
	dp_fill(abuf, 128, 41);
	dp_post_recv1(b.qp, 2, bbuf, 64, bmr->lkey);
	/* 32 bytes inside the MR, 32 past its end */
	dp_post_recv1(b.qp, 3, bbuf + 8192 - 32, 64, bmr->lkey);
	if (set_rule("drop qpn=%u opcode=%d count=1", b.qp->qp_num,
		     OP_READ_RESP)) {
		tap_ret(ibv_post_send(a.qp, wr, &bad), 0, "%s: post", what);
		want(a.scq, 1, IBV_WC_RDMA_READ, IBV_WC_REM_OP_ERR, what);
		want(a.scq, 2, IBV_WC_SEND, IBV_WC_WR_FLUSH_ERR, what);
		want(a.scq, 3, IBV_WC_SEND, IBV_WC_WR_FLUSH_ERR, what);
		want(b.rcq, 2, IBV_WC_RECV, 0, what);
		want(b.rcq, 3, IBV_WC_RECV, IBV_WC_LOC_PROT_ERR, what);
		tap_ok(dp_verify(bbuf, 64, 41) < 0,
		       "%s: the first SEND landed byte for byte", what);
		tap_ret(qp_state(a.qp), IBV_QPS_ERR, "%s: requester in ERROR",
			what);
		tap_ret(qp_state(b.qp), IBV_QPS_ERR, "%s: responder in ERROR",
			what);
		expect_rule(what, "drop qpn=%u opcode=%d count=1 matched=1 fired=1",
			    b.qp->qp_num, OP_READ_RESP);
	}
	unpair(&a, &b);
}

/*
 * A WRITE of len bytes (the target all zero) under "odp_fail count=1":
 * it completes with status, the target untouched, one failed fault
 * counted, the rule spent on it.
 */
static void odp_fail_write(const char *what, struct dp_qp *a, uint64_t id,
			   uint8_t *src, uint32_t lkey, uint8_t *dst,
			   uint32_t rkey, uint32_t len,
			   enum ibv_wc_status status)
{
	long f0 = ctr("num_failed_resolutions");

	if (!set_rule("odp_fail count=1"))
		return;
	dp_post_send1(a->qp, id, IBV_WR_RDMA_WRITE, src, len, lkey,
		      (uintptr_t)dst, rkey, 0);
	want(a->scq, id, IBV_WC_RDMA_WRITE, status, what);
	tap_ok(dp_verify_byte(dst, len, 0) < 0, "%s: the target untouched",
	       what);
	tap_ret(ctr("num_failed_resolutions") - f0, 1,
		"%s: num_failed_resolutions +1", what);
	expect_rule(what, "odp_fail count=1 matched=1 fired=1");
}

/* failed ODP page faults at the responder and at the requester */
static void odp(void)
{
	const char *what = "odp_fail, a WRITE into an ODP MR";
	const int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_ON_DEMAND;
	uint8_t *obuf = dp_alloc(8192);
	struct ibv_mr *omr;
	struct dp_qp a, b;
	struct dp_conn c;

	omr = ibv_reg_mr(dev.pd, obuf, 8192, acc);
	if (!tap_ok(omr, "an ODP MR of 8 KiB")) {
		free(obuf);
		return;
	}
	dp_conn_default(&c);
	if (!pair(&c, IBV_QPT_RC, &a, &b))
		goto out;
	dp_fill(abuf, 4096, 41);
	odp_fail_write(what, &a, 1, abuf, amr->lkey, obuf, omr->rkey, 4096,
		       IBV_WC_REM_ACCESS_ERR);
	unpair(&a, &b);

	what = "odp_fail spent, the same WRITE";
	if (!pair(&c, IBV_QPT_RC, &a, &b))
		goto out;
	dp_post_send1(a.qp, 2, IBV_WR_RDMA_WRITE, abuf, 4096, amr->lkey,
		      (uintptr_t)obuf, omr->rkey, 0);
	want(a.scq, 2, IBV_WC_RDMA_WRITE, 0, what);
	tap_ok(dp_verify(obuf, 4096, 41) < 0, "%s: 4096 bytes exact", what);
	unpair(&a, &b);

	what = "odp_fail, a SEND from an ODP MR";
	if (!pair(&c, IBV_QPT_RC, &a, &b))
		goto out;
	if (set_rule("odp_fail")) {
		dp_post_recv1(b.qp, 3, bbuf, 64, bmr->lkey);
		dp_post_send1(a.qp, 3, IBV_WR_SEND, obuf + 4096, 64, omr->lkey,
			      0, 0, 0);
		want(a.scq, 3, IBV_WC_SEND, IBV_WC_LOC_PROT_ERR, what);
		expect_rule(what, "odp_fail matched=1 fired=1");
	}
	unpair(&a, &b);

	/*
	 * A WRITE of whole packets from the same still unmapped page takes
	 * the one-copy path, which faults its source in before the packet
	 * leaves: one failed fault fails the WQE, nothing tries it again.
	 */
	what = "odp_fail count=1, a 2048-byte WRITE from an ODP MR";
	if (!pair(&c, IBV_QPT_RC, &a, &b))
		goto out;
	memset(bbuf, 0, 2048);
	odp_fail_write(what, &a, 4, obuf + 4096, omr->lkey, bbuf, bmr->rkey,
		       2048, IBV_WC_LOC_PROT_ERR);
	unpair(&a, &b);
out:
	ibv_dereg_mr(omr);
	free(obuf);
}

/* packets that crossed lo, or -1 */
static long lo_packets(void)
{
	return read_long("/sys/class/net/lo/statistics/tx_packets");
}

/* a rule that acts on nothing leaves local hand-over alone */
static void handed_over(void)
{
	const char *what = "a rule for another QP, two devices of one namespace";
	struct dp_dev d1, d2, keep = dev;
	struct dp_qp a, b;
	struct dp_conn c;

	if (!tap_ok(dp_veth_links(), "%s: rxe2_dp0 and rxe2_dp1", what))
		return;
	dp_open(&d1, "rxe2_dp0");
	dp_open(&d2, "rxe2_dp1");
	dp_conn_default(&c);
	c.retry_cnt = 1;
	if (tap_ret(dp_pair(&d1, &d2, IBV_QPT_RC, &dp_small_cap, &c, &a, &b),
		    0, "%s: RC pair", what)) {
		uint8_t *x = dp_alloc(4096), *y = dp_alloc(4096);
		struct ibv_mr *xm = dp_reg(d1.pd, x, 4096, DP_ACCESS_ALL);
		struct ibv_mr *ym = dp_reg(d2.pd, y, 4096, DP_ACCESS_ALL);
		long lo0, lo1;

		dev = d1;
		set_rule("drop qpn=%u", 0xfff000);
		lo0 = lo_packets();
		dp_fill(x, 100, 51);
		dp_post_recv1(b.qp, 1, y, 100, ym->lkey);
		dp_post_send1(a.qp, 1, IBV_WR_SEND, x, 100, xm->lkey, 0, 0, 0);
		want(a.scq, 1, IBV_WC_SEND, 0, what);
		want(b.rcq, 1, IBV_WC_RECV, 0, what);
		lo1 = lo_packets();
		tap_ok(dp_verify(y, 100, 51) < 0, "%s: 100 bytes exact", what);
		/* the SEND and its ACK routed would be 2 packets on lo */
		tap_ok(lo0 >= 0 && lo1 - lo0 < 2,
		       "%s: handed over, not routed through lo (lo +%ld)", what,
		       lo1 - lo0);
		expect_rule(what, "drop qpn=%u matched=0 fired=0", 0xfff000);
		dev = keep;
		dp_qp_free(&a);
		dp_qp_free(&b);
		ibv_dereg_mr(xm);
		ibv_dereg_mr(ym);
		free(x);
		free(y);
	}
	dp_close(&d1);
	dp_close(&d2);
	dp_veth_links_del();
}

/*
 * Rule lines: what they refuse, the limit, clear.  "drop speed=3" and
 * "drop enable=1" are dp_fault_write()'s own EINVAL (no field of a rule
 * line; the kernel's answer to a file that is not there is configfs()'s
 * ENOENT); every other refusal is the kernel's, at a field's write or at
 * enable.  every=0 is no longer refused: 0 is the value of a field not
 * set (the rule fires on each event), which a file must be able to hold.
 */
static void lines(void)
{
	static const char *const bad[] = {
		"explode", "drop qpn=", "drop qpn=0x1000000", "drop speed=3",
		"drop enable=1", "drop every=2 rate=2", "delay",
		"delay ms=1001", "drop ms=5", "odp_fail qpn=5",
		"odp_fail opcode=4", "drop opcode=256", "drop qpn",
	};
	char got[1024];
	unsigned int i;

	rule("clear");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		tap_ret(rule("%s", bad[i]), EINVAL, "rule \"%s\": EINVAL",
			bad[i]);
	for (i = 0; i < 8; i++)
		rule("drop qpn=%u", 0xfff000 + i);
	tap_ret(rule("drop qpn=1"), ENOSPC, "a ninth rule: ENOSPC");
	rules(got, sizeof(got));
	tap_ok(!strncmp(got, "drop qpn=16773120 matched=0 fired=0\n", 36),
	       "rules listed in order (\"%.36s\")", got);
	tap_ret(rule("clear"), 0, "clear");
	rules(got, sizeof(got));
	tap_ok(!got[0], "no rule after clear");
	tap_ok(cfs_gone(dev.name, ""),
	       "clear removed rxe2/%s (no rule left, tx_drop 0)", dev.name);
}

/* the files one by one: values, ranges, the limit, what is read-only */
static void files(void)
{
	static const char *const fresh[][2] = {
		{ "action", "none" }, { "qpn", "any" }, { "opcode", "any" },
		{ "every", "0" }, { "rate", "0" }, { "count", "0" },
		{ "ms", "0" }, { "enable", "0" }, { "matched", "0" },
		{ "fired", "0" },
	};
	static const char *const range[][2] = {
		{ "action", "explode" }, { "action", "" },
		{ "qpn", "16777216" }, { "qpn", "-1" }, { "qpn", "" },
		{ "opcode", "256" }, { "ms", "1001" }, { "every", "x" },
		{ "count", "4294967296" }, { "enable", "2" },
	};
	const char *d = dev.name;
	char rel[64];
	unsigned int i;

	rule("clear");
	tap_ret_errno(cfs_mk("rxe2_nosuch", ""), ENODEV,
		      "mkdir rxe2/rxe2_nosuch (no such device): ENODEV");
	if (!tap_ret_errno(cfs_mk(d, ""), 0, "mkdir rxe2/%s", d))
		return;
	cfs_is(d, "tx_drop", "0");
	tap_ret_errno(cfs_put(d, "tx_drop", "x"), EINVAL, "tx_drop x: EINVAL");
	tap_ret_errno(cfs_mk(d, "other"), EPERM,
		      "mkdir beside rules/: EPERM");
	if (!tap_ret_errno(cfs_mk(d, "rules/a"), 0, "mkdir rules/a"))
		goto out;
	for (i = 0; i < sizeof(fresh) / sizeof(fresh[0]); i++) {
		snprintf(rel, sizeof(rel), "rules/a/%s", fresh[i][0]);
		cfs_is(d, rel, fresh[i][1]);
	}
	for (i = 0; i < sizeof(range) / sizeof(range[0]); i++) {
		snprintf(rel, sizeof(rel), "rules/a/%s", range[i][0]);
		tap_ret_errno(cfs_put(d, rel, range[i][1]), EINVAL,
			      "%s \"%s\": EINVAL", range[i][0], range[i][1]);
	}
	tap_ret_errno(cfs_put(d, "rules/a/speed", "3"), ENOENT,
		      "rules/a/speed: no such file, ENOENT");
	tap_ret_errno(cfs_put(d, "rules/a/matched", "1"), EACCES,
		      "matched is read-only: EACCES");
	tap_ret_errno(cfs_put(d, "rules/a/fired", "1"), EACCES,
		      "fired is read-only: EACCES");
	cfs_is(d, "rules/a/qpn", "any");

	/* enable checks the rule as a whole, as a rule line was checked */
	tap_ret_errno(cfs_put(d, "rules/a/enable", "1"), EINVAL,
		      "enable with no action: EINVAL");
	tap_ret_errno(cfs_put(d, "rules/a/action", "drop"), 0, "action drop");
	tap_ret_errno(cfs_put(d, "rules/a/qpn", "0xfff000"), 0,
		      "qpn 0xfff000");
	cfs_is(d, "rules/a/qpn", NO_QPN);
	tap_ret_errno(cfs_put(d, "rules/a/every", "2"), 0, "every 2");
	tap_ret_errno(cfs_put(d, "rules/a/rate", "2"), 0, "rate 2");
	tap_ret_errno(cfs_put(d, "rules/a/enable", "1"), EINVAL,
		      "enable with every and rate: EINVAL");
	tap_ret_errno(cfs_put(d, "rules/a/ms", "5"), 0, "ms 5");
	tap_ret_errno(cfs_put(d, "rules/a/rate", "0"), 0,
		      "rate 0 (not set)");
	tap_ret_errno(cfs_put(d, "rules/a/enable", "1"), EINVAL,
		      "enable drop with ms: EINVAL");
	tap_ret_errno(cfs_put(d, "rules/a/action", "delay"), 0,
		      "action delay");
	tap_ret_errno(cfs_put(d, "rules/a/ms", "0"), 0, "ms 0");
	tap_ret_errno(cfs_put(d, "rules/a/enable", "1"), EINVAL,
		      "enable delay without ms: EINVAL");
	tap_ret_errno(cfs_put(d, "rules/a/action", "odp_fail"), 0,
		      "action odp_fail");
	tap_ret_errno(cfs_put(d, "rules/a/enable", "1"), EINVAL,
		      "enable odp_fail with a qpn: EINVAL");
	cfs_is(d, "rules/a/enable", "0");

	/* live: its fields are read-only, enable 1 again changes nothing */
	tap_ret_errno(cfs_put(d, "rules/a/action", "drop"), 0, "action drop");
	if (tap_ret_errno(cfs_put(d, "rules/a/enable", "1"), 0,
			  "enable drop qpn=%s every=2", NO_QPN)) {
		cfs_is(d, "rules/a/enable", "1");
		tap_ret_errno(cfs_put(d, "rules/a/qpn", "5"), EBUSY,
			      "qpn of a live rule: EBUSY");
		tap_ret_errno(cfs_put(d, "rules/a/action", "dup"), EBUSY,
			      "action of a live rule: EBUSY");
		tap_ret_errno(cfs_put(d, "rules/a/every", "0"), EBUSY,
			      "every of a live rule: EBUSY");
		cfs_is(d, "rules/a/qpn", NO_QPN);
		tap_ret_errno(cfs_put(d, "rules/a/enable", "1"), 0,
			      "enable 1 again");
		tap_ret_errno(cfs_put(d, "rules/a/enable", "0"), 0, "enable 0");
		cfs_is(d, "rules/a/enable", "0");
		tap_ret_errno(cfs_put(d, "rules/a/every", "0"), 0,
			      "every 0 (not set: each) once off");
		cfs_is(d, "rules/a/every", "0");
	}

	/* eight rules; the ninth mkdir ENOSPC; room again after an rmdir */
	for (i = 1; i < 8; i++) {
		snprintf(rel, sizeof(rel), "rules/%c", 'a' + i);
		tap_ret_errno(cfs_mk(d, rel), 0, "mkdir %s", rel);
	}
	tap_ret_errno(cfs_mk(d, "rules/i"), ENOSPC,
		      "mkdir of a ninth rule: ENOSPC");
	tap_ret_errno(cfs_rm(d, "rules/h"), 0, "rmdir rules/h");
	tap_ret_errno(cfs_mk(d, "rules/i"), 0, "mkdir rules/i, room again");
	tap_ret_errno(cfs_rm(d, ""), ENOTEMPTY,
		      "rmdir rxe2/%s with rules: ENOTEMPTY", d);
out:
	rule("clear");
	tap_ok(cfs_gone(d, ""), "rxe2/%s gone after clear", d);
}

/*
 * Two transmit rules on one QP's packets: the first live rule that
 * fires decides.  dup then drop: the dup takes the SEND, the drop never
 * sees it.  The dup off and on again goes last, its counts from 0: the
 * drop takes the next SEND, and the dup acts on its resend (the drop
 * spent by then).  One receive each time.
 */
static void order(void)
{
	const char *what = "dup, then drop";
	const char *d = dev.name;
	char qpn[16];
	struct ibv_wc wc[2];
	struct dp_qp a, b;
	struct dp_conn c;
	long inj0 = ctr("fault_injected");

	dp_conn_default(&c);
	if (!pair(&c, IBV_QPT_RC, &a, &b))
		return;
	snprintf(qpn, sizeof(qpn), "%u", a.qp->qp_num);
	rule("clear");
	if (!tap_ret_errno(cfs_mk(d, ""), 0, "%s: mkdir rxe2/%s", what, d) ||
	    !tap_ret_errno(cfs_rule(d, "x", "dup", qpn, "count", "1"), 0,
			   "%s: x, dup qpn=%s count=1, live", what, qpn) ||
	    !tap_ret_errno(cfs_rule(d, "y", "drop", qpn, "count", "1"), 0,
			   "%s: y, drop qpn=%s count=1, live", what, qpn))
		goto out;
	send_msg(&a, &b, 1, 64, 61, 0);
	delivered(&a, &b, 1, 64, 61, 0, what);
	tap_ret(dp_poll_none(b.rcq, wc, 200), 0, "%s: one receive only",
		what);
	cfs_is(d, "rules/x/matched", "1");
	cfs_is(d, "rules/x/fired", "1");
	cfs_is(d, "rules/y/matched", "0");
	cfs_is(d, "rules/y/fired", "0");

	what = "drop, then dup (turned off and on)";
	tap_ret_errno(cfs_put(d, "rules/x/enable", "0"), 0,
		      "%s: x enable 0", what);
	/* off, a rule reads the counts of its last time live */
	cfs_is(d, "rules/x/fired", "1");
	tap_ret_errno(cfs_put(d, "rules/x/enable", "1"), 0,
		      "%s: x enable 1, last now", what);
	cfs_is(d, "rules/x/matched", "0");
	send_msg(&a, &b, 2, 64, 62, 0);
	delivered(&a, &b, 2, 64, 62, 0, what);
	tap_ret(dp_poll_none(b.rcq, wc, 200), 0, "%s: one receive only",
		what);
	cfs_is(d, "rules/y/matched", "1");
	cfs_is(d, "rules/y/fired", "1");
	cfs_is(d, "rules/x/matched", "1");
	cfs_is(d, "rules/x/fired", "1");
	tap_ret(ctr("fault_injected") - inj0, 3, "fault_injected +3");
out:
	unpair(&a, &b);
}

/*
 * What delay holds leaves when the last transmit rule goes, not before:
 * a UC SEND (nothing resends it) held for 1 s by one rule while another
 * transmit rule, for no QP, is live too.
 */
static void release(void)
{
	const char *what = "UC SEND held by delay ms=1000";
	const char *d = dev.name;
	char qpn[16];
	struct ibv_wc wc[2];
	struct dp_qp a, b;
	struct dp_conn c;
	uint64_t t0;
	long t;

	dp_conn_default(&c);
	if (!pair(&c, IBV_QPT_UC, &a, &b))
		return;
	snprintf(qpn, sizeof(qpn), "%u", a.qp->qp_num);
	rule("clear");
	if (!tap_ret_errno(cfs_mk(d, ""), 0, "%s: mkdir rxe2/%s", what, d) ||
	    !tap_ret_errno(cfs_rule(d, "hold", "delay", qpn, "ms", "1000"), 0,
			   "%s: delay qpn=%s ms=1000, live", what, qpn) ||
	    !tap_ret_errno(cfs_rule(d, "other", "drop", NO_QPN, NULL, NULL),
			   0, "%s: drop qpn=%s, live", what, NO_QPN))
		goto out;
	t0 = dp_now_ms();
	dp_fill(abuf, 64, 71);
	dp_post_recv1(b.qp, 1, bbuf, 64, bmr->lkey);
	dp_post_send1(a.qp, 1, IBV_WR_SEND, abuf, 64, amr->lkey, 0, 0, 0);
	want(a.scq, 1, IBV_WC_SEND, 0, what);
	/* short looks: every step here counts against the 1 s it is held */
	tap_ret(dp_poll_none(b.rcq, wc, 50), 0, "%s: not received yet",
		what);
	cfs_is(d, "rules/hold/fired", "1");
	tap_ret_errno(cfs_rm(d, "rules/hold"), 0, "%s: rmdir rules/hold",
		      what);
	tap_ret(dp_poll_none(b.rcq, wc, 50), 0,
		"%s: still held while a transmit rule is live", what);
	tap_ret_errno(cfs_rm(d, "rules/other"), 0,
		      "%s: rmdir rules/other, the last", what);
	want(b.rcq, 1, IBV_WC_RECV, 0, what);
	t = (long)(dp_now_ms() - t0);
	tap_ok(dp_verify(bbuf, 64, 71) < 0, "%s: 64 bytes exact", what);
	/* its timer would have let it go at 1000 ms, not before */
	tap_ok(t < 1000, "%s: received %ld ms after the post, before its 1 s",
	       what, t);
out:
	unpair(&a, &b);
}

/*
 * A device removed under its directory: every access ENODEV, rmdir
 * still works; the device made again under the name has no rule live.
 */
static void gone(void)
{
	const char *what = "rxe2_dp0 removed";
	const char *d = "rxe2_dp0";

	if (!tap_ok(dp_veth_links(), "%s: rxe2_dp0 and rxe2_dp1", what))
		return;
	if (!tap_ret_errno(cfs_mk(d, ""), 0, "mkdir rxe2/%s", d) ||
	    !tap_ret_errno(cfs_rule(d, "x", "drop", NO_QPN, NULL, NULL), 0,
			   "%s: drop qpn=%s, live", what, NO_QPN) ||
	    !tap_ret_errno(cfs_mk(d, "rules/y"), 0, "%s: mkdir rules/y", what))
		goto out;
	cfs_is(d, "rules/x/enable", "1");
	if (!tap_ret(dp_sh("rdma link delete %s", d), 0, "%s: rdma link delete",
		     what))
		goto out;
	cfs_get_err(d, "tx_drop", ENODEV);
	tap_ret_errno(cfs_put(d, "tx_drop", "1"), ENODEV, "%s: tx_drop 1: ENODEV",
		      what);
	cfs_get_err(d, "rules/x/action", ENODEV);
	cfs_get_err(d, "rules/x/enable", ENODEV);
	cfs_get_err(d, "rules/x/matched", ENODEV);
	cfs_get_err(d, "rules/x/fired", ENODEV);
	tap_ret_errno(cfs_put(d, "rules/y/qpn", "5"), ENODEV,
		      "%s: rules/y/qpn 5: ENODEV", what);
	tap_ret_errno(cfs_put(d, "rules/y/enable", "0"), ENODEV,
		      "%s: rules/y/enable 0: ENODEV", what);
	tap_ret_errno(cfs_mk(d, "rules/z"), ENODEV, "%s: mkdir rules/z: ENODEV",
		      what);
	tap_ret_errno(cfs_rm(d, "rules/y"), 0, "%s: rmdir rules/y", what);

	what = "rxe2_dp0 made again";
	if (tap_ret(dp_sh("rdma link add %s type rxe2 netdev rxe2dp0", d), 0,
		    "%s: rdma link add", what)) {
		cfs_is(d, "rules/x/enable", "0");
		cfs_is(d, "rules/x/qpn", NO_QPN);
		cfs_is(d, "tx_drop", "0");
	}
out:
	cfs_rm(d, "rules/x");
	cfs_rm(d, "rules/y");
	tap_ret_errno(cfs_rm(d, ""), 0, "rmdir rxe2/%s", d);
	dp_veth_links_del();
}

int main(void)
{
	dp_open(&dev, test_dev_name());
	if (!dev.rxe2) {
		tap_skip("%s is not rxe2", dev.name);
		dp_close(&dev);
		return tap_done();
	}
	abuf = dp_alloc(8192);
	bbuf = dp_alloc(8192);
	amr = dp_reg(dev.pd, abuf, 8192, DP_ACCESS_ALL);
	bmr = dp_reg(dev.pd, bbuf, 8192, DP_ACCESS_ALL);

	lines();
	files();
	drops();
	window_after_timeout();
	uc_every();
	wire();
	rnr();
	fatal_naks();
	nak_after_rewind();
	odp();
	handed_over();
	order();
	release();
	gone();

	rule("clear");
	ibv_dereg_mr(amr);
	ibv_dereg_mr(bmr);
	free(abuf);
	free(bbuf);
	dp_close(&dev);
	return tap_done();
}
