// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2: the responder.  Checks each request's PSN against the expected
 * one (RC: a gap draws one sequence NAK, a duplicate is answered again:
 * SEND/WRITE re-ACKed, READ re-executed, an atomic's saved result
 * replayed, never re-applied; UC: a gap drops the message in progress),
 * places SEND data into receive WQEs taken from the RQ or SRQ ring (a
 * missing one draws an RNR NAK), executes RDMA WRITE, READ and atomics
 * against MRs found by rkey (PD, access and range checked), writes the
 * receive completions and sends ACKs, read responses and atomic ACKs.
 * UD: Q_Key check, GRH into the first 40 bytes of the buffer.
 * Inline-receive: a short SEND goes into its CQE, not the buffer.
 */
#include <linux/highmem.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <rdma/ib_umem.h>

#include "rxe2_dp.h"
#include "rxe2_responder.h"
#include "rxe2_sge.h"
#include "rxe2_trace.h"
#include "rxe2_wire.h"

/* ibv_wc_flags values, which the CQE carries */
#define RXE2_WC_GRH		(1 << 0)
#define RXE2_WC_WITH_IMM	(1 << 1)
#define RXE2_WC_WITH_INV	(1 << 3)

/*
 * Serialises every atomic's read-modify-write and every ATOMIC WRITE's
 * store, device-wide: an ATOMIC WRITE between an atomic's read and its
 * write would otherwise be lost.
 */
static DEFINE_SPINLOCK(rxe2_atomic_lock);

/* an ATOMIC WRITE's store (rxe2_place.c): p is 8-byte aligned */
void rxe2_atomic_store(u64 *p, u64 v)
{
	spin_lock_bh(&rxe2_atomic_lock);
	WRITE_ONCE(*p, v);
	spin_unlock_bh(&rxe2_atomic_lock);
}

/* the responder's messages are over: their MR objects go */
void rxe2_resp_drop_holds(struct rxe2_qp *qp)
{
	struct rxe2_qp_dp *dp = &qp->dp;

	rxe2_mr_msg_end(dp->resp.rcv_hold, RXE2_RECV_MRS);
	rxe2_mr_msg_end(&dp->resp.write.hold, 1);
	rxe2_mr_msg_end(&dp->resp.read.hold, 1);
}

/*
 * To RESET, at creation and at destroy: every MR object the QP holds
 * goes, the requester's (per SQ slot) too.
 */
void rxe2_resp_reset(struct rxe2_qp *qp)
{
	struct rxe2_qp_dp *dp = &qp->dp;
	u32 i;

	rxe2_resp_drop_holds(qp);
	for (i = 0; dp->req.sinfo && i < qp->sq.num_slots; i++)
		rxe2_mr_msg_end(dp->req.sinfo[i].hold, RXE2_WQE_MRS);
	rxe2_tm_msg_abort(qp, true);
	dp->resp.have_rwqe = false;
	dp->resp.rcv_inline = false;
	dp->comp.inl_staged = false;
	dp->resp.in_msg = false;
	WRITE_ONCE(dp->resp.read.active, false);
	dp->resp.nak_sent = false;
	memset(dp->resp.atomic_res, 0, sizeof(dp->resp.atomic_res));
	dp->resp.atomic_next = 0;
}

static void rxe2_resp_bth(struct rxe2_qp *qp, struct rxe2_bth *bth, u8 op,
			  u32 paylen, u32 psn)
{
	/* op is the RC opcode; an XRC target answers with XRC's */
	rxe2_bth_init(bth, rxe2_qp_transport(qp) | op, false,
		      (4 - (paylen & 3)) & 3, qp->attr.dest_qp_num, false, psn);
}

static struct rxe2_bth *rxe2_resp_alloc(struct rxe2_qp *qp, u8 op, u32 paylen,
					u32 psn, struct sk_buff **skb)
{
	struct rxe2_bth *bth;

	*skb = rxe2_tx_alloc(qp, rxe2_opinfo[op].hdr_len, paylen, &bth);
	if (!*skb)
		return NULL;
	rxe2_resp_bth(qp, bth, op, paylen, psn);
	return bth;
}

static void rxe2_set_aeth(struct rxe2_bth *bth, u8 op, u8 syn, u32 msn)
{
	struct rxe2_aeth *a = (void *)bth + rxe2_ext_off(rxe2_opinfo[op].flags,
							 RXE2_OPF_AETH);

	a->smsn = htonl((u32)syn << 24 | (msn & 0xffffff));
}

void rxe2_send_ack(struct rxe2_qp *qp, u8 syn, u32 psn)
{
	struct rxe2_bth *bth;
	struct sk_buff *skb;

	if ((syn & RXE2_AETH_TYPE_MASK) != RXE2_AETH_ACK)
		trace_rxe2_nak(qp->ibqp.device->index, qp->ibqp.qp_num,
			       psn & RXE2_PSN_MASK, syn, true);
	else if (rxe2_tx_loop_ack(qp,
				  (u32)syn << 24 | (qp->dp.resp.msn & 0xffffff),
				  psn & RXE2_PSN_MASK))
		return;
	bth = rxe2_resp_alloc(qp, RXE2_OP_ACK, 0, psn, &skb);
	if (!bth)
		return;
	rxe2_set_aeth(bth, RXE2_OP_ACK, syn, qp->dp.resp.msn);
	rxe2_tx_send(qp, &qp->dp.av, qp->dp.src_port, skb);
}

/* the answer to an ATOMIC WRITE or a FLUSH (IBTA 1.5) */
void rxe2_send_empty_read_resp(struct rxe2_qp *qp, u32 psn)
{
	struct rxe2_bth *bth;
	struct sk_buff *skb;

	bth = rxe2_resp_alloc(qp, RXE2_OP_READ_RESP_ONLY, 0, psn, &skb);
	if (!bth)
		return;
	rxe2_set_aeth(bth, RXE2_OP_READ_RESP_ONLY, RXE2_AETH_ACK |
		      RXE2_AETH_CREDIT_INVALID, qp->dp.resp.msn);
	rxe2_tx_send(qp, &qp->dp.av, qp->dp.src_port, skb);
}

