// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: ibv_rereg_mr on pinned MRs: every flag combination with data through rkey and lkey, keys kept, revoked access and the old PD refused, exact error returns, the translation swapped under WRITEs
 *
 * ibv_rereg_mr on pinned MRs: every combination of
 * IBV_REREG_MR_CHANGE_TRANSLATION, _PD and _ACCESS, each followed by
 * data through the MR byte for byte (RDMA WRITE and READ with its rkey,
 * a local SGE with its lkey) on a loopback RC pair of the MR's PD; the
 * keys stay.  Revoked remote write gives REM_ACCESS_ERR, the old PD's QPs
 * get REM_ACCESS_ERR (rkey) and LOC_PROT_ERR (lkey).  Errors return the
 * exact IBV_REREG_MR_ERR_* value and errno and leave the MR working as
 * before.  Last, the translation moves (same addresses, other pages: a
 * memfd mapped over itself) while another thread RDMA WRITEs into the MR:
 * every write lands whole in the old pages or whole in the new ones.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dp.h"
#include "tap.h"
#include "util.h"

#define LEN	(3 * 4096)
#define LEN2	(2 * 4096 + 1000)
#define OFF2	100		/* the new translation starts mid-page */
#define RW	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		 IBV_ACCESS_REMOTE_READ)

static struct dp_dev d, d2;		/* d2: the same context, second PD */
static struct dp_qp pa[2], pb[2];	/* a loopback pair per PD */
static uint8_t *hbuf[2];		/* helper memory per PD */
static struct ibv_mr *hmr[2];
static uint8_t *buf1, *buf2;
static uint64_t wr_id = 0x100;
static uint32_t seed = 7;

static struct dp_dev *dev_of(int pdi)
{
	return pdi ? &d2 : &d;
}

static int make_pair(int pdi, struct dp_qp *a, struct dp_qp *b)
{
	return dp_rc_pair(dev_of(pdi), a, b);
}

static bool one(struct ibv_qp *qp, struct ibv_cq *cq, enum ibv_wr_opcode op,
		void *addr, uint32_t len, uint32_t lkey, void *raddr,
		uint32_t rkey, int status, const char *what)
{
	struct dp_wc_want w = dp_want(++wr_id, op == IBV_WR_RDMA_READ ?
				      IBV_WC_RDMA_READ : IBV_WC_RDMA_WRITE);

	w.status = status;
	if (status != IBV_WC_SUCCESS)
		w.opcode = -1;
	if (dp_post_send1(qp, wr_id, op, addr, len, lkey, (uintptr_t)raddr,
			  rkey, 0)) {
		tap_ok(false, "%s: post: %s", what, strerror(errno));
		return false;
	}
	return dp_expect(cq, &w, "%s", what);
}

/* WRITE into it by rkey, READ it back by rkey, WRITE out of it by lkey */
static void check_data(struct ibv_mr *mr, int pdi, uint8_t *buf, size_t len,
		       const char *what)
{
	struct dp_qp *a = &pa[pdi];
	uint8_t *h = hbuf[pdi];
	char t[160];

	dp_fill(h, len, ++seed);
	snprintf(t, sizeof(t), "%s: RDMA WRITE by rkey", what);
	if (one(a->qp, a->scq, IBV_WR_RDMA_WRITE, h, len, hmr[pdi]->lkey,
		buf, mr->rkey, IBV_WC_SUCCESS, t))
		tap_ret(dp_verify(buf, len, seed), -1,
			"%s: the WRITE is in the MR byte for byte", what);

	dp_fill(buf, len, ++seed);
	memset(h, 0, len);
	snprintf(t, sizeof(t), "%s: RDMA READ by rkey", what);
	if (one(a->qp, a->scq, IBV_WR_RDMA_READ, h, len, hmr[pdi]->lkey,
		buf, mr->rkey, IBV_WC_SUCCESS, t))
		tap_ret(dp_verify(h, len, seed), -1,
			"%s: the READ returns the MR byte for byte", what);

	dp_fill(buf, len, ++seed);
	memset(h + LEN, 0, len);
	snprintf(t, sizeof(t), "%s: RDMA WRITE from a local SGE by lkey", what);
	if (one(a->qp, a->scq, IBV_WR_RDMA_WRITE, buf, len, mr->lkey,
		h + LEN, hmr[pdi]->rkey, IBV_WC_SUCCESS, t))
		tap_ret(dp_verify(h + LEN, len, seed), -1,
			"%s: the local SGE read the MR byte for byte", what);
}

