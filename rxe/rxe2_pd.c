// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2: protection domains and address handles.
 */
#include <rdma/ib_cache.h>

#include "rxe2_verbs.h"

int rxe2_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct rxe2_dev *rdev = to_rdev(ibpd->device);
	struct rxe2_pd *pd = to_rpd(ibpd);
	int ret;

	ret = rxe2_check_udata_in_empty(udata);
	if (ret)
		return ret;
	return rxe2_table_add(&rdev->pd_table, pd, &pd->index);
}

int rxe2_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct rxe2_pd *pd = to_rpd(ibpd);

	rxe2_table_remove(&to_rdev(ibpd->device)->pd_table, pd->index);
	return 0;
}

/* an IPv6 GID, not an IPv4-mapped one */
static bool rxe2_gid_attr_ipv6(const struct ib_gid_attr *attr)
{
	return rdma_gid_attr_network_type(attr) == RDMA_NETWORK_IPV6;
}

/*
 * RoCEv2 needs a GRH whose source GID ib_core has already resolved into a
 * gid attribute of our port; anything else cannot be sent.
 */

int rxe2_check_ah_attr(struct rxe2_dev *rdev, const struct rdma_ah_attr *attr)
{
	const struct ib_global_route *grh;

	if (attr->type != RDMA_AH_ATTR_TYPE_ROCE ||
	    rdma_ah_get_port_num(attr) != RXE2_PORT ||
	    !(rdma_ah_get_ah_flags(attr) & IB_AH_GRH))
		return -EINVAL;
	grh = rdma_ah_read_grh(attr);
	if (!grh->sgid_attr || grh->sgid_attr->device != &rdev->ibdev ||
	    grh->sgid_attr->port_num != RXE2_PORT ||
	    grh->sgid_attr->index != grh->sgid_index)
		return -EINVAL;
	if (grh->sgid_attr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP)
		return -EINVAL;
	/*
	 * Both GIDs of one family: a packet of the other family cannot be
	 * built.  Checked here, not first when a UD send uses it, where it
	 * failed the WQE and sent the QP to ERROR: ib_mad makes the AH of
	 * its reply from a received packet's headers (ib_create_ah_from_wc),
	 * so any peer could break QP1, and RDMA CM with it.
	 */
	if (rxe2_gid_attr_ipv6(grh->sgid_attr) ==
	    ipv6_addr_v4mapped((const struct in6_addr *)grh->dgid.raw))
		return -EINVAL;
	return 0;
}


static int rxe2_ah_init(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
			struct ib_udata *udata)
{
	struct rxe2_dev *rdev = to_rdev(ibah->device);
	struct rxe2_ah *ah = to_rah(ibah);
	struct rxe2_create_ah_resp resp = {};
	gfp_t gfp = init->flags & RDMA_CREATE_AH_SLEEPABLE ?
		    GFP_KERNEL : GFP_ATOMIC;
	int ret;

	ret = rxe2_check_udata_in_empty(udata);
	if (ret)
		return ret;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	ret = rxe2_check_ah_attr(rdev, init->ah_attr);
	if (ret)
		return ret;

	ah->attr = *init->ah_attr;
	ret = rxe2_table_add_gfp(&rdev->ah_table, NULL, &ah->ah_num, gfp);
	if (ret)
		return ret;

	if (udata) {
		resp.ah_num = ah->ah_num;
		ret = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (ret) {
			rxe2_table_remove(&rdev->ah_table, ah->ah_num);
			return ret;
		}
	}
	rxe2_table_publish(&rdev->ah_table, ah->ah_num, ah);
	return 0;
}

int rxe2_av_from_attr(struct rxe2_av *av, const struct rdma_ah_attr *ah,
		      const struct ib_gid_attr *sgid_attr)
{
	const struct ib_global_route *grh = rdma_ah_read_grh(ah);

	memset(av, 0, sizeof(*av));
	if (!sgid_attr)
		return -EINVAL;
	av->ipv6 = rxe2_gid_attr_ipv6(sgid_attr);
	memcpy(&av->saddr, sgid_attr->gid.raw, sizeof(av->saddr));
	memcpy(&av->daddr, grh->dgid.raw, sizeof(av->daddr));
	if (av->ipv6 == ipv6_addr_v4mapped(&av->daddr))
		return -EINVAL;
	av->tclass = grh->traffic_class;
	av->hop_limit = grh->hop_limit;
	av->flow_label = grh->flow_label;
	return 0;
}

int rxe2_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr,
		   struct ib_udata *udata)
{
	return rxe2_ah_init(ibah, init_attr, udata);
}

int rxe2_create_user_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr,
			struct ib_udata *udata)
{
	if (!udata)
		return -EINVAL;
	return rxe2_ah_init(ibah, init_attr, udata);
}

int rxe2_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr)
{
	*attr = to_rah(ibah)->attr;
	/* the caller holds no reference on it */
	attr->grh.sgid_attr = NULL;
	return 0;
}

int rxe2_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct rxe2_ah *ah = to_rah(ibah);

	rxe2_table_remove(&to_rdev(ibah->device)->ah_table, ah->ah_num);
	return 0;
}
