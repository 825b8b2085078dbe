// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: device memory: ibv_alloc_dm within max_dm_size, copies in 4-byte words and their errors, ibv_reg_dm_mr, EBUSY, ibv_import_dm, DM MRs as WRITE/READ/atomic targets and SEND/receive memory
 *
 * Device memory: ibv_alloc_dm/ibv_free_dm within max_dm_size (exactly:
 * the module's default 4 MiB, charged in pages), ibv_memcpy_to_dm and
 * ibv_memcpy_from_dm byte-exact, in 4-byte words as mlx5's (EINVAL
 * otherwise) and bounded by the allocation (EFAULT), ibv_reg_dm_mr
 * (zero-based; range and access checked; zero-length allowed), a DM
 * busy while an MR is over it, ibv_import_dm in a second context over
 * the command fd, and a DM MR on the data path: the target of remote
 * WRITE, READ and atomics, and the local memory of SEND and receive,
 * each checked through the copy verbs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dp.h"
#include "tap.h"
#include "util.h"

#define MAX_DM		(4u << 20)	/* rdma_rxe2's default max_dm_size */
#define DM_LEN		65536
#define MR_OFF		128		/* the DM MR starts here in the DM */
#define MR_LEN		16384
#define ZB		IBV_ACCESS_ZERO_BASED

static struct dp_dev dev;

static struct ibv_dm *alloc_dm(uint64_t length)
{
	struct ibv_alloc_dm_attr a = { .length = length };

	return ibv_alloc_dm(dev.ctx, &a);
}

static void expect_alloc_fails(uint64_t length, int err, const char *what)
{
	struct ibv_dm *dm;

	errno = 0;
	dm = alloc_dm(length);
	tap_ok(!dm && errno == err, "%s: %s (%s)", what, strerror(err),
	       dm ? "allocated" : strerror(errno));
	if (dm)
		ibv_free_dm(dm);
}

static void limits(void)
{
	struct ibv_device_attr_ex a;
	struct ibv_alloc_dm_attr bad = { .length = 4096, .comp_mask = 1 };
	struct ibv_dm *dm[4], *x;
	int i, n = 0;

	tap_ret_errno(ibv_query_device_ex(dev.ctx, NULL, &a), 0,
		      "ibv_query_device_ex");
	tap_ret(a.max_dm_size, MAX_DM, "max_dm_size is the module's 4 MiB");
	expect_alloc_fails(0, EINVAL, "ibv_alloc_dm of 0 bytes");
	expect_alloc_fails(MAX_DM + 1ULL, EINVAL,
			   "ibv_alloc_dm of max_dm_size + 1");
	errno = 0;
	x = ibv_alloc_dm(dev.ctx, &bad);
	tap_ok(!x && errno == EINVAL, "ibv_alloc_dm with an unknown comp_mask: EINVAL");
	for (i = 0; i < 4; i++)
		n += !!(dm[i] = alloc_dm(MAX_DM / 4));
	tap_ret(n, 4, "four DMs of 1 MiB fill max_dm_size");
	expect_alloc_fails(1, ENOMEM, "one more byte (a page)");
	if (dm[0]) {
		tap_ret_errno(ibv_free_dm(dm[0]), 0, "free one");
		dm[0] = alloc_dm(MAX_DM / 4 - 4095);
		tap_ok(dm[0] != NULL, "its 1 MiB (in pages) can be had again");
		expect_alloc_fails(1, ENOMEM, "and nothing more");
	}
	for (i = 0; i < 4; i++)
		if (dm[i])
			ibv_free_dm(dm[i]);
	x = alloc_dm(MAX_DM);
	tap_ok(x != NULL, "all of it in one DM once the others are freed");
	if (x)
		ibv_free_dm(x);
}

/*
 * A copy both ways that must be refused with err, the DM left as it
 * was.  A wrong answer to a huge length would read or write far past
 * the buffers here: the test then fails by its crash.
 */
static void expect_copy_fails(struct ibv_dm *dm, const uint8_t *was,
			      uint64_t off, size_t len, int err,
			      const char *what)
{
	static uint8_t junk[2048], out[2048];

	memset(junk, 0x5a, sizeof(junk));
	tap_ret_errno(ibv_memcpy_to_dm(dm, off, junk, len), err,
		      "memcpy_to_dm %s", what);
	tap_ret_errno(ibv_memcpy_from_dm(out, dm, off, len), err,
		      "memcpy_from_dm %s", what);
	ibv_memcpy_from_dm(out, dm, 0, 1000);
	tap_ok(!memcmp(out, was, 1000), "%s: the DM unchanged", what);
}

