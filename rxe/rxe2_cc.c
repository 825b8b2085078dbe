// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2: how much an RC requester keeps in flight, and how long it waits
 * for an ACK before it goes back.
 *
 * Go-back-N resends everything after a loss.  With a fixed window of
 * RXE2_MAX_INFLIGHT packets and a fixed timeout, a receiver slower than
 * the sender (a debug kernel, a loaded VM, a peer behind a full backlog
 * that drops our ACKs) sees each timeout answered by another full
 * window, the backlog stays full, no ACK gets through, and after
 * retry_cnt timeouts a healthy connection ends in RETRY_EXC_ERR.  So, as
 * TCP does:
 *
 *  - The window (cwnd, in PSNs: a READ counts its responses) starts
 *    full, halves on a sequence NAK (once per window of losses), falls
 *    to RXE2_CWND_MIN on a timeout, and grows back with what is
 *    acknowledged: by the acked count below ssthresh, by about one
 *    packet per window above it.
 *  - The timeout is the QP's Local ACK Timeout, or longer when the
 *    measured round trip says an ACK cannot be back yet: srtt + 4 x
 *    rttvar (RFC 6298), one sample at a time, none from a resent packet
 *    (Karn), doubled for each timeout in a row (up to 8x), the measured
 *    part at most RXE2_RTO_MAX_MS.  It never fires earlier than the
 *    attribute asks, so a dead peer is still declared after retry_cnt
 *    timeouts, only later on a slow path.
 *
 * The wire does not change: fewer packets in flight is something any
 * IBTA responder already sees.  Everything here runs under the QP's
 * state_lock (the runner), like the requester and completer it serves.
 */
#include <linux/sched/clock.h>

#include "rxe2_dp.h"
#include "rxe2_requester.h"

#define RXE2_CWND_MIN	RXE2_ACK_EVERY	/* a window asks for an ACK */
#define RXE2_RTO_MAX_MS	4000
#define RXE2_RTO_BACKOFF_MAX	3	/* the measured part, 8x at most */
/* NAKs for the PSN after a closed gap in a row: the responder drops */
#define RXE2_GAP_DROPS_MAX	3

/* a QP's first window, and the one after RESET */
void rxe2_cc_init(struct rxe2_qp *qp)
{
	struct rxe2_qp_dp *dp = &qp->dp;

	dp->cc.cwnd = RXE2_MAX_INFLIGHT;
	dp->cc.ssthresh = RXE2_MAX_INFLIGHT;
	dp->cc.cwnd_acc = 0;
	dp->cc.recovering = false;
	dp->cc.peer_keeps = false;
	dp->cc.gap_only = false;
	dp->cc.gap_watch = false;
	dp->cc.gap_drops = 0;
	dp->cc.nak_rewind = false;
	dp->cc.rtt_on = false;
	dp->cc.srtt_us = 0;
	dp->cc.rttvar_us = 0;
	dp->cc.rto_backoff = 0;
}

/* the requester may send another packet: fewer than cwnd unacknowledged */
bool rxe2_cc_may_send(struct rxe2_qp *qp)
{
	return rxe2_psn_diff(qp->dp.req.psn, qp->dp.comp.psn) <
	       (int)qp->dp.cc.cwnd;
}

/*
 * The responder acknowledged packets the requester had not resent since
 * a rewind: it keeps what comes out of order (an rxe2 responder,
 * rxe2_reorder.c).  From now on a sequence NAK resends the gap's packet
 * alone (with AckReq, rxe2_req_gap_sent()) and goes on with new packets:
 * the ACK the gap's packet draws covers what the responder kept, and a
 * further loss among them draws another NAK.  A responder that keeps
 * nothing never shows this, and sees plain go-back-N.
 */
void rxe2_cc_peer_keeps(struct rxe2_qp *qp)
{
	/*
	 * Only a pass-over after a sequence NAK tells: a go-back-N
	 * responder dropped everything after the NAK's PSN, so its ACKs
	 * cover no more than was resent.  After a timeout or a probe, an
	 * ACK that was merely late passes over as much with any responder.
	 */
	if (qp->dp.cc.nak_rewind)
		qp->dp.cc.peer_keeps = true;
}

/*
 * A tail-loss probe goes back to psn: to a responder known to keep, that
 * packet alone (it may only have lost our ACK, and has what followed);
 * an ACK that passes over resends after it shows nothing about the
 * responder (not a NAK's rewind).
 */
void rxe2_cc_probe_rewind(struct rxe2_qp *qp, u32 psn)
{
	struct rxe2_qp_dp *dp = &qp->dp;

	if (dp->cc.peer_keeps) {
		dp->cc.gap_only = true;
		dp->cc.gap_psn = psn;
	}
	dp->cc.nak_rewind = false;
}