static const char *flag_names(int flags)
{
	static char s[64];

	snprintf(s, sizeof(s), "%s%s%s",
		 flags & IBV_REREG_MR_CHANGE_TRANSLATION ? "TRANSLATION " : "",
		 flags & IBV_REREG_MR_CHANGE_PD ? "PD " : "",
		 flags & IBV_REREG_MR_CHANGE_ACCESS ? "ACCESS" : "");
	return s;
}

static void test_combination(int flags)
{
	bool trans = flags & IBV_REREG_MR_CHANGE_TRANSLATION;
	bool pd = flags & IBV_REREG_MR_CHANGE_PD;
	bool acc = flags & IBV_REREG_MR_CHANGE_ACCESS;
	/* with ACCESS, remote write is what the rereg grants */
	int access0 = acc ? IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ :
			    RW;
	uint8_t *nbuf = trans ? buf2 + OFF2 : buf1;
	size_t nlen = trans ? LEN2 : LEN;
	struct ibv_mr *mr;
	uint32_t lkey, rkey;
	char what[96];

	snprintf(what, sizeof(what), "rereg %s", flag_names(flags));
	memset(buf1, 0, LEN);
	memset(buf2, 0, LEN);
	mr = dp_reg(d.pd, buf1, LEN, access0);
	lkey = mr->lkey;
	rkey = mr->rkey;
	if (!tap_ret(ibv_rereg_mr(mr, flags, pd ? d2.pd : NULL,
				  trans ? nbuf : NULL, trans ? nlen : 0,
				  acc ? RW : 0), 0, "%s returns 0", what)) {
		tap_diag("  errno %d (%s)", errno, strerror(errno));
		ibv_dereg_mr(mr);
		return;
	}
	tap_ok(mr->lkey == lkey && mr->rkey == rkey,
	       "%s: lkey and rkey kept (0x%x 0x%x)", what, mr->lkey, mr->rkey);
	tap_ok(mr->pd == (pd ? d2.pd : d.pd) && mr->addr == nbuf &&
	       mr->length == nlen, "%s: mr->pd, addr, length are the new ones",
	       what);
	check_data(mr, pd, nbuf, nlen, what);
	if (trans) {
		tap_ret(dp_verify_byte(buf1, LEN, 0), -1,
			"%s: the old memory is untouched", what);
		/* and the old addresses are outside the MR now */
	}
	tap_ret_errno(ibv_dereg_mr(mr), 0, "%s: dereg", what);
}

/* every combination twice in a row on one MR, back and forth */
static void test_back_and_forth(void)
{
	struct ibv_mr *mr = dp_reg(d.pd, buf1, LEN, RW);
	int all = IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_PD |
		  IBV_REREG_MR_CHANGE_ACCESS;
	uint32_t key = mr->lkey;
	int i;

	for (i = 0; i < 4; i++) {
		int pdi = i & 1 ? 0 : 1;
		uint8_t *b = i & 1 ? buf1 : buf2 + OFF2;
		size_t l = i & 1 ? LEN : LEN2;

		if (!tap_ret(ibv_rereg_mr(mr, all, dev_of(pdi)->pd, b, l,
					  i & 1 ? RW : RW | IBV_ACCESS_REMOTE_ATOMIC),
			     0, "rereg all three, round %d", i))
			break;
		tap_ok(mr->lkey == key && mr->rkey == key,
		       "round %d: keys kept", i);
		check_data(mr, pdi, b, l, i & 1 ? "round back" : "round there");
	}
	ibv_dereg_mr(mr);
}

static void test_revoke(void)
{
	struct dp_qp a, b;
	struct ibv_mr *mr;

	if (make_pair(0, &a, &b))
		tap_bail("QP pair: %s", strerror(errno));
	memset(buf1, 0x5a, LEN);
	mr = dp_reg(d.pd, buf1, LEN, RW);
	tap_ret(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ),
		0, "rereg ACCESS: remote write revoked");
	dp_fill(hbuf[0], 64, ++seed);
	one(a.qp, a.scq, IBV_WR_RDMA_WRITE, hbuf[0], 64, hmr[0]->lkey, buf1,
	    mr->rkey, IBV_WC_REM_ACCESS_ERR,
	    "RDMA WRITE after the revocation -> REM_ACCESS_ERR");
	tap_ret(dp_verify_byte(buf1, LEN, 0x5a), -1,
		"the refused WRITE changed nothing");
	dp_qp_free(&a);
	dp_qp_free(&b);
	/* the READ it still grants works on a fresh pair */
	memset(hbuf[0], 0, 64);
	one(pa[0].qp, pa[0].scq, IBV_WR_RDMA_READ, hbuf[0], 64, hmr[0]->lkey,
	    buf1, mr->rkey, IBV_WC_SUCCESS, "RDMA READ still granted");
	tap_ret(dp_verify_byte(hbuf[0], 64, 0x5a), -1,
		"the READ returns the MR's bytes");
	ibv_dereg_mr(mr);
}

