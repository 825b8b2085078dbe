// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * librxe2: shared receive queues.  The process owns the receive ring;
 * the kernel owns the limit and the arming of the limit event.
 */
#include <errno.h>
#include <stdlib.h>

#include "rxe2.h"

struct ibv_srq *rxe2_create_srq(struct ibv_pd *ibpd,
				struct ibv_srq_init_attr *attr)
{
	/* work on a copy: the caller's attributes change only on success */
	struct ibv_srq_init_attr granted = *attr;
	struct ibv_create_srq cmd = {};
	struct rxe2_create_srq_rsp rsp = {};
	struct rxe2_srq *srq;
	int err;

	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;
	err = pthread_spin_init(&srq->lock, PTHREAD_PROCESS_PRIVATE);
	if (err)
		goto err_free;

	err = ibv_cmd_create_srq(ibpd, &srq->vsrq.srq, &granted, &cmd,
				 sizeof(cmd), &rsp.ibv_resp, sizeof(rsp));
	if (err)
		goto err_lock;

	err = rxe2_ring_map(ibpd->context, &srq->rq, RXE2_RING_RQ, &rsp.drv.rq,
			    granted.attr.max_wr,
			    rxe2_recv_slot_size(granted.attr.max_sge));
	if (err)
		goto err_destroy;

	srq->vsrq.srq_type = IBV_SRQT_BASIC;
	srq->max_sge = granted.attr.max_sge;
	attr->attr.max_wr = granted.attr.max_wr;
	attr->attr.max_sge = granted.attr.max_sge;
	srq->parent = rxe2_parent_get(ibpd);
	return &srq->vsrq.srq;

err_destroy:
	ibv_cmd_destroy_srq(&srq->vsrq.srq);
err_lock:
	pthread_spin_destroy(&srq->lock);
err_free:
	free(srq);
	errno = err;
	return NULL;
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
	pthread_spin_destroy(&srq->lock);
	rxe2_parent_put(srq->parent);
	free(srq);
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
