// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2: memory regions.  See rxe2_verbs.h for the key layout and the
 * lookup contract the data path relies on.
 */
#include <linux/delay.h>
#include <linux/highmem.h>
#include <linux/vmalloc.h>
#include <linux/wait_bit.h>
#include <linux/workqueue.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_umem_odp.h>

#include "rxe2_verbs.h"

/*
 * Fast-registration MRs: key bit 31 set, bit 30 clear, bits 29..8 an
 * index into this xarray (shared by all rxe2 devices; the PD check keeps
 * devices apart),
 * bits 7..0 the consumer's key part.
 */
#define RXE2_FRMR_KEY_BIT	0x80000000u
#define RXE2_FRMR_INDEX_MAX	0x3fffffu	/* bit 30 set: memory windows */
#define RXE2_FRMR_MIN_SHIFT	9	/* 512-byte pages at least */
#define RXE2_FRMR_MAX_SHIFT	30

static DEFINE_XARRAY_ALLOC1(rxe2_frmr_xa);
static u32 rxe2_frmr_next;

/* struct rxe2_mr.oflags */
enum {
	RXE2_MRO_DEAD,		/* no new access: ref's standing 1 is dropped */
	RXE2_MRO_TORN,		/* its pages are released, or were never its own */
};

/* releases the pages of replaced objects once their last message ends */
static struct workqueue_struct *rxe2_mr_wq;
/* a rereg's stamp, publish and count of rxe2_dev.mr_seq, as one step */
static DEFINE_MUTEX(rxe2_mr_seq_lock);

static void rxe2_mr_teardown_work(struct work_struct *work);

/* an object of a USER MR, as the table and the data path see it */
static void rxe2_mr_obj_init(struct rxe2_mr *obj, struct rxe2_mr *owner)
{
	refcount_set(&obj->ref, 1);
	init_completion(&obj->released);
	refcount_set(&obj->msgs, 1);
	refcount_set(&obj->life, obj == owner ? 2 : 1);
	obj->owner = owner;
	INIT_LIST_HEAD(&obj->retire_node);
	INIT_WORK(&obj->teardown, rxe2_mr_teardown_work);
}

static u32 rxe2_frmr_index(u32 key)
{
	return (key >> 8) & RXE2_FRMR_INDEX_MAX;
}

static struct rxe2_mr *to_rmr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct rxe2_mr, ibmr);
}

/* what an MR may grant; IB_ACCESS_OPTIONAL bits are hints we may ignore */
#define RXE2_MR_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
			 IB_ACCESS_MW_BIND | IB_ACCESS_ON_DEMAND | \
			 RXE2_ACCESS_FLUSH_GLOBAL)

int rxe2_mr_check_access(int access)
{
	/*
	 * HUGETLB is a hint as well: a pinned MR uses 2 MiB entries
	 * wherever its memory is made of huge pages, asked or not; an ODP
	 * MR faults whole huge pages when its range is hugetlbfs memory.
	 */
	access &= ~(IB_ACCESS_OPTIONAL | IB_ACCESS_HUGETLB);
	/* no persistent memory behind a software device (see rxe2_place.c) */
	if (access & RXE2_ACCESS_FLUSH_PERSISTENT)
		return -EOPNOTSUPP;
	if (access & ~RXE2_MR_ACCESS)
		return -EINVAL;
	/* IBTA: remote write or atomic needs local write (ib_core agrees) */
	if ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IB_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	return 0;
}

/*
 * Access for an MR over pages the device holds itself (shared MRs,
 * device memory, dma-bufs): windows bind only to ibv_reg_mr MRs, and
 * nothing there is faulted on demand.
 */
int rxe2_mr_check_access_held(int access)
{
	int ret = rxe2_mr_check_access(access);

	if (!ret && (access & (IB_ACCESS_MW_BIND | IB_ACCESS_ON_DEMAND)))
		ret = -EINVAL;
	return ret;
}

/* the page behind a kernel address, or NULL: not RAM with a page struct */
static struct page *rxe2_kva_page(const void *addr)
{
	struct page *pg;

	if (!is_vmalloc_addr(addr))
		return virt_addr_valid(addr) ? virt_to_page(addr) : NULL;
	pg = vmalloc_to_page(addr);
	return pg && pfn_valid(page_to_pfn(pg)) ? pg : NULL;
}

/*
 * The page array of [offset, offset + length) of kernel memory mapped at
 * base (a DM's buffer, a dma-buf's mapping).  -EOPNOTSUPP for memory
 * without page structs; on failure the caller kvfree()s mr->pages.
 */
int rxe2_mr_kva_pages(struct rxe2_mr *mr, const void *base, u64 offset,
		      u64 length)
{
	const u8 *first = (const u8 *)base + (offset & PAGE_MASK);
	unsigned long i;

	mr->first_off = offset_in_page(offset);
	mr->npages = DIV_ROUND_UP(mr->first_off + length, PAGE_SIZE);
	mr->pages = kvcalloc(mr->npages, sizeof(*mr->pages), GFP_KERNEL);
	if (!mr->pages)
		return -ENOMEM;
	for (i = 0; i < mr->npages; i++) {
		mr->pages[i] = rxe2_kva_page(first + i * PAGE_SIZE);
		if (!mr->pages[i])
			return -EOPNOTSUPP;
	}
	return 0;
}

/*
 * The DMA MR is not counted against max_mr: ib_alloc_pd() creates it
 * behind the consumer's back and restrack does not show it, so counting
 * it would make the limit look one short to anyone checking with
 * `rdma resource show`.
 */
struct rxe2_mr *rxe2_mr_alloc(struct ib_pd *ibpd, int access, bool counted)
{
	struct rxe2_table *t = &to_rdev(ibpd->device)->mr_table;
	struct rxe2_mr *mr;
	int ret;

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	if (counted)
		ret = rxe2_table_add(t, NULL, &mr->key);
	else
		ret = xa_alloc_cyclic(&t->xa, &mr->key, NULL,
				      XA_LIMIT(t->min, t->max), &t->next,
				      GFP_KERNEL);
	if (ret < 0) {
		kfree(mr);
		return ERR_PTR(ret == -EBUSY ? -ENOMEM : ret);
	}
	mr->counted = counted;
	mr->page_shift = PAGE_SHIFT;
	mr->type = counted ? RXE2_MR_USER : RXE2_MR_DMA;
	mr->access = access & RXE2_MR_ACCESS;
	/* ib_core sets these too, but only after we publish */
	mr->pd = ibpd;
	mr->ibmr.pd = ibpd;
	mr->ibmr.device = ibpd->device;
	spin_lock_init(&mr->lock);
	INIT_LIST_HEAD(&mr->retired);
	rxe2_mr_obj_init(mr, mr);
	mr->ibmr.lkey = mr->key;
	mr->ibmr.rkey = mr->key;
	if (counted)
		mr->cur = mr;
	return mr;
}

