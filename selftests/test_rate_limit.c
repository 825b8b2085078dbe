// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: packet pacing (IBV_QP_RATE_LIMIT) on RC, UC, UD and raw packet QPs: packet_pacing_caps, refused rates, bursts and states, transfers no faster than the rate and byte-exact, destroy while paced
 *
 * Packet pacing: IBV_QP_RATE_LIMIT (ibv_modify_qp_rate_limit and
 * ibv_modify_qp) on RC, UC, UD and raw packet QPs.
 *
 * The device reports its range in packet_pacing_caps and refuses a
 * rate outside it, a burst size, and a QP not going into or staying in
 * RTS.  A paced transfer can take no less time than its payload needs
 * at the rate (a slower machine only makes it longer, so the bound is
 * safe under TCG); its data still arrives byte-exact.  A raw packet
 * QP's frames are paced the same way (ib_core allows the attribute on
 * raw packet QPs in the first place) and leave byte for byte, as a tap
 * on the netdev shows.  A QP destroyed while its pacing timer waits
 * goes cleanly.
 */
#include <errno.h>
#include <linux/if_packet.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "dp.h"
#include "tap.h"
#include "util.h"

#define RATE_MIN 1000u		/* kbps, as the provider reports them */
#define RATE_MAX 100000000u
#define PACED_KBPS 8000u	/* 1 MB/s */
#define LEN (256 * 1024)
/* what an idle QP may catch up (rxe/rxe2_pace.c), in s */
#define PACE_SLACK 0.001

static struct dp_dev dev;
static uint8_t *buf;
static struct ibv_mr *mr;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* seconds that bytes of payload take at kbps */
static double wire_time(double bytes, unsigned int kbps)
{
	return bytes * 8 / (kbps * 1000.0);
}

static int set_rate(struct ibv_qp *qp, uint32_t kbps, uint16_t burst)
{
	struct ibv_qp_rate_limit_attr a = {
		.rate_limit = kbps,
		.max_burst_sz = burst,
	};

	return ibv_modify_qp_rate_limit(qp, &a);
}

static void test_caps(void)
{
	struct ibv_device_attr_ex a;

	memset(&a, 0, sizeof(a));
	if (!tap_ret_errno(ibv_query_device_ex(dev.ctx, NULL, &a), 0,
			   "ibv_query_device_ex"))
		return;
	tap_ret(a.packet_pacing_caps.qp_rate_limit_min, RATE_MIN,
		"qp_rate_limit_min 1000 kbps");
	tap_ret(a.packet_pacing_caps.qp_rate_limit_max, RATE_MAX,
		"qp_rate_limit_max 100 Gbit/s");
	tap_ret(a.packet_pacing_caps.supported_qpts,
		1 << IBV_QPT_RC | 1 << IBV_QPT_UC | 1 << IBV_QPT_UD |
		1 << IBV_QPT_RAW_PACKET,
		"supported_qpts: RC, UC, UD, RAW_PACKET");
}

/* the limits of the verb, on a connected RC pair */
static void test_errors(struct dp_qp *a)
{
	struct ibv_qp_rate_limit_attr cm = { .rate_limit = PACED_KBPS,
					     .comp_mask = 1 };
	struct ibv_qp_cap cap = dp_small_cap;
	struct ibv_qp *fresh;

	tap_ret_errno(set_rate(a->qp, RATE_MIN - 1, 0), EINVAL,
		      "rate 999 kbps (below the minimum) -> EINVAL");
	tap_ret_errno(set_rate(a->qp, RATE_MAX + 1, 0), EINVAL,
		      "rate above the maximum -> EINVAL");
	tap_ret_errno(set_rate(a->qp, PACED_KBPS, 4096), EINVAL,
		      "a burst size (pacing is per packet) -> EINVAL");
	tap_ret_errno(ibv_modify_qp_rate_limit(a->qp, &cm), EINVAL,
		      "an unknown comp_mask -> EINVAL");
	tap_ret_errno(set_rate(a->qp, RATE_MIN, 0), 0,
		      "rate 1000 kbps (the minimum) in RTS");
	tap_ret_errno(set_rate(a->qp, RATE_MAX, 0), 0,
		      "rate 100 Gbit/s (the maximum) in RTS");
	tap_ret_errno(set_rate(a->qp, 0, 0), 0, "rate 0: no limit");

	fresh = dp_create_qp(&dev, IBV_QPT_RC, a->scq, a->rcq, NULL, &cap);
	if (!fresh)
		tap_bail("ibv_create_qp: %s", strerror(errno));
	tap_ret_errno(set_rate(fresh, PACED_KBPS, 0), EINVAL,
		      "a QP in RESET takes no rate limit -> EINVAL");
	ibv_destroy_qp(fresh);
}

