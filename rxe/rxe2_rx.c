// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2: receive.  The netfilter hook (rxe2_net.c) hands us, in softirq,
 * every RoCEv2 packet from the network addressed to one of our GIDs
 * (loopback packets from our own QPs come through rxe2_qp_deliver()
 * instead, see rxe2_loop.c).  Here it gets only
 * cheap checks (IP and UDP lengths, a BTH, a QP that exists) and is
 * queued on its QP, whose work item does the rest in process context:
 * full validation, the ICRC, then the responder (requests) or the
 * completer (responses).  Anything malformed is dropped and counted
 * under its reason (enum rxe2_drop_reason; rx_dropped is the sum).
 */
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/netfilter.h>
#include <linux/udp.h>

#include "rxe2_dp.h"
#include "rxe2_requester.h"
#include "rxe2_responder.h"
#include "rxe2_trace.h"
#include "rxe2_wire.h"

#define B	sizeof(struct rxe2_bth)
#define DETH	sizeof(struct rxe2_deth)

static void rxe2_rx_drop(struct rxe2_dev *rdev, struct sk_buff *skb,
			 enum rxe2_drop_reason why)
{
	rxe2_rx_dropped(rdev, why);
	kfree_skb(skb);
}

/*
 * The cheap checks of the hook: IP and UDP lengths, no IP options, a BTH
 * and extra bytes after it in the linear part.  The BTH, or NULL.
 */
static const struct rxe2_bth *rxe2_rx_check(struct sk_buff *skb,
					    unsigned int net_off, bool ipv6,
					    unsigned int extra)
{
	unsigned int iplen = ipv6 ? sizeof(struct ipv6hdr) :
				    sizeof(struct iphdr);
	const struct udphdr *uh;
	unsigned int ulen;

	if (net_off || !pskb_may_pull(skb, iplen + sizeof(*uh) + B + extra))
		return NULL;
	if (!ipv6 && ip_hdr(skb)->ihl != 5)
		return NULL;	/* RoCEv2 carries no IP options */
	uh = (const struct udphdr *)(skb->data + iplen);
	ulen = ntohs(uh->len);
	if (ulen < sizeof(*uh) + B + extra + RXE2_ICRC_LEN ||
	    ulen > skb->len - iplen)
		return NULL;
	return (const struct rxe2_bth *)(uh + 1);
}

static bool rxe2_rx_enqueue(struct rxe2_qp *qp, struct sk_buff *skb,
			    bool flow)
{
	if (skb_queue_len(&qp->dp.rx_queue) >= RXE2_RX_BACKLOG ||
	    test_bit(RXE2_QPF_DYING, &qp->dp.flags)) {
		kfree_skb(skb);
		return false;
	}
	skb_dst_drop(skb);
	rxe2_skb_cb(skb)->trusted = false;	/* IPCB is not needed any more */
	rxe2_skb_cb(skb)->flow = flow;
	skb_queue_tail(&qp->dp.rx_queue, skb);
	if (!rxe2_rx_catch(qp))
		rxe2_qp_kick(qp);
	return true;
}

/* hand a checked packet to its QP's work item; false: dropped (freed) */
bool rxe2_rx_queue(struct rxe2_qp *qp, struct sk_buff *skb)
{
	return rxe2_rx_enqueue(qp, skb, false);
}

/* a frame a flow took, to its raw packet QP; false: dropped (freed) */
bool rxe2_rx_queue_frame(struct rxe2_qp *qp, struct sk_buff *skb)
{
	return rxe2_rx_enqueue(qp, skb, true);
}

/*
 * rxe2_rx_hook() - softirq, under RCU.  skb->data is the IP header.
 * Returns NF_STOLEN: the packet is queued on its QP or dropped.
 */
