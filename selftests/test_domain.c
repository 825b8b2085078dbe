// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: thread and parent domains: a parent domain in its PD's place for MRs, QPs and a CQ under RC traffic, the refused arguments' errnos, EBUSY of a PD or TD in use, custom allocators
 *
 * Thread domains and parent domains (ibv_alloc_td, ibv_alloc_parent_domain).
 *
 * A parent domain stands in for its PD everywhere: MRs registered on it
 * and on the PD serve the same QPs, QPs and a CQ (IBV_CQ_INIT_ATTR_MASK_PD)
 * made on it carry RC traffic byte-exact.  Every argument the verbs
 * refuse is refused with its errno, a PD or thread domain that a parent
 * domain still uses cannot go (EBUSY), and the custom allocators are
 * accepted but never called (rxe2 has no buffers of its own to allocate).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dp.h"
#include "tap.h"
#include "util.h"

static int allocs;

static void *count_alloc(struct ibv_pd *pd, void *ctx, size_t size,
			 size_t alignment, uint64_t type)
{
	(void)pd, (void)ctx, (void)size, (void)alignment, (void)type;
	allocs++;
	return IBV_ALLOCATOR_USE_DEFAULT;
}

static void count_free(struct ibv_pd *pd, void *ctx, void *ptr,
		       uint64_t type)
{
	(void)pd, (void)ctx, (void)ptr, (void)type;
	allocs++;
}

static void test_refused(struct dp_dev *d, struct ibv_td *td,
			 struct ibv_pd *parent)
{
	struct ibv_td_init_attr ta = { .comp_mask = 1 };
	struct ibv_parent_domain_init_attr pa = { .pd = d->pd, .td = td };
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 16, .comp_mask = IBV_CQ_INIT_ATTR_MASK_PD,
		.parent_domain = d->pd,
	};

	tap_null_errno(ibv_alloc_td(d->ctx, &ta), EINVAL,
		       "ibv_alloc_td with an unknown comp_mask -> EINVAL");
	pa.comp_mask = 1 << 7;
	tap_null_errno(ibv_alloc_parent_domain(d->ctx, &pa), EINVAL,
		       "parent domain with an unknown comp_mask -> EINVAL");
	pa.comp_mask = 0;
	pa.pd = NULL;
	tap_null_errno(ibv_alloc_parent_domain(d->ctx, &pa), EINVAL,
		       "parent domain without a PD -> EINVAL");
	pa.pd = parent;
	tap_null_errno(ibv_alloc_parent_domain(d->ctx, &pa), EINVAL,
		       "parent domain over a parent domain -> EINVAL");
	tap_null_errno(ibv_create_cq_ex(d->ctx, &ca), EINVAL,
		       "CQ with IBV_CQ_INIT_ATTR_MASK_PD naming a plain PD -> EINVAL");
	tap_ret_errno(ibv_dealloc_pd(d->pd), EBUSY,
		      "ibv_dealloc_pd of a PD a parent domain wraps -> EBUSY");
	tap_ret_errno(ibv_dealloc_td(td), EBUSY,
		      "ibv_dealloc_td of a thread domain in use -> EBUSY");
}

/*
 * IBV_PARENT_DOMAIN_INIT_ATTR_ALLOW_CC_UNPROTECTED_ALLOC (rdma-core 64 on):
 * a permission, which a device without IBV_DEVICE_CC_DMA_BOUNCE may leave
 * unused, so accepted as mlx5 accepts it; the parent domain works.
 */
#define ALLOW_CC_UNPROTECTED_ALLOC (1U << 2)

static void test_cc_permission(struct dp_dev *d)
{
	struct ibv_parent_domain_init_attr pa = {
		.pd = d->pd, .comp_mask = ALLOW_CC_UNPROTECTED_ALLOC,
	};
	static char buf[4096];
	struct ibv_pd *parent;
	struct ibv_mr *mr;

	parent = ibv_alloc_parent_domain(d->ctx, &pa);
	if (!tap_ok(parent != NULL,
		    "parent domain with ALLOW_CC_UNPROTECTED_ALLOC (a permission)")) {
		tap_skip("an MR on that parent domain: none");
		tap_skip("its ibv_dealloc_pd: none");
		return;
	}
	mr = ibv_reg_mr(parent, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	tap_ok(mr && mr->pd == parent, "an MR on that parent domain");
	if (mr)
		ibv_dereg_mr(mr);
	tap_ret_errno(ibv_dealloc_pd(parent), 0, "and its ibv_dealloc_pd");
}

static struct ibv_qp *make_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = dp_small_cap,
	};

	return ibv_create_qp(pd, &a);
}