/* one RDMA WRITE of LEN bytes a -> b at the QP's rate; seconds or -1 */
static double timed_write(struct dp_qp *a, uint32_t seed, uint64_t wr_id)
{
	struct dp_wc_want w = dp_want(wr_id, IBV_WC_RDMA_WRITE);
	double t0;

	dp_fill(buf, LEN, seed);
	memset(buf + LEN, 0, LEN);
	t0 = now_s();
	if (dp_post_send1(a->qp, wr_id, IBV_WR_RDMA_WRITE, buf, LEN,
			  mr->lkey, (uintptr_t)buf + LEN, mr->rkey, 0))
		return -1;
	if (!dp_expect(a->scq, &w, "WRITE of %d KiB completes", LEN / 1024))
		return -1;
	return now_s() - t0;
}

/* UC completes at the sender when sent: give the placement a moment */
static bool verify_soon(uint32_t seed)
{
	uint64_t end = dp_now_ms() + DP_WAIT_MS;

	while (dp_verify(buf + LEN, LEN, seed) >= 0) {
		if (dp_now_ms() > end)
			return false;
		usleep(1000);
	}
	return true;
}

static void test_rc(void)
{
	double t, need = wire_time(LEN, PACED_KBPS);
	struct dp_qp a, b;
	char filter[32];

	if (dp_rc_pair(&dev, &a, &b))
		tap_bail("RC pair");
	test_errors(&a);

	tap_ret_errno(set_rate(a.qp, PACED_KBPS, 0), 0,
		      "RC: ibv_modify_qp_rate_limit %u kbps", PACED_KBPS);
	snprintf(filter, sizeof(filter), "lqpn %u", a.qp->qp_num);
	tap_ok(dp_res_detail(dev.name, "qp", filter, "rate_kbps", "8000"),
	       "RC: rdma resource show qp -dd: rate_kbps 8000");
	t = timed_write(&a, 11, 0x10);
	tap_ok(t >= need * 0.95,
	       "RC: %d KiB at %u kbps took %.3f s (payload alone needs %.3f s)",
	       LEN / 1024, PACED_KBPS, t, need);
	tap_ok(dp_verify(buf + LEN, LEN, 11) < 0, "RC: paced data byte-exact");

	tap_ret_errno(set_rate(a.qp, 0, 0), 0, "RC: rate 0 lifts the limit");
	t = timed_write(&a, 12, 0x11);
	tap_diag("  unpaced: %.3f s", t);
	tap_ok(t >= 0 && dp_verify(buf + LEN, LEN, 12) < 0,
	       "RC: unpaced WRITE byte-exact");
	dp_qp_free(&a);
	dp_qp_free(&b);
}

/* UC: the limit through ibv_modify_qp (RTS -> RTS, no state) */
static void test_uc(void)
{
	struct ibv_qp_attr at = { .rate_limit = PACED_KBPS };
	double t, need = wire_time(LEN, PACED_KBPS);
	struct dp_qp a, b;
	struct dp_conn c;

	dp_conn_default(&c);
	if (dp_pair(&dev, &dev, IBV_QPT_UC, &dp_small_cap, &c, &a, &b))
		tap_bail("UC pair");
	tap_ret_errno(ibv_modify_qp(a.qp, &at, IBV_QP_RATE_LIMIT), 0,
		      "UC: ibv_modify_qp(IBV_QP_RATE_LIMIT) %u kbps in RTS",
		      PACED_KBPS);
	t = timed_write(&a, 13, 0x20);
	tap_ok(t >= need * 0.95,
	       "UC: %d KiB at %u kbps took %.3f s (payload alone needs %.3f s)",
	       LEN / 1024, PACED_KBPS, t, need);
	tap_ok(verify_soon(13), "UC: paced data byte-exact");
	dp_qp_free(&a);
	dp_qp_free(&b);
}

