// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2: the requester.  Takes send WQEs from the SQ ring in order,
 * copies each one out of shared memory before looking at it, validates
 * it against the QP (opcode for the QP type, SGE count, inline size,
 * every lkey through the MR table, lengths), and sends its packets:
 * path-MTU segments with PSNs, AckReq at the end of each message and
 * every RXE2_ACK_EVERY packets.  The completer (rxe2_comp.c) retires
 * WQEs in order once they are answered; UC and UD WQEs are done as soon
 * as their last packet leaves.
 */
#include <rdma/ib_user_verbs.h>

#include "rxe2_dp.h"
#include "rxe2_requester.h"
#include "rxe2_sge.h"
#include "rxe2_trace.h"
#include "rxe2_wire.h"

#define RXE2_MAX_MSG_SZ		0x80000000u

/* memory operations the requester executes itself: no packets */
static bool rxe2_is_local_op(u32 op)
{
	return op == IB_UVERBS_WR_LOCAL_INV || op == IB_WR_REG_MR ||
	       op == IB_UVERBS_WR_BIND_MW;
}

/*
 * IB_WR_REG_MR exists only in the kernel's opcode space (0x20, no uverbs
 * value): a process cannot post it.  BIND_MW comes only from processes
 * (the kernel has no memory window verbs); the window names itself in
 * the WQE.
 */
static bool rxe2_op_ok(struct rxe2_qp *qp, u32 op)
{
	bool xrc = qp->ibqp.qp_type == IB_QPT_XRC_INI;

	/* an XRC target's SQ is never posted to: nothing is ever fine */
	if (rxe2_qp_is_xrc_tgt(qp))
		return false;
	switch (op) {
	case IB_UVERBS_WR_LOCAL_INV:
		return qp->ibqp.qp_type == IB_QPT_RC ||
		       qp->ibqp.qp_type == IB_QPT_UC || xrc;
	case IB_WR_REG_MR:
		return !qp->is_user && (qp->ibqp.qp_type == IB_QPT_RC ||
					qp->ibqp.qp_type == IB_QPT_UC);
	case IB_UVERBS_WR_BIND_MW:
		return qp->is_user && (qp->ibqp.qp_type == IB_QPT_RC ||
				       qp->ibqp.qp_type == IB_QPT_UC);
	case IB_UVERBS_WR_SEND:
		return true;
	case IB_UVERBS_WR_SEND_WITH_IMM:
		return qp->ibqp.qp_type != IB_QPT_RAW_PACKET;
	case IB_UVERBS_WR_RDMA_WRITE:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
		return qp->ibqp.qp_type == IB_QPT_RC ||
		       qp->ibqp.qp_type == IB_QPT_UC || xrc;
	case IB_UVERBS_WR_RDMA_READ:
	case IB_UVERBS_WR_ATOMIC_CMP_AND_SWP:
	case IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
	case IB_UVERBS_WR_SEND_WITH_INV:
		return qp->ibqp.qp_type == IB_QPT_RC || xrc;
	/* IBTA 1.5 defines them for XRC too; rxe2 has them on RC only */
	case RXE2_WR_ATOMIC_WRITE:
	case RXE2_WR_FLUSH:
		return qp->ibqp.qp_type == IB_QPT_RC;
	default:
		return false;
	}
}

/*
 * ATOMIC WRITE moves the WQE's 8 bytes; FLUSH moves nothing and names a
 * range (or, level MR, the whole MR) of no more than a message's size,
 * with a placement type the device has: global visibility.
 */
static int rxe2_req_check_placement(const struct rxe2_send_wqe *w,
				    struct rxe2_swqe_info *info)
{
	if (w->num_sge || (w->send_flags & IB_SEND_INLINE))
		return IB_WC_LOC_QP_OP_ERR;
	if (w->opcode == RXE2_WR_ATOMIC_WRITE) {
		info->length = RXE2_ATOMIC_LEN;
		return 0;
	}
	if (w->wr.flush.type != RXE2_FLUSH_GLOBAL ||
	    w->wr.flush.level > RXE2_FLUSH_MR)
		return IB_WC_LOC_QP_OP_ERR;
	if (w->wr.flush.length > RXE2_MAX_MSG_SZ)
		return IB_WC_LOC_LEN_ERR;
	return 0;
}

/*
 * Copy the WQE of SQ index idx out of the ring and validate it.
 * Returns 0 or the ib_wc_status it completes with.
 */