void rxe2_mr_free(struct rxe2_dev *rdev, struct rxe2_mr *mr)
{
	xa_erase(&rdev->mr_table.xa, mr->key);
	if (mr->counted)
		atomic_dec(&rdev->mr_table.count);
	kfree(mr);
}

struct ib_mr *rxe2_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct rxe2_mr *mr;
	int ret;

	ret = rxe2_mr_check_access(access);
	if (ret)
		return ERR_PTR(ret);
	mr = rxe2_mr_alloc(ibpd, access, false);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->length = U64_MAX;
	rxe2_table_publish(&to_rdev(ibpd->device)->mr_table, mr->key, mr);
	return &mr->ibmr;
}

/*
 * Whether the pinned 4 KiB pages make whole 2 MiB blocks: each block of
 * the range (counted from the 2 MiB boundary at or below the start) is
 * one physically contiguous, aligned run, as hugetlbfs and transparent
 * huge pages give.
 */
static bool rxe2_mr_huge_blocks(struct ib_umem *umem)
{
	const unsigned long per = 1UL << (PMD_SHIFT - PAGE_SHIFT);
	unsigned long skip = (umem->address >> PAGE_SHIFT) & (per - 1);
	unsigned long k = 0, base = 0;
	struct sg_page_iter it;

	for_each_sgtable_page(&umem->sgt_append.sgt, &it, 0) {
		unsigned long pfn = page_to_pfn(sg_page_iter_page(&it));
		unsigned long idx = (k + skip) & (per - 1);

		if (k == 0 || idx == 0)
			base = pfn - idx;
		if (pfn != base + idx || base & (per - 1))
			return false;
		k++;
	}
	return k > 0;
}

/*
 * The data path copies page by page (kmap_local_page): list the pages,
 * or with huge blocks one entry per 2 MiB (512 times fewer).
 */
static int rxe2_mr_pages(struct rxe2_mr *mr)
{
	/* a region shorter than a block saves nothing: keep 4 KiB */
	bool huge = mr->umem->length >= PMD_SIZE &&
		    rxe2_mr_huge_blocks(mr->umem);
	unsigned long first = mr->umem->address >> PMD_SHIFT;
	unsigned long last = (mr->umem->address + mr->umem->length - 1) >>
			     PMD_SHIFT;
	unsigned long skip = (mr->umem->address >> PAGE_SHIFT) &
			     ((1UL << (PMD_SHIFT - PAGE_SHIFT)) - 1);
	struct sg_page_iter it;
	unsigned long n = 0;

	mr->page_shift = huge ? PMD_SHIFT : PAGE_SHIFT;
	mr->npages = huge ? last - first + 1 : ib_umem_num_pages(mr->umem);
	mr->pages = kvmalloc_array(mr->npages, sizeof(*mr->pages),
				   GFP_KERNEL);
	if (!mr->pages)
		return -ENOMEM;
	for_each_sgtable_page(&mr->umem->sgt_append.sgt, &it, 0) {
		struct page *pg = sg_page_iter_page(&it);
		unsigned long idx = (n + skip) & ((1UL << (PMD_SHIFT - PAGE_SHIFT)) - 1);

		if (!huge) {
			if (n >= mr->npages)
				break;
			mr->pages[n] = pg;
		} else if (n == 0 || idx == 0) {
			mr->pages[(n + skip) >> (PMD_SHIFT - PAGE_SHIFT)] =
				pfn_to_page(page_to_pfn(pg) - idx);
		}
		n++;
	}
	if (!huge)
		mr->npages = n;
	return 0;
}

/*
 * Offset of a pinned or shared MR's first byte into its first page (of
 * 1 << page_shift bytes).
 */
u64 rxe2_mr_first_offset(const struct rxe2_mr *mr)
{
	if (!mr->umem)
		return mr->first_off;
	return mr->umem->address & ((1ULL << mr->page_shift) - 1);
}

void rxe2_mr_publish(struct rxe2_mr *mr, u64 iova, u64 length)
{
	mr->iova = iova;
	mr->length = length;
	mr->ibmr.iova = iova;
	mr->ibmr.length = length;
	mr->ibmr.page_size = PAGE_SIZE;
	rxe2_table_publish(&to_rdev(mr->ibmr.device)->mr_table, mr->key, mr);
}

/*
 * IB_ACCESS_ON_DEMAND: nothing pinned, pages follow the process (see
 * rxe2_odp.c).  start 0 and length U64_MAX is the implicit MR over the
 * whole address space (iova must be 0 too: iova == address).  An
 * explicit one is bounded by max_mr_size like any other: its page
 * arrays (ib_umem_odp) cost 16 bytes per page of the range.
 */
static struct ib_mr *rxe2_reg_odp_mr(struct ib_pd *ibpd, u64 start,
				     u64 length, u64 iova, int access)
{
	struct rxe2_dev *rdev = to_rdev(ibpd->device);
	bool implicit = !start && length == U64_MAX;
	struct rxe2_mr *mr;
	int ret;

	if (implicit ? iova != 0 :
	    !length || length > rdev->attr.max_mr_size ||
	    iova + length < iova || start + length < start)
		return ERR_PTR(-EINVAL);
	mr = rxe2_mr_alloc(ibpd, access, true);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	ret = rxe2_odp_reg(mr, start, length, access);
	if (ret) {
		rxe2_mr_free(rdev, mr);
		return ERR_PTR(ret);
	}
	rxe2_mr_publish(mr, iova, length);
	return &mr->ibmr;
}

/* the driver data of reg_mr and rereg_mr; zeros when there is none */
static int rxe2_mr_read_cmd(struct ib_udata *udata,
			    struct rxe2_reg_mr_cmd *cmd)
{
	memset(cmd, 0, sizeof(*cmd));
	if (!udata || !udata->inlen)
		return 0;
	return rxe2_udata_read_cmd(udata, cmd, sizeof(*cmd));
}

