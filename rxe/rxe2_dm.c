// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2: device memory (ibv_alloc_dm, ibv_reg_dm_mr).
 *
 * On a NIC, device memory is on-chip SRAM behind a BAR: the process
 * reaches it only through ibv_memcpy_to_dm()/ibv_memcpy_from_dm(), and
 * MRs over it (zero-based: iova 0 is the start of the region in the
 * allocation) let the data path use it without a trip through host
 * memory.  Here it is memory the device owns: vmalloc_user() pages,
 * always resident (never swapped, migrated or faulted), charged against
 * the device's max_dm_size (module parameter, bytes, in page units),
 * mapped once into the process by librxe2, which implements the copy
 * verbs as memcpy() on that mapping.  The data path reaches a DM MR's
 * pages like a pinned MR's.
 *
 * Lifetimes: ib_core refuses to free a DM while an MR is over it, and an
 * MR's dereg waits for the accesses in flight, so the pages outlive
 * every access.  Freeing the DM removes its mmap entry, whose free
 * vfree()s the buffer at once; a mapping left (librxe2 unmaps first)
 * keeps its pages through their page references until munmap(), as for
 * a ring: max_dm_size bounds what the verbs hold, not what a process
 * that keeps raw mappings of freed DMs holds.
 */
#include <linux/vmalloc.h>
#include <rdma/uverbs_ioctl.h>

#include "rxe2_verbs.h"

struct rxe2_dm {
	struct ib_dm ibdm;
	struct rxe2_mmap_entry *mme;	/* the pages; removed at dealloc */
	u64 size;			/* bytes, page multiple */
	u64 length;			/* bytes asked for: bounds the copies */
};

static struct rxe2_dm *to_rdm(struct ib_dm *ibdm)
{
	return container_of(ibdm, struct rxe2_dm, ibdm);
}

/* charge size bytes to the device, or -ENOMEM */
static int rxe2_dm_charge(struct rxe2_dev *rdev, u64 size)
{
	u64 used = atomic64_add_return(size, &rdev->dm_used);

	if (used <= rdev->attr.max_dm_size)
		return 0;
	atomic64_sub(size, &rdev->dm_used);
	return -ENOMEM;
}

struct ib_dm *rxe2_alloc_dm(struct ib_device *ibdev, struct ib_ucontext *ibuc,
			    struct ib_dm_alloc_attr *attr,
			    struct uverbs_attr_bundle *attrs)
{
	struct rxe2_dev *rdev = to_rdev(ibdev);
	struct rxe2_mmap_entry *mme;
	struct rxe2_dm *dm;
	u64 offset;
	int ret;

	/* alignment: every DM starts at device address 0 of its own */
	if (!attr->length || attr->length > rdev->attr.max_dm_size ||
	    attr->flags)
		return ERR_PTR(-EINVAL);
	dm = kzalloc(sizeof(*dm), GFP_KERNEL);
	if (!dm)
		return ERR_PTR(-ENOMEM);
	dm->size = PAGE_ALIGN(attr->length);
	dm->length = attr->length;
	ret = rxe2_dm_charge(rdev, dm->size);
	if (ret)
		goto err_dm;
	ret = -ENOMEM;
	mme = kzalloc(sizeof(*mme), GFP_KERNEL);
	if (!mme)
		goto err_charge;
	mme->buf = vmalloc_user(dm->size);	/* zeroed */
	if (!mme->buf)
		goto err_mme;
	ret = rdma_user_mmap_entry_insert(ibuc, &mme->rdma, dm->size);
	if (ret)
		goto err_buf;
	dm->mme = mme;
	offset = rdma_user_mmap_get_offset(&mme->rdma);
	ret = uverbs_copy_to(attrs, RXE2_ATTR_ALLOC_DM_RESP_MMAP_OFFSET,
			     &offset, sizeof(offset));
	if (ret)
		goto err_entry;
	return &dm->ibdm;

err_entry:
	/* nothing is mapped yet: mmap_free frees buf and mme now */
	rdma_user_mmap_entry_remove(&mme->rdma);
	goto err_charge;
err_buf:
	vfree(mme->buf);
err_mme:
	kfree(mme);
err_charge:
	atomic64_sub(dm->size, &rdev->dm_used);
err_dm:
	kfree(dm);
	return ERR_PTR(ret);
}

int rxe2_dealloc_dm(struct ib_dm *ibdm, struct uverbs_attr_bundle *attrs)
{
	struct rxe2_dm *dm = to_rdm(ibdm);

	/* a mapping left keeps the pages until munmap(): not charged */
	rdma_user_mmap_entry_remove(&dm->mme->rdma);
	atomic64_sub(dm->size, &to_rdev(ibdm->device)->dm_used);
	kfree(dm);
	return 0;
}

/*
 * For ibv_import_dm() (RXE2_METHOD_DM_QUERY, rxe2_dv.c): where alloc
 * put the pages on the context's fd, and the length asked for.  The
 * caller holds the DM's uobject, so dealloc cannot remove the entry.
 */
void rxe2_dm_query(struct ib_dm *ibdm, u64 *mmap_offset, u64 *length)
{
	struct rxe2_dm *dm = to_rdm(ibdm);

	*mmap_offset = rdma_user_mmap_get_offset(&dm->mme->rdma);
	*length = dm->length;
}

/*
 * A zero-based MR over [offset, offset + length) of the DM (ib_core has
 * checked the range and IB_ZERO_BASED).  A zero-length one is valid, as
 * on mlx5 (and for ib_core): it has keys but no page, so every access
 * of a byte or more fails the MR's bounds check.
 */
struct ib_mr *rxe2_reg_dm_mr(struct ib_pd *ibpd, struct ib_dm *ibdm,
			     struct ib_dm_mr_attr *attr,
			     struct uverbs_attr_bundle *attrs)
{
	struct rxe2_dm *dm = to_rdm(ibdm);
	int access = attr->access_flags & ~IB_ZERO_BASED;
	struct rxe2_mr *mr;
	int ret;

	ret = rxe2_mr_check_access_held(access);
	if (ret)
		return ERR_PTR(ret);
	if (attr->offset > dm->size || attr->length > dm->size - attr->offset)
		return ERR_PTR(-EINVAL);
	mr = rxe2_mr_alloc(ibpd, access, true);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->type = RXE2_MR_DM;
	ret = rxe2_mr_kva_pages(mr, dm->mme->buf, attr->offset, attr->length);
	if (ret) {
		kvfree(mr->pages);
		rxe2_mr_free(to_rdev(ibpd->device), mr);
		return ERR_PTR(ret);
	}
	rxe2_mr_publish(mr, 0, attr->length);
	return &mr->ibmr;
}
