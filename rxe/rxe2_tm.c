// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2: tag matching SRQs (IB_SRQT_TM), as rdma-core's
 * Documentation/tag_matching.md and ibv_post_srq_ops(3) define them.
 *
 * A TM SRQ is an SRQ (its ring holds the buffers for unexpected
 * messages) with a list of tagged buffers that ibv_post_srq_ops() adds
 * and deletes, and a CQ of its own that gets the list operations'
 * completions and every receive completion of its QPs.  The first
 * packet of a SEND to one of its QPs carries a tag matching header
 * (TMH); the responder (rxe2_resp.c) asks rxe2_tm_take() for the buffer:
 *
 *   EAGER, RNDV   the oldest eligible tagged buffer whose tag equals the
 *                 TMH's in the bits of its mask; an EAGER message's
 *                 data after the TMH lands in it.  A matched RNDV makes
 *                 the QP READ the sender's data into it and then send
 *                 the FIN (below), or, where it cannot, is handed to
 *                 software whole: IBV_WC_TM_RNDV_INCOMPLETE.  No match
 *                 (or an RNDV the buffer cannot take at all):
 *                 "unexpected", the whole message goes to an SRQ WQE
 *                 and the device's unexpected count goes up.
 *   NO_TAG        the whole message to an SRQ WQE, IBV_WC_TM_NO_TAG.
 *   anything else (FIN, an unknown opcode, a message shorter than a
 *                 TMH): a plain receive into an SRQ WQE.
 *
 * Phase synchronisation: software reports how many unexpected messages
 * it has handled (an operation with IBV_OPS_TM_SYNC).  A buffer added
 * while the device had counted more, or had an unexpected message
 * arriving, is not matched until a report catches up with the count at
 * its addition (that message included), so that no message overtakes
 * an earlier unexpected one that software would have matched to it.
 * An unexpected message is counted when it completes; one that never
 * does (its QP failed, was reset or destroyed) is taken out of the
 * counts at its addition of the buffers added meanwhile, so a peer that
 * breaks off cannot leave the SRQ out of step for good.  The counts are
 * 16 bits wide, as mlx5's, and IBV_WC_TM_SYNC_REQ is set where mlx5 sets
 * it: on an ADD or DEL while the counts differ, on an unexpected
 * message once software is more than 0x3fff behind.
 *
 * Rendezvous: "the ownership of the QP's Send Queue is passed to the
 * TM-SRQ" (tag_matching.md).  An RC QP made on a TM SRQ without a send
 * queue (max_send_wr 0) gets a kernel ring instead, which only this
 * file posts to: for a matched RNDV, an RDMA READ of the RVH's range
 * into the buffer, then (fenced behind it) the FIN, a SEND of the TMH
 * and RVH with opcode FIN.  The READ's completion is the buffer's
 * DATA_VALID completion; neither reaches the QP's send CQ.  A QP with a
 * send queue of its own, a buffer smaller than the RVH's length, a
 * multi-packet RNDV or a full ring hands the rendezvous to software.
 *
 * Locking: tm->lock (see the lock table in rxe2_verbs.h), taken by the
 * responder (the QP's runner) and by the list operations, which run in
 * the ibv_post_srq_ops() system call and complete there, so none is
 * ever outstanding once the call returns.  Completions of matches,
 * unexpected arrivals and operations are posted under the lock: the
 * CQ shows them in the order the list saw them.
 */
#include <linux/overflow.h>

#include "rxe2_dp.h"
#include "rxe2_requester.h"
#include "rxe2_responder.h"

#define RXE2_TM_MAX_RNDV_HDR	64

/* the tag matching header, at the start of a SEND's payload */
struct rxe2_tmh {
	u8 opcode;
	u8 reserved[3];
	__be32 app_ctx;
	__be64 tag;
};

/* the rendezvous header after an RNDV's TMH */
struct rxe2_rvh {
	__be64 va;
	__be32 rkey;
	__be32 len;
};

#define RXE2_TM_FIN_LEN (sizeof(struct rxe2_tmh) + sizeof(struct rxe2_rvh))
/* a READ and a FIN per rendezvous in flight */
#define RXE2_TM_SQ_SLOTS	64

enum rxe2_tmh_op {
	RXE2_TMH_NO_TAG	= 0,
	RXE2_TMH_RNDV	= 1,
	RXE2_TMH_FIN	= 2,
	RXE2_TMH_EAGER	= 3,
};

/*
 * A tagged buffer.  Its handle is its index with a generation above it:
 * a DEL naming a buffer that was consumed (and the slot reused) fails.
 */
struct rxe2_tm_entry {
	struct list_head node;		/* tm->posted or tm->free */
	u64 tag;
	u64 mask;
	u64 wr_id;
	u64 seq;			/* when it was added: tm->add_seq */
	u32 len;			/* its SGEs' bytes */
	u16 phase;			/* the count it waits for */
	u16 gen;
	bool live;
	u32 num_sge;
	struct rxe2_sge sge[RXE2_TM_MAX_SGE];
};

struct rxe2_tm {
	/* everything below, the entries' fields too */
	spinlock_t lock;
	struct list_head posted;	/* live buffers, oldest first */
	struct list_head free;
	u16 hw_unexp;			/* unexpected messages completed */
	u16 sw_unexp;			/* as software last reported */
	u16 pending;			/* unexpected messages arriving */
	u64 add_seq;			/* ADDs so far */
	u32 num_tags;
	struct rxe2_tm_entry entry[];
};

void rxe2_tm_caps(struct ib_tm_caps *caps)
{
	caps->max_rndv_hdr_size = RXE2_TM_MAX_RNDV_HDR;
	caps->max_num_tags = RXE2_TM_MAX_TAGS;
	caps->flags = IB_TM_CAP_RNDV_RC;
	caps->max_ops = RXE2_TM_MAX_OPS;
	caps->max_sge = RXE2_TM_MAX_SGE;
}

/* a user TM SRQ's list; the kernel's ULPs have no ibv_post_srq_ops() */
int rxe2_tm_create(struct rxe2_srq *srq, const struct ib_srq_init_attr *init,
		   struct ib_udata *udata)
{
	u32 n = init->ext.tag_matching.max_num_tags;
	struct rxe2_tm *tm;
	u32 i;

	if (!udata)
		return -EOPNOTSUPP;
	if (!init->ext.cq || !n || n > RXE2_TM_MAX_TAGS)
		return -EINVAL;
	tm = kvzalloc(struct_size(tm, entry, n), GFP_KERNEL);
	if (!tm)
		return -ENOMEM;
	spin_lock_init(&tm->lock);
	INIT_LIST_HEAD(&tm->posted);
	INIT_LIST_HEAD(&tm->free);
	tm->num_tags = n;
	for (i = 0; i < n; i++)
		list_add_tail(&tm->entry[i].node, &tm->free);
	srq->tm = tm;
	return 0;
}

void rxe2_tm_destroy(struct rxe2_srq *srq)
{
	kvfree(srq->tm);
	srq->tm = NULL;
}

/* QPs of a TM SRQ take tagged buffers' SGEs into their WQE copy */
u32 rxe2_tm_rwqe_size(void)
{
	return rxe2_recv_slot_size(RXE2_TM_MAX_SGE);
}

/* an RC QP of a TM SRQ made without a send queue: rendezvous by READ */
bool rxe2_tm_wants_sq(const struct ib_qp_init_attr *init,
		      struct ib_udata *udata)
{
	return udata && init->qp_type == IB_QPT_RC &&
	       rxe2_srq_is_tm(init->srq) && !init->cap.max_send_wr;
}

/* its send queue: a kernel ring of READs and FINs */
int rxe2_tm_sq_init(struct rxe2_qp *qp)
{
	int ret;

	ret = rxe2_ring_init(&qp->sq, RXE2_TM_SQ_SLOTS,
			     rxe2_send_slot_size(RXE2_TM_MAX_SGE,
						 RXE2_TM_FIN_LEN),
			     false, NULL);
	if (ret)
		return ret;
	qp->cap.max_send_wr = qp->sq.num_slots;
	qp->cap.max_send_sge = RXE2_TM_MAX_SGE;
	qp->cap.max_inline_data = RXE2_TM_FIN_LEN;
	return 0;
}

static struct rxe2_cq *rxe2_tm_cq(struct rxe2_srq *srq)
{
	return to_rcq(srq->ibsrq.ext.cq);
}

/* the count software must report before a buffer added now matches */
static u16 rxe2_tm_phase(const struct rxe2_tm *tm)
{
	return tm->hw_unexp + tm->pending;
}

/* the sync mlx5 asks for with an unexpected message: far behind */
#define RXE2_TM_MAX_SYNC_DIFF	0x3fff

/* caller holds tm->lock */
static void rxe2_tm_release(struct rxe2_tm *tm, struct rxe2_tm_entry *e)
{
	e->live = false;
	e->gen++;
	list_move(&e->node, &tm->free);
}

/* ------------------------------------------------------------------ */
/* List operations                                                     */
/* ------------------------------------------------------------------ */

/* an operation's completion; caller holds tm->lock */
static void rxe2_tm_op_cqe(struct rxe2_srq *srq, const struct rxe2_tm_op *op,
			   int status)
{
	static const u32 opcode[] = {
		[RXE2_TM_OP_ADD] = RXE2_WC_TM_ADD,
		[RXE2_TM_OP_DEL] = RXE2_WC_TM_DEL,
		[RXE2_TM_OP_SYNC] = RXE2_WC_TM_SYNC,
	};
	struct rxe2_cqe cqe = {
		.wr_id = op->wr_id,
		.status = status,
		.opcode = opcode[op->opcode],
		.port_num = RXE2_PORT,
	};

	if (op->opcode != RXE2_TM_OP_SYNC &&
	    rxe2_tm_phase(srq->tm) != srq->tm->sw_unexp)
		cqe.wc_flags = RXE2_WC_F_TM_SYNC_REQ;
	/* an overflow is the CQ's error event; the list is what it is */
	rxe2_cq_post(rxe2_tm_cq(srq), &cqe, false);
}

static int rxe2_tm_check_op(const struct rxe2_tm_op *op)
{
	if (op->opcode > RXE2_TM_OP_SYNC || op->reserved ||
	    op->flags & ~(RXE2_TM_OPF_SIGNALED | RXE2_TM_OPF_SYNC))
		return -EINVAL;
	if (op->opcode == RXE2_TM_OP_ADD && op->num_sge > RXE2_TM_MAX_SGE)
		return -EINVAL;
	return 0;
}

/* ADD: 0 (the handle in *handle) or -ENOMEM, the list being full */
static int rxe2_tm_add(struct rxe2_tm *tm, const struct rxe2_tm_op *op,
		       u32 *handle)
{
	struct rxe2_tm_entry *e;
	u64 len = 0;
	u32 i;

	e = list_first_entry_or_null(&tm->free, struct rxe2_tm_entry, node);
	if (!e)
		return -ENOMEM;
	e->tag = op->tag;
	e->mask = op->mask;
	e->wr_id = op->recv_wr_id;
	e->seq = ++tm->add_seq;
	e->num_sge = op->num_sge;
	memcpy(e->sge, op->sge, op->num_sge * sizeof(e->sge[0]));
	for (i = 0; i < e->num_sge; i++)
		len += e->sge[i].length;
	e->len = min_t(u64, len, U32_MAX);
	e->live = true;
	list_move_tail(&e->node, &tm->posted);
	*handle = (u32)e->gen << 16 | (u32)(e - tm->entry);
	return 0;
}

/* DEL: the completion's status; a consumed or stale handle is TM_ERR */
static int rxe2_tm_del(struct rxe2_tm *tm, u32 handle)
{
	u32 idx = handle & 0xffff;
	struct rxe2_tm_entry *e;

	if (idx >= tm->num_tags)
		return RXE2_WC_TM_ERR;
	e = &tm->entry[idx];
	if (!e->live || e->gen != handle >> 16)
		return RXE2_WC_TM_ERR;
	rxe2_tm_release(tm, e);
	return IB_WC_SUCCESS;
}

/*
 * One operation: 0 when performed (its completion posted if it asked
 * for one or failed), or the errno that refuses it.
 */
static int rxe2_tm_op(struct rxe2_srq *srq, const struct rxe2_tm_op *op,
		      u32 *handle)
{
	struct rxe2_tm *tm = srq->tm;
	int status = IB_WC_SUCCESS;
	unsigned long flags;
	int ret;

	ret = rxe2_tm_check_op(op);
	if (ret)
		return ret;
	spin_lock_irqsave(&tm->lock, flags);
	if (op->opcode == RXE2_TM_OP_ADD) {
		ret = rxe2_tm_add(tm, op, handle);
		if (ret)
			goto out;	/* refused: the report is not taken */
	}
	if (op->flags & RXE2_TM_OPF_SYNC)
		tm->sw_unexp = (u16)op->unexpected_cnt;
	if (op->opcode == RXE2_TM_OP_ADD)
		tm->entry[*handle & 0xffff].phase = rxe2_tm_phase(tm);
	else if (op->opcode == RXE2_TM_OP_DEL)
		status = rxe2_tm_del(tm, op->handle);
	if ((op->flags & RXE2_TM_OPF_SIGNALED) || status != IB_WC_SUCCESS)
		rxe2_tm_op_cqe(srq, op, status);
out:
	spin_unlock_irqrestore(&tm->lock, flags);
	return ret;
}

/*
 * ibv_post_srq_ops(): perform ops[0..n) in order, up to the first that
 * is refused; resp says how far it got.
 */
int rxe2_tm_post_ops(struct ib_srq *ibsrq, const struct rxe2_tm_op *ops,
		     u32 n, struct rxe2_srq_ops_resp *resp)
{
	struct rxe2_srq *srq = to_rsrq(ibsrq);
	int ret = 0;
	u32 i;

	if (!rxe2_srq_is_tm(ibsrq))
		return -EOPNOTSUPP;
	if (n > RXE2_TM_MAX_OPS)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		ret = rxe2_tm_op(srq, &ops[i], &resp->handle[i]);
		if (ret)
			break;
	}
	resp->done = i;
	resp->error = -ret;
	rxe2_cq_notify(rxe2_tm_cq(srq));
	return 0;
}