/*
 * The access bits librxe2 sends as driver data (access_ex): 6.1's
 * ib_check_mr_access() refuses FLUSH_GLOBAL in the access flags.
 */
static int rxe2_mr_access_ex(const struct rxe2_reg_mr_cmd *cmd, int *access)
{
	if (cmd->reserved ||
	    (cmd->access_ex & ~(RXE2_ACCESS_FLUSH_GLOBAL |
				RXE2_ACCESS_FLUSH_PERSISTENT)))
		return -EINVAL;
	*access |= cmd->access_ex;
	return 0;
}

/*
 * length 0 is EINVAL: an empty region names no memory, and ib_umem_get()
 * would pin nothing for it.
 */
struct ib_mr *rxe2_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			       u64 iova, int access, RXE2_DMAH_PARAM
			       struct ib_udata *udata)
{
	struct rxe2_dev *rdev = to_rdev(ibpd->device);
	struct rxe2_reg_mr_cmd cmd;
	struct ib_umem *umem;
	struct ib_mr *xmr;
	struct rxe2_mr *mr;
	int ret;

	/* a DMA handle is a placement hint (rxe2_alloc_dmah()): nothing to do */
	ret = rxe2_mr_read_cmd(udata, &cmd);
	if (!ret)
		ret = rxe2_mr_access_ex(&cmd, &access);
	if (ret)
		return ERR_PTR(ret);
	/* driver data asks for a shared or physical-address MR */
	xmr = rxe2_xmr_reg(ibpd, start, length, iova, access, &cmd, udata);
	if (xmr != ERR_PTR(-ENOTTY))
		return xmr;
	ret = rxe2_mr_check_access(access);
	if (ret)
		return ERR_PTR(ret);
	if (access & IB_ACCESS_ON_DEMAND)
		return rxe2_reg_odp_mr(ibpd, start, length, iova, access);
	if (!length || length > rdev->attr.max_mr_size)
		return ERR_PTR(-EINVAL);
	/* the data path computes iova + offset: keep it from wrapping */
	if (iova + length < iova || start + length < start)
		return ERR_PTR(-EINVAL);

	mr = rxe2_mr_alloc(ibpd, access, true);
	if (IS_ERR(mr))
		return ERR_CAST(mr);

	umem = ib_umem_get_va(ibpd->device, start, length, access);
	if (IS_ERR(umem)) {
		rxe2_mr_free(rdev, mr);
		return ERR_CAST(umem);
	}
	mr->umem = umem;
	ret = rxe2_mr_pages(mr);
	if (ret) {
		ib_umem_release(umem);
		rxe2_mr_free(rdev, mr);
		return ERR_PTR(ret);
	}
	rxe2_mr_publish(mr, iova, length);
	return &mr->ibmr;
}

static void rxe2_mr_release_umem(struct rxe2_mr *mr)
{
	if (mr->odp)
		rxe2_odp_release(mr);
	ib_umem_release(mr->umem);
	kvfree(mr->pages);
}

static void rxe2_mr_life_put(struct rxe2_mr *obj)
{
	if (refcount_dec_and_test(&obj->life))
		kfree_rcu(obj, rcu);
}

/*
 * No new access to the object; wait for those in progress (each is one
 * copy at most, never a whole message).  Once per object: the caller
 * has claimed RXE2_MRO_TORN or owns the object otherwise.
 */
static void rxe2_mr_kill(struct rxe2_mr *obj)
{
	if (!test_and_set_bit(RXE2_MRO_DEAD, &obj->oflags))
		rxe2_mr_put(obj);
	wait_for_completion(&obj->released);
}

/*
 * A replaced object with pages of its own that nobody holds any more.
 * Leaving the owner's retired list is what tells the owner's dereg that
 * the object is done with, so it comes last: the pages go first, and
 * the unlock is the last touch of the owner (its dereg may free it the
 * moment it sees the list empty).  Only obj itself is touched after.
 */
static void rxe2_mr_teardown(struct rxe2_mr *obj)
{
	struct rxe2_mr *owner = obj->owner;

	rxe2_mr_kill(obj);
	rxe2_mr_release_umem(obj);
	spin_lock(&owner->lock);
	list_del_init(&obj->retire_node);
	wake_up_var(&owner->retired);
	spin_unlock(&owner->lock);
	rxe2_mr_life_put(obj);
}

static void rxe2_mr_teardown_work(struct work_struct *work)
{
	rxe2_mr_teardown(container_of(work, struct rxe2_mr, teardown));
}

/*
 * Drop a msgs reference.  The last one releases the object's pages
 * (unless that happened already: RXE2_MRO_TORN), here when the caller
 * may sleep (now), else from rxe2_mr_wq: ib_umem_release() sleeps.
 */
static void rxe2_mr_msgs_put(struct rxe2_mr *obj, bool now)
{
	struct rxe2_mr *succ;

	while (obj && refcount_dec_and_test(&obj->msgs)) {
		/* nobody can follow obj to its successor any more */
		succ = obj->succ;
		if (test_and_set_bit(RXE2_MRO_TORN, &obj->oflags))
			rxe2_mr_life_put(obj);
		else if (now)
			rxe2_mr_teardown(obj);
		else
			queue_work(rxe2_mr_wq, &obj->teardown);
		obj = succ;
	}
}

static bool rxe2_mr_retired_empty(struct rxe2_mr *mr)
{
	bool empty;

	spin_lock(&mr->lock);
	empty = list_empty(&mr->retired);
	spin_unlock(&mr->lock);
	return empty;
}

/*
 * dereg of an ibv_reg_mr MR: its key is gone already.  Every object of
 * it — the current one and replaced ones that messages still hold —
 * dies and loses its pages before we return, so nothing reaches the
 * memory afterwards; a holder's next access fails.  Only the structs
 * may stay, until their last holder lets go.
 */
static int rxe2_dereg_user(struct rxe2_dev *rdev, struct rxe2_mr *mr,
			   struct rxe2_mr *cur)
{
	struct rxe2_mr *obj, *tmp;
	LIST_HEAD(mine);

