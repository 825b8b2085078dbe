// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2: how a QP's protocol work runs: its runner, its work item and its
 * timers, set up and torn down with the data-path state they work on
 * (rxe2_qp_dp_init(), _reset(), _stop(), _free()).
 *
 * Everything a QP does runs under its state_lock mutex, in sleepable
 * context: the SQ doorbell takes the mutex with a trylock and runs the
 * QP right there in the caller's context; when the mutex is busy (the
 * work item or a modify_qp holds it) it queues the QP's work item, which
 * runs after the holder is done and sees the new producer, so no
 * doorbell is lost.  The receive hook (softirq) and the timers only
 * queue the work item.
 *
 * A loopback packet (to a QP of an rxe2 device in the same namespace)
 * is handed over without the IP stack, and the sender's runner runs the
 * receiving QP inline, one level deep: see rxe2_loop.c.
 */
#include <linux/sched/clock.h>

#include "rxe2_dp.h"
#include "rxe2_requester.h"
#include "rxe2_responder.h"
#include "rxe2_wire.h"

static struct workqueue_struct *rxe2_wq;
/* a streaming QP's work item, on a CPU its poster is not on */
static struct workqueue_struct *rxe2_stream_wq;

int rxe2_dp_init(void)
{
	rxe2_wq = alloc_workqueue("rxe2", WQ_UNBOUND | WQ_HIGHPRI | WQ_MEM_RECLAIM, 0);
	rxe2_stream_wq = alloc_workqueue("rxe2_stream", WQ_PERCPU | WQ_HIGHPRI, 0);
	if (rxe2_wq && rxe2_stream_wq)
		return 0;
	if (rxe2_wq)
		destroy_workqueue(rxe2_wq);
	if (rxe2_stream_wq)
		destroy_workqueue(rxe2_stream_wq);
	return -ENOMEM;
}

void rxe2_dp_exit(void)
{
	destroy_workqueue(rxe2_stream_wq);
	destroy_workqueue(rxe2_wq);
}

/*
 * The whole of a QP's protocol work; caller holds state_lock.  tx_budget:
 * request packets the requester may still send in this run.
 */
static void rxe2_qp_process(struct rxe2_qp *qp, int *tx_budget)
{
	if (test_bit(RXE2_QPF_DYING, &qp->dp.flags))
		return;
	rxe2_rx_run(qp);
	if (qp->state == IB_QPS_ERR) {
		rxe2_comp_flush_wqes(qp);
		return;
	}
	rxe2_comp_timers(qp);
	/* a doorbell rung from now on is seen by the requester or rerun */
	clear_bit(RXE2_QPF_DOORBELL, &qp->dp.flags);
	smp_mb__after_atomic();	/* clear, then read the SQ producer */
	rxe2_req_run(qp, tx_budget);
}

/* an XRC target has no CQ: its SRQs' are told in rxe2_xrc_srq_leave() */
void rxe2_qp_notify(struct rxe2_qp *qp)
{
	if (qp->ibqp.send_cq)
		rxe2_cq_notify(to_rcq(qp->ibqp.send_cq));
	if (qp->ibqp.recv_cq)
		rxe2_cq_notify(to_rcq(qp->ibqp.recv_cq));
	/* a TM SRQ's CQ has its QPs' receive completions */
	if (rxe2_srq_is_tm(qp->ibqp.srq))
		rxe2_cq_notify(to_rcq(qp->ibqp.srq->ext.cq));
}

bool rxe2_qp_has_work(struct rxe2_qp *qp)
{
	return !test_bit(RXE2_QPF_DYING, &qp->dp.flags) &&
	       (!skb_queue_empty(&qp->dp.rx_queue) ||
		READ_ONCE(qp->dp.loop.ack_valid) ||
		READ_ONCE(qp->dp.loop.req_len) ||
		test_bit(RXE2_QPF_DOORBELL, &qp->dp.flags));
}

