// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2: packet pacing, IBV_QP_RATE_LIMIT (ibv_modify_qp_rate_limit()).
 *
 * A QP with a rate limit sends its request packets (a raw packet QP its
 * frames) no faster than rate_kbps: each packet moves pace.next, the
 * earliest time the next one may leave, by the time its bytes (headers
 * and payload, as they go on the wire) take at that rate.  A QP that
 * was idle may catch up for at most RXE2_PACE_SLACK_NS, so a burst
 * after a pause stays short and a late timer does not lower the average
 * rate.  When the QP is ahead of its rate, rxe2_req_run() stops and the
 * pace timer runs it again at pace.next.  Retransmissions are paced
 * like first transmissions; responses (READ data, ACKs) are not: they
 * are the peer's traffic.
 *
 * All of it runs under the QP's state_lock, except the timer callback,
 * which only kicks the QP.
 */
#include "rxe2_dp.h"
#include "rxe2_requester.h"

/* how far an idle QP may fall behind its schedule and then catch up */
#define RXE2_PACE_SLACK_NS	(1000 * NSEC_PER_USEC)
/* Ethernet (with FCS), IPv4, UDP and ICRC around the BTH and payload */
#define RXE2_PACE_WIRE_EXTRA	(18 + 20 + 8 + 4)
/* what a raw packet QP's frame, MAC header on, lacks on the wire */
#define RXE2_PACE_FCS		4

static enum hrtimer_restart rxe2_pace_timer(struct hrtimer *timer)
{
	struct rxe2_qp *qp = container_of(timer, struct rxe2_qp,
					  dp.pace.timer);

	if (!test_bit(RXE2_QPF_DYING, &qp->dp.flags))
		rxe2_qp_kick(qp);
	return HRTIMER_NORESTART;
}

void rxe2_pace_init(struct rxe2_qp *qp)
{
	hrtimer_setup(&qp->dp.pace.timer, rxe2_pace_timer, CLOCK_MONOTONIC,
		      HRTIMER_MODE_ABS_SOFT);
}

/*
 * A new limit (0: none) starts from now.  A QP held back by the old one
 * is run again by its caller (rxe2_modify_qp() kicks the QP); a timer
 * still queued only kicks it once more, which is harmless.
 */
void rxe2_pace_set(struct rxe2_qp *qp, u32 rate_kbps)
{
	qp->dp.pace.rate_kbps = rate_kbps;
	qp->dp.pace.next = 0;
	qp->dp.pace.ps = 0;
}

/* whether a packet may go now; if not, the timer runs the QP when it may */
bool rxe2_pace_may_send(struct rxe2_qp *qp)
{
	u64 now = ktime_get_ns();

	if (now >= qp->dp.pace.next)
		return true;
	hrtimer_start(&qp->dp.pace.timer, ns_to_ktime(qp->dp.pace.next),
		      HRTIMER_MODE_ABS_SOFT);
	return false;
}

/*
 * wire_bytes went out.  Their time is kept in ps: in whole ns a 64-byte
 * packet at 100 Gbit/s (5.1 ns) would lose a fifth of its time and the
 * QP would run that much over its rate.
 */
static void rxe2_pace_wire(struct rxe2_qp *qp, u32 wire_bytes)
{
	struct rxe2_qp_dp *dp = &qp->dp;
	u64 bits = (u64)wire_bytes * 8;
	u64 now = ktime_get_ns();
	u64 ps;

	if (now > RXE2_PACE_SLACK_NS)
		now -= RXE2_PACE_SLACK_NS;
	if (dp->pace.next < now) {
		dp->pace.next = now;
		dp->pace.ps = 0;
	}
	/* bits / (kbps * 1000) s = bits * 10^9 / kbps ps, < 2^46 */
	ps = dp->pace.ps + div_u64(bits * NSEC_PER_SEC, dp->pace.rate_kbps);
	dp->pace.next += div_u64_rem(ps, 1000, &dp->pace.ps);
}

/* a RoCE packet of hdr_payload bytes (BTH on) went out */
void rxe2_pace_sent(struct rxe2_qp *qp, u32 hdr_payload)
{
	rxe2_pace_wire(qp, hdr_payload + RXE2_PACE_WIRE_EXTRA);
}

/* a raw packet QP's frame of frame_len bytes (MAC header on) went out */
void rxe2_pace_frame_sent(struct rxe2_qp *qp, u32 frame_len)
{
	rxe2_pace_wire(qp, frame_len + RXE2_PACE_FCS);
}
