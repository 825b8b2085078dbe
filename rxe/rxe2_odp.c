// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2: on-demand paging.  An ODP MR pins nothing: its umem (ib_umem_odp)
 * follows the process's page tables through an MMU interval notifier.
 * The data path asks rxe2_odp_access() for a range; pages not mapped in
 * the device are faulted in with hmm_range_fault() (through
 * ib_umem_odp_map_dma_and_lock()), and the umem's mutex is held while the
 * pages are touched, so an invalidation (munmap, MADV_DONTNEED, COW after
 * fork, migration) waits for the copy and then unmaps them; the next
 * access faults again.  See docs/architecture.md, "On-demand paging".
 */
#include <linux/hugetlb.h>
#include <linux/highmem.h>
#include <linux/hmm.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/srcu.h>
#include <linux/workqueue.h>
#include <rdma/ib_umem_odp.h>
#include <rdma/ib_verbs.h>

#include "rxe2_verbs.h"
#include "rxe2_trace.h"

/*
 * An implicit MR covers the whole address space with children of this
 * size, each an ib_umem_odp with its own notifier, made on first access
 * where the process has a mapping, freed again when an unmap has left
 * its chunk with no mapping (rxe2_odp_reclaim()).
 */
#define RXE2_IMR_CHUNK_SHIFT	26
#define RXE2_IMR_CHUNK_SIZE	(1ULL << RXE2_IMR_CHUNK_SHIFT)
#define RXE2_IMR_CHUNK_PAGES	(RXE2_IMR_CHUNK_SIZE >> PAGE_SHIFT)

/* on a child's slot: an unmap left it with no page mapped in the device */
#define RXE2_IMR_UNMAPPED	XA_MARK_1

struct rxe2_odp_imr {
	struct mutex lock;		/* making and removing children */
	struct xarray children;		/* chunk index -> struct ib_umem_odp */
	/*
	 * The root's owning_mm, grabbed: nothing in ib_umem_odp holds it
	 * for an implicit root (no notifier), and the uverbs file (so the
	 * MR) can outlive the process.
	 */
	struct mm_struct *mm;
	struct rxe2_dev *rdev;
	struct work_struct reclaim;	/* frees the children marked UNMAPPED */
};

/*
 * A child is looked up and used (faulted, copied, its pages' nodes
 * read) inside a read section of this SRCU; reclaim takes it out of the
 * xarray first and frees it only after a grace period, so an access
 * that found it finishes on a live umem.  Sleepable: a fault sleeps.
 */
DEFINE_STATIC_SRCU(rxe2_odp_srcu);

static struct workqueue_struct *rxe2_odp_wq;

static void rxe2_odp_add(struct rxe2_dev *rdev, enum rxe2_dp_counter c,
			 long n)
{
	atomic64_add(n, &rdev->dp_cnt[c]);
}

/* the umem pages of @odp from @first to @last mapped with @perm at least */
static unsigned long rxe2_odp_count(struct ib_umem_odp *odp,
				    unsigned long first, unsigned long last,
				    u64 perm)
{
	unsigned long n = 0;

	for (; first <= last; first++)
		if ((rxe2_odp_perm(odp, first) & perm) == perm)
			n++;
	return n;
}

static bool rxe2_odp_any_mapped(struct ib_umem_odp *odp)
{
	size_t n = ib_umem_odp_num_pages(odp);

	return n && rxe2_odp_count(odp, 0, n - 1, RXE2_ODP_READ);
}

/*
 * Unmap [start, end) of @odp (umem mutex held) and return how many umem
 * pages were mapped there: counted here, not from the core's npages,
 * which since 6.16 counts only DMA-mapped pages (rxe2_compat.h).
 */
