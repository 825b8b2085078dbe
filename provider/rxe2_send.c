// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * librxe2: the send side of the data path.  ibv_post_send() and the
 * ibv_qp_ex work request builder write struct rxe2_send_wqe entries into
 * the SQ ring (uapi/rxe2-abi.h), publish the producer with a release
 * store, and ring the doorbell once per call: a uverbs POST_SEND command
 * that carries no work request, on which the kernel runs the requester.
 *
 * Everything checkable here is checked before a slot is written, so an
 * invalid work request costs neither a slot nor a system call.  The
 * kernel re-validates every WQE it copies out of the ring.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "rxe2.h"
#include "rxe2dv.h"

/* The WQE carries the libibverbs values; they are the uverbs ones. */
#define RXE2_SAME_OPCODE(op)						\
	_Static_assert((int)IBV_WR_##op == (int)IB_UVERBS_WR_##op,	\
		       "ibv and uverbs values of " #op)
RXE2_SAME_OPCODE(RDMA_WRITE);
RXE2_SAME_OPCODE(RDMA_WRITE_WITH_IMM);
RXE2_SAME_OPCODE(SEND);
RXE2_SAME_OPCODE(SEND_WITH_IMM);
RXE2_SAME_OPCODE(RDMA_READ);
RXE2_SAME_OPCODE(ATOMIC_CMP_AND_SWP);
RXE2_SAME_OPCODE(ATOMIC_FETCH_AND_ADD);
RXE2_SAME_OPCODE(LOCAL_INV);
RXE2_SAME_OPCODE(SEND_WITH_INV);
RXE2_SAME_OPCODE(BIND_MW);
_Static_assert((int)IBV_WR_ATOMIC_WRITE == RXE2_WR_ATOMIC_WRITE &&
	       (int)IBV_WC_ATOMIC_WRITE == RXE2_WC_ATOMIC_WRITE,
	       "libibverbs 44 and Linux 6.2 values of ATOMIC_WRITE");
#define RXE2_PIN_DB(field)						\
	_Static_assert(offsetof(struct rxe2_doorbell_cmd, core.field) ==	\
		       sizeof(struct ib_uverbs_cmd_hdr) +			\
		       offsetof(struct ib_uverbs_post_send, field),		\
		       "doorbell field " #field)
RXE2_PIN_DB(response);
RXE2_PIN_DB(qp_handle);
RXE2_PIN_DB(wr_count);
RXE2_PIN_DB(sge_count);
RXE2_PIN_DB(wqe_size);
_Static_assert(sizeof(struct rxe2_doorbell_cmd) ==
	       sizeof(struct ib_uverbs_cmd_hdr) +
	       sizeof(struct ib_uverbs_post_send) &&
	       sizeof(struct rxe2_doorbell_cmd) == 32,
	       "doorbell: uverbs header + ib_uverbs_post_send, no WR");
_Static_assert(sizeof(struct ib_uverbs_post_send_resp) == 4,
	       "doorbell response");

#define RXE2_OP(op) (1u << (op))

/* What each transport can carry (IBTA 9.4, the BTH opcode tables) */
#define RXE2_RC_OPCODES (RXE2_OP(IBV_WR_SEND) |				\
			 RXE2_OP(IBV_WR_SEND_WITH_IMM) |		\
			 RXE2_OP(IBV_WR_SEND_WITH_INV) |		\
			 RXE2_OP(IBV_WR_RDMA_WRITE) |			\
			 RXE2_OP(IBV_WR_RDMA_WRITE_WITH_IMM) |		\
			 RXE2_OP(IBV_WR_RDMA_READ) |			\
			 RXE2_OP(IBV_WR_ATOMIC_CMP_AND_SWP) |		\
			 RXE2_OP(IBV_WR_ATOMIC_FETCH_AND_ADD) |		\
			 RXE2_OP(IBV_WR_LOCAL_INV) |			\
			 RXE2_OP(IBV_WR_BIND_MW))
#define RXE2_UC_OPCODES (RXE2_OP(IBV_WR_SEND) |				\
			 RXE2_OP(IBV_WR_SEND_WITH_IMM) |		\
			 RXE2_OP(IBV_WR_RDMA_WRITE) |			\
			 RXE2_OP(IBV_WR_RDMA_WRITE_WITH_IMM) |		\
			 RXE2_OP(IBV_WR_LOCAL_INV) |			\
			 RXE2_OP(IBV_WR_BIND_MW))
#define RXE2_UD_OPCODES (RXE2_OP(IBV_WR_SEND) |				\
			 RXE2_OP(IBV_WR_SEND_WITH_IMM))
/* XRC: RC's, but binds (a type 2 window belongs to one QP, not a domain) */
#define RXE2_XRC_OPCODES (RXE2_RC_OPCODES & ~RXE2_OP(IBV_WR_BIND_MW))

/* Opcodes whose payload may be inline: the ones that carry local data out */
#define RXE2_INLINE_OPCODES (RXE2_OP(IBV_WR_SEND) |			\
			     RXE2_OP(IBV_WR_SEND_WITH_IMM) |		\
			     RXE2_OP(IBV_WR_SEND_WITH_INV) |		\
			     RXE2_OP(IBV_WR_RDMA_WRITE) |		\
			     RXE2_OP(IBV_WR_RDMA_WRITE_WITH_IMM))
