// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: tag matching SRQs and their tag list: tm_caps, creation limits, RC only, ibv_post_srq_ops errors and completions, a full list and a stale handle; the setup and teardown checks of all test_tm_*
 *
 * Tag matching, the SRQ and its tag list (the model and the setup all
 * the test_tm_* share: tm_lib.h):
 *  1. tm_caps exactly (64 B rendezvous header, 1024 tags, RC, 256 ops,
 *     8 SGEs); rxe2 without tag matching is a failure, not a skip;
 *  2. ibv_create_srq_ex: no CQ, 0 or too many tags or ops EINVAL, the
 *     maxima accepted; a UD or a UC QP on a TM SRQ is EOPNOTSUPP (tag
 *     matching is RC's), no QP created;
 *  3. list operations: EOPNOTSUPP on a basic SRQ; 9 SGEs, an unknown
 *     opcode or flag EINVAL and a list longer than max_ops ENOMEM, *bad
 *     naming the op, the ops before it performed; signaled ops complete
 *     (TM_ADD, TM_DEL, TM_SYNC), unsignaled ones do not, a DEL of a
 *     handle naming no tag completes with TM_ERR even unsignaled;
 *     IBV_OPS_TM_SYNC on any op sets the software count;
 *  4. a full tag list (ENOMEM, no completion), a stale handle's DEL
 *     leaves the tag that reused its entry alone;
 *  5. the QPs' own receive CQs stay empty; everything destroyed.
 * 1, 5 and the setup's other checks are this program's alone: the other
 * test_tm_* make the same objects and print such a check only when it
 * fails.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tap.h"
#include "tm_lib.h"

/* An ADD the full list refuses: ENOMEM, *bad the ADD; one TAP line. */
static void add_full(struct tag *t, const char *what)
{
	struct ibv_sge sge = slot_sge(t->slot, 0, SLOT);
	struct ibv_ops_wr op, *bad;
	int r;

	init_add(&op, t, &sge, 1, SIG, 0);
	r = post_ops(&op, &bad);
	if (!tap_ok(r == ENOMEM && bad == &op, "%s: ADD is ENOMEM, *bad the ADD",
		    what))
		tap_diag("  got %d (%s), *bad %p (op %p)", r, strerror(r),
			 (void *)bad, (void *)&op);
}

static void refused(struct ibv_srq *s, const char *what)
{
	if (!tap_null_errno(s, EINVAL, "create TM SRQ %s: EINVAL", what) && s)
		ibv_destroy_srq(s);
}

static void create_errors(void)
{
	struct ibv_cq *cq = ibv_cq_ex_to_cq(tcq);
	struct ibv_srq *s;

	refused(tm_srq(cq, TM_MASK & ~IBV_SRQ_INIT_ATTR_CQ, 8, 8),
		"without IBV_SRQ_INIT_ATTR_CQ");
	refused(tm_srq(NULL, TM_MASK, 8, 8), "with cq NULL");
	refused(tm_srq(cq, TM_MASK, 0, 8), "with max_num_tags 0");
	refused(tm_srq(cq, TM_MASK, 1025, 8), "with max_num_tags 1025");
	refused(tm_srq(cq, TM_MASK, 8, 0), "with max_ops 0");
	refused(tm_srq(cq, TM_MASK, 8, 257), "with max_ops 257");
	s = tm_srq(cq, TM_MASK, 1024, 256);
	if (tap_ok(s != NULL,
		   "create TM SRQ with max_num_tags 1024, max_ops 256 (the maxima)")) {
		tap_ret_errno(ibv_destroy_srq(s), 0, "... destroy it");
	} else {
		tap_diag("  %s", strerror(errno));
		tap_ok(false, "... destroy it (not created)");
	}
}

/*
 * Tag matching is RC's (tm_caps.flags IBV_TM_CAP_RC): a UD or UC QP on
 * the TM SRQ is EOPNOTSUPP and nothing is created.
 */
static void rc_only(void)
{
	static const struct {
		enum ibv_qp_type type;
		const char *name;
	} t[] = { { IBV_QPT_UD, "UD" }, { IBV_QPT_UC, "UC" } };
	struct ibv_qp_cap cap = { .max_send_wr = 32, .max_recv_wr = 32,
				  .max_send_sge = 1, .max_recv_sge = 1 };
	struct ibv_qp *qp;
	unsigned int i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		errno = 0;
		qp = dp_create_qp(&dev, t[i].type, s1.scq, s1.rcq, srq, &cap);
		if (!tap_null_errno(qp, EOPNOTSUPP,
				    "create a %s QP on the TM SRQ: EOPNOTSUPP (RC only), no QP",
				    t[i].name) && qp)
			ibv_destroy_qp(qp);
	}
}