static unsigned long rxe2_odp_unmap(struct ib_umem_odp *odp, u64 start,
				    u64 end)
{
	unsigned long i, first, last, n = 0;

	start = max_t(u64, start, ib_umem_start(odp));
	end = min_t(u64, end, ib_umem_end(odp));
	if (start >= end)
		return 0;
	first = (start - ib_umem_start(odp)) >> odp->page_shift;
	last = (end - 1 - ib_umem_start(odp)) >> odp->page_shift;
	for (i = first; i <= last; i++) {
		if (!rxe2_odp_perm(odp, i))
			continue;
		rxe2_odp_unmapping(odp, i);
		n++;
	}
	ib_umem_odp_unmap_dma_pages(odp, start, end);
	return n;
}

static bool rxe2_odp_invalidate(struct mmu_interval_notifier *mni,
				const struct mmu_notifier_range *range,
				unsigned long cur_seq)
{
	struct ib_umem_odp *odp = container_of(mni, struct ib_umem_odp,
					       notifier);
	struct rxe2_dev *rdev = to_rdev(odp->umem.ibdev);
	struct rxe2_odp_imr *imr;
	unsigned long gone;

	/* reclaim may not sleep: it retries when a copy holds the mutex */
	if (mmu_notifier_range_blockable(range))
		mutex_lock(&odp->umem_mutex);
	else if (!mutex_trylock(&odp->umem_mutex))
		return false;
	mmu_interval_set_seq(mni, cur_seq);
	gone = rxe2_odp_unmap(odp, range->start, range->end);
	if (gone) {
		rxe2_dp_count(rdev, RXE2_DPC_ODP_INVALIDATIONS);
		rxe2_odp_add(rdev, RXE2_DPC_ODP_INVALIDATION_PAGES,
			     gone << (odp->page_shift - PAGE_SHIFT));
	}
	/*
	 * A child of an implicit MR (private: its rxe2_odp_imr) that an
	 * unmap (munmap, mremap, the process's exit) left empty may cover
	 * nothing the process has any more: the reclaim work looks.
	 */
	imr = READ_ONCE(odp->private);
	if (imr && (range->event == MMU_NOTIFY_UNMAP ||
		    range->event == MMU_NOTIFY_RELEASE) &&
	    !rxe2_odp_any_mapped(odp)) {
		xa_set_mark(&imr->children,
			    ib_umem_start(odp) >> RXE2_IMR_CHUNK_SHIFT,
			    RXE2_IMR_UNMAPPED);
		queue_work(rxe2_odp_wq, &imr->reclaim);
	}
	mutex_unlock(&odp->umem_mutex);
	return true;
}

static const struct mmu_interval_notifier_ops rxe2_odp_ops = {
	.invalidate = rxe2_odp_invalidate,
};

/*
 * Map [va, va + len) (user addresses inside @odp) for reading, or for
 * writing too, and return with the umem mutex held; mapped pages stay
 * mapped until the caller unlocks.  Returns the number of pages that had
 * to be faulted in (0: all were mapped), or -EFAULT (no mapping, or not
 * the permission, in the process: nothing is held then).  NO_FAULT
 * (prefetch only) maps what is present and never faults.
 */
static int rxe2_odp_map_lock(struct ib_umem_odp *odp, u64 va, u64 len,
			     bool write, bool no_fault)
{
	u64 perm = RXE2_ODP_READ | (write ? RXE2_ODP_WRITE : 0);
	/* permissions are per umem page: 2 MiB ones for hugetlbfs */
	unsigned int shift = odp->page_shift;
	unsigned long first = (va - ib_umem_start(odp)) >> shift;
	unsigned long last = (va + len - 1 - ib_umem_start(odp)) >> shift;
	int had, ret;

	/* as the pinned path: never an index outside the umem's arrays */
	if (va < ib_umem_start(odp) || len > ib_umem_end(odp) - va)
		return -EFAULT;
	mutex_lock(&odp->umem_mutex);
	had = rxe2_odp_count(odp, first, last, perm);
	if (had == last - first + 1)
		return 0;
	mutex_unlock(&odp->umem_mutex);

	/* a fault that a live odp_fail rule makes fail */
	if (!no_fault &&
	    rxe2_fault_on(to_rdev(odp->umem.ibdev), RXE2_FAULT_ON_ODP) &&
	    rxe2_fault_fire(to_rdev(odp->umem.ibdev), RXE2_FAULT_ON_ODP, 0, 0,
			    NULL) == RXE2_FAULT_ODP_FAIL)
		return -EFAULT;
	ret = ib_umem_odp_map_dma_and_lock(odp, va, len, perm, !no_fault);
	if (ret < 0)
		return -EFAULT;
	/* NO_FAULT maps only what the process has present, as it is */
	if (no_fault)
		ret = rxe2_odp_count(odp, first, last, RXE2_ODP_READ) -
		      had;
	else
		ret = last - first + 1 - had;
	return ret << (shift - PAGE_SHIFT);	/* in 4 KiB pages */
}

