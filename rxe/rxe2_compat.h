/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rxe2: the one place that knows kernel versions.  rxe2 is written against
 * the newest kernel API; for an older kernel this header supplies the new
 * name on top of the old one.  Which kernel has what is decided by
 * rxe2_probe.sh (run by Kbuild), one RXE2_HAVE_<NAME> per feature, never
 * by a version number: distributions backport.  A parameter that an
 * ib_device_ops callback gained or retyped, which cannot be renamed
 * away, is one RXE2_*_PARAM macro below.  rxe2_verbs.h includes this
 * header.
 */
#ifndef RXE2_COMPAT_H
#define RXE2_COMPAT_H

#include <linux/hmm.h>
#include <linux/hrtimer.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/timer.h>
#include <linux/workqueue.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_umem_odp.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_counter.h>

#ifndef RXE2_HAVE_TIMER_DELETE
#define timer_delete(t)		del_timer(t)
#define timer_delete_sync(t)	del_timer_sync(t)
#endif

#ifndef RXE2_HAVE_TIMER_CONTAINER_OF
#define timer_container_of(var, t, field)	from_timer(var, t, field)
#endif

/* a per-CPU workqueue said so before WQ_PERCPU had a name */
#ifndef RXE2_HAVE_WQ_PERCPU
#define WQ_PERCPU	0
#endif

#ifndef RXE2_HAVE_HRTIMER_SETUP
static inline void hrtimer_setup(struct hrtimer *timer,
				 enum hrtimer_restart (*fn)(struct hrtimer *),
				 clockid_t clock, enum hrtimer_mode mode)
{
	hrtimer_init(timer, clock, mode);
	timer->function = fn;
}
#endif

/* MODULE_IMPORT_NS() wants a string literal from 6.13 on, a bare word before */
#ifdef RXE2_HAVE_IMPORT_NS_STRING
#define RXE2_IMPORT_NS_DMA_BUF	MODULE_IMPORT_NS("DMA_BUF")
#else
#define RXE2_IMPORT_NS_DMA_BUF	MODULE_IMPORT_NS(DMA_BUF)
#endif

#ifndef RXE2_HAVE_UMEM_GET_VA
#define ib_umem_get_va(dev, addr, size, access) \
	ib_umem_get(dev, addr, size, access)
#endif

/*
 * ODP of FLUSH and ATOMIC WRITE: the bits are the uverbs ABI's
 * (IB_UVERBS_ODP_SUPPORT_FLUSH, _ATOMIC_WRITE; libibverbs'
 * IBV_ODP_SUPPORT_FLUSH, _ATOMIC_WRITE), which every kernel's
 * query_device_ex copies to user space as the driver set them; an older
 * kernel only has no name for them.
 */
#ifndef RXE2_HAVE_ODP_FLUSH
#define IB_ODP_SUPPORT_FLUSH		(1 << 6)
#define IB_ODP_SUPPORT_ATOMIC_WRITE	(1 << 7)
#endif

/*
 * DMA handles (6.17): ib_core allocates the driver's object and checks
 * the CPU against the caller's affinity; rxe2_mr.c checks the rest.  An
 * older kernel has no UVERBS_OBJECT_DMAH (ibv_alloc_dmah: EOPNOTSUPP).
 */
#ifdef RXE2_HAVE_ALLOC_DMAH
struct rxe2_dmah {
	struct ib_dmah ibdmah;
};

int rxe2_alloc_dmah(struct ib_dmah *ibdmah, struct uverbs_attr_bundle *attrs);
int rxe2_dealloc_dmah(struct ib_dmah *ibdmah,
		      struct uverbs_attr_bundle *attrs);

#define RXE2_DMAH_OPS \
	.alloc_dmah = rxe2_alloc_dmah, \
	.dealloc_dmah = rxe2_dealloc_dmah, \
	INIT_RDMA_OBJ_SIZE(ib_dmah, rxe2_dmah, ibdmah),

