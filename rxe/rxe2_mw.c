// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2: memory windows, type 1 and type 2B (IBTA 10.6.7).
 *
 * A window opens part of an MR registered with IB_ACCESS_MW_BIND to
 * remote access under a key of its own.  BIND_MW WQEs run in the
 * requester in SQ order (type 1 windows are bound through ibv_bind_mw,
 * which the provider turns into the same WQE).  A type 2 window is
 * bound to the QP it was bound through (type 2B): only that QP's
 * responder accepts its rkey, and it can be invalidated (LOCAL_INV,
 * SEND_WITH_INV).  A type 1 window answers to any QP of its PD and is
 * unbound or moved only by binding it again.
 *
 * Windows of all devices share one xarray indexed by key bits 29..8;
 * the PD check keeps processes and devices apart.  The data path reads
 * a window under RCU and its spinlock; dealloc waits for an RCU grace
 * period before ib_core frees the ib_mw.
 */
#include <linux/delay.h>
#include <rdma/ib_user_verbs.h>

#include "rxe2_verbs.h"

#define RXE2_MW_INDEX_MAX	0x3fffffu
#define RXE2_MW_KEY_PART	0xffu
/* what a bind may ask for; zero-based only of a type 2 window */
#define RXE2_MW_ACCESS		(IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_ATOMIC | IB_ZERO_BASED)

static DEFINE_XARRAY_ALLOC1(rxe2_mw_xa);
static u32 rxe2_mw_next;

static struct rxe2_mw *to_rmw(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct rxe2_mw, ibmw);
}

static u32 rxe2_mw_index(u32 key)
{
	return (key >> 8) & RXE2_MW_INDEX_MAX;
}

int rxe2_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct rxe2_dev *rdev = to_rdev(ibmw->device);
	struct rxe2_mw *mw = to_rmw(ibmw);
	u32 index;
	int ret;

	ret = rxe2_check_udata_in_empty(udata);
	if (ret)
		return ret;
	if (ibmw->type != IB_MW_TYPE_1 && ibmw->type != IB_MW_TYPE_2)
		return -EINVAL;
	if (atomic_inc_return(&rdev->mw_count) > rdev->attr.max_mw) {
		atomic_dec(&rdev->mw_count);
		return -ENOMEM;
	}
	spin_lock_init(&mw->lock);
	mw->state = RXE2_MR_FREE;
	ret = xa_alloc_cyclic(&rxe2_mw_xa, &index, NULL,
			      XA_LIMIT(1, RXE2_MW_INDEX_MAX), &rxe2_mw_next,
			      GFP_KERNEL);
	if (ret < 0) {
		atomic_dec(&rdev->mw_count);
		return ret == -EBUSY ? -ENOMEM : ret;
	}
	mw->key = RXE2_MW_KEY_BITS | index << 8;
	ibmw->rkey = mw->key;
	xa_store(&rxe2_mw_xa, index, mw, GFP_KERNEL);
	return 0;
}

/*
 * A window left its MR (unbind, rebind, invalidation, dealloc); the
 * caller took a reference on the MR while the window still counted in
 * num_mw.  Wait until no access that found the MR earlier is still
 * copying (as rxe2_mr_invalidate() does for fast MRs: every access
 * holds its reference for one copy only), then let the MR go.
 */
static void rxe2_mw_release_mr(struct rxe2_mr *mr)
{
	atomic_dec(&mr->num_mw);
	while (refcount_read(&mr->ref) > 2)
		usleep_range(10, 50);
	rxe2_mr_put(mr);
}

/* under mw->lock: make the window FREE; returns its MR, referenced */
static struct rxe2_mr *rxe2_mw_detach(struct rxe2_mw *mw)
{
	struct rxe2_mr *mr = mw->mr;

	if (mw->state != RXE2_MR_VALID)
		return NULL;
	mw->state = RXE2_MR_FREE;
	mw->mr = NULL;
	/* alive: this window still counts in its num_mw */
	refcount_inc(&mr->ref);
	return mr;
}

int rxe2_dealloc_mw(struct ib_mw *ibmw)
{
	struct rxe2_dev *rdev = to_rdev(ibmw->device);
	struct rxe2_mw *mw = to_rmw(ibmw);
	struct rxe2_mr *mr;
	unsigned long flags;

	xa_erase(&rxe2_mw_xa, rxe2_mw_index(mw->key));
	/* binds and lookups that found it are over after a grace period */
	synchronize_rcu();
	spin_lock_irqsave(&mw->lock, flags);
	mr = rxe2_mw_detach(mw);
	spin_unlock_irqrestore(&mw->lock, flags);
	if (mr)
		rxe2_mw_release_mr(mr);
	atomic_dec(&rdev->mw_count);
	return 0;
}

/*
 * The IBTA checks of a bind (10.6.7.2, C10-72 and on), each of which
 * fails with MW_BIND_ERR: the window of the QP's PD; the new key with
 * the window's index; a type 2 window FREE and given a non-empty range;
 * the MR of the same PD, registered with MW_BIND, granting local write
 * if the window grants remote write or atomics, and covering the range.
 * A type 1 bind of length 0 unbinds.  Only a type 2 window may be
 * zero-based (remote addresses are offsets into the window), as rdma_rxe
 * and mlx5 do: IBTA leaves it to the HCA.
 */
