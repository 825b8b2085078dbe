// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * librxe2: shared receive queues.  The process owns the receive ring;
 * the kernel owns the limit and the arming of the limit event.
 */
#include <errno.h>
#include <stdlib.h>

#include "rxe2.h"

/* a new SRQ's object: its lock, before the kernel is asked */
static struct rxe2_srq *rxe2_srq_alloc(void)
{
	struct rxe2_srq *srq = calloc(1, sizeof(*srq));
	int err;

	if (!srq)
		return NULL;
	err = pthread_spin_init(&srq->lock, PTHREAD_PROCESS_PRIVATE);
	if (err) {
		free(srq);
		errno = err;
		return NULL;
	}
	return srq;
}

static void rxe2_srq_free(struct rxe2_srq *srq)
{
	rxe2_tm_srq_cleanup(srq);
	pthread_spin_destroy(&srq->lock);
	free(srq);
}

/*
 * The kernel made the SRQ with what attr says now: map its ring.  On
 * failure the SRQ is destroyed and freed.
 */
static int rxe2_srq_finish(struct rxe2_srq *srq, struct ibv_pd *ibpd,
			   const struct ibv_srq_attr *attr,
			   const struct rxe2_create_srq_rsp *rsp)
{
	int err;

	err = rxe2_ring_map(ibpd->context, &srq->rq, RXE2_RING_RQ,
			    &rsp->drv.rq, attr->max_wr,
			    rxe2_recv_slot_size(attr->max_sge));
	if (err) {
		ibv_cmd_destroy_srq(&srq->vsrq.srq);
		rxe2_srq_free(srq);
		return err;
	}
	srq->max_sge = attr->max_sge;
	srq->parent = rxe2_parent_get(ibpd);
	return 0;
}

struct ibv_srq *rxe2_create_srq(struct ibv_pd *ibpd,
				struct ibv_srq_init_attr *attr)
{
	/* work on a copy: the caller's attributes change only on success */
	struct ibv_srq_init_attr granted = *attr;
	struct ibv_create_srq cmd = {};
	struct rxe2_create_srq_rsp rsp = {};
	struct rxe2_srq *srq;
	int err;

	srq = rxe2_srq_alloc();
	if (!srq)
		return NULL;
	err = ibv_cmd_create_srq(ibpd, &srq->vsrq.srq, &granted, &cmd,
				 sizeof(cmd), &rsp.ibv_resp, sizeof(rsp));
	if (err) {
		rxe2_srq_free(srq);
		errno = err;
		return NULL;
	}
	srq->vsrq.srq_type = IBV_SRQT_BASIC;
	err = rxe2_srq_finish(srq, ibpd, &granted.attr, &rsp);
	if (err) {
		errno = err;
		return NULL;
	}
	attr->attr.max_wr = granted.attr.max_wr;
	attr->attr.max_sge = granted.attr.max_sge;
	return &srq->vsrq.srq;
}

#define RXE2_SRQ_INIT_ATTR_SUPPORTED (IBV_SRQ_INIT_ATTR_TYPE | \
				      IBV_SRQ_INIT_ATTR_PD | \
				      IBV_SRQ_INIT_ATTR_XRCD | \
				      IBV_SRQ_INIT_ATTR_CQ | \
				      IBV_SRQ_INIT_ATTR_TM)

/* what an XRC SRQ or a tag matching SRQ needs beyond a basic one */
static int rxe2_srq_check_ex(struct ibv_context *ibctx,
			     const struct ibv_srq_init_attr_ex *attr,
			     enum ibv_srq_type type)
{
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_CQ) || !attr->cq ||
	    attr->cq->context != ibctx)
		return EINVAL;
	if (type == IBV_SRQT_TM)
		return rxe2_tm_srq_check(attr);
	if (type != IBV_SRQT_XRC)
		return EINVAL;
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_XRCD) || !attr->xrcd ||
	    attr->xrcd->context != ibctx)
		return EINVAL;
	return 0;
}

/*
 * ibv_create_srq_ex: a basic SRQ as ibv_create_srq makes it, an XRC
 * SRQ (its own CQ, an XRC domain, a number for the initiators to name)
 * or a tag matching SRQ (its own CQ and a list of tagged buffers).
 */
