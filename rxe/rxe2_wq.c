// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2: receive work queues (ibv_create_wq), indirection tables
 * (ibv_create_rwq_ind_table) and the RSS of raw packet QPs.
 *
 * A WQ is a receive ring like an RQ, with a CQ of its own and a state
 * (RESET, RDY, ERR).  An RSS QP (a raw packet QP made over an indirection
 * table, IBV_QP_INIT_ATTR_RX_HASH) has no queue of its own: each frame its
 * flows take is hashed (Toeplitz, over the fields the QP names) and goes
 * to the table's entry hash & (size - 1).  The frame is handled by the
 * QP's work item, like every frame of a raw QP (rxe2_raw.c), with the
 * WQ's ring and CQ instead of the QP's; ib_core keeps the table and its
 * WQs alive while the QP exists (usecnt).
 *
 * Locking: the WQ's ring.lock (see the lock table in rxe2_verbs.h).
 */
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>

#include "rxe2_responder.h"
#include "rxe2_verbs.h"

/* ------------------------------------------------------------------ */
/* WQs                                                                 */
/* ------------------------------------------------------------------ */

struct ib_wq *rxe2_create_wq(struct ib_pd *ibpd, struct ib_wq_init_attr *init,
			     struct ib_udata *udata)
{
	struct rxe2_dev *rdev = to_rdev(ibpd->device);
	const struct ib_device_attr *a = &rdev->attr;
	struct rxe2_create_wq_resp resp = {};
	struct rxe2_wq *wq;
	int ret;

	if (init->wq_type != IB_WQT_RQ || init->create_flags || !udata)
		return ERR_PTR(-EOPNOTSUPP);
	if (init->max_wr < 1 || init->max_wr > a->max_qp_wr ||
	    init->max_sge < 1 || init->max_sge > a->max_recv_sge)
		return ERR_PTR(-EINVAL);
	ret = rxe2_check_udata_in_empty(udata);
	if (ret)
		return ERR_PTR(ret);
	if (udata->outlen < sizeof(resp))
		return ERR_PTR(-EINVAL);
	wq = kzalloc(sizeof(*wq), GFP_KERNEL);
	if (!wq)
		return ERR_PTR(-ENOMEM);
	ret = rxe2_ring_init(&wq->ring, init->max_wr,
			     rxe2_recv_slot_size(init->max_sge), false, udata);
	if (ret)
		goto err_free;
	wq->max_sge = init->max_sge;
	ret = rxe2_table_add(&rdev->wq_table, NULL, &wq->ibwq.wq_num);
	if (ret)
		goto err_ring;
	rxe2_ring_get_info(&wq->ring, &resp.rq);
	ret = ib_copy_to_udata(udata, &resp, sizeof(resp));
	if (ret)
		goto err_table;
	wq->ibwq.state = IB_WQS_RESET;
	rxe2_table_publish(&rdev->wq_table, wq->ibwq.wq_num, wq);
	return &wq->ibwq;

err_table:
	rxe2_table_remove(&rdev->wq_table, wq->ibwq.wq_num);
err_ring:
	rxe2_ring_cleanup(&wq->ring);
err_free:
	kfree(wq);
	return ERR_PTR(ret);
}

/* a WQ's ring holds nothing more: each posted WQE completes as flushed */
static void rxe2_wq_flush_wqes(struct rxe2_wq *wq)
{
	struct rxe2_cq *cq = to_rcq(wq->ibwq.cq);
	struct rxe2_cqe cqe = {
		.status = IB_WC_WR_FLUSH_ERR,
		.opcode = IB_WC_RECV,
		.qp_num = wq->ibwq.wq_num,
		.port_num = RXE2_PORT,
	};
	unsigned long flags;
	int n;

	/* what is posted now: a process posting on meanwhile cannot keep us */
	spin_lock_irqsave(&wq->ring.lock, flags);
	n = rxe2_ring_dev_avail(&wq->ring);
	spin_unlock_irqrestore(&wq->ring.lock, flags);
	while (n-- > 0) {
		spin_lock_irqsave(&wq->ring.lock, flags);
		if (rxe2_ring_dev_avail(&wq->ring) <= 0) {
			spin_unlock_irqrestore(&wq->ring.lock, flags);
			return;
		}
		cqe.wr_id = ((struct rxe2_recv_wqe *)
			     rxe2_ring_slot(&wq->ring, wq->ring.dev_index))->wr_id;
		rxe2_ring_dev_advance(&wq->ring);
		spin_unlock_irqrestore(&wq->ring.lock, flags);
		if (rxe2_cq_post(cq, &cqe, false))
			return;		/* a full CQ: it is in error now */
	}
}