unsigned int rxe2_rx_hook(struct rxe2_dev *rdev, struct sk_buff *skb,
			  unsigned int net_off, bool ipv6)
{
	const struct rxe2_bth *bth;
	struct rxe2_qp *qp;

	/* a port that is down receives nothing, like a NIC's */
	if (!READ_ONCE(rdev->port_active)) {
		rxe2_rx_drop(rdev, skb, RXE2_DROP_NO_QP);
		return NF_STOLEN;
	}
	bth = rxe2_rx_check(skb, net_off, ipv6, 0);
	if (!bth) {
		rxe2_rx_drop(rdev, skb, RXE2_DROP_MALFORMED);
		return NF_STOLEN;
	}
	qp = rxe2_roce_qp(xa_load(&rdev->qp_table.xa,
				  ntohl(bth->qpn) & RXE2_QPN_MASK));
	if (!qp)
		rxe2_rx_drop(rdev, skb, RXE2_DROP_NO_QP);
	else if (!rxe2_rx_queue(qp, skb))
		rxe2_qp_dropped(qp, RXE2_DROP_BACKLOG);
	return NF_STOLEN;
}

/*
 * A RoCEv2 packet to a multicast address, arrived on ndev: the groups'
 * business (rxe2_mcast.c) when a device of ndev has a group for it, else
 * the stack's.  Under RCU (netfilter hook).
 */
unsigned int rxe2_rx_hook_mcast(struct net_device *ndev,
				const struct in6_addr *daddr,
				struct sk_buff *skb, bool ipv6)
{
	struct rxe2_dev *rdev = rxe2_mcast_rdev(ndev, daddr);
	const struct rxe2_bth *bth;

	if (!rdev)
		return NF_ACCEPT;
	if (!READ_ONCE(rdev->port_active)) {
		rxe2_rx_drop(rdev, skb, RXE2_DROP_NO_QP);
		return NF_STOLEN;
	}
	/* a multicast packet is a UD SEND: it has a DETH */
	bth = rxe2_rx_check(skb, skb_network_offset(skb), ipv6, DETH);
	if (bth)
		rxe2_mcast_rx(rdev, daddr, skb, bth, ipv6);
	else
		rxe2_rx_drop(rdev, skb, RXE2_DROP_MALFORMED);
	return NF_STOLEN;
}

/*
 * rxe2_rx_loop_target() - is daddr a GID of an rxe2 device in net?  Then
 * *local is set and the result is the QP qpn of that device, with a
 * reference (rxe2_qp_get()), or NULL when the device would drop the
 * packet (port down, no such QP; counted in its rx_no_qp).
 */
struct rxe2_qp *rxe2_rx_loop_target(struct net *net,
				    const struct in6_addr *daddr, u32 qpn,
				    bool *local)
{
	struct rxe2_qp *qp = NULL;
	struct rxe2_dev *rdev;

	rcu_read_lock();
	rdev = rxe2_gid_lookup(net, daddr);
	*local = rdev;
	if (!rdev)
		goto out;
	if (READ_ONCE(rdev->port_active))
		qp = rxe2_roce_qp(xa_load(&rdev->qp_table.xa,
					  qpn & RXE2_QPN_MASK));
	if (qp && !rxe2_qp_get(qp))
		qp = NULL;
	if (!qp)
		rxe2_rx_dropped(rdev, RXE2_DROP_NO_QP);
out:
	rcu_read_unlock();
	return qp;
}

static bool rxe2_op_fits_qp(struct rxe2_qp *qp, u8 opcode)
{
	u8 transport = opcode & RXE2_TRANSPORT_MASK;
	u8 op = rxe2_op_of(opcode);

	switch (qp->ibqp.qp_type) {
	case IB_QPT_RC:
		return transport == RXE2_TRANSPORT_RC;
	case IB_QPT_UC:
		return transport == RXE2_TRANSPORT_UC &&
		       op <= RXE2_OP_WRITE_ONLY_IMM;
	case IB_QPT_UD:
	case IB_QPT_GSI:
		return transport == RXE2_TRANSPORT_UD;
	case IB_QPT_XRC_INI:
		/* the requester half only: responses */
		return transport == RXE2_TRANSPORT_XRC &&
		       !(rxe2_opinfo[opcode].flags & RXE2_OPF_REQ);
	case IB_QPT_XRC_TGT:
		/* the responder half only: requests */
		return transport == RXE2_TRANSPORT_XRC &&
		       (rxe2_opinfo[opcode].flags & RXE2_OPF_REQ);
	default:
		return false;
	}
}

