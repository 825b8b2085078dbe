// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2: transmit.  A packet is built in one linear skb: room for the
 * link layer, IP and UDP headers, then BTH, extended headers, payload,
 * pad and ICRC.  It is routed in the namespace of the device's netdev
 * from the sgid's address and leaves through ip_local_out() or
 * ip6_local_out() without any socket; the neighbour layer resolves the
 * MAC.  A packet to a GID of an rxe2 device in the same namespace
 * (loopback) skips all that: see rxe2_tx_send().  A small request to a
 * local QP is not even a packet: see rxe2_tx_begin().  The taps of the
 * netdev see loopback packets all the same: see rxe2_tap.c.
 */
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <net/ip.h>
#include <net/ip6_route.h>
#include <net/ipv6.h>
#include <net/route.h>
#include <rdma/ib_addr.h>

#include "rxe2_dp.h"
#include "rxe2_sge.h"
#include "rxe2_trace.h"
#include "rxe2_wire.h"

/*
 * Room for the IP and UDP headers and the netdev's link-layer header
 * (what the neighbour layer, or a tap's copy of a loopback packet,
 * puts in front), as ip_finish_output2() expects.  Not LL_MAX_HEADER:
 * sized for any device, it made every 8-byte packet a 1 KiB kmalloc,
 * zeroed (init_on_alloc) at a real cost under emulation.
 */
unsigned int rxe2_tx_headroom(const struct net_device *ndev)
{
	return LL_RESERVED_SPACE(ndev) + sizeof(struct ipv6hdr) +
	       sizeof(struct udphdr);
}

u16 rxe2_src_port(u32 lqpn, u32 rqpn, u32 flow_label)
{
	if (!flow_label)
		flow_label = rdma_calc_flow_label(lqpn, rqpn);
	return rdma_flow_label_to_udp_sport(flow_label);
}

void rxe2_bth_init(struct rxe2_bth *bth, u8 opcode, bool se, u32 pad,
		   u32 dqpn, bool ackreq, u32 psn)
{
	bth->opcode = opcode;
	bth->flags = (se ? RXE2_BTH_SE : 0) | (pad << RXE2_BTH_PAD_SHIFT);
	bth->pkey = htons(RXE2_DEFAULT_PKEY);
	bth->qpn = htonl(dqpn & RXE2_QPN_MASK);
	bth->apsn = htonl((psn & RXE2_PSN_MASK) |
			  (ackreq ? RXE2_BTH_ACKREQ : 0));
}

/*
 * rxe2_tx_alloc() - a packet with hdr_len bytes of transport headers and
 * paylen bytes of payload (the pad and the ICRC are added here).
 * *bth points at the zeroed transport headers, the payload follows; the
 * caller fills all paylen bytes of it.
 */
static struct sk_buff *rxe2_tx_alloc_dev(struct net_device *ndev,
					 unsigned int hdr_len,
					 unsigned int paylen,
					 struct rxe2_bth **bth)
{
	unsigned int pad = (4 - (paylen & 3)) & 3;
	unsigned int len = hdr_len + paylen + pad + RXE2_ICRC_LEN;
	unsigned int room = rxe2_tx_headroom(ndev);
	unsigned int truesize = SKB_DATA_ALIGN(room + len) +
		SKB_DATA_ALIGN(sizeof(struct skb_shared_info));
	struct sk_buff *skb = NULL;

	/*
	 * A page fragment, as NIC drivers build their receive skbs: a
	 * kmalloc'ed head is zeroed as a whole (init_on_alloc), which was
	 * the largest single cost of a small packet under emulation.
	 */
	if (truesize <= PAGE_SIZE) {
		void *data = netdev_alloc_frag(truesize);

		if (data) {
			skb = build_skb(data, truesize);
			if (!skb)
				skb_free_frag(data);
		}
	}
	if (!skb)
		skb = alloc_skb(room + len, GFP_KERNEL);
	if (!skb)
		return NULL;
	skb_reserve(skb, room);
	*bth = skb_put(skb, len);
	/* the payload is written by the caller: zeroing it costs a pass */
	memset(*bth, 0, hdr_len);
	memset((u8 *)*bth + hdr_len + paylen, 0, pad + RXE2_ICRC_LEN);
	return skb;
}

