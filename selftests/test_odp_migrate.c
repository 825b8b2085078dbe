// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: ODP and page migration (two NUMA nodes, skipped with one): pages moved with move_pages(2), invalidation and fault counters exact, the interconnect id following, moves under WRITE+READ
 *
 * On-demand paging and page migration: pages of an ODP MR that the
 * device has mapped are moved to the other NUMA node with move_pages(2).
 * Migration unmaps each page in the process (an MMU notifier
 * invalidation), so the device must drop it and fault the page in again
 * at its new physical address.  Checked: move_pages' status says every
 * page moved; num_invalidations / num_invalidation_pages move by exactly
 * the pages the device had mapped (one invalidation per page: the kernel
 * unmaps a page at a time for migration), none for pages it had not;
 * rxe2dv_query_mr's interconnect id goes invalid (nothing resident),
 * then follows the pages to the new node after the next access; that
 * access faults (num_page_fault_pages exact), reads and writes the data
 * byte for byte at the new physical pages (their frame numbers, from
 * /proc/self/pagemap, changed); the same through an implicit MR (the
 * child stays: a move is no unmap); and pages moved back and forth under a
 * stream of RDMA WRITEs and READs: every completion SUCCESS, every byte
 * right.  Needs two NUMA nodes (make check's tools/vm --numa 2 boot);
 * with one node it skips, saying so.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/mempolicy.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <infiniband/rxe2dv.h>

#include "dp.h"
#include "tap.h"
#include "util.h"

#define PG	4096
#define NPG	16
#define LEN	(NPG * PG)
#define ALL	(DP_ACCESS_ALL | IBV_ACCESS_ON_DEMAND)
#define ALL_VALID (RXE2DV_MR_ATTR_VALIDITY_RECV_IC_ID | \
		   RXE2DV_MR_ATTR_VALIDITY_RDMA_READ_IC_ID | \
		   RXE2DV_MR_ATTR_VALIDITY_RDMA_RECV_IC_ID)

static struct dp_dev d;
static struct dp_qp a, b;
static uint8_t *pbuf;			/* pinned: source and READ target */
static struct ibv_mr *pmr;
static uint64_t wr_id = 0x100;
static uint32_t seed = 21;

static long cnt(const char *name)
{
	return dp_hw_counter(d.name, name);
}

/* nodes in /sys/devices/system/node/online ("0" or "0-1"); 1 if absent */
static int online_nodes(void)
{
	FILE *f = fopen("/sys/devices/system/node/online", "r");
	int lo, hi = -1;

	if (!f)
		return 1;
	if (fscanf(f, "%d-%d", &lo, &hi) < 1)
		lo = hi = 0;
	fclose(f);
	return hi > lo ? hi - lo + 1 : 1;
}

/* bit n set when a page of [buf, buf + LEN) is on node n; 0 if unknown */
static unsigned long page_nodes(void *buf)
{
	void *pages[NPG];
	int status[NPG];
	unsigned long nodes = 0;
	int i;

	for (i = 0; i < NPG; i++)
		pages[i] = (char *)buf + i * PG;
	if (syscall(SYS_move_pages, 0, NPG, pages, NULL, status, 0))
		return 0;
	for (i = 0; i < NPG; i++) {
		if (status[i] < 0 || status[i] >= 64)
			return 0;
		nodes |= 1ul << status[i];
	}
	return nodes;
}

/*
 * move_pages(2) every page to @node; the number of pages whose status
 * says they are there now, or -errno when the call failed as a whole.
 */
static int move_all(void *buf, int node)
{
	void *pages[NPG];
	int nodes[NPG], status[NPG];
	int i, n = 0;

	for (i = 0; i < NPG; i++) {
		pages[i] = (char *)buf + i * PG;
		nodes[i] = node;
		status[i] = -1;
	}
	if (syscall(SYS_move_pages, 0, NPG, pages, nodes, status,
		    MPOL_MF_MOVE))
		return -errno;
	for (i = 0; i < NPG; i++)
		n += status[i] == node;
	return n;
}

/* the page frame of va (/proc/self/pagemap, root), or 0 */
static uint64_t pfn_of(const void *va)
{
	uint64_t e = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd < 0)
		return 0;
	if (pread(fd, &e, sizeof(e), (uintptr_t)va / PG * sizeof(e)) !=
	    sizeof(e))
		e = 0;
	close(fd);
	if (!(e >> 63))
		return 0;
	return e & ((1ull << 55) - 1);
}

/*
 * LEN bytes of fresh anonymous memory bound to node 0 (placed there on
 * first touch, never huge pages).  A bound range is also left alone by
 * automatic NUMA balancing, so only this test moves its pages.
 */
