// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: on-demand paging: every RC opcode and UC/UD/SRQ sends on ODP MRs, fault and invalidation counters, munmap/mremap/PROT_READ under MRs, fork, ibv_advise_mr, the implicit MR, rereg, ATOMIC WRITE, FLUSH
 *
 * On-demand paging: MRs registered with IBV_ACCESS_ON_DEMAND pin nothing
 * and follow the process's page tables.  Checked here, byte for byte:
 * every RC opcode with ODP MRs on the local and the remote side, UC and
 * UD sends and an SRQ receive into ODP buffers; the first touch of
 * never-touched pages (num_page_faults / num_page_fault_pages exact);
 * MADV_DONTNEED (invalidation counters, data reads back as zeros, the
 * next access faults again); munmap, mremap and a read-only mapping
 * under an MR (REM_ACCESS_ERR / LOC_PROT_ERR, num_failed_resolutions,
 * nothing else written), WRITEs racing munmap; fork (the child's writes
 * stay in the child); a process exiting with ODP MRs in use; ibv_advise_mr
 * with every errno of ibv_advise_mr(3), FLUSH, async and NO_FAULT
 * prefetches and their counters; the implicit MR (0, SIZE_MAX) over
 * malloc'ed memory, its 64 MiB children freed when their chunk is
 * unmapped (and made anew when it is mapped again, also racing WRITEs);
 * ibv_rereg_mr of an ODP MR under traffic; IBTA 1.5 ATOMIC WRITE and
 * FLUSH into explicit and implicit ODP MRs (their odp_caps bits, bytes,
 * first touch, a hole).  Counters are read from
 * ports/1/hw_counters before and after.  Page migration is
 * test_odp_migrate (two NUMA nodes).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/rxe2dv.h>

#include "dp.h"
#include "tap.h"
#include "util.h"

/* libibverbs 56's names of the uverbs ABI's bits, which 44 lacks */
#ifndef IBV_ODP_SUPPORT_FLUSH
#define IBV_ODP_SUPPORT_FLUSH		(1 << 6)
#define IBV_ODP_SUPPORT_ATOMIC_WRITE	(1 << 7)
#endif
#define WC_FLUSH	8	/* IBV_WC_FLUSH of rdma-core 45 */

#define PG	4096
#define NPG	8
#define LEN	(NPG * PG)
#define ODP	IBV_ACCESS_ON_DEMAND
#define ALL	(DP_ACCESS_ALL | ODP)

static struct dp_dev d;
static struct ibv_pd *pd2;
static struct dp_qp a, b;		/* RC loopback pair */
static uint8_t *pbuf;			/* pinned helper memory */
static struct ibv_mr *pmr;
static uint64_t wr_id = 0x100;
static uint32_t seed = 11;
static atomic_bool stop;

static long cnt(const char *name)
{
	return dp_hw_counter(d.name, name);
}

/* fresh anonymous pages, never touched by anyone */
static uint8_t *fresh(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		tap_bail("mmap: %s", strerror(errno));
	return p;
}

static struct ibv_mr *odp_reg(struct ibv_pd *pd, void *buf, size_t len,
			      int access)
{
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, len, access);

	if (!mr)
		tap_bail("ODP reg_mr: %s", strerror(errno));
	return mr;
}

static bool one(struct dp_qp *q, enum ibv_wr_opcode op, void *addr,
		uint32_t len, uint32_t lkey, void *raddr, uint32_t rkey,
		int status, const char *what)
{
	int wop = op == IBV_WR_RDMA_READ ? IBV_WC_RDMA_READ :
		  op == IBV_WR_SEND ? IBV_WC_SEND :
		  op == IBV_WR_ATOMIC_FETCH_AND_ADD ? IBV_WC_FETCH_ADD :
		  op == IBV_WR_ATOMIC_CMP_AND_SWP ? IBV_WC_COMP_SWAP :
		  IBV_WC_RDMA_WRITE;
	struct dp_wc_want w = dp_want(++wr_id, wop);

	w.status = status;
	if (status != IBV_WC_SUCCESS)
		w.opcode = -1;
	if (dp_post_send1(q->qp, wr_id, op, addr, len, lkey,
			  (uintptr_t)raddr, rkey, 0)) {
		tap_ok(false, "%s: post: %s", what, strerror(errno));
		return false;
	}
	return dp_expect(q->scq, &w, "%s", what);
}

static void new_pair(void)
{
	dp_qp_free(&a);
	dp_qp_free(&b);
	if (dp_rc_pair(&d, &a, &b))
		tap_bail("RC pair: %s", strerror(errno));
}

/*
 * 100 RDMA WRITEs of len bytes from pbuf, the i-th to raddr + (i % spread)
 * pages, while the thread fn changes the mapping under them: each must
 * complete with SUCCESS or REM_ACCESS_ERR (a new pair after an error).
 */
static void writes_racing(void *(*fn)(void *), uint32_t len, uint8_t *raddr,
			  int spread, uint32_t rkey, const char *what)
{
	int ok = 0, refused = 0, other = 0, i;
	pthread_t t;

	atomic_store(&stop, false);
	if (pthread_create(&t, NULL, fn, NULL))
		tap_bail("pthread_create");
	dp_fill(pbuf, len, ++seed);
	for (i = 0; i < 100; i++) {
		struct ibv_wc wc;

		if (dp_post_send1(a.qp, ++wr_id, IBV_WR_RDMA_WRITE, pbuf, len,
				  pmr->lkey,
				  (uintptr_t)(raddr + (i % spread) * PG), rkey,
				  0) ||
		    dp_poll(a.scq, &wc, 1, DP_WAIT_MS) != 1) {
			other++;
			break;
		}
		if (wc.status == IBV_WC_SUCCESS) {
			ok++;
		} else {
			if (wc.status == IBV_WC_REM_ACCESS_ERR)
				refused++;
			else
				other++;
			new_pair();
		}
	}
	atomic_store(&stop, true);
	pthread_join(t, NULL);
	tap_diag("%d WRITEs landed, %d refused", ok, refused);
	tap_ok(other == 0 && ok + refused == 100,
	       "WRITEs racing %s: each SUCCESS or REM_ACCESS_ERR", what);
}

static void test_caps(void)
{
	struct ibv_device_attr_ex ax;
	uint32_t rc = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
		      IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ |
		      IBV_ODP_SUPPORT_ATOMIC | IBV_ODP_SUPPORT_SRQ_RECV |
		      IBV_ODP_SUPPORT_FLUSH | IBV_ODP_SUPPORT_ATOMIC_WRITE;

	if (ibv_query_device_ex(d.ctx, NULL, &ax))
		tap_bail("query_device_ex: %s", strerror(errno));
	tap_ok(ax.odp_caps.general_caps ==
	       (IBV_ODP_SUPPORT | IBV_ODP_SUPPORT_IMPLICIT),
	       "odp_caps.general_caps: ODP and implicit ODP (0x%llx)",
	       (unsigned long long)ax.odp_caps.general_caps);
	tap_ok(ax.odp_caps.per_transport_caps.rc_odp_caps == rc,
	       "RC: SEND RECV WRITE READ ATOMIC SRQ_RECV FLUSH ATOMIC_WRITE (0x%x)",
	       ax.odp_caps.per_transport_caps.rc_odp_caps);
	tap_ok(ax.odp_caps.per_transport_caps.uc_odp_caps ==
	       (IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
		IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_SRQ_RECV),
	       "UC: SEND RECV WRITE SRQ_RECV (0x%x)",
	       ax.odp_caps.per_transport_caps.uc_odp_caps);
	tap_ok(ax.odp_caps.per_transport_caps.ud_odp_caps ==
	       (IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
		IBV_ODP_SUPPORT_SRQ_RECV),
	       "UD: SEND RECV SRQ_RECV (0x%x)",
	       ax.odp_caps.per_transport_caps.ud_odp_caps);
}

