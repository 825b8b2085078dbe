// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A kernel consumer for test_frmr.sh: fast registration, LOCAL_INV and
 * SEND_WITH_INV as a ULP uses them, with the failures a ULP should never
 * see from nvme-rdma but the device must get right.  Loading it runs the
 * checks on the device named by dev= and writes TAP lines (prefixed with
 * the module name) to the kernel log; test_frmr.sh passes them on and
 * unloads it.
 *
 * Two RC QPs of one PD on the device are connected over its IPv4 RoCEv2
 * GID.  A is the ULP with the fast-registration MR over three separate
 * pages (the first one entered 100 bytes in), B the peer.  A QP that
 * sees an error is replaced by a fresh pair.
 */
#include <linux/delay.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

static char *dev_name_param = "rxe2_0";
module_param_named(dev, dev_name_param, charp, 0444);
MODULE_PARM_DESC(dev, "RDMA device to test");

#define NPAGES		3
#define FIRST_OFF	100
#define LAST_LEN	1000
#define MR_LEN		(PAGE_SIZE - FIRST_OFF + PAGE_SIZE + LAST_LEN)
#define BUF_LEN		(NPAGES * PAGE_SIZE)

static int tap_n, tap_failed;

static __printf(2, 3) bool tap(bool cond, const char *fmt, ...)
{
	char msg[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	tap_n++;
	if (!cond)
		tap_failed++;
	pr_info("%s%sok %d - %s\n", KBUILD_MODNAME ": ", cond ? "" : "not ",
		tap_n, msg);
	return cond;
}

struct side {
	struct ib_cq *cq;
	struct ib_qp *qp;
};

struct t {
	struct ib_device *dev;
	struct ib_pd *pd;
	union ib_gid gid;
	int sgid;
	struct side a, b;
	struct page *pages[NPAGES];
	struct scatterlist sg[NPAGES];
	struct ib_mr *mr, *mr2;
	u8 *bbuf;		/* B's memory, under the local DMA lkey */
	u64 bdma;
};

/* the byte at MR offset off */
static u8 *mr_byte(struct t *t, u32 off)
{
	if (off < PAGE_SIZE - FIRST_OFF)
		return (u8 *)page_address(t->pages[0]) + FIRST_OFF + off;
	off -= PAGE_SIZE - FIRST_OFF;
	return (u8 *)page_address(t->pages[1 + off / PAGE_SIZE]) +
	       off % PAGE_SIZE;
}

static int find_gid(struct t *t)
{
	int i;

	for (i = 0; i < 16; i++) {
		const struct ib_gid_attr *a = rdma_get_gid_attr(t->dev, 1, i);

		if (IS_ERR(a))
			continue;
		if (a->gid_type == IB_GID_TYPE_ROCE_UDP_ENCAP &&
		    ipv6_addr_v4mapped((struct in6_addr *)a->gid.raw)) {
			t->gid = a->gid;
			t->sgid = i;
			rdma_put_gid_attr(a);
			return 0;
		}
		rdma_put_gid_attr(a);
	}
	return -ENOENT;
}

static int connect_qp(struct t *t, struct ib_qp *qp, u32 dqpn)
{
	struct ib_qp_attr a = {};
	int ret;

	a.qp_state = IB_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ |
			    IB_ACCESS_REMOTE_ATOMIC;
	ret = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTR;
	a.path_mtu = IB_MTU_1024;
	a.dest_qp_num = dqpn;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;
	a.ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(&a.ah_attr, 1);
	rdma_ah_set_grh(&a.ah_attr, &t->gid, 0, t->sgid, 64, 0);
	ret = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
			   IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	return ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_TIMEOUT |
			    IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_SQ_PSN |
			    IB_QP_MAX_QP_RD_ATOMIC);
}

static void side_free(struct side *s)
{
	if (s->qp)
		ib_destroy_qp(s->qp);
	if (s->cq)
		ib_free_cq(s->cq);
	s->qp = NULL;
	s->cq = NULL;
}

static int side_new(struct t *t, struct side *s)
{
	struct ib_qp_init_attr init = {};

	s->cq = ib_alloc_cq(t->dev, NULL, 64, 0, IB_POLL_DIRECT);
	if (IS_ERR(s->cq)) {
		int ret = PTR_ERR(s->cq);

		s->cq = NULL;
		return ret;
	}
	init.send_cq = s->cq;
	init.recv_cq = s->cq;
	init.cap.max_send_wr = 16;
	init.cap.max_recv_wr = 16;
	init.cap.max_send_sge = 2;
	init.cap.max_recv_sge = 2;
	init.sq_sig_type = IB_SIGNAL_ALL_WR;
	init.qp_type = IB_QPT_RC;
	s->qp = ib_create_qp(t->pd, &init);
	if (IS_ERR(s->qp)) {
		int ret = PTR_ERR(s->qp);

		s->qp = NULL;
		return ret;
	}
	return 0;
}

