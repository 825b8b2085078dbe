// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2: shared MRs (rxe2dv_alloc_shared_mr, rxe2dv_reg_shared_mr).
 *
 * The device allocates the memory: a "shm" is an array of zeroed pages
 * with an owner (the allocating caller's fsuid and fsgid), permission
 * bits like a file's (read and write for user, group, others) and a
 * system-wide share id.  Every MR over it, the owner's first one
 * included, is an ordinary MR of its caller's PD with its own key and
 * access, whose data path uses the shm's pages as a pinned MR uses its
 * umem's.  Each MR also has an rdma_user_mmap_entry on its context: the
 * process maps the pages through it, and the first mmap() fixes the
 * MR's iova at the mapping's address and makes the key live.  The
 * pages go when the last MR and the last mapping have gone; the id
 * stops naming them as soon as the last MR has.
 *
 * Permission: read is needed for any MR, write for one with local or
 * remote write or atomic access.  Unlike a file's there is no override
 * for root: the owner's bits bind the owner too.
 */
#include <linux/cred.h>
#include <linux/highmem.h>
#include <linux/kref.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <rdma/uverbs_ioctl.h>

#include "rxe2_verbs.h"

struct rxe2_shm {
	struct kref kref;	/* MRs, mmap entries */
	u32 id;
	unsigned int nr_mr;	/* under rxe2_shm_lock; the id dies at 0 */
	kuid_t uid;
	kgid_t gid;
	umode_t mode;
	unsigned long npages;
	struct page **pages;
};

/* one MR's mmap entry over the shm's pages; may outlive the MR */
struct rxe2_shm_map {
	struct rxe2_mmap_entry mme;
	struct rxe2_shm *shm;	/* a reference until mmap_free */
	bool writable;
	struct mutex lock;	/* mr, placed */
	struct rxe2_mr *mr;	/* until dereg */
	bool placed;		/* the MR has its iova and its key works */
};

#define RXE2_SHM_MODE_MASK	(0666)

static DEFINE_XARRAY_ALLOC1(rxe2_shm_xa);
static u32 rxe2_shm_next;
static DEFINE_MUTEX(rxe2_shm_lock);	/* ids and nr_mr */

static void rxe2_shm_free(struct kref *kref)
{
	struct rxe2_shm *shm = container_of(kref, struct rxe2_shm, kref);
	unsigned long i;

	/* mapped pages hold references of their own */
	for (i = 0; i < shm->npages; i++)
		__free_page(shm->pages[i]);
	kvfree(shm->pages);
	kfree(shm);
}

static struct rxe2_shm *rxe2_shm_alloc(u64 length, umode_t mode)
{
	struct rxe2_shm *shm;
	unsigned long i;
	int ret = -ENOMEM;

	shm = kzalloc(sizeof(*shm), GFP_KERNEL);
	if (!shm)
		return ERR_PTR(-ENOMEM);
	shm->npages = DIV_ROUND_UP(length, PAGE_SIZE);
	shm->pages = kvcalloc(shm->npages, sizeof(*shm->pages),
			      GFP_KERNEL_ACCOUNT);
	if (!shm->pages)
		goto err;
	for (i = 0; i < shm->npages; i++) {
		/* charged to the allocating process's memory cgroup */
		shm->pages[i] = alloc_page(GFP_HIGHUSER | __GFP_ZERO |
					   __GFP_ACCOUNT | __GFP_NOWARN);
		if (!shm->pages[i])
			goto err_pages;
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			i++;
			goto err_pages;
		}
		cond_resched();
	}
	kref_init(&shm->kref);
	shm->uid = current_fsuid();
	shm->gid = current_fsgid();
	shm->mode = mode;
	return shm;

err_pages:
	while (i--)
		if (shm->pages[i])
			__free_page(shm->pages[i]);
	kvfree(shm->pages);
err:
	kfree(shm);
	return ERR_PTR(ret);
}

/* the owner's bits, else the group's, else the others', as for a file */
static bool rxe2_shm_permits(const struct rxe2_shm *shm, bool write)
{
	umode_t mode = shm->mode;

	if (uid_eq(current_fsuid(), shm->uid))
		mode >>= 6;
	else if (in_group_p(shm->gid))
		mode >>= 3;
	/* now in the "others" position: 04 read, 02 write */
	if (!(mode & 0004))
		return false;
	return !write || (mode & 0002);
}

/* a new MR over the shm of id: a reference and an MR count, or ERR_PTR */
static struct rxe2_shm *rxe2_shm_attach(u64 id, bool write)
{
	struct rxe2_shm *shm;

