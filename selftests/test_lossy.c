// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: nothing lost on a lossy link between two namespaces (netem, tx_drop, fault rules): SENDs, WRITEs, READs and atomics exactly once, rping; a reordering link resends only what is asked
 *
 * Nothing lost on a lossy link.  Two rxe2 devices on the ends of a veth
 * whose ends sit in two namespaces, made lossy twice over: first netem
 * on both ends (1 % loss, 1 % duplication, 0.5 % corruption, 5 %
 * reordering, 2 ms delay for the rest), then, without netem, rxe2's own
 * fault injection on both devices: tx_drop (one packet in 50 lost),
 * then fault rules (configfs, RULES: about 1 % each
 * of loss, duplication, reordering, 2 ms delay, 0.5 % bad ICRCs).  Each
 * time one RC pair between the devices (this process uses both from the
 * initial namespace) carries, each phase bounded:
 *
 *   SENDs of 1 B .. 16 KiB, in order and byte for byte;
 *   WRITEs to random ranges of 1 MiB, the target equal to the writes
 *   applied in order;
 *   READs of random ranges, byte for byte;
 *   FETCH_ADDs returning 0, 1, 2, ... exactly (a duplicated or retried
 *   atomic must not run twice) and a COMPARE_SWAP chain;
 *
 * and RDMA CM connections (rping -V, verified data) run over the same
 * link.  The device's retransmission counters must show that the link
 * did lose packets (and fault_tx_drops or fault_injected that the
 * injection did).
 *
 * A second link only reorders (netem: a quarter of the packets sent at
 * once, the rest 2 ms later).  Nothing is lost there, so once the
 * requester has seen that the responder keeps what comes early, a
 * resend is the packet a sequence NAK or a tail-loss probe names and
 * nothing more.  Before that is learnt, a NAK or a probe goes back N;
 * so does an ACK timeout.  Over the SENDs and WRITEs the responder may
 * see at most one duplicate per NAK and probe, plus two windows (256
 * packets each) for the learning and two per ACK timeout.  A gap closed
 * by its late packet before the NAK's resend went out used to make the
 * requester resend everything it had sent after the gap: thousands.
 *
 * The seed is printed; RXE2_SEED replays it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dp.h"
#include "tap.h"
#include "util.h"

#define DA	"nl1rxe2"
#define DB	"nl2rxe2"
#define NETEM	"delay 2ms reorder 5% 50% loss 1% duplicate 1% corrupt 0.5%"
#define NETEM_REORDER	"delay 2ms reorder 25% 50%"
/* the most one go-back-N resends: RXE2_MAX_INFLIGHT in rxe/rxe2_dp.h */
#define MAX_INFLIGHT	256
#define BIG	(1u << 20)
#define MAXMSG	16384
#define WINDOW	16
#define PHASE_MS 120000
/* the fault rules of the fourth run, on both devices */
static const char *const rules[] = {
	"drop rate=100", "dup rate=100", "reorder rate=100",
	"delay rate=100 ms=2", "corrupt rate=200",
};

enum lossy_kind { LOSSY_NETEM, LOSSY_REORDER, LOSSY_TX_DROP, LOSSY_RULES };

static uint64_t rng;

static uint32_t rnd(uint32_t n)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (uint32_t)((rng * 0x2545f4914f6cdd1dULL) >> 32) % n;
}

static unsigned long long ms_since(uint64_t t0)
{
	return (unsigned long long)(dp_now_ms() - t0);
}

