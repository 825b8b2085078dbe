// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: port counters (rdma statistic, hw_counters), each moved exactly by its scenario across two namespaces: packets and bytes, deferred ACKs, RNR, no QP, lost ACK and packet, link down
 *
 * The port counters (`rdma statistic show link`, ports/1/hw_counters),
 * each moved by a scenario that provokes exactly it: every counter of
 * both devices is read before and after, and each must have moved by
 * exactly what the scenario says; any other that moved is a failure.
 *
 * Two rxe2 devices on the ends of a veth whose ends sit in two network
 * namespaces (packets cross the wire), RC pairs between them, path MTU
 * 1024:
 *
 *  1. a SEND of 3000 B (FIRST 1024, MIDDLE 1024, LAST 952, AckReq on
 *     the LAST only) and one of 13 B (pad 3): packets and bytes both
 *     ways (BTH to ICRC: 3048 + 32 out, two ACKs of 20 back),
 *     ack_deferred (FIRST and MIDDLE), rdma_sends, rdma_recvs;
 *  2. the same between two devices of one namespace, where rxe2 hands
 *     packets over without an skb: the same numbers;
 *  3. a SEND to a peer without a receive, rnr_retry 0: one RNR NAK sent
 *     and received, rx_no_recv_wqe, retry_rnr_exceeded_err;
 *  4. a SEND to a QP that no longer exists, retry_cnt 1: rx_no_qp twice,
 *     one ACK timeout and retry, retry_exceeded_err;
 *  5. the receiver's ACK lost (its tx_drop at 1 until it counts
 *     the loss): the requester times out and sends the 3 packets again,
 *     duplicate_request 3, each answered by an ACK;
 *  6. the requester's first packet lost (tx_drop N, N chosen so
 *     that of the packets numbered 1..6 only the first is lost: the
 *     device's documented mix of the packet number): the other two are
 *     kept (out_of_order_held 2), the last, which asks for an ACK, draws
 *     the sequence NAK: out_of_seq_request and rcvd_seq_err once, one
 *     go-back-N retry, whose second and third packets are duplicates,
 *     each ACKed;
 *  7. the link taken down: link_downed on both ends; a SEND then,
 *     retry_cnt 0: send_err, retry_exceeded_err.
 * After case 1, `rdma resource show qp|cq|mr -dd` shows rxe2's driver
 * details with the PSNs moved by exactly the 4 packets, nothing
 * outstanding, the retry counts full, 256-byte CQEs and a pinned MR.
 * TAP output.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dp.h"
#include "tap.h"
#include "util.h"

#define DA	"ct1rxe2"
#define DB	"ct2rxe2"
#define MAXC	64

struct snap {
	int n;
	char name[MAXC][48];
	long v[MAXC];
};

struct want {
	const char *name;
	long delta;
};

static void snap(const char *dev, struct snap *s)
{
	char dir[256], path[512];
	struct dirent *e;
	DIR *d;

	usleep(20 * 1000);	/* ib_core caches the counters for 10 ms */
	snprintf(dir, sizeof(dir), "/sys/class/infiniband/%s/ports/1/hw_counters",
		 dev);
	s->n = 0;
	d = opendir(dir);
	if (!d)
		tap_bail("%s: %m", dir);
	while ((e = readdir(d)) && s->n < MAXC) {
		FILE *f;

		if (e->d_name[0] == '.' || !strcmp(e->d_name, "lifespan"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%ld", &s->v[s->n]) == 1 &&
		    strlen(e->d_name) < sizeof(s->name[0])) {
			memcpy(s->name[s->n], e->d_name, strlen(e->d_name) + 1);
			s->n++;
		}
		fclose(f);
	}
	closedir(d);
}

static long find(const struct snap *s, const char *name)
{
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->name[i], name))
			return s->v[i];
	return -1;
}

