// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * librxe2: completion queues.  The kernel produces CQEs into a ring
 * mapped into the process; ibv_poll_cq() and the extended polling API
 * (ibv_start_poll ...) consume them without a system call.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rxe2.h"
#include "rxe2dv.h"

/* What a CQE can answer: ibv_wc_flags_ex rxe2 supports */
#define RXE2_WC_EX_FLAGS (IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM |	\
			  IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP |	\
			  IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL |		\
			  IBV_WC_EX_WITH_DLID_PATH_BITS |			\
			  IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |			\
			  IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK |	\
			  IBV_WC_EX_WITH_FLOW_TAG | IBV_WC_EX_WITH_TM_INFO)

static struct rxe2_cq *rxe2_cq_alloc(struct ibv_context *ibctx,
				     struct ibv_comp_channel *channel)
{
	struct rxe2_cq *cq;
	int err;

	/* a channel of another context would deliver events to its owner */
	if (channel && channel->context != ibctx) {
		errno = EINVAL;
		return NULL;
	}

	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;
	err = pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	if (err) {
		free(cq);
		errno = err;
		return NULL;
	}
	return cq;
}

static void rxe2_cq_free(struct rxe2_cq *cq)
{
	pthread_spin_destroy(&cq->lock);
	free(cq);
}

/* After the kernel created the CQ: map the ring it described */
static int rxe2_cq_map(struct ibv_context *ibctx, struct rxe2_cq *cq,
		       const struct rxe2_create_cq_resp *resp)
{
	/* ibcq.cqe is what the kernel granted: the ring must hold that many */
	if (cq->vcq.cq.cqe < 0)
		return EPROTO;
	return rxe2_ring_map(ibctx, &cq->ring, RXE2_RING_CQ, &resp->cq,
			     (uint32_t)cq->vcq.cq.cqe, RXE2_CQE_SIZE);
}

struct ibv_cq *rxe2_create_cq(struct ibv_context *ibctx, int cqe,
			      struct ibv_comp_channel *channel,
			      int comp_vector)
{
	struct ibv_create_cq cmd = {};
	struct rxe2_create_cq_rsp rsp = {};
	struct rxe2_cq *cq;
	int err;

	cq = rxe2_cq_alloc(ibctx, channel);
	if (!cq)
		return NULL;

	err = ibv_cmd_create_cq(ibctx, cqe, channel, comp_vector, &cq->vcq.cq,
				&cmd, sizeof(cmd), &rsp.ibv_resp, sizeof(rsp));
	if (err)
		goto err_free;

	err = rxe2_cq_map(ibctx, cq, &rsp.drv);
	if (err)
		goto err_destroy;
	return &cq->vcq.cq;

err_destroy:
	ibv_cmd_destroy_cq(&cq->vcq.cq);
err_free:
	rxe2_cq_free(cq);
	errno = err;
	return NULL;
}

static int rxe2_check_cq_init_attr(struct ibv_context *ibctx,
				   const struct ibv_cq_init_attr_ex *attr)
{
	if (attr->comp_mask & ~(uint32_t)(IBV_CQ_INIT_ATTR_MASK_FLAGS |
					  IBV_CQ_INIT_ATTR_MASK_PD))
		return EOPNOTSUPP;
	/* IBV_CQ_INIT_ATTR_MASK_PD names a parent domain of this context */
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) &&
	    (!attr->parent_domain || attr->parent_domain->context != ibctx ||
	     !to_rpd(attr->parent_domain)->protection))
		return EINVAL;
	/* no VLANs in a CQE */
	if (attr->wc_flags & ~(uint64_t)RXE2_WC_EX_FLAGS)
		return EOPNOTSUPP;
	/* a CQ that may overrun silently is not one rxe2 makes */
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	    (attr->flags & ~(uint32_t)IBV_CREATE_CQ_ATTR_SINGLE_THREADED))
		return EOPNOTSUPP;
	if (attr->channel && attr->channel->context != ibctx)
		return EINVAL;
	return 0;
}

struct ibv_cq_ex *rxe2_create_cq_ex(struct ibv_context *ibctx,
				    struct ibv_cq_init_attr_ex *attr)
{
	struct ibv_create_cq_ex cmd = {};
	struct rxe2_create_cq_ex_rsp rsp = {};
	struct rxe2_cq *cq;
	int err;