static bool refused_ops(int r, int err, struct ibv_ops_wr *bad,
			struct ibv_ops_wr *want_bad, const char *what)
{
	bool ok = tap_ok(r == err && bad == want_bad, "%s", what);

	if (!ok)
		tap_diag("  got %d (%s), *bad %s", r, strerror(r),
			 bad == want_bad ? "right" : "wrong");
	return ok;
}

static void ops_errors(void)
{
	struct ibv_srq_init_attr bi = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct tag t = { .tag = 1, .mask = ~0ull, .id = 0x1001, .slot = 0 };
	struct ibv_ops_wr ops[OPS + 1], *bad;
	struct ibv_sge sge[9];
	struct ibv_srq *basic;
	char what[128];
	int i, r;

	basic = ibv_create_srq(dev.pd, &bi);
	if (!basic)
		tap_bail("ibv_create_srq: %s", strerror(errno));
	memset(ops, 0, sizeof(ops));
	ops[0].wr_id = op_id++;
	ops[0].opcode = IBV_WR_TAG_SYNC;
	ops[0].flags = SIG;
	bad = NULL;
	r = ibv_post_srq_ops(basic, ops, &bad);
	/* the spec names no *bad here: reported, not asserted */
	tap_diag("ibv_post_srq_ops on a basic SRQ: %d (%s)%s, *bad %s", r,
		 strerror(r),
		 r == ENOSYS ? ": libibverbs answered, not the provider" : "",
		 bad == ops ? "the op" : bad ? "another pointer" : "NULL");
	tap_ret_errno(r, EOPNOTSUPP,
		      "post_srq_ops on a basic SRQ: EOPNOTSUPP (rxe2's answer)");
	tap_ret_errno(ibv_destroy_srq(basic), 0, "destroy the basic SRQ");

	for (i = 0; i < 9; i++)
		sge[i] = slot_sge(0, i * 64, 64);
	init_add(ops, &t, sge, 9, SIG, 0);
	r = post_ops(ops, &bad);
	refused_ops(r, EINVAL, bad, ops,
		    "ADD with 9 SGEs (tm_caps.max_sge 8): EINVAL, *bad the ADD");

	/* the op before a bad one is performed, the bad one is not */
	memset(ops, 0, 2 * sizeof(ops[0]));
	ops[0].wr_id = op_id++;
	ops[0].opcode = IBV_WR_TAG_SYNC;
	ops[0].flags = SIG;
	ops[0].next = &ops[1];
	ops[1].wr_id = op_id++;
	ops[1].opcode = (enum ibv_ops_wr_opcode)(IBV_WR_TAG_SYNC + 1);
	ops[1].flags = SIG;
	r = post_ops(ops, &bad);
	refused_ops(r, EINVAL, bad, &ops[1],
		    "[SYNC, unknown opcode 3]: EINVAL, *bad the second");
	expect_op(ops[0].wr_id, IBV_WC_TM_SYNC, IBV_WC_SUCCESS,
		  "[SYNC, unknown opcode]: the SYNC before it performed");
	ops[0].wr_id = op_id++;
	ops[1].wr_id = op_id++;
	ops[1].opcode = IBV_WR_TAG_SYNC;
	ops[1].flags = SIG | (1 << 2);
	r = post_ops(ops, &bad);
	refused_ops(r, EINVAL, bad, &ops[1],
		    "[SYNC, SYNC with flag bit 2]: EINVAL, *bad the second");
	expect_op(ops[0].wr_id, IBV_WC_TM_SYNC, IBV_WC_SUCCESS,
		  "[SYNC, unknown flag]: the SYNC before it performed");
	expect_none("no completion for the refused ADD and ops");

	memset(ops, 0, sizeof(ops));
	for (i = 0; i <= OPS; i++) {
		ops[i].wr_id = op_id++;
		ops[i].opcode = IBV_WR_TAG_SYNC;
		ops[i].flags = SIG;
		ops[i].next = i < OPS ? &ops[i + 1] : NULL;
	}
	r = post_ops(ops, &bad);
	refused_ops(r, ENOMEM, bad, &ops[OPS],
		    "a list of max_ops + 1 (9) SYNCs: ENOMEM, *bad the 9th");
	for (i = 0; i < OPS; i++) {
		snprintf(what, sizeof(what),
			 "list of max_ops + 1: SYNC %d performed", i + 1);
		expect_op(ops[i].wr_id, IBV_WC_TM_SYNC, IBV_WC_SUCCESS, what);
	}
	expect_none("list of max_ops + 1: nothing for the 9th");
}