static void test_reg_counters(void)
{
	long mrs = cnt("num_odp_mrs"), pages = cnt("num_odp_mr_pages");
	uint8_t *m = fresh(LEN + PG);
	struct ibv_mr *mr;

	/* starts mid-page: NPG + 1 pages */
	mr = odp_reg(d.pd, m + 100, LEN, ALL);
	tap_ret(cnt("num_odp_mrs") - mrs, 1, "reg: num_odp_mrs +1");
	tap_ret(dp_sh("rdma statistic show link %s/1 | grep -q 'num_odp_mrs %ld'",
		      d.name, mrs + 1), 0,
		"rdma statistic show link shows num_odp_mrs %ld", mrs + 1);
	tap_ret(cnt("num_odp_mr_pages") - pages, NPG + 1,
		"reg: num_odp_mr_pages + the pages it spans");
	tap_ret_errno(ibv_dereg_mr(mr), 0, "dereg the ODP MR");
	tap_ret(cnt("num_odp_mrs") - mrs, 0, "dereg: num_odp_mrs back");
	tap_ret(cnt("num_odp_mr_pages") - pages, 0,
		"dereg: num_odp_mr_pages back");
	munmap(m, LEN + PG);
}

/* every RC opcode, ODP on both sides; first touch counted exactly */
static void test_rc_ops(void)
{
	uint8_t *src = fresh(LEN), *dst = fresh(LEN);
	struct ibv_mr *smr = odp_reg(d.pd, src, LEN, ALL);
	struct ibv_mr *dmr = odp_reg(d.pd, dst, LEN, ALL);
	long f0, fp0;
	uint64_t *v;

	/* remote side only: pinned source, never-touched ODP target */
	dp_fill(pbuf, LEN, ++seed);
	f0 = cnt("num_page_faults");
	fp0 = cnt("num_page_fault_pages");
	if (one(&a, IBV_WR_RDMA_WRITE, pbuf, LEN, pmr->lkey, dst, dmr->rkey,
		IBV_WC_SUCCESS, "RDMA WRITE into never-touched ODP pages"))
		tap_ret(dp_verify(dst, LEN, seed), -1,
			"the WRITE is in the ODP MR byte for byte");
	tap_ok(cnt("num_page_faults") > f0,
	       "first touch: num_page_faults moved");
	tap_ret(cnt("num_page_fault_pages") - fp0, NPG,
		"first touch: num_page_fault_pages + exactly the %d pages",
		NPG);
	f0 = cnt("num_page_faults");
	one(&a, IBV_WR_RDMA_WRITE, pbuf, LEN, pmr->lkey, dst, dmr->rkey,
	    IBV_WC_SUCCESS, "RDMA WRITE again");
	tap_ret(cnt("num_page_faults") - f0, 0,
		"mapped pages: no page fault the second time");

	/* local ODP SGE (the process wrote it: the device has not) */
	dp_fill(src, LEN, ++seed);
	memset(dst, 0, LEN);
	if (one(&a, IBV_WR_RDMA_WRITE, src + 7, LEN - 7, smr->lkey, dst + 3,
		dmr->rkey, IBV_WC_SUCCESS, "RDMA WRITE ODP -> ODP, unaligned"))
		tap_ok(!memcmp(dst + 3, src + 7, LEN - 7),
		       "ODP -> ODP WRITE byte for byte");

	dp_fill(dst, LEN, ++seed);
	memset(src, 0, LEN);
	if (one(&a, IBV_WR_RDMA_READ, src, LEN, smr->lkey, dst, dmr->rkey,
		IBV_WC_SUCCESS, "RDMA READ ODP -> ODP"))
		tap_ret(dp_verify(src, LEN, seed), -1,
			"ODP READ byte for byte");

	dp_fill(src, 3000, ++seed);
	memset(dst, 0, LEN);
	if (dp_post_recv1(b.qp, 77, dst + 5, 5000, dmr->lkey))
		tap_bail("post_recv: %s", strerror(errno));
	if (one(&a, IBV_WR_SEND, src, 3000, smr->lkey, NULL, 0,
		IBV_WC_SUCCESS, "SEND from ODP into an ODP receive")) {
		struct dp_wc_want w = dp_want(77, IBV_WC_RECV);

		w.byte_len = 3000;
		dp_expect(b.rcq, &w, "the receive completes, 3000 bytes");
		tap_ret(dp_verify(dst + 5, 3000, seed), -1,
			"SEND into ODP byte for byte");
	}

	v = (uint64_t *)(dst + 2 * PG + 8);
	*v = 41;
	if (one(&a, IBV_WR_ATOMIC_FETCH_AND_ADD, src, 8, smr->lkey, v,
		dmr->rkey, IBV_WC_SUCCESS, "FETCH_ADD on ODP, result to ODP"))
		tap_ok(*v == 42 && *(uint64_t *)src == 41,
		       "FETCH_ADD: 41 + 1, original 41 returned (%llu %llu)",
		       (unsigned long long)*v,
		       (unsigned long long)*(uint64_t *)src);
	/* compare_add 1 (dp_post_send1), swap 0 */
	*v = 1;
	if (one(&a, IBV_WR_ATOMIC_CMP_AND_SWP, src + 8, 8, smr->lkey, v,
		dmr->rkey, IBV_WC_SUCCESS, "CMP_SWAP on ODP"))
		tap_ok(*v == 0 && *(uint64_t *)(src + 8) == 1,
		       "CMP_SWAP: swapped, original returned");

	ibv_dereg_mr(smr);
	ibv_dereg_mr(dmr);
	munmap(src, LEN);
	munmap(dst, LEN);
}

/*
 * ATOMIC WRITE and FLUSH (IBTA 1.5) from QP px (extended API, on a)
 * into ODP MRs: a fresh explicit MR, a hole in it, and the implicit MR.
 */
static struct ibv_qp *px, *pb;
static struct ibv_qp_ex *pxx;
static struct ibv_cq *pxcq;

static bool place_pair(void)
{
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_ATOMIC_WRITE |
				  RXE2DV_QP_EX_WITH_FLUSH,
	};
	struct ibv_qp_cap cap = ia.cap;
	struct dp_conn c;

	pxcq = ibv_create_cq(d.ctx, 32, NULL, NULL, 0);
	if (!pxcq)
		tap_bail("create_cq: %s", strerror(errno));
	ia.send_cq = ia.recv_cq = pxcq;
	ia.pd = d.pd;
	px = ibv_create_qp_ex(d.ctx, &ia);
	pb = dp_create_qp(&d, IBV_QPT_RC, pxcq, pxcq, NULL, &cap);
	if (!px || !pb)
		tap_bail("placement QPs: %s", strerror(errno));
	pxx = ibv_qp_to_qp_ex(px);
	dp_conn_default(&c);
	c.rd_atomic = 4;
	if (dp_connect(px, &d, &d.gid, pb->qp_num, &c))
		return tap_ok(false, "connect px: %s", strerror(errno));
	c.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		   IBV_ACCESS_REMOTE_ATOMIC | RXE2DV_ACCESS_FLUSH_GLOBAL;
	if (dp_connect(pb, &d, &d.gid, px->qp_num, &c))
		return tap_ok(false, "connect pb: %s", strerror(errno));
	return true;
}

static void place_free(void)
{
	ibv_destroy_qp(px);
	ibv_destroy_qp(pb);
	ibv_destroy_cq(pxcq);
}

static bool place_done(uint64_t id, int status, int opcode, const char *what)
{
	struct dp_wc_want w = dp_want(id, opcode);

	w.status = status;
	if (status != IBV_WC_SUCCESS)
		w.opcode = -1;
	return dp_expect(pxcq, &w, "%s", what);
}

