// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2: flow steering (ibv_create_flow) for raw packet QPs.
 *
 * A NIC steers a frame to a QP with match tables; we see every frame of
 * the netdev through two netfilter hooks of the netdev family, ingress
 * (frames arriving) and egress (frames leaving, for sniffers).  They are
 * registered at the device's first flow and stay until the device or
 * the netdev goes (see rxe2_destroy_flow()), so a device that never had
 * a flow costs the netdev nothing.
 *
 * What a frame meets, in this order (one list, kept sorted so):
 *  - SNIFFER flows: every frame both ways, a copy each;
 *  - NORMAL flows by priority (0 first; equal priorities in creation
 *    order): the first that matches takes the frame, unless it has
 *    IBV_FLOW_ATTR_FLAGS_DONT_TRAP, which lets the next match take it
 *    too;
 *  - MC_DEFAULT flows: a multicast frame no NORMAL flow took;
 *  - ALL_DEFAULT flows: any frame no NORMAL or MC_DEFAULT flow took.
 * A flow's QP gets a copy.  The kernel stack still gets every frame
 * (a software device shares its netdev with the host) except one taken
 * by a flow with the drop action (IBV_FLOW_SPEC_ACTION_DROP): that frame
 * goes nowhere.
 *
 * Matching.  A frame is parsed once into struct rxe2_flow_fields (outer
 * Ethernet, IPv4 or IPv6, TCP or UDP, a VXLAN VNI and the inner headers
 * behind it); a flow is the same structure twice, a key and a mask, and
 * matches when (fields & mask) == key word by word.  A spec implies its
 * lower layers (an IPv4 spec matches IPv4 frames only, a TCP spec TCP).
 *
 * Locking: see the lock table in rxe2_verbs.h (flow_mutex; the hooks
 * read the list under RCU, a flow is freed after a grace period).  A flow
 * holds its QP (ib_core counts it: the QP cannot be destroyed first).
 */
#include <linux/etherdevice.h>
#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/netfilter.h>
#include <linux/netfilter_netdev.h>
#include <linux/rtnetlink.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <net/vxlan.h>

#include "rxe2_dp.h"
#include "rxe2_flow.h"
#include "rxe2_wire.h"

/* flows a device may have at once */
#define RXE2_MAX_FLOWS	4096

struct rxe2_flow_l2 {
	u8 dmac[ETH_ALEN];
	u8 smac[ETH_ALEN];
	__be16 ethertype;		/* after a VLAN tag */
	__be16 vlan;			/* the tag's TCI, 0: untagged */
};

struct rxe2_flow_l3 {
	__be32 src4;
	__be32 dst4;
	u8 src6[16];
	u8 dst6[16];
	__be32 flow_label;
	u8 proto;			/* IPv4 protocol, IPv6 next header */
	u8 tos;				/* IPv4 TOS, IPv6 traffic class */
	u8 ttl;				/* or hop limit */
	u8 ip4_flags;			/* the 3 flag bits of IPv4 */
};

struct rxe2_flow_hdrs {
	struct rxe2_flow_l2 l2;
	struct rxe2_flow_l3 l3;
	__be16 sport;
	__be16 dport;
	u32 pad;
};

struct rxe2_flow_fields {
	struct rxe2_flow_hdrs outer;
	__be32 vni;			/* VXLAN: the VNI, low 24 bits */
	u32 pad;
	struct rxe2_flow_hdrs inner;	/* the frame VXLAN carries */
};

#define RXE2_FLOW_WORDS	(sizeof(struct rxe2_flow_fields) / sizeof(u64))

struct rxe2_flow {
	struct ib_flow ibflow;
	struct list_head node;		/* rdev->flows, RCU */
	struct rcu_head rcu;
	struct rxe2_qp *qp;
	u64 seq;			/* creation order */
	enum ib_flow_attr_type type;
	u16 priority;
	bool dont_trap;
	bool drop;
	bool tunnel;			/* a VXLAN spec came: inner ones may */
	u32 tag;			/* ACTION_TAG: into the CQE, else 0 */
	struct ib_counters *count_spec;	/* from a COUNT spec, while made */
	struct rxe2_flow_count count;	/* what the flow adds to, if any */
	union {
		struct rxe2_flow_fields key;	/* pre-masked */
		u64 key_w[RXE2_FLOW_WORDS];
	};
	union {
		struct rxe2_flow_fields mask;
		u64 mask_w[RXE2_FLOW_WORDS];
	};
};