struct sk_buff *rxe2_tx_alloc(struct rxe2_qp *qp, unsigned int hdr_len,
			      unsigned int paylen, struct rxe2_bth **bth)
{
	return rxe2_tx_alloc_dev(rxe2_qp_rdev(qp)->ndev, hdr_len, paylen, bth);
}

/*
 * IPv4 header; a local destination (loopback) is not routed: it is an
 * address of this namespace and the packet never reaches the IP stack.
 */
static int rxe2_tx_ip4(struct net *net, const struct rxe2_av *av,
		       struct sk_buff *skb, u16 sport, bool local)
{
	struct flowi4 fl = {
		.flowi4_proto = IPPROTO_UDP,
		RXE2_FLOWI4_DSCP(av->tclass),
		.daddr = av->daddr.s6_addr32[3],
		.saddr = av->saddr.s6_addr32[3],
		.fl4_sport = htons(sport),
		.fl4_dport = htons(ROCE_V2_UDP_DPORT),
	};
	u8 ttl = av->hop_limit;
	struct rtable *rt;
	struct iphdr *iph;

	if (!local) {
		rt = ip_route_output_key(net, &fl);
		if (IS_ERR(rt))
			return PTR_ERR(rt);
		skb_dst_set(skb, &rt->dst);
		if (!ttl)
			ttl = ip4_dst_hoplimit(&rt->dst);
	} else if (!ttl) {
		ttl = READ_ONCE(net->ipv4.sysctl_ip_default_ttl);
	}

	skb_push(skb, sizeof(*iph));
	skb_reset_network_header(skb);
	iph = ip_hdr(skb);
	iph->version = 4;
	iph->ihl = sizeof(*iph) >> 2;
	iph->tos = av->tclass;
	iph->tot_len = htons(skb->len);
	iph->frag_off = htons(IP_DF);
	iph->ttl = ttl;
	iph->protocol = IPPROTO_UDP;
	iph->saddr = fl.saddr;
	iph->daddr = fl.daddr;
	ip_select_ident(net, skb, NULL);
	ip_send_check(iph);
	skb->protocol = htons(ETH_P_IP);
	memset(IPCB(skb), 0, sizeof(*IPCB(skb)));
	return 0;
}

static int rxe2_tx_ip6(struct net *net, const struct rxe2_av *av,
		       struct sk_buff *skb, u16 sport, bool local)
{
	struct flowi6 fl = {
		.flowi6_proto = IPPROTO_UDP,
		.daddr = av->daddr,
		.saddr = av->saddr,
		.flowlabel = htonl(av->flow_label & 0xfffff),
		.fl6_sport = htons(sport),
		.fl6_dport = htons(ROCE_V2_UDP_DPORT),
	};
	int hop_limit = av->hop_limit;
	struct dst_entry *dst;
	struct ipv6hdr *ip6h;
	unsigned int len = skb->len;

	if (!local) {
		dst = ip6_route_output(net, NULL, &fl);
		if (dst->error) {
			int err = dst->error;

			dst_release(dst);
			return err;
		}
		skb_dst_set(skb, dst);
		if (!hop_limit)
			hop_limit = ip6_dst_hoplimit(dst);
	} else if (!hop_limit) {
		hop_limit = READ_ONCE(net->ipv6.devconf_all->hop_limit);
	}

	skb_push(skb, sizeof(*ip6h));
	skb_reset_network_header(skb);
	ip6h = ipv6_hdr(skb);
	ip6_flow_hdr(ip6h, av->tclass, fl.flowlabel);
	ip6h->payload_len = htons(len);
	ip6h->nexthdr = IPPROTO_UDP;
	ip6h->hop_limit = hop_limit;
	ip6h->saddr = av->saddr;
	ip6h->daddr = av->daddr;
	skb->protocol = htons(ETH_P_IPV6);
	memset(IP6CB(skb), 0, sizeof(*IP6CB(skb)));
	return 0;
}

