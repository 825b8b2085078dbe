// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2: queue pairs.  Creation sizes the SQ and RQ rings, modify_qp runs
 * the IBTA state machine (transitions and attribute masks come from
 * ib_modify_qp_is_ok(); the value ranges are checked here), query_qp
 * reports what was set.  The data path moves a QP to ERROR with
 * rxe2_qp_error(), and holds one it reaches by number with
 * rxe2_qp_get().
 */
#include <rdma/ib_cache.h>

#include "rxe2_dp.h"
#include "rxe2_requester.h"
#include "rxe2_responder.h"
#include "rxe2_sge.h"
#include "rxe2_trace.h"
#include "rxe2_wire.h"

#define RXE2_MAX_TIMEOUT	31
#define RXE2_MAX_RETRY		7
#define RXE2_MAX_RNR_TIMER	31
#define RXE2_QP_ACCESS		(IB_ACCESS_LOCAL_WRITE | \
				 IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_READ | \
				 IB_ACCESS_REMOTE_ATOMIC | \
				 RXE2_ACCESS_FLUSH_GLOBAL)
/*
 * Bits that only mean something for an MR.  Programs written for mlx5
 * pass their MR access mask to modify_qp and mlx5 ignores these bits, so
 * they are accepted and dropped.  FLUSH_PERSISTENT is dropped as well:
 * no FLUSH asks for persistence here (rxe2_place.c), as on a device
 * without the capability.
 */
#define RXE2_QP_ACCESS_MR_ONLY	(IB_ACCESS_MW_BIND | IB_ZERO_BASED | \
				 IB_ACCESS_ON_DEMAND | IB_ACCESS_HUGETLB | \
				 RXE2_ACCESS_FLUSH_PERSISTENT | \
				 IB_ACCESS_OPTIONAL)

static atomic64_t rxe2_qp_serial;

u32 rxe2_send_slot_size(u32 max_sge, u32 max_inline)
{
	return ALIGN(RXE2_SEND_WQE_HDR_SIZE +
		     max(max_sge * (u32)sizeof(struct rxe2_sge), max_inline),
		     64);
}

u32 rxe2_recv_slot_size(u32 max_sge)
{
	return ALIGN(RXE2_RECV_WQE_HDR_SIZE +
		     max_sge * (u32)sizeof(struct rxe2_sge), 16);
}

/*
 * Driver data of create_qp: struct rxe2_create_qp_cmd.  A shorter command
 * (an older provider) reads as zero-filled; bytes beyond the struct must
 * be zero (a newer provider asking for something we lack: EOPNOTSUPP).
 * comp_mask announces optional features: inline-receive only (another
 * bit is EOPNOTSUPP); max_inl_recv without its bit is malformed (EINVAL).
 */
static int rxe2_qp_read_cmd(struct ib_udata *udata,
			    struct rxe2_create_qp_cmd *cmd)
{
	int ret;

	ret = rxe2_udata_read_cmd(udata, cmd, sizeof(*cmd));
	if (ret)
		return ret;
	if (cmd->comp_mask & ~(RXE2_CREATE_QP_INLINE_RECV |
			       RXE2_CREATE_QP_RX_HASH))
		return -EOPNOTSUPP;
	if (!(cmd->comp_mask & RXE2_CREATE_QP_INLINE_RECV) && cmd->max_inl_recv)
		return -EINVAL;
	return 0;
}

/*
 * Inline-receive size for a QP that asked for max_inl_recv bytes: every
 * completion of its receive CQ (and, with all WRs signalled, of its
 * send CQ) must have a slot big enough.  A CQ slot holds
 * RXE2_INLINE_RECV_MAX bytes, so any size asked is rounded up to that.
 */
