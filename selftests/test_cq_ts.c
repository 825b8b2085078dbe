// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: completion timestamps (CLOCK_MONOTONIC ns within the clock reads around the work, never backwards, the wall-clock variant, ibv_query_rt_values_ex) and CQ moderation by count and period
 *
 * Completion timestamps and CQ moderation.
 *
 * The device clock is CLOCK_MONOTONIC in ns: every completion of a CQ
 * created with IBV_WC_EX_WITH_COMPLETION_TIMESTAMP lies between a
 * clock_gettime() taken before the work was posted and one taken after
 * it was polled, and the stamps of one CQ never go backwards; the
 * wall-clock variant lies within the CLOCK_REALTIME reads around it.
 * ibv_query_rt_values_ex() reads the same clock.
 *
 * ibv_modify_cq(): an armed CQ with count N raises its event at the Nth
 * completion and not before; with a period it raises it that long after
 * the first completion (measured against the completion's own stamp).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dp.h"
#include "tap.h"
#include "util.h"

#define TS_FLAGS (IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |                       \
		  IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
#define NMSG 16
/* what the provider's monotonic-to-wall conversion may be off by */
#define WALL_SLACK_NS 1000000ull

static struct dp_dev dev;
static uint8_t *buf;
static struct ibv_mr *mr;

static uint64_t now_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct ibv_cq_ex *mkcq(uint64_t wc_flags, struct ibv_comp_channel *ch)
{
	struct ibv_cq_init_attr_ex a = {
		.cqe = 64,
		.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | wc_flags,
		.channel = ch,
	};
	struct ibv_cq_ex *cq = ibv_create_cq_ex(dev.ctx, &a);

	if (!cq)
		tap_bail("ibv_create_cq_ex: %s", strerror(errno));
	return cq;
}

/* An RC QP pair on loopback: a sends on scq, b receives on rcq */
static void rc_pair(struct ibv_cq_ex *scq, struct ibv_cq_ex *rcq,
		    struct ibv_qp **a, struct ibv_qp **b)
{
	struct ibv_cq *s = ibv_cq_ex_to_cq(scq), *r = ibv_cq_ex_to_cq(rcq);
	struct ibv_qp_cap cap = dp_small_cap;
	struct dp_conn c;

	*a = dp_create_qp(&dev, IBV_QPT_RC, s, s, NULL, &cap);
	*b = dp_create_qp(&dev, IBV_QPT_RC, r, r, NULL, &cap);
	dp_conn_default(&c);
	if (!*a || !*b || dp_connect(*a, &dev, &dev.gid, (*b)->qp_num, &c) ||
	    dp_connect(*b, &dev, &dev.gid, (*a)->qp_num, &c))
		tap_bail("RC pair: %s", strerror(errno));
}

struct stamp {
	uint64_t wr_id, ts, wall;
	int status;
};

struct stamps {
	struct stamp *st;
	bool wall;
};

static void read_stamp(struct ibv_cq_ex *cq, int k, void *arg)
{
	struct stamps *s = arg;

	s->st[k].wr_id = cq->wr_id;
	s->st[k].status = cq->status;
	s->st[k].ts = ibv_wc_read_completion_ts(cq);
	s->st[k].wall = s->wall ? ibv_wc_read_completion_wallclock_ns(cq) : 0;
}

/* Up to n completions within the deadline, with their stamps */
static int collect(struct ibv_cq_ex *cq, struct stamp *st, int n,
		   bool wall)
{
	struct stamps s = { .st = st, .wall = wall };

	return dp_poll_ex(cq, n, read_stamp, &s);
}

static void test_caps(void)
{
	struct ibv_device_attr_ex a;
	struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };
	uint64_t before, after, raw;

	memset(&a, 0, sizeof(a));
	if (!tap_ret_errno(ibv_query_device_ex(dev.ctx, NULL, &a), 0,
			   "ibv_query_device_ex"))
		return;
	tap_ok(a.completion_timestamp_mask == UINT64_MAX,
	       "completion_timestamp_mask is all 64 bits (%#llx)",
	       (unsigned long long)a.completion_timestamp_mask);
	tap_ret((long)a.hca_core_clock, 1000000,
		"hca_core_clock is 1000000 kHz: the clock counts ns");
	tap_ret(a.cq_mod_caps.max_cq_count, 65535, "max_cq_count 65535");
	tap_ret(a.cq_mod_caps.max_cq_period, 4095, "max_cq_period 4095 us");

	before = now_ns(CLOCK_MONOTONIC);
	tap_ret_errno(ibv_query_rt_values_ex(dev.ctx, &v), 0,
		      "ibv_query_rt_values_ex(RAW_CLOCK)");
	after = now_ns(CLOCK_MONOTONIC);
	raw = (uint64_t)v.raw_clock.tv_nsec;
	tap_ok(v.comp_mask == IBV_VALUES_MASK_RAW_CLOCK &&
	       v.raw_clock.tv_sec == 0 && raw >= before && raw <= after,
	       "the raw clock is CLOCK_MONOTONIC in ns, read between two clock_gettime()");
	v.comp_mask = IBV_VALUES_MASK_RAW_CLOCK << 1;
	tap_ret_errno(ibv_query_rt_values_ex(dev.ctx, &v), EINVAL,
		      "ibv_query_rt_values_ex with an unknown comp_mask bit -> EINVAL");
}