/*
 * Run the QP, whose state_lock the caller took, and unlock it.  parent:
 * the top-level runner when the QP runs inline for its delivery.
 *
 * Whoever finds the lock taken by a runner (RXE2_QPF_RUNNING) leaves its
 * packet or doorbell to it instead of queueing the work item: the runner
 * looks again after unlocking (the barriers pair with rxe2_qp_wake()), so
 * an answer that arrives while we still hold the lock is handled here and
 * now, not after a workqueue wake-up.  Bounded: past RXE2_RERUN_MAX
 * passes the work item takes over.
 */
#define RXE2_RERUN_MAX		64
#define RXE2_STREAM_AFTER	16	/* doorbells: see rxe2_qp_streams() */
#define RXE2_CALLER_RERUN_MAX	8	/* in a system call: see below */

/*
 * Request packets a run may send.  The work item: this many per pass.
 * A doorbell (the poster's system call) or an inline run (in another
 * QP's runner, so in someone's system call too): this many in all, then
 * the work item takes over.  A doorbell that moved whole large messages
 * before returning kept the poster from polling its CQ for seconds
 * (perftest, 4 QPs x 128 WQEs of 1 MiB: every ibv_post_send sent and
 * completed its 1 MiB; the first poll came after the measurement).
 * For the same reason a run in a system call makes fewer passes over
 * answers that keep arriving (READ responses streamed by the peer's
 * work item) before it leaves them to the work item.
 */
#define RXE2_WORK_TX_BUDGET	1024
#define RXE2_CALLER_TX_BUDGET	128

/*
 * Unlock a QP its run left with nothing to do, then look again (the
 * barrier pairs with rxe2_qp_wake()): true when work came meanwhile and
 * the lock was taken back for it.
 */
bool rxe2_qp_unlock_relook(struct rxe2_qp *qp)
{
	clear_bit(RXE2_QPF_RUNNING, &qp->dp.flags);
	mutex_unlock(&qp->state_lock);
	smp_mb();	/* RUNNING clear, then look: pairs with _wake() */
	return rxe2_qp_has_work(qp) && mutex_trylock(&qp->state_lock);
}

/*
 * A streaming poster posts faster than its SQ runs, but not always: an
 * SQ the work item just drained may get its next WQE a few microseconds
 * later.  Rather than stop and be woken for it (a doorbell system call
 * and a workqueue wake-up per message, slower than running it inline),
 * the work item of a streaming QP waits that long for it with the ring
 * live, so the post rings no doorbell.  Bounded: nothing posted for
 * RXE2_LINGER_NS and it stops, as does a QP that stopped streaming.
 * True when the producer moved.
 */
#define RXE2_LINGER_NS		20000

static bool rxe2_qp_linger(struct rxe2_qp *qp)
{
	u64 end = local_clock() + RXE2_LINGER_NS;

	if (!qp->sq.mme || READ_ONCE(qp->dp.req.quiet) < RXE2_STREAM_AFTER ||
	    test_bit(RXE2_QPF_DYING, &qp->dp.flags) ||
	    (qp->state != IB_QPS_RTS && qp->state != IB_QPS_SQD))
		return false;
	/* on the poster's CPU nothing is posted while we wait */
	if (raw_smp_processor_id() == READ_ONCE(qp->dp.req.stream_cpu))
		goto inline_again;
	rxe2_ring_live_begin(&qp->sq);
	while (!rxe2_ring_peer_moved(&qp->sq) && local_clock() < end)
		cpu_relax();
	if (rxe2_ring_live_end(&qp->sq)) {
		rxe2_qp_dp_count(qp, RXE2_DPC_LIVE_SQ_POSTS);
		return true;
	}
inline_again:
	/* the poster stopped, waits after all, or shares our CPU */
	WRITE_ONCE(qp->dp.req.quiet, 0);
	return false;
}

