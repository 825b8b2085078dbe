// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: SRQ sizes at and beyond the limits, srq_limit, queries, a QP on an SRQ, a busy SRQ
 *
 * Shared receive queues: sizes at and beyond the device limits, the
 * srq_limit attribute, queries, a QP on an SRQ and an SRQ that cannot
 * die while a QP uses it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tap.h"
#include "util.h"

static struct ibv_pd *pd;
static struct ibv_device_attr dattr;

static struct ibv_srq *srq_create(uint32_t wr, uint32_t sge, uint32_t limit)
{
	struct ibv_srq_init_attr init = {
		.attr = { .max_wr = wr, .max_sge = sge, .srq_limit = limit },
	};

	return ibv_create_srq(pd, &init);
}

static void test_sizes(void)
{
	struct ibv_srq_init_attr init = {
		.attr = { .max_wr = 16, .max_sge = 2 },
	};
	struct ibv_srq *srq;

	srq = ibv_create_srq(pd, &init);
	if (tap_ok(srq != NULL, "ibv_create_srq max_wr 16 max_sge 2")) {
		tap_ok(init.attr.max_wr >= 16 && init.attr.max_sge >= 2,
		       "reported max_wr %u, max_sge %u >= requested",
		       init.attr.max_wr, init.attr.max_sge);
		tap_ret_errno(ibv_destroy_srq(srq), 0, "ibv_destroy_srq");
	}
	srq = srq_create(dattr.max_srq_wr, dattr.max_srq_sge, 0);
	if (tap_ok(srq != NULL, "ibv_create_srq at max_srq_wr %d, max_srq_sge %d",
		   dattr.max_srq_wr, dattr.max_srq_sge))
		ibv_destroy_srq(srq);
	srq = srq_create(dattr.max_srq_wr + 1, 1, 0);
	tap_null_errno(srq, EINVAL, "ibv_create_srq max_wr max_srq_wr+1 -> EINVAL");
	if (srq)
		ibv_destroy_srq(srq);
	srq = srq_create(16, dattr.max_srq_sge + 1, 0);
	tap_null_errno(srq, EINVAL,
		       "ibv_create_srq max_sge max_srq_sge+1 -> EINVAL");
	if (srq)
		ibv_destroy_srq(srq);
	srq = srq_create(0, 1, 0);
	tap_null_errno(srq, EINVAL, "ibv_create_srq max_wr 0 -> EINVAL");
	if (srq)
		ibv_destroy_srq(srq);
}

static void test_limit(void)
{
	struct ibv_srq *srq = srq_create(16, 1, 0);
	struct ibv_srq_attr a;

	if (!srq)
		tap_bail("ibv_create_srq");
	memset(&a, 0, sizeof(a));
	if (tap_ret_errno(ibv_query_srq(srq, &a), 0, "ibv_query_srq"))
		tap_ok(a.max_wr >= 16 && a.max_sge >= 1 && a.srq_limit == 0,
		       "query: max_wr %u, max_sge %u, srq_limit %u", a.max_wr,
		       a.max_sge, a.srq_limit);
	a.srq_limit = 4;
	tap_ret_errno(ibv_modify_srq(srq, &a, IBV_SRQ_LIMIT), 0,
		      "ibv_modify_srq srq_limit 4");
	memset(&a, 0, sizeof(a));
	ibv_query_srq(srq, &a);
	tap_ret(a.srq_limit, 4, "ibv_query_srq reports srq_limit 4");
	a.srq_limit = a.max_wr + 1;
	tap_ret_errno(ibv_modify_srq(srq, &a, IBV_SRQ_LIMIT), EINVAL,
		      "ibv_modify_srq srq_limit max_wr+1 -> EINVAL");
	memset(&a, 0, sizeof(a));
	ibv_query_srq(srq, &a);
	tap_ret(a.srq_limit, 4, "srq_limit still 4");
	tap_ret_errno(ibv_destroy_srq(srq), 0, "ibv_destroy_srq");
}

static void test_qp_on_srq(struct ibv_context *ctx)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_srq *srq = srq_create(16, 1, 0);
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_send_sge = 1 },
	}, qinit;
	struct ibv_qp_attr qa;
	struct ibv_qp *qp;

	if (!cq || !srq)
		tap_bail("ibv_create_cq/ibv_create_srq");
	init.send_cq = cq;
	init.recv_cq = cq;
	init.srq = srq;
	qp = ibv_create_qp(pd, &init);
	if (tap_ok(qp != NULL, "ibv_create_qp RC on an SRQ")) {
		tap_ok(qp->srq == srq, "qp->srq is the SRQ");
		memset(&qinit, 0, sizeof(qinit));
		tap_ok(!ibv_query_qp(qp, &qa, IBV_QP_STATE, &qinit) &&
		       qinit.srq == srq, "ibv_query_qp reports the SRQ");
		tap_ret_errno(ibv_destroy_srq(srq), EBUSY,
			      "ibv_destroy_srq used by a QP -> EBUSY");
		tap_ret_errno(ibv_destroy_qp(qp), 0, "ibv_destroy_qp");
	}
	tap_ret_errno(ibv_destroy_srq(srq), 0, "then ibv_destroy_srq succeeds");
	ibv_destroy_cq(cq);
}

int main(void)
{
	const char *dev = test_dev_name();
	struct ibv_context *ctx = test_open(dev);

	if (ibv_query_device(ctx, &dattr))
		tap_bail("ibv_query_device");
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		tap_bail("ibv_alloc_pd");
	test_sizes();
	test_limit();
	test_qp_on_srq(ctx);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return tap_done();
}
