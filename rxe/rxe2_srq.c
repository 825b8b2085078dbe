// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2: shared receive queues.  One ring of rxe2_recv_wqe, like an RQ.
 */
#include "rxe2_verbs.h"

int rxe2_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		    struct ib_udata *udata)
{
	struct rxe2_dev *rdev = to_rdev(ibsrq->device);
	const struct ib_device_attr *a = &rdev->attr;
	struct rxe2_srq *srq = to_rsrq(ibsrq);
	struct rxe2_create_srq_resp resp = {};
	struct ib_srq_attr *attr = &init->attr;
	int ret;

	if (init->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	if (attr->max_wr < 1 || attr->max_wr > a->max_srq_wr ||
	    attr->max_sge > a->max_srq_sge || attr->srq_limit >= attr->max_wr)
		return -EINVAL;
	ret = rxe2_check_udata_in_empty(udata);
	if (ret)
		return ret;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;

	ret = rxe2_ring_init(&srq->ring, attr->max_wr,
			     rxe2_recv_slot_size(attr->max_sge), false, udata);
	if (ret)
		return ret;
	srq->is_user = !!udata;
	srq->max_wr = srq->ring.num_slots;
	srq->max_sge = attr->max_sge;
	srq->srq_limit = attr->srq_limit;

	ret = rxe2_table_add(&rdev->srq_table, NULL, &srq->index);
	if (ret)
		goto err_ring;
	if (udata) {
		rxe2_ring_get_info(&srq->ring, &resp.rq);
		ret = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (ret)
			goto err_table;
	}
	attr->max_wr = srq->max_wr;
	rxe2_table_publish(&rdev->srq_table, srq->index, srq);
	return 0;

err_table:
	rxe2_table_remove(&rdev->srq_table, srq->index);
err_ring:
	rxe2_ring_cleanup(&srq->ring);
	return ret;
}

int rxe2_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		    enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct rxe2_srq *srq = to_rsrq(ibsrq);
	int ret;

	if (mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT))
		return -EINVAL;
	ret = rxe2_check_udata_in_empty(udata);
	if (ret)
		return ret;
	/* resizing means moving a ring the process has mapped: not yet */
	if (mask & IB_SRQ_MAX_WR)
		return -EOPNOTSUPP;
	if (mask & IB_SRQ_LIMIT) {
		if (attr->srq_limit > srq->max_wr)
			return -EINVAL;
		/* the data path reads it without the lock */
		WRITE_ONCE(srq->srq_limit, attr->srq_limit);
	}
	return 0;
}

int rxe2_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct rxe2_srq *srq = to_rsrq(ibsrq);

	attr->max_wr = srq->max_wr;
	attr->max_sge = srq->max_sge;
	attr->srq_limit = READ_ONCE(srq->srq_limit);
	return 0;
}

int rxe2_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct rxe2_srq *srq = to_rsrq(ibsrq);

	rxe2_table_remove(&to_rdev(ibsrq->device)->srq_table, srq->index);
	rxe2_ring_cleanup(&srq->ring);
	return 0;
}

int rxe2_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr)
{
	struct rxe2_srq *srq = to_rsrq(ibsrq);

	if (srq->is_user) {
		*bad_wr = wr;
		return -EOPNOTSUPP;
	}
	return rxe2_post_recv_ring(&srq->ring, srq->max_sge, wr, bad_wr);
}