int rxe2_modify_wq(struct ib_wq *ibwq, struct ib_wq_attr *attr, u32 mask,
		   struct ib_udata *udata)
{
	struct rxe2_wq *wq = to_rwq(ibwq);
	enum ib_wq_state cur = READ_ONCE(ibwq->state), new;
	int ret;

	ret = rxe2_check_udata_in_empty(udata);
	if (ret)
		return ret;
	if (mask & ~(IB_WQ_STATE | IB_WQ_CUR_STATE | IB_WQ_FLAGS))
		return -EOPNOTSUPP;
	/* no flag of enum ib_wq_flags is ours to set */
	if ((mask & IB_WQ_FLAGS) && (attr->flags_mask & attr->flags))
		return -EOPNOTSUPP;
	if ((mask & IB_WQ_CUR_STATE) && attr->curr_wq_state != cur)
		return -EINVAL;
	if (!(mask & IB_WQ_STATE))
		return 0;
	new = attr->wq_state;
	if (new > IB_WQS_ERR || (cur == IB_WQS_ERR && new == IB_WQS_RDY))
		return -EINVAL;
	if (new == IB_WQS_RESET) {
		unsigned long flags;

		/* what was posted is gone, as a reset QP's receives are */
		spin_lock_irqsave(&wq->ring.lock, flags);
		rxe2_ring_reset(&wq->ring);
		spin_unlock_irqrestore(&wq->ring.lock, flags);
	}
	WRITE_ONCE(ibwq->state, new);
	if (new == IB_WQS_ERR)
		rxe2_wq_flush_wqes(wq);
	return 0;
}

int rxe2_destroy_wq(struct ib_wq *ibwq, struct ib_udata *udata)
{
	struct rxe2_wq *wq = to_rwq(ibwq);

	rxe2_table_remove(&to_rdev(ibwq->device)->wq_table, ibwq->wq_num);
	rxe2_ring_cleanup(&wq->ring);
	kfree(wq);
	return 0;
}

/* a table is ib_core's; its size must be one we report */
int rxe2_create_rwq_ind_table(struct ib_rwq_ind_table *tbl,
			      struct ib_rwq_ind_table_init_attr *init,
			      struct ib_udata *udata)
{
	struct rxe2_dev *rdev = to_rdev(tbl->device);
	static atomic_t rxe2_ind_tbl_num = ATOMIC_INIT(0);
	int ret;

	if ((1U << init->log_ind_tbl_size) >
	    rdev->attr.rss_caps.max_rwq_indirection_table_size)
		return -EINVAL;
	ret = rxe2_check_udata_in_empty(udata);
	if (ret)
		return ret;
	/* max_rwq_indirection_tables, exactly */
	if (atomic_inc_return(&rdev->ind_tbl_count) >
	    rdev->attr.rss_caps.max_rwq_indirection_tables) {
		atomic_dec(&rdev->ind_tbl_count);
		return -ENOMEM;
	}
	tbl->ind_tbl_num = atomic_inc_return(&rxe2_ind_tbl_num);
	return 0;
}

int rxe2_destroy_rwq_ind_table(struct ib_rwq_ind_table *tbl)
{
	atomic_dec(&to_rdev(tbl->device)->ind_tbl_count);
	return 0;
}

/* ------------------------------------------------------------------ */
/* RSS                                                                 */
/* ------------------------------------------------------------------ */

/*
 * An RSS QP's hash configuration from its create command; the QP must be
 * a raw packet QP without queues of its own.
 */