/* ------------------------------------------------------------------ */
/* Receiving                                                           */
/* ------------------------------------------------------------------ */

/* what a message is to the TM SRQ, from its first packet */
static enum rxe2_tm_kind rxe2_tm_classify(const struct rxe2_pkt *pkt,
					  struct rxe2_tmh *tmh)
{
	if (pkt->paylen < sizeof(*tmh))
		return RXE2_TM_PLAIN;
	memcpy(tmh, pkt->payload, sizeof(*tmh));
	switch (tmh->opcode) {
	case RXE2_TMH_EAGER:
		return RXE2_TM_EAGER;
	case RXE2_TMH_RNDV:
		return RXE2_TM_RNDV;
	case RXE2_TMH_NO_TAG:
		return RXE2_TM_NO_TAG;
	default:
		return RXE2_TM_PLAIN;
	}
}

/* the oldest eligible buffer for tag; caller holds tm->lock */
static struct rxe2_tm_entry *rxe2_tm_match(struct rxe2_tm *tm, u64 tag)
{
	struct rxe2_tm_entry *e;

	list_for_each_entry(e, &tm->posted, node) {
		/* added before software knew of every unexpected message */
		if ((s16)(tm->sw_unexp - e->phase) < 0)
			continue;
		/* the bits of the mask, on both sides (as UCX uses mlx5) */
		if (!((tag ^ e->tag) & e->mask))
			return e;
	}
	return NULL;
}