static int rxe2_req_fetch(struct rxe2_qp *qp, u32 idx)
{
	struct rxe2_dev *rdev = rxe2_qp_rdev(qp);
	struct rxe2_send_wqe *w = rxe2_swqe(qp, idx);
	struct rxe2_swqe_info *info = rxe2_sinfo(qp, idx);
	const struct rxe2_sge *sge = (const struct rxe2_sge *)(w + 1);
	const u8 *slot = rxe2_ring_slot(&qp->sq, idx);
	u32 room = qp->sq.slot_size - RXE2_SEND_WQE_HDR_SIZE;
	u64 body;
	u64 total = 0;
	int access = 0;
	u32 i;

	/*
	 * The header, then only as much of the body as the copied header
	 * says is used (a whole slot is mostly unused inline room); every
	 * later read is bounded by the same copied lengths.
	 */
	memcpy(w, slot, RXE2_SEND_WQE_HDR_SIZE);
	if (rxe2_is_local_op(w->opcode))
		body = room;
	else if (w->send_flags & IB_SEND_INLINE)
		body = w->inline_len;
	else
		body = (u64)w->num_sge * sizeof(*sge);
	memcpy(w + 1, slot + RXE2_SEND_WQE_HDR_SIZE, min_t(u64, body, room));
	info->state = RXE2_WQE_STARTED;
	info->status = IB_WC_SUCCESS;
	info->length = 0;

	if (!rxe2_op_ok(qp, w->opcode))
		return IB_WC_LOC_QP_OP_ERR;
	if (w->xrc_srqn & ~RXE2_XRC_SRQN_MASK)
		return IB_WC_LOC_QP_OP_ERR;
	if (rxe2_is_local_op(w->opcode))
		return 0;	/* no data: keys are checked when it runs */
	if (rxe2_is_placement(w->opcode))
		return rxe2_req_check_placement(w, info);
	if (w->send_flags & IB_SEND_INLINE) {
		if (w->inline_len > qp->cap.max_inline_data ||
		    w->inline_len > qp->sq.slot_size - RXE2_SEND_WQE_HDR_SIZE ||
		    rxe2_is_read_or_atomic(w->opcode))
			return IB_WC_LOC_QP_OP_ERR;
		total = w->inline_len;
	} else {
		if (w->num_sge > qp->cap.max_send_sge)
			return IB_WC_LOC_QP_OP_ERR;
		if (w->opcode == IB_UVERBS_WR_RDMA_READ ||
		    rxe2_is_atomic(w->opcode))
			access = IB_ACCESS_LOCAL_WRITE;
		for (i = 0; i < w->num_sge; i++) {
			struct rxe2_mr *mr;
			bool ok;

			total += sge[i].length;
			if (!sge[i].length)
				continue;
			mr = rxe2_mr_lookup(rdev, sge[i].lkey, qp->ibqp.pd,
					    access);
			if (!mr)
				return IB_WC_LOC_PROT_ERR;
			ok = rxe2_qp_may_use_mr(qp, mr) &&
			     rxe2_mr_check_range(mr, sge[i].addr,
						 sge[i].length);
			rxe2_mr_put(mr);
			if (!ok)
				return IB_WC_LOC_PROT_ERR;
		}
	}
	if (total > RXE2_MAX_MSG_SZ)
		return IB_WC_LOC_LEN_ERR;
	if (rxe2_is_atomic(w->opcode) && total < RXE2_ATOMIC_LEN)
		return IB_WC_LOC_LEN_ERR;
	if (rxe2_is_atomic(w->opcode))
		total = RXE2_ATOMIC_LEN;
	if (rxe2_qp_is_ud(qp) &&
	    total > ib_mtu_enum_to_int(READ_ONCE(rdev->active_mtu)))
		return IB_WC_LOC_LEN_ERR;
	info->length = total;
	return 0;
}

/* the UD destination: an AH of this QP's PD */
static int rxe2_req_ud_av(struct rxe2_qp *qp, u32 ah_num, struct rxe2_av *av)
{
	struct rxe2_dev *rdev = rxe2_qp_rdev(qp);
	struct rxe2_ah *ah;
	int ret = -EINVAL;

	rcu_read_lock();
	ah = xa_load(&rdev->ah_table.xa, ah_num);
	if (ah && ah->ibah.pd == qp->ibqp.pd)
		ret = rxe2_av_from_attr(av, &ah->attr,
					ah->ibah.sgid_attr);
	rcu_read_unlock();
	return ret;
}