/*
 * Counters of how the work was scheduled, not of what happened on the
 * wire: whether a post found the requester running depends on timing
 * (architecture.md, "Streaming SQs"; test_stream checks them).
 */
static bool scheduling_counter(const char *name)
{
	return !strcmp(name, "sq_stream_handoffs") ||
	       !strcmp(name, "sq_live_posts");
}

/*
 * One TAP line per wanted counter of dev (its exact delta), one for all
 * the others (unchanged) but the scheduling ones.
 */
static void deltas(const char *what, const char *dev, const struct snap *a,
		   const struct want *w)
{
	char moved[512] = "";
	struct snap b;
	size_t len = 0;

	snap(dev, &b);
	for (const struct want *p = w; p->name; p++) {
		long before = find(a, p->name), after = find(&b, p->name);

		tap_ok(before >= 0 && after - before == p->delta,
		       "%s: %s %s %+ld (want %+ld)", what, dev, p->name,
		       after - before, p->delta);
	}
	for (int i = 0; i < b.n; i++) {
		const struct want *p;
		long d = b.v[i] - find(a, b.name[i]);

		for (p = w; p->name && strcmp(p->name, b.name[i]); p++)
			;
		if (!p->name && d && !scheduling_counter(b.name[i]) &&
		    len < sizeof(moved) - 64)
			len += (size_t)snprintf(moved + len, sizeof(moved) - len,
						" %s%+ld", b.name[i], d);
	}
	tap_ok(!len, "%s: %s: every other counter unchanged%s%s", what, dev,
	       len ? ", moved:" : "", moved);
}

static bool link_up(void)
{
	return !dp_sh(
		"ip netns add ct1 && ip netns add ct2 && "
		"ip -n ct1 link add ct1v type veth peer name ct2v netns ct2 && "
		"ip -n ct1 addr add 10.79.8.1/24 dev ct1v && "
		"ip -n ct2 addr add 10.79.8.2/24 dev ct2v && "
		"ip -n ct1 link set ct1v up && ip -n ct2 link set ct2v up && "
		"ip -n ct1 link set lo up && ip -n ct2 link set lo up && "
		"ip netns exec ct1 rdma link add " DA " type rxe2 netdev ct1v && "
		"ip netns exec ct2 rdma link add " DB " type rxe2 netdev ct2v && "
		"for i in $(seq 100); do "
		"grep -qs ffff:0a4f:0801 /sys/class/infiniband/" DA "/ports/1/gids/* && "
		"grep -qs ffff:0a4f:0802 /sys/class/infiniband/" DB "/ports/1/gids/* && exit 0; "
		"sleep 0.1; done; exit 1");
}

static void link_down(void)
{
	dp_sh("ip netns del ct1 2>/dev/null; ip netns del ct2 2>/dev/null; "
	      "for i in $(seq 100); do [ -e /sys/class/infiniband/" DA " ] || "
	      "[ -e /sys/class/infiniband/" DB " ] || exit 0; sleep 0.1; done");
}

struct env {
	struct dp_dev da, db;
	uint8_t *abuf, *bbuf;
	struct ibv_mr *amr, *bmr;
};

static void env_open(struct env *e, const char *a, const char *b)
{
	dp_open(&e->da, a);
	dp_open(&e->db, b);
	e->abuf = dp_alloc(8192);
	e->bbuf = dp_alloc(8192);
	e->amr = dp_reg(e->da.pd, e->abuf, 8192, DP_ACCESS_ALL);
	e->bmr = dp_reg(e->db.pd, e->bbuf, 8192, DP_ACCESS_ALL);
}

static void env_close(struct env *e)
{
	ibv_dereg_mr(e->amr);
	ibv_dereg_mr(e->bmr);
	free(e->abuf);
	free(e->bbuf);
	dp_close(&e->da);
	dp_close(&e->db);
}