/* the matched buffer becomes the message's receive WQE */
static void rxe2_tm_use_entry(struct rxe2_qp *qp, struct rxe2_tm_entry *e)
{
	struct rxe2_qp_dp *dp = &qp->dp;
	struct rxe2_recv_wqe *w = (struct rxe2_recv_wqe *)dp->resp.rwqe;

	w->wr_id = e->wr_id;
	w->num_sge = e->num_sge;
	w->reserved = 0;
	memcpy(w + 1, e->sge, e->num_sge * sizeof(e->sge[0]));
	dp->resp.have_rwqe = true;
	dp->resp.rcv_offset = 0;
	dp->resp.rcv_inline = false;
}

/*
 * A receive completion of the TM SRQ's kind; caller holds tm->lock.
 * The MATCH completion that goes ahead of a long message's data is not
 * a receive of its own for the QP's counters: only the last one is.
 */
static void rxe2_tm_recv_cqe(struct rxe2_qp *qp, u64 wr_id, int status,
			     u32 opcode, u32 len, u32 flags, u32 ex,
			     bool solicited)
{
	struct rxe2_qp_dp *dp = &qp->dp;
	struct rxe2_cqe_inline ic;

	rxe2_recv_cqe_init(qp, &ic, wr_id, status, opcode, len);
	ic.cqe.wc_flags = flags;
	ic.cqe.ex = ex;
	if (dp->tm.kind == RXE2_TM_EAGER || dp->tm.kind == RXE2_TM_RNDV ||
	    dp->tm.kind == RXE2_TM_RNDV_READ) {
		ic.cqe.tm_tag = dp->tm.tag;
		ic.cqe.src_qp = dp->tm.app_ctx;
	}
	if (!(flags & RXE2_WC_F_TM_MATCH) || (flags & RXE2_WC_F_TM_DATA_VALID))
		rxe2_recv_cqe_post(qp, &ic, solicited);
	else if (rxe2_cq_post(rxe2_qp_recv_cq(qp), &ic.cqe, false))
		rxe2_qp_error(qp);
}

