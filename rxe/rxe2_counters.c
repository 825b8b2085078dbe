// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2: counters.  The port counters (`rdma statistic show link`, sysfs
 * hw_counters) and per-QP counters (`rdma statistic qp`, ib_core's
 * rdma_counter: auto mode by QP type or process, or QPs bound by hand).
 *
 * A QP counter counts, under the port counters' names and indexes,
 * what the QPs bound to it do: the data path counts an event of a bound
 * QP there instead of in the device (rxe2_qp_count() and its users in
 * rxe2_dp.h), and ib_core shows a port as the device's own counts plus
 * every counter's, running or released, so a port's totals stay whole
 * whatever is bound.  Events that belong to no QP (a packet for no QP,
 * ODP, fault injection, the link) stay the device's.
 *
 * A counter is an array of per-CPU u64s (struct rxe2_counter), found by
 * its id in rdev->counters; a QP points to its own under RCU (qp->ctr).
 * ib_core binds and unbinds under the counter's mutex; unbinding waits
 * an RCU grace period, so every count a QP made there has landed before
 * ib_core reads the counter one last time and releases it.
 */
#include <rdma/ib_verbs.h>
#include <rdma/rdma_counter.h>

#include "rxe2_dp.h"

/*
 * The port counters, in the order `rdma statistic` lists them: first
 * rdma_rxe's, under its names, then the rest (docs/architecture.md,
 * "Port counters").  Each names its source: a per-CPU counter (summed),
 * an atomic data path counter, a drop reason, or the sum of the drops.
 */
enum rxe2_counter_src { RXE2_SRC_PCPU, RXE2_SRC_DP, RXE2_SRC_DROP,
			RXE2_SRC_DROPS };