/* RC between two QPs on the parent domain, sharing its CQ */
static void test_traffic(struct dp_dev *d, struct ibv_pd *parent)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 64, .comp_mask = IBV_CQ_INIT_ATTR_MASK_PD,
		.parent_domain = parent,
	};
	struct ibv_cq_ex *cqx = ibv_create_cq_ex(d->ctx, &ca);
	struct ibv_cq *cq = cqx ? ibv_cq_ex_to_cq(cqx) : NULL;
	struct dp_wc_want w;
	struct ibv_mr *pmr, *mr;
	struct ibv_qp *a, *b;
	struct dp_conn c;
	struct ibv_wc wc[2];
	uint8_t *buf;

	if (!tap_ok(cq != NULL, "CQ on the parent domain (IBV_CQ_INIT_ATTR_MASK_PD)"))
		return;
	a = make_qp(parent, cq);
	b = make_qp(parent, cq);
	tap_ok(a && b && a->pd == parent,
	       "two RC QPs on the parent domain, which they report as their PD");
	if (!a || !b)
		tap_bail("ibv_create_qp: %s", strerror(errno));
	dp_conn_default(&c);
	if (dp_connect(a, d, &d->gid, b->qp_num, &c) ||
	    dp_connect(b, d, &d->gid, a->qp_num, &c))
		tap_bail("connect: %s", strerror(errno));
	buf = dp_alloc(16384);
	/* the parent domain's MR and the PD's are of one protection domain */
	pmr = ibv_reg_mr(parent, buf, 8192, DP_ACCESS_ALL);
	mr = ibv_reg_mr(d->pd, buf + 8192, 8192, DP_ACCESS_ALL);
	tap_ok(pmr && mr && pmr->pd == parent,
	       "MRs on the parent domain and on its PD");
	if (!pmr || !mr)
		tap_bail("ibv_reg_mr: %s", strerror(errno));

	dp_fill(buf, 4096, 21);
	dp_post_recv1(b, 1, buf + 8192, 4096, mr->lkey);
	dp_post_send1(a, 2, IBV_WR_SEND, buf, 4096, pmr->lkey, 0, 0, 0);
	if (tap_ret(dp_poll(cq, wc, 2, DP_WAIT_MS), 2,
		    "SEND from a parent-domain MR into a PD MR: two completions"))
		tap_ok(wc[0].status == IBV_WC_SUCCESS &&
		       wc[1].status == IBV_WC_SUCCESS &&
		       dp_verify(buf + 8192, 4096, 21) < 0, "SEND byte-exact");

	dp_fill(buf + 8192, 4096, 22);
	w = dp_want(3, IBV_WC_RDMA_WRITE);
	dp_post_send1(a, 3, IBV_WR_RDMA_WRITE, buf + 8192, 4096, mr->lkey,
		      (uintptr_t)buf + 4096, pmr->rkey, 0);
	dp_expect(cq, &w, "WRITE from a PD MR to a parent-domain MR's rkey");
	tap_ok(dp_verify(buf + 4096, 4096, 22) < 0, "WRITE byte-exact");

	tap_ret_errno(ibv_dealloc_pd(parent), EBUSY,
		      "ibv_dealloc_pd of a parent domain its QPs and CQ use -> EBUSY");
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	ibv_destroy_cq(cq);
	ibv_dereg_mr(pmr);
	ibv_dereg_mr(mr);
	free(buf);
}

int main(void)
{
	struct ibv_td_init_attr ta = { 0 };
	struct ibv_parent_domain_init_attr pa = { 0 };
	struct dp_dev d;
	struct ibv_pd *parent;
	struct ibv_td *td;

	dp_open(&d, test_dev_name());
	td = ibv_alloc_td(d.ctx, &ta);
	if (!tap_ok(td != NULL, "ibv_alloc_td"))
		tap_bail("ibv_alloc_td: %s", strerror(errno));
	pa.pd = d.pd;
	pa.td = td;
	pa.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
		       IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT;
	pa.alloc = count_alloc;
	pa.free = count_free;
	pa.pd_context = &d;
	parent = ibv_alloc_parent_domain(d.ctx, &pa);
	if (!tap_ok(parent != NULL,
		    "ibv_alloc_parent_domain with a thread domain and allocators"))
		tap_bail("ibv_alloc_parent_domain: %s", strerror(errno));
	tap_ok(parent->context == d.ctx, "the parent domain is of the context");

	test_refused(&d, td, parent);
	test_cc_permission(&d);
	test_traffic(&d, parent);
	tap_ret(allocs, 0, "the allocators were never called");

	tap_ret_errno(ibv_dealloc_pd(parent), 0,
		      "ibv_dealloc_pd of the parent domain");
	tap_ret_errno(ibv_dealloc_td(td), 0, "then ibv_dealloc_td");
	tap_ret_errno(ibv_dealloc_pd(d.pd), 0, "then the PD itself");
	d.pd = NULL;
	dp_close(&d);
	return tap_done();
}