/* a fresh connected pair (the old one, if any, goes) */
static bool new_pair(struct t *t)
{
	int ret;

	side_free(&t->a);
	side_free(&t->b);
	ret = side_new(t, &t->a);
	if (!ret)
		ret = side_new(t, &t->b);
	if (!ret)
		ret = connect_qp(t, t->a.qp, t->b.qp->qp_num);
	if (!ret)
		ret = connect_qp(t, t->b.qp, t->a.qp->qp_num);
	if (ret)
		tap(false, "new connected QP pair: %d", ret);
	return !ret;
}

/* one completion within 10 s, checked */
static bool expect(struct side *s, u64 wr_id, enum ib_wc_status status,
		   int opcode, struct ib_wc *out, const char *what)
{
	unsigned long end = jiffies + 10 * HZ;
	struct ib_wc wc;
	int n;

	do {
		n = ib_poll_cq(s->cq, 1, &wc);
		if (n)
			break;
		usleep_range(500, 1000);
	} while (time_before(jiffies, end));
	if (n != 1)
		return tap(false, "%s: no completion", what);
	if (out)
		*out = wc;
	return tap(wc.wr_id == wr_id && wc.status == status &&
		   (status || opcode < 0 || wc.opcode == opcode),
		   "%s: %s (got wr_id %llx %s opcode %d)", what,
		   ib_wc_status_msg(status), wc.wr_id,
		   ib_wc_status_msg(wc.status), wc.opcode);
}

static int post(struct ib_qp *qp, struct ib_send_wr *wr)
{
	const struct ib_send_wr *bad;

	wr->send_flags |= IB_SEND_SIGNALED;
	return ib_post_send(qp, wr, &bad);
}

/* B: RDMA op against A's MR, B's buffer at boff */
static int b_rdma(struct t *t, enum ib_wr_opcode op, u64 wr_id, u32 rkey,
		  u64 raddr, u32 boff, u32 len)
{
	struct ib_sge sge = {
		.addr = t->bdma + boff,
		.length = len,
		.lkey = t->pd->local_dma_lkey,
	};
	struct ib_rdma_wr w = {
		.wr = { .wr_id = wr_id, .opcode = op, .sg_list = &sge,
			.num_sge = 1 },
		.remote_addr = raddr,
		.rkey = rkey,
	};

	return post(t->b.qp, &w.wr);
}

static int a_reg(struct t *t, struct ib_mr *mr, u32 key, u64 wr_id,
		 int send_flags)
{
	struct ib_reg_wr w = {
		.wr = { .wr_id = wr_id, .opcode = IB_WR_REG_MR,
			.send_flags = send_flags },
		.mr = mr,
		.key = key,
		.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
			  IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC,
	};

	return post(t->a.qp, &w.wr);
}

static int a_inv(struct t *t, u32 key, u64 wr_id, int send_flags)
{
	struct ib_send_wr w = {
		.wr_id = wr_id,
		.opcode = IB_WR_LOCAL_INV,
		.send_flags = send_flags,
		.ex.invalidate_rkey = key,
	};

	return post(t->a.qp, &w);
}

/* make the MR valid under a new key; false if that failed */
static bool reg_new_key(struct t *t, const char *what)
{
	ib_update_fast_reg_key(t->mr, ib_inc_rkey(t->mr->rkey) & 0xff);
	return tap(!a_reg(t, t->mr, t->mr->rkey, 0x100, 0), "%s: post REG_MR key %#x",
		   what, t->mr->rkey) &&
	       expect(&t->a, 0x100, IB_WC_SUCCESS, IB_WC_REG_MR, NULL, what);
}

static void fill(u8 *p, u32 len, u8 seed)
{
	u32 i;

	for (i = 0; i < len; i++)
		p[i] = (u8)(seed + i * 7);
}

static bool mr_equals(struct t *t, u32 off, const u8 *p, u32 len)
{
	u32 i;

	for (i = 0; i < len; i++)
		if (*mr_byte(t, off + i) != p[i])
			return false;
	return true;
}