	err = rxe2_check_cq_init_attr(ibctx, attr);
	if (err) {
		errno = err;
		return NULL;
	}
	cq = rxe2_cq_alloc(ibctx, attr->channel);
	if (!cq)
		return NULL;
	/* one thread polls: the application says so, or its thread domain */
	cq->single_threaded =
		((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
		 (attr->flags & IBV_CREATE_CQ_ATTR_SINGLE_THREADED)) ||
		((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) &&
		 rxe2_pd_single_thread(attr->parent_domain));
	cq->wallclock = attr->wc_flags &
			IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK;

	err = ibv_cmd_create_cq_ex(ibctx, attr,
#if RXE2_RDMA_CORE >= 59
				   NULL,	/* the ring is the kernel's */
#endif
				   &cq->vcq, &cmd, sizeof(cmd),
				   &rsp.ibv_resp, sizeof(rsp), 0);
	if (err)
		goto err_free;

	err = rxe2_cq_map(ibctx, cq, &rsp.drv);
	if (err)
		goto err_destroy;
	rxe2_cq_install_ex_ops(cq);
	if (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD)
		cq->parent = rxe2_parent_get(attr->parent_domain);
	return &cq->vcq.cq_ex;

err_destroy:
	ibv_cmd_destroy_cq(&cq->vcq.cq);
err_free:
	rxe2_cq_free(cq);
	errno = err;
	return NULL;
}

int rxe2_destroy_cq(struct ibv_cq *ibcq)
{
	struct rxe2_cq *cq = to_rcq(ibcq);
	int err;

	err = ibv_cmd_destroy_cq(ibcq);
	if (err)
		return err;
	rxe2_ring_unmap(&cq->ring);
	rxe2_parent_put(cq->parent);
	rxe2_cq_free(cq);
	return 0;
}

int rxe2_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	return ibv_cmd_req_notify_cq(ibcq, solicited_only);
}

/*
 * CQ moderation: the kernel holds an armed CQ's event back until count
 * completions or period us (rxe2_modify_cq() in rxe/rxe2_cq.c).
 */
int rxe2_modify_cq(struct ibv_cq *ibcq, struct ibv_modify_cq_attr *attr)
{
	struct ibv_modify_cq cmd = {};

	if (attr->attr_mask != IBV_CQ_ATTR_MODERATE)
		return EINVAL;
	return ibv_cmd_modify_cq(ibcq, attr, &cmd, sizeof(cmd));
}

static uint64_t rxe2_clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * The device clock that stamps completions is the kernel's
 * CLOCK_MONOTONIC in ns (hca_core_clock 1 GHz), which the process reads
 * itself.  As on mlx5, the raw clock is a count in tv_nsec.  (In a time
 * namespace the process's CLOCK_MONOTONIC carries the namespace's
 * offset and the kernel's stamps do not: the two then differ by it.)
 */
int rxe2_query_rt_values(struct ibv_context *ibctx,
			 struct ibv_values_ex *values)
{
	(void)ibctx;	/* one clock for every device */
	if (values->comp_mask & ~(uint32_t)IBV_VALUES_MASK_RAW_CLOCK)
		return EINVAL;
	if (values->comp_mask & IBV_VALUES_MASK_RAW_CLOCK) {
		values->raw_clock.tv_sec = 0;
		values->raw_clock.tv_nsec = rxe2_clock_ns(CLOCK_MONOTONIC);
	}
	return 0;
}

static void rxe2_cq_lock(struct rxe2_cq *cq)
{
	if (!cq->single_threaded)
		pthread_spin_lock(&cq->lock);
}

static void rxe2_cq_unlock(struct rxe2_cq *cq)
{
	if (!cq->single_threaded)
		pthread_spin_unlock(&cq->lock);
}

/*
 * The kernel moves the CQEs we have not consumed, counted from the
 * consumer we last published, to a new ring; under the CQ lock no
 * poller is between taking a CQE and publishing the consumer.  On
 * success the old ring receives nothing more: map the new one, drop
 * the old.  ibv_cmd_resize_cq() stores the granted size in ibcq->cqe.
 */
int rxe2_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct rxe2_cq *cq = to_rcq(ibcq);
	struct ibv_resize_cq cmd = {};
	struct rxe2_resize_cq_rsp rsp = {};
	struct rxe2_ring ring;
	int err;

	rxe2_cq_lock(cq);
	err = ibv_cmd_resize_cq(ibcq, cqe, &cmd, sizeof(cmd), &rsp.ibv_resp,
				sizeof(rsp));
	if (err)
		goto out;
	/*
	 * A new ring we cannot use (or map) is reported; the CQ keeps the
	 * old ring, where no CQE arrives any more.
	 */
	if (ibcq->cqe < cqe)
		err = EPROTO;
	else
		err = rxe2_ring_map(ibcq->context, &ring, RXE2_RING_CQ,
				    &rsp.drv.cq, (uint32_t)ibcq->cqe,
				    RXE2_CQE_SIZE);
	if (err)
		goto out;
	rxe2_ring_unmap(&cq->ring);
	cq->ring = ring;
out:
	rxe2_cq_unlock(cq);
	return err;
}