/* netem: the qdisc on both ends; NULL: none (fault injection instead) */
static bool link_up(const char *netem)
{
	return !dp_sh(
		"ip netns add nl1 && ip netns add nl2 && "
		"ip -n nl1 link add nl1v type veth peer name nl2v netns nl2 && "
		"ip -n nl1 addr add 10.79.6.1/24 dev nl1v && "
		"ip -n nl2 addr add 10.79.6.2/24 dev nl2v && "
		"ip -n nl1 link set nl1v up && ip -n nl2 link set nl2v up && "
		"ip -n nl1 link set lo up && ip -n nl2 link set lo up && "
		"ip netns exec nl1 rdma link add " DA " type rxe2 netdev nl1v && "
		"ip netns exec nl2 rdma link add " DB " type rxe2 netdev nl2v && "
		/*
		 * Neighbours fixed before the loss starts: an ARP lost to
		 * netem would fail ib_core's address resolution at
		 * connect time (modify_qp to RTR), which is not what this
		 * test is about.
		 */
		"ip -n nl1 neigh replace 10.79.6.2 dev nl1v nud permanent lladdr "
		"$(ip netns exec nl2 cat /sys/class/net/nl2v/address) && "
		"ip -n nl2 neigh replace 10.79.6.1 dev nl2v nud permanent lladdr "
		"$(ip netns exec nl1 cat /sys/class/net/nl1v/address) && "
		"{ [ -z '%s' ] || tc -n nl1 qdisc add dev nl1v root netem %s; } && "
		"{ [ -z '%s' ] || tc -n nl2 qdisc add dev nl2v root netem %s; } && "
		"for i in $(seq 100); do "
		"grep -qs ffff:0a4f:0601 /sys/class/infiniband/" DA "/ports/1/gids/* && "
		"grep -qs ffff:0a4f:0602 /sys/class/infiniband/" DB "/ports/1/gids/* && exit 0; "
		"sleep 0.1; done; exit 1", netem ? netem : "", netem ? netem : "",
		netem ? netem : "", netem ? netem : "");
}

static void link_down(void)
{
	dp_sh("ip netns del nl1 2>/dev/null; ip netns del nl2 2>/dev/null; "
	      "for i in $(seq 100); do [ -e /sys/class/infiniband/" DA " ] || "
	      "[ -e /sys/class/infiniband/" DB " ] || exit 0; sleep 0.1; done");
	/* the devices' directories, outliving them, go too (rules, then each) */
	dp_fault_write(DA, "clear");
	dp_fault_write(DB, "clear");
}

/* a's buffers: src (SENDs, WRITEs), rd (READ results, atomic originals);
 * b's: rcv (SEND receives), big (WRITE and READ target, the counter) */
struct lossy {
	struct dp_dev da, db;
	struct dp_qp a, b;
	uint8_t *src, *rd, *rcv, *big, *image;
	struct ibv_mr *smr, *rdmr, *rcvmr, *bmr;
};

/* completions of n signaled WRs on cq, each SUCCESS; false otherwise */
static bool reap(struct ibv_cq *cq, struct ibv_wc *wc, int n, uint64_t end)
{
	for (int got = 0; got < n;) {
		int left = (int)(end - dp_now_ms());
		int r;

		if (left <= 0)
			return false;
		r = dp_poll(cq, wc + got, 1, left);
		if (r != 1)
			return false;
		if (wc[got].status != IBV_WC_SUCCESS) {
			tap_diag("completion %s", dp_status_str(wc[got].status));
			return false;
		}
		got++;
	}
	return true;
}

/* n SENDs of random sizes a -> b; returns how many arrived exact */
static int sends(struct lossy *l, int n, uint32_t seed)
{
	uint64_t end = dp_now_ms() + PHASE_MS;
	uint32_t len[WINDOW * 2];
	struct ibv_wc wc[WINDOW];
	int good = 0;

	for (int i = 0; i < n; i += WINDOW) {
		int k = n - i < WINDOW ? n - i : WINDOW;

		for (int j = 0; j < k; j++) {
			uint8_t *s = l->src + (size_t)j * MAXMSG;
			uint8_t *d = l->rcv + (size_t)j * MAXMSG;

			len[j] = 1 + rnd(MAXMSG);
			dp_fill(s, len[j], seed + (uint32_t)(i + j));
			memset(d, 0, MAXMSG);
			if (dp_post_recv1(l->b.qp, (uint64_t)j, d, MAXMSG,
					  l->rcvmr->lkey) ||
			    dp_post_send1(l->a.qp, (uint64_t)j, IBV_WR_SEND, s,
					  len[j], l->smr->lkey, 0, 0, 0))
				return good;
		}
		if (!reap(l->a.scq, wc, k, end) || !reap(l->b.rcq, wc, k, end))
			return good;
		for (int j = 0; j < k; j++)
			good += wc[j].wr_id == (uint64_t)j &&
				wc[j].byte_len == len[j] &&
				dp_verify(l->rcv + (size_t)j * MAXMSG, len[j],
					  seed + (uint32_t)(i + j)) < 0;
	}
	return good;
}

