// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2: QPs (placeholder, being written).
 */
#include "rxe2_verbs.h"

int rxe2_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		   struct ib_udata *udata)
{
	return -EOPNOTSUPP;
}

int rxe2_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_udata *udata)
{
	return -EOPNOTSUPP;
}

int rxe2_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_qp_init_attr *init)
{
	return -EOPNOTSUPP;
}

int rxe2_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	return 0;
}

int rxe2_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		   const struct ib_send_wr **bad_wr)
{
	return -EOPNOTSUPP;
}

int rxe2_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		   const struct ib_recv_wr **bad_wr)
{
	return -EOPNOTSUPP;
}