/*
 * Inline-receive: the kernel put the data and the SGEs of the WQE (as
 * the process posted them) after the CQE in its slot; scatter it now,
 * as the completion is reported.  The addresses are the application's
 * own and are not checked (rxe2dv_create_qp(3)).  A slot too small for
 * the layout, or a length the SGEs do not cover, is a broken CQE.  The
 * SGEs are copied out before they are used, like the CQE; the data is
 * only moved, never interpreted, so it goes from the slot to the buffers
 * directly (a bounce through the stack was a third copy of it).
 */
static bool rxe2_cq_scatter_inline(struct rxe2_cq *cq, const uint8_t *slot,
				   const struct rxe2_cqe *cqe)
{
	const uint8_t *data = slot + RXE2_CQE_INLINE_DATA_OFFSET;
	struct rxe2_sge sge[RXE2_INLINE_RECV_MAX_SGE];
	uint32_t len = cqe->byte_len, off = 0, i;

	if (cq->ring.slot_size < RXE2_CQ_INLINE_SLOT_SIZE ||
	    len > RXE2_INLINE_RECV_MAX ||
	    cqe->inline_num_sge > RXE2_INLINE_RECV_MAX_SGE)
		return false;
	memcpy(sge, slot + RXE2_CQE_INLINE_SGE_OFFSET,
	       cqe->inline_num_sge * sizeof(sge[0]));
	for (i = 0; i < cqe->inline_num_sge && off < len; i++) {
		uint32_t n = len - off;

		if (n > sge[i].length)
			n = sge[i].length;
		memcpy((void *)(uintptr_t)sge[i].addr, data + off, n);
		off += n;
	}
	return off == len;
}

/*
 * Copy the CQE at our consumer out of shared memory, once, before any of
 * it is interpreted; an inline-received completion delivers its data.
 */
static void rxe2_cq_take(struct rxe2_cq *cq, struct rxe2_cqe *cqe)
{
	const uint8_t *slot = rxe2_ring_slot(&cq->ring, cq->ring.mine);

	memcpy(cqe, slot, sizeof(*cqe));
	if ((cqe->flags & RXE2_CQE_F_INLINE) && cqe->status == IBV_WC_SUCCESS) {
		if (rxe2_cq_scatter_inline(cq, slot, cqe)) {
			cqe->wc_flags |= RXE2DV_WC_INLINE_RECV;
		} else {
			cqe->status = IBV_WC_GENERAL_ERR;
			cqe->byte_len = 0;
		}
	}
	cq->ring.mine++;
}

/*
 * CQEs the kernel has produced beyond our consumer, the producer loaded
 * with acquire semantics so the CQE bytes it covers are visible.  A
 * producer that claims more than the ring holds is a broken CQ: EIO.
 */
static int rxe2_cq_avail(struct rxe2_cq *cq, uint32_t *producer,
			 uint32_t *avail)
{
	struct rxe2_ring *ring = &cq->ring;

	*producer = __atomic_load_n(&ring->hdr->producer, __ATOMIC_ACQUIRE);
	*avail = *producer - ring->mine;
	return *avail > ring->num_slots ? EIO : 0;
}

