// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2: scatter/gather lists.  A cursor walks the SGEs of a WQE; every
 * lkey is looked up on the way (PD and access checked, the message's MR
 * objects held: rxe2_mr_msg_lookup()) and every range checked before a
 * byte moves.  The bytes go to or come from a kernel buffer, or they
 * come from a source (struct rxe2_src): the sender's own SGEs, read by
 * the receiver of a one-copy loopback request (rxe2_tx_direct()) while
 * the sender waits for it, so that the payload moves once, from the
 * source MR into the target.  A kernel consumer's WR gets its WQE's
 * SGEs here too (rxe2_sge_from_ib()), as a process writes its own.
 */
#include "rxe2_dp.h"
#include "rxe2_sge.h"

/* a kernel WR's SGEs into its WQE; the caller checked num against max */
void rxe2_sge_from_ib(struct rxe2_sge *sge, const struct ib_sge *sg_list,
		      int num)
{
	int i;

	for (i = 0; i < num; i++) {
		sge[i].addr = sg_list[i].addr;
		sge[i].length = sg_list[i].length;
		sge[i].lkey = sg_list[i].lkey;
	}
}

void rxe2_sge_seek(struct rxe2_sge_cursor *c, u32 offset)
{
	c->idx = 0;
	c->off = 0;
	while (c->idx < c->num && offset >= c->sge[c->idx].length) {
		offset -= c->sge[c->idx].length;
		c->idx++;
	}
	c->off = offset;
}

/* what to do with [iova, iova + len) of an MR; owns the reference on mr */
typedef int (*rxe2_sge_fn)(struct rxe2_mr *mr, u64 iova, u32 len, void *arg);

/*
 * Hand fn the next len bytes of the list, an MR range at a time, each
 * MR looked up with access and its range checked.  0, -EINVAL when the
 * list is too short (a length error), -EACCES (a protection error), or
 * what fn returned.
 */
static int rxe2_sge_walk(struct rxe2_qp *qp, struct rxe2_sge_cursor *c,
			 u32 len, int access, struct rxe2_mr_hold *hold,
			 unsigned int nhold, u64 *seq, rxe2_sge_fn fn,
			 void *arg)
{
	struct rxe2_dev *rdev = rxe2_qp_rdev(qp);

	while (len) {
		const struct rxe2_sge *s;
		struct rxe2_mr *mr;
		u32 n;
		int ret;

		if (c->idx >= c->num)
			return -EINVAL;
		s = &c->sge[c->idx];
		if (c->off >= s->length) {
			c->idx++;
			c->off = 0;
			continue;
		}
		n = min(len, s->length - c->off);
		mr = rxe2_mr_msg_lookup(hold, nhold, seq, rdev, s->lkey,
					rxe2_qp_pd(qp), access);
		if (!mr)
			return -EACCES;
		if (!rxe2_qp_may_use_mr(qp, mr) ||
		    !rxe2_mr_check_range(mr, s->addr + c->off, n)) {
			rxe2_mr_put(mr);
			return -EACCES;
		}
		ret = fn(mr, s->addr + c->off, n, arg);
		if (ret)
			return ret;
		len -= n;
		c->off += n;
	}
	return 0;
}

struct rxe2_sge_buf {
	u8 *buf;
	bool to_mem;
};

static int rxe2_sge_copy_one(struct rxe2_mr *mr, u64 iova, u32 len,
			     void *arg)
{
	struct rxe2_sge_buf *b = arg;
	int ret = rxe2_mr_copy(mr, iova, b->buf, len, b->to_mem);

	rxe2_mr_put(mr);
	b->buf += len;
	return ret ? -EACCES : 0;
}

/*
 * rxe2_sge_copy() - copy len bytes between the SGE list at the cursor
 * and buf.  The message's MR objects are held in hold[nhold] (see
 * rxe2_mr_msg_lookup(), seq too).  Returns 0, -EINVAL when the list is
 * too short (a length error) or -EACCES (a protection error).
 */
int rxe2_sge_copy(struct rxe2_qp *qp, struct rxe2_sge_cursor *c, void *buf,
		  u32 len, bool to_mem, struct rxe2_mr_hold *hold,
		  unsigned int nhold, u64 *seq)
{
	struct rxe2_sge_buf b = { .buf = buf, .to_mem = to_mem };

	return rxe2_sge_walk(qp, c, len, to_mem ? IB_ACCESS_LOCAL_WRITE : 0,
			     hold, nhold, seq, rxe2_sge_copy_one, &b);
}

/*
 * A source's MR must be readable with the sender waiting and the target
 * mapped: pinned, shared or kernel memory read in place, or ODP memory
 * faulted in now, before the receiver takes its own ODP MR's mutex, and
 * read from the pages it held then.  A PA MR checks every page as it
 * goes: it takes the copying path, as an ODP range that cannot be held
 * (-E2BIG); one that cannot be faulted in fails the WQE (-EACCES) once.
 */
static int rxe2_src_add(struct rxe2_mr *mr, u64 iova, u32 len, void *arg)
{
	struct rxe2_src *src = arg;
	int held = 0;

	if (mr->type == RXE2_MR_PA || src->num == ARRAY_SIZE(src->piece))
		goto copy;
	if (mr->odp) {
		held = rxe2_odp_hold(mr, iova, len,
				     src->piece[src->num].pages,
				     RXE2_SRC_ODP_PAGES);
		/* no page to read: the WQE's error, as a failed copy's */
		if (held == -EFAULT) {
			rxe2_mr_put(mr);
			return -EACCES;
		}
		if (held < 0)
			goto copy;
		src->piece[src->num].page_off =
			rxe2_odp_va(mr, iova) & ~PAGE_MASK;
	}
	src->piece[src->num].mr = mr;
	src->piece[src->num].iova = iova;
	src->piece[src->num].len = len;
	src->piece[src->num].npages = held;
	src->num++;
	return 0;
copy:
	rxe2_mr_put(mr);
	return -E2BIG;
}