static struct ib_umem_odp *rxe2_odp_umem(struct rxe2_mr *mr)
{
	return to_ib_umem_odp(mr->umem);
}

/* whether the process has a mapping at va: children only for real memory */
static bool rxe2_odp_va_mapped(struct mm_struct *mm, u64 va)
{
	bool ok;

	if (!mmget_not_zero(mm))
		return false;
	mmap_read_lock(mm);
	ok = vma_lookup(mm, va);
	mmap_read_unlock(mm);
	/* the last reference of an exiting process: not in the data path */
	mmput_async(mm);
	return ok;
}

/*
 * The child of an implicit MR holding va, made on first use; the caller
 * is in an rxe2_odp_srcu read section, which keeps it until the end.
 */
static struct ib_umem_odp *rxe2_odp_child(struct rxe2_mr *mr, u64 va)
{
	struct rxe2_odp_imr *imr = mr->imr;
	struct ib_umem_odp *root = rxe2_odp_umem(mr);
	unsigned long idx = va >> RXE2_IMR_CHUNK_SHIFT;
	struct ib_umem_odp *child;
	int ret;

	child = xa_load(&imr->children, idx);
	if (child)
		return child;
	mutex_lock(&imr->lock);
	child = xa_load(&imr->children, idx);
	if (child)
		goto out;
	if (!rxe2_odp_va_mapped(imr->mm, va)) {
		child = ERR_PTR(-EFAULT);
		goto out;
	}
	child = ib_umem_odp_alloc_child(root, idx << RXE2_IMR_CHUNK_SHIFT,
					RXE2_IMR_CHUNK_SIZE, &rxe2_odp_ops);
	if (IS_ERR(child))
		goto out;
	/*
	 * Its notifier runs from here on; one that ran before this saw no
	 * imr and marked nothing: that child is only freed later (at the
	 * next unmap that empties it, or at dereg).
	 */
	WRITE_ONCE(child->private, imr);
	ret = xa_err(xa_store(&imr->children, idx, child, GFP_KERNEL));
	if (ret) {
		ib_umem_odp_release(child);
		child = ERR_PTR(ret);
		goto out;
	}
	rxe2_odp_add(imr->rdev, RXE2_DPC_ODP_MR_PAGES, RXE2_IMR_CHUNK_PAGES);
	/*
	 * An unmap between the check above and the notifier's insertion
	 * reached no notifier of this child: look again, and let the
	 * reclaim work decide about a chunk that lost its mapping.
	 */
	if (!rxe2_odp_va_mapped(imr->mm, va)) {
		xa_set_mark(&imr->children, idx, RXE2_IMR_UNMAPPED);
		queue_work(rxe2_odp_wq, &imr->reclaim);
	}
out:
	mutex_unlock(&imr->lock);
	return child;
}

/*
 * What rxe2_odp_walk() does with each page of the range while the umem
 * mutex keeps it mapped: hand fn (if any) each piece of a page, kmapped,
 * or take a reference on the page into hold[] (rxe2_odp_hold()).
 */
struct rxe2_odp_visit {
	bool write;
	bool no_fault;		/* prefetch: map what is present, never fault */
	rxe2_page_fn fn;
	void *arg;
	struct page **hold;
	unsigned int held;
	unsigned int max;
};