/* n WRITEs a -> b's big buffer; true when it ends equal to the image */
static bool writes(struct lossy *l, int n, uint32_t seed)
{
	uint64_t end = dp_now_ms() + PHASE_MS;
	struct ibv_wc wc[WINDOW];

	memset(l->big, 0, BIG);
	memset(l->image, 0, BIG);
	for (int i = 0; i < n; i += WINDOW) {
		int k = n - i < WINDOW ? n - i : WINDOW;

		for (int j = 0; j < k; j++) {
			uint32_t len = 1 + rnd(MAXMSG), off = rnd(BIG - len);
			uint8_t *s = l->src + (size_t)j * MAXMSG;

			dp_fill(s, len, seed + (uint32_t)(i + j));
			memcpy(l->image + off, s, len);	/* in PSN order */
			if (dp_post_send1(l->a.qp, (uint64_t)j,
					  IBV_WR_RDMA_WRITE, s, len,
					  l->smr->lkey,
					  (uintptr_t)l->big + off,
					  l->bmr->rkey, 0))
				return false;
		}
		if (!reap(l->a.scq, wc, k, end))
			return false;
	}
	return !memcmp(l->big, l->image, BIG);
}

/* n READs of b's big buffer into a; returns how many came back exact */
static int reads(struct lossy *l, int n, uint32_t seed)
{
	uint64_t end = dp_now_ms() + PHASE_MS;
	uint32_t off[WINDOW], len[WINDOW];
	struct ibv_wc wc[WINDOW];
	int good = 0;

	dp_fill(l->big, BIG, seed);
	for (int i = 0; i < n; i += WINDOW) {
		int k = n - i < WINDOW ? n - i : WINDOW;

		for (int j = 0; j < k; j++) {
			uint8_t *d = l->rd + (size_t)j * MAXMSG;

			len[j] = 1 + rnd(MAXMSG);
			off[j] = rnd(BIG - len[j]);
			memset(d, 0, MAXMSG);
			if (dp_post_send1(l->a.qp, (uint64_t)j,
					  IBV_WR_RDMA_READ, d, len[j],
					  l->rdmr->lkey,
					  (uintptr_t)l->big + off[j],
					  l->bmr->rkey, 0))
				return good;
		}
		if (!reap(l->a.scq, wc, k, end))
			return good;
		for (int j = 0; j < k; j++)
			good += !memcmp(l->rd + (size_t)j * MAXMSG,
					l->big + off[j], len[j]);
	}
	return good;
}

/*
 * n FETCH_ADDs of 1 then n COMPARE_SWAPs i -> i + 1 on one counter; the
 * number of them that returned exactly the value they must
 */