/*
 * The SGEs of the buffer in the QP's receive WQE copy, cut to len bytes;
 * their number, or -1 when the buffer is shorter.
 */
static int rxe2_tm_rndv_sges(struct rxe2_qp *qp, u32 len, struct ib_sge *sge)
{
	const struct rxe2_recv_wqe *w = (void *)qp->dp.resp.rwqe;
	const struct rxe2_sge *b = (const struct rxe2_sge *)(w + 1);
	u32 i, n = 0;

	for (i = 0; i < w->num_sge && len; i++) {
		if (!b[i].length)
			continue;
		sge[n].addr = b[i].addr;
		sge[n].length = min(b[i].length, len);
		sge[n].lkey = b[i].lkey;
		len -= sge[n++].length;
	}
	return len ? -1 : n;
}

/*
 * What becomes of an RNDV whose tag matched buffer e: the device READs
 * the data (RXE2_TM_RNDV_READ), software gets it in the buffer
 * (RXE2_TM_RNDV), or the buffer cannot take it at all and the message
 * is unexpected (RXE2_TM_UNEXPECTED).  An RNDV is one packet (at most
 * max_rndv_hdr_size bytes); a longer one is unexpected.
 */
static enum rxe2_tm_kind rxe2_tm_rndv_plan(struct rxe2_qp *qp,
					   const struct rxe2_pkt *pkt,
					   const struct rxe2_tm_entry *e)
{
	struct rxe2_rvh rvh;

	if (!(pkt->flags & RXE2_OPF_LAST))
		return RXE2_TM_UNEXPECTED;
	/*
	 * Not for a SEND_WITH_INV: its invalidation may yet fail the
	 * message after the READ is posted.  Not for a QP that was given
	 * no READs (max_rd_atomic 0), nor outside RTS.
	 */
	if (qp->tm_sq && pkt->paylen >= RXE2_TM_FIN_LEN &&
	    !(pkt->flags & RXE2_OPF_IETH) && qp->attr.max_rd_atomic &&
	    qp->dp.tm.rndv < RXE2_TM_SQ_SLOTS / 2 &&
	    qp->state == IB_QPS_RTS) {
		memcpy(&rvh, pkt->payload + sizeof(struct rxe2_tmh),
		       sizeof(rvh));
		if (e->len >= be32_to_cpu(rvh.len))
			return RXE2_TM_RNDV_READ;
	}
	return e->len >= pkt->paylen ? RXE2_TM_RNDV : RXE2_TM_UNEXPECTED;
}