static void test_old_pd(void)
{
	struct dp_qp a, b;
	struct ibv_mr *mr;

	memset(buf1, 0x3c, LEN);
	mr = dp_reg(d.pd, buf1, LEN, RW);
	tap_ret(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, d2.pd, NULL, 0, 0),
		0, "rereg PD to the second PD");

	if (make_pair(0, &a, &b))
		tap_bail("QP pair: %s", strerror(errno));
	one(a.qp, a.scq, IBV_WR_RDMA_WRITE, hbuf[0], 64, hmr[0]->lkey, buf1,
	    mr->rkey, IBV_WC_REM_ACCESS_ERR,
	    "old PD's QP: RDMA WRITE by rkey -> REM_ACCESS_ERR");
	dp_qp_free(&a);
	dp_qp_free(&b);

	if (make_pair(0, &a, &b))
		tap_bail("QP pair: %s", strerror(errno));
	one(a.qp, a.scq, IBV_WR_RDMA_WRITE, buf1, 64, mr->lkey,
	    hbuf[0] + LEN, hmr[0]->rkey, IBV_WC_LOC_PROT_ERR,
	    "old PD's QP: local SGE by lkey -> LOC_PROT_ERR");
	dp_qp_free(&a);
	dp_qp_free(&b);
	tap_ret(dp_verify_byte(buf1, LEN, 0x3c), -1,
		"the refused accesses changed nothing");
	check_data(mr, 1, buf1, LEN, "new PD's QP");
	ibv_dereg_mr(mr);
}

/* the MR must still be exactly what it was */
static void check_intact(struct ibv_mr *mr, uint32_t key, const char *what)
{
	tap_ok(mr->lkey == key && mr->rkey == key && mr->pd == d.pd &&
	       mr->addr == buf1 && mr->length == LEN,
	       "%s: the MR is unchanged", what);
	check_data(mr, 0, buf1, LEN, what);
}

static void test_errors(void)
{
	struct ibv_mr *mr = dp_reg(d.pd, buf1, LEN, RW);
	uint32_t key = mr->lkey;
	struct ibv_context *ctx2;
	struct ibv_pd *opd;
	void *gone;

	errno = 0;
	tap_ret(ibv_rereg_mr(mr, 1 << 3, NULL, NULL, 0, 0),
		IBV_REREG_MR_ERR_INPUT, "unknown flag -> IBV_REREG_MR_ERR_INPUT");
	tap_ret(errno, EINVAL, "  errno EINVAL");
	errno = 0;
	tap_ret(ibv_rereg_mr(mr, 0, NULL, NULL, 0, 0), IBV_REREG_MR_ERR_CMD,
		"no flag -> IBV_REREG_MR_ERR_CMD (the kernel refuses it)");
	tap_ret(errno, EINVAL, "  errno EINVAL");
	errno = 0;
	tap_ret(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, NULL,
			     LEN, 0),
		IBV_REREG_MR_ERR_INPUT,
		"TRANSLATION with a NULL address -> IBV_REREG_MR_ERR_INPUT");
	tap_ret(errno, EINVAL, "  errno EINVAL (libibverbs checks it)");
	errno = 0;
	tap_ret(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, buf2,
			     0, 0),
		IBV_REREG_MR_ERR_INPUT,
		"TRANSLATION with length 0 -> IBV_REREG_MR_ERR_INPUT");
	tap_ret(errno, EINVAL, "  errno EINVAL");
	errno = 0;
	tap_ret(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, NULL, NULL, 0, RW),
		IBV_REREG_MR_ERR_INPUT,
		"access without CHANGE_ACCESS -> IBV_REREG_MR_ERR_INPUT");
	tap_ret(errno, EINVAL, "  errno EINVAL");

	errno = 0;
	tap_ret(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			     IBV_ACCESS_REMOTE_WRITE),
		IBV_REREG_MR_ERR_CMD,
		"remote write without local write -> IBV_REREG_MR_ERR_CMD");
	tap_ret(errno, EINVAL, "  errno EINVAL");
	check_intact(mr, key, "after the refused access");

	gone = mmap(NULL, LEN, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (gone == MAP_FAILED)
		tap_bail("mmap: %s", strerror(errno));
	munmap(gone, LEN);
	errno = 0;
	tap_ret(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION |
			     IBV_REREG_MR_CHANGE_ACCESS, NULL, gone, LEN,
			     IBV_ACCESS_LOCAL_WRITE),
		IBV_REREG_MR_ERR_CMD,
		"TRANSLATION to unmapped memory -> IBV_REREG_MR_ERR_CMD");
	tap_ret(errno, EFAULT, "  errno EFAULT");
	check_intact(mr, key, "after the refused translation");

	ctx2 = test_open(test_dev_name());
	opd = ctx2 ? ibv_alloc_pd(ctx2) : NULL;
	if (!opd)
		tap_bail("second context: %s", strerror(errno));
	errno = 0;
	tap_ret(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, opd, NULL, 0, 0),
		IBV_REREG_MR_ERR_CMD,
		"PD of another context -> IBV_REREG_MR_ERR_CMD");
	tap_ret(errno, EINVAL, "  errno EINVAL");
	check_intact(mr, key, "after the refused PD");
	ibv_dealloc_pd(opd);
	ibv_close_device(ctx2);
	ibv_dereg_mr(mr);
}

