// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * librxe2: tag matching SRQs.  The kernel keeps the list of tagged
 * buffers and matches arriving messages against it (rxe/rxe2_tm.c);
 * ibv_post_srq_ops() hands it a batch of list operations in one driver
 * method call, which performs them in order and posts their completions
 * to the SRQ's CQ before it returns.  ibv_post_srq_recv() posts the
 * buffers for unexpected messages, as on any SRQ.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ibverbs_private.h"
#include "rxe2.h"

/* the limits ibv_create_srq_ex() asks of the list, against tm_caps */
int rxe2_tm_srq_check(const struct ibv_srq_init_attr_ex *attr)
{
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_TM))
		return EINVAL;
	if (!attr->tm_cap.max_num_tags ||
	    attr->tm_cap.max_num_tags > RXE2_TM_MAX_TAGS ||
	    !attr->tm_cap.max_ops || attr->tm_cap.max_ops > RXE2_TM_MAX_OPS)
		return EINVAL;
	return 0;
}

/* a TM SRQ's room to build its calls in */
int rxe2_tm_srq_init(struct rxe2_srq *srq,
		     const struct ibv_srq_init_attr_ex *attr)
{
	int err;

	srq->tm_ops = calloc(attr->tm_cap.max_ops, sizeof(*srq->tm_ops));
	if (!srq->tm_ops)
		return ENOMEM;
	err = pthread_mutex_init(&srq->tm_mutex, NULL);
	if (err) {
		free(srq->tm_ops);
		srq->tm_ops = NULL;
		return err;
	}
	srq->tm_max_ops = attr->tm_cap.max_ops;
	return 0;
}

void rxe2_tm_srq_cleanup(struct rxe2_srq *srq)
{
	if (!srq->tm_ops)
		return;
	pthread_mutex_destroy(&srq->tm_mutex);
	free(srq->tm_ops);
	srq->tm_ops = NULL;
}

/* one ibv_ops_wr as the kernel takes it, or EINVAL */
static int rxe2_tm_op_from_wr(struct rxe2_tm_op *op,
			      const struct ibv_ops_wr *wr)
{
	int i;

	memset(op, 0, sizeof(*op));
	if (wr->opcode > IBV_WR_TAG_SYNC ||
	    wr->flags & ~(IBV_OPS_SIGNALED | IBV_OPS_TM_SYNC))
		return EINVAL;
	op->wr_id = wr->wr_id;
	op->opcode = wr->opcode;
	op->flags = wr->flags;
	op->unexpected_cnt = wr->tm.unexpected_cnt;
	op->handle = wr->tm.handle;
	if (wr->opcode != IBV_WR_TAG_ADD)
		return 0;
	if (wr->tm.add.num_sge < 0 || wr->tm.add.num_sge > RXE2_TM_MAX_SGE ||
	    (wr->tm.add.num_sge && !wr->tm.add.sg_list))
		return EINVAL;
	op->recv_wr_id = wr->tm.add.recv_wr_id;
	op->tag = wr->tm.add.tag;
	op->mask = wr->tm.add.mask;
	op->num_sge = wr->tm.add.num_sge;
	for (i = 0; i < wr->tm.add.num_sge; i++) {
		op->sge[i].addr = wr->tm.add.sg_list[i].addr;
		op->sge[i].length = wr->tm.add.sg_list[i].length;
		op->sge[i].lkey = wr->tm.add.sg_list[i].lkey;
	}
	return 0;
}

/* the kernel performs srq->tm_ops[0..n); 0 or its errno */
static int rxe2_tm_call(struct rxe2_srq *srq, uint32_t n)
{
	struct ibv_command_buffer *cmd;
	union rxe2_ioctl_buf buf;
	int ret;

	cmd = rxe2_ioctl_init(&buf, UVERBS_OBJECT_SRQ, RXE2_METHOD_SRQ_OPS);
	rxe2_ioctl_obj(cmd, RXE2_ATTR_SRQ_OPS_HANDLE, srq->vsrq.srq.handle);
	rxe2_ioctl_in(cmd, RXE2_ATTR_SRQ_OPS_IN, srq->tm_ops,
		      n * sizeof(srq->tm_ops[0]));
	rxe2_ioctl_out(cmd, RXE2_ATTR_SRQ_OPS_RESP, &srq->tm_resp,
		       sizeof(srq->tm_resp));
	ret = execute_ioctl(srq->vsrq.srq.context, cmd);
	if (!ret && srq->tm_resp.done > n)
		ret = EIO;	/* not an answer to this call */
	return ret;
}

/*
 * The operations run in list order up to the first one refused, whose
 * errno we return with *bad_wr on it: one the kernel refused, one this
 * library finds malformed, or the first beyond the SRQ's max_ops (ENOMEM:
 * more than may be outstanding at once).  The ADDs performed have their
 * handles.
 */
int rxe2_post_srq_ops(struct ibv_srq *ibsrq, struct ibv_ops_wr *wr,
		      struct ibv_ops_wr **bad_wr)
{
	struct rxe2_srq *srq = to_rsrq(ibsrq);
	struct ibv_ops_wr *w = wr;
	uint32_t n = 0, i;
	int err = 0, ret;

	if (!srq->tm_ops) {
		*bad_wr = wr;
		return EOPNOTSUPP;
	}
	pthread_mutex_lock(&srq->tm_mutex);
	for (; w; w = w->next, n++) {
		if (n == srq->tm_max_ops) {
			err = ENOMEM;
			break;
		}
		err = rxe2_tm_op_from_wr(&srq->tm_ops[n], w);
		if (err)
			break;
	}
	/* the kernel runs the ones before a refused one */
	if (n) {
		ret = rxe2_tm_call(srq, n);
		if (ret) {
			err = ret;
			w = wr;
			goto out;
		}
		for (i = 0, w = wr; i < srq->tm_resp.done; i++, w = w->next)
			if (w->opcode == IBV_WR_TAG_ADD)
				w->tm.handle = srq->tm_resp.handle[i];
		if (srq->tm_resp.done < n)
			err = srq->tm_resp.error ? (int)srq->tm_resp.error : EIO;
	}
out:
	pthread_mutex_unlock(&srq->tm_mutex);
	if (err)
		*bad_wr = w;
	return err;
}