static int rxe2_qp_inline_recv(struct rxe2_qp *qp,
			       const struct ib_qp_init_attr *init, u32 asked)
{
	if (!asked)
		return 0;
	if (asked > RXE2_INLINE_RECV_MAX)
		return -EINVAL;
	/* a TM SRQ's completions carry tags, not data */
	if (rxe2_srq_is_tm(init->srq))
		return -EOPNOTSUPP;
	/* a small CQ of a process has inline slots; others have none */
	if ((init->recv_cq &&
	     to_rcq(init->recv_cq)->ring.slot_size < RXE2_CQ_INLINE_SLOT_SIZE) ||
	    to_rcq(init->send_cq)->ring.slot_size < RXE2_CQ_INLINE_SLOT_SIZE)
		return -EINVAL;
	qp->max_inl_recv = RXE2_INLINE_RECV_MAX;
	return 0;
}

static int rxe2_qp_check_cap(struct rxe2_dev *rdev,
			     const struct ib_qp_init_attr *init)
{
	const struct ib_device_attr *a = &rdev->attr;
	const struct ib_qp_cap *cap = &init->cap;

	if (cap->max_send_wr > a->max_qp_wr ||
	    cap->max_send_sge > a->max_send_sge ||
	    cap->max_inline_data > rdev->max_inline_data)
		return -EINVAL;
	if (!init->srq && (cap->max_recv_wr > a->max_qp_wr ||
			   cap->max_recv_sge > a->max_recv_sge))
		return -EINVAL;
	return 0;
}

/*
 * The objects a QP of each type needs: an XRC target only its domain
 * (its SRQs bring CQ and PD), an XRC initiator a send CQ, the others a
 * send CQ and a receive CQ or an SRQ.
 */
static int rxe2_qp_check_objects(const struct ib_qp_init_attr *init)
{
	/* an RSS QP: its WQs bring CQs; rxe2_rss_init() has the rest */
	if (init->rwq_ind_tbl)
		return 0;
	switch (init->qp_type) {
	case IB_QPT_XRC_TGT:
		return init->xrcd ? 0 : -EINVAL;
	case IB_QPT_XRC_INI:
		return init->send_cq && !init->srq ? 0 : -EINVAL;
	default:
		return init->send_cq && (init->recv_cq || init->srq) ?
		       0 : -EINVAL;
	}
}

/*
 * A create flag the device does not advertise is EOPNOTSUPP (as mlx5
 * answers); the one it has, blocking the loopback of the QP's own
 * multicast sends, only means something for UD and raw packet QPs (as
 * on mlx5, which takes it on both).
 */
static int rxe2_qp_check_create_flags(struct rxe2_dev *rdev,
				      const struct ib_qp_init_attr *init)
{
	u32 flags = init->create_flags;

	if (!flags)
		return 0;
	if ((flags & ~IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK) ||
	    !(rdev->attr.kernel_cap_flags & IBK_BLOCK_MULTICAST_LOOPBACK))
		return -EOPNOTSUPP;
	return init->qp_type == IB_QPT_UD ||
	       init->qp_type == IB_QPT_RAW_PACKET ? 0 : -EINVAL;
}

static int rxe2_qp_init_rings(struct rxe2_dev *rdev, struct rxe2_qp *qp,
			      struct ib_qp_init_attr *init,
			      struct ib_udata *udata)
{
	const struct ib_device_attr *a = &rdev->attr;
	struct ib_qp_cap *cap = &init->cap;
	u32 slot, room;
	int ret;

	if (init->qp_type == IB_QPT_XRC_TGT || init->rwq_ind_tbl) {
		/* no queue of its own: an empty SQ keeps its requester idle */
		memset(cap, 0, sizeof(*cap));
		return rxe2_ring_init(&qp->sq, 1, rxe2_send_slot_size(0, 0),
				      false, NULL);
	}
	if (rxe2_tm_wants_sq(init, udata)) {
		/* the TM SRQ's rendezvous traffic: nothing for the process */
		memset(cap, 0, sizeof(*cap));
		qp->tm_sq = true;
		return rxe2_tm_sq_init(qp);
	}

	slot = rxe2_send_slot_size(cap->max_send_sge, cap->max_inline_data);
	ret = rxe2_ring_init(&qp->sq, cap->max_send_wr, slot, false, udata);
	if (ret)
		return ret;
	/* the slot is rounded up: report all of it that the limits allow */
	room = slot - RXE2_SEND_WQE_HDR_SIZE;
	qp->cap.max_send_wr = qp->sq.num_slots;
	qp->cap.max_send_sge = min_t(u32, room / sizeof(struct rxe2_sge),
				     a->max_send_sge);
	qp->cap.max_inline_data = min_t(u32, room, rdev->max_inline_data);

