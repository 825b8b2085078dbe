// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2: IBTA 1.5's memory placement operations at the responder.
 *
 * ATOMIC WRITE (RETH and 8 bytes of payload) stores the 8 bytes at an
 * 8-byte aligned address of an MR with remote write access, in one
 * store, serialised with the atomics (rxe2_atomic_store()).
 *
 * FLUSH (FETH then RETH, no payload) makes every RDMA WRITE placed
 * before it visible before its response leaves.  The responder writes
 * MR memory with the CPU, in PSN order, in process context; a full
 * barrier is all "global visibility" takes.  "Persistence" would need
 * persistent memory behind the MR, which a software device over DRAM
 * does not have: the device does not report it, MRs and QPs cannot ask
 * for it, and a FLUSH that does is an invalid request.  The range
 * (level RANGE) or the whole MR (level MR) names the memory: the rkey
 * and range are checked as for a WRITE, with FLUSH_GLOBAL access on the
 * QP and the MR.
 *
 * Both are answered by an RDMA READ response only with no payload,
 * remembered among the atomic results, and never executed twice.
 * Errors are NAKs as rdma_rxe sends them: a QP without the access, a
 * length other than 8, an unaligned address, an unknown placement type
 * or level is an invalid request; a bad rkey or range a remote access
 * error.
 */
#include "rxe2_dp.h"
#include "rxe2_responder.h"

struct rxe2_aw_arg {
	u64 val;
	bool split;		/* the operand is not in one piece */
};

static void rxe2_aw_store(void *addr, u32 len, void *arg)
{
	struct rxe2_aw_arg *a = arg;

	if (len < sizeof(a->val)) {
		a->split = true;
		return;
	}
	rxe2_atomic_store(addr, a->val);
}

/* 0, or the NAK code */
static int rxe2_resp_atomic_write(struct rxe2_qp *qp, struct rxe2_pkt *pkt)
{
	struct rxe2_reth *r = rxe2_pkt_ext(pkt, RXE2_OPF_RETH);
	u64 va = be64_to_cpu(r->va);
	struct rxe2_aw_arg a = {};
	struct rxe2_mr *mr;
	int ret;

	if (!(qp->attr.qp_access_flags & IB_ACCESS_REMOTE_WRITE) ||
	    ntohl(r->len) != RXE2_ATOMIC_LEN ||
	    pkt->paylen != RXE2_ATOMIC_LEN || !IS_ALIGNED(va, RXE2_ATOMIC_LEN))
		return RXE2_NAK_INV_REQ;
	mr = rxe2_resp_mr(qp, NULL, ntohl(r->rkey), &va, RXE2_ATOMIC_LEN,
			  IB_ACCESS_REMOTE_WRITE);
	if (!mr)
		return RXE2_NAK_REM_ACCESS;
	/* a zero-based window may start unaligned in its MR */
	if (!IS_ALIGNED(va, RXE2_ATOMIC_LEN)) {
		rxe2_mr_put(mr);
		return RXE2_NAK_INV_REQ;
	}
	memcpy(&a.val, pkt->payload, sizeof(a.val));
	ret = rxe2_mr_access(mr, va, RXE2_ATOMIC_LEN, true, rxe2_aw_store, &a);
	rxe2_mr_put(mr);
	return ret || a.split ? RXE2_NAK_REM_ACCESS : 0;
}

static int rxe2_resp_flush(struct rxe2_qp *qp, struct rxe2_pkt *pkt)
{
	struct rxe2_feth *f = rxe2_pkt_ext(pkt, RXE2_OPF_FETH);
	struct rxe2_reth *r = rxe2_pkt_ext(pkt, RXE2_OPF_RETH);
	u32 bits = ntohl(f->bits);
	u32 level = (bits & RXE2_FETH_SEL_MASK) >> RXE2_FETH_SEL_SHIFT;
	u64 va = be64_to_cpu(r->va);
	struct rxe2_mr *mr;

	if ((bits & RXE2_FETH_PLT_MASK) != RXE2_FLUSH_GLOBAL ||
	    level > RXE2_FLUSH_MR ||
	    !(qp->attr.qp_access_flags & RXE2_ACCESS_FLUSH_GLOBAL))
		return RXE2_NAK_INV_REQ;
	if (level == RXE2_FLUSH_MR) {
		mr = rxe2_mr_lookup(rxe2_qp_rdev(qp), ntohl(r->rkey),
				    rxe2_qp_pd(qp), RXE2_ACCESS_FLUSH_GLOBAL);
		if (mr && !rxe2_qp_may_use_mr(qp, mr)) {
			rxe2_mr_put(mr);
			mr = NULL;
		}
	} else {
		mr = rxe2_resp_mr(qp, NULL, ntohl(r->rkey), &va, ntohl(r->len),
				  RXE2_ACCESS_FLUSH_GLOBAL);
	}
	if (!mr)
		return RXE2_NAK_REM_ACCESS;
	rxe2_mr_put(mr);
	/* every earlier placement is visible before the response is sent */
	smp_mb();
	return 0;
}

/* a new ATOMIC WRITE or FLUSH request; caller holds state_lock */
void rxe2_resp_placement(struct rxe2_qp *qp, struct rxe2_pkt *pkt)
{
	int nak;

	if (pkt->opcode == RXE2_OP_ATOMIC_WRITE)
		nak = rxe2_resp_atomic_write(qp, pkt);
	else
		nak = rxe2_resp_flush(qp, pkt);
	if (nak)
		rxe2_resp_fatal(qp, pkt, nak, nak == RXE2_NAK_INV_REQ ?
				IB_WC_REM_INV_REQ_ERR : IB_WC_REM_ACCESS_ERR);
	else
		rxe2_resp_executed(qp, pkt, true, 0);
}