static u8 rxe2_wire_op(struct rxe2_qp *qp, u32 op, bool first, bool last)
{
	u8 base = rxe2_qp_transport(qp);

	switch (op) {
	case IB_UVERBS_WR_SEND:
		return base + (first && last ? RXE2_OP_SEND_ONLY :
			       first ? RXE2_OP_SEND_FIRST :
			       last ? RXE2_OP_SEND_LAST : RXE2_OP_SEND_MIDDLE);
	case IB_UVERBS_WR_SEND_WITH_IMM:
		return base + (first && last ? RXE2_OP_SEND_ONLY_IMM :
			       first ? RXE2_OP_SEND_FIRST :
			       last ? RXE2_OP_SEND_LAST_IMM :
			       RXE2_OP_SEND_MIDDLE);
	case IB_UVERBS_WR_SEND_WITH_INV:
		return base + (first && last ? RXE2_OP_SEND_ONLY_INV :
			       first ? RXE2_OP_SEND_FIRST :
			       last ? RXE2_OP_SEND_LAST_INV :
			       RXE2_OP_SEND_MIDDLE);
	case IB_UVERBS_WR_RDMA_WRITE:
		return base + (first && last ? RXE2_OP_WRITE_ONLY :
			       first ? RXE2_OP_WRITE_FIRST :
			       last ? RXE2_OP_WRITE_LAST :
			       RXE2_OP_WRITE_MIDDLE);
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
		return base + (first && last ? RXE2_OP_WRITE_ONLY_IMM :
			       first ? RXE2_OP_WRITE_FIRST :
			       last ? RXE2_OP_WRITE_LAST_IMM :
			       RXE2_OP_WRITE_MIDDLE);
	case IB_UVERBS_WR_RDMA_READ:
		return base + RXE2_OP_READ_REQ;
	case IB_UVERBS_WR_ATOMIC_CMP_AND_SWP:
		return base + RXE2_OP_CMP_SWAP;
	case RXE2_WR_ATOMIC_WRITE:
		return RXE2_OP_ATOMIC_WRITE;
	case RXE2_WR_FLUSH:
		return RXE2_OP_FLUSH;
	default:
		return base + RXE2_OP_FETCH_ADD;
	}
}

/* the RETH of the packet at offset off of WQE w (length: what is left) */
static void rxe2_req_reth(const struct rxe2_send_wqe *w, u32 length, u32 off,
			  struct rxe2_reth *r)
{
	switch (w->opcode) {
	case RXE2_WR_ATOMIC_WRITE:
		r->va = cpu_to_be64(w->wr.atomic_write.remote_addr);
		r->rkey = htonl(w->wr.atomic_write.rkey);
		r->len = htonl(RXE2_ATOMIC_LEN);
		break;
	case RXE2_WR_FLUSH:
		r->va = cpu_to_be64(w->wr.flush.remote_addr);
		r->rkey = htonl(w->wr.flush.rkey);
		r->len = htonl((u32)w->wr.flush.length);
		break;
	default:
		r->va = cpu_to_be64(w->wr.rdma.remote_addr + off);
		r->rkey = htonl(w->wr.rdma.rkey);
		r->len = htonl(length - off);
	}
}

static u32 rxe2_npkts(u32 len, u32 mtu)
{
	return len ? DIV_ROUND_UP(len, mtu) : 1;
}

/*
 * Send the next packet of WQE idx.  Returns 0, or an ib_wc_status for a
 * WQE that fails here (a key that went away under us).
 */