	/* an XRC initiator receives nothing */
	qp->has_rq = !init->srq && init->qp_type != IB_QPT_XRC_INI;
	if (qp->has_rq) {
		slot = rxe2_recv_slot_size(cap->max_recv_sge);
		ret = rxe2_ring_init(&qp->rq, cap->max_recv_wr, slot, false,
				     udata);
		if (ret) {
			rxe2_ring_cleanup(&qp->sq);
			return ret;
		}
		qp->cap.max_recv_wr = qp->rq.num_slots;
		qp->cap.max_recv_sge = cap->max_recv_sge;
	}
	*cap = qp->cap;
	return 0;
}

static void rxe2_qp_free_rings(struct rxe2_qp *qp)
{
	rxe2_tm_sq_flush_wqes(qp);	/* the SRQ's buffers outlive the QP */
	if (qp->has_rq)
		rxe2_ring_cleanup(&qp->rq);
	rxe2_ring_cleanup(&qp->sq);
}

int rxe2_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		   struct ib_udata *udata)
{
	struct rxe2_dev *rdev = to_rdev(ibqp->device);
	struct rxe2_qp *qp = to_rqp(ibqp);
	struct rxe2_create_qp_resp resp = {};
	struct rxe2_create_qp_cmd cmd;
	u32 qpn;
	int ret;

	switch (init->qp_type) {
	case IB_QPT_RC:
	case IB_QPT_UC:
	case IB_QPT_UD:
	case IB_QPT_XRC_TGT:
		break;
	case IB_QPT_XRC_INI:
		/* a kernel ib_send_wr cannot name the target's XRC SRQ */
		if (!udata)
			return -EOPNOTSUPP;
		break;
	case IB_QPT_RAW_PACKET:
		/* frames for a process (CAP_NET_RAW: ib_core); no SRQ */
		if (!udata || init->srq)
			return -EOPNOTSUPP;
		break;
	case IB_QPT_GSI:
		/* QP1 belongs to ib_mad; a process never gets one */
		if (udata || init->port_num != RXE2_PORT)
			return -EOPNOTSUPP;
		break;
	default:
		return -EOPNOTSUPP;
	}
	/* tag matching is RC's (tm_caps.flags): a TM SRQ takes RC QPs only */
	if (rxe2_srq_is_tm(init->srq) && init->qp_type != IB_QPT_RC)
		return -EOPNOTSUPP;
	/* an indirection table: an RSS QP (rxe2_wq.c), raw packet only */
	if (init->rwq_ind_tbl && init->qp_type != IB_QPT_RAW_PACKET)
		return -EOPNOTSUPP;
	ret = rxe2_qp_check_create_flags(rdev, init);
	if (ret)
		return ret;
	ret = rxe2_qp_check_objects(init);
	if (ret)
		return ret;
	if (init->sq_sig_type != IB_SIGNAL_ALL_WR &&
	    init->sq_sig_type != IB_SIGNAL_REQ_WR)
		return -EINVAL;
	/* an XRC target takes none: ib_core creates it without udata */
	ret = init->qp_type == IB_QPT_XRC_TGT ? 0 :
	      rxe2_qp_check_cap(rdev, init);
	if (ret)
		return ret;
	if (udata) {
		ret = rxe2_qp_read_cmd(udata, &cmd);
		if (ret)
			return ret;
		if (udata->outlen < offsetof(typeof(resp), max_inl_recv))
			return -EINVAL;
		/* an older provider cannot learn the size: it gets none */
		if (udata->outlen < offsetofend(typeof(resp), max_inl_recv) &&
		    cmd.max_inl_recv)
			return -EINVAL;
		/* an RSS QP: its WQs' CQs have no inline slots to promise */
		if (init->rwq_ind_tbl)
			ret = cmd.max_inl_recv ? -EINVAL :
			      rxe2_rss_init(qp, init, &cmd);
		else if (cmd.comp_mask & RXE2_CREATE_QP_RX_HASH)
			ret = -EINVAL;	/* a hash without a table */
		else
			ret = rxe2_qp_inline_recv(qp, init, cmd.max_inl_recv);
		if (ret)
			return ret;
	}

	/*
	 * ib_core makes a process's XRC target as a kernel QP (no udata);
	 * it serves processes' SRQs and memory only.
	 */
	qp->is_user = udata || init->qp_type == IB_QPT_XRC_TGT;
	qp->xrcd = init->xrcd;
	qp->block_mcast_lb = init->create_flags &
			     IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK;
	qp->serial = atomic64_inc_return(&rxe2_qp_serial);
	qp->sq_sig_type = init->sq_sig_type;
	qp->state = IB_QPS_RESET;
	mutex_init(&qp->state_lock);

	ret = rxe2_qp_init_rings(rdev, qp, init, udata);
	if (ret)
		goto err_rss;
	ret = rxe2_qp_dp_init(qp);
	if (ret) {
		rxe2_qp_free_rings(qp);
		goto err_rss;
	}

	if (init->qp_type == IB_QPT_GSI) {
		qpn = 1;
		ret = rxe2_table_add_at(&rdev->qp_table, NULL, qpn);
	} else {
		ret = rxe2_table_add(&rdev->qp_table, NULL, &qpn);
	}
	if (ret)
		goto err_rings;
	ibqp->qp_num = qpn;

	if (udata) {
		/* an RSS QP's SQ is a kernel placeholder, a TM one the SRQ's */
		if (!qp->rss && !qp->tm_sq)
			rxe2_ring_get_info(&qp->sq, &resp.sq);
		if (qp->has_rq)
			rxe2_ring_get_info(&qp->rq, &resp.rq);
		resp.max_inl_recv = qp->max_inl_recv;
		ret = ib_copy_to_udata(udata, &resp,
				       min_t(size_t, udata->outlen,
					     sizeof(resp)));
		if (ret)
			goto err_table;
	}
	rxe2_table_publish(&rdev->qp_table, qpn, qp);
	return 0;

err_table:
	rxe2_table_remove(&rdev->qp_table, qpn);
err_rings:
	rxe2_qp_dp_free(qp);
	rxe2_qp_free_rings(qp);
err_rss:
	rxe2_rss_free(qp);
	return ret;
}

