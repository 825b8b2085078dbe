/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rxe2: packets out and in, the data path's edge (the layout of the
 * data-path headers is in rxe2_dp.h).  Transmit builds the IP, UDP and
 * ICRC around a request or response and sends it (rxe2_tx.c,
 * rxe2_icrc.c); receive takes a packet from the netdev's hook, checks
 * it and queues it on its QP (rxe2_rx.c).  Between two QPs of this
 * host a packet, an ACK or a one-copy request is handed over instead
 * (rxe2_loop.c), and packet sockets see copies of it (rxe2_tap.c).  Raw
 * packet QPs send and receive whole frames (rxe2_raw.c).  The formats
 * on the wire are rxe2_hdr.h's; the netdev's side (hooks, GIDs) is
 * rxe2_net.c's, in rxe2.h.
 */
#ifndef RXE2_WIRE_H
#define RXE2_WIRE_H

#include "rxe2_dp.h"

struct rxe2_sge_cursor;
struct rxe2_src;

/* rxe2_tx.c */
struct sk_buff *rxe2_tx_alloc(struct rxe2_qp *qp, unsigned int hdr_len,
			      unsigned int paylen, struct rxe2_bth **bth);
int rxe2_tx_send(struct rxe2_qp *qp, const struct rxe2_av *av, u16 sport,
		 struct sk_buff *skb);
struct rxe2_bth *rxe2_tx_begin(struct rxe2_qp *qp, unsigned int hdr_len,
			       unsigned int paylen, bool direct,
			       struct sk_buff **skb);
int rxe2_tx_direct(struct rxe2_qp *qp, const struct rxe2_av *av, u16 sport,
		   struct rxe2_sge_cursor *c, u32 len,
		   struct rxe2_mr_hold *hold, u64 *seq);
bool rxe2_tx_may_call(struct rxe2_dev *rdev);
int rxe2_tx_direct_resp(struct rxe2_qp *qp, u8 *hdr, u32 hdr_len,
			struct rxe2_mr *mr, u64 iova, u32 len);
int rxe2_tx_finish(struct rxe2_qp *qp, const struct rxe2_av *av, u16 sport,
		   struct sk_buff *skb);
void rxe2_bth_init(struct rxe2_bth *bth, u8 opcode, bool se, u32 pad,
		   u32 dqpn, bool ackreq, u32 psn);
u16 rxe2_src_port(u32 lqpn, u32 rqpn, u32 flow_label);
extern bool rxe2_flush_icrc_rxe;
/* for the taps' copies (rxe2_tap.c) and the loopback hand-over (rxe2_loop.c) */
unsigned int rxe2_tx_headroom(const struct net_device *ndev);
void rxe2_tx_icrc(struct sk_buff *skb, bool ipv6, unsigned int tlen);
struct sk_buff *rxe2_tx_call_skb(struct net_device *ndev,
				 const struct rxe2_av *av, u16 sport,
				 const void *hdr, u32 len);
bool rxe2_tx_lo_tapped(struct net_device *ndev);

/* rxe2_icrc.c */
u32 rxe2_icrc(struct sk_buff *skb, bool ipv6, unsigned int bth_off,
	      unsigned int len);
u32 rxe2_icrc_rxe_flush(struct sk_buff *skb, bool ipv6, unsigned int bth_off,
			unsigned int len);

/* rxe2_rx.c */
unsigned int rxe2_rx_hook(struct rxe2_dev *rdev, struct sk_buff *skb,
			  unsigned int net_off, bool ipv6);
unsigned int rxe2_rx_hook_mcast(struct net_device *ndev,
				const struct in6_addr *daddr,
				struct sk_buff *skb, bool ipv6);
bool rxe2_rx_queue(struct rxe2_qp *qp, struct sk_buff *skb);
bool rxe2_rx_direct_check(struct rxe2_qp *qp, u8 *hdr, u32 hdr_len,
			  u32 paylen, struct rxe2_pkt *pkt);
void rxe2_rx_direct_take(struct rxe2_qp *qp, struct rxe2_pkt *pkt,
			 struct rxe2_src *src);
bool rxe2_rx_queue_frame(struct rxe2_qp *qp, struct sk_buff *skb);
void rxe2_rx_run(struct rxe2_qp *qp);
struct rxe2_qp *rxe2_rx_loop_target(struct net *net,
				    const struct in6_addr *daddr, u32 qpn,
				    bool *local);

/* rxe2_loop.c: the loopback hand-over */
/* QPs a runner's transmit woke on this host (rxe2_catch_begin()) */
struct rxe2_catch {
	unsigned int n;
	struct rxe2_qp *qp[4];
};

void rxe2_qp_deliver(struct rxe2_qp *from, struct rxe2_qp *to,
		     struct sk_buff *skb);
bool rxe2_qp_deliver_ack(struct rxe2_qp *from, struct rxe2_qp *to, u32 smsn,
			 u32 psn);
bool rxe2_qp_deliver_req(struct rxe2_qp *from, struct rxe2_qp *to,
			 const void *req, u32 len);
bool rxe2_qp_direct_begin(struct rxe2_qp *from, struct rxe2_qp *to);
void rxe2_qp_direct_end(struct rxe2_qp *from);
bool rxe2_qp_peer_callable(struct rxe2_qp *qp);
bool rxe2_qp_after_parent(struct rxe2_qp *qp);
void rxe2_qp_run_after(struct rxe2_qp *qp, bool may_run);
bool rxe2_qp_direct_to_peer(struct rxe2_qp *qp);
void rxe2_catch_begin(struct rxe2_catch *c);
void rxe2_catch_end(struct rxe2_qp *qp, struct rxe2_catch *c);
bool rxe2_rx_catch(struct rxe2_qp *qp);
bool rxe2_tx_loop_ack(struct rxe2_qp *qp, u32 smsn, u32 psn);
void rxe2_tx_call_failed(struct rxe2_qp *qp, const struct rxe2_av *av,
			 u16 sport, struct rxe2_qp *to, const void *hdr,
			 u32 len);

/* rxe2_tap.c: the taps' copies of loopback packets */
void rxe2_tap_init(struct rxe2_dev *rdev);
void rxe2_tap_fini(struct rxe2_dev *rdev);
void rxe2_tap_copy(struct rxe2_dev *rdev, struct rxe2_qp *to,
		   const struct rxe2_av *av, struct sk_buff *skb);
bool rxe2_tap_call(struct rxe2_dev *rdev, struct rxe2_qp *to,
		   const struct rxe2_av *av, u16 sport, const void *hdr,
		   u32 len, struct rxe2_src *src, u32 paylen);

/* rxe2_raw.c: raw packet QPs; rxe2_flow.c steers frames to them */
int rxe2_raw_send(struct rxe2_qp *qp, u32 idx);
void rxe2_raw_rx(struct rxe2_qp *qp, struct sk_buff *skb);

#endif /* RXE2_WIRE_H */