#define RXE2_ATOMIC_OPCODES (RXE2_OP(IBV_WR_ATOMIC_CMP_AND_SWP) |	\
			     RXE2_OP(IBV_WR_ATOMIC_FETCH_AND_ADD))
/*
 * IBTA 1.5 ATOMIC WRITE and FLUSH, RC only.  The ibv_qp_ex builder
 * alone posts them: ibv_send_wr has no field for the 8 bytes or the
 * placement type, so ibv_post_send() refuses them (EINVAL).
 */
#define RXE2_PLACEMENT_OPCODES (RXE2_OP(IBV_WR_ATOMIC_WRITE) |		\
				RXE2_OP(RXE2_WR_FLUSH))

#define RXE2_SEND_FLAGS (IBV_SEND_FENCE | IBV_SEND_SIGNALED |		\
			 IBV_SEND_SOLICITED | IBV_SEND_INLINE)

/* the send flags a QP takes: a raw packet QP's frames get checksums */
static unsigned int rxe2_qp_send_flags(const struct ibv_qp *ibqp)
{
	if (ibqp->qp_type == IBV_QPT_RAW_PACKET)
		return RXE2_SEND_FLAGS | IBV_SEND_IP_CSUM;
	return RXE2_SEND_FLAGS;
}

/* ibv_qp_ex send_ops_flags and the opcode each one enables */
static const struct {
	uint64_t flag;
	enum ibv_wr_opcode opcode;
} rxe2_send_ops[] = {
	{ IBV_QP_EX_WITH_RDMA_WRITE, IBV_WR_RDMA_WRITE },
	{ IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_WRITE_WITH_IMM },
	{ IBV_QP_EX_WITH_SEND, IBV_WR_SEND },
	{ IBV_QP_EX_WITH_SEND_WITH_IMM, IBV_WR_SEND_WITH_IMM },
	{ IBV_QP_EX_WITH_RDMA_READ, IBV_WR_RDMA_READ },
	{ IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_CMP_AND_SWP },
	{ IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD, IBV_WR_ATOMIC_FETCH_AND_ADD },
	{ IBV_QP_EX_WITH_LOCAL_INV, IBV_WR_LOCAL_INV },
	{ IBV_QP_EX_WITH_SEND_WITH_INV, IBV_WR_SEND_WITH_INV },
	{ IBV_QP_EX_WITH_BIND_MW, IBV_WR_BIND_MW },
	{ IBV_QP_EX_WITH_ATOMIC_WRITE, IBV_WR_ATOMIC_WRITE },
	{ RXE2DV_QP_EX_WITH_FLUSH, (enum ibv_wr_opcode)RXE2_WR_FLUSH },
};

static uint32_t rxe2_qp_type_opcodes(enum ibv_qp_type type)
{
	switch (type) {
	case IBV_QPT_RC:
		return RXE2_RC_OPCODES;
	case IBV_QPT_UC:
		return RXE2_UC_OPCODES;
	case IBV_QPT_UD:
		return RXE2_UD_OPCODES;
	case IBV_QPT_XRC_SEND:
		return RXE2_XRC_OPCODES;
	case IBV_QPT_RAW_PACKET:
		return RXE2_OP(IBV_WR_SEND);	/* one Ethernet frame */
	default:
		return 0;	/* XRC_RECV: no send queue */
	}
}

/* ------------------------------------------------------------------ */
/* The doorbell                                                        */
/* ------------------------------------------------------------------ */

static void rxe2_doorbell_init(struct rxe2_qp *qp)
{
	struct rxe2_doorbell_cmd *db = &qp->db;

	memset(db, 0, sizeof(*db));
	db->hdr.command = IB_USER_VERBS_CMD_POST_SEND;
	/* legacy write: in_words counts the header too, out_words does not */
	db->hdr.in_words = sizeof(*db) / 4;
	db->hdr.out_words = sizeof(qp->db_resp) / 4;
	db->core.response = (uintptr_t)&qp->db_resp;
	db->core.qp_handle = qp->vqp.qp.handle;
	db->core.wr_count = 0;
	db->core.sge_count = 0;
	/* checked against the minimum even when no WR follows */
	db->core.wqe_size = sizeof(struct ib_uverbs_send_wr);
}

/*
 * Tell the kernel that the SQ producer moved.  The command is immutable
 * after creation (only the kernel writes db_resp, and nobody reads it),
 * so concurrent posters may ring it at the same time without a lock.
 *
 * The write() is the latency-critical path and stays one system call.
 * Only a process ib_uverbs refuses it to (EACCES: it imported a command
 * fd another process opened, see rxe2_cmd.c) takes the ioctl entry, and
 * the context remembers that so its later doorbells go there directly.
 */
int rxe2_ring_doorbell(struct rxe2_qp *qp)
{
	struct ibv_context *ibctx = qp->vqp.qp.context;
	struct rxe2_context *ctx = to_rctx(ibctx);
	ssize_t n;

	if (!atomic_load_explicit(&ctx->write_refused, memory_order_relaxed)) {
		n = write(ibctx->cmd_fd, &qp->db, sizeof(qp->db));
		if (n == (ssize_t)sizeof(qp->db))
			return 0;
		if (n >= 0)
			return EIO;
		if (errno != EACCES)
			return errno;
		atomic_store_explicit(&ctx->write_refused, true,
				      memory_order_relaxed);
	}
	return rxe2_cmd_write_ioctl(ibctx, &qp->db.hdr, sizeof(qp->db.core),
				    &qp->db_resp, sizeof(qp->db_resp));
}