/* the page of va, which the caller holds mapped under the umem mutex */
static struct page *rxe2_odp_page(struct ib_umem_odp *odp, u64 va)
{
	unsigned long idx = (va - ib_umem_start(odp)) >> PAGE_SHIFT;

	return hmm_pfn_to_page(rxe2_odp_pfns(odp)[idx]);
}

/* one page's piece: 0, or -E2BIG when hold[] is full */
static int rxe2_odp_visit_page(struct ib_umem_odp *odp, u64 va, u32 n,
			       struct rxe2_odp_visit *v)
{
	struct page *page = rxe2_odp_page(odp, va);
	void *kva;

	if (v->hold) {
		/*
		 * An entry that the mutex's fast path trusted may name a page
		 * already freed (rxe2_odp_pfns()): never revive one, copy then.
		 */
		if (v->held == v->max || !folio_try_get(page_folio(page)))
			return -E2BIG;
		v->hold[v->held++] = page;
		return 0;
	}
	kva = kmap_local_page(page);
	v->fn(kva + (va & ~PAGE_MASK), n, v->arg);
	kunmap_local(kva);
	return 0;
}

/* one umem's part: map (faulting unless no_fault), visit, unlock */
static int rxe2_odp_visit_umem(struct ib_umem_odp *odp, u64 va, u32 len,
			       struct rxe2_odp_visit *v)
{
	int faulted, ret = 0;

	faulted = rxe2_odp_map_lock(odp, va, len, v->write, v->no_fault);
	if (faulted < 0)
		return faulted;
	while ((v->fn || v->hold) && len && !ret) {
		u32 n = min_t(u32, len, PAGE_SIZE - (va & ~PAGE_MASK));

		ret = rxe2_odp_visit_page(odp, va, n, v);
		va += n;
		len -= n;
	}
	mutex_unlock(&odp->umem_mutex);
	return ret ?: faulted;
}

static void rxe2_odp_count_fault(struct rxe2_mr *mr, u64 iova, u64 len,
				 int ret)
{
	struct rxe2_dev *rdev = to_rdev(mr->ibmr.device);

	if (ret)
		trace_rxe2_odp_fault(rdev->ibdev.index, mr->ibmr.lkey, iova,
				     len, ret);
	if (ret < 0) {
		rxe2_dp_count(rdev, RXE2_DPC_ODP_FAILED_RESOLUTIONS);
	} else if (ret > 0) {
		rxe2_dp_count(rdev, RXE2_DPC_ODP_PAGE_FAULTS);
		rxe2_odp_add(rdev, RXE2_DPC_ODP_PAGE_FAULT_PAGES, ret);
	}
}

/*
 * Walk [iova, iova + len) of an ODP MR (checked against the MR by the
 * caller) one umem at a time, visiting its pages as v says.  Returns
 * the pages faulted in, -EFAULT, or -E2BIG (v->hold full).
 */
static int rxe2_odp_walk(struct rxe2_mr *mr, u64 iova, u64 len,
			 struct rxe2_odp_visit *v)
{
	long total = 0;
	int ret = 0, srcu;

	if (mr->odp == RXE2_ODP_EXPLICIT)
		return rxe2_odp_visit_umem(rxe2_odp_umem(mr),
					   rxe2_odp_va(mr, iova), len, v);
	/* implicit: iova is the user address, one child per chunk */
	srcu = srcu_read_lock(&rxe2_odp_srcu);
	while (len) {
		u64 n = min_t(u64, len, RXE2_IMR_CHUNK_SIZE -
			      (iova & (RXE2_IMR_CHUNK_SIZE - 1)));
		struct ib_umem_odp *child;

		child = rxe2_odp_child(mr, iova);
		if (IS_ERR(child)) {
			ret = -EFAULT;
			break;
		}
		ret = rxe2_odp_visit_umem(child, iova, n, v);
		if (ret < 0)
			break;
		total += ret;
		iova += n;
		len -= n;
	}
	srcu_read_unlock(&rxe2_odp_srcu, srcu);
	return ret < 0 ? ret : min_t(long, total, INT_MAX);
}