static void test_refused_flags(void)
{
	struct ibv_cq_init_attr_ex a = {
		.cqe = 16,
		.wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
			    IBV_WC_EX_WITH_CVLAN,
	};

	tap_null_errno(ibv_create_cq_ex(dev.ctx, &a), EOPNOTSUPP,
		       "timestamps with a VLAN a CQE cannot carry -> EOPNOTSUPP");
}

/* Every stamp of a CQ lies in [lo, hi] and none is before the previous */
static void check_stamps(const struct stamp *st, int n, uint64_t lo,
			 uint64_t hi, const char *what)
{
	uint64_t prev = 0;
	bool ok = true;
	int i;

	for (i = 0; i < n; i++) {
		if (st[i].ts < lo || st[i].ts > hi || st[i].ts < prev) {
			tap_diag("  %s %d: ts %llu, window [%llu, %llu], previous %llu",
				 what, i, (unsigned long long)st[i].ts,
				 (unsigned long long)lo,
				 (unsigned long long)hi,
				 (unsigned long long)prev);
			ok = false;
		}
		prev = st[i].ts;
	}
	tap_ok(ok, "%s: %d stamps within the clock_gettime() window, in order",
	       what, n);
}

static void check_wall(const struct stamp *st, int n, uint64_t lo,
		       uint64_t hi, const char *what)
{
	bool ok = true;
	int i;

	for (i = 0; i < n; i++)
		if (st[i].wall + WALL_SLACK_NS < lo ||
		    st[i].wall > hi + WALL_SLACK_NS) {
			tap_diag("  %s %d: wall %llu, window [%llu, %llu]",
				 what, i, (unsigned long long)st[i].wall,
				 (unsigned long long)lo,
				 (unsigned long long)hi);
			ok = false;
		}
	tap_ok(ok, "%s: wall-clock stamps within CLOCK_REALTIME's window (1 ms)",
	       what);
}

static void test_timestamps(void)
{
	struct ibv_cq_ex *scq = mkcq(TS_FLAGS, NULL);
	struct ibv_cq_ex *rcq = mkcq(TS_FLAGS, NULL);
	struct stamp s[NMSG], r[NMSG];
	uint64_t m0, m1, w0, w1;
	struct ibv_qp *a, *b;
	int i, ns, nr;
	bool ok = true;

	rc_pair(scq, rcq, &a, &b);
	dp_fill(buf, 4096, 7);
	for (i = 0; i < NMSG; i++)
		if (dp_post_recv1(b, 0x100 + i, buf + 8192 + i * 256, 256,
				  mr->lkey))
			tap_bail("post_recv: %s", strerror(errno));
	m0 = now_ns(CLOCK_MONOTONIC);
	w0 = now_ns(CLOCK_REALTIME);
	for (i = 0; i < NMSG; i++)
		if (dp_post_send1(a, 0x200 + i, IBV_WR_SEND, buf + i * 256,
				  256, mr->lkey, 0, 0, 0))
			tap_bail("post_send: %s", strerror(errno));
	ns = collect(scq, s, NMSG, true);
	nr = collect(rcq, r, NMSG, true);
	m1 = now_ns(CLOCK_MONOTONIC);
	w1 = now_ns(CLOCK_REALTIME);
	tap_ret(ns, NMSG, "%d SEND completions", NMSG);
	tap_ret(nr, NMSG, "%d RECV completions", NMSG);
	for (i = 0; i < ns; i++)
		ok &= s[i].status == IBV_WC_SUCCESS && s[i].wr_id == 0x200u + i;
	for (i = 0; i < nr; i++)
		ok &= r[i].status == IBV_WC_SUCCESS && r[i].wr_id == 0x100u + i;
	tap_ok(ok, "all completions successful, in posting order");
	tap_ok(dp_verify(buf + 8192, NMSG * 256, 7) < 0,
	       "the %d messages arrived byte-exact", NMSG);
	check_stamps(s, ns, m0, m1, "send CQ");
	check_stamps(r, nr, m0, m1, "receive CQ");
	check_wall(s, ns, w0, w1, "send CQ");
	check_wall(r, nr, w0, w1, "receive CQ");
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	ibv_destroy_cq(ibv_cq_ex_to_cq(scq));
	ibv_destroy_cq(ibv_cq_ex_to_cq(rcq));
}