/*
 * A matched RNDV that rxe2_tm_rndv_plan() gave the device: READ the
 * sender's data into the buffer now in the QP's receive WQE copy, then
 * the FIN.  The READ carries the buffer's wr_id; both are the device's
 * own work, in the QP's kernel SQ.  False if the QP left RTS meanwhile.
 */
static bool rxe2_tm_rndv_read(struct rxe2_qp *qp, const struct rxe2_pkt *pkt,
			      const struct rxe2_tmh *tmh)
{
	struct rxe2_qp_dp *dp = &qp->dp;
	struct ib_sge sge[RXE2_TM_MAX_SGE];
	u8 fin[RXE2_TM_FIN_LEN];
	struct ib_sge fin_sge = {
		.addr = (uintptr_t)fin,
		.length = sizeof(fin),
	};
	struct ib_send_wr send = {
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_INLINE | IB_SEND_FENCE,
		.sg_list = &fin_sge,
		.num_sge = 1,
	};
	struct ib_rdma_wr read = {
		.wr = {
			.next = &send,
			.wr_id = ((struct rxe2_recv_wqe *)dp->resp.rwqe)->wr_id,
			.opcode = IB_WR_RDMA_READ,
			.send_flags = IB_SEND_SIGNALED,
			.sg_list = sge,
		},
	};
	const struct ib_send_wr *bad;
	struct rxe2_rvh rvh;
	int n;

	memcpy(&rvh, pkt->payload + sizeof(*tmh), sizeof(rvh));
	n = rxe2_tm_rndv_sges(qp, be32_to_cpu(rvh.len), sge);
	if (n < 0)
		return false;
	read.wr.num_sge = n;
	read.remote_addr = be64_to_cpu(rvh.va);
	read.rkey = be32_to_cpu(rvh.rkey);
	memcpy(fin, tmh, sizeof(*tmh));
	fin[0] = RXE2_TMH_FIN;
	memcpy(fin + sizeof(*tmh), &rvh, sizeof(rvh));
	/* fails only outside RTS (a receive-only QP): nothing is posted */
	if (rxe2_post_send_kernel(qp, &read.wr, &bad))
		return false;
	dp->tm.rndv++;
	return true;
}

