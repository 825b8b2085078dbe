// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: rxe2dv shared MRs: two mappings of the same pages, WRITE/READ/atomics through either key, read-only sharers, pages outliving the owner, forked and setuid children by mode bits, the errors
 *
 * Shared MRs (rxe2dv_alloc_shared_mr, rxe2dv_reg_shared_mr): memory the
 * device allocates, covered by several MRs with their own keys.
 *
 * - same process: a second MR at a free address hint gets it; both
 *   mappings show the same bytes; RDMA WRITE, READ and an atomic through
 *   either rkey, and a WRITE from either lkey, land in (come from) the
 *   same pages, byte for byte, seen through the other mapping;
 * - a read-only sharer gets a read-only mapping that cannot be made
 *   writable; a local write through its lkey is a protection error;
 * - the pages outlive the owner's MR while a sharer remains, and the id
 *   dies with the last MR (ENOENT);
 * - a forked child registers its own MR over the memory, reads the
 *   parent's bytes and writes bytes the parent reads;
 * - children that setuid() to 65534 (group kept 0, or 65534 too) are
 *   allowed or refused (EACCES exactly) as the mode bits say, for read
 *   and write access;
 * - rxe2dv_query_mr: the pages are resident, so on a one-node machine
 *   every id is valid and is that node's (0);
 * - errors: unknown id and 0 (ENOENT), mode bits outside 0666 and
 *   MW_BIND access (EINVAL), ibv_rereg_mr refused.
 */
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/rxe2dv.h>

#include "dp.h"
#include "tap.h"
#include "util.h"

#define PAGE 4096
#define LEN (3 * PAGE + 100)	/* rounded up to 4 pages */
#define MAPLEN (4 * PAGE)
#define ACC_RO (IBV_ACCESS_REMOTE_READ)
#define PLAN 58

static uint64_t wr_id = 1;

/* a free, page-aligned address range of len bytes */
static void *free_hint(size_t len)
{
	void *p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		       0);

	if (p == MAP_FAILED)
		tap_bail("mmap: %s", strerror(errno));
	munmap(p, len);
	return p;
}

/* one RDMA op on a; its completion checked */
static bool rdma(struct dp_qp *a, enum ibv_wr_opcode op, int wc_op,
		 void *laddr, uint32_t len, uint32_t lkey, uint64_t raddr,
		 uint32_t rkey, int status, const char *what)
{
	struct dp_wc_want w = dp_want(wr_id, wc_op);
	int ret;

	w.status = status;
	ret = dp_post_send1(a->qp, wr_id++, op, laddr, len, lkey, raddr, rkey,
			    0);
	if (ret) {
		tap_ok(false, "%s: post: %s", what, strerror(ret));
		return false;
	}
	return dp_expect(a->scq, &w, "%s", what);
}

/* "0" in /sys/devices/system/node/online: one NUMA node */
static bool one_node(void)
{
	char line[64] = "";
	FILE *f = fopen("/sys/devices/system/node/online", "r");

	if (!f)
		return true;	/* no NUMA support: one node */
	if (!fgets(line, sizeof(line), f))
		line[0] = 0;
	fclose(f);
	return !strcmp(line, "0\n");
}

/* interconnect ids: a shared MR reports the nodes of its pages */
static void test_query_mr(struct ibv_mr *mr)
{
	struct rxe2dv_mr_attr ma;

	memset(&ma, 0xff, sizeof(ma));
	ma.comp_mask = 0;
	tap_ret(rxe2dv_query_mr(mr, &ma, sizeof(ma)), 0,
		"rxe2dv_query_mr on a shared MR");
	if (one_node())
		tap_ok(ma.ic_id_validity ==
		       (RXE2DV_MR_ATTR_VALIDITY_RECV_IC_ID |
			RXE2DV_MR_ATTR_VALIDITY_RDMA_READ_IC_ID |
			RXE2DV_MR_ATTR_VALIDITY_RDMA_RECV_IC_ID) &&
		       !ma.recv_ic_id && !ma.rdma_read_ic_id &&
		       !ma.rdma_recv_ic_id,
		       "... one node: all three ids valid, 0 (validity %#x)",
		       ma.ic_id_validity);
	else
		tap_skip("more than one NUMA node: placement not fixed");
}