static bool aw(uint32_t rkey, void *addr, uint64_t val, int status,
	       const char *what)
{
	ibv_wr_start(pxx);
	pxx->wr_id = ++wr_id;
	pxx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(pxx, rkey, (uintptr_t)addr, &val);
	if (ibv_wr_complete(pxx))
		return tap_ok(false, "%s: post: %s", what, strerror(errno));
	return place_done(wr_id, status, IBV_WC_ATOMIC_WRITE, what);
}

static bool flush(uint32_t rkey, void *addr, size_t len, uint8_t level,
		  int status, const char *what)
{
	ibv_wr_start(pxx);
	pxx->wr_id = ++wr_id;
	pxx->wr_flags = IBV_SEND_SIGNALED;
	rxe2dv_wr_flush(pxx, rkey, (uintptr_t)addr, len,
			RXE2DV_FLUSH_GLOBAL, level);
	if (ibv_wr_complete(pxx))
		return tap_ok(false, "%s: post: %s", what, strerror(errno));
	return place_done(wr_id, status, WC_FLUSH, what);
}

static void test_placement_odp(void)
{
	const int acc = ALL | RXE2DV_ACCESS_FLUSH_GLOBAL;
	uint8_t *m = fresh(LEN), *heap;
	struct ibv_mr *mr, *imr;
	long fp0;
	uint64_t *v;

	if (!place_pair())
		return;
	mr = odp_reg(d.pd, m, LEN, acc);

	/* first touch by an ATOMIC WRITE: one page faulted in */
	v = (uint64_t *)(m + 3 * PG + 64);
	fp0 = cnt("num_page_fault_pages");
	if (aw(mr->rkey, v, 0x1122334455667788ULL, IBV_WC_SUCCESS,
	       "ATOMIC WRITE into a never-touched explicit ODP page"))
		tap_ok(*v == 0x1122334455667788ULL && !v[1] && !v[-1],
		       "... its 8 bytes there, nothing around them (0x%llx)",
		       (unsigned long long)*v);
	tap_ret(cnt("num_page_fault_pages") - fp0, 1,
		"... num_page_fault_pages + exactly that page");

	/* WRITE, FLUSH of the range, FLUSH of the MR: the data stays */
	dp_fill(pbuf, 2 * PG, ++seed);
	one(&a, IBV_WR_RDMA_WRITE, pbuf, 2 * PG, pmr->lkey, m + 5 * PG,
	    mr->rkey, IBV_WC_SUCCESS, "WRITE into the ODP MR");
	flush(mr->rkey, m + 5 * PG, 2 * PG, RXE2DV_FLUSH_RANGE,
	      IBV_WC_SUCCESS, "FLUSH (range) of an explicit ODP MR");
	flush(mr->rkey, m, 0, RXE2DV_FLUSH_MR, IBV_WC_SUCCESS,
	      "FLUSH (whole MR) of an explicit ODP MR");
	tap_ret(dp_verify(m + 5 * PG, 2 * PG, seed), -1,
		"... the WRITE's bytes after both FLUSHes");
	flush(mr->rkey, m + LEN - 8, 16, RXE2DV_FLUSH_RANGE,
	      IBV_WC_REM_ACCESS_ERR, "FLUSH past the ODP MR's end: REM_ACCESS_ERR");
	place_free();
	if (!place_pair())
		return;

	/* a hole under the MR: the fault fails, the NAK is an access error */
	if (munmap(m + PG, PG))
		tap_bail("munmap: %s", strerror(errno));
	aw(mr->rkey, m + PG + 8, 7, IBV_WC_REM_ACCESS_ERR,
	   "ATOMIC WRITE into an unmapped page of an ODP MR: REM_ACCESS_ERR");
	place_free();
	ibv_dereg_mr(mr);
	munmap(m, LEN);
	if (!place_pair())
		return;

	/* the implicit MR over malloc'ed memory */
	imr = ibv_reg_mr(d.pd, NULL, SIZE_MAX, acc);
	if (!tap_ok(imr != NULL, "implicit ODP MR with FLUSH_GLOBAL access (%s)",
		    imr ? "" : strerror(errno))) {
		place_free();
		return;
	}
	heap = dp_alloc(4 * PG);
	memset(heap, 0, 4 * PG);
	v = (uint64_t *)(heap + PG + 24);
	if (aw(imr->rkey, v, 0xa5a5a5a55a5a5a5aULL, IBV_WC_SUCCESS,
	       "ATOMIC WRITE through the implicit ODP MR"))
		tap_ok(*v == 0xa5a5a5a55a5a5a5aULL && !v[1] && !v[-1],
		       "... its 8 bytes there, nothing around them");
	dp_fill(pbuf, PG, ++seed);
	one(&a, IBV_WR_RDMA_WRITE, pbuf, PG, pmr->lkey, heap + 2 * PG,
	    imr->rkey, IBV_WC_SUCCESS, "WRITE through the implicit MR");
	flush(imr->rkey, heap + 2 * PG, PG, RXE2DV_FLUSH_RANGE,
	      IBV_WC_SUCCESS, "FLUSH (range) of the implicit ODP MR");
	flush(imr->rkey, NULL, 0, RXE2DV_FLUSH_MR, IBV_WC_SUCCESS,
	      "FLUSH (whole MR) of the implicit ODP MR");
	tap_ret(dp_verify(heap + 2 * PG, PG, seed), -1,
		"... the WRITE's bytes after both FLUSHes");
	place_free();
	ibv_dereg_mr(imr);
	free(heap);
}

/* MADV_DONTNEED: invalidation, zeros, faults again */
static void test_dontneed(void)
{
	uint8_t *m = fresh(LEN);
	struct ibv_mr *mr = odp_reg(d.pd, m, LEN, ALL);
	long i0, ip0, fp0;

	dp_fill(pbuf, LEN, ++seed);
	one(&a, IBV_WR_RDMA_WRITE, pbuf, LEN, pmr->lkey, m, mr->rkey,
	    IBV_WC_SUCCESS, "RDMA WRITE maps the pages");
	i0 = cnt("num_invalidations");
	ip0 = cnt("num_invalidation_pages");
	tap_ret_errno(madvise(m, LEN, MADV_DONTNEED), 0, "MADV_DONTNEED");
	tap_ok(cnt("num_invalidations") > i0, "num_invalidations moved");
	tap_ret(cnt("num_invalidation_pages") - ip0, NPG,
		"num_invalidation_pages + the %d pages", NPG);
	fp0 = cnt("num_page_fault_pages");
	memset(pbuf, 0xee, LEN);
	if (one(&a, IBV_WR_RDMA_READ, pbuf, LEN, pmr->lkey, m, mr->rkey,
		IBV_WC_SUCCESS, "RDMA READ after MADV_DONTNEED"))
		tap_ret(dp_verify_byte(pbuf, LEN, 0), -1,
			"the READ returns zeros");
	tap_ret(cnt("num_page_fault_pages") - fp0, NPG,
		"the READ faulted the %d pages in again", NPG);
	ibv_dereg_mr(mr);
	munmap(m, LEN);
}

