// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2: completion queues.  The data path produces rxe2_cqe entries into
 * the ring (rxe2_cq_post()); a process polls them itself, a kernel
 * consumer through rxe2_poll_cq().
 *
 * Locking: ring.lock (see the lock table in rxe2_verbs.h).  The
 * completion handler is never called under it: rxe2_cq_post() only
 * marks notify_pending, and whoever posted (the QP runner, after its
 * lock is dropped) or the moderation timer calls rxe2_cq_notify().
 * An XRC target calls it for its SRQs' CQs under its own state_lock,
 * before the SRQ (which holds the CQ) may go (rxe2_xrc_srq_leave());
 * those are processes' CQs, whose handler (uverbs) only queues an event.
 */
#include <rdma/uverbs_ioctl.h>

#include "rxe2_verbs.h"

/* the longest moderation period (us), as on mlx5 */
#define RXE2_CQ_MAX_MODER_PERIOD 4095

static enum hrtimer_restart rxe2_cq_moder_expired(struct hrtimer *timer);

static int rxe2_cq_init(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
			struct ib_udata *udata)
{
	struct rxe2_dev *rdev = to_rdev(ibcq->device);
	struct rxe2_cq *cq = to_rcq(ibcq);
	struct rxe2_create_cq_resp resp = {};
	int ret;

	/* a CQ that may overrun silently is not one rxe2 makes */
	if (attr->flags & ~IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION)
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
	cq->timestamps = attr->flags & IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION;
	hrtimer_setup(&cq->moder_timer, rxe2_cq_moder_expired, CLOCK_MONOTONIC,
		      HRTIMER_MODE_ABS_SOFT);
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

int rxe2_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		   RXE2_CREATE_CQ_UDATA_PARAM)
{
	return rxe2_cq_init(ibcq, attr, rxe2_create_cq_udata());
}

int rxe2_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct rxe2_cq *cq = to_rcq(ibcq);

	rxe2_table_remove(&to_rdev(ibcq->device)->cq_table, cq->index);
	/* no QP uses the CQ any more: nothing restarts the timer */
	hrtimer_cancel(&cq->moder_timer);
	rxe2_ring_cleanup(&cq->ring);
	return 0;
}

/*
 * ibv_modify_cq(): the event of an armed CQ waits for count matching
 * CQEs or for period us after the first of them, whichever comes
 * first.  count 0 with a period: only the period ends the wait; count
 * <= 1 and period 0: no moderation.  The new values apply from the next
 * matching CQE on.
 *
 * Not for kernel CQs: ib_free_cq() cancels the CQ's poll work before
 * destroy_cq, and a timer firing in between would queue it again on a
 * CQ about to be freed (6.12 has no hook before that cancel).  No ULP
 * asks: rxe2 does not enable ib_core's DIM.
 */
int rxe2_modify_cq(struct ib_cq *ibcq, u16 count, u16 period)
{
	struct rxe2_cq *cq = to_rcq(ibcq);
	unsigned long flags;

	if (!cq->is_user)
		return -EOPNOTSUPP;
	if (period > RXE2_CQ_MAX_MODER_PERIOD)
		return -EINVAL;
	spin_lock_irqsave(&cq->ring.lock, flags);
	cq->moder_count = count;
	cq->moder_period = period;
	spin_unlock_irqrestore(&cq->ring.lock, flags);
	return 0;
}

void rxe2_cq_set_caps(struct ib_device_attr *a)
{
	a->cq_caps.max_cq_moderation_count = U16_MAX;
	a->cq_caps.max_cq_moderation_period = RXE2_CQ_MAX_MODER_PERIOD;
	/* the device clock is CLOCK_MONOTONIC in ns: 1 GHz, 64 bits */
	a->hca_core_clock = NSEC_PER_SEC / 1000;
	a->timestamp_mask = U64_MAX;
}

/* caller holds ring.lock: the armed event is due */
static void rxe2_cq_event_due(struct rxe2_cq *cq)
{
	cq->notify = 0;
	cq->moder_seen = 0;
	set_bit(0, &cq->notify_pending);
	/*
	 * Also when moder_period is 0 now: a timer of an earlier period
	 * must not end a later wait.  A running callback finds moder_seen
	 * 0 and does nothing.
	 */
	hrtimer_try_to_cancel(&cq->moder_timer);
}

/* when the running wait's period ends; caller holds ring.lock */
static ktime_t rxe2_cq_moder_end(const struct rxe2_cq *cq)
{
	return ktime_add_us(cq->moder_start, cq->moder_period);
}

/* caller holds ring.lock: a CQE the arm asked for was written */
static void rxe2_cq_arm_hit(struct rxe2_cq *cq)
{
	bool wait;

	cq->moder_seen++;
	if (cq->moder_count)
		wait = cq->moder_seen < cq->moder_count;
	else
		wait = cq->moder_period;
	if (!wait) {
		rxe2_cq_event_due(cq);
		return;
	}
	if (cq->moder_seen == 1 && cq->moder_period) {
		cq->moder_start = ktime_get();
		hrtimer_start(&cq->moder_timer, rxe2_cq_moder_end(cq),
			      HRTIMER_MODE_ABS_SOFT);
	}
}

/*
 * The moderation period of an armed CQ ended.  A callback that a
 * cancel missed may run for a later wait: if that wait's arm_hit has
 * queued the timer again, the queued expiry is the one that counts
 * (only arm_hit starts the timer, under ring.lock, so the check is
 * stable); otherwise it re-arms for the wait's own deadline rather
 * than end it early.
 */
