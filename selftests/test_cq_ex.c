// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: extended CQs: ibv_create_cq_ex, start/next/end_poll and the read_* getters over RC and UD traffic, ENOENT when empty, posting order, batches
 *
 * Extended CQs: ibv_create_cq_ex with byte_len, imm, qp_num and src_qp,
 * polled with start_poll / next_poll / end_poll and the read_* getters
 * over real RC and UD traffic (loopback over the IPv4 RoCEv2 GID).  An
 * empty CQ answers ENOENT; completions come in posting order with every
 * field exact; a batch is walked in one start/next/end sequence.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dp.h"
#include "tap.h"
#include "util.h"

#define WCF (IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM |                   \
	     IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP)

static struct dp_dev dev;
static struct ibv_cq_ex *scx, *rcx;
static uint8_t *buf;
static struct ibv_mr *mr;

struct got {
	uint64_t wr_id;
	int status, opcode;
	uint32_t byte_len, qp_num, src_qp, imm;
	unsigned int flags;
};

static void read_got(struct ibv_cq_ex *cq, int k, void *arg)
{
	struct got *g = (struct got *)arg + k;

	g->wr_id = cq->wr_id;
	g->status = cq->status;
	g->opcode = ibv_wc_read_opcode(cq);
	g->byte_len = ibv_wc_read_byte_len(cq);
	g->qp_num = ibv_wc_read_qp_num(cq);
	g->src_qp = ibv_wc_read_src_qp(cq);
	g->flags = ibv_wc_read_wc_flags(cq);
	g->imm = g->flags & IBV_WC_WITH_IMM ?
		 be32toh(ibv_wc_read_imm_data(cq)) : 0;
}

/* Collects n completions within the deadline in as few batches as come. */
static int collect(struct ibv_cq_ex *cq, struct got *g, int n)
{
	return dp_poll_ex(cq, n, read_got, g);
}

static void check(const struct got *g, uint64_t wr_id, int opcode,
		  long byte_len, unsigned int flags, long imm,
		  uint32_t qp_num, long src_qp, const char *what)
{
	bool ok = g->wr_id == wr_id && g->status == IBV_WC_SUCCESS &&
		  g->opcode == opcode &&
		  (byte_len < 0 || g->byte_len == (uint32_t)byte_len) &&
		  (g->flags & ~IBV_WC_GRH) == (flags & ~IBV_WC_GRH) &&
		  (!(flags & IBV_WC_GRH) || (g->flags & IBV_WC_GRH)) &&
		  (imm < 0 || g->imm == (uint32_t)imm) && g->qp_num == qp_num &&
		  (src_qp < 0 || g->src_qp == (uint32_t)src_qp);

	if (!tap_ok(ok, "%s", what))
		tap_diag("  wr_id %#llx status %s opcode %d byte_len %u flags %#x imm %#x qp_num %#x src_qp %#x",
			 (unsigned long long)g->wr_id,
			 dp_status_str(g->status), g->opcode, g->byte_len,
			 g->flags, g->imm, g->qp_num, g->src_qp);
}

static struct ibv_cq_ex *mkcq(void)
{
	struct ibv_cq_init_attr_ex a = { .cqe = 64, .wc_flags = WCF };
	struct ibv_cq_ex *cq = ibv_create_cq_ex(dev.ctx, &a);

	if (!cq)
		tap_bail("ibv_create_cq_ex: %s", strerror(errno));
	return cq;
}

