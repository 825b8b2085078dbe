// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2: XRC, the extended reliable connection.
 *
 * An XRC initiator (IB_QPT_XRC_INI) is an RC requester whose requests
 * carry an XRCETH naming an XRC SRQ at the target; it has no receive
 * side.  An XRC target (IB_QPT_XRC_TGT) is an RC responder of an XRC
 * domain with nothing of its own to receive into: each request names
 * the XRC SRQ whose receive WQEs, CQ and PD it uses, for SENDs and for
 * the rkeys of RDMA and atomic operations alike.  ib_core owns the
 * domains and shares targets between processes (ibv_open_qp).
 *
 * Here a request finds its SRQ (rxe2_xrc_resp_rx()) and holds it while
 * rxe2_resp_rx() handles it, through dp.resp.xrc_srq, which rxe2_qp_pd(),
 * rxe2_qp_recv_cq() and rxe2_qp_srq() read.  The packets of one message
 * must all name its SRQ.  An XRCETH that names no XRC SRQ of the
 * target's domain is an invalid request (NAK, the target to ERROR), as
 * for any malformed RC request.  Everything runs under the target's
 * state_lock; the SRQ reference keeps destroy_srq waiting, never long.
 */
#include "rxe2_dp.h"
#include "rxe2_responder.h"

/* the PD of an XRC target between requests: nothing is in it */
struct ib_pd rxe2_xrc_no_pd;

int rxe2_alloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	return rxe2_check_udata_in_empty(udata);
}

int rxe2_dealloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	return 0;
}

/*
 * Hold the XRC SRQ srqn for the request being handled: one of the
 * target's domain, and the very one of serial unless that is 0.
 */
bool rxe2_xrc_srq_enter(struct rxe2_qp *qp, u32 srqn, u64 serial)
{
	struct rxe2_srq *srq;

	/* one at a time: a second would leak the first one's reference */
	if (WARN_ON_ONCE(qp->dp.resp.xrc_srq))
		return false;
	srq = rxe2_xrc_srq_get(rxe2_qp_rdev(qp), srqn);
	if (!srq)
		return false;
	if (srq->ibsrq.ext.xrc.xrcd != qp->xrcd ||
	    (serial && srq->serial != serial)) {
		rxe2_srq_put(srq);
		return false;
	}
	qp->dp.resp.xrc_srq = srq;
	return true;
}

/* done with the SRQ: completions it got are announced before it may go */
void rxe2_xrc_srq_leave(struct rxe2_qp *qp)
{
	struct rxe2_srq *srq = qp->dp.resp.xrc_srq;

	if (!srq)
		return;
	qp->dp.resp.xrc_srq = NULL;
	rxe2_cq_notify(to_rcq(srq->ibsrq.ext.cq));
	rxe2_srq_put(srq);
}

/*
 * A request whose XRCETH names no XRC SRQ the target may use.  A new
 * one is an invalid request; the receive WQE of the message it cuts
 * short fails on its own SRQ's CQ (when that SRQ is still there).  A
 * duplicate is only dropped.
 */
static void rxe2_xrc_bad_srq(struct rxe2_qp *qp, struct rxe2_pkt *pkt,
			     bool new)
{
	struct rxe2_qp_dp *dp = &qp->dp;

	rxe2_qp_dropped(qp, RXE2_DROP_XRC_SRQ);
	if (!new)
		return;
	if (dp->resp.have_rwqe &&
	    !rxe2_xrc_srq_enter(qp, dp->resp.xrc_msg_srqn,
				dp->resp.xrc_msg_serial))
		dp->resp.have_rwqe = false;
	rxe2_resp_fatal(qp, pkt, RXE2_NAK_INV_REQ, IB_WC_REM_INV_REQ_ERR);
	rxe2_xrc_srq_leave(qp);
}

/* a request to an XRC target; caller holds state_lock */
void rxe2_xrc_resp_rx(struct rxe2_qp *qp, struct rxe2_pkt *pkt)
{
	struct rxe2_qp_dp *dp = &qp->dp;
	struct rxe2_xrceth *x = rxe2_pkt_ext(pkt, RXE2_OPF_XRCETH);
	u32 srqn = ntohl(x->srqn) & RXE2_XRC_SRQN_MASK;
	int d = rxe2_psn_diff(pkt->psn, dp->resp.psn);
	bool ok;

	/*
	 * Answered without an SRQ: a PSN ahead (sequence NAK), a duplicate
	 * other than a READ (an ACK, or an atomic's saved result).
	 */
	if (d > 0 || (d < 0 && !(pkt->flags & RXE2_OPF_READ))) {
		rxe2_resp_rx(qp, pkt);
		return;
	}
	/*
	 * Within a message, only its SRQ: a completion, even an error one,
	 * must not reach another SRQ's CQ, which may be another process's.
	 */
	if (d == 0 && dp->resp.in_msg)
		ok = srqn == dp->resp.xrc_msg_srqn &&
		     rxe2_xrc_srq_enter(qp, srqn, dp->resp.xrc_msg_serial);
	else
		ok = rxe2_xrc_srq_enter(qp, srqn, 0);
	if (!ok) {
		rxe2_xrc_bad_srq(qp, pkt, d == 0);
		return;
	}
	rxe2_resp_rx(qp, pkt);
	/* a SEND or WRITE that goes on in later packets keeps its SRQ */
	if (d == 0 && (pkt->flags & RXE2_OPF_FIRST) && dp->resp.in_msg) {
		dp->resp.xrc_msg_srqn = srqn;
		dp->resp.xrc_msg_serial = dp->resp.xrc_srq->serial;
	}
	rxe2_xrc_srq_leave(qp);
}