/* A CQ that did not ask for stamps: the kernel leaves them 0 */
static void test_no_timestamps(void)
{
	struct ibv_cq_ex *cq = mkcq(0, NULL);
	struct ibv_qp *a, *b;
	struct stamp s;

	rc_pair(cq, cq, &a, &b);
	if (dp_post_send1(a, 0x300, IBV_WR_RDMA_WRITE, buf, 64, mr->lkey,
			  (uintptr_t)buf + 4096, mr->rkey, 0))
		tap_bail("post_send: %s", strerror(errno));
	if (tap_ret(collect(cq, &s, 1, false), 1,
		    "CQ without timestamps: the WRITE completes"))
		tap_ok(s.status == IBV_WC_SUCCESS && s.ts == 0,
		       "its completion carries no stamp (0)");
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
}

/* One completion event within ms, acknowledged; false if none came */
static bool wait_event(struct ibv_comp_channel *ch, int ms)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	struct ibv_cq *cq;
	void *ctx;

	if (poll(&p, 1, ms) != 1)
		return false;
	if (ibv_get_cq_event(ch, &cq, &ctx))
		return false;
	ibv_ack_cq_events(cq, 1);
	return true;
}

static int post_writes(struct ibv_qp *qp, int n, uint64_t wr_id)
{
	int i;

	for (i = 0; i < n; i++)
		if (dp_post_send1(qp, wr_id + i, IBV_WR_RDMA_WRITE, buf, 64,
				  mr->lkey, (uintptr_t)buf + 4096, mr->rkey, 0))
			return -1;
	return 0;
}

static int modify(struct ibv_cq_ex *cq, uint32_t mask, uint16_t count,
		  uint16_t period)
{
	struct ibv_modify_cq_attr m = {
		.attr_mask = mask,
		.moderate = { .cq_count = count, .cq_period = period },
	};

	return ibv_modify_cq(ibv_cq_ex_to_cq(cq), &m);
}

/*
 * Moderate the CQ (count, period), arm it, post n WRITEs on qp and
 * collect their completions into s; TAP lines start with what.
 */
static void moderated_writes(struct ibv_cq_ex *cq, struct ibv_qp *qp,
			     uint16_t count, uint16_t period, int n,
			     struct stamp *s, const char *what)
{
	tap_ret_errno(modify(cq, IBV_CQ_ATTR_MODERATE, count, period), 0,
		      "%s: ibv_modify_cq count %u, period %u us", what, count,
		      period);
	tap_ret_errno(ibv_req_notify_cq(ibv_cq_ex_to_cq(cq), 0), 0,
		      "%s: arm the CQ", what);
	if (post_writes(qp, n, 0x400))
		tap_bail("post_send: %s", strerror(errno));
	tap_ret(collect(cq, s, n, false), n, "%s: %d WRITEs complete", what,
		n);
}

