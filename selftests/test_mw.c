// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: memory windows type 1 and 2B: WRITE/READ/FETCH_ADD through them, out-of-window and stale keys, rebind and unbind, bind errors, LOCAL_INV and SEND_WITH_INV, go-back-N over a bind, EBUSY dereg
 *
 * Memory windows, type 1 and type 2B, on one device (RC loopback).
 *
 * The window MR grants local write and MW_BIND only: every remote access
 * below is granted by a window.  Windows are bound through the
 * responder's QP b (a type 2B window answers only to that QP).
 *
 * - type 1 (ibv_bind_mw): WRITE, READ and FETCH_ADD through the window,
 *   byte-exact, nothing outside it touched; an access past its end, a
 *   stale rkey after a rebind, an access the window does not grant and
 *   an access after an unbind are REM_ACCESS_ERR.
 * - type 2 (IBV_WR_BIND_MW): WRITE byte-exact; another QP of the PD is
 *   refused (2B); LOCAL_INV and SEND_WITH_INV (IBV_WC_WITH_INV and the
 *   rkey in the receive completion) invalidate it, after which the rkey
 *   is REM_ACCESS_ERR.
 * - go-back-N over a type 2 bind: a SEND posted before it is RNR-NAKed
 *   after the bind has run; resending the SEND does not bind again
 *   (that would be a bind of a VALID window, MW_BIND_ERR, QP down).
 * - each bind error completes with IBV_WC_MW_BIND_ERR; the provider
 *   and libibverbs refuse what they can check before posting.
 * - an MR with a bound window cannot be deregistered (EBUSY); a bound
 *   window can be deallocated, and its rkey dies with it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dp.h"
#include "tap.h"
#include "util.h"

#define LEN	8192
#define WOFF	256
#define WLEN	1024

static struct dp_dev dev;
static uint8_t *abuf, *wbuf;
static struct ibv_mr *amr, *wmr;
static uint32_t seed = 11;

static bool pair(struct dp_qp *a, struct dp_qp *b)
{
	return !dp_rc_pair(&dev, a, b);
}

static void unpair(struct dp_qp *a, struct dp_qp *b)
{
	dp_qp_free(a);
	dp_qp_free(b);
}

static int post_bind(struct ibv_qp *qp, uint64_t id, struct ibv_mw *mw,
		     uint32_t rkey, struct ibv_mr *mr, void *addr,
		     uint64_t len, unsigned int access)
{
	struct ibv_send_wr wr = { 0 }, *bad = NULL;

	wr.wr_id = id;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info.mr = mr;
	wr.bind_mw.bind_info.addr = (uintptr_t)addr;
	wr.bind_mw.bind_info.length = len;
	wr.bind_mw.bind_info.mw_access_flags = access;
	return ibv_post_send(qp, &wr, &bad);
}

static int bind1(struct ibv_qp *qp, uint64_t id, struct ibv_mw *mw,
		 struct ibv_mr *mr, void *addr, uint64_t len,
		 unsigned int access)
{
	struct ibv_mw_bind b = { 0 };

	b.wr_id = id;
	b.send_flags = IBV_SEND_SIGNALED;
	b.bind_info.mr = mr;
	b.bind_info.addr = (uintptr_t)addr;
	b.bind_info.length = len;
	b.bind_info.mw_access_flags = access;
	return ibv_bind_mw(qp, mw, &b);
}

/* one completion of wr_id with status (opcode checked on success) */
static bool want(struct ibv_cq *cq, uint64_t id, int opcode, int status,
		 const char *what)
{
	struct dp_wc_want w = dp_want(id, status ? -1 : opcode);

	w.status = status;
	return dp_expect(cq, &w, "%s: %s", what, dp_status_str(status));
}

/* a remote operation a -> window, its completion status */
static bool remote(struct dp_qp *a, uint64_t id, enum ibv_wr_opcode op,
		   uint32_t len, uint64_t raddr, uint32_t rkey, int status,
		   const char *what)
{
	static const int wc_op[] = {
		[IBV_WR_RDMA_WRITE] = IBV_WC_RDMA_WRITE,
		[IBV_WR_RDMA_READ] = IBV_WC_RDMA_READ,
		[IBV_WR_ATOMIC_FETCH_AND_ADD] = IBV_WC_FETCH_ADD,
	};

	if (!tap_ret_errno(dp_post_send1(a->qp, id, op, abuf, len, amr->lkey,
					 raddr, rkey, 0), 0,
			   "%s: post (rkey %#x)", what, rkey))
		return false;
	return want(a->scq, id, wc_op[op], status, what);
}