/*
 * A WQE of a TM QP's kernel SQ leaves it: a READ completes its buffer
 * (DATA_VALID, or the error), a FIN frees its rendezvous's room.  False
 * when the SRQ's CQ overflowed.
 */
bool rxe2_tm_sq_release(struct rxe2_qp *qp,
			const struct rxe2_swqe_info *info,
			const struct rxe2_cqe *cqe)
{
	struct rxe2_srq *srq = to_rsrq(qp->ibqp.srq);
	struct rxe2_cqe c = {
		.opcode = RXE2_WC_TM_RECV,
		.qp_num = qp->ibqp.qp_num,
		.port_num = RXE2_PORT,
	};
	unsigned long flags;
	int ret;

	/*
	 * A READ is posted signalled: it always has a completion, whose
	 * opcode comes from the ring when the requester never fetched it
	 * (w is then an older WQE's copy).  The rest are FINs.
	 */
	if (!cqe || cqe->opcode != IB_WC_RDMA_READ) {
		if (qp->dp.tm.rndv)
			qp->dp.tm.rndv--;
		return true;
	}
	c.wr_id = cqe->wr_id;
	c.status = cqe->status;
	if (c.status == IB_WC_SUCCESS) {
		c.byte_len = info->length;
		c.wc_flags = RXE2_WC_F_TM_DATA_VALID;
	}
	spin_lock_irqsave(&srq->tm->lock, flags);
	ret = rxe2_cq_post(rxe2_tm_cq(srq), &c, false);
	spin_unlock_irqrestore(&srq->tm->lock, flags);
	if (!ret && c.status == IB_WC_SUCCESS)
		rxe2_qp_pcount(qp, RXE2_PC_RDMA_RECVS, 1);
	return !ret;
}

/*
 * The receive buffer for a new SEND to a QP of TM SRQ srq: a tagged
 * buffer or an SRQ WQE.  Returns what rxe2_resp_get_rwqe() returns;
 * -EAGAIN (no SRQ WQE for a message that needs one) is an RNR NAK, and
 * the message is classified again when it is sent again.
 */