static void test_moderation_errors(struct ibv_cq_ex *cq)
{
	struct ibv_cq *plain = ibv_create_cq(dev.ctx, 16, NULL, NULL, 0);
	struct ibv_modify_cq_attr m = {
		.attr_mask = IBV_CQ_ATTR_MODERATE,
		.moderate = { .cq_count = 8, .cq_period = 100 },
	};

	tap_ret_errno(modify(cq, IBV_CQ_ATTR_MODERATE, 65535, 4095), 0,
		      "ibv_modify_cq count 65535, period 4095 us (the maxima)");
	tap_ret_errno(modify(cq, IBV_CQ_ATTR_MODERATE, 1, 4096), EINVAL,
		      "ibv_modify_cq period 4096 us -> EINVAL");
	tap_ret_errno(modify(cq, 0, 1, 1), EINVAL,
		      "ibv_modify_cq with no attribute -> EINVAL");
	tap_ret_errno(modify(cq, IBV_CQ_ATTR_MODERATE << 1, 1, 1), EINVAL,
		      "ibv_modify_cq with an unknown attribute -> EINVAL");
	if (!plain)
		tap_bail("ibv_create_cq: %s", strerror(errno));
	tap_ret_errno(ibv_modify_cq(plain, &m), 0,
		      "ibv_modify_cq on a CQ from ibv_create_cq");
	ibv_destroy_cq(plain);
}

static void test_moderation(void)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(dev.ctx);
	struct ibv_cq_ex *cq;
	struct ibv_qp *a, *b;
	struct stamp s[8];
	uint64_t t_event;

	if (!ch)
		tap_bail("ibv_create_comp_channel: %s", strerror(errno));
	cq = mkcq(IBV_WC_EX_WITH_COMPLETION_TIMESTAMP, ch);
	rc_pair(cq, cq, &a, &b);
	test_moderation_errors(cq);

	tap_ret_errno(modify(cq, IBV_CQ_ATTR_MODERATE, 7, 1500), 0,
		      "moderate: count 7, period 1500 us");
	tap_ok(dp_res_detail(dev.name, "cq", "", "moder_count", "7") &&
	       dp_res_detail(dev.name, "cq", "", "moder_period_us", "1500") &&
	       dp_res_detail(dev.name, "cq", "", "timestamps", "1"),
	       "rdma resource show cq -dd: moder_count 7, moder_period_us 1500, timestamps 1");

	/* count 4: three completions raise nothing, the fourth the event */
	moderated_writes(cq, a, 4, 0, 3, s, "count 4");
	tap_ok(!wait_event(ch, 500), "count 4: no event after three completions");
	post_writes(a, 1, 0x10);
	tap_ret(collect(cq, s, 1, false), 1, "count 4: a fourth WRITE completes");
	tap_ok(wait_event(ch, DP_WAIT_MS), "count 4: the fourth raises the event");
	tap_ok(!wait_event(ch, 200), "count 4: one event, not more");

	/* a period: one completion, the event that long after it */
	moderated_writes(cq, a, 1000, 3000, 1, s, "period");
	tap_ok(wait_event(ch, DP_WAIT_MS), "period: the event comes without more completions");
	t_event = now_ns(CLOCK_MONOTONIC);
	tap_ok(s[0].ts && t_event - s[0].ts >= 3000000,
	       "period: the event came >= 3000 us after the completion (%llu us)",
	       (unsigned long long)(t_event - s[0].ts) / 1000);

	/* count 0 with a period: only the period ends the wait */
	moderated_writes(cq, a, 0, 2000, 5, s, "count 0");
	tap_ok(wait_event(ch, DP_WAIT_MS), "count 0: one event for them");
	t_event = now_ns(CLOCK_MONOTONIC);
	tap_ok(t_event - s[0].ts >= 2000000,
	       "count 0: >= 2000 us after the first completion (%llu us)",
	       (unsigned long long)(t_event - s[0].ts) / 1000);
	tap_ok(!wait_event(ch, 200), "count 0: one event, not five");

	/* moderation off again: the next completion raises the event */
	moderated_writes(cq, a, 0, 0, 1, s, "off");
	tap_ok(wait_event(ch, DP_WAIT_MS), "off: its completion raises the event");

	/*
	 * destroy right after a completion started a period (under TCG the
	 * QPs' destruction may outlast it: then the timer has fired)
	 */
	moderated_writes(cq, a, 0, 4095, 1, s, "destroy");
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	tap_ret_errno(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)), 0,
		      "ibv_destroy_cq right after the period started");
	tap_ret_errno(ibv_destroy_comp_channel(ch), 0,
		      "ibv_destroy_comp_channel");
}

int main(void)
{
	dp_open(&dev, test_dev_name());
	buf = dp_alloc(65536);
	mr = dp_reg(dev.pd, buf, 65536, DP_ACCESS_ALL);
	test_caps();
	test_refused_flags();
	test_timestamps();
	test_no_timestamps();
	test_moderation();
	ibv_dereg_mr(mr);
	dp_close(&dev);
	return tap_done();
}