int rxe2_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct rxe2_qp *qp = to_rqp(ibqp);

	rxe2_mcast_qp_gone(qp);
	rxe2_table_remove(&to_rdev(ibqp->device)->qp_table, ibqp->qp_num);
	/*
	 * The receive hook finds QPs under RCU and ib_core frees this one as
	 * soon as we return: wait until no hook can still hold it.  Expedited,
	 * because a normal grace period per QP makes tearing down thousands
	 * of QPs take seconds.
	 */
	synchronize_rcu_expedited();
	rxe2_qp_dp_stop(qp);
	rxe2_qp_dp_free(qp);
	rxe2_qp_free_rings(qp);
	rxe2_rss_free(qp);
	mutex_destroy(&qp->state_lock);
	return 0;
}

/* a reference that keeps the QP from being freed; under RCU */
bool rxe2_qp_get(struct rxe2_qp *qp)
{
	return refcount_inc_not_zero(&qp->dp.loop.users);
}

void rxe2_qp_put(struct rxe2_qp *qp)
{
	if (refcount_dec_and_test(&qp->dp.loop.users))
		complete(&qp->dp.loop.users_done);
}

/* value ranges; which attributes may appear is ib_modify_qp_is_ok()'s job */
static int rxe2_qp_check_attr(struct rxe2_dev *rdev, struct rxe2_qp *qp,
			      const struct ib_qp_attr *attr, int mask)
{
	const struct ib_device_attr *a = &rdev->attr;

	if ((mask & IB_QP_PORT) && attr->port_num != RXE2_PORT)
		return -EINVAL;
	if ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index >= 1)
		return -EINVAL;
	if ((mask & IB_QP_PATH_MTU) &&
	    (attr->path_mtu < IB_MTU_256 ||
	     attr->path_mtu > IB_MTU_4096))	/* port max_mtu */
		return -EINVAL;
	/* a controlled Q_Key (bit 31) is for privileged consumers only */
	if ((mask & IB_QP_QKEY) && (attr->qkey & 0x80000000u) && qp->is_user &&
	    !capable(CAP_NET_RAW))
		return -EINVAL;
	if ((mask & IB_QP_TIMEOUT) && attr->timeout > RXE2_MAX_TIMEOUT)
		return -EINVAL;
	if ((mask & IB_QP_RETRY_CNT) && attr->retry_cnt > RXE2_MAX_RETRY)
		return -EINVAL;
	if ((mask & IB_QP_RNR_RETRY) && attr->rnr_retry > RXE2_MAX_RETRY)
		return -EINVAL;
	if ((mask & IB_QP_MIN_RNR_TIMER) &&
	    attr->min_rnr_timer > RXE2_MAX_RNR_TIMER)
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    attr->max_rd_atomic > a->max_qp_init_rd_atom)
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > a->max_qp_rd_atom)
		return -EINVAL;
	if ((mask & IB_QP_SQ_PSN) && (attr->sq_psn & ~RXE2_PSN_MASK))
		return -EINVAL;
	if ((mask & IB_QP_RQ_PSN) && (attr->rq_psn & ~RXE2_PSN_MASK))
		return -EINVAL;
	if ((mask & IB_QP_DEST_QPN) && (attr->dest_qp_num & ~RXE2_QPN_MASK))
		return -EINVAL;
	if ((mask & IB_QP_ACCESS_FLAGS) &&
	    (attr->qp_access_flags &
	     ~(RXE2_QP_ACCESS | RXE2_QP_ACCESS_MR_ONLY)))
		return -EINVAL;
	if ((mask & IB_QP_AV) && rxe2_check_ah_attr(rdev, &attr->ah_attr))
		return -EINVAL;
	/* no alternate path on RoCE (ib_core refuses it as well) */
	if (mask & IB_QP_ALT_PATH)
		return -EINVAL;
	if ((mask & IB_QP_PATH_MIG_STATE) &&
	    attr->path_mig_state != IB_MIG_MIGRATED)
		return -EINVAL;
	if ((mask & IB_QP_RATE_LIMIT) && attr->rate_limit &&
	    (attr->rate_limit < RXE2_RATE_LIMIT_MIN ||
	     attr->rate_limit > RXE2_RATE_LIMIT_MAX))
		return -EINVAL;
	return 0;
}

