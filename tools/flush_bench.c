// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * IBTA 1.5 and device-memory probe for tools/bench: what a FLUSH and an
 * ATOMIC WRITE cost, and whether device memory is faster to reach.  On
 * each device named (rxe2's, then rdma_rxe's), over a loopback RC pair,
 * the mean round trip of one operation at a time:
 *   - a 64-byte RDMA WRITE, signaled,
 *   - the same WRITE into an MR over device memory (ibv_alloc_dm),
 *   - the same WRITE unsignaled followed by a FLUSH of its range
 *     (rxe2dv_wr_flush; rdma-core 44's rxe provider has no FLUSH),
 *   - an 8-byte ATOMIC WRITE, and an 8-byte FETCH_ADD next to it.
 * A device without the operation prints n/a.  Markdown table rows:
 * | operation | rxe2 | rdma_rxe | unit | rxe2/rdma_rxe |.  A probe, not a
 * test.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/rxe2dv.h>

#include "dp.h"
#include "tap.h"

#define CAP_FLUSH_GLOBAL	(1ULL << 38)
#define CAP_ATOMIC_WRITE	(1ULL << 40)

enum { OP_WRITE, OP_WRITE_DM, OP_WRITE_FLUSH, OP_ATOMIC_WRITE, OP_FADD,
       OP_NUM };

static const char *const op_name[OP_NUM] = {
	"64 B RDMA WRITE", "64 B RDMA WRITE to device memory",
	"64 B RDMA WRITE + FLUSH", "8 B ATOMIC WRITE", "8 B FETCH_ADD",
};

struct bench {
	struct dp_dev d;
	struct ibv_cq *cq;
	struct ibv_qp *a, *b;
	struct ibv_qp_ex *x;
	uint8_t *buf;
	struct ibv_mr *mr;
	struct ibv_mr *dm_mr;	/* NULL: the device has no device memory */
	bool flush, aw;
};

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static struct ibv_qp *mkqp(struct bench *b, uint64_t ops)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_RC,
		.send_cq = b->cq,
		.recv_cq = b->cq,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = b->d.pd,
		.send_ops_flags = ops,
	};
	struct ibv_qp *qp = ibv_create_qp_ex(b->d.ctx, &a);

	if (!qp)
		tap_bail("%s: ibv_create_qp_ex: %s", b->d.name, strerror(errno));
	return qp;
}

static void setup(struct bench *b, const char *name)
{
	uint64_t ops = IBV_QP_EX_WITH_RDMA_WRITE |
		       IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
	struct ibv_device_attr_ex attr;
	int access = DP_ACCESS_ALL;
	struct dp_conn c;

	dp_open(&b->d, name);
	if (ibv_query_device_ex(b->d.ctx, NULL, &attr))
		tap_bail("%s: ibv_query_device_ex", name);
	b->aw = attr.device_cap_flags_ex & CAP_ATOMIC_WRITE;
	b->flush = b->d.rxe2 && (attr.device_cap_flags_ex & CAP_FLUSH_GLOBAL);
	if (b->aw)
		ops |= IBV_QP_EX_WITH_ATOMIC_WRITE;
	if (b->flush) {
		ops |= RXE2DV_QP_EX_WITH_FLUSH;
		access |= RXE2DV_ACCESS_FLUSH_GLOBAL;
	}
	b->cq = ibv_create_cq(b->d.ctx, 32, NULL, NULL, 0);
	if (!b->cq)
		tap_bail("%s: ibv_create_cq", name);
	b->a = mkqp(b, ops);
	b->b = mkqp(b, ops);
	b->x = ibv_qp_to_qp_ex(b->a);
	b->buf = dp_alloc(8192);
	b->mr = dp_reg(b->d.pd, b->buf, 8192, access);
	if (attr.max_dm_size >= 8192) {
		struct ibv_alloc_dm_attr da = { .length = 8192 };
		struct ibv_dm *dm = ibv_alloc_dm(b->d.ctx, &da);

		if (dm)
			b->dm_mr = ibv_reg_dm_mr(b->d.pd, dm, 0, 8192,
						 IBV_ACCESS_ZERO_BASED |
						 DP_ACCESS_ALL);
	}
	dp_conn_default(&c);
	c.access |= access & RXE2DV_ACCESS_FLUSH_GLOBAL;
	if (dp_connect(b->a, &b->d, &b->d.gid, b->b->qp_num, &c) ||
	    dp_connect(b->b, &b->d, &b->d.gid, b->a->qp_num, &c))
		tap_bail("%s: connect: %s", name, strerror(errno));
}