/*
 * After publishing the SQ producer: ring the doorbell unless the
 * kernel's requester is running and reads the producer again before it
 * stops (RXE2_RING_F_LIVE).  The fence orders our producer store before
 * the flag load, as the kernel orders its flag clear before its last
 * producer load; one of the two sees the other.
 */
static int rxe2_sq_doorbell(struct rxe2_qp *qp)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&qp->sq.hdr->flags, __ATOMIC_RELAXED) &
	    RXE2_RING_F_LIVE)
		return 0;
	return rxe2_ring_doorbell(qp);
}

/*
 * IBTA 10.8.2 / 11.4.1.1: send work requests are refused while the QP
 * is in RESET, INIT or RTR.  ibv_modify_qp() keeps ibqp->state current
 * for every transition the process makes; the ones the kernel makes on
 * its own (to SQE or ERR) still accept posts, which complete in error.
 * Refusing here keeps WQEs out of a ring the requester may not run on
 * until much later.
 */
static bool rxe2_sq_postable(struct ibv_qp *ibqp)
{
	if (!to_rqp(ibqp)->sq.map)	/* an XRC_RECV QP has no SQ */
		return false;
	switch (ibqp->state) {
	case IBV_QPS_RESET:
	case IBV_QPS_INIT:
	case IBV_QPS_RTR:
		return false;
	default:
		return true;
	}
}

/* ------------------------------------------------------------------ */
/* ibv_post_send                                                       */
/* ------------------------------------------------------------------ */

static int rxe2_copy_inline(struct rxe2_qp *qp, struct rxe2_send_wqe *wqe,
			    const struct ibv_sge *sg_list, int num_sge)
{
	uint8_t *dst = (uint8_t *)(wqe + 1);
	uint64_t len = 0;
	int i;

	for (i = 0; i < num_sge; i++)
		len += sg_list[i].length;
	if (len > qp->max_inline_data)
		return EINVAL;
	for (i = 0; i < num_sge; i++) {
		memcpy(dst, (const void *)(uintptr_t)sg_list[i].addr,
		       sg_list[i].length);
		dst += sg_list[i].length;
	}
	wqe->inline_len = (uint32_t)len;
	wqe->num_sge = 0;
	return 0;
}

/*
 * A bind names the window by its current rkey and the MR by its lkey;
 * the kernel checks everything else (IBV_WC_MW_BIND_ERR).  Type 1
 * windows are bound only through ibv_bind_mw (type1_ok), type 2 only
 * through a BIND_MW work request.
 */
static int rxe2_set_bind_mw(struct rxe2_qp *qp, struct rxe2_send_wqe *wqe,
			    struct ibv_mw *mw, uint32_t rkey,
			    const struct ibv_mw_bind_info *info, bool type1_ok)
{
	if (!mw || mw->context != qp->vqp.qp.context ||
	    (mw->type != IBV_MW_TYPE_2 && !(type1_ok &&
					      mw->type == IBV_MW_TYPE_1)))
		return EINVAL;
	if (!info->mr && info->length)
		return EINVAL;
	wqe->ex = rkey;
	wqe->wr.bind_mw.mw_rkey = mw->rkey;
	wqe->wr.bind_mw.mr_lkey = info->mr ? info->mr->lkey : 0;
	wqe->wr.bind_mw.addr = info->addr;
	wqe->wr.bind_mw.length = info->length;
	wqe->wr.bind_mw.access = info->mw_access_flags;
	return 0;
}

