// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2: memory regions.  See rxe2_verbs.h for the key layout and the
 * lookup contract the data path relies on.
 */
#include <rdma/ib_umem.h>

#include "rxe2_verbs.h"

/* what an MR may grant; IB_ACCESS_OPTIONAL bits are hints we may ignore */
#define RXE2_MR_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC)

static int rxe2_mr_check_access(int access)
{
	access &= ~IB_ACCESS_OPTIONAL;
	if (access & ~RXE2_MR_ACCESS)
		return -EINVAL;
	/* IBTA: remote write or atomic needs local write (ib_core agrees) */
	if ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IB_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	return 0;
}

/*
 * The DMA MR is not counted against max_mr: ib_alloc_pd() creates it
 * behind the consumer's back and restrack does not show it, so counting
 * it would make the limit look one short to anyone checking with
 * `rdma resource show`.
 */
static struct rxe2_mr *rxe2_mr_alloc(struct ib_pd *ibpd, int access,
				     bool counted)
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
	mr->access = access & RXE2_MR_ACCESS;
	mr->ibmr.pd = ibpd;	/* ib_core sets it too, but only after we publish */
	refcount_set(&mr->ref, 1);
	init_completion(&mr->released);
	mr->ibmr.lkey = mr->key;
	mr->ibmr.rkey = mr->key;
	return mr;
}

static void rxe2_mr_free(struct rxe2_dev *rdev, struct rxe2_mr *mr)
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

/* the data path copies page by page (kmap_local_page): list them */
static int rxe2_mr_pages(struct rxe2_mr *mr)
{
	struct sg_page_iter it;
	unsigned long n = 0;

	mr->npages = ib_umem_num_pages(mr->umem);
	mr->pages = kvmalloc_array(mr->npages, sizeof(*mr->pages),
				   GFP_KERNEL);
	if (!mr->pages)
		return -ENOMEM;
	for_each_sgtable_page(&mr->umem->sgt_append.sgt, &it, 0) {
		if (n >= mr->npages)
			break;
		mr->pages[n++] = sg_page_iter_page(&it);
	}
	mr->npages = n;
	return 0;
}

/*
 * length 0 is EINVAL: an empty region names no memory, and ib_umem_get()
 * would pin nothing for it.
 */
struct ib_mr *rxe2_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			       u64 iova, int access, struct ib_udata *udata)
{
	struct rxe2_dev *rdev = to_rdev(ibpd->device);
	struct ib_umem *umem;
	struct rxe2_mr *mr;
	int ret;

	ret = rxe2_check_udata_in_empty(udata);
	if (ret)
		return ERR_PTR(ret);
	ret = rxe2_mr_check_access(access);
	if (ret)
		return ERR_PTR(ret);
	if (!length || length > rdev->attr.max_mr_size)
		return ERR_PTR(-EINVAL);
	/* the data path computes iova + offset: keep it from wrapping */
	if (iova + length < iova || start + length < start)
		return ERR_PTR(-EINVAL);

	mr = rxe2_mr_alloc(ibpd, access, true);
	if (IS_ERR(mr))
		return ERR_CAST(mr);

	umem = ib_umem_get(ibpd->device, start, length, access);
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
	mr->iova = iova;
	mr->length = length;
	mr->ibmr.iova = iova;
	mr->ibmr.length = length;
	mr->ibmr.page_size = PAGE_SIZE;
	rxe2_table_publish(&rdev->mr_table, mr->key, mr);
	return &mr->ibmr;
}

int rxe2_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct rxe2_dev *rdev = to_rdev(ibmr->device);
	struct rxe2_mr *mr = container_of(ibmr, struct rxe2_mr, ibmr);

	/* no new lookups, then wait for the ones in flight */
	xa_erase(&rdev->mr_table.xa, mr->key);
	rxe2_mr_put(mr);
	wait_for_completion(&mr->released);

	ib_umem_release(mr->umem);
	kvfree(mr->pages);
	if (mr->counted)
		atomic_dec(&rdev->mr_table.count);
	kfree_rcu(mr, rcu);
	return 0;
}

struct rxe2_mr *rxe2_mr_lookup(struct rxe2_dev *rdev, u32 key,
			       struct ib_pd *pd, int access)
{
	struct rxe2_mr *mr;

	rcu_read_lock();
	mr = xa_load(&rdev->mr_table.xa, key);
	if (mr && (mr->ibmr.pd != pd || (access & ~mr->access) ||
		   !refcount_inc_not_zero(&mr->ref)))
		mr = NULL;
	rcu_read_unlock();
	return mr;
}

void rxe2_mr_put(struct rxe2_mr *mr)
{
	if (refcount_dec_and_test(&mr->ref))
		complete(&mr->released);
}

bool rxe2_mr_check_range(const struct rxe2_mr *mr, u64 iova, u64 len)
{
	if (!mr->umem)
		return true;	/* the DMA MR covers all kernel memory */
	return iova >= mr->iova && len <= mr->length &&
	       iova - mr->iova <= mr->length - len;
}
