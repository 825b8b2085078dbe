/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rxe2: the data path.  One work item per QP runs everything a QP does
 * (responder, completer, requester) in sleepable context, one runner at
 * a time: the SQ doorbell runs it in the caller's context when nobody
 * else is, a loopback delivery from another QP's runner runs it inline
 * (rxe2_task.c, rxe2_loop.c), the receive hook and the timers queue it.
 */
#ifndef RXE2_DP_H
#define RXE2_DP_H

#include <rdma/ib_user_verbs.h>

#include "rxe2_verbs.h"
#include "rxe2_hdr.h"

/* qp->dp.flags */
enum {
	RXE2_QPF_DYING,		/* destroy in progress: queue nothing */
	RXE2_QPF_RETRY,		/* retransmit timer fired */
	RXE2_QPF_RNR,		/* RNR wait over */
	RXE2_QPF_RNR_WAIT,	/* waiting out an RNR NAK */
	RXE2_QPF_RUNNING,	/* a runner holds state_lock, looks again */
	RXE2_QPF_DOORBELL,	/* SQ doorbell not yet seen by the requester */
};

/* rxe2_swqe_info.state */
enum {
	RXE2_WQE_NEW,		/* not copied out of the ring yet */
	RXE2_WQE_STARTED,	/* copied and validated, being sent */
	RXE2_WQE_SENT,		/* every packet sent, awaiting the answer */
	RXE2_WQE_DONE,		/* completion ready (status) */
};

#define RXE2_RX_BACKLOG		4096	/* packets queued per QP */
#define RXE2_ACK_EVERY		16	/* AckReq at least this often */
#define RXE2_MAX_INFLIGHT	256	/* the largest window (rxe2_cc.c) */
#define RXE2_UD_GRH_LEN		40

/*
 * skb->cb of a packet on a QP's rx_queue.  trusted: handed over by
 * rxe2_tx_send() from one of our own QPs (loopback), never on a wire, so
 * its ICRC is neither computed (unless a tap watches) nor checked.
 */
struct rxe2_skb_cb {
	bool trusted;
	bool flow;		/* a frame a flow took for a raw packet QP */
	u32 flow_tag;		/* and that flow's tag (ACTION_TAG), or 0 */
	/* kept out of order (rxe2_reorder.c): its PSN, and whether it is a
	 * handed-over request (BTH to payload, no IP, UDP or ICRC)
	 */
	u32 psn;
	bool loop;
};

/* RoCE packets name QPs by number; a raw packet QP takes none of them */
static inline struct rxe2_qp *rxe2_roce_qp(struct rxe2_qp *qp)
{
	return qp && qp->ibqp.qp_type != IB_QPT_RAW_PACKET ? qp : NULL;
}

static inline struct rxe2_skb_cb *rxe2_skb_cb(struct sk_buff *skb)
{
	return (struct rxe2_skb_cb *)skb->cb;
}

/* a received packet, parsed and validated by rxe2_rx.c */
struct rxe2_pkt {
	struct sk_buff *skb;
	u8 *hdr;		/* the BTH */
	u8 opcode;
	u32 flags;		/* enum rxe2_opf */
	bool ackreq;
	bool se;
	bool ipv6;
	u32 psn;
	u32 qpn;
	u8 *payload;		/* NULL: read from src */
	struct rxe2_src *src;	/* a one-copy loopback request's payload */
	u32 paylen;
	u32 wire_len;		/* BTH .. ICRC, for the counters */
};

static inline void *rxe2_pkt_ext(const struct rxe2_pkt *p, enum rxe2_opf h)
{
	return p->hdr + rxe2_ext_off(p->flags, h);
}

static inline struct rxe2_dev *rxe2_qp_rdev(struct rxe2_qp *qp)
{
	return to_rdev(qp->ibqp.device);
}

/* a requester whose requests are acknowledged: RC, XRC's initiator */
static inline bool rxe2_qp_requests_acked(struct rxe2_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_RC ||
	       qp->ibqp.qp_type == IB_QPT_XRC_INI;
}

/*
 * Counting a QP's events (rxe2_counters.c): into the counter it is
 * bound to, if any, else into the device's counters as rxe2.h does.
 */
