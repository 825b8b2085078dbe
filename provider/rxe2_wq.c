// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * librxe2: receive work queues and indirection tables (RSS).  A WQ's
 * receive ring is mapped like an RQ's and posted to without a system
 * call; the kernel (rxe/rxe2_wq.c) hashes an RSS QP's frames over the
 * table's WQs.
 */
#include <errno.h>
#include <stdlib.h>

#include "rxe2.h"

struct ibv_wq *rxe2_create_wq(struct ibv_context *ibctx,
			      struct ibv_wq_init_attr *attr)
{
	struct rxe2_create_wq_rsp rsp = {};
	struct ibv_create_wq cmd = {};
	struct rxe2_wq *wq;
	int err;

	if (attr->comp_mask & ~(uint32_t)IBV_WQ_INIT_ATTR_FLAGS ||
	    ((attr->comp_mask & IBV_WQ_INIT_ATTR_FLAGS) && attr->create_flags)) {
		errno = EOPNOTSUPP;	/* no CVLAN stripping, FCS, padding */
		return NULL;
	}
	if (attr->wq_type != IBV_WQT_RQ || !attr->pd || !attr->cq ||
	    attr->pd->context != ibctx || attr->cq->context != ibctx) {
		errno = EINVAL;
		return NULL;
	}
	wq = calloc(1, sizeof(*wq));
	if (!wq)
		return NULL;
	err = pthread_spin_init(&wq->lock, PTHREAD_PROCESS_PRIVATE);
	if (!err)
		err = ibv_cmd_create_wq(ibctx, attr, &wq->ibwq, &cmd,
					sizeof(cmd), &rsp.ibv_resp,
					sizeof(rsp));
	if (err) {
		free(wq);
		errno = err;
		return NULL;
	}
	err = rxe2_ring_map(ibctx, &wq->rq, RXE2_RING_RQ, &rsp.drv.rq,
			    attr->max_wr, rxe2_recv_slot_size(attr->max_sge));
	if (err) {
		ibv_cmd_destroy_wq(&wq->ibwq);
		pthread_spin_destroy(&wq->lock);
		free(wq);
		errno = err;
		return NULL;
	}
	wq->max_sge = attr->max_sge;
	/* ibv_post_wq_recv() calls it through the WQ */
	wq->ibwq.post_recv = rxe2_post_wq_recv;
	return &wq->ibwq;
}

int rxe2_post_wq_recv(struct ibv_wq *ibwq, struct ibv_recv_wr *wr,
		      struct ibv_recv_wr **bad_wr)
{
	struct rxe2_wq *wq = to_rwq(ibwq);

	return rxe2_post_recv_ring(&wq->rq, &wq->lock, wq->max_sge, wr,
				   bad_wr);
}

int rxe2_modify_wq(struct ibv_wq *ibwq, struct ibv_wq_attr *attr)
{
	struct ibv_modify_wq cmd = {};

	return ibv_cmd_modify_wq(ibwq, attr, &cmd, sizeof(cmd));
}

int rxe2_destroy_wq(struct ibv_wq *ibwq)
{
	struct rxe2_wq *wq = to_rwq(ibwq);
	int err = ibv_cmd_destroy_wq(ibwq);

	if (err)
		return err;
	rxe2_ring_unmap(&wq->rq);
	pthread_spin_destroy(&wq->lock);
	free(wq);
	return 0;
}

struct ibv_rwq_ind_table *
rxe2_create_rwq_ind_table(struct ibv_context *ibctx,
			  struct ibv_rwq_ind_table_init_attr *attr)
{
	struct ib_uverbs_ex_create_rwq_ind_table_resp resp = {};
	struct ibv_rwq_ind_table *tbl;
	int err;

	if (attr->comp_mask) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	tbl = calloc(1, sizeof(*tbl));
	if (!tbl)
		return NULL;
	err = ibv_cmd_create_rwq_ind_table(ibctx, attr, tbl, &resp,
					   sizeof(resp));
	if (err) {
		free(tbl);
		errno = err;
		return NULL;
	}
	return tbl;
}

int rxe2_destroy_rwq_ind_table(struct ibv_rwq_ind_table *tbl)
{
	int err = ibv_cmd_destroy_rwq_ind_table(tbl);

	if (!err)
		free(tbl);
	return err;
}