static inline struct rxe2_flow *to_rflow(struct ib_flow *ibflow)
{
	return container_of(ibflow, struct rxe2_flow, ibflow);
}

/* ------------------------------------------------------------------ */
/* Specs into key and mask                                             */
/* ------------------------------------------------------------------ */

/* key |= val & mask, mask |= mask, over n bytes */
static void rxe2_flow_set(void *key, void *mask, const void *val,
			  const void *m, size_t n)
{
	u8 *k = key, *km = mask;
	const u8 *v = val, *vm = m;
	size_t i;

	for (i = 0; i < n; i++) {
		k[i] |= v[i] & vm[i];
		km[i] |= vm[i];
	}
}

static int rxe2_flow_eth(struct rxe2_flow_hdrs *k, struct rxe2_flow_hdrs *m,
			 const struct ib_flow_spec_eth *s)
{
	if (s->size < sizeof(*s))
		return -EINVAL;
	rxe2_flow_set(k->l2.dmac, m->l2.dmac, s->val.dst_mac, s->mask.dst_mac,
		      ETH_ALEN);
	rxe2_flow_set(k->l2.smac, m->l2.smac, s->val.src_mac, s->mask.src_mac,
		      ETH_ALEN);
	rxe2_flow_set(&k->l2.ethertype, &m->l2.ethertype, &s->val.ether_type,
		      &s->mask.ether_type, 2);
	rxe2_flow_set(&k->l2.vlan, &m->l2.vlan, &s->val.vlan_tag,
		      &s->mask.vlan_tag, 2);
	return 0;
}

static void rxe2_flow_need(void *key, void *mask, const void *v, size_t n)
{
	u8 ones[4] = { 0xff, 0xff, 0xff, 0xff };

	rxe2_flow_set(key, mask, v, ones, n);
}

static int rxe2_flow_ipv4(struct rxe2_flow_hdrs *k, struct rxe2_flow_hdrs *m,
			  const struct ib_flow_spec_ipv4 *s)
{
	__be16 type = htons(ETH_P_IP);

	if (s->size < sizeof(*s) || s->mask.flags & ~7)
		return -EINVAL;
	rxe2_flow_need(&k->l2.ethertype, &m->l2.ethertype, &type, 2);
	rxe2_flow_set(&k->l3.src4, &m->l3.src4, &s->val.src_ip,
		      &s->mask.src_ip, 4);
	rxe2_flow_set(&k->l3.dst4, &m->l3.dst4, &s->val.dst_ip,
		      &s->mask.dst_ip, 4);
	rxe2_flow_set(&k->l3.proto, &m->l3.proto, &s->val.proto,
		      &s->mask.proto, 1);
	rxe2_flow_set(&k->l3.tos, &m->l3.tos, &s->val.tos, &s->mask.tos, 1);
	rxe2_flow_set(&k->l3.ttl, &m->l3.ttl, &s->val.ttl, &s->mask.ttl, 1);
	rxe2_flow_set(&k->l3.ip4_flags, &m->l3.ip4_flags, &s->val.flags,
		      &s->mask.flags, 1);
	return 0;
}

static int rxe2_flow_ipv6(struct rxe2_flow_hdrs *k, struct rxe2_flow_hdrs *m,
			  const struct ib_flow_spec_ipv6 *s)
{
	__be16 type = htons(ETH_P_IPV6);

	if (s->size < sizeof(*s) || ntohl(s->mask.flow_label) > 0xfffff)
		return -EINVAL;
	rxe2_flow_need(&k->l2.ethertype, &m->l2.ethertype, &type, 2);
	rxe2_flow_set(k->l3.src6, m->l3.src6, s->val.src_ip, s->mask.src_ip,
		      16);
	rxe2_flow_set(k->l3.dst6, m->l3.dst6, s->val.dst_ip, s->mask.dst_ip,
		      16);
	rxe2_flow_set(&k->l3.flow_label, &m->l3.flow_label,
		      &s->val.flow_label, &s->mask.flow_label, 4);
	rxe2_flow_set(&k->l3.proto, &m->l3.proto, &s->val.next_hdr,
		      &s->mask.next_hdr, 1);
	rxe2_flow_set(&k->l3.tos, &m->l3.tos, &s->val.traffic_class,
		      &s->mask.traffic_class, 1);
	rxe2_flow_set(&k->l3.ttl, &m->l3.ttl, &s->val.hop_limit,
		      &s->mask.hop_limit, 1);
	return 0;
}

