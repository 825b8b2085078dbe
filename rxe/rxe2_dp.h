/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rxe2: what every stage of the data path shares.  One work item per QP
 * runs everything a QP does (responder, completer, requester) in
 * sleepable context, one runner at a time: the SQ doorbell runs it in
 * the caller's context when nobody else is, a loopback delivery from
 * another QP's runner runs it inline (rxe2_task.c, rxe2_loop.c), the
 * receive hook and the timers queue it.
 *
 * Here: that runner (rxe2_task.c), a QP's flag bits and a send WQE's
 * states, the per-QP limits, a packet's skb->cb and its parsed form
 * (struct rxe2_pkt) as the receive path hands it on, the QP-type tests,
 * per-QP counting (rxe2_counters.c), and a send WQE's slot.  Each
 * stage's own prototypes are in the header of its area of the pipeline:
 *
 *   rxe2_wire.h       packets out and in: rxe2_tx.c, rxe2_icrc.c,
 *                     rxe2_rx.c; the loopback hand-over (rxe2_loop.c)
 *                     and the taps' copies (rxe2_tap.c) that stand in
 *                     for the wire between local QPs; raw packet QPs,
 *                     whose frames are the wire's own (rxe2_raw.c)
 *   rxe2_requester.h  WQEs to requests, answers to SQ CQEs: rxe2_req.c,
 *                     rxe2_comp.c, and what holds the requester back,
 *                     rxe2_cc.c (window, ACK timeout) and rxe2_pace.c
 *                     (rate limit)
 *   rxe2_responder.h  requests to placement, ACKs and receive CQEs:
 *                     rxe2_resp.c, rxe2_place.c, and the early packets
 *                     kept for it and the completer (rxe2_reorder.c)
 *   rxe2_sge.h        SGE lists and one-copy sources (rxe2_sge.c),
 *                     which both roles and transmit copy through
 *
 * By area, not one header for all, so that a file's #include lines say
 * which areas it calls into and a change to one area's prototypes
 * rebuilds only its callers; not one per file, because the files of an
 * area call each other (the completer rewinds the requester, the window
 * gates it) and their callers want them together.  An area's header
 * includes this one and no other area's (it forward-declares what it
 * only points to).  The objects (struct rxe2_qp and its dp, the rings,
 * MRs) and their files' prototypes, the data-path parts of rxe2_xrc.c,
 * rxe2_tm.c and rxe2_wq.c included, are in rxe2_verbs.h; the wire
 * formats and the opcode table in rxe2_hdr.h.
 */
#ifndef RXE2_DP_H
#define RXE2_DP_H

#include <rdma/ib_user_verbs.h>

#include "rxe2_verbs.h"
#include "rxe2_hdr.h"

/* qp->dp.flags */
enum {
	RXE2_QPF_DYING,		/* destroy in progress: queue nothing */
	RXE2_QPF_RETRY,		/* retransmit timer fired */
	RXE2_QPF_RNR,		/* RNR wait over */
	RXE2_QPF_RNR_WAIT,	/* waiting out an RNR NAK */
	RXE2_QPF_RUNNING,	/* a runner holds state_lock, looks again */
	RXE2_QPF_DOORBELL,	/* SQ doorbell not yet seen by the requester */
	RXE2_QPF_AFTER,		/* run as another's loop.after: runs none */
};

/* rxe2_swqe_info.state */
enum {
	RXE2_WQE_NEW,		/* not copied out of the ring yet */
	RXE2_WQE_STARTED,	/* copied and validated, being sent */
	RXE2_WQE_SENT,		/* every packet sent, awaiting the answer */
	RXE2_WQE_DONE,		/* completion ready (status) */
};

#define RXE2_RX_BACKLOG		4096	/* packets queued per QP */
#define RXE2_ACK_EVERY		16	/* AckReq at least this often */
#define RXE2_MAX_INFLIGHT	256	/* the largest window (rxe2_cc.c) */
#define RXE2_UD_GRH_LEN		40

/*
 * skb->cb of a packet on a QP's rx_queue.  trusted: handed over by
 * rxe2_tx_send() from one of our own QPs (loopback), never on a wire, so
 * its ICRC is neither computed (unless a tap watches) nor checked.
 */
struct rxe2_skb_cb {
	bool trusted;
	bool flow;		/* a frame a flow took for a raw packet QP */
	u32 flow_tag;		/* and that flow's tag (ACTION_TAG), or 0 */
	/* kept out of order (rxe2_reorder.c): its PSN, and whether it is a
	 * handed-over request (BTH to payload, no IP, UDP or ICRC)
	 */
	u32 psn;
	bool loop;
};

/* RoCE packets name QPs by number; a raw packet QP takes none of them */
static inline struct rxe2_qp *rxe2_roce_qp(struct rxe2_qp *qp)
{
	return qp && qp->ibqp.qp_type != IB_QPT_RAW_PACKET ? qp : NULL;
}

static inline struct rxe2_skb_cb *rxe2_skb_cb(struct sk_buff *skb)
{
	return (struct rxe2_skb_cb *)skb->cb;
}

/* a received packet, parsed and validated by rxe2_rx.c */
struct rxe2_pkt {
	struct sk_buff *skb;
	u8 *hdr;		/* the BTH */
	u8 opcode;
	u32 flags;		/* enum rxe2_opf */
	bool ackreq;
	bool se;
	bool ipv6;
	u32 psn;
	u32 qpn;
	u8 *payload;		/* NULL: read from src */
	struct rxe2_src *src;	/* a one-copy loopback request's payload */
	u32 paylen;
	u32 wire_len;		/* BTH .. ICRC, for the counters */
};