/*
 * ib_core's state table allows IB_QP_RATE_LIMIT only on raw packet QPs
 * (RTR -> RTS, RTS -> RTS); rxe2 paces the request packets of RC, UC
 * and UD QPs as well (rxe2_pace.c), and the frames of a raw packet QP.
 * A limit is taken where it could be sent: into RTS and in RTS.  An
 * RSS QP has no send queue and is never modified at all.
 */
static bool rxe2_qp_rate_limit_ok(struct rxe2_qp *qp, enum ib_qp_state cur,
				  enum ib_qp_state new, int mask)
{
	enum ib_qp_type t = qp->ibqp.qp_type;

	if (!(mask & IB_QP_RATE_LIMIT))
		return true;
	if (t != IB_QPT_RC && t != IB_QPT_UC && t != IB_QPT_UD &&
	    t != IB_QPT_RAW_PACKET)
		return false;
	return new == IB_QPS_RTS && (cur == IB_QPS_RTR || cur == IB_QPS_RTS);
}

static void rxe2_qp_store_attr(struct rxe2_qp *qp,
			       const struct ib_qp_attr *attr, int mask)
{
	struct ib_qp_attr *s = &qp->attr;

	if (mask & IB_QP_EN_SQD_ASYNC_NOTIFY)
		s->en_sqd_async_notify = attr->en_sqd_async_notify;
	if (mask & IB_QP_ACCESS_FLAGS)
		s->qp_access_flags = attr->qp_access_flags & RXE2_QP_ACCESS;
	if (mask & IB_QP_PKEY_INDEX)
		s->pkey_index = attr->pkey_index;
	if (mask & IB_QP_PORT)
		s->port_num = attr->port_num;
	if (mask & IB_QP_QKEY)
		s->qkey = attr->qkey;
	if (mask & IB_QP_AV) {
		/* ib_core holds the sgid_attr reference (qp->av_sgid_attr) */
		s->ah_attr = attr->ah_attr;
		s->ah_attr.grh.sgid_attr = NULL;
	}
	if (mask & IB_QP_PATH_MTU)
		s->path_mtu = attr->path_mtu;
	if (mask & IB_QP_TIMEOUT)
		s->timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		s->retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		s->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_RQ_PSN)
		s->rq_psn = attr->rq_psn;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		s->max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MIN_RNR_TIMER)
		s->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_SQ_PSN)
		s->sq_psn = attr->sq_psn;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		s->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IB_QP_PATH_MIG_STATE)
		s->path_mig_state = attr->path_mig_state;
	if (mask & IB_QP_DEST_QPN)
		s->dest_qp_num = attr->dest_qp_num;
}