/*
 * Copies answer as mlx5's: in 4-byte words, so an offset or length not
 * a multiple of 4 is EINVAL, and a range outside the allocation (the
 * 1000 bytes asked for, not the page) is EFAULT, checked first.
 */
static void copies(void)
{
	uint8_t in[3000], out[3000];
	struct ibv_dm *dm = alloc_dm(1000);

	if (!tap_ok(dm != NULL, "ibv_alloc_dm of 1000 bytes"))
		return;
	dp_fill(in, sizeof(in), 3);
	tap_ret_errno(ibv_memcpy_to_dm(dm, 0, in, 1000), 0,
		      "memcpy_to_dm, all 1000 bytes");
	memset(out, 0, sizeof(out));
	tap_ret_errno(ibv_memcpy_from_dm(out, dm, 0, 1000), 0,
		      "memcpy_from_dm, all 1000 bytes");
	tap_ret(dp_verify(out, 1000, 3), -1, "byte-exact");
	tap_ret_errno(ibv_memcpy_to_dm(dm, 996, "abcd", 4), 0,
		      "memcpy_to_dm of the last word, at 996");
	memcpy(in + 996, "abcd", 4);
	tap_ret_errno(ibv_memcpy_from_dm(out, dm, 988, 12), 0,
		      "memcpy_from_dm of 12 bytes at 988");
	tap_ok(!memcmp(out, in + 988, 8) && !memcmp(out + 8, "abcd", 4),
	       "the words before and the new one");
	tap_ret_errno(ibv_memcpy_to_dm(dm, 1000, in, 0), 0,
		      "memcpy_to_dm of 0 bytes at the end");

	expect_copy_fails(dm, in, 997, 3, EINVAL,
			  "of 3 bytes at 997 (offset, length unaligned): EINVAL");
	expect_copy_fails(dm, in, 1, 4, EINVAL,
			  "of 4 bytes at 1 (offset unaligned): EINVAL");
	expect_copy_fails(dm, in, 4, 6, EINVAL,
			  "of 6 bytes at 4 (length unaligned): EINVAL");
	expect_copy_fails(dm, in, 2, 0, EINVAL,
			  "of 0 bytes at 2 (offset unaligned): EINVAL");
	expect_copy_fails(dm, in, 992, 12, EFAULT,
			  "of 12 bytes at 992, past the 1000 asked for (not the page): EFAULT");
	expect_copy_fails(dm, in, 1004, 4, EFAULT,
			  "at an offset past the end: EFAULT");
	expect_copy_fails(dm, in, 997, 5, EFAULT,
			  "past the end and unaligned: EFAULT first");
	expect_copy_fails(dm, in, 0, 1004, EFAULT,
			  "of 1004 bytes: EFAULT");
	expect_copy_fails(dm, in, 8, (size_t)-4, EFAULT,
			  "of SIZE_MAX - 3 bytes at 8 (wraps): EFAULT");
	expect_copy_fails(dm, in, (uint64_t)-4, 8, EFAULT,
			  "of 8 bytes at UINT64_MAX - 3 (wraps): EFAULT");
	tap_ret_errno(ibv_free_dm(dm), 0, "ibv_free_dm");
}

static void expect_reg_fails(struct ibv_dm *dm, uint64_t off, size_t len,
			     unsigned int access, int err, const char *what)
{
	struct ibv_mr *mr;

	errno = 0;
	mr = ibv_reg_dm_mr(dev.pd, dm, off, len, access);
	tap_ok(!mr && errno == err, "%s: %s (%s)", what, strerror(err),
	       mr ? "registered" : strerror(errno));
	if (mr)
		ibv_dereg_mr(mr);
}

