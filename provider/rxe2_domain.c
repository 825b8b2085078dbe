// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * librxe2: thread domains and parent domains.
 *
 * A thread domain is the application's promise that the objects made
 * under it are used by one thread at a time.  It reaches them through a
 * parent domain: an ibv_pd that wraps a protection domain (same kernel
 * handle, so every command that takes a PD takes it) and may name a
 * thread domain.  A QP created on such a parent domain, or a CQ created
 * with it (IBV_CQ_INIT_ATTR_MASK_PD), takes none of the provider's
 * locks on its post and poll paths.  SRQs keep their lock: an SRQ is
 * fed by whoever posts to it and drained by every QP that uses it.
 *
 * Custom allocators are accepted and never called: the provider has no
 * buffers of its own to allocate, every ring is the kernel's memory
 * mapped into the process (uapi/rxe2-abi.h).
 */
#include <errno.h>
#include <stdlib.h>

#include "rxe2.h"

struct ibv_td *rxe2_alloc_td(struct ibv_context *ibctx,
			     struct ibv_td_init_attr *attr)
{
	struct rxe2_td *td;

	if (attr->comp_mask) {
		errno = EINVAL;
		return NULL;
	}
	td = calloc(1, sizeof(*td));
	if (!td)
		return NULL;
	td->ibtd.context = ibctx;
	return &td->ibtd;
}

int rxe2_dealloc_td(struct ibv_td *ibtd)
{
	struct rxe2_td *td = to_rtd(ibtd);

	if (__atomic_load_n(&td->parents, __ATOMIC_ACQUIRE))
		return EBUSY;
	free(td);
	return 0;
}

/*
 * IBV_PARENT_DOMAIN_INIT_ATTR_ALLOW_CC_UNPROTECTED_ALLOC (rdma-core 64 on;
 * 44's verbs.h lacks it): a permission to allocate provider buffers from
 * memory shared with the host in a confidential-computing guest, used
 * only by a device that reports IBV_DEVICE_CC_DMA_BOUNCE.  rxe2 reports
 * none and uses plain memory, which the permission allows, as mlx5 does
 * without the bounce flag.
 */
#define RXE2_PD_ALLOW_CC_UNPROTECTED_ALLOC (1U << 2)
#define RXE2_PD_INIT_ATTRS (IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |	\
			    IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT |	\
			    RXE2_PD_ALLOW_CC_UNPROTECTED_ALLOC)

struct ibv_pd *rxe2_alloc_parent_domain(struct ibv_context *ibctx,
					struct ibv_parent_domain_init_attr *attr)
{
	struct rxe2_pd *pd, *protection;

	if (attr->comp_mask & ~(uint32_t)RXE2_PD_INIT_ATTRS ||
	    !attr->pd || attr->pd->context != ibctx ||
	    (attr->td && attr->td->context != ibctx)) {
		errno = EINVAL;
		return NULL;
	}
	protection = to_rpd(attr->pd);
	/* a parent domain wraps a protection domain, not another parent */
	if (protection->protection) {
		errno = EINVAL;
		return NULL;
	}
	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;
	pd->ibpd.context = ibctx;
	pd->ibpd.handle = protection->ibpd.handle;
	pd->protection = protection;
	__atomic_fetch_add(&protection->parents, 1, __ATOMIC_ACQ_REL);
	if (attr->td) {
		pd->td = to_rtd(attr->td);
		__atomic_fetch_add(&pd->td->parents, 1, __ATOMIC_ACQ_REL);
	}
	return &pd->ibpd;
}

/* ibv_dealloc_pd() of a parent domain: nothing of it is in the kernel */
int rxe2_dealloc_parent_domain(struct rxe2_pd *pd)
{
	if (__atomic_load_n(&pd->users, __ATOMIC_ACQUIRE))
		return EBUSY;
	__atomic_fetch_sub(&pd->protection->parents, 1, __ATOMIC_ACQ_REL);
	if (pd->td)
		__atomic_fetch_sub(&pd->td->parents, 1, __ATOMIC_ACQ_REL);
	free(pd);
	return 0;
}

/* a QP, CQ or SRQ made on ibpd: a parent domain counts it until it goes */
struct rxe2_pd *rxe2_parent_get(struct ibv_pd *ibpd)
{
	struct rxe2_pd *pd = to_rpd(ibpd);

	if (!pd->protection)
		return NULL;
	__atomic_fetch_add(&pd->users, 1, __ATOMIC_ACQ_REL);
	return pd;
}

void rxe2_parent_put(struct rxe2_pd *parent)
{
	if (parent)
		__atomic_fetch_sub(&parent->users, 1, __ATOMIC_ACQ_REL);
}