	if (!id || id > U32_MAX)
		return ERR_PTR(-ENOENT);
	mutex_lock(&rxe2_shm_lock);
	shm = xa_load(&rxe2_shm_xa, id);
	if (!shm || !shm->nr_mr) {
		shm = ERR_PTR(-ENOENT);
	} else if (!rxe2_shm_permits(shm, write)) {
		shm = ERR_PTR(-EACCES);
	} else {
		shm->nr_mr++;
		kref_get(&shm->kref);
	}
	mutex_unlock(&rxe2_shm_lock);
	return shm;
}

static int rxe2_shm_publish(struct rxe2_shm *shm)
{
	int ret;

	shm->nr_mr = 1;
	mutex_lock(&rxe2_shm_lock);
	ret = xa_alloc_cyclic(&rxe2_shm_xa, &shm->id, shm, xa_limit_32b,
			      &rxe2_shm_next, GFP_KERNEL);
	mutex_unlock(&rxe2_shm_lock);
	return ret < 0 ? (ret == -EBUSY ? -ENOMEM : ret) : 0;
}

/* an MR over the shm went: the last one takes the id away */
static void rxe2_shm_detach(struct rxe2_shm *shm)
{
	mutex_lock(&rxe2_shm_lock);
	if (!--shm->nr_mr)
		xa_erase(&rxe2_shm_xa, shm->id);
	mutex_unlock(&rxe2_shm_lock);
	kref_put(&shm->kref, rxe2_shm_free);
}

static bool rxe2_access_writes(int access)
{
	return access & (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
			 IB_ACCESS_REMOTE_ATOMIC);
}

static struct ib_mr *rxe2_shmr_reg(struct ib_pd *ibpd, u64 length,
				   int access, const struct rxe2_reg_mr_cmd *cmd,
				   struct ib_udata *udata)
{
	struct rxe2_dev *rdev = to_rdev(ibpd->device);
	struct rxe2_reg_mr_resp resp = {};
	struct rxe2_ucontext *uc;
	struct rxe2_shm_map *map;
	struct rxe2_shm *shm;
	struct rxe2_mr *mr;
	u64 offset;
	int ret;

	ret = rxe2_mr_check_access_held(access);
	if (ret)
		return ERR_PTR(ret);
	if (udata->outlen < sizeof(resp))
		return ERR_PTR(-EINVAL);

	if (cmd->comp_mask == RXE2_REG_MR_SHARED_ALLOC) {
		if (cmd->share_mode & ~RXE2_SHM_MODE_MASK || cmd->share_id)
			return ERR_PTR(-EINVAL);
		if (!length || length > rdev->attr.max_mr_size ||
		    length > U64_MAX - PAGE_SIZE)
			return ERR_PTR(-EINVAL);
		shm = rxe2_shm_alloc(length, cmd->share_mode);
		if (IS_ERR(shm))
			return ERR_CAST(shm);
		ret = rxe2_shm_publish(shm);
		if (ret) {
			kref_put(&shm->kref, rxe2_shm_free);
			return ERR_PTR(ret);
		}
	} else {
		if (cmd->share_mode)
			return ERR_PTR(-EINVAL);
		shm = rxe2_shm_attach(cmd->share_id,
				      rxe2_access_writes(access));
		if (IS_ERR(shm))
			return ERR_CAST(shm);
	}

	ret = -ENOMEM;
	map = kzalloc(sizeof(*map), GFP_KERNEL);
	if (!map)
		goto err_shm;
	mutex_init(&map->lock);
	map->mme.shm = true;
	kref_get(&shm->kref);
	map->shm = shm;
	map->writable = rxe2_access_writes(access);

	/* the key stays invisible until the first mmap() places the MR */
	mr = rxe2_mr_alloc(ibpd, access, true);
	if (IS_ERR(mr)) {
		ret = PTR_ERR(mr);
		goto err_map;
	}
	mr->type = RXE2_MR_SHARED;
	mr->pages = shm->pages;
	mr->npages = shm->npages;
	mr->length = (u64)shm->npages << PAGE_SHIFT;
	mr->shmap = map;
	mr->shm = shm;		/* the reference taken above */
	map->mr = mr;

	uc = rdma_udata_to_drv_context(udata, struct rxe2_ucontext, ibuc);
	ret = rdma_user_mmap_entry_insert(&uc->ibuc, &map->mme.rdma,
					  mr->length);
	if (ret)
		goto err_mr;