/*
 * FLUSH packets with the ICRC rdma_rxe computes for them (see
 * rxe2_icrc_rxe_flush()), for a peer running an rdma_rxe that drops
 * the IBTA's; off by default: hardware checks the IBTA's.
 */
bool rxe2_flush_icrc_rxe;
module_param_named(flush_icrc_rxe, rxe2_flush_icrc_rxe, bool, 0644);
MODULE_PARM_DESC(flush_icrc_rxe,
		 "send FLUSH with rdma_rxe's ICRC instead of the IBTA's (default off)");

void rxe2_tx_icrc(struct sk_buff *skb, bool ipv6, unsigned int tlen)
{
	unsigned int iplen = ipv6 ? sizeof(struct ipv6hdr) :
				    sizeof(struct iphdr);
	unsigned int bth_off = iplen + sizeof(struct udphdr);
	const struct rxe2_bth *bth = (void *)(skb->data + bth_off);
	__le32 icrc;

	if (bth->opcode == RXE2_OP_FLUSH && READ_ONCE(rxe2_flush_icrc_rxe))
		icrc = cpu_to_le32(rxe2_icrc_rxe_flush(skb, ipv6, bth_off,
						       tlen - RXE2_ICRC_LEN));
	else
		icrc = cpu_to_le32(rxe2_icrc(skb, ipv6, bth_off,
					     tlen - RXE2_ICRC_LEN));
	memcpy(skb_tail_pointer(skb) - RXE2_ICRC_LEN, &icrc, sizeof(icrc));
}

/* a packet sent, or handed over: counted and traced; len BTH to ICRC */
static void rxe2_tx_sent(struct rxe2_qp *qp, const struct rxe2_bth *bth,
			 u32 len)
{
	rxe2_qp_count_pkt(qp, true, len);
	trace_rxe2_tx(qp->ibqp.device->index, bth->opcode,
		      ntohl(bth->qpn) & RXE2_QPN_MASK,
		      ntohl(bth->apsn) & RXE2_PSN_MASK, len);
}

/*
 * While a tap watches lo, a device on lo sends its loopback packets
 * through it: libpcap drops lo's outgoing packets as duplicates of the
 * incoming ones, so the copy rxe2_tap_copy() shows would be invisible
 * there.
 */
bool rxe2_tx_lo_tapped(struct net_device *ndev)
{
	return (ndev->flags & IFF_LOOPBACK) && dev_nit_active(ndev);
}

/* UDP and IP headers in front of a packet's transport headers */
static int rxe2_tx_headers(struct net *net, const struct rxe2_av *av,
			   u16 sport, struct sk_buff *skb, bool local)
{
	struct udphdr *uh;
	int ret;

	skb_push(skb, sizeof(*uh));
	skb_reset_transport_header(skb);
	uh = udp_hdr(skb);
	uh->source = htons(sport);
	uh->dest = htons(ROCE_V2_UDP_DPORT);
	uh->len = htons(skb->len);
	uh->check = 0;	/* RoCEv2: the ICRC protects the payload */

	if (av->ipv6)
		ret = rxe2_tx_ip6(net, av, skb, sport, local);
	else
		ret = rxe2_tx_ip4(net, av, skb, sport, local);
	if (ret)
		return ret;
	skb->ip_summed = CHECKSUM_NONE;
	skb->priority = av->tclass >> 5;
	return 0;
}

/*
 * The loopback packet a call on ndev stands for: @len bytes of transport
 * headers and payload behind IP and UDP headers; NULL without memory.
 */
