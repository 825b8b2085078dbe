// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: IBV_ACCESS_HUGETLB: pinned MRs over hugetlbfs in 2 MiB entries (4 KiB over ordinary memory), an ODP MR faulting a whole huge page at once, data across 2 MiB boundaries, the implicit MR
 *
 * IBV_ACCESS_HUGETLB: a hint, accepted for pinned and ODP MRs alike.
 * A pinned MR over hugetlbfs memory translates in 2 MiB entries
 * (rxe2dv_query_mr: page_size, num_pages), hint or not; over ordinary
 * memory (THP off for it) in 4 KiB ones, hint or not.  An ODP MR with
 * the hint over hugetlbfs memory faults a whole huge page at once:
 * 512 small WRITEs, one per 4 KiB page of a 2 MiB block, cost one fault
 * (num_page_faults) where the same over ordinary memory costs 512.
 * Data crosses the 2 MiB boundaries byte for byte both ways, also
 * through an MR that starts inside a huge page.  The test reserves huge
 * pages (/proc/sys/vm/nr_hugepages) and gives them back.  The implicit
 * ODP MR takes the hint too (and keeps 4 KiB pages).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <infiniband/rxe2dv.h>

#include "dp.h"
#include "tap.h"
#include "util.h"

#define HUGE	(2UL << 20)
#define LEN	(4 * HUGE)
#define RW	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		 IBV_ACCESS_REMOTE_READ)

static struct dp_dev dev;
static struct dp_qp a, b;
static uint8_t *hbuf, *nbuf;
static long saved_nr = -1;

static long read_nr_hugepages(void)
{
	FILE *f = fopen("/proc/sys/vm/nr_hugepages", "r");
	long n = -1;

	if (f) {
		if (fscanf(f, "%ld", &n) != 1)
			n = -1;
		fclose(f);
	}
	return n;
}

static bool write_nr_hugepages(long n)
{
	FILE *f = fopen("/proc/sys/vm/nr_hugepages", "w");
	bool ok;

	if (!f)
		return false;
	ok = fprintf(f, "%ld\n", n) > 0;
	return !fclose(f) && ok;
}

static void *map_huge(void)
{
	void *p;

	saved_nr = read_nr_hugepages();
	if (saved_nr < 0 || !write_nr_hugepages(saved_nr + 8))
		return NULL;
	p = mmap(NULL, LEN, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | MAP_POPULATE, -1,
		 0);
	return p == MAP_FAILED ? NULL : p;
}

