// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2: PD and AH (placeholder, being written).
 */
#include "rxe2_verbs.h"

int rxe2_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	return -EOPNOTSUPP;
}

int rxe2_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	return 0;
}

int rxe2_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr,
		   struct ib_udata *udata)
{
	return -EOPNOTSUPP;
}

int rxe2_create_user_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr,
			struct ib_udata *udata)
{
	return -EOPNOTSUPP;
}

int rxe2_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr)
{
	return -EOPNOTSUPP;
}

int rxe2_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	return 0;
}

const struct ib_device_ops rxe2_verbs_ops = {
	.alloc_pd = rxe2_alloc_pd,
	.dealloc_pd = rxe2_dealloc_pd,
	INIT_RDMA_OBJ_SIZE(ib_pd, rxe2_pd, ibpd),
};