static int a_send(struct t *t, u64 wr_id, u32 len)
{
	struct ib_sge sge = { .addr = t->bdma, .length = len,
			      .lkey = t->pd->local_dma_lkey };
	struct ib_send_wr w = { .wr_id = wr_id, .opcode = IB_WR_SEND,
				.sg_list = &sge, .num_sge = 1 };

	return post(t->a.qp, &w);
}

static int b_recv(struct t *t, u64 wr_id)
{
	struct ib_sge sge = { .addr = t->bdma + PAGE_SIZE, .length = 64,
			      .lkey = t->pd->local_dma_lkey };
	struct ib_recv_wr r = { .wr_id = wr_id, .sg_list = &sge,
				.num_sge = 1 };
	const struct ib_recv_wr *bad;

	return ib_post_recv(t->b.qp, &r, &bad);
}

/*
 * Go-back-N over a REG_MR, as nvme-rdma's host meets it under loss: A's
 * SEND finds no receive at B (RNR NAK) after A has already run the
 * REG_MR posted behind it.  Resending the SEND must not run the REG_MR
 * again: the MR is VALID by then, a second registration would fail
 * (LOC_QP_OP_ERR) and take the QP down, the SEND first as a flush.
 * Called with the MR VALID under t->mr->rkey.
 */
static void rewind_over_reg(struct t *t)
{
	u32 key = t->mr->rkey;

	if (!new_pair(t))
		return;
	a_inv(t, key, 20, 0);
	if (!expect(&t->a, 20, IB_WC_SUCCESS, IB_WC_LOCAL_INV, NULL,
		    "go-back-N over REG_MR: LOCAL_INV first"))
		return;
	ib_update_fast_reg_key(t->mr, ib_inc_rkey(key) & 0xff);
	key = t->mr->rkey;
	a_send(t, 21, 32);
	a_reg(t, t->mr, key, 22, 0);
	a_send(t, 23, 32);
	/* the RNR NAKs meanwhile (min_rnr_timer 1, rnr_retry 7: endless) */
	msleep(50);
	tap(!b_recv(t, 24) && !b_recv(t, 25),
	    "go-back-N over REG_MR: B posts its receives 50 ms late");
	expect(&t->a, 21, IB_WC_SUCCESS, IB_WC_SEND, NULL,
	       "go-back-N over REG_MR: the RNR-NAKed SEND");
	expect(&t->a, 22, IB_WC_SUCCESS, IB_WC_REG_MR, NULL,
	       "go-back-N over REG_MR: the REG_MR behind it, run once");
	expect(&t->a, 23, IB_WC_SUCCESS, IB_WC_SEND, NULL,
	       "go-back-N over REG_MR: the SEND after it");
	expect(&t->b, 24, IB_WC_SUCCESS, IB_WC_RECV, NULL,
	       "go-back-N over REG_MR: first receive");
	expect(&t->b, 25, IB_WC_SUCCESS, IB_WC_RECV, NULL,
	       "go-back-N over REG_MR: second receive");
	fill(t->bbuf, 16, 26);
	b_rdma(t, IB_WR_RDMA_WRITE, 26, key, t->mr->iova, 0, 16);
	if (expect(&t->b, 26, IB_WC_SUCCESS, IB_WC_RDMA_WRITE, NULL,
		   "go-back-N over REG_MR: WRITE under the new key"))
		tap(mr_equals(t, 0, t->bbuf, 16),
		    "go-back-N over REG_MR: WRITE data byte-exact");
}

