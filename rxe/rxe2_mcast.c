// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2: multicast groups.  ibv_attach_mcast() puts a UD QP into the
 * device's group of a multicast GID; the first QP in a group makes the
 * netdev a member of the IP group (IGMP for an IPv4-mapped GID, MLD for
 * an IPv6 one, which also programs the MAC filter), the last one out
 * leaves it.  A RoCEv2 packet to a multicast address arrives through
 * the netfilter hook like any other (a copy of our own sends comes back
 * through the IP stack's multicast loopback): every QP of the receiving
 * device's group gets a copy, except the sender itself when it was
 * created with IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK.
 *
 * Locking: see the lock table in rxe2_verbs.h (rxe2_mcg_mutex, RTNL
 * inside it; the receive hook reads under RCU).  A member array is
 * replaced, never changed in place.  Members are QP numbers: the receive
 * hook looks the QP up as for unicast, and a QP leaves every group
 * before its number can be reused (rxe2_mcast_qp_gone() from destroy_qp).
 */
#include <linux/igmp.h>
#include <linux/inetdevice.h>
#include <linux/jhash.h>
#include <linux/rtnetlink.h>
#include <net/addrconf.h>
#include <rdma/ib_addr.h>

#include "rxe2_dp.h"
#include "rxe2_wire.h"

#define RXE2_MCG_HASH_BITS 6

struct rxe2_mcg_members {
	struct rcu_head rcu;
	unsigned int n;
	u32 qpn[];
};

struct rxe2_mcg {
	struct hlist_node node;		/* rxe2_mcg_hash */
	struct rcu_head rcu;
	struct rxe2_dev *rdev;
	struct in6_addr gid;
	struct rxe2_mcg_members __rcu *members;
};

/* the hash's and the members' writers, the counts (lock table) */
static DEFINE_MUTEX(rxe2_mcg_mutex);
static struct hlist_head rxe2_mcg_hash[1 << RXE2_MCG_HASH_BITS];

static struct hlist_head *rxe2_mcg_bucket(const struct in6_addr *gid)
{
	return &rxe2_mcg_hash[jhash(gid, sizeof(*gid), 0) &
			      ((1 << RXE2_MCG_HASH_BITS) - 1)];
}

/* under rxe2_mcg_mutex or RCU */
static struct rxe2_mcg *rxe2_mcg_find(const struct rxe2_dev *rdev,
				      const struct in6_addr *gid)
{
	struct rxe2_mcg *g;

	hlist_for_each_entry_rcu(g, rxe2_mcg_bucket(gid), node,
				 lockdep_is_held(&rxe2_mcg_mutex))
		if (g->rdev == rdev && ipv6_addr_equal(&g->gid, gid))
			return g;
	return NULL;
}

static struct rxe2_mcg_members *rxe2_mcg_members(struct rxe2_mcg *g)
{
	return rcu_dereference_protected(g->members,
					 lockdep_is_held(&rxe2_mcg_mutex));
}

/* the netdev joins (or leaves) the IP group of the GID: IGMP or MLD */
static int rxe2_mcg_ip_member(struct rxe2_dev *rdev,
			      const struct in6_addr *gid, bool join)
{
	struct net_device *ndev = rdev->ndev;
	struct in_device *in_dev;
	int ret = 0;

	/* both address families' membership lists want RTNL */
	rtnl_lock();
	if (!ipv6_addr_v4mapped(gid)) {
		ret = join ? ipv6_dev_mc_inc(ndev, gid) :
			     ipv6_dev_mc_dec(ndev, gid);
	} else {
		in_dev = __in_dev_get_rtnl(ndev);
		if (!in_dev)
			ret = -ENODEV;
		else if (join)
			ip_mc_inc_group(in_dev, gid->s6_addr32[3]);
		else
			ip_mc_dec_group(in_dev, gid->s6_addr32[3]);
	}
	rtnl_unlock();
	return ret;
}

/* a copy of m with qpn added (add) or removed; NULL without memory */
static struct rxe2_mcg_members *rxe2_mcg_members_edit(
	const struct rxe2_mcg_members *m, u32 qpn, bool add)
{
	unsigned int n = m ? m->n : 0, i, j = 0;
	struct rxe2_mcg_members *c;

	c = kmalloc(struct_size(c, qpn, n + 1), GFP_KERNEL);
	if (!c)
		return NULL;
	for (i = 0; i < n; i++)
		if (add || m->qpn[i] != qpn)
			c->qpn[j++] = m->qpn[i];
	if (add)
		c->qpn[j++] = qpn;
	c->n = j;
	return c;
}

static bool rxe2_mcg_has(const struct rxe2_mcg_members *m, u32 qpn)
{
	unsigned int i;

	for (i = 0; m && i < m->n; i++)
		if (m->qpn[i] == qpn)
			return true;
	return false;
}

static struct rxe2_mcg *rxe2_mcg_create(struct rxe2_dev *rdev,
					const struct in6_addr *gid)
{
	struct rxe2_mcg *g;
	int ret;

	if (rdev->mcg_count >= rdev->attr.max_mcast_grp)
		return ERR_PTR(-ENOMEM);
	g = kzalloc(sizeof(*g), GFP_KERNEL);
	if (!g)
		return ERR_PTR(-ENOMEM);
	ret = rxe2_mcg_ip_member(rdev, gid, true);
	if (ret) {
		kfree(g);
		return ERR_PTR(ret);
	}
	g->rdev = rdev;
	g->gid = *gid;
	hlist_add_head_rcu(&g->node, rxe2_mcg_bucket(gid));
	rdev->mcg_count++;
	return g;
}

static void rxe2_mcg_destroy(struct rxe2_mcg *g)
{
	struct rxe2_dev *rdev = g->rdev;

	hlist_del_rcu(&g->node);
	rdev->mcg_count--;
	rxe2_mcg_ip_member(rdev, &g->gid, false);
	kfree_rcu(rxe2_mcg_members(g), rcu);
	kfree_rcu(g, rcu);
}

/* detach qp from g; under rxe2_mcg_mutex; -EINVAL when not attached */
static int rxe2_mcg_remove(struct rxe2_mcg *g, struct rxe2_qp *qp)
{
	struct rxe2_mcg_members *m = rxe2_mcg_members(g), *c;

	if (!rxe2_mcg_has(m, qp->ibqp.qp_num))
		return -EINVAL;
	if (m->n == 1) {
		rxe2_mcg_destroy(g);
	} else {
		c = rxe2_mcg_members_edit(m, qp->ibqp.qp_num, false);
		if (!c)
			return -ENOMEM;
		rcu_assign_pointer(g->members, c);
		kfree_rcu(m, rcu);
	}
	g->rdev->mcg_attached--;
	qp->mcast_count--;
	return 0;
}

static int rxe2_mcast_check(struct ib_qp *ibqp, union ib_gid *gid)
{
	/* ib_core checks both as well: we do not rely on it */
	if (ibqp->qp_type != IB_QPT_UD)
		return -EINVAL;
	if (!rdma_is_multicast_addr((struct in6_addr *)gid->raw))
		return -EINVAL;
	return 0;
}

int rxe2_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	const struct in6_addr *addr = (const struct in6_addr *)gid->raw;
	struct rxe2_dev *rdev = to_rdev(ibqp->device);
	struct rxe2_qp *qp = to_rqp(ibqp);
	struct rxe2_mcg_members *m, *c;
	struct rxe2_mcg *g;
	bool created = false;
	int ret;

	ret = rxe2_mcast_check(ibqp, gid);
	if (ret)
		return ret;
	mutex_lock(&rxe2_mcg_mutex);
	g = rxe2_mcg_find(rdev, addr);
	m = g ? rxe2_mcg_members(g) : NULL;
	/* attaching twice changes nothing, as on mlx5 and rdma_rxe */
	if (rxe2_mcg_has(m, ibqp->qp_num))
		goto out;
	ret = -ENOMEM;
	if ((m && m->n >= rdev->attr.max_mcast_qp_attach) ||
	    rdev->mcg_attached >= rdev->attr.max_total_mcast_qp_attach)
		goto out;
	c = rxe2_mcg_members_edit(m, ibqp->qp_num, true);
	if (!c)
		goto out;
	if (!g) {
		g = rxe2_mcg_create(rdev, addr);
		if (IS_ERR(g)) {
			ret = PTR_ERR(g);
			kfree(c);
			goto out;
		}
		created = true;
	}
	rcu_assign_pointer(g->members, c);
	if (!created)
		kfree_rcu(m, rcu);
	rdev->mcg_attached++;
	qp->mcast_count++;
	ret = 0;
out:
	mutex_unlock(&rxe2_mcg_mutex);
	return ret;
}