/*
 * Under traffic.  The MR's addresses stay; the pages behind them change:
 * V maps page set 0 of a memfd, A0 and A1 map sets 0 and 1 for good.
 * A swap maps the other set at V (MAP_FIXED) and rereg's the translation
 * to V.  Each slot is written once, by one single-packet WRITE with its
 * own pattern: it must be whole in one set and all zero in the other.
 */
#define SLOT	256
#define SET	(64 * 1024)
#define NSLOT	(SET / SLOT)
#define WINDOW	16

static struct traffic {
	struct ibv_mr *mr;
	uint8_t *v;
	atomic_int done;
	atomic_int allowed;		/* slots the writer may post */
	atomic_int bad;			/* completions that were not SUCCESS */
} tr;

static void *writer(void *arg)
{
	struct dp_qp *a = arg;
	struct ibv_wc wc[WINDOW];
	int posted = 0, done = 0, i, n;

	for (i = 0; i < NSLOT; i++)
		dp_fill(hbuf[0] + i * SLOT, SLOT, 1000 + i);
	while (done < NSLOT) {
		while (posted == done && posted == atomic_load(&tr.allowed))
			usleep(100);
		while (posted < atomic_load(&tr.allowed) &&
		       posted - done < WINDOW) {
			if (dp_post_send1(a->qp, posted, IBV_WR_RDMA_WRITE,
					  hbuf[0] + posted * SLOT, SLOT,
					  hmr[0]->lkey,
					  (uintptr_t)tr.v + posted * SLOT,
					  tr.mr->rkey, 0)) {
				tr.bad = -1;
				return NULL;
			}
			posted++;
		}
		/* wait for one completion, then take what else is there */
		n = dp_poll(a->scq, wc, 1, DP_WAIT_MS);
		if (n == 1)
			n += ibv_poll_cq(a->scq, WINDOW - 1, wc + 1);
		if (n <= 0) {
			tr.bad = -1;
			return NULL;
		}
		for (i = 0; i < n; i++)
			if (wc[i].status != IBV_WC_SUCCESS)
				tr.bad++;
		done += n;
		atomic_store(&tr.done, done);
		if (tr.bad)
			return NULL;
	}
	return NULL;
}