/* munmap under an ODP MR; a read-only mapping; nothing else written */
static void test_unmapped(void)
{
	uint8_t *m = fresh(LEN);
	struct ibv_mr *mr = odp_reg(d.pd, m, LEN, ALL);
	uint8_t *hole = m + 3 * PG;
	long fr0;

	memset(m, 0x5a, LEN);
	one(&a, IBV_WR_RDMA_READ, pbuf, LEN, pmr->lkey, m, mr->rkey,
	    IBV_WC_SUCCESS, "RDMA READ maps every page");
	tap_ret_errno(munmap(hole, PG), 0, "munmap one page inside the MR");
	fr0 = cnt("num_failed_resolutions");
	memset(pbuf, 0xa5, LEN);
	one(&a, IBV_WR_RDMA_WRITE, pbuf, 2 * PG, pmr->lkey, hole - PG,
	    mr->rkey, IBV_WC_REM_ACCESS_ERR,
	    "RDMA WRITE over the unmapped page -> REM_ACCESS_ERR");
	tap_ok(cnt("num_failed_resolutions") > fr0,
	       "num_failed_resolutions moved");
	tap_ret(dp_verify_byte(m, 2 * PG, 0x5a), -1,
		"the pages before the hole are as they were");
	tap_ret(dp_verify_byte(hole + PG, LEN - 4 * PG, 0x5a), -1,
		"the pages after the hole are as they were");
	new_pair();

	/* a local SGE over the hole */
	one(&a, IBV_WR_RDMA_WRITE, hole, 64, mr->lkey, pbuf, pmr->rkey,
	    IBV_WC_LOC_PROT_ERR, "local SGE in the unmapped page -> LOC_PROT_ERR");
	new_pair();

	/* mapped again (fresh zero page): works again */
	if (mmap(hole, PG, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != hole)
		tap_bail("mmap the hole again: %s", strerror(errno));
	dp_fill(pbuf, PG, ++seed);
	if (one(&a, IBV_WR_RDMA_WRITE, pbuf, PG, pmr->lkey, hole, mr->rkey,
		IBV_WC_SUCCESS, "RDMA WRITE after the page is mapped again"))
		tap_ret(dp_verify(hole, PG, seed), -1,
			"it lands in the new page");

	/* read-only mapping: write access cannot be resolved */
	tap_ret_errno(mprotect(m, PG, PROT_READ), 0, "mprotect PROT_READ");
	fr0 = cnt("num_failed_resolutions");
	one(&a, IBV_WR_RDMA_WRITE, pbuf, 64, pmr->lkey, m, mr->rkey,
	    IBV_WC_REM_ACCESS_ERR,
	    "RDMA WRITE into a read-only mapping -> REM_ACCESS_ERR");
	tap_ok(cnt("num_failed_resolutions") > fr0,
	       "num_failed_resolutions moved");
	tap_ret(dp_verify_byte(m, PG, 0x5a), -1, "the read-only page is intact");
	new_pair();
	if (one(&a, IBV_WR_RDMA_READ, pbuf, 64, pmr->lkey, m, mr->rkey,
		IBV_WC_SUCCESS, "RDMA READ of the read-only mapping works"))
		tap_ret(dp_verify_byte(pbuf, 64, 0x5a), -1, "and reads it");
	ibv_dereg_mr(mr);
	munmap(m, LEN);
}

/* fork: the child's copy-on-write pages never reach the parent's MR */
static void test_fork(void)
{
	uint8_t *m = fresh(LEN);
	struct ibv_mr *mr = odp_reg(d.pd, m, LEN, ALL);
	uint32_t s_parent = ++seed, s_child = ++seed;
	pid_t pid;
	int st = -1;

	dp_fill(pbuf, LEN, s_parent);
	one(&a, IBV_WR_RDMA_WRITE, pbuf, LEN, pmr->lkey, m, mr->rkey,
	    IBV_WC_SUCCESS, "fork: RDMA WRITE the parent's data");
	pid = fork();
	if (pid == 0) {
		dp_fill(m, LEN, s_child);
		_exit(dp_verify(m, LEN, s_child) == -1 ? 0 : 1);
	}
	tap_ok(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
	       WEXITSTATUS(st) == 0, "the child wrote its copy");
	memset(pbuf, 0, LEN);
	if (one(&a, IBV_WR_RDMA_READ, pbuf, LEN, pmr->lkey, m, mr->rkey,
		IBV_WC_SUCCESS, "fork: RDMA READ the parent's MR"))
		tap_ret(dp_verify(pbuf, LEN, s_parent), -1,
			"the MR still shows the parent's data");
	dp_fill(pbuf, LEN, ++seed);
	if (one(&a, IBV_WR_RDMA_WRITE, pbuf, LEN, pmr->lkey, m, mr->rkey,
		IBV_WC_SUCCESS, "fork: RDMA WRITE after fork"))
		tap_ret(dp_verify(m, LEN, seed), -1,
			"the parent sees the WRITE");
	ibv_dereg_mr(mr);
	munmap(m, LEN);
}

static int advise(struct ibv_pd *pd, int advice, uint32_t flags,
		  void *addr, uint32_t len, uint32_t lkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)addr, .length = len,
			       .lkey = lkey };

	return ibv_advise_mr(pd, advice, flags, &sge, 1);
}

static void test_advise(void)
{
	uint8_t *m = fresh(LEN);
	struct ibv_mr *mr = odp_reg(d.pd, m, LEN, ALL);
	struct ibv_mr *ro = odp_reg(d.pd, m, LEN, IBV_ACCESS_REMOTE_READ | ODP);
	const int P = IBV_ADVISE_MR_ADVICE_PREFETCH;
	const int PW = IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE;
	const int NF = IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT;
	const int FL = IBV_ADVISE_MR_FLAG_FLUSH;
	long p0, pp0, f0, nf0, fr0;
	uint64_t end;
	int r;

	p0 = cnt("num_prefetches_handled");
	pp0 = cnt("num_prefetch_pages");
	tap_ret(advise(d.pd, PW, FL, m, LEN, mr->lkey), 0,
		"PREFETCH_WRITE FLUSH of never-touched pages");
	tap_ret(cnt("num_prefetches_handled") - p0, 1,
		"num_prefetches_handled +1");
	tap_ret(cnt("num_prefetch_pages") - pp0, NPG,
		"num_prefetch_pages + the %d pages", NPG);
	f0 = cnt("num_page_faults");
	dp_fill(pbuf, LEN, ++seed);
	if (one(&a, IBV_WR_RDMA_WRITE, pbuf, LEN, pmr->lkey, m, mr->rkey,
		IBV_WC_SUCCESS, "RDMA WRITE into the prefetched range"))
		tap_ret(dp_verify(m, LEN, seed), -1, "byte for byte");
	tap_ret(cnt("num_page_faults") - f0, 0,
		"prefetched: the WRITE took no page fault");

	/* errors, each with the errno of ibv_advise_mr(3) */
	nf0 = cnt("num_mrs_not_found");
	r = advise(d.pd, P, FL, m, LEN + 1, mr->lkey);
	tap_ret(r, EFAULT, "past the MR end -> EFAULT");
	r = advise(d.pd, P, FL, m - 1, 2, mr->lkey);
	tap_ret(r, EFAULT, "before the MR start -> EFAULT");
	r = advise(d.pd, P, FL, m, 64, mr->lkey ^ 0x40000);
	tap_ret(r, EFAULT, "an invalid lkey -> EFAULT");
	r = advise(d.pd, P, FL, pbuf, 64, pmr->lkey);
	tap_ret(r, EFAULT, "the lkey of a pinned (non-ODP) MR -> EFAULT");
	tap_ret(cnt("num_mrs_not_found") - nf0, 2,
		"num_mrs_not_found +2 (the two keys of no ODP MR)");
	r = advise(d.pd, PW, FL, m, 64, ro->lkey);
	tap_ret(r, EFAULT, "PREFETCH_WRITE on an MR without write -> EFAULT");
	tap_ret(advise(d.pd, P, FL, m, 64, ro->lkey), 0,
		"PREFETCH on that MR is fine");
	r = advise(d.pd, P, FL | 0x80, m, 64, mr->lkey);
	tap_ret(r, EINVAL, "unknown flags -> EINVAL");
	r = advise(pd2, P, FL, m, 64, mr->lkey);
	tap_ret(r, EINVAL, "a PD the MR is not in -> EINVAL");
	r = advise(d.pd, 7, FL, m, 64, mr->lkey);
	tap_ret(r, EOPNOTSUPP, "unknown advice -> EOPNOTSUPP (ENOTSUP)");

	/* part of the range is not in the address space */
	tap_ret_errno(munmap(m + 5 * PG, PG), 0, "munmap a page of the MR");
	fr0 = cnt("num_failed_resolutions");
	r = advise(d.pd, P, FL, m + 4 * PG, 2 * PG, mr->lkey);
	tap_ret(r, EFAULT, "FLUSH prefetch over the hole -> EFAULT");
	tap_ret(cnt("num_failed_resolutions") - fr0, 1,
		"num_failed_resolutions +1");

	/* without FLUSH: queued, counted when handled */
	madvise(m, 4 * PG, MADV_DONTNEED);
	p0 = cnt("num_prefetches_handled");
	pp0 = cnt("num_prefetch_pages");
	tap_ret(advise(d.pd, PW, 0, m, 4 * PG, mr->lkey), 0,
		"asynchronous PREFETCH_WRITE returns 0");
	end = dp_now_ms() + 5000;
	while (cnt("num_prefetches_handled") == p0 && dp_now_ms() < end)
		;
	tap_ret(cnt("num_prefetches_handled") - p0, 1,
		"the asynchronous prefetch was handled");
	tap_ret(cnt("num_prefetch_pages") - pp0, 4,
		"and mapped the 4 pages");

	/* NO_FAULT: maps only what the process has present */
	madvise(m, 4 * PG, MADV_DONTNEED);
	pp0 = cnt("num_prefetch_pages");
	tap_ret(advise(d.pd, NF, FL, m, 4 * PG, mr->lkey), 0,
		"PREFETCH_NO_FAULT of absent pages");
	tap_ret(cnt("num_prefetch_pages") - pp0, 0, "mapped nothing");
	memset(m, 1, 2 * PG);
	pp0 = cnt("num_prefetch_pages");
	tap_ret(advise(d.pd, NF, FL, m, 4 * PG, mr->lkey), 0,
		"PREFETCH_NO_FAULT after the process touched 2 pages");
	tap_ret(cnt("num_prefetch_pages") - pp0, 2, "mapped those 2");

	ibv_dereg_mr(ro);
	ibv_dereg_mr(mr);
	munmap(m, LEN);
}

