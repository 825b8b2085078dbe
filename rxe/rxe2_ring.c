// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2: the rings of uapi/rxe2-abi.h and their mapping into processes.
 *
 * A user ring's buffer belongs to its rdma_user_mmap_entry: destroying
 * the object only removes the entry, and the buffer is freed in
 * mmap_free once no mapping can be made any more.  Pages already mapped
 * into a process hold their own reference, so a process that keeps a
 * mapping past destroy reads stale memory, never freed memory.
 */
#include <linux/mm.h>
#include <linux/vmalloc.h>
#include <rdma/uverbs_ioctl.h>

#include "rxe2_verbs.h"

/* keeps mmap_size (a u32 in rxe2_ring_info) and vmalloc sizes sane */
#define RXE2_RING_MAX_BYTES	(256u << 20)

int rxe2_ring_init(struct rxe2_ring *r, u32 req_slots, u32 slot_size,
		   bool dev_produces, struct ib_udata *udata)
{
	struct rxe2_ucontext *uc;
	struct rxe2_mmap_entry *mme;
	size_t bytes;
	int ret;

	memset(r, 0, sizeof(*r));
	spin_lock_init(&r->lock);
	if (!slot_size || slot_size % 16 || req_slots > (1u << 30))
		return -EINVAL;
	r->num_slots = roundup_pow_of_two(max(req_slots, 1u));
	r->slot_size = slot_size;
	r->dev_produces = dev_produces;

	bytes = (size_t)r->num_slots * slot_size;
	if (bytes > RXE2_RING_MAX_BYTES)
		return -ENOMEM;
	r->size = PAGE_ALIGN(RXE2_RING_DATA_OFFSET + bytes);

	if (!udata) {
		r->hdr = vzalloc(r->size);
		return r->hdr ? 0 : -ENOMEM;
	}

	uc = rdma_udata_to_drv_context(udata, struct rxe2_ucontext, ibuc);
	mme = kzalloc(sizeof(*mme), GFP_KERNEL);
	if (!mme)
		return -ENOMEM;
	mme->buf = vmalloc_user(r->size);	/* zeroed */
	if (!mme->buf) {
		kfree(mme);
		return -ENOMEM;
	}
	ret = rdma_user_mmap_entry_insert(&uc->ibuc, &mme->rdma, r->size);
	if (ret) {
		vfree(mme->buf);
		kfree(mme);
		return ret;
	}
	r->mme = mme;
	r->hdr = mme->buf;
	return 0;
}

void rxe2_ring_cleanup(struct rxe2_ring *r)
{
	if (r->mme)
		rdma_user_mmap_entry_remove(&r->mme->rdma);
	else
		vfree(r->hdr);
	r->mme = NULL;
	r->hdr = NULL;
}

void rxe2_ring_get_info(const struct rxe2_ring *r, struct rxe2_ring_info *info)
{
	memset(info, 0, sizeof(*info));
	if (!r->hdr)
		return;
	if (r->mme)
		info->mmap_offset = rdma_user_mmap_get_offset(&r->mme->rdma);
	info->mmap_size = r->size;
	info->num_slots = r->num_slots;
	info->slot_size = r->slot_size;
}

static u32 rxe2_ring_read_peer(const u32 *counter)
{
	/*
	 * Pairs with the peer's publish: once we see its counter we may
	 * read the slots it filled or reuse the slots it emptied.
	 */
	return smp_load_acquire(counter);
}

static void rxe2_ring_publish(u32 *counter, u32 value)
{
	/* our slot accesses happen before the peer sees the counter */
	smp_store_release(counter, value);
}

/* entries between the two counters, or -EPROTO for an impossible pair */
static int rxe2_ring_used(const struct rxe2_ring *r, u32 producer, u32 consumer)
{
	u32 used = producer - consumer;

	return used > r->num_slots ? -EPROTO : (int)used;
}

/* free slots for a producer at 'own', entries for a consumer at 'own' */
static int rxe2_ring_avail(struct rxe2_ring *r, bool producer, u32 own)
{
	int used;

	if (!producer) {
		r->peer_seen = rxe2_ring_read_peer(&r->hdr->producer);
		return rxe2_ring_used(r, r->peer_seen, own);
	}
	used = rxe2_ring_used(r, own, rxe2_ring_read_peer(&r->hdr->consumer));
	return used < 0 ? used : (int)r->num_slots - used;
}