static void registration(void)
{
	struct ibv_dm *dm = alloc_dm(DM_LEN);
	struct ibv_mr *mr;

	if (!tap_ok(dm != NULL, "ibv_alloc_dm of 64 KiB"))
		return;
	expect_reg_fails(dm, 0, 4096, IBV_ACCESS_LOCAL_WRITE, EINVAL,
			 "reg_dm_mr without IBV_ACCESS_ZERO_BASED");
	expect_reg_fails(dm, DM_LEN - 4095, 4096, ZB, EINVAL,
			 "reg_dm_mr past the DM's end");
	expect_reg_fails(dm, DM_LEN + 1, 0, ZB, EINVAL,
			 "reg_dm_mr at an offset past the end");
	expect_reg_fails(dm, 0, 4096, ZB | IBV_ACCESS_MW_BIND, EINVAL,
			 "reg_dm_mr with MW_BIND");
	expect_reg_fails(dm, 0, 4096, ZB | IBV_ACCESS_ON_DEMAND |
			 IBV_ACCESS_LOCAL_WRITE, EINVAL,
			 "reg_dm_mr with ON_DEMAND");
	expect_reg_fails(dm, 0, 4096, ZB | IBV_ACCESS_REMOTE_WRITE, EINVAL,
			 "reg_dm_mr with remote write but no local write");
	/* as on mlx5 (and ib_core): keys over no byte of the DM */
	mr = ibv_reg_dm_mr(dev.pd, dm, MR_OFF, 0, ZB | IBV_ACCESS_LOCAL_WRITE);
	if (tap_ok(mr != NULL, "reg_dm_mr of 0 bytes: %s",
		   mr ? "ok" : strerror(errno))) {
		tap_ok(mr->addr == NULL && mr->length == 0 &&
		       mr->lkey == mr->rkey, "addr NULL, length 0, keys");
		tap_ret_errno(ibv_free_dm(dm), EBUSY,
			      "ibv_free_dm with a zero-length MR over it: EBUSY");
		tap_ret_errno(ibv_dereg_mr(mr), 0, "ibv_dereg_mr of it");
	}
	mr = ibv_reg_dm_mr(dev.pd, dm, DM_LEN, 0, ZB | IBV_ACCESS_LOCAL_WRITE);
	tap_ok(mr != NULL, "reg_dm_mr of 0 bytes at the DM's end: %s",
	       mr ? "ok" : strerror(errno));
	if (mr)
		ibv_dereg_mr(mr);
	mr = ibv_reg_dm_mr(dev.pd, dm, MR_OFF, MR_LEN,
			   ZB | IBV_ACCESS_LOCAL_WRITE);
	if (tap_ok(mr != NULL, "reg_dm_mr of 16 KiB at offset 128: %s",
		   mr ? "ok" : strerror(errno))) {
		tap_ok(mr->addr == NULL && mr->length == MR_LEN &&
		       mr->lkey == mr->rkey, "addr NULL (zero-based), length, keys");
		tap_ret_errno(ibv_free_dm(dm), EBUSY, "ibv_free_dm with an MR over it: EBUSY");
		tap_ret_errno(ibv_dereg_mr(mr), 0, "ibv_dereg_mr");
	}
	tap_ret_errno(ibv_free_dm(dm), 0, "ibv_free_dm once the MR is gone");
}