static const struct {
	const char *name;
	u8 src;		/* enum rxe2_counter_src */
	u8 idx;		/* in the source's enum */
} rxe2_counters[] = {
	{ "sent_pkts", RXE2_SRC_PCPU, RXE2_PC_SENT_PKTS },
	{ "rcvd_pkts", RXE2_SRC_PCPU, RXE2_PC_RCVD_PKTS },
	{ "duplicate_request", RXE2_SRC_DP, RXE2_DPC_DUP_REQUEST },
	{ "out_of_seq_request", RXE2_SRC_DP, RXE2_DPC_OUT_OF_SEQ_REQUEST },
	{ "rcvd_rnr_err", RXE2_SRC_DP, RXE2_DPC_RCVD_RNR_ERR },
	{ "send_rnr_err", RXE2_SRC_DP, RXE2_DPC_SEND_RNR_ERR },
	{ "rcvd_seq_err", RXE2_SRC_DP, RXE2_DPC_RCVD_SEQ_ERR },
	{ "ack_deferred", RXE2_SRC_PCPU, RXE2_PC_ACK_DEFERRED },
	{ "retry_exceeded_err", RXE2_SRC_DP, RXE2_DPC_RETRY_EXCEEDED },
	{ "retry_rnr_exceeded_err", RXE2_SRC_DP, RXE2_DPC_RNR_RETRY_EXCEEDED },
	{ "completer_retry_err", RXE2_SRC_DP, RXE2_DPC_COMPLETER_RETRY },
	{ "send_err", RXE2_SRC_DP, RXE2_DPC_SEND_ERR },
	{ "link_downed", RXE2_SRC_DP, RXE2_DPC_LINK_DOWNED },
	{ "rdma_sends", RXE2_SRC_PCPU, RXE2_PC_RDMA_SENDS },
	{ "rdma_recvs", RXE2_SRC_PCPU, RXE2_PC_RDMA_RECVS },
	{ "sent_bytes", RXE2_SRC_PCPU, RXE2_PC_SENT_BYTES },
	{ "rcvd_bytes", RXE2_SRC_PCPU, RXE2_PC_RCVD_BYTES },
	{ "rx_dropped", RXE2_SRC_DROPS, 0 },
	{ "rx_no_qp", RXE2_SRC_DROP, RXE2_DROP_NO_QP },
	{ "rx_malformed", RXE2_SRC_DROP, RXE2_DROP_MALFORMED },
	{ "rx_icrc_errors", RXE2_SRC_DROP, RXE2_DROP_ICRC },
	{ "rx_backlog_drops", RXE2_SRC_DROP, RXE2_DROP_BACKLOG },
	{ "rx_qp_state_drops", RXE2_SRC_DROP, RXE2_DROP_QP_STATE },
	{ "rx_bad_qkey", RXE2_SRC_DROP, RXE2_DROP_BAD_QKEY },
	{ "rx_no_recv_wqe", RXE2_SRC_DROP, RXE2_DROP_NO_RECV },
	{ "rx_too_long", RXE2_SRC_DROP, RXE2_DROP_TOO_LONG },
	{ "rx_bad_xrc_srq", RXE2_SRC_DROP, RXE2_DROP_XRC_SRQ },
	{ "ack_timeouts", RXE2_SRC_DP, RXE2_DPC_ACK_TIMEOUTS },
	{ "out_of_order_held", RXE2_SRC_DP, RXE2_DPC_REORDER_HELD },
	{ "read_rerequests", RXE2_SRC_DP, RXE2_DPC_READ_REREQUESTS },
	{ "resend_skipped", RXE2_SRC_DP, RXE2_DPC_RESEND_SKIPPED },
	{ "tail_probes", RXE2_SRC_DP, RXE2_DPC_TAIL_PROBES },
	{ "loop_one_copy_pkts", RXE2_SRC_DP, RXE2_DPC_ONE_COPY },
	{ "sq_stream_handoffs", RXE2_SRC_DP, RXE2_DPC_STREAM_HANDOFFS },
	{ "sq_live_posts", RXE2_SRC_DP, RXE2_DPC_LIVE_SQ_POSTS },
	{ "inline_recv_completions", RXE2_SRC_DP, RXE2_DPC_INLINE_RECV },
	{ "fault_tx_drops", RXE2_SRC_DP, RXE2_DPC_FAULT_TX_DROPS },
	{ "fault_injected", RXE2_SRC_DP, RXE2_DPC_FAULT_INJECTED },
	{ "num_page_faults", RXE2_SRC_DP, RXE2_DPC_ODP_PAGE_FAULTS },
	{ "num_page_fault_pages", RXE2_SRC_DP, RXE2_DPC_ODP_PAGE_FAULT_PAGES },
	{ "num_invalidations", RXE2_SRC_DP, RXE2_DPC_ODP_INVALIDATIONS },
	{ "num_invalidation_pages", RXE2_SRC_DP, RXE2_DPC_ODP_INVALIDATION_PAGES },
	{ "num_prefetches_handled", RXE2_SRC_DP, RXE2_DPC_ODP_PREFETCHES },
	{ "num_prefetch_pages", RXE2_SRC_DP, RXE2_DPC_ODP_PREFETCH_PAGES },
	{ "num_failed_resolutions", RXE2_SRC_DP, RXE2_DPC_ODP_FAILED_RESOLUTIONS },
	{ "num_mrs_not_found", RXE2_SRC_DP, RXE2_DPC_ODP_MRS_NOT_FOUND },
	{ "num_odp_mr_pages", RXE2_SRC_DP, RXE2_DPC_ODP_MR_PAGES },
	{ "num_odp_mrs", RXE2_SRC_DP, RXE2_DPC_ODP_MRS },
};

/* rdma_stat_desc wants the names alone, in an array of their own */
static struct rdma_stat_desc rxe2_counter_descs[ARRAY_SIZE(rxe2_counters)];

/* which port counter each source counter is, for a QP's counter */
u8 rxe2_stat_of_pc[RXE2_PC_NUM] __ro_after_init;
u8 rxe2_stat_of_dp[RXE2_DPC_NUM] __ro_after_init;
u8 rxe2_stat_of_drop[RXE2_DROP_NUM] __ro_after_init;
/* rx_dropped: the sum of the drops */
static unsigned int rxe2_stat_drops __ro_after_init;