static void rxe2_qp_enter_state(struct rxe2_qp *qp, enum ib_qp_state new)
{
	if (new == IB_QPS_RESET) {
		/* a reset QP forgets its queues and its attributes */
		rxe2_tm_sq_flush_wqes(qp);
		rxe2_ring_reset(&qp->sq);
		if (qp->has_rq)
			rxe2_ring_reset(&qp->rq);
		memset(&qp->attr, 0, sizeof(qp->attr));
		rxe2_qp_dp_reset(qp);
	}
	trace_rxe2_qp_state(qp->ibqp.device->index, qp->ibqp.qp_num, qp->state,
			    new);
	qp->state = new;
}

/* move to ERROR from inside the data path; caller holds state_lock */
void rxe2_qp_error(struct rxe2_qp *qp)
{
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
		.event = IB_EVENT_QP_FATAL,
	};

	if (qp->state == IB_QPS_ERR)
		return;
	trace_rxe2_qp_state(qp->ibqp.device->index, qp->ibqp.qp_num, qp->state,
			    IB_QPS_ERR);
	qp->state = IB_QPS_ERR;
	rxe2_reorder_purge(qp);		/* nothing kept is taken now */
	WRITE_ONCE(qp->dp.comp.retry_live, false);
	timer_delete(&qp->dp.comp.retry_timer);
	hrtimer_try_to_cancel(&qp->dp.comp.rnr_timer);
	/* the caller's loop ends; the flush runs on the next pass */
	rxe2_qp_kick(qp);
	if (qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}

