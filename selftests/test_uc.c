// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: UC data path: SEND and WRITE (with immediate) byte-exact, multi-packet; READ and atomics refused at post; a SEND without a receive dropped (no RNR), the next delivered
 *
 * UC data path (loopback over the IPv4 RoCEv2 GID): SEND, SEND_WITH_IMM,
 * RDMA_WRITE, RDMA_WRITE_WITH_IMM byte for byte at several sizes (multi-
 * packet at path MTU 1024), exact completions.  UC-specific behaviour:
 * RDMA_READ and atomics are refused at post time; a SEND with no receive
 * posted is dropped (no RNR: the sender completes, the QP stays in RTS)
 * and the next message is delivered normally.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dp.h"
#include "tap.h"
#include "util.h"

#define BUFLEN (256 * 1024)

static struct dp_dev dev;
static uint8_t *abuf, *bbuf;
static struct ibv_mr *amr, *bmr;
static struct dp_qp a, b;
static uint64_t id = 0x10;

static const char *opname(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_SEND: return "SEND";
	case IBV_WR_SEND_WITH_IMM: return "SEND_WITH_IMM";
	case IBV_WR_RDMA_WRITE: return "RDMA_WRITE";
	case IBV_WR_RDMA_WRITE_WITH_IMM: return "RDMA_WRITE_WITH_IMM";
	case IBV_WR_RDMA_READ: return "RDMA_READ";
	case IBV_WR_ATOMIC_FETCH_AND_ADD: return "ATOMIC_FETCH_AND_ADD";
	default: return "?";
	}
}