/* the implicit MR: any address of the process, iova == address */
static void test_implicit(void)
{
	struct ibv_mr *imr = ibv_reg_mr(d.pd, NULL, SIZE_MAX, ALL);
	size_t n = 3 * PG + 123;
	uint8_t *x, *y;
	long mrs;

	if (!tap_ok(imr != NULL, "implicit ODP MR (NULL, SIZE_MAX): %s",
		    imr ? "registered" : strerror(errno)))
		return;
	mrs = cnt("num_odp_mrs");
	x = malloc(n);
	y = malloc(n);
	dp_fill(x, n, ++seed);
	memset(y, 0, n);
	if (one(&a, IBV_WR_RDMA_WRITE, x, n, imr->lkey, y, imr->rkey,
		IBV_WC_SUCCESS, "implicit: RDMA WRITE malloc -> malloc"))
		tap_ok(!memcmp(x, y, n), "implicit WRITE byte for byte");
	dp_fill(y, n, ++seed);
	memset(x, 0, n);
	if (one(&a, IBV_WR_RDMA_READ, x, n, imr->lkey, y, imr->rkey,
		IBV_WC_SUCCESS, "implicit: RDMA READ"))
		tap_ret(dp_verify(x, n, seed), -1, "implicit READ byte for byte");
	dp_fill(x, 1000, ++seed);
	memset(y, 0, n);
	if (dp_post_recv1(b.qp, 78, y, n, imr->lkey))
		tap_bail("post_recv: %s", strerror(errno));
	if (one(&a, IBV_WR_SEND, x, 1000, imr->lkey, NULL, 0,
		IBV_WC_SUCCESS, "implicit: SEND into an implicit receive")) {
		struct dp_wc_want w = dp_want(78, IBV_WC_RECV);

		w.byte_len = 1000;
		dp_expect(b.rcq, &w, "the receive completes");
		tap_ret(dp_verify(y, 1000, seed), -1, "SEND byte for byte");
	}
	one(&a, IBV_WR_RDMA_WRITE, x, 64, imr->lkey, (void *)(uintptr_t)8,
	    imr->rkey, IBV_WC_REM_ACCESS_ERR,
	    "implicit: RDMA WRITE to an unmapped address -> REM_ACCESS_ERR");
	new_pair();
	tap_ret(cnt("num_odp_mrs") - mrs, 0, "still one ODP MR");
	tap_ret_errno(ibv_dereg_mr(imr), 0, "dereg the implicit MR");
	free(x);
	free(y);
}

/*
 * Children of the implicit MR: rxe2 maps the address space in 64 MiB
 * chunks, each a child made on first access where the process has a
 * mapping (num_odp_mr_pages + a chunk's pages) and freed, after an
 * unmap, once the process has no mapping left in the chunk (a
 * workqueue does it: waited for with a deadline).
 */
#define CHUNK		(64ul << 20)
#define CHUNK_PG	(CHUNK / PG)

/* num_odp_mr_pages until it is @want, or the deadline; its last value */
static long wait_pages(long want)
{
	uint64_t end = dp_now_ms() + DP_WAIT_MS;
	long v;

	while ((v = cnt("num_odp_mr_pages")) != want && dp_now_ms() < end)
		;
	return v;
}

