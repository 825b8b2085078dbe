// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * librxe2: queue pairs.  The kernel keeps the QP state machine; the
 * process owns the send ring and, without an SRQ, the receive ring.
 * Posting receives is pure user space (the kernel reads the producer
 * when a message arrives); the send side is in rxe2_send.c.  An XRC_SEND
 * QP has a send ring only, an XRC_RECV QP no ring at all (its messages
 * land in XRC SRQs, rxe2_xrc.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rxe2.h"

/* The init attributes this provider understands */
#define RXE2_QP_INIT_ATTR_SUPPORTED (IBV_QP_INIT_ATTR_PD | \
				     IBV_QP_INIT_ATTR_XRCD | \
				     IBV_QP_INIT_ATTR_CREATE_FLAGS | \
				     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS | \
				     IBV_QP_INIT_ATTR_IND_TABLE | \
				     IBV_QP_INIT_ATTR_RX_HASH)

/* an RSS QP: raw packet, its table and hash, no queue of its own */
static bool rxe2_qp_is_rss(const struct ibv_qp_init_attr_ex *attr)
{
	return attr->comp_mask & IBV_QP_INIT_ATTR_IND_TABLE;
}

static int rxe2_check_rss_attr(struct ibv_context *ibctx,
			       const struct ibv_qp_init_attr_ex *attr)
{
	const struct ibv_rx_hash_conf *h = &attr->rx_hash_conf;

	if (attr->qp_type != IBV_QPT_RAW_PACKET)
		return EOPNOTSUPP;
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_RX_HASH) ||
	    !attr->rwq_ind_tbl || attr->rwq_ind_tbl->context != ibctx ||
	    !(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd ||
	    attr->pd->context != ibctx || attr->srq || attr->recv_cq ||
	    attr->cap.max_recv_wr || attr->cap.max_recv_sge)
		return EINVAL;
	/* frames in only: mlx5's RSS QPs have no send queue either */
	if (attr->cap.max_send_wr || attr->cap.max_send_sge ||
	    attr->cap.max_inline_data)
		return EOPNOTSUPP;
	/* no inner headers, no IPsec SPI */
	if (h->rx_hash_fields_mask & ~(uint64_t)RXE2_RX_HASH_FIELDS)
		return EOPNOTSUPP;
	if (h->rx_hash_function != IBV_RX_HASH_FUNC_TOEPLITZ)
		return EOPNOTSUPP;
	if (h->rx_hash_key_len != RXE2_RSS_KEY_LEN || !h->rx_hash_key)
		return EINVAL;
	return 0;
}

/*
 * Every create flag libibverbs defines.  Which of them the device has is
 * the kernel's to say (device_cap_flags_ex): a defined flag it lacks is
 * EOPNOTSUPP there, a flag for the wrong QP type EINVAL; a bit nobody
 * defined is EINVAL here.
 */
#define RXE2_QP_CREATE_DEFINED (IBV_QP_CREATE_BLOCK_SELF_MCAST_LB | \
				IBV_QP_CREATE_SCATTER_FCS | \
				IBV_QP_CREATE_CVLAN_STRIPPING | \
				IBV_QP_CREATE_SOURCE_QPN | \
				IBV_QP_CREATE_PCI_WRITE_END_PADDING)

/*
 * An XRC_RECV QP belongs to an XRC domain and has neither PD nor CQs;
 * the kernel resolves the handles in this context's file only.
 */
static int rxe2_check_xrc_recv_attr(struct ibv_context *ibctx,
				    const struct ibv_qp_init_attr_ex *attr)
{
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_XRCD) || !attr->xrcd ||
	    attr->xrcd->context != ibctx)
		return EINVAL;
	return rxe2_send_check_attr(attr);
}

