// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2: completion queues.  The data path produces rxe2_cqe entries into
 * the ring; a process polls them itself, a kernel consumer through
 * rxe2_poll_cq().
 */
#include <rdma/uverbs_ioctl.h>

#include "rxe2_dp.h"

static int rxe2_cq_init(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
			struct ib_udata *udata)
{
	struct rxe2_dev *rdev = to_rdev(ibcq->device);
	struct rxe2_cq *cq = to_rcq(ibcq);
	struct rxe2_create_cq_resp resp = {};
	int ret;

	if (attr->flags)
		return -EOPNOTSUPP;
	if (attr->cqe < 1 || attr->cqe > rdev->attr.max_cqe)
		return -EINVAL;
	if (attr->comp_vector >= ibcq->device->num_comp_vectors)
		return -EINVAL;
	ret = rxe2_check_udata_in_empty(udata);
	if (ret)
		return ret;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;

	/* a process's CQE slot has room for inline-receive, up to a size */
	ret = rxe2_ring_init(&cq->ring, attr->cqe,
			     udata && attr->cqe <= RXE2_CQ_INLINE_MAX_CQE ?
			     RXE2_CQ_INLINE_SLOT_SIZE : RXE2_CQE_SIZE,
			     true, udata);
	if (ret)
		return ret;
	cq->is_user = !!udata;
	/* producer - consumer may reach num_slots: every slot is usable */
	ibcq->cqe = cq->ring.num_slots;

	ret = rxe2_table_add(&rdev->cq_table, NULL, &cq->index);
	if (ret)
		goto err_ring;

	if (udata) {
		rxe2_ring_get_info(&cq->ring, &resp.cq);
		ret = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (ret)
			goto err_table;
	}
	rxe2_table_publish(&rdev->cq_table, cq->index, cq);
	return 0;

err_table:
	rxe2_table_remove(&rdev->cq_table, cq->index);
err_ring:
	rxe2_ring_cleanup(&cq->ring);
	return ret;
}

#ifdef RXE2_HAVE_CREATE_CQ_ATTRS
int rxe2_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		   struct uverbs_attr_bundle *attrs)
{
	return rxe2_cq_init(ibcq, attr, attrs ? &attrs->driver_udata : NULL);
}
#else
int rxe2_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		   struct ib_udata *udata)
{
	return rxe2_cq_init(ibcq, attr, udata);
}
#endif

int rxe2_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct rxe2_cq *cq = to_rcq(ibcq);

	rxe2_table_remove(&to_rdev(ibcq->device)->cq_table, cq->index);
	rxe2_ring_cleanup(&cq->ring);
	return 0;
}

/*
 * Move the CQ to a ring of at least cqe slots.  The data path posts
 * CQEs only under ring.lock (rxe2_cq_post()), so under that lock the
 * unpolled CQEs move in order and every later CQE lands in the new
 * ring.  The old buffer stays mapped in the process until it unmaps it
 * (rxe2_ring.c): a poller racing with the resize reads stale CQEs, never
 * freed memory; the provider excludes that with its CQ lock.
 */
int rxe2_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct rxe2_dev *rdev = to_rdev(ibcq->device);
	struct rxe2_cq *cq = to_rcq(ibcq);
	struct rxe2_resize_cq_resp resp = {};
	struct rxe2_ring new;
	unsigned long flags;
	int ret;

	if (cqe < 1 || cqe > rdev->attr.max_cqe)
		return -EINVAL;
	ret = rxe2_check_udata_in_empty(udata);
	if (ret)
		return ret;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;

	ret = rxe2_ring_init(&new, cqe, cq->ring.slot_size, true, udata);
	if (ret)
		return ret;
	spin_lock_irqsave(&cq->ring.lock, flags);
	ret = rxe2_ring_move(&cq->ring, &new, cqe);
	if (!ret) {
		ibcq->cqe = cq->ring.num_slots;
		/* room again: a later overflow is reported again */
		cq->overflowed = false;
		rxe2_ring_get_info(&cq->ring, &resp.cq);
	}
	spin_unlock_irqrestore(&cq->ring.lock, flags);
	if (ret) {
		rxe2_ring_cleanup(&new);
		return ret;
	}
	/* new now holds the old buffer */
	if (udata)
		ret = ib_copy_to_udata(udata, &resp, sizeof(resp));
	rxe2_ring_cleanup(&new);
	return ret;
}

int rxe2_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct rxe2_cq *cq = to_rcq(ibcq);
	unsigned long irqflags;
	int ret = 0;

	spin_lock_irqsave(&cq->ring.lock, irqflags);
	/* a solicited request does not weaken an armed next-completion */
	if (cq->notify != IB_CQ_NEXT_COMP)
		cq->notify = flags & IB_CQ_SOLICITED_MASK;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) && !rxe2_ring_empty(&cq->ring))
		ret = 1;
	spin_unlock_irqrestore(&cq->ring.lock, irqflags);
	return ret;
}

static void rxe2_cqe_to_wc(struct rxe2_dev *rdev, const struct rxe2_cqe *cqe,
			   struct ib_wc *wc)
{
	struct rxe2_qp *qp;