struct ibv_srq *rxe2_create_srq_ex(struct ibv_context *ibctx,
				   struct ibv_srq_init_attr_ex *attr)
{
	struct ibv_srq_init_attr_ex granted = *attr;
	struct rxe2_create_srq_rsp rsp = {};
	struct ibv_create_xsrq cmd = {};
	enum ibv_srq_type type = IBV_SRQT_BASIC;
	struct rxe2_srq *srq;
	int err = EINVAL;

	if (attr->comp_mask & ~(uint32_t)RXE2_SRQ_INIT_ATTR_SUPPORTED) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE)
		type = attr->srq_type;
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) || !attr->pd ||
	    attr->pd->context != ibctx)
		goto err;
	if (type == IBV_SRQT_BASIC) {
		struct ibv_srq_init_attr basic = {
			.srq_context = attr->srq_context,
			.attr = attr->attr,
		};
		struct ibv_srq *ibsrq = rxe2_create_srq(attr->pd, &basic);

		if (ibsrq)
			attr->attr = basic.attr;
		return ibsrq;
	}
	err = rxe2_srq_check_ex(ibctx, attr, type);
	if (err)
		goto err;

	srq = rxe2_srq_alloc();
	if (!srq)
		return NULL;
	if (type == IBV_SRQT_TM) {
		err = rxe2_tm_srq_init(srq, attr);
		if (err) {
			rxe2_srq_free(srq);
			goto err;
		}
	}
	err = ibv_cmd_create_srq_ex(ibctx, &srq->vsrq, &granted, &cmd,
				    sizeof(cmd), &rsp.ibv_resp, sizeof(rsp));
	if (err) {
		rxe2_srq_free(srq);
		goto err;
	}
	err = rxe2_srq_finish(srq, attr->pd, &granted.attr, &rsp);
	if (err)
		goto err;
	attr->attr.max_wr = granted.attr.max_wr;
	attr->attr.max_sge = granted.attr.max_sge;
	return &srq->vsrq.srq;
err:
	errno = err;
	return NULL;
}

/* the number XRC_SEND work requests name; only XRC SRQs have one */
int rxe2_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num)
{
	struct rxe2_srq *srq = to_rsrq(ibsrq);

	if (srq->vsrq.srq_type != IBV_SRQT_XRC)
		return EINVAL;
	*srq_num = srq->vsrq.srq_num;
	return 0;
}

/*
 * Resizing moves the SRQ to a new ring that the kernel describes in
 * info (the uverbs command has no response): the pending WQEs first, in
 * order, our producer continuing after them.  Under the SRQ lock no
 * post is half done.
 */
int rxe2_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		    int attr_mask)
{
	struct rxe2_srq *srq = to_rsrq(ibsrq);
	struct rxe2_modify_srq_req cmd = {};
	struct rxe2_ring_info info = {};
	struct rxe2_ring ring;
	int err;

	if (!(attr_mask & IBV_SRQ_MAX_WR))
		return ibv_cmd_modify_srq(ibsrq, attr, attr_mask, &cmd.ibv_cmd,
					  sizeof(cmd));

	cmd.drv.ring_info_addr = (uintptr_t)&info;
	pthread_spin_lock(&srq->lock);
	err = ibv_cmd_modify_srq(ibsrq, attr, attr_mask, &cmd.ibv_cmd,
				 sizeof(cmd));
	if (err)
		goto out;
	/* a ring we cannot use is reported; the old one gets no reads */
	err = rxe2_ring_map(ibsrq->context, &ring, RXE2_RING_RQ, &info,
			    attr->max_wr, rxe2_recv_slot_size(srq->max_sge));
	if (err)
		goto out;
	rxe2_ring_unmap(&srq->rq);
	srq->rq = ring;
out:
	pthread_spin_unlock(&srq->lock);
	return err;
}

int rxe2_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct ibv_query_srq cmd = {};

	return ibv_cmd_query_srq(ibsrq, attr, &cmd, sizeof(cmd));
}

int rxe2_destroy_srq(struct ibv_srq *ibsrq)
{
	struct rxe2_srq *srq = to_rsrq(ibsrq);
	int err;

	err = ibv_cmd_destroy_srq(ibsrq);
	if (err)
		return err;
	rxe2_ring_unmap(&srq->rq);
	rxe2_parent_put(srq->parent);
	rxe2_srq_free(srq);
	return 0;
}

/* Pure user space, like a QP's receive queue */
int rxe2_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad_wr)
{
	struct rxe2_srq *srq = to_rsrq(ibsrq);

	return rxe2_post_recv_ring(&srq->rq, &srq->lock, srq->max_sge, wr,
				   bad_wr);
}