/* the window goes, then its MR can: both succeed */
static void dealloc_then_dereg(struct ibv_mw **mw, struct ibv_mr **mr,
			       const char *what)
{
	if (tap_ret_errno(ibv_dealloc_mw(*mw), 0, "%s: dealloc the window",
			  what))
		*mw = NULL;
	if (tap_ret_errno(ibv_dereg_mr(*mr), 0, "%s: dereg without windows",
			  what))
		*mr = NULL;
}

/* whatever a failed step left behind */
static void release(struct ibv_mw *mw, struct ibv_mr *mr)
{
	if (mw)
		ibv_dealloc_mw(mw);
	if (mr)
		ibv_dereg_mr(mr);
}

static uint64_t waddr(size_t off)
{
	return (uintptr_t)wbuf + off;
}

static void caps(void)
{
	struct ibv_device_attr attr;

	if (!tap_ret_errno(ibv_query_device(dev.ctx, &attr), 0,
			   "ibv_query_device"))
		return;
	tap_ok(attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW,
	       "device_cap_flags: MEM_WINDOW");
	tap_ok(attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B,
	       "device_cap_flags: MEM_WINDOW_TYPE_2B");
	tap_ok(attr.max_mw > 0, "max_mw %d", attr.max_mw);
}

static void type1(void)
{
	unsigned int all = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			   IBV_ACCESS_REMOTE_ATOMIC;
	struct ibv_mw *mw = ibv_alloc_mw(dev.pd, IBV_MW_TYPE_1);
	struct dp_qp a, b;
	uint32_t old;
	uint64_t v;

	if (!tap_ok(mw != NULL, "type 1: ibv_alloc_mw") || !pair(&a, &b))
		return;
	old = mw->rkey;
	memset(wbuf, 0, LEN);
	if (!tap_ret_errno(bind1(b.qp, 0x101, mw, wmr, wbuf + WOFF, WLEN, all),
			   0, "type 1: ibv_bind_mw") ||
	    !want(b.scq, 0x101, IBV_WC_BIND_MW, 0, "type 1: bind completes"))
		goto out;
	tap_ok(mw->rkey != old && (mw->rkey & ~0xffu) == (old & ~0xffu),
	       "type 1: new key part (%#x -> %#x)", old, mw->rkey);

	dp_fill(abuf, WLEN, ++seed);
	if (remote(&a, 0x102, IBV_WR_RDMA_WRITE, WLEN, waddr(WOFF), mw->rkey,
		   0, "type 1: WRITE through the window"))
		tap_ok(dp_verify(wbuf + WOFF, WLEN, seed) < 0 &&
		       dp_verify_byte(wbuf, WOFF, 0) < 0 &&
		       dp_verify_byte(wbuf + WOFF + WLEN,
				      LEN - WOFF - WLEN, 0) < 0,
		       "type 1: window written byte-exact, nothing outside");
	memset(abuf, 0, WLEN);
	if (remote(&a, 0x103, IBV_WR_RDMA_READ, WLEN, waddr(WOFF), mw->rkey,
		   0, "type 1: READ through the window"))
		tap_ok(dp_verify(abuf, WLEN, seed) < 0,
		       "type 1: READ byte-exact");
	memcpy(&v, wbuf + WOFF + 8, 8);
	if (remote(&a, 0x104, IBV_WR_ATOMIC_FETCH_AND_ADD, 8, waddr(WOFF + 8),
		   mw->rkey, 0, "type 1: FETCH_ADD through the window")) {
		uint64_t got, now;

		memcpy(&got, abuf, 8);
		memcpy(&now, wbuf + WOFF + 8, 8);
		tap_ok(got == v && now == v + 1,
		       "type 1: FETCH_ADD returned the old value, added 1");
	}
	/* 16 bytes of which the last 8 lie past the window */
	remote(&a, 0x105, IBV_WR_RDMA_WRITE, 16, waddr(WOFF + WLEN - 8),
	       mw->rkey, IBV_WC_REM_ACCESS_ERR,
	       "type 1: WRITE across the window's end");
	tap_ok(dp_verify_byte(wbuf + WOFF + WLEN, 8, 0) < 0,
	       "type 1: nothing written past the window");
	unpair(&a, &b);

	/* rebind: READ only, elsewhere; the old rkey is stale */
	if (!pair(&a, &b))
		goto out_mw;
	old = mw->rkey;
	if (!tap_ret_errno(bind1(b.qp, 0x111, mw, wmr, wbuf + 2048, 512,
				 IBV_ACCESS_REMOTE_READ), 0,
			   "type 1: rebind") ||
	    !want(b.scq, 0x111, IBV_WC_BIND_MW, 0, "type 1: rebind completes"))
		goto out;
	dp_fill(wbuf + 2048, 512, ++seed);
	if (remote(&a, 0x112, IBV_WR_RDMA_READ, 512, waddr(2048), mw->rkey, 0,
		   "type 1: READ through the rebound window"))
		tap_ok(dp_verify(abuf, 512, seed) < 0,
		       "type 1: READ after rebind byte-exact");
	remote(&a, 0x113, IBV_WR_RDMA_READ, 8, waddr(WOFF), old,
	       IBV_WC_REM_ACCESS_ERR, "type 1: the rkey before the rebind");
	unpair(&a, &b);
	if (!pair(&a, &b))
		goto out_mw;
	remote(&a, 0x114, IBV_WR_RDMA_WRITE, 8, waddr(2048), mw->rkey,
	       IBV_WC_REM_ACCESS_ERR, "type 1: WRITE a READ-only window");
	unpair(&a, &b);

	/* unbind: length 0, no MR */
	if (!pair(&a, &b))
		goto out_mw;
	old = mw->rkey;
	if (tap_ret_errno(bind1(b.qp, 0x121, mw, NULL, NULL, 0, 0), 0,
			  "type 1: unbind (length 0)") &&
	    want(b.scq, 0x121, IBV_WC_BIND_MW, 0, "type 1: unbind completes"))
		remote(&a, 0x122, IBV_WR_RDMA_READ, 8, waddr(2048), old,
		       IBV_WC_REM_ACCESS_ERR, "type 1: READ after unbind");
out:
	unpair(&a, &b);
out_mw:
	tap_ret_errno(ibv_dealloc_mw(mw), 0, "type 1: ibv_dealloc_mw");
}

