// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2: SRQs (placeholder, being written).
 */
#include "rxe2_verbs.h"

int rxe2_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		    struct ib_udata *udata)
{
	return -EOPNOTSUPP;
}

int rxe2_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		    enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	return -EOPNOTSUPP;
}

int rxe2_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	return -EOPNOTSUPP;
}

int rxe2_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	return 0;
}

int rxe2_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr)
{
	return -EOPNOTSUPP;
}