/* full validation in process context; RXE2_DROP_NUM: good, else why not */
static enum rxe2_drop_reason rxe2_rx_parse(struct rxe2_qp *qp,
					   struct sk_buff *skb,
					   struct rxe2_pkt *pkt)
{
	bool ipv6 = skb->protocol == htons(ETH_P_IPV6);
	unsigned int iplen = ipv6 ? sizeof(struct ipv6hdr) :
				    sizeof(struct iphdr);
	const struct rxe2_opinfo *oi;
	struct rxe2_bth *bth;
	unsigned int ulen, tlen, pad;
	__le32 icrc;
	u32 apsn;

	if (skb_linearize(skb))
		return RXE2_DROP_MALFORMED;	/* no memory: no better name */
	skb_reset_network_header(skb);
	ulen = ntohs(((struct udphdr *)(skb->data + iplen))->len);
	if (pskb_trim(skb, iplen + ulen))
		return RXE2_DROP_MALFORMED;
	tlen = ulen - sizeof(struct udphdr);
	bth = (struct rxe2_bth *)(skb->data + iplen + sizeof(struct udphdr));
	oi = &rxe2_opinfo[bth->opcode];
	if (!(oi->flags & RXE2_OPF_VALID) || !rxe2_op_fits_qp(qp, bth->opcode))
		return RXE2_DROP_MALFORMED;
	if ((bth->flags & RXE2_BTH_TVER_MASK) ||
	    (ntohs(bth->pkey) & 0x7fff) != 0x7fff)
		return RXE2_DROP_MALFORMED;
	pad = (bth->flags & RXE2_BTH_PAD_MASK) >> RXE2_BTH_PAD_SHIFT;
	if (tlen < oi->hdr_len + pad + RXE2_ICRC_LEN)
		return RXE2_DROP_MALFORMED;
	if (!rxe2_skb_cb(skb)->trusted) {
		memcpy(&icrc, skb->data + iplen + ulen - RXE2_ICRC_LEN,
		       sizeof(icrc));
		if (le32_to_cpu(icrc) !=
		    rxe2_icrc(skb, ipv6, iplen + sizeof(struct udphdr),
			      tlen - RXE2_ICRC_LEN) &&
		    (bth->opcode != RXE2_OP_FLUSH ||
		     le32_to_cpu(icrc) !=
		     rxe2_icrc_rxe_flush(skb, ipv6, iplen +
					 sizeof(struct udphdr),
					 tlen - RXE2_ICRC_LEN)))
			return RXE2_DROP_ICRC;
	}

	pkt->skb = skb;
	pkt->hdr = (u8 *)bth;
	pkt->opcode = bth->opcode;
	pkt->flags = oi->flags;
	pkt->se = bth->flags & RXE2_BTH_SE;
	pkt->ipv6 = ipv6;
	apsn = ntohl(bth->apsn);
	pkt->psn = apsn & RXE2_PSN_MASK;
	pkt->ackreq = apsn & RXE2_BTH_ACKREQ;
	pkt->qpn = ntohl(bth->qpn) & RXE2_QPN_MASK;
	pkt->payload = pkt->hdr + oi->hdr_len;
	pkt->src = NULL;
	pkt->paylen = tlen - oi->hdr_len - pad - RXE2_ICRC_LEN;
	pkt->wire_len = tlen;
	if (!(oi->flags & RXE2_OPF_PAYLOAD) && pkt->paylen)
		return RXE2_DROP_MALFORMED;
	return RXE2_DROP_NUM;
}