int rxe2_rss_init(struct rxe2_qp *qp, const struct ib_qp_init_attr *init,
		  const struct rxe2_create_qp_cmd *cmd)
{
	struct rxe2_rss *rss;
	u32 i;

	if (!(cmd->comp_mask & RXE2_CREATE_QP_RX_HASH))
		return -EINVAL;		/* a table without a hash */
	if (init->qp_type != IB_QPT_RAW_PACKET || init->send_cq ||
	    init->cap.max_send_wr)
		return -EOPNOTSUPP;
	if (cmd->rx_hash_function != RXE2_RX_HASH_FUNC_TOEPLITZ ||
	    cmd->rx_hash_key_len != RXE2_RSS_KEY_LEN ||
	    (cmd->rx_hash_fields_mask & ~RXE2_RX_HASH_FIELDS) ||
	    memchr_inv(cmd->rx_hash_reserved, 0,
		       sizeof(cmd->rx_hash_reserved)))
		return -EINVAL;
	/* the WQEs' lkeys are checked against the QP's PD */
	for (i = 0; i < 1U << init->rwq_ind_tbl->log_ind_tbl_size; i++)
		if (init->rwq_ind_tbl->ind_tbl[i]->pd != qp->ibqp.pd)
			return -EINVAL;
	rss = kzalloc(sizeof(*rss), GFP_KERNEL);
	if (!rss)
		return -ENOMEM;
	rss->fields = cmd->rx_hash_fields_mask;
	memcpy(rss->key, cmd->rx_hash_key, RXE2_RSS_KEY_LEN);
	rss->tbl = init->rwq_ind_tbl;
	qp->rss = rss;
	return 0;
}

/* Toeplitz over len bytes of in, with the 40-byte key */
static u32 rxe2_toeplitz(const u8 *key, const u8 *in, unsigned int len)
{
	u32 window = (u32)key[0] << 24 | key[1] << 16 | key[2] << 8 | key[3];
	u32 hash = 0;
	unsigned int i, b;

	for (i = 0; i < len; i++) {
		for (b = 0; b < 8; b++) {
			if (in[i] & (0x80 >> b))
				hash ^= window;
			/* the key slides one bit: its next bit comes in */
			window = window << 1 |
				 ((key[i + 4] >> (7 - b)) & 1);
		}
	}
	return hash;
}

static unsigned int rxe2_put(u8 *to, const void *from, unsigned int n)
{
	memcpy(to, from, n);
	return n;
}

/*
 * The hash input of a frame (MAC header at skb->data): of the fields the
 * QP names, those the frame has, in the order source address,
 * destination address, source port, destination port.
 */
static unsigned int rxe2_rss_input(const struct rxe2_rss *rss,
				   const struct sk_buff *skb, u8 *in)
{
	unsigned int n = 0, off = ETH_HLEN, l4;
	u64 f = rss->fields;
	__be16 ports[2], *p;
	u8 proto;

	if (((const struct ethhdr *)skb->data)->h_proto == htons(ETH_P_IP)) {
		struct iphdr _ip;
		const struct iphdr *ip;

		ip = skb_header_pointer(skb, off, sizeof(_ip), &_ip);
		if (!ip || ip->ihl < 5)
			return 0;
		if (f & RXE2_RX_HASH_SRC_IPV4)
			n += rxe2_put(in + n, &ip->saddr, 4);
		if (f & RXE2_RX_HASH_DST_IPV4)
			n += rxe2_put(in + n, &ip->daddr, 4);
		if (ip->frag_off & htons(IP_MF | IP_OFFSET))
			return n;
		proto = ip->protocol;
		l4 = off + ip->ihl * 4;
	} else if (((const struct ethhdr *)skb->data)->h_proto == htons(ETH_P_IPV6)) {
		struct ipv6hdr _ip6;
		const struct ipv6hdr *ip6;

		ip6 = skb_header_pointer(skb, off, sizeof(_ip6), &_ip6);
		if (!ip6)
			return 0;
		if (f & RXE2_RX_HASH_SRC_IPV6)
			n += rxe2_put(in + n, &ip6->saddr, 16);
		if (f & RXE2_RX_HASH_DST_IPV6)
			n += rxe2_put(in + n, &ip6->daddr, 16);
		proto = ip6->nexthdr;
		l4 = off + sizeof(*ip6);
	} else {
		return 0;
	}
	if (proto == IPPROTO_TCP)
		f = (f & RXE2_RX_HASH_SRC_PORT_TCP ? 1 : 0) |
		    (f & RXE2_RX_HASH_DST_PORT_TCP ? 2 : 0);
	else if (proto == IPPROTO_UDP)
		f = (f & RXE2_RX_HASH_SRC_PORT_UDP ? 1 : 0) |
		    (f & RXE2_RX_HASH_DST_PORT_UDP ? 2 : 0);
	else
		return n;
	p = skb_header_pointer(skb, l4, sizeof(ports), ports);
	if (!p)
		return n;
	if (f & 1)
		n += rxe2_put(in + n, &p[0], 2);
	if (f & 2)
		n += rxe2_put(in + n, &p[1], 2);
	return n;
}