int rxe2_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_udata *udata)
{
	struct rxe2_dev *rdev = to_rdev(ibqp->device);
	struct rxe2_qp *qp = to_rqp(ibqp);
	enum ib_qp_state cur, new;
	bool kick = false;
	int ret;

	if (mask & ~(IB_QP_ATTR_STANDARD_BITS | IB_QP_RATE_LIMIT))
		return -EOPNOTSUPP;
	/*
	 * An RSS QP receives as made: mlx5 refuses to modify one too
	 * (ENOSYS there, which is the system call's errno here).
	 */
	if (qp->rss)
		return -EOPNOTSUPP;
	ret = rxe2_check_udata_in_empty(udata);
	if (ret)
		return ret;

	mutex_lock(&qp->state_lock);
	cur = qp->state;
	/* the consumer's idea of the current state must be the real one */
	if ((mask & IB_QP_CUR_STATE) && attr->cur_qp_state != cur) {
		ret = -EINVAL;
		goto out;
	}
	new = (mask & IB_QP_STATE) ? attr->qp_state : cur;
	if (new > IB_QPS_ERR ||
	    !ib_modify_qp_is_ok(cur, new, ibqp->qp_type,
				mask & ~IB_QP_RATE_LIMIT) ||
	    !rxe2_qp_rate_limit_ok(qp, cur, new, mask)) {
		ret = -EINVAL;
		goto out;
	}
	ret = rxe2_qp_check_attr(rdev, qp, attr, mask);
	if (ret)
		goto out;

	if (mask & IB_QP_AV) {
		ret = rxe2_av_from_attr(&qp->dp.av, &attr->ah_attr,
					attr->ah_attr.grh.sgid_attr);
		if (ret)
			goto out;
	}
	rxe2_qp_store_attr(qp, attr, mask);
	if (mask & IB_QP_PATH_MTU)
		qp->dp.mtu = ib_mtu_enum_to_int(attr->path_mtu);
	if (mask & (IB_QP_AV | IB_QP_DEST_QPN))
		qp->dp.src_port = rxe2_src_port(ibqp->qp_num,
						qp->attr.dest_qp_num,
						qp->dp.av.flow_label);
	if (mask & IB_QP_SQ_PSN) {
		qp->dp.req.psn = attr->sq_psn;
		qp->dp.req.sent_psn = attr->sq_psn;
		qp->dp.comp.psn = attr->sq_psn;
		rxe2_cc_init(qp);
	}
	if (mask & IB_QP_RQ_PSN)
		qp->dp.resp.psn = attr->rq_psn;
	if (mask & IB_QP_RETRY_CNT)
		qp->dp.comp.retry_left = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		qp->dp.comp.rnr_left = attr->rnr_retry;
	if (mask & IB_QP_RATE_LIMIT)
		rxe2_pace_set(qp, attr->rate_limit);
	if (mask & IB_QP_STATE) {
		if (new == IB_QPS_SQD && cur != IB_QPS_SQD) {
			/* the message being sent is finished first */
			qp->dp.req.sqd_stop = qp->dp.req.next +
					  (qp->dp.req.offset ? 1 : 0);
			qp->dp.comp.sqd_drained = false;
		}
		rxe2_qp_enter_state(qp, new);
		/* nothing outstanding: drained at once */
		rxe2_comp_sqd_check(qp);
	}
	/*
	 * Flush an ERROR QP's WQEs; start sending what waits in the SQ,
	 * also what an old rate limit held back.  RESET, INIT and RTR leave
	 * the work item nothing to do (the requester waits for RTS; a
	 * packet that arrives queues work of its own), and so does RTR to
	 * RTS with an empty SQ (a doorbell rung from now on runs the
	 * requester): no work item per QP when thousands of QPs are
	 * connected.
	 */
	kick = (mask & IB_QP_RATE_LIMIT) ||
	       ((mask & IB_QP_STATE) && new >= IB_QPS_RTS &&
		!(cur == IB_QPS_RTR && new == IB_QPS_RTS &&
		  !rxe2_ring_dev_avail(&qp->sq)));
out:
	mutex_unlock(&qp->state_lock);
	if (kick)
		rxe2_qp_kick(qp);
	return ret;
}

int rxe2_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_qp_init_attr *init)
{
	struct rxe2_qp *qp = to_rqp(ibqp);

	mutex_lock(&qp->state_lock);
	*attr = qp->attr;
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	attr->sq_draining = qp->state == IB_QPS_SQD && !qp->dp.comp.sqd_drained;
	attr->cap = qp->cap;
	if (qp->tm_sq)		/* the process has no send queue */
		attr->cap.max_send_wr = attr->cap.max_send_sge =
			attr->cap.max_inline_data = 0;
	if (!attr->port_num)
		attr->port_num = RXE2_PORT;
	mutex_unlock(&qp->state_lock);

	memset(init, 0, sizeof(*init));
	init->event_handler = ibqp->event_handler;
	init->qp_context = ibqp->qp_context;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->cap = attr->cap;
	init->sq_sig_type = qp->sq_sig_type;
	init->qp_type = ibqp->qp_type;
	init->port_num = RXE2_PORT;
	return 0;
}

/*
 * A process posts into its mapped SQ ring and rings the doorbell: a
 * POST_SEND with no work request, which arrives here with wr == NULL.
 */
int rxe2_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		   const struct ib_send_wr **bad_wr)
{
	struct rxe2_qp *qp = to_rqp(ibqp);

	if (qp->is_user) {
		if (wr) {
			*bad_wr = wr;
			return -EOPNOTSUPP;
		}
		rxe2_qp_doorbell(qp);
		return 0;
	}
	return rxe2_post_send_kernel(qp, wr, bad_wr);
}