static void test_same_process(struct dp_dev *d)
{
	struct ibv_mr *own, *sh, *ro, *bmr, *again;
	struct dp_qp a, b;
	uint64_t id = 0, id2 = 0;
	uint8_t *buf;
	void *hint;
	uint64_t *ctr;

	own = rxe2dv_alloc_shared_mr(d->pd, LEN, DP_ACCESS_ALL, 0600, &id);
	if (!tap_ok(own, "alloc_shared_mr(%d bytes, 0600): %s", LEN,
		    own ? "ok" : strerror(errno)))
		tap_bail("no shared MR");
	tap_ok(id != 0, "share id %llu is not 0", (unsigned long long)id);
	tap_ret(own->length, MAPLEN, "length rounded up to 4 pages");
	tap_ok(((uintptr_t)own->addr & (PAGE - 1)) == 0 && own->pd == d->pd,
	       "addr %p page-aligned, pd set", own->addr);
	tap_ret(dp_verify_byte(own->addr, MAPLEN, 0), -1,
		"new memory reads zero");
	dp_fill(own->addr, MAPLEN, 11);
	test_query_mr(own);

	hint = free_hint(MAPLEN);
	sh = rxe2dv_reg_shared_mr(d->pd, id, hint, DP_ACCESS_ALL);
	if (!tap_ok(sh, "reg_shared_mr(id, hint): %s",
		    sh ? "ok" : strerror(errno)))
		tap_bail("no second MR");
	tap_ok(sh->addr == hint, "mapped at the hint %p (got %p)", hint,
	       sh->addr);
	tap_ok(sh->lkey != own->lkey && sh->rkey != own->rkey,
	       "own keys 0x%x / 0x%x", sh->lkey, own->lkey);
	tap_ret(sh->length, MAPLEN, "second MR's length");
	tap_ret(dp_verify(sh->addr, MAPLEN, 11), -1,
		"owner's bytes seen through the second mapping");

	ro = rxe2dv_reg_shared_mr(d->pd, id, NULL, ACC_RO);
	tap_ok(ro, "read-only sharer: %s", ro ? "ok" : strerror(errno));
	if (ro)
		tap_neg_errno(mprotect(ro->addr, MAPLEN, PROT_READ | PROT_WRITE),
			      EACCES, "its mapping cannot become writable");
	else
		tap_skip("no read-only sharer");

	if (dp_rc_pair(d, &a, &b))
		tap_bail("no QP pair");
	buf = dp_alloc(2 * MAPLEN);
	bmr = dp_reg(d->pd, buf, 2 * MAPLEN, DP_ACCESS_ALL);

	/* WRITE through the second rkey, seen through the owner's mapping */
	dp_fill(buf, MAPLEN, 12);
	rdma(&a, IBV_WR_RDMA_WRITE, IBV_WC_RDMA_WRITE, buf, 5000, bmr->lkey,
	     (uintptr_t)sh->addr + 100, sh->rkey, IBV_WC_SUCCESS,
	     "WRITE 5000 bytes via the sharer's rkey");
	tap_ok(!memcmp((uint8_t *)own->addr + 100, buf, 5000) &&
	       dp_verify(own->addr, 100, 11) == -1,
	       "... bytes exact in the owner's mapping, nothing before");
	/* WRITE through the owner's rkey, seen through the second one */
	dp_fill(buf, MAPLEN, 13);
	rdma(&a, IBV_WR_RDMA_WRITE, IBV_WC_RDMA_WRITE, buf, MAPLEN,
	     bmr->lkey, (uintptr_t)own->addr, own->rkey, IBV_WC_SUCCESS,
	     "WRITE all 4 pages via the owner's rkey");
	tap_ret(dp_verify(sh->addr, MAPLEN, 13), -1,
		"... bytes exact in the sharer's mapping");
	/* READ through each rkey */
	dp_fill(sh->addr, MAPLEN, 14);
	memset(buf, 0, 2 * MAPLEN);
	rdma(&a, IBV_WR_RDMA_READ, IBV_WC_RDMA_READ, buf, MAPLEN, bmr->lkey,
	     (uintptr_t)own->addr, own->rkey, IBV_WC_SUCCESS,
	     "READ all 4 pages via the owner's rkey");
	tap_ret(dp_verify(buf, MAPLEN, 14), -1, "... the sharer's bytes");
	memset(buf, 0, 2 * MAPLEN);
	rdma(&a, IBV_WR_RDMA_READ, IBV_WC_RDMA_READ, buf, 3000, bmr->lkey,
	     (uintptr_t)sh->addr + PAGE - 1000, sh->rkey, IBV_WC_SUCCESS,
	     "READ across a page boundary via the sharer's rkey");
	tap_ok(!memcmp(buf, (uint8_t *)own->addr + PAGE - 1000, 3000),
	       "... bytes exact");
	/* a WRITE whose source is the shared memory, by either lkey */
	memset(buf, 0, 2 * MAPLEN);
	rdma(&a, IBV_WR_RDMA_WRITE, IBV_WC_RDMA_WRITE,
	     (uint8_t *)own->addr + 7, 6000, own->lkey, (uintptr_t)buf,
	     bmr->rkey, IBV_WC_SUCCESS, "WRITE from the owner's lkey");
	tap_ok(!memcmp(buf, (uint8_t *)sh->addr + 7, 6000), "... bytes exact");
	rdma(&a, IBV_WR_RDMA_WRITE, IBV_WC_RDMA_WRITE,
	     (uint8_t *)sh->addr + 9, 6000, sh->lkey, (uintptr_t)buf + MAPLEN,
	     bmr->rkey, IBV_WC_SUCCESS, "WRITE from the sharer's lkey");
	tap_ok(!memcmp(buf + MAPLEN, (uint8_t *)own->addr + 9, 6000),
	       "... bytes exact");
	/* an atomic through the sharer, seen through the owner */
	ctr = (uint64_t *)((uint8_t *)own->addr + 2 * PAGE);
	*ctr = 41;
	rdma(&a, IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_WC_FETCH_ADD, buf, 8,
	     bmr->lkey, (uintptr_t)sh->addr + 2 * PAGE, sh->rkey,
	     IBV_WC_SUCCESS, "FETCH_ADD via the sharer's rkey");
	tap_ok(*ctr == 42 && *(uint64_t *)buf == 41,
	       "... owner sees 42 (got %llu), old value 41 (got %llu)",
	       (unsigned long long)*ctr,
	       (unsigned long long)*(uint64_t *)buf);
	/* beyond the end is outside the MR */
	rdma(&a, IBV_WR_RDMA_WRITE, IBV_WC_RDMA_WRITE, buf, 2, bmr->lkey,
	     (uintptr_t)sh->addr + MAPLEN - 1, sh->rkey,
	     IBV_WC_REM_ACCESS_ERR, "WRITE across the end: REM_ACCESS_ERR");
	dp_qp_free(&a);
	dp_qp_free(&b);

	/* the read-only sharer's lkey cannot take local writes */
	if (dp_rc_pair(d, &a, &b))
		tap_bail("no QP pair");
	if (ro)
		rdma(&a, IBV_WR_RDMA_READ, IBV_WC_RDMA_READ, ro->addr, 8,
		     ro->lkey, (uintptr_t)buf, bmr->rkey,
		     IBV_WC_LOC_PROT_ERR,
		     "READ into the read-only sharer: LOC_PROT_ERR");
	else
		tap_skip("no read-only sharer");
	dp_qp_free(&a);
	dp_qp_free(&b);

	/* pages outlive the owner's MR while sharers remain */
	dp_fill(own->addr, MAPLEN, 15);
	tap_ret(ibv_dereg_mr(own), 0, "dereg the owner's MR");
	tap_ret(dp_verify(sh->addr, MAPLEN, 15), -1,
		"the sharer's mapping still holds the bytes");
	again = rxe2dv_reg_shared_mr(d->pd, id, NULL, DP_ACCESS_ALL);
	tap_ok(again, "the id still names the memory: %s",
	       again ? "ok" : strerror(errno));
	if (dp_rc_pair(d, &a, &b))
		tap_bail("no QP pair");
	memset(buf, 0, MAPLEN);
	rdma(&a, IBV_WR_RDMA_READ, IBV_WC_RDMA_READ, buf, MAPLEN, bmr->lkey,
	     (uintptr_t)sh->addr, sh->rkey, IBV_WC_SUCCESS,
	     "READ via the sharer's rkey after the owner left");
	tap_ret(dp_verify(buf, MAPLEN, 15), -1, "... bytes exact");
	dp_qp_free(&a);
	dp_qp_free(&b);
	if (again)
		ibv_dereg_mr(again);
	if (ro)
		ibv_dereg_mr(ro);
	tap_ret(ibv_dereg_mr(sh), 0, "dereg the last MR");
	tap_null_errno(rxe2dv_reg_shared_mr(d->pd, id, NULL, ACC_RO), ENOENT,
		       "then the id is gone: ENOENT");

	/* errors */
	tap_null_errno(rxe2dv_reg_shared_mr(d->pd, 0, NULL, ACC_RO), ENOENT,
		       "id 0: ENOENT");
	tap_null_errno(rxe2dv_reg_shared_mr(d->pd, id + 1000000, NULL, ACC_RO),
		       ENOENT, "unknown id: ENOENT");
	tap_null_errno(rxe2dv_alloc_shared_mr(d->pd, PAGE, ACC_RO, 01644, &id2),
		       EINVAL, "mode 01644: EINVAL");
	tap_null_errno(rxe2dv_alloc_shared_mr(d->pd, PAGE, IBV_ACCESS_MW_BIND |
					      IBV_ACCESS_LOCAL_WRITE, 0600,
					      &id2),
		       EINVAL, "MW_BIND access: EINVAL");
	tap_null_errno(rxe2dv_alloc_shared_mr(d->pd, 0, ACC_RO, 0600, &id2),
		       EINVAL, "length 0: EINVAL");
	own = rxe2dv_alloc_shared_mr(d->pd, PAGE, DP_ACCESS_ALL, 0600, &id2);
	if (own) {
		tap_ok(ibv_rereg_mr(own, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL,
				    0, ACC_RO) != 0,
		       "ibv_rereg_mr of a shared MR fails");
		tap_ret(ibv_dereg_mr(own), 0, "dereg it");
	} else {
		tap_skip("alloc failed: %s", strerror(errno));
		tap_skip("alloc failed");
	}
	ibv_dereg_mr(bmr);
	free(buf);
}

