/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rxe2: the requester (IBTA's word): send WQEs become request packets
 * (rxe2_req.c) and the answers to them, ACKs, NAKs, READ responses and
 * atomic ACKs, become SQ completions, with retry and RNR waits
 * (rxe2_comp.c, the completer).  What holds the requester back is here
 * with it: how much an RC QP keeps in flight and how long it waits for
 * an ACK (rxe2_cc.c), and a QP's rate limit (rxe2_pace.c).  The layout
 * of the data-path headers is in rxe2_dp.h.
 */
#ifndef RXE2_REQUESTER_H
#define RXE2_REQUESTER_H

#include "rxe2_dp.h"

/* send WQE opcodes (enum ib_uverbs_wr_opcode, RXE2_WR_*) */
static inline bool rxe2_is_atomic(u32 op)
{
	return op == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP ||
	       op == IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD;
}

/* IBTA 1.5's ATOMIC WRITE and FLUSH: no SGE, the WQE says it all */
static inline bool rxe2_is_placement(u32 op)
{
	return op == RXE2_WR_ATOMIC_WRITE || op == RXE2_WR_FLUSH;
}

/*
 * Those whose response carries what the WQE waits for (READ data, an
 * atomic's original value): a later ACK does not complete them.
 */
static inline bool rxe2_needs_data_response(u32 op)
{
	return op == IB_UVERBS_WR_RDMA_READ || rxe2_is_atomic(op);
}

/*
 * Operations that take one of the responder's RDMA READ/atomic resources
 * (max_rd_atomic) and are answered by a response of their own: READ,
 * the atomics, ATOMIC WRITE and FLUSH.
 */
static inline bool rxe2_is_read_or_atomic(u32 op)
{
	return rxe2_needs_data_response(op) || rxe2_is_placement(op);
}

/* rxe2_req.c */
void rxe2_req_run(struct rxe2_qp *qp, int *budget);
void rxe2_req_rewind(struct rxe2_qp *qp, u32 psn);
u32 rxe2_req_skip(struct rxe2_qp *qp, u32 to);
bool rxe2_req_reread(struct rxe2_qp *qp, u32 idx, u32 psn, u32 npkts);
/* READs and atomics sent and unanswered; caller holds state_lock */
u32 rxe2_req_rd_inflight(struct rxe2_qp *qp);
int rxe2_post_send_kernel(struct rxe2_qp *qp, const struct ib_send_wr *wr,
			  const struct ib_send_wr **bad_wr);

/* rxe2_comp.c */
void rxe2_comp_rx(struct rxe2_qp *qp, struct rxe2_pkt *pkt);
void rxe2_comp_reread(struct rxe2_qp *qp, u32 upto);
void rxe2_comp_reread_rest(struct rxe2_qp *qp);
bool rxe2_comp_waits_answer(struct rxe2_qp *qp);
void rxe2_comp_retire(struct rxe2_qp *qp);
void rxe2_comp_timers(struct rxe2_qp *qp);
void rxe2_comp_arm_retry(struct rxe2_qp *qp);
void rxe2_comp_flush_wqes(struct rxe2_qp *qp);
void rxe2_comp_sqd_check(struct rxe2_qp *qp);

/* rxe2_cc.c: the RC requester's window and ACK timeout */
void rxe2_cc_init(struct rxe2_qp *qp);
bool rxe2_cc_may_send(struct rxe2_qp *qp);
void rxe2_cc_sent(struct rxe2_qp *qp, u32 psn);
void rxe2_cc_acked(struct rxe2_qp *qp, u32 n);
void rxe2_cc_seq_nak(struct rxe2_qp *qp, u32 psn);
void rxe2_cc_peer_keeps(struct rxe2_qp *qp);
void rxe2_cc_probe_rewind(struct rxe2_qp *qp, u32 psn);
bool rxe2_cc_gap_only(struct rxe2_qp *qp, u32 psn);
void rxe2_cc_gap_closed(struct rxe2_qp *qp);
void rxe2_cc_gap_passed(struct rxe2_qp *qp);
void rxe2_cc_timeout(struct rxe2_qp *qp);
void rxe2_cc_resend(struct rxe2_qp *qp);
unsigned long rxe2_cc_rto(struct rxe2_qp *qp);
unsigned long rxe2_cc_probe(struct rxe2_qp *qp, unsigned long rto);

/* rxe2_pace.c: IBV_QP_RATE_LIMIT */
void rxe2_pace_init(struct rxe2_qp *qp);
void rxe2_pace_set(struct rxe2_qp *qp, u32 rate_kbps);
bool rxe2_pace_may_send(struct rxe2_qp *qp);
void rxe2_pace_sent(struct rxe2_qp *qp, u32 hdr_payload);
void rxe2_pace_frame_sent(struct rxe2_qp *qp, u32 frame_len);

#endif /* RXE2_REQUESTER_H */