static int rxe2_req_packet(struct rxe2_qp *qp, u32 idx)
{
	struct rxe2_qp_dp *dp = &qp->dp;
	struct rxe2_send_wqe *w = rxe2_swqe(qp, idx);
	struct rxe2_swqe_info *info = rxe2_sinfo(qp, idx);
	bool rc = rxe2_qp_requests_acked(qp);
	bool ud = rxe2_qp_is_ud(qp);
	u32 mtu = ud ? info->length : dp->mtu;
	u32 off = dp->req.offset, n = 0, npsn = 1;
	bool first, last, ackreq = false, gap, direct, sent = false;
	const struct rxe2_opinfo *oi;
	struct rxe2_av ud_av, *av = &dp->av;
	struct rxe2_bth *bth;
	struct sk_buff *skb;
	u16 sport = dp->src_port;
	u32 dqpn = qp->attr.dest_qp_num;
	int ret;
	u8 op;

	if (ud) {
		if (rxe2_req_ud_av(qp, w->wr.ud.ah_num, &ud_av))
			return IB_WC_LOC_QP_OP_ERR;
		av = &ud_av;
		dqpn = w->wr.ud.remote_qpn;
		sport = rxe2_src_port(qp->ibqp.qp_num, dqpn, av->flow_label);
		mtu = max_t(u32, mtu, 1);
	}
	if (off == 0) {
		info->first_psn = dp->req.psn;
		info->last_psn = (dp->req.psn +
				  (rxe2_is_atomic(w->opcode) ? 1 :
				   rxe2_npkts(info->length, mtu)) - 1) &
				 RXE2_PSN_MASK;
	}
	if (rxe2_is_read_or_atomic(w->opcode)) {
		first = true;
		last = true;
		if (w->opcode == IB_UVERBS_WR_RDMA_READ)
			npsn = rxe2_npkts(info->length - off, mtu);
		if (w->opcode == RXE2_WR_ATOMIC_WRITE)
			n = RXE2_ATOMIC_LEN;
	} else {
		n = min(mtu, info->length - off);
		first = off == 0;
		last = off + n == info->length;
	}
	op = rxe2_wire_op(qp, w->opcode, first, last);
	oi = &rxe2_opinfo[op];
	gap = rc && rxe2_cc_gap_only(qp, dp->req.psn);
	if (rc && (last || dp->req.noack + 1 >= RXE2_ACK_EVERY || gap))
		ackreq = true;

	/* from the SGEs: perhaps read in place by a local receiver */
	direct = n && w->opcode != RXE2_WR_ATOMIC_WRITE &&
		 !(w->send_flags & IB_SEND_INLINE);
	bth = rxe2_tx_begin(qp, oi->hdr_len, n, direct, &skb);	/* or staged */
	if (!bth)
		return -ENOMEM;
	rxe2_bth_init(bth, op,
		      last && (w->send_flags & IB_SEND_SOLICITED),
		      (4 - (n & 3)) & 3, dqpn, ackreq, dp->req.psn);
	if (oi->flags & RXE2_OPF_DETH) {
		struct rxe2_deth *d = (void *)bth + rxe2_ext_off(oi->flags,
							 RXE2_OPF_DETH);
		u32 qkey = w->wr.ud.remote_qkey;

		if (qkey & 0x80000000u)
			qkey = qp->attr.qkey;
		d->qkey = htonl(qkey);
		d->sqp = htonl(qp->ibqp.qp_num);
	}
	if (oi->flags & RXE2_OPF_XRCETH) {
		struct rxe2_xrceth *x = (void *)bth + rxe2_ext_off(oi->flags,
							   RXE2_OPF_XRCETH);

		x->srqn = htonl(w->xrc_srqn);
	}
	if (oi->flags & RXE2_OPF_RETH)
		rxe2_req_reth(w, info->length, off, (void *)bth +
			      rxe2_ext_off(oi->flags, RXE2_OPF_RETH));
	if (oi->flags & RXE2_OPF_FETH) {
		struct rxe2_feth *f = (void *)bth + rxe2_ext_off(oi->flags,
							 RXE2_OPF_FETH);

		f->bits = htonl(w->wr.flush.type |
				w->wr.flush.level << RXE2_FETH_SEL_SHIFT);
	}
	if (oi->flags & RXE2_OPF_ATMETH) {
		struct rxe2_atmeth *a = (void *)bth + rxe2_ext_off(oi->flags,
							   RXE2_OPF_ATMETH);

		a->va = cpu_to_be64(w->wr.atomic.remote_addr);
		a->rkey = htonl(w->wr.atomic.rkey);
		a->swap_add = cpu_to_be64(w->opcode ==
					  IB_UVERBS_WR_ATOMIC_CMP_AND_SWP ?
					  w->wr.atomic.swap :
					  w->wr.atomic.compare_add);
		a->cmp = cpu_to_be64(w->wr.atomic.compare_add);
	}
	if (oi->flags & (RXE2_OPF_IMM | RXE2_OPF_IETH)) {
		__u32 *ex = (void *)bth + rxe2_ext_off(oi->flags, RXE2_OPF_IMM);

		/* imm_data is big endian in the WQE; the rkey is not */
		if (oi->flags & RXE2_OPF_IMM)
			*ex = w->ex;
		else
			*(__be32 *)ex = htonl(w->ex);
	}
	if (n) {
		u8 *payload = (u8 *)bth + oi->hdr_len;

		if (w->opcode == RXE2_WR_ATOMIC_WRITE) {
			memcpy(payload, w->wr.atomic_write.data, n);
		} else if (w->send_flags & IB_SEND_INLINE) {
			memcpy(payload, (u8 *)(w + 1) + off, n);
		} else {
			struct rxe2_sge_cursor c = {
				.sge = (const struct rxe2_sge *)(w + 1),
				.num = w->num_sge,
			};

			/* only the headers staged: see rxe2_tx_begin() */
			sent = !skb && dp->loop.tx_stage_len == oi->hdr_len;
			rxe2_sge_seek(&c, off);
			if (sent)
				ret = rxe2_tx_direct(qp, av, sport, &c, n,
						     info->hold,
						     &info->mr_seq);
			else
				ret = rxe2_sge_copy(qp, &c, payload, n, false,
						    info->hold, RXE2_WQE_MRS,
						    &info->mr_seq);
			if (ret && ret != -ENOMEM) {
				kfree_skb(skb);
				return IB_WC_LOC_PROT_ERR;
			}
		}
	}

	if (!sent)	/* a lost packet is retried */
		rxe2_tx_finish(qp, av, sport, skb);
	if (dp->pace.rate_kbps)
		rxe2_pace_sent(qp, oi->hdr_len + n);
	if (ackreq)
		rxe2_cc_sent(qp, dp->req.psn);
	dp->req.noack = ackreq ? 0 : dp->req.noack + 1;
	dp->req.psn = (dp->req.psn + npsn) & RXE2_PSN_MASK;
	if (rxe2_psn_diff(dp->req.psn, dp->req.sent_psn) > 0)
		dp->req.sent_psn = dp->req.psn;
	if (rxe2_is_read_or_atomic(w->opcode))
		dp->req.offset = info->length;
	else
		dp->req.offset += n;
	if (dp->req.offset >= info->length) {
		dp->req.offset = 0;
		dp->req.next++;
		info->state = rc ? RXE2_WQE_SENT : RXE2_WQE_DONE;
	}
	if (rc)
		rxe2_comp_arm_retry(qp);
	/* the gap's packet alone: what followed it is with the responder */
	if (gap)
		rxe2_cc_gap_closed(qp);
	return 0;
}

