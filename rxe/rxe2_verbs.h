/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rxe2: verbs objects (PD, AH, MR, CQ, QP, SRQ) and their rings.
 * The device core (rxe2_device.c) installs the verbs below
 * (rxe2_verbs_ops).
 */

/*
 * The lock table: every lock of rdma_rxe2, and the kernel's own that it
 * nests with.  One entry per lock, outermost first within each group:
 *
 *   lock                kind, where it is                   contexts
 *     guards   what it protects (readers without it, if any)
 *     taken    by whom, where that is not plain
 *     under    what may be taken while it is held
 *     never    what may not
 *
 * Contexts: P process, S softirq, H hardirq, T a timer's callback.  The
 * per-file paragraphs and the field comments point here; a paragraph
 * kept beside the code explains an ordering this table only states.
 *
 * Module-wide
 *
 * rxe2_cfs_lock         mutex, rxe2_fault.c                        P
 *   guards   the fault rules' configfs items (fields, last counts),
 *            each directory's rule count, the rule ids
 *   taken    in configfs callbacks only: under configfs's su_mutex
 *            (mkdir, rmdir) or an attribute's fragment semaphore
 *   under    rxe2_dev_lock, allocation
 * rxe2_dev_lock         mutex, rxe2_device.c                       P
 *   guards   rxe2_dev_list, each rxe2_dev.list; held, a listed device
 *            is not freed (the configfs files use the device under it)
 *   under    flow_mutex (the netdev notifier: RTNL is outside both),
 *            fault.lock, and sending what fault rules hold (the
 *            configfs files)
 *   never    RTNL
 * rxe2_mcg_mutex        mutex, rxe2_mcast.c                        P
 *   guards   the group hash and each group's members (the receive
 *            hook reads both under RCU), rxe2_dev.mcg_count and
 *            .mcg_attached, rxe2_qp.mcast_count
 *   under    RTNL (the IP group membership), allocation
 *   never    taken under RTNL or a QP's state_lock
 * rxe2_ic_lock          mutex, rxe2_ic.c                           P
 *   guards   the writers of every rxe2_dev.ic_map (readers: RCU)
 *   under    nothing
 * rxe2_mr_seq_lock      mutex, rxe2_mr.c                           P
 *   guards   rxe2_dev.mr_seq: a rereg's stamp, publish and count
 *            as one step
 *   under    the MR table's xa_lock (the publish)
 * rxe2_shm_lock         mutex, rxe2_shmr.c                         P
 *   guards   the share ids (rxe2_shm_xa), rxe2_shm.nr_mr
 *   under    xa_lock
 * rxe2_gid_lock         spinlock, BH off, rxe2_net.c               P
 *   guards   the writers of rxe2_gid_hash, rxe2_gid.hashed (readers:
 *            RCU, the receive hook in S and transmit)
 *   under    nothing
 * rxe2_atomic_lock      spinlock, BH off, rxe2_resp.c              P
 *   guards   the target of every atomic's read-modify-write and of
 *            every ATOMIC WRITE's store
 *   under    nothing: innermost, taken in a page callback with the
 *            responder's state_lock and, for ODP, umem_mutex held
 * rxe2_odp_srcu         SRCU, rxe2_odp.c                           P
 *   guards   the life of an implicit ODP MR's children: read side
 *            around a child's lookup and use, the reclaim work waits
 *   under    (read side) imr.lock, the mmap lock, umem_mutex: a fault
 *            sleeps
 *   never    synchronize_srcu() with any lock held
 *
 * Per device (struct rxe2_dev)
 *
 * flow_mutex            mutex, rxe2_flow.c                         P
 *   guards   the writers of flows, nflows, flow_seq, flow_hooked,
 *            flow_dead, flow_net, flow_ops (readers of flows: RCU,
 *            the netdev hooks in S and on transmit)
 *   taken    under RTNL (create, device teardown), under RTNL and
 *            rxe2_dev_lock (the netdev goes), alone (destroy)
 *   under    nf_register_net_hooks(), nf_unregister_net_hooks()
 *   never    RTNL
 * fault.lock            spinlock, IRQs off, rxe2_fault.c           P any
 *   guards   struct rxe2_fault (rules, held packets, arming), the
 *            writes of fault_on (readers: READ_ONCE())
 *   taken    by the configfs files (under rxe2_dev_lock), the held
 *            packets' work item, and rxe2_fault_fire(), which may be
 *            called from any context
 *   under    mod_delayed_work() only
 *   never    sending (held packets leave after the unlock),
 *            allocation
 * tap.lock              spinlock, rxe2_tap.c                       P
 *   guards   tap.ring's creation, tap.head, a record between
 *            rxe2_tap_get() and rxe2_tap_put()
 *   under    a one-copy source's read (rxe2_src_read(): kmap_local)
 *   never    tap.show_lock (dropped first); taken in S or H
 * tap.show_lock         mutex, rxe2_tap.c                          P
 *   guards   tap.tail: one shows the copies at a time, in order
 *   taken    by the tap work item, and by a runner (state_lock
 *            held) that finds the ring full
 *   under    dev_queue_xmit_nit(), BH off (the packet sockets')
 *   never    tap.lock
 *
 * Per object
 *
 * rxe2_qp.state_lock    mutex, rxe2_qp.c, rxe2_task.c              P
 *   guards   state, attr, the writes of ctr, and all of dp (its
 *            members req, comp, cc, pace, resp, tm, loop say whose
 *            they are) but what a member's or a field's comment gives
 *            to another lock
 *   taken    by the QP's one runner (RXE2_QPF_RUNNING: the doorbell
 *            and a loopback sender by trylock, the work item) and by
 *            verbs (modify, query, counter bind and unbind under an
 *            rdma_counter's lock, `rdma res` by trylock, destroy)
 *   under    another QP's state_lock with mutex_trylock() only (a QP
 *            run inline, a one-copy receiver: dp.loop.direct_to); every
 *            spinlock below; tm.lock; tap.show_lock; the ODP locks
 *            (rxe2_odp_srcu, imr.lock, the mmap lock, umem_mutex);
 *            RCU; allocation
 *   never    mutex_lock() of another QP's state_lock, so QPs have no
 *            order among themselves; RTNL, rxe2_dev_lock,
 *            rxe2_mcg_mutex, flow_mutex; a kernel consumer's
 *            comp_handler (rxe2_qp_notify() runs after the unlock)
 * dp.rx_queue.lock      spinlock, IRQs off, sk_buff_head           P S
 *   guards   rx_queue, dp.loop.ack_*, the filling of dp.loop.req
 *            (the runner takes and frees it without: release/acquire)
 *   under    nothing
 * rxe2_ring.lock        spinlock, IRQs off, rxe2_ring.c            P S H T
 *   guards   a kernel ring's client side (post, poll: a kernel
 *            consumer calls from any context); a CQ's device side
 *            and arm state (notify, overflowed, moder_*; T is its
 *            moderation hrtimer); an SRQ's or WQ's device side, which
 *            several QPs take from, and the srq_limit arm; a QP's own
 *            RQ WQEs as they are taken; rxe2_ring_move() (resize).
 *            The device side of an SQ is the runner's (state_lock).
 *   under    the CQ's moder_timer (start, try_to_cancel); RCU
 *   never    another ring's lock; a CQ's comp_handler or
 *            event_handler, an SRQ's event_handler (after the unlock)
 * rxe2_tm.lock          spinlock, IRQs off, rxe2_tm.c              P
 *   guards   a TM SRQ's tagged list, free slots, unexpected counts,
 *            add_seq, the entries' phase
 *   under    the SRQ's ring.lock (a WQE taken); the SRQ's CQ's
 *            ring.lock (completions, posted in the list's order);
 *            the QP's kernel SQ's ring.lock (a rendezvous READ and
 *            FIN); the SRQ's event_handler (limit reached)
 *   never    a comp_handler (rxe2_cq_notify() after the unlock)
 * rxe2_mr.lock          spinlock, rxe2_mr.c                        P
 *   guards   FAST: state, key, access, iova, length, fr_*, IRQs off
 *            (rxe2_mr_lookup() may be called from any context); USER
 *            owner: the retired list, plain
 *   under    nothing (refcounts, wake_up_var())
 * rxe2_mw.lock          spinlock, IRQs off, rxe2_mw.c              P
 *   guards   everything of the window below it (found under RCU)
 *   under    nothing: its MR is looked up before, let go after
 * rxe2_odp_imr.lock     mutex, rxe2_odp.c                          P
 *   guards   making and removing an implicit MR's children
 *   taken    by the data path (state_lock held, in an rxe2_odp_srcu
 *            read section), the reclaim work, dereg
 *   under    the mmap lock, then umem_mutex; allocation (a child and
 *            its notifier)
 *   never    synchronize_srcu()
 * rxe2_shm_map.lock     mutex, rxe2_shmr.c                         P
 *   guards   mr, placed: the first mmap() publishes the MR's key,
 *            dereg detaches it
 *   taken    by mmap() (the mm's mmap lock held) and dereg
 *   under    the MR table's xa_lock (rxe2_mr_publish())
 *   never    rdma_user_mmap_entry_remove() (it may free the map)
 *
 * The kernel's
 *
 * RTNL                  mutex                                      P
 *   guards   the writes of rxe2_dev.active_mtu and .port_active
 *            (readers: READ_ONCE())
 *   taken    by query_port (the link speed), rdma link add, flow
 *            create and teardown, an IP group's membership (under
 *            rxe2_mcg_mutex); the netdev notifier runs under it
 *   under    rxe2_dev_lock, flow_mutex
 *   never    taken under state_lock, rxe2_dev_lock or flow_mutex
 * mmap lock             rw_semaphore, the mm's                     P
 *   guards   the process's mappings
 *   taken    for read by hmm_range_fault() (a fault), vma_lookup()
 *            (implicit children), the reclaim work; mmap() runs
 *            under it
 *   under    umem_mutex (reclaim), rxe2_shm_map.lock (mmap)
 *   never    taken with umem_mutex held
 * umem_mutex            mutex, ib_umem_odp                         P
 *   guards   an ODP umem's page state; rxe2 holds it while it
 *            touches the pages
 *   taken    by the data path and prefetch, and by the mm's notifier
 *            (a trylock when the mm may not block)
 *   under    rxe2_atomic_lock, the children xarray's lock (a mark),
 *            queue_work()
 *   never    the mmap lock, allocation
 * RCU                                                              any
 *   guards   the lookups: the object tables' xa_load() (QPs, MRs,
 *            SRQs, the fast-MR and window xarrays), the GID hash,
 *            multicast groups, flows, ic_map, qp->ctr, the devices
 *            (ib_core frees them with kfree_rcu()); writers wait with
 *            synchronize_rcu*() (destroy_qp, destroy_srq, dealloc_mw,
 *            counter unbind, flow counters) or free with kfree_rcu()
 * xa_lock               spinlock, each xarray's own                any
 *   guards   the xarray; taken by the xarray API only, innermost
 *
 * The order, "A -> B": B may be taken while A is held.
 *
 *   RTNL -> rxe2_dev_lock -> flow_mutex;  rxe2_mcg_mutex -> RTNL
 *   su_mutex (configfs) -> rxe2_cfs_lock -> rxe2_dev_lock -> fault.lock
 *   an rdma_counter's lock (ib_core) -> state_lock
 *   state_lock -> another state_lock, by trylock only
 *   state_lock -> tm.lock -> ring.lock
 *   state_lock -> ring.lock, rx_queue.lock, mr.lock, mw.lock,
 *                 fault.lock, tap.show_lock, tap.lock
 *   state_lock -> rxe2_odp_srcu -> imr.lock -> mmap lock -> umem_mutex
 *                 -> rxe2_atomic_lock (an implicit MR's child made or
 *                 used); a fault takes the mmap lock, a copy
 *                 umem_mutex, each with only state_locks held (a
 *                 one-copy sender's fault of its ODP source also the
 *                 receiver's, dp.loop.direct_to: no invalidation takes
 *                 a state_lock), never under another umem_mutex
 *   the mm: mmap lock -> umem_mutex (notifier), mmap lock ->
 *           rxe2_shm_map.lock (mmap)
 *
 * Read or written without a lock, by design (READ_ONCE()/WRITE_ONCE(),
 * release and acquire, or atomic bits): a runner's catch (per CPU,
 * preemption off), dp.loop.req_len, tap.tail and the readers of
 * tap.head, tap.busy, fault_on's readers, fault_tx_drop, srq_limit,
 * max_wr, a WQ's state, cq.notify_pending, the RXE2_QPF_* bits,
 * dp.comp.retry_at and dp.comp.retry_live as the retry timer reads them,
 * and dp.resp.read.active as a loopback sender reads it.
 */