/* ordinary 4 KiB pages: aligned like the huge buffer, THP kept off */
static void *map_ordinary(void)
{
	uint8_t *p = mmap(NULL, LEN + HUGE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *q;

	if (p == MAP_FAILED)
		return NULL;
	q = (uint8_t *)(((uintptr_t)p + HUGE - 1) & ~(HUGE - 1));
	madvise(q, LEN, MADV_NOHUGEPAGE);
	memset(q, 0, LEN);
	return q;
}

static bool query_pages(struct ibv_mr *mr, uint32_t *size, uint32_t *n)
{
	struct rxe2dv_mr_attr at;

	memset(&at, 0, sizeof(at));
	if (rxe2dv_query_mr(mr, &at, sizeof(at)) ||
	    !(at.comp_mask & RXE2DV_MR_ATTR_MASK_PAGES))
		return false;
	*size = at.page_size;
	*n = at.num_pages;
	return true;
}

static void expect_pages(struct ibv_mr *mr, uint32_t size, uint32_t n,
			 const char *what)
{
	uint32_t gs = 0, gn = 0;
	bool ok = mr && query_pages(mr, &gs, &gn);

	tap_ok(ok && gs == size && gn == n,
	       "%s: %u entries of %u bytes (want %u of %u)", what, gn, gs, n,
	       size);
}

/* one signalled WR on a, its completion checked */
static bool rdma(enum ibv_wr_opcode op, void *local, uint32_t len,
		 uint32_t lkey, void *remote, uint32_t rkey)
{
	struct ibv_wc wc;

	if (dp_post_send1(a.qp, 1, op, local, len, lkey, (uintptr_t)remote,
			  rkey, 0))
		return false;
	return dp_poll(a.scq, &wc, 1, DP_WAIT_MS) == 1 &&
	       wc.status == IBV_WC_SUCCESS;
}

/*
 * WRITE a pattern from the ordinary MR into the target MR across its
 * 2 MiB boundaries, READ it back into other ordinary memory: byte for
 * byte both ways.
 */
static void round_trip(struct ibv_mr *nmr, struct ibv_mr *tmr, uint8_t *t,
		       const char *what)
{
	uint32_t len = HUGE + HUGE / 2 + 4099;
	size_t off = HUGE / 2 + 123;	/* into block 0, through 1, into 2 */
	bool ok;

	dp_fill(nbuf, len, 0x4242);
	memset(nbuf + HUGE * 2, 0, len);
	ok = rdma(IBV_WR_RDMA_WRITE, nbuf, len, nmr->lkey, t + off,
		  tmr->rkey);
	tap_ok(ok && dp_verify(t + off, len, 0x4242) < 0,
	       "%s: WRITE of %u bytes across two 2 MiB boundaries", what, len);
	ok = rdma(IBV_WR_RDMA_READ, nbuf + HUGE * 2, len, nmr->lkey, t + off,
		  tmr->rkey);
	tap_ok(ok && dp_verify(nbuf + HUGE * 2, len, 0x4242) < 0,
	       "%s: READ of them back, byte for byte", what);
}

static void test_pinned(void)
{
	struct ibv_mr *nmr, *hmr, *hmr2, *omr;

	nmr = ibv_reg_mr(dev.pd, nbuf, LEN, RW | IBV_ACCESS_HUGETLB);
	tap_ok(nmr != NULL, "pinned, ordinary memory, HUGETLB: registered (%s)",
	       nmr ? "ok" : strerror(errno));
	expect_pages(nmr, 4096, LEN / 4096, "pinned, ordinary memory");
	hmr = ibv_reg_mr(dev.pd, hbuf, LEN, RW | IBV_ACCESS_HUGETLB);
	tap_ok(hmr != NULL, "pinned, hugetlbfs memory, HUGETLB: registered (%s)",
	       hmr ? "ok" : strerror(errno));
	expect_pages(hmr, HUGE, LEN / HUGE, "pinned, hugetlbfs memory");
	omr = ibv_reg_mr(dev.pd, hbuf, LEN, RW);
	expect_pages(omr, HUGE, LEN / HUGE,
		     "pinned, hugetlbfs memory, no hint");
	/* starting 4 KiB + 7 into a huge page, ending inside the last */
	hmr2 = ibv_reg_mr(dev.pd, hbuf + 4103, LEN - HUGE, RW);
	expect_pages(hmr2, HUGE, LEN / HUGE,
		     "pinned, hugetlbfs memory from 4103 bytes in");
	if (nmr && hmr) {
		round_trip(nmr, hmr, hbuf, "pinned huge MR");
		round_trip(nmr, omr, hbuf, "pinned huge MR, no hint");
	}
	if (nmr && hmr2)
		round_trip(nmr, hmr2, hbuf + 4103,
			   "pinned huge MR from 4103 bytes in");
	if (omr)
		ibv_dereg_mr(omr);
	if (hmr2)
		ibv_dereg_mr(hmr2);
	if (hmr)
		ibv_dereg_mr(hmr);
	if (nmr)
		ibv_dereg_mr(nmr);
}

/* 512 8-byte WRITEs into the 512 4 KiB pages of block 1 of t */
static long faults_for_writes(struct ibv_mr *src, struct ibv_mr *tmr,
			      uint8_t *t)
{
	long before = dp_hw_counter(dev.name, "num_page_faults");
	int i;

	for (i = 0; i < 512; i++) {
		memcpy(nbuf, &i, sizeof(i));
		if (!rdma(IBV_WR_RDMA_WRITE, nbuf, 8, src->lkey,
			  t + HUGE + i * 4096, tmr->rkey))
			return -1;
	}
	for (i = 0; i < 512; i++)
		if (memcmp(t + HUGE + i * 4096, &i, sizeof(i)))
			return -1;
	return dp_hw_counter(dev.name, "num_page_faults") - before;
}

static void test_odp(void)
{
	int odp = RW | IBV_ACCESS_ON_DEMAND;
	struct ibv_mr *src, *hmr, *nmr;
	long fh = -1, fn = -1;

	if (dp_hw_counter(dev.name, "num_page_faults") < 0) {
		for (int i = 0; i < 7; i++)
			tap_skip("ODP: no ODP counters");
		return;
	}
	src = ibv_reg_mr(dev.pd, nbuf, 4096, RW);
	hmr = ibv_reg_mr(dev.pd, hbuf, LEN, odp | IBV_ACCESS_HUGETLB);
	tap_ok(hmr != NULL, "ODP, hugetlbfs memory, HUGETLB: registered (%s)",
	       hmr ? "ok" : strerror(errno));
	expect_pages(hmr, HUGE, LEN / HUGE, "ODP, hugetlbfs memory");
	nmr = ibv_reg_mr(dev.pd, nbuf + HUGE, LEN - HUGE,
			 odp | IBV_ACCESS_HUGETLB);
	tap_ok(nmr != NULL, "ODP, ordinary memory, HUGETLB: registered (%s)",
	       nmr ? "ok" : strerror(errno));
	expect_pages(nmr, 4096, (LEN - HUGE) / 4096, "ODP, ordinary memory");
	if (src && hmr)
		fh = faults_for_writes(src, hmr, hbuf);
	if (src && nmr)
		fn = faults_for_writes(src, nmr, nbuf);
	tap_ok(fh == 1, "ODP huge: 512 WRITEs over one 2 MiB page: %ld fault(s)",
	       fh);
	tap_ok(fn == 512, "ODP ordinary: 512 WRITEs over 512 pages: %ld faults",
	       fn);
	if (nmr)
		ibv_dereg_mr(nmr);
	if (hmr)
		ibv_dereg_mr(hmr);
	if (src)
		ibv_dereg_mr(src);
	/* the implicit MR spans everything: the hint is taken, not used */
	hmr = ibv_reg_mr(dev.pd, NULL, SIZE_MAX, odp | IBV_ACCESS_HUGETLB);
	tap_ok(hmr != NULL, "implicit ODP MR with HUGETLB: registered (%s)",
	       hmr ? "ok" : strerror(errno));
	if (hmr)
		ibv_dereg_mr(hmr);
}

int main(void)
{
	dp_open(&dev, test_dev_name());
	if (!dev.rxe2) {
		tap_skip("rxe2dv_query_mr: rxe2 only");
		dp_close(&dev);
		return tap_done();
	}
	hbuf = map_huge();
	nbuf = map_ordinary();
	if (!hbuf || !nbuf)
		tap_bail("8 MiB of hugetlbfs and ordinary memory: %s",
			 strerror(errno));
	if (dp_rc_pair(&dev, &a, &b))
		tap_bail("RC pair");

	test_pinned();
	test_odp();

	dp_qp_free(&a);
	dp_qp_free(&b);
	munmap(hbuf, LEN);
	if (saved_nr >= 0)
		write_nr_hugepages(saved_nr);
	dp_close(&dev);
	return tap_done();
}
