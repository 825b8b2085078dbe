// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * librxe2: completion queues.  The kernel produces CQEs into a ring
 * mapped into the process; ibv_poll_cq() consumes them without a system
 * call.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rxe2.h"

struct ibv_cq *rxe2_create_cq(struct ibv_context *ibctx, int cqe,
			      struct ibv_comp_channel *channel,
			      int comp_vector)
{
	struct ibv_create_cq cmd = {};
	struct rxe2_create_cq_rsp rsp = {};
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
	if (err)
		goto err_free;

	err = ibv_cmd_create_cq(ibctx, cqe, channel, comp_vector, &cq->ibcq,
				&cmd, sizeof(cmd), &rsp.ibv_resp, sizeof(rsp));
	if (err)
		goto err_lock;

	/* ibcq.cqe is what the kernel granted: the ring must hold that many */
	if (cq->ibcq.cqe < 0) {
		err = EPROTO;
		goto err_destroy;
	}
	err = rxe2_ring_map(ibctx, &cq->ring, RXE2_RING_CQ, &rsp.drv.cq,
			    (uint32_t)cq->ibcq.cqe, RXE2_CQE_SIZE);
	if (err)
		goto err_destroy;
	return &cq->ibcq;

err_destroy:
	ibv_cmd_destroy_cq(&cq->ibcq);
err_lock:
	pthread_spin_destroy(&cq->lock);
err_free:
	free(cq);
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
	pthread_spin_destroy(&cq->lock);
	free(cq);
	return 0;
}

int rxe2_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	return ibv_cmd_req_notify_cq(ibcq, solicited_only);
}

static void rxe2_cqe_to_wc(const struct rxe2_cqe *cqe, struct ibv_wc *wc)
{
	memset(wc, 0, sizeof(*wc));
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

	/*
	 * Inline-receive is never requested yet (create_qp sends
	 * comp_mask 0), so no receive buffer was filled: say so rather
	 * than report data the application does not have.
	 */
	if ((cqe->flags & RXE2_CQE_F_INLINE) && wc->status == IBV_WC_SUCCESS) {
		wc->status = IBV_WC_GENERAL_ERR;
		wc->byte_len = 0;
	}
}

/*
 * Consume up to num_entries CQEs.  The producer index is loaded with
 * acquire semantics so the CQE bytes it covers are visible; each CQE is
 * copied out of shared memory once before it is interpreted; the
 * consumer index is published with release semantics only after the
 * copies, so the kernel never overwrites a slot still being read.
 */
int rxe2_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	struct rxe2_cq *cq = to_rcq(ibcq);
	struct rxe2_ring *ring = &cq->ring;
	uint32_t producer, avail, mask = ring->num_slots - 1;
	struct rxe2_cqe cqe;
	int n = 0;

	if (num_entries <= 0)
		return 0;

	pthread_spin_lock(&cq->lock);
	producer = __atomic_load_n(&ring->hdr->producer, __ATOMIC_ACQUIRE);
	avail = producer - ring->mine;
	if (avail > ring->num_slots) {
		/* the kernel claims more CQEs than the ring holds */
		pthread_spin_unlock(&cq->lock);
		errno = EIO;
		return -1;
	}

	while (n < num_entries && avail) {
		memcpy(&cqe, ring->slots +
		       (size_t)(ring->mine & mask) * ring->slot_size,
		       sizeof(cqe));
		rxe2_cqe_to_wc(&cqe, &wc[n]);
		ring->mine++;
		avail--;
		n++;
	}
	if (n)
		__atomic_store_n(&ring->hdr->consumer, ring->mine,
				 __ATOMIC_RELEASE);
	pthread_spin_unlock(&cq->lock);
	return n;
}