#ifndef RXE2_VERBS_H
#define RXE2_VERBS_H

#include <linux/completion.h>
#include <linux/nodemask.h>
#include <linux/refcount.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <linux/hrtimer.h>
#include <linux/iosys-map.h>
#include <linux/timer.h>
#include <linux/workqueue.h>

#include "rxe2.h"
#include "rxe2_compat.h"

/* rxe2_table.c */
void rxe2_table_init(struct rxe2_table *t, u32 min, u32 max, u32 limit);
void rxe2_table_fini(struct rxe2_table *t);
int rxe2_table_add(struct rxe2_table *t, void *obj, u32 *index);
void rxe2_table_remove(struct rxe2_table *t, u32 index);
void rxe2_tables_init(struct rxe2_dev *rdev);	/* after rdev->attr is set */
void rxe2_tables_fini(struct rxe2_dev *rdev);

/*
 * Tables: rxe2_table_add() reserves an index (obj may be NULL: the slot
 * stays invisible to xa_load() until rxe2_table_publish()), or fails with
 * -ENOMEM once 'limit' objects are live.  rxe2_table_add_at() takes a
 * fixed index (QP1).  Lookups are xa_load() under rcu_read_lock().
 */
int rxe2_table_add_gfp(struct rxe2_table *t, void *obj, u32 *index, gfp_t gfp);
int rxe2_table_add_at(struct rxe2_table *t, void *obj, u32 index);
void rxe2_table_publish(struct rxe2_table *t, u32 index, void *obj);

#define RXE2_QPN_MIN	16		/* 0 and 1 are QP0/QP1, 2..15 unused */
#define RXE2_QPN_MAX	0xffffffu
#define RXE2_INDEX_MAX	0xffffffu	/* PD, AH (ah_num), CQ, SRQ */
#define RXE2_MR_KEY_MIN	0x100u		/* index 0 is never used */
#define RXE2_MR_KEY_MAX	0x7fffffffu	/* bit 31: fast-registration MRs */
/* bits 31 and 30 both set: memory windows (rxe2_mw.c) */
#define RXE2_MW_KEY_BITS	0xc0000000u

static inline bool rxe2_key_is_mw(u32 key)
{
	return (key & RXE2_MW_KEY_BITS) == RXE2_MW_KEY_BITS;
}

/*
 * rxe2_ring.c: one queue (SQ, RQ, SRQ or CQ) laid out as in
 * uapi/rxe2-abi.h.  The "device" side is the data path: it consumes SQ,
 * RQ and SRQ and produces CQ entries.  The "client" side is the process
 * (user rings, where the kernel never touches the client counter) or a
 * kernel consumer (kernel rings: post_recv, poll_cq), which calls the
 * rxe2_ring_client_*() helpers under ring->lock.
 */
struct rxe2_mmap_entry {
	struct rdma_user_mmap_entry rdma;
	void *buf;			/* vmalloc_user(); freed by mmap_free */
	bool shm;			/* shared MR pages (rxe2_shmr.c), no buf */
};

struct rxe2_ring {
	struct rxe2_ring_hdr *hdr;	/* start of the buffer */
	size_t size;			/* bytes, page multiple */
	u32 num_slots;			/* power of two */
	u32 slot_size;
	bool dev_produces;		/* CQ: device produces; others consume */
	u32 dev_index;			/* device's private copy of its counter */
	u32 peer_seen;			/* consumer side: producer last read */
	u32 client_index;		/* kernel rings only: client's counter */
	struct rxe2_mmap_entry *mme;	/* user rings; NULL for kernel rings */
	/*
	 * A kernel ring's client side; a CQ's device side and arm state;
	 * an SRQ's or a WQ's device side (the lock table above)
	 */
	spinlock_t lock;
};

int rxe2_ring_init(struct rxe2_ring *r, u32 req_slots, u32 slot_size,
		   bool dev_produces, struct ib_udata *udata);
void rxe2_ring_cleanup(struct rxe2_ring *r);
void rxe2_ring_get_info(const struct rxe2_ring *r, struct rxe2_ring_info *info);
/*
 * QP to RESET: a kernel ring is zeroed; on a user ring the device side
 * catches up with the process (consumer := producer for SQ/RQ), since the
 * process owns its counter.
 */
void rxe2_ring_reset(struct rxe2_ring *r);
/* RXE2_RING_F_LIVE on a user SQ ring (uapi/rxe2-abi.h): rxe2_ring.c */
void rxe2_ring_live_begin(struct rxe2_ring *r);
bool rxe2_ring_live_end(struct rxe2_ring *r);
bool rxe2_ring_peer_moved(const struct rxe2_ring *r);