/* What a child does over the memory; it returns 0 or the failed step. */
struct child {
	const char *dev;
	uint64_t id;
	int access;
	uid_t uid;		/* 0: stays root */
	gid_t gid;
	int want_errno;		/* 0: the MR must be made */
	uint32_t seed_read;	/* bytes it must see */
	uint32_t seed_write;	/* bytes it writes (0: none) */
};

static int child_run(const struct child *c)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	int i, n;

	if (c->uid) {
		if (setgroups(0, NULL) || setgid(c->gid) || setuid(c->uid))
			return 2;
	}
	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), c->dev))
			ctx = ibv_open_device(list[i]);
	if (!ctx)
		return 3;
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		return 4;
	mr = rxe2dv_reg_shared_mr(pd, c->id, NULL, c->access);
	if (c->want_errno) {
		if (mr) {
			fprintf(stderr, "# child: MR made, want %s\n",
				strerror(c->want_errno));
			return 5;
		}
		if (errno != c->want_errno) {
			fprintf(stderr, "# child: %s, want %s\n",
				strerror(errno), strerror(c->want_errno));
			return 6;
		}
		return 0;
	}
	if (!mr) {
		fprintf(stderr, "# child: reg_shared_mr: %s\n",
			strerror(errno));
		return 7;
	}
	if (mr->length != MAPLEN)
		return 8;
	if (dp_verify(mr->addr, MAPLEN, c->seed_read) != -1)
		return 9;
	if (c->seed_write)
		dp_fill(mr->addr, MAPLEN, c->seed_write);
	if (ibv_dereg_mr(mr))
		return 10;
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return 0;
}