	memset(wc, 0, sizeof(*wc));
	wc->wr_id = cqe->wr_id;
	wc->status = cqe->status;
	/* ib_wc_opcode takes its values from the uverbs ones */
	wc->opcode = cqe->opcode;
	wc->vendor_err = cqe->vendor_err;
	wc->byte_len = cqe->byte_len;
	wc->ex.imm_data = (__force __be32)cqe->ex;
	wc->src_qp = cqe->src_qp;
	/* the CQE carries ibv_wc_flags; ib_wc_flags differ from bit 2 on */
	wc->wc_flags = cqe->wc_flags & (IB_WC_GRH | IB_WC_WITH_IMM);
	if (cqe->wc_flags & (1 << 3))	/* IBV_WC_WITH_INV */
		wc->wc_flags |= IB_WC_WITH_INVALIDATE;
	if (cqe->wc_flags & (1 << 2))	/* IBV_WC_IP_CSUM_OK */
		wc->wc_flags |= IB_WC_IP_CSUM_OK;
	wc->pkey_index = cqe->pkey_index;
	wc->slid = cqe->slid;
	/* a UD receive's sl is its RoCE packet type: ib_core's is separate */
	if (cqe->sl == RXE2_CQE_ROCE_V2_IPV4 ||
	    cqe->sl == RXE2_CQE_ROCE_V2_IPV6) {
		wc->network_hdr_type = cqe->sl == RXE2_CQE_ROCE_V2_IPV4 ?
				       RDMA_NETWORK_IPV4 : RDMA_NETWORK_IPV6;
		wc->wc_flags |= IB_WC_WITH_NETWORK_HDR_TYPE;
	} else {
		wc->sl = cqe->sl;
	}
	wc->dlid_path_bits = cqe->dlid_path_bits;
	wc->port_num = cqe->port_num;
	/* ib_core keeps a QP alive until its completions are polled */
	qp = xa_load(&rdev->qp_table.xa, cqe->qp_num);
	wc->qp = qp ? &qp->ibqp : NULL;
}

int rxe2_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct rxe2_cq *cq = to_rcq(ibcq);
	struct rxe2_dev *rdev = to_rdev(ibcq->device);
	unsigned long irqflags;
	int avail, n = 0;

	/* a process polls its own ring */
	if (cq->is_user)
		return -EOPNOTSUPP;

	spin_lock_irqsave(&cq->ring.lock, irqflags);
	avail = rxe2_ring_client_avail(&cq->ring);
	if (avail < 0) {
		spin_unlock_irqrestore(&cq->ring.lock, irqflags);
		return avail;
	}
	rcu_read_lock();
	while (n < num_entries && n < avail) {
		rxe2_cqe_to_wc(rdev, rxe2_ring_slot(&cq->ring,
						    cq->ring.client_index),
			       &wc[n]);
		rxe2_ring_client_advance(&cq->ring);
		n++;
	}
	rcu_read_unlock();
	spin_unlock_irqrestore(&cq->ring.lock, irqflags);
	return n;
}

/*
 * Inline-receive: the SGEs of a WQE that take len bytes, empty ones left
 * out, copied to out (when not NULL).  Their number, or -1 when the list
 * is too short for len or needs more than a CQ slot holds: such a
 * message takes the normal path, which reports a short list itself.
 */
int rxe2_inline_sges(const struct rxe2_sge *sge, u32 num_sge, u32 len,
		     struct rxe2_sge *out)
{
	u32 i, n = 0, covered = 0;

	for (i = 0; i < num_sge && covered < len; i++) {
		if (!sge[i].length)
			continue;
		if (n == RXE2_INLINE_RECV_MAX_SGE)
			return -1;
		if (out)
			out[n] = sge[i];
		n++;
		covered += min(sge[i].length, len - covered);
	}
	return covered < len ? -1 : n;
}

/* turn a completion into one that carries len bytes of data */
void rxe2_cqe_set_inline(struct rxe2_cqe_inline *ic, const void *data,
			 u32 len, const struct rxe2_sge *sge, u32 num_sge)
{
	int n;

	BUILD_BUG_ON(sizeof(*ic) != RXE2_CQ_INLINE_SLOT_SIZE);
	BUILD_BUG_ON(offsetof(typeof(*ic), data) !=
		     RXE2_CQE_INLINE_DATA_OFFSET);
	BUILD_BUG_ON(offsetof(typeof(*ic), sge) != RXE2_CQE_INLINE_SGE_OFFSET);
	memset(ic->data, 0, sizeof(ic->data));
	memset(ic->sge, 0, sizeof(ic->sge));
	/* callers chose inline only for len <= max_inl_recv <= this */
	len = min_t(u32, len, sizeof(ic->data));
	memcpy(ic->data, data, len);
	n = rxe2_inline_sges(sge, num_sge, len, ic->sge);
	ic->cqe.inline_num_sge = n;
	ic->cqe.flags |= RXE2_CQE_F_INLINE;
}

/* `rdma resource show cq -dd` */
int rxe2_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ibcq)
{
	struct rxe2_cq *cq = to_rcq(ibcq);
	struct rxe2_res_u32 d[] = {
		/* 64 bytes, or 256 with room for inline-receive data */
		{ "cqe_size", cq->ring.slot_size, true },
		{ "overflowed", READ_ONCE(cq->overflowed), true },
	};

	return rxe2_res_put(msg, d, ARRAY_SIZE(d), NULL);
}