	spin_lock(&mr->lock);
	list_for_each_entry_safe(obj, tmp, &mr->retired, retire_node) {
		/*
		 * msgs 0: its teardown is queued, or about to be; it
		 * leaves the list once its pages are gone (wait below).
		 */
		if (refcount_inc_not_zero(&obj->msgs)) {
			set_bit(RXE2_MRO_TORN, &obj->oflags);
			list_move(&obj->retire_node, &mine);
		}
	}
	spin_unlock(&mr->lock);
	list_for_each_entry_safe(obj, tmp, &mine, retire_node) {
		list_del_init(&obj->retire_node);
		rxe2_mr_kill(obj);
		rxe2_mr_release_umem(obj);
		rxe2_mr_msgs_put(obj, true);
	}
	wait_var_event(&mr->retired, rxe2_mr_retired_empty(mr));

	set_bit(RXE2_MRO_TORN, &cur->oflags);
	rxe2_mr_kill(cur);
	rxe2_mr_release_umem(cur);
	atomic_dec(&rdev->mr_table.count);
	rxe2_mr_msgs_put(cur, true);
	rxe2_mr_life_put(mr);
	return 0;
}

int rxe2_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct rxe2_dev *rdev = to_rdev(ibmr->device);
	struct rxe2_mr *mr = to_rmr(ibmr);
	/* after a rereg the table holds another object (USER only) */
	struct rxe2_mr *cur = mr->cur ? mr->cur : mr;

	/* IBTA 10.6.7.2.6: not while memory windows are bound to it */
	if (atomic_cmpxchg(&cur->num_mw, 0, -1) != 0)
		return -EBUSY;
	if (mr->type == RXE2_MR_SHARED)
		rxe2_shmr_detach(mr);
	/* no new lookups, then wait for the ones in flight */
	if (mr->type == RXE2_MR_FAST)
		xa_erase(&rxe2_frmr_xa, rxe2_frmr_index(mr->key));
	else
		xa_erase(&rdev->mr_table.xa, mr->key);
	if (mr->type == RXE2_MR_USER)
		return rxe2_dereg_user(rdev, mr, cur);
	/* the other kinds are never replaced nor held by a message */
	rxe2_mr_put(mr);
	wait_for_completion(&mr->released);
	if (mr->type == RXE2_MR_SHARED)
		rxe2_shmr_release(mr);
	if (mr->type == RXE2_MR_DMABUF)
		rxe2_dmabuf_release(mr);
	rxe2_mr_release_umem(mr);
	kfree(mr->fr_pages);
	kfree(mr->fr_staged);
	if (mr->counted)
		atomic_dec(&rdev->mr_table.count);
	kfree_rcu(mr, rcu);
	return 0;
}

/* the new translation of a rereg: pinned, or on demand (rxe2_odp.c) */
static int rxe2_rereg_umem(struct rxe2_mr *new, u64 start, u64 length,
			   int access)
{
	int ret;

	if (access & IB_ACCESS_ON_DEMAND)
		return rxe2_odp_reg(new, start, length, access);
	new->umem = ib_umem_get_va(new->ibmr.device, start, length, access);
	if (IS_ERR(new->umem)) {
		ret = PTR_ERR(new->umem);
		new->umem = NULL;
		return ret;
	}
	ret = rxe2_mr_pages(new);
	if (ret) {
		ib_umem_release(new->umem);
		new->umem = NULL;
	}
	return ret;
}

/*
 * ibv_rereg_mr.  The MR keeps its ib_mr, its key (lkey == rkey, as
 * before) and, when the translation stays, its pinned pages.  What the
 * data path sees changes in one step: a new struct rxe2_mr holding the
 * new translation, PD and access is built aside, then stored over the
 * old one under the same key, so a lookup finds either the old object
 * or the new one, never a mix.  Accesses that found the old one hold a
 * reference for one copy; once the last is gone the old translation is
 * released.  Every failure comes before the swap and leaves the MR as
 * it was.  ib_core has already checked the flags (none, or unknown ones,
 * are refused), start and iova in the same page offset, the access
 * bits (ib_check_mr_access) and that the new PD is one of the caller's.
 */
/* rereg_mr's driver data: only access_ex, and only with new access */
static int rxe2_rereg_udata(struct ib_udata *udata, int flags, int *access)
{
	struct rxe2_reg_mr_cmd cmd;
	int ret;

	ret = rxe2_mr_read_cmd(udata, &cmd);
	if (ret)
		return ret;
	if (cmd.comp_mask || cmd.share_mode || cmd.share_id ||
	    (cmd.access_ex && !(flags & IB_MR_REREG_ACCESS)))
		return -EINVAL;
	return rxe2_mr_access_ex(&cmd, access);
}