/* Validate one work request and write it into the slot at qp->sq.mine */
static int rxe2_build_send_wqe(struct rxe2_qp *qp, const struct ibv_send_wr *wr,
			       bool type1_ok)
{
	struct ibv_qp *ibqp = &qp->vqp.qp;
	uint32_t op = (uint32_t)wr->opcode;
	struct rxe2_send_wqe *wqe;
	struct rxe2_sge *sge;
	uint64_t len = 0;
	int i;

	if (op >= 32 || !(qp->send_opcodes & RXE2_OP(op)))
		return EINVAL;
	if (wr->send_flags & ~rxe2_qp_send_flags(ibqp))
		return EINVAL;
	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->max_send_sge)
		return EINVAL;
	if ((wr->send_flags & IBV_SEND_INLINE) &&
	    !(RXE2_OP(op) & RXE2_INLINE_OPCODES))
		return EINVAL;

	/*
	 * The local buffer of an atomic receives the original 8 bytes.  A
	 * misaligned remote address is the responder's to refuse (IBTA
	 * 9.4.5, a NAK: REM_INV_REQ_ERR), as on hardware.
	 */
	if (RXE2_OP(op) & RXE2_ATOMIC_OPCODES) {
		for (i = 0; i < wr->num_sge; i++)
			len += wr->sg_list[i].length;
		if (len < 8)
			return EINVAL;
	}

	if (ibqp->qp_type == IBV_QPT_UD) {
		if (!wr->wr.ud.ah || wr->wr.ud.ah->context != ibqp->context ||
		    wr->wr.ud.remote_qpn > 0xffffff)
			return EINVAL;
	}
	if (ibqp->qp_type == IBV_QPT_XRC_SEND &&
	    wr->qp_type.xrc.remote_srqn > RXE2_XRC_SRQN_MAX)
		return EINVAL;

	wqe = rxe2_ring_slot(&qp->sq, qp->sq.mine);
	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = wr->wr_id;
	wqe->opcode = op;
	wqe->send_flags = wr->send_flags | qp->sq_signal_all;
	if (ibqp->qp_type == IBV_QPT_XRC_SEND)
		wqe->xrc_srqn = wr->qp_type.xrc.remote_srqn;

	switch (wr->opcode) {
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		/* already big endian: the bytes travel unchanged */
		wqe->ex = (uint32_t)wr->imm_data;
		break;
	case IBV_WR_SEND_WITH_INV:
		wqe->ex = wr->invalidate_rkey;
		break;
	case IBV_WR_LOCAL_INV:
		/* ibv_send_wr keeps the key to invalidate in the same union */
		wqe->ex = wr->invalidate_rkey;
		break;
	default:
		break;
	}

	switch (wr->opcode) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
		wqe->wr.rdma.remote_addr = wr->wr.rdma.remote_addr;
		wqe->wr.rdma.rkey = wr->wr.rdma.rkey;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		wqe->wr.atomic.remote_addr = wr->wr.atomic.remote_addr;
		wqe->wr.atomic.compare_add = wr->wr.atomic.compare_add;
		wqe->wr.atomic.swap = wr->wr.atomic.swap;
		wqe->wr.atomic.rkey = wr->wr.atomic.rkey;
		break;
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		if (ibqp->qp_type == IBV_QPT_UD) {
			wqe->wr.ud.ah_num = to_rah(wr->wr.ud.ah)->ah_num;
			wqe->wr.ud.remote_qpn = wr->wr.ud.remote_qpn;
			wqe->wr.ud.remote_qkey = wr->wr.ud.remote_qkey;
		}
		break;
	default:
		break;
	}

	/* a local invalidate or a bind moves no data */
	if (wr->opcode == IBV_WR_LOCAL_INV)
		return 0;
	if (wr->opcode == IBV_WR_BIND_MW)
		return rxe2_set_bind_mw(qp, wqe, wr->bind_mw.mw,
					wr->bind_mw.rkey,
					&wr->bind_mw.bind_info, type1_ok);

	if (wr->send_flags & IBV_SEND_INLINE)
		return rxe2_copy_inline(qp, wqe, wr->sg_list, wr->num_sge);

	sge = (struct rxe2_sge *)(wqe + 1);
	for (i = 0; i < wr->num_sge; i++) {
		sge[i].addr = wr->sg_list[i].addr;
		sge[i].length = wr->sg_list[i].length;
		sge[i].lkey = wr->sg_list[i].lkey;
	}
	wqe->num_sge = (uint32_t)wr->num_sge;
	return 0;
}

/*
 * Post a list of send work requests.  On failure *bad_wr is the first
 * one not posted; those before it are in the ring and the doorbell is
 * rung for them.  If every WQE went in and only the doorbell failed,
 * the error is returned with *bad_wr NULL: the WQEs cannot be taken
 * back (the kernel may already have read the producer) and run at the
 * next doorbell, or complete in error if the QP fails.
 */
static int rxe2_post_send_wrs(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
			      struct ibv_send_wr **bad_wr, bool type1_ok)
{
	struct rxe2_qp *qp = to_rqp(ibqp);
	uint32_t start, posted, room = 0;
	int err = 0, db_err;

	*bad_wr = NULL;
	if (!wr)
		return 0;
	if (!rxe2_sq_postable(ibqp)) {
		*bad_wr = wr;
		return EINVAL;
	}

	rxe2_sq_lock(qp);
	start = qp->sq.mine;
	for (; wr; wr = wr->next) {
		if (!room) {
			err = rxe2_ring_room(&qp->sq, qp->sq.mine, &room);
			if (!err && !room)
				err = ENOMEM;
			if (err)
				break;
		}
		err = rxe2_build_send_wqe(qp, wr, type1_ok);
		if (err)
			break;
		qp->sq.mine++;
		room--;
	}
	posted = qp->sq.mine - start;
	if (posted)
		rxe2_ring_publish(&qp->sq);
	rxe2_sq_unlock(qp);

	if (err)
		*bad_wr = wr;
	/* the slot of a refused WR was scribbled on but never published */
	if (!posted)
		return err;

	db_err = rxe2_sq_doorbell(qp);
	return err ? err : db_err;
}

int rxe2_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		   struct ibv_send_wr **bad_wr)
{
	return rxe2_post_send_wrs(ibqp, wr, bad_wr, false);
}

/*
 * ibv_bind_mw (type 1; libibverbs has checked the type and the PDs): a
 * BIND_MW WQE with the next key part, which becomes mw->rkey once
 * posted.  The bind completes (or fails, IBV_WC_MW_BIND_ERR) on the
 * send CQ like any other WR.
 */
int rxe2_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *mw,
		 struct ibv_mw_bind *mw_bind)
{
	struct ibv_send_wr wr = {}, *bad;
	int err;

	wr.wr_id = mw_bind->wr_id;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = mw_bind->send_flags;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info = mw_bind->bind_info;
	err = rxe2_post_send_wrs(ibqp, &wr, &bad, true);
	if (err)
		return err;
	mw->rkey = wr.bind_mw.rkey;
	return 0;
}

/* ------------------------------------------------------------------ */
/* ibv_qp_ex: the work request builder                                 */
/* ------------------------------------------------------------------ */

