// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2: the network side of a device: netdev events, and how RoCEv2
 * packets reach us.
 *
 * Why no UDP socket.  RoCEv2 is UDP to port 4791.  rdma_rxe, which users
 * may well have loaded next to us, binds a kernel UDP socket to 4791 in
 * init_net without SO_REUSEPORT, so whichever module came second could
 * not bind, and one socket per port cannot be shared between two
 * drivers anyway.  rxe2 therefore owns no socket.  In every network
 * namespace it hooks NF_INET_LOCAL_IN for IPv4 and IPv6 and takes
 * (NF_STOLEN) exactly the UDP packets to port 4791 whose destination
 * address is a GID of an rxe2 device in that namespace.  Everything else
 * goes on to the socket layer untouched: rdma_rxe still gets the packets
 * for its own addresses, and an address nobody serves still draws an
 * ICMP port unreachable.  Transmit needs no socket either: packets leave
 * through ip_local_out()/ip6_local_out().
 *
 * Why LOCAL_IN just after the filter table.  By then IP has reassembled
 * fragments and decided the packet is local, and the administrator's
 * INPUT rules have applied to RoCE traffic exactly as they would to a
 * socket's.
 *
 * Why our own GID hash.  The hook runs for every local UDP packet to
 * 4791 and must not take a lock; ib_core's GID cache is behind an rwlock.
 * ib_core tells a driver about every GID it adds or deletes (add_gid and
 * del_gid), including those of upper devices (VLANs, bond masters) and
 * of netdevs in other namespaces, so we mirror the RoCEv2 GIDs into an
 * RCU hash keyed by (namespace, address).  A packet finds its device with
 * one hash lookup under the RCU read lock the hook already runs in.
 * Devices are freed by ib_core with kfree_rcu() after dealloc_driver, so
 * a device found under RCU stays valid until the hook returns.
 *
 * A packet taken this way goes to rxe2_rx_hook() (rxe2_rx.c), which
 * queues it on its QP or drops it and counts why (rx_dropped, rx_no_qp...).
 */
#include <linux/hash.h>
#include <linux/netfilter.h>
#include <linux/netfilter_ipv4.h>
#include <linux/netfilter_ipv6.h>
#include <linux/udp.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/net_namespace.h>
#include <net/netns/hash.h>

#include "rxe2_dp.h"
#include "rxe2_wire.h"

#define RXE2_GID_HASH_BITS	8

/* A RoCEv2 GID of an rxe2 device, as seen by the receive hook. */
struct rxe2_gid {
	struct hlist_node node;		/* in rxe2_gid_hash, under RCU */
	struct rcu_head rcu;
	const struct net *net;		/* compared, never dereferenced */
	struct in6_addr addr;
	struct rxe2_dev *rdev;
	bool own;			/* on rdev's netdev, not an upper one */
	bool hashed;			/* under rxe2_gid_lock */
};

static struct hlist_head rxe2_gid_hash[1 << RXE2_GID_HASH_BITS];
/* the hash's writers, rxe2_gid.hashed (the lock table in rxe2_verbs.h) */
static DEFINE_SPINLOCK(rxe2_gid_lock);

static struct hlist_head *rxe2_gid_bucket(const struct net *net,
					  const struct in6_addr *addr)
{
	u32 h = ipv6_addr_hash(addr) ^ net_hash_mix(net);

	return &rxe2_gid_hash[hash_32(h, RXE2_GID_HASH_BITS)];
}