static bool pair(struct env *e, const struct dp_conn *c, struct dp_qp *a,
		 struct dp_qp *b)
{
	int r = dp_pair(&e->da, &e->db, IBV_QPT_RC, &dp_small_cap, c, a, b);

	return tap_ret(r, 0, "RC pair %s -> %s", e->da.name, e->db.name);
}

static void unpair(struct dp_qp *a, struct dp_qp *b)
{
	dp_qp_free(a);
	if (b->qp)
		dp_qp_free(b);
}

static bool send1(struct env *e, struct dp_qp *a, uint64_t id, uint32_t len)
{
	return !dp_post_send1(a->qp, id, IBV_WR_SEND, e->abuf, len,
			      e->amr->lkey, 0, 0, 0);
}

static bool want_wc(struct ibv_cq *cq, uint64_t id, int opcode, int status,
		    const char *what)
{
	struct dp_wc_want w = dp_want(id, status ? -1 : opcode);

	w.status = status;
	return dp_expect(cq, &w, "%s: completion %s", what,
			 dp_status_str(status));
}

/*
 * `rdma resource show RES ... -dd` has the driver detail "name value"
 * (the rdma tool prints it as drv_name) exactly; one TAP line
 */
static void res_detail(const char *what, const char *dev, const char *res,
		       const char *filter, const char *name, const char *v)
{
	tap_ok(dp_res_detail(dev, res, filter, name, v),
	       "%s: rdma resource show %s %s -dd: %s %s", what, res, filter,
	       name, v);
}

static void res_num(const char *what, const char *dev, const char *res,
		    const char *filter, const char *name, unsigned long v)
{
	char s[24];

	snprintf(s, sizeof(s), "%lu", v);
	res_detail(what, dev, res, filter, name, s);
}

/* after case 1: the PSNs moved by the 4 packets, nothing outstanding */
static void res_details(struct env *e, const char *what, struct dp_qp *a,
			struct dp_qp *b, const struct dp_conn *c)
{
	char fa[32], fb[32];

	snprintf(fa, sizeof(fa), "lqpn %u", a->qp->qp_num);
	snprintf(fb, sizeof(fb), "lqpn %u", b->qp->qp_num);
	res_num(what, e->da.name, "qp", fa, "sq_psn", c->sq_psn + 4);
	res_num(what, e->da.name, "qp", fa, "sq_acked_psn", c->sq_psn + 4);
	res_num(what, e->da.name, "qp", fa, "sq_unfinished", 0);
	res_num(what, e->da.name, "qp", fa, "rd_atomic_inflight", 0);
	res_num(what, e->da.name, "qp", fa, "retry_left", c->retry_cnt);
	res_num(what, e->da.name, "qp", fa, "rnr_retry_left", c->rnr_retry);
	/* nothing lost: the window stays whole */
	res_num(what, e->da.name, "qp", fa, "cwnd", 256);
	res_num(what, e->db.name, "qp", fb, "rq_psn", c->rq_psn + 4);
	res_num(what, e->db.name, "qp", fb, "rx_backlog", 0);
	res_num(what, e->da.name, "cq", "", "cqe_size", 256);
	res_detail(what, e->da.name, "mr", "", "odp", "none");
}

/* 1, 2: SENDs of 3000 B and 13 B, counted the same on either path */
/*
 * in_place: the 3000-byte SEND's packets are handed over with one copy
 * (loopback: all 3; on the wire: none)
 */