static void rxe2_send_atomic_ack(struct rxe2_qp *qp, u32 psn, u64 orig)
{
	struct rxe2_atmack *ack;
	struct rxe2_bth *bth;
	struct sk_buff *skb;

	bth = rxe2_resp_alloc(qp, RXE2_OP_ATOMIC_ACK, 0, psn, &skb);
	if (!bth)
		return;
	rxe2_set_aeth(bth, RXE2_OP_ATOMIC_ACK, RXE2_AETH_ACK |
		      RXE2_AETH_CREDIT_INVALID, qp->dp.resp.msn);
	ack = (void *)bth + rxe2_ext_off(rxe2_opinfo[RXE2_OP_ATOMIC_ACK].flags,
					 RXE2_OPF_ATMACK);
	ack->orig = cpu_to_be64(orig);
	rxe2_tx_send(qp, &qp->dp.av, qp->dp.src_port, skb);
}

/* post a receive CQE; a successful inline-receive brings its data along */
void rxe2_recv_cqe_post(struct rxe2_qp *qp, struct rxe2_cqe_inline *ic,
			bool solicited)
{
	bool inl = qp->dp.resp.rcv_inline && ic->cqe.status == IB_WC_SUCCESS;

	if (inl) {
		const struct rxe2_recv_wqe *w = (void *)qp->dp.resp.rwqe;

		rxe2_cqe_set_inline(ic, qp->dp.resp.inl_data, ic->cqe.byte_len,
				    (const struct rxe2_sge *)(w + 1),
				    w->num_sge);
	}
	qp->dp.resp.rcv_inline = false;
	if (rxe2_cq_post(rxe2_qp_recv_cq(qp), &ic->cqe, solicited)) {
		rxe2_qp_error(qp);
		return;
	}
	if (inl)
		rxe2_qp_dp_count(qp, RXE2_DPC_INLINE_RECV);
	if (ic->cqe.status == IB_WC_SUCCESS)
		rxe2_qp_pcount(qp, RXE2_PC_RDMA_RECVS, 1);
}

/*
 * A receive completion of the QP, all else zero.  Only the CQE is
 * zeroed: the data and SGE areas after it reach the process only after
 * rxe2_cqe_set_inline() has filled them (and zeroed the data's tail),
 * so the other 192 bytes need no clearing on every receive.
 */
void rxe2_recv_cqe_init(struct rxe2_qp *qp, struct rxe2_cqe_inline *ic,
			u64 wr_id, int status, u32 opcode, u32 len)
{
	memset(&ic->cqe, 0, sizeof(ic->cqe));
	ic->cqe.wr_id = wr_id;
	ic->cqe.status = status;
	ic->cqe.opcode = opcode;
	ic->cqe.byte_len = len;
	ic->cqe.qp_num = qp->ibqp.qp_num;
	ic->cqe.port_num = RXE2_PORT;
}

void rxe2_recv_cqe(struct rxe2_qp *qp, u64 wr_id, int status,
			  u32 opcode, u32 len, u32 flags, u32 ex, bool solicited)
{
	struct rxe2_cqe_inline ic;

	rxe2_recv_cqe_init(qp, &ic, wr_id, status, opcode, len);
	ic.cqe.wc_flags = flags;
	ic.cqe.ex = ex;
	rxe2_recv_cqe_post(qp, &ic, solicited);
}

/*
 * Inline-receive: a message of len bytes in all (UD: with its GRH), known
 * whole from its only packet, goes to the CQE when the QP asked for it
 * and the receive WQE has SGEs for it that the CQE can echo (and that
 * name no PA MR: the normal path refuses those).
 */
static void rxe2_resp_choose_inline(struct rxe2_qp *qp, u32 len)
{
	const struct rxe2_recv_wqe *w = (void *)qp->dp.resp.rwqe;
	const struct rxe2_sge *sge = (const struct rxe2_sge *)(w + 1);

	qp->dp.resp.rcv_inline = qp->max_inl_recv && len <= qp->max_inl_recv &&
			    w->num_sge != U32_MAX &&
			    rxe2_inline_sges(sge, w->num_sge, len, NULL) >= 0 &&
			    !rxe2_sges_name_pa_mr(qp, sge, w->num_sge, len);
}

/* take a receive WQE for a new message: 0, -EAGAIN (none) or -EPROTO */
int rxe2_resp_get_rwqe(struct rxe2_qp *qp)
{
	struct rxe2_qp_dp *dp = &qp->dp;
	struct rxe2_srq *srq = rxe2_qp_srq(qp);
	struct rxe2_ring *r = srq ? &srq->ring : &qp->rq;
	u32 max_sge = srq ? srq->max_sge : qp->cap.max_recv_sge;
	struct rxe2_recv_wqe *w = (struct rxe2_recv_wqe *)dp->resp.rwqe;
	bool limit = false;
	unsigned long flags;
	int avail;

	if (dp->resp.have_rwqe)
		return 0;
	/* an XRC target without the SRQ of a request has nothing to take */
	if (!srq && !qp->has_rq)
		return -EPROTO;
	spin_lock_irqsave(&r->lock, flags);
	avail = rxe2_ring_dev_avail(r);
	if (avail > 0) {
		memcpy(dp->resp.rwqe, rxe2_ring_slot(r, r->dev_index),
		       r->slot_size);
		rxe2_ring_dev_advance(r);
		if (srq && srq->srq_limit && avail - 1 < srq->srq_limit) {
			WRITE_ONCE(srq->srq_limit, 0);
			limit = true;
		}
	}
	spin_unlock_irqrestore(&r->lock, flags);
	if (limit && srq->ibsrq.event_handler) {
		struct ib_event ev = {
			.device = srq->ibsrq.device,
			.element.srq = &srq->ibsrq,
			.event = IB_EVENT_SRQ_LIMIT_REACHED,
		};

		srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
	}
	if (avail < 0)
		return -EPROTO;
	if (!avail)
		return -EAGAIN;
	dp->resp.have_rwqe = true;
	dp->resp.rcv_offset = 0;
	dp->resp.rcv_inline = false;
	if (w->num_sge > max_sge ||
	    RXE2_RECV_WQE_HDR_SIZE + w->num_sge * sizeof(struct rxe2_sge) >
	    r->slot_size)
		w->num_sge = U32_MAX;	/* fails at the first copy */
	return 0;
}

/*
 * A receive WQE for a datagram (UD, a raw frame) of len bytes, or the
 * datagram dropped and counted.  One too long for the buffer is the
 * sender's doing: the WQE stays for the next one, so that no peer can
 * break a UD QP (QP1: RDMA CM) or a raw packet QP that way.  Only a ring
 * the process broke sends the QP to the error state.
 */