/*
 * A request handed over by rxe2_qp_deliver_req(), in dp.loop.req (or kept
 * from there by rxe2_reorder_hold(), in an skb), or the headers of a
 * one-copy request or READ response (rxe2_rx_direct_check()): a local
 * QP built it, but it may name a QP of another type (a peer that points
 * an RC QP at a UC QP's number), so opcode and length are checked as for
 * a packet, and the direction: @req, RXE2_OPF_REQ for a request, 0 for
 * a response.  False: drop.
 */
static bool rxe2_rx_parse_loop(struct rxe2_qp *qp, u8 *buf, u32 len,
			       u32 req, struct rxe2_pkt *pkt)
{
	struct rxe2_bth *bth = (struct rxe2_bth *)buf;
	const struct rxe2_opinfo *oi = &rxe2_opinfo[bth->opcode];
	u32 apsn;

	if (!(oi->flags & RXE2_OPF_VALID) ||
	    (oi->flags & RXE2_OPF_REQ) != req ||
	    !rxe2_op_fits_qp(qp, bth->opcode) || len < oi->hdr_len)
		return false;
	pkt->skb = NULL;
	pkt->hdr = (u8 *)bth;
	pkt->opcode = bth->opcode;
	pkt->flags = oi->flags;
	pkt->se = bth->flags & RXE2_BTH_SE;
	pkt->ipv6 = false;	/* only UD looks, and UD is never handed over */
	apsn = ntohl(bth->apsn);
	pkt->psn = apsn & RXE2_PSN_MASK;
	pkt->ackreq = apsn & RXE2_BTH_ACKREQ;
	pkt->qpn = ntohl(bth->qpn) & RXE2_QPN_MASK;
	pkt->payload = pkt->hdr + oi->hdr_len;
	pkt->src = NULL;
	pkt->paylen = len - oi->hdr_len;
	return (oi->flags & RXE2_OPF_PAYLOAD) || !pkt->paylen;
}

/* a packet taken by the QP: counted and traced; len BTH to ICRC */
static void rxe2_rx_taken(struct rxe2_qp *qp, const struct rxe2_pkt *pkt,
			  u32 len)
{
	rxe2_qp_count_pkt(qp, false, len);
	trace_rxe2_rx(qp->ibqp.device->index, pkt->opcode, pkt->qpn, pkt->psn,
		      len);
}

/* an ACK handed over by rxe2_qp_deliver_ack(), to the completer */
static void rxe2_rx_loop_ack(struct rxe2_qp *qp, u32 smsn, u32 psn)
{
	struct {
		struct rxe2_bth bth;
		struct rxe2_aeth aeth;
	} h = { .aeth.smsn = htonl(smsn) };
	struct rxe2_pkt pkt = {
		.hdr = (u8 *)&h,
		.opcode = RXE2_OP_ACK,
		.flags = rxe2_opinfo[RXE2_OP_ACK].flags,
		.psn = psn,
		.qpn = qp->ibqp.qp_num,
	};

	rxe2_rx_taken(qp, &pkt, RXE2_ACK_WIRE_LEN);
	if (rxe2_qp_requests_acked(qp) &&
	    (qp->state == IB_QPS_RTS || qp->state == IB_QPS_SQD))
		rxe2_comp_rx(qp, &pkt);
	else
		rxe2_qp_dropped(qp, RXE2_DROP_QP_STATE);
}

enum rxe2_rx_what {
	RXE2_RX_NONE,
	RXE2_RX_ACK,		/* a handed-over ACK: *smsn, *psn */
	RXE2_RX_REQ,		/* a handed-over request in dp.loop.req */
	RXE2_RX_SKB,		/* a packet: *skb */
};

/*
 * What comes next.  A handed-over ACK or request goes before the queue:
 * it was handed over while the queue was empty, so whatever is queued
 * came after it.  (ACKs go to the completer, requests to the responder:
 * between the two the order does not matter.)
 */