static void sends(struct env *e, const char *what, long in_place)
{
	const struct want wa[] = {
		{ "sent_pkts", 4 }, { "sent_bytes", 3048 + 32 },
		{ "rcvd_pkts", 2 }, { "rcvd_bytes", 40 },
		{ "rdma_sends", 2 },
		{ in_place ? "loop_one_copy_pkts" : NULL, in_place },
		{ NULL, 0 } };
	static const struct want wb[] = {
		{ "rcvd_pkts", 4 }, { "rcvd_bytes", 3048 + 32 },
		{ "sent_pkts", 2 }, { "sent_bytes", 40 },
		{ "ack_deferred", 2 }, { "rdma_recvs", 2 }, { NULL, 0 } };
	struct snap sa, sb;
	struct dp_conn c;
	struct dp_qp a, b;

	dp_conn_default(&c);
	if (!pair(e, &c, &a, &b))
		return;
	dp_post_recv1(b.qp, 1, e->bbuf, 4096, e->bmr->lkey);
	dp_post_recv1(b.qp, 2, e->bbuf + 4096, 4096, e->bmr->lkey);
	snap(e->da.name, &sa);
	snap(e->db.name, &sb);
	send1(e, &a, 11, 3000);
	send1(e, &a, 12, 13);
	want_wc(a.scq, 11, IBV_WC_SEND, 0, what);
	want_wc(a.scq, 12, IBV_WC_SEND, 0, what);
	want_wc(b.rcq, 1, IBV_WC_RECV, 0, what);
	want_wc(b.rcq, 2, IBV_WC_RECV, 0, what);
	deltas(what, e->da.name, &sa, wa);
	deltas(what, e->db.name, &sb, wb);
	res_details(e, what, &a, &b, &c);
	unpair(&a, &b);
}

/* 3: RNR NAK, rnr_retry 0 */
static void rnr(struct env *e)
{
	static const struct want wa[] = {
		{ "sent_pkts", 1 }, { "sent_bytes", 12 + 8 + 4 },
		{ "rcvd_pkts", 1 }, { "rcvd_bytes", 20 },
		{ "rcvd_rnr_err", 1 }, { "retry_rnr_exceeded_err", 1 },
		{ NULL, 0 } };
	static const struct want wb[] = {
		{ "rcvd_pkts", 1 }, { "rcvd_bytes", 24 },
		{ "sent_pkts", 1 }, { "sent_bytes", 20 },
		{ "send_rnr_err", 1 }, { "rx_no_recv_wqe", 1 },
		{ "rx_dropped", 1 }, { NULL, 0 } };
	const char *what = "RNR NAK, rnr_retry 0";
	struct snap sa, sb;
	struct dp_conn c;
	struct dp_qp a, b;

	dp_conn_default(&c);
	c.rnr_retry = 0;
	if (!pair(e, &c, &a, &b))
		return;
	snap(e->da.name, &sa);
	snap(e->db.name, &sb);
	send1(e, &a, 21, 8);
	want_wc(a.scq, 21, IBV_WC_SEND, IBV_WC_RNR_RETRY_EXC_ERR, what);
	deltas(what, e->da.name, &sa, wa);
	deltas(what, e->db.name, &sb, wb);
	unpair(&a, &b);
}

/* 4: nobody answers, retry_cnt 1 */
static void no_peer(struct env *e)
{
	static const struct want wa[] = {
		{ "sent_pkts", 2 }, { "sent_bytes", 2 * 24 },
		{ "ack_timeouts", 1 }, { "completer_retry_err", 1 },
		{ "retry_exceeded_err", 1 }, { NULL, 0 } };
	static const struct want wb[] = {
		{ "rx_no_qp", 2 }, { "rx_dropped", 2 }, { NULL, 0 } };
	const char *what = "SEND to a destroyed QP, retry_cnt 1";
	struct snap sa, sb;
	struct dp_conn c;
	struct dp_qp a, b;

	dp_conn_default(&c);
	c.retry_cnt = 1;
	if (!pair(e, &c, &a, &b))
		return;
	dp_qp_free(&b);
	b.qp = NULL;
	snap(e->da.name, &sa);
	snap(e->db.name, &sb);
	send1(e, &a, 31, 8);
	want_wc(a.scq, 31, IBV_WC_SEND, IBV_WC_RETRY_EXC_ERR, what);
	deltas(what, e->da.name, &sa, wa);
	deltas(what, e->db.name, &sb, wb);
	unpair(&a, &b);
}