struct sk_buff *rxe2_tx_call_skb(struct net_device *ndev,
				 const struct rxe2_av *av, u16 sport,
				 const void *hdr, u32 len)
{
	struct rxe2_bth *bth;
	struct sk_buff *skb;

	skb = rxe2_tx_alloc_dev(ndev, 0, len, &bth);
	if (!skb)
		return NULL;
	memcpy(bth, hdr, len);
	if (rxe2_tx_headers(dev_net(ndev), av, sport, skb, true)) {
		kfree_skb(skb);
		return NULL;
	}
	return skb;
}

/*
 * Add UDP and IP headers to a packet whose destination was looked up
 * (rxe2_rx_loop_target(): @local, and the receiving QP @to with a
 * reference, which this consumes), then hand it over or route it; a
 * routed one as fault rule @act says (RXE2_FAULT_NONE: as it is).
 */
static int rxe2_tx_xmit(struct rxe2_qp *qp, const struct rxe2_av *av,
			u16 sport, struct sk_buff *skb, struct rxe2_qp *to,
			bool local, enum rxe2_fault_action act, unsigned int ms)
{
	struct net_device *ndev = rxe2_qp_rdev(qp)->ndev;
	struct net *net = dev_net(ndev);
	unsigned int tlen = skb->len;	/* BTH .. ICRC */
	/* for the counters and the trace, after the skb is gone */
	struct rxe2_bth bth = *(struct rxe2_bth *)skb->data;
	struct rxe2_catch caught;
	int ret;

	/* while a tap watches lo, take the real way through it */
	if (local && rxe2_tx_lo_tapped(ndev)) {
		if (to)
			rxe2_qp_put(to);
		to = NULL;
		local = false;
	}
	ret = rxe2_tx_headers(net, av, sport, skb, local);
	if (ret) {
		if (to)
			rxe2_qp_put(to);
		kfree_skb(skb);
		rxe2_qp_dp_count(qp, RXE2_DPC_SEND_ERR);
		return ret;
	}

	if (local) {
		if (dev_nit_active(ndev))
			rxe2_tap_copy(rxe2_qp_rdev(qp), to, av, skb);
		rxe2_skb_cb(skb)->trusted = true;
		rxe2_qp_deliver(qp, to, skb);
		rxe2_tx_sent(qp, &bth, tlen);
		rxe2_fault_overtaken(rxe2_qp_rdev(qp));
		return 0;
	}
	rxe2_tx_icrc(skb, av->ipv6, tlen);
	if (unlikely(act != RXE2_FAULT_NONE)) {
		/* sent, as far as the device knows: the rest is the wire's */
		rxe2_tx_sent(qp, &bth, tlen);
		rxe2_fault_xmit(rxe2_qp_rdev(qp), skb, av->ipv6, act, ms);
		return 0;
	}
	rxe2_catch_begin(&caught);
	if (av->ipv6)
		ret = ip6_local_out(net, NULL, skb);
	else
		ret = ip_local_out(net, NULL, skb);
	if (net_xmit_eval(ret)) {
		rxe2_catch_end(qp, &caught);
		rxe2_qp_dp_count(qp, RXE2_DPC_SEND_ERR);
		return -ENOBUFS;
	}
	/* counted and traced before what it woke runs */
	rxe2_tx_sent(qp, &bth, tlen);
	rxe2_catch_end(qp, &caught);
	rxe2_fault_overtaken(rxe2_qp_rdev(qp));
	return 0;
}

/*
 * A packet while transmit fault rules are live: the first that
 * fires acts on it.  One a rule acts on is routed even to a local QP
 * (through lo), where it can be held, copied or damaged; *act says what
 * to do (RXE2_FAULT_NONE: nothing, send it as usual).  True: the rule
 * dropped it.
 */
static bool rxe2_tx_fault_drops(struct rxe2_qp *qp, struct sk_buff *skb,
				enum rxe2_fault_action *act, unsigned int *ms)
{
	struct rxe2_bth *bth = (struct rxe2_bth *)skb->data;

