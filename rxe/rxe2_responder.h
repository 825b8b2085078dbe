/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rxe2: the responder (IBTA's word): request packets are placed into
 * MRs or receive WQEs, answered with ACKs, NAKs, READ responses and
 * atomic ACKs, and complete receive WQEs (rxe2_resp.c); ATOMIC WRITE
 * and FLUSH are placed by rxe2_place.c.  The receive WQE's steps are
 * here for every QP that takes them (raw packet QPs, XRC, WQs, tag
 * matching).  RC packets that come early are kept until their turn
 * (rxe2_reorder.c): requests for the responder, which owes and pays
 * their ACKs, READ responses for the completer; its callers are the
 * receive path and the responder, so it is declared with the latter.
 * The layout of the data-path headers is in rxe2_dp.h.
 */
#ifndef RXE2_RESPONDER_H
#define RXE2_RESPONDER_H

#include "rxe2_dp.h"

/* rxe2_resp.c */
void rxe2_resp_rx(struct rxe2_qp *qp, struct rxe2_pkt *pkt);
void rxe2_resp_reset(struct rxe2_qp *qp);
void rxe2_resp_drop_holds(struct rxe2_qp *qp);
void rxe2_resp_read_cont(struct rxe2_qp *qp);
void rxe2_send_ack(struct rxe2_qp *qp, u8 syndrome, u32 psn);
void rxe2_send_empty_read_resp(struct rxe2_qp *qp, u32 psn);
void rxe2_resp_fatal(struct rxe2_qp *qp, struct rxe2_pkt *pkt, u8 nak,
		     int status);
struct rxe2_mr *rxe2_resp_mr(struct rxe2_qp *qp, struct rxe2_mr_hold *hold,
			     u32 rkey, u64 *va, u32 len, int access);
void rxe2_resp_executed(struct rxe2_qp *qp, struct rxe2_pkt *pkt,
			bool placement, u64 orig);
void rxe2_atomic_store(u64 *p, u64 v);
/* the receive WQE of a message: taken, checked, filled, completed */
bool rxe2_resp_rwqe_fits(struct rxe2_qp *qp, u32 len);
bool rxe2_resp_datagram_rwqe(struct rxe2_qp *qp, u32 len);
int rxe2_resp_place(struct rxe2_qp *qp, void *buf, u32 len);
void rxe2_recv_cqe(struct rxe2_qp *qp, u64 wr_id, int status,
		   u32 opcode, u32 len, u32 flags, u32 ex, bool solicited);
int rxe2_resp_get_rwqe(struct rxe2_qp *qp);
void rxe2_recv_cqe_init(struct rxe2_qp *qp, struct rxe2_cqe_inline *ic,
			u64 wr_id, int status, u32 opcode, u32 len);
void rxe2_recv_cqe_post(struct rxe2_qp *qp, struct rxe2_cqe_inline *ic,
			bool solicited);

/* rxe2_place.c: IBTA 1.5 ATOMIC WRITE and FLUSH at the responder */
void rxe2_resp_placement(struct rxe2_qp *qp, struct rxe2_pkt *pkt);

/* packets that came early on an RC QP (rxe2_reorder.c) */
bool rxe2_reorder_hold(struct rxe2_qp *qp, struct rxe2_pkt *pkt);
struct sk_buff *rxe2_reorder_next(struct rxe2_qp *qp);
bool rxe2_reorder_ready(struct rxe2_qp *qp);
void rxe2_reorder_requeue(struct rxe2_qp *qp, struct sk_buff *skb);
void rxe2_reorder_owe_ack(struct rxe2_qp *qp, u32 psn);
void rxe2_reorder_drained(struct rxe2_qp *qp);
void rxe2_reorder_pay_ack(struct rxe2_qp *qp);
void rxe2_reorder_after_drain(struct rxe2_qp *qp);
void rxe2_reorder_purge(struct rxe2_qp *qp);

#endif /* RXE2_RESPONDER_H */