static inline void *rxe2_ring_slot(const struct rxe2_ring *r, u32 index)
{
	return (u8 *)r->hdr + RXE2_RING_DATA_OFFSET +
	       (size_t)(index & (r->num_slots - 1)) * r->slot_size;
}

/*
 * Device side.  rxe2_ring_dev_avail() returns the entries ready to consume
 * (device consumer) or the free slots (device producer), or -EPROTO when
 * the client's counter is impossible (a broken queue, never an
 * out-of-bounds access).  The slot to use next is
 * rxe2_ring_slot(r, r->dev_index); rxe2_ring_dev_advance() publishes it.
 */
int rxe2_ring_dev_avail(struct rxe2_ring *r);
void rxe2_ring_dev_advance(struct rxe2_ring *r);

/* Client side of kernel rings, same contract; caller holds r->lock. */
int rxe2_ring_client_avail(struct rxe2_ring *r);
/* the next free slot for a kernel client, ERR_PTR(-ENOMEM) when full */
void *rxe2_ring_client_next(struct rxe2_ring *r);
void rxe2_ring_client_advance(struct rxe2_ring *r);

/* resize: move the entries into an empty ring; caller holds r->lock */
int rxe2_ring_move(struct rxe2_ring *r, struct rxe2_ring *new, u32 want);
/* QP in ERROR: tell the process to ring the doorbell after post_recv */
void rxe2_ring_set_flush(struct rxe2_ring *r);

/* whether producer == consumer in shared memory (either kind of ring) */
bool rxe2_ring_empty(struct rxe2_ring *r);

int rxe2_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma);
void rxe2_mmap_free(struct rdma_user_mmap_entry *entry);

/* Driver data that must be absent or zero (uverbs commands without one). */
int rxe2_check_udata_in_empty(struct ib_udata *udata);
/*
 * A driver command of size bytes: a shorter one reads as zero-extended,
 * a longer one must be zero past size (else it asks for something this
 * kernel lacks: EOPNOTSUPP).
 */
int rxe2_udata_read_cmd(struct ib_udata *udata, void *cmd, size_t size);

/* rxe2_pd.c */
struct rxe2_pd {
	struct ib_pd ibpd;
	u32 index;
};

struct rxe2_ah {
	struct ib_ah ibah;
	u32 ah_num;
	struct rdma_ah_attr attr;	/* sgid_attr: the ib_ah holds its ref */
};

static inline struct rxe2_pd *to_rpd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct rxe2_pd, ibpd);
}

static inline struct rxe2_ah *to_rah(struct ib_ah *ibah)
{
	return container_of(ibah, struct rxe2_ah, ibah);
}

int rxe2_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int rxe2_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int rxe2_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr,
		   struct ib_udata *udata);
int rxe2_create_user_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr,
			struct ib_udata *udata);
int rxe2_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr);
/* a resolved RoCEv2 address vector on our port (AH and QP path) */
int rxe2_check_ah_attr(struct rxe2_dev *rdev, const struct rdma_ah_attr *attr);
int rxe2_destroy_ah(struct ib_ah *ibah, u32 flags);

/* an address vector resolved for transmit (RC/UC path, UD AH) */
struct rxe2_av {
	bool ipv6;
	u8 tclass;
	u8 hop_limit;
	u32 flow_label;
	struct in6_addr saddr;		/* v4-mapped for IPv4 */
	struct in6_addr daddr;
};
/* the AV of an AH or an RC/UC QP's path; 0 or -EINVAL */
int rxe2_av_from_attr(struct rxe2_av *av, const struct rdma_ah_attr *ah,
		      const struct ib_gid_attr *sgid_attr);

/*
 * rxe2_mr.c: the MR table, lkeys and rkeys.
 *
 * The key of a user or DMA MR is an id handed out cyclically from the MR
 * table over [RXE2_MR_KEY_MIN, RXE2_MR_KEY_MAX] (bit 31 clear), so no key
 * is handed out again before 2^31 more registrations and a stale key
 * misses.  The table is keyed by the full key.
 * lkey == rkey.  The DMA MR of ib_alloc_pd() is not counted in max_mr.
 *
 * Fast-registration MRs (ib_alloc_mr) live in a key range of their own,
 * bit 31 set, bit 30 clear (windows have both): bits 29..8 are an index
 * that belongs to the MR for its whole life, bits 7..0 the consumer's
 * key part (ib_update_fast_reg_key),
 * which IB_WR_REG_MR makes current.  Such an MR is FREE (no key works)
 * until a REG_MR makes it VALID under the WR's key, and FREE again after
 * LOCAL_INV or a remote SEND_WITH_INV naming that key.
 */
enum rxe2_mr_type {
	RXE2_MR_DMA,			/* ib_alloc_pd()'s: kernel VAs */
	RXE2_MR_USER,			/* ibv_reg_mr: a umem */
	RXE2_MR_FAST,			/* ib_alloc_mr(IB_MR_TYPE_MEM_REG) */
	RXE2_MR_SHARED,			/* rxe2_shmr.c: the kernel's pages */
	RXE2_MR_PA,			/* rxe2_pamr.c: physical addresses */
	RXE2_MR_DM,			/* rxe2_dm.c: device memory */
	RXE2_MR_DMABUF,			/* rxe2_dmabuf.c: a dma-buf's pages */
};

/* USER MRs registered with IB_ACCESS_ON_DEMAND (rxe2_odp.c) */
enum rxe2_odp_kind {
	RXE2_ODP_NONE,
	RXE2_ODP_EXPLICIT,		/* one ib_umem_odp over the range */
	RXE2_ODP_IMPLICIT,		/* the address space, iova == address */
};

enum rxe2_mr_state {
	RXE2_MR_FREE,
	RXE2_MR_VALID,
};

struct rxe2_mr {
	struct ib_mr ibmr;
	struct ib_umem *umem;		/* NULL for the DMA MR */
	u64 iova;
	u64 length;
	int access;			/* IB_ACCESS_* granted */
	/*
	 * The PD the data path checks.  Not ibmr.pd: when a rereg returns
	 * NULL, ib_core sets the new PD on the ib_mr it was given, which
	 * may be a replaced object that messages still finish on.
	 */
	struct ib_pd *pd;
	u32 key;			/* FAST: the current key */
	bool counted;			/* against max_mr: not the DMA MR */
	u8 type;			/* enum rxe2_mr_type */
	u8 state;			/* FAST: enum rxe2_mr_state, under lock */
	/*
	 * The umem's memory in order: one entry per page of 1 << page_shift
	 * bytes.  PMD_SHIFT when every 2 MiB block of the range is one
	 * physically contiguous huge page (IB_ACCESS_HUGETLB or not): the
	 * entry is the block's first 4 KiB page, which lies before the
	 * MR's start in the first block when the MR does not start on one.
	 */
	struct page **pages;
	unsigned long npages;
	u8 page_shift;
	u32 first_off;			/* DM, DMABUF: start in pages[0] */
	/* DMABUF: the buffer and its kernel mapping, held until dereg */
	struct dma_buf *dmabuf;
	struct iosys_map dmabuf_map;
	/*
	 * FAST: kernel virtual addresses of the pages (virt DMA), as
	 * map_mr_sg staged them (fr_staged) and as the last REG_MR took
	 * them (fr_pages); the region starts fr_first_off bytes into
	 * fr_pages[0].
	 */
	/* FAST: state, key, the fields below; USER owner: the retired list */
	spinlock_t lock;
	u64 *fr_pages;
	u64 *fr_staged;
	u32 fr_max;			/* max_num_sg */
	u32 fr_nstaged;
	u32 fr_npages;
	u32 fr_shift;			/* log2 of the page size */
	u32 fr_first_off;
	/*
	 * ref: 1 while the object may be accessed (dropped once, when it
	 * dies: RXE2_MRO_DEAD) + 1 per access in progress (a lookup, or
	 * rxe2_mr_msg_lookup() on a held object).  released: ref reached 0.
	 */
	refcount_t ref;
	struct completion released;
	struct rcu_head rcu;		/* lookups run under RCU */
	/* memory windows bound to it; -1 once dereg has begun */
	atomic_t num_mw;
	/*
	 * USER: the object the key table holds for this MR.  It is the MR
	 * itself until the first rereg, which publishes a new one under
	 * the same key (see rxe2_rereg_user_mr()); ib_core keeps the
	 * ib_mr it was given.  NULL for the DMA and FAST MRs.
	 */
	struct rxe2_mr *cur;
	/*
	 * USER objects and rereg (rxe2_mr.c, "Re-registration" in
	 * docs/architecture.md).  msgs: 1 while the object is the MR's
	 * current one + 1 per message holding it (struct rxe2_mr_hold);
	 * when it reaches 0 the object's own pages are released (from a
	 * work item).  life: the struct itself (1 for that, + 1 on the
	 * object that is the ib_mr, until dereg).  A rereg that keeps the
	 * pages kills the old object at once and links it to the new one
	 * (succ), so a message holding it continues on the same pages.
	 */
	refcount_t msgs;
	refcount_t life;
	/* rxe2_dev.mr_seq when a rereg published it; 0: by the reg */
	u64 seq;
	unsigned long oflags;		/* RXE2_MRO_* */
	struct rxe2_mr *owner;		/* the object that is the ib_mr */
	/* the object a rereg that kept the pages replaced this one by (msgs) */
	struct rxe2_mr *succ;
	struct list_head retired;	/* owner: replaced objects with pages */
	struct list_head retire_node;
	struct work_struct teardown;
	u8 odp;				/* enum rxe2_odp_kind */
	struct rxe2_odp_imr *imr;	/* RXE2_ODP_IMPLICIT: its children */
	/* SHARED (rxe2_shmr.c): its mmap entry until dereg detaches it */
	struct rxe2_shm_map *shmap;
	struct rxe2_shm *shm;		/* SHARED: the MR's own reference */
};

