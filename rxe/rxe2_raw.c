// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2: raw packet QPs (IBV_QPT_RAW_PACKET).  Such a QP sends whole
 * Ethernet frames out of the device's netdev and receives the frames
 * its flows steer to it (rxe2_flow.c), through the same rings as every
 * other QP: a posted receive costs no system call.
 *
 * Send: a SEND WQE's gather list is one frame, MAC header first, at
 * least ETH_HLEN bytes and at most the netdev's MTU plus an Ethernet and
 * a VLAN header.  It goes to dev_queue_xmit(), to the device's own
 * flows, or both (rxe2_raw_out()), and completes once handed over, as a
 * NIC completes a frame once it is on the wire; a frame the link then
 * drops is lost as it would be there.  IBV_SEND_IP_CSUM has the IPv4
 * header checksum and the TCP or UDP checksum written.  A rate limit
 * paces the frames (rxe2_pace.c).
 *
 * Receive: the whole frame, MAC header first (a VLAN tag the netdev took
 * out is put back), into a receive WQE; IBV_WC_IP_CSUM_OK when it is IP
 * with a good IPv4 header checksum and a good TCP or UDP checksum.  A
 * frame longer than the WQE's buffers is dropped and counted (rx_too_long)
 * and the WQE kept: no sender can break the QP.
 */
#include <linux/etherdevice.h>
#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/netdevice.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <net/checksum.h>
#ifdef RXE2_HAVE_NET_GSO_H
#include <net/gso.h>
#endif
#include <net/ip6_checksum.h>

#include "rxe2_dp.h"
#include "rxe2_requester.h"
#include "rxe2_responder.h"
#include "rxe2_sge.h"
#include "rxe2_wire.h"

#define RXE2_WC_IP_CSUM_OK	(1 << 2)	/* IBV_WC_IP_CSUM_OK */

/*
 * The checksum field of the TCP or UDP header at l4, or NULL when the
 * header is not all there.
 */
static __sum16 *rxe2_raw_l4_check(u8 proto, u8 *l4, u32 l4_len)
{
	if (proto == IPPROTO_TCP && l4_len >= sizeof(struct tcphdr))
		return &((struct tcphdr *)l4)->check;
	if (proto == IPPROTO_UDP && l4_len >= sizeof(struct udphdr))
		return &((struct udphdr *)l4)->check;
	return NULL;
}

/*
 * The L3 and L4 checksums of the IP packet at nh (len bytes, ethertype
 * type): written (set) or verified.  Verifying answers true only for a
 * TCP or UDP packet whose checksums are all good; setting always does
 * what it can.
 */
static bool rxe2_raw_csum(__be16 type, u8 *nh, u32 len, bool set)
{
	__sum16 *check;
	__wsum sum;
	u8 *l4;
	u32 l4_len;
	u8 proto;

	if (type == htons(ETH_P_IP)) {
		struct iphdr *ip = (struct iphdr *)nh;

		if (len < sizeof(*ip) || ip->ihl < 5 || ip->ihl * 4 > len ||
		    ntohs(ip->tot_len) > len || ntohs(ip->tot_len) < ip->ihl * 4)
			return false;
		if (set) {
			ip->check = 0;
			ip->check = ip_fast_csum(ip, ip->ihl);
		} else if (ip_fast_csum(ip, ip->ihl)) {
			return false;
		}
		if (ip->frag_off & htons(IP_MF | IP_OFFSET))
			return false;
		l4 = nh + ip->ihl * 4;
		l4_len = ntohs(ip->tot_len) - ip->ihl * 4;
		proto = ip->protocol;
		check = rxe2_raw_l4_check(proto, l4, l4_len);
		if (!check)
			return false;
		/* an IPv4 UDP checksum of 0 means none was sent */
		if (!set && proto == IPPROTO_UDP && !*check)
			return true;
		if (set)
			*check = 0;
		sum = csum_partial(l4, l4_len, 0);
		if (!set)
			return !csum_tcpudp_magic(ip->saddr, ip->daddr, l4_len,
						  proto, sum);
		*check = csum_tcpudp_magic(ip->saddr, ip->daddr, l4_len,
					   proto, sum);
	} else if (type == htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = (struct ipv6hdr *)nh;

		if (len < sizeof(*ip6) ||
		    ntohs(ip6->payload_len) > len - sizeof(*ip6))
			return false;
		l4 = nh + sizeof(*ip6);
		l4_len = ntohs(ip6->payload_len);
		proto = ip6->nexthdr;
		check = rxe2_raw_l4_check(proto, l4, l4_len);
		if (!check)
			return false;
		if (set)
			*check = 0;
		sum = csum_partial(l4, l4_len, 0);
		if (!set)
			return !csum_ipv6_magic(&ip6->saddr, &ip6->daddr, l4_len,
						proto, sum);
		*check = csum_ipv6_magic(&ip6->saddr, &ip6->daddr, l4_len,
					 proto, sum);
	} else {
		return false;
	}
	if (proto == IPPROTO_UDP && !*check)
		*check = CSUM_MANGLED_0;
	return true;
}

