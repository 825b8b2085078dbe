// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2: CQs (placeholder, being written).
 */
#include "rxe2_verbs.h"

int rxe2_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		   struct ib_udata *udata)
{
	return -EOPNOTSUPP;
}

int rxe2_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	return 0;
}

int rxe2_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	return -EOPNOTSUPP;
}

int rxe2_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	return -EOPNOTSUPP;
}

int rxe2_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	return -EOPNOTSUPP;
}