/* the limit in the RTR -> RTS transition itself, and refused before */
static void test_transition(void)
{
	struct ibv_qp_cap cap = dp_small_cap;
	struct ibv_cq *cq = ibv_create_cq(dev.ctx, 16, NULL, NULL, 0);
	struct ibv_qp_attr at;
	struct ibv_qp *qp;
	int mask;

	qp = cq ? dp_create_qp(&dev, IBV_QPT_RC, cq, cq, NULL, &cap) : NULL;
	if (!qp || qp_to_init(qp))
		tap_bail("RC QP to INIT: %s", strerror(errno));
	qp_attr_rtr(IBV_QPT_RC, dev.gidx, &dev.gid, qp->qp_num, &at, &mask);
	at.rate_limit = PACED_KBPS;
	tap_ret_errno(ibv_modify_qp(qp, &at, mask | IBV_QP_RATE_LIMIT),
		      EINVAL, "INIT -> RTR with IBV_QP_RATE_LIMIT -> EINVAL");
	tap_ret_errno(ibv_modify_qp(qp, &at, mask), 0, "INIT -> RTR");
	qp_attr_rts(IBV_QPT_RC, &at, &mask);
	at.rate_limit = PACED_KBPS;
	tap_ret_errno(ibv_modify_qp(qp, &at, mask | IBV_QP_RATE_LIMIT), 0,
		      "RTR -> RTS with IBV_QP_RATE_LIMIT");
	tap_ret(qp_state(qp), IBV_QPS_RTS, "the QP is in RTS");
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
}

static void test_ud(void)
{
	struct dp_qp a, b;
	struct dp_conn c;
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	struct ibv_ah *ah;
	struct ibv_wc wc[8];
	double t0, t, need;
	int i, n;

	dp_conn_default(&c);
	if (dp_pair(&dev, &dev, IBV_QPT_UD, &dp_small_cap, &c, &a, &b))
		tap_bail("UD pair");
	ah = dp_loop_ah(&dev);
	tap_ret_errno(set_rate(a.qp, PACED_KBPS, 0), 0,
		      "UD: ibv_modify_qp_rate_limit %u kbps", PACED_KBPS);
	dp_fill(buf, 8 * 1024, 14);
	for (i = 0; i < 8; i++)
		if (dp_post_recv1(b.qp, i, buf + LEN + i * 2048, 2048,
				  mr->lkey))
			tap_bail("post_recv: %s", strerror(errno));
	t0 = now_s();
	for (i = 0; i < 8; i++) {
		sge = (struct ibv_sge){ .addr = (uintptr_t)buf + i * 1024,
					.length = 1024, .lkey = mr->lkey };
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = 0x30 + i;
		wr.opcode = IBV_WR_SEND;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = b.qp->qp_num;
		wr.wr.ud.remote_qkey = c.qkey;
		if (ibv_post_send(a.qp, &wr, &bad))
			tap_bail("post_send: %s", strerror(errno));
	}
	n = dp_poll(b.rcq, wc, 8, DP_WAIT_MS);
	t = now_s() - t0;
	tap_ret(n, 8, "UD: 8 SENDs of 1 KiB received");
	/* the first packet goes at once, the slack lets some more go early */
	need = wire_time(7 * 1024, PACED_KBPS) - PACE_SLACK;
	tap_ok(t >= need,
	       "UD: 8 KiB at %u kbps took %.4f s (at least %.4f s)",
	       PACED_KBPS, t, need);
	n = 0;
	for (i = 0; i < 8; i++)
		n += memcmp(buf + LEN + i * 2048 + 40, buf + i * 1024,
			    1024) == 0;
	tap_ret(n, 8, "UD: every payload byte-exact (after its 40-byte GRH)");
	dp_poll(a.scq, wc, 8, DP_WAIT_MS);
	ibv_destroy_ah(ah);
	dp_qp_free(&a);
	dp_qp_free(&b);
}

/*
 * lifting the limit runs what the old one held back (UC: no ACK comes
 * to run the QP again).  The modify kicks the QP; a pace timer still
 * queued would too, one packet time later, so this catches a limit
 * whose change cancels the timer and kicks nothing.
 */
static void test_lift(void)
{
	struct dp_wc_want w = dp_want(0x50, IBV_WC_RDMA_WRITE);
	struct dp_qp a, b;
	struct dp_conn c;
	double t0;

	dp_conn_default(&c);
	if (dp_pair(&dev, &dev, IBV_QPT_UC, &dp_small_cap, &c, &a, &b))
		tap_bail("UC pair");
	tap_ret_errno(set_rate(a.qp, RATE_MIN, 0), 0,
		      "UC: rate 1000 kbps: 256 KiB would take 2.1 s");
	dp_fill(buf, LEN, 15);
	t0 = now_s();
	tap_ret_errno(dp_post_send1(a.qp, 0x50, IBV_WR_RDMA_WRITE, buf, LEN,
				    mr->lkey, (uintptr_t)buf + LEN, mr->rkey,
				    0), 0, "UC: post the slow WRITE");
	tap_ret_errno(set_rate(a.qp, 0, 0), 0, "UC: lift the limit at once");
	dp_expect(a.scq, &w, "UC: the WRITE completes (no stall)");
	tap_diag("  after %.3f s", now_s() - t0);
	tap_ok(verify_soon(15), "UC: its data byte-exact");
	dp_qp_free(&a);
	dp_qp_free(&b);
}