	offset = rdma_user_mmap_get_offset(&map->mme.rdma);
	resp.share_id = shm->id;
	resp.writable = map->writable;
	resp.length_lo = lower_32_bits(mr->length);
	resp.length_hi = upper_32_bits(mr->length);
	resp.mmap_offset_lo = lower_32_bits(offset);
	resp.mmap_offset_hi = upper_32_bits(offset);
	ret = ib_copy_to_udata(udata, &resp, sizeof(resp));
	if (ret)
		goto err_entry;
	return &mr->ibmr;

err_entry:
	/* no mapping exists yet: mmap_free runs now and frees the map */
	rdma_user_mmap_entry_remove(&map->mme.rdma);
	map = NULL;
err_mr:
	rxe2_mr_free(rdev, mr);
err_map:
	if (map) {
		kref_put(&shm->kref, rxe2_shm_free);
		kfree(map);
	}
err_shm:
	rxe2_shm_detach(shm);
	return ERR_PTR(ret);
}

/*
 * The caller maps the pages: the first mapping gives the MR its iova
 * (the mapping's address) and publishes its key.
 */
int rxe2_shmr_mmap(struct rxe2_mmap_entry *mme, struct vm_area_struct *vma)
{
	struct rxe2_shm_map *map = container_of(mme, struct rxe2_shm_map, mme);
	struct rxe2_shm *shm = map->shm;
	struct rxe2_mr *mr;
	int ret;

	if (vma->vm_flags & VM_EXEC)
		return -EPERM;
	if (!map->writable && (vma->vm_flags & VM_WRITE))
		return -EACCES;
	/* exactly the pages: no growing by mremap(), no mprotect() to write */
#ifdef RXE2_HAVE_VM_FLAGS_CLEAR
	vm_flags_set(vma, VM_DONTEXPAND);
	if (!map->writable)
		vm_flags_clear(vma, VM_MAYWRITE);
#else
	vma->vm_flags |= VM_DONTEXPAND;
	if (!map->writable)
		vma->vm_flags &= ~VM_MAYWRITE;
#endif
	/* rdma_user_mmap_entry_get() has checked the size */
	ret = vm_map_pages_zero(vma, shm->pages, shm->npages);
	if (ret)
		return ret;

	mutex_lock(&map->lock);
	mr = map->mr;
	if (mr && !map->placed) {
		rxe2_mr_publish(mr, vma->vm_start, mr->length);
		map->placed = true;
	}
	mutex_unlock(&map->lock);
	return 0;
}

void rxe2_shmr_mmap_free(struct rxe2_mmap_entry *mme)
{
	struct rxe2_shm_map *map = container_of(mme, struct rxe2_shm_map, mme);

	kref_put(&map->shm->kref, rxe2_shm_free);
	kfree(map);
}

/* dereg, before the key leaves the table: no mmap() places it again */
void rxe2_shmr_detach(struct rxe2_mr *mr)
{
	struct rxe2_shm_map *map = mr->shmap;

	mutex_lock(&map->lock);
	map->mr = NULL;
	mutex_unlock(&map->lock);
	/*
	 * Mappings made keep the entry, and with it the pages.  With none,
	 * mmap_free runs in here and frees the map: forget it.
	 */
	rdma_user_mmap_entry_remove(&map->mme.rdma);
	mr->shmap = NULL;
}

/*
 * Dereg, after the last lookup: the MR's hold on the pages goes.  Not
 * through the map, which rxe2_shmr_detach() may have seen freed; a map
 * still mapped holds a reference of its own until mmap_free.
 */
void rxe2_shmr_release(struct rxe2_mr *mr)
{
	struct rxe2_shm *shm = mr->shm;

	mr->pages = NULL;	/* the shm's, not for dereg to free */
	mr->shm = NULL;
	rxe2_shm_detach(shm);
}

struct ib_mr *rxe2_xmr_reg(struct ib_pd *ibpd, u64 start, u64 length,
			   u64 iova, int access,
			   const struct rxe2_reg_mr_cmd *cmd,
			   struct ib_udata *udata)
{
	switch (cmd->comp_mask) {
	case 0:
		if (cmd->share_mode || cmd->share_id)
			return ERR_PTR(-EINVAL);
		return ERR_PTR(-ENOTTY);
	case RXE2_REG_MR_SHARED_ALLOC:
	case RXE2_REG_MR_SHARED_ATTACH:
		if (start || iova)
			return ERR_PTR(-EINVAL);
		return rxe2_shmr_reg(ibpd, length, access, cmd, udata);
	case RXE2_REG_MR_PA:
		if (start || length || iova || cmd->share_mode ||
		    cmd->share_id)
			return ERR_PTR(-EINVAL);
		return rxe2_pamr_reg(ibpd, access);
	default:
		return ERR_PTR(-EOPNOTSUPP);
	}
}