bool rxe2_resp_datagram_rwqe(struct rxe2_qp *qp, u32 len)
{
	int ret = rxe2_resp_get_rwqe(qp);

	if (ret) {
		if (ret == -EPROTO)
			rxe2_qp_error(qp);
		rxe2_qp_dropped(qp, RXE2_DROP_NO_RECV);
		return false;
	}
	if (!rxe2_resp_rwqe_fits(qp, len)) {
		rxe2_qp_dropped(qp, RXE2_DROP_TOO_LONG);
		return false;
	}
	return true;
}

/*
 * Whether the receive WQE's SGEs hold len bytes.  A WQE with a bad SGE
 * count "fits": placing into it fails as the process's own fault.
 */
bool rxe2_resp_rwqe_fits(struct rxe2_qp *qp, u32 len)
{
	const struct rxe2_recv_wqe *w = (void *)qp->dp.resp.rwqe;
	const struct rxe2_sge *sge = (const struct rxe2_sge *)(w + 1);
	u64 room = 0;
	u32 i;

	if (w->num_sge == U32_MAX)
		return true;
	for (i = 0; i < w->num_sge && room < len; i++)
		room += sge[i].length;
	return room >= len;
}

/*
 * Place len bytes from buf, or from src when buf is NULL (a one-copy
 * loopback request), at the current offset of the receive WQE.
 */
static int rxe2_resp_place_from(struct rxe2_qp *qp, void *buf,
				struct rxe2_src *src, u32 len)
{
	struct rxe2_recv_wqe *w = (struct rxe2_recv_wqe *)qp->dp.resp.rwqe;
	struct rxe2_sge_cursor c = {
		.sge = (const struct rxe2_sge *)(w + 1),
		.num = w->num_sge,
	};
	int ret;

	if (w->num_sge == U32_MAX)
		return -EACCES;
	if (qp->dp.resp.rcv_inline) {
		/* rxe2_resp_choose_inline() saw the whole message fit */
		if (len > sizeof(qp->dp.resp.inl_data) - qp->dp.resp.rcv_offset)
			return -EINVAL;
		if (buf)
			memcpy(qp->dp.resp.inl_data + qp->dp.resp.rcv_offset,
			       buf, len);
		else
			rxe2_src_read(src, qp->dp.resp.inl_data +
				      qp->dp.resp.rcv_offset, len);
		qp->dp.resp.rcv_offset += len;
		return 0;
	}
	rxe2_sge_seek(&c, qp->dp.resp.rcv_offset);
	/* a slot for every SGE the WQE may have: all held */
	if (buf)
		ret = rxe2_sge_copy(qp, &c, buf, len, true,
				    qp->dp.resp.rcv_hold, RXE2_RECV_MRS, NULL);
	else
		ret = rxe2_sge_copy_src(qp, &c, src, len, qp->dp.resp.rcv_hold,
					RXE2_RECV_MRS, NULL);
	if (!ret)
		qp->dp.resp.rcv_offset += len;
	return ret;
}

/* place len bytes at the current offset of the receive WQE */
int rxe2_resp_place(struct rxe2_qp *qp, void *buf, u32 len)
{
	return rxe2_resp_place_from(qp, buf, NULL, len);
}

/* a fatal request error: NAK (RC), fail the receive WQE, QP to ERROR */
void rxe2_resp_fatal(struct rxe2_qp *qp, struct rxe2_pkt *pkt,
			    u8 nak, int status)
{
	struct rxe2_qp_dp *dp = &qp->dp;

	if (rxe2_qp_acks(qp))
		rxe2_send_ack(qp, RXE2_AETH_NAK | nak, pkt->psn);
	rxe2_resp_drop_holds(qp);
	rxe2_tm_msg_abort(qp, false);
	if (dp->resp.have_rwqe) {
		dp->resp.have_rwqe = false;
		rxe2_recv_cqe(qp,
			      ((struct rxe2_recv_wqe *)dp->resp.rwqe)->wr_id,
			      status, IB_WC_RECV, 0, 0, 0, false);
	}
	rxe2_qp_error(qp);
}

/*
 * An RNR NAK is the NAK outstanding for its PSN (as a sequence NAK is):
 * the requester sends from there again after the RNR timer, so what
 * follows it (kept, rxe2_reorder.c, or arriving) is no new gap and draws
 * no sequence NAK for the same PSN until that PSN comes again.
 */
static void rxe2_resp_rnr(struct rxe2_qp *qp, struct rxe2_pkt *pkt)
{
	if (rxe2_qp_acks(qp)) {
		rxe2_qp_dp_count(qp, RXE2_DPC_SEND_RNR_ERR);
		rxe2_send_ack(qp, RXE2_AETH_RNR |
			      (qp->attr.min_rnr_timer & RXE2_AETH_VAL_MASK),
			      pkt->psn);
		qp->dp.resp.nak_sent = true;
	}
	rxe2_qp_dropped(qp, RXE2_DROP_NO_RECV);
}

/*
 * The live responder fault rules (rxe2_fault.c) on the first packet of
 * a new RC request: true when one answered it with its NAK.  An RNR NAK
 * only for a request that takes a receive WQE (a SEND, a WRITE with
 * immediate in one packet), as a real responder sends one.
 */
static bool rxe2_resp_forced_nak(struct rxe2_qp *qp, struct rxe2_pkt *pkt)
{
	struct rxe2_dev *rdev = rxe2_qp_rdev(qp);
	u32 qpn = qp->ibqp.qp_num;
	enum rxe2_fault_action act = RXE2_FAULT_NONE;

	if (((pkt->flags & RXE2_OPF_SEND) ||
	     rxe2_op_of(pkt->opcode) == RXE2_OP_WRITE_ONLY_IMM) &&
	    rxe2_fault_on(rdev, RXE2_FAULT_ON_RNR))
		act = rxe2_fault_fire(rdev, RXE2_FAULT_ON_RNR, qpn,
				      pkt->opcode, NULL);
	if (act == RXE2_FAULT_NONE && rxe2_fault_on(rdev, RXE2_FAULT_ON_RESP))
		act = rxe2_fault_fire(rdev, RXE2_FAULT_ON_RESP, qpn,
				      pkt->opcode, NULL);
	switch (act) {
	case RXE2_FAULT_RNR_NAK:
		rxe2_resp_rnr(qp, pkt);
		return true;
	case RXE2_FAULT_ACCESS_NAK:
		rxe2_resp_fatal(qp, pkt, RXE2_NAK_REM_ACCESS,
				IB_WC_REM_ACCESS_ERR);
		return true;
	case RXE2_FAULT_REMOP_NAK:
		rxe2_resp_fatal(qp, pkt, RXE2_NAK_REM_OP, IB_WC_REM_OP_ERR);
		return true;
	default:
		return false;
	}
}