static void run(struct t *t)
{
	u64 iova;
	u32 key, old_key;
	struct ib_wc wc;
	int n;

	t->mr = ib_alloc_mr(t->pd, IB_MR_TYPE_MEM_REG, 4);
	t->mr2 = ib_alloc_mr(t->pd, IB_MR_TYPE_MEM_REG, 4);
	if (!tap(!IS_ERR(t->mr) && !IS_ERR(t->mr2),
		 "ib_alloc_mr(MEM_REG, 4) twice")) {
		t->mr = NULL;
		t->mr2 = NULL;
		return;
	}
	n = PTR_ERR_OR_ZERO(ib_alloc_mr(t->pd, IB_MR_TYPE_MEM_REG,
					t->dev->attrs.max_fast_reg_page_list_len + 1));
	tap(n == -EINVAL, "ib_alloc_mr beyond max_fast_reg_page_list_len: EINVAL (%d)",
	    n);

	sg_init_table(t->sg, NPAGES);
	sg_set_page(&t->sg[0], t->pages[0], PAGE_SIZE - FIRST_OFF, FIRST_OFF);
	sg_set_page(&t->sg[1], t->pages[1], PAGE_SIZE, 0);
	sg_set_page(&t->sg[2], t->pages[2], LAST_LEN, 0);
	n = ib_dma_map_sg(t->dev, t->sg, NPAGES, DMA_BIDIRECTIONAL);
	if (!tap(n == NPAGES, "ib_dma_map_sg of 3 separate pages: %d", n))
		return;
	n = ib_map_mr_sg(t->mr, t->sg, NPAGES, NULL, PAGE_SIZE);
	tap(n == NPAGES && t->mr->length == MR_LEN,
	    "ib_map_mr_sg: %d, length %llu", n, t->mr->length);
	iova = t->mr->iova;

	if (!new_pair(t) || !reg_new_key(t, "REG_MR"))
		return;
	key = t->mr->rkey;

	/* data through the MR: spans all three pages */
	fill(t->bbuf, 6000, 1);
	b_rdma(t, IB_WR_RDMA_WRITE, 1, key, iova + 50, 0, 6000);
	if (expect(&t->b, 1, IB_WC_SUCCESS, IB_WC_RDMA_WRITE, NULL,
		   "RDMA WRITE 6000 B through the fast MR"))
		tap(mr_equals(t, 50, t->bbuf, 6000),
		    "WRITE data in the right pages, byte-exact");
	memset(t->bbuf, 0, BUF_LEN);
	fill(mr_byte(t, 0), PAGE_SIZE - FIRST_OFF, 3);
	fill(mr_byte(t, PAGE_SIZE - FIRST_OFF), PAGE_SIZE, 4);
	fill(mr_byte(t, 2 * PAGE_SIZE - FIRST_OFF), LAST_LEN, 5);
	b_rdma(t, IB_WR_RDMA_READ, 2, key, iova, 0, MR_LEN);
	if (expect(&t->b, 2, IB_WC_SUCCESS, IB_WC_RDMA_READ, NULL,
		   "RDMA READ of the whole MR"))
		tap(mr_equals(t, 0, t->bbuf, MR_LEN), "READ data byte-exact");
	{
		/* 8-aligned, in the second page */
		u32 base = PAGE_SIZE - FIRST_OFF + 64;
		u32 off = base - ((iova + base) & 7);
		u64 *p = (u64 *)mr_byte(t, off);
		struct ib_sge sge = { .addr = t->bdma, .length = 8,
				      .lkey = t->pd->local_dma_lkey };
		struct ib_atomic_wr w = {
			.wr = { .wr_id = 3, .opcode = IB_WR_ATOMIC_FETCH_AND_ADD,
				.sg_list = &sge, .num_sge = 1 },
			.remote_addr = iova + off,
			.compare_add = 5,
			.rkey = key,
		};

		*p = 1000;
		post(t->b.qp, &w.wr);
		if (expect(&t->b, 3, IB_WC_SUCCESS, IB_WC_FETCH_ADD, NULL,
			   "FETCH_ADD through the fast MR"))
			tap(*(u64 *)t->bbuf == 1000 && *p == 1005,
			    "atomic: original 1000 returned, 1005 stored");
	}

	/* out of range */
	b_rdma(t, IB_WR_RDMA_WRITE, 4, key, iova + MR_LEN - 10, 0, 100);
	expect(&t->b, 4, IB_WC_REM_ACCESS_ERR, -1, NULL,
	       "WRITE past the MR's end");

	/* REG_MR of a VALID MR, REG_MR with another MR's key */
	if (!new_pair(t))
		return;
	a_reg(t, t->mr, key, 5, 0);
	expect(&t->a, 5, IB_WC_LOC_QP_OP_ERR, -1, NULL,
	       "REG_MR of an MR that is VALID");
	if (!new_pair(t))
		return;
	a_reg(t, t->mr, t->mr2->rkey, 6, 0);
	expect(&t->a, 6, IB_WC_LOC_QP_OP_ERR, -1, NULL,
	       "REG_MR with a key of another MR's index");
	if (!new_pair(t))
		return;
	a_inv(t, key ^ 1, 7, 0);
	expect(&t->a, 7, IB_WC_LOC_QP_OP_ERR, -1, NULL,
	       "LOCAL_INV with a wrong key part");

	/* still valid after all that */
	if (!new_pair(t))
		return;
	b_rdma(t, IB_WR_RDMA_WRITE, 8, key, iova, 0, 16);
	expect(&t->b, 8, IB_WC_SUCCESS, IB_WC_RDMA_WRITE, NULL,
	       "the MR is still VALID under its key");

	/*
	 * READ into the MR, then a fenced LOCAL_INV of it: B exposes its
	 * buffer through a second fast MR
	 */
	if (!new_pair(t))
		return;
	{
		struct scatterlist bsg;
		struct ib_sge sge = { .addr = iova, .length = MR_LEN,
				      .lkey = key };
		struct ib_rdma_wr w = {
			.wr = { .wr_id = 9, .opcode = IB_WR_RDMA_READ,
				.sg_list = &sge, .num_sge = 1 },
		};
		u32 key2;

		sg_init_one(&bsg, t->bbuf, MR_LEN);
		n = ib_dma_map_sg(t->dev, &bsg, 1, DMA_BIDIRECTIONAL);
		n = n == 1 ? ib_map_mr_sg(t->mr2, &bsg, 1, NULL, PAGE_SIZE) : -1;
		ib_update_fast_reg_key(t->mr2, ib_inc_rkey(t->mr2->rkey) & 0xff);
		key2 = t->mr2->rkey;
		if (n != 1) {
			tap(false, "map B's buffer into a second fast MR: %d", n);
			return;
		}
		{
			struct ib_reg_wr r = {
				.wr = { .wr_id = 10, .opcode = IB_WR_REG_MR },
				.mr = t->mr2,
				.key = key2,
				.access = IB_ACCESS_LOCAL_WRITE |
					  IB_ACCESS_REMOTE_READ,
			};

			post(t->b.qp, &r.wr);
			expect(&t->b, 10, IB_WC_SUCCESS, IB_WC_REG_MR, NULL,
			       "B registers its buffer (REG_MR)");
		}
		fill(t->bbuf, MR_LEN, 9);
		memset(mr_byte(t, 0), 0, PAGE_SIZE - FIRST_OFF);
		w.remote_addr = t->mr2->iova;
		w.rkey = key2;
		post(t->a.qp, &w.wr);
		a_inv(t, key, 11, IB_SEND_FENCE);
		expect(&t->a, 9, IB_WC_SUCCESS, IB_WC_RDMA_READ, NULL,
		       "READ into the fast MR");
		expect(&t->a, 11, IB_WC_SUCCESS, IB_WC_LOCAL_INV, NULL,
		       "fenced LOCAL_INV after it");
		tap(mr_equals(t, 0, t->bbuf, MR_LEN),
		    "READ data placed before the invalidation, byte-exact");
		ib_dma_unmap_sg(t->dev, &bsg, 1, DMA_BIDIRECTIONAL);
	}

	/* the invalidated key, remote and local */
	b_rdma(t, IB_WR_RDMA_WRITE, 12, key, iova, 0, 16);
	expect(&t->b, 12, IB_WC_REM_ACCESS_ERR, -1, NULL,
	       "WRITE with the invalidated rkey");
	if (!new_pair(t))
		return;
	{
		struct ib_sge sge = { .addr = iova, .length = 16, .lkey = key };
		struct ib_send_wr w = { .wr_id = 13, .opcode = IB_WR_SEND,
					.sg_list = &sge, .num_sge = 1 };

		post(t->a.qp, &w);
		expect(&t->a, 13, IB_WC_LOC_PROT_ERR, -1, NULL,
		       "SEND from the invalidated lkey");
	}

	/* a new key: the old one is stale */
	if (!new_pair(t) || !reg_new_key(t, "REG_MR again, new key"))
		return;
	old_key = key;
	key = t->mr->rkey;
	b_rdma(t, IB_WR_RDMA_WRITE, 14, old_key, iova, 0, 16);
	expect(&t->b, 14, IB_WC_REM_ACCESS_ERR, -1, NULL,
	       "WRITE with the previous (stale) key");

	/* remote invalidation */
	if (!new_pair(t))
		return;
	{
		struct ib_sge rsge = { .addr = t->bdma + PAGE_SIZE,
				       .length = 64,
				       .lkey = t->pd->local_dma_lkey };
		struct ib_recv_wr r = { .wr_id = 15, .sg_list = &rsge,
					.num_sge = 1 };
		struct ib_sge ssge = { .addr = t->bdma, .length = 32,
				       .lkey = t->pd->local_dma_lkey };
		struct ib_send_wr s = { .wr_id = 16,
					.opcode = IB_WR_SEND_WITH_INV,
					.sg_list = &ssge, .num_sge = 1,
					.ex.invalidate_rkey = key };
		const struct ib_recv_wr *bad;

		ib_post_recv(t->a.qp, &r, &bad);
		post(t->b.qp, &s);
		expect(&t->b, 16, IB_WC_SUCCESS, IB_WC_SEND, NULL,
		       "SEND_WITH_INV of the fast MR's rkey");
		if (expect(&t->a, 15, IB_WC_SUCCESS, IB_WC_RECV, &wc,
			   "receive of the SEND_WITH_INV"))
			tap((wc.wc_flags & IB_WC_WITH_INVALIDATE) &&
			    wc.ex.invalidate_rkey == key && wc.byte_len == 32,
			    "receive: IB_WC_WITH_INVALIDATE, invalidate_rkey %#x (want %#x), 32 B",
			    wc.ex.invalidate_rkey, key);
	}
	b_rdma(t, IB_WR_RDMA_WRITE, 17, key, iova, 0, 16);
	expect(&t->b, 17, IB_WC_REM_ACCESS_ERR, -1, NULL,
	       "WRITE with the remotely invalidated rkey");

	/* FREE again: it can be registered once more */
	if (!new_pair(t) || !reg_new_key(t, "REG_MR after remote invalidation"))
		return;
	rewind_over_reg(t);
}

