// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2: shared receive queues.  One ring of rxe2_recv_wqe, like an RQ.
 * An XRC SRQ (IB_SRQT_XRC) is the same ring with a CQ and an XRC domain
 * of its own; XRC targets of its domain find it by its number, which is
 * its index in the SRQ table (rxe2_xrc.c).  A tag matching SRQ
 * (IB_SRQT_TM) is the ring with a CQ and a list of tagged buffers
 * (rxe2_tm.c).
 */
#include <rdma/uverbs_ioctl.h>

#include "rxe2_verbs.h"

static atomic64_t rxe2_srq_serial;

static int rxe2_srq_check_type(const struct ib_srq_init_attr *init)
{
	switch (init->srq_type) {
	case IB_SRQT_BASIC:
		return 0;
	case IB_SRQT_XRC:
		return init->ext.cq && init->ext.xrc.xrcd ? 0 : -EINVAL;
	case IB_SRQT_TM:
		return 0;	/* rxe2_tm_create() checks the rest */
	default:
		return -EOPNOTSUPP;
	}
}

int rxe2_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		    struct ib_udata *udata)
{
	struct rxe2_dev *rdev = to_rdev(ibsrq->device);
	const struct ib_device_attr *a = &rdev->attr;
	struct rxe2_srq *srq = to_rsrq(ibsrq);
	struct rxe2_create_srq_resp resp = {};
	struct ib_srq_attr *attr = &init->attr;
	int ret;

	ret = rxe2_srq_check_type(init);
	if (ret)
		return ret;
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
	refcount_set(&srq->ref, 1);
	init_completion(&srq->released);
	srq->serial = atomic64_inc_return(&rxe2_srq_serial);

	if (init->srq_type == IB_SRQT_TM) {
		ret = rxe2_tm_create(srq, init, udata);
		if (ret)
			goto err_ring;
	}
	ret = rxe2_table_add(&rdev->srq_table, NULL, &srq->index);
	if (ret)
		goto err_tm;
	if (udata) {
		rxe2_ring_get_info(&srq->ring, &resp.rq);
		ret = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (ret)
			goto err_table;
	}
	attr->max_wr = srq->max_wr;
	if (init->srq_type == IB_SRQT_XRC)
		ibsrq->ext.xrc.srq_num = srq->index;
	rxe2_table_publish(&rdev->srq_table, srq->index, srq);
	return 0;

err_table:
	rxe2_table_remove(&rdev->srq_table, srq->index);
err_tm:
	rxe2_tm_destroy(srq);
err_ring:
	rxe2_ring_cleanup(&srq->ring);
	return ret;
}

/*
 * Driver data of modify_srq: none (an older provider) or struct
 * rxe2_modify_srq_cmd; bytes beyond it must be zero.
 */
static int rxe2_srq_read_cmd(struct ib_udata *udata,
			     struct rxe2_modify_srq_cmd *cmd)
{
	int ret;

	memset(cmd, 0, sizeof(*cmd));
	if (!udata || !udata->inlen)
		return 0;
	ret = rxe2_udata_read_cmd(udata, cmd, sizeof(*cmd));
	if (ret)
		return ret;
	if (cmd->comp_mask)
		return -EOPNOTSUPP;
	if (cmd->reserved)
		return -EINVAL;
	return 0;
}

/*
 * Resize: a new ring, described to the process before anything moves
 * (the uverbs command has no response), then the pending WQEs move under
 * ring.lock, which the responder holds while it takes a WQE from an SRQ.
 */
static int rxe2_srq_resize(struct rxe2_srq *srq, u32 max_wr, u64 info_addr,
			   struct ib_udata *udata)
{
	struct rxe2_ring_info info;
	struct rxe2_ring new;
	unsigned long flags;
	int ret;