/*
 * An rkey for this QP's PD with the access, over [*va, *va + len).  On
 * success *va is the address in the MR's own terms (a zero-based window
 * turns an offset into one).  hold: the message's hold on the MR
 * (rxe2_mr_msg_lookup()), or NULL for a single-packet operation.  A
 * window is checked again at every packet: it cannot be re-registered
 * under (rereg of its MR is EBUSY), only invalidated, which must stop
 * the message.
 */
struct rxe2_mr *rxe2_resp_mr(struct rxe2_qp *qp, struct rxe2_mr_hold *hold,
			     u32 rkey, u64 *va, u32 len, int access)
{
	struct rxe2_mr *mr;

	if (!(qp->attr.qp_access_flags & access))
		return NULL;
	/* a window checks its own range and access, and yields its MR */
	if (rxe2_key_is_mw(rkey))
		mr = rxe2_mw_lookup(qp, rkey, va, len, access);
	else if (hold)
		mr = rxe2_mr_msg_lookup(hold, 1, NULL, rxe2_qp_rdev(qp), rkey,
					rxe2_qp_pd(qp), access);
	else
		mr = rxe2_mr_lookup(rxe2_qp_rdev(qp), rkey, rxe2_qp_pd(qp),
				    access);
	if (!mr)
		return NULL;
	if (!rxe2_qp_may_use_mr(qp, mr) || !rxe2_mr_check_range(mr, *va, len)) {
		rxe2_mr_put(mr);
		return NULL;
	}
	return mr;
}

static void rxe2_resp_done_msg(struct rxe2_qp *qp)
{
	qp->dp.resp.msn = (qp->dp.resp.msn + 1) & 0xffffff;
	qp->dp.resp.in_msg = false;
	rxe2_mr_msg_end(qp->dp.resp.rcv_hold, RXE2_RECV_MRS);
	rxe2_mr_msg_end(&qp->dp.resp.write.hold, 1);
}

/* the SRQ of a QP whose SENDs carry tag matching headers, or NULL */
static struct rxe2_srq *rxe2_resp_tm_srq(struct rxe2_qp *qp)
{
	return rxe2_srq_is_tm(qp->ibqp.srq) ? to_rsrq(qp->ibqp.srq) : NULL;
}

/*
 * A SEND or WRITE packet with AckReq taken: ACK it, unless packets kept
 * because they came early are next (rxe2_reorder.c): then one ACK after
 * them covers them all, and an rxe2 requester waiting at the gap passes
 * over its resends of them at once.
 */
static void rxe2_resp_ackreq(struct rxe2_qp *qp, struct rxe2_pkt *pkt)
{
	if (!rxe2_qp_acks(qp) || !pkt->ackreq)
		return;
	if (rxe2_reorder_ready(qp)) {
		rxe2_reorder_owe_ack(qp, pkt->psn);
		return;
	}
	qp->dp.resp.ack_owed = false;	/* this one covers it */
	rxe2_send_ack(qp, RXE2_AETH_ACK | RXE2_AETH_CREDIT_INVALID, pkt->psn);
}

static void rxe2_resp_send(struct rxe2_qp *qp, struct rxe2_pkt *pkt)
{
	struct rxe2_qp_dp *dp = &qp->dp;
	struct rxe2_recv_wqe *w = (struct rxe2_recv_wqe *)dp->resp.rwqe;
	struct rxe2_srq *tm_srq = rxe2_resp_tm_srq(qp);
	u32 flags = 0, ex = 0, skip = 0;
	int ret;

	if (pkt->flags & RXE2_OPF_FIRST) {
		ret = tm_srq ? rxe2_tm_take(qp, tm_srq, pkt) :
			       rxe2_resp_get_rwqe(qp);
		if (ret == -EAGAIN) {
			rxe2_resp_rnr(qp, pkt);
			return;
		}
		if (ret) {
			rxe2_qp_error(qp);
			return;
		}
		rxe2_mr_msg_end(dp->resp.rcv_hold, RXE2_RECV_MRS);
		dp->resp.in_msg = true;
		dp->resp.op = RXE2_OPF_SEND;
		dp->resp.rcv_offset = 0;
		/* a TM SRQ's completions have no room for inline data */
		rxe2_resp_choose_inline(qp, pkt->flags & RXE2_OPF_LAST &&
					!tm_srq ? pkt->paylen : U32_MAX);
		if (tm_srq)	/* a matched EAGER's TMH, an RNDV READ's all */
			skip = min(dp->tm.skip, pkt->paylen);
	}
	if (!(pkt->flags & RXE2_OPF_LAST) && pkt->paylen != dp->mtu) {
		rxe2_resp_fatal(qp, pkt, RXE2_NAK_INV_REQ, IB_WC_REM_INV_REQ_ERR);
		return;
	}
	/* skip is 0 for a request with a source: no TM SRQ takes those */
	ret = rxe2_resp_place_from(qp, pkt->src ? NULL : pkt->payload + skip,
				   pkt->src, pkt->paylen - skip);
	if (ret) {
		if (ret == -EINVAL)
			rxe2_resp_fatal(qp, pkt, RXE2_NAK_INV_REQ,
					IB_WC_LOC_LEN_ERR);
		else
			rxe2_resp_fatal(qp, pkt, RXE2_NAK_REM_OP,
					IB_WC_LOC_PROT_ERR);
		return;
	}
	dp->resp.psn = (dp->resp.psn + 1) & RXE2_PSN_MASK;
	if (pkt->flags & RXE2_OPF_LAST) {
		if (pkt->flags & (RXE2_OPF_IMM | RXE2_OPF_IETH)) {
			memcpy(&ex, rxe2_pkt_ext(pkt, RXE2_OPF_IMM), 4);
			if (pkt->flags & RXE2_OPF_IMM) {
				flags |= RXE2_WC_WITH_IMM;
			} else {
				flags |= RXE2_WC_WITH_INV;
				ex = be32_to_cpu((__force __be32)ex);
				/*
				 * Invalidate before the completion.  A key
				 * that names no fast MR or type 2 window
				 * of our PD (an ibv_reg_mr MR, a type 1
				 * window, a stale key, nothing) is
				 * IBTA's class J error: the receive WQE
				 * completes with REM_INV_REQ_ERR (as in
				 * rdma_rxe), the requester gets an invalid
				 * request NAK, both QPs go to ERROR.
				 */
				if (rxe2_mr_invalidate(qp, ex)) {
					rxe2_resp_fatal(qp, pkt,
							RXE2_NAK_INV_REQ,
							IB_WC_REM_INV_REQ_ERR);
					return;
				}
			}
		}
		dp->resp.have_rwqe = false;
		rxe2_resp_done_msg(qp);
		if (tm_srq)
			rxe2_tm_recv_done(qp, tm_srq, w->wr_id,
					  dp->resp.rcv_offset, flags, ex,
					  pkt->se);
		else
			rxe2_recv_cqe(qp, w->wr_id, IB_WC_SUCCESS, IB_WC_RECV,
				      dp->resp.rcv_offset, flags, ex, pkt->se);
	}
	rxe2_resp_ackreq(qp, pkt);
}