static enum hrtimer_restart rxe2_cq_moder_expired(struct hrtimer *timer)
{
	struct rxe2_cq *cq = container_of(timer, struct rxe2_cq, moder_timer);
	enum hrtimer_restart ret = HRTIMER_NORESTART;
	unsigned long flags;
	bool due = false;
	ktime_t end;

	spin_lock_irqsave(&cq->ring.lock, flags);
	end = rxe2_cq_moder_end(cq);
	if (!hrtimer_is_queued(timer) && cq->moder_seen && cq->notify) {
		if (ktime_before(ktime_get(), end)) {
			hrtimer_set_expires(timer, end);
			ret = HRTIMER_RESTART;
		} else {
			rxe2_cq_event_due(cq);
			due = true;
		}
	}
	spin_unlock_irqrestore(&cq->ring.lock, flags);
	if (due)
		rxe2_cq_notify(cq);
	return ret;
}

/*
 * The bytes of a CQE in its slot.  Inline-receive: the data area whole
 * (rxe2_cqe_set_inline() zeroed its tail), then only the SGEs in use;
 * the process reads no more (uapi/rxe2-abi.h), so the slot's older
 * bytes beyond them, its own earlier completions, stay.
 */
static size_t rxe2_cqe_len(const struct rxe2_cqe *cqe)
{
	if (!(cqe->flags & RXE2_CQE_F_INLINE))
		return sizeof(*cqe);
	/* at most RXE2_INLINE_RECV_MAX_SGE: rxe2_cqe_set_inline() */
	return RXE2_CQE_INLINE_SGE_OFFSET +
	       cqe->inline_num_sge * sizeof(struct rxe2_sge);
}

/*
 * rxe2_cq_post() - write one CQE.  Never overwrites: a full CQ reports
 * IB_EVENT_CQ_ERR (once) and the entry is lost (-EOVERFLOW).  Marks the
 * event that rxe2_qp_run_unlock() delivers after the QP's lock is
 * dropped.  Timestamps are taken under ring.lock, so they never go
 * backwards within a CQ.
 */
int rxe2_cq_post(struct rxe2_cq *cq, const struct rxe2_cqe *cqe, bool solicited)
{
	struct rxe2_cqe *slot;
	unsigned long flags;
	bool overflow = false;
	int avail;

	spin_lock_irqsave(&cq->ring.lock, flags);
	avail = rxe2_ring_dev_avail(&cq->ring);
	if (avail <= 0) {
		overflow = !cq->overflowed;
		cq->overflowed = true;
	} else {
		slot = rxe2_ring_slot(&cq->ring, cq->ring.dev_index);
		memcpy(slot, cqe, rxe2_cqe_len(cqe));
		if (cq->timestamps)
			slot->timestamp = ktime_get_ns();
		rxe2_ring_dev_advance(&cq->ring);
		if (cq->notify == IB_CQ_NEXT_COMP ||
		    (cq->notify == IB_CQ_SOLICITED &&
		     (solicited || cqe->status != IB_WC_SUCCESS)))
			rxe2_cq_arm_hit(cq);
	}
	spin_unlock_irqrestore(&cq->ring.lock, flags);

	if (overflow && cq->ibcq.event_handler) {
		struct ib_event ev = {
			.device = cq->ibcq.device,
			.element.cq = &cq->ibcq,
			.event = IB_EVENT_CQ_ERR,
		};

		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
	}
	return avail <= 0 ? -EOVERFLOW : 0;
}

/* whether the CQ has a free slot now (another QP may take it first) */
bool rxe2_cq_has_room(struct rxe2_cq *cq)
{
	unsigned long flags;
	bool room;

	spin_lock_irqsave(&cq->ring.lock, flags);
	room = rxe2_ring_dev_avail(&cq->ring) > 0;
	spin_unlock_irqrestore(&cq->ring.lock, flags);
	return room;
}

/* Deliver the event rxe2_cq_post() marked; no lock held */
void rxe2_cq_notify(struct rxe2_cq *cq)
{
	/* a plain read first: no atomic when nothing is armed (the usual) */
	if (test_bit(0, &cq->notify_pending) &&
	    test_and_clear_bit(0, &cq->notify_pending) &&
	    cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
}

/*
 * Move the CQ to a ring of at least cqe slots.  The data path posts
 * CQEs only under ring.lock (rxe2_cq_post()), so under that lock the
 * unpolled CQEs move in order and every later CQE lands in the new
 * ring.  The old buffer stays mapped in the process until it unmaps it
 * (rxe2_ring.c): a poller racing with the resize reads stale CQEs, never
 * freed memory; the provider excludes that with its CQ lock.
 */
int rxe2_resize_cq(struct ib_cq *ibcq, RXE2_CQE_COUNT cqe,
		   struct ib_udata *udata)
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
	/* callers chose inline only for len <= max_inl_recv <= this */
	len = min_t(u32, len, sizeof(ic->data));
	memcpy(ic->data, data, len);
	/* the data area reaches the process whole: none of our stack */
	memset(ic->data + len, 0, sizeof(ic->data) - len);
	/*
	 * Callers chose inline only for SGEs that fit; were it otherwise,
	 * no SGE covers len and the process reports a broken CQE.
	 */
	n = rxe2_inline_sges(sge, num_sge, len, ic->sge);
	ic->cqe.inline_num_sge = max(n, 0);
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
		{ "timestamps", cq->timestamps, true },
		/* ibv_modify_cq, when set */
		{ "moder_count", READ_ONCE(cq->moder_count),
		  cq->moder_count || cq->moder_period },
		{ "moder_period_us", READ_ONCE(cq->moder_period),
		  cq->moder_count || cq->moder_period },
	};

	return rxe2_res_put(msg, d, ARRAY_SIZE(d), NULL);
}
