// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2: RC packets that arrive ahead of their turn are kept, not lost.
 *
 * Go-back-N as IBTA words it drops every request past a PSN gap and
 * answers the first with a sequence NAK, and a requester that sees a
 * READ response past a gap asks for the READ again.  On a link that
 * only reorders (a netem queue, ECMP, a busy veth), one packet that
 * overtakes a few others then costs a whole window sent again.  So the
 * receiving side of an RC QP keeps up to RXE2_REORDER_MAX packets that
 * came early, in PSN order, and hands each to the responder or the
 * completer when its turn comes:
 *
 *  - Requests (responder): the sequence NAK waits until
 *    RXE2_REORDER_NAK packets are kept in a row while the gap does not
 *    move, as a TCP receiver waits for three duplicate ACKs: what was
 *    only overtaken arrives meanwhile and moves the gap on.  Two are
 *    enough when the second asks for an ACK: its requester waits for an
 *    answer, and a short message has few packets behind a loss.  The
 *    requester resends from the gap, the kept packets are taken as soon
 *    as it is filled, and the responder's ACK, which now covers them,
 *    lets an rxe2 requester pass over its resends of them
 *    (rxe2_req_skip()).
 *  - READ responses and atomic ACKs (completer): RXE2_REORDER_NAK kept
 *    in a row at a gap (two when the second is a READ's last response)
 *    mean a loss: the READ is asked again for the missing PSNs only,
 *    up to the first kept one (rxe2_comp_reread()); the
 *    responder answers that subset (IBTA allows a duplicate READ for
 *    part of the original, rdma_rxe does too) and the kept responses
 *    complete the rest.
 *
 * Nothing new goes on the wire: a late NAK is a NAK, a READ asked again
 * for a part of itself is a duplicate READ.  A peer that reorders
 * nothing keeps nothing here.  Everything runs under the QP's
 * state_lock (the runner); the two queues are touched by nobody else,
 * so they are used without their own lock.
 */
#include <linux/skbuff.h>

#include "rxe2_dp.h"
#include "rxe2_requester.h"
#include "rxe2_responder.h"

/* kept per direction, at most: a whole window (the rx backlog is more) */
#define RXE2_REORDER_MAX	RXE2_MAX_INFLIGHT
#define RXE2_REORDER_NAK	3	/* kept in a row at a gap: a loss */

static u32 rxe2_skb_psn(struct sk_buff *skb)
{
	return rxe2_skb_cb(skb)->psn;
}

/* into q, in PSN order relative to base; false: a copy is there already */
static bool rxe2_reorder_insert(struct sk_buff_head *q, struct sk_buff *skb,
				u32 base)
{
	int d = rxe2_psn_diff(rxe2_skb_psn(skb), base);
	struct sk_buff *p;

	skb_queue_reverse_walk(q, p) {
		int dp = rxe2_psn_diff(rxe2_skb_psn(p), base);

		if (dp == d)
			return false;
		if (dp < d) {
			__skb_queue_after(q, p, skb);
			return true;
		}
	}
	__skb_queue_head(q, skb);
	return true;
}

/*
 * How many packets were kept in a row while the gap stayed at base: what
 * a reordering overtakes arrives meanwhile and moves the gap on (on a
 * veth with netem's 5 % reordering, several packets are often early at
 * once), a loss stops it.
 */
static u32 rxe2_reorder_stuck(struct rxe2_reorder_gap *g, u32 base)
{
	if (g->base != base) {
		g->base = base;
		g->kept = 0;
	}
	return ++g->kept;
}

/* the requests' gap is a loss: one sequence NAK for it */
static void rxe2_reorder_req_gap(struct rxe2_qp *qp, bool ackreq)
{
	struct rxe2_qp_dp *dp = &qp->dp;
	u32 n = rxe2_reorder_stuck(&dp->resp.ooo_gap, dp->resp.psn);

	if (dp->resp.nak_sent || n < (ackreq ? 2 : RXE2_REORDER_NAK))
		return;
	dp->resp.nak_sent = true;
	rxe2_qp_dp_count(qp, RXE2_DPC_OUT_OF_SEQ_REQUEST);
	rxe2_send_ack(qp, RXE2_AETH_NAK | RXE2_NAK_PSN_SEQ, dp->resp.psn);
}

/* the responses' gap is a loss: ask for what is missing */
static void rxe2_reorder_resp_gap(struct rxe2_qp *qp, bool last)
{
	struct rxe2_qp_dp *dp = &qp->dp;
	u32 n = rxe2_reorder_stuck(&dp->comp.ooo_gap, dp->comp.psn);

	if (n >= (last ? 2 : RXE2_REORDER_NAK))
		rxe2_comp_reread(qp, rxe2_skb_psn(skb_peek(&dp->comp.ooo)));
}

/*
 * A request handed over without a packet (dp.loop.req, rxe2_qp_deliver_req())
 * is kept as an skb of its bytes: the slot is the sender's next one.
 */
static struct sk_buff *rxe2_reorder_copy(const struct rxe2_pkt *pkt)
{
	u32 len = pkt->payload - pkt->hdr + pkt->paylen;
	struct sk_buff *skb = alloc_skb(len, GFP_ATOMIC);

	if (!skb)
		return NULL;
	skb_put_data(skb, pkt->hdr, len);
	rxe2_skb_cb(skb)->loop = true;
	return skb;
}

/*
 * Keep the packet parsed into pkt (its skb, or a copy of a handed-over
 * request) if it came ahead of its turn on an RC QP.  True: kept (or a
 * copy of one kept, freed); the caller forgets the skb.
 */
bool rxe2_reorder_hold(struct rxe2_qp *qp, struct rxe2_pkt *pkt)
{
	struct rxe2_qp_dp *dp = &qp->dp;
	struct sk_buff_head *q;
	struct sk_buff *skb;
	u32 base;
	int d;

	if (pkt->flags & RXE2_OPF_REQ) {
		if (!rxe2_qp_acks(qp) || qp->state < IB_QPS_RTR ||
		    qp->state > IB_QPS_SQE)
			return false;
		q = &dp->resp.ooo;
		base = dp->resp.psn;
	} else {
		/* a READ response or an atomic ACK past one not yet here */
		if (!rxe2_qp_requests_acked(qp) ||
		    (qp->state != IB_QPS_RTS && qp->state != IB_QPS_SQD) ||
		    rxe2_op_of(pkt->opcode) == RXE2_OP_ACK ||
		    rxe2_psn_diff(pkt->psn, dp->req.psn) >= 0 ||
		    !rxe2_comp_waits_answer(qp))
			return false;
		q = &dp->comp.ooo;
		base = dp->comp.psn;
	}
	d = rxe2_psn_diff(pkt->psn, base);
	if (d <= 0 || d >= RXE2_MAX_INFLIGHT ||
	    skb_queue_len(q) >= RXE2_REORDER_MAX)
		return false;
	skb = pkt->skb;
	if (!skb) {
		skb = rxe2_reorder_copy(pkt);
		if (!skb)
			return false;	/* as if not kept: a NAK, a resend */
	} else {
		rxe2_skb_cb(skb)->loop = false;
		nf_reset_ct(skb);	/* kept a while: no conntrack held */
	}
	rxe2_skb_cb(skb)->psn = pkt->psn;
	/* its ICRC was checked: not again when its turn comes */
	rxe2_skb_cb(skb)->trusted = true;
	if (!rxe2_reorder_insert(q, skb, base)) {
		kfree_skb(skb);
		return true;
	}
	rxe2_qp_dp_count(qp, RXE2_DPC_REORDER_HELD);
	if (pkt->flags & RXE2_OPF_REQ)
		rxe2_reorder_req_gap(qp, pkt->ackreq);
	else
		rxe2_reorder_resp_gap(qp, pkt->flags & RXE2_OPF_LAST);
	return true;
}

/*
 * Kept packets were taken (or the answer to a re-read) and the next kept
 * one is past a new gap: it waited there while the old gap was filled, a
 * round trip at least, so the new gap is a loss too.  Waiting for more
 * to arrive would not do: with the window full behind the old gap
 * nothing more comes.  After a re-read's answer with nothing kept, the
 * rest of a READ that stopped short is lost too (rxe2_comp_reread_rest()).
 */
void rxe2_reorder_after_drain(struct rxe2_qp *qp)
{
	struct rxe2_qp_dp *dp = &qp->dp;
	struct sk_buff *req = skb_peek(&dp->resp.ooo);
	struct sk_buff *resp = skb_peek(&dp->comp.ooo);

	if (req && rxe2_psn_diff(rxe2_skb_psn(req), dp->resp.psn) > 0) {
		dp->resp.ooo_gap.base = dp->resp.psn;
		dp->resp.ooo_gap.kept = RXE2_REORDER_NAK - 1;
		rxe2_reorder_req_gap(qp, false);
	}
	if (resp && rxe2_psn_diff(rxe2_skb_psn(resp), dp->comp.psn) > 0) {
		dp->comp.ooo_gap.base = dp->comp.psn;
		dp->comp.ooo_gap.kept = RXE2_REORDER_NAK - 1;
		rxe2_reorder_resp_gap(qp, false);
	} else if (!resp && dp->comp.reread_done) {
		rxe2_comp_reread_rest(qp);
	}
	dp->comp.reread_done = false;
}

/* the kept packet whose turn has come, if any; stale ones are freed */
struct sk_buff *rxe2_reorder_next(struct rxe2_qp *qp)
{
	struct rxe2_qp_dp *dp = &qp->dp;
	struct sk_buff_head *qs[2] = { &dp->resp.ooo, &dp->comp.ooo };
	u32 bases[2] = { dp->resp.psn, dp->comp.psn };
	struct sk_buff *skb;
	int i, d;

	for (i = 0; i < 2; i++) {
		while ((skb = skb_peek(qs[i]))) {
			d = rxe2_psn_diff(rxe2_skb_psn(skb), bases[i]);
			if (d > 0)
				break;
			__skb_unlink(skb, qs[i]);
			if (!d)
				return skb;
			kfree_skb(skb);		/* came again meanwhile */
		}
	}
	return NULL;
}

/* whether rxe2_reorder_next() has a packet to give */
bool rxe2_reorder_ready(struct rxe2_qp *qp)
{
	struct sk_buff *req = skb_peek(&qp->dp.resp.ooo);
	struct sk_buff *resp = skb_peek(&qp->dp.comp.ooo);

	return (req && rxe2_psn_diff(rxe2_skb_psn(req), qp->dp.resp.psn) <= 0) ||
	       (resp && rxe2_psn_diff(rxe2_skb_psn(resp), qp->dp.comp.psn) <= 0);
}

/*
 * An ACK is owed for psn, a SEND or WRITE packet taken, once the kept
 * packets that follow it are taken too (rxe2_reorder_drained()).
 */
void rxe2_reorder_owe_ack(struct rxe2_qp *qp, u32 psn)
{
	qp->dp.resp.ack_owed = true;
	qp->dp.resp.ack_owed_psn = psn;
}

/*
 * The kept requests whose turn came are taken: the ACK owed, for the
 * last SEND or WRITE packet taken (not a READ's PSN: a plain ACK past
 * an unanswered READ tells the requester its responses were lost).
 * None once the QP failed, or for a packet that was not taken (an RNR
 * NAK answered it).
 */
void rxe2_reorder_drained(struct rxe2_qp *qp)
{
	struct rxe2_qp_dp *dp = &qp->dp;

	if (!dp->resp.ack_owed || rxe2_reorder_ready(qp))
		return;
	dp->resp.ack_owed = false;
	if (qp->state < IB_QPS_RTR || qp->state > IB_QPS_SQE ||
	    rxe2_psn_diff(dp->resp.psn, dp->resp.ack_owed_psn) <= 0)
		return;
	rxe2_send_ack(qp, RXE2_AETH_ACK | RXE2_AETH_CREDIT_INVALID,
		      dp->resp.ack_owed_psn);
}

/*
 * A READ or an atomic is taken: the ACK owed for the SEND or WRITE
 * packets before it goes first, with their PSN (its own answer comes
 * after them and carries its own).
 */
void rxe2_reorder_pay_ack(struct rxe2_qp *qp)
{
	struct rxe2_qp_dp *dp = &qp->dp;

	if (!dp->resp.ack_owed)
		return;
	dp->resp.ack_owed = false;
	rxe2_send_ack(qp, RXE2_AETH_ACK | RXE2_AETH_CREDIT_INVALID,
		      dp->resp.ack_owed_psn);
}

/* a request given by rxe2_reorder_next() has to wait: first again */
void rxe2_reorder_requeue(struct rxe2_qp *qp, struct sk_buff *skb)
{
	__skb_queue_head(&qp->dp.resp.ooo, skb);
}

/* RESET, destroy: nothing kept survives */
void rxe2_reorder_purge(struct rxe2_qp *qp)
{
	qp->dp.resp.ack_owed = false;
	qp->dp.resp.ooo_gap.kept = 0;
	qp->dp.comp.ooo_gap.kept = 0;
	__skb_queue_purge(&qp->dp.resp.ooo);
	__skb_queue_purge(&qp->dp.comp.ooo);
}