/* three mapped chunks, aligned: no other mapping shares them */
static uint8_t *chunks3(void)
{
	uint8_t *raw = mmap(NULL, 4 * CHUNK, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	uint8_t *base;

	if (raw == MAP_FAILED)
		tap_bail("mmap 4 chunks: %s", strerror(errno));
	base = (uint8_t *)(((uintptr_t)raw + CHUNK - 1) & ~(CHUNK - 1));
	if (base > raw)
		munmap(raw, base - raw);
	munmap(base + 3 * CHUNK, raw + 4 * CHUNK - (base + 3 * CHUNK));
	return base;
}

static void test_implicit_reclaim(void)
{
	long mrs = cnt("num_odp_mrs"), pages = cnt("num_odp_mr_pages");
	struct ibv_mr *imr = ibv_reg_mr(d.pd, NULL, SIZE_MAX, ALL);
	uint8_t *base = chunks3(), *c0 = base, *c1 = base + CHUNK;
	uint8_t *c2 = base + 2 * CHUNK;
	uint32_t s1;
	long v, f0, fr0;
	int k;

	if (!tap_ok(imr != NULL, "implicit ODP MR for the reclaim test"))
		return;
	for (k = 0; k < 3; k++) {
		char what[64];

		snprintf(what, sizeof(what), "implicit: WRITE into chunk %d", k);
		dp_fill(pbuf, PG, ++seed);
		if (one(&a, IBV_WR_RDMA_WRITE, pbuf, PG, pmr->lkey,
			base + k * CHUNK, imr->rkey, IBV_WC_SUCCESS, what))
			tap_ret(dp_verify(base + k * CHUNK, PG, seed), -1,
				"chunk %d byte for byte", k);
	}
	s1 = seed;
	tap_ret(cnt("num_odp_mr_pages") - pages, 3 * CHUNK_PG,
		"three children: num_odp_mr_pages + 3 x %lu", CHUNK_PG);

	/*
	 * The page the device mapped in chunk 2 goes; the rest of the
	 * chunk stays mapped, so its child stays.  Then all of chunk 0
	 * goes: its child goes.  (The reclaim work looks at chunk 2 before
	 * it frees chunk 0: its index is lower, or it was marked first.)
	 */
	tap_ret_errno(munmap(c2, PG), 0, "munmap the one mapped page of chunk 2");
	tap_ret_errno(munmap(c0, CHUNK), 0, "munmap all of chunk 0");
	v = wait_pages(pages + 2 * CHUNK_PG);
	tap_ret(v - pages, 2 * CHUNK_PG,
		"chunk 0's child freed: num_odp_mr_pages - %lu", CHUNK_PG);
	tap_ret(cnt("num_odp_mrs") - mrs, 1, "num_odp_mrs: still the one MR");
	f0 = cnt("num_page_faults");
	dp_fill(pbuf, PG, ++seed);
	if (one(&a, IBV_WR_RDMA_WRITE, pbuf, PG, pmr->lkey, c2 + CHUNK / 2,
		imr->rkey, IBV_WC_SUCCESS,
		"WRITE elsewhere in chunk 2 (still mapped)"))
		tap_ret(dp_verify(c2 + CHUNK / 2, PG, seed), -1,
			"byte for byte");
	tap_ok(cnt("num_page_faults") > f0, "it faulted the page in");
	tap_ret(cnt("num_odp_mr_pages") - pages, 2 * CHUNK_PG,
		"through chunk 2's old child: no new child");

	fr0 = cnt("num_failed_resolutions");
	one(&a, IBV_WR_RDMA_WRITE, pbuf, 64, pmr->lkey, c0 + 100, imr->rkey,
	    IBV_WC_REM_ACCESS_ERR, "WRITE into unmapped chunk 0 -> REM_ACCESS_ERR");
	new_pair();
	one(&a, IBV_WR_RDMA_WRITE, c0 + 100, 64, imr->lkey, pbuf, pmr->rkey,
	    IBV_WC_LOC_PROT_ERR, "local SGE in unmapped chunk 0 -> LOC_PROT_ERR");
	new_pair();
	tap_ret(cnt("num_failed_resolutions") - fr0, 2,
		"num_failed_resolutions + 2");
	tap_ret(cnt("num_odp_mr_pages") - pages, 2 * CHUNK_PG,
		"no child made for the unmapped chunk");
	memset(pbuf, 0, PG);
	if (one(&a, IBV_WR_RDMA_READ, pbuf, PG, pmr->lkey, c1, imr->rkey,
		IBV_WC_SUCCESS, "READ of chunk 1"))
		tap_ret(dp_verify(pbuf, PG, s1 - 1), -1,
			"chunk 1 still holds its data");

	/* a new mapping at the same address: a new child */
	if (mmap(c0, CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE |
		 MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0) != c0)
		tap_bail("mmap chunk 0 again: %s", strerror(errno));
	f0 = cnt("num_page_faults");
	dp_fill(pbuf, 3 * PG, ++seed);
	if (one(&a, IBV_WR_RDMA_WRITE, pbuf, 3 * PG, pmr->lkey, c0 + 5,
		imr->rkey, IBV_WC_SUCCESS, "WRITE into the new chunk 0 mapping"))
		tap_ret(dp_verify(c0 + 5, 3 * PG, seed), -1, "byte for byte");
	tap_ok(cnt("num_page_faults") > f0, "it faulted");
	tap_ret(cnt("num_odp_mr_pages") - pages, 3 * CHUNK_PG,
		"a new child: num_odp_mr_pages + 3 x %lu again", CHUNK_PG);
	memset(pbuf + LEN, 0, 3 * PG);
	if (one(&a, IBV_WR_RDMA_READ, pbuf + LEN, 3 * PG, pmr->lkey, c0 + 5,
		imr->rkey, IBV_WC_SUCCESS, "READ it back"))
		tap_ret(dp_verify(pbuf + LEN, 3 * PG, seed), -1,
			"byte for byte");

	tap_ret_errno(ibv_dereg_mr(imr), 0, "dereg the implicit MR");
	tap_ret(cnt("num_odp_mr_pages") - pages, 0,
		"dereg: num_odp_mr_pages back");
	tap_ret(cnt("num_odp_mrs") - mrs, 0, "dereg: num_odp_mrs back");
	munmap(base, 3 * CHUNK);
}

/*
 * A chunk unmapped and mapped again and again under WRITEs through the
 * implicit MR: its child is freed and made anew under the traffic.
 */
static uint8_t *toggle_chunk;

static void *chunk_toggler(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		munmap(toggle_chunk, CHUNK);
		usleep(200);
		if (mmap(toggle_chunk, CHUNK, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
			 MAP_FIXED, -1, 0) != toggle_chunk)
			abort();
		usleep(200);
	}
	return NULL;
}

static void test_implicit_reclaim_race(void)
{
	long pages = cnt("num_odp_mr_pages");
	struct ibv_mr *imr = ibv_reg_mr(d.pd, NULL, SIZE_MAX, ALL);
	uint8_t *base = chunks3();

	if (!tap_ok(imr != NULL, "implicit ODP MR for the race"))
		return;
	/* chunk 1 toggles; chunk 0 and 2 hold guard bytes */
	memset(base + CHUNK - PG, 0x77, PG);
	memset(base + 2 * CHUNK, 0x77, PG);
	toggle_chunk = base + CHUNK;
	writes_racing(chunk_toggler, 2 * PG, base + CHUNK, 7, imr->rkey,
		      "the chunk's munmap");
	tap_ret(dp_verify_byte(base + CHUNK - PG, PG, 0x77) +
		dp_verify_byte(base + 2 * CHUNK, PG, 0x77), -2,
		"the neighbouring chunks are intact");
	new_pair();
	if (one(&a, IBV_WR_RDMA_WRITE, pbuf, 2 * PG, pmr->lkey,
		base + CHUNK + PG, imr->rkey, IBV_WC_SUCCESS,
		"a WRITE after the race"))
		tap_ret(dp_verify(base + CHUNK + PG, 2 * PG, seed), -1,
			"lands whole");
	tap_ret_errno(ibv_dereg_mr(imr), 0, "dereg the implicit MR");
	tap_ret(cnt("num_odp_mr_pages") - pages, 0,
		"num_odp_mr_pages back: every child made was freed once");
	munmap(base, 3 * CHUNK);
}