static void rxe2_resp_write(struct rxe2_qp *qp, struct rxe2_pkt *pkt)
{
	struct rxe2_qp_dp *dp = &qp->dp;
	bool imm = pkt->flags & RXE2_OPF_IMM;
	int ret;

	if (imm) {
		ret = rxe2_resp_get_rwqe(qp);
		if (ret == -EAGAIN) {
			rxe2_resp_rnr(qp, pkt);
			return;
		}
		if (ret) {
			rxe2_qp_error(qp);
			return;
		}
	}
	if (pkt->flags & RXE2_OPF_FIRST) {
		struct rxe2_reth *r = rxe2_pkt_ext(pkt, RXE2_OPF_RETH);
		u64 va = be64_to_cpu(r->va);
		u32 len = ntohl(r->len);

		/* the message holds the MR object it finds here */
		rxe2_mr_msg_end(&dp->resp.write.hold, 1);
		if (len) {
			u64 mr_va = va;
			struct rxe2_mr *mr;

			mr = rxe2_resp_mr(qp, &dp->resp.write.hold,
					  ntohl(r->rkey), &mr_va, len,
					  IB_ACCESS_REMOTE_WRITE);

			if (!mr) {
				rxe2_resp_fatal(qp, pkt, RXE2_NAK_REM_ACCESS,
						IB_WC_REM_ACCESS_ERR);
				return;
			}
			rxe2_mr_put(mr);
		}
		dp->resp.write.rkey = ntohl(r->rkey);
		dp->resp.write.va = va;
		dp->resp.write.len = len;
		dp->resp.write.resid = len;
		dp->resp.in_msg = true;
		dp->resp.op = RXE2_OPF_WRITE;
	}
	if (pkt->paylen > dp->resp.write.resid ||
	    (!(pkt->flags & RXE2_OPF_LAST) && pkt->paylen != dp->mtu) ||
	    ((pkt->flags & RXE2_OPF_LAST) &&
	     pkt->paylen != dp->resp.write.resid)) {
		rxe2_resp_fatal(qp, pkt, RXE2_NAK_INV_REQ,
				IB_WC_REM_INV_REQ_ERR);
		return;
	}
	if (pkt->paylen) {
		/* a dereg waits for this copy only, never for the message */
		u64 mr_va = dp->resp.write.va;
		struct rxe2_mr *mr = rxe2_resp_mr(qp, &dp->resp.write.hold,
						  dp->resp.write.rkey, &mr_va,
						  pkt->paylen,
						  IB_ACCESS_REMOTE_WRITE);

		if (!mr)
			ret = -EACCES;
		else if (pkt->src)
			ret = rxe2_mr_copy_src(mr, mr_va, pkt->src,
					       pkt->paylen);
		else
			ret = rxe2_mr_copy(mr, mr_va, pkt->payload,
					   pkt->paylen, true);
		if (mr)
			rxe2_mr_put(mr);
		if (ret) {
			rxe2_resp_fatal(qp, pkt, RXE2_NAK_REM_ACCESS,
					IB_WC_REM_ACCESS_ERR);
			return;
		}
		dp->resp.write.va += pkt->paylen;
		dp->resp.write.resid -= pkt->paylen;
	}
	dp->resp.psn = (dp->resp.psn + 1) & RXE2_PSN_MASK;
	if (pkt->flags & RXE2_OPF_LAST) {
		rxe2_resp_done_msg(qp);
		if (imm) {
			u32 ex;

			memcpy(&ex, rxe2_pkt_ext(pkt, RXE2_OPF_IMM), 4);
			dp->resp.have_rwqe = false;
			rxe2_recv_cqe(qp,
				      ((struct rxe2_recv_wqe *)dp->resp.rwqe)->wr_id,
				      IB_WC_SUCCESS, IB_WC_RECV_RDMA_WITH_IMM,
				      dp->resp.write.len, RXE2_WC_WITH_IMM, ex,
				      pkt->se);
		}
	}
	rxe2_resp_ackreq(qp, pkt);
}

/* no more responses (the requester asks again if it still wants them) */
static void rxe2_resp_read_stop(struct rxe2_qp *qp)
{
	WRITE_ONCE(qp->dp.resp.read.active, false);
	rxe2_mr_msg_end(&qp->dp.resp.read.hold, 1);
}

/*
 * One READ response, @n bytes at @iova of @mr: to the local requester's
 * completer as a call when we hold it (@direct, rxe2_tx_direct_resp():
 * one copy), else as a packet.  0, -ENOMEM (the rest on the next run) or
 * -EFAULT (the MR could not be read: the stream stops, the requester
 * asks again).
 */
static int rxe2_resp_read_one(struct rxe2_qp *qp, struct rxe2_mr *mr,
			      u64 iova, u8 op, u32 n, bool direct)
{
	struct rxe2_qp_dp *dp = &qp->dp;
	u32 hdr_len = rxe2_opinfo[op].hdr_len;
	/* a READ response's headers: BTH and, but for a MIDDLE, AETH */
	u8 hdr[sizeof(struct rxe2_bth) + sizeof(struct rxe2_aeth)] __aligned(4);
	struct rxe2_bth *bth = (struct rxe2_bth *)hdr;
	struct sk_buff *skb;
	int ret;

	memset(hdr, 0, hdr_len);
	rxe2_resp_bth(qp, bth, op, n, dp->resp.read.psn);
	if (rxe2_opinfo[op].flags & RXE2_OPF_AETH)
		rxe2_set_aeth(bth, op, RXE2_AETH_ACK | RXE2_AETH_CREDIT_INVALID,
			      dp->resp.msn);
	if (direct && n) {
		ret = rxe2_tx_direct_resp(qp, hdr, hdr_len, mr, iova, n);
		if (ret != -EAGAIN)
			return ret;
	}
	skb = rxe2_tx_alloc(qp, hdr_len, n, &bth);
	if (!skb)
		return -ENOMEM;
	memcpy(bth, hdr, hdr_len);
	if (n && rxe2_mr_copy(mr, iova, (u8 *)bth + hdr_len, n, false)) {
		kfree_skb(skb);
		return -EFAULT;
	}
	rxe2_tx_send(qp, &dp->av, dp->src_port, skb);
	return 0;
}