struct rxe2_qp;

/*
 * Make a registered MR reachable by its keys, covering [iova, iova +
 * length); every field the data path reads is set before.
 */
void rxe2_mr_publish(struct rxe2_mr *mr, u64 iova, u64 length);
/*
 * rxe2_mr_lookup() - find the MR named by an lkey or rkey for the data path.
 * Returns the MR with a reference held (drop it with rxe2_mr_put()) when
 * the key is live, the MR belongs to @pd and grants every IB_ACCESS_* bit
 * in @access (0 for a local read); NULL otherwise.  Callable from any
 * context (RCU, no sleeping).  The caller still checks the address range
 * with rxe2_mr_check_range().  dereg_mr waits for all references.
 */
struct rxe2_mr *rxe2_mr_lookup(struct rxe2_dev *rdev, u32 key,
			       struct ib_pd *pd, int access);
void rxe2_mr_put(struct rxe2_mr *mr);

/*
 * A message (all packets of one request; the gather or scatter of one
 * send WQE) uses one MR object throughout: the first access under a key
 * holds the object it found, later ones use that object again, even
 * after a rereg replaced it under the key (the old pages stay until the
 * last holder lets go).  A dereg, or a rereg that changed the access or
 * PD without new pages, kills the held object: the next access fails,
 * or (same pages, access and PD still granted) follows its successor.
 * Only ibv_reg_mr MRs are held; the others (windows, kernel MRs, shared
 * and PA MRs) cannot be replaced and are looked up at every access.
 */
struct rxe2_mr_hold {
	struct rxe2_mr *mr;
	u32 key;
};

/*
 * rxe2_mr_msg_lookup() - rxe2_mr_lookup() for a message holding up to n
 * objects in h: the held object of this key, or a fresh lookup that the
 * first free slot then holds.  With every slot taken the key is looked
 * up at each access, unheld; *seq (when seq is not NULL) then keeps
 * rxe2_dev.mr_seq as of the last slot's filling, and an object a rereg
 * published after that is refused (NULL) rather than mixed into the
 * message.  Returns the object with an access reference (rxe2_mr_put())
 * or NULL.  Process context.
 */
struct rxe2_mr *rxe2_mr_msg_lookup(struct rxe2_mr_hold *h, unsigned int n,
				   u64 *seq, struct rxe2_dev *rdev, u32 key,
				   struct ib_pd *pd, int access);
/* the message is over (done, failed, restarted, QP reset): let go */
void rxe2_mr_msg_end(struct rxe2_mr_hold *h, unsigned int n);
int rxe2_mr_init(void);
void rxe2_mr_exit(void);
bool rxe2_mr_check_range(const struct rxe2_mr *mr, u64 iova, u64 len);
struct ib_mr *rxe2_get_dma_mr(struct ib_pd *ibpd, int access);
struct ib_mr *rxe2_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			       u64 iova, int access, RXE2_DMAH_PARAM
			       struct ib_udata *udata);
int rxe2_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
/* returns NULL: the MR is changed in place, keys kept */
struct ib_mr *rxe2_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				 u64 length, u64 iova, int access,
				 struct ib_pd *ibpd, struct ib_udata *udata);
struct ib_mr *rxe2_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			   u32 max_num_sg);
int rxe2_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		   unsigned int *sg_offset);
/* fn sees a piece of MR memory, mapped in the kernel (rxe2_mr_access()) */
typedef void (*rxe2_page_fn)(void *addr, u32 len, void *arg);
/* rxe2_mr_access() of a kernel MR (DMA or FAST): range checked */
int rxe2_kmr_access(struct rxe2_mr *mr, u64 iova, u32 len, rxe2_page_fn fn,
		    void *arg);
int rxe2_mr_access(struct rxe2_mr *mr, u64 iova, u32 len, bool write,
		   rxe2_page_fn fn, void *arg);
int rxe2_mr_copy(struct rxe2_mr *mr, u64 iova, void *buf, u32 len,
		 bool to_mr);
/*
 * Local operations and remote invalidation, from the data path (sleepable,
 * the QP's state_lock held).  They return 0 or an enum ib_wc_status.
 * Invalidation waits until no access through the MR is in flight.
 */
int rxe2_mr_reg_fast(struct rxe2_qp *qp, u32 mr_key, u32 key, int access);
int rxe2_mr_invalidate(struct rxe2_qp *qp, u32 key);
/* rxe2dv_query_mr: nodes of the resident pages, access; see rxe2_ic.c */
u64 rxe2_mr_first_offset(const struct rxe2_mr *mr);
unsigned long rxe2_mr_resident_nodes(struct ib_mr *ibmr, nodemask_t *nodes,
				     int *access);
void rxe2_mr_query_pages(struct ib_mr *ibmr, struct rxe2_query_mr_resp *resp);
/* for the other MR kinds' files (rxe2_shmr.c, rxe2_pamr.c, rxe2_dm.c) */
int rxe2_mr_check_access(int access);
int rxe2_mr_check_access_held(int access);
int rxe2_mr_kva_pages(struct rxe2_mr *mr, const void *base, u64 offset,
		      u64 length);
struct rxe2_mr *rxe2_mr_alloc(struct ib_pd *ibpd, int access, bool counted);
void rxe2_mr_free(struct rxe2_dev *rdev, struct rxe2_mr *mr);

/*
 * rxe2_odp.c.  rxe2_odp_access() makes [iova, iova + len) of an ODP MR
 * (range already checked) present, faulting pages in, and calls fn on
 * each piece of a page while an invalidation cannot unmap it; 0 or
 * -EFAULT (the process has no such mapping or permission).  Sleeps: the
 * data path and verbs only.
 */
int rxe2_odp_access(struct rxe2_mr *mr, u64 iova, u64 len, bool write,
		    rxe2_page_fn fn, void *arg);
int rxe2_odp_hold(struct rxe2_mr *mr, u64 iova, u32 len,
		  struct page **pages, unsigned int max);

/* the user address of iova in an ODP MR (an implicit one's iova is it) */
static inline u64 rxe2_odp_va(const struct rxe2_mr *mr, u64 iova)
{
	if (mr->odp == RXE2_ODP_EXPLICIT)
		return iova - mr->iova + mr->umem->address;
	return iova;
}
int rxe2_odp_reg(struct rxe2_mr *mr, u64 start, u64 length, int access);
/*
 * The walks over an MR's pages for their NUMA nodes (rxe2_mr_resident_nodes()
 * and, for ODP, rxe2_odp_resident_nodes()) call cond_resched() once every
 * this many pages: an MR of many GiB has millions, and 4096 (16 MiB of
 * 4 KiB pages) is well under a millisecond of the walk; a power of two,
 * so that the test is a mask.
 */
#define RXE2_RESCHED_PAGES	4096
/*
 * The pages of an ODP MR mapped in the device right now, and their NUMA
 * nodes (added to @nodes); the caller keeps dereg and rereg away.
 */
unsigned long rxe2_odp_resident_nodes(struct rxe2_mr *mr, nodemask_t *nodes);
void rxe2_odp_release(struct rxe2_mr *mr);
int rxe2_advise_mr(struct ib_pd *pd, enum ib_uverbs_advise_mr_advice advice,
		   u32 flags, struct ib_sge *sg_list, u32 num_sge,
		   struct uverbs_attr_bundle *attrs);