static bool port_state(struct dp_dev *d, enum ibv_port_state want)
{
	for (int i = 0; i < 100; i++) {
		struct ibv_port_attr pa;

		if (!ibv_query_port(d->ctx, 1, &pa) && pa.state == want)
			return true;
		usleep(100 * 1000);
	}
	return false;
}

/* 7: link down, then a SEND with retry_cnt 0 */
static void downed(struct env *e)
{
	static const struct want wa[] = {
		{ "link_downed", 1 }, { "send_err", 1 },
		{ "retry_exceeded_err", 1 }, { NULL, 0 } };
	static const struct want wb[] = {
		{ "link_downed", 1 }, { NULL, 0 } };
	const char *what = "link down, SEND, retry_cnt 0";
	struct snap sa, sb;
	struct dp_conn c;
	struct dp_qp a, b;

	dp_conn_default(&c);
	c.retry_cnt = 0;
	if (!pair(e, &c, &a, &b))
		return;
	snap(e->da.name, &sa);
	snap(e->db.name, &sb);
	dp_sh("ip -n ct1 link set ct1v down");
	tap_ok(port_state(&e->da, IBV_PORT_DOWN) &&
	       port_state(&e->db, IBV_PORT_DOWN),
	       "%s: both ports DOWN (the veth's peer loses its carrier)", what);
	send1(e, &a, 41, 8);
	want_wc(a.scq, 41, IBV_WC_SEND, IBV_WC_RETRY_EXC_ERR, what);
	dp_sh("ip -n ct1 link set ct1v up");
	tap_ok(port_state(&e->da, IBV_PORT_ACTIVE) &&
	       port_state(&e->db, IBV_PORT_ACTIVE), "%s: both ports ACTIVE again",
	       what);
	deltas(what, e->da.name, &sa, wa);
	deltas(what, e->db.name, &sb, wb);
	unpair(&a, &b);
}

/* the device's tx_drop (configfs): one packet in EVERY it sends lost */
static bool fault(const char *dev, unsigned int every)
{
	int r = dp_fault_tx_drop(dev, every);

	if (r)
		tap_diag("%s: tx_drop %u: %s", dev, every, strerror(r));
	return !r;
}

/* 5: the ACK lost, the requester sends again after its timeout */
static void dup_request(struct env *e)
{
	static const struct want wa[] = {
		{ "sent_pkts", 6 }, { "sent_bytes", 2 * 3048 },
		{ "rcvd_pkts", 3 }, { "rcvd_bytes", 60 },
		{ "ack_timeouts", 1 }, { "completer_retry_err", 1 },
		{ "rdma_sends", 1 }, { NULL, 0 } };
	static const struct want wb[] = {
		{ "rcvd_pkts", 6 }, { "rcvd_bytes", 2 * 3048 },
		{ "sent_pkts", 3 }, { "sent_bytes", 60 },
		{ "fault_tx_drops", 1 }, { "duplicate_request", 3 },
		{ "ack_deferred", 2 }, { "rdma_recvs", 1 }, { NULL, 0 } };
	const char *what = "ACK lost: duplicate requests";
	struct snap sa, sb;
	struct dp_conn c;
	struct dp_qp a, b;
	long drops0;
	int i;

	dp_conn_default(&c);
	c.timeout = 18;		/* 1 s: time to turn the loss off again */
	if (!pair(e, &c, &a, &b))
		return;
	dp_post_recv1(b.qp, 1, e->bbuf, 4096, e->bmr->lkey);
	snap(e->da.name, &sa);
	snap(e->db.name, &sb);
	drops0 = find(&sb, "fault_tx_drops");
	fault(e->db.name, 1);
	send1(e, &a, 61, 3000);
	for (i = 0; i < 200 && dp_hw_counter(e->db.name, "fault_tx_drops") == drops0; i++)
		usleep(5 * 1000);
	fault(e->db.name, 0);
	want_wc(b.rcq, 1, IBV_WC_RECV, 0, what);
	want_wc(a.scq, 61, IBV_WC_SEND, 0, what);
	deltas(what, e->da.name, &sa, wa);
	deltas(what, e->db.name, &sb, wb);
	unpair(&a, &b);
}