static void type2(void)
{
	struct ibv_send_wr wr = { 0 }, *bad = NULL;
	struct ibv_sge sge = { .addr = 0, .length = 64, .lkey = 0 };
	struct ibv_mw *mw = ibv_alloc_mw(dev.pd, IBV_MW_TYPE_2);
	struct dp_wc_want w;
	struct dp_qp a, b, c, d;
	uint32_t rkey;

	if (!tap_ok(mw != NULL, "type 2: ibv_alloc_mw") || !pair(&a, &b))
		return;
	rkey = ibv_inc_rkey(mw->rkey);
	memset(wbuf, 0, LEN);
	if (!tap_ret_errno(post_bind(b.qp, 0x201, mw, rkey, wmr, wbuf + WOFF,
				     WLEN, IBV_ACCESS_REMOTE_WRITE), 0,
			   "type 2: post BIND_MW") ||
	    !want(b.scq, 0x201, IBV_WC_BIND_MW, 0, "type 2: bind completes"))
		goto out;
	dp_fill(abuf, WLEN, ++seed);
	if (remote(&a, 0x202, IBV_WR_RDMA_WRITE, WLEN, waddr(WOFF), rkey, 0,
		   "type 2: WRITE through the window"))
		tap_ok(dp_verify(wbuf + WOFF, WLEN, seed) < 0 &&
		       dp_verify_byte(wbuf, WOFF, 0) < 0,
		       "type 2: window written byte-exact");
	/* type 2B: only the QP it was bound through */
	if (pair(&c, &d)) {
		remote(&c, 0x203, IBV_WR_RDMA_WRITE, 8, waddr(WOFF), rkey,
		       IBV_WC_REM_ACCESS_ERR,
		       "type 2B: WRITE through another QP of the PD");
		unpair(&c, &d);
	}
	/* bound again while VALID */
	tap_ret_errno(post_bind(b.qp, 0x204, mw, ibv_inc_rkey(rkey), wmr,
				wbuf, 64, IBV_ACCESS_REMOTE_WRITE), 0,
		      "type 2: post a second BIND_MW");
	want(b.scq, 0x204, IBV_WC_BIND_MW, IBV_WC_MW_BIND_ERR,
	     "type 2: bind of a valid window");
	unpair(&a, &b);

	/* LOCAL_INV, then the rkey is stale */
	if (!pair(&a, &b))
		goto out_mw;
	wr.wr_id = 0x211;
	wr.opcode = IBV_WR_LOCAL_INV;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.invalidate_rkey = rkey;
	if (tap_ret_errno(ibv_post_send(b.qp, &wr, &bad), 0,
			  "type 2: post LOCAL_INV") &&
	    want(b.scq, 0x211, IBV_WC_LOCAL_INV, 0,
		 "type 2: LOCAL_INV completes"))
		remote(&a, 0x212, IBV_WR_RDMA_WRITE, 8, waddr(WOFF), rkey,
		       IBV_WC_REM_ACCESS_ERR,
		       "type 2: WRITE after LOCAL_INV");
	unpair(&a, &b);

	/* bind again (new key part), SEND_WITH_INV, stale */
	if (!pair(&a, &b))
		goto out_mw;
	rkey = ibv_inc_rkey(rkey);
	if (!tap_ret_errno(post_bind(b.qp, 0x221, mw, rkey, wmr, wbuf + WOFF,
				     WLEN, IBV_ACCESS_REMOTE_WRITE), 0,
			   "type 2: post BIND_MW after LOCAL_INV") ||
	    !want(b.scq, 0x221, IBV_WC_BIND_MW, 0,
		  "type 2: rebind after LOCAL_INV completes"))
		goto out;
	remote(&a, 0x222, IBV_WR_RDMA_WRITE, 8, waddr(WOFF), rkey, 0,
	       "type 2: WRITE through the rebound window");
	tap_ret_errno(dp_post_recv1(b.qp, 0x223, wbuf + 4096, 64, wmr->lkey),
		      0, "type 2: post receive");
	sge.addr = (uintptr_t)abuf;
	sge.lkey = amr->lkey;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0x224;
	wr.opcode = IBV_WR_SEND_WITH_INV;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.invalidate_rkey = rkey;
	if (tap_ret_errno(ibv_post_send(a.qp, &wr, &bad), 0,
			  "type 2: post SEND_WITH_INV")) {
		want(a.scq, 0x224, IBV_WC_SEND, 0, "type 2: SEND_WITH_INV");
		w = dp_want(0x223, IBV_WC_RECV);
		w.byte_len = 64;
		w.wc_flags = IBV_WC_WITH_INV;
		w.inv_rkey = rkey;
		dp_expect(b.rcq, &w,
			  "type 2: receive WITH_INV, invalidated rkey %#x",
			  rkey);
	}
	remote(&a, 0x225, IBV_WR_RDMA_WRITE, 8, waddr(WOFF), rkey,
	       IBV_WC_REM_ACCESS_ERR, "type 2: WRITE after SEND_WITH_INV");
out:
	unpair(&a, &b);
out_mw:
	tap_ret_errno(ibv_dealloc_mw(mw), 0, "type 2: ibv_dealloc_mw");
}