/* TCP or UDP: an IP spec must come first to say which IP */
static int rxe2_flow_l4(struct rxe2_flow_hdrs *k, struct rxe2_flow_hdrs *m,
			const struct ib_flow_spec_tcp_udp *s, u8 proto)
{
	if (s->size < sizeof(*s) || !m->l2.ethertype)
		return -EINVAL;
	rxe2_flow_need(&k->l3.proto, &m->l3.proto, &proto, 1);
	rxe2_flow_set(&k->sport, &m->sport, &s->val.src_port,
		      &s->mask.src_port, 2);
	rxe2_flow_set(&k->dport, &m->dport, &s->val.dst_port,
		      &s->mask.dst_port, 2);
	return 0;
}

/* VXLAN: an outer UDP spec must come first; the VNI is 24 bits */
static int rxe2_flow_vxlan(struct rxe2_flow *fl,
			   const struct ib_flow_spec_tunnel *s)
{
	__be16 port = htons(IANA_VXLAN_UDP_PORT);

	if (s->size < sizeof(*s) || fl->mask.outer.l3.proto != 0xff ||
	    fl->key.outer.l3.proto != IPPROTO_UDP ||
	    ntohl(s->mask.tunnel_id) > 0xffffff)
		return -EINVAL;
	rxe2_flow_need(&fl->key.outer.dport, &fl->mask.outer.dport, &port, 2);
	rxe2_flow_set(&fl->key.vni, &fl->mask.vni, &s->val.tunnel_id,
		      &s->mask.tunnel_id, 4);
	fl->tunnel = true;
	return 0;
}

static int rxe2_flow_spec(struct rxe2_flow *fl, const union ib_flow_spec *s)
{
	bool inner = s->type & IB_FLOW_SPEC_INNER;
	struct rxe2_flow_hdrs *k = inner ? &fl->key.inner : &fl->key.outer;
	struct rxe2_flow_hdrs *m = inner ? &fl->mask.inner : &fl->mask.outer;

	/* inner headers only behind a tunnel spec */
	if (inner && !fl->tunnel)
		return -EINVAL;
	switch (s->type & ~IB_FLOW_SPEC_INNER) {
	case IB_FLOW_SPEC_ETH:
		return rxe2_flow_eth(k, m, &s->eth);
	case IB_FLOW_SPEC_IPV4:
		return rxe2_flow_ipv4(k, m, &s->ipv4);
	case IB_FLOW_SPEC_IPV6:
		return rxe2_flow_ipv6(k, m, &s->ipv6);
	case IB_FLOW_SPEC_TCP:
		return rxe2_flow_l4(k, m, &s->tcp_udp, IPPROTO_TCP);
	case IB_FLOW_SPEC_UDP:
		return rxe2_flow_l4(k, m, &s->tcp_udp, IPPROTO_UDP);
	case IB_FLOW_SPEC_VXLAN_TUNNEL:
		return inner ? -EINVAL : rxe2_flow_vxlan(fl, &s->tunnel);
	case IB_FLOW_SPEC_ACTION_DROP:
		if (inner || s->size < sizeof(s->drop))
			return -EINVAL;
		fl->drop = true;
		return 0;
	case IB_FLOW_SPEC_ACTION_TAG:
		/* 24 bits, as mlx5 has them */
		if (inner || s->size < sizeof(s->flow_tag) ||
		    s->flow_tag.tag_id >= BIT(24))
			return -EINVAL;
		fl->tag = s->flow_tag.tag_id;
		return 0;
	case IB_FLOW_SPEC_ACTION_COUNT:
		if (inner || s->size < sizeof(s->flow_count) ||
		    fl->count_spec || !s->flow_count.counters)
			return -EINVAL;
		fl->count_spec = s->flow_count.counters;
		return 0;
	default:
		/* IB, ESP, GRE, MPLS, action handles */
		return -EOPNOTSUPP;
	}
}