/* the packet at psn goes out: whether it is a gap's, alone */
bool rxe2_cc_gap_only(struct rxe2_qp *qp, u32 psn)
{
	return qp->dp.cc.gap_only && psn == qp->dp.cc.gap_psn;
}

/*
 * The gap is closed: its packet went out alone, or an ACK passed the
 * resend over it.  A responder that keeps has what followed it (a
 * further loss among those draws a further NAK): go on after what was
 * sent.  One taken for a keeper but that dropped what followed the gap
 * (a go-back-N responder that seemed to keep because the path reordered
 * the resends) NAKs the PSN after the gap next, every time, and would be
 * sent one packet per round trip from then on: rxe2_cc_seq_nak() counts
 * those NAKs.  A keeper NAKs that PSN too when it was lost or is late
 * as well, which reordering makes common, but seldom several times in
 * a row.
 */
void rxe2_cc_gap_closed(struct rxe2_qp *qp)
{
	struct rxe2_qp_dp *dp = &qp->dp;

	dp->cc.gap_only = false;
	dp->cc.gap_watch = true;
	dp->cc.gap_next = dp->req.psn;
	rxe2_req_skip(qp, dp->req.sent_psn);
}

/*
 * An ACK passed the resend over the gap's packet before it went out
 * again (the packet came late, or an earlier resend of it got there):
 * the gap is closed as if the packet had gone.
 */
void rxe2_cc_gap_passed(struct rxe2_qp *qp)
{
	struct rxe2_qp_dp *dp = &qp->dp;

	if (dp->cc.gap_only && rxe2_psn_diff(dp->req.psn, dp->cc.gap_psn) > 0)
		rxe2_cc_gap_closed(qp);
}

/* the packet at psn asks for an ACK: time it unless one is being timed */
void rxe2_cc_sent(struct rxe2_qp *qp, u32 psn)
{
	struct rxe2_qp_dp *dp = &qp->dp;

	/* Karn: a resent packet's ACK may answer its first sending */
	if (dp->cc.rtt_on || rxe2_psn_diff(psn, dp->req.sent_psn) < 0)
		return;
	dp->cc.rtt_on = true;
	dp->cc.rtt_psn = psn;
	/*
	 * Not ktime_get(): under emulation the guest's clocksource (HPET)
	 * is a device register, and reading it twice per sample cost a
	 * loopback 64-byte SEND 7 % of its rate.  The CPU's clock may be a
	 * little off across CPUs; a sample is clamped and smoothed.
	 */
	dp->cc.rtt_start = local_clock();
}

/* RFC 6298: srtt and rttvar in microseconds */
static void rxe2_cc_sample(struct rxe2_qp *qp)
{
	struct rxe2_qp_dp *dp = &qp->dp;
	s64 us = div_s64((s64)(local_clock() - dp->cc.rtt_start),
			 NSEC_PER_USEC);
	u32 r = clamp_t(s64, us, 1, RXE2_RTO_MAX_MS * USEC_PER_MSEC);
	u32 err;

	dp->cc.rtt_on = false;
	if (!dp->cc.srtt_us) {
		dp->cc.srtt_us = r;
		dp->cc.rttvar_us = r / 2;
		return;
	}
	err = r > dp->cc.srtt_us ? r - dp->cc.srtt_us : dp->cc.srtt_us - r;
	dp->cc.rttvar_us = dp->cc.rttvar_us - dp->cc.rttvar_us / 4 + err / 4;
	dp->cc.srtt_us = dp->cc.srtt_us - dp->cc.srtt_us / 8 + r / 8;
}

/* n more PSNs acknowledged (comp.psn moved past them) */
void rxe2_cc_acked(struct rxe2_qp *qp, u32 n)
{
	struct rxe2_qp_dp *dp = &qp->dp;

	dp->cc.rto_backoff = 0;
	if (dp->cc.gap_watch &&
	    rxe2_psn_diff(dp->comp.psn, dp->cc.gap_next) > 0)
		dp->cc.gap_watch = false;
	if (dp->cc.recovering &&
	    rxe2_psn_diff(dp->comp.psn, dp->cc.recover_psn) >= 0) {
		dp->cc.recovering = false;
		dp->cc.nak_rewind = false;
	}
	if (dp->cc.rtt_on && rxe2_psn_diff(dp->comp.psn, dp->cc.rtt_psn) > 0)
		rxe2_cc_sample(qp);
	if (dp->cc.cwnd >= RXE2_MAX_INFLIGHT)
		return;
	if (dp->cc.cwnd < dp->cc.ssthresh) {
		dp->cc.cwnd = min_t(u32, dp->cc.cwnd + n, dp->cc.ssthresh);
		return;
	}
	dp->cc.cwnd_acc += n;
	if (dp->cc.cwnd_acc >= dp->cc.cwnd) {
		dp->cc.cwnd_acc -= dp->cc.cwnd;
		dp->cc.cwnd++;
	}
}