	*act = rxe2_fault_fire(rxe2_qp_rdev(qp), RXE2_FAULT_ON_TX,
			       qp->ibqp.qp_num, bth->opcode, ms);
	if (*act != RXE2_FAULT_DROP)
		return false;
	kfree_skb(skb);
	return true;
}

/*
 * Whether a packet goes out at all: not through a port that is down
 * (-ENETDOWN, counted in send_err), not when tx_drop takes it (1:
 * lost on the wire, the sender cannot tell); 0: send it.
 */
static int rxe2_tx_gate(struct rxe2_qp *qp)
{
	struct rxe2_dev *rdev = rxe2_qp_rdev(qp);

	if (!READ_ONCE(rdev->port_active)) {
		rxe2_qp_dp_count(qp, RXE2_DPC_SEND_ERR);
		return -ENETDOWN;
	}
	return rxe2_fault_tx_drop(rdev) ? 1 : 0;
}

/*
 * rxe2_tx_send() - add UDP and IP headers and the ICRC, route and send.
 * Consumes the skb.  Returns 0 or a negative errno (packet dropped).
 * Caller: the runner of qp (holds its state_lock, sleepable).
 *
 * A packet to a GID of an rxe2 device in the same namespace (our own, or
 * another device's on this host) is loopback: it is handed to the
 * receiving QP directly (rxe2_qp_deliver()), without routing, netfilter
 * or the lo device, in order, and marked trusted: no ICRC is computed or
 * checked for it (the taps of our netdev see a copy with one:
 * rxe2_tap_copy()).
 */
int rxe2_tx_send(struct rxe2_qp *qp, const struct rxe2_av *av, u16 sport,
		 struct sk_buff *skb)
{
	struct rxe2_dev *rdev = rxe2_qp_rdev(qp);
	enum rxe2_fault_action act = RXE2_FAULT_NONE;
	unsigned int ms = 0;
	struct rxe2_qp *to;
	bool local;
	int ret;

	/* a port that is down sends nothing (RC retries, then gives up) */
	ret = rxe2_tx_gate(qp);
	if (ret) {
		kfree_skb(skb);
		return min(ret, 0);
	}
	if (rxe2_fault_on(rdev, RXE2_FAULT_ON_TX)) {
		if (rxe2_tx_fault_drops(qp, skb, &act, &ms))
			return 0;	/* lost on the wire */
		if (act != RXE2_FAULT_NONE)
			return rxe2_tx_xmit(qp, av, sport, skb, NULL, false,
					    act, ms);
	}
	to = rxe2_rx_loop_target(dev_net(rdev->ndev), &av->daddr,
				 ntohl(((struct rxe2_bth *)skb->data)->qpn),
				 &local);
	if (local && !to) {
		rxe2_tx_sent(qp, (struct rxe2_bth *)skb->data, skb->len);
		kfree_skb(skb);
		return 0;	/* as if the receiver dropped it */
	}
	return rxe2_tx_xmit(qp, av, sport, skb, to, local, RXE2_FAULT_NONE,
			    0);
}

/*
 * Whether a loopback packet may go as a call, not a packet: not while a
 * tap watches lo (rxe2_tx_lo_tapped()) or fault rules act on transmit.
 */
bool rxe2_tx_may_call(struct rxe2_dev *rdev)
{
	return !rxe2_tx_lo_tapped(rdev->ndev) &&
	       !rxe2_fault_on(rdev, RXE2_FAULT_ON_TX);
}

/*
 * rxe2_tx_begin() - start a request packet of hdr_len bytes of transport
 * headers and paylen bytes of payload; returns its zeroed headers (the
 * payload follows, the caller fills all of it), NULL without memory.
 *
 * A small RC or UC request is built in qp->dp.loop.tx_stage instead of an
 * skb (*skb NULL): if its destination is
 * a local QP with nothing queued, rxe2_tx_finish() hands it over as a
 * call (rxe2_qp_deliver_req()), and the receiver takes it as it stands,
 * without an skb, IP and UDP headers or parsing of them.  Otherwise it
 * becomes a packet there.  UD requests stay packets: their receiver
 * needs the IP header for the GRH.
 *
 * A larger one whose payload comes from the SGEs of the WQE (@direct)
 * has only its headers staged (*skb NULL, the caller fills no payload):
 * rxe2_tx_direct() sends it, with one copy when the destination is
 * local.  Caller: the runner of qp.
 */