/*
 * A READ this long to a local requester is worth the wait for its
 * runner to unlock it (or for our work item) to be placed in one copy
 * instead of two (rxe2_resp_read_later()).
 */
#define RXE2_READ_LATER_MIN	16384

/*
 * Whether the rest of the READ being answered waits until our parent is
 * unlocked: it is long, its requester is local, and we run inline (for
 * it, whose runner holds its lock up the stack, or for another QP: one
 * level only), so every response now would be a packet, two copies.
 * Run right after the parent (rxe2_qp_after_parent()), or by our work
 * item, we lock the requester and place each response straight from our
 * MR (rxe2_qp_direct_to_peer()).  Requests behind the READ wait
 * meanwhile, as behind any stream.
 */
static bool rxe2_resp_read_later(struct rxe2_qp *qp)
{
	struct rxe2_qp_dp *dp = &qp->dp;

	return dp->loop.inline_parent &&
	       dp->resp.read.len - dp->resp.read.off >= RXE2_READ_LATER_MIN &&
	       rxe2_qp_peer_callable(qp);
}

/*
 * Send up to a budget of the pending RDMA READ responses; the rest go on
 * the next run (received packets wait meanwhile, keeping the order).
 * The responses hold the MR object the request found (read.hold), so they
 * all read one translation; between runs only that hold stays, which a
 * dereg does not wait for.
 */
static void rxe2_resp_read_stream(struct rxe2_qp *qp)
{
	struct rxe2_qp_dp *dp = &qp->dp;
	struct rxe2_mr *mr = NULL;
	u64 mr_va = dp->resp.read.va;
	bool direct = false;
	int budget = 64;

	if (qp->state < IB_QPS_RTR || qp->state > IB_QPS_SQE) {
		rxe2_resp_read_stop(qp);
		return;
	}
	if (rxe2_resp_read_later(qp)) {
		if (!rxe2_qp_after_parent(qp))
			rxe2_qp_kick(qp);
		return;
	}
	if (dp->resp.read.len) {
		mr = rxe2_resp_mr(qp, &dp->resp.read.hold, dp->resp.read.rkey,
				  &mr_va, dp->resp.read.len,
				  IB_ACCESS_REMOTE_READ);
		if (!mr) {
			rxe2_resp_read_stop(qp);	/* the requester retries */
			return;
		}
		direct = rxe2_qp_direct_to_peer(qp);
	}
	while (dp->resp.read.active && budget--) {
		u32 n = min(dp->mtu, dp->resp.read.len - dp->resp.read.off);
		bool first = dp->resp.read.off == 0;
		bool last = dp->resp.read.off + n == dp->resp.read.len;
		u8 op = first && last ? RXE2_OP_READ_RESP_ONLY :
			first ? RXE2_OP_READ_RESP_FIRST :
			last ? RXE2_OP_READ_RESP_LAST :
			RXE2_OP_READ_RESP_MIDDLE;
		int ret = rxe2_resp_read_one(qp, mr, mr_va + dp->resp.read.off,
					     op, n, direct);

		if (ret == -ENOMEM)
			break;
		if (ret) {
			WRITE_ONCE(dp->resp.read.active, false);
			break;
		}
		dp->resp.read.off += n;
		dp->resp.read.psn = (dp->resp.read.psn + 1) & RXE2_PSN_MASK;
		if (last)
			WRITE_ONCE(dp->resp.read.active, false);
	}
	if (direct)
		rxe2_qp_direct_end(qp);
	if (mr)
		rxe2_mr_put(mr);
	if (dp->resp.read.active)
		rxe2_qp_kick(qp);
	else
		rxe2_mr_msg_end(&dp->resp.read.hold, 1);
}

/* the READ responses still to send, from rxe2_rx_run() too */
void rxe2_resp_read_cont(struct rxe2_qp *qp)
{
	struct rxe2_qp_dp *dp = &qp->dp;

	/* an XRC target answers through the PD of the READ's SRQ */
	if (rxe2_qp_is_xrc_tgt(qp) && !dp->resp.xrc_srq) {
		if (rxe2_xrc_srq_enter(qp, dp->resp.read.srqn,
				       dp->resp.read.srq_serial)) {
			rxe2_resp_read_stream(qp);
			rxe2_xrc_srq_leave(qp);
		} else {
			rxe2_resp_read_stop(qp);
		}
		return;
	}
	rxe2_resp_read_stream(qp);
}

/* an RDMA READ request (new or duplicate): answer from its PSN */
static void rxe2_resp_read(struct rxe2_qp *qp, struct rxe2_pkt *pkt, bool dup)
{
	struct rxe2_qp_dp *dp = &qp->dp;
	struct rxe2_reth *r = rxe2_pkt_ext(pkt, RXE2_OPF_RETH);
	u64 va = be64_to_cpu(r->va);
	u32 len = ntohl(r->len);
	u32 npkts = len ? DIV_ROUND_UP(len, dp->mtu) : 1;

	if (!dup)
		rxe2_reorder_pay_ack(qp);
	/* a new stream (or one asked again) finds its MR object anew */
	WRITE_ONCE(dp->resp.read.active, false);
	rxe2_mr_msg_end(&dp->resp.read.hold, 1);
	if (len) {
		u64 mr_va = va;
		struct rxe2_mr *mr = rxe2_resp_mr(qp, &dp->resp.read.hold,
						  ntohl(r->rkey), &mr_va,
						  len, IB_ACCESS_REMOTE_READ);

		/*
		 * ODP: fault the whole range in now, while a NAK can still
		 * answer; a page lost to an invalidation later is faulted
		 * again by rxe2_resp_read_cont().
		 */
		if (mr && mr->odp &&
		    rxe2_mr_access(mr, mr_va, len, false, NULL, NULL)) {
			rxe2_mr_put(mr);
			mr = NULL;
		}
		if (!mr) {
			rxe2_mr_msg_end(&dp->resp.read.hold, 1);
			if (!dup)
				rxe2_resp_fatal(qp, pkt, RXE2_NAK_REM_ACCESS,
						IB_WC_REM_ACCESS_ERR);
			return;
		}
		rxe2_mr_put(mr);
	}
	if (!dup) {
		dp->resp.psn = (dp->resp.psn + npkts) & RXE2_PSN_MASK;
		rxe2_resp_done_msg(qp);
	}
	dp->resp.read.rkey = ntohl(r->rkey);
	dp->resp.read.va = va;
	dp->resp.read.len = len;
	dp->resp.read.off = 0;
	dp->resp.read.psn = pkt->psn;
	if (dp->resp.xrc_srq) {	/* its PD checks the rkey at every run */
		dp->resp.read.srqn = dp->resp.xrc_srq->index;
		dp->resp.read.srq_serial = dp->resp.xrc_srq->serial;
	}
	WRITE_ONCE(dp->resp.read.active, true);
	rxe2_resp_read_cont(qp);
}