/* READ/atomic WQEs sent and not answered, and whether any is pending */
u32 rxe2_req_rd_inflight(struct rxe2_qp *qp)
{
	u32 i, n = 0;

	for (i = qp->sq.dev_index; i != qp->dp.req.next; i++) {
		struct rxe2_swqe_info *info = rxe2_sinfo(qp, i);

		if (info->state == RXE2_WQE_SENT &&
		    rxe2_is_read_or_atomic(rxe2_swqe(qp, i)->opcode))
			n++;
	}
	return n;
}

/*
 * rxe2_req_rewind() - go back N: resend from psn, which lies in a WQE
 * between the SQ consumer and the one being sent.
 */
void rxe2_req_rewind(struct rxe2_qp *qp, u32 psn)
{
	struct rxe2_qp_dp *dp = &qp->dp;
	struct rxe2_swqe_info *info;
	u32 i, old_next = dp->req.next;
	int d;

	if (rxe2_psn_diff(psn, dp->req.psn) >= 0)
		return;		/* nothing sent from there yet */
	rxe2_qp_dp_count(qp, RXE2_DPC_COMPLETER_RETRY);
	rxe2_cc_resend(qp);
	dp->comp.reread_on = false;	/* the whole READ is asked again */
	trace_rxe2_retransmit(qp->ibqp.device->index, qp->ibqp.qp_num, psn,
			      dp->req.psn);
	for (i = qp->sq.dev_index; i != old_next; i++) {
		info = rxe2_sinfo(qp, i);
		if (info->state != RXE2_WQE_DONE &&
		    rxe2_psn_diff(psn, info->last_psn) <= 0)
			break;
	}
	/* i == old_next: inside the WQE being sent (req.offset > 0) */
	info = rxe2_sinfo(qp, i);
	d = rxe2_psn_diff(psn, info->first_psn);
	if (d < 0 || rxe2_is_atomic(rxe2_swqe(qp, i)->opcode))
		d = 0;
	dp->req.offset = min_t(u64, (u64)d * dp->mtu, info->length);
	if (dp->req.offset >= info->length) {
		d = 0;
		dp->req.offset = 0;
	}
	dp->req.next = i;
	for (; i != old_next; i++) {
		info = rxe2_sinfo(qp, i);
		if (info->state == RXE2_WQE_SENT)
			info->state = RXE2_WQE_STARTED;
	}
	dp->req.psn = (rxe2_sinfo(qp, dp->req.next)->first_psn + d) &
		      RXE2_PSN_MASK;
	dp->req.noack = 0;
}

