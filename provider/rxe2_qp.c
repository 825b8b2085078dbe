// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * librxe2: queue pairs.  The kernel keeps the QP state machine; the
 * process owns the send ring and, without an SRQ, the receive ring.
 * Posting work requests is not implemented yet and says so.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rxe2.h"

/* The init attributes this provider understands */
#define RXE2_QP_INIT_ATTR_SUPPORTED IBV_QP_INIT_ATTR_PD

static int rxe2_check_qp_init_attr(struct ibv_context *ibctx,
				   const struct ibv_qp_init_attr_ex *attr)
{
	if (attr->comp_mask & ~(uint32_t)RXE2_QP_INIT_ATTR_SUPPORTED)
		return EOPNOTSUPP;
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd)
		return EINVAL;

	switch (attr->qp_type) {
	case IBV_QPT_RC:
	case IBV_QPT_UC:
	case IBV_QPT_UD:
		break;
	case IBV_QPT_RAW_PACKET:
	case IBV_QPT_XRC_SEND:
	case IBV_QPT_XRC_RECV:
	case IBV_QPT_DRIVER:
		return EOPNOTSUPP;
	default:
		return EINVAL;
	}

	/* libibverbs dereferences both CQs when building the command */
	if (!attr->send_cq || !attr->recv_cq)
		return EINVAL;

	/*
	 * The kernel resolves handles in this context's file only: an object
	 * of another context whose handle number happens to exist here would
	 * silently name the wrong object.
	 */
	if (attr->pd->context != ibctx || attr->send_cq->context != ibctx ||
	    attr->recv_cq->context != ibctx ||
	    (attr->srq && attr->srq->context != ibctx))
		return EINVAL;
	return 0;
}

/* Map the rings the kernel made, checked against the capabilities it granted */
static int rxe2_qp_map_rings(struct ibv_context *ibctx, struct rxe2_qp *qp,
			     const struct ibv_qp_init_attr_ex *attr,
			     const struct rxe2_create_qp_resp *resp)
{
	const struct ibv_qp_cap *cap = &attr->cap;
	int err;

	err = rxe2_ring_map(ibctx, &qp->sq, RXE2_RING_SQ, &resp->sq,
			    cap->max_send_wr,
			    rxe2_send_slot_size(cap->max_send_sge,
						cap->max_inline_data));
	if (err)
		return err;

	if (attr->srq) {
		if (!rxe2_ring_info_absent(&resp->rq)) {
			rxe2_ring_unmap(&qp->sq);
			return EPROTO;
		}
		return 0;
	}

	err = rxe2_ring_map(ibctx, &qp->rq, RXE2_RING_RQ, &resp->rq,
			    cap->max_recv_wr,
			    rxe2_recv_slot_size(cap->max_recv_sge));
	if (err)
		rxe2_ring_unmap(&qp->sq);
	return err;
}

struct ibv_qp *rxe2_create_qp_ex(struct ibv_context *ibctx,
				 struct ibv_qp_init_attr_ex *attr)
{
	/* work on a copy: the caller's caps change only on success */
	struct ibv_qp_init_attr_ex granted = *attr;
	struct rxe2_create_qp_req req;
	struct rxe2_create_qp_rsp rsp = {};
	struct rxe2_qp *qp;
	int err;

	err = rxe2_check_qp_init_attr(ibctx, attr);
	if (err) {
		errno = err;
		return NULL;
	}

	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	err = pthread_spin_init(&qp->sq_lock, PTHREAD_PROCESS_PRIVATE);
	if (err)
		goto err_free;
	err = pthread_spin_init(&qp->rq_lock, PTHREAD_PROCESS_PRIVATE);
	if (err)
		goto err_sq_lock;

	/* reserved and inline-receive fields must reach the kernel as zero */
	memset(&req, 0, sizeof(req));
	req.drv.comp_mask = 0;

	err = ibv_cmd_create_qp_ex(ibctx, &qp->vqp, &granted, &req.ibv_cmd,
				   sizeof(req), &rsp.ibv_resp, sizeof(rsp));
	if (err)
		goto err_rq_lock;

	err = rxe2_qp_map_rings(ibctx, qp, &granted, &rsp.drv);
	if (err)
		goto err_destroy;

	attr->cap = granted.cap;
	return &qp->vqp.qp;

err_destroy:
	ibv_cmd_destroy_qp(&qp->vqp.qp);
err_rq_lock:
	pthread_spin_destroy(&qp->rq_lock);
err_sq_lock:
	pthread_spin_destroy(&qp->sq_lock);
err_free:
	free(qp);
	errno = err;
	return NULL;
}

struct ibv_qp *rxe2_create_qp(struct ibv_pd *ibpd,
			      struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex attr_ex = {
		.qp_context = attr->qp_context,
		.send_cq = attr->send_cq,
		.recv_cq = attr->recv_cq,
		.srq = attr->srq,
		.cap = attr->cap,
		.qp_type = attr->qp_type,
		.sq_sig_all = attr->sq_sig_all,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = ibpd,
	};
	struct ibv_qp *qp;

	qp = rxe2_create_qp_ex(ibpd->context, &attr_ex);
	if (qp)
		attr->cap = attr_ex.cap;
	return qp;
}

int rxe2_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		   int attr_mask)
{
	struct ibv_modify_qp cmd = {};

	return ibv_cmd_modify_qp(ibqp, attr, attr_mask, &cmd, sizeof(cmd));
}

int rxe2_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		  int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	struct ibv_query_qp cmd = {};

	return ibv_cmd_query_qp(ibqp, attr, attr_mask, init_attr, &cmd,
				sizeof(cmd));
}

int rxe2_destroy_qp(struct ibv_qp *ibqp)
{
	struct rxe2_qp *qp = to_rqp(ibqp);
	int err;

	err = ibv_cmd_destroy_qp(ibqp);
	if (err)
		return err;
	rxe2_ring_unmap(&qp->rq);
	rxe2_ring_unmap(&qp->sq);
	pthread_spin_destroy(&qp->rq_lock);
	pthread_spin_destroy(&qp->sq_lock);
	free(qp);
	return 0;
}

/* The data path comes with the next issue; until then refuse honestly. */
int rxe2_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		   struct ibv_send_wr **bad_wr)
{
	(void)ibqp;
	*bad_wr = wr;
	return EOPNOTSUPP;
}

int rxe2_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		   struct ibv_recv_wr **bad_wr)
{
	(void)ibqp;
	*bad_wr = wr;
	return EOPNOTSUPP;
}