/* rxe2_fault.c's mix of the packet number (murmur3's finaliser) */
static uint32_t mix(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x85ebca6bu;
	x ^= x >> 13;
	x *= 0xc2b2ae35u;
	x ^= x >> 16;
	return x;
}

/*
 * 6: the first packet lost: the two behind it kept, a sequence NAK, one
 * retry; its first packet fills the gap, the kept two follow, the
 * resent two are duplicates (each ACKed).  ACKs: the NAK, the kept last
 * packet's, the two duplicates'.
 */
static void out_of_seq(struct env *e)
{
	static const struct want wa[] = {
		{ "sent_pkts", 5 }, { "sent_bytes", 3048 + 1040 + 968 },
		{ "rcvd_pkts", 4 }, { "rcvd_bytes", 80 },
		{ "fault_tx_drops", 1 }, { "rcvd_seq_err", 1 },
		{ "completer_retry_err", 1 }, { "rdma_sends", 1 },
		{ NULL, 0 } };
	static const struct want wb[] = {
		{ "rcvd_pkts", 5 }, { "rcvd_bytes", 3048 + 1040 + 968 },
		{ "sent_pkts", 4 }, { "sent_bytes", 80 },
		{ "out_of_seq_request", 1 }, { "ack_deferred", 2 },
		{ "out_of_order_held", 2 }, { "duplicate_request", 2 },
		{ "rdma_recvs", 1 }, { NULL, 0 } };
	const char *what = "first packet lost: sequence NAK";
	struct snap sa, sb;
	struct dp_conn c;
	struct dp_qp a, b;
	uint32_t n;

	/* of packets 1..6 since the write, only the first is lost */
	for (n = 2; n < 100000; n++) {
		uint32_t k;

		for (k = 2; k <= 6 && mix(k) % n; k++)
			;
		if (!(mix(1) % n) && k > 6)
			break;
	}
	tap_diag("%s: tx_drop %u", what, n);
	dp_conn_default(&c);
	if (!pair(e, &c, &a, &b))
		return;
	dp_post_recv1(b.qp, 1, e->bbuf, 4096, e->bmr->lkey);
	snap(e->da.name, &sa);
	snap(e->db.name, &sb);
	fault(e->da.name, n);
	send1(e, &a, 71, 3000);
	want_wc(b.rcq, 1, IBV_WC_RECV, 0, what);
	want_wc(a.scq, 71, IBV_WC_SEND, 0, what);
	fault(e->da.name, 0);
	deltas(what, e->da.name, &sa, wa);
	deltas(what, e->db.name, &sb, wb);
	unpair(&a, &b);
}

int main(void)
{
	struct env e;

	link_down();
	if (!tap_ok(link_up(), "veth ct1v (netns ct1) <-> ct2v (netns ct2), " DA
		    " and " DB)) {
		link_down();
		return tap_done();
	}
	env_open(&e, DA, DB);
	sends(&e, "SENDs of 3000 B and 13 B over the wire", 0);
	rnr(&e);
	no_peer(&e);
	dup_request(&e);
	out_of_seq(&e);
	downed(&e);	/* last: the GIDs may come back at other indexes */
	env_close(&e);
	link_down();

	if (tap_ok(dp_veth_links(), "rxe2_dp0 and rxe2_dp1 in one namespace")) {
		env_open(&e, "rxe2_dp0", "rxe2_dp1");
		sends(&e, "SENDs of 3000 B and 13 B handed over locally", 3);
		env_close(&e);
		dp_veth_links_del();
	}
	return tap_done();
}