int rxe2_odp_init(void);
void rxe2_odp_exit(void);

/* device memory and its MRs (rxe2_dm.c) */
struct ib_dm *rxe2_alloc_dm(struct ib_device *ibdev, struct ib_ucontext *ibuc,
			    struct ib_dm_alloc_attr *attr,
			    struct uverbs_attr_bundle *attrs);
int rxe2_dealloc_dm(struct ib_dm *ibdm, struct uverbs_attr_bundle *attrs);
void rxe2_dm_query(struct ib_dm *ibdm, u64 *mmap_offset, u64 *length);
struct ib_mr *rxe2_reg_dm_mr(struct ib_pd *ibpd, struct ib_dm *ibdm,
			     struct ib_dm_mr_attr *attr,
			     struct uverbs_attr_bundle *attrs);
/* dma-buf MRs (rxe2_dmabuf.c) */
struct ib_mr *rxe2_reg_user_mr_dmabuf(struct ib_pd *ibpd, u64 offset,
				      u64 length, u64 iova, int fd, int access,
				      RXE2_DMAH_PARAM RXE2_DMABUF_UDATA_PARAM);
void rxe2_dmabuf_release(struct rxe2_mr *mr);

/*
 * Shared MRs (rxe2_shmr.c) and physical-address MRs (rxe2_pamr.c),
 * made by reg_mr with driver data (struct rxe2_reg_mr_cmd, read by the
 * caller: zeros without any).  rxe2_xmr_reg() returns
 * ERR_PTR(-ENOTTY) when the command asks for neither (an ordinary
 * registration).
 */
struct ib_mr *rxe2_xmr_reg(struct ib_pd *ibpd, u64 start, u64 length,
			   u64 iova, int access,
			   const struct rxe2_reg_mr_cmd *cmd,
			   struct ib_udata *udata);
/* dereg: before the key leaves the table, and after the last lookup */
void rxe2_shmr_detach(struct rxe2_mr *mr);
void rxe2_shmr_release(struct rxe2_mr *mr);
int rxe2_shmr_mmap(struct rxe2_mmap_entry *mme, struct vm_area_struct *vma);
void rxe2_shmr_mmap_free(struct rxe2_mmap_entry *mme);
struct ib_mr *rxe2_pamr_reg(struct ib_pd *ibpd, int access);
/* RXE2_DV_CAP_SHARED_MR, and _PA_MR when the caller could make one */
u64 rxe2_xmr_dv_caps(void);
/*
 * Data path of PA MRs, called by rxe2_mr_access() (same contract: the
 * caller holds a lookup reference and checked the range).
 */
int rxe2_pamr_access(u64 pa, u32 len, rxe2_page_fn fn, void *arg);
/*
 * PA: whether every page of [pa, pa + len) is usable now, so that a
 * request is refused when it arrives (a page that goes later fails the
 * copy instead).
 */
bool rxe2_pamr_check_range(u64 pa, u64 len);
/* no PA MR for a QP that receives inline (rxe2_qp_may_use_mr()) */
bool rxe2_qp_allows_pa_mr(struct rxe2_qp *qp);
struct rxe2_sge;
bool rxe2_sges_name_pa_mr(struct rxe2_qp *qp, const struct rxe2_sge *sge,
			  u32 num_sge, u32 len);

/*
 * rxe2_mw.c: memory windows (type 1 and type 2B).  Keys: bits 31..30
 * set, bits 29..8 an index the window keeps for life, bits 7..0 the key
 * part the consumer changes at each bind.  A window is FREE or VALID
 * (enum rxe2_mr_state); a VALID window counts in its MR's num_mw, which
 * keeps the MR from being deregistered (EBUSY).
 */
struct rxe2_mw {
	struct ib_mw ibmw;
	spinlock_t lock;		/* everything below */
	u8 state;			/* enum rxe2_mr_state */
	u32 key;			/* current rkey */
	u64 qp_serial;			/* type 2: the QP it was bound through */
	struct rxe2_mr *mr;		/* VALID: the MR it opens */
	u64 addr;			/* VALID: the window, in the MR's VAs */
	u64 length;
	int access;			/* IB_ACCESS_REMOTE_*, IB_ZERO_BASED */
};

int rxe2_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int rxe2_dealloc_mw(struct ib_mw *ibmw);
/*
 * From the data path (the QP's state_lock held): BIND_MW returns 0 or
 * IB_WC_MW_BIND_ERR; invalidation 0 or IB_WC_LOC_QP_OP_ERR.
 * rxe2_mw_lookup() resolves a window rkey for a remote access of
 * [*va, *va + len) through @qp into its MR, with a reference like
 * rxe2_mr_lookup(), or NULL; *va becomes the address in the MR.
 */
struct rxe2_send_wqe;
int rxe2_mw_bind(struct rxe2_qp *qp, const struct rxe2_send_wqe *w);
int rxe2_mw_invalidate(struct rxe2_qp *qp, u32 key);
struct rxe2_mr *rxe2_mw_lookup(struct rxe2_qp *qp, u32 rkey, u64 *va, u64 len,
			       int access);

/* rxe2_cq.c */
struct rxe2_cq {
	struct ib_cq ibcq;
	u32 index;
	struct rxe2_ring ring;		/* device produces rxe2_cqe */
	/*
	 * Arm state for the data path: 0 (disarmed), IB_CQ_NEXT_COMP or
	 * IB_CQ_SOLICITED.  The data path calls ibcq.comp_handler when an
	 * entry matching it is added, then disarms.
	 */
	u8 notify;
	bool is_user;
	bool overflowed;		/* CQ_ERR reported */
	bool timestamps;		/* stamp each CQE (rxe2_cqe.timestamp) */
	unsigned long notify_pending;	/* bit 0: call comp_handler */
	/*
	 * CQ moderation (rxe2_modify_cq()), under ring.lock like notify:
	 * an armed event waits for moder_count matching CQEs or for
	 * moder_period us after the first of them (moder_start).
	 */
	u16 moder_count;
	u16 moder_period;
	u32 moder_seen;			/* matching CQEs since the arm */
	ktime_t moder_start;
	struct hrtimer moder_timer;
};

static inline struct rxe2_cq *to_rcq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct rxe2_cq, ibcq);
}
int rxe2_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		   RXE2_CREATE_CQ_UDATA_PARAM);
int rxe2_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int rxe2_resize_cq(struct ib_cq *ibcq, RXE2_CQE_COUNT cqe,
		   struct ib_udata *udata);
int rxe2_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
int rxe2_modify_cq(struct ib_cq *ibcq, u16 count, u16 period);
void rxe2_cq_set_caps(struct ib_device_attr *a);
int rxe2_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc);

/* the data path's side */
int rxe2_cq_post(struct rxe2_cq *cq, const struct rxe2_cqe *cqe, bool solicited);
bool rxe2_cq_has_room(struct rxe2_cq *cq);
void rxe2_cq_notify(struct rxe2_cq *cq);

/*
 * Inline-receive.  A completion with its data and the SGEs
 * to scatter it over, laid out as in the CQ slot (uapi/rxe2-abi.h);
 * rxe2_cq_post() copies all of it when cqe.flags has RXE2_CQE_F_INLINE.
 */
struct rxe2_cqe_inline {
	struct rxe2_cqe cqe;
	u8 data[RXE2_INLINE_RECV_MAX];
	struct rxe2_sge sge[RXE2_INLINE_RECV_MAX_SGE];
};

int rxe2_inline_sges(const struct rxe2_sge *sge, u32 num_sge, u32 len,
		     struct rxe2_sge *out);
void rxe2_cqe_set_inline(struct rxe2_cqe_inline *ic, const void *data,
			 u32 len, const struct rxe2_sge *sge, u32 num_sge);

/*
 * MR objects one send WQE's gather (or READ scatter) holds; a WQE with
 * more lkeys looks the rest up unheld and fails (LOC_PROT_ERR) should one
 * of them be replaced while it runs (mr_seq).
 */
#define RXE2_WQE_MRS	2
/* the SGE limit (module parameters), and the MRs a receive WQE holds */
#define RXE2_CAP_SGE	64
#define RXE2_RECV_MRS	RXE2_CAP_SGE

/* per-SQ-slot requester state (the WQE itself is copied to req.swqe) */
struct rxe2_swqe_info {
	struct rxe2_mr_hold hold[RXE2_WQE_MRS];
	u64 mr_seq;			/* see rxe2_mr_msg_lookup() */
	u8 state;			/* RXE2_WQE_* */
	u8 status;			/* enum ib_wc_status once done */
	u32 first_psn;
	u32 last_psn;
	u32 length;			/* total payload bytes */
};

