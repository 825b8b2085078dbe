// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: PDs and MRs: allocation, every legal and forbidden access combination, key uniqueness, bad lengths and memory, a PD busy with an MR
 *
 * Protection domains and memory regions: allocation, every legal and
 * forbidden access combination, key uniqueness, bad lengths and bad
 * memory, and a PD that cannot die while an MR holds it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tap.h"
#include "util.h"

#define BUF_SIZE (64 * 1024)

static const char *dev;

static void test_pd(struct ibv_context *ctx)
{
	int before = res_count(dev, "pd");
	struct ibv_pd *pd1, *pd2;

	pd1 = ibv_alloc_pd(ctx);
	pd2 = ibv_alloc_pd(ctx);
	if (!tap_ok(pd1 && pd2, "ibv_alloc_pd twice"))
		tap_bail("no PD: %s", strerror(errno));
	tap_ok(pd1->handle != pd2->handle, "the two PDs have distinct handles");
	tap_ok(pd1->context == ctx, "pd->context is the context");
	tap_ret(res_count(dev, "pd"), before + 2,
		"rdma resource show counts both PDs");
	tap_ret_errno(ibv_dealloc_pd(pd2), 0, "ibv_dealloc_pd");
	tap_ret_errno(ibv_dealloc_pd(pd1), 0, "ibv_dealloc_pd");
	tap_ret(res_count(dev, "pd"), before,
		"rdma resource show count back after dealloc");
}

static bool access_legal(int access)
{
	return !(access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) ||
	       (access & IBV_ACCESS_LOCAL_WRITE);
}

#define REMOTE (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
		IBV_ACCESS_REMOTE_ATOMIC)

static void test_access(struct ibv_pd *pd, char *buf)
{
	struct ibv_mr *mrs[16];
	int acc[16];
	int nmr = 0, access, i, j;
	bool uniq = true;

	for (access = 0; access < 16; access++) {
		struct ibv_mr *mr = ibv_reg_mr(pd, buf, BUF_SIZE, access);

		if (access_legal(access)) {
			if (tap_ok(mr != NULL, "ibv_reg_mr access 0x%x", access)) {
				acc[nmr] = access;
				mrs[nmr++] = mr;
			} else {
				tap_diag("  errno %d (%s)", errno,
					 strerror(errno));
			}
		} else {
			tap_null_errno(mr, EINVAL,
				       "ibv_reg_mr access 0x%x (remote write/atomic without local write) -> EINVAL",
				       access);
			if (mr)
				ibv_dereg_mr(mr);
		}
	}
	tap_ret(nmr, 10, "10 of 16 combinations of the 4 access bits are legal");
	/* An MR without remote access has no meaningful rkey (rxe: 0). */
	for (i = 0; i < nmr; i++)
		for (j = i + 1; j < nmr; j++)
			if (mrs[i]->lkey == mrs[j]->lkey)
				uniq = false;
	tap_ok(uniq, "lkeys are distinct across %d live MRs", nmr);
	uniq = true;
	for (i = 0; i < nmr; i++)
		for (j = i + 1; j < nmr; j++)
			if ((acc[i] & REMOTE) && (acc[j] & REMOTE) &&
			    mrs[i]->rkey == mrs[j]->rkey)
				uniq = false;
	tap_ok(uniq, "rkeys are distinct across the live MRs with remote access");
	if (nmr) {
		tap_ok(mrs[0]->addr == buf && mrs[0]->length == BUF_SIZE &&
		       mrs[0]->pd == pd,
		       "the MR reports its addr, length and pd");
	}
	for (i = 0; i < nmr; i++)
		if (ibv_dereg_mr(mrs[i]))
			break;
	tap_ok(i == nmr, "ibv_dereg_mr all of them");
}