/*
 * Between wr_start and wr_complete the SQ lock is held and WQEs are
 * written past the published producer, where the kernel never looks;
 * wr_complete publishes them all at once and rings the doorbell once,
 * wr_abort (or an error) simply forgets them.  The builder functions
 * return nothing: the first error of a batch is kept and wr_complete
 * returns it, posting none of the batch.
 */

static void rxe2_wr_fail(struct rxe2_qp *qp, int err)
{
	if (!qp->wr_err)
		qp->wr_err = err;
	qp->wr_cur = NULL;
}

/* Checks that need the whole WQE, run when the next one starts */
static void rxe2_wr_close_cur(struct rxe2_qp *qp)
{
	struct rxe2_send_wqe *wqe = qp->wr_cur;

	if (!wqe)
		return;
	if ((qp->vqp.qp.qp_type == IBV_QPT_UD && !qp->wr_cur_ud) ||
	    (qp->vqp.qp.qp_type == IBV_QPT_XRC_SEND && !qp->wr_cur_xrc)) {
		rxe2_wr_fail(qp, EINVAL);
		return;
	}
	if ((RXE2_OP(wqe->opcode) & RXE2_ATOMIC_OPCODES) &&
	    (!qp->wr_cur_data || qp->wr_cur_len < 8)) {
		rxe2_wr_fail(qp, EINVAL);
		return;
	}
	qp->wr_cur = NULL;
}

static struct rxe2_send_wqe *rxe2_wr_new(struct ibv_qp_ex *ibqpx,
					 enum ibv_wr_opcode opcode)
{
	struct rxe2_qp *qp = to_rqp_ex(ibqpx);
	struct rxe2_send_wqe *wqe;
	int err;

	rxe2_wr_close_cur(qp);
	if (qp->wr_err)
		return NULL;
	if (!(qp->wr_opcodes & RXE2_OP(opcode)) ||
	    (ibqpx->wr_flags & ~rxe2_qp_send_flags(&ibqpx->qp_base))) {
		rxe2_wr_fail(qp, EINVAL);
		return NULL;
	}
	if (!qp->wr_room) {
		err = rxe2_ring_room(&qp->sq, qp->wr_prod, &qp->wr_room);
		if (err || !qp->wr_room) {
			rxe2_wr_fail(qp, err ? err : ENOMEM);
			return NULL;
		}
	}

	wqe = rxe2_ring_slot(&qp->sq, qp->wr_prod);
	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = ibqpx->wr_id;
	wqe->opcode = opcode;
	/* inline is what wr_set_inline_data* makes of the WQE, not a flag */
	wqe->send_flags = (ibqpx->wr_flags & ~(unsigned int)IBV_SEND_INLINE) |
			  qp->sq_signal_all;
	qp->wr_prod++;
	qp->wr_room--;
	qp->wr_cur = wqe;
	qp->wr_cur_ud = false;
	qp->wr_cur_xrc = false;
	qp->wr_cur_data = false;
	qp->wr_cur_len = 0;
	return wqe;
}

/* The WQE a setter applies to; none after an error or before an opcode */
static struct rxe2_send_wqe *rxe2_wr_cur(struct rxe2_qp *qp)
{
	if (!qp->wr_cur && !qp->wr_err)
		rxe2_wr_fail(qp, EINVAL);
	return qp->wr_cur;
}

static void rxe2_wr_start(struct ibv_qp_ex *ibqpx)
{
	struct rxe2_qp *qp = to_rqp_ex(ibqpx);

	rxe2_sq_lock(qp);
	qp->wr_prod = qp->sq.mine;
	qp->wr_room = 0;
	qp->wr_cur = NULL;
	qp->wr_err = rxe2_sq_postable(&qp->vqp.qp) ? 0 : EINVAL;
}

static int rxe2_wr_complete(struct ibv_qp_ex *ibqpx)
{
	struct rxe2_qp *qp = to_rqp_ex(ibqpx);
	bool posted;
	int err;

	rxe2_wr_close_cur(qp);
	err = qp->wr_err;
	posted = !err && qp->wr_prod != qp->sq.mine;
	if (posted) {
		qp->sq.mine = qp->wr_prod;
		rxe2_ring_publish(&qp->sq);
	}
	qp->wr_cur = NULL;
	qp->wr_err = 0;
	rxe2_sq_unlock(qp);

	if (posted)
		err = rxe2_sq_doorbell(qp);
	return err;
}

static void rxe2_wr_abort(struct ibv_qp_ex *ibqpx)
{
	struct rxe2_qp *qp = to_rqp_ex(ibqpx);

	/* nothing past sq.mine was published: forgetting it is enough */
	qp->wr_cur = NULL;
	qp->wr_err = 0;
	rxe2_sq_unlock(qp);
}

static void rxe2_wr_send(struct ibv_qp_ex *ibqpx)
{
	rxe2_wr_new(ibqpx, IBV_WR_SEND);
}

static void rxe2_wr_send_imm(struct ibv_qp_ex *ibqpx, __be32 imm_data)
{
	struct rxe2_send_wqe *wqe = rxe2_wr_new(ibqpx, IBV_WR_SEND_WITH_IMM);

	if (wqe)
		wqe->ex = (uint32_t)imm_data;
}