/*
 * rxe2_req_skip() - after a go-back-N rewind the responder acknowledged
 * packets not resent yet (an rxe2 responder keeps what came out of order,
 * rxe2_reorder.c): pass over them, up to the PSN before "to", instead of
 * sending them again.  Only SEND and WRITE packets are passed over; a
 * READ or atomic stops the walk, as its answer, not an ACK, completes
 * it.  Returns how many PSNs were passed over.
 */
u32 rxe2_req_skip(struct rxe2_qp *qp, u32 to)
{
	struct rxe2_qp_dp *dp = &qp->dp;
	u32 skipped = 0;

	while (rxe2_psn_diff(dp->req.psn, to) < 0) {
		struct rxe2_swqe_info *info = rxe2_sinfo(qp, dp->req.next);
		u32 op = rxe2_swqe(qp, dp->req.next)->opcode;
		u32 left, n;

		/* SQD: nothing from sqd_stop on, sent before or not */
		if (qp->state == IB_QPS_SQD && dp->req.next == dp->req.sqd_stop)
			break;
		if (info->state == RXE2_WQE_DONE && rxe2_is_local_op(op)) {
			dp->req.next++;
			continue;
		}
		if (info->state != RXE2_WQE_STARTED ||
		    rxe2_is_read_or_atomic(op) || rxe2_is_local_op(op))
			break;
		left = rxe2_psn_diff(info->last_psn, dp->req.psn) + 1;
		n = min_t(u32, left, rxe2_psn_diff(to, dp->req.psn));
		dp->req.psn = (dp->req.psn + n) & RXE2_PSN_MASK;
		skipped += n;
		if (n < left) {
			dp->req.offset += n * dp->mtu;
			break;
		}
		dp->req.offset = 0;
		dp->req.next++;
		info->state = RXE2_WQE_SENT;
	}
	if (skipped) {
		dp->req.noack = 0;
		rxe2_qp_dp_count(qp, RXE2_DPC_RESEND_SKIPPED);
	}
	return skipped;
}

/*
 * rxe2_req_reread() - ask the READ of SQ index idx again for npkts
 * responses from psn (whose predecessors are here, and some after them
 * too): a READ request with that PSN, the RETH moved to the first
 * missing byte and as long as the missing part.  The requester's own
 * position does not move.  False: no packet buffer.
 */
bool rxe2_req_reread(struct rxe2_qp *qp, u32 idx, u32 psn, u32 npkts)
{
	struct rxe2_qp_dp *dp = &qp->dp;
	struct rxe2_send_wqe *w = rxe2_swqe(qp, idx);
	struct rxe2_swqe_info *info = rxe2_sinfo(qp, idx);
	u32 off = rxe2_psn_diff(psn, info->first_psn) * dp->mtu;
	u8 op = rxe2_wire_op(qp, w->opcode, true, true);
	const struct rxe2_opinfo *oi = &rxe2_opinfo[op];
	struct rxe2_reth *r;
	struct rxe2_bth *bth;
	struct sk_buff *skb;

	bth = rxe2_tx_begin(qp, oi->hdr_len, 0, false, &skb);
	if (!bth)
		return false;
	rxe2_bth_init(bth, op, false, 0, qp->attr.dest_qp_num, true, psn);
	if (oi->flags & RXE2_OPF_XRCETH)
		((struct rxe2_xrceth *)((void *)bth +
		 rxe2_ext_off(oi->flags, RXE2_OPF_XRCETH)))->srqn =
			htonl(w->xrc_srqn);
	r = (void *)bth + rxe2_ext_off(oi->flags, RXE2_OPF_RETH);
	rxe2_req_reth(w, info->length, off, r);
	r->len = htonl(min_t(u32, npkts * dp->mtu, info->length - off));
	rxe2_tx_finish(qp, &dp->av, dp->src_port, skb);
	return true;
}

/*
 * LOCAL_INV, REG_MR and BIND_MW run when the requester reaches them, in
 * SQ order, so a REG_MR or a bind takes effect before any later WQE's
 * packet leaves.  A
 * LOCAL_INV also waits until every earlier WQE is complete: an earlier
 * WQE may still have to retransmit (or place READ data) through the MR
 * it invalidates, and IB_SEND_FENCE (the IBTA's way to order an
 * invalidation after earlier READs) is thereby always honoured.
 * Returns false when it has to wait.
 */