/* Publish our consumer once the CQEs are copied out: the slots are free */
static void rxe2_cq_release(struct rxe2_cq *cq)
{
	__atomic_store_n(&cq->ring.hdr->consumer, cq->ring.mine,
			 __ATOMIC_RELEASE);
}

static void rxe2_cqe_to_wc(const struct rxe2_cqe *cqe, struct ibv_wc *wc)
{
	wc->wr_id = cqe->wr_id;
	wc->status = (enum ibv_wc_status)cqe->status;
	wc->opcode = (enum ibv_wc_opcode)cqe->opcode;
	wc->vendor_err = cqe->vendor_err;
	wc->byte_len = cqe->byte_len;
	/* imm_data stays big endian; invalidated_rkey shares its bytes */
	wc->imm_data = cqe->ex;
	wc->qp_num = cqe->qp_num;
	wc->src_qp = cqe->src_qp;
	wc->wc_flags = cqe->wc_flags;
	wc->pkey_index = cqe->pkey_index;
	wc->slid = cqe->slid;
	wc->sl = cqe->sl;
	wc->dlid_path_bits = cqe->dlid_path_bits;
}

/*
 * Consume up to num_entries CQEs; the consumer index is published with
 * release semantics only after the copies, so the kernel never
 * overwrites a slot still being read.
 */
int rxe2_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	struct rxe2_cq *cq = to_rcq(ibcq);
	uint32_t producer, avail;
	struct rxe2_cqe cqe;
	int n = 0;

	if (num_entries <= 0)
		return 0;

	rxe2_cq_lock(cq);
	if (rxe2_cq_avail(cq, &producer, &avail)) {
		rxe2_cq_unlock(cq);
		errno = EIO;
		return -1;
	}
	while (n < num_entries && avail) {
		rxe2_cq_take(cq, &cqe);
		rxe2_cqe_to_wc(&cqe, &wc[n]);
		avail--;
		n++;
	}
	if (n)
		rxe2_cq_release(cq);
	rxe2_cq_unlock(cq);
	return n;
}

/*
 * Whether a CQE in the ring is one rxe2_cq_clean() removes: the QP's,
 * except the successful receives of a QP on an SRQ (their buffers are
 * the SRQ's; this completion is the only way the application gets them
 * back, where mlx5 puts them back on the SRQ).
 */
static bool rxe2_cqe_is_stale(const struct rxe2_cqe *cqe, uint32_t qpn,
			      bool on_srq)
{
	if (cqe->qp_num != qpn)
		return false;
	return !(on_srq && (cqe->opcode & IBV_WC_RECV) &&
		 cqe->status == IBV_WC_SUCCESS);
}

/*
 * ibv_modify_qp() to RESET removes the QP's completions from its CQ, as
 * mlx5 does: a QP reset and reconnected after an error must not report
 * the old flushes as the first completions of its new life (rdma-core's
 * test_mr rereg tests poll exactly that).  Once the reset returned the
 * kernel produces nothing more for the QP; what it produces for other
 * QPs lands at or past the producer read here, which the sweep leaves
 * alone.  Walking from the newest CQE back to our consumer, the kept
 * ones move towards the producer over the removed ones, then the
 * consumer steps over the freed slots and is published.
 */
void rxe2_cq_clean(struct rxe2_cq *cq, uint32_t qpn, bool on_srq)
{
	struct rxe2_ring *ring = &cq->ring;
	uint32_t producer, avail, idx, freed = 0;
	struct rxe2_cqe cqe;

	rxe2_cq_lock(cq);
	if (rxe2_cq_avail(cq, &producer, &avail))
		goto out;	/* a broken ring: the next poll says EIO */
	for (idx = producer; idx-- != ring->mine;) {
		uint8_t *slot = rxe2_ring_slot(ring, idx);

		memcpy(&cqe, slot, sizeof(cqe));
		if (rxe2_cqe_is_stale(&cqe, qpn, on_srq))
			freed++;
		else if (freed)
			memcpy(rxe2_ring_slot(ring, idx + freed), slot,
			       ring->slot_size);
	}
	if (freed) {
		ring->mine += freed;
		rxe2_cq_release(cq);
	}
out:
	rxe2_cq_unlock(cq);
}