bool rxe2_qp_count_slow(struct rxe2_qp *qp, unsigned int stat, u64 n);

static inline bool rxe2_qp_count(struct rxe2_qp *qp, unsigned int stat,
				 u64 n)
{
	return rcu_access_pointer(qp->ctr) && rxe2_qp_count_slow(qp, stat, n);
}

static inline void rxe2_qp_dp_count(struct rxe2_qp *qp,
				    enum rxe2_dp_counter c)
{
	if (!rxe2_qp_count(qp, rxe2_stat_of_dp[c], 1))
		rxe2_dp_count(rxe2_qp_rdev(qp), c);
}

static inline void rxe2_qp_pcount(struct rxe2_qp *qp,
				  enum rxe2_pcpu_counter c, u64 n)
{
	if (!rxe2_qp_count(qp, rxe2_stat_of_pc[c], n))
		rxe2_pcount(rxe2_qp_rdev(qp), c, n);
}

static inline void rxe2_qp_dropped(struct rxe2_qp *qp,
				   enum rxe2_drop_reason why)
{
	if (!rxe2_qp_count(qp, rxe2_stat_of_drop[why], 1))
		rxe2_rx_dropped(rxe2_qp_rdev(qp), why);
}

/* a packet the QP sent, or received and took (rxe2_count_pkt()) */
static inline void rxe2_qp_count_pkt(struct rxe2_qp *qp, bool sent, u32 len)
{
	enum rxe2_pcpu_counter c = sent ? RXE2_PC_SENT_PKTS : RXE2_PC_RCVD_PKTS;

	if (!rcu_access_pointer(qp->ctr)) {
		rxe2_count_pkt(rxe2_qp_rdev(qp), sent, len);
		return;
	}
	rxe2_qp_pcount(qp, c, 1);
	rxe2_qp_pcount(qp, c + 1, len);
}

/* a responder that acknowledges: RC, XRC's target */
static inline bool rxe2_qp_acks(struct rxe2_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_RC ||
	       rxe2_qp_is_xrc_tgt(qp);
}

/* a datagram QP: UD, or GSI (QP1), which is UD on the wire */
static inline bool rxe2_qp_is_ud(const struct rxe2_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_UD ||
	       qp->ibqp.qp_type == IB_QPT_GSI;
}

/* the transport bits of the opcodes the QP sends (RXE2_TRANSPORT_*) */
static inline u8 rxe2_qp_transport(struct rxe2_qp *qp)
{
	switch (qp->ibqp.qp_type) {
	case IB_QPT_UC:
		return RXE2_TRANSPORT_UC;
	case IB_QPT_UD:
	case IB_QPT_GSI:
		return RXE2_TRANSPORT_UD;
	case IB_QPT_XRC_INI:
	case IB_QPT_XRC_TGT:
		return RXE2_TRANSPORT_XRC;
	default:
		return RXE2_TRANSPORT_RC;
	}
}

/* rxe2_task.c */
int rxe2_dp_init(void);
void rxe2_dp_exit(void);
int rxe2_qp_dp_init(struct rxe2_qp *qp);
void rxe2_qp_dp_stop(struct rxe2_qp *qp);
void rxe2_qp_dp_free(struct rxe2_qp *qp);
void rxe2_qp_dp_reset(struct rxe2_qp *qp);
void rxe2_qp_kick(struct rxe2_qp *qp);
void rxe2_qp_doorbell(struct rxe2_qp *qp);
/* the runner's steps, for the loopback hand-over (rxe2_loop.c) */
void rxe2_qp_run_unlock(struct rxe2_qp *qp, struct rxe2_qp *parent,
			bool work);
void rxe2_qp_wake(struct rxe2_qp *qp);
bool rxe2_qp_has_work(struct rxe2_qp *qp);
bool rxe2_qp_unlock_relook(struct rxe2_qp *qp);
void rxe2_qp_notify(struct rxe2_qp *qp);

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
void rxe2_catch_begin(struct rxe2_catch *c);
void rxe2_catch_end(struct rxe2_qp *qp, struct rxe2_catch *c);
bool rxe2_rx_catch(struct rxe2_qp *qp);
bool rxe2_tx_loop_ack(struct rxe2_qp *qp, u32 smsn, u32 psn);
void rxe2_tx_call_failed(struct rxe2_qp *qp, const struct rxe2_av *av,
			 u16 sport, struct rxe2_qp *to, const void *hdr,
			 u32 len);