static int rxe2_check_qp_init_attr(struct ibv_context *ibctx,
				   const struct ibv_qp_init_attr_ex *attr)
{
	if (attr->comp_mask & ~(uint32_t)RXE2_QP_INIT_ATTR_SUPPORTED)
		return EOPNOTSUPP;
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	    (attr->create_flags & ~(uint32_t)RXE2_QP_CREATE_DEFINED))
		return EINVAL;

	if (rxe2_qp_is_rss(attr))
		return rxe2_check_rss_attr(ibctx, attr);
	/* a hash without a table */
	if (attr->comp_mask & IBV_QP_INIT_ATTR_RX_HASH)
		return EINVAL;

	switch (attr->qp_type) {
	case IBV_QPT_RC:
	case IBV_QPT_UC:
	case IBV_QPT_UD:
	case IBV_QPT_XRC_SEND:
		break;
	case IBV_QPT_XRC_RECV:
		return rxe2_check_xrc_recv_attr(ibctx, attr);
	case IBV_QPT_RAW_PACKET:
		/* frames come from flows to its own receive queue only */
		if (attr->srq)
			return EOPNOTSUPP;
		break;
	case IBV_QPT_DRIVER:
		return EOPNOTSUPP;
	default:
		return EINVAL;
	}
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd)
		return EINVAL;

	/*
	 * libibverbs dereferences both CQs when building the command (the
	 * send CQ only for XRC_SEND, which receives nothing).
	 */
	if (!attr->send_cq ||
	    (attr->qp_type != IBV_QPT_XRC_SEND && !attr->recv_cq))
		return EINVAL;

	/*
	 * The kernel resolves handles in this context's file only: an object
	 * of another context whose handle number happens to exist here would
	 * silently name the wrong object.
	 */
	if (attr->pd->context != ibctx || attr->send_cq->context != ibctx ||
	    (attr->recv_cq && attr->recv_cq->context != ibctx) ||
	    (attr->srq && attr->srq->context != ibctx))
		return EINVAL;
	if (attr->qp_type == IBV_QPT_XRC_SEND && attr->srq)
		return EINVAL;
	return rxe2_send_check_attr(attr);
}

/* A QP object and its locks, before the kernel is asked (errno set) */
struct rxe2_qp *rxe2_qp_alloc(void)
{
	struct rxe2_qp *qp = calloc(1, sizeof(*qp));
	int err;

	if (!qp)
		return NULL;
	err = pthread_spin_init(&qp->sq_lock, PTHREAD_PROCESS_PRIVATE);
	if (err)
		goto err_free;
	err = pthread_spin_init(&qp->rq_lock, PTHREAD_PROCESS_PRIVATE);
	if (err)
		goto err_sq_lock;
	return qp;

err_sq_lock:
	pthread_spin_destroy(&qp->sq_lock);
err_free:
	free(qp);
	errno = err;
	return NULL;
}

void rxe2_qp_free(struct rxe2_qp *qp)
{
	pthread_spin_destroy(&qp->rq_lock);
	pthread_spin_destroy(&qp->sq_lock);
	free(qp);
}

static bool rxe2_qp_sq_is_tm(const struct ibv_qp_init_attr_ex *attr)
{
	return attr->qp_type == IBV_QPT_RC && attr->srq &&
	       to_rsrq(attr->srq)->tm_ops && !attr->cap.max_send_wr;
}