/*
 * b posts SEND, BIND_MW, SEND in one chain while a has no receive: the
 * first SEND draws RNR NAKs after b has run the bind, and every resend
 * passes over the bind again.  It must take effect once.
 */
static void type2_rewind(void)
{
	struct ibv_sge sge = { .addr = 0, .length = 64, .lkey = 0 };
	struct ibv_send_wr wr[3], *bad = NULL;
	struct ibv_mw *mw = ibv_alloc_mw(dev.pd, IBV_MW_TYPE_2);
	struct dp_qp a, b;
	uint32_t rkey;
	int i;

	if (!tap_ok(mw != NULL, "type 2 go-back-N: ibv_alloc_mw") ||
	    !pair(&a, &b))
		goto out_mw;
	rkey = ibv_inc_rkey(mw->rkey);
	sge.addr = (uintptr_t)wbuf + 4096;
	sge.lkey = wmr->lkey;
	memset(wr, 0, sizeof(wr));
	for (i = 0; i < 3; i++) {
		wr[i].wr_id = 0x231 + i;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].next = i < 2 ? &wr[i + 1] : NULL;
	}
	wr[0].opcode = wr[2].opcode = IBV_WR_SEND;
	wr[0].sg_list = wr[2].sg_list = &sge;
	wr[0].num_sge = wr[2].num_sge = 1;
	wr[1].opcode = IBV_WR_BIND_MW;
	wr[1].bind_mw.mw = mw;
	wr[1].bind_mw.rkey = rkey;
	wr[1].bind_mw.bind_info.mr = wmr;
	wr[1].bind_mw.bind_info.addr = (uintptr_t)wbuf + WOFF;
	wr[1].bind_mw.bind_info.length = WLEN;
	wr[1].bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	if (!tap_ret_errno(ibv_post_send(b.qp, wr, &bad), 0,
			   "type 2 go-back-N: post SEND, BIND_MW, SEND"))
		goto out;
	usleep(50 * 1000);	/* RNR NAKs meanwhile (rnr_retry 7) */
	tap_ok(!dp_post_recv1(a.qp, 0x234, abuf, 64, amr->lkey) &&
	       !dp_post_recv1(a.qp, 0x235, abuf + 64, 64, amr->lkey),
	       "type 2 go-back-N: receives posted 50 ms late");
	want(b.scq, 0x231, IBV_WC_SEND, 0,
	     "type 2 go-back-N: the RNR-NAKed SEND");
	want(b.scq, 0x232, IBV_WC_BIND_MW, 0,
	     "type 2 go-back-N: the bind behind it, run once");
	want(b.scq, 0x233, IBV_WC_SEND, 0,
	     "type 2 go-back-N: the SEND after it");
	want(a.rcq, 0x234, IBV_WC_RECV, 0, "type 2 go-back-N: receive 1");
	want(a.rcq, 0x235, IBV_WC_RECV, 0, "type 2 go-back-N: receive 2");
	memset(wbuf, 0, WOFF + WLEN);
	dp_fill(abuf, WLEN, ++seed);
	if (remote(&a, 0x236, IBV_WR_RDMA_WRITE, WLEN, waddr(WOFF), rkey, 0,
		   "type 2 go-back-N: WRITE through the window"))
		tap_ok(dp_verify(wbuf + WOFF, WLEN, seed) < 0 &&
		       dp_verify_byte(wbuf, WOFF, 0) < 0,
		       "type 2 go-back-N: window written byte-exact");