/* destroy a QP whose pacing timer is waiting */
static void test_destroy_paced(void)
{
	struct dp_qp a, b;

	if (dp_rc_pair(&dev, &a, &b))
		tap_bail("RC pair");
	tap_ret_errno(set_rate(a.qp, RATE_MIN, 0), 0,
		      "rate 1000 kbps: 256 KiB would take 2 s");
	tap_ret_errno(dp_post_send1(a.qp, 0x40, IBV_WR_RDMA_WRITE, buf, LEN,
				    mr->lkey, (uintptr_t)buf + LEN, mr->rkey,
				    0), 0, "post the slow WRITE");
	tap_ret_errno(ibv_destroy_qp(a.qp), 0,
		      "ibv_destroy_qp while the WRITE is being paced");
	a.qp = NULL;
	dp_qp_free(&a);
	dp_qp_free(&b);
}

/* raw packet QPs: RAW_FRAMES frames of RAW_LEN bytes, paced */
#define RAW_FRAMES 32
#define RAW_LEN 1514		/* a whole 1500-byte MTU frame */
#define RAW_KBPS 2000u
#define RAW_ETHERTYPE 0x88b5	/* IEEE local experimental */

static struct ibv_qp *raw_qp(struct ibv_cq *cq)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq,
		.recv_cq = cq,
		.qp_type = IBV_QPT_RAW_PACKET,
		.cap = { .max_send_wr = RAW_FRAMES, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return ibv_create_qp(dev.pd, &a);
}

/* frame i: to an unused MAC, our ethertype, a payload of its own */
static void raw_frame(uint8_t *f, int i)
{
	static const uint8_t dst[6] = { 2, 0, 0, 0, 0x77, 0x77 };

	memcpy(f, dst, 6);
	memcpy(f + 6, dst, 6);
	f[11] = 0x78;
	f[12] = RAW_ETHERTYPE >> 8;
	f[13] = RAW_ETHERTYPE & 0xff;
	dp_fill(f + 14, RAW_LEN - 14, 100 + (uint32_t)i);
}

/* post the RAW_FRAMES frames in buf; seconds until the last completes */
static double raw_burst(struct ibv_qp *qp, struct ibv_cq *cq)
{
	struct ibv_wc wc[RAW_FRAMES];
	double t0 = now_s();
	int i, n = 0, got;

	for (i = 0; i < RAW_FRAMES; i++)
		if (dp_post_send1(qp, (uint64_t)i, IBV_WR_SEND,
				  buf + (size_t)i * 2048, RAW_LEN, mr->lkey,
				  0, 0, 0))
			return -1;
	while (n < RAW_FRAMES) {
		got = dp_poll(cq, wc, RAW_FRAMES - n, DP_WAIT_MS);
		if (got <= 0)
			return -1;
		for (i = 0; i < got; i++)
			if (wc[i].status != IBV_WC_SUCCESS) {
				tap_diag("  frame %llu: %s",
					 (unsigned long long)wc[i].wr_id,
					 dp_status_str(wc[i].status));
				return -1;
			}
		n += got;
	}
	return now_s() - t0;
}

/* the frames the tap saw leave, in order and byte for byte */
static int raw_tapped(int fd)
{
	static uint8_t f[RAW_LEN];
	uint8_t b[2048];
	int n = 0;

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		struct sockaddr_ll sll;
		socklen_t sl = sizeof(sll);
		ssize_t len;

		if (poll(&p, 1, 1000 * time_scale()) != 1)
			return n;
		len = recvfrom(fd, b, sizeof(b), 0, (struct sockaddr *)&sll,
			       &sl);
		if (len < 14 || sll.sll_pkttype != PACKET_OUTGOING ||
		    b[12] != RAW_ETHERTYPE >> 8 ||
		    b[13] != (RAW_ETHERTYPE & 0xff))
			continue;
		raw_frame(f, n);
		if (len != RAW_LEN || memcmp(b, f, RAW_LEN)) {
			tap_diag("  tapped frame %d: %zd bytes, not as sent",
				 n, len);
			return -1;
		}
		if (++n == RAW_FRAMES)
			return n;
	}
}