/* the ethertype after any VLAN tags, and where its header starts */
static __be16 rxe2_raw_l3(const u8 *frame, u32 len, u32 *off)
{
	__be16 type;

	*off = ETH_HLEN;
	type = ((const struct ethhdr *)frame)->h_proto;
	while (eth_type_vlan(type) && *off + VLAN_HLEN <= len) {
		type = *(const __be16 *)(frame + *off + 2);
		*off += VLAN_HLEN;
	}
	return type;
}

/*
 * Where a frame goes, as on mlx5 with the vport's local loopback on
 * (which mlx5_ib turns on for its user contexts and raw QPs): unicast
 * to the netdev's own MAC stays inside the device, to its flows only;
 * multicast and broadcast go to the wire and to the flows (a sniffer
 * sees them once, leaving); other unicast goes to the wire only.  Every
 * QP may get a frame back, also the sender itself, except that one made
 * with IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK is not given its own
 * multicast.  On a loopback netdev the netdev brings every frame back
 * itself.  A link that is down drops the frame, as a NIC's would.
 */
static void rxe2_raw_out(struct rxe2_qp *qp, struct sk_buff *skb)
{
	struct net_device *ndev = skb->dev;
	const u8 *dst = eth_hdr(skb)->h_dest;
	bool to_self = ether_addr_equal(dst, ndev->dev_addr);
	bool loop = to_self || is_multicast_ether_addr(dst);
	struct sk_buff *c;

	if (ndev->flags & IFF_LOOPBACK || !loop) {
		dev_queue_xmit(skb);
		return;
	}
	if (to_self) {
		rxe2_flow_loopback(qp, skb, false);
		return;
	}
	c = skb_clone(skb, GFP_KERNEL);
	dev_queue_xmit(skb);
	if (c)
		rxe2_flow_loopback(qp, c, true);
}

/* Send one frame; an IB_WC_* status when the WQE is at fault. */
int rxe2_raw_send(struct rxe2_qp *qp, u32 idx)
{
	struct rxe2_dev *rdev = rxe2_qp_rdev(qp);
	struct net_device *ndev = rdev->ndev;
	struct rxe2_send_wqe *w = rxe2_swqe(qp, idx);
	struct rxe2_swqe_info *info = rxe2_sinfo(qp, idx);
	u32 len = info->length;
	struct sk_buff *skb;
	u32 nh_off;
	__be16 type;
	u8 *frame;

	if (len < ETH_HLEN || len > READ_ONCE(ndev->mtu) + VLAN_ETH_HLEN)
		return IB_WC_LOC_LEN_ERR;
	skb = alloc_skb(LL_RESERVED_SPACE(ndev) + len, GFP_KERNEL);
	if (!skb)
		return -ENOMEM;
	skb_reserve(skb, LL_RESERVED_SPACE(ndev));
	frame = skb_put(skb, len);
	if (w->send_flags & IB_SEND_INLINE) {
		memcpy(frame, w + 1, len);
	} else {
		struct rxe2_sge_cursor c = {
			.sge = (const struct rxe2_sge *)(w + 1),
			.num = w->num_sge,
		};

		if (rxe2_sge_copy(qp, &c, frame, len, false, info->hold,
				  RXE2_WQE_MRS, &info->mr_seq)) {
			kfree_skb(skb);
			return IB_WC_LOC_PROT_ERR;
		}
	}
	type = rxe2_raw_l3(frame, len, &nh_off);
	if (w->send_flags & IB_SEND_IP_CSUM)
		rxe2_raw_csum(type, frame + nh_off, len - nh_off, true);
	skb->dev = ndev;
	skb_reset_mac_header(skb);
	skb_set_network_header(skb, nh_off);
	skb->protocol = ((struct ethhdr *)frame)->h_proto;
	rxe2_raw_out(qp, skb);
	rxe2_qp_count_pkt(qp, true, len);
	if (qp->dp.pace.rate_kbps)
		rxe2_pace_frame_sent(qp, len);

	info->state = RXE2_WQE_DONE;
	qp->dp.req.next++;
	return 0;
}