int rxe2_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	const struct in6_addr *addr = (const struct in6_addr *)gid->raw;
	struct rxe2_mcg *g;
	int ret;

	ret = rxe2_mcast_check(ibqp, gid);
	if (ret)
		return ret;
	mutex_lock(&rxe2_mcg_mutex);
	g = rxe2_mcg_find(to_rdev(ibqp->device), addr);
	ret = g ? rxe2_mcg_remove(g, to_rqp(ibqp)) : -EINVAL;
	mutex_unlock(&rxe2_mcg_mutex);
	return ret;
}

/* destroy_qp: out of every group still holding the QP */
void rxe2_mcast_qp_gone(struct rxe2_qp *qp)
{
	struct rxe2_dev *rdev = to_rdev(qp->ibqp.device);
	struct hlist_node *tmp;
	struct rxe2_mcg *g;
	unsigned int b;

	mutex_lock(&rxe2_mcg_mutex);
	for (b = 0; qp->mcast_count && b < ARRAY_SIZE(rxe2_mcg_hash); b++)
		hlist_for_each_entry_safe(g, tmp, &rxe2_mcg_hash[b], node)
			if (g->rdev == rdev)
				rxe2_mcg_remove(g, qp);
	mutex_unlock(&rxe2_mcg_mutex);
}