void rxe2_qp_run_unlock(struct rxe2_qp *qp, struct rxe2_qp *parent,
			bool work)
{
	int tx_budget = work ? RXE2_WORK_TX_BUDGET : RXE2_CALLER_TX_BUDGET;
	int n, max = work ? RXE2_RERUN_MAX : RXE2_CALLER_RERUN_MAX;
	/* runs the QP left in loop.after: see rxe2_qp_run_after() */
	bool may_run_after = !test_and_clear_bit(RXE2_QPF_AFTER,
						 &qp->dp.flags) && !parent;

	for (n = 0; n < max; n++) {
		set_bit(RXE2_QPF_RUNNING, &qp->dp.flags);
		qp->dp.loop.inline_parent = parent;
		if (work)
			tx_budget = RXE2_WORK_TX_BUDGET;
		rxe2_qp_process(qp, &tx_budget);
		qp->dp.loop.inline_parent = NULL;
		if (rxe2_qp_has_work(qp) || (work && rxe2_qp_linger(qp)))
			continue;
		if (!rxe2_qp_unlock_relook(qp))
			goto out;
	}
	clear_bit(RXE2_QPF_RUNNING, &qp->dp.flags);
	mutex_unlock(&qp->state_lock);
	rxe2_qp_kick(qp);
out:
	rxe2_qp_notify(qp);
	rxe2_qp_run_after(qp, may_run_after);
}

static void rxe2_qp_work(struct work_struct *work)
{
	struct rxe2_qp *qp = container_of(work, struct rxe2_qp, dp.work);

	mutex_lock(&qp->state_lock);
	rxe2_qp_run_unlock(qp, NULL, true);
}

/* the same run, queued by rxe2_qp_stream() */
static void rxe2_qp_stream_work(struct work_struct *work)
{
	struct rxe2_qp *qp = container_of(work, struct rxe2_qp,
					  dp.stream_work);

	mutex_lock(&qp->state_lock);
	rxe2_qp_run_unlock(qp, NULL, true);
}

void rxe2_qp_kick(struct rxe2_qp *qp)
{
	if (!test_bit(RXE2_QPF_DYING, &qp->dp.flags))
		queue_work(rxe2_wq, &qp->dp.work);
}

/*
 * Work for the QP was queued or flagged and its lock is taken: a runner
 * holding it sees the work after unlocking; anyone else (modify_qp, a
 * query) does not, so the work item must come.
 */
void rxe2_qp_wake(struct rxe2_qp *qp)
{
	smp_mb();	/* work visible, then RUNNING read: pairs with _unlock */
	if (!test_bit(RXE2_QPF_RUNNING, &qp->dp.flags))
		rxe2_qp_kick(qp);
}

/*
 * Whether the poster streams: it rang RXE2_STREAM_AFTER doorbells in a
 * row with neither a request from the peer nor a poll of its send CQ in
 * between, so it is not waiting for an answer.  Its SQ then runs in the
 * work item, on another CPU, while it goes on posting: with the ring
 * flagged live (RXE2_RING_F_LIVE) its later posts ring no doorbell.  A
 * ping-pong always sees one of the two signs and keeps the inline run.
 */
static bool rxe2_qp_streams(struct rxe2_qp *qp)
{
	struct rxe2_req_info *req = &qp->dp.req;
	u32 rx = READ_ONCE(qp->dp.resp.requests), cq = 0;
	u32 quiet = READ_ONCE(req->quiet);

	if (qp->ibqp.send_cq && to_rcq(qp->ibqp.send_cq)->is_user)
		cq = READ_ONCE(to_rcq(qp->ibqp.send_cq)->ring.hdr->consumer);
	if (rx != READ_ONCE(req->quiet_rx) || cq != READ_ONCE(req->quiet_cq)) {
		WRITE_ONCE(req->quiet_rx, rx);
		WRITE_ONCE(req->quiet_cq, cq);
		WRITE_ONCE(req->quiet, 0);
		return false;
	}
	if (quiet < RXE2_STREAM_AFTER) {
		WRITE_ONCE(req->quiet, quiet + 1);
		return false;
	}
	return true;
}

/*
 * Hand a streaming QP to its work item on another CPU than the poster's,
 * so that the two run side by side; a runner that holds the QP already
 * looks again, as for any doorbell.
 */