/* UC and UD sends, an SRQ receive, all into ODP buffers */
static void test_other_transports(void)
{
	uint8_t *s = fresh(LEN), *r = fresh(LEN);
	struct ibv_mr *smr = odp_reg(d.pd, s, LEN, ALL);
	struct ibv_mr *rmr = odp_reg(d.pd, r, LEN, ALL);
	struct ibv_srq_init_attr si = { .attr = { .max_wr = 8, .max_sge = 1 } };
	struct dp_qp ua = {}, ub = {}, sa = {};
	struct ibv_srq *srq;
	struct dp_conn c;
	struct dp_wc_want w;

	dp_conn_default(&c);
	if (dp_pair(&d, &d, IBV_QPT_UC, &dp_small_cap, &c, &ua, &ub))
		tap_bail("UC pair: %s", strerror(errno));
	dp_fill(s, 900, ++seed);
	dp_post_recv1(ub.qp, 90, r, LEN, rmr->lkey);
	if (one(&ua, IBV_WR_SEND, s, 900, smr->lkey, NULL, 0, IBV_WC_SUCCESS,
		"UC SEND ODP -> ODP")) {
		w = dp_want(90, IBV_WC_RECV);
		w.byte_len = 900;
		dp_expect(ub.rcq, &w, "UC receive");
		tap_ret(dp_verify(r, 900, seed), -1, "UC SEND byte for byte");
	}
	/*
	 * UC completes a WRITE once it is sent: a SEND behind it, received,
	 * tells that the WRITE has been placed.
	 */
	dp_fill(s + 2 * PG, 2 * PG, ++seed);
	dp_post_recv1(ub.qp, 93, r + 3 * PG, 64, rmr->lkey);
	if (one(&ua, IBV_WR_RDMA_WRITE, s + 2 * PG, 2 * PG, smr->lkey, r + PG,
		rmr->rkey, IBV_WC_SUCCESS, "UC RDMA WRITE ODP -> ODP") &&
	    one(&ua, IBV_WR_SEND, s, 8, smr->lkey, NULL, 0, IBV_WC_SUCCESS,
		"UC SEND behind it")) {
		w = dp_want(93, IBV_WC_RECV);
		w.byte_len = 8;
		dp_expect(ub.rcq, &w, "UC receive of the SEND behind the WRITE");
		tap_ret(dp_verify(r + PG, 2 * PG, seed), -1,
			"UC WRITE byte for byte");
	}
	dp_qp_free(&ua);
	dp_qp_free(&ub);

	/* UD: 40 bytes of GRH area first */
	{
		struct ibv_ah *ah = dp_loop_ah(&d);
		struct ibv_sge sge = { .addr = (uintptr_t)s, .length = 500,
				       .lkey = smr->lkey };
		struct ibv_send_wr wr = {}, *bad;

		if (dp_pair(&d, &d, IBV_QPT_UD, &dp_small_cap, &c, &ua, &ub))
			tap_bail("UD pair: %s", strerror(errno));
		memset(r, 0, LEN);
		dp_fill(s, 500, ++seed);
		dp_post_recv1(ub.qp, 91, r + 2 * PG - 20, 600, rmr->lkey);
		wr.wr_id = ++wr_id;
		wr.opcode = IBV_WR_SEND;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = ub.qp->qp_num;
		wr.wr.ud.remote_qkey = c.qkey;
		tap_ret(ibv_post_send(ua.qp, &wr, &bad), 0, "UD SEND posted");
		w = dp_want(wr_id, IBV_WC_SEND);
		dp_expect(ua.scq, &w, "UD SEND from ODP completes");
		w = dp_want(91, IBV_WC_RECV);
		w.byte_len = 540;
		w.flags_ignore = ~0u;
		dp_expect(ub.rcq, &w, "UD receive into ODP across a page");
		tap_ret(dp_verify(r + 2 * PG + 20, 500, seed), -1,
			"UD SEND byte for byte");
		ibv_destroy_ah(ah);
		dp_qp_free(&ua);
		dp_qp_free(&ub);
	}

	srq = ibv_create_srq(d.pd, &si);
	if (!srq)
		tap_bail("create_srq: %s", strerror(errno));
	{
		/* rq takes its receives from the SRQ */
		struct dp_qp rq = { .d = &d };
		struct ibv_recv_wr rw = {}, *rbad;
		struct ibv_sge rs = { .addr = (uintptr_t)(r + 3 * PG - 7),
				      .length = 2000, .lkey = rmr->lkey };
		struct ibv_qp_cap cap = dp_small_cap;

		sa.d = &d;
		sa.scq = ibv_create_cq(d.ctx, 16, NULL, NULL, 0);
		sa.rcq = ibv_create_cq(d.ctx, 16, NULL, NULL, 0);
		rq.scq = ibv_create_cq(d.ctx, 16, NULL, NULL, 0);
		rq.rcq = ibv_create_cq(d.ctx, 16, NULL, NULL, 0);
		sa.qp = dp_create_qp(&d, IBV_QPT_RC, sa.scq, sa.rcq, NULL,
				     &cap);
		cap.max_recv_wr = 0;
		cap.max_recv_sge = 0;
		rq.qp = dp_create_qp(&d, IBV_QPT_RC, rq.scq, rq.rcq, srq,
				     &cap);
		if (!sa.qp || !rq.qp ||
		    dp_connect(rq.qp, &d, &d.gid, sa.qp->qp_num, &c) ||
		    dp_connect(sa.qp, &d, &d.gid, rq.qp->qp_num, &c))
			tap_bail("SRQ QP: %s", strerror(errno));
		rw.wr_id = 92;
		rw.sg_list = &rs;
		rw.num_sge = 1;
		tap_ret(ibv_post_srq_recv(srq, &rw, &rbad), 0,
			"SRQ receive into ODP posted");
		dp_fill(s, 1500, ++seed);
		if (one(&sa, IBV_WR_SEND, s, 1500, smr->lkey, NULL, 0,
			IBV_WC_SUCCESS, "RC SEND into an SRQ ODP receive")) {
			w = dp_want(92, IBV_WC_RECV);
			w.byte_len = 1500;
			dp_expect(rq.rcq, &w, "SRQ receive completes");
			tap_ret(dp_verify(r + 3 * PG - 7, 1500, seed), -1,
				"SRQ SEND byte for byte");
		}
		dp_qp_free(&rq);
		dp_qp_free(&sa);
	}
	ibv_destroy_srq(srq);
	ibv_dereg_mr(smr);
	ibv_dereg_mr(rmr);
	munmap(s, LEN);
	munmap(r, LEN);
}

/* mremap moves the pages away: the old range has no mapping any more */
static void test_mremap(void)
{
	uint8_t *m = fresh(2 * LEN), *n;
	struct ibv_mr *mr = odp_reg(d.pd, m, LEN, ALL);
	long i0 = cnt("num_invalidations");

	dp_fill(pbuf, LEN, ++seed);
	one(&a, IBV_WR_RDMA_WRITE, pbuf, LEN, pmr->lkey, m, mr->rkey,
	    IBV_WC_SUCCESS, "mremap: RDMA WRITE maps the pages");
	munmap(m + LEN, LEN);
	n = mremap(m, LEN, LEN, MREMAP_MAYMOVE | MREMAP_FIXED, m + LEN);
	tap_ok(n == m + LEN, "mremap the MR's pages elsewhere");
	tap_ok(cnt("num_invalidations") > i0, "the move invalidated the MR");
	tap_ret(dp_verify(n, LEN, seed), -1, "the data moved with the pages");
	one(&a, IBV_WR_RDMA_WRITE, pbuf, 64, pmr->lkey, m, mr->rkey,
	    IBV_WC_REM_ACCESS_ERR,
	    "RDMA WRITE to the old addresses -> REM_ACCESS_ERR");
	tap_ret(dp_verify(n, LEN, seed), -1, "the moved pages are untouched");
	new_pair();
	ibv_dereg_mr(mr);
	munmap(n, LEN);
}

/* a process that exits with ODP MRs under use leaves nothing behind */
static void test_exit(void)
{
	long mrs = cnt("num_odp_mrs"), pages = cnt("num_odp_mr_pages");
	int st = -1;
	pid_t pid;

	pid = fork();
	if (pid == 0) {
		struct dp_dev c;
		struct dp_qp x, y;
		uint8_t *m = fresh(LEN), *s = fresh(LEN);
		struct ibv_mr *mr, *smr, *imr;
		struct ibv_wc wc;

		dp_open(&c, d.name);
		mr = ibv_reg_mr(c.pd, m, LEN, ALL);
		smr = ibv_reg_mr(c.pd, s, LEN, ALL);
		imr = ibv_reg_mr(c.pd, NULL, SIZE_MAX, ALL);
		if (!mr || !smr || !imr || dp_rc_pair(&c, &x, &y))
			_exit(2);
		memset(s, 1, LEN);
		if (dp_post_send1(x.qp, 1, IBV_WR_RDMA_WRITE, s, LEN,
				  smr->lkey, (uintptr_t)m, mr->rkey, 0) ||
		    dp_poll(x.scq, &wc, 1, DP_WAIT_MS) != 1 ||
		    wc.status != IBV_WC_SUCCESS)
			_exit(3);
		/* and one more in flight, through the implicit MR */
		dp_post_send1(x.qp, 2, IBV_WR_RDMA_WRITE, s, LEN, imr->lkey,
			      (uintptr_t)m, imr->rkey, 0);
		_exit(0);
	}
	tap_ok(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
	       WEXITSTATUS(st) == 0,
	       "a child used ODP MRs and exited without cleaning up");
	tap_ret(cnt("num_odp_mrs") - mrs, 0, "its ODP MRs are gone");
	tap_ret(cnt("num_odp_mr_pages") - pages, 0, "and their pages");
}