/* ------------------------------------------------------------------ */
/* Extended polling: ibv_start_poll / ibv_next_poll / ibv_end_poll     */
/* ------------------------------------------------------------------ */

/*
 * start_poll takes the CQ lock and keeps it until end_poll (or until it
 * fails: then the caller does not call end_poll).  Each CQE is copied
 * to cq->cur, where the read_* getters find it; the consumer moves in
 * end_poll.
 */
static void rxe2_cq_report(struct rxe2_cq *cq)
{
	struct ibv_cq_ex *ibcq = &cq->vcq.cq_ex;

	rxe2_cq_take(cq, &cq->cur);
	ibcq->wr_id = cq->cur.wr_id;
	ibcq->status = (enum ibv_wc_status)cq->cur.status;
}

/*
 * Wall-clock completion times are the device's monotonic stamps moved
 * by the offset between the two clocks, read once per start_poll
 * between two monotonic reads: a batch shares one offset, so its
 * stamps keep their order.  Of three samples the one with the shortest
 * gap wins: a thread preempted between the reads (a VM's vCPU) would
 * otherwise be off by half the preemption.
 */
static void rxe2_cq_wall_offset(struct rxe2_cq *cq)
{
	uint64_t best_gap = UINT64_MAX;
	int i;

	for (i = 0; i < 3; i++) {
		uint64_t before = rxe2_clock_ns(CLOCK_MONOTONIC);
		uint64_t real = rxe2_clock_ns(CLOCK_REALTIME);
		uint64_t after = rxe2_clock_ns(CLOCK_MONOTONIC);

		if (after - before >= best_gap)
			continue;
		best_gap = after - before;
		cq->wall_offset =
			(int64_t)(real - (before + (after - before) / 2));
	}
}

static int rxe2_start_poll(struct ibv_cq_ex *ibcq,
			   struct ibv_poll_cq_attr *attr)
{
	struct rxe2_cq *cq = to_rcq_ex(ibcq);
	uint32_t avail;
	int err;

	if (attr->comp_mask)
		return EINVAL;

	rxe2_cq_lock(cq);
	err = rxe2_cq_avail(cq, &cq->ex_producer, &avail);
	if (!err && !avail)
		err = ENOENT;
	if (err) {
		rxe2_cq_unlock(cq);
		return err;
	}
	if (cq->wallclock)
		rxe2_cq_wall_offset(cq);
	rxe2_cq_report(cq);
	return 0;
}

static int rxe2_next_poll(struct ibv_cq_ex *ibcq)
{
	struct rxe2_cq *cq = to_rcq_ex(ibcq);
	uint32_t avail;
	int err;

	if (cq->ex_producer == cq->ring.mine) {
		err = rxe2_cq_avail(cq, &cq->ex_producer, &avail);
		if (err)
			return err;
		if (!avail)
			return ENOENT;
	}
	rxe2_cq_report(cq);
	return 0;
}

static void rxe2_end_poll(struct ibv_cq_ex *ibcq)
{
	struct rxe2_cq *cq = to_rcq_ex(ibcq);

	rxe2_cq_release(cq);
	rxe2_cq_unlock(cq);
}

static enum ibv_wc_opcode rxe2_read_opcode(struct ibv_cq_ex *ibcq)
{
	return (enum ibv_wc_opcode)to_rcq_ex(ibcq)->cur.opcode;
}

static uint32_t rxe2_read_vendor_err(struct ibv_cq_ex *ibcq)
{
	return to_rcq_ex(ibcq)->cur.vendor_err;
}

static uint32_t rxe2_read_byte_len(struct ibv_cq_ex *ibcq)
{
	return to_rcq_ex(ibcq)->cur.byte_len;
}

/* imm_data (big endian) or the invalidated rkey, as wc_flags say */
static __be32 rxe2_read_imm_data(struct ibv_cq_ex *ibcq)
{
	return (__be32)to_rcq_ex(ibcq)->cur.ex;
}

/* a raw packet QP's frame: the tag of the flow that took it, else 0 */
static uint32_t rxe2_read_flow_tag(struct ibv_cq_ex *ibcq)
{
	return to_rcq_ex(ibcq)->cur.ex;
}