out:
	unpair(&a, &b);
out_mw:
	if (mw)
		tap_ret_errno(ibv_dealloc_mw(mw), 0,
			      "type 2 go-back-N: ibv_dealloc_mw");
}

/* a type 2 bind on a fresh pair that must fail with MW_BIND_ERR */
static void bind_err(struct ibv_mw *mw, uint32_t rkey, struct ibv_mr *mr,
		     void *addr, uint64_t len, unsigned int access,
		     const char *what)
{
	struct dp_qp a, b;

	if (!pair(&a, &b))
		return;
	if (tap_ret_errno(post_bind(b.qp, 0x301, mw, rkey, mr, addr, len,
				    access), 0, "%s: post", what))
		want(b.scq, 0x301, -1, IBV_WC_MW_BIND_ERR, what);
	unpair(&a, &b);
}

static void bind_errors(void)
{
	struct ibv_pd *pd2 = ibv_alloc_pd(dev.ctx);
	struct ibv_mw *mw = ibv_alloc_mw(dev.pd, IBV_MW_TYPE_2);
	struct ibv_mw *mw1 = ibv_alloc_mw(dev.pd, IBV_MW_TYPE_1);
	struct ibv_mw *mw_pd2 = pd2 ? ibv_alloc_mw(pd2, IBV_MW_TYPE_2) : NULL;
	struct ibv_mr *nobind, *nolocal, *mr_pd2;
	unsigned int rw = IBV_ACCESS_REMOTE_WRITE;
	uint32_t rkey;
	struct dp_qp a, b;

	if (!tap_ok(pd2 && mw && mw1 && mw_pd2, "bind errors: setup"))
		return;
	rkey = ibv_inc_rkey(mw->rkey);
	nobind = dp_reg(dev.pd, wbuf, LEN, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE);
	nolocal = dp_reg(dev.pd, wbuf, LEN, IBV_ACCESS_REMOTE_READ |
			 IBV_ACCESS_MW_BIND);
	mr_pd2 = dp_reg(pd2, wbuf, LEN, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_MW_BIND);

	bind_err(mw, rkey, nobind, wbuf, 64, rw,
		 "bind: MR without IBV_ACCESS_MW_BIND");
	bind_err(mw, rkey, wmr, wbuf + LEN - 100, 200, rw,
		 "bind: window beyond the MR's end");
	bind_err(mw, rkey, wmr, wbuf - 64, 128, rw,
		 "bind: window before the MR's start");
	bind_err(mw, rkey, mr_pd2, wbuf, 64, rw,
		 "bind: MR of another PD");
	bind_err(mw_pd2, ibv_inc_rkey(mw_pd2->rkey), mr_pd2, wbuf, 64, rw,
		 "bind: type 2 window of another PD than the QP");
	bind_err(mw, rkey, wmr, wbuf, 0, rw, "bind: type 2 of length 0");
	bind_err(mw, rkey, nolocal, wbuf, 64, rw,
		 "bind: remote write on an MR without local write");
	bind_err(mw, rkey, nolocal, wbuf, 64, IBV_ACCESS_REMOTE_ATOMIC,
		 "bind: remote atomic on an MR without local write");
	bind_err(mw, rkey ^ 0x100, wmr, wbuf, 64, rw,
		 "bind: key with another window's index");

	/* checked before anything is posted */
	if (pair(&a, &b)) {
		tap_ret_errno(post_bind(b.qp, 0x311, mw1, ibv_inc_rkey(mw1->rkey),
					wmr, wbuf, 64, rw), EINVAL,
			      "bind: type 1 through IBV_WR_BIND_MW: EINVAL");
		tap_ret_errno(bind1(b.qp, 0x312, mw1, mr_pd2, wbuf, 64, rw),
			      EPERM,
			      "bind: ibv_bind_mw with an MR of another PD: EPERM");
		tap_ret_errno(bind1(b.qp, 0x313, mw, wmr, wbuf, 64, rw), EINVAL,
			      "bind: ibv_bind_mw of a type 2 window: EINVAL");
		unpair(&a, &b);
	}
	/* zero-based is for type 2 windows only */
	if (pair(&a, &b)) {
		if (tap_ret_errno(bind1(b.qp, 0x314, mw1, wmr, wbuf, 64,
					rw | IBV_ACCESS_ZERO_BASED), 0,
				  "bind: post a zero-based type 1 bind"))
			want(b.scq, 0x314, -1, IBV_WC_MW_BIND_ERR,
			     "bind: zero-based type 1 window");
		unpair(&a, &b);
	}
	/* a read-only window on the read-only MR is fine (type 1) */
	if (pair(&a, &b)) {
		if (tap_ret_errno(bind1(b.qp, 0x321, mw1, nolocal, wbuf, 64,
					IBV_ACCESS_REMOTE_READ), 0,
				  "bind: READ window on an MR without local write"))
			want(b.scq, 0x321, IBV_WC_BIND_MW, 0,
			     "bind: READ window on an MR without local write");
		unpair(&a, &b);
	}
	tap_ret_errno(ibv_dealloc_mw(mw1), 0, "bind errors: dealloc type 1");
	tap_ret_errno(ibv_dereg_mr(nolocal), 0,
		      "bind errors: dereg after the window went");
	ibv_dealloc_mw(mw);
	ibv_dealloc_mw(mw_pd2);
	ibv_dereg_mr(nobind);
	ibv_dereg_mr(mr_pd2);
	ibv_dealloc_pd(pd2);
}