static void test_bad_mr(struct ibv_pd *pd, char *buf, bool rxe2)
{
	struct ibv_device_attr a;
	struct ibv_mr *mr;
	long page = sysconf(_SC_PAGESIZE);
	char *p;
	int err;

	if (ibv_query_device(pd->context, &a))
		tap_bail("ibv_query_device");

	/*
	 * A zero-length MR covers no page: ib_umem_get() refuses it, and
	 * rxe2_reg_user_mr() refuses it first with EINVAL.
	 */
	mr = ibv_reg_mr(pd, buf, 0, IBV_ACCESS_LOCAL_WRITE);
	tap_null_errno(mr, EINVAL, "ibv_reg_mr length 0 -> EINVAL");
	if (mr)
		ibv_dereg_mr(mr);

	if (a.max_mr_size < UINT64_MAX - (uintptr_t)buf) {
		mr = ibv_reg_mr(pd, buf, a.max_mr_size + 1,
				IBV_ACCESS_LOCAL_WRITE);
		tap_null_errno(mr, EINVAL,
			       "ibv_reg_mr length max_mr_size+1 (0x%llx) -> EINVAL",
			       (unsigned long long)a.max_mr_size + 1);
		if (mr)
			ibv_dereg_mr(mr);
	} else {
		tap_skip("max_mr_size 0x%llx leaves no larger length%s",
			 (unsigned long long)a.max_mr_size,
			 rxe2 ? " (rxe2 should report a real limit)" : "");
	}

	/* start + length wraps around the address space */
	mr = ibv_reg_mr(pd, buf, SIZE_MAX - (uintptr_t)buf + 2,
			IBV_ACCESS_LOCAL_WRITE);
	tap_null_errno(mr, EINVAL,
		       "ibv_reg_mr whose end wraps past 2^64 -> EINVAL");
	if (mr)
		ibv_dereg_mr(mr);

	p = mmap(NULL, 4 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		 0);
	if (p == MAP_FAILED)
		tap_bail("mmap");
	mr = ibv_reg_mr(pd, p, 4 * page, IBV_ACCESS_LOCAL_WRITE);
	tap_null_errno(mr, EFAULT, "ibv_reg_mr on PROT_NONE memory -> EFAULT");
	if (mr)
		ibv_dereg_mr(mr);

	if (mprotect(p, 4 * page, PROT_READ))
		tap_bail("mprotect");
	mr = ibv_reg_mr(pd, p, 4 * page, IBV_ACCESS_LOCAL_WRITE);
	tap_null_errno(mr, EFAULT,
		       "ibv_reg_mr LOCAL_WRITE on read-only memory -> EFAULT");
	if (mr)
		ibv_dereg_mr(mr);
	mr = ibv_reg_mr(pd, p, 4 * page, IBV_ACCESS_REMOTE_READ);
	err = errno;
	if (!tap_ok(mr != NULL, "ibv_reg_mr REMOTE_READ on read-only memory"))
		tap_diag("  errno %d (%s)", err, strerror(err));
	if (mr)
		tap_ret_errno(ibv_dereg_mr(mr), 0, "ibv_dereg_mr it");
	else
		tap_skip("no MR to deregister");

	munmap(p, 4 * page);
	mr = ibv_reg_mr(pd, p, 4 * page, 0);
	tap_null_errno(mr, EFAULT, "ibv_reg_mr on an unmapped range -> EFAULT");
	if (mr)
		ibv_dereg_mr(mr);

	/* Only partly mapped: the tail page is gone. */
	mr = ibv_reg_mr(pd, buf + BUF_SIZE - page, 2 * page, 0);
	if (mr) {
		/* buf's neighbour happened to be mapped: not a finding */
		ibv_dereg_mr(mr);
		tap_skip("the page after the buffer is mapped");
	} else {
		tap_null_errno(mr, EFAULT,
			       "ibv_reg_mr running off the end of a mapping -> EFAULT");
	}
}

static void test_busy_pd(struct ibv_context *ctx, char *buf)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_mr *mr;

	if (!pd)
		tap_bail("ibv_alloc_pd");
	mr = ibv_reg_mr(pd, buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE);
	if (!tap_ok(mr != NULL, "ibv_reg_mr for the busy-PD check"))
		return;
	tap_ret_errno(ibv_dealloc_pd(pd), EBUSY,
		      "ibv_dealloc_pd with a live MR -> EBUSY");
	tap_ret_errno(ibv_dereg_mr(mr), 0, "ibv_dereg_mr");
	tap_ret_errno(ibv_dealloc_pd(pd), 0, "then ibv_dealloc_pd succeeds");
}

int main(void)
{
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	char *buf;
	bool rxe2;

	dev = test_dev_name();
	rxe2 = test_is_rxe2(dev);
	ctx = test_open(dev);
	/* its own mapping, so that the page after it is unmapped */
	buf = mmap(NULL, BUF_SIZE + 4096, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		tap_bail("mmap");
	munmap(buf + BUF_SIZE, 4096);
	memset(buf, 0x5a, BUF_SIZE);

	test_pd(ctx);
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		tap_bail("ibv_alloc_pd");
	test_access(pd, buf);
	test_bad_mr(pd, buf, rxe2);
	tap_ret_errno(ibv_dealloc_pd(pd), 0, "ibv_dealloc_pd after all MRs");
	test_busy_pd(ctx, buf);
	ibv_close_device(ctx);
	return tap_done();
}