/* a loopback RC pair whose peer b targets a DM MR */
static void data_path(void)
{
	const char *what;
	struct dp_qp a, b;
	struct ibv_dm *dm = alloc_dm(DM_LEN);
	uint8_t *host = dp_alloc(DM_LEN), *chk = dp_alloc(DM_LEN);
	struct ibv_mr *hmr = dp_reg(dev.pd, host, DM_LEN, DP_ACCESS_ALL), *dmr;
	struct dp_wc_want w;
	uint64_t v;

	if (!tap_ok(dm != NULL, "ibv_alloc_dm of 64 KiB for the data path"))
		return;
	dmr = ibv_reg_dm_mr(dev.pd, dm, MR_OFF, MR_LEN, ZB | DP_ACCESS_ALL);
	if (!tap_ok(dmr != NULL, "a DM MR with every access") ||
	    dp_rc_pair(&dev, &a, &b))
		goto out;

	what = "RDMA WRITE of 5000 B to a DM MR at 10";
	dp_fill(host, 5000, 11);
	dp_post_send1(a.qp, 1, IBV_WR_RDMA_WRITE, host, 5000, hmr->lkey, 10,
		      dmr->rkey, 0);
	w = dp_want(1, IBV_WC_RDMA_WRITE);
	dp_expect(a.scq, &w, "%s", what);
	memset(chk, 0xee, DM_LEN);
	ibv_memcpy_from_dm(chk, dm, 0, DM_LEN);
	tap_ret(dp_verify(chk + MR_OFF + 10, 5000, 11), -1,
		"%s: byte-exact through memcpy_from_dm", what);
	tap_ok(dp_verify_byte(chk, MR_OFF + 10, 0) < 0 &&
	       dp_verify_byte(chk + MR_OFF + 5010, DM_LEN - MR_OFF - 5010, 0) < 0,
	       "%s: nothing else written", what);

	what = "RDMA READ of 3000 B from a DM MR at 8000";
	dp_fill(chk, 3000, 12);
	ibv_memcpy_to_dm(dm, MR_OFF + 8000, chk, 3000);
	memset(host, 0, 3000);
	dp_post_send1(a.qp, 2, IBV_WR_RDMA_READ, host, 3000, hmr->lkey, 8000,
		      dmr->rkey, 0);
	w = dp_want(2, IBV_WC_RDMA_READ);
	w.byte_len = 3000;
	dp_expect(a.scq, &w, "%s", what);
	tap_ret(dp_verify(host, 3000, 12), -1, "%s: byte-exact", what);

	what = "FETCH_ADD on a DM MR at 64";
	v = 1000;
	ibv_memcpy_to_dm(dm, MR_OFF + 64, &v, 8);
	dp_post_send1(a.qp, 3, IBV_WR_ATOMIC_FETCH_AND_ADD, host, 8,
		      hmr->lkey, 64, dmr->rkey, 0);
	/* dp_post_send1() adds 1 */
	w = dp_want(3, IBV_WC_FETCH_ADD);
	dp_expect(a.scq, &w, "%s", what);
	ibv_memcpy_from_dm(&v, dm, MR_OFF + 64, 8);
	tap_ok(*(uint64_t *)host == 1000 && v == 1001,
	       "%s: the old value 1000 back (got %llu), 1001 in the DM (%llu)",
	       what, (unsigned long long)*(uint64_t *)host,
	       (unsigned long long)v);

	what = "SEND from a DM MR into host memory";
	dp_fill(chk, 700, 13);
	ibv_memcpy_to_dm(dm, MR_OFF + 200, chk, 700);
	memset(host, 0, 1024);
	dp_post_recv1(b.qp, 4, host, 1024, hmr->lkey);
	dp_post_send1(a.qp, 4, IBV_WR_SEND, (void *)200, 700, dmr->lkey, 0, 0,
		      0);
	w = dp_want(4, IBV_WC_SEND);
	dp_expect(a.scq, &w, "%s: send", what);
	w = dp_want(4, IBV_WC_RECV);
	w.byte_len = 700;
	dp_expect(b.rcq, &w, "%s: receive", what);
	tap_ret(dp_verify(host, 700, 13), -1, "%s: byte-exact", what);

	what = "SEND from host memory into a DM MR";
	dp_fill(host, 900, 14);
	dp_post_recv1(b.qp, 5, (void *)4096, 1024, dmr->lkey);
	dp_post_send1(a.qp, 5, IBV_WR_SEND, host, 900, hmr->lkey, 0, 0, 0);
	w = dp_want(5, IBV_WC_SEND);
	dp_expect(a.scq, &w, "%s: send", what);
	w = dp_want(5, IBV_WC_RECV);
	w.byte_len = 900;
	dp_expect(b.rcq, &w, "%s: receive", what);
	ibv_memcpy_from_dm(chk, dm, MR_OFF + 4096, 900);
	tap_ret(dp_verify(chk, 900, 14), -1, "%s: byte-exact", what);

	what = "RDMA WRITE past the DM MR's end";
	dp_post_send1(a.qp, 6, IBV_WR_RDMA_WRITE, host, 64, hmr->lkey,
		      MR_LEN - 32, dmr->rkey, 0);
	w = dp_want(6, IBV_WC_RDMA_WRITE);
	w.status = IBV_WC_REM_ACCESS_ERR;
	w.opcode = -1;
	dp_expect(a.scq, &w, "%s", what);
	dp_qp_free(&a);
	dp_qp_free(&b);
out:
	if (dmr)
		ibv_dereg_mr(dmr);
	tap_ret_errno(ibv_free_dm(dm), 0, "ibv_free_dm after the traffic");
	ibv_dereg_mr(hmr);
	free(host);
	free(chk);
}