static void rxe2_wr_send_inv(struct ibv_qp_ex *ibqpx, uint32_t invalidate_rkey)
{
	struct rxe2_send_wqe *wqe = rxe2_wr_new(ibqpx, IBV_WR_SEND_WITH_INV);

	if (wqe)
		wqe->ex = invalidate_rkey;
}

static void rxe2_wr_rdma(struct ibv_qp_ex *ibqpx, enum ibv_wr_opcode opcode,
			 uint32_t rkey, uint64_t remote_addr, __be32 imm_data)
{
	struct rxe2_send_wqe *wqe = rxe2_wr_new(ibqpx, opcode);

	if (!wqe)
		return;
	wqe->wr.rdma.remote_addr = remote_addr;
	wqe->wr.rdma.rkey = rkey;
	if (opcode == IBV_WR_RDMA_WRITE_WITH_IMM)
		wqe->ex = (uint32_t)imm_data;
}

static void rxe2_wr_rdma_write(struct ibv_qp_ex *ibqpx, uint32_t rkey,
			       uint64_t remote_addr)
{
	rxe2_wr_rdma(ibqpx, IBV_WR_RDMA_WRITE, rkey, remote_addr, 0);
}

static void rxe2_wr_rdma_write_imm(struct ibv_qp_ex *ibqpx, uint32_t rkey,
				   uint64_t remote_addr, __be32 imm_data)
{
	rxe2_wr_rdma(ibqpx, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, remote_addr,
		     imm_data);
}

static void rxe2_wr_rdma_read(struct ibv_qp_ex *ibqpx, uint32_t rkey,
			      uint64_t remote_addr)
{
	rxe2_wr_rdma(ibqpx, IBV_WR_RDMA_READ, rkey, remote_addr, 0);
}

static void rxe2_wr_atomic(struct ibv_qp_ex *ibqpx, enum ibv_wr_opcode opcode,
			   uint32_t rkey, uint64_t remote_addr,
			   uint64_t compare_add, uint64_t swap)
{
	struct rxe2_send_wqe *wqe = rxe2_wr_new(ibqpx, opcode);

	if (!wqe)
		return;
	/* alignment is the responder's to check, as in rxe2_build_send_wqe */
	wqe->wr.atomic.remote_addr = remote_addr;
	wqe->wr.atomic.compare_add = compare_add;
	wqe->wr.atomic.swap = swap;
	wqe->wr.atomic.rkey = rkey;
}

static void rxe2_wr_atomic_cmp_swp(struct ibv_qp_ex *ibqpx, uint32_t rkey,
				   uint64_t remote_addr, uint64_t compare,
				   uint64_t swap)
{
	rxe2_wr_atomic(ibqpx, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, remote_addr,
		       compare, swap);
}

static void rxe2_wr_atomic_fetch_add(struct ibv_qp_ex *ibqpx, uint32_t rkey,
				     uint64_t remote_addr, uint64_t add)
{
	rxe2_wr_atomic(ibqpx, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, remote_addr,
		       add, 0);
}

static void rxe2_wr_local_inv(struct ibv_qp_ex *ibqpx, uint32_t invalidate_rkey)
{
	struct rxe2_send_wqe *wqe = rxe2_wr_new(ibqpx, IBV_WR_LOCAL_INV);

	if (wqe)
		wqe->ex = invalidate_rkey;
}

/* The current WQE if it may take data (a local invalidate takes none) */
static struct rxe2_send_wqe *rxe2_wr_data_wqe(struct rxe2_qp *qp)
{
	struct rxe2_send_wqe *wqe = rxe2_wr_cur(qp);

	if (wqe && (wqe->opcode == IBV_WR_LOCAL_INV ||
		    wqe->opcode == IBV_WR_BIND_MW ||
		    (RXE2_OP(wqe->opcode) & RXE2_PLACEMENT_OPCODES))) {
		rxe2_wr_fail(qp, EINVAL);
		return NULL;
	}
	return wqe;
}

static void rxe2_wr_set_sge_list(struct ibv_qp_ex *ibqpx, size_t num_sge,
				 const struct ibv_sge *sg_list)
{
	struct rxe2_qp *qp = to_rqp_ex(ibqpx);
	struct rxe2_send_wqe *wqe = rxe2_wr_data_wqe(qp);
	struct rxe2_sge *sge;
	uint64_t len = 0;
	size_t i;

	if (!wqe)
		return;
	if (num_sge > qp->max_send_sge) {
		rxe2_wr_fail(qp, EINVAL);
		return;
	}
	sge = (struct rxe2_sge *)(wqe + 1);
	for (i = 0; i < num_sge; i++) {
		sge[i].addr = sg_list[i].addr;
		sge[i].length = sg_list[i].length;
		sge[i].lkey = sg_list[i].lkey;
		len += sg_list[i].length;
	}
	wqe->num_sge = (uint32_t)num_sge;
	wqe->inline_len = 0;
	wqe->send_flags &= ~(uint32_t)IBV_SEND_INLINE;
	qp->wr_cur_data = true;
	qp->wr_cur_len = len;
}

static void rxe2_wr_set_sge(struct ibv_qp_ex *ibqpx, uint32_t lkey,
			    uint64_t addr, uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	rxe2_wr_set_sge_list(ibqpx, 1, &sge);
}