struct ib_mr *rxe2_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				 u64 length, u64 iova, int access,
				 struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct rxe2_dev *rdev = to_rdev(ibmr->device);
	struct rxe2_mr *mr = to_rmr(ibmr);
	struct rxe2_mr *old = mr->cur;
	struct rxe2_mr *new;
	bool repin, odp;
	int ret;

	if (!flags || (flags & ~IB_MR_REREG_SUPPORTED))
		return ERR_PTR(-EINVAL);
	ret = rxe2_rereg_udata(udata, flags, &access);
	if (ret)
		return ERR_PTR(ret);
	if (mr->type != RXE2_MR_USER || !old)
		return ERR_PTR(-EINVAL);

	if (flags & IB_MR_REREG_ACCESS) {
		ret = rxe2_mr_check_access(access);
		if (ret)
			return ERR_PTR(ret);
	} else {
		access = old->access;
	}
	if (!(flags & IB_MR_REREG_PD))
		ibpd = old->pd;
	if (!ibpd || ibpd->device != ibmr->device)
		return ERR_PTR(-EINVAL);
	if (flags & IB_MR_REREG_TRANS) {
		if (!length || length > rdev->attr.max_mr_size)
			return ERR_PTR(-EINVAL);
		if (iova + length < iova || start + length < start)
			return ERR_PTR(-EINVAL);
	}
	/*
	 * Pages pinned for reading may be shared copy-on-write (the zero
	 * page, a fork's); granting write access to them needs a new pin.
	 * An ODP MR pins nothing: only a new translation, or turning
	 * on-demand paging on or off, needs a new umem.
	 */
	odp = access & IB_ACCESS_ON_DEMAND;
	if (odp != !!old->odp)
		repin = true;
	else if (odp)
		repin = flags & IB_MR_REREG_TRANS;
	else
		repin = (flags & IB_MR_REREG_TRANS) ||
			(ib_access_writable(access) && !old->umem->writable);

	new = kzalloc(sizeof(*new), GFP_KERNEL);
	if (!new)
		return ERR_PTR(-ENOMEM);
	new->ibmr.device = ibmr->device;
	if (repin) {
		if (!(flags & IB_MR_REREG_TRANS)) {
			start = old->umem->address;
			length = old->length;
			iova = old->iova;
		}
		ret = rxe2_rereg_umem(new, start, length, access);
		if (ret) {
			kfree(new);
			return ERR_PTR(ret);
		}
		new->iova = iova;
		new->length = length;
	} else {
		new->umem = old->umem;
		new->pages = old->pages;
		new->npages = old->npages;
		new->page_shift = old->page_shift;
		new->odp = old->odp;
		new->imr = old->imr;
		new->iova = old->iova;
		new->length = old->length;
	}
	new->type = RXE2_MR_USER;
	new->key = mr->key;
	new->access = access & RXE2_MR_ACCESS;
	new->ibmr.device = ibmr->device;
	new->pd = ibpd;
	new->ibmr.pd = ibpd;
	new->ibmr.lkey = mr->key;
	new->ibmr.rkey = mr->key;
	new->ibmr.iova = new->iova;
	new->ibmr.length = new->length;
	new->ibmr.page_size = PAGE_SIZE;
	rxe2_mr_obj_init(new, mr);

	/*
	 * Not while memory windows are bound to it (as for dereg); from
	 * here no window can bind to the old object.
	 */
	if (atomic_cmpxchg(&old->num_mw, 0, -1) != 0) {
		if (repin)
			rxe2_mr_release_umem(new);
		kfree(new);
		return ERR_PTR(-EBUSY);
	}
	/* listed before anyone can drop its last msgs reference */
	if (repin) {
		spin_lock(&mr->lock);
		list_add_tail(&old->retire_node, &mr->retired);
		spin_unlock(&mr->lock);
	}
	/*
	 * Stamped, published, then counted (rxe2_mr_msg_lookup()): a
	 * message that read the count before this store cannot have seen
	 * the new object, and finds it newer than its start.
	 */
	mutex_lock(&rxe2_mr_seq_lock);
	new->seq = rdev->mr_seq + 1;
	rxe2_table_publish(&rdev->mr_table, mr->key, new);
	/* the object before the count: pairs with rxe2_mr_msg_lookup() */
	smp_store_release(&rdev->mr_seq, new->seq);
	mutex_unlock(&rxe2_mr_seq_lock);
	mr->cur = new;
	if (!repin) {
		/*
		 * Same pages, other access or PD: they are the new object's
		 * now.  The old one dies at once; a message holding it goes
		 * on through the new one if that grants what it needs.
		 */
		set_bit(RXE2_MRO_TORN, &old->oflags);
		refcount_inc(&new->msgs);
		/* before DEAD: whoever sees old dead finds its successor */
		WRITE_ONCE(old->succ, new);
		rxe2_mr_kill(old);
	}
	/*
	 * New pages: messages that hold the old object finish on it, and
	 * its pages go when the last of them ends; now if none does.
	 */
	rxe2_mr_msgs_put(old, true);
	return NULL;
}

struct rxe2_mr *rxe2_mr_msg_lookup(struct rxe2_mr_hold *h, unsigned int n,
				   u64 *seq, struct rxe2_dev *rdev, u32 key,
				   struct ib_pd *pd, int access)
{
	struct rxe2_mr_hold *slot = NULL;
	struct rxe2_mr *mr, *held;
	unsigned int i;
	int tries;

	/* the slots fill from the first and empty all at once */
	for (i = 0; i < n; i++) {
		if (!h[i].mr) {
			slot = &h[i];
			break;
		}
		if (h[i].key != key)
			continue;
		/*
		 * Dead: a dereg (then its successors are dead too), or a
		 * rereg that kept the pages; the successor, should it grant
		 * what the message needs, carries on with the same pages.
		 * DEAD is tested first so that a dying object's wait for
		 * accesses in progress stays short.
		 */
		for (held = h[i].mr; held; held = READ_ONCE(held->succ)) {
			if (held->pd != pd || (access & ~held->access))
				break;
			if (test_bit(RXE2_MRO_DEAD, &held->oflags) ||
			    !refcount_inc_not_zero(&held->ref)) {
				smp_rmb();	/* DEAD, then succ */
				continue;
			}
			if (held != h[i].mr) {
				/* held's msgs: its predecessor's link to it */
				refcount_inc(&held->msgs);
				rxe2_mr_msgs_put(h[i].mr, false);
				h[i].mr = held;
			}
			return held;
		}
		return NULL;
	}
	for (tries = 0; tries < 8; tries++) {
		mr = rxe2_mr_lookup(rdev, key, pd, access);
		if (!mr || mr->type != RXE2_MR_USER)
			return mr;
		if (!slot) {
			/*
			 * Not held: this key's accesses may find other
			 * objects.  One the table got after the message
			 * filled its slots would be a mix: fail instead.
			 */
			if (seq && mr->seq > *seq) {
				rxe2_mr_put(mr);
				return NULL;
			}
			return mr;
		}
		if (refcount_inc_not_zero(&mr->msgs)) {
			slot->mr = mr;
			slot->key = key;
			/* full from now on: what unheld keys must not outdate */
			if (seq && slot == &h[n - 1])
				/* pairs with the rereg's release */
				*seq = smp_load_acquire(&rdev->mr_seq);
			return mr;
		}
		/* replaced and let go just now: the table has the new one */
		rxe2_mr_put(mr);
	}
	return NULL;
}

void rxe2_mr_msg_end(struct rxe2_mr_hold *h, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n && h[i].mr; i++) {
		rxe2_mr_msgs_put(h[i].mr, false);
		h[i].mr = NULL;
	}
}

int rxe2_mr_init(void)
{
	rxe2_mr_wq = alloc_workqueue("rxe2_mr", WQ_UNBOUND, 0);
	return rxe2_mr_wq ? 0 : -ENOMEM;
}

void rxe2_mr_exit(void)
{
	destroy_workqueue(rxe2_mr_wq);
}