struct rxe2_bth *rxe2_tx_begin(struct rxe2_qp *qp, unsigned int hdr_len,
			       unsigned int paylen, bool direct,
			       struct sk_buff **skb)
{
	struct rxe2_dev *rdev = rxe2_qp_rdev(qp);
	struct rxe2_bth *bth;
	bool call = (qp->ibqp.qp_type == IB_QPT_RC ||
		     qp->ibqp.qp_type == IB_QPT_UC ||
		     qp->ibqp.qp_type == IB_QPT_XRC_INI) &&
		    rxe2_tx_may_call(rdev);

	if (call && hdr_len + paylen <= RXE2_LOOP_REQ_MAX) {
		*skb = NULL;
		qp->dp.loop.tx_stage_len = hdr_len + paylen;
		memset(qp->dp.loop.tx_stage, 0, hdr_len);
		return (struct rxe2_bth *)qp->dp.loop.tx_stage;
	}
	if (call && direct) {
		*skb = NULL;
		qp->dp.loop.tx_stage_len = hdr_len;
		memset(qp->dp.loop.tx_stage, 0, hdr_len);
		return (struct rxe2_bth *)qp->dp.loop.tx_stage;
	}
	*skb = rxe2_tx_alloc(qp, hdr_len, paylen, &bth);
	return *skb ? bth : NULL;
}

/*
 * rxe2_tx_finish() - send what rxe2_tx_begin() built: the skb, or the
 * staged request, handed over as a call when it can be and turned into a
 * packet when not (a tap came up on lo, a remote destination, the
 * receiver has a packet or another request queued).  While a tap watches
 * our netdev, the packet is made for its copy first, and handed over as
 * the packet if the call does not work.  0 or a negative errno (dropped:
 * RC retries).  Caller: the runner of qp.
 */
int rxe2_tx_finish(struct rxe2_qp *qp, const struct rxe2_av *av, u16 sport,
		   struct sk_buff *skb)
{
	struct rxe2_dev *rdev = rxe2_qp_rdev(qp);
	struct rxe2_qp_dp *dp = &qp->dp;
	struct rxe2_bth *bth = (struct rxe2_bth *)dp->loop.tx_stage;
	struct rxe2_qp *to;
	bool local;
	int ret;

	if (skb)
		return rxe2_tx_send(qp, av, sport, skb);
	ret = rxe2_tx_gate(qp);
	if (ret)
		return min(ret, 0);	/* down, or lost on the wire */
	to = rxe2_rx_loop_target(dev_net(rdev->ndev), &av->daddr,
				 ntohl(bth->qpn), &local);
	if (local && !to) {
		/* as if the receiver dropped it */
		rxe2_tx_sent(qp, bth, RXE2_REQ_WIRE_LEN(dp->loop.tx_stage_len));
		return 0;
	}
	if (local && !rxe2_tx_lo_tapped(rdev->ndev)) {
		bool tapped = dev_nit_active(rdev->ndev);

		if (tapped && !rxe2_tap_call(rdev, to, av, sport,
					     dp->loop.tx_stage,
					     dp->loop.tx_stage_len, NULL, 0)) {
			rxe2_qp_put(to);
			return -ENOMEM;
		}
		if (rxe2_qp_deliver_req(qp, to, dp->loop.tx_stage,
					dp->loop.tx_stage_len)) {
			rxe2_tx_sent(qp, bth,
				     RXE2_REQ_WIRE_LEN(dp->loop.tx_stage_len));
			return 0;
		}
		if (tapped) {
			rxe2_tx_call_failed(qp, av, sport, to,
					    dp->loop.tx_stage,
					    dp->loop.tx_stage_len);
			rxe2_tx_sent(qp, bth,
				     RXE2_REQ_WIRE_LEN(dp->loop.tx_stage_len));
			return 0;
		}
	}
	/* a packet after all; as headers and payload, the pad is the same */
	skb = rxe2_tx_alloc(qp, 0, dp->loop.tx_stage_len, &bth);
	if (!skb) {
		if (to)
			rxe2_qp_put(to);
		return -ENOMEM;
	}
	memcpy(bth, dp->loop.tx_stage, dp->loop.tx_stage_len);
	return rxe2_tx_xmit(qp, av, sport, skb, to, local, RXE2_FAULT_NONE, 0);
}