static bool rxe2_req_local_op(struct rxe2_qp *qp, u32 idx)
{
	struct rxe2_send_wqe *w = rxe2_swqe(qp, idx);
	struct rxe2_swqe_info *info = rxe2_sinfo(qp, idx);
	int status;

	if (w->opcode == IB_UVERBS_WR_LOCAL_INV) {
		if (qp->sq.dev_index != idx)
			return false;
		status = rxe2_mr_invalidate(qp, w->ex);
	} else if (w->opcode == IB_UVERBS_WR_BIND_MW) {
		status = rxe2_mw_bind(qp, w);
	} else {
		status = rxe2_mr_reg_fast(qp, (u32)w->wr.rdma.remote_addr,
					  w->ex, w->wr.rdma.rkey);
	}
	info->state = RXE2_WQE_DONE;
	info->status = status;
	info->length = 0;
	qp->dp.req.next++;
	rxe2_comp_retire(qp);
	if (status)
		rxe2_qp_error(qp);
	return !status;
}

/*
 * Caller holds state_lock.  Sends at most *budget packets (and counts
 * them off); work left beyond that goes to the QP's work item.
 */
static void rxe2_req_send_all(struct rxe2_qp *qp, int *budget)
{
	struct rxe2_qp_dp *dp = &qp->dp;
	u32 max_rd = max_t(u32, qp->attr.max_rd_atomic, 1);
	bool rc = rxe2_qp_requests_acked(qp);
	int avail;

	if (qp->state != IB_QPS_RTS && qp->state != IB_QPS_SQD)
		return;
	for (;;) {
		struct rxe2_swqe_info *info;
		struct rxe2_send_wqe *w;
		u32 idx = dp->req.next;
		int status;

		if (test_bit(RXE2_QPF_RNR_WAIT, &dp->flags))
			return;
		/* SQD: finish (and resend) what was started, start nothing */
		if (qp->state == IB_QPS_SQD && idx == dp->req.sqd_stop)
			break;
		avail = rxe2_ring_dev_avail(&qp->sq);
		if (avail < 0) {
			rxe2_qp_error(qp);
			return;
		}
		if (idx - qp->sq.dev_index >= (u32)avail)
			break;
		if (rc && !rxe2_cc_may_send(qp))
			break;
		if (*budget <= 0) {
			rxe2_qp_kick(qp);
			return;
		}
		(*budget)--;
		info = rxe2_sinfo(qp, idx);
		w = rxe2_swqe(qp, idx);
		/*
		 * Go-back-N passes over the local operations it finds done
		 * (REG_MR, BIND_MW): they took effect when first reached, and
		 * a second run would find the MR or window already VALID.
		 */
		if (info->state == RXE2_WQE_DONE) {
			dp->req.next++;
			continue;
		}
		if (info->state == RXE2_WQE_NEW) {
			status = rxe2_req_fetch(qp, idx);
			if (status) {
				info->state = RXE2_WQE_DONE;
				info->status = status;
				dp->req.next++;
				rxe2_comp_retire(qp);
				rxe2_qp_error(qp);
				return;
			}
		}
		if (dp->req.offset == 0 && rc &&
		    (rxe2_is_read_or_atomic(w->opcode) ||
		     (w->send_flags & IB_SEND_FENCE)) &&
		    rxe2_req_rd_inflight(qp) >=
		    (rxe2_is_read_or_atomic(w->opcode) ? max_rd : 1))
			break;
		if (rxe2_is_local_op(w->opcode)) {
			if (!rxe2_req_local_op(qp, idx))
				break;
			continue;
		}
		/*
		 * Ahead of its rate: the pace timer runs the QP again.  Only
		 * packets wait; local operations and go-back-N's skips do not.
		 */
		if (dp->pace.rate_kbps && !rxe2_pace_may_send(qp))
			break;
		status = qp->ibqp.qp_type == IB_QPT_RAW_PACKET ?
			 rxe2_raw_send(qp, idx) : rxe2_req_packet(qp, idx);
		if (status < 0)
			break;	/* no memory: the retry timer comes back */
		if (status) {
			info->state = RXE2_WQE_DONE;
			info->status = status;
			dp->req.next++;
			dp->req.offset = 0;
			rxe2_comp_retire(qp);
			rxe2_qp_error(qp);
			return;
		}
		if (info->state == RXE2_WQE_DONE)
			rxe2_comp_retire(qp);
	}
}

/*
 * Send what the SQ has, within the budget; a local QP kept locked for
 * one-copy requests meanwhile is let go at the end (rxe2_tx_direct()).
 */
void rxe2_req_run(struct rxe2_qp *qp, int *budget)
{
	rxe2_ring_live_begin(&qp->sq);
	rxe2_req_send_all(qp, budget);
	if (rxe2_ring_live_end(&qp->sq)) {
		rxe2_qp_dp_count(qp, RXE2_DPC_LIVE_SQ_POSTS);
		set_bit(RXE2_QPF_DOORBELL, &qp->dp.flags);
	}
	rxe2_qp_direct_end(qp);
}