/*
 * Outstanding READs/atomics per QP, both directions (max_qp_rd_atom).
 * 128 like rdma_rxe, so perftest and other tools that copy the peer's
 * limit into max_rd_atomic work against either device.
 */
#define RXE2_MAX_RD_ATOM	128
/* atomic results a responder keeps for replay: one per resource */
#define RXE2_ATOMIC_REPLAY	RXE2_MAX_RD_ATOM
/*
 * A loopback request handed over without a packet: transport headers
 * (at most BTH, XRCETH and ATMETH, 44 bytes) and payload, at most this
 * many bytes.
 */
#define RXE2_LOOP_REQ_MAX	320

/* packets kept in a row while the gap stayed at base (rxe2_reorder.c) */
struct rxe2_reorder_gap {
	u32 base;
	u32 kept;
};

/*
 * A QP's data-path state (qp->dp), one member per part that owns it, as
 * rdma_rxe splits its QP.  All of it is the QP's runner's (rxe2_task.c:
 * the doorbell, the work item, a loopback sender running the QP inline)
 * and of the verbs that take state_lock (modify, query, destroy, `rdma
 * res`), under state_lock, except where a member's or a field's comment
 * gives it to another lock or to none (the lock table above).
 */

/* the requester (rxe2_req.c); a rewind or a flush moves next back */
struct rxe2_req_info {
	u8 *swqe;			/* kernel copies, one per SQ slot */
	struct rxe2_swqe_info *sinfo;
	u32 next;			/* SQ index of the WQE being sent */
	u32 offset;			/* bytes of it already sent */
	u32 psn;			/* next PSN to send */
	u32 sent_psn;			/* past the highest sent: not rewound */
	u32 noack;			/* packets sent since last AckReq */
	/* SQD (modify_qp): no WQE from SQ index sqd_stop on is started */
	u32 sqd_stop;
	/*
	 * Streaming (rxe2_task.c): doorbells rung in a row with no sign
	 * between them that the poster waits for an answer, and those
	 * signs as the last doorbell saw them.  Read and written by the
	 * doorbell without the lock: a hint, never a correctness matter.
	 */
	u32 quiet;
	u32 quiet_cq;			/* the send CQ's consumer */
	u32 quiet_rx;			/* resp.requests */
	int stream_cpu;			/* the poster's, when handed over */
};

/*
 * The completer (rxe2_comp.c), with the early responses rxe2_reorder.c
 * keeps for it, and the timers that say an answer is late.  The retry
 * timer's callback (T) reads retry_at and retry_live without the lock
 * (the lock table); both timers' callbacks only kick the QP.
 */
struct rxe2_comp_info {
	/* every PSN before psn is acknowledged */
	u32 psn;
	u8 retry_left;
	u8 rnr_left;
	bool last_wqe_sent;		/* LAST_WQE_REACHED reported (SRQ) */
	bool sqd_drained;		/* all before req.sqd_stop completed */
	bool rewound;			/* went back for lost responses */
	/* a READ asked again for PSNs reread_psn..reread_last only */
	bool reread_on;
	u32 reread_psn;
	u32 reread_last;
	bool reread_done;		/* its answer taken: rxe2_comp_reread_rest() */
	struct timer_list retry_timer;
	unsigned long retry_at;		/* deadline of the oldest unacked */
	bool retry_live;		/* something sent is unacknowledged */
	unsigned long probe_left;	/* retry_at is a probe's: then this */
	/* an RNR NAK's wait, as long as it asks: 10 us up, not a jiffy */
	struct hrtimer rnr_timer;
	struct sk_buff_head ooo;	/* responses that came early */
	struct rxe2_reorder_gap ooo_gap;
	/* inline-receive: the READ/atomic result of SQ index inl_idx */
	bool inl_staged;
	u32 inl_idx;
	u32 inl_len;
	u8 inl_data[RXE2_INLINE_RECV_MAX];
};

/*
 * The window and the ACK timeout (rxe2_cc.c): the requester asks it
 * before it sends, the completer feeds it with what is acknowledged.
 */
struct rxe2_cc_info {
	u32 cwnd;			/* PSNs in flight at most */
	u32 ssthresh;			/* cwnd grows fast below this */
	u32 cwnd_acc;			/* acked PSNs toward cwnd + 1 */
	bool recovering;		/* cut for a NAK until recover_psn */
	u32 recover_psn;		/* is acknowledged */
	bool peer_keeps;		/* the responder keeps early packets */
	bool nak_rewind;		/* went back for a sequence NAK */
	bool gap_only;			/* resend gap_psn, then pass over */
	u32 gap_psn;
	bool gap_watch;			/* a NAK for gap_next: it drops? */
	u32 gap_next;			/* the PSN after a closed gap */
	u8 gap_drops;			/* such NAKs in a row */
	bool rtt_on;			/* rtt_psn's ACK is being timed */
	u32 rtt_psn;
	u64 rtt_start;			/* local_clock(), ns */
	u32 srtt_us;			/* smoothed round trip, 0: none yet */
	u32 rttvar_us;
	u8 rto_backoff;			/* timeouts in a row, capped */
};

/*
 * Packet pacing (rxe2_pace.c): 0 kbps is no limit.  modify_qp sets the
 * rate, the requester moves next; the timer's callback only kicks the
 * QP.
 */
struct rxe2_pace_info {
	u32 rate_kbps;
	u64 next;			/* ns: earliest next request packet */
	u32 ps;				/* and the ps below next */
	struct hrtimer timer;
};

/*
 * The responder (rxe2_resp.c), with the early requests rxe2_reorder.c
 * keeps for it and the receive WQE that rxe2_wq.c, rxe2_raw.c and
 * rxe2_tm.c also take; a flush (rxe2_comp.c) ends its message.
 * read.active is also read by a loopback sender, under rx_queue.lock
 * only (rxe2_qp_deliver_req(): the lock table).
 */
struct rxe2_resp_info {
	u32 requests;			/* packets taken in: a streaming hint */
	u32 psn;			/* expected PSN */
	u32 msn;
	bool nak_sent;			/* sequence or RNR NAK outstanding */
	struct sk_buff_head ooo;	/* requests that came early */
	struct rxe2_reorder_gap ooo_gap;
	bool ack_owed;			/* after the kept ones are taken */
	u32 ack_owed_psn;
	u16 op;				/* RXE2_OPF_SEND or _WRITE in progress */
	bool in_msg;
	bool have_rwqe;
	u8 *rwqe;			/* copy of the receive WQE taken */
	u32 rwqe_size;
	u32 rcv_offset;			/* bytes placed in it */
	/*
	 * Inline-receive: the message being received goes to inl_data (and
	 * then into its CQE) instead of the WQE's buffers.
	 */
	bool rcv_inline;
	u8 inl_data[RXE2_INLINE_RECV_MAX];
	/* the MR objects of the SEND in progress (rxe2_mr_hold) */
	struct rxe2_mr_hold rcv_hold[RXE2_RECV_MRS];
	/* the RDMA WRITE in progress */
	struct {
		struct rxe2_mr_hold hold;
		u32 rkey;
		u64 va;
		u32 resid;
		u32 len;
	} write;
	/* the RDMA READ being answered */
	struct {
		bool active;		/* responses to send */
		struct rxe2_mr_hold hold;
		u32 rkey;
		u64 va;
		u32 len;
		u32 off;
		u32 psn;		/* of the next response */
		u32 srqn;		/* XRC: its SRQ, as xrc_msg_* below */
		u64 srq_serial;
	} read;
	/*
	 * XRC target (rxe2_xrc.c): the XRC SRQ of the request being
	 * handled, with a reference, NULL between requests; the SRQ of the
	 * SEND or WRITE in progress (and read.srqn, read.srq_serial: of
	 * the READ being answered), by number and serial (a number comes
	 * back after a destroy).
	 */
	struct rxe2_srq *xrc_srq;
	u32 xrc_msg_srqn;
	u64 xrc_msg_serial;
	/*
	 * The results of the last RXE2_ATOMIC_REPLAY atomics, ATOMIC WRITEs
	 * and FLUSHes (one per responder resource), replayed to a requester
	 * that lost the responses and sends them again; none of them is
	 * ever executed twice.
	 */
	struct rxe2_atomic_res {
		bool valid;
		bool placement;		/* ATOMIC WRITE or FLUSH: no value */
		u32 psn;
		u64 orig;
	} atomic_res[RXE2_ATOMIC_REPLAY];
	u32 atomic_next;		/* slot of the next result */
};