int rxe2_odp_access(struct rxe2_mr *mr, u64 iova, u64 len, bool write,
		    rxe2_page_fn fn, void *arg)
{
	struct rxe2_odp_visit v = { .write = write, .fn = fn, .arg = arg };
	int ret;

	if (!len)
		return 0;
	ret = rxe2_odp_walk(mr, iova, len, &v);
	rxe2_odp_count_fault(mr, iova, len, ret);
	return ret < 0 ? ret : 0;
}

/*
 * rxe2_odp_hold() - fault [iova, iova + len) of an ODP MR in for reading
 * and take a reference on each of its pages, in order, into pages[max]:
 * the source of a one-copy request (rxe2_src_get()), which its receiver
 * then reads with its own ODP MR's mutex held, where faulting the source
 * could wait for that mutex (one mm: the invalidation it starts).  A page
 * invalidated after this stays readable until put_page(); its data is
 * the range's as of now, as an HCA's read would be.  Returns the pages
 * held, or -EFAULT, or -E2BIG (more than max): nothing is held then.
 */
int rxe2_odp_hold(struct rxe2_mr *mr, u64 iova, u32 len,
		  struct page **pages, unsigned int max)
{
	struct rxe2_odp_visit v = { .hold = pages, .max = max };
	int ret;

	ret = rxe2_odp_walk(mr, iova, len, &v);
	if (ret != -E2BIG)
		rxe2_odp_count_fault(mr, iova, len, ret);
	if (ret < 0) {
		while (v.held)
			put_page(pages[--v.held]);
		return ret;
	}
	return v.held;
}

/*
 * Registration: @mr is allocated and unpublished.  Explicit: [start,
 * start + length) as usual.  Implicit (start 0, length U64_MAX): the
 * whole address space, iova == user address.
 */
/* one umem's resident pages, their NUMA nodes added to @nodes */
static unsigned long rxe2_odp_umem_nodes(struct ib_umem_odp *odp,
					 nodemask_t *nodes)
{
	unsigned long i, n = 0, npages = ib_umem_odp_num_pages(odp);
	unsigned int per = odp->page_shift - PAGE_SHIFT;

	mutex_lock(&odp->umem_mutex);
	for (i = 0; i < npages; i++) {
		if (!rxe2_odp_perm(odp, i))
			continue;
		node_set(page_to_nid(hmm_pfn_to_page(rxe2_odp_pfns(odp)[i << per])),
			 *nodes);
		n++;
		if (!(i % RXE2_RESCHED_PAGES))
			cond_resched();
	}
	mutex_unlock(&odp->umem_mutex);
	return n;
}

unsigned long rxe2_odp_resident_nodes(struct rxe2_mr *mr, nodemask_t *nodes)
{
	struct ib_umem_odp *child;
	unsigned long idx, n = 0;
	int srcu;

	if (mr->odp != RXE2_ODP_IMPLICIT)
		return rxe2_odp_umem_nodes(rxe2_odp_umem(mr), nodes);
	/* dereg is kept away by the caller, reclaim by the read section */
	srcu = srcu_read_lock(&rxe2_odp_srcu);
	xa_for_each(&mr->imr->children, idx, child)
		n += rxe2_odp_umem_nodes(child, nodes);
	srcu_read_unlock(&rxe2_odp_srcu, srcu);
	return n;
}

/* a child's end: its pages unmapped, its notifier removed */
static void rxe2_odp_child_free(struct rxe2_odp_imr *imr,
				struct ib_umem_odp *child)
{
	ib_umem_odp_release(child);
	rxe2_odp_add(imr->rdev, RXE2_DPC_ODP_MR_PAGES,
		     -(long)RXE2_IMR_CHUNK_PAGES);
}