/* copy between a list of SGEs and a buffer: a cursor over the list */
struct rxe2_sge_cursor {
	const struct rxe2_sge *sge;
	u32 num;
	u32 idx;
	u32 off;		/* within sge[idx] */
};

/* rxe2_sge.c */
int rxe2_sge_copy(struct rxe2_qp *qp, struct rxe2_sge_cursor *c, void *buf,
		  u32 len, bool to_mem, struct rxe2_mr_hold *hold,
		  unsigned int nhold, u64 *seq);
void rxe2_sge_seek(struct rxe2_sge_cursor *c, u32 offset);
void rxe2_sge_from_ib(struct rxe2_sge *sge, const struct ib_sge *sg_list,
		      int num);

/*
 * The payload of a one-copy loopback request (rxe2_tx_direct()): ranges
 * of the sender's MRs, each MR referenced until rxe2_src_put(), read in
 * order by the receiver's placement while the sender waits.  Not a
 * packet's worth of SGEs in more pieces than this: copied instead.  A
 * range of an ODP MR is faulted in first and read from its pages, each
 * referenced (rxe2_odp_hold()): at most a packet (4096 bytes) at any
 * page offset, two pages.
 */
#define RXE2_SRC_PIECES		4
#define RXE2_SRC_ODP_PAGES	2

struct rxe2_src {
	struct {
		struct rxe2_mr *mr;
		u64 iova;
		u32 len;
		u8 npages;		/* ODP: pages[] hold the range */
		u16 page_off;		/* where it starts in pages[0] */
		struct page *pages[RXE2_SRC_ODP_PAGES];
	} piece[RXE2_SRC_PIECES];
	unsigned int num;
	unsigned int idx;	/* reading piece[idx] at off */
	u32 off;
	bool err;		/* a read failed: the sender fails the WQE */
};

int rxe2_src_get(struct rxe2_qp *qp, struct rxe2_sge_cursor *c, u32 len,
		 struct rxe2_mr_hold *hold, unsigned int nhold, u64 *seq,
		 struct rxe2_src *src);
void rxe2_src_put(struct rxe2_src *src);
void rxe2_src_read(struct rxe2_src *src, void *buf, u32 len);
void rxe2_src_rewind(struct rxe2_src *src);
int rxe2_mr_copy_src(struct rxe2_mr *mr, u64 iova, struct rxe2_src *src,
		     u32 len);
int rxe2_sge_copy_src(struct rxe2_qp *qp, struct rxe2_sge_cursor *c,
		      struct rxe2_src *src, u32 len,
		      struct rxe2_mr_hold *hold, unsigned int nhold);

/* rxe2_icrc.c */
u32 rxe2_icrc(struct sk_buff *skb, bool ipv6, unsigned int bth_off,
	      unsigned int len);
u32 rxe2_icrc_rxe_flush(struct sk_buff *skb, bool ipv6, unsigned int bth_off,
			unsigned int len);

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

/* rxe2_raw.c: raw packet QPs; rxe2_flow.c steers frames to them */
int rxe2_raw_send(struct rxe2_qp *qp, u32 idx);
void rxe2_raw_rx(struct rxe2_qp *qp, struct sk_buff *skb);

/* rxe2_place.c: IBTA 1.5 ATOMIC WRITE and FLUSH at the responder */
void rxe2_resp_placement(struct rxe2_qp *qp, struct rxe2_pkt *pkt);

static inline struct rxe2_send_wqe *rxe2_swqe(struct rxe2_qp *qp, u32 idx)
{
	return (struct rxe2_send_wqe *)(qp->dp.swqe +
		(size_t)(idx & (qp->sq.num_slots - 1)) * qp->sq.slot_size);
}

static inline struct rxe2_swqe_info *rxe2_sinfo(struct rxe2_qp *qp, u32 idx)
{
	return &qp->dp.sinfo[idx & (qp->sq.num_slots - 1)];
}

#endif /* RXE2_DP_H */