/*
 * A tag matching receive that matched: the TMH's tag and app_ctx (the
 * kernel puts app_ctx in src_qp); 0 and 0 for any other completion.
 */
static void rxe2_read_tm_info(struct ibv_cq_ex *ibcq,
			      struct ibv_wc_tm_info *tm_info)
{
	const struct rxe2_cqe *cqe = &to_rcq_ex(ibcq)->cur;

	tm_info->tag = cqe->tm_tag;
	tm_info->priv = cqe->src_qp;
}

static uint32_t rxe2_read_qp_num(struct ibv_cq_ex *ibcq)
{
	return to_rcq_ex(ibcq)->cur.qp_num;
}

static uint32_t rxe2_read_src_qp(struct ibv_cq_ex *ibcq)
{
	return to_rcq_ex(ibcq)->cur.src_qp;
}

static unsigned int rxe2_read_wc_flags(struct ibv_cq_ex *ibcq)
{
	return to_rcq_ex(ibcq)->cur.wc_flags;
}

static uint32_t rxe2_read_slid(struct ibv_cq_ex *ibcq)
{
	return to_rcq_ex(ibcq)->cur.slid;
}

static uint8_t rxe2_read_sl(struct ibv_cq_ex *ibcq)
{
	return to_rcq_ex(ibcq)->cur.sl;
}

static uint8_t rxe2_read_dlid_path_bits(struct ibv_cq_ex *ibcq)
{
	return to_rcq_ex(ibcq)->cur.dlid_path_bits;
}

/*
 * No CQE of rxe2 carries a VLAN (create_cq_ex refuses
 * IBV_WC_EX_WITH_CVLAN): 0, as for a field a CQ did not ask for.  A
 * reader all the same, since ibv_wc_read_cvlan() calls the pointer
 * unchecked and a NULL one would crash the program.
 */
static uint16_t rxe2_read_cvlan(struct ibv_cq_ex *ibcq)
{
	(void)ibcq;
	return 0;
}

/* the device clock (CLOCK_MONOTONIC, ns) when the kernel wrote the CQE */
static uint64_t rxe2_read_completion_ts(struct ibv_cq_ex *ibcq)
{
	return to_rcq_ex(ibcq)->cur.timestamp;
}

static uint64_t rxe2_read_completion_wallclock_ns(struct ibv_cq_ex *ibcq)
{
	struct rxe2_cq *cq = to_rcq_ex(ibcq);

	return cq->cur.timestamp + (uint64_t)cq->wall_offset;
}

/*
 * Every getter is installed whatever wc_flags asked for (a timestamp
 * reads 0 in a CQ that did not ask for one, a VLAN always 0):
 * libibverbs' ibv_wc_read_*() call them without a check.
 */
void rxe2_cq_install_ex_ops(struct rxe2_cq *cq)
{
	struct ibv_cq_ex *ibcq = &cq->vcq.cq_ex;

	ibcq->start_poll = rxe2_start_poll;
	ibcq->next_poll = rxe2_next_poll;
	ibcq->end_poll = rxe2_end_poll;
	ibcq->read_opcode = rxe2_read_opcode;
	ibcq->read_vendor_err = rxe2_read_vendor_err;
	ibcq->read_byte_len = rxe2_read_byte_len;
	ibcq->read_imm_data = rxe2_read_imm_data;
	ibcq->read_flow_tag = rxe2_read_flow_tag;
	ibcq->read_tm_info = rxe2_read_tm_info;
	ibcq->read_qp_num = rxe2_read_qp_num;
	ibcq->read_src_qp = rxe2_read_src_qp;
	ibcq->read_wc_flags = rxe2_read_wc_flags;
	ibcq->read_slid = rxe2_read_slid;
	ibcq->read_sl = rxe2_read_sl;
	ibcq->read_dlid_path_bits = rxe2_read_dlid_path_bits;
	ibcq->read_cvlan = rxe2_read_cvlan;
	ibcq->read_completion_ts = rxe2_read_completion_ts;
	ibcq->read_completion_wallclock_ns = rxe2_read_completion_wallclock_ns;
}
