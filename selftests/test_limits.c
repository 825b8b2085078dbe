// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: every object limit (max_pd/cq/qp/srq/ah/mr) enforced exactly, counting what already exists: ENOMEM one past it, everything freed
 *
 * Every object limit the device reports is enforced exactly: with what
 * already exists on the device (kernel consumers such as ib_mad hold a
 * PD, a CQ and QP1) taken from `rdma resource show`, exactly
 * max_X - existing objects can be created, and the next one fails with
 * ENOMEM.  Everything is freed and the counts return.
 *
 * Sizes beyond the limits (max_cqe, max_qp_wr, max_sge, max_srq_wr,
 * max_srq_sge, max_inline_data) are EINVAL and tested with their
 * objects in test_cq, test_qp and test_srq.
 *
 * The run harness loads rdma_rxe2 with small limits; a device whose
 * limit is larger than CAP objects (the in-tree rxe) is skipped.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "util.h"

#define CAP 4096

static const char *dev;
static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static union ibv_gid gid;
static int gid_index;
static char buf[4096];

static void *mk_pd(void)
{
	return ibv_alloc_pd(ctx);
}

static int rm_pd(void *o)
{
	return ibv_dealloc_pd(o);
}

static void *mk_cq(void)
{
	return ibv_create_cq(ctx, 1, NULL, NULL, 0);
}

static int rm_cq(void *o)
{
	return ibv_destroy_cq(o);
}

static void *mk_qp(void)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_UD,
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return ibv_create_qp(pd, &init);
}

static int rm_qp(void *o)
{
	return ibv_destroy_qp(o);
}

static void *mk_mr(void)
{
	return ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
}

static int rm_mr(void *o)
{
	return ibv_dereg_mr(o);
}

static void *mk_srq(void)
{
	struct ibv_srq_init_attr init = { .attr = { .max_wr = 1, .max_sge = 1 } };

	return ibv_create_srq(pd, &init);
}

static int rm_srq(void *o)
{
	return ibv_destroy_srq(o);
}

static void *mk_ah(void)
{
	struct ibv_ah_attr a = {
		.is_global = 1,
		.port_num = PORT,
		.grh = { .dgid = gid, .sgid_index = gid_index, .hop_limit = 64 },
	};

	return ibv_create_ah(pd, &a);
}

static int rm_ah(void *o)
{
	return ibv_destroy_ah(o);
}

/*
 * existing: objects the device holds that the test cannot see as its
 * own, -1 when unknown.  restype: the `rdma resource show` name, NULL
 * when it has none (AHs are not tracked there).
 */
static void exhaust(const char *name, int limit, const char *restype,
		    int existing, void *(*mk)(void), int (*rm)(void *))
{
	int want, n, before, i, bad = 0;
	void **objs, *extra;

	if (existing < 0) {
		tap_skip("max_%s: cannot count existing objects", name);
		return;
	}
	want = limit - existing;
	if (want > CAP) {
		tap_skip("max_%s %d is beyond what is tested here (%d)", name,
			 limit, CAP);
		return;
	}
	before = restype ? res_count(dev, restype) : 0;
	objs = calloc(want > 0 ? want : 1, sizeof(*objs));
	if (!objs)
		tap_bail("calloc");
	for (n = 0; n < want; n++) {
		objs[n] = mk();
		if (!objs[n])
			break;
	}
	if (!tap_ret(n, want, "%d %ss fill max_%s %d (%d already exist)",
		     want, name, name, limit, existing))
		tap_diag("  creation %d failed: errno %d (%s)", n + 1, errno,
			 strerror(errno));
	if (restype)
		tap_ret(res_count(dev, restype), before + n,
			"rdma resource show counts them");
	extra = n == want ? mk() : NULL;
	if (n == want)
		tap_null_errno(extra, ENOMEM, "one more %s -> ENOMEM", name);
	else
		tap_skip("one more %s: the limit was not reached", name);
	if (extra)
		rm(extra);
	for (i = 0; i < n; i++)
		if (rm(objs[i]))
			bad++;
	tap_ok(!bad, "all %d %ss destroyed", n, name);
	if (restype)
		tap_ret(res_count(dev, restype), before,
			"rdma resource show count back to %d", before);
	free(objs);
}

int main(void)
{
	struct ibv_device_attr a;

	dev = test_dev_name();
	ctx = test_open(dev);
	if (ibv_query_device(ctx, &a))
		tap_bail("ibv_query_device");
	gid_index = find_ipv4_gid(ctx, &gid);
	if (gid_index < 0)
		tap_bail("no IPv4 RoCEv2 GID");
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (!pd || !cq)
		tap_bail("ibv_alloc_pd/ibv_create_cq");

	/* pd and cq above are among the existing objects */
	exhaust("pd", a.max_pd, "pd", res_count(dev, "pd"), mk_pd, rm_pd);
	exhaust("cq", a.max_cq, "cq", res_count(dev, "cq"), mk_cq, rm_cq);
	exhaust("qp", a.max_qp, "qp", res_count(dev, "qp"), mk_qp, rm_qp);
	exhaust("srq", a.max_srq, "srq", res_count(dev, "srq"), mk_srq, rm_srq);
	/* no AH is tracked by restrack and none outlives its user here */
	exhaust("ah", a.max_ah, NULL, 0, mk_ah, rm_ah);
	/*
	 * ib_alloc_pd() gives each kernel PD an internal DMA MR that
	 * restrack does not list; rxe2 does not count it against max_mr
	 * either (rxe2_mr.c), so restrack's count is the whole truth.
	 */
	exhaust("mr", a.max_mr, "mr", res_count(dev, "mr"), mk_mr, rm_mr);

	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return tap_done();
}