/* Called by ib_core, sleepable, for every GID of every GID type. */
int rxe2_add_gid(const struct ib_gid_attr *attr, void **context)
{
	struct rxe2_dev *rdev = to_rdev(attr->device);
	struct net_device *ndev;
	struct rxe2_gid *g;

	*context = NULL;
	if (attr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP)
		return 0;

	g = kzalloc(sizeof(*g), GFP_KERNEL);
	if (!g)
		return -ENOMEM;

	rcu_read_lock();
	ndev = rcu_dereference(attr->ndev);
	if (ndev) {
		g->net = dev_net(ndev);
		g->own = ndev == rdev->ndev;
	}
	rcu_read_unlock();
	if (!ndev) {
		kfree(g);
		return -ENODEV;
	}
	memcpy(&g->addr, attr->gid.raw, sizeof(g->addr));
	g->rdev = rdev;

	spin_lock_bh(&rxe2_gid_lock);
	hlist_add_head_rcu(&g->node, rxe2_gid_bucket(g->net, &g->addr));
	g->hashed = true;
	spin_unlock_bh(&rxe2_gid_lock);

	*context = g;
	return 0;
}

/* attr->ndev is already NULL here: everything we need is in *context. */
int rxe2_del_gid(const struct ib_gid_attr *attr, void **context)
{
	struct rxe2_gid *g = *context;

	if (!g)
		return 0;

	spin_lock_bh(&rxe2_gid_lock);
	if (g->hashed)
		hlist_del_rcu(&g->node);
	g->hashed = false;
	spin_unlock_bh(&rxe2_gid_lock);

	kfree_rcu(g, rcu);
	*context = NULL;
	return 0;
}

/*
 * Unhash, without freeing (del_gid owns the memory), every GID that
 * matches: those of a device going away, or of a namespace going away,
 * whose address could otherwise be reused by a new one.
 */
static void rxe2_gids_unhash(const struct rxe2_dev *rdev,
			     const struct net *net)
{
	struct hlist_node *tmp;
	struct rxe2_gid *g;
	unsigned int i;

	spin_lock_bh(&rxe2_gid_lock);
	for (i = 0; i < ARRAY_SIZE(rxe2_gid_hash); i++) {
		hlist_for_each_entry_safe(g, tmp, &rxe2_gid_hash[i], node) {
			if (g->rdev != rdev && g->net != net)
				continue;
			hlist_del_init_rcu(&g->node);
			g->hashed = false;
		}
	}
	spin_unlock_bh(&rxe2_gid_lock);
}

void rxe2_gids_forget(struct rxe2_dev *rdev)
{
	rxe2_gids_unhash(rdev, NULL);
}

/*
 * Under RCU (netfilter hooks run inside rcu_read_lock()); also how
 * transmit recognises a loopback destination (rxe2_rx_loop_target()).
 */
struct rxe2_dev *rxe2_gid_lookup(const struct net *net,
				 const struct in6_addr *addr)
{
	struct rxe2_dev *found = NULL;
	struct rxe2_gid *g;

	hlist_for_each_entry_rcu(g, rxe2_gid_bucket(net, addr), node) {
		if (!net_eq(g->net, net) || !ipv6_addr_equal(&g->addr, addr))
			continue;
		/* a VLAN's address is a GID of the VLAN's own device first */
		if (g->own)
			return g->rdev;
		if (!found)
			found = g->rdev;
	}
	return found;
}

static unsigned int rxe2_rcv(const struct net *net,
			     const struct in6_addr *daddr, struct sk_buff *skb,
			     bool ipv6)
{
	struct rxe2_dev *rdev = rxe2_gid_lookup(net, daddr);

	if (!rdev)
		return NF_ACCEPT;
	return rxe2_rx_hook(rdev, skb, skb_network_offset(skb), ipv6);
}

static bool rxe2_is_roce_udp(struct sk_buff *skb, unsigned int udp_offset)
{
	struct udphdr buf;
	const struct udphdr *uh;

	uh = skb_header_pointer(skb, udp_offset, sizeof(buf), &buf);
	return uh && uh->dest == htons(ROCE_V2_UDP_DPORT);
}

static unsigned int rxe2_nf_ipv4(void *priv, struct sk_buff *skb,
				 const struct nf_hook_state *state)
{
	const struct iphdr *iph = ip_hdr(skb);
	struct in6_addr daddr;

	if (iph->protocol != IPPROTO_UDP ||
	    !rxe2_is_roce_udp(skb, skb_network_offset(skb) + ip_hdrlen(skb)))
		return NF_ACCEPT;

	/* IPv4 GIDs are IPv4-mapped IPv6 addresses */
	ipv6_addr_set_v4mapped(iph->daddr, &daddr);
	if (ipv4_is_multicast(iph->daddr))
		return rxe2_rx_hook_mcast(state->in, &daddr, skb, false);
	return rxe2_rcv(state->net, &daddr, skb, false);
}