static void one(enum ibv_wr_opcode op, uint32_t len, size_t soff,
		size_t doff)
{
	bool imm = op == IBV_WR_SEND_WITH_IMM ||
		   op == IBV_WR_RDMA_WRITE_WITH_IMM;
	bool send = op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM;
	struct ibv_send_wr wr, *bad = NULL;
	struct ibv_sge sge;
	struct dp_wc_want w;
	uint64_t wid = id++;
	char what[96];
	int r = 0;

	snprintf(what, sizeof(what), "UC %s %u B", opname(op), len);
	memset(bbuf, 0xa5, doff + len + 64);
	dp_fill(abuf + soff, len, (uint32_t)wid);
	if (send)
		r = dp_post_recv1(b.qp, wid, bbuf + doff, len + 64,
				  bmr->lkey);
	else if (imm)
		r = dp_post_recv1(b.qp, wid, NULL, 0, bmr->lkey);
	sge = (struct ibv_sge){ .addr = (uintptr_t)abuf + soff,
				.length = len, .lkey = amr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wid;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.imm_data = htobe32(0xabc00000 + (uint32_t)wid);
	wr.wr.rdma.remote_addr = (uintptr_t)bbuf + doff;
	wr.wr.rdma.rkey = bmr->rkey;
	if (!r)
		r = ibv_post_send(a.qp, &wr, &bad);
	if (!tap_ret_errno(r, 0, "%s: post", what))
		return;
	w = dp_want(wid, send ? IBV_WC_SEND : IBV_WC_RDMA_WRITE);
	w.wc_flags = imm ? IBV_WC_WITH_IMM : 0;
	w.qp_num = a.qp->qp_num;
	dp_expect(a.scq, &w, "%s: requester completion", what);
	if (send || imm) {
		w = dp_want(wid, send ? IBV_WC_RECV :
					IBV_WC_RECV_RDMA_WITH_IMM);
		w.byte_len = len;
		w.wc_flags = imm ? IBV_WC_WITH_IMM : 0;
		w.flags_ignore = IBV_WC_GRH;
		w.imm = 0xabc00000 + (uint32_t)wid;
		w.qp_num = b.qp->qp_num;
		dp_expect(b.rcq, &w, "%s: responder completion", what);
	}
	/*
	 * A UC requester completes once the packets are out (no ACK): a
	 * plain WRITE's data may land a little later.
	 */
	if (!send && !imm) {
		uint64_t end = dp_now_ms() + 2000;

		while (dp_verify(bbuf + doff, len, (uint32_t)wid) >= 0 &&
		       dp_now_ms() < end)
			usleep(1000);
	}
	tap_ok(dp_verify(bbuf + doff, len, (uint32_t)wid) < 0 &&
	       dp_verify_byte(bbuf, doff, 0xa5) < 0 &&
	       dp_verify_byte(bbuf + doff + len, 64, 0xa5) < 0,
	       "%s: data byte-exact, nothing outside", what);
}

static void refused(enum ibv_wr_opcode op)
{
	int r = dp_post_send1(a.qp, 0x77, op, abuf, 8, amr->lkey,
			      (uintptr_t)bbuf, bmr->rkey, 0);
	struct ibv_wc wc;

	if (dev.rxe2)
		tap_ret_errno(r, EINVAL, "(rxe2) UC %s refused: EINVAL",
			      opname(op));
	else
		tap_ok(r != 0 || (dp_poll(a.scq, &wc, 1, DP_WAIT_MS) == 1 &&
				  wc.status != IBV_WC_SUCCESS),
		       "UC %s refused (post %s)", opname(op), strerror(r));
}

static void no_receive(void)
{
	struct dp_wc_want w;
	struct ibv_wc wc;
	int r;

	dp_fill(abuf, 100, 5);
	r = dp_post_send1(a.qp, 0x80, IBV_WR_SEND, abuf, 100, amr->lkey, 0,
			  0, 0);
	w = dp_want(0x80, IBV_WC_SEND);
	if (tap_ret_errno(r, 0, "UC SEND without a receive: post"))
		dp_expect(a.scq, &w,
			  "UC SEND without a receive: sender completes (no RNR on UC)");
	tap_ok(dp_poll_none(b.rcq, &wc, 100) == 0,
	       "UC SEND without a receive: dropped at the responder");
	tap_ret(qp_state(a.qp), IBV_QPS_RTS, "UC requester still in RTS");
	tap_ret(qp_state(b.qp), IBV_QPS_RTS, "UC responder still in RTS");
	one(IBV_WR_SEND, 3000, 1, 2);
}

int main(void)
{
	struct ibv_qp_cap cap = dp_small_cap;
	struct dp_conn c;
	int e;

	dp_open(&dev, test_dev_name());
	abuf = dp_alloc(BUFLEN);
	bbuf = dp_alloc(BUFLEN);
	amr = dp_reg(dev.pd, abuf, BUFLEN, IBV_ACCESS_LOCAL_WRITE |
		     IBV_ACCESS_REMOTE_WRITE);
	bmr = dp_reg(dev.pd, bbuf, BUFLEN, IBV_ACCESS_LOCAL_WRITE |
		     IBV_ACCESS_REMOTE_WRITE);
	dp_conn_default(&c);
	e = dp_pair(&dev, &dev, IBV_QPT_UC, &cap, &c, &a, &b);
	if (e)
		tap_bail("UC pair: %s", strerror(e));

	one(IBV_WR_SEND, 0, 0, 0);
	one(IBV_WR_SEND, 1, 1, 3);
	one(IBV_WR_SEND, 1024, 0, 0);
	one(IBV_WR_SEND, 4097, 3, 1);
	one(IBV_WR_SEND, 65536, 0, 7);
	one(IBV_WR_SEND_WITH_IMM, 0, 0, 0);
	one(IBV_WR_SEND_WITH_IMM, 2049, 5, 5);
	one(IBV_WR_RDMA_WRITE, 0, 0, 0);
	one(IBV_WR_RDMA_WRITE, 63, 1, 2);
	one(IBV_WR_RDMA_WRITE, 65536 + 3, 2, 1);
	one(IBV_WR_RDMA_WRITE_WITH_IMM, 0, 0, 0);
	one(IBV_WR_RDMA_WRITE_WITH_IMM, 10000, 7, 9);
	no_receive();
	refused(IBV_WR_RDMA_READ);
	refused(IBV_WR_ATOMIC_FETCH_AND_ADD);

	dp_qp_free(&a);
	dp_qp_free(&b);
	ibv_dereg_mr(amr);
	ibv_dereg_mr(bmr);
	dp_close(&dev);
	return tap_done();
}