/* kernel QPs: write the WRs into the kernel SQ ring, then run the QP */
int rxe2_post_send_kernel(struct rxe2_qp *qp, const struct ib_send_wr *wr,
			  const struct ib_send_wr **bad_wr)
{
	struct rxe2_ring *r = &qp->sq;
	unsigned long flags;
	int ret = 0;

	if (READ_ONCE(qp->state) < IB_QPS_RTS) {
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&r->lock, flags);
	for (; wr; wr = wr->next) {
		struct rxe2_send_wqe *w;
		u8 *data;
		int i;

		if (wr->num_sge < 0 || wr->num_sge > qp->cap.max_send_sge ||
		    (wr->opcode > IB_WR_SEND_WITH_INV &&
		     wr->opcode != IB_WR_REG_MR)) {
			ret = -EINVAL;
			break;
		}
		w = rxe2_ring_client_next(r);
		if (IS_ERR(w)) {
			ret = PTR_ERR(w);
			break;
		}
		memset(w, 0, RXE2_SEND_WQE_HDR_SIZE);
		w->wr_id = wr->wr_id;
		w->opcode = wr->opcode;
		w->send_flags = wr->send_flags & (IB_SEND_FENCE |
						  IB_SEND_SIGNALED |
						  IB_SEND_SOLICITED |
						  IB_SEND_INLINE);
		if (wr->opcode == IB_WR_SEND_WITH_INV ||
		    wr->opcode == IB_WR_LOCAL_INV)
			w->ex = wr->ex.invalidate_rkey;
		else if (wr->opcode == IB_WR_REG_MR)
			w->ex = reg_wr(wr)->key;
		else
			w->ex = (__force u32)wr->ex.imm_data;
		switch (wr->opcode) {
		case IB_WR_RDMA_WRITE:
		case IB_WR_RDMA_WRITE_WITH_IMM:
		case IB_WR_RDMA_READ:
			w->wr.rdma.remote_addr = rdma_wr(wr)->remote_addr;
			w->wr.rdma.rkey = rdma_wr(wr)->rkey;
			break;
		case IB_WR_REG_MR:
			/*
			 * The MR is found again by the key's index when the
			 * WR runs; the access flags travel in rkey and the
			 * MR's own key in remote_addr, to check that the key
			 * belongs to the WR's MR.
			 */
			w->wr.rdma.rkey = reg_wr(wr)->access;
			w->wr.rdma.remote_addr = reg_wr(wr)->mr->lkey;
			break;
		case IB_WR_ATOMIC_CMP_AND_SWP:
		case IB_WR_ATOMIC_FETCH_AND_ADD:
			w->wr.atomic.remote_addr = atomic_wr(wr)->remote_addr;
			w->wr.atomic.compare_add = atomic_wr(wr)->compare_add;
			w->wr.atomic.swap = atomic_wr(wr)->swap;
			w->wr.atomic.rkey = atomic_wr(wr)->rkey;
			break;
		case IB_WR_SEND:
		case IB_WR_SEND_WITH_IMM:
			if (!rxe2_qp_is_ud(qp))
				break;
			w->wr.ud.ah_num = to_rah(ud_wr(wr)->ah)->ah_num;
			w->wr.ud.remote_qpn = ud_wr(wr)->remote_qpn;
			w->wr.ud.remote_qkey = ud_wr(wr)->remote_qkey;
			break;
		default:
			break;
		}
		data = (u8 *)(w + 1);
		if (wr->send_flags & IB_SEND_INLINE) {
			u32 len = 0;

			for (i = 0; i < wr->num_sge; i++) {
				u32 n = wr->sg_list[i].length;

				/* not len + n: two u32s can wrap past it */
				if (n > qp->cap.max_inline_data - len) {
					ret = -EINVAL;
					break;
				}
				memcpy(data + len,
				       (void *)(uintptr_t)wr->sg_list[i].addr,
				       n);
				len += n;
			}
			if (ret)
				break;
			w->inline_len = len;
		} else {
			w->num_sge = wr->num_sge;
			rxe2_sge_from_ib((struct rxe2_sge *)data, wr->sg_list,
					 wr->num_sge);
		}
		rxe2_ring_client_advance(r);
	}
	spin_unlock_irqrestore(&r->lock, flags);
	if (ret)
		*bad_wr = wr;
	/* kernel consumers may post from atomic context: defer the run */
	rxe2_qp_kick(qp);
	return ret;
}