/*
 * Whether a child marked UNMAPPED can go: the process has no mapping in
 * its chunk any more (or no address space at all) and no page of it is
 * mapped in the device.  Called with imr->lock and, for a live process,
 * its mmap lock held: no mapping can appear meanwhile, so no fault can
 * map a page.  A chunk that still holds other mappings keeps its child
 * (they may be used next); a new mapping in a freed chunk gets a new
 * child on first access, as any unmapped chunk does.
 */
static bool rxe2_odp_child_idle(struct mm_struct *mm, bool live,
				struct ib_umem_odp *child)
{
	bool idle;

	if (live && find_vma_intersection(mm, ib_umem_start(child),
					  ib_umem_end(child)))
		return false;
	mutex_lock(&child->umem_mutex);
	idle = !rxe2_odp_any_mapped(child);
	mutex_unlock(&child->umem_mutex);
	return idle;
}

#define RXE2_RECLAIM_BATCH	16

/*
 * The reclaim work of an implicit MR: children marked UNMAPPED by the
 * notifier that turn out idle are taken out of the xarray (no lookup
 * finds them from then on; a fault makes a new child), and freed after
 * an SRCU grace period (accesses that found them before are over).
 */
static void rxe2_odp_reclaim(struct work_struct *w)
{
	struct rxe2_odp_imr *imr = container_of(w, struct rxe2_odp_imr,
						reclaim);
	struct ib_umem_odp *dead[RXE2_RECLAIM_BATCH], *child;
	unsigned long idx;
	int i, n;
	bool live;

	do {
		n = 0;
		live = mmget_not_zero(imr->mm);
		mutex_lock(&imr->lock);
		if (live)
			mmap_read_lock(imr->mm);
		xa_for_each_marked(&imr->children, idx, child,
				   RXE2_IMR_UNMAPPED) {
			xa_clear_mark(&imr->children, idx, RXE2_IMR_UNMAPPED);
			if (!rxe2_odp_child_idle(imr->mm, live, child))
				continue;
			xa_erase(&imr->children, idx);
			dead[n++] = child;
			if (n == RXE2_RECLAIM_BATCH)
				break;
		}
		if (live)
			mmap_read_unlock(imr->mm);
		mutex_unlock(&imr->lock);
		if (live)
			mmput(imr->mm);
		if (!n)
			break;
		synchronize_srcu(&rxe2_odp_srcu);
		for (i = 0; i < n; i++)
			rxe2_odp_child_free(imr, dead[i]);
	} while (n == RXE2_RECLAIM_BATCH);
}

/*
 * Whether [start, start + length) of the current process is hugetlbfs
 * memory of the size ib_umem_odp's HUGETLB mode maps (HPAGE_SIZE)
 * throughout: then one fault maps a whole huge page.  Anything else
 * (ordinary memory, a hole, other huge page sizes) keeps 4 KiB pages.
 */
static bool rxe2_odp_range_hugetlb(u64 start, u64 length)
{
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;
	u64 end = start + length, va = start;
	bool huge = true;

	if (!IS_ENABLED(CONFIG_HUGETLB_PAGE) || !mm)
		return false;
	mmap_read_lock(mm);
	while (huge && va < end) {
		vma = vma_lookup(mm, va);
		huge = vma && is_vm_hugetlb_page(vma) &&
		       vma_kernel_pagesize(vma) == HPAGE_SIZE;
		if (huge)
			va = vma->vm_end;
	}
	mmap_read_unlock(mm);
	return huge;
}

/* the umem's size in 4 KiB pages, whatever its page size */
static unsigned long rxe2_odp_num_4k(struct ib_umem_odp *odp)
{
	return ib_umem_odp_num_pages(odp) << (odp->page_shift - PAGE_SHIFT);
}