static void rc(void)
{
	struct ibv_qp_cap cap = dp_small_cap;
	struct ibv_cq *s = ibv_cq_ex_to_cq(scx), *r = ibv_cq_ex_to_cq(rcx);
	struct ibv_qp *a, *b;
	struct ibv_send_wr wr[4], *bad;
	struct ibv_sge sge[4];
	struct got g[8];
	struct dp_conn c;
	int i, n;

	a = dp_create_qp(&dev, IBV_QPT_RC, s, s, NULL, &cap);
	b = dp_create_qp(&dev, IBV_QPT_RC, r, r, NULL, &cap);
	dp_conn_default(&c);
	if (!a || !b || dp_connect(a, &dev, &dev.gid, b->qp_num, &c) ||
	    dp_connect(b, &dev, &dev.gid, a->qp_num, &c))
		tap_bail("RC pair: %s", strerror(errno));
	{
		struct ibv_poll_cq_attr pa = { 0 };

		tap_ret_errno(ibv_start_poll(scx, &pa), ENOENT,
			      "empty CQ: start_poll is ENOENT");
	}
	dp_fill(buf, 3000, 1);
	tap_ret_errno(dp_post_recv1(b, 0x20, buf + 8192, 4096, mr->lkey), 0,
		      "RC: post receive 1");
	tap_ret_errno(dp_post_recv1(b, 0x21, buf + 16384, 4096, mr->lkey), 0,
		      "RC: post receive 2");
	tap_ret_errno(dp_post_recv1(b, 0x22, NULL, 0, mr->lkey), 0,
		      "RC: post receive 3");
	memset(wr, 0, sizeof(wr));
	for (i = 0; i < 4; i++) {
		sge[i] = (struct ibv_sge){ .addr = (uintptr_t)buf,
					   .length = 1000 + i,
					   .lkey = mr->lkey };
		wr[i].wr_id = 0x10 + i;
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].next = i < 3 ? &wr[i + 1] : NULL;
		wr[i].imm_data = htobe32(0x5000 + i);
		wr[i].wr.rdma.rkey = mr->rkey;
	}
	wr[0].opcode = IBV_WR_SEND;
	wr[1].opcode = IBV_WR_SEND_WITH_IMM;
	wr[2].opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	wr[2].wr.rdma.remote_addr = (uintptr_t)buf + 24576;
	wr[3].opcode = IBV_WR_RDMA_READ;
	wr[3].wr.rdma.remote_addr = (uintptr_t)buf;
	sge[3].addr = (uintptr_t)buf + 32768;
	tap_ret_errno(ibv_post_send(a, wr, &bad), 0,
		      "RC: post SEND, SEND_WITH_IMM, WRITE_WITH_IMM, READ");
	n = collect(scx, g, 4);
	tap_ret(n, 4, "RC: 4 requester completions");
	if (n == 4) {
		check(&g[0], 0x10, IBV_WC_SEND, -1, 0, 0, a->qp_num, -1,
		      "RC requester: SEND");
		/* imm_data is a receive-side field: not compared here */
		check(&g[1], 0x11, IBV_WC_SEND, -1, IBV_WC_WITH_IMM, -1,
		      a->qp_num, -1, "RC requester: SEND_WITH_IMM");
		check(&g[2], 0x12, IBV_WC_RDMA_WRITE, -1, IBV_WC_WITH_IMM,
		      -1, a->qp_num, -1, "RC requester: RDMA_WRITE_WITH_IMM");
		check(&g[3], 0x13, IBV_WC_RDMA_READ, 1003, 0, 0, a->qp_num,
		      -1, "RC requester: RDMA_READ, byte_len 1003");
	}
	n = collect(rcx, g, 3);
	tap_ret(n, 3, "RC: 3 responder completions");
	if (n == 3) {
		check(&g[0], 0x20, IBV_WC_RECV, 1000, 0, 0, b->qp_num, -1,
		      "RC responder: RECV 1000 B");
		check(&g[1], 0x21, IBV_WC_RECV, 1001, IBV_WC_WITH_IMM, 0x5001,
		      b->qp_num, -1, "RC responder: RECV 1001 B with imm");
		check(&g[2], 0x22, IBV_WC_RECV_RDMA_WITH_IMM, 1002,
		      IBV_WC_WITH_IMM, 0x5002, b->qp_num, -1,
		      "RC responder: RECV_RDMA_WITH_IMM 1002 B");
	}
	tap_ok(dp_verify(buf + 8192, 1000, 1) < 0 &&
	       dp_verify(buf + 16384, 1001, 1) < 0 &&
	       dp_verify(buf + 24576, 1002, 1) < 0 &&
	       dp_verify(buf + 32768, 1003, 1) < 0,
	       "RC: all four payloads byte-exact");
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
}

static void ud(void)
{
	struct ibv_qp_cap cap = dp_small_cap;
	struct ibv_cq *s = ibv_cq_ex_to_cq(scx), *r = ibv_cq_ex_to_cq(rcx);
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	struct ibv_qp *a, *b;
	struct ibv_ah *ah;
	struct dp_conn c;
	struct got g[2];
	int n;

	a = dp_create_qp(&dev, IBV_QPT_UD, s, s, NULL, &cap);
	b = dp_create_qp(&dev, IBV_QPT_UD, r, r, NULL, &cap);
	dp_conn_default(&c);
	if (!a || !b || dp_connect(a, &dev, NULL, 0, &c) ||
	    dp_connect(b, &dev, NULL, 0, &c))
		tap_bail("UD QPs: %s", strerror(errno));
	ah = dp_loop_ah(&dev);
	dp_fill(buf, 500, 2);
	tap_ret_errno(dp_post_recv1(b, 0x40, buf + 8192, 1024, mr->lkey), 0,
		      "UD: post receive");
	sge = (struct ibv_sge){ .addr = (uintptr_t)buf, .length = 500,
				.lkey = mr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0x41;
	wr.opcode = IBV_WR_SEND_WITH_IMM;
	wr.imm_data = htobe32(0x77);
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = b->qp_num;
	wr.wr.ud.remote_qkey = c.qkey;
	tap_ret_errno(ibv_post_send(a, &wr, &bad), 0, "UD: post SEND_WITH_IMM");
	n = collect(scx, g, 1);
	if (tap_ret(n, 1, "UD: requester completion"))
		check(&g[0], 0x41, IBV_WC_SEND, -1, IBV_WC_WITH_IMM, -1,
		      a->qp_num, -1, "UD requester: SEND, WITH_IMM");
	n = collect(rcx, g, 1);
	if (tap_ret(n, 1, "UD: receive completion"))
		check(&g[0], 0x40, IBV_WC_RECV, 540,
		      IBV_WC_GRH | IBV_WC_WITH_IMM, 0x77, b->qp_num,
		      a->qp_num,
		      "UD responder: RECV 40+500 B, GRH|WITH_IMM, src_qp = sender");
	tap_ok(dp_verify(buf + 8192 + 40, 500, 2) < 0, "UD: payload byte-exact");
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	ibv_destroy_ah(ah);
}

int main(void)
{
	dp_open(&dev, test_dev_name());
	buf = dp_alloc(65536);
	mr = dp_reg(dev.pd, buf, 65536, DP_ACCESS_ALL);
	scx = mkcq();
	rcx = mkcq();
	rc();
	ud();
	tap_ret_errno(ibv_destroy_cq(ibv_cq_ex_to_cq(scx)), 0,
		      "destroy extended CQ");
	tap_ret_errno(ibv_destroy_cq(ibv_cq_ex_to_cq(rcx)), 0,
		      "destroy extended CQ");
	ibv_dereg_mr(mr);
	dp_close(&dev);
	return tap_done();
}
