// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: CQ sizes at and beyond max_cqe, completion vectors and channels, notification, an empty poll, a busy CQ; rxe2's 262144-entry CQ at 64 bytes an entry
 *
 * Completion queues: sizes at and beyond the device limit, completion
 * vectors, completion channels, notification, polling an empty CQ and a
 * CQ that cannot die while a QP uses it.  On rxe2: a CQ as large as
 * libfabric's verbs;ofi_rxm asks by default (262144 entries) is created
 * and maps 64 bytes per entry, where a small one keeps the 256-byte
 * slots inline-receive needs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "util.h"

static void test_sizes(struct ibv_context *ctx, const struct ibv_device_attr *a)
{
	struct ibv_cq *cq;

	cq = ibv_create_cq(ctx, 1, NULL, NULL, 0);
	if (tap_ok(cq != NULL, "ibv_create_cq cqe 1")) {
		tap_ok(cq->cqe >= 1, "reported cqe %d >= 1", cq->cqe);
		tap_ret_errno(ibv_destroy_cq(cq), 0, "ibv_destroy_cq");
	}
	cq = ibv_create_cq(ctx, a->max_cqe, NULL, NULL, 0);
	if (tap_ok(cq != NULL, "ibv_create_cq cqe max_cqe (%d)", a->max_cqe)) {
		tap_ok(cq->cqe >= a->max_cqe, "reported cqe %d >= %d", cq->cqe,
		       a->max_cqe);
		tap_ret_errno(ibv_destroy_cq(cq), 0, "ibv_destroy_cq");
	}
	cq = ibv_create_cq(ctx, a->max_cqe + 1, NULL, NULL, 0);
	tap_null_errno(cq, EINVAL, "ibv_create_cq cqe max_cqe+1 -> EINVAL");
	if (cq)
		ibv_destroy_cq(cq);
	cq = ibv_create_cq(ctx, 0, NULL, NULL, 0);
	tap_null_errno(cq, EINVAL, "ibv_create_cq cqe 0 -> EINVAL");
	if (cq)
		ibv_destroy_cq(cq);
	cq = ibv_create_cq(ctx, -1, NULL, NULL, 0);
	tap_null_errno(cq, EINVAL, "ibv_create_cq cqe -1 -> EINVAL");
	if (cq)
		ibv_destroy_cq(cq);
}

/* Bytes of the uverbs device file this process has mapped (CQ rings). */
static unsigned long uverbs_mapped(void)
{
	unsigned long lo, hi, sum = 0;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "/dev/infiniband/uverbs") &&
		    sscanf(line, "%lx-%lx", &lo, &hi) == 2)
			sum += hi - lo;
	fclose(f);
	return sum;
}

/* The ring bytes a CQ of cqe entries maps, or 0 when creation fails. */
static unsigned long cq_ring_bytes(struct ibv_context *ctx, int cqe)
{
	unsigned long before = uverbs_mapped(), bytes;
	struct ibv_cq *cq = ibv_create_cq(ctx, cqe, NULL, NULL, 0);

	if (!cq)
		return 0;
	bytes = uverbs_mapped() - before;
	ibv_destroy_cq(cq);
	return bytes;
}

static void test_cq_memory(struct ibv_context *ctx,
			   const struct ibv_device_attr *a)
{
	const long big = 262144, small = 4096;
	unsigned long b;

	if (!test_is_rxe2(test_dev_name())) {
		tap_skip("CQ slot sizes: rxe2 only");
		tap_skip("CQ slot sizes: rxe2 only");
		return;
	}
	b = a->max_cqe >= big ? cq_ring_bytes(ctx, big) : 0;
	tap_ok(b >= big * 64 && b < big * 128,
	       "a CQ of %ld entries (libfabric's default) maps %lu bytes: 64 per entry",
	       big, b);
	b = cq_ring_bytes(ctx, small);
	tap_ok(b >= small * 256 && b < small * 512,
	       "a CQ of %ld entries maps %lu bytes: 256 per entry (inline-receive)",
	       small, b);
}

static void test_vectors(struct ibv_context *ctx)
{
	struct ibv_cq *cq;
	int n = ctx->num_comp_vectors;

	tap_ok(n >= 1, "num_comp_vectors %d >= 1", n);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, n - 1);
	tap_ok(cq != NULL, "ibv_create_cq comp_vector num_comp_vectors-1");
	if (cq)
		ibv_destroy_cq(cq);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, n);
	tap_null_errno(cq, EINVAL,
		       "ibv_create_cq comp_vector num_comp_vectors -> EINVAL");
	if (cq)
		ibv_destroy_cq(cq);
}

static void test_channel(struct ibv_context *ctx)
{
	struct ibv_comp_channel *ch;
	struct ibv_wc wc[4];
	struct ibv_cq *cq;

	ch = ibv_create_comp_channel(ctx);
	if (!tap_ok(ch != NULL, "ibv_create_comp_channel"))
		return;
	tap_ok(ch->fd >= 0, "the channel has an fd");
	cq = ibv_create_cq(ctx, 16, (void *)0x1234, ch, 0);
	if (tap_ok(cq != NULL, "ibv_create_cq on the channel")) {
		tap_ok(cq->channel == ch && cq->cq_context == (void *)0x1234,
		       "the CQ keeps its channel and cq_context");
		tap_ret_errno(ibv_req_notify_cq(cq, 0), 0,
			      "ibv_req_notify_cq next completion");
		tap_ret_errno(ibv_req_notify_cq(cq, 1), 0,
			      "ibv_req_notify_cq solicited only");
		tap_ret(ibv_poll_cq(cq, 4, wc), 0,
			"ibv_poll_cq on an empty CQ returns 0");
		tap_ret_errno(ibv_destroy_comp_channel(ch), EBUSY,
			      "ibv_destroy_comp_channel with a CQ on it -> EBUSY");
		tap_ret_errno(ibv_destroy_cq(cq), 0, "ibv_destroy_cq");
	}
	tap_ret_errno(ibv_destroy_comp_channel(ch), 0,
		      "ibv_destroy_comp_channel");
}

static void test_busy(struct ibv_context *ctx)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp *qp;

	if (!pd || !cq)
		tap_bail("ibv_alloc_pd/ibv_create_cq");
	init.send_cq = cq;
	init.recv_cq = cq;
	qp = ibv_create_qp(pd, &init);
	if (tap_ok(qp != NULL, "ibv_create_qp on the CQ")) {
		tap_ret_errno(ibv_destroy_cq(cq), EBUSY,
			      "ibv_destroy_cq used by a QP -> EBUSY");
		tap_ret_errno(ibv_destroy_qp(qp), 0, "ibv_destroy_qp");
	}
	tap_ret_errno(ibv_destroy_cq(cq), 0, "then ibv_destroy_cq succeeds");
	ibv_dealloc_pd(pd);
}

int main(void)
{
	const char *dev = test_dev_name();
	struct ibv_context *ctx = test_open(dev);
	struct ibv_device_attr a;

	if (ibv_query_device(ctx, &a))
		tap_bail("ibv_query_device");
	test_sizes(ctx, &a);
	test_cq_memory(ctx, &a);
	test_vectors(ctx);
	test_channel(ctx);
	test_busy(ctx);
	ibv_close_device(ctx);
	return tap_done();
}