/*
 * ibv_import_dm in a second context over a dup()ed command fd (as
 * rdma-core's test_import_dm): the same pages, written on either side
 * and read byte-exact on the other, the same handle and the length
 * asked for as the copies' bound, an MR over the imported DM on the
 * imported PD, handles that name no DM refused, and after unimport the
 * DM still the exporter's.
 */
static void import(void)
{
	static uint8_t buf[6000], out[6000];
	struct ibv_context *ctx2;
	struct ibv_dm *dm, *idm;
	struct ibv_pd *pd2;
	struct ibv_mr *mr;
	int fd;

	dm = alloc_dm(sizeof(buf));
	if (!tap_ok(dm != NULL, "ibv_alloc_dm of 6000 bytes to import"))
		return;
	dp_fill(buf, sizeof(buf), 21);
	ibv_memcpy_to_dm(dm, 0, buf, sizeof(buf));
	fd = dup(dev.ctx->cmd_fd);
	ctx2 = fd < 0 ? NULL : ibv_import_device(fd);
	if (!tap_ok(ctx2 != NULL, "ibv_import_device(dup of cmd_fd)")) {
		if (fd >= 0)
			close(fd);
		goto out;
	}
	errno = 0;
	idm = ibv_import_dm(ctx2, dm->handle);
	if (!tap_ok(idm != NULL, "ibv_import_dm: %s",
		    idm ? "ok" : strerror(errno)))
		goto out_ctx;
	tap_ok(idm->handle == dm->handle && idm->context == ctx2,
	       "the imported DM: the same handle, the importer's context");
	memset(out, 0, sizeof(out));
	tap_ret_errno(ibv_memcpy_from_dm(out, idm, 0, sizeof(out)), 0,
		      "memcpy_from_dm of all 6000 bytes through the import");
	tap_ret(dp_verify(out, sizeof(out), 21), -1,
		"the exporter's bytes, byte-exact");
	dp_fill(buf, 2000, 22);
	tap_ret_errno(ibv_memcpy_to_dm(idm, 4000, buf, 2000), 0,
		      "memcpy_to_dm of 2000 bytes at 4000 through the import");
	memset(out, 0, sizeof(out));
	ibv_memcpy_from_dm(out, dm, 4000, 2000);
	tap_ret(dp_verify(out, 2000, 22), -1,
		"the exporter reads them byte-exact");
	tap_ret_errno(ibv_memcpy_from_dm(out, idm, 5996, 8), EFAULT,
		      "the import is bounded by the 6000 bytes asked for: EFAULT");
	tap_ret_errno(ibv_memcpy_to_dm(idm, 2, buf, 4), EINVAL,
		      "and copies in words: EINVAL");

	pd2 = ibv_import_pd(ctx2, dev.pd->handle);
	mr = pd2 ? ibv_reg_dm_mr(pd2, idm, 0, 4096,
				 ZB | IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (tap_ok(mr != NULL, "reg_dm_mr over the imported DM: %s",
		   mr ? "ok" : strerror(errno))) {
		tap_ret_errno(ibv_free_dm(dm), EBUSY,
			      "that MR keeps the exporter's DM busy: EBUSY");
		ibv_dereg_mr(mr);
	}
	if (pd2)
		ibv_unimport_pd(pd2);
	ibv_unimport_dm(idm);

	tap_null_errno(ibv_import_dm(ctx2, 0x7fffffff), ENOENT,
		       "ibv_import_dm of a handle that names nothing: ENOENT");
	tap_null_errno(ibv_import_dm(ctx2, dev.pd->handle), EINVAL,
		       "ibv_import_dm of a PD's handle: EINVAL");
out_ctx:
	ibv_close_device(ctx2);
out:
	memset(out, 0, sizeof(out));
	ibv_memcpy_from_dm(out, dm, 4000, 2000);
	tap_ret(dp_verify(out, 2000, 22), -1,
		"after unimport the DM and its bytes are the exporter's");
	tap_ret_errno(ibv_free_dm(dm), 0, "ibv_free_dm of the exported DM");
}

int main(void)
{
	dp_open(&dev, test_dev_name());
	limits();
	copies();
	registration();
	import();
	data_path();
	dp_close(&dev);
	return tap_done();
}