static int atomics(struct lossy *l, int n)
{
	uint64_t end = dp_now_ms() + PHASE_MS, *ctr = (uint64_t *)l->big;
	uint64_t *orig = (uint64_t *)l->rd;
	struct ibv_sge sge = { .length = 8, .lkey = l->rdmr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;
	int good = 0;

	*ctr = 0;
	wr.wr.atomic.remote_addr = (uintptr_t)ctr;
	wr.wr.atomic.rkey = l->bmr->rkey;
	for (int i = 0; i < 2 * n; i++) {
		bool add = i < n;

		*orig = ~0ull;
		sge.addr = (uintptr_t)orig;
		wr.opcode = add ? IBV_WR_ATOMIC_FETCH_AND_ADD :
				  IBV_WR_ATOMIC_CMP_AND_SWP;
		wr.wr.atomic.compare_add = add ? 1 : (uint64_t)i;
		wr.wr.atomic.swap = (uint64_t)i + 1;
		if (ibv_post_send(l->a.qp, &wr, &bad) || !reap(l->a.scq, &wc, 1, end))
			break;
		good += *orig == (uint64_t)i;
	}
	if (*ctr != (uint64_t)(2 * n))
		tap_diag("counter %llu, want %d", (unsigned long long)*ctr, 2 * n);
	return *ctr == (uint64_t)(2 * n) ? good : 0;
}

static bool rping_v(void)
{
	return !dp_sh(
		"(timeout -k 2 60 ip netns exec nl1 rping -s -a 10.79.6.1 -p 7191 -C 30 -S 4000 -V "
		">/tmp/lossy.srv 2>&1 &) ; "
		"for i in $(seq 100); do rdma resource show cm_id | grep -q 'LISTEN.*:7191 ' && break; sleep 0.1; done; "
		"timeout -k 2 60 ip netns exec nl2 rping -c -a 10.79.6.1 -p 7191 -C 30 -S 4000 -V "
		">/tmp/lossy.cli 2>&1 || { tail -5 /tmp/lossy.srv /tmp/lossy.cli; exit 1; }");
}

static bool setup(struct lossy *l)
{
	struct ibv_qp_cap cap = dp_small_cap;
	struct dp_conn c;
	int err;
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		  IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

	dp_open(&l->da, DA);
	dp_open(&l->db, DB);
	l->src = dp_alloc(WINDOW * MAXMSG);
	l->rd = dp_alloc(WINDOW * MAXMSG);
	l->rcv = dp_alloc(WINDOW * MAXMSG);
	l->big = dp_alloc(BIG);
	l->image = dp_alloc(BIG);
	l->smr = dp_reg(l->da.pd, l->src, WINDOW * MAXMSG, acc);
	l->rdmr = dp_reg(l->da.pd, l->rd, WINDOW * MAXMSG, acc);
	l->rcvmr = dp_reg(l->db.pd, l->rcv, WINDOW * MAXMSG, acc);
	l->bmr = dp_reg(l->db.pd, l->big, BIG, acc);
	if (!l->smr || !l->rdmr || !l->rcvmr || !l->bmr)
		return false;
	dp_conn_default(&c);
	/*
	 * The default ACK timeout (67 ms).  Where selftests/run gives tests
	 * more time (RXE2_TEST_TIMEOUT above 180 s: the sanitizer kernel,
	 * about five times slower), 4x that: there a go-back-N round of a
	 * full window through netem outlasted 8 x 67 ms (RETRY_EXC_ERR).
	 */
	if (time_scale() > 1)
		c.timeout += 2;
	c.rd_atomic = 4;
	err = dp_pair(&l->da, &l->db, IBV_QPT_RC, &cap, &c, &l->a, &l->b);
	if (err)
		tap_diag("dp_pair: %s", strerror(err));
	return !err;
}

static bool fault_set(unsigned int every)
{
	int r = dp_fault_tx_drop(DA, every);

	if (!r)
		r = dp_fault_tx_drop(DB, every);
	if (r)
		tap_diag("tx_drop %u: %s", every, strerror(r));
	return !r;
}

/* one rule on one device; a failure says why */
static bool rule_set(const char *ibdev, const char *rule)
{
	int r = dp_fault_write(ibdev, rule);

	if (r)
		tap_diag("%s: fault rule \"%s\": %s", ibdev,
			 rule, strerror(r));
	return !r;
}

static bool rules_set(void)
{
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
		if (!rule_set(DA, rules[i]) || !rule_set(DB, rules[i]))
			return false;
	return true;
}

static bool lossy_set(enum lossy_kind kind)
{
	switch (kind) {
	case LOSSY_TX_DROP:
		return fault_set(50);
	case LOSSY_RULES:
		return rules_set();
	default:
		return true;
	}
}

static long injected(void)
{
	return dp_hw_counter(DA, "fault_tx_drops") +
	       dp_hw_counter(DB, "fault_tx_drops") +
	       dp_hw_counter(DA, "fault_injected") +
	       dp_hw_counter(DB, "fault_injected");
}

/*
 * A reordering link's SENDs and WRITEs, from the counters run() read
 * before them: nothing resent but what a NAK or probe asked for.
 */
static void resends_check(const char *what, long sn0, long dup0, long to0,
			  long probe0)
{
	long naks = dp_hw_counter(DB, "out_of_seq_request") - sn0;
	long dups = dp_hw_counter(DB, "duplicate_request") - dup0;
	long timeouts = dp_hw_counter(DA, "ack_timeouts") - to0;
	long probes = dp_hw_counter(DA, "tail_probes") - probe0;
	long bound = naks + probes + 2 * MAX_INFLIGHT * (1 + timeouts);

	tap_diag("%s: SENDs and WRITEs: " DB ": out_of_seq_request +%ld, "
		 "duplicate_request +%ld; " DA ": tail_probes +%ld, "
		 "ack_timeouts +%ld",
		 what, naks, dups, probes, timeouts);
	tap_ok(dups <= bound,
	       "%s: only what a NAK or probe named was resent: %ld duplicates, at most %ld",
	       what, dups, bound);
}

/* every phase over one lossy link: netem (a qdisc) or fault injection */
static void run(const char *what, enum lossy_kind kind, uint32_t seed)
{
	const char *netem = kind == LOSSY_NETEM ? NETEM :
			    kind == LOSSY_REORDER ? NETEM_REORDER : NULL;
	static struct lossy l;
	long rtx0, rtx1, to0, to1, sn0, sn1, dup0, dup1, f0, f1;
	long probe0;
	uint64_t t0;
	int got;

	memset(&l, 0, sizeof(l));
	link_down();
	if (!tap_ok(link_up(netem) && lossy_set(kind),
		    "%s: two namespaces, a veth, " DA " and " DB, what)) {
		link_down();
		tap_bail("no lossy link");
	}
	if (!tap_ok(setup(&l), "%s: an RC pair from " DA " to " DB, what)) {
		link_down();
		tap_bail("no RC pair");
	}
	rtx0 = dp_hw_counter(DA, "completer_retry_err");
	to0 = dp_hw_counter(DA, "ack_timeouts");
	sn0 = dp_hw_counter(DB, "out_of_seq_request");
	dup0 = dp_hw_counter(DB, "duplicate_request");
	f0 = injected();
	probe0 = dp_hw_counter(DA, "tail_probes");

	t0 = dp_now_ms();
	got = sends(&l, 500, seed);
	tap_ret(got, 500,
		"%s: 500 SENDs of 1 B..16 KiB arrive in order, byte for byte (%llu ms)",
		what, ms_since(t0));
	t0 = dp_now_ms();
	got = writes(&l, 500, seed + 1000);
	tap_ok(got,
	       "%s: 500 WRITEs of 1 B..16 KiB: the 1 MiB target equals them applied in order (%llu ms)",
	       what, ms_since(t0));
	if (kind == LOSSY_REORDER)
		resends_check(what, sn0, dup0, to0, probe0);
	t0 = dp_now_ms();
	got = reads(&l, 500, seed + 2000);
	tap_ret(got, 500,
		"%s: 500 READs of 1 B..16 KiB come back byte for byte (%llu ms)",
		what, ms_since(t0));
	t0 = dp_now_ms();
	got = atomics(&l, 150);
	tap_ret(got, 300,
		"%s: 150 FETCH_ADDs return 0..149 and 150 COMPARE_SWAPs succeed, each exactly once (%llu ms)",
		what, ms_since(t0));
	tap_ret(qp_state(l.a.qp), IBV_QPS_RTS, "%s: the requester is still in RTS",
		what);

	rtx1 = dp_hw_counter(DA, "completer_retry_err");
	to1 = dp_hw_counter(DA, "ack_timeouts");
	sn1 = dp_hw_counter(DB, "out_of_seq_request");
	dup1 = dp_hw_counter(DB, "duplicate_request");
	f1 = injected();
	tap_diag("%s: " DA ": completer_retry_err +%ld, ack_timeouts +%ld; " DB
		 ": out_of_seq_request +%ld, duplicate_request +%ld; faults injected +%ld",
		 what, rtx1 - rtx0, to1 - to0, sn1 - sn0, dup1 - dup0, f1 - f0);
	if (kind != LOSSY_REORDER)
		tap_ok(rtx1 > rtx0 && dup1 > dup0 && (netem || f1 > f0),
		       "%s: the link lost packets: the requester went back, the responder saw duplicates",
		       what);
	t0 = dp_now_ms();
	got = rping_v();
	tap_ok(got, "%s: rping -V over RDMA CM across the link, 30 pings of 4000 B (%llu ms)",
	       what, ms_since(t0));

	dp_qp_free(&l.a);
	dp_qp_free(&l.b);
	ibv_dereg_mr(l.smr);
	ibv_dereg_mr(l.rdmr);
	ibv_dereg_mr(l.rcvmr);
	ibv_dereg_mr(l.bmr);
	dp_close(&l.da);
	dp_close(&l.db);
	link_down();
	tap_ok(access("/sys/class/infiniband/" DA, F_OK) &&
	       access("/sys/class/infiniband/" DB, F_OK),
	       "%s: namespaces deleted, the devices with them", what);
}

int main(void)
{
	const char *env = getenv("RXE2_SEED");
	uint32_t seed = env ? (uint32_t)strtoul(env, NULL, 0) :
			      (uint32_t)time(NULL);

	rng = seed | 1;
	tap_plan(40);
	tap_diag("seed %u (RXE2_SEED to replay)", seed);
	run("netem " NETEM, LOSSY_NETEM, seed);
	run("netem " NETEM_REORDER, LOSSY_REORDER, seed + 21);
	run("tx_drop 50", LOSSY_TX_DROP, seed + 7);
	run("fault rules", LOSSY_RULES, seed + 14);
	return tap_done();
}