static enum rxe2_rx_what rxe2_rx_next(struct rxe2_qp *qp,
				      struct sk_buff **skb, u32 *smsn,
				      u32 *psn)
{
	struct rxe2_qp_dp *dp = &qp->dp;
	enum rxe2_rx_what what = RXE2_RX_NONE;
	unsigned long flags;

	spin_lock_irqsave(&dp->rx_queue.lock, flags);
	if (dp->loop.ack_valid) {
		*smsn = dp->loop.ack_smsn;
		*psn = dp->loop.ack_psn;
		WRITE_ONCE(dp->loop.ack_valid, false);
		what = RXE2_RX_ACK;
	} else if (dp->loop.req_len) {
		what = RXE2_RX_REQ;	/* freed once handled */
	} else {
		*skb = __skb_dequeue(&dp->rx_queue);
		if (*skb)
			what = RXE2_RX_SKB;
	}
	spin_unlock_irqrestore(&dp->rx_queue.lock, flags);
	return what;
}

/* what comes next from the queue, the ACK or the request slot */
static enum rxe2_rx_what rxe2_rx_pick(struct rxe2_qp *qp,
				      struct sk_buff **skb, u32 *smsn,
				      u32 *psn)
{
	/* an empty queue costs no IRQ-off section */
	if (skb_queue_empty_lockless(&qp->dp.rx_queue) &&
	    !READ_ONCE(qp->dp.loop.ack_valid) &&
	    !READ_ONCE(qp->dp.loop.req_len))
		return RXE2_RX_NONE;
	/*
	 * A handed-over request needs no lock: the slot is filled only
	 * while the queue is empty, so it came before anything queued, and
	 * only we free it.  (Before or after an ACK does not matter.)
	 */
	if (!READ_ONCE(qp->dp.loop.ack_valid) &&
	    smp_load_acquire(&qp->dp.loop.req_len))	/* then its bytes */
		return RXE2_RX_REQ;
	return rxe2_rx_next(qp, skb, smsn, psn);
}

/* a packet to the responder or the completer; false: it has to wait */
static bool rxe2_rx_pkt(struct rxe2_qp *qp, struct rxe2_pkt *pkt)
{
	/*
	 * A request waits for the READ being answered, a repeated READ too:
	 * a requester that asks again for part of a READ keeps the rest and
	 * still wants the stream in progress, and once a re-read's answer
	 * is in, what did not come before it is lost for certain
	 * (rxe2_comp_reread_rest()).  Ending the stream instead left a
	 * requester that asked only for a gap waiting at the end of it.
	 */
	if ((pkt->flags & RXE2_OPF_REQ) && qp->dp.resp.read.active)
		return false;
	if (pkt->flags & RXE2_OPF_REQ) {
		if (qp->state < IB_QPS_RTR || qp->state > IB_QPS_SQE)
			rxe2_qp_dropped(qp, RXE2_DROP_QP_STATE);
		else if (rxe2_qp_is_xrc_tgt(qp))
			rxe2_xrc_resp_rx(qp, pkt);
		else
			rxe2_resp_rx(qp, pkt);
	} else {
		if (rxe2_qp_requests_acked(qp) &&
		    (qp->state == IB_QPS_RTS || qp->state == IB_QPS_SQD))
			rxe2_comp_rx(qp, pkt);
		else
			rxe2_qp_dropped(qp, RXE2_DROP_QP_STATE);
	}
	return true;
}

/*
 * Whether a one-copy request (rxe2_tx_direct()) is the one the responder
 * takes next, with nothing before it: no request kept, no READ being
 * answered (a request would wait, and the source does not outlive the
 * call).  Not to a TM SRQ, which parses the payload, or an XRC target.
 */