/* what was in flight when a loss showed, halved */
static u32 rxe2_cc_half(struct rxe2_qp *qp)
{
	u32 flight = rxe2_psn_diff(qp->dp.req.sent_psn, qp->dp.comp.psn);

	return clamp_t(u32, flight / 2, RXE2_CWND_MIN, RXE2_MAX_INFLIGHT);
}

/*
 * A sequence NAK: a packet lost, the rest of the path works.  The window
 * shrinks once per window of losses (RFC 6582's recovery point): the
 * NAKs for more losses among the packets already in flight say nothing
 * new about the path, and halving for each of them left a few packets
 * in flight on a link that loses one in a hundred.
 */
void rxe2_cc_seq_nak(struct rxe2_qp *qp, u32 psn)
{
	struct rxe2_qp_dp *dp = &qp->dp;

	/*
	 * A peer that keeps what came early needs the gap's packet alone,
	 * and a loss then costs that packet: the window stays.  (Losses
	 * that are the receiver's, a full backlog, still end in timeouts,
	 * which cut it.)
	 */
	dp->cc.nak_rewind = true;
	/* the PSN after a closed gap, again and again: it drops */
	if (dp->cc.gap_watch && psn == dp->cc.gap_next) {
		if (++dp->cc.gap_drops >= RXE2_GAP_DROPS_MAX) {
			dp->cc.peer_keeps = false;
			dp->cc.gap_drops = 0;
		}
	} else {
		dp->cc.gap_drops = 0;
	}
	dp->cc.gap_watch = false;
	if (dp->cc.peer_keeps) {
		dp->cc.gap_only = true;
		dp->cc.gap_psn = psn;
		return;
	}
	if (dp->cc.recovering)
		return;
	dp->cc.recovering = true;
	dp->cc.recover_psn = dp->req.sent_psn;
	dp->cc.ssthresh = rxe2_cc_half(qp);
	dp->cc.cwnd = dp->cc.ssthresh;
	dp->cc.cwnd_acc = 0;
}

/* the ACK timer expired: nothing came back for a whole timeout */
void rxe2_cc_timeout(struct rxe2_qp *qp)
{
	struct rxe2_qp_dp *dp = &qp->dp;

	dp->cc.ssthresh = rxe2_cc_half(qp);
	dp->cc.cwnd = RXE2_CWND_MIN;
	dp->cc.cwnd_acc = 0;
	dp->cc.gap_only = false;	/* go back N */
	dp->cc.gap_watch = false;
	dp->cc.nak_rewind = false;
	/* NAKs for what was in flight then cut nothing more */
	dp->cc.recovering = true;
	dp->cc.recover_psn = dp->req.sent_psn;
	if (dp->cc.rto_backoff < RXE2_RTO_BACKOFF_MAX)
		dp->cc.rto_backoff++;
}

/*
 * Every go-back-N (timeout, sequence or RNR NAK, a lost READ response):
 * Karn, the resend's ACKs time nothing.  rxe2_req_rewind() calls it.
 */
void rxe2_cc_resend(struct rxe2_qp *qp)
{
	qp->dp.cc.rtt_on = false;
}

/* how long the requester waits for an ACK, in jiffies */
unsigned long rxe2_cc_rto(struct rxe2_qp *qp)
{
	struct rxe2_qp_dp *dp = &qp->dp;
	u64 attr_ns = 4096ull << qp->attr.timeout;
	u64 meas_ns = (u64)(dp->cc.srtt_us + 4 * dp->cc.rttvar_us) *
		      NSEC_PER_USEC;

	/* no sample comes from a resend: back off while none gets through */
	meas_ns = min_t(u64, meas_ns << dp->cc.rto_backoff,
			(u64)RXE2_RTO_MAX_MS * NSEC_PER_MSEC);
	return max_t(unsigned long, HZ / 50,
		     nsecs_to_jiffies(max(attr_ns, meas_ns)));
}

/*
 * A tail-loss probe: when nothing has been acknowledged for two measured
 * round trips (at least 10 ms and a tick), the requester sends the first
 * unacknowledged packet again before the ACK timeout, which may be many
 * round trips longer (the Local ACK Timeout attribute is a floor).  A
 * lost last packet, or a loss with too few behind it for the responder
 * to NAK, then costs a probe, not a timeout.  The probe uses no retry
 * and leaves the window alone.  0: no probe (no measurement yet, or the
 * timeout comes as soon).
 */
unsigned long rxe2_cc_probe(struct rxe2_qp *qp, unsigned long rto)
{
	unsigned long pto;

	if (!qp->dp.cc.srtt_us || qp->dp.cc.rto_backoff)
		return 0;
	/* at least 10 ms: a busy vCPU stalls a loopback ACK that long */
	pto = max(usecs_to_jiffies(2 * qp->dp.cc.srtt_us),
		  msecs_to_jiffies(10)) + 1;
	return pto < rto ? pto : 0;
}