static void rxe2_wr_set_inline_data_list(struct ibv_qp_ex *ibqpx,
					 size_t num_buf,
					 const struct ibv_data_buf *buf_list)
{
	struct rxe2_qp *qp = to_rqp_ex(ibqpx);
	struct rxe2_send_wqe *wqe = rxe2_wr_data_wqe(qp);
	uint64_t len = 0;
	uint8_t *dst;
	size_t i;

	if (!wqe)
		return;
	for (i = 0; i < num_buf; i++)
		len += buf_list[i].length;
	if (!(RXE2_OP(wqe->opcode) & RXE2_INLINE_OPCODES) ||
	    len > qp->max_inline_data) {
		rxe2_wr_fail(qp, EINVAL);
		return;
	}
	dst = (uint8_t *)(wqe + 1);
	for (i = 0; i < num_buf; i++) {
		memcpy(dst, buf_list[i].addr, buf_list[i].length);
		dst += buf_list[i].length;
	}
	wqe->num_sge = 0;
	wqe->inline_len = (uint32_t)len;
	wqe->send_flags |= IBV_SEND_INLINE;
	qp->wr_cur_data = true;
	qp->wr_cur_len = len;
}

static void rxe2_wr_set_inline_data(struct ibv_qp_ex *ibqpx, void *addr,
				    size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	rxe2_wr_set_inline_data_list(ibqpx, 1, &buf);
}

static void rxe2_wr_set_ud_addr(struct ibv_qp_ex *ibqpx, struct ibv_ah *ah,
				uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct rxe2_qp *qp = to_rqp_ex(ibqpx);
	struct rxe2_send_wqe *wqe = rxe2_wr_cur(qp);

	if (!wqe)
		return;
	if (qp->vqp.qp.qp_type != IBV_QPT_UD || !ah ||
	    ah->context != qp->vqp.qp.context || remote_qpn > 0xffffff) {
		rxe2_wr_fail(qp, EINVAL);
		return;
	}
	wqe->wr.ud.ah_num = to_rah(ah)->ah_num;
	wqe->wr.ud.remote_qpn = remote_qpn;
	wqe->wr.ud.remote_qkey = remote_qkey;
	qp->wr_cur_ud = true;
}

static void rxe2_wr_bind_mw(struct ibv_qp_ex *ibqpx, struct ibv_mw *mw,
			    uint32_t rkey,
			    const struct ibv_mw_bind_info *bind_info)
{
	struct rxe2_qp *qp = to_rqp_ex(ibqpx);
	struct rxe2_send_wqe *wqe = rxe2_wr_new(ibqpx, IBV_WR_BIND_MW);
	int err;

	if (!wqe)
		return;
	err = rxe2_set_bind_mw(qp, wqe, mw, rkey, bind_info, false);
	if (err)
		rxe2_wr_fail(qp, err);
}

/* Builders for what rxe2 does not do: refused at wr_complete */
static void rxe2_wr_send_tso(struct ibv_qp_ex *ibqpx, void *hdr,
			     uint16_t hdr_sz, uint16_t mss)
{
	struct rxe2_qp *qp = to_rqp_ex(ibqpx);

	(void)hdr;
	(void)hdr_sz;
	(void)mss;
	rxe2_wr_close_cur(qp);
	rxe2_wr_fail(qp, EOPNOTSUPP);
}

/* an XRC_SEND WR's destination: the XRC SRQ at the target */
static void rxe2_wr_set_xrc_srqn(struct ibv_qp_ex *ibqpx, uint32_t remote_srqn)
{
	struct rxe2_qp *qp = to_rqp_ex(ibqpx);
	struct rxe2_send_wqe *wqe = rxe2_wr_cur(qp);

	if (!wqe)
		return;
	if (qp->vqp.qp.qp_type != IBV_QPT_XRC_SEND ||
	    remote_srqn > RXE2_XRC_SRQN_MAX) {
		rxe2_wr_fail(qp, EINVAL);
		return;
	}
	wqe->xrc_srqn = remote_srqn;
	qp->wr_cur_xrc = true;
}

/* the 8 bytes at atomic_wr land at remote_addr as they are, in one store */
static void rxe2_wr_atomic_write(struct ibv_qp_ex *ibqpx, uint32_t rkey,
				 uint64_t remote_addr, const void *atomic_wr)
{
	struct rxe2_send_wqe *wqe = rxe2_wr_new(ibqpx, IBV_WR_ATOMIC_WRITE);

	if (!wqe)
		return;
	wqe->wr.atomic_write.remote_addr = remote_addr;
	wqe->wr.atomic_write.rkey = rkey;
	memcpy(wqe->wr.atomic_write.data, atomic_wr, 8);
}

/*
 * ibv_wr_flush() (libibverbs 45 on) and rxe2dv_wr_flush(), for 44,
 * which has none.  Global visibility only; persistence is a capability
 * rxe2 does not have.
 */
void rxe2_wr_flush(struct ibv_qp_ex *ibqpx, uint32_t rkey,
		   uint64_t remote_addr, size_t len, uint8_t type,
		   uint8_t level)
{
	struct rxe2_qp *qp = to_rqp_ex(ibqpx);
	struct rxe2_send_wqe *wqe;
	int err = 0;

	if (type & ~(RXE2_FLUSH_GLOBAL | RXE2_FLUSH_PERSISTENT) || !type ||
	    level > RXE2_FLUSH_MR || len > RXE2_MAX_MSG_SIZE)
		err = EINVAL;
	else if (type != RXE2_FLUSH_GLOBAL)
		err = EOPNOTSUPP;
	if (err) {
		rxe2_wr_close_cur(qp);
		rxe2_wr_fail(qp, err);
		return;
	}
	wqe = rxe2_wr_new(ibqpx, (enum ibv_wr_opcode)RXE2_WR_FLUSH);
	if (!wqe)
		return;
	wqe->wr.flush.remote_addr = remote_addr;
	wqe->wr.flush.length = len;
	wqe->wr.flush.rkey = rkey;
	wqe->wr.flush.type = type;
	wqe->wr.flush.level = level;
}