/* the specs ib_core copied after the attribute, each its own size */
static int rxe2_flow_specs(struct rxe2_flow *fl, const struct ib_flow_attr *a)
{
	const u8 *p = (const u8 *)(a + 1);
	size_t left = a->size - sizeof(*a);
	unsigned int i;
	int ret;

	if (a->size < sizeof(*a))
		return -EINVAL;
	for (i = 0; i < a->num_of_specs; i++) {
		const union ib_flow_spec *s = (const void *)p;

		if (left < sizeof(s->type) + sizeof(s->size) + 2 ||
		    s->size > left || !s->size)
			return -EINVAL;
		ret = rxe2_flow_spec(fl, s);
		if (ret)
			return ret;
		p += s->size;
		left -= s->size;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Frames into fields                                                  */
/* ------------------------------------------------------------------ */

static void rxe2_flow_parse_l4(const struct sk_buff *skb, int off,
			       struct rxe2_flow_hdrs *h)
{
	__be16 ports[2], *p;

	if (h->l3.proto != IPPROTO_TCP && h->l3.proto != IPPROTO_UDP)
		return;
	p = skb_header_pointer(skb, off, sizeof(ports), ports);
	if (!p)
		return;
	h->sport = p[0];
	h->dport = p[1];
}

/*
 * The IP header at off (skb->data relative) and what follows; returns
 * the offset of the L4 header, or -1 for none we look into.
 */
static int rxe2_flow_parse_ip(const struct sk_buff *skb, int off,
			      struct rxe2_flow_hdrs *h)
{
	if (h->l2.ethertype == htons(ETH_P_IP)) {
		struct iphdr _ip;
		const struct iphdr *ip;

		ip = skb_header_pointer(skb, off, sizeof(_ip), &_ip);
		if (!ip || ip->version != 4 || ip->ihl < 5)
			return -1;
		h->l3.src4 = ip->saddr;
		h->l3.dst4 = ip->daddr;
		h->l3.proto = ip->protocol;
		h->l3.tos = ip->tos;
		h->l3.ttl = ip->ttl;
		h->l3.ip4_flags = ntohs(ip->frag_off) >> 13;
		/* a later fragment has no L4 header */
		if (ip->frag_off & htons(IP_OFFSET))
			return -1;
		return off + ip->ihl * 4;
	}
	if (h->l2.ethertype == htons(ETH_P_IPV6)) {
		struct ipv6hdr _ip6;
		const struct ipv6hdr *ip6;

		ip6 = skb_header_pointer(skb, off, sizeof(_ip6), &_ip6);
		if (!ip6 || ip6->version != 6)
			return -1;
		memcpy(h->l3.src6, &ip6->saddr, 16);
		memcpy(h->l3.dst6, &ip6->daddr, 16);
		h->l3.flow_label = ip6_flowlabel(ip6);
		h->l3.proto = ip6->nexthdr;
		h->l3.tos = ip6_tclass(ip6_flowinfo(ip6));
		h->l3.ttl = ip6->hop_limit;
		/* extension headers are not walked: nexthdr is what it is */
		return off + sizeof(*ip6);
	}
	return -1;
}

/* the inner frame of a VXLAN packet whose UDP header is at off */
static void rxe2_flow_parse_vxlan(const struct sk_buff *skb, int off,
				  struct rxe2_flow_fields *f)
{
	struct {
		struct udphdr udp;
		struct vxlanhdr vx;
		struct ethhdr eth;
	} _t;
	const typeof(_t) *t;
	int l4;

	t = skb_header_pointer(skb, off, sizeof(_t), &_t);
	if (!t || !(t->vx.vx_flags & VXLAN_HF_VNI))
		return;
	f->vni = htonl(ntohl(t->vx.vx_vni) >> 8);
	memcpy(f->inner.l2.dmac, t->eth.h_dest, ETH_ALEN);
	memcpy(f->inner.l2.smac, t->eth.h_source, ETH_ALEN);
	f->inner.l2.ethertype = t->eth.h_proto;
	l4 = rxe2_flow_parse_ip(skb, off + sizeof(_t), &f->inner);
	if (l4 >= 0)
		rxe2_flow_parse_l4(skb, l4, &f->inner);
}

/* an arriving frame: skb->data is its network header */
static void rxe2_flow_parse(const struct sk_buff *skb,
			    struct rxe2_flow_fields *f)
{
	const struct ethhdr *eth = eth_hdr(skb);
	struct rxe2_flow_hdrs *h = &f->outer;
	int l4;

	memset(f, 0, sizeof(*f));
	memcpy(h->l2.dmac, eth->h_dest, ETH_ALEN);
	memcpy(h->l2.smac, eth->h_source, ETH_ALEN);
	h->l2.ethertype = skb->protocol;
	if (skb_vlan_tag_present(skb))
		h->l2.vlan = htons(skb_vlan_tag_get(skb));
	l4 = rxe2_flow_parse_ip(skb, 0, h);
	if (l4 < 0)
		return;
	rxe2_flow_parse_l4(skb, l4, h);
	if (h->l3.proto == IPPROTO_UDP &&
	    h->dport == htons(IANA_VXLAN_UDP_PORT))
		rxe2_flow_parse_vxlan(skb, l4, f);
}

static bool rxe2_flow_matches(const struct rxe2_flow *fl,
			      const struct rxe2_flow_fields *f)
{
	const u64 *w = (const u64 *)f;
	unsigned int i;

	for (i = 0; i < RXE2_FLOW_WORDS; i++)
		if ((w[i] & fl->mask_w[i]) != fl->key_w[i])
			return false;
	return true;
}

/* ------------------------------------------------------------------ */
/* The hooks                                                           */
/* ------------------------------------------------------------------ */

/* a copy of the frame to a flow's QP; its mac header is in the skb */
static void rxe2_flow_deliver(struct rxe2_flow *fl, struct sk_buff *skb)
{
	struct sk_buff *c = skb_clone(skb, GFP_ATOMIC);

	if (!c) {
		rxe2_qp_dropped(fl->qp, RXE2_DROP_BACKLOG);
		return;
	}
	/* the QP receives the whole frame, from its MAC header on */
	if (skb_mac_header_was_set(c) && skb_mac_offset(c) < 0)
		__skb_push(c, -skb_mac_offset(c));
	rxe2_skb_cb(c)->flow_tag = fl->tag;	/* enqueueing keeps it */
	if (!rxe2_rx_queue_frame(fl->qp, c))
		rxe2_qp_dropped(fl->qp, RXE2_DROP_BACKLOG);
}

/* the whole frame's length, MAC header and any VLAN tag included */
static u32 rxe2_flow_frame_len(const struct sk_buff *skb)
{
	u32 len = skb->len;

	if (skb_mac_header_was_set(skb) && skb_mac_offset(skb) < 0)
		len += -skb_mac_offset(skb);
	return len + (skb_vlan_tag_present(skb) ? VLAN_HLEN : 0);
}

/*
 * How a frame meets the flows: from the wire (every flow), or looped
 * back inside the device from one of its raw packet QPs (rxe2_raw.c).
 * A looped frame that also left on the wire was seen by the sniffers as
 * it left; a QP made with IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK does not
 * get its own multicast back.
 */
struct rxe2_flow_src {
	bool sniffed;
	const struct rxe2_qp *blocked;	/* NULL: every QP may get it */
};

/* a frame the flow took: counted, then dropped or copied to its QP */
static void rxe2_flow_take(struct rxe2_flow *fl, struct sk_buff *skb,
			   const struct rxe2_flow_src *src, bool *drop)
{
	if (fl->count.ctr)
		rxe2_flow_count(&fl->count, rxe2_flow_frame_len(skb));
	if (fl->drop)
		*drop = true;
	else if (fl->qp != src->blocked)
		rxe2_flow_deliver(fl, skb);
}

/*
 * The frame through the flow list (under RCU); whether a drop flow took
 * it.  skb->data is its network header, the MAC header set.
 */
static bool rxe2_flow_run(struct rxe2_dev *rdev, struct sk_buff *skb,
			  const struct rxe2_flow_src *src)
{
	struct rxe2_flow_fields f;
	bool parsed = false, taken = false, mc_taken = false, drop = false;
	struct rxe2_flow *fl;

	list_for_each_entry_rcu(fl, &rdev->flows, node) {
		switch (fl->type) {
		case IB_FLOW_ATTR_SNIFFER:
			if (src->sniffed)
				continue;
			break;
		case IB_FLOW_ATTR_NORMAL:
			if (taken)
				continue;
			if (!parsed) {
				rxe2_flow_parse(skb, &f);
				parsed = true;
			}
			if (!rxe2_flow_matches(fl, &f))
				continue;
			taken = !fl->dont_trap;
			break;
		case IB_FLOW_ATTR_MC_DEFAULT:
			/* each MC_DEFAULT flow gets a copy, as each ALL_DEFAULT */
			if (taken || !is_multicast_ether_addr(eth_hdr(skb)->h_dest))
				continue;
			mc_taken = true;
			break;
		case IB_FLOW_ATTR_ALL_DEFAULT:
			if (taken || mc_taken)
				continue;
			break;
		default:
			continue;
		}
		rxe2_flow_take(fl, skb, src, &drop);
	}
	return drop;
}

static unsigned int rxe2_flow_ingress(void *priv, struct sk_buff *skb,
				      const struct nf_hook_state *state)
{
	static const struct rxe2_flow_src wire = {};
	struct rxe2_dev *rdev = priv;

	if (!READ_ONCE(rdev->port_active) || !skb_mac_header_was_set(skb))
		return NF_ACCEPT;
	return rxe2_flow_run(rdev, skb, &wire) ? NF_DROP : NF_ACCEPT;
}

/*
 * A frame a raw packet QP of the device sent, looped back to the
 * device's own flows as a NIC's internal switch does (the rule is
 * rxe2_raw.c's).  skb is the frame, MAC header first, the device's
 * own: it is consumed.  It is made to look as it would arriving - the
 * MAC header pulled, a VLAN tag taken out into the skb - so that the
 * flows, RSS and placement see what they see of a frame from the wire.
 * Process context: the hooks' RCU is taken here.
 */
void rxe2_flow_loopback(struct rxe2_qp *sender, struct sk_buff *skb,
			bool sniffed)
{
	struct rxe2_dev *rdev = rxe2_qp_rdev(sender);
	struct rxe2_flow_src src = { .sniffed = sniffed };

	if (list_empty_careful(&rdev->flows) ||
	    !READ_ONCE(rdev->port_active)) {
		kfree_skb(skb);
		return;
	}
	skb->protocol = eth_type_trans(skb, rdev->ndev);
	if (eth_type_vlan(skb->protocol)) {
		skb = skb_vlan_untag(skb);	/* frees it on failure */
		if (!skb)
			return;
	}
	if (sender->block_mcast_lb &&
	    is_multicast_ether_addr(eth_hdr(skb)->h_dest))
		src.blocked = sender;
	rcu_read_lock();
	rxe2_flow_run(rdev, skb, &src);
	rcu_read_unlock();
	kfree_skb(skb);
}

/* frames leaving: the sniffers only (they come first in the list) */
static unsigned int rxe2_flow_egress(void *priv, struct sk_buff *skb,
				     const struct nf_hook_state *state)
{
	static const struct rxe2_flow_src out = {};
	struct rxe2_dev *rdev = priv;
	struct rxe2_flow *fl;
	bool drop = false;	/* a sniffer has no drop action */

	/* __dev_queue_xmit() has set the MAC header: skb->data */
	if (!READ_ONCE(rdev->port_active))
		return NF_ACCEPT;
	list_for_each_entry_rcu(fl, &rdev->flows, node) {
		if (fl->type != IB_FLOW_ATTR_SNIFFER)
			break;
		rxe2_flow_take(fl, skb, &out, &drop);
	}
	return NF_ACCEPT;
}

/* under RTNL and flow_mutex */
static int rxe2_flow_hook(struct rxe2_dev *rdev)
{
	struct net_device *ndev = rdev->ndev;
	int ret;

	if (rdev->flow_hooked)
		return 0;
	if (rdev->flow_dead || ndev->reg_state != NETREG_REGISTERED)
		return -ENODEV;
	memset(rdev->flow_ops, 0, sizeof(rdev->flow_ops));
	rdev->flow_ops[0] = (struct nf_hook_ops){
		.hook = rxe2_flow_ingress,
		.pf = NFPROTO_NETDEV,
		.hooknum = NF_NETDEV_INGRESS,
		.dev = ndev,
		.priv = rdev,
		.priority = INT_MIN + 1,	/* before any nftables chain */
	};
	rdev->flow_ops[1] = rdev->flow_ops[0];
	rdev->flow_ops[1].hook = rxe2_flow_egress;
	rdev->flow_ops[1].hooknum = NF_NETDEV_EGRESS;
	rdev->flow_ops[1].priority = INT_MAX - 1;	/* as it leaves */
	rdev->flow_net = dev_net(ndev);
	ret = nf_register_net_hooks(rdev->flow_net, rdev->flow_ops,
				    ARRAY_SIZE(rdev->flow_ops));
	if (!ret)
		rdev->flow_hooked = true;
	return ret;
}

/*
 * Under RTNL and flow_mutex.  A hook still running holds RCU: the flows
 * it may see are freed after a grace period, and so is the device
 * (ib_core frees it with kfree_rcu()).
 */
static void rxe2_flow_unhook_locked(struct rxe2_dev *rdev)
{
	if (!rdev->flow_hooked)
		return;
	nf_unregister_net_hooks(rdev->flow_net, rdev->flow_ops,
				ARRAY_SIZE(rdev->flow_ops));
	rdev->flow_hooked = false;
}

/*
 * The netdev is going (NETDEV_UNREGISTER, under RTNL): its hooks go now,
 * before the netdev does; the flows stay until ib_core destroys them.
 */
void rxe2_flows_netdev_gone(struct rxe2_dev *rdev)
{
	mutex_lock(&rdev->flow_mutex);
	rdev->flow_dead = true;
	rxe2_flow_unhook_locked(rdev);
	mutex_unlock(&rdev->flow_mutex);
}

void rxe2_flows_init(struct rxe2_dev *rdev)
{
	mutex_init(&rdev->flow_mutex);
	INIT_LIST_HEAD(&rdev->flows);
}

/*
 * The device goes (ib_core destroyed its flows): the hooks its first
 * flow put on a netdev still there come off.  ib_core calls us under
 * its unregistration lock, never under RTNL.
 */
void rxe2_flows_fini(struct rxe2_dev *rdev)
{
	rtnl_lock();
	mutex_lock(&rdev->flow_mutex);
	rxe2_flow_unhook_locked(rdev);
	mutex_unlock(&rdev->flow_mutex);
	rtnl_unlock();
}

/* ------------------------------------------------------------------ */
/* The verbs                                                           */
/* ------------------------------------------------------------------ */

/* sniffers, then NORMAL by priority, then MC_DEFAULT, then ALL_DEFAULT */
static int rxe2_flow_rank(const struct rxe2_flow *fl)
{
	switch (fl->type) {
	case IB_FLOW_ATTR_SNIFFER:
		return 0;
	case IB_FLOW_ATTR_NORMAL:
		return 1;
	case IB_FLOW_ATTR_MC_DEFAULT:
		return 2;
	default:
		return 3;
	}
}

static bool rxe2_flow_before(const struct rxe2_flow *a,
			     const struct rxe2_flow *b)
{
	if (rxe2_flow_rank(a) != rxe2_flow_rank(b))
		return rxe2_flow_rank(a) < rxe2_flow_rank(b);
	return a->type == IB_FLOW_ATTR_NORMAL && a->priority < b->priority;
}

/* under flow_mutex: after every flow that goes before it or ties */
static void rxe2_flow_insert(struct rxe2_dev *rdev, struct rxe2_flow *fl)
{
	struct rxe2_flow *pos;

	list_for_each_entry(pos, &rdev->flows, node) {
		if (rxe2_flow_before(fl, pos)) {
			list_add_tail_rcu(&fl->node, &pos->node);
			return;
		}
	}
	list_add_tail_rcu(&fl->node, &rdev->flows);
}

static int rxe2_flow_check_attr(struct rxe2_qp *qp,
				const struct ib_flow_attr *a)
{
	if (qp->ibqp.qp_type != IB_QPT_RAW_PACKET)
		return -EOPNOTSUPP;	/* UD: mlx5's IPoIB underlay only */
	if (a->port != RXE2_PORT)
		return -EINVAL;
	if (a->flags & ~IB_FLOW_ATTR_FLAGS_DONT_TRAP)
		return -EOPNOTSUPP;	/* EGRESS: no transmit steering */
	switch (a->type) {
	case IB_FLOW_ATTR_NORMAL:
		return 0;
	case IB_FLOW_ATTR_ALL_DEFAULT:
	case IB_FLOW_ATTR_MC_DEFAULT:
	case IB_FLOW_ATTR_SNIFFER:
		/* they match by kind, not by headers */
		return a->num_of_specs ? -EINVAL : 0;
	default:
		return -EINVAL;
	}
}

static struct ib_flow *rxe2_create_flow(struct ib_qp *ibqp, struct ib_flow_attr *attr,
				 struct ib_udata *udata)
{
	struct rxe2_dev *rdev = to_rdev(ibqp->device);
	struct rxe2_flow *fl;
	int ret;

	ret = rxe2_flow_check_attr(to_rqp(ibqp), attr);
	if (ret)
		return ERR_PTR(ret);
	fl = kzalloc(sizeof(*fl), GFP_KERNEL);
	if (!fl)
		return ERR_PTR(-ENOMEM);
	fl->qp = to_rqp(ibqp);
	fl->type = attr->type;
	fl->priority = attr->priority;
	fl->dont_trap = attr->flags & IB_FLOW_ATTR_FLAGS_DONT_TRAP;
	ret = rxe2_flow_specs(fl, attr);
	if (!ret)
		ret = rxe2_flow_count_bind(&fl->count, fl->count_spec, udata);
	if (ret)
		goto err;

	rtnl_lock();
	mutex_lock(&rdev->flow_mutex);
	if (rdev->nflows >= RXE2_MAX_FLOWS) {
		ret = -ENOSPC;
	} else {
		ret = rxe2_flow_hook(rdev);
		if (!ret) {
			fl->seq = ++rdev->flow_seq;
			rxe2_flow_insert(rdev, fl);
			rdev->nflows++;
		}
	}
	mutex_unlock(&rdev->flow_mutex);
	rtnl_unlock();
	if (ret)
		goto err;
	return &fl->ibflow;
err:
	kfree(fl);
	return ERR_PTR(ret);
}

static int rxe2_destroy_flow(struct ib_flow *ibflow)
{
	struct rxe2_dev *rdev = to_rdev(ibflow->device);
	struct rxe2_flow *fl = to_rflow(ibflow);

	/*
	 * The hooks stay when the last flow goes (rxe2_flows_fini() and
	 * the netdev's removal take them off).  Registering and
	 * unregistering them flips static keys of the stack's receive and
	 * transmit paths, which patches kernel text on every CPU; under
	 * QEMU's TCG a CPU sending at that moment was seen trapping on the
	 * half-patched site (int3 in __dev_queue_xmit) while flows churned.
	 */
	mutex_lock(&rdev->flow_mutex);
	list_del_rcu(&fl->node);
	rdev->nflows--;
	mutex_unlock(&rdev->flow_mutex);
	/* a hook may still hold it, and its QP, until the grace period */
	kfree_rcu(fl, rcu);
	return 0;
}

const struct ib_device_ops rxe2_flow_ops = {
	.create_flow = rxe2_create_flow,
	.destroy_flow = rxe2_destroy_flow,
};