/* a fast MR answers only to its current key, and only while VALID */
static bool rxe2_frmr_get(struct rxe2_mr *mr, u32 key, struct ib_pd *pd,
			  int access)
{
	unsigned long flags;
	bool ok;

	spin_lock_irqsave(&mr->lock, flags);
	ok = mr->state == RXE2_MR_VALID && mr->key == key &&
	     mr->pd == pd && !(access & ~mr->access) &&
	     refcount_inc_not_zero(&mr->ref);
	spin_unlock_irqrestore(&mr->lock, flags);
	return ok;
}

struct rxe2_mr *rxe2_mr_lookup(struct rxe2_dev *rdev, u32 key,
			       struct ib_pd *pd, int access)
{
	struct rxe2_mr *mr;

	rcu_read_lock();
	if (key & RXE2_FRMR_KEY_BIT) {
		mr = xa_load(&rxe2_frmr_xa, rxe2_frmr_index(key));
		if (mr && !rxe2_frmr_get(mr, key, pd ? pd : mr->pd,
					 access))
			mr = NULL;
	} else {
again:
		mr = xa_load(&rdev->mr_table.xa, key);
		if (mr && ((pd && mr->pd != pd) ||
			   (access & ~mr->access)))
			mr = NULL;
		/*
		 * A dead object has left the table first (dereg erased the
		 * key, or rereg stored a new object over it): look again.
		 */
		else if (mr && !refcount_inc_not_zero(&mr->ref))
			goto again;
	}
	rcu_read_unlock();
	return mr;
}

void rxe2_mr_put(struct rxe2_mr *mr)
{
	if (refcount_dec_and_test(&mr->ref))
		complete_all(&mr->released);
}

bool rxe2_mr_check_range(const struct rxe2_mr *mr, u64 iova, u64 len)
{
	if (mr->type == RXE2_MR_PA)	/* usable RAM, page by page */
		return rxe2_pamr_check_range(iova, len);
	if (mr->type == RXE2_MR_DMA)
		return true;	/* the DMA MR covers all kernel memory */
	return iova >= mr->iova && len <= mr->length &&
	       iova - mr->iova <= mr->length - len;
}

/*
 * ib_alloc_mr(IB_MR_TYPE_MEM_REG): a kernel consumer's MR for fast
 * registration.  It starts FREE; IB_WR_REG_MR gives it pages and a key.
 * Counted against max_mr like any registered MR.
 */
struct ib_mr *rxe2_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			    u32 max_num_sg)
{
	struct rxe2_dev *rdev = to_rdev(ibpd->device);
	struct rxe2_table *t = &rdev->mr_table;
	struct rxe2_mr *mr;
	u32 index;
	int ret;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EINVAL);
	if (!max_num_sg || max_num_sg > rdev->attr.max_fast_reg_page_list_len)
		return ERR_PTR(-EINVAL);
	if (atomic_inc_return(&t->count) > t->limit) {
		atomic_dec(&t->count);
		return ERR_PTR(-ENOMEM);
	}
	ret = -ENOMEM;
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		goto err_count;
	mr->fr_pages = kcalloc(max_num_sg, sizeof(u64), GFP_KERNEL);
	mr->fr_staged = kcalloc(max_num_sg, sizeof(u64), GFP_KERNEL);
	if (!mr->fr_pages || !mr->fr_staged)
		goto err_free;
	/* reserved (NULL) until the MR is complete */
	ret = xa_alloc_cyclic(&rxe2_frmr_xa, &index, NULL,
			      XA_LIMIT(1, RXE2_FRMR_INDEX_MAX),
			      &rxe2_frmr_next, GFP_KERNEL);
	if (ret < 0) {
		ret = ret == -EBUSY ? -ENOMEM : ret;
		goto err_free;
	}
	mr->type = RXE2_MR_FAST;
	mr->state = RXE2_MR_FREE;
	mr->counted = true;
	mr->fr_max = max_num_sg;
	mr->key = RXE2_FRMR_KEY_BIT | index << 8;
	spin_lock_init(&mr->lock);
	refcount_set(&mr->ref, 1);
	init_completion(&mr->released);
	mr->pd = ibpd;
	mr->ibmr.pd = ibpd;
	mr->ibmr.lkey = mr->key;
	mr->ibmr.rkey = mr->key;
	xa_store(&rxe2_frmr_xa, index, mr, GFP_KERNEL);
	return &mr->ibmr;

err_free:
	kfree(mr->fr_pages);
	kfree(mr->fr_staged);
	kfree(mr);
err_count:
	atomic_dec(&t->count);
	return ERR_PTR(ret);
}

static int rxe2_frmr_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct rxe2_mr *mr = to_rmr(ibmr);

	if (mr->fr_nstaged >= mr->fr_max)
		return -ENOMEM;
	mr->fr_staged[mr->fr_nstaged++] = addr;
	return 0;
}

/*
 * The device has no DMA device (ib_register_device(..., NULL)), so
 * ib_dma_map_sg() hands out kernel virtual addresses: the page list is
 * a list of kernel VAs.  It is only staged here; IB_WR_REG_MR takes it.
 */
int rxe2_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		   unsigned int *sg_offset)
{
	struct rxe2_mr *mr = to_rmr(ibmr);

	mr->fr_nstaged = 0;
	return ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset,
			      rxe2_frmr_set_page);
}

/* the fast MR of this key's index, with a reference, or NULL */
static struct rxe2_mr *rxe2_frmr_find(u32 key, struct ib_pd *pd)
{
	struct rxe2_mr *mr;

	if (!(key & RXE2_FRMR_KEY_BIT))
		return NULL;
	rcu_read_lock();
	mr = xa_load(&rxe2_frmr_xa, rxe2_frmr_index(key));
	if (mr && (mr->pd != pd || !refcount_inc_not_zero(&mr->ref)))
		mr = NULL;
	rcu_read_unlock();
	return mr;
}

/*
 * IB_WR_REG_MR: the MR must be FREE and of the QP's PD, and the key may
 * differ from the MR's (mr_key: the ib_mr's lkey when the WR was posted)
 * only in its low 8 bits (the index is the MR's);
 * otherwise the WR completes with LOC_QP_OP_ERR (as rdma_rxe does).
 * Takes iova, length and page size from the ib_mr (set by
 * ib_map_mr_sg()) and the staged page list.
 */