struct rxe2_atomic_arg {
	bool cmp_swap;
	bool split;		/* the operand is not in one piece */
	u64 swap_add;
	u64 cmp;
	u64 orig;
};

static void rxe2_atomic_op(void *addr, u32 len, void *arg)
{
	struct rxe2_atomic_arg *a = arg;
	u64 *p = addr;

	/* a fast MR whose page list starts unaligned can split it */
	if (len < sizeof(*p)) {
		a->split = true;
		return;
	}
	spin_lock_bh(&rxe2_atomic_lock);
	a->orig = READ_ONCE(*p);
	if (!a->cmp_swap)
		WRITE_ONCE(*p, a->orig + a->swap_add);
	else if (a->orig == a->cmp)
		WRITE_ONCE(*p, a->swap_add);
	spin_unlock_bh(&rxe2_atomic_lock);
}

/* va is 8-byte aligned: in user memory the operand never crosses a page */
static int rxe2_do_atomic(struct rxe2_mr *mr, u64 va, bool cmp_swap,
			  u64 swap_add, u64 cmp, u64 *orig)
{
	struct rxe2_atomic_arg a = {
		.cmp_swap = cmp_swap, .swap_add = swap_add, .cmp = cmp,
	};
	int ret;

	ret = rxe2_mr_access(mr, va, RXE2_ATOMIC_LEN, true, rxe2_atomic_op,
			     &a);
	if (ret)
		return ret;
	if (a.split)
		return -EFAULT;
	*orig = a.orig;
	return 0;
}

static void rxe2_resp_atomic(struct rxe2_qp *qp, struct rxe2_pkt *pkt)
{
	struct rxe2_atmeth *a = rxe2_pkt_ext(pkt, RXE2_OPF_ATMETH);
	u64 va = be64_to_cpu(a->va);
	struct rxe2_mr *mr;
	u64 orig;
	int ret;

	rxe2_reorder_pay_ack(qp);

	if (!IS_ALIGNED(va, RXE2_ATOMIC_LEN)) {
		rxe2_resp_fatal(qp, pkt, RXE2_NAK_INV_REQ,
				IB_WC_REM_INV_REQ_ERR);
		return;
	}
	mr = rxe2_resp_mr(qp, NULL, ntohl(a->rkey), &va, RXE2_ATOMIC_LEN,
			  IB_ACCESS_REMOTE_ATOMIC);
	if (!mr) {
		rxe2_resp_fatal(qp, pkt, RXE2_NAK_REM_ACCESS,
				IB_WC_REM_ACCESS_ERR);
		return;
	}
	/* a zero-based window may start unaligned in its MR */
	if (!IS_ALIGNED(va, RXE2_ATOMIC_LEN)) {
		rxe2_mr_put(mr);
		rxe2_resp_fatal(qp, pkt, RXE2_NAK_INV_REQ,
				IB_WC_REM_INV_REQ_ERR);
		return;
	}
	ret = rxe2_do_atomic(mr, va,
			     rxe2_op_of(pkt->opcode) == RXE2_OP_CMP_SWAP,
			     be64_to_cpu(a->swap_add), be64_to_cpu(a->cmp),
			     &orig);
	rxe2_mr_put(mr);
	if (ret) {
		rxe2_resp_fatal(qp, pkt, RXE2_NAK_REM_ACCESS,
				IB_WC_REM_ACCESS_ERR);
		return;
	}
	rxe2_resp_executed(qp, pkt, false, orig);
}

/*
 * A single-packet operation with a response of its own was executed:
 * remember its result for a duplicate, end the message and answer.
 */
void rxe2_resp_executed(struct rxe2_qp *qp, struct rxe2_pkt *pkt,
			bool placement, u64 orig)
{
	struct rxe2_qp_dp *dp = &qp->dp;
	struct rxe2_atomic_res *res;

	res = &dp->resp.atomic_res[dp->resp.atomic_next++ % RXE2_ATOMIC_REPLAY];
	res->valid = true;
	res->placement = placement;
	res->psn = pkt->psn;
	res->orig = orig;
	dp->resp.psn = (dp->resp.psn + 1) & RXE2_PSN_MASK;
	rxe2_resp_done_msg(qp);
	if (placement)
		rxe2_send_empty_read_resp(qp, pkt->psn);
	else
		rxe2_send_atomic_ack(qp, pkt->psn, orig);
}

static void rxe2_resp_duplicate(struct rxe2_qp *qp, struct rxe2_pkt *pkt)
{
	struct rxe2_qp_dp *dp = &qp->dp;
	int i;

	if (pkt->flags & RXE2_OPF_READ) {
		rxe2_resp_read(qp, pkt, true);
	} else if (pkt->flags & (RXE2_OPF_ATOMIC | RXE2_OPF_PLACE)) {
		/* too old to be remembered: never executed again, no answer */
		for (i = 0; i < RXE2_ATOMIC_REPLAY; i++) {
			struct rxe2_atomic_res *res = &dp->resp.atomic_res[i];

			if (!res->valid || res->psn != pkt->psn ||
			    res->placement != !!(pkt->flags & RXE2_OPF_PLACE))
				continue;
			if (res->placement)
				rxe2_send_empty_read_resp(qp, pkt->psn);
			else
				rxe2_send_atomic_ack(qp, pkt->psn, res->orig);
			break;
		}
	} else {
		/*
		 * Every duplicate, AckReq or not (C9-105): rdma_rxe once
		 * answered only those with AckReq and lost connections to
		 * requesters that wait for more.  From an rxe2 requester the
		 * run is short: its window after a timeout is 16 (rxe2_cc.c).
		 */
		rxe2_send_ack(qp, RXE2_AETH_ACK | RXE2_AETH_CREDIT_INVALID,
			      (dp->resp.psn - 1) & RXE2_PSN_MASK);
	}
}