/*
 * Hand @to the one-copy packet rxe2_rx_direct_check() passed, @pkt with
 * @hdr_len bytes of headers at @hdr and @len bytes of payload in @src,
 * the taps getting their copy first.  False: a tap could not, send a
 * packet.  True: taken, and counted as sent unless reading @src failed
 * (src->err).
 */
static bool rxe2_tx_hand_direct(struct rxe2_qp *qp, struct rxe2_qp *to,
				const struct rxe2_av *av, u16 sport, u8 *hdr,
				u32 hdr_len, struct rxe2_pkt *pkt,
				struct rxe2_src *src, u32 len)
{
	struct rxe2_dev *rdev = rxe2_qp_rdev(qp);

	if (dev_nit_active(rdev->ndev) &&
	    !rxe2_tap_call(rdev, to, av, sport, hdr, hdr_len, src, len))
		return false;
	rxe2_rx_direct_take(to, pkt, src);
	if (!src->err) {
		rxe2_tx_sent(qp, (struct rxe2_bth *)hdr,
			     RXE2_REQ_WIRE_LEN(hdr_len + len));
		rxe2_qp_dp_count(qp, RXE2_DPC_ONE_COPY);
	}
	return true;
}

/*
 * rxe2_tx_direct() - send what rxe2_tx_begin() staged the headers of
 * (@direct), with the payload at cursor @c: @len bytes of the WQE's
 * SGEs, its MRs held in @hold (and @seq, see rxe2_sge_copy()).  The
 * SGEs are looked up and checked first, as a copy would; to a local QP
 * that takes the packet at once, the receiver's placement then reads
 * them in place (rxe2_qp_deliver_direct()): one copy per byte instead
 * of two, no skb.  Otherwise it becomes a packet, its payload copied
 * from them.  0, -ENOMEM (dropped: RC retries), or the error of the
 * SGEs (-EINVAL, -EACCES): the WQE fails.  Caller: the runner of qp.
 */
int rxe2_tx_direct(struct rxe2_qp *qp, const struct rxe2_av *av, u16 sport,
		   struct rxe2_sge_cursor *c, u32 len,
		   struct rxe2_mr_hold *hold, u64 *seq)
{
	struct rxe2_dev *rdev = rxe2_qp_rdev(qp);
	struct rxe2_qp_dp *dp = &qp->dp;
	u32 hdr_len = dp->loop.tx_stage_len;
	struct rxe2_sge_cursor start = *c;	/* for the copy */
	struct rxe2_src src;
	struct rxe2_pkt pkt;
	struct rxe2_bth *bth;
	struct sk_buff *skb;
	struct rxe2_qp *to;
	int ret, tries;
	bool local;