int rxe2_mr_reg_fast(struct rxe2_qp *qp, u32 mr_key, u32 key, int access)
{
	struct rxe2_mr *mr;
	unsigned long flags;
	u32 n, shift, first_off;
	u64 iova, length;
	int status = IB_WC_LOC_QP_OP_ERR;

	/* ib_reg_wr's key must carry the index of ib_reg_wr's MR */
	if ((mr_key ^ key) & ~0xffu)
		return status;
	mr = rxe2_frmr_find(key, rxe2_qp_pd(qp));
	if (!mr)
		return status;
	if (rxe2_mr_check_access(access))
		goto out;
	if (!is_power_of_2(mr->ibmr.page_size))
		goto out;
	shift = ilog2(mr->ibmr.page_size);
	if (shift < RXE2_FRMR_MIN_SHIFT || shift > RXE2_FRMR_MAX_SHIFT)
		goto out;
	iova = mr->ibmr.iova;
	length = mr->ibmr.length;
	n = min(mr->fr_nstaged, mr->fr_max);
	first_off = iova & (mr->ibmr.page_size - 1);
	if (iova + length < iova || length > ((u64)n << shift) ||
	    first_off + length > ((u64)n << shift))
		goto out;

	spin_lock_irqsave(&mr->lock, flags);
	if (mr->state == RXE2_MR_FREE) {
		memcpy(mr->fr_pages, mr->fr_staged, n * sizeof(u64));
		mr->fr_npages = n;
		mr->fr_shift = shift;
		mr->fr_first_off = first_off;
		mr->iova = iova;
		mr->length = length;
		mr->access = access & RXE2_MR_ACCESS;
		mr->key = key;
		mr->state = RXE2_MR_VALID;
		status = IB_WC_SUCCESS;
	}
	spin_unlock_irqrestore(&mr->lock, flags);
out:
	rxe2_mr_put(mr);
	return status;
}

/*
 * LOCAL_INV, or SEND_WITH_INV received: the key must be the current key
 * of a fast MR of the QP's PD.  Keys of other MRs (ibv_reg_mr, the DMA
 * MR) cannot be invalidated: IBTA allows invalidation only of fast-
 * registered MRs and type 2 memory windows (rxe2_mw_invalidate()).
 * Invalidating a FREE MR under its current key succeeds and changes
 * nothing (rdma_rxe does the same).  Before returning, waits until no
 * access that looked the MR up before it went FREE is still running,
 * so that the consumer may reuse the memory once it sees the completion.
 */
int rxe2_mr_invalidate(struct rxe2_qp *qp, u32 key)
{
	struct rxe2_mr *mr;
	unsigned long flags;
	bool drain = false;
	int status = IB_WC_LOC_QP_OP_ERR;

	if (rxe2_key_is_mw(key))
		return rxe2_mw_invalidate(qp, key);
	mr = rxe2_frmr_find(key, rxe2_qp_pd(qp));
	if (!mr)
		return status;
	spin_lock_irqsave(&mr->lock, flags);
	if (mr->key == key) {
		drain = mr->state == RXE2_MR_VALID;
		mr->state = RXE2_MR_FREE;
		status = IB_WC_SUCCESS;
	}
	spin_unlock_irqrestore(&mr->lock, flags);
	/*
	 * Lookups fail from now on; those in flight hold a reference for
	 * one copy at most, never while waiting on anything.  Only the
	 * VALID -> FREE transition waits, so two invalidations never wait
	 * on each other's references.  The table's reference and ours stay.
	 */
	while (drain && refcount_read(&mr->ref) > 2)
		usleep_range(10, 50);
	rxe2_mr_put(mr);
	return status;
}

/* the kernel VA of iova in a VALID fast MR and the bytes left in its page */
static void *rxe2_frmr_va(struct rxe2_mr *mr, u64 iova, u32 *room)
{
	u64 off = iova - mr->iova + mr->fr_first_off;
	u64 idx = off >> mr->fr_shift;
	u64 poff = off & ((1ull << mr->fr_shift) - 1);

	if (idx >= mr->fr_npages)
		return NULL;
	*room = (1u << mr->fr_shift) - poff;
	return (void *)(uintptr_t)(mr->fr_pages[idx] + poff);
}

/*
 * rxe2_kmr_access() - fn over [iova, iova + len) of a kernel MR, one
 * contiguous piece at a time.  The caller holds a lookup reference and
 * has checked the range with rxe2_mr_check_range().  DMA MR: addresses
 * are kernel VAs (virt DMA), one piece; FAST MR: a piece per page of
 * its page list.
 */
int rxe2_kmr_access(struct rxe2_mr *mr, u64 iova, u32 len, rxe2_page_fn fn,
		    void *arg)
{
	if (mr->type == RXE2_MR_DMA) {
		fn((void *)(uintptr_t)iova, len, arg);
		return 0;
	}
	while (len) {
		u32 room, n;
		void *va = rxe2_frmr_va(mr, iova, &room);

		if (!va)
			return -EFAULT;
		n = min(len, room);
		fn(va, n, arg);
		iova += n;
		len -= n;
	}
	return 0;
}

/*
 * rxe2_mr_access() - the one way the data path reaches the memory of an
 * MR: fn sees [iova, iova + len) piece by piece (never across a page),
 * mapped in the kernel.  A kernel MR's memory is mapped already; a
 * pinned or shared MR has every page at hand in mr->pages[]; a PA MR
 * checks each page (rxe2_pamr.c); an ODP MR faults missing ones in
 * and keeps them from being invalidated until fn returns (rxe2_odp.c).
 * The caller has checked the range with rxe2_mr_check_range().  0 or
 * -EFAULT.
 */
int rxe2_mr_access(struct rxe2_mr *mr, u64 iova, u32 len, bool write,
		   rxe2_page_fn fn, void *arg)
{
	u64 off;

	if (rxe2_mr_is_kernel(mr))
		return rxe2_kmr_access(mr, iova, len, fn, arg);
	if (mr->type == RXE2_MR_PA)
		return rxe2_pamr_access(iova, len, fn, arg);
	if (mr->odp)
		return rxe2_odp_access(mr, iova, len, write, fn, arg);
	/* pinned: the umem's pages (or 2 MiB blocks); shared: the shm's */
	off = iova - mr->iova + rxe2_mr_first_offset(mr);
	while (len) {
		unsigned long pg = off >> mr->page_shift;
		u64 boff = off & ((1ULL << mr->page_shift) - 1);
		u32 poff = off & ~PAGE_MASK;
		u32 n = min_t(u32, len, PAGE_SIZE - poff);
		void *va;

		if (pg >= mr->npages)
			return -EFAULT;
		/* a huge page's struct pages: not contiguous on every memory model */
		va = kmap_local_page(pfn_to_page(page_to_pfn(mr->pages[pg]) +
						 (boff >> PAGE_SHIFT)));
		fn(va + poff, n, arg);
		kunmap_local(va);
		off += n;
		len -= n;
	}
	return 0;
}