static int rxe2_mw_check_bind(struct rxe2_qp *qp, struct rxe2_mw *mw,
			      const struct rxe2_send_wqe *w,
			      struct rxe2_mr *mr, int access)
{
	const typeof(w->wr.bind_mw) *b = &w->wr.bind_mw;
	bool type2 = mw->ibmw.type == IB_MW_TYPE_2;

	if ((w->ex ^ mw->key) & ~RXE2_MW_KEY_PART)
		return -EINVAL;
	if (type2 && mw->state == RXE2_MR_VALID)
		return -EINVAL;
	if (!type2 && (access & IB_ZERO_BASED))
		return -EINVAL;
	if (!b->length)
		return type2 ? -EINVAL : 0;
	if (!mr || !mr->umem || !(mr->access & IB_ACCESS_MW_BIND))
		return -EINVAL;
	if ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(mr->access & IB_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	if (!rxe2_mr_check_range(mr, b->addr, b->length))
		return -EINVAL;
	return 0;
}

int rxe2_mw_bind(struct rxe2_qp *qp, const struct rxe2_send_wqe *w)
{
	const typeof(w->wr.bind_mw) *b = &w->wr.bind_mw;
	struct rxe2_mr *mr = NULL, *old = NULL;
	int status = IB_WC_MW_BIND_ERR;
	unsigned long flags;
	struct rxe2_mw *mw;
	/* remote local-write is meaningless for a window: ignore it */
	int access = b->access & ~IB_ACCESS_LOCAL_WRITE;

	if (!rxe2_key_is_mw(b->mw_rkey) || (access & ~RXE2_MW_ACCESS))
		return status;
	if (b->length)
		mr = rxe2_mr_lookup(to_rdev(qp->ibqp.device), b->mr_lkey, qp->ibqp.pd,
				    0);

	rcu_read_lock();
	mw = xa_load(&rxe2_mw_xa, rxe2_mw_index(b->mw_rkey));
	if (!mw || mw->ibmw.pd != qp->ibqp.pd)
		goto out_rcu;
	spin_lock_irqsave(&mw->lock, flags);
	if (rxe2_mw_check_bind(qp, mw, w, mr, access))
		goto out_unlock;
	/* fails once the MR's dereg has begun */
	if (mr && !atomic_inc_unless_negative(&mr->num_mw))
		goto out_unlock;
	old = rxe2_mw_detach(mw);
	if (mr) {
		mw->mr = mr;
		mw->addr = b->addr;
		mw->length = b->length;
		mw->access = access;
		mw->qp_serial = qp->serial;
		mw->state = RXE2_MR_VALID;
	}
	mw->key = w->ex;
	mw->ibmw.rkey = w->ex;
	status = IB_WC_SUCCESS;
out_unlock:
	spin_unlock_irqrestore(&mw->lock, flags);
out_rcu:
	rcu_read_unlock();
	/* before waiting: the old MR may be this one */
	if (mr)
		rxe2_mr_put(mr);
	if (old)
		rxe2_mw_release_mr(old);
	return status;
}

/*
 * LOCAL_INV or SEND_WITH_INV: only a type 2 window of the QP's PD, named
 * by its current key.  A FREE window under its current key stays FREE
 * and the invalidation succeeds (as for fast MRs).
 */
int rxe2_mw_invalidate(struct rxe2_qp *qp, u32 key)
{
	int status = IB_WC_LOC_QP_OP_ERR;
	struct rxe2_mr *mr = NULL;
	unsigned long flags;
	struct rxe2_mw *mw;

	rcu_read_lock();
	mw = xa_load(&rxe2_mw_xa, rxe2_mw_index(key));
	if (mw && mw->ibmw.pd == rxe2_qp_pd(qp) &&
	    mw->ibmw.type == IB_MW_TYPE_2) {
		spin_lock_irqsave(&mw->lock, flags);
		if (mw->key == key) {
			mr = rxe2_mw_detach(mw);
			status = IB_WC_SUCCESS;
		}
		spin_unlock_irqrestore(&mw->lock, flags);
	}
	rcu_read_unlock();
	if (mr)
		rxe2_mw_release_mr(mr);
	return status;
}

/* [*va, *va + len) inside the window; *va becomes an address of its MR */
static bool rxe2_mw_range(const struct rxe2_mw *mw, u64 *va, u64 len)
{
	u64 off = *va;

	if (!(mw->access & IB_ZERO_BASED)) {
		if (*va < mw->addr)
			return false;
		off = *va - mw->addr;
	}
	if (len > mw->length || off > mw->length - len)
		return false;
	*va = mw->addr + off;
	return true;
}

struct rxe2_mr *rxe2_mw_lookup(struct rxe2_qp *qp, u32 rkey, u64 *va, u64 len,
			       int access)
{
	struct rxe2_mr *mr = NULL;
	unsigned long flags;
	struct rxe2_mw *mw;

	rcu_read_lock();
	mw = xa_load(&rxe2_mw_xa, rxe2_mw_index(rkey));
	if (mw && mw->ibmw.pd == rxe2_qp_pd(qp)) {
		spin_lock_irqsave(&mw->lock, flags);
		if (mw->state == RXE2_MR_VALID && mw->key == rkey &&
		    !(access & ~mw->access) &&
		    (mw->ibmw.type == IB_MW_TYPE_1 ||
		     mw->qp_serial == qp->serial) &&
		    rxe2_mw_range(mw, va, len)) {
			mr = mw->mr;
			refcount_inc(&mr->ref);
		}
		spin_unlock_irqrestore(&mw->lock, flags);
	}
	rcu_read_unlock();
	return mr;
}