static uint8_t *node0_buf(void)
{
	unsigned long mask = 1;
	void *p;

	p = mmap(NULL, LEN, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		tap_bail("mmap: %s", strerror(errno));
	madvise(p, LEN, MADV_NOHUGEPAGE);
	if (syscall(SYS_mbind, p, LEN, MPOL_BIND, &mask, sizeof(mask) * 8,
		    MPOL_MF_STRICT))
		tap_bail("mbind node 0: %s", strerror(errno));
	return p;
}

static bool one(enum ibv_wr_opcode op, void *addr, uint32_t len,
		uint32_t lkey, void *raddr, uint32_t rkey, const char *what)
{
	struct dp_wc_want w = dp_want(++wr_id, op == IBV_WR_RDMA_READ ?
				      IBV_WC_RDMA_READ : IBV_WC_RDMA_WRITE);

	if (dp_post_send1(a.qp, wr_id, op, addr, len, lkey,
			  (uintptr_t)raddr, rkey, 0)) {
		tap_ok(false, "%s: post: %s", what, strerror(errno));
		return false;
	}
	return dp_expect(a.scq, &w, "%s", what);
}

/* the id rxe2dv_query_mr gives when all three are valid, -1 if none */
static void expect_ic(struct ibv_mr *mr, int want, const char *what)
{
	struct rxe2dv_mr_attr at;
	int ret;

	memset(&at, 0, sizeof(at));
	ret = rxe2dv_query_mr(mr, &at, sizeof(at));
	if (want < 0)
		tap_ok(!ret && at.ic_id_validity == 0,
		       "%s: no valid interconnect id (ret %d, validity 0x%x)",
		       what, ret, at.ic_id_validity);
	else
		tap_ok(!ret && at.ic_id_validity == ALL_VALID &&
		       at.recv_ic_id == want && at.rdma_read_ic_id == want &&
		       at.rdma_recv_ic_id == want,
		       "%s: interconnect id %d (ret %d, validity 0x%x, ids %u/%u/%u)",
		       what, want, ret, at.ic_id_validity, at.recv_ic_id,
		       at.rdma_read_ic_id, at.rdma_recv_ic_id);
}

/* mapped pages move: invalidated, faulted again, the data follows */
static void test_migrate(void)
{
	uint8_t *m = node0_buf();
	struct ibv_mr *mr = dp_reg(d.pd, m, LEN, ALL);
	uint64_t pfn[NPG];
	long i0, ip0, f0, fp0;
	int i, changed = 0, known = 0;

	expect_ic(mr, -1, "untouched ODP MR");
	dp_fill(pbuf, LEN, ++seed);
	if (one(IBV_WR_RDMA_WRITE, pbuf, LEN, pmr->lkey, m, mr->rkey,
		"RDMA WRITE faults the pages in on node 0"))
		tap_ret(dp_verify(m, LEN, seed), -1, "the WRITE is in place");
	tap_ret(page_nodes(m), 1, "every page on node 0");
	expect_ic(mr, 0, "MR mapped on node 0");
	for (i = 0; i < NPG; i++)
		pfn[i] = pfn_of(m + i * PG);

	i0 = cnt("num_invalidations");
	ip0 = cnt("num_invalidation_pages");
	tap_ret(move_all(m, 1), NPG,
		"move_pages to node 1: every page's status says node 1");
	tap_ret(page_nodes(m), 2, "every page on node 1 now");
	tap_ret(cnt("num_invalidation_pages") - ip0, NPG,
		"num_invalidation_pages + the %d mapped pages", NPG);
	tap_ret(cnt("num_invalidations") - i0, NPG,
		"num_invalidations + %d (one per page migrated)", NPG);
	expect_ic(mr, -1, "after the move (nothing mapped in the device)");
	for (i = 0; i < NPG; i++) {
		uint64_t now = pfn_of(m + i * PG);

		if (pfn[i] && now) {
			known++;
			changed += now != pfn[i];
		}
	}
	if (known)
		tap_ret(changed, known,
			"every page has a new page frame (pagemap)");
	else
		tap_skip("no page frame numbers in /proc/self/pagemap");

	f0 = cnt("num_page_faults");
	fp0 = cnt("num_page_fault_pages");
	memset(pbuf + LEN, 0, LEN);
	if (one(IBV_WR_RDMA_READ, pbuf + LEN, LEN, pmr->lkey, m, mr->rkey,
		"RDMA READ of the moved pages"))
		tap_ret(dp_verify(pbuf + LEN, LEN, seed), -1,
			"the READ returns the data byte for byte");
	tap_ok(cnt("num_page_faults") > f0, "the READ faulted again");
	tap_ret(cnt("num_page_fault_pages") - fp0, NPG,
		"num_page_fault_pages + the %d moved pages", NPG);
	expect_ic(mr, 1, "MR mapped on node 1");

	/* (a READ maps for reading: the WRITE faults again for writing) */
	dp_fill(pbuf, LEN, ++seed);
	if (one(IBV_WR_RDMA_WRITE, pbuf, LEN, pmr->lkey, m, mr->rkey,
		"RDMA WRITE into the moved pages"))
		tap_ret(dp_verify(m, LEN, seed), -1,
			"the process sees it at the new pages byte for byte");
	tap_ret(page_nodes(m), 2, "still every page on node 1");

	/* half mapped: only the mapped half counts as invalidated */
	tap_ret(move_all(m, 0), NPG, "move_pages back to node 0");
	tap_ret(dp_verify(m, LEN, seed), -1, "the data moved along");
	tap_ret_errno(ibv_advise_mr(d.pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
				    IBV_ADVISE_MR_FLAG_FLUSH, &(struct ibv_sge){
					    .addr = (uintptr_t)m,
					    .length = LEN / 2,
					    .lkey = mr->lkey }, 1), 0,
		      "PREFETCH_WRITE FLUSH of the first %d pages", NPG / 2);
	i0 = cnt("num_invalidations");
	ip0 = cnt("num_invalidation_pages");
	tap_ret(move_all(m, 1), NPG, "move_pages all %d to node 1", NPG);
	tap_ret(cnt("num_invalidation_pages") - ip0, NPG / 2,
		"num_invalidation_pages + the %d mapped pages only", NPG / 2);
	tap_ret(cnt("num_invalidations") - i0, NPG / 2,
		"num_invalidations + %d", NPG / 2);
	fp0 = cnt("num_page_fault_pages");
	dp_fill(pbuf, LEN, ++seed);
	if (one(IBV_WR_RDMA_WRITE, pbuf, LEN, pmr->lkey, m, mr->rkey,
		"RDMA WRITE over all of them"))
		tap_ret(dp_verify(m, LEN, seed), -1, "byte for byte");
	tap_ret(cnt("num_page_fault_pages") - fp0, NPG,
		"num_page_fault_pages + %d", NPG);
	expect_ic(mr, 1, "MR mapped on node 1 again");

	ibv_dereg_mr(mr);
	munmap(m, LEN);
}

/* the same through the implicit MR: its child's notifier sees the move */
static void test_migrate_implicit(void)
{
	struct ibv_mr *imr = ibv_reg_mr(d.pd, NULL, SIZE_MAX, ALL);
	uint8_t *m = node0_buf();
	long ip0, fp0, pages;

	if (!tap_ok(imr != NULL, "implicit ODP MR: %s",
		    imr ? "registered" : strerror(errno)))
		return;
	dp_fill(pbuf, LEN, ++seed);
	if (one(IBV_WR_RDMA_WRITE, pbuf, LEN, pmr->lkey, m, imr->rkey,
		"implicit: RDMA WRITE faults the pages in on node 0"))
		tap_ret(dp_verify(m, LEN, seed), -1, "the WRITE is in place");
	expect_ic(imr, 0, "implicit MR mapped on node 0");
	pages = cnt("num_odp_mr_pages");
	ip0 = cnt("num_invalidation_pages");
	tap_ret(move_all(m, 1), NPG, "implicit: move_pages to node 1");
	tap_ret(cnt("num_invalidation_pages") - ip0, NPG,
		"num_invalidation_pages + the %d mapped pages", NPG);
	expect_ic(imr, -1, "implicit MR after the move");
	fp0 = cnt("num_page_fault_pages");
	memset(pbuf + LEN, 0, LEN);
	if (one(IBV_WR_RDMA_READ, pbuf + LEN, LEN, pmr->lkey, m, imr->rkey,
		"implicit: RDMA READ of the moved pages"))
		tap_ret(dp_verify(pbuf + LEN, LEN, seed), -1,
			"byte for byte");
	tap_ret(cnt("num_page_fault_pages") - fp0, NPG,
		"num_page_fault_pages + %d", NPG);
	expect_ic(imr, 1, "implicit MR mapped on node 1");
	tap_ret(cnt("num_odp_mr_pages") - pages, 0,
		"a move is no unmap: the child stays");
	ibv_dereg_mr(imr);
	munmap(m, LEN);
}

/* a mover thread sends the pages back and forth under RDMA traffic */
static atomic_bool stop;
static atomic_int moves, partial, move_err;

static void *mover(void *arg)
{
	int node = 1, r;

	while (!atomic_load(&stop)) {
		r = move_all(arg, node);
		if (r == NPG)
			atomic_fetch_add(&moves, 1);
		else if (r >= 0)
			atomic_fetch_add(&partial, 1);
		else
			atomic_fetch_add(&move_err, 1);
		node ^= 1;
	}
	return NULL;
}

static void test_migrate_traffic(void)
{
	uint8_t *m = node0_buf();
	struct ibv_mr *mr = dp_reg(d.pd, m, LEN, ALL);
	int i, bad_wc = 0, bad_data = 0, bad_cpu = 0;
	long i0 = cnt("num_invalidations");
	pthread_t t;

	memset(m, 0, LEN);
	atomic_store(&stop, false);
	if (pthread_create(&t, NULL, mover, m))
		tap_bail("pthread_create");
	/* at least 40 rounds, and on until the mover has moved 10 times */
	for (i = 0; (i < 40 || atomic_load(&moves) < 10) && i < 2000; i++) {
		struct ibv_wc wc;
		uint32_t s = ++seed;

		dp_fill(pbuf, LEN, s);
		memset(pbuf + LEN, 0, LEN);
		if (dp_post_send1(a.qp, ++wr_id, IBV_WR_RDMA_WRITE, pbuf, LEN,
				  pmr->lkey, (uintptr_t)m, mr->rkey, 0) ||
		    dp_poll(a.scq, &wc, 1, DP_WAIT_MS) != 1 ||
		    wc.status != IBV_WC_SUCCESS) {
			bad_wc++;
			break;
		}
		if (dp_post_send1(a.qp, ++wr_id, IBV_WR_RDMA_READ,
				  pbuf + LEN, LEN, pmr->lkey, (uintptr_t)m,
				  mr->rkey, 0) ||
		    dp_poll(a.scq, &wc, 1, DP_WAIT_MS) != 1 ||
		    wc.status != IBV_WC_SUCCESS) {
			bad_wc++;
			break;
		}
		bad_data += dp_verify(pbuf + LEN, LEN, s) != -1;
		bad_cpu += dp_verify(m, LEN, s) != -1;
	}
	atomic_store(&stop, true);
	pthread_join(t, NULL);
	tap_diag("%d WRITE+READ rounds; %d full moves, %d partial, %d failed",
		 i, atomic_load(&moves), atomic_load(&partial),
		 atomic_load(&move_err));
	tap_ret(bad_wc, 0, "every WRITE and READ under migration: SUCCESS");
	tap_ret(bad_data, 0, "every READ returned the WRITE's data");
	tap_ret(bad_cpu, 0, "the process saw every WRITE byte for byte");
	tap_ok(atomic_load(&moves) >= 10 && atomic_load(&move_err) == 0,
	       "the pages moved between the nodes during the traffic");
	tap_ok(cnt("num_invalidations") > i0,
	       "migrations invalidated the device's mappings");
	dp_fill(pbuf, LEN, ++seed);
	if (one(IBV_WR_RDMA_WRITE, pbuf, LEN, pmr->lkey, m, mr->rkey,
		"a WRITE after the moves"))
		tap_ret(dp_verify(m, LEN, seed), -1, "lands whole");
	ibv_dereg_mr(mr);
	munmap(m, LEN);
}

int main(void)
{
	struct ibv_device_attr_ex ax;
	char map[256];
	FILE *f;

	dp_open(&d, test_dev_name());
	if (!d.rxe2) {
		tap_skip("%s: not rxe2 (rxe2dv_query_mr, ODP counters)",
			 d.name);
		return tap_done();
	}
	if (ibv_query_device_ex(d.ctx, NULL, &ax) ||
	    !(ax.odp_caps.general_caps & IBV_ODP_SUPPORT)) {
		tap_skip("%s: no ODP support", d.name);
		return tap_done();
	}
	if (online_nodes() < 2) {
		tap_skip("one NUMA node: needs a guest with two (tools/vm --numa 2)");
		return tap_done();
	}
	/* the default node -> interconnect map (node n is id n) */
	snprintf(map, sizeof(map), "/sys/class/infiniband/%s/ic_map", d.name);
	f = fopen(map, "w");
	if (f) {
		fputs("\n", f);
		fclose(f);
	}
	pbuf = dp_alloc(2 * LEN);
	pmr = dp_reg(d.pd, pbuf, 2 * LEN, DP_ACCESS_ALL);
	if (dp_rc_pair(&d, &a, &b))
		tap_bail("RC pair: %s", strerror(errno));

	test_migrate();
	test_migrate_implicit();
	test_migrate_traffic();

	dp_qp_free(&a);
	dp_qp_free(&b);
	ibv_dereg_mr(pmr);
	dp_close(&d);
	return tap_done();
}