/* the frame as it was on the wire: a tag the netdev took out goes back */
static int rxe2_raw_place(struct rxe2_qp *qp, struct sk_buff *skb)
{
	struct vlan_ethhdr tag;
	int ret;

	if (!skb_vlan_tag_present(skb))
		return rxe2_resp_place(qp, skb->data, skb->len);
	memcpy(&tag, skb->data, 2 * ETH_ALEN);
	tag.h_vlan_proto = skb->vlan_proto;
	tag.h_vlan_TCI = htons(skb_vlan_tag_get(skb));
	ret = rxe2_resp_place(qp, &tag, offsetof(struct vlan_ethhdr,
						 h_vlan_encapsulated_proto));
	if (!ret)
		ret = rxe2_resp_place(qp, skb->data + 2 * ETH_ALEN,
				      skb->len - 2 * ETH_ALEN);
	return ret;
}

/* IBV_WC_IP_CSUM_OK, or 0, for a received frame */
static u32 rxe2_raw_csum_flag(struct sk_buff *skb)
{
	u32 nh_off;
	__be16 type = rxe2_raw_l3(skb->data, skb->len, &nh_off);

	return rxe2_raw_csum(type, skb->data + nh_off, skb->len - nh_off,
			     false) ? RXE2_WC_IP_CSUM_OK : 0;
}

/* an RSS QP's frame: into the WQ its hash picks, completed on its CQ */
static void rxe2_raw_rx_wq(struct rxe2_qp *qp, struct sk_buff *skb, u32 len)
{
	struct rxe2_wq *wq = rxe2_rss_wq(qp, skb);
	struct rxe2_cqe cqe = {
		.status = IB_WC_SUCCESS,
		.opcode = IB_WC_RECV,
		.qp_num = wq->ibwq.wq_num,
		.port_num = RXE2_PORT,
	};
	int ret;

	if (READ_ONCE(wq->ibwq.state) != IB_WQS_RDY) {
		rxe2_qp_dropped(qp, RXE2_DROP_QP_STATE);
		return;
	}
	ret = rxe2_wq_take(qp, wq, len);
	if (ret) {
		if (ret == -EPROTO)
			rxe2_wq_fail(qp, wq, IB_WC_LOC_QP_OP_ERR);
		rxe2_qp_dropped(qp, ret == -EMSGSIZE ? RXE2_DROP_TOO_LONG :
				RXE2_DROP_NO_RECV);
		return;
	}
	ret = rxe2_raw_place(qp, skb);
	if (ret) {
		rxe2_wq_fail(qp, wq, ret == -EINVAL ? IB_WC_LOC_LEN_ERR :
			     IB_WC_LOC_PROT_ERR);
		return;
	}
	qp->dp.resp.have_rwqe = false;
	rxe2_mr_msg_end(qp->dp.resp.rcv_hold, RXE2_RECV_MRS);
	rxe2_qp_count_pkt(qp, false, len);
	cqe.wr_id = ((struct rxe2_recv_wqe *)qp->dp.resp.rwqe)->wr_id;
	cqe.byte_len = qp->dp.resp.rcv_offset;
	cqe.wc_flags = rxe2_raw_csum_flag(skb);
	cqe.ex = rxe2_skb_cb(skb)->flow_tag;
	if (rxe2_cq_post(to_rcq(wq->ibwq.cq), &cqe, false))
		WRITE_ONCE(wq->ibwq.state, IB_WQS_ERR);
}

static void rxe2_raw_rx_frame(struct rxe2_qp *qp, struct sk_buff *skb);

