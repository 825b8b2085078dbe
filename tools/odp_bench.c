// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ODP probe for tools/bench: on one device (RXE2_DEV, default rxe2_0),
 * over a loopback RC pair, 4 KiB RDMA WRITEs one at a time into NPAGES
 * never-touched pages of
 *   - a pinned MR,
 *   - an ODP MR (each WRITE takes a page fault),
 *   - an ODP MR prefetched with ibv_advise_mr(PREFETCH_WRITE, FLUSH),
 * printing the mean time per page of registration (+ prefetch) and the
 * WRITEs in each case (pinning is where a pinned MR touches its pages),
 * and the page faults the device handled per second in the second.  Markdown table rows:
 * | case | value | unit |.  A probe, not a test.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "dp.h"
#include "tap.h"
#include "util.h"

#define PG	4096
#define NPAGES	2048

static struct dp_dev d;
static struct dp_qp a, b;
static uint8_t *src;
static struct ibv_mr *smr;

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static long counter(const char *name)
{
	char path[256];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/ports/1/hw_counters/%s", d.name,
		 name);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* mean microseconds per page: reg_mr (+ prefetch) and a 4 KiB WRITE each */
static double run(int access, bool prefetch, double *elapsed)
{
	uint8_t *m = mmap(NULL, NPAGES * PG, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct ibv_mr *mr;
	double t0, t;
	int i;

	if (m == MAP_FAILED)
		tap_bail("mmap: %s", strerror(errno));
	/* registration counts: pinning is where a pinned MR touches pages */
	t0 = now_us();
	mr = ibv_reg_mr(d.pd, m, NPAGES * PG, access);
	if (!mr)
		tap_bail("reg_mr: %s", strerror(errno));
	if (prefetch) {
		struct ibv_sge sge = { .addr = (uintptr_t)m,
				       .length = NPAGES * PG,
				       .lkey = mr->lkey };

		if (ibv_advise_mr(d.pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
				  IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1))
			tap_bail("advise_mr: %s", strerror(errno));
	}
	for (i = 0; i < NPAGES; i++) {
		struct ibv_wc wc;

		if (dp_post_send1(a.qp, i, IBV_WR_RDMA_WRITE, src, PG,
				  smr->lkey, (uintptr_t)(m + i * PG),
				  mr->rkey, 0) ||
		    dp_poll(a.scq, &wc, 1, DP_WAIT_MS) != 1 ||
		    wc.status != IBV_WC_SUCCESS)
			tap_bail("WRITE %d failed", i);
	}
	t = now_us() - t0;
	if (elapsed)
		*elapsed = t;
	/* untimed: hand the pages back while the MR lives (an invalidation) */
	if ((access & IBV_ACCESS_ON_DEMAND) &&
	    madvise(m, NPAGES * PG, MADV_DONTNEED))
		tap_bail("madvise: %s", strerror(errno));
	ibv_dereg_mr(mr);
	munmap(m, NPAGES * PG);
	return t / NPAGES;
}

int main(void)
{
	int odp = DP_ACCESS_ALL | IBV_ACCESS_ON_DEMAND;
	double pinned, fault, pref, el;
	long f0, f1;

	dp_open(&d, test_dev_name());
	src = dp_alloc(PG);
	smr = dp_reg(d.pd, src, PG, IBV_ACCESS_LOCAL_WRITE);
	if (dp_rc_pair(&d, &a, &b))
		tap_bail("RC pair: %s", strerror(errno));
	run(DP_ACCESS_ALL, false, NULL);	/* warm up */
	pinned = run(DP_ACCESS_ALL, false, NULL);
	f0 = counter("num_page_faults");
	fault = run(odp, false, &el);
	f1 = counter("num_page_faults");
	pref = run(odp, true, NULL);
	printf("| reg_mr + first 4 KiB WRITE per page, pinned MR | %.1f | usec |\n",
	       pinned);
	printf("| reg_mr + first 4 KiB WRITE per page, ODP MR (page fault) | %.1f | usec |\n",
	       fault);
	printf("| reg_mr + advise_mr FLUSH + first 4 KiB WRITE per page, ODP MR | %.1f | usec |\n",
	       pref);
	if (f0 >= 0 && f1 >= f0)
		printf("| ODP page faults handled per second (one WRITE in flight) | %.0f | faults/s |\n",
		       (f1 - f0) / (el / 1e6));
	dp_qp_free(&a);
	dp_qp_free(&b);
	ibv_dereg_mr(smr);
	dp_close(&d);
	return 0;
}