int rxe2_tm_take(struct rxe2_qp *qp, struct rxe2_srq *srq,
		 const struct rxe2_pkt *pkt)
{
	struct rxe2_qp_dp *dp = &qp->dp;
	struct rxe2_tm *tm = srq->tm;
	struct rxe2_tm_entry *e = NULL;
	struct rxe2_tmh tmh;
	enum rxe2_tm_kind kind;
	unsigned long flags;
	int ret = 0;

	dp->tm.skip = 0;
	if (dp->resp.have_rwqe)	/* an RC QP never has one at a first packet */
		return 0;
	kind = rxe2_tm_classify(pkt, &tmh);
	spin_lock_irqsave(&tm->lock, flags);
	if (kind == RXE2_TM_EAGER || kind == RXE2_TM_RNDV)
		e = rxe2_tm_match(tm, be64_to_cpu(tmh.tag));
	if (e && kind == RXE2_TM_RNDV) {
		kind = rxe2_tm_rndv_plan(qp, pkt, e);
		if (kind == RXE2_TM_UNEXPECTED)
			e = NULL;
	}
	if (e) {
		rxe2_tm_use_entry(qp, e);
		rxe2_tm_release(tm, e);
		dp->tm.kind = kind;
		dp->tm.tag = be64_to_cpu(tmh.tag);
		dp->tm.app_ctx = be32_to_cpu(tmh.app_ctx);
		dp->tm.match_sent = false;
		if (kind == RXE2_TM_RNDV_READ) {
			if (rxe2_tm_rndv_read(qp, pkt, &tmh))
				dp->tm.skip = pkt->paylen; /* nothing placed */
			else
				dp->tm.kind = RXE2_TM_RNDV;
		} else if (kind == RXE2_TM_EAGER) {
			dp->tm.skip = sizeof(tmh);
			/* a longer message: the match is told now */
			if (!(pkt->flags & RXE2_OPF_LAST)) {
				rxe2_tm_recv_cqe(qp, e->wr_id, IB_WC_SUCCESS,
						 RXE2_WC_TM_RECV, 0,
						 RXE2_WC_F_TM_MATCH, 0, false);
				dp->tm.match_sent = true;
			}
		}
		goto out;
	}
	ret = rxe2_resp_get_rwqe(qp);
	if (ret)
		goto out;
	if (kind == RXE2_TM_EAGER || kind == RXE2_TM_RNDV ||
	    kind == RXE2_TM_UNEXPECTED) {
		/* counted when it completes; buffers added now wait for it */
		tm->pending++;
		dp->tm.seq = tm->add_seq;
		kind = RXE2_TM_UNEXPECTED;
	}
	dp->tm.kind = kind;
out:
	spin_unlock_irqrestore(&tm->lock, flags);
	return ret;
}

/* The message's last packet is placed: its completion */
void rxe2_tm_recv_done(struct rxe2_qp *qp, struct rxe2_srq *srq, u64 wr_id,
		       u32 len, u32 flags, u32 ex, bool solicited)
{
	struct rxe2_qp_dp *dp = &qp->dp;
	struct rxe2_tm *tm = srq->tm;
	int status = IB_WC_SUCCESS;
	u32 opcode = RXE2_WC_TM_RECV;
	unsigned long irqflags;

	spin_lock_irqsave(&tm->lock, irqflags);
	switch (dp->tm.kind) {
	case RXE2_TM_EAGER:
		flags |= RXE2_WC_F_TM_DATA_VALID;
		if (!dp->tm.match_sent)
			flags |= RXE2_WC_F_TM_MATCH;
		break;
	case RXE2_TM_RNDV_READ:
		/* DATA_VALID comes with the READ (rxe2_tm_sq_release()) */
		flags |= RXE2_WC_F_TM_MATCH;
		break;
	case RXE2_TM_RNDV:
		/* software does the transfer: TMH and RVH are in the buffer */
		status = RXE2_WC_TM_RNDV_INCOMPLETE;
		flags |= RXE2_WC_F_TM_MATCH | RXE2_WC_F_TM_DATA_VALID;
		break;
	case RXE2_TM_UNEXPECTED:
		tm->pending--;
		tm->hw_unexp++;
		if ((u16)(tm->hw_unexp - tm->sw_unexp) > RXE2_TM_MAX_SYNC_DIFF)
			flags |= RXE2_WC_F_TM_SYNC_REQ;
		break;
	case RXE2_TM_NO_TAG:
		opcode = RXE2_WC_TM_NO_TAG;
		break;
	default:
		opcode = IB_WC_RECV;
		break;
	}
	rxe2_tm_recv_cqe(qp, wr_id, status, opcode, len, flags, ex, solicited);
	spin_unlock_irqrestore(&tm->lock, irqflags);
	/* a later receive WQE (a WRITE with immediate) is none of this */
	dp->tm.kind = RXE2_TM_PLAIN;
}