/*
 * Whether the QP takes frames now, counted as a drop if not.  An RSS QP
 * is never modified (as on mlx5): its WQs' states count instead.
 */
static bool rxe2_raw_takes(struct rxe2_qp *qp)
{
	if (qp->rss || (qp->state >= IB_QPS_RTR && qp->state <= IB_QPS_SQE))
		return true;
	rxe2_qp_dropped(qp, RXE2_DROP_QP_STATE);
	return false;
}

/*
 * A frame GRO merged or TSO built (a TCP stream across veth, a sniffer
 * on a sending host): the QP gets the frames the wire carries, cut
 * again with their checksums written.  The clone gets a head of its own
 * first: some segmenters (UFO) write into the head, which the stack
 * still shares.  A segment that fails the QP stops the rest.
 */
static void rxe2_raw_rx_gso(struct rxe2_qp *qp, struct sk_buff *skb)
{
	struct sk_buff *segs, *seg, *next;

	if ((skb->ip_summed != CHECKSUM_PARTIAL &&
	     skb->ip_summed != CHECKSUM_UNNECESSARY) ||
	    skb_unclone(skb, GFP_ATOMIC)) {
		rxe2_qp_dropped(qp, RXE2_DROP_MALFORMED);
		return;
	}
	segs = skb_gso_segment(skb, 0);
	if (IS_ERR_OR_NULL(segs)) {
		rxe2_qp_dropped(qp, RXE2_DROP_MALFORMED);
		return;
	}
	/* a frag list comes back as the skb itself, the caller's to free */
	skb_list_walk_safe(segs, seg, next) {
		skb_mark_not_on_list(seg);
		if (rxe2_raw_takes(qp))
			rxe2_raw_rx_frame(qp, seg);
		if (seg != skb)
			kfree_skb(seg);
	}
}

/* a frame a flow steered to the QP; caller holds state_lock */
void rxe2_raw_rx(struct rxe2_qp *qp, struct sk_buff *skb)
{
	if (!rxe2_raw_takes(qp))
		return;
	if (skb_is_gso(skb))
		rxe2_raw_rx_gso(qp, skb);
	else
		rxe2_raw_rx_frame(qp, skb);
}

/* one frame, no longer than the wire allows */
static void rxe2_raw_rx_frame(struct rxe2_qp *qp, struct sk_buff *skb)
{
	u32 len = skb->len + (skb_vlan_tag_present(skb) ? VLAN_HLEN : 0);
	struct rxe2_recv_wqe *w = (struct rxe2_recv_wqe *)qp->dp.resp.rwqe;
	u32 flags;
	int ret;

	/*
	 * A frame from this host's stack may still owe its L4 checksum
	 * (CHECKSUM_PARTIAL, veth and lo pass it on): the QP gets it done,
	 * an SCTP CRC as a CRC.
	 */
	if (skb->len < ETH_HLEN || skb_linearize(skb) ||
	    (skb->ip_summed == CHECKSUM_PARTIAL &&
	     skb_csum_hwoffload_help(skb, 0))) {
		rxe2_qp_dropped(qp, RXE2_DROP_MALFORMED);
		return;
	}
	if (qp->rss) {
		rxe2_raw_rx_wq(qp, skb, len);
		return;
	}
	if (!rxe2_resp_datagram_rwqe(qp, len))
		return;
	ret = rxe2_raw_place(qp, skb);
	if (ret) {
		/* the WQE's own fault: it completes in error, as on UD */
		rxe2_resp_fatal(qp, NULL, 0, ret == -EINVAL ?
				IB_WC_LOC_LEN_ERR : IB_WC_LOC_PROT_ERR);
		return;
	}
	flags = rxe2_raw_csum_flag(skb);
	qp->dp.resp.have_rwqe = false;
	rxe2_mr_msg_end(qp->dp.resp.rcv_hold, RXE2_RECV_MRS);
	rxe2_qp_count_pkt(qp, false, len);
	rxe2_recv_cqe(qp, w->wr_id, IB_WC_SUCCESS, IB_WC_RECV,
		      qp->dp.resp.rcv_offset, flags, rxe2_skb_cb(skb)->flow_tag,
		      false);
}
