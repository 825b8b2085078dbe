// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: physical-address MRs (rxe2dv_reg_pa_mr): EPERM without allow_pa_mr or CAP_SYS_RAWIO, WRITE/READ/FETCH_ADD at a locked page's physical address, unusable addresses, inline-receive QPs
 *
 * Physical-address MRs (rxe2dv_reg_pa_mr).
 *
 * - refused with EPERM while rdma_rxe2's allow_pa_mr is off, and, with
 *   it on, in a child that dropped CAP_SYS_RAWIO; RXE2DV_DEVICE_CAP_PA_MR
 *   follows both;
 * - with both: RDMA WRITE and READ to the physical address of a locked
 *   page of this process (from /proc/self/pagemap), an SGE given by
 *   physical address, and a FETCH_ADD, each checked byte for byte
 *   through the page's virtual address;
 * - addresses that are not usable RAM (page 0, reserved; the local APIC's
 *   MMIO page; an address beyond any memory) fail: LOC_PROT_ERR for a
 *   local SGE, REM_ACCESS_ERR for a remote access, and nothing breaks;
 * - a QP that receives inline (rxe2dv_create_qp, max_inl_recv 64) takes
 *   no PA MR: its PA SGE is LOC_PROT_ERR, a WRITE through the PA rkey
 *   into it REM_ACCESS_ERR, a SEND into a PA receive SGE LOC_PROT_ERR
 *   at the receiver (REM_OP_ERR at the sender), the page untouched;
 * - rxe2dv_query_mr reports no valid interconnect id;
 * - turning allow_pa_mr off stops the existing MR.
 * The parameter is restored at the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/rxe2dv.h>

#include "dp.h"
#include "tap.h"
#include "util.h"

#define PARAM "/sys/module/rdma_rxe2/parameters/allow_pa_mr"
#define PAGE 4096
#define PLAN 32

static uint64_t wr_id = 1;

static int param_get(void)
{
	char c = 0;
	FILE *f = fopen(PARAM, "r");

	if (!f)
		return -1;
	if (fread(&c, 1, 1, f) != 1)
		c = 0;
	fclose(f);
	return c == 'Y';
}

static bool param_set(int on)
{
	FILE *f = fopen(PARAM, "w");
	bool ok;

	if (!f)
		return false;
	ok = fputs(on ? "1" : "0", f) >= 0;
	return !fclose(f) && ok && param_get() == on;
}

/* the physical address of va from /proc/self/pagemap (root), or 0 */
static uint64_t pa_of(const void *va)
{
	uint64_t e = 0;
	uintptr_t v = (uintptr_t)va;
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd < 0)
		return 0;
	if (pread(fd, &e, sizeof(e), (v / PAGE) * sizeof(e)) != sizeof(e))
		e = 0;
	close(fd);
	if (!(e >> 63) || !(e & ((1ull << 55) - 1)))
		return 0;
	return (e & ((1ull << 55) - 1)) * PAGE + (v & (PAGE - 1));
}

static bool pa_cap(struct ibv_context *ctx)
{
	struct rxe2dv_device_attr attr = {};

	if (rxe2dv_query_device(ctx, &attr, sizeof(attr)))
		return false;
	return attr.device_caps & RXE2DV_DEVICE_CAP_PA_MR;
}

/* child: drop CAP_SYS_RAWIO, open the device; 0 if refused with EPERM */
static int child_no_rawio(const char *dev)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;

	if (syscall(SYS_capget, &h, data))
		return 2;
	data[0].effective &= ~(1u << CAP_SYS_RAWIO);
	data[0].permitted &= ~(1u << CAP_SYS_RAWIO);
	if (syscall(SYS_capset, &h, data))
		return 3;
	ctx = test_open(dev);
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		return 4;
	if (pa_cap(ctx))
		return 5;
	mr = rxe2dv_reg_pa_mr(pd, DP_ACCESS_ALL);
	if (mr)
		return 6;
	if (errno != EPERM) {
		fprintf(stderr, "# child: %s, want EPERM\n", strerror(errno));
		return 7;
	}
	return 0;
}