/*
 * The device named dev_name_param, held (ib_device_get_by_name() is not
 * exported on every kernel): an ib_client sees every registered device
 * once, while ib_register_client() runs.
 */
static struct ib_device *found_dev;

static int find_dev_add(struct ib_device *dev)
{
	if (!found_dev && !strcmp(dev_name(&dev->dev), dev_name_param) &&
	    ib_device_try_get(dev))
		found_dev = dev;
	return 0;
}

static void find_dev_remove(struct ib_device *dev, void *client_data)
{
}

static struct ib_client find_dev_client = {
	.name = "rxe2_frmr_test",
	.add = find_dev_add,
	.remove = find_dev_remove,
};

static struct ib_device *get_dev_by_name(void)
{
	if (ib_register_client(&find_dev_client))
		return NULL;
	ib_unregister_client(&find_dev_client);
	return found_dev;
}

static int __init rxe2_frmr_test_init(void)
{
	struct t *t = kzalloc(sizeof(*t), GFP_KERNEL);
	int i;

	if (!t)
		return -ENOMEM;
	t->dev = get_dev_by_name();
	if (!t->dev) {
		tap(false, "device %s", dev_name_param);
		goto out;
	}
	t->pd = ib_alloc_pd(t->dev, 0);
	if (IS_ERR(t->pd)) {
		tap(false, "ib_alloc_pd: %ld", PTR_ERR(t->pd));
		t->pd = NULL;
		goto out;
	}
	for (i = 0; i < NPAGES; i++) {
		t->pages[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		if (!t->pages[i])
			goto out;
	}
	t->bbuf = kzalloc(BUF_LEN, GFP_KERNEL);
	if (!t->bbuf)
		goto out;
	t->bdma = ib_dma_map_single(t->dev, t->bbuf, BUF_LEN,
				    DMA_BIDIRECTIONAL);
	if (tap(!find_gid(t), "%s has an IPv4 RoCEv2 GID (index %d)",
		dev_name_param, t->sgid))
		run(t);
	ib_dma_unmap_single(t->dev, t->bdma, BUF_LEN, DMA_BIDIRECTIONAL);
out:
	side_free(&t->a);
	side_free(&t->b);
	if (t->sg[0].dma_address)
		ib_dma_unmap_sg(t->dev, t->sg, NPAGES, DMA_BIDIRECTIONAL);
	if (t->mr)
		ib_dereg_mr(t->mr);
	if (t->mr2)
		ib_dereg_mr(t->mr2);
	kfree(t->bbuf);
	for (i = 0; i < NPAGES; i++)
		if (t->pages[i])
			__free_page(t->pages[i]);
	if (t->pd)
		ib_dealloc_pd(t->pd);
	if (t->dev)
		ib_device_put(t->dev);
	kfree(t);
	pr_info("%s1..%d\n", KBUILD_MODNAME ": ", tap_n);
	return 0;
}

static void __exit rxe2_frmr_test_exit(void)
{
}

module_init(rxe2_frmr_test_init);
module_exit(rxe2_frmr_test_exit);
MODULE_LICENSE("Dual BSD/GPL");
MODULE_DESCRIPTION("rxe2 selftest: fast registration and invalidation");