/*
 * The message the QP was receiving ends without its completion (the QP
 * failed, or was reset or destroyed): an unexpected one leaves the
 * counts, and the buffers added while it arrived stop waiting for it.
 * complete: the caller posts no completion for the receive WQE (RESET,
 * destroy): a matched buffer, which belongs to the SRQ and may have
 * been reported matched, completes with WR_FLUSH_ERR here.  Called
 * before the QP lets go of its receive WQE.
 */
void rxe2_tm_msg_abort(struct rxe2_qp *qp, bool complete)
{
	struct rxe2_qp_dp *dp = &qp->dp;
	u8 kind = dp->tm.kind;
	struct rxe2_tm_entry *e;
	struct rxe2_srq *srq;
	unsigned long flags;

	if (!dp->resp.have_rwqe || kind == RXE2_TM_PLAIN ||
	    kind == RXE2_TM_NO_TAG)
		return;
	dp->tm.kind = RXE2_TM_PLAIN;
	srq = to_rsrq(qp->ibqp.srq);
	spin_lock_irqsave(&srq->tm->lock, flags);
	if (kind == RXE2_TM_UNEXPECTED) {
		srq->tm->pending--;
		list_for_each_entry(e, &srq->tm->posted, node)
			if (e->seq > dp->tm.seq)
				e->phase--;
	} else if (complete) {
		rxe2_tm_recv_cqe(qp,
				 ((struct rxe2_recv_wqe *)dp->resp.rwqe)->wr_id,
				 IB_WC_WR_FLUSH_ERR, RXE2_WC_TM_RECV, 0, 0, 0,
				 false);
	}
	spin_unlock_irqrestore(&srq->tm->lock, flags);
}

/* where a TM QP's send completion c goes: a READ's to the SRQ's CQ */
struct rxe2_cq *rxe2_tm_sq_cq(struct rxe2_qp *qp, const struct rxe2_cqe *c)
{
	if (c && c->opcode == IB_WC_RDMA_READ)
		return rxe2_tm_cq(to_rsrq(qp->ibqp.srq));
	return NULL;
}

/*
 * A TM QP's kernel SQ is about to be emptied without
 * rxe2_comp_flush_wqes() (RESET, destroy): the READs still in it
 * complete their buffers, which belong to the SRQ and were reported
 * matched, with WR_FLUSH_ERR.
 */
void rxe2_tm_sq_flush_wqes(struct rxe2_qp *qp)
{
	struct rxe2_ring *r = &qp->sq;
	struct rxe2_srq *srq;
	struct rxe2_cqe c = {
		.status = IB_WC_WR_FLUSH_ERR,
		.opcode = RXE2_WC_TM_RECV,
		.qp_num = qp->ibqp.qp_num,
		.port_num = RXE2_PORT,
	};
	unsigned long flags;
	u32 i;

	if (!qp->tm_sq)
		return;
	srq = to_rsrq(qp->ibqp.srq);
	spin_lock_irqsave(&srq->tm->lock, flags);
	for (i = r->dev_index; i != r->client_index; i++) {
		const struct rxe2_send_wqe *w = rxe2_ring_slot(r, i);

		if (w->opcode != IB_UVERBS_WR_RDMA_READ)
			continue;
		c.wr_id = w->wr_id;
		rxe2_cq_post(rxe2_tm_cq(srq), &c, false);
	}
	spin_unlock_irqrestore(&srq->tm->lock, flags);
	qp->dp.tm.rndv = 0;
	rxe2_cq_notify(rxe2_tm_cq(srq));
}