int rxe2_post_recv_ring(struct rxe2_ring *r, u32 max_sge,
			const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr)
{
	struct rxe2_recv_wqe *wqe;
	unsigned long flags;
	int ret = 0;

	spin_lock_irqsave(&r->lock, flags);
	for (; wr; wr = wr->next) {
		if (wr->num_sge < 0 || wr->num_sge > max_sge) {
			ret = -EINVAL;
			break;
		}
		wqe = rxe2_ring_client_next(r);
		if (IS_ERR(wqe)) {
			ret = PTR_ERR(wqe);
			break;
		}
		wqe->wr_id = wr->wr_id;
		wqe->num_sge = wr->num_sge;
		wqe->reserved = 0;
		rxe2_sge_from_ib((struct rxe2_sge *)(wqe + 1), wr->sg_list,
				 wr->num_sge);
		rxe2_ring_client_advance(r);
	}
	spin_unlock_irqrestore(&r->lock, flags);
	if (ret)
		*bad_wr = wr;
	return ret;
}

int rxe2_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		   const struct ib_recv_wr **bad_wr)
{
	struct rxe2_qp *qp = to_rqp(ibqp);
	int ret;

	/* a process posts through its mapped ring, never through here */
	if (qp->is_user) {
		*bad_wr = wr;
		return -EOPNOTSUPP;
	}
	/* IBTA: no receives before INIT, none on an SRQ-attached QP */
	if (!qp->has_rq || READ_ONCE(qp->state) == IB_QPS_RESET) {
		*bad_wr = wr;
		return -EINVAL;
	}
	ret = rxe2_post_recv_ring(&qp->rq, qp->cap.max_recv_sge, wr, bad_wr);
	/* in ERROR, receives complete at once, flushed (ib_drain_rq) */
	if (READ_ONCE(qp->state) == IB_QPS_ERR)
		rxe2_qp_kick(qp);
	return ret;
}

/*
 * Driver details for `rdma resource show qp -dd`.  ib_core holds a
 * reference on the QP and no lock of its own; the numbers are read under
 * state_lock so that they belong together, and left out (not waited for)
 * while the QP's work item holds it.
 */
int rxe2_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct rxe2_qp *qp = to_rqp(ibqp);
	struct rxe2_qp_dp *dp = &qp->dp;
	bool rc = rxe2_qp_requests_acked(qp);
	struct rxe2_res_u32 d[] = {
		/* the requester: next PSN, for RC the first unacknowledged */
		{ "sq_psn", 0, true },
		{ "sq_acked_psn", 0, rc },
		/* WQEs the requester has taken and not yet completed */
		{ "sq_unfinished", 0, true },
		{ "rd_atomic_inflight", 0, rc },
		{ "retry_left", 0, rc },
		{ "rnr_retry_left", 0, rc },
		/* the requester's window and round trip (rxe2_cc.c) */
		{ "cwnd", 0, rc },
		{ "srtt_us", 0, rc },
		/* the responder: the PSN it expects next */
		{ "rq_psn", 0, ibqp->qp_type != IB_QPT_UD },
		{ "rx_backlog", 0, true },
		/* IBV_QP_RATE_LIMIT (rxe2_pace.c), when set */
		{ "rate_kbps", 0, !!dp->pace.rate_kbps },
	};

	if (ibqp->qp_type == IB_QPT_GSI || !mutex_trylock(&qp->state_lock))
		return 0;
	d[0].v = dp->req.psn;
	d[1].v = dp->comp.psn;
	d[2].v = dp->req.next - qp->sq.dev_index;
	d[3].v = rc ? rxe2_req_rd_inflight(qp) : 0;
	d[4].v = dp->comp.retry_left;
	d[5].v = dp->comp.rnr_left;
	d[6].v = dp->cc.cwnd;
	d[7].v = dp->cc.srtt_us;
	d[8].v = dp->resp.psn;
	d[9].v = skb_queue_len(&dp->rx_queue);
	d[10].v = dp->pace.rate_kbps;
	mutex_unlock(&qp->state_lock);
	return rxe2_res_put(msg, d, ARRAY_SIZE(d), NULL);
}