/* munmap and mmap one page of the MR again and again under RDMA WRITEs */
static uint8_t *toggle_page;

static void *toggler(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		munmap(toggle_page, PG);
		usleep(100);
		if (mmap(toggle_page, PG, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) !=
		    toggle_page)
			abort();
		usleep(100);
	}
	return NULL;
}

static void test_munmap_race(void)
{
	/* guard pages on both sides of the MR */
	uint8_t *g = fresh(LEN + 2 * PG), *m = g + PG;
	struct ibv_mr *mr = odp_reg(d.pd, m, LEN - 2 * PG, ALL);

	memset(g, 0x77, LEN + 2 * PG);
	toggle_page = m + 2 * PG;
	writes_racing(toggler, 3 * PG, m + PG, 1, mr->rkey, "munmap");
	tap_ret(dp_verify_byte(g, 2 * PG, 0x77), -1,
		"the guard page and the page before the target are intact");
	tap_ret(dp_verify_byte(m + 4 * PG, LEN - 4 * PG + PG, 0x77), -1,
		"everything after the target is intact");
	new_pair();
	if (one(&a, IBV_WR_RDMA_WRITE, pbuf, 3 * PG, pmr->lkey, m + PG,
		mr->rkey, IBV_WC_SUCCESS, "a WRITE after the race"))
		tap_ret(dp_verify(m + PG, 3 * PG, seed), -1, "lands whole");
	ibv_dereg_mr(mr);
	munmap(g, LEN + 2 * PG);
}

/* ibv_rereg_mr of ODP MRs: keys kept; the translation moves under WRITEs */
static struct ibv_mr *rr_mr;
static struct dp_qp wa, wb;
static atomic_int rr_bad;

static void *rr_writer(void *arg)
{
	uint8_t *src = arg;
	int i;

	for (i = 0; i < 200; i++) {
		struct ibv_wc wc;

		if (dp_post_send1(wa.qp, i, IBV_WR_RDMA_WRITE, src, 2 * PG,
				  pmr->lkey, (uintptr_t)rr_mr->addr,
				  rr_mr->rkey, 0) ||
		    dp_poll(wa.scq, &wc, 1, DP_WAIT_MS) != 1 ||
		    wc.status != IBV_WC_SUCCESS) {
			atomic_fetch_add(&rr_bad, 1);
			break;
		}
	}
	atomic_store(&stop, true);
	return NULL;
}

static void test_rereg(void)
{
	uint8_t *m1 = fresh(LEN), *m2 = fresh(LEN);
	struct ibv_mr *mr = odp_reg(d.pd, m1, LEN, ALL);
	uint32_t key = mr->lkey;
	long mrs = cnt("num_odp_mrs");
	pthread_t t;
	int i;

	tap_ret(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
			     ODP), 0, "ODP rereg ACCESS: remote write revoked");
	memset(m1, 0x33, LEN);
	one(&a, IBV_WR_RDMA_WRITE, pbuf, 64, pmr->lkey, m1, mr->rkey,
	    IBV_WC_REM_ACCESS_ERR, "WRITE after the revocation -> REM_ACCESS_ERR");
	tap_ret(dp_verify_byte(m1, LEN, 0x33), -1, "nothing written");
	new_pair();
	tap_ret(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION |
			     IBV_REREG_MR_CHANGE_ACCESS, NULL, m2, LEN, ALL),
		0, "ODP rereg TRANSLATION + ACCESS");
	tap_ok(mr->lkey == key && mr->rkey == key, "keys kept");
	tap_ret(cnt("num_odp_mrs") - mrs, 0, "still one ODP MR");
	dp_fill(pbuf, LEN, ++seed);
	if (one(&a, IBV_WR_RDMA_WRITE, pbuf, LEN, pmr->lkey, m2, mr->rkey,
		IBV_WC_SUCCESS, "WRITE into the new translation"))
		tap_ret(dp_verify(m2, LEN, seed), -1, "byte for byte");
	tap_ret(dp_verify_byte(m1, LEN, 0x33), -1, "the old memory untouched");
	tap_ret(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			     DP_ACCESS_ALL), 0, "rereg ACCESS: ODP -> pinned");
	tap_ret(cnt("num_odp_mrs") - mrs, -1, "num_odp_mrs -1");
	dp_fill(pbuf, LEN, ++seed);
	if (one(&a, IBV_WR_RDMA_WRITE, pbuf, LEN, pmr->lkey, m2, mr->rkey,
		IBV_WC_SUCCESS, "WRITE into the pinned MR"))
		tap_ret(dp_verify(m2, LEN, seed), -1, "byte for byte");
	tap_ret(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			     ALL), 0, "rereg ACCESS: pinned -> ODP");
	tap_ret(cnt("num_odp_mrs") - mrs, 0, "num_odp_mrs back");

	/*
	 * Under 200 WRITEs: a new translation of the same range (a new ODP
	 * umem each time; the addresses stay, so every WRITE is in range)
	 * alternating with an access rereg that keeps the umem.
	 */
	tap_ret(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, m1,
			     LEN, 0), 0, "rereg TRANSLATION back to m1");
	if (dp_rc_pair(&d, &wa, &wb))
		tap_bail("RC pair: %s", strerror(errno));
	rr_mr = mr;
	atomic_store(&stop, false);
	dp_fill(pbuf + LEN, 2 * PG, ++seed);
	if (pthread_create(&t, NULL, rr_writer, pbuf + LEN))
		tap_bail("pthread_create");
	/* at least 20, and on until the writer is done */
	for (i = 0; (i < 20 || !atomic_load(&stop)) && i < 5000; i++)
		if (i & 1 ?
		    ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
				 ALL) :
		    ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL,
				 m1, LEN, 0))
			break;
	pthread_join(t, NULL);
	tap_diag("%d reregs", i);
	tap_ok(i >= 20 && i < 5000 && atomic_load(&stop),
	       "reregs (TRANSLATION, ACCESS) all through the traffic");
	tap_ret(atomic_load(&rr_bad), 0,
		"every WRITE under the reregs completed with SUCCESS");
	tap_ret(dp_verify(m1, 2 * PG, seed), -1,
		"the WRITEs' data is in the MR");
	tap_ok(mr->lkey == key && mr->rkey == key, "keys kept throughout");
	dp_qp_free(&wa);
	dp_qp_free(&wb);
	tap_ret_errno(ibv_dereg_mr(mr), 0, "dereg after the reregs");
	munmap(m1, LEN);
	munmap(m2, LEN);
}

int main(void)
{
	struct ibv_device_attr_ex ax;

	dp_open(&d, test_dev_name());
	if (ibv_query_device_ex(d.ctx, NULL, &ax) ||
	    !(ax.odp_caps.general_caps & IBV_ODP_SUPPORT)) {
		tap_skip("%s: no ODP support", d.name);
		return tap_done();
	}
	if (cnt("num_page_faults") < 0) {
		tap_skip("%s: no ODP counters in hw_counters", d.name);
		return tap_done();
	}
	pd2 = ibv_alloc_pd(d.ctx);
	pbuf = dp_alloc(2 * LEN);
	pmr = dp_reg(d.pd, pbuf, 2 * LEN, DP_ACCESS_ALL);
	if (!pd2 || dp_rc_pair(&d, &a, &b))
		tap_bail("setup: %s", strerror(errno));

	test_caps();
	test_placement_odp();
	test_reg_counters();
	test_rc_ops();
	test_dontneed();
	test_unmapped();
	test_fork();
	test_advise();
	test_implicit();
	test_implicit_reclaim();
	test_implicit_reclaim_race();
	test_other_transports();
	test_mremap();
	test_munmap_race();
	test_exit();
	test_rereg();

	dp_qp_free(&a);
	dp_qp_free(&b);
	ibv_dereg_mr(pmr);
	ibv_dealloc_pd(pd2);
	dp_close(&d);
	return tap_done();
}
