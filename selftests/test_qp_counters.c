// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: per-QP counters (rdma statistic qp): binding by hand and automatically by type, each counter's numbers exact, port totals whole across bind, unbind and release; the errors
 *
 * Per-QP counters (`rdma statistic qp`, ib_core's rdma_counter): QPs
 * bound to a counter by hand and automatically (by QP type), what each
 * counter counts, and the port's totals, which must stay whole whatever
 * is bound, unbound or released.
 *
 * Loopback RC pair A -> B on the device under test, path MTU 1024: a
 * SEND of 3000 B (FIRST 1024, MIDDLE 1024, LAST 952, AckReq on the LAST)
 * and one of 13 B (pad 3), each waited for.  A sends 4 packets, 3048 +
 * 32 bytes (BTH to ICRC), and 2 SENDs complete; B takes them, ACKs each
 * message (2 packets of 20 bytes) and defers 2 ACKs (FIRST, MIDDLE).
 *
 *  1. A and B bound to two new counters by hand: each counter has its
 *     QP's numbers exactly, and the port moved by their sum;
 *  2. B unbound (its counter goes with its last QP): the same traffic
 *     again, A's counter doubles, the port moves by the same sum;
 *  3. A destroyed: its counter is released, the port does not move
 *     (ib_core keeps what it counted);
 *  4. auto mode by type: a new pair shares one counter, which has both;
 *  5. errors: binding a QP that does not exist, auto mode while a QP is
 *     bound by hand.
 * TAP output.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp.h"
#include "tap.h"
#include "util.h"

static const char *dev;

/* the numbers the scenario moves, and by how much per run */
static const struct {
	const char *name;
	long a, b;		/* QP A's, QP B's */
} moved[] = {
	{ "sent_pkts", 4, 2 },
	{ "sent_bytes", 3080, 40 },
	{ "rcvd_pkts", 2, 4 },
	{ "rcvd_bytes", 40, 3080 },
	{ "ack_deferred", 0, 2 },
	{ "rdma_sends", 2, 0 },
	{ "rdma_recvs", 0, 2 },
};

#define NMOVED (sizeof(moved) / sizeof(moved[0]))

/*
 * The counter the QPs in lqpns ("17" or "17,18": iproute2 hides a
 * counter of which the filter does not name every QP) are bound to:
 * its number (0: none) and the values of moved[], from
 * `rdma -j statistic qp show link DEV/1 lqpn LQPNS`.
 */
static long qps_counter(const char *lqpns, long *v)
{
	char cmd[160], out[8192], key[64];
	size_t n, i;
	long cntn = 0;
	FILE *f;
	char *p;

	snprintf(cmd, sizeof(cmd),
		 "rdma -j statistic qp show link %s/1 lqpn %s 2>/dev/null",
		 dev, lqpns);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	n = fread(out, 1, sizeof(out) - 1, f);
	pclose(f);
	out[n] = 0;
	p = strstr(out, "\"cntn\":");
	if (p)
		cntn = strtol(p + 7, NULL, 10);
	for (i = 0; v && i < NMOVED; i++) {
		snprintf(key, sizeof(key), "\"%s\":", moved[i].name);
		p = strstr(out, key);
		v[i] = p ? strtol(p + strlen(key), NULL, 10) : -1;
	}
	return cntn;
}

static long qp_counter(uint32_t qpn, long *v)
{
	char q[16];

	snprintf(q, sizeof(q), "%u", qpn);
	return qps_counter(q, v);
}

static void port_snap(long *v)
{
	size_t i;

	for (i = 0; i < NMOVED; i++)
		v[i] = dp_hw_counter(dev, moved[i].name);
}

/* the scenario once: two SENDs A -> B, each waited for on both sides */
static void traffic(struct dp_qp *a, struct dp_qp *b, uint8_t *buf,
		    struct ibv_mr *mr, const char *what)
{
	static const uint32_t len[2] = { 3000, 13 };
	struct ibv_wc wc;
	int i, ok = 1;

	for (i = 0; i < 2; i++) {
		ok &= !dp_post_recv1(b->qp, 1, buf + 4096, 4096, mr->lkey);
		ok &= !dp_post_send1(a->qp, 2, IBV_WR_SEND, buf, len[i],
				     mr->lkey, 0, 0, 0);
		ok &= dp_poll(a->scq, &wc, 1, DP_WAIT_MS) == 1 &&
		      wc.status == IBV_WC_SUCCESS;
		ok &= dp_poll(b->rcq, &wc, 1, DP_WAIT_MS) == 1 &&
		      wc.status == IBV_WC_SUCCESS && wc.byte_len == len[i];
	}
	tap_ok(ok, "%s: SENDs of 3000 and 13 bytes A -> B complete", what);
}

/* one TAP line: v[] is times x the QP's column (a or b) */
static void expect(const long *v, bool qp_a, long times, const char *what)
{
	char diff[512] = "";
	size_t i, off = 0;
	int bad = 0;

	for (i = 0; i < NMOVED; i++) {
		long want = times * (qp_a ? moved[i].a : moved[i].b);

		if (v[i] != want) {
			bad++;
			off += snprintf(diff + off, sizeof(diff) - off,
					" %s %ld (want %ld)", moved[i].name,
					v[i], want);
			if (off >= sizeof(diff))
				off = sizeof(diff) - 1;
		}
	}
	tap_ok(!bad, "%s%s", what, diff);
}

static void port_moved(const long *p0, const long *p1, long times,
		       const char *what)
{
	long d[NMOVED];
	size_t i;
	int bad = 0;

	for (i = 0; i < NMOVED; i++) {
		d[i] = p1[i] - p0[i];
		if (d[i] != times * (moved[i].a + moved[i].b))
			bad++;
	}
	tap_ok(!bad, "%s: the port moved by exactly A's + B's (sent_pkts %ld, rcvd_bytes %ld)",
	       what, d[0], d[3]);
}

static long bind_new(uint32_t qpn)
{
	if (dp_sh("rdma statistic qp bind link %s/1 lqpn %u", dev, qpn))
		return 0;
	return qp_counter(qpn, NULL);
}

static void by_hand(struct dp_dev *d, uint8_t *buf, struct ibv_mr *mr)
{
	long va[NMOVED], vb[NMOVED], p0[NMOVED], p1[NMOVED];
	struct dp_qp a, b;
	long ca, cb;

	if (dp_rc_pair(d, &a, &b))
		tap_bail("RC pair");
	tap_ret(qp_counter(a.qp->qp_num, NULL), 0,
		"a new QP is bound to no counter (mode off)");
	ca = bind_new(a.qp->qp_num);
	cb = bind_new(b.qp->qp_num);
	tap_ok(ca > 0 && cb > 0 && ca != cb,
	       "rdma statistic qp bind: A to counter %ld, B to counter %ld",
	       ca, cb);
	port_snap(p0);
	traffic(&a, &b, buf, mr, "bound by hand");
	qp_counter(a.qp->qp_num, va);
	qp_counter(b.qp->qp_num, vb);
	expect(va, true, 1, "A's counter counted A's traffic exactly:");
	expect(vb, false, 1, "B's counter counted B's traffic exactly:");
	port_snap(p1);
	port_moved(p0, p1, 1, "both bound");

	tap_ret(dp_sh("rdma statistic qp unbind link %s/1 cntn %ld lqpn %u",
		      dev, cb, b.qp->qp_num), 0,
		"rdma statistic qp unbind B");
	tap_ret(qp_counter(b.qp->qp_num, NULL), 0, "B is bound to nothing");
	port_snap(p0);
	traffic(&a, &b, buf, mr, "B unbound");
	qp_counter(a.qp->qp_num, va);
	expect(va, true, 2, "A's counter has both runs:");
	port_snap(p1);
	port_moved(p0, p1, 1, "B unbound");

	tap_ok(dp_sh("rdma statistic qp set link %s/1 auto type on", dev) != 0,
	       "auto mode while a QP is bound by hand is refused");
	dp_qp_free(&a);
	port_snap(p0);
	tap_ok(!memcmp(p0, p1, sizeof(p0)),
	       "A destroyed, its counter released: the port keeps its counts");
	tap_ok(dp_sh("rdma -j statistic qp show link %s/1 | grep -q '\"cntn\":%ld,'",
		     dev, ca) != 0, "counter %ld is gone", ca);
	dp_qp_free(&b);
}

static void automatic(struct dp_dev *d, uint8_t *buf, struct ibv_mr *mr)
{
	long va[NMOVED], vb[NMOVED], p0[NMOVED], p1[NMOVED];
	struct dp_qp a, b;
	char both[32];
	long ca;
	size_t i;

	if (!tap_ret(dp_sh("rdma statistic qp set link %s/1 auto type on",
			   dev), 0, "rdma statistic qp set auto type on"))
		return;
	if (dp_rc_pair(d, &a, &b))
		tap_bail("RC pair");
	snprintf(both, sizeof(both), "%u,%u", a.qp->qp_num, b.qp->qp_num);
	ca = qps_counter(both, NULL);
	tap_ok(ca > 0 && qp_counter(a.qp->qp_num, NULL) == 0,
	       "auto: A and B share counter %ld (not one of A's alone)", ca);
	port_snap(p0);
	traffic(&a, &b, buf, mr, "auto");
	qps_counter(both, va);
	for (i = 0; i < NMOVED; i++)
		vb[i] = va[i] - moved[i].a;	/* B's part of the shared one */
	expect(vb, false, 1, "auto: the shared counter has A's + B's:");
	port_snap(p1);
	port_moved(p0, p1, 1, "auto");
	dp_qp_free(&a);
	dp_qp_free(&b);
	tap_ret(dp_sh("rdma statistic qp set link %s/1 auto off", dev), 0,
		"rdma statistic qp set auto off");
}

int main(void)
{
	struct dp_dev d;
	struct ibv_mr *mr;
	uint8_t *buf;

	dev = test_dev_name();
	dp_open(&d, dev);
	buf = dp_alloc(8192);
	mr = dp_reg(d.pd, buf, 8192, IBV_ACCESS_LOCAL_WRITE);
	dp_sh("rdma statistic qp set link %s/1 auto off", dev);
	by_hand(&d, buf, mr);
	automatic(&d, buf, mr);
	tap_ok(dp_sh("rdma statistic qp bind link %s/1 lqpn 16777000", dev),
	       "binding a QP that does not exist fails");
	ibv_dereg_mr(mr);
	free(buf);
	dp_close(&d);
	return tap_done();
}
