// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2: the completer.  Matches ACKs, NAKs, RDMA READ responses and
 * atomic ACKs against the outstanding send WQEs, places read data and
 * atomic results, drives retransmission (local ACK timeout with
 * retry_cnt, RNR NAK with rnr_retry, sequence NAK) and retires WQEs in
 * order: the SQ consumer moves when a WQE's completion is written (an
 * unsignaled WQE retires silently).  Also flushes the WQEs of a QP in
 * the error state (rxe2_comp_flush_wqes(): they complete with
 * WR_FLUSH_ERR; not the IBTA's FLUSH operation, rxe2_place.c).
 */
#include <linux/jiffies.h>
#include <rdma/ib_user_verbs.h>

#include "rxe2_dp.h"
#include "rxe2_requester.h"
#include "rxe2_responder.h"
#include "rxe2_sge.h"
#include "rxe2_trace.h"

static u32 rxe2_wc_opcode(u32 op)
{
	switch (op) {
	case IB_UVERBS_WR_RDMA_WRITE:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	case IB_UVERBS_WR_RDMA_READ:
		return IB_WC_RDMA_READ;
	case IB_UVERBS_WR_ATOMIC_CMP_AND_SWP:
		return IB_WC_COMP_SWAP;
	case IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
		return IB_WC_FETCH_ADD;
	case RXE2_WR_ATOMIC_WRITE:
		return RXE2_WC_ATOMIC_WRITE;
	case RXE2_WR_FLUSH:
		return RXE2_WC_FLUSH;
	case IB_UVERBS_WR_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	case IB_UVERBS_WR_BIND_MW:
		return IB_WC_BIND_MW;
	case IB_WR_REG_MR:		/* kernel QPs only */
		return IB_WC_REG_MR;
	default:
		return IB_WC_SEND;
	}
}

/* the completion of SQ index idx, from our copy or (never fetched) the ring */
static void rxe2_sq_cqe(struct rxe2_qp *qp, u32 idx, int status, bool fetched,
			struct rxe2_cqe *cqe)
{
	memset(cqe, 0, sizeof(*cqe));
	if (fetched) {
		struct rxe2_send_wqe *w = rxe2_swqe(qp, idx);

		cqe->wr_id = w->wr_id;
		cqe->opcode = rxe2_wc_opcode(w->opcode);
		cqe->byte_len = rxe2_sinfo(qp, idx)->length;
		if (w->opcode == IB_UVERBS_WR_SEND_WITH_IMM ||
		    w->opcode == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM)
			cqe->wc_flags = 1 << 1;	/* IBV_WC_WITH_IMM */
	} else {
		struct rxe2_send_wqe *w = rxe2_ring_slot(&qp->sq, idx);

		cqe->wr_id = READ_ONCE(w->wr_id);
		cqe->opcode = rxe2_wc_opcode(READ_ONCE(w->opcode));
	}
	cqe->status = status;
	cqe->qp_num = qp->ibqp.qp_num;
	cqe->port_num = RXE2_PORT;
}

/*
 * Take the WQE at the head of the SQ off the ring and then write its
 * completion (cqe, or none).  The slot is released first: a consumer
 * that polls the CQE may post into it at once, and a ring still full
 * at that moment would refuse the WQE (ENOMEM) although IBTA says the
 * completed WQE's slot is free.  We keep our own copy of the WQE, so
 * nothing is read from the ring after the release.  False: the CQ
 * overflowed and the completion is lost.
 */
static bool rxe2_sq_release(struct rxe2_qp *qp, const struct rxe2_cqe *cqe)
{
	struct rxe2_swqe_info *info = rxe2_sinfo(qp, qp->sq.dev_index);
	u32 op = rxe2_swqe(qp, qp->sq.dev_index)->opcode;

	if (info->state == RXE2_WQE_DONE && info->status == IB_WC_SUCCESS &&
	    (op == IB_UVERBS_WR_SEND || op == IB_UVERBS_WR_SEND_WITH_IMM ||
	     op == IB_UVERBS_WR_SEND_WITH_INV))
		rxe2_qp_pcount(qp, RXE2_PC_RDMA_SENDS, 1);
	/* no retransmission or READ response can need its MRs any more */
	rxe2_mr_msg_end(info->hold, RXE2_WQE_MRS);
	info->state = RXE2_WQE_NEW;
	rxe2_ring_dev_advance(&qp->sq);
	/* a TM SRQ's rendezvous WQE completes a tagged buffer, or nothing */
	if (qp->tm_sq)
		return rxe2_tm_sq_release(qp, info, cqe);
	return !cqe || !rxe2_cq_post(to_rcq(qp->ibqp.send_cq), cqe, false);
}

/* retire the finished WQEs at the head of the SQ, in order */
void rxe2_comp_retire(struct rxe2_qp *qp)
{
	while (qp->sq.dev_index != qp->dp.req.next) {
		u32 idx = qp->sq.dev_index;
		struct rxe2_swqe_info *info = rxe2_sinfo(qp, idx);
		struct rxe2_send_wqe *w = rxe2_swqe(qp, idx);
		struct rxe2_cqe_inline ic;
		struct rxe2_cqe *c = NULL;

		if (info->state != RXE2_WQE_DONE)
			break;
		if (info->status != IB_WC_SUCCESS ||
		    qp->sq_sig_type == IB_SIGNAL_ALL_WR ||
		    (w->send_flags & IB_SEND_SIGNALED)) {
			rxe2_sq_cqe(qp, idx, info->status, true, &ic.cqe);
			c = &ic.cqe;
		}
		/* inline-receive: a READ's data or an atomic's result */
		if (qp->dp.comp.inl_staged && qp->dp.comp.inl_idx == idx) {
			qp->dp.comp.inl_staged = false;
			if (c && info->status == IB_WC_SUCCESS) {
				rxe2_cqe_set_inline(&ic, qp->dp.comp.inl_data,
						    qp->dp.comp.inl_len,
						    (const void *)(w + 1),
						    w->num_sge);
				rxe2_qp_dp_count(qp, RXE2_DPC_INLINE_RECV);
			}
		}
		if (!rxe2_sq_release(qp, c)) {
			rxe2_qp_error(qp);
			return;
		}
	}
	rxe2_comp_sqd_check(qp);
}

/*
 * SQD: the requester starts nothing at or beyond dp.req.sqd_stop (the WQE it
 * was in the middle of is finished first), and the SQ is drained once
 * every WQE before that index has completed, acknowledged and retired.
 * IBTA 11.6.2: the SQ_DRAINED event then, and only if it was asked for.
 * Caller holds state_lock.
 */
void rxe2_comp_sqd_check(struct rxe2_qp *qp)
{
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
		.event = IB_EVENT_SQ_DRAINED,
	};

	if (qp->state != IB_QPS_SQD || qp->dp.comp.sqd_drained ||
	    qp->sq.dev_index != qp->dp.req.sqd_stop)
		return;
	qp->dp.comp.sqd_drained = true;
	if (qp->attr.en_sqd_async_notify && qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}

/* the oldest WQE not finished yet, or req.next */
static u32 rxe2_comp_head(struct rxe2_qp *qp)
{
	u32 i;

	for (i = qp->sq.dev_index; i != qp->dp.req.next; i++)
		if (rxe2_sinfo(qp, i)->state != RXE2_WQE_DONE)
			break;
	return i;
}

/* fail the oldest unfinished WQE and the QP */
static void rxe2_comp_fail(struct rxe2_qp *qp, int status)
{
	u32 i = rxe2_comp_head(qp);
	struct rxe2_swqe_info *info = rxe2_sinfo(qp, i);

	if (status == IB_WC_RETRY_EXC_ERR)
		rxe2_qp_dp_count(qp, RXE2_DPC_RETRY_EXCEEDED);
	else if (status == IB_WC_RNR_RETRY_EXC_ERR)
		rxe2_qp_dp_count(qp, RXE2_DPC_RNR_RETRY_EXCEEDED);
	if (i == qp->dp.req.next) {
		if (info->state == RXE2_WQE_NEW)
			goto out;
		qp->dp.req.next++;	/* the WQE being sent */
		qp->dp.req.offset = 0;
	}
	info->state = RXE2_WQE_DONE;
	info->status = status;
	rxe2_comp_retire(qp);
out:
	rxe2_qp_error(qp);
}

/*
 * The retransmit timer is lazy: a message sent and acknowledged costs no
 * timer operation once the timer is pending.  dp.comp.retry_at is the
 * deadline, moved by every progress; dp.comp.retry_live says something sent
 * is unacknowledged.  The timer, when it fires, goes back to sleep
 * until retry_at or lapses when nothing is live (rxe2_retry_timer()).
 * Per-message mod_timer()/timer_delete() (two timer-base locks with IRQs
 * off) were a visible part of an 8-byte round trip under emulation.
 */
static void rxe2_comp_retry_start(struct rxe2_qp *qp)
{
	struct rxe2_qp_dp *dp = &qp->dp;

	unsigned long rto = rxe2_cc_rto(qp), pto = rxe2_cc_probe(qp, rto);

	/* a tail-loss probe first, when one is due before the timeout */
	dp->comp.probe_left = pto ? rto - pto : 0;
	WRITE_ONCE(dp->comp.retry_at, jiffies + (pto ?: rto));
	WRITE_ONCE(dp->comp.retry_live, true);
	smp_mb();	/* live, then pending: pairs with rxe2_retry_timer() */
	/*
	 * Earlier only: a timer pending for a later deadline (the rest of
	 * an ACK timeout after a probe, one armed before a round trip was
	 * measured or backed off) would hold the probe back until then;
	 * one pending for an earlier deadline finds the new one in
	 * retry_at and moves itself on.
	 */
	timer_reduce(&dp->comp.retry_timer, dp->comp.retry_at);
}

/* nothing unacknowledged: the pending timer, if any, lapses */
static void rxe2_comp_retry_stop(struct rxe2_qp *qp)
{
	WRITE_ONCE(qp->dp.comp.retry_live, false);
}

/* comp.psn moved on from old */
static void rxe2_comp_progress(struct rxe2_qp *qp, u32 old)
{
	rxe2_cc_acked(qp, rxe2_psn_diff(qp->dp.comp.psn, old));
	qp->dp.comp.rewound = false;
	if (qp->dp.comp.reread_on &&
	    rxe2_psn_diff(qp->dp.comp.psn, qp->dp.comp.reread_last) > 0) {
		qp->dp.comp.reread_on = false;
		qp->dp.comp.reread_done = true;	/* rxe2_comp_reread_rest() */
	}
	qp->dp.comp.retry_left = qp->attr.retry_cnt;
	qp->dp.comp.rnr_left = qp->attr.rnr_retry;
	if (qp->dp.comp.psn == qp->dp.req.psn)
		rxe2_comp_retry_stop(qp);
	else if (qp->attr.timeout)
		rxe2_comp_retry_start(qp);
}

/* a packet was sent: time it unless older ones are being timed */
void rxe2_comp_arm_retry(struct rxe2_qp *qp)
{
	if (qp->attr.timeout && !qp->dp.comp.retry_live)
		rxe2_comp_retry_start(qp);
}

/*
 * A response was lost: go back to comp.psn, once until progress (a
 * rewind under way resends it already; every further sign of the same
 * loss would restart it).
 */
static void rxe2_comp_go_back(struct rxe2_qp *qp)
{
	if (qp->dp.comp.rewound)
		return;
	qp->dp.comp.rewound = true;
	rxe2_req_rewind(qp, qp->dp.comp.psn);
}

/*
 * Everything up to and including psn is acknowledged.  A READ or atomic
 * still unanswered before that point lost its response: go back to it.
 */
static void rxe2_comp_ack_upto(struct rxe2_qp *qp, u32 psn)
{
	struct rxe2_qp_dp *dp = &qp->dp;
	u32 next = (psn + 1) & RXE2_PSN_MASK;
	u32 old = dp->comp.psn;
	u32 i;

	if (rxe2_psn_diff(next, dp->comp.psn) <= 0 ||
	    rxe2_psn_diff(next, dp->req.psn) > 0)
		return;		/* old, or beyond what was sent */
	for (i = qp->sq.dev_index; i != dp->req.next; i++) {
		struct rxe2_swqe_info *info = rxe2_sinfo(qp, i);
		u32 op = rxe2_swqe(qp, i)->opcode;

		if (info->state == RXE2_WQE_DONE)
			continue;
		if (rxe2_needs_data_response(op)) {
			if (rxe2_psn_diff(psn, info->first_psn) >= 0) {
				if (rxe2_psn_diff(dp->comp.psn,
						  info->first_psn) < 0)
					dp->comp.psn = info->first_psn;
				/* unless it is being asked again for a part */
				if (!dp->comp.reread_on)
					rxe2_comp_go_back(qp);
				return;
			}
			break;
		}
		if (rxe2_psn_diff(psn, info->last_psn) < 0)
			break;
		info->state = RXE2_WQE_DONE;
	}
	dp->comp.psn = next;
	rxe2_comp_progress(qp, old);
	rxe2_comp_retire(qp);
}

/*
 * The wait an RNR NAK asks for, for an hrtimer: a jiffy timer fires at a
 * later tick, up to 4 ms at HZ=250 for perftest's 0.64 ms (code 12), and
 * a receiver whose RQ ran empty for a moment stalled the sender that long.
 */
static ktime_t rxe2_rnr_wait(u8 code)
{
	/* IBTA table 45: RNR NAK timer field, microseconds */
	static const u32 us[32] = {
		655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640,
		960, 1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480,
		30720, 40960, 61440, 81920, 122880, 163840, 245760, 327680,
		491520,
	};

	return ns_to_ktime((u64)us[code & 31] * NSEC_PER_USEC);
}

/* a NAK that ends the QP: not RNR, not a PSN sequence error */
static bool rxe2_nak_fatal(u8 syn)
{
	return (syn & RXE2_AETH_TYPE_MASK) != RXE2_AETH_RNR &&
	       (syn & RXE2_AETH_VAL_MASK) != RXE2_NAK_PSN_SEQ;
}

static void rxe2_comp_nak(struct rxe2_qp *qp, struct rxe2_pkt *pkt, u8 syn)
{
	struct rxe2_qp_dp *dp = &qp->dp;
	u32 prev = (pkt->psn - 1) & RXE2_PSN_MASK;

	trace_rxe2_nak(qp->ibqp.device->index, qp->ibqp.qp_num, pkt->psn, syn,
		       false);
	if (rxe2_psn_diff(pkt->psn, dp->comp.psn) < 0 ||
	    rxe2_psn_diff(pkt->psn, dp->req.sent_psn) >= 0)
		return;		/* stale, or for a PSN never sent */
	/*
	 * A NAK for a packet sent before a go-back-N rewind (its PSN at or
	 * past req.psn again, the resend not there yet) still counts when
	 * it is fatal: the responder is in ERROR and answers no resend, so
	 * dropping it would turn its status into RETRY_EXC_ERR (or, with
	 * timeout 0, nothing).  The others come again for the resend.
	 */
	if (rxe2_psn_diff(pkt->psn, dp->req.psn) >= 0 &&
	    !rxe2_nak_fatal(syn))
		return;
	rxe2_comp_ack_upto(qp, prev);
	if (qp->state != IB_QPS_RTS && qp->state != IB_QPS_SQD)
		return;
	if ((syn & RXE2_AETH_TYPE_MASK) == RXE2_AETH_RNR) {
		rxe2_qp_dp_count(qp, RXE2_DPC_RCVD_RNR_ERR);
		if (dp->comp.rnr_left == 0) {
			rxe2_comp_fail(qp, IB_WC_RNR_RETRY_EXC_ERR);
			return;
		}
		if (dp->comp.rnr_left != 7)
			dp->comp.rnr_left--;
		rxe2_req_rewind(qp, pkt->psn);
		set_bit(RXE2_QPF_RNR_WAIT, &dp->flags);
		rxe2_comp_retry_stop(qp);
		timer_delete(&dp->comp.retry_timer);
		hrtimer_start(&dp->comp.rnr_timer,
			      rxe2_rnr_wait(syn & RXE2_AETH_VAL_MASK),
			      HRTIMER_MODE_REL_SOFT);
		return;
	}
	switch (syn & RXE2_AETH_VAL_MASK) {
	case RXE2_NAK_PSN_SEQ:
		rxe2_qp_dp_count(qp, RXE2_DPC_RCVD_SEQ_ERR);
		rxe2_cc_seq_nak(qp, pkt->psn);
		rxe2_req_rewind(qp, pkt->psn);
		break;
	case RXE2_NAK_REM_ACCESS:
		rxe2_comp_fail(qp, IB_WC_REM_ACCESS_ERR);
		break;
	case RXE2_NAK_REM_OP:
		rxe2_comp_fail(qp, IB_WC_REM_OP_ERR);
		break;
	default:
		rxe2_comp_fail(qp, IB_WC_REM_INV_REQ_ERR);
		break;
	}
}

/*
 * Inline-receive on the requester: with every WR signalled (the data
 * reaches the application only through the CQE) a READ or atomic
 * result of up to max_inl_recv bytes goes into the send CQE when the
 * WQE's SGEs fit in it.  The WQE retires right after its last response
 * (everything before it is acknowledged), so one staging buffer does.
 */
static bool rxe2_comp_stage_inline(struct rxe2_qp *qp, u32 idx,
				   const void *data, u32 len)
{
	struct rxe2_send_wqe *w = rxe2_swqe(qp, idx);

	if (!qp->max_inl_recv || qp->sq_sig_type != IB_SIGNAL_ALL_WR ||
	    len > qp->max_inl_recv ||
	    (w->send_flags & IB_SEND_INLINE) ||
	    rxe2_inline_sges((const void *)(w + 1), w->num_sge, len,
			     NULL) < 0)
		return false;
	memcpy(qp->dp.comp.inl_data, data, len);
	qp->dp.comp.inl_len = len;
	qp->dp.comp.inl_idx = idx;
	qp->dp.comp.inl_staged = true;
	return true;
}

/*
 * A READ response's payload into WQE @idx's SGEs at the cursor: from the
 * packet, or for a one-copy response (rxe2_tx_direct_resp()) straight
 * from the responder's MR.  The READ's @only response (not a re-read
 * tail) in a packet may be staged for inline-receive instead.  0 or the
 * error of the SGEs.
 */
static int rxe2_comp_read_place(struct rxe2_qp *qp, u32 idx,
				struct rxe2_sge_cursor *c,
				struct rxe2_pkt *pkt, bool only)
{
	struct rxe2_swqe_info *info = rxe2_sinfo(qp, idx);

	if (pkt->src)
		return rxe2_sge_copy_src(qp, c, pkt->src, pkt->paylen,
					 info->hold, RXE2_WQE_MRS,
					 &info->mr_seq);
	if (only && rxe2_comp_stage_inline(qp, idx, pkt->payload,
					   pkt->paylen))
		return 0;
	return rxe2_sge_copy(qp, c, pkt->payload, pkt->paylen, true,
			     info->hold, RXE2_WQE_MRS, &info->mr_seq);
}

static void rxe2_comp_read_resp(struct rxe2_qp *qp, struct rxe2_pkt *pkt)
{
	struct rxe2_qp_dp *dp = &qp->dp;
	struct rxe2_swqe_info *info;
	struct rxe2_send_wqe *w;
	u32 i, off, d;
	bool at_end;

	if (rxe2_psn_diff(pkt->psn, dp->comp.psn) < 0 ||
	    rxe2_psn_diff(pkt->psn, dp->req.psn) >= 0)
		return;		/* duplicate or bogus */
	/* implicitly acknowledges what precedes; a gap asks again */
	if (pkt->psn != dp->comp.psn)
		rxe2_comp_ack_upto(qp, (pkt->psn - 1) & RXE2_PSN_MASK);
	if (pkt->psn != dp->comp.psn)
		return;
	i = rxe2_comp_head(qp);
	if (i == dp->req.next)
		return;
	info = rxe2_sinfo(qp, i);
	w = rxe2_swqe(qp, i);
	d = (pkt->psn - info->first_psn) & RXE2_PSN_MASK;
	if (rxe2_psn_diff(pkt->psn, info->first_psn) < 0 ||
	    rxe2_psn_diff(pkt->psn, info->last_psn) > 0)
		return;
	if (pkt->flags & RXE2_OPF_ATOMIC) {
		__be64 orig;
		u64 v;
		struct rxe2_sge_cursor c = {
			.sge = (const struct rxe2_sge *)(w + 1),
			.num = w->num_sge,
		};

		if (!rxe2_is_atomic(w->opcode))
			return;
		memcpy(&orig, rxe2_pkt_ext(pkt, RXE2_OPF_ATMACK),
		       RXE2_ATOMIC_LEN);
		v = be64_to_cpu(orig);
		if (!rxe2_comp_stage_inline(qp, i, &v, RXE2_ATOMIC_LEN) &&
		    rxe2_sge_copy(qp, &c, &v, RXE2_ATOMIC_LEN, true, info->hold,
				  RXE2_WQE_MRS, &info->mr_seq)) {
			info->state = RXE2_WQE_DONE;
			info->status = IB_WC_LOC_PROT_ERR;
			rxe2_comp_retire(qp);
			rxe2_qp_error(qp);
			return;
		}
		info->state = RXE2_WQE_DONE;
	} else {
		bool first = pkt->flags & RXE2_OPF_FIRST;
		bool last = pkt->flags & RXE2_OPF_LAST;
		struct rxe2_sge_cursor c = {
			.sge = (const struct rxe2_sge *)(w + 1),
			.num = w->num_sge,
		};

		/* ATOMIC WRITE and FLUSH: an empty READ response only */
		if (rxe2_is_placement(w->opcode)) {
			if (!first || !last || pkt->paylen)
				return;
			info->state = RXE2_WQE_DONE;
			goto done;
		}
		if (w->opcode != IB_UVERBS_WR_RDMA_READ)
			return;
		off = d * dp->mtu;
		at_end = pkt->psn == info->last_psn;
		/*
		 * A READ asked again mid-way starts over with a FIRST; one
		 * asked again for a part (rxe2_comp_reread()) ends with a
		 * LAST before the READ's own end, or that response comes
		 * from the first stream as a MIDDLE.
		 */
		if ((!first && d == 0) ||
		    (last != at_end &&
		     !(dp->comp.reread_on && pkt->psn == dp->comp.reread_last)))
			return;
		if (at_end ? off + pkt->paylen != info->length :
			     pkt->paylen != dp->mtu)
			return;
		rxe2_sge_seek(&c, off);
		if (rxe2_comp_read_place(qp, i, &c, pkt, first && last &&
					 d == 0)) {
			info->state = RXE2_WQE_DONE;
			info->status = IB_WC_LOC_PROT_ERR;
			rxe2_comp_retire(qp);
			rxe2_qp_error(qp);
			return;
		}
		/* the responder could not read its MR: as if lost, asked again */
		if (pkt->src && pkt->src->err)
			return;
		if (at_end)
			info->state = RXE2_WQE_DONE;
	}
done:
	dp->comp.psn = (pkt->psn + 1) & RXE2_PSN_MASK;
	rxe2_comp_progress(qp, pkt->psn);
	rxe2_comp_retire(qp);
}

/*
 * A positive ACK is cumulative.  One for a PSN sent before a go-back-N
 * rewind (at or past req.psn again, before req.sent_psn) covers everything
 * resent so far; dropped as "never sent", it left a window cut down by
 * a timeout unable to open: every resend drew the same ACK.
 */
static void rxe2_comp_ack(struct rxe2_qp *qp, u32 psn)
{
	struct rxe2_qp_dp *dp = &qp->dp;

	if (rxe2_psn_diff(psn, dp->req.psn) >= 0 &&
	    rxe2_psn_diff(psn, dp->req.sent_psn) < 0) {
		/*
		 * The responder has more than was resent: it kept what
		 * came after the loss.  Pass over that instead of sending
		 * it again; a READ on the way stops the pass.
		 */
		rxe2_comp_ack_upto(qp, (dp->req.psn - 1) & RXE2_PSN_MASK);
		if (rxe2_req_skip(qp, (psn + 1) & RXE2_PSN_MASK))
			rxe2_cc_peer_keeps(qp);	/* only after a NAK */
		rxe2_cc_gap_passed(qp);
		if (rxe2_psn_diff(psn, dp->req.psn) >= 0)
			psn = (dp->req.psn - 1) & RXE2_PSN_MASK;
	}
	rxe2_comp_ack_upto(qp, psn);
}

/*
 * The READ or atomic at the head of the SQ when the completer waits
 * inside it for its answer (everything before its first PSN is
 * acknowledged), as an SQ index; req.next when it does not.
 */
static u32 rxe2_comp_in_answer(struct rxe2_qp *qp)
{
	u32 i = rxe2_comp_head(qp);

	if (i == qp->dp.req.next ||
	    !rxe2_needs_data_response(rxe2_swqe(qp, i)->opcode) ||
	    rxe2_psn_diff(qp->dp.comp.psn, rxe2_sinfo(qp, i)->first_psn) < 0)
		return qp->dp.req.next;
	return i;
}

/*
 * The same for a READ that is sent and not answered to its end, the one
 * kind of answer that can be asked for in part (rxe2_comp_reread()).
 */
static u32 rxe2_comp_in_read(struct rxe2_qp *qp)
{
	u32 i = rxe2_comp_in_answer(qp);
	struct rxe2_swqe_info *info = rxe2_sinfo(qp, i);

	if (i == qp->dp.req.next ||
	    rxe2_swqe(qp, i)->opcode != IB_UVERBS_WR_RDMA_READ ||
	    info->state != RXE2_WQE_SENT ||
	    rxe2_psn_diff(qp->dp.comp.psn, info->last_psn) > 0)
		return qp->dp.req.next;
	return i;
}

/*
 * Whether the completer waits inside a READ or an atomic for its answer:
 * only then is a response past comp.psn worth keeping.  A gap before it
 * that holds SENDs and WRITEs waiting for their ACK is closed by the
 * response itself (it acknowledges what precedes it).
 */
bool rxe2_comp_waits_answer(struct rxe2_qp *qp)
{
	return rxe2_comp_in_answer(qp) != qp->dp.req.next;
}

/*
 * READ responses from comp.psn up to (not including) upto are missing,
 * and some after them are kept (rxe2_reorder.c): ask the READ for those
 * only, once per gap (its answer or the retry timer comes next).  A gap
 * that is not inside a READ (an atomic's ACK) goes back N as before.
 */
void rxe2_comp_reread(struct rxe2_qp *qp, u32 upto)
{
	struct rxe2_qp_dp *dp = &qp->dp;
	struct rxe2_swqe_info *info;
	u32 i, last;

	if ((dp->comp.reread_on && dp->comp.reread_psn == dp->comp.psn) ||
	    rxe2_psn_diff(upto, dp->comp.psn) <= 0 ||
	    rxe2_comp_head(qp) == dp->req.next)
		return;
	i = rxe2_comp_in_read(qp);
	if (i == dp->req.next) {
		rxe2_comp_go_back(qp);
		return;
	}
	info = rxe2_sinfo(qp, i);
	last = rxe2_psn_diff(upto, info->last_psn) > 0 ? info->last_psn :
	       (upto - 1) & RXE2_PSN_MASK;
	if (!rxe2_req_reread(qp, i, dp->comp.psn,
			     rxe2_psn_diff(last, dp->comp.psn) + 1))
		return;
	dp->comp.reread_on = true;
	dp->comp.reread_psn = dp->comp.psn;
	dp->comp.reread_last = last;
	rxe2_qp_dp_count(qp, RXE2_DPC_READ_REREQUESTS);
}

/*
 * The answer to a re-read was taken, and the kept responses behind it,
 * and none is kept past comp.psn (rxe2_reorder_after_drain()).  A
 * responder answers a duplicate READ after the responses it had begun to
 * send (rxe2's and rdma_rxe's take requests in order), or ends the
 * stream it was sending (IBTA lets it): either way nothing more comes of
 * a READ whose responses stopped short of its end before that answer.
 * Ask for the rest at once: with nothing kept behind the gap no third
 * response comes to show it, only the probe would (10 ms at least), and
 * with timeout 0 nothing.  A READ none of whose responses came yet may
 * be answered after the re-read: it is left to wait.
 */
void rxe2_comp_reread_rest(struct rxe2_qp *qp)
{
	u32 i = rxe2_comp_in_read(qp);
	struct rxe2_swqe_info *info = rxe2_sinfo(qp, i);

	if ((qp->state != IB_QPS_RTS && qp->state != IB_QPS_SQD) ||
	    i == qp->dp.req.next || qp->dp.comp.psn == info->first_psn)
		return;
	rxe2_comp_reread(qp, (info->last_psn + 1) & RXE2_PSN_MASK);
}

/* a response to our requests (RC); caller holds state_lock */
void rxe2_comp_rx(struct rxe2_qp *qp, struct rxe2_pkt *pkt)
{
	u8 syn = 0;

	if (pkt->flags & RXE2_OPF_AETH) {
		struct rxe2_aeth *a = rxe2_pkt_ext(pkt, RXE2_OPF_AETH);

		syn = ntohl(a->smsn) >> 24;
		if ((syn & RXE2_AETH_TYPE_MASK) != RXE2_AETH_ACK) {
			if (rxe2_op_of(pkt->opcode) == RXE2_OP_ACK)
				rxe2_comp_nak(qp, pkt, syn);
			return;
		}
	}
	if (rxe2_op_of(pkt->opcode) == RXE2_OP_ACK)
		rxe2_comp_ack(qp, pkt->psn);
	else
		rxe2_comp_read_resp(qp, pkt);
}

/*
 * The tail-loss probe (rxe2_cc_probe()): the first unacknowledged packet
 * again, or, inside a READ, the READ for its missing responses; then
 * the rest of the ACK timeout.  No retry is used, the window stays.
 */
static void rxe2_comp_probe(struct rxe2_qp *qp)
{
	struct rxe2_qp_dp *dp = &qp->dp;
	u32 i = rxe2_comp_in_read(qp);
	struct sk_buff *kept = skb_peek(&dp->comp.ooo);

	rxe2_qp_dp_count(qp, RXE2_DPC_TAIL_PROBES);
	WRITE_ONCE(dp->comp.retry_at, jiffies + dp->comp.probe_left);
	dp->comp.probe_left = 0;
	if (i != dp->req.next) {
		dp->comp.reread_on = false;	/* its answer was lost too */
		rxe2_comp_reread(qp, kept ? rxe2_skb_cb(kept)->psn :
				 (rxe2_sinfo(qp, i)->last_psn + 1) &
				 RXE2_PSN_MASK);
	} else {
		rxe2_cc_probe_rewind(qp, dp->comp.psn);
		rxe2_req_rewind(qp, dp->comp.psn);
	}
	if (!timer_pending(&dp->comp.retry_timer))
		mod_timer(&dp->comp.retry_timer, dp->comp.retry_at);
}

/* timer flags; caller holds state_lock */
void rxe2_comp_timers(struct rxe2_qp *qp)
{
	struct rxe2_qp_dp *dp = &qp->dp;

	if (test_and_clear_bit(RXE2_QPF_RNR, &dp->flags))
		clear_bit(RXE2_QPF_RNR_WAIT, &dp->flags);
	/* SQD still retries: its outstanding WQEs must complete */
	if (!test_and_clear_bit(RXE2_QPF_RETRY, &dp->flags) ||
	    !rxe2_qp_requests_acked(qp) ||
	    (qp->state != IB_QPS_RTS && qp->state != IB_QPS_SQD) ||
	    test_bit(RXE2_QPF_RNR_WAIT, &dp->flags))
		return;
	/*
	 * Nothing outstanding: an expiry that raced with the last ACK, also
	 * in the middle of a WQE whose sent packets are all acknowledged
	 * (the requester goes on by itself), costs no retry.
	 */
	if (dp->comp.psn == dp->req.psn) {
		rxe2_comp_retry_stop(qp);	/* the next packet arms it */
		return;
	}
	/* progress moved the deadline after the timer looked at it */
	if (time_before(jiffies, READ_ONCE(dp->comp.retry_at)))
		return;
	if (dp->comp.probe_left) {
		rxe2_comp_probe(qp);
		return;
	}
	if (dp->comp.retry_left == 0) {
		rxe2_comp_fail(qp, IB_WC_RETRY_EXC_ERR);
		return;
	}
	dp->comp.retry_left--;
	rxe2_qp_dp_count(qp, RXE2_DPC_ACK_TIMEOUTS);
	rxe2_cc_timeout(qp);
	rxe2_req_rewind(qp, dp->comp.psn);
	rxe2_comp_retry_start(qp);
}

static bool rxe2_rq_flush_one(struct rxe2_qp *qp, u64 wr_id)
{
	struct rxe2_cqe cqe = {
		.wr_id = wr_id,
		.status = IB_WC_WR_FLUSH_ERR,
		.opcode = IB_WC_RECV,
		.qp_num = qp->ibqp.qp_num,
		.port_num = RXE2_PORT,
	};

	return !rxe2_cq_post(rxe2_qp_recv_cq(qp), &cqe, false);
}

/*
 * The receive WQE a message was being placed into.  An XRC target's
 * belongs to the SRQ of that message, on whose CQ it completes when the
 * SRQ is still there; gone with it otherwise.
 */
static void rxe2_flush_rwqe(struct rxe2_qp *qp)
{
	struct rxe2_qp_dp *dp = &qp->dp;
	u64 wr_id;

	if (!dp->resp.have_rwqe)
		return;
	rxe2_tm_msg_abort(qp, false);
	wr_id = ((struct rxe2_recv_wqe *)dp->resp.rwqe)->wr_id;
	if (rxe2_qp_is_xrc_tgt(qp)) {
		if (rxe2_xrc_srq_enter(qp, dp->resp.xrc_msg_srqn,
				       dp->resp.xrc_msg_serial)) {
			if (rxe2_rq_flush_one(qp, wr_id))
				dp->resp.have_rwqe = false;
			rxe2_xrc_srq_leave(qp);
		} else {
			dp->resp.have_rwqe = false;
		}
		return;
	}
	if (rxe2_rq_flush_one(qp, wr_id))
		dp->resp.have_rwqe = false;
}

/*
 * The CQ a send completion goes to: a TM QP's READs complete buffers on
 * the SRQ's CQ, its FINs go nowhere (NULL)
 */
static struct rxe2_cq *rxe2_sq_cq(struct rxe2_qp *qp, const struct rxe2_cqe *c)
{
	if (qp->tm_sq)
		return rxe2_tm_sq_cq(qp, c);
	return to_rcq(qp->ibqp.send_cq);
}

/* QP in ERROR: complete everything still queued, in order */
void rxe2_comp_flush_wqes(struct rxe2_qp *qp)
{
	struct rxe2_qp_dp *dp = &qp->dp;
	int avail;

	rxe2_comp_retry_stop(qp);
	timer_delete(&dp->comp.retry_timer);
	hrtimer_try_to_cancel(&dp->comp.rnr_timer);
	/*
	 * The SQ: finished WQEs as they are, the rest flushed.  A full CQ
	 * stops the flush (the next run resumes it once there is room).
	 */
	avail = rxe2_ring_dev_avail(&qp->sq);
	while (avail > 0) {
		u32 idx = qp->sq.dev_index;
		struct rxe2_swqe_info *info = rxe2_sinfo(qp, idx);
		struct rxe2_cqe cqe, *c = &cqe;

		if (info->state == RXE2_WQE_DONE &&
		    info->status == IB_WC_SUCCESS) {
			struct rxe2_send_wqe *w = rxe2_swqe(qp, idx);

			if (qp->sq_sig_type == IB_SIGNAL_ALL_WR ||
			    (w->send_flags & IB_SEND_SIGNALED))
				rxe2_sq_cqe(qp, idx, IB_WC_SUCCESS, true, c);
			else
				c = NULL;
		} else if (info->state == RXE2_WQE_DONE) {
			/*
			 * The requester failed it (the error that took the
			 * QP down) while earlier WQEs waited for their ACKs:
			 * its own status, not a flush, says why.
			 */
			rxe2_sq_cqe(qp, idx, info->status, true, c);
		} else {
			rxe2_sq_cqe(qp, idx, IB_WC_WR_FLUSH_ERR,
				    info->state != RXE2_WQE_NEW, c);
		}
		/* a TM QP's FIN has no CQ to wait for */
		if (c && rxe2_sq_cq(qp, c) &&
		    !rxe2_cq_has_room(rxe2_sq_cq(qp, c)))
			break;
		if (!rxe2_sq_release(qp, c))
			break;
		avail--;
	}
	dp->req.next = qp->sq.dev_index;
	dp->req.offset = 0;

	rxe2_flush_rwqe(qp);
	dp->resp.in_msg = false;
	WRITE_ONCE(dp->resp.read.active, false);
	rxe2_resp_drop_holds(qp);
	/* XRC QPs have neither; an XRC SRQ keeps its WQEs */
	if (qp->ibqp.qp_type == IB_QPT_XRC_INI ||
	    rxe2_qp_is_xrc_tgt(qp))
		return;
	if (!qp->has_rq) {
		/* an SRQ keeps its WQEs: tell the consumer we take no more */
		if (!dp->comp.last_wqe_sent && qp->ibqp.event_handler) {
			struct ib_event ev = {
				.device = qp->ibqp.device,
				.element.qp = &qp->ibqp,
				.event = IB_EVENT_QP_LAST_WQE_REACHED,
			};

			qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
		}
		dp->comp.last_wqe_sent = true;
		return;
	}
	/*
	 * Receives posted from now on need the doorbell to be flushed
	 * promptly (RXE2_RING_F_FLUSH); the ones posted before the process
	 * could see the flag are found by the read that follows.
	 */
	rxe2_ring_set_flush(&qp->rq);
	avail = rxe2_ring_dev_avail(&qp->rq);
	while (avail-- > 0 && rxe2_cq_has_room(to_rcq(qp->ibqp.recv_cq))) {
		struct rxe2_recv_wqe *r = rxe2_ring_slot(&qp->rq,
							 qp->rq.dev_index);
		u64 wr_id = READ_ONCE(r->wr_id);

		/* the slot is free before its completion shows, as on the SQ */
		rxe2_ring_dev_advance(&qp->rq);
		if (!rxe2_rq_flush_one(qp, wr_id))
			break;
	}
}