static inline struct ib_dmah *rxe2_mr_dmah(struct ib_mr *ibmr)
{
	return ibmr->dmah;
}

static inline u32 rxe2_dmah_ph(struct ib_dmah *dmah)
{
	return dmah->ph;
}

/* whether the handle names a CPU, and which */
static inline bool rxe2_dmah_cpu(struct ib_dmah *dmah, u32 *cpu)
{
	*cpu = dmah->cpu_id;
	return dmah->valid_fields & BIT(IB_DMAH_CPU_ID_EXISTS);
}
#else
struct ib_dmah;

#define RXE2_DMAH_OPS

static inline struct ib_dmah *rxe2_mr_dmah(struct ib_mr *ibmr)
{
	return NULL;
}

static inline u32 rxe2_dmah_ph(struct ib_dmah *dmah)
{
	return 0;
}

static inline bool rxe2_dmah_cpu(struct ib_dmah *dmah, u32 *cpu)
{
	return false;
}
#endif

/* ibv_query_port_speed (7.0): the kernel asks the driver */
#ifdef RXE2_HAVE_QUERY_PORT_SPEED
int rxe2_query_port_speed(struct ib_device *ibdev, u32 port, u64 *speed);

#define RXE2_QUERY_PORT_SPEED_OPS \
	.query_port_speed = rxe2_query_port_speed,
#else
#define RXE2_QUERY_PORT_SPEED_OPS
#endif

/*
 * ib_device_ops callbacks whose parameters changed: the prototypes are
 * written out and only the parameter that was added or retyped is a
 * macro.  The bodies do not differ.
 */
/*
 * 6.17: MR registration takes a DMA handle; ib_core keeps it in the MR
 * (rxe2_mr_dmah()) and holds it while the MR lives
 */
#ifdef RXE2_HAVE_MR_DMAH
#define RXE2_DMAH_PARAM		struct ib_dmah *dmah,
#else
#define RXE2_DMAH_PARAM
#endif

/* 6.10: reg_user_mr_dmabuf and create_cq take the uverbs attribute bundle */
#ifdef RXE2_HAVE_DMABUF_ATTRS
#define RXE2_DMABUF_UDATA_PARAM	struct uverbs_attr_bundle *attrs
#else
#define RXE2_DMABUF_UDATA_PARAM	struct ib_udata *udata
#endif

#ifdef RXE2_HAVE_CREATE_CQ_ATTRS
#define RXE2_CREATE_CQ_UDATA_PARAM	struct uverbs_attr_bundle *attrs
#define rxe2_create_cq_udata()	(attrs ? &attrs->driver_udata : NULL)
#else
#define RXE2_CREATE_CQ_UDATA_PARAM	struct ib_udata *udata
#define rxe2_create_cq_udata()	udata
#endif

/* 7.1: resize_cq became resize_user_cq, the count unsigned */
#ifdef RXE2_HAVE_RESIZE_USER_CQ
#define RXE2_OP_RESIZE_CQ	resize_user_cq
#define RXE2_CQE_COUNT		unsigned int
#else
#define RXE2_OP_RESIZE_CQ	resize_cq
#define RXE2_CQE_COUNT		int
#endif

/* 6.15: counter_bind_qp and counter_unbind_qp take the port */
#ifdef RXE2_HAVE_COUNTER_PORT
/* the comma is the macro's: the port is the last parameter */
#define RXE2_COUNTER_PORT_PARAM	\
	, u32 port
#else
#define RXE2_COUNTER_PORT_PARAM
#endif

/*
 * 6.15: ib_core allocates a bound QP's rdma_counter by the driver's object
 * size and calls counter_init on it; before, it was ib_core's own
 * kzalloc().  rxe2 keeps its counters elsewhere (rxe2_counters.c), so the
 * object is the bare struct and there is nothing to initialise.
 */
#ifdef RXE2_HAVE_RDMA_COUNTER_OBJ
struct rxe2_rdma_counter {
	struct rdma_counter ibcounter;
};