static void test_traffic(void)
{
	struct dp_qp a, b;
	pthread_t t;
	uint8_t *a0, *a1;
	int fd, set = 0, swaps = 0, in0 = 0, in1 = 0, torn = 0, i;

	fd = memfd_create("rxe2-rereg", 0);
	if (fd < 0 || ftruncate(fd, 2 * SET))
		tap_bail("memfd: %s", strerror(errno));
	tr.v = mmap(NULL, SET, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	a0 = mmap(NULL, SET, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	a1 = mmap(NULL, SET, PROT_READ | PROT_WRITE, MAP_SHARED, fd, SET);
	if (tr.v == MAP_FAILED || a0 == MAP_FAILED || a1 == MAP_FAILED)
		tap_bail("mmap: %s", strerror(errno));
	tr.mr = dp_reg(d.pd, tr.v, SET, RW);
	if (make_pair(0, &a, &b))
		tap_bail("QP pair: %s", strerror(errno));
	/*
	 * The writer may run NSLOT / 8 slots ahead; each swap comes once
	 * WINDOW / 2 of them are done, so WRITEs are usually in flight
	 * across it (not asserted: that is timing).
	 */
	atomic_store(&tr.done, 0);
	atomic_store(&tr.allowed, NSLOT / 8);
	if (pthread_create(&t, NULL, writer, &a))
		tap_bail("pthread_create");
	while (atomic_load(&tr.allowed) < NSLOT && !tr.bad) {
		if (atomic_load(&tr.done) <
		    atomic_load(&tr.allowed) - NSLOT / 8 + WINDOW / 2) {
			usleep(100);
			continue;
		}
		set ^= 1;
		if (mmap(tr.v, SET, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED, fd, set ? SET : 0) != tr.v)
			tap_bail("mmap MAP_FIXED: %s", strerror(errno));
		if (ibv_rereg_mr(tr.mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL,
				 tr.v, SET, 0)) {
			tap_ok(false, "rereg under traffic: %s",
			       strerror(errno));
			break;
		}
		swaps++;
		atomic_fetch_add(&tr.allowed, NSLOT / 8);
	}
	if (atomic_load(&tr.allowed) < NSLOT)
		atomic_store(&tr.allowed, NSLOT);
	pthread_join(t, NULL);
	tap_ret(tr.bad, 0, "every WRITE during %d translation swaps completed with SUCCESS",
		swaps);
	tap_ret(swaps, 7, "the translation moved 7 times under traffic");
	for (i = 0; i < NSLOT; i++) {
		bool z0 = dp_verify_byte(a0 + i * SLOT, SLOT, 0) == -1;
		bool z1 = dp_verify_byte(a1 + i * SLOT, SLOT, 0) == -1;

		if (z1 && dp_verify(a0 + i * SLOT, SLOT, 1000 + i) == -1)
			in0++;
		else if (z0 && dp_verify(a1 + i * SLOT, SLOT, 1000 + i) == -1)
			in1++;
		else
			torn++;
	}
	tap_diag("  %d WRITEs landed in the first pages, %d in the second",
		 in0, in1);
	tap_ret(torn, 0,
		"every WRITE is whole in the old or the new pages, none torn or lost");
	tap_ret(tr.mr->lkey == tr.mr->rkey, 1, "keys still equal");
	dp_qp_free(&a);
	dp_qp_free(&b);
	ibv_dereg_mr(tr.mr);
	munmap(tr.v, SET);
	munmap(a0, SET);
	munmap(a1, SET);
	close(fd);
}

int main(void)
{
	struct ibv_mr *probe;
	int flags, i, ret;

	dp_open(&d, test_dev_name());
	d.rxe2 = test_is_rxe2(test_dev_name());
	d2 = d;
	d2.pd = ibv_alloc_pd(d.ctx);
	if (!d2.pd)
		tap_bail("second PD: %s", strerror(errno));
	buf1 = dp_alloc(LEN);
	buf2 = dp_alloc(LEN);

	probe = dp_reg(d.pd, buf1, LEN, RW);
	ret = ibv_rereg_mr(probe, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   RW);
	if (ret && errno == EOPNOTSUPP) {
		tap_skip("%s: ibv_rereg_mr not supported (EOPNOTSUPP)",
			 test_dev_name());
		return tap_done();
	}
	ibv_dereg_mr(probe);

	for (i = 0; i < 2; i++) {
		if (make_pair(i, &pa[i], &pb[i]))
			tap_bail("QP pair on PD %d: %s", i, strerror(errno));
		hbuf[i] = dp_alloc(2 * LEN > SET ? 2 * LEN : SET);
		hmr[i] = dp_reg(dev_of(i)->pd, hbuf[i],
				2 * LEN > SET ? 2 * LEN : SET, RW);
	}

	for (flags = 1; flags <= 7; flags++)
		test_combination(flags);
	test_back_and_forth();
	test_revoke();
	test_old_pd();
	test_errors();
	test_traffic();

	for (i = 0; i < 2; i++) {
		ibv_dereg_mr(hmr[i]);
		dp_qp_free(&pa[i]);
		dp_qp_free(&pb[i]);
	}
	ibv_dealloc_pd(d2.pd);
	dp_close(&d);
	return tap_done();
}