static int child_status(const struct child *c)
{
	int st;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		tap_bail("fork: %s", strerror(errno));
	if (!pid)
		_exit(child_run(c));
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void test_processes(struct dp_dev *d)
{
	static const struct {
		mode_t mode;
		gid_t gid;	/* of the child, uid 65534 */
		int access;
		int want;
		const char *what;
	} perm[] = {
		{ 0600, 65534, ACC_RO, EACCES, "0600, other, read: EACCES" },
		{ 0604, 65534, ACC_RO, 0, "0604, other, read: allowed" },
		{ 0604, 65534, DP_ACCESS_ALL, EACCES,
		  "0604, other, write: EACCES" },
		{ 0606, 65534, DP_ACCESS_ALL, 0, "0606, other, write: allowed" },
		{ 0640, 0, ACC_RO, 0, "0640, group, read: allowed" },
		{ 0640, 0, IBV_ACCESS_LOCAL_WRITE, EACCES,
		  "0640, group, local write: EACCES" },
		{ 0660, 0, DP_ACCESS_ALL, 0, "0660, group, write: allowed" },
		{ 0606, 0, ACC_RO, EACCES,
		  "0606, group (no group bits), read: EACCES" },
		{ 0066, 0, ACC_RO, 0,
		  "0066, group, read: allowed (owner bits do not apply)" },
	};
	struct child c = { .dev = d->name };
	struct ibv_mr *own;
	uint64_t id;
	size_t i;

	own = rxe2dv_alloc_shared_mr(d->pd, MAPLEN, DP_ACCESS_ALL, 0600, &id);
	if (!own)
		tap_bail("alloc_shared_mr: %s", strerror(errno));
	dp_fill(own->addr, MAPLEN, 21);
	c.id = id;
	c.access = DP_ACCESS_ALL;
	c.seed_read = 21;
	c.seed_write = 22;
	tap_ret(child_status(&c), 0,
		"forked child (same uid) maps the memory, reads, writes");
	tap_ret(dp_verify(own->addr, MAPLEN, 22), -1,
		"the parent sees the child's bytes");
	ibv_dereg_mr(own);

	/* the owner's own bits bind the owner too */
	own = rxe2dv_alloc_shared_mr(d->pd, MAPLEN, DP_ACCESS_ALL, 0066, &id);
	if (own) {
		tap_null_errno(rxe2dv_reg_shared_mr(d->pd, id, NULL, ACC_RO),
			       EACCES, "mode 0066: the owner may not: EACCES");
		ibv_dereg_mr(own);
	} else {
		tap_skip("alloc_shared_mr: %s", strerror(errno));
	}

	for (i = 0; i < sizeof(perm) / sizeof(perm[0]); i++) {
		own = rxe2dv_alloc_shared_mr(d->pd, MAPLEN, DP_ACCESS_ALL,
					     perm[i].mode, &id);
		if (!own) {
			tap_skip("alloc_shared_mr: %s", strerror(errno));
			continue;
		}
		dp_fill(own->addr, MAPLEN, 30 + i);
		c.id = id;
		c.uid = 65534;
		c.gid = perm[i].gid;
		c.access = perm[i].access;
		c.want_errno = perm[i].want;
		c.seed_read = 30 + i;
		c.seed_write = perm[i].access & IBV_ACCESS_LOCAL_WRITE ?
			       40 + i : 0;
		tap_ret(child_status(&c), 0, "uid 65534 gid %u: %s",
			(unsigned int)perm[i].gid, perm[i].what);
		if (c.seed_write && !c.want_errno)
			tap_ret(dp_verify(own->addr, MAPLEN, 40 + i), -1,
				"... the owner sees its bytes");
		ibv_dereg_mr(own);
	}
}

int main(void)
{
	struct dp_dev d;

	tap_plan(PLAN);
	if (!test_is_rxe2(test_dev_name())) {
		int i;

		for (i = 0; i < PLAN; i++)
			tap_skip("shared MRs are rxe2dv: %s is not rxe2",
				 test_dev_name());
		return tap_done();
	}
	dp_open(&d, test_dev_name());
	test_same_process(&d);
	test_processes(&d);
	dp_close(&d);
	return tap_done();
}