static void rxe2_ring_advance(struct rxe2_ring *r, bool producer, u32 *own)
{
	(*own)++;
	rxe2_ring_publish(producer ? &r->hdr->producer : &r->hdr->consumer,
			  *own);
}

int rxe2_ring_dev_avail(struct rxe2_ring *r)
{
	return rxe2_ring_avail(r, r->dev_produces, r->dev_index);
}

void rxe2_ring_dev_advance(struct rxe2_ring *r)
{
	rxe2_ring_advance(r, r->dev_produces, &r->dev_index);
}

int rxe2_ring_client_avail(struct rxe2_ring *r)
{
	lockdep_assert_held(&r->lock);
	return rxe2_ring_avail(r, !r->dev_produces, r->client_index);
}

void *rxe2_ring_client_next(struct rxe2_ring *r)
{
	int avail = rxe2_ring_client_avail(r);

	if (avail <= 0)
		return ERR_PTR(avail ? avail : -ENOMEM);
	return rxe2_ring_slot(r, r->client_index);
}

void rxe2_ring_client_advance(struct rxe2_ring *r)
{
	lockdep_assert_held(&r->lock);
	rxe2_ring_advance(r, !r->dev_produces, &r->client_index);
}

bool rxe2_ring_empty(struct rxe2_ring *r)
{
	u32 producer = rxe2_ring_read_peer(&r->hdr->producer);

	return producer == READ_ONCE(r->hdr->consumer);
}

/*
 * Back to empty, as a QP in RESET has empty queues.  For a user ring the
 * device side catches up with the process's counter instead of zeroing
 * it: the process owns that counter and may race with us.
 */
void rxe2_ring_reset(struct rxe2_ring *r)
{
	if (!r->hdr)
		return;
	if (!r->mme) {
		r->client_index = 0;
		r->dev_index = 0;
		WRITE_ONCE(r->hdr->producer, 0);
		WRITE_ONCE(r->hdr->consumer, 0);
		return;
	}
	WRITE_ONCE(r->hdr->flags, 0);
	if (r->dev_produces) {
		/* our entries are gone: claim the process consumed them all */
		r->dev_index = READ_ONCE(r->hdr->consumer);
		rxe2_ring_publish(&r->hdr->producer, r->dev_index);
	} else {
		r->dev_index = READ_ONCE(r->hdr->producer);
		rxe2_ring_publish(&r->hdr->consumer, r->dev_index);
	}
}

/*
 * rxe2_ring_move() - move the entries of r into the empty ring new (same
 * slot size and kind) and make r use new's buffer; new gets r's old
 * buffer, for rxe2_ring_cleanup() once the caller has dropped r->lock.
 *
 * The caller holds r->lock and has stopped its own side: the device side
 * runs only under r->lock (CQ producer, SRQ consumer), and a process is
 * expected to hold its own lock around the resize command.  The entries
 * land at slots 0 .. n-1 in order: consumer 0, producer n.  The other
 * side's counter is read once and checked like any other read of it.
 * Returns -EINVAL when there are more entries than want, the size the
 * consumer asked for (the man pages: the new size must hold what is
 * outstanding, whatever the rounding), -EPROTO for an impossible
 * counter; r is unchanged then.
 */
int rxe2_ring_move(struct rxe2_ring *r, struct rxe2_ring *new, u32 want)
{
	u32 prod, cons, used, i;
	struct rxe2_ring old;

	lockdep_assert_held(&r->lock);
	if (new->slot_size != r->slot_size ||
	    new->dev_produces != r->dev_produces)
		return -EINVAL;
	if (r->dev_produces) {
		prod = r->dev_index;
		cons = r->mme ? rxe2_ring_read_peer(&r->hdr->consumer) :
				r->client_index;
	} else {
		cons = r->dev_index;
		prod = r->mme ? rxe2_ring_read_peer(&r->hdr->producer) :
				r->client_index;
	}
	used = prod - cons;
	if (used > r->num_slots)
		return -EPROTO;
	if (used > want || used > new->num_slots)
		return -EINVAL;
	for (i = 0; i < used; i++)
		memcpy(rxe2_ring_slot(new, i), rxe2_ring_slot(r, cons + i),
		       r->slot_size);
	new->hdr->producer = used;
	new->hdr->consumer = 0;
	if (r->dev_produces) {
		new->dev_index = used;
		new->client_index = 0;
	} else {
		new->dev_index = 0;
		new->client_index = used;
	}

	old = *r;
	r->hdr = new->hdr;
	r->size = new->size;
	r->num_slots = new->num_slots;
	r->mme = new->mme;
	r->dev_index = new->dev_index;
	r->client_index = new->client_index;
	new->hdr = old.hdr;
	new->size = old.size;
	new->num_slots = old.num_slots;
	new->mme = old.mme;
	return 0;
}