static void post(struct bench *b, int op)
{
	uint64_t remote = (uintptr_t)b->buf + 4096, v = 1;

	ibv_wr_start(b->x);
	b->x->wr_flags = IBV_SEND_SIGNALED;
	switch (op) {
	case OP_WRITE_DM:
		ibv_wr_rdma_write(b->x, b->dm_mr->rkey, 4096);
		ibv_wr_set_sge(b->x, b->mr->lkey, (uintptr_t)b->buf, 64);
		break;
	case OP_WRITE_FLUSH:
		b->x->wr_flags = 0;
		/* fall through */
	case OP_WRITE:
		ibv_wr_rdma_write(b->x, b->mr->rkey, remote);
		ibv_wr_set_sge(b->x, b->mr->lkey, (uintptr_t)b->buf, 64);
		if (op == OP_WRITE)
			break;
		b->x->wr_flags = IBV_SEND_SIGNALED;
		rxe2dv_wr_flush(b->x, b->mr->rkey, remote, 64,
				RXE2DV_FLUSH_GLOBAL, RXE2DV_FLUSH_RANGE);
		break;
	case OP_ATOMIC_WRITE:
		ibv_wr_atomic_write(b->x, b->mr->rkey, remote, &v);
		break;
	default:
		ibv_wr_atomic_fetch_add(b->x, b->mr->rkey, remote, 1);
		ibv_wr_set_sge(b->x, b->mr->lkey, (uintptr_t)b->buf, 8);
	}
	if (ibv_wr_complete(b->x))
		tap_bail("%s: %s: post", b->d.name, op_name[op]);
}

/* mean microseconds per operation, or -1 where the device lacks it */
static double run(struct bench *b, int op, int iters)
{
	double t0;
	int i;

	if ((op == OP_WRITE_FLUSH && !b->flush) ||
	    (op == OP_ATOMIC_WRITE && !b->aw) ||
	    (op == OP_WRITE_DM && !b->dm_mr))
		return -1;
	t0 = now_us();
	for (i = 0; i < iters; i++) {
		struct ibv_wc wc;

		post(b, op);
		if (dp_poll(b->cq, &wc, 1, DP_WAIT_MS) != 1 ||
		    wc.status != IBV_WC_SUCCESS)
			tap_bail("%s: %s: completion", b->d.name, op_name[op]);
	}
	return (now_us() - t0) / iters;
}

static void fmt(char *s, size_t n, double v)
{
	if (v < 0)
		snprintf(s, n, "n/a");
	else
		snprintf(s, n, "%.1f", v);
}

int main(int argc, char **argv)
{
	struct bench b[2];
	int iters, op, i;

	if (argc != 4)
		tap_bail("usage: flush_bench RXE2_DEV RXE_DEV ITERATIONS");
	iters = atoi(argv[3]);
	memset(b, 0, sizeof(b));
	for (i = 0; i < 2; i++)
		setup(&b[i], argv[1 + i]);
	for (op = 0; op < OP_NUM; op++) {
		double v[2];
		char s[2][32], r[32];

		for (i = 0; i < 2; i++) {
			run(&b[i], op, iters / 10 + 1);	/* warm up */
			v[i] = run(&b[i], op, iters);
			fmt(s[i], sizeof(s[i]), v[i]);
		}
		if (v[0] < 0 || v[1] <= 0)
			snprintf(r, sizeof(r), "n/a");
		else
			snprintf(r, sizeof(r), "%.2f", v[0] / v[1]);
		printf("| %s | %s | %s | usec | %s |\n", op_name[op], s[0],
		       s[1], r);
	}
	return 0;
}