static void rxe2_qp_stream(struct rxe2_qp *qp)
{
	int poster = raw_smp_processor_id(), cpu;

	smp_mb();	/* doorbell visible, then RUNNING read */
	if (test_bit(RXE2_QPF_RUNNING, &qp->dp.flags) ||
	    test_bit(RXE2_QPF_DYING, &qp->dp.flags))
		return;
	rxe2_qp_dp_count(qp, RXE2_DPC_STREAM_HANDOFFS);
	WRITE_ONCE(qp->dp.req.stream_cpu, poster);
	cpu = cpumask_next(poster, cpu_online_mask);
	if (cpu >= nr_cpu_ids)
		cpu = cpumask_first(cpu_online_mask);
	if (cpu == poster)
		rxe2_qp_kick(qp);	/* one CPU: nothing runs beside */
	else
		queue_work_on(cpu, rxe2_stream_wq, &qp->dp.stream_work);
}

void rxe2_qp_doorbell(struct rxe2_qp *qp)
{
	set_bit(RXE2_QPF_DOORBELL, &qp->dp.flags);
	smp_mb__after_atomic();	/* flag set, then try the lock */
	if (rxe2_qp_streams(qp))
		rxe2_qp_stream(qp);
	else if (mutex_trylock(&qp->state_lock))
		rxe2_qp_run_unlock(qp, NULL, false);
	else
		rxe2_qp_wake(qp);
}

static void rxe2_retry_timer(struct timer_list *t)
{
	struct rxe2_qp *qp = timer_container_of(qp, t, dp.comp.retry_timer);
	unsigned long at;

	smp_mb();	/* not pending, then read live: pairs with retry_start */
	if (!READ_ONCE(qp->dp.comp.retry_live) ||
	    test_bit(RXE2_QPF_DYING, &qp->dp.flags))
		return;
	/*
	 * Progress moved the deadline since the timer was armed.  Not
	 * mod_timer(): a retry_start() between the read and here may have
	 * armed the timer for an earlier deadline, which must stand.
	 */
	at = READ_ONCE(qp->dp.comp.retry_at);
	if (time_before(jiffies, at)) {
		timer_reduce(t, at);
		return;
	}
	set_bit(RXE2_QPF_RETRY, &qp->dp.flags);
	rxe2_qp_kick(qp);
}

static enum hrtimer_restart rxe2_rnr_timer(struct hrtimer *t)
{
	struct rxe2_qp *qp = container_of(t, struct rxe2_qp, dp.comp.rnr_timer);

	set_bit(RXE2_QPF_RNR, &qp->dp.flags);
	rxe2_qp_kick(qp);
	return HRTIMER_NORESTART;
}

int rxe2_qp_dp_init(struct rxe2_qp *qp)
{
	struct rxe2_qp_dp *dp = &qp->dp;
	u32 rsize;

	INIT_WORK(&dp->work, rxe2_qp_work);
	INIT_WORK(&dp->stream_work, rxe2_qp_stream_work);
	refcount_set(&dp->loop.users, 1);
	init_completion(&dp->loop.users_done);
	dp->loop.inline_parent = NULL;
	dp->loop.after = NULL;
	skb_queue_head_init(&dp->rx_queue);
	__skb_queue_head_init(&dp->resp.ooo);
	__skb_queue_head_init(&dp->comp.ooo);
	dp->loop.ack_valid = false;
	dp->loop.req_len = 0;
	timer_setup(&dp->comp.retry_timer, rxe2_retry_timer, 0);
	hrtimer_setup(&dp->comp.rnr_timer, rxe2_rnr_timer, CLOCK_MONOTONIC,
		      HRTIMER_MODE_REL_SOFT);
	rxe2_pace_init(qp);
	dp->req.swqe = kvcalloc(qp->sq.num_slots, qp->sq.slot_size, GFP_KERNEL);
	dp->req.sinfo = kvcalloc(qp->sq.num_slots, sizeof(*dp->req.sinfo),
			     GFP_KERNEL);
	if (qp->ibqp.srq)
		rsize = rxe2_srq_rwqe_size(to_rsrq(qp->ibqp.srq));
	else if (rxe2_qp_is_xrc_tgt(qp))	/* any XRC SRQ's */
		rsize = rxe2_recv_slot_size(rxe2_qp_rdev(qp)->attr.max_srq_sge);
	else if (qp->rss)				/* any WQ's */
		rsize = rxe2_recv_slot_size(rxe2_qp_rdev(qp)->attr.max_recv_sge);
	else
		rsize = qp->rq.slot_size;
	dp->resp.rwqe_size = rsize;
	dp->resp.rwqe = kzalloc(max_t(u32, rsize, RXE2_RECV_WQE_HDR_SIZE),
			   GFP_KERNEL);
	if (!dp->req.swqe || !dp->req.sinfo || !dp->resp.rwqe) {
		rxe2_qp_dp_free(qp);
		return -ENOMEM;
	}
	rxe2_qp_dp_reset(qp);
	return 0;
}