struct rxe2_copy_arg {
	void *buf;
	bool to_mr;
};

static void rxe2_copy_page(void *addr, u32 len, void *arg)
{
	struct rxe2_copy_arg *c = arg;

	if (c->to_mr)
		memcpy(addr, c->buf, len);
	else
		memcpy(c->buf, addr, len);
	c->buf += len;
}

/*
 * rxe2_mr_copy() - copy between an MR and a kernel buffer.  The caller
 * has checked [iova, iova + len) with rxe2_mr_check_range().
 */
int rxe2_mr_copy(struct rxe2_mr *mr, u64 iova, void *buf, u32 len,
		 bool to_mr)
{
	struct rxe2_copy_arg c = { .buf = buf, .to_mr = to_mr };

	if (!len)
		return 0;
	return rxe2_mr_access(mr, iova, len, to_mr, rxe2_copy_page, &c);
}

/*
 * For rxe2dv_query_mr: the size and number of the MR's translation
 * entries.  The caller holds the MR's uobject: no rereg runs under it.
 */
void rxe2_mr_query_pages(struct ib_mr *ibmr, struct rxe2_query_mr_resp *resp)
{
	struct rxe2_mr *mr = to_rmr(ibmr);
	struct rxe2_mr *cur = mr->cur ? mr->cur : mr;

	resp->comp_mask |= RXE2_QUERY_MR_RESP_PAGES;
	if (cur->odp == RXE2_ODP_EXPLICIT) {
		struct ib_umem_odp *odp = to_ib_umem_odp(cur->umem);

		resp->page_size = 1U << odp->page_shift;
		resp->num_pages = ib_umem_odp_num_pages(odp);
	} else if (!cur->odp && cur->pages) {
		resp->page_size = 1U << cur->page_shift;
		resp->num_pages = cur->npages;
	} else {
		resp->page_size = PAGE_SIZE;
	}
}

/*
 * For rxe2dv_query_mr (rxe2_ic.c): the nodes of the pages a user MR has
 * resident now and its access.  Returns the number of resident pages;
 * 0 for an MR without pages (nothing pinned, not a umem MR, a PA MR: its
 * memory is anywhere).  A shared MR reports its shm's pages, which it
 * always has.  The caller holds the MR's uobject, so no rereg or dereg
 * runs under it.
 */
unsigned long rxe2_mr_resident_nodes(struct ib_mr *ibmr, nodemask_t *nodes,
				     int *access)
{
	struct rxe2_mr *mr = to_rmr(ibmr);
	struct rxe2_mr *cur = mr->cur ? mr->cur : mr;
	unsigned long i, n = 0;

	nodes_clear(*nodes);
	*access = cur->access;
	if (cur->odp)
		return rxe2_odp_resident_nodes(cur, nodes);
	if ((cur->type != RXE2_MR_USER && cur->type != RXE2_MR_SHARED) ||
	    !cur->pages)
		return 0;
	for (i = 0; i < cur->npages; i++) {
		if (!cur->pages[i])
			continue;
		node_set(page_to_nid(cur->pages[i]), *nodes);
		n++;
		if (!(i % RXE2_RESCHED_PAGES))
			cond_resched();
	}
	return n;
}

#ifdef RXE2_HAVE_ALLOC_DMAH
/*
 * A DMA handle names where the memory of the MRs made with it will be
 * used: a CPU (its cache) and a memory type for the PCIe TPH steering
 * tag, and the TPH processing hint.  rxe2 writes MR memory with the CPU
 * that runs the responder, never by a PCIe write, so there is no tag
 * to steer and the MRs work as any other; the handle is checked as
 * mlx5 checks it (the hint is mandatory, a steering tag needs both the
 * CPU and the memory type) and the MR shows it (`rdma resource show mr
 * -dd`).  ib_core has checked the CPU and the memory type already.
 */
int rxe2_alloc_dmah(struct ib_dmah *ibdmah, struct uverbs_attr_bundle *attrs)
{
	u8 st = BIT(IB_DMAH_CPU_ID_EXISTS) | BIT(IB_DMAH_MEM_TYPE_EXISTS);

	if (!(ibdmah->valid_fields & BIT(IB_DMAH_PH_EXISTS)))
		return -EINVAL;
	/* PCIe TPH processing hints are two bits */
	if (ibdmah->ph > 3)
		return -EINVAL;
	if ((ibdmah->valid_fields & st) && (ibdmah->valid_fields & st) != st)
		return -EINVAL;
	return 0;
}

int rxe2_dealloc_dmah(struct ib_dmah *ibdmah, struct uverbs_attr_bundle *attrs)
{
	return 0;
}
#endif

/* `rdma resource show mr -dd`: what kind of ODP, if any; its DMA handle */
int rxe2_fill_res_mr_entry(struct sk_buff *msg, struct ib_mr *ibmr)
{
	static const char *const kind[] = {
		[RXE2_ODP_NONE] = "none",
		[RXE2_ODP_EXPLICIT] = "explicit",
		[RXE2_ODP_IMPLICIT] = "implicit",
	};
	u8 odp = to_rmr(ibmr)->odp;
	struct rxe2_res_u32 d[2] = {
		{ .name = "dmah_ph" }, { .name = "dmah_cpu" },
	};
	struct ib_dmah *dmah = rxe2_mr_dmah(ibmr);

	if (dmah) {
		d[0].v = rxe2_dmah_ph(dmah);
		d[0].show = true;
		d[1].show = rxe2_dmah_cpu(dmah, &d[1].v);
	}
	return rxe2_res_put(msg, d, ARRAY_SIZE(d),
			    odp < ARRAY_SIZE(kind) ? kind[odp] : "?");
}