static inline void rxe2_counter_init(struct rdma_counter *counter)
{
}

#define RXE2_COUNTER_OBJ_OPS \
	.counter_init = rxe2_counter_init, \
	INIT_RDMA_OBJ_SIZE(rdma_counter, rxe2_rdma_counter, ibcounter),
#else
#define RXE2_COUNTER_OBJ_OPS
#endif

/* the routing key's DSCP: a dscp_t from 6.18 on, the whole TOS byte before */
#ifdef RXE2_HAVE_FLOWI4_DSCP
#define RXE2_FLOWI4_DSCP(tclass)	.flowi4_dscp = inet_dsfield_to_dscp(tclass)
#else
#define RXE2_FLOWI4_DSCP(tclass)	.flowi4_tos = (tclass) & ~3
#endif

/*
 * ODP: which pages of an ib_umem_odp the device has mapped, and with
 * which permission.  Before 6.16 the core kept a dma_list per umem page
 * (ODP_*_ALLOWED_BIT in its low bits) and counted mapped pages in npages;
 * since, the permissions are HMM_PFN_* flags in map.pfn_list (one entry per
 * PAGE_SIZE page) and the core counts only pages with a real DMA mapping,
 * which a software device never has.  So rxe2 keeps no count of its own
 * but asks these per page, under the umem mutex, on every kernel.
 */
#ifdef RXE2_HAVE_HMM_DMA_MAP
#define RXE2_ODP_READ	HMM_PFN_VALID
#define RXE2_ODP_WRITE	HMM_PFN_WRITE

static inline unsigned long *rxe2_odp_pfns(struct ib_umem_odp *odp)
{
	return odp->map.pfn_list;
}

/* the permission bits of umem page @i (of 1 << page_shift bytes) */
static inline u64 rxe2_odp_perm(struct ib_umem_odp *odp, unsigned long i)
{
	return odp->map.pfn_list[i << (odp->page_shift - PAGE_SHIFT)] &
	       (HMM_PFN_VALID | HMM_PFN_WRITE);
}

/*
 * Umem page @i, mapped, is about to be unmapped.  For a umem
 * of huge pages the core clears the flags of the wrong entry: clear every
 * PAGE_SIZE entry of the page.  No set_page_dirty() here, unlike the
 * core's before 6.16: the flags live in pfn_list, which hmm_range_fault()
 * writes outside the umem mutex, so an entry can name a page already
 * freed (a fault that lost a race with an unmap and then failed leaves it
 * behind), and dirtying that page corrupted the allocator ("Bad page
 * state", test_odp_migrate on 7.2).  A page the device writes was faulted
 * for writing, which dirtied its PTE.
 */
static inline void rxe2_odp_unmapping(struct ib_umem_odp *odp,
				      unsigned long i)
{
	unsigned long per = 1UL << (odp->page_shift - PAGE_SHIFT);
	unsigned long *pfn = &odp->map.pfn_list[i * per];
	unsigned long k;

	for (k = 0; k < per; k++)
		pfn[k] &= ~HMM_PFN_FLAGS;
}
#else
#define RXE2_ODP_READ	ODP_READ_ALLOWED_BIT
#define RXE2_ODP_WRITE	ODP_WRITE_ALLOWED_BIT

static inline unsigned long *rxe2_odp_pfns(struct ib_umem_odp *odp)
{
	return odp->pfn_list;
}

static inline u64 rxe2_odp_perm(struct ib_umem_odp *odp, unsigned long i)
{
	return odp->dma_list[i] & (ODP_READ_ALLOWED_BIT | ODP_WRITE_ALLOWED_BIT);
}

/* the core forgets (and dirties) the pages it unmaps */
static inline void rxe2_odp_unmapping(struct ib_umem_odp *odp,
				      unsigned long i)
{
}
#endif

#endif /* RXE2_COMPAT_H */