/*
 * rxe2_src_get() - the next len bytes of the SGE list at the cursor as
 * a source: looked up and checked as rxe2_sge_copy() would, each MR
 * referenced (a dereg waits for it) until rxe2_src_put().  0, -EINVAL,
 * -EACCES as rxe2_sge_copy(), or -E2BIG: not a list a source can hold
 * (too many pieces, an MR it cannot read in place); copy it instead.
 * Nothing is held on an error.
 */
int rxe2_src_get(struct rxe2_qp *qp, struct rxe2_sge_cursor *c, u32 len,
		 struct rxe2_mr_hold *hold, unsigned int nhold, u64 *seq,
		 struct rxe2_src *src)
{
	int ret;

	src->num = 0;
	src->err = false;
	rxe2_src_rewind(src);
	ret = rxe2_sge_walk(qp, c, len, 0, hold, nhold, seq, rxe2_src_add,
			    src);
	if (ret)
		rxe2_src_put(src);
	return ret;
}

/*
 * rxe2_src_of_mr() - [iova, iova + len) of an MR whose range the caller
 * checked, as a source (a READ's responder answering from its MR: the
 * requester's completer reads it in place), with a reference of its own
 * on mr until rxe2_src_put().  0, -E2BIG (read it into a packet) or
 * -EACCES (an ODP range with no page to read).
 */
int rxe2_src_of_mr(struct rxe2_mr *mr, u64 iova, u32 len,
		   struct rxe2_src *src)
{
	src->num = 0;
	src->err = false;
	rxe2_src_rewind(src);
	refcount_inc(&mr->ref);	/* the caller holds one */
	return rxe2_src_add(mr, iova, len, src);
}

void rxe2_src_put(struct rxe2_src *src)
{
	while (src->num) {
		typeof(src->piece[0]) *p = &src->piece[--src->num];

		while (p->npages)
			put_page(p->pages[--p->npages]);
		rxe2_mr_put(p->mr);
	}
}

/* n bytes at off of piece i of the source into buf: 0 or an errno */
static int rxe2_src_piece_read(struct rxe2_src *src, unsigned int i, u32 off,
			       void *buf, u32 n)
{
	u32 pos = src->piece[i].page_off + off;

	if (!src->piece[i].npages)
		return rxe2_mr_copy(src->piece[i].mr, src->piece[i].iova + off,
				    buf, n, false);
	while (n) {
		u32 k = min_t(u32, n, PAGE_SIZE - (pos & ~PAGE_MASK));

		if ((pos >> PAGE_SHIFT) >= src->piece[i].npages)
			return -EFAULT;
		memcpy_from_page(buf, src->piece[i].pages[pos >> PAGE_SHIFT],
				 pos & ~PAGE_MASK, k);
		buf += k;
		pos += k;
		n -= k;
	}
	return 0;
}

/*
 * rxe2_src_read() - copy the source's next len bytes to buf.  The
 * ranges were checked by rxe2_src_get(); a read past them, or one that
 * fails anyway, zero-fills and sets src->err (the sender fails its WQE).
 */
void rxe2_src_read(struct rxe2_src *src, void *buf, u32 len)
{
	while (len) {
		u32 n;

		if (src->idx >= src->num) {
			memset(buf, 0, len);
			src->err = true;
			return;
		}
		n = min(len, src->piece[src->idx].len - src->off);
		if (rxe2_src_piece_read(src, src->idx, src->off, buf, n)) {
			memset(buf, 0, n);
			src->err = true;
		}
		buf += n;
		len -= n;
		src->off += n;
		if (src->off == src->piece[src->idx].len) {
			src->idx++;
			src->off = 0;
		}
	}
}

/* read the source again from its start (a tap took a copy first) */
void rxe2_src_rewind(struct rxe2_src *src)
{
	src->idx = 0;
	src->off = 0;
}

static void rxe2_src_page(void *addr, u32 len, void *arg)
{
	rxe2_src_read(arg, addr, len);
}

/* rxe2_mr_copy() to the MR, from a source: a page of the target at a time */
int rxe2_mr_copy_src(struct rxe2_mr *mr, u64 iova, struct rxe2_src *src,
		     u32 len)
{
	if (!len)
		return 0;
	return rxe2_mr_access(mr, iova, len, true, rxe2_src_page, src);
}

static int rxe2_sge_place_one(struct rxe2_mr *mr, u64 iova, u32 len,
			      void *arg)
{
	int ret = rxe2_mr_copy_src(mr, iova, arg, len);

	rxe2_mr_put(mr);
	return ret ? -EACCES : 0;
}

/* rxe2_sge_copy() into the SGE list, from a source */
int rxe2_sge_copy_src(struct rxe2_qp *qp, struct rxe2_sge_cursor *c,
		      struct rxe2_src *src, u32 len,
		      struct rxe2_mr_hold *hold, unsigned int nhold, u64 *seq)
{
	return rxe2_sge_walk(qp, c, len, IB_ACCESS_LOCAL_WRITE, hold, nhold,
			     seq, rxe2_sge_place_one, src);
}