/*
 * The sender itself, asking not to hear its own multicast: the DETH
 * names its QP and the source address is one of this device's GIDs.
 * The caller pulled the DETH into the linear part.
 */
static bool rxe2_mcast_own(struct rxe2_dev *rdev, struct rxe2_qp *qp,
			   struct sk_buff *skb, const struct rxe2_bth *bth,
			   bool ipv6)
{
	const struct rxe2_deth *d = (const void *)(bth + 1);
	struct in6_addr saddr;

	if (!qp->block_mcast_lb ||
	    (ntohl(d->sqp) & RXE2_QPN_MASK) != qp->ibqp.qp_num)
		return false;
	if (ipv6)
		saddr = ipv6_hdr(skb)->saddr;
	else
		ipv6_addr_set_v4mapped(ip_hdr(skb)->saddr, &saddr);
	return rxe2_gid_lookup(dev_net(skb->dev), &saddr) == rdev;
}

/* under RCU: the group of the device on ndev for daddr */
static struct rxe2_mcg *rxe2_mcg_by_ndev(struct net_device *ndev,
					 const struct in6_addr *daddr)
{
	struct rxe2_mcg *g;

	hlist_for_each_entry_rcu(g, rxe2_mcg_bucket(daddr), node)
		if (g->rdev->ndev == ndev && ipv6_addr_equal(&g->gid, daddr))
			return g;
	return NULL;
}

/* under RCU: the device on ndev that has a group for daddr, or NULL */
struct rxe2_dev *rxe2_mcast_rdev(struct net_device *ndev,
				 const struct in6_addr *daddr)
{
	struct rxe2_mcg *g = rxe2_mcg_by_ndev(ndev, daddr);

	return g ? g->rdev : NULL;
}

/*
 * A checked multicast packet for rdev's group of daddr (the caller has
 * pulled BTH and DETH): a copy to each member QP.  Under RCU (netfilter
 * hook).  Consumes the skb.
 */
void rxe2_mcast_rx(struct rxe2_dev *rdev, const struct in6_addr *daddr,
		   struct sk_buff *skb, const struct rxe2_bth *bth, bool ipv6)
{
	struct rxe2_mcg *g = rxe2_mcg_by_ndev(rdev->ndev, daddr);
	struct rxe2_mcg_members *m;
	unsigned int i;

	/* IBTA 10.5.2.2: multicast goes to QP 0xFFFFFF */
	if (!g || (ntohl(bth->qpn) & RXE2_QPN_MASK) != RXE2_QPN_MASK) {
		rxe2_rx_dropped(rdev, g ? RXE2_DROP_MALFORMED :
				      RXE2_DROP_NO_QP);
		kfree_skb(skb);
		return;
	}
	m = rcu_dereference(g->members);
	for (i = 0; i < m->n; i++) {
		struct rxe2_qp *qp = xa_load(&rdev->qp_table.xa, m->qpn[i]);
		struct sk_buff *copy;

		if (!qp || rxe2_mcast_own(rdev, qp, skb, bth, ipv6))
			continue;
		copy = skb_clone(skb, GFP_ATOMIC);
		if (!copy || !rxe2_rx_queue(qp, copy))
			rxe2_qp_dropped(qp, RXE2_DROP_BACKLOG);
	}
	consume_skb(skb);
}