/* Map the rings the kernel made, checked against the capabilities it granted */
static int rxe2_qp_map_rings(struct ibv_context *ibctx, struct rxe2_qp *qp,
			     const struct ibv_qp_init_attr_ex *attr,
			     const struct rxe2_create_qp_resp *resp)
{
	const struct ibv_qp_cap *cap = &attr->cap;
	int err;

	/*
	 * An XRC target: the kernel made it without rings (and udata).  An
	 * RSS QP receives into its WQs and sends nothing.
	 */
	if (attr->qp_type == IBV_QPT_XRC_RECV || rxe2_qp_is_rss(attr))
		return 0;
	/*
	 * An RC QP of a tag matching SRQ made without a send queue: its SQ
	 * is the SRQ's, for rendezvous (rxe/rxe2_tm.c); nothing to map.
	 */
	if (rxe2_qp_sq_is_tm(attr) && rxe2_ring_info_absent(&resp->sq))
		return rxe2_ring_info_absent(&resp->rq) ? 0 : EPROTO;
	err = rxe2_ring_map(ibctx, &qp->sq, RXE2_RING_SQ, &resp->sq,
			    cap->max_send_wr,
			    rxe2_send_slot_size(cap->max_send_sge,
						cap->max_inline_data));
	if (err)
		return err;

	if (attr->srq || attr->qp_type == IBV_QPT_XRC_SEND) {
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

/*
 * The create command.  create_flags need the extended one, which also
 * carries our driver data; without them the plain command does.
 */
static int rxe2_qp_create_cmd(struct ibv_context *ibctx, struct rxe2_qp *qp,
			      struct ibv_qp_init_attr_ex *attr,
			      const uint32_t *max_inl_recv,
			      struct rxe2_create_qp_resp *drv_rsp)
{
	struct rxe2_create_qp_cmd drv = {};
	int err;

	if (max_inl_recv) {
		drv.comp_mask = RXE2_CREATE_QP_INLINE_RECV;
		drv.max_inl_recv = *max_inl_recv;
	}
	if (rxe2_qp_is_rss(attr)) {
		drv.comp_mask |= RXE2_CREATE_QP_RX_HASH;
		drv.rx_hash_fields_mask = attr->rx_hash_conf.rx_hash_fields_mask;
		drv.rx_hash_function = attr->rx_hash_conf.rx_hash_function;
		drv.rx_hash_key_len = attr->rx_hash_conf.rx_hash_key_len;
		memcpy(drv.rx_hash_key, attr->rx_hash_conf.rx_hash_key,
		       RXE2_RSS_KEY_LEN);
	}
	/* the table too needs the extended command */
	if (attr->comp_mask & (IBV_QP_INIT_ATTR_CREATE_FLAGS |
			       IBV_QP_INIT_ATTR_IND_TABLE)) {
		/* reserved fields must reach the kernel as zero */
		struct rxe2_create_qp_ex_req req = { .drv = drv };
		struct rxe2_create_qp_ex_rsp rsp = {};

		err = ibv_cmd_create_qp_ex2(ibctx, &qp->vqp, attr, &req.ibv_cmd,
					    sizeof(req), &rsp.ibv_resp,
#if RXE2_RDMA_CORE >= 64
					    sizeof(rsp), NULL);	/* no driver attrs */
#else
					    sizeof(rsp));
#endif
		*drv_rsp = rsp.drv;
	} else {
		struct rxe2_create_qp_req req = { .drv = drv };
		struct rxe2_create_qp_rsp rsp = {};

		err = ibv_cmd_create_qp_ex(ibctx, &qp->vqp, attr, &req.ibv_cmd,
					   sizeof(req), &rsp.ibv_resp,
					   sizeof(rsp));
		*drv_rsp = rsp.drv;
	}
	return err;
}

/*
 * max_inl_recv: NULL for an ordinary QP; else the inline-receive size
 * asked, replaced by the size the kernel applied (rxe2dv_create_qp).
 */
struct ibv_qp *rxe2_create_qp_inl(struct ibv_context *ibctx,
				  struct ibv_qp_init_attr_ex *attr,
				  uint32_t *max_inl_recv)
{
	/* work on a copy: the caller's caps change only on success */
	struct ibv_qp_init_attr_ex granted = *attr;
	struct rxe2_create_qp_resp rsp;
	struct rxe2_qp *qp;
	int err;

	err = rxe2_check_qp_init_attr(ibctx, attr);
	if (err) {
		errno = err;
		return NULL;
	}

	qp = rxe2_qp_alloc();
	if (!qp)
		return NULL;
	/* an XRC_RECV QP has no PD: nothing to post, no lock to spare */
	qp->single_thread = attr->qp_type != IBV_QPT_XRC_RECV &&
			    rxe2_pd_single_thread(attr->pd);

	err = rxe2_qp_create_cmd(ibctx, qp, &granted, max_inl_recv, &rsp);
	if (err)
		goto err_free;

	err = rxe2_qp_map_rings(ibctx, qp, &granted, &rsp);
	if (err)
		goto err_destroy;
	err = rxe2_send_init(qp, &granted);
	if (err)
		goto err_unmap;

	attr->cap = granted.cap;
	if (max_inl_recv)
		*max_inl_recv = rsp.max_inl_recv;
	if (attr->qp_type != IBV_QPT_XRC_RECV)
		qp->parent = rxe2_parent_get(attr->pd);
	return &qp->vqp.qp;

err_unmap:
	rxe2_ring_unmap(&qp->rq);
	rxe2_ring_unmap(&qp->sq);
err_destroy:
	ibv_cmd_destroy_qp(&qp->vqp.qp);
err_free:
	rxe2_qp_free(qp);
	errno = err;
	return NULL;
}

struct ibv_qp *rxe2_create_qp_ex(struct ibv_context *ibctx,
				 struct ibv_qp_init_attr_ex *attr)
{
	return rxe2_create_qp_inl(ibctx, attr, NULL);
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

/* A QP gone to RESET: its completions leave its CQs (rxe2_cq_clean()) */
static void rxe2_qp_clean_cqs(struct ibv_qp *ibqp)
{
	bool on_srq = ibqp->srq != NULL;

	if (ibqp->send_cq)
		rxe2_cq_clean(to_rcq(ibqp->send_cq), ibqp->qp_num, on_srq);
	if (ibqp->recv_cq && ibqp->recv_cq != ibqp->send_cq)
		rxe2_cq_clean(to_rcq(ibqp->recv_cq), ibqp->qp_num, on_srq);
}

int rxe2_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		   int attr_mask)
{
	struct ib_uverbs_ex_modify_qp_resp resp = {};
	struct ibv_modify_qp_ex cmd_ex = {};
	struct ibv_modify_qp cmd = {};
	int err;

	if (attr_mask & IBV_QP_RATE_LIMIT)
		err = ibv_cmd_modify_qp_ex(ibqp, attr, attr_mask, &cmd_ex,
					   sizeof(cmd_ex), &resp, sizeof(resp));
	else
		err = ibv_cmd_modify_qp(ibqp, attr, attr_mask, &cmd,
					sizeof(cmd));
	if (!err && (attr_mask & IBV_QP_STATE) &&
	    attr->qp_state == IBV_QPS_RESET)
		rxe2_qp_clean_cqs(ibqp);
	return err;
}

/*
 * Packet pacing of the QP's requests (rxe/rxe2_pace.c), in kbps, 0 for
 * none; the kernel takes it into RTS and in RTS.  Pacing is per packet:
 * there is no burst size to set.
 */
int rxe2_modify_qp_rate_limit(struct ibv_qp *ibqp,
			      struct ibv_qp_rate_limit_attr *attr)
{
	struct ibv_qp_attr qp_attr = { .rate_limit = attr->rate_limit };

	if (attr->comp_mask || attr->max_burst_sz || attr->typical_pkt_sz)
		return EINVAL;
	return rxe2_modify_qp(ibqp, &qp_attr, IBV_QP_RATE_LIMIT);
}

/*
 * Enhanced Connection Establishment.  rxe2 has no optional behaviour to
 * negotiate, so its ECE is its vendor id with no options.  librdmacm
 * carries it in the CM REQ and REP and sets what the peer answered: our
 * own vendor id with no options, or, from another vendor, ours with
 * none.  Options rxe2 does not have are EINVAL, as the man page says.
 */
int rxe2_query_ece(struct ibv_qp *ibqp, struct ibv_ece *ece)
{
	(void)ibqp;	/* the same on every QP */
	*ece = (struct ibv_ece){ .vendor_id = RXE2_VENDOR_ID };
	return 0;
}

int rxe2_set_ece(struct ibv_qp *ibqp, struct ibv_ece *ece)
{
	(void)ibqp;
	if (ece->comp_mask || ece->vendor_id != RXE2_VENDOR_ID ||
	    ece->options)
		return EINVAL;
	return 0;
}

/*
 * Whether a reader may poll a message's last byte instead of its
 * completion: no.  The kernel places each packet with memcpy, whose
 * fast-string stores x86 may make visible out of order even within an
 * aligned 128-byte block, so no capability bit holds.
 */
int rxe2_query_qp_data_in_order(struct ibv_qp *ibqp, enum ibv_wr_opcode op,
				uint32_t flags)
{
	(void)ibqp;
	(void)op;
	(void)flags;
	return 0;
}

/* multicast membership is the kernel's (rxe2_mcast.c): a command each */
int rxe2_attach_mcast(struct ibv_qp *ibqp, const union ibv_gid *gid,
		      uint16_t lid)
{
	return ibv_cmd_attach_mcast(ibqp, gid, lid);
}

int rxe2_detach_mcast(struct ibv_qp *ibqp, const union ibv_gid *gid,
		      uint16_t lid)
{
	return ibv_cmd_detach_mcast(ibqp, gid, lid);
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
	rxe2_parent_put(qp->parent);
	rxe2_qp_free(qp);
	return 0;
}

/*
 * Write receive WQEs into a receive ring (a QP's RQ or an SRQ) and
 * publish the producer once, with release semantics; no system call.
 * The kernel's consumer (acquire) tells which slots it has taken.  lock
 * NULL: a thread domain's QP, whose one thread needs none.
 */
int rxe2_post_recv_ring(struct rxe2_ring *ring, pthread_spinlock_t *lock,
			uint32_t max_sge, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad_wr)
{
	struct rxe2_recv_wqe *wqe;
	struct rxe2_sge *sge;
	uint32_t start, room = 0;
	int i, err = 0;

	*bad_wr = NULL;
	if (lock)
		pthread_spin_lock(lock);
	start = ring->mine;
	for (; wr; wr = wr->next) {
		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > max_sge) {
			err = EINVAL;
			break;
		}
		if (!room) {
			err = rxe2_ring_room(ring, ring->mine, &room);
			if (!err && !room)
				err = ENOMEM;
			if (err)
				break;
		}
		wqe = rxe2_ring_slot(ring, ring->mine);
		wqe->wr_id = wr->wr_id;
		wqe->num_sge = (uint32_t)wr->num_sge;
		wqe->reserved = 0;
		sge = (struct rxe2_sge *)(wqe + 1);
		for (i = 0; i < wr->num_sge; i++) {
			sge[i].addr = wr->sg_list[i].addr;
			sge[i].length = wr->sg_list[i].length;
			sge[i].lkey = wr->sg_list[i].lkey;
		}
		ring->mine++;
		room--;
	}
	if (ring->mine != start)
		rxe2_ring_publish(ring);
	if (lock)
		pthread_spin_unlock(lock);

	if (err)
		*bad_wr = wr;
	return err;
}

int rxe2_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		   struct ibv_recv_wr **bad_wr)
{
	struct rxe2_qp *qp = to_rqp(ibqp);
	int err;

	/*
	 * A QP attached to an SRQ has no receive queue; IBTA allows
	 * receives from INIT on, never in RESET.
	 */
	if (!qp->rq.map || ibqp->state == IBV_QPS_RESET) {
		*bad_wr = wr;
		return EINVAL;
	}
	err = rxe2_post_recv_ring(&qp->rq,
				  qp->single_thread ? NULL : &qp->rq_lock,
				  qp->max_recv_sge, wr, bad_wr);
	/*
	 * RXE2_RING_F_FLUSH: the QP is in the error state and the kernel
	 * flushes receives only when the QP runs; the doorbell runs it.
	 * The fence orders our producer store before the flag load, as
	 * the kernel orders its flag store before its producer load.
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&qp->rq.hdr->flags, __ATOMIC_RELAXED) &
	    RXE2_RING_F_FLUSH)
		rxe2_ring_doorbell(qp);
	return err;
}