void rxe2_counters_init(void)
{
	int i;

	BUILD_BUG_ON(ARRAY_SIZE(rxe2_counters) != RXE2_NUM_STATS);
	BUILD_BUG_ON(RXE2_NUM_STATS > U8_MAX);
	for (i = 0; i < ARRAY_SIZE(rxe2_counters); i++) {
		unsigned int idx = rxe2_counters[i].idx;

		rxe2_counter_descs[i].name = rxe2_counters[i].name;
		switch (rxe2_counters[i].src) {
		case RXE2_SRC_PCPU:
			rxe2_stat_of_pc[idx] = i;
			break;
		case RXE2_SRC_DP:
			rxe2_stat_of_dp[idx] = i;
			break;
		case RXE2_SRC_DROP:
			rxe2_stat_of_drop[idx] = i;
			break;
		default:
			rxe2_stat_drops = i;
		}
	}
}

/* the port's and every QP counter's: the same names, the same indexes */
static struct rdma_hw_stats *rxe2_alloc_stats(void)
{
	return rdma_alloc_hw_stats_struct(rxe2_counter_descs,
					  ARRAY_SIZE(rxe2_counter_descs),
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

static struct rdma_hw_stats *rxe2_alloc_hw_port_stats(struct ib_device *ibdev,
						      u32 port)
{
	return rxe2_alloc_stats();
}

/*
 * What the device counted itself: everything but what QPs bound to a
 * counter counted there (ib_core adds the counters when it shows the
 * port).
 */
static int rxe2_get_hw_stats(struct ib_device *ibdev,
			     struct rdma_hw_stats *stats, u32 port, int index)
{
	struct rxe2_dev *rdev = to_rdev(ibdev);
	u64 pc[RXE2_PC_NUM] = {}, drops = 0;
	int cpu, i;

	for_each_possible_cpu(cpu)
		for (i = 0; i < RXE2_PC_NUM; i++)
			pc[i] += READ_ONCE(per_cpu_ptr(rdev->pcnt, cpu)->v[i]);
	for (i = 0; i < RXE2_DROP_NUM; i++)
		drops += atomic64_read(&rdev->rx_drops[i]);
	for (i = 0; i < ARRAY_SIZE(rxe2_counters); i++) {
		unsigned int idx = rxe2_counters[i].idx;

		switch (rxe2_counters[i].src) {
		case RXE2_SRC_PCPU:
			stats->value[i] = pc[idx];
			break;
		case RXE2_SRC_DP:
			stats->value[i] = atomic64_read(&rdev->dp_cnt[idx]);
			break;
		case RXE2_SRC_DROP:
			stats->value[i] = atomic64_read(&rdev->rx_drops[idx]);
			break;
		default:
			stats->value[i] = drops;
			break;
		}
	}
	return ARRAY_SIZE(rxe2_counters);
}

/* a QP event into its counter, if it has one; false: count it in the device */
bool rxe2_qp_count_slow(struct rxe2_qp *qp, unsigned int stat, u64 n)
{
	struct rxe2_counter *c;

	bool counted;

	rcu_read_lock();
	c = rcu_dereference(qp->ctr);
	counted = c;
	if (c)
		this_cpu_add(c->vals->v[stat], n);
	rcu_read_unlock();
	return counted;
}

static int rxe2_counter_new(struct rxe2_dev *rdev, u32 *id,
			    struct rxe2_counter **cp)
{
	struct rxe2_counter *c = kzalloc(sizeof(*c), GFP_KERNEL);
	int ret = -ENOMEM;

	if (!c)
		return ret;
	c->vals = alloc_percpu(struct rxe2_counter_vals);
	if (!c->vals)
		goto err_free;
	ret = xa_alloc(&rdev->counters, id, c, xa_limit_32b, GFP_KERNEL);
	if (ret)
		goto err_vals;
	*cp = c;
	return 0;

err_vals:
	free_percpu(c->vals);
err_free:
	kfree(c);
	return ret;
}

/*
 * Under the counter's mutex (ib_core); a new counter (counter->id 0)
 * gets its id here.  ib_core's check that the QP is not bound yet takes
 * no lock, so it is made again under the QP's.
 */
static int rxe2_counter_bind_qp(struct rdma_counter *counter,
				struct ib_qp *ibqp RXE2_COUNTER_PORT_PARAM)
{
	struct rxe2_dev *rdev = to_rdev(ibqp->device);
	struct rxe2_qp *qp = to_rqp(ibqp);
	struct rxe2_counter *c;
	int ret = 0;

	mutex_lock(&qp->state_lock);
	if (rcu_dereference_protected(qp->ctr,
				      lockdep_is_held(&qp->state_lock))) {
		ret = -EBUSY;
		goto out;
	}
	if (counter->id) {
		c = xa_load(&rdev->counters, counter->id);
		if (WARN_ON_ONCE(!c)) {
			ret = -EINVAL;
			goto out;
		}
	} else {
		ret = rxe2_counter_new(rdev, &counter->id, &c);
		if (ret)
			goto out;
	}
	c->nqps++;
	rcu_assign_pointer(qp->ctr, c);
	ibqp->counter = counter;
out:
	mutex_unlock(&qp->state_lock);
	return ret;
}

/* under the counter's mutex (ib_core), which keeps nqps */
static int rxe2_counter_unbind_qp(struct ib_qp *ibqp RXE2_COUNTER_PORT_PARAM)
{
	struct rxe2_qp *qp = to_rqp(ibqp);
	struct rxe2_counter *c;

	mutex_lock(&qp->state_lock);
	c = rcu_dereference_protected(qp->ctr,
				      lockdep_is_held(&qp->state_lock));
	RCU_INIT_POINTER(qp->ctr, NULL);
	ibqp->counter = NULL;
	mutex_unlock(&qp->state_lock);
	/*
	 * The last QP gone: ib_core reads the counter one last time and
	 * frees it next, so every count in progress must land first.
	 */
	if (c && !--c->nqps)
		synchronize_rcu();
	return 0;
}

/* every QP is unbound (and a grace period passed since the last) */
static int rxe2_counter_dealloc(struct rdma_counter *counter)
{
	struct rxe2_counter *c;

	if (!counter->id)
		return 0;
	c = xa_erase(&to_rdev(counter->device)->counters, counter->id);
	if (c) {
		free_percpu(c->vals);
		kfree(c);
	}
	return 0;
}

static struct rdma_hw_stats *
rxe2_counter_alloc_stats(struct rdma_counter *counter)
{
	return rxe2_alloc_stats();
}

static int rxe2_counter_update_stats(struct rdma_counter *counter)
{
	struct rxe2_counter *c;
	u64 *v = counter->stats->value;
	int cpu, i;

	c = xa_load(&to_rdev(counter->device)->counters, counter->id);
	if (!c)
		return -EINVAL;
	memset(v, 0, sizeof(*v) * RXE2_NUM_STATS);
	for_each_possible_cpu(cpu)
		for (i = 0; i < RXE2_NUM_STATS; i++)
			v[i] += READ_ONCE(per_cpu_ptr(c->vals, cpu)->v[i]);
	for (i = 0; i < RXE2_DROP_NUM; i++)
		v[rxe2_stat_drops] += v[rxe2_stat_of_drop[i]];
	return 0;
}

const struct ib_device_ops rxe2_counter_ops = {
	.alloc_hw_port_stats = rxe2_alloc_hw_port_stats,
	.get_hw_stats = rxe2_get_hw_stats,
	.counter_bind_qp = rxe2_counter_bind_qp,
	.counter_unbind_qp = rxe2_counter_unbind_qp,
	.counter_dealloc = rxe2_counter_dealloc,
	.counter_alloc_stats = rxe2_counter_alloc_stats,
	.counter_update_stats = rxe2_counter_update_stats,
	RXE2_COUNTER_OBJ_OPS
};