static inline void *rxe2_pkt_ext(const struct rxe2_pkt *p, enum rxe2_opf h)
{
	return p->hdr + rxe2_ext_off(p->flags, h);
}

static inline struct rxe2_dev *rxe2_qp_rdev(struct rxe2_qp *qp)
{
	return to_rdev(qp->ibqp.device);
}

/* a requester whose requests are acknowledged: RC, XRC's initiator */
static inline bool rxe2_qp_requests_acked(struct rxe2_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_RC ||
	       qp->ibqp.qp_type == IB_QPT_XRC_INI;
}

/*
 * Counting a QP's events (rxe2_counters.c): into the counter it is
 * bound to, if any, else into the device's counters as rxe2.h does.
 */
bool rxe2_qp_count_slow(struct rxe2_qp *qp, unsigned int stat, u64 n);

static inline bool rxe2_qp_count(struct rxe2_qp *qp, unsigned int stat,
				 u64 n)
{
	return rcu_access_pointer(qp->ctr) && rxe2_qp_count_slow(qp, stat, n);
}

static inline void rxe2_qp_dp_count(struct rxe2_qp *qp,
				    enum rxe2_dp_counter c)
{
	if (!rxe2_qp_count(qp, rxe2_stat_of_dp[c], 1))
		rxe2_dp_count(rxe2_qp_rdev(qp), c);
}

static inline void rxe2_qp_pcount(struct rxe2_qp *qp,
				  enum rxe2_pcpu_counter c, u64 n)
{
	if (!rxe2_qp_count(qp, rxe2_stat_of_pc[c], n))
		rxe2_pcount(rxe2_qp_rdev(qp), c, n);
}

static inline void rxe2_qp_dropped(struct rxe2_qp *qp,
				   enum rxe2_drop_reason why)
{
	if (!rxe2_qp_count(qp, rxe2_stat_of_drop[why], 1))
		rxe2_rx_dropped(rxe2_qp_rdev(qp), why);
}

/* a packet the QP sent, or received and took (rxe2_count_pkt()) */
static inline void rxe2_qp_count_pkt(struct rxe2_qp *qp, bool sent, u32 len)
{
	enum rxe2_pcpu_counter c = sent ? RXE2_PC_SENT_PKTS : RXE2_PC_RCVD_PKTS;

	if (!rcu_access_pointer(qp->ctr)) {
		rxe2_count_pkt(rxe2_qp_rdev(qp), sent, len);
		return;
	}
	rxe2_qp_pcount(qp, c, 1);
	rxe2_qp_pcount(qp, c + 1, len);
}

/* a responder that acknowledges: RC, XRC's target */
static inline bool rxe2_qp_acks(struct rxe2_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_RC ||
	       rxe2_qp_is_xrc_tgt(qp);
}

/* a datagram QP: UD, or GSI (QP1), which is UD on the wire */
static inline bool rxe2_qp_is_ud(const struct rxe2_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_UD ||
	       qp->ibqp.qp_type == IB_QPT_GSI;
}

/* the transport bits of the opcodes the QP sends (RXE2_TRANSPORT_*) */
static inline u8 rxe2_qp_transport(struct rxe2_qp *qp)
{
	switch (qp->ibqp.qp_type) {
	case IB_QPT_UC:
		return RXE2_TRANSPORT_UC;
	case IB_QPT_UD:
	case IB_QPT_GSI:
		return RXE2_TRANSPORT_UD;
	case IB_QPT_XRC_INI:
	case IB_QPT_XRC_TGT:
		return RXE2_TRANSPORT_XRC;
	default:
		return RXE2_TRANSPORT_RC;
	}
}

/* rxe2_task.c */
int rxe2_dp_init(void);
void rxe2_dp_exit(void);
int rxe2_qp_dp_init(struct rxe2_qp *qp);
void rxe2_qp_dp_stop(struct rxe2_qp *qp);
void rxe2_qp_dp_free(struct rxe2_qp *qp);
void rxe2_qp_dp_reset(struct rxe2_qp *qp);
void rxe2_qp_kick(struct rxe2_qp *qp);
void rxe2_qp_doorbell(struct rxe2_qp *qp);
/* the runner's steps, for the loopback hand-over (rxe2_loop.c) */
void rxe2_qp_run_unlock(struct rxe2_qp *qp, struct rxe2_qp *parent,
			bool work);
void rxe2_qp_wake(struct rxe2_qp *qp);
bool rxe2_qp_has_work(struct rxe2_qp *qp);
bool rxe2_qp_unlock_relook(struct rxe2_qp *qp);
void rxe2_qp_notify(struct rxe2_qp *qp);

static inline struct rxe2_send_wqe *rxe2_swqe(struct rxe2_qp *qp, u32 idx)
{
	return (struct rxe2_send_wqe *)(qp->dp.req.swqe +
		(size_t)(idx & (qp->sq.num_slots - 1)) * qp->sq.slot_size);
}

static inline struct rxe2_swqe_info *rxe2_sinfo(struct rxe2_qp *qp, u32 idx)
{
	return &qp->dp.req.sinfo[idx & (qp->sq.num_slots - 1)];
}

#endif /* RXE2_DP_H */