static bool rxe2_rx_direct_req_ok(struct rxe2_qp *qp, struct rxe2_pkt *pkt)
{
	struct rxe2_qp_dp *dp = &qp->dp;

	return !dp->resp.read.active && skb_queue_empty(&dp->resp.ooo) &&
	       !rxe2_qp_is_xrc_tgt(qp) && !rxe2_srq_is_tm(qp->ibqp.srq) &&
	       qp->state >= IB_QPS_RTR && qp->state <= IB_QPS_SQE &&
	       pkt->psn == dp->resp.psn;
}

/*
 * Whether a one-copy READ response (rxe2_tx_direct_resp()) is the one
 * the completer takes next, with nothing before it: no ACK handed over
 * and no response kept.  The completer then places it in this call,
 * as rxe2_rx_pkt() would a packet in order.
 */
static bool rxe2_rx_direct_resp_ok(struct rxe2_qp *qp, struct rxe2_pkt *pkt)
{
	struct rxe2_qp_dp *dp = &qp->dp;

	return rxe2_op_of(pkt->opcode) >= RXE2_OP_READ_RESP_FIRST &&
	       rxe2_op_of(pkt->opcode) <= RXE2_OP_READ_RESP_ONLY &&
	       !READ_ONCE(dp->loop.ack_valid) &&
	       skb_queue_empty(&dp->comp.ooo) &&
	       rxe2_qp_requests_acked(qp) &&
	       (qp->state == IB_QPS_RTS || qp->state == IB_QPS_SQD) &&
	       pkt->psn == dp->comp.psn;
}

/*
 * rxe2_rx_direct_check() - whether we take a one-copy loopback request
 * or READ response now (its sender's runner holds our state_lock for
 * it: rxe2_qp_direct_begin()): @hdr_len bytes of transport headers built
 * by the sender, parsed into @pkt, and @paylen bytes of payload to be
 * read from the sender's memory by the placement.  Only when it is the
 * packet we expect next and nothing queued comes before it.  False:
 * send a packet.
 */
bool rxe2_rx_direct_check(struct rxe2_qp *qp, u8 *hdr, u32 hdr_len,
			  u32 paylen, struct rxe2_pkt *pkt)
{
	struct rxe2_qp_dp *dp = &qp->dp;
	u32 req = rxe2_opinfo[((struct rxe2_bth *)hdr)->opcode].flags &
		  RXE2_OPF_REQ;

	if (test_bit(RXE2_QPF_DYING, &dp->flags) ||
	    !skb_queue_empty_lockless(&dp->rx_queue) ||
	    READ_ONCE(dp->loop.req_len) ||
	    !rxe2_rx_parse_loop(qp, hdr, hdr_len, req, pkt) ||
	    !(pkt->flags & RXE2_OPF_PAYLOAD) ||
	    !(req ? rxe2_rx_direct_req_ok(qp, pkt) :
		    rxe2_rx_direct_resp_ok(qp, pkt)))
		return false;
	pkt->payload = NULL;
	pkt->paylen = paylen;
	return true;
}

/* take the packet rxe2_rx_direct_check() passed, its payload in @src */
void rxe2_rx_direct_take(struct rxe2_qp *qp, struct rxe2_pkt *pkt,
			 struct rxe2_src *src)
{
	pkt->src = src;
	rxe2_rx_pkt(qp, pkt);	/* takes it: the check ruled out a wait */
	rxe2_rx_taken(qp, pkt,
		      RXE2_REQ_WIRE_LEN(rxe2_opinfo[pkt->opcode].hdr_len +
					pkt->paylen));
}

/*
 * Packets (queued by the hook, kept for reordering, or handed over by a
 * loopback sender) one rxe2_rx_run() takes before it returns, so that the
 * rest of the QP's pass (the completer's timers, then the requester)
 * comes between them and a QP that keeps receiving still sends.  What is
 * left waits for the runner's next pass or the work item, which it kicks.
 * 256: as many as a sender may have in flight (RXE2_MAX_INFLIGHT, the
 * largest window), so a whole window is taken in one run.
 */
#define RXE2_RX_BUDGET		256