/*
 * Tag matching (rxe2_tm.c): a TM SRQ's message in progress, which the
 * responder places, and what the requester of a tm_sq QP has not
 * retired.
 */
struct rxe2_tm_info {
	u8 kind;			/* enum rxe2_tm_kind */
	bool match_sent;		/* its MATCH completion went first */
	u32 skip;			/* TMH bytes not placed */
	u32 app_ctx;
	u64 tag;
	u32 rndv;			/* tm_sq: rendezvous READs not retired */
	u64 seq;			/* unexpected: the SRQ's ADDs before it */
};

/*
 * Loopback (rxe2_loop.c): what a local peer's runner hands to this QP
 * without a packet, and what runs it inline; each field says its lock.
 */
struct rxe2_loop_info {
	refcount_t users;		/* 1 + deliveries holding the QP */
	struct completion users_done;	/* users reached 0: destroy goes on */
	/* the runner that runs us inline; under our state_lock */
	struct rxe2_qp *inline_parent;
	/*
	 * The local QP our requester holds locked (with a reference) for
	 * one-copy requests during one run (rxe2_qp_direct_begin()).
	 * Under our state_lock.
	 */
	struct rxe2_qp *direct_to;
	/*
	 * A QP that ran inline for our runner and left work for it to run
	 * once we are unlocked (rxe2_qp_after_parent()), with a reference.
	 * Set and taken with atomics, during and at the end of our run.
	 */
	struct rxe2_qp *after;
	/*
	 * A positive ACK from a local peer, handed over without a packet
	 * (rxe2_qp_deliver_ack()): its AETH and PSN.  Under rx_queue.lock.
	 */
	bool ack_valid;
	u32 ack_smsn;
	u32 ack_psn;
	/*
	 * A request from a local peer handed over without a packet
	 * (rxe2_qp_deliver_req()): its transport headers and payload as
	 * on the wire, without pad and ICRC.  req_len 0: the slot is free.
	 * Filled under rx_queue.lock by the sender, freed by our runner
	 * once the request is handled.
	 */
	u32 req_len;
	u8 req[RXE2_LOOP_REQ_MAX] __aligned(8);
	/*
	 * Our requester's packet being built for that (rxe2_tx_begin());
	 * under our state_lock
	 */
	u32 tx_stage_len;
	u8 tx_stage[RXE2_LOOP_REQ_MAX] __aligned(8);
};

struct rxe2_qp_dp {
	struct work_struct work;
	struct work_struct stream_work;	/* on a CPU of its own (rxe2_task.c) */
	/* packets from the hook; its lock: loop.ack_*, loop.req's filling */
	struct sk_buff_head rx_queue;
	unsigned long flags;		/* RXE2_QPF_* bits */
	u16 src_port;			/* UDP source port: ECMP entropy */
	struct rxe2_av av;		/* RC/UC destination (IB_QP_AV) */
	u32 mtu;			/* path MTU in bytes */
	struct rxe2_req_info req;
	struct rxe2_comp_info comp;
	struct rxe2_cc_info cc;
	struct rxe2_pace_info pace;
	struct rxe2_resp_info resp;
	struct rxe2_tm_info tm;
	struct rxe2_loop_info loop;
};

/* rxe2_qp.c: QP objects and the IBTA state machine */
struct rxe2_qp {
	struct ib_qp ibqp;
	struct rxe2_ring sq;		/* rxe2_send_wqe slots */
	struct rxe2_ring rq;		/* rxe2_recv_wqe slots; unused with SRQ */
	bool has_rq;
	bool is_user;
	/* IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK: skip our own multicast */
	bool block_mcast_lb;
	unsigned int mcast_count;	/* groups attached, rxe2_mcg_mutex */
	/*
	 * Unique for the module's life, unlike the QP number, which comes
	 * back after a wrap: a type 2 window names its QP by it.
	 */
	u64 serial;
	enum ib_sig_type sq_sig_type;
	/*
	 * Inline-receive: messages of up to this many bytes (UD: with the
	 * 40-byte GRH) complete with their data in the CQE; 0 is off.  Set
	 * at creation only (rxe2dv_create_qp).  A QP with it on takes no
	 * physical-address MR.
	 */
	u32 max_inl_recv;
	struct ib_qp_cap cap;		/* what the rings really hold */
	struct ib_xrcd *xrcd;		/* XRC target: its domain */
	struct rxe2_rss *rss;		/* an RSS QP's hash, else NULL */
	/*
	 * An RC QP of a TM SRQ made without a send queue: its SQ is a
	 * kernel ring for the SRQ's rendezvous READs and FINs (rxe2_tm.c)
	 */
	bool tm_sq;
	/* the counter it is bound to (rdma statistic qp), or NULL */
	struct rxe2_counter __rcu *ctr;
	/* state, attr, ctr's writes, dp: the runner's (the lock table) */
	struct mutex state_lock;
	enum ib_qp_state state;
	struct ib_qp_attr attr;		/* last value of every attribute set */
	struct rxe2_qp_dp dp;		/* data path: rxe2_dp.h */
};

static inline struct rxe2_qp *to_rqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct rxe2_qp, ibqp);
}

/*
 * A kernel MR (the DMA MR, a fast-registered one): kernel virtual
 * addresses, reached directly.  Every other kind goes through
 * rxe2_mr_access().
 */
static inline bool rxe2_mr_is_kernel(const struct rxe2_mr *mr)
{
	return mr->type == RXE2_MR_DMA || mr->type == RXE2_MR_FAST;
}

/* ring slot sizes (uapi/rxe2-abi.h) */
u32 rxe2_send_slot_size(u32 max_sge, u32 max_inline);
u32 rxe2_recv_slot_size(u32 max_sge);

/* post receive WQEs to a kernel ring (QP RQ or SRQ) */
int rxe2_post_recv_ring(struct rxe2_ring *r, u32 max_sge,
			const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr);
int rxe2_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		   struct ib_udata *udata);
int rxe2_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_udata *udata);
int rxe2_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_qp_init_attr *init);
int rxe2_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
int rxe2_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		   const struct ib_send_wr **bad_wr);
int rxe2_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		   const struct ib_recv_wr **bad_wr);
bool rxe2_qp_get(struct rxe2_qp *qp);
void rxe2_qp_put(struct rxe2_qp *qp);
void rxe2_qp_error(struct rxe2_qp *qp);

/* rxe2_mcast.c: multicast groups */
int rxe2_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
int rxe2_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
void rxe2_mcast_qp_gone(struct rxe2_qp *qp);
/* the receive side */
struct rxe2_dev *rxe2_mcast_rdev(struct net_device *ndev,
				 const struct in6_addr *daddr);
struct rxe2_bth;
void rxe2_mcast_rx(struct rxe2_dev *rdev, const struct in6_addr *daddr,
		   struct sk_buff *skb, const struct rxe2_bth *bth, bool ipv6);

/* rxe2_srq.c */
struct rxe2_srq {
	struct ib_srq ibsrq;
	struct rxe2_tm *tm;		/* IB_SRQT_TM: its tag list */
	u32 index;			/* the XRC SRQ number too */
	struct rxe2_ring ring;		/* rxe2_recv_wqe slots */
	bool is_user;
	u32 max_wr;			/* reported depth (num_slots) */
	u32 max_sge;
	u32 srq_limit;			/* armed limit, 0 when disarmed */
	/*
	 * XRC targets find an XRC SRQ by number (rxe2_xrc.c): ref is 1
	 * while it lives + 1 per request using it; destroy waits for
	 * released.  serial tells a message's SRQ from a later one that
	 * got the same number.
	 */
	refcount_t ref;
	struct completion released;
	u64 serial;
};

static inline struct rxe2_srq *to_rsrq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct rxe2_srq, ibsrq);
}

int rxe2_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		    struct ib_udata *udata);
int rxe2_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		    enum ib_srq_attr_mask mask, struct ib_udata *udata);
int rxe2_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int rxe2_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
int rxe2_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr);
struct rxe2_srq *rxe2_xrc_srq_get(struct rxe2_dev *rdev, u32 srqn);
void rxe2_srq_put(struct rxe2_srq *srq);
u32 rxe2_srq_rwqe_size(const struct rxe2_srq *srq);

/* rxe2_wq.c: receive work queues, indirection tables, RSS */
struct rxe2_wq {
	struct ib_wq ibwq;		/* state: WRITE_ONCE by modify_wq */
	struct rxe2_ring ring;		/* rxe2_recv_wqe slots */
	u32 max_sge;
};

struct rxe2_rwq_ind_table {
	struct ib_rwq_ind_table ibtbl;	/* ib_core's, all of it */
};