int rxe2_odp_reg(struct rxe2_mr *mr, u64 start, u64 length, int access)
{
	struct rxe2_dev *rdev = to_rdev(mr->ibmr.device);
	struct ib_umem_odp *odp;

	if (!start && length == U64_MAX) {
		struct rxe2_odp_imr *imr = kzalloc(sizeof(*imr), GFP_KERNEL);

		if (!imr)
			return -ENOMEM;
		/* the whole address space: 4 KiB pages, the hint aside */
		odp = ib_umem_odp_alloc_implicit(mr->ibmr.device,
						 access & ~IB_ACCESS_HUGETLB);
		if (IS_ERR(odp)) {
			kfree(imr);
			return PTR_ERR(odp);
		}
		mutex_init(&imr->lock);
		xa_init(&imr->children);
		INIT_WORK(&imr->reclaim, rxe2_odp_reclaim);
		imr->rdev = rdev;
		imr->mm = odp->umem.owning_mm;
		mmgrab(imr->mm);
		mr->imr = imr;
		mr->odp = RXE2_ODP_IMPLICIT;
	} else {
		/* the hint, where it holds: whole huge pages per fault */
		if (!rxe2_odp_range_hugetlb(start, length))
			access &= ~IB_ACCESS_HUGETLB;
		odp = ib_umem_odp_get(mr->ibmr.device, start, length, access,
				      &rxe2_odp_ops);
		if (IS_ERR(odp))
			return PTR_ERR(odp);
		mr->odp = RXE2_ODP_EXPLICIT;
		rxe2_odp_add(rdev, RXE2_DPC_ODP_MR_PAGES,
			     rxe2_odp_num_4k(odp));
	}
	mr->umem = &odp->umem;
	rxe2_dp_count(rdev, RXE2_DPC_ODP_MRS);
	return 0;
}

/* after the last data path reference is gone: unmap and forget it all */
void rxe2_odp_release(struct rxe2_mr *mr)
{
	struct rxe2_dev *rdev = to_rdev(mr->ibmr.device);
	struct ib_umem_odp *odp = rxe2_odp_umem(mr);
	struct ib_umem_odp *child;
	unsigned long idx;

	if (mr->odp == RXE2_ODP_IMPLICIT) {
		/*
		 * No access is left (the caller waited for them); the reclaim
		 * work may still run: what it took out of the xarray it frees,
		 * and once every child is gone nothing can queue it again.
		 */
		mutex_lock(&mr->imr->lock);
		xa_for_each(&mr->imr->children, idx, child) {
			xa_erase(&mr->imr->children, idx);
			rxe2_odp_child_free(mr->imr, child);
		}
		mutex_unlock(&mr->imr->lock);
		cancel_work_sync(&mr->imr->reclaim);
		xa_destroy(&mr->imr->children);
		mutex_destroy(&mr->imr->lock);
		mmdrop(mr->imr->mm);
		kfree(mr->imr);
		mr->imr = NULL;
	} else {
		rxe2_odp_add(rdev, RXE2_DPC_ODP_MR_PAGES,
			     -(long)rxe2_odp_num_4k(odp));
	}
	ib_umem_odp_release(odp);
	mr->umem = NULL;
	mr->odp = RXE2_ODP_NONE;
	rxe2_odp_add(rdev, RXE2_DPC_ODP_MRS, -1);
}

/*
 * ibv_advise_mr.  ib_core has checked the flags (EINVAL) and the PD
 * handle.  Errors follow ibv_advise_mr(3): an unknown advice is
 * EOPNOTSUPP; an lkey that names no ODP MR, a range outside the MR or
 * not mapped in the process, or write advice on an MR without write
 * access is EFAULT; an MR of another PD is EINVAL (the PD is invalid
 * for it).  Every SGE is checked before anything is prefetched.
 */
struct rxe2_prefetch {
	struct work_struct work;
	bool write;
	bool no_fault;
	u32 num;
	struct {
		struct rxe2_mr *mr;
		u64 addr;
		u32 length;
	} sge[];
};

static int rxe2_prefetch_one(struct rxe2_mr *mr, u64 addr, u32 length,
			     bool write, bool no_fault)
{
	struct rxe2_odp_visit v = { .write = write, .no_fault = no_fault };
	struct rxe2_dev *rdev = to_rdev(mr->ibmr.device);
	int ret = 0;

	if (length)
		ret = rxe2_odp_walk(mr, addr, length, &v);
	if (ret < 0) {
		rxe2_dp_count(rdev, RXE2_DPC_ODP_FAILED_RESOLUTIONS);
		return ret;
	}
	rxe2_dp_count(rdev, RXE2_DPC_ODP_PREFETCHES);
	rxe2_odp_add(rdev, RXE2_DPC_ODP_PREFETCH_PAGES, ret);
	return 0;
}