	ret = rxe2_src_get(qp, c, len, hold, RXE2_WQE_MRS, seq, &src);
	if (ret && ret != -E2BIG)
		return ret;
	/* down or lost: not sent, which RC retries (not the WQE's error) */
	if (rxe2_tx_gate(qp)) {
		if (!ret)
			rxe2_src_put(&src);
		return 0;
	}
	/* a second try once the receiver ran what came before this packet */
	for (tries = 0; !ret && tries < 2; tries++) {
		if (!dp->loop.direct_to &&
		    !rxe2_fault_on(rdev, RXE2_FAULT_ON_TX)) {
			/* RC and UC: every packet of the run goes to it */
			to = rxe2_rx_loop_target(dev_net(rdev->ndev),
						 &av->daddr,
						 ntohl(((struct rxe2_bth *)
						       dp->loop.tx_stage)->qpn),
						 &local);
			if (to && !rxe2_qp_direct_begin(qp, to))
				rxe2_qp_put(to);
		}
		if (!dp->loop.direct_to)
			break;
		to = dp->loop.direct_to;
		if (rxe2_rx_direct_check(to, dp->loop.tx_stage, hdr_len, len,
					 &pkt) &&
		    rxe2_tx_hand_direct(qp, to, av, sport, dp->loop.tx_stage,
					hdr_len, &pkt, &src, len)) {
			ret = src.err ? -EACCES : 0;
			rxe2_src_put(&src);
			return ret;
		}
		rxe2_qp_direct_end(qp);
	}
	/* a packet after all: routed and checked by rxe2_tx_send() */
	skb = rxe2_tx_alloc(qp, 0, hdr_len + len, &bth);
	if (!skb) {
		if (!ret)
			rxe2_src_put(&src);
		return -ENOMEM;
	}
	memcpy(bth, dp->loop.tx_stage, hdr_len);
	if (!ret) {
		rxe2_src_read(&src, (u8 *)bth + hdr_len, len);
		ret = src.err ? -EACCES : 0;
		rxe2_src_put(&src);
	} else {
		ret = rxe2_sge_copy(qp, &start, (u8 *)bth + hdr_len, len,
				    false, hold, RXE2_WQE_MRS, seq);
	}
	if (ret) {
		kfree_skb(skb);
		return ret;
	}
	rxe2_tx_send(qp, av, sport, skb);
	return 0;
}

/*
 * rxe2_tx_direct_resp() - a READ response to the local requester that
 * rxe2_qp_direct_begin() gave us (dp.loop.direct_to), @hdr_len bytes of
 * headers at @hdr and @len bytes of payload at @iova of our MR @mr:
 * taken by its completer in this call, which places the payload straight
 * from @mr into the READ's SGEs (one copy instead of two, no skb).  0
 * (taken, or lost on the wire: the requester asks again), -EAGAIN (not
 * taken: send it as a packet), -EFAULT (@mr could not be read: the
 * response is not taken, the stream stops as for a failed copy).
 * Caller: the runner of qp, responding.
 */
int rxe2_tx_direct_resp(struct rxe2_qp *qp, u8 *hdr, u32 hdr_len,
			struct rxe2_mr *mr, u64 iova, u32 len)
{
	struct rxe2_qp *to = qp->dp.loop.direct_to;
	struct rxe2_src src;
	struct rxe2_pkt pkt;
	int ret;

	if (!to || !rxe2_rx_direct_check(to, hdr, hdr_len, len, &pkt))
		return -EAGAIN;
	ret = rxe2_src_of_mr(mr, iova, len, &src);
	if (ret)
		return ret == -E2BIG ? -EAGAIN : -EFAULT;
	ret = rxe2_tx_gate(qp);
	if (ret) {
		rxe2_src_put(&src);
		return 0;	/* down, or lost on the wire */
	}
	if (!rxe2_tx_hand_direct(qp, to, &qp->dp.av, qp->dp.src_port, hdr,
				 hdr_len, &pkt, &src, len)) {
		rxe2_src_put(&src);
		return -EAGAIN;
	}
	/*
	 * What the completion lets go (the window, max_rd_atomic) is sent
	 * by a pass of its requester, as after a response packet: at
	 * rxe2_qp_direct_end(), as for a doorbell.
	 */
	set_bit(RXE2_QPF_DOORBELL, &to->dp.flags);
	ret = src.err ? -EFAULT : 0;
	rxe2_src_put(&src);
	return ret;
}