/* RoCEv2 senders put UDP right after the fixed header: no extensions. */
static unsigned int rxe2_nf_ipv6(void *priv, struct sk_buff *skb,
				 const struct nf_hook_state *state)
{
	const struct ipv6hdr *ip6h = ipv6_hdr(skb);

	if (ip6h->nexthdr != IPPROTO_UDP ||
	    !rxe2_is_roce_udp(skb, skb_network_offset(skb) + sizeof(*ip6h)))
		return NF_ACCEPT;

	if (ipv6_addr_is_multicast(&ip6h->daddr))
		return rxe2_rx_hook_mcast(state->in, &ip6h->daddr, skb, true);
	return rxe2_rcv(state->net, &ip6h->daddr, skb, true);
}

static const struct nf_hook_ops rxe2_nf_ops[] = {
	{
		.hook = rxe2_nf_ipv4,
		.pf = NFPROTO_IPV4,
		.hooknum = NF_INET_LOCAL_IN,
		.priority = NF_IP_PRI_FILTER + 1,
	},
	{
		.hook = rxe2_nf_ipv6,
		.pf = NFPROTO_IPV6,
		.hooknum = NF_INET_LOCAL_IN,
		.priority = NF_IP6_PRI_FILTER + 1,
	},
};

static int __net_init rxe2_net_ns_init(struct net *net)
{
	return nf_register_net_hooks(net, rxe2_nf_ops, ARRAY_SIZE(rxe2_nf_ops));
}

static void __net_exit rxe2_net_ns_exit(struct net *net)
{
	nf_unregister_net_hooks(net, rxe2_nf_ops, ARRAY_SIZE(rxe2_nf_ops));
	rxe2_gids_unhash(NULL, net);
}

static struct pernet_operations rxe2_net_ops = {
	.init = rxe2_net_ns_init,
	.exit = rxe2_net_ns_exit,
};

static int rxe2_netdev_event(struct notifier_block *nb, unsigned long event,
			     void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct rxe2_dev *rdev;

	switch (event) {
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
	case NETDEV_CHANGEMTU:
	case NETDEV_UNREGISTER:
		break;
	default:
		return NOTIFY_DONE;
	}

	/*
	 * The flows' netfilter hooks go with the netdev, now, even from a
	 * device ib_core is already unregistering (which the lookup below
	 * no longer finds).
	 */
	if (event == NETDEV_UNREGISTER)
		rxe2_netdev_unregistering(ndev);
	rdev = rxe2_dev_get_by_netdev(ndev);
	if (!rdev)
		return NOTIFY_DONE;

	if (event == NETDEV_UNREGISTER)
		/* not under RTNL: unregistration takes it */
		ib_unregister_device_queued(&rdev->ibdev);
	else
		rxe2_port_refresh(rdev);

	ib_device_put(&rdev->ibdev);
	return NOTIFY_OK;
}

static struct notifier_block rxe2_netdev_notifier = {
	.notifier_call = rxe2_netdev_event,
};

int rxe2_net_init(void)
{
	int err;

	err = rxe2_dp_init();
	if (err)
		return err;
	err = register_pernet_subsys(&rxe2_net_ops);
	if (err)
		goto err_dp;

	err = register_netdevice_notifier(&rxe2_netdev_notifier);
	if (err)
		goto err_pernet;
	return 0;

err_pernet:
	unregister_pernet_subsys(&rxe2_net_ops);
err_dp:
	rxe2_dp_exit();
	return err;
}

void rxe2_net_exit(void)
{
	unregister_netdevice_notifier(&rxe2_netdev_notifier);
	unregister_pernet_subsys(&rxe2_net_ops);
	rxe2_dp_exit();
}