/*
 * A zero-based type 2 window: remote addresses are offsets from its
 * start, whatever the MR's addresses are.
 */
static void zero_based(void)
{
	unsigned int all = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			   IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_ZERO_BASED;
	struct ibv_mw *mw = ibv_alloc_mw(dev.pd, IBV_MW_TYPE_2);
	struct dp_qp a, b;
	uint64_t v, got, now;
	uint32_t rkey;

	if (!tap_ok(mw != NULL, "zero-based: ibv_alloc_mw") || !pair(&a, &b))
		goto out_mw;
	rkey = ibv_inc_rkey(mw->rkey);
	memset(wbuf, 0, LEN);
	if (!tap_ret_errno(post_bind(b.qp, 0x501, mw, rkey, wmr, wbuf + WOFF,
				     WLEN, all), 0, "zero-based: post BIND_MW") ||
	    !want(b.scq, 0x501, IBV_WC_BIND_MW, 0, "zero-based: bind completes"))
		goto out;
	dp_fill(abuf, WLEN - 64, ++seed);
	if (remote(&a, 0x502, IBV_WR_RDMA_WRITE, WLEN - 64, 64, rkey, 0,
		   "zero-based: WRITE at offset 64"))
		tap_ok(dp_verify(wbuf + WOFF + 64, WLEN - 64, seed) < 0 &&
		       dp_verify_byte(wbuf, WOFF + 64, 0) < 0 &&
		       dp_verify_byte(wbuf + WOFF + WLEN,
				      LEN - WOFF - WLEN, 0) < 0,
		       "zero-based: landed at window start + 64, nothing outside");
	memset(abuf, 0, WLEN);
	if (remote(&a, 0x503, IBV_WR_RDMA_READ, WLEN - 64, 64, rkey, 0,
		   "zero-based: READ at offset 64"))
		tap_ok(dp_verify(abuf, WLEN - 64, seed) < 0,
		       "zero-based: READ byte-exact");
	memcpy(&v, wbuf + WOFF + 8, 8);
	if (remote(&a, 0x504, IBV_WR_ATOMIC_FETCH_AND_ADD, 8, 8, rkey, 0,
		   "zero-based: FETCH_ADD at offset 8")) {
		memcpy(&got, abuf, 8);
		memcpy(&now, wbuf + WOFF + 8, 8);
		tap_ok(got == v && now == v + 1,
		       "zero-based: FETCH_ADD on window start + 8");
	}
	remote(&a, 0x505, IBV_WR_RDMA_WRITE, 16, WLEN - 8, rkey,
	       IBV_WC_REM_ACCESS_ERR, "zero-based: WRITE across the end");
	unpair(&a, &b);
	if (!pair(&a, &b))
		goto out_mw;
	/* the MR's own address is past the window's length */
	remote(&a, 0x506, IBV_WR_RDMA_READ, 8, waddr(WOFF), rkey,
	       IBV_WC_REM_ACCESS_ERR, "zero-based: READ at the MR's address");
	unpair(&a, &b);

	/* a window that starts 4 bytes into an 8-byte word: atomics fail */
	if (!pair(&a, &b))
		goto out_mw;
	if (tap_ret_errno(ibv_dealloc_mw(mw), 0, "zero-based: dealloc"))
		mw = ibv_alloc_mw(dev.pd, IBV_MW_TYPE_2);
	if (!tap_ok(mw != NULL, "zero-based: second window"))
		goto out;
	rkey = ibv_inc_rkey(mw->rkey);
	if (tap_ret_errno(post_bind(b.qp, 0x511, mw, rkey, wmr,
				    wbuf + WOFF + 4, 64, all), 0,
			  "zero-based: post an unaligned bind") &&
	    want(b.scq, 0x511, IBV_WC_BIND_MW, 0,
		 "zero-based: unaligned window bound"))
		remote(&a, 0x512, IBV_WR_ATOMIC_FETCH_AND_ADD, 8, 0, rkey,
		       IBV_WC_REM_INV_REQ_ERR,
		       "zero-based: atomic on an unaligned MR address");
out:
	unpair(&a, &b);
out_mw:
	if (mw)
		tap_ret_errno(ibv_dealloc_mw(mw), 0, "zero-based: dealloc");
}