/* caller holds state_lock */
void rxe2_rx_run(struct rxe2_qp *qp)
{
	enum rxe2_drop_reason why;
	enum rxe2_rx_what what;
	struct sk_buff *skb = NULL;
	struct rxe2_pkt pkt;
	int budget = RXE2_RX_BUDGET;
	u32 smsn, psn;
	bool kept, drained = false;

	while (budget--) {
		/* READ responses still to send, a budget at a time */
		if (qp->dp.resp.read.active)
			rxe2_resp_read_cont(qp);	/* kicks if unfinished */
		/* a packet kept because it came early, whose turn it is */
		skb = rxe2_reorder_next(qp);
		kept = skb;
		drained |= kept;
		if (kept) {
			what = RXE2_RX_SKB;
		} else {
			rxe2_reorder_drained(qp);	/* the ACK owed */
			what = rxe2_rx_pick(qp, &skb, &smsn, &psn);
		}
		switch (what) {
		case RXE2_RX_NONE:
			goto out;
		case RXE2_RX_ACK:
			rxe2_rx_loop_ack(qp, smsn, psn);
			continue;
		case RXE2_RX_REQ:
			if (rxe2_rx_parse_loop(qp, qp->dp.loop.req,
					       qp->dp.loop.req_len,
					       RXE2_OPF_REQ, &pkt)) {
				if (!rxe2_reorder_hold(qp, &pkt) &&
				    !rxe2_rx_pkt(qp, &pkt))
					return;	/* stays in the slot */
				rxe2_rx_taken(qp, &pkt,
					      RXE2_REQ_WIRE_LEN(qp->dp.loop.req_len));
			} else {
				rxe2_qp_dropped(qp, RXE2_DROP_MALFORMED);
			}
			/* release: done with the slot, a sender may refill it */
			smp_store_release(&qp->dp.loop.req_len, 0);
			continue;
		case RXE2_RX_SKB:
			break;
		}
		/* a raw packet QP's queue holds frames its flows steered */
		if (qp->ibqp.qp_type == IB_QPT_RAW_PACKET) {
			if (rxe2_skb_cb(skb)->flow)
				rxe2_raw_rx(qp, skb);
			else
				rxe2_qp_dropped(qp, RXE2_DROP_NO_QP);
			kfree_skb(skb);
			continue;
		}
		if (kept && rxe2_skb_cb(skb)->loop)
			why = rxe2_rx_parse_loop(qp, skb->data, skb->len,
						 RXE2_OPF_REQ, &pkt) ?
			      RXE2_DROP_NUM : RXE2_DROP_MALFORMED;
		else
			why = rxe2_rx_parse(qp, skb, &pkt);
		if (why != RXE2_DROP_NUM) {
			rxe2_qp_dropped(qp, why);
			kfree_skb(skb);
			continue;
		}
		/* counted when it came, not again when its turn comes */
		if (!kept && rxe2_reorder_hold(qp, &pkt)) {
			rxe2_rx_taken(qp, &pkt, pkt.wire_len);
			continue;
		}
		if (!rxe2_rx_pkt(qp, &pkt)) {
			if (kept)
				rxe2_reorder_requeue(qp, skb);
			else
				skb_queue_head(&qp->dp.rx_queue, skb);
			return;
		}
		if (!kept)
			rxe2_rx_taken(qp, &pkt, pkt.wire_len);
		else if (pkt.flags & (RXE2_OPF_SEND | RXE2_OPF_WRITE) &&
			 !pkt.ackreq && rxe2_qp_acks(qp))
			rxe2_reorder_owe_ack(qp, pkt.psn);	/* AckReq: its own */
		kfree_skb(skb);
	}
out:
	rxe2_reorder_drained(qp);
	if (drained || qp->dp.comp.reread_done)
		rxe2_reorder_after_drain(qp);
	if (budget < 0 && (!skb_queue_empty(&qp->dp.rx_queue) ||
			   rxe2_reorder_ready(qp)))
		rxe2_qp_kick(qp);
}