/*
 * RXE2_RING_F_FLUSH on a user RQ (uapi/rxe2-abi.h).  Setting it is
 * followed by a full barrier: the caller reads the producer next, and a
 * process that published its producer before it could see the flag has
 * its WQEs found by that read.
 */
void rxe2_ring_set_flush(struct rxe2_ring *r)
{
	if (!r->mme || (READ_ONCE(r->hdr->flags) & RXE2_RING_F_FLUSH))
		goto out;
	WRITE_ONCE(r->hdr->flags, RXE2_RING_F_FLUSH);
out:
	/* flag store before producer load; pairs with the provider's fence */
	smp_mb();
}

int rxe2_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *entry;
	struct rxe2_mmap_entry *mme;
	int ret;

	/* checks VM_SHARED, the offset and that the length is the ring's */
	entry = rdma_user_mmap_entry_get(ibuc, vma);
	if (!entry)
		return -EINVAL;
	mme = container_of(entry, struct rxe2_mmap_entry, rdma);
	if (mme->shm) {
		ret = rxe2_shmr_mmap(mme, vma);
		goto out;
	}

	/* queues hold data, never code */
	if (vma->vm_flags & VM_EXEC) {
		ret = -EPERM;
		goto out;
	}
	ret = remap_vmalloc_range(vma, mme->buf, 0);
out:
	rdma_user_mmap_entry_put(entry);
	return ret;
}

void rxe2_mmap_free(struct rdma_user_mmap_entry *entry)
{
	struct rxe2_mmap_entry *mme =
		container_of(entry, struct rxe2_mmap_entry, rdma);

	if (mme->shm) {
		rxe2_shmr_mmap_free(mme);
		return;
	}
	vfree(mme->buf);
	kfree(mme);
}

int rxe2_check_udata_in_empty(struct ib_udata *udata)
{
	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EOPNOTSUPP;
	return 0;
}

int rxe2_udata_read_cmd(struct ib_udata *udata, void *cmd, size_t size)
{
	int ret;

	memset(cmd, 0, size);
	ret = ib_copy_from_udata(cmd, udata, min(udata->inlen, size));
	if (ret)
		return ret;
	if (udata->inlen > size &&
	    !ib_is_udata_cleared(udata, size, udata->inlen - size))
		return -EOPNOTSUPP;
	return 0;
}

/*
 * RXE2_RING_F_LIVE: while it is set, a process may publish its SQ
 * producer without ringing the doorbell, so whoever sets it must look at
 * the producer again after clearing it.  Begin: set it and note the
 * producer.  End: clear it, then (the barrier pairs with the process's
 * fence between its producer store and its flag load) true when the
 * producer moved past the one last read, whose doorbell may have been
 * skipped.  Kernel rings have no process and no flag.
 */
void rxe2_ring_live_begin(struct rxe2_ring *r)
{
	if (!r->mme)
		return;
	WRITE_ONCE(r->hdr->flags, RXE2_RING_F_LIVE);
	smp_mb();	/* flag set, then read the producer */
	r->peer_seen = rxe2_ring_read_peer(&r->hdr->producer);
}

/* the process published WQEs the consumer side has not read yet */
bool rxe2_ring_peer_moved(const struct rxe2_ring *r)
{
	return READ_ONCE(r->hdr->producer) != r->peer_seen;
}

bool rxe2_ring_live_end(struct rxe2_ring *r)
{
	if (!r->mme)
		return false;
	WRITE_ONCE(r->hdr->flags, 0);
	smp_mb();	/* flag clear, then read the producer */
	return rxe2_ring_peer_moved(r);
}