static void ops_basic(void)
{
	struct tag t = { .tag = 0x10, .mask = ~0ull, .id = 0x1010, .slot = 0 };

	add(&t, 0, 0, "unsignaled ADD");
	expect_none("unsignaled ADD: no completion");
	del(t.handle, SIG, 0, IBV_WC_SUCCESS, "signaled DEL of the live tag");
	del(t.handle, 0, 0, IBV_WC_TM_ERR,
	    "unsignaled DEL of the deleted tag's handle");
	add(&t, SIG, 0, "signaled ADD");
	del(t.handle, 0, 0, IBV_WC_SUCCESS, "unsignaled DEL of the live tag");
	expect_none("unsignaled DEL: no completion");
	del(t.handle, 0, 0, IBV_WC_TM_ERR, "unsignaled DEL of it again");
	del(0xfffffffe, 0, 0, IBV_WC_TM_ERR,
	    "unsignaled DEL of a handle never issued");
	/* the counts differ either way round */
	sync_op(SIG | SYNC, 1, "software count one above the device's");
	sync_op(SIG | SYNC, 0, "software count back to the device's");
}

/* A full list, and a stale handle of an entry a new tag reuses. */
static void limits(void)
{
	struct tag extra = { .tag = 0x7100, .mask = ~0ull, .id = 0x3510,
			     .slot = 19 };
	struct tag more = { .tag = 0x7101, .mask = ~0ull, .id = 0x3511,
			    .slot = 20 };
	struct ibv_ops_wr ops[TAGS], *bad;
	struct ibv_sge sge[TAGS];
	struct tag t[TAGS];
	uint32_t stale;
	int i, k, r;

	for (i = 0; i < TAGS; i++) {
		t[i] = (struct tag){ .tag = 0x7000 + i, .mask = ~0ull,
				     .id = 0x3500 + i, .slot = 11 + i };
		memset(slot(t[i].slot), CANARY, SLOT);
		sge[i] = slot_sge(t[i].slot, 0, SLOT);
		init_add(&ops[i], &t[i], &sge[i], 1, 0, 0);
		ops[i].next = i + 1 < TAGS ? &ops[i + 1] : NULL;
	}
	r = post_ops(ops, &bad);
	tap_ret_errno(r, 0,
		      "full list: 8 unsignaled ADDs in one list (max_num_tags, max_ops)");
	for (i = 0; i < TAGS; i++)
		t[i].handle = ops[i].tm.handle;
	add_full(&extra, "full list: a 9th tag");
	expect_none("full list: no completion for the refused ADD");
	del(t[3].handle, SIG, 0, IBV_WC_SUCCESS, "full list: DEL of tag 4");
	add(&t[3], SIG, 0, "full list: after the DEL an ADD fits");

	eager(&s1, &r1, &t[5], t[5].tag, 100,
	      "stale handle: a message consumes tag 6");
	stale = t[5].handle;
	add(&extra, SIG, 0, "stale handle: a new tag in its entry");
	add_full(&more, "stale handle: the list is full again");
	del(stale, 0, 0, IBV_WC_TM_ERR,
	    "stale handle: DEL of the consumed tag's handle");
	eager(&s1, &r1, &extra, extra.tag, 100,
	      "stale handle: the new tag still matches");

	/* the rest away in one list, only the last op signaled */
	for (i = 0, k = 0; i < TAGS; i++) {
		if (i == 5)
			continue;
		memset(&ops[k], 0, sizeof(ops[k]));
		ops[k].wr_id = op_id++;
		ops[k].opcode = IBV_WR_TAG_DEL;
		ops[k].tm.handle = t[i].handle;
		if (k)
			ops[k - 1].next = &ops[k];
		k++;
	}
	ops[k - 1].flags = SIG;
	r = post_ops(ops, &bad);
	tap_ret_errno(r, 0, "full list: the 7 live tags DELeted in one list");
	expect_op(ops[k - 1].wr_id, IBV_WC_TM_DEL, IBV_WC_SUCCESS,
		  "full list: one completion, the signaled last DEL's");
}

int main(void)
{
	tm_open(true);
	create_errors();
	tm_pairs();

	rc_only();
	ops_errors();
	ops_basic();
	limits();
	tm_close();
	return tap_done();
}