/* no more work: the QP is unreachable from the hook (RCU grace passed) */
void rxe2_qp_dp_stop(struct rxe2_qp *qp)
{
	set_bit(RXE2_QPF_DYING, &qp->dp.flags);
	/* loopback deliveries that found the QP before it was unpublished */
	rxe2_qp_put(qp);
	wait_for_completion(&qp->dp.loop.users_done);
	cancel_work_sync(&qp->dp.work);
	timer_delete_sync(&qp->dp.comp.retry_timer);
	hrtimer_cancel(&qp->dp.comp.rnr_timer);
	hrtimer_cancel(&qp->dp.pace.timer);
	cancel_work_sync(&qp->dp.work);
	cancel_work_sync(&qp->dp.stream_work);
	skb_queue_purge(&qp->dp.rx_queue);
	mutex_lock(&qp->state_lock);
	rxe2_reorder_purge(qp);
	rxe2_resp_reset(qp);
	mutex_unlock(&qp->state_lock);
}

void rxe2_qp_dp_free(struct rxe2_qp *qp)
{
	kvfree(qp->dp.req.swqe);
	kvfree(qp->dp.req.sinfo);
	kfree(qp->dp.resp.rwqe);
	qp->dp.req.swqe = NULL;
	qp->dp.req.sinfo = NULL;
	qp->dp.resp.rwqe = NULL;
}

/* to RESET (and at creation); caller holds state_lock or owns the QP */
void rxe2_qp_dp_reset(struct rxe2_qp *qp)
{
	struct rxe2_qp_dp *dp = &qp->dp;

	dp->comp.retry_live = false;
	rxe2_cc_init(qp);
	timer_delete(&dp->comp.retry_timer);
	hrtimer_try_to_cancel(&dp->comp.rnr_timer);
	rxe2_pace_set(qp, 0);
	clear_bit(RXE2_QPF_RETRY, &dp->flags);
	clear_bit(RXE2_QPF_RNR, &dp->flags);
	clear_bit(RXE2_QPF_RNR_WAIT, &dp->flags);
	skb_queue_purge(&dp->rx_queue);
	rxe2_reorder_purge(qp);
	WRITE_ONCE(dp->loop.ack_valid, false);
	WRITE_ONCE(dp->loop.req_len, 0);
	rxe2_resp_reset(qp);
	memset(dp->req.sinfo, 0, qp->sq.num_slots * sizeof(*dp->req.sinfo));
	dp->req.next = qp->sq.dev_index;
	dp->req.offset = 0;
	dp->req.psn = 0;
	dp->req.sent_psn = 0;
	dp->req.noack = 0;
	dp->comp.rewound = false;
	dp->comp.reread_on = false;
	dp->comp.reread_done = false;
	dp->comp.psn = 0;
	dp->resp.psn = 0;
	dp->resp.msn = 0;
	dp->mtu = 256;
	dp->comp.last_wqe_sent = false;
	dp->tm.rndv = 0;	/* the kernel SQ it counts was just emptied */
}