/*
 * The next WQE of wq into the QP's receive WQE copy, if it holds len
 * bytes: 0; -EAGAIN none posted; -EMSGSIZE too short for the frame (left
 * where it is, for the next one); -EPROTO a broken ring.
 */
int rxe2_wq_take(struct rxe2_qp *qp, struct rxe2_wq *wq, u32 len)
{
	struct rxe2_qp_dp *dp = &qp->dp;
	struct rxe2_recv_wqe *w = (struct rxe2_recv_wqe *)dp->resp.rwqe;
	struct rxe2_ring *r = &wq->ring;
	unsigned long flags;
	int avail, ret = 0;

	spin_lock_irqsave(&r->lock, flags);
	avail = rxe2_ring_dev_avail(r);
	if (avail <= 0) {
		ret = avail < 0 ? -EPROTO : -EAGAIN;
	} else {
		memcpy(dp->resp.rwqe, rxe2_ring_slot(r, r->dev_index),
		       min(r->slot_size, dp->resp.rwqe_size));
		if (w->num_sge > wq->max_sge ||
		    RXE2_RECV_WQE_HDR_SIZE + w->num_sge *
		    sizeof(struct rxe2_sge) > r->slot_size)
			w->num_sge = U32_MAX;	/* fails at the first copy */
		if (rxe2_resp_rwqe_fits(qp, len))
			rxe2_ring_dev_advance(r);
		else
			ret = -EMSGSIZE;
	}
	spin_unlock_irqrestore(&r->lock, flags);
	if (!ret) {
		dp->resp.have_rwqe = true;
		dp->resp.rcv_offset = 0;
		dp->resp.rcv_inline = false;
	}
	return ret;
}

/*
 * A WQ fails: the WQE taken (if one was) in error, the rest flushed, the
 * WQ in ERR.  A broken ring has no WQE to name.
 */
void rxe2_wq_fail(struct rxe2_qp *qp, struct rxe2_wq *wq, int status)
{
	struct rxe2_cqe cqe = {
		.wr_id = ((struct rxe2_recv_wqe *)qp->dp.resp.rwqe)->wr_id,
		.status = status,
		.opcode = IB_WC_RECV,
		.qp_num = wq->ibwq.wq_num,
		.port_num = RXE2_PORT,
	};

	WRITE_ONCE(wq->ibwq.state, IB_WQS_ERR);
	if (qp->dp.resp.have_rwqe) {
		qp->dp.resp.have_rwqe = false;
		rxe2_mr_msg_end(qp->dp.resp.rcv_hold, RXE2_RECV_MRS);
		if (rxe2_cq_post(to_rcq(wq->ibwq.cq), &cqe, false))
			return;		/* a full CQ: it is in error now */
	}
	rxe2_wq_flush_wqes(wq);
}

/* the WQ an RSS QP's frame goes to (MAC header at skb->data) */
struct rxe2_wq *rxe2_rss_wq(struct rxe2_qp *qp, const struct sk_buff *skb)
{
	const struct rxe2_rss *rss = qp->rss;
	u8 in[RXE2_RSS_INPUT_MAX];
	unsigned int n = rxe2_rss_input(rss, skb, in);
	u32 hash = rxe2_toeplitz(rss->key, in, n);
	u32 size = 1U << rss->tbl->log_ind_tbl_size;

	return to_rwq(rss->tbl->ind_tbl[hash & (size - 1)]);
}

void rxe2_rss_free(struct rxe2_qp *qp)
{
	kfree(qp->rss);
	qp->rss = NULL;
}

const struct ib_device_ops rxe2_wq_ops = {
	.create_wq = rxe2_create_wq,
	.modify_wq = rxe2_modify_wq,
	.destroy_wq = rxe2_destroy_wq,
	.create_rwq_ind_table = rxe2_create_rwq_ind_table,
	.destroy_rwq_ind_table = rxe2_destroy_rwq_ind_table,

	INIT_RDMA_OBJ_SIZE(ib_rwq_ind_table, rxe2_rwq_ind_table, ibtbl),
};