static void rxe2_prefetch_work(struct work_struct *w)
{
	struct rxe2_prefetch *p = container_of(w, struct rxe2_prefetch, work);
	u32 i;

	/* best effort: a range that cannot be mapped is only counted */
	for (i = 0; i < p->num; i++) {
		rxe2_prefetch_one(p->sge[i].mr, p->sge[i].addr,
				  p->sge[i].length, p->write, p->no_fault);
		rxe2_mr_put(p->sge[i].mr);
	}
	kvfree(p);
}

static struct rxe2_mr *rxe2_advise_lookup(struct ib_pd *pd, u32 lkey,
					  u64 addr, u32 length, bool write)
{
	struct rxe2_dev *rdev = to_rdev(pd->device);
	struct rxe2_mr *mr;
	int ret = -EFAULT;

	mr = rxe2_mr_lookup(rdev, lkey, NULL, 0);
	if (!mr || !mr->odp) {
		rxe2_dp_count(rdev, RXE2_DPC_ODP_MRS_NOT_FOUND);
		goto err;
	}
	if (mr->pd != pd)
		ret = -EINVAL;
	else if (write && !ib_access_writable(mr->access))
		ret = -EFAULT;
	else if (!rxe2_mr_check_range(mr, addr, length))
		ret = -EFAULT;
	else
		return mr;
err:
	if (mr)
		rxe2_mr_put(mr);
	return ERR_PTR(ret);
}

int rxe2_advise_mr(struct ib_pd *pd, enum ib_uverbs_advise_mr_advice advice,
		   u32 flags, struct ib_sge *sg_list, u32 num_sge,
		   struct uverbs_attr_bundle *attrs)
{
	bool write = advice == IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE;
	bool no_fault = advice == IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT;
	struct rxe2_prefetch *p;
	u32 i;
	int ret;

	if (advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH && !write &&
	    !no_fault)
		return -EOPNOTSUPP;
	if (flags & ~IB_UVERBS_ADVISE_MR_FLAG_FLUSH)
		return -EINVAL;

	p = kvzalloc(struct_size(p, sge, num_sge), GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	for (i = 0; i < num_sge; i++) {
		struct rxe2_mr *mr = rxe2_advise_lookup(pd, sg_list[i].lkey,
							sg_list[i].addr,
							sg_list[i].length,
							write);

		if (IS_ERR(mr)) {
			ret = PTR_ERR(mr);
			goto err;
		}
		p->sge[i].mr = mr;
		p->sge[i].addr = sg_list[i].addr;
		p->sge[i].length = sg_list[i].length;
		p->num++;
	}
	p->write = write;
	p->no_fault = no_fault;

	if (!(flags & IB_UVERBS_ADVISE_MR_FLAG_FLUSH)) {
		INIT_WORK(&p->work, rxe2_prefetch_work);
		queue_work(rxe2_odp_wq, &p->work);
		return 0;
	}
	/* FLUSH: on success every range is mapped in the device */
	ret = 0;
	for (i = 0; i < p->num && !ret; i++)
		ret = rxe2_prefetch_one(p->sge[i].mr, p->sge[i].addr,
					p->sge[i].length, write, no_fault);
err:
	for (i = 0; i < p->num; i++)
		rxe2_mr_put(p->sge[i].mr);
	kvfree(p);
	return ret;
}

int rxe2_odp_init(void)
{
	rxe2_odp_wq = alloc_workqueue("rxe2_odp", WQ_UNBOUND, 0);
	return rxe2_odp_wq ? 0 : -ENOMEM;
}

void rxe2_odp_exit(void)
{
	destroy_workqueue(rxe2_odp_wq);
}