/* an RSS QP's hash: set at creation, read by its work item */
struct rxe2_rss {
	u64 fields;			/* enum rxe2_rx_hash_fields */
	u8 key[RXE2_RSS_KEY_LEN];
	struct ib_rwq_ind_table *tbl;	/* held by ib_core for the QP */
};

/* entries of an indirection table at most */
#define RXE2_MAX_IND_TBL_SIZE	256
/* the longest hash input: two IPv6 addresses and two ports */
#define RXE2_RSS_INPUT_MAX	36

static inline struct rxe2_wq *to_rwq(struct ib_wq *ibwq)
{
	return container_of(ibwq, struct rxe2_wq, ibwq);
}

struct ib_wq *rxe2_create_wq(struct ib_pd *ibpd, struct ib_wq_init_attr *init,
			     struct ib_udata *udata);
int rxe2_modify_wq(struct ib_wq *ibwq, struct ib_wq_attr *attr, u32 mask,
		   struct ib_udata *udata);
int rxe2_destroy_wq(struct ib_wq *ibwq, struct ib_udata *udata);
int rxe2_create_rwq_ind_table(struct ib_rwq_ind_table *tbl,
			      struct ib_rwq_ind_table_init_attr *init,
			      struct ib_udata *udata);
int rxe2_destroy_rwq_ind_table(struct ib_rwq_ind_table *tbl);
struct rxe2_create_qp_cmd;
int rxe2_rss_init(struct rxe2_qp *qp, const struct ib_qp_init_attr *init,
		  const struct rxe2_create_qp_cmd *cmd);
void rxe2_rss_free(struct rxe2_qp *qp);
extern const struct ib_device_ops rxe2_wq_ops;

/* the data path's side: an RSS QP's frames into its WQs */
struct rxe2_wq *rxe2_rss_wq(struct rxe2_qp *qp, const struct sk_buff *skb);
int rxe2_wq_take(struct rxe2_qp *qp, struct rxe2_wq *wq, u32 len);
void rxe2_wq_fail(struct rxe2_qp *qp, struct rxe2_wq *wq, int status);

/* rxe2_xrc.c: an XRC domain is ib_core's object; nothing of ours yet */
struct rxe2_xrcd {
	struct ib_xrcd ibxrcd;
};

int rxe2_alloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata);
int rxe2_dealloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata);

/*
 * The XRC target's responder.  A request finds its XRC SRQ
 * by the XRCETH (rxe2_xrc_resp_rx() around rxe2_resp_rx()); READ
 * responses sent later and the flush of a receive WQE find the SRQ of
 * their message again (enter/leave).
 */
struct rxe2_pkt;
void rxe2_xrc_resp_rx(struct rxe2_qp *qp, struct rxe2_pkt *pkt);
bool rxe2_xrc_srq_enter(struct rxe2_qp *qp, u32 srqn, u64 serial);
void rxe2_xrc_srq_leave(struct rxe2_qp *qp);

/* rxe2_tm.c: tag matching SRQs */
struct rxe2_tm;
void rxe2_tm_caps(struct ib_tm_caps *caps);
int rxe2_tm_create(struct rxe2_srq *srq, const struct ib_srq_init_attr *init,
		   struct ib_udata *udata);
void rxe2_tm_destroy(struct rxe2_srq *srq);
u32 rxe2_tm_rwqe_size(void);
bool rxe2_tm_wants_sq(const struct ib_qp_init_attr *init,
		      struct ib_udata *udata);
int rxe2_tm_sq_init(struct rxe2_qp *qp);
int rxe2_tm_post_ops(struct ib_srq *ibsrq, const struct rxe2_tm_op *ops,
		     u32 n, struct rxe2_srq_ops_resp *resp);

/* the data path's side: a SEND to a QP of a tag matching SRQ */
enum rxe2_tm_kind {
	RXE2_TM_PLAIN,		/* no TMH, or one of no use here: a receive */
	RXE2_TM_NO_TAG,
	RXE2_TM_EAGER,		/* matched */
	RXE2_TM_RNDV,		/* matched, handed to software */
	RXE2_TM_RNDV_READ,	/* matched, the device READs the data */
	RXE2_TM_UNEXPECTED,	/* EAGER or RNDV, no buffer matched */
};

struct rxe2_pkt;
int rxe2_tm_take(struct rxe2_qp *qp, struct rxe2_srq *srq,
		 const struct rxe2_pkt *pkt);
void rxe2_tm_recv_done(struct rxe2_qp *qp, struct rxe2_srq *srq, u64 wr_id,
		       u32 len, u32 flags, u32 ex, bool solicited);
void rxe2_tm_msg_abort(struct rxe2_qp *qp, bool complete);
struct rxe2_cq *rxe2_tm_sq_cq(struct rxe2_qp *qp, const struct rxe2_cqe *c);
void rxe2_tm_sq_flush_wqes(struct rxe2_qp *qp);
bool rxe2_tm_sq_release(struct rxe2_qp *qp,
			const struct rxe2_swqe_info *info,
			const struct rxe2_cqe *cqe);

/* QP and SRQ predicates, and the objects a QP's responder works with */

/* a tag matching SRQ (IB_SRQT_TM: srq->tm, rxe2_tm.c); NULL is none */
static inline bool rxe2_srq_is_tm(const struct ib_srq *ibsrq)
{
	return ibsrq && ibsrq->srq_type == IB_SRQT_TM;
}

/* an XRC target: a responder over its domain's XRC SRQs, no queues */
static inline bool rxe2_qp_is_xrc_tgt(const struct rxe2_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_XRC_TGT;
}

/*
 * The PD, the receive CQ and the SRQ the responder works with.  An XRC
 * target has none of its own: they are those of the XRC SRQ that the
 * request being handled names (rxe2_xrc.c, dp.resp.xrc_srq).  Between
 * requests its PD is rxe2_xrc_no_pd, which no MR, window or key is in
 * (a NULL PD would match any in rxe2_mr_lookup()).
 */
extern struct ib_pd rxe2_xrc_no_pd;

static inline struct ib_pd *rxe2_qp_pd(struct rxe2_qp *qp)
{
	if (qp->dp.resp.xrc_srq)
		return qp->dp.resp.xrc_srq->ibsrq.pd;
	if (rxe2_qp_is_xrc_tgt(qp))
		return &rxe2_xrc_no_pd;
	return qp->ibqp.pd;
}

/* NULL for a QP that has neither (an XRC initiator, a target between requests) */
static inline struct rxe2_cq *rxe2_qp_recv_cq(struct rxe2_qp *qp)
{
	if (qp->dp.resp.xrc_srq)
		return to_rcq(qp->dp.resp.xrc_srq->ibsrq.ext.cq);
	/* a TM SRQ's QPs complete receives on the SRQ's CQ */
	if (rxe2_srq_is_tm(qp->ibqp.srq))
		return to_rcq(qp->ibqp.srq->ext.cq);
	return qp->ibqp.recv_cq ? to_rcq(qp->ibqp.recv_cq) : NULL;
}

static inline struct rxe2_srq *rxe2_qp_srq(struct rxe2_qp *qp)
{
	if (qp->dp.resp.xrc_srq)
		return qp->dp.resp.xrc_srq;
	return qp->ibqp.srq ? to_rsrq(qp->ibqp.srq) : NULL;
}

/*
 * Whether the data path of @qp may use @mr: a process's QP only memory
 * of a process (never the DMA MR's kernel addresses); a PA MR only on a
 * QP that rxe2_qp_allows_pa_mr() (rxe2_pamr.c: not one that receives
 * inline).  An XRC target serves the owner of the SRQ it works for.
 */
static inline bool rxe2_qp_may_use_mr(struct rxe2_qp *qp,
				      const struct rxe2_mr *mr)
{
	bool user = qp->dp.resp.xrc_srq ? qp->dp.resp.xrc_srq->is_user :
					  qp->is_user;

	if (mr->type == RXE2_MR_PA)
		return rxe2_qp_allows_pa_mr(qp);
	return !user || !rxe2_mr_is_kernel(mr);
}

/* driver details for rdma resource show ... -dd (rxe2_qp.c, _cq.c, _mr.c) */
struct rxe2_res_u32 {
	const char *name;
	u32 v;
	bool show;
};

int rxe2_res_put(struct sk_buff *msg, const struct rxe2_res_u32 *d, int n,
		 const char *odp);
int rxe2_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp);
int rxe2_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ibcq);
int rxe2_fill_res_mr_entry(struct sk_buff *msg, struct ib_mr *ibmr);

#endif /* RXE2_VERBS_H */
