// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2: transmit.  A packet is built in one linear skb: room for the
 * link layer, IP and UDP headers, then BTH, extended headers, payload,
 * pad and ICRC.  It is routed in the namespace of the device's netdev
 * from the sgid's address and leaves through ip_local_out() or
 * ip6_local_out() without any socket; the neighbour layer resolves the
 * MAC.  A packet to one of our own addresses goes out through the lo
 * route and comes back through the receive hook (tcpdump sees it).
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

#define RXE2_TX_HEADROOM (LL_MAX_HEADER + sizeof(struct ipv6hdr) + \
			  sizeof(struct udphdr))

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
 * *bth points at the zeroed transport headers, the payload follows.
 */
struct sk_buff *rxe2_tx_alloc(struct rxe2_qp *qp, unsigned int hdr_len,
			      unsigned int paylen, struct rxe2_bth **bth)
{
	unsigned int pad = (4 - (paylen & 3)) & 3;
	unsigned int len = hdr_len + paylen + pad + RXE2_ICRC_LEN;
	struct sk_buff *skb;

	skb = alloc_skb(RXE2_TX_HEADROOM + len, GFP_KERNEL);
	if (!skb)
		return NULL;
	skb_reserve(skb, RXE2_TX_HEADROOM);
	*bth = skb_put_zero(skb, len);
	return skb;
}

static int rxe2_tx_route4(struct net *net, struct net_device *ndev,
			  const struct rxe2_av *av, struct sk_buff *skb,
			  u16 sport)
{
	struct flowi4 fl = {
		.flowi4_proto = IPPROTO_UDP,
		.flowi4_tos = av->tclass & ~3,
		.daddr = av->daddr.s6_addr32[3],
		.saddr = av->saddr.s6_addr32[3],
		.fl4_sport = htons(sport),
		.fl4_dport = htons(ROCE_V2_UDP_DPORT),
	};
	struct rtable *rt;
	struct iphdr *iph;

	rt = ip_route_output_key(net, &fl);
	if (IS_ERR(rt))
		return PTR_ERR(rt);
	skb_dst_set(skb, &rt->dst);

	skb_push(skb, sizeof(*iph));
	skb_reset_network_header(skb);
	iph = ip_hdr(skb);
	iph->version = 4;
	iph->ihl = sizeof(*iph) >> 2;
	iph->tos = av->tclass;
	iph->tot_len = htons(skb->len);
	iph->frag_off = htons(IP_DF);
	iph->ttl = av->hop_limit ? av->hop_limit :
		   ip4_dst_hoplimit(&rt->dst);
	iph->protocol = IPPROTO_UDP;
	iph->saddr = fl.saddr;
	iph->daddr = fl.daddr;
	ip_select_ident(net, skb, NULL);
	ip_send_check(iph);
	skb->protocol = htons(ETH_P_IP);
	memset(IPCB(skb), 0, sizeof(*IPCB(skb)));
	return 0;
}

static int rxe2_tx_route6(struct net *net, struct net_device *ndev,
			  const struct rxe2_av *av, struct sk_buff *skb,
			  u16 sport)
{
	struct flowi6 fl = {
		.flowi6_proto = IPPROTO_UDP,
		.daddr = av->daddr,
		.saddr = av->saddr,
		.flowlabel = htonl(av->flow_label & 0xfffff),
		.fl6_sport = htons(sport),
		.fl6_dport = htons(ROCE_V2_UDP_DPORT),
	};
	struct dst_entry *dst;
	struct ipv6hdr *ip6h;
	unsigned int len = skb->len;

	dst = ip6_route_output(net, NULL, &fl);
	if (dst->error) {
		int err = dst->error;

		dst_release(dst);
		return err;
	}
	skb_dst_set(skb, dst);

	skb_push(skb, sizeof(*ip6h));
	skb_reset_network_header(skb);
	ip6h = ipv6_hdr(skb);
	ip6_flow_hdr(ip6h, av->tclass, fl.flowlabel);
	ip6h->payload_len = htons(len);
	ip6h->nexthdr = IPPROTO_UDP;
	ip6h->hop_limit = av->hop_limit ? av->hop_limit :
			  ip6_dst_hoplimit(dst);
	ip6h->saddr = av->saddr;
	ip6h->daddr = av->daddr;
	skb->protocol = htons(ETH_P_IPV6);
	memset(IP6CB(skb), 0, sizeof(*IP6CB(skb)));
	return 0;
}

/*
 * rxe2_tx_send() - add UDP and IP headers and the ICRC, route and send.
 * Consumes the skb.  Returns 0 or a negative errno (packet dropped).
 */
int rxe2_tx_send(struct rxe2_qp *qp, const struct rxe2_av *av, u16 sport,
		 struct sk_buff *skb)
{
	struct rxe2_dev *rdev = rxe2_qp_rdev(qp);
	struct net_device *ndev = rdev->ndev;
	struct net *net = dev_net(ndev);
	unsigned int tlen = skb->len;	/* BTH .. ICRC */
	unsigned int iplen;
	struct udphdr *uh;
	__le32 icrc;
	int ret;

	/* a port that is down sends nothing (RC retries, then gives up) */
	if (!READ_ONCE(rdev->port_active)) {
		kfree_skb(skb);
		return -ENETDOWN;
	}
	skb_push(skb, sizeof(*uh));
	skb_reset_transport_header(skb);
	uh = udp_hdr(skb);
	uh->source = htons(sport);
	uh->dest = htons(ROCE_V2_UDP_DPORT);
	uh->len = htons(skb->len);
	uh->check = 0;	/* RoCEv2: the ICRC protects the payload */

	if (av->ipv6)
		ret = rxe2_tx_route6(net, ndev, av, skb, sport);
	else
		ret = rxe2_tx_route4(net, ndev, av, skb, sport);
	if (ret) {
		kfree_skb(skb);
		return ret;
	}
	iplen = av->ipv6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr);
	icrc = cpu_to_le32(rxe2_icrc(skb, av->ipv6, iplen + sizeof(*uh),
				     tlen - RXE2_ICRC_LEN));
	memcpy(skb_tail_pointer(skb) - RXE2_ICRC_LEN, &icrc, sizeof(icrc));
	skb->ip_summed = CHECKSUM_NONE;
	skb->priority = av->tclass >> 5;

	if (av->ipv6)
		ret = ip6_local_out(net, NULL, skb);
	else
		ret = ip_local_out(net, NULL, skb);
	return net_xmit_eval(ret) ? -ENOBUFS : 0;
}