/* ------------------------------------------------------------------ */
/* Setup                                                               */
/* ------------------------------------------------------------------ */

/*
 * The opcodes send_ops_flags asks for, as 1 << IBV_WR_*; EOPNOTSUPP if
 * it names an operation rxe2 lacks or the QP type cannot carry.
 */
static int rxe2_send_ops_opcodes(uint64_t send_ops, enum ibv_qp_type type,
				 uint32_t *opcodes)
{
	uint32_t ops = 0;
	size_t i;

	for (i = 0; i < sizeof(rxe2_send_ops) / sizeof(rxe2_send_ops[0]); i++) {
		if (send_ops & rxe2_send_ops[i].flag) {
			ops |= RXE2_OP(rxe2_send_ops[i].opcode);
			send_ops &= ~rxe2_send_ops[i].flag;
		}
	}
	if (send_ops || (ops & ~(rxe2_qp_type_opcodes(type) |
				 (type == IBV_QPT_RC ?
				  RXE2_PLACEMENT_OPCODES : 0))))
		return EOPNOTSUPP;
	*opcodes = ops;
	return 0;
}

/* Before the kernel is asked: can this QP's extended send API be built? */
int rxe2_send_check_attr(const struct ibv_qp_init_attr_ex *attr)
{
	uint32_t ops;

	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS))
		return 0;
	return rxe2_send_ops_opcodes(attr->send_ops_flags, attr->qp_type, &ops);
}

/*
 * After creation, with the capabilities the kernel granted in attr->cap:
 * the limits every post is checked against, the prebuilt doorbell, and
 * the ibv_qp_ex builder when send_ops_flags asked for it.
 */
int rxe2_send_init(struct rxe2_qp *qp, const struct ibv_qp_init_attr_ex *attr)
{
	struct ibv_qp_ex *qpx = &qp->vqp.qp_ex;
	int err;

	qp->max_send_sge = attr->cap.max_send_sge;
	qp->max_inline_data = attr->cap.max_inline_data;
	qp->max_recv_sge = attr->cap.max_recv_sge;
	qp->send_opcodes = rxe2_qp_type_opcodes(attr->qp_type);
	qp->sq_signal_all = attr->sq_sig_all ? IBV_SEND_SIGNALED : 0;
	rxe2_doorbell_init(qp);

	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS))
		return 0;
	err = rxe2_send_ops_opcodes(attr->send_ops_flags, attr->qp_type,
				    &qp->wr_opcodes);
	if (err)
		return err;

	qpx->wr_start = rxe2_wr_start;
	qpx->wr_complete = rxe2_wr_complete;
	qpx->wr_abort = rxe2_wr_abort;
	qpx->wr_send = rxe2_wr_send;
	qpx->wr_send_imm = rxe2_wr_send_imm;
	qpx->wr_send_inv = rxe2_wr_send_inv;
	qpx->wr_rdma_write = rxe2_wr_rdma_write;
	qpx->wr_rdma_write_imm = rxe2_wr_rdma_write_imm;
	qpx->wr_rdma_read = rxe2_wr_rdma_read;
	qpx->wr_atomic_cmp_swp = rxe2_wr_atomic_cmp_swp;
	qpx->wr_atomic_fetch_add = rxe2_wr_atomic_fetch_add;
	qpx->wr_local_inv = rxe2_wr_local_inv;
	qpx->wr_set_sge = rxe2_wr_set_sge;
	qpx->wr_set_sge_list = rxe2_wr_set_sge_list;
	qpx->wr_set_inline_data = rxe2_wr_set_inline_data;
	qpx->wr_set_inline_data_list = rxe2_wr_set_inline_data_list;
	qpx->wr_set_ud_addr = rxe2_wr_set_ud_addr;
	qpx->wr_bind_mw = rxe2_wr_bind_mw;
	qpx->wr_send_tso = rxe2_wr_send_tso;
	qpx->wr_set_xrc_srqn = rxe2_wr_set_xrc_srqn;
	qpx->wr_atomic_write = rxe2_wr_atomic_write;
#if RXE2_RDMA_CORE >= 45
	/* ibv_wr_flush() calls it: every accepted send_ops_flags bit has one */
	qpx->wr_flush = rxe2_wr_flush;
#endif
	qp->vqp.comp_mask |= VERBS_QP_EX;
	/*
	 * libibverbs looks for the builder at its own offset of verbs_qp:
	 * one whose ibv_qp_ex has another size (1.14.45 and later, still
	 * IBVERBS_PRIVATE_34) would not find it (guard 6 of
	 * ibverbs_private.h).  Kept in an rdma-core tree too: a later
	 * libibverbs of the same private ABI may move it again.
	 */
	if (ibv_qp_to_qp_ex(&qp->vqp.qp) != qpx)
		return EPROTO;
	return 0;
}