static int run_child(const char *dev)
{
	pid_t pid;
	int st;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		tap_bail("fork: %s", strerror(errno));
	if (!pid)
		_exit(child_no_rawio(dev));
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* one op on a fresh pair; its completion checked */
static void op1(struct dp_dev *d, enum ibv_wr_opcode op, int wc_op,
		uint64_t laddr, uint32_t len, uint32_t lkey, uint64_t raddr,
		uint32_t rkey, int status, const char *what)
{
	struct dp_wc_want w = dp_want(wr_id, wc_op);
	struct dp_qp a, b;
	int ret;

	if (dp_rc_pair(d, &a, &b))
		tap_bail("no QP pair");
	w.status = status;
	ret = dp_post_send1(a.qp, wr_id++, op, (void *)(uintptr_t)laddr, len,
			    lkey, raddr, rkey, 0);
	if (ret)
		tap_ok(false, "%s: post: %s", what, strerror(ret));
	else
		dp_expect(a.scq, &w, "%s", what);
	dp_qp_free(&a);
	dp_qp_free(&b);
}

/* an RC pair whose b receives inline (rxe2dv_create_qp, 64 bytes) */
static void inl_pair(struct dp_dev *d, struct dp_qp *a, struct dp_qp *b)
{
	struct ibv_qp_init_attr_ex x = {
		.qp_type = IBV_QPT_RC,
		.cap = dp_small_cap,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = d->pd,
	};
	struct rxe2dv_qp_init_attr dv = {
		.comp_mask = RXE2DV_QP_INIT_ATTR_MASK_INLINE_RECV,
		.max_inl_recv = 64,
	};
	struct dp_conn c;

	memset(a, 0, sizeof(*a));
	memset(b, 0, sizeof(*b));
	a->d = b->d = d;
	a->scq = ibv_create_cq(d->ctx, 16, NULL, NULL, 0);
	a->rcq = ibv_create_cq(d->ctx, 16, NULL, NULL, 0);
	b->scq = ibv_create_cq(d->ctx, 16, NULL, NULL, 0);
	b->rcq = ibv_create_cq(d->ctx, 16, NULL, NULL, 0);
	if (!a->scq || !a->rcq || !b->scq || !b->rcq)
		tap_bail("ibv_create_cq: %s", strerror(errno));
	a->qp = dp_create_qp(d, IBV_QPT_RC, a->scq, a->rcq, NULL,
			     &dp_small_cap);
	x.send_cq = b->scq;
	x.recv_cq = b->rcq;
	b->qp = rxe2dv_create_qp(d->ctx, &x, &dv, sizeof(dv));
	if (!a->qp || !b->qp)
		tap_bail("create QPs: %s", strerror(errno));
	if (dv.max_inl_recv != 64)
		tap_bail("inline size applied %u, want 64", dv.max_inl_recv);
	dp_conn_default(&c);
	if (dp_connect(a->qp, d, &d->gid, b->qp->qp_num, &c) ||
	    dp_connect(b->qp, d, &d->gid, a->qp->qp_num, &c))
		tap_bail("connect");
}

/* seed 004: no PA MR on a QP that receives inline */
static void test_inline_qp(struct dp_dev *d, struct ibv_mr *pa_mr,
			   uint8_t *page, uint64_t pa, uint8_t *buf,
			   struct ibv_mr *bmr)
{
	static uint8_t before[PAGE];
	struct dp_wc_want w;
	struct dp_qp a, b;
	int ret;

	memcpy(before, page, PAGE);

	inl_pair(d, &a, &b);
	w = dp_want(wr_id, IBV_WC_RDMA_WRITE);
	w.status = IBV_WC_LOC_PROT_ERR;
	ret = dp_post_send1(b.qp, wr_id++, IBV_WR_RDMA_WRITE,
			    (void *)(uintptr_t)(pa + 200), 64, pa_mr->lkey,
			    (uintptr_t)buf, bmr->rkey, 0);
	if (ret)
		tap_ok(false, "inline QP, PA SGE: post: %s", strerror(ret));
	else
		dp_expect(b.scq, &w, "inline-receive QP, WRITE from a PA SGE: "
			  "LOC_PROT_ERR");
	dp_qp_free(&a);
	dp_qp_free(&b);

	inl_pair(d, &a, &b);
	dp_fill(buf, 64, 7);
	w = dp_want(wr_id, IBV_WC_RDMA_WRITE);
	w.status = IBV_WC_REM_ACCESS_ERR;
	ret = dp_post_send1(a.qp, wr_id++, IBV_WR_RDMA_WRITE, buf, 64,
			    bmr->lkey, pa + 300, pa_mr->rkey, 0);
	if (ret)
		tap_ok(false, "WRITE to inline QP: post: %s", strerror(ret));
	else
		dp_expect(a.scq, &w, "WRITE through the PA rkey into an "
			  "inline-receive QP: REM_ACCESS_ERR");
	tap_ok(!memcmp(page, before, PAGE), "... page untouched");
	dp_qp_free(&a);
	dp_qp_free(&b);

	inl_pair(d, &a, &b);
	if (dp_post_recv1(b.qp, wr_id, (void *)(uintptr_t)(pa + 400), 32,
			  pa_mr->lkey))
		tap_bail("post_recv: %s", strerror(errno));
	w = dp_want(wr_id++, IBV_WC_RECV);
	w.status = IBV_WC_LOC_PROT_ERR;
	ret = dp_post_send1(a.qp, wr_id, IBV_WR_SEND, buf, 32, bmr->lkey,
			    0, 0, 0);
	if (ret)
		tap_bail("post_send: %s", strerror(ret));
	dp_expect(b.rcq, &w, "SEND into a PA receive SGE of an inline-receive "
		  "QP (32 bytes, inline size): LOC_PROT_ERR");
	w = dp_want(wr_id++, IBV_WC_SEND);
	w.status = IBV_WC_REM_OP_ERR;
	dp_expect(a.scq, &w, "... the sender sees REM_OP_ERR");
	tap_ok(!memcmp(page, before, PAGE), "... page untouched");
	dp_qp_free(&a);
	dp_qp_free(&b);
}

static void test_traffic(struct dp_dev *d, struct ibv_mr *pa_mr)
{
	static uint8_t ref[PAGE];
	uint8_t *page, *buf;
	struct ibv_mr *bmr;
	uint64_t pa, *ctr;

	page = dp_alloc(PAGE);
	buf = dp_alloc(2 * PAGE);
	if (mlock(page, PAGE))
		tap_bail("mlock: %s", strerror(errno));
	dp_fill(page, PAGE, 3);
	memcpy(ref, page, PAGE);
	pa = pa_of(page);
	if (!tap_ok(pa, "physical address of a locked page: 0x%llx",
		    (unsigned long long)pa))
		tap_bail("no physical address (not root?)");
	bmr = dp_reg(d->pd, buf, 2 * PAGE, DP_ACCESS_ALL);

	dp_fill(buf, PAGE, 4);
	op1(d, IBV_WR_RDMA_WRITE, IBV_WC_RDMA_WRITE, (uintptr_t)buf, 1000,
	    bmr->lkey, pa + 100, pa_mr->rkey, IBV_WC_SUCCESS,
	    "WRITE 1000 bytes to a physical address");
	tap_ok(!memcmp(page + 100, buf, 1000), "... bytes exact at the "
	       "virtual address");
	tap_ok(!memcmp(page, ref, 100) && !memcmp(page + 1100, ref + 1100,
						  PAGE - 1100),
	       "... nothing before or after changed");

	dp_fill(page, PAGE, 5);
	memset(buf, 0, 2 * PAGE);
	op1(d, IBV_WR_RDMA_READ, IBV_WC_RDMA_READ, (uintptr_t)buf, 2000,
	    bmr->lkey, pa + 50, pa_mr->rkey, IBV_WC_SUCCESS,
	    "READ 2000 bytes from a physical address");
	tap_ok(!memcmp(buf, page + 50, 2000), "... bytes exact");

	memset(buf, 0, 2 * PAGE);
	op1(d, IBV_WR_RDMA_WRITE, IBV_WC_RDMA_WRITE, pa + 200, 500,
	    pa_mr->lkey, (uintptr_t)buf + PAGE, bmr->rkey, IBV_WC_SUCCESS,
	    "WRITE whose SGE is a physical address");
	tap_ok(!memcmp(buf + PAGE, page + 200, 500), "... bytes exact");

	ctr = (uint64_t *)(page + 512);
	*ctr = 99;
	op1(d, IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_WC_FETCH_ADD, (uintptr_t)buf,
	    8, bmr->lkey, pa + 512, pa_mr->rkey, IBV_WC_SUCCESS,
	    "FETCH_ADD at a physical address");
	tap_ok(*ctr == 100 && *(uint64_t *)buf == 99,
	       "... page holds 100 (%llu), old value 99 (%llu)",
	       (unsigned long long)*ctr,
	       (unsigned long long)*(uint64_t *)buf);

	/* not RAM the kernel manages and maps */
	op1(d, IBV_WR_RDMA_WRITE, IBV_WC_RDMA_WRITE, 1ull << 50, 8,
	    pa_mr->lkey, (uintptr_t)buf, bmr->rkey, IBV_WC_LOC_PROT_ERR,
	    "SGE at physical 2^50 (no memory): LOC_PROT_ERR");
	op1(d, IBV_WR_RDMA_WRITE, IBV_WC_RDMA_WRITE, (uintptr_t)buf, 8,
	    bmr->lkey, 1ull << 50, pa_mr->rkey, IBV_WC_REM_ACCESS_ERR,
	    "WRITE to physical 2^50: REM_ACCESS_ERR");
	op1(d, IBV_WR_RDMA_READ, IBV_WC_RDMA_READ, (uintptr_t)buf, 64,
	    bmr->lkey, 0, pa_mr->rkey, IBV_WC_REM_ACCESS_ERR,
	    "READ of physical page 0 (reserved): REM_ACCESS_ERR");
	op1(d, IBV_WR_RDMA_READ, IBV_WC_RDMA_READ, (uintptr_t)buf, 64,
	    bmr->lkey, 0xfee00000ull, pa_mr->rkey, IBV_WC_REM_ACCESS_ERR,
	    "READ of the local APIC page (MMIO): REM_ACCESS_ERR");
	op1(d, IBV_WR_RDMA_READ, IBV_WC_RDMA_READ, (uintptr_t)buf, 16,
	    bmr->lkey, pa + PAGE - 16, pa_mr->rkey, IBV_WC_SUCCESS,
	    "the page itself still reads after the refusals");

	test_inline_qp(d, pa_mr, page, pa, buf, bmr);

	/* off again: the existing MR stops */
	if (param_set(0)) {
		op1(d, IBV_WR_RDMA_READ, IBV_WC_RDMA_READ, (uintptr_t)buf, 16,
		    bmr->lkey, pa + 16, pa_mr->rkey, IBV_WC_REM_ACCESS_ERR,
		    "allow_pa_mr off: the existing MR fails (REM_ACCESS_ERR)");
		param_set(1);
	} else {
		tap_skip("cannot write %s", PARAM);
	}
	ibv_dereg_mr(bmr);
	munlock(page, PAGE);
	free(page);
	free(buf);
}

int main(void)
{
	const char *dev = test_dev_name();
	struct ibv_context *ctx;
	struct ibv_mr *mr;
	struct dp_dev d;
	int orig, i;

	tap_plan(PLAN);
	orig = param_get();
	if (!test_is_rxe2(dev) || orig < 0) {
		for (i = 0; i < PLAN; i++)
			tap_skip("PA MRs are rxe2dv: %s is not rxe2", dev);
		return tap_done();
	}
	if (!param_set(0))
		tap_bail("cannot write %s", PARAM);
	dp_open(&d, dev);
	tap_ok(!pa_cap(d.ctx), "allow_pa_mr off: no PA_MR capability");
	tap_null_errno(rxe2dv_reg_pa_mr(d.pd, DP_ACCESS_ALL), EPERM,
		       "allow_pa_mr off: EPERM");

	if (!param_set(1))
		tap_bail("cannot write %s", PARAM);
	tap_ret(run_child(dev), 0,
		"allow_pa_mr on, CAP_SYS_RAWIO dropped: no capability, EPERM");
	ctx = test_open(dev);
	tap_ok(pa_cap(ctx), "allow_pa_mr on, CAP_SYS_RAWIO: PA_MR capability");
	ibv_close_device(ctx);
	tap_null_errno(rxe2dv_reg_pa_mr(d.pd, IBV_ACCESS_MW_BIND |
					IBV_ACCESS_LOCAL_WRITE), EINVAL,
		       "MW_BIND access: EINVAL");
	tap_null_errno(rxe2dv_reg_pa_mr(d.pd, IBV_ACCESS_REMOTE_WRITE), EINVAL,
		       "remote write without local write: EINVAL");
	mr = rxe2dv_reg_pa_mr(d.pd, DP_ACCESS_ALL);
	if (!tap_ok(mr, "allow_pa_mr on, CAP_SYS_RAWIO: registered (%s)",
		    mr ? "ok" : strerror(errno)))
		tap_bail("no PA MR");
	tap_ok(!mr->addr && !mr->length && mr->lkey == mr->rkey,
	       "addr NULL, length 0, lkey == rkey");
	{
		struct rxe2dv_mr_attr ma;

		memset(&ma, 0xff, sizeof(ma));
		ma.comp_mask = 0;
		tap_ok(!rxe2dv_query_mr(mr, &ma, sizeof(ma)) &&
		       !ma.ic_id_validity,
		       "rxe2dv_query_mr: no valid interconnect id (%#x)",
		       ma.ic_id_validity);
	}
	test_traffic(&d, mr);
	tap_ret(ibv_dereg_mr(mr), 0, "dereg");
	dp_close(&d);
	param_set(orig);
	return tap_done();
}