static void test_raw(void)
{
	struct ibv_cq *cq = ibv_create_cq(dev.ctx, 2 * RAW_FRAMES, NULL,
					  NULL, 0);
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_INIT, .port_num = PORT };
	double t, need;
	char filter[32];
	struct ibv_qp *qp;
	int fd, i;

	qp = cq ? raw_qp(cq) : NULL;
	if (!qp)
		tap_bail("raw packet QP: %s", strerror(errno));
	tap_ret_errno(set_rate(qp, RAW_KBPS, 0), EINVAL,
		      "RAW: a QP in RESET takes no rate limit -> EINVAL");
	if (ibv_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_PORT))
		tap_bail("raw QP to INIT: %s", strerror(errno));
	at.qp_state = IBV_QPS_RTR;
	at.rate_limit = RAW_KBPS;
	tap_ret_errno(ibv_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_RATE_LIMIT),
		      EINVAL, "RAW: INIT -> RTR with IBV_QP_RATE_LIMIT -> EINVAL");
	if (ibv_modify_qp(qp, &at, IBV_QP_STATE))
		tap_bail("raw QP to RTR: %s", strerror(errno));
	at.qp_state = IBV_QPS_RTS;
	tap_ret_errno(ibv_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_RATE_LIMIT),
		      0, "RAW: RTR -> RTS with IBV_QP_RATE_LIMIT %u kbps",
		      RAW_KBPS);
	tap_ret_errno(set_rate(qp, RATE_MIN - 1, 0), EINVAL,
		      "RAW: rate 999 kbps -> EINVAL");
	tap_ret_errno(set_rate(qp, RAW_KBPS, 4096), EINVAL,
		      "RAW: a burst size -> EINVAL");
	tap_ret_errno(set_rate(qp, RAW_KBPS, 0), 0,
		      "RAW: ibv_modify_qp_rate_limit %u kbps in RTS", RAW_KBPS);
	snprintf(filter, sizeof(filter), "lqpn %u", qp->qp_num);
	tap_ok(dp_res_detail(dev.name, "qp", filter, "rate_kbps", "2000"),
	       "RAW: rdma resource show qp -dd: rate_kbps 2000");

	for (i = 0; i < RAW_FRAMES; i++)
		raw_frame(buf + (size_t)i * 2048, i);
	fd = dp_packet_socket(&dev, 1 << 20);
	if (fd < 0)
		tap_bail("packet socket on %s: %s", dp_netdev(&dev),
			 strerror(errno));
	/* the first frame goes at once, the slack lets some more go early */
	need = wire_time((RAW_FRAMES - 1) * (RAW_LEN + 4.0), RAW_KBPS) -
	       PACE_SLACK;
	t = raw_burst(qp, cq);
	tap_ok(t >= need,
	       "RAW: %d frames of %d B at %u kbps took %.3f s (at least %.3f s)",
	       RAW_FRAMES, RAW_LEN, RAW_KBPS, t, need);
	tap_ret(raw_tapped(fd), RAW_FRAMES,
		"RAW: all %d paced frames left byte for byte, in order",
		RAW_FRAMES);

	tap_ret_errno(set_rate(qp, 0, 0), 0, "RAW: rate 0 lifts the limit");
	t = raw_burst(qp, cq);
	tap_diag("  unpaced: %.3f s", t);
	tap_ret(raw_tapped(fd), RAW_FRAMES,
		"RAW: unpaced, all %d frames left byte for byte", RAW_FRAMES);
	close(fd);

	/* destroyed while 48 KB at 1 Mbit/s (0.4 s) wait to be sent */
	tap_ret_errno(set_rate(qp, RATE_MIN, 0), 0, "RAW: rate 1000 kbps");
	for (i = 0; i < RAW_FRAMES; i++)
		dp_post_send1(qp, (uint64_t)i, IBV_WR_SEND,
			      buf + (size_t)i * 2048, RAW_LEN, mr->lkey, 0, 0,
			      0);
	tap_ret_errno(ibv_destroy_qp(qp), 0,
		      "RAW: ibv_destroy_qp while its frames are paced");
	ibv_destroy_cq(cq);
}

int main(void)
{
	dp_open(&dev, test_dev_name());
	buf = dp_alloc(2 * LEN);
	mr = dp_reg(dev.pd, buf, 2 * LEN, DP_ACCESS_ALL);
	test_caps();
	test_rc();
	test_uc();
	test_transition();
	test_ud();
	test_lift();
	test_destroy_paced();
	test_raw();
	ibv_dereg_mr(mr);
	dp_close(&dev);
	return tap_done();
}