	ret = rxe2_ring_init(&new, max_wr, srq->ring.slot_size, false, udata);
	if (ret)
		return ret;
	if (udata) {
		rxe2_ring_get_info(&new, &info);
		if (copy_to_user(u64_to_user_ptr(info_addr), &info,
				 sizeof(info))) {
			ret = -EFAULT;
			goto out;
		}
	}
	spin_lock_irqsave(&srq->ring.lock, flags);
	ret = rxe2_ring_move(&srq->ring, &new, max_wr);
	if (!ret)
		WRITE_ONCE(srq->max_wr, srq->ring.num_slots);
	spin_unlock_irqrestore(&srq->ring.lock, flags);
out:
	/* the old buffer after a move, the unused new one otherwise */
	rxe2_ring_cleanup(&new);
	return ret;
}

int rxe2_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		    enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct rxe2_dev *rdev = to_rdev(ibsrq->device);
	struct rxe2_srq *srq = to_rsrq(ibsrq);
	struct rxe2_modify_srq_cmd cmd;
	u32 limit;
	int ret;

	if (mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT))
		return -EINVAL;
	ret = rxe2_srq_read_cmd(udata, &cmd);
	if (ret)
		return ret;
	limit = (mask & IB_SRQ_LIMIT) ? attr->srq_limit :
					READ_ONCE(srq->srq_limit);
	if (mask & IB_SRQ_MAX_WR) {
		if (attr->max_wr < 1 || attr->max_wr > rdev->attr.max_srq_wr ||
		    limit > attr->max_wr)
			return -EINVAL;
		/* the process must be told where the new ring is */
		if (srq->is_user && !cmd.ring_info_addr)
			return -EOPNOTSUPP;
		ret = rxe2_srq_resize(srq, attr->max_wr, cmd.ring_info_addr,
				      srq->is_user ? udata : NULL);
		if (ret)
			return ret;
	}
	if (mask & IB_SRQ_LIMIT) {
		if (attr->srq_limit > READ_ONCE(srq->max_wr))
			return -EINVAL;
		/* the data path reads it without the lock */
		WRITE_ONCE(srq->srq_limit, attr->srq_limit);
	}
	return 0;
}

int rxe2_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct rxe2_srq *srq = to_rsrq(ibsrq);

	attr->max_wr = READ_ONCE(srq->max_wr);
	attr->max_sge = srq->max_sge;
	attr->srq_limit = READ_ONCE(srq->srq_limit);
	return 0;
}

/*
 * An XRC SRQ by number, with a reference (rxe2_srq_put()), for an XRC
 * target; NULL when there is none (or a basic SRQ has the number).
 */
struct rxe2_srq *rxe2_xrc_srq_get(struct rxe2_dev *rdev, u32 srqn)
{
	struct rxe2_srq *srq;

	rcu_read_lock();
	srq = xa_load(&rdev->srq_table.xa, srqn);
	if (srq && (srq->ibsrq.srq_type != IB_SRQT_XRC ||
		    !refcount_inc_not_zero(&srq->ref)))
		srq = NULL;
	rcu_read_unlock();
	return srq;
}

void rxe2_srq_put(struct rxe2_srq *srq)
{
	if (refcount_dec_and_test(&srq->ref))
		complete(&srq->released);
}

int rxe2_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct rxe2_srq *srq = to_rsrq(ibsrq);

	rxe2_table_remove(&to_rdev(ibsrq->device)->srq_table, srq->index);
	/*
	 * ib_core frees the SRQ when we return: no lookup may still be
	 * looking at it (RCU: an XRC target's lookup by number may load a
	 * basic SRQ too, before it sees the type), and no XRC target may
	 * still use it (ref).  Expedited, like QP destroy.
	 */
	synchronize_rcu_expedited();
	rxe2_srq_put(srq);
	wait_for_completion(&srq->released);
	rxe2_tm_destroy(srq);
	rxe2_ring_cleanup(&srq->ring);
	return 0;
}

/*
 * Room for the receive WQE copy of the SRQ's QPs: one of its slots, or
 * a tagged buffer's SGEs.
 */
u32 rxe2_srq_rwqe_size(const struct rxe2_srq *srq)
{
	if (rxe2_srq_is_tm(&srq->ibsrq))
		return max(srq->ring.slot_size, rxe2_tm_rwqe_size());
	return srq->ring.slot_size;
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