static void rxe2_resp_ud(struct rxe2_qp *qp, struct rxe2_pkt *pkt)
{
	struct rxe2_deth *d = rxe2_pkt_ext(pkt, RXE2_OPF_DETH);
	u32 qkey = qp->ibqp.qp_type == IB_QPT_GSI ? RXE2_GSI_QKEY :
		   qp->attr.qkey;
	struct sk_buff *skb = pkt->skb;
	u8 grh[RXE2_UD_GRH_LEN] = {};
	struct rxe2_cqe_inline ic;
	int ret;

	if (ntohl(d->qkey) != qkey) {
		rxe2_qp_dropped(qp, RXE2_DROP_BAD_QKEY);
		return;
	}
	if (!rxe2_resp_datagram_rwqe(qp, sizeof(grh) + pkt->paylen))
		return;
	rxe2_resp_choose_inline(qp, sizeof(grh) + pkt->paylen);
	/* RoCEv2: an IPv4 header sits in the last 20 bytes of the GRH */
	if (pkt->ipv6)
		memcpy(grh, skb_network_header(skb), sizeof(struct ipv6hdr));
	else
		memcpy(grh + 20, skb_network_header(skb),
		       sizeof(struct iphdr));
	ret = rxe2_resp_place(qp, grh, sizeof(grh));
	if (!ret)
		ret = rxe2_resp_place(qp, pkt->payload, pkt->paylen);
	if (ret) {
		rxe2_resp_fatal(qp, pkt, 0, ret == -EINVAL ?
				IB_WC_LOC_LEN_ERR : IB_WC_LOC_PROT_ERR);
		return;
	}
	qp->dp.resp.have_rwqe = false;
	rxe2_mr_msg_end(qp->dp.resp.rcv_hold, RXE2_RECV_MRS);
	rxe2_recv_cqe_init(qp, &ic,
			   ((struct rxe2_recv_wqe *)qp->dp.resp.rwqe)->wr_id,
			   IB_WC_SUCCESS, IB_WC_RECV, qp->dp.resp.rcv_offset);
	ic.cqe.wc_flags = RXE2_WC_GRH;
	if (pkt->flags & RXE2_OPF_IMM) {
		memcpy(&ic.cqe.ex, rxe2_pkt_ext(pkt, RXE2_OPF_IMM), 4);
		ic.cqe.wc_flags |= RXE2_WC_WITH_IMM;
	}
	ic.cqe.src_qp = ntohl(d->sqp) & RXE2_QPN_MASK;
	ic.cqe.sl = pkt->ipv6 ? RXE2_CQE_ROCE_V2_IPV6 : RXE2_CQE_ROCE_V2_IPV4;
	rxe2_recv_cqe_post(qp, &ic, pkt->se);
}

/* a request packet; caller holds state_lock */
void rxe2_resp_rx(struct rxe2_qp *qp, struct rxe2_pkt *pkt)
{
	struct rxe2_qp_dp *dp = &qp->dp;
	bool rc = rxe2_qp_acks(qp);
	int d;

	WRITE_ONCE(dp->resp.requests, dp->resp.requests + 1);
	if (rxe2_qp_is_ud(qp)) {
		rxe2_resp_ud(qp, pkt);
		return;
	}
	d = rxe2_psn_diff(pkt->psn, dp->resp.psn);
	if (rc && d > 0) {
		if (!dp->resp.nak_sent) {
			dp->resp.nak_sent = true;
			rxe2_qp_dp_count(qp, RXE2_DPC_OUT_OF_SEQ_REQUEST);
			rxe2_send_ack(qp, RXE2_AETH_NAK | RXE2_NAK_PSN_SEQ,
				      dp->resp.psn);
		}
		return;
	}
	if (rc && d < 0) {
		rxe2_qp_dp_count(qp, RXE2_DPC_DUP_REQUEST);
		rxe2_resp_duplicate(qp, pkt);
		return;
	}
	if (!rc && d) {
		/* UC: packets were lost; the message in progress is gone */
		dp->resp.in_msg = false;
		rxe2_mr_msg_end(dp->resp.rcv_hold, RXE2_RECV_MRS);
		rxe2_mr_msg_end(&dp->resp.write.hold, 1);
		dp->resp.rcv_offset = 0;
		dp->resp.psn = pkt->psn;
	}
	dp->resp.nak_sent = false;
	if (rc && !dp->resp.in_msg && (pkt->flags & RXE2_OPF_FIRST) &&
	    rxe2_fault_on(rxe2_qp_rdev(qp),
			  RXE2_FAULT_ON_RNR | RXE2_FAULT_ON_RESP) &&
	    rxe2_resp_forced_nak(qp, pkt))
		return;
	/* its ACK comes with a later packet's (READs get responses) */
	if (rc && !pkt->ackreq &&
	    !(pkt->flags & (RXE2_OPF_READ | RXE2_OPF_ATOMIC | RXE2_OPF_PLACE)))
		rxe2_qp_pcount(qp, RXE2_PC_ACK_DEFERRED, 1);

	/* opcode sequence: a FIRST/ONLY starts a message, others continue */
	if (dp->resp.in_msg ? (pkt->flags & RXE2_OPF_FIRST) ||
			 !(pkt->flags & dp->resp.op) :
			 !(pkt->flags & RXE2_OPF_FIRST)) {
		if (rc) {
			rxe2_resp_fatal(qp, pkt, RXE2_NAK_INV_REQ,
					IB_WC_REM_INV_REQ_ERR);
		} else {
			dp->resp.in_msg = false;
			dp->resp.rcv_offset = 0;
			dp->resp.psn = (pkt->psn + 1) & RXE2_PSN_MASK;
			rxe2_mr_msg_end(dp->resp.rcv_hold, RXE2_RECV_MRS);
			rxe2_mr_msg_end(&dp->resp.write.hold, 1);
		}
		return;
	}
	if (pkt->flags & RXE2_OPF_SEND)
		rxe2_resp_send(qp, pkt);
	else if (pkt->flags & RXE2_OPF_WRITE)
		rxe2_resp_write(qp, pkt);
	else if (pkt->flags & RXE2_OPF_READ)
		rxe2_resp_read(qp, pkt, false);
	else if (pkt->flags & RXE2_OPF_ATOMIC)
		rxe2_resp_atomic(qp, pkt);
	else if (pkt->flags & RXE2_OPF_PLACE)
		rxe2_resp_placement(qp, pkt);
}