/*
 * A zero-based window over an ODP MR: a READ faults the window's pages
 * into the device at their MR addresses, not at the wire's offsets.
 */
static void zero_based_odp(void)
{
	uint8_t *buf = mmap(NULL, LEN, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct ibv_mw *mw = ibv_alloc_mw(dev.pd, IBV_MW_TYPE_2);
	struct ibv_mr *mr = NULL;
	struct dp_qp a, b;
	uint32_t rkey;

	if (!tap_ok(buf != MAP_FAILED && mw, "zero-based ODP: setup"))
		goto out;
	mr = ibv_reg_mr(dev.pd, buf, LEN, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_MW_BIND | IBV_ACCESS_ON_DEMAND);
	if (!tap_ok(mr != NULL, "zero-based ODP: ibv_reg_mr(ON_DEMAND): %s",
		    mr ? "ok" : strerror(errno)) || !pair(&a, &b))
		goto out;
	/* in the process, not yet in the device */
	dp_fill(buf + WOFF, WLEN, ++seed);
	rkey = ibv_inc_rkey(mw->rkey);
	if (tap_ret_errno(post_bind(b.qp, 0x521, mw, rkey, mr, buf + WOFF,
				    WLEN, IBV_ACCESS_REMOTE_READ |
				    IBV_ACCESS_ZERO_BASED), 0,
			  "zero-based ODP: post BIND_MW") &&
	    want(b.scq, 0x521, IBV_WC_BIND_MW, 0, "zero-based ODP: bound")) {
		memset(abuf, 0, WLEN);
		if (remote(&a, 0x522, IBV_WR_RDMA_READ, WLEN - 64, 64, rkey, 0,
			   "zero-based ODP: READ at offset 64"))
			tap_ok(memcmp(abuf, buf + WOFF + 64, WLEN - 64) == 0,
			       "zero-based ODP: READ byte-exact");
	}
	unpair(&a, &b);
	dealloc_then_dereg(&mw, &mr, "zero-based ODP");
out:
	release(mw, mr);
	if (buf != MAP_FAILED)
		munmap(buf, LEN);
}

/*
 * A type 2 window outlives the QP it was bound through, answering to no
 * other QP, and still keeps its MR until it is deallocated.
 */
static void orphan_window(void)
{
	struct ibv_mw *mw = ibv_alloc_mw(dev.pd, IBV_MW_TYPE_2);
	struct ibv_mr *mr = dp_reg(dev.pd, wbuf, LEN, IBV_ACCESS_LOCAL_WRITE |
				   IBV_ACCESS_MW_BIND);
	struct dp_qp a, b;
	uint32_t rkey;
	int i;

	if (!tap_ok(mw && mr, "orphan: setup") || !pair(&a, &b))
		goto out;
	rkey = ibv_inc_rkey(mw->rkey);
	if (!tap_ret_errno(post_bind(b.qp, 0x601, mw, rkey, mr, wbuf, 64,
				     IBV_ACCESS_REMOTE_READ), 0,
			   "orphan: post BIND_MW") ||
	    !want(b.scq, 0x601, IBV_WC_BIND_MW, 0, "orphan: bound")) {
		unpair(&a, &b);
		goto out;
	}
	unpair(&a, &b);
	/* every new QP, whatever number it gets, is refused */
	for (i = 0; i < 4; i++) {
		if (!pair(&a, &b))
			break;
		remote(&a, 0x602 + i, IBV_WR_RDMA_READ, 8, waddr(0), rkey,
		       IBV_WC_REM_ACCESS_ERR,
		       "orphan: READ through a window of a destroyed QP");
		unpair(&a, &b);
	}
	tap_ret_errno(ibv_dereg_mr(mr), EBUSY,
		      "orphan: the window still holds its MR");
	dealloc_then_dereg(&mw, &mr, "orphan");
out:
	release(mw, mr);
}

/* dereg with windows bound; dealloc of bound windows */
static void lifetimes(void)
{
	struct ibv_mr *mr = dp_reg(dev.pd, wbuf, LEN, IBV_ACCESS_LOCAL_WRITE |
				   IBV_ACCESS_MW_BIND);
	struct ibv_mw *mw1 = ibv_alloc_mw(dev.pd, IBV_MW_TYPE_1);
	struct ibv_mw *mw2 = ibv_alloc_mw(dev.pd, IBV_MW_TYPE_2);
	struct dp_qp a, b;
	uint32_t rkey;

	if (!tap_ok(mw1 && mw2, "lifetimes: two windows") || !pair(&a, &b))
		return;
	rkey = ibv_inc_rkey(mw2->rkey);
	if (!tap_ret_errno(bind1(b.qp, 0x401, mw1, mr, wbuf, 64,
				 IBV_ACCESS_REMOTE_READ), 0,
			   "lifetimes: bind type 1") ||
	    !want(b.scq, 0x401, IBV_WC_BIND_MW, 0, "lifetimes: type 1 bound") ||
	    !tap_ret_errno(post_bind(b.qp, 0x402, mw2, rkey, mr, wbuf + 64, 64,
				     IBV_ACCESS_REMOTE_READ), 0,
			   "lifetimes: bind type 2") ||
	    !want(b.scq, 0x402, IBV_WC_BIND_MW, 0, "lifetimes: type 2 bound"))
		goto out;
	tap_ret_errno(ibv_dereg_mr(mr), EBUSY,
		      "lifetimes: dereg of an MR with two bound windows");
	tap_ret_errno(ibv_dealloc_mw(mw2), 0,
		      "lifetimes: dealloc a bound type 2 window");
	mw2 = NULL;
	remote(&a, 0x403, IBV_WR_RDMA_READ, 8, waddr(64), rkey,
	       IBV_WC_REM_ACCESS_ERR,
	       "lifetimes: READ through a deallocated window");
	tap_ret_errno(ibv_dereg_mr(mr), EBUSY,
		      "lifetimes: dereg with the type 1 window still bound");
	tap_ret_errno(ibv_dealloc_mw(mw1), 0,
		      "lifetimes: dealloc a bound type 1 window");
	mw1 = NULL;
	if (tap_ret_errno(ibv_dereg_mr(mr), 0,
			  "lifetimes: dereg once no window is bound"))
		mr = NULL;
out:
	unpair(&a, &b);
	if (mw1)
		ibv_dealloc_mw(mw1);
	if (mw2)
		ibv_dealloc_mw(mw2);
	if (mr)
		ibv_dereg_mr(mr);
}

/*
 * ibv_rereg_mr of an MR with a bound window is refused (EBUSY); a window
 * bound after a rereg still keeps the MR from being deregistered.
 */
static void rereg_windows(void)
{
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND;
	struct ibv_mr *mr = dp_reg(dev.pd, wbuf, LEN, acc);
	struct ibv_mw *mw = ibv_alloc_mw(dev.pd, IBV_MW_TYPE_1);
	struct dp_qp a, b;
	int ret;

	if (!tap_ok(mr && mw, "rereg: an MR and a type 1 window") ||
	    !pair(&a, &b))
		goto out;
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   acc | IBV_ACCESS_REMOTE_READ);
	tap_ok(ret == 0, "rereg: access change with no window bound (%d)",
	       ret);
	if (!tap_ret_errno(bind1(b.qp, 0x501, mw, mr, wbuf, 64,
				 IBV_ACCESS_REMOTE_READ), 0,
			   "rereg: bind type 1 after the rereg") ||
	    !want(b.scq, 0x501, IBV_WC_BIND_MW, 0, "rereg: window bound")) {
		unpair(&a, &b);
		goto out;
	}
	errno = 0;
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, acc);
	tap_ok(ret == IBV_REREG_MR_ERR_CMD && errno == EBUSY,
	       "rereg: refused with a bound window (%d, errno %d)", ret, errno);
	tap_ret_errno(ibv_dereg_mr(mr), EBUSY,
		      "rereg: dereg of the re-registered MR with a bound window");
	remote(&a, 0x502, IBV_WR_RDMA_READ, 8, waddr(0), mw->rkey,
	       IBV_WC_SUCCESS, "rereg: READ through the window still works");
	unpair(&a, &b);
	dealloc_then_dereg(&mw, &mr, "rereg");
out:
	release(mw, mr);
}

int main(void)
{
	const char *name = getenv("RXE2_DEV");

	dp_open(&dev, name ? name : "rxe2_0");
	abuf = dp_alloc(LEN);
	wbuf = dp_alloc(LEN);
	amr = dp_reg(dev.pd, abuf, LEN, DP_ACCESS_ALL);
	/* no remote access: only windows open it */
	wmr = dp_reg(dev.pd, wbuf, LEN, IBV_ACCESS_LOCAL_WRITE |
		     IBV_ACCESS_MW_BIND);

	caps();
	type1();
	type2();
	type2_rewind();
	bind_errors();
	lifetimes();
	zero_based();
	zero_based_odp();
	orphan_window();
	rereg_windows();

	ibv_dereg_mr(amr);
	ibv_dereg_mr(wmr);
	free(abuf);
	free(wbuf);
	dp_close(&dev);
	return tap_done();
}
