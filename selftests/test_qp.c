// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: RC/UC/UD QP creation, caps and limits; the IBTA state machine: every legal transition with its exact attr_mask, illegal ones, missing and forbidden bits, out-of-range values, ibv_query_qp
 *
 * Queue pairs: creation of RC, UC and UD QPs with their capabilities and
 * limits, and the IBTA state machine: every legal transition with exactly
 * the required attr_mask, illegal transitions, missing and forbidden
 * mask bits, out-of-range values, and ibv_query_qp reporting what was set.
 *
 * Checks marked "(rxe2)" are stricter than the in-tree rxe, which stores
 * some out-of-range values (retry counts, RNR timer) unchecked.  PSNs of
 * 2^24 and more never reach a driver: ib_core masks them to 24 bits (and
 * logs it), so the test checks the masked value, on every device.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tap.h"
#include "util.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_device_attr dattr;
static struct ibv_port_attr pattr;
static union ibv_gid gid;
static int gid_index;
static bool rxe2;

static const char *type_name(enum ibv_qp_type t)
{
	return t == IBV_QPT_RC ? "RC" : t == IBV_QPT_UC ? "UC" : "UD";
}

static const char *mask_name(int bit)
{
	switch (bit) {
	case IBV_QP_STATE: return "STATE";
	case IBV_QP_CUR_STATE: return "CUR_STATE";
	case IBV_QP_EN_SQD_ASYNC_NOTIFY: return "EN_SQD_ASYNC_NOTIFY";
	case IBV_QP_ACCESS_FLAGS: return "ACCESS_FLAGS";
	case IBV_QP_PKEY_INDEX: return "PKEY_INDEX";
	case IBV_QP_PORT: return "PORT";
	case IBV_QP_QKEY: return "QKEY";
	case IBV_QP_AV: return "AV";
	case IBV_QP_PATH_MTU: return "PATH_MTU";
	case IBV_QP_TIMEOUT: return "TIMEOUT";
	case IBV_QP_RETRY_CNT: return "RETRY_CNT";
	case IBV_QP_RNR_RETRY: return "RNR_RETRY";
	case IBV_QP_RQ_PSN: return "RQ_PSN";
	case IBV_QP_MAX_QP_RD_ATOMIC: return "MAX_QP_RD_ATOMIC";
	case IBV_QP_ALT_PATH: return "ALT_PATH";
	case IBV_QP_MIN_RNR_TIMER: return "MIN_RNR_TIMER";
	case IBV_QP_SQ_PSN: return "SQ_PSN";
	case IBV_QP_MAX_DEST_RD_ATOMIC: return "MAX_DEST_RD_ATOMIC";
	case IBV_QP_PATH_MIG_STATE: return "PATH_MIG_STATE";
	case IBV_QP_CAP: return "CAP";
	case IBV_QP_DEST_QPN: return "DEST_QPN";
	}
	return "?";
}

static void init_attr(struct ibv_qp_init_attr *init, enum ibv_qp_type t)
{
	memset(init, 0, sizeof(*init));
	init->qp_type = t;
	init->send_cq = cq;
	init->recv_cq = cq;
	init->cap.max_send_wr = 16;
	init->cap.max_recv_wr = 16;
	init->cap.max_send_sge = 2;
	init->cap.max_recv_sge = 2;
}

static struct ibv_qp *create(enum ibv_qp_type t)
{
	struct ibv_qp_init_attr init;

	init_attr(&init, t);
	return ibv_create_qp(pd, &init);
}

/* Expects ibv_qp_create to refuse init with EINVAL. */
static void create_fails(struct ibv_qp_init_attr *init, const char *what)
{
	struct ibv_qp *qp = ibv_create_qp(pd, init);

	tap_null_errno(qp, EINVAL, "ibv_create_qp %s %s -> EINVAL",
		       type_name(init->qp_type), what);
	if (qp)
		ibv_destroy_qp(qp);
}

static void test_create(enum ibv_qp_type t)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp *qp;

	init_attr(&init, t);
	init.cap.max_inline_data = 0;
	qp = ibv_create_qp(pd, &init);
	if (!tap_ok(qp != NULL, "ibv_create_qp %s", type_name(t))) {
		tap_diag("  errno %d (%s)", errno, strerror(errno));
		return;
	}
	tap_ok(qp->qp_type == t && qp->state == IBV_QPS_RESET && qp->pd == pd,
	       "the new %s QP is in RESET on its PD", type_name(t));
	tap_ok(init.cap.max_send_wr >= 16 && init.cap.max_recv_wr >= 16 &&
	       init.cap.max_send_sge >= 2 && init.cap.max_recv_sge >= 2,
	       "%s caps reported back >= requested (%u %u %u %u)", type_name(t),
	       init.cap.max_send_wr, init.cap.max_recv_wr,
	       init.cap.max_send_sge, init.cap.max_recv_sge);
	tap_ok(qp->qp_num >= 2 && qp->qp_num < (1u << 24),
	       "%s qp_num 0x%x is a 24-bit number >= 2", type_name(t),
	       qp->qp_num);
	tap_ret(qp_state(qp), IBV_QPS_RESET, "ibv_query_qp says RESET");
	tap_ret_errno(ibv_destroy_qp(qp), 0, "ibv_destroy_qp %s", type_name(t));

	/*
	 * Queues of the full size must be creatable.  A device that reports
	 * more than a sane ring (rxe: 2^20 WRs) is not tested at its max.
	 */
	init_attr(&init, t);
	init.cap.max_send_wr = dattr.max_qp_wr;
	init.cap.max_recv_wr = dattr.max_qp_wr;
	init.cap.max_send_sge = dattr.max_sge;
	init.cap.max_recv_sge = dattr.max_sge;
	if (dattr.max_qp_wr > 65536) {
		tap_skip("max_qp_wr %d is too large to allocate here",
			 dattr.max_qp_wr);
	} else {
		qp = ibv_create_qp(pd, &init);
		if (tap_ok(qp != NULL,
			   "ibv_create_qp %s at max_qp_wr %d, max_sge %d",
			   type_name(t), dattr.max_qp_wr, dattr.max_sge))
			ibv_destroy_qp(qp);
		else
			tap_diag("  errno %d (%s)", errno, strerror(errno));
	}

	init_attr(&init, t);
	init.cap.max_send_wr = dattr.max_qp_wr + 1;
	create_fails(&init, "max_send_wr max_qp_wr+1");
	init_attr(&init, t);
	init.cap.max_recv_wr = dattr.max_qp_wr + 1;
	create_fails(&init, "max_recv_wr max_qp_wr+1");
	init_attr(&init, t);
	init.cap.max_send_sge = dattr.max_sge + 1;
	create_fails(&init, "max_send_sge max_sge+1");
	init_attr(&init, t);
	init.cap.max_recv_sge = dattr.max_sge + 1;
	create_fails(&init, "max_recv_sge max_sge+1");
}

/*
 * The largest max_inline_data the device takes: rxe2 exports it as a
 * module parameter; for other devices it is found by bisection.
 */
static void test_inline(void)
{
	struct ibv_qp_init_attr init;
	long max = rxe2 ? module_param("max_inline_data") : -1;
	struct ibv_qp *qp;

	if (max < 0) {
		uint32_t lo = 0, hi = 1 << 20;

		while (lo < hi) {
			uint32_t mid = lo + (hi - lo + 1) / 2;

			init_attr(&init, IBV_QPT_RC);
			init.cap.max_inline_data = mid;
			qp = ibv_create_qp(pd, &init);
			if (qp) {
				ibv_destroy_qp(qp);
				lo = mid;
			} else {
				hi = mid - 1;
			}
		}
		max = lo;
		tap_diag("max_inline_data found by bisection: %ld", max);
	} else {
		tap_diag("max_inline_data module parameter: %ld", max);
	}
	init_attr(&init, IBV_QPT_RC);
	init.cap.max_inline_data = max;
	qp = ibv_create_qp(pd, &init);
	if (tap_ok(qp != NULL, "ibv_create_qp RC max_inline_data %ld", max)) {
		tap_ok(init.cap.max_inline_data >= max,
		       "reported max_inline_data %u >= %ld",
		       init.cap.max_inline_data, max);
		ibv_destroy_qp(qp);
	}
	init_attr(&init, IBV_QPT_RC);
	init.cap.max_inline_data = max + 1;
	create_fails(&init, "max_inline_data device max+1");
}

/*
 * Brings a QP whose modify wrongly succeeded back to the state it was
 * in, so that one failure does not cascade into the checks after it.
 */
static void rewind_qp(struct ibv_qp *qp, int state)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };
	int ret;

	if (qp_state(qp) == state)
		return;
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE);
	if (!ret && state >= IBV_QPS_INIT)
		ret = qp_to_init(qp);
	if (!ret && state >= IBV_QPS_RTR)
		ret = qp_to_rtr(qp, gid_index, &gid);
	if (!ret && state >= IBV_QPS_RTS)
		ret = qp_to_rts(qp);
	tap_diag("  QP put back into state %d: %s", state,
		 ret ? strerror(ret) : "ok");
}

static void expect_modify(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask,
			  int err, const char *what)
{
	int state = err ? qp_state(qp) : -1;
	int ret = ibv_modify_qp(qp, a, mask);

	tap_ret_errno(ret, err, "%s %s%s", type_name(qp->qp_type), what,
		      err ? " -> EINVAL" : "");
	if (err && !ret)
		rewind_qp(qp, state);
}

/* Drops each required bit in turn, then adds each forbidden one. */
static void test_masks(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask,
		       const int *forbidden, const char *step)
{
	int bit;
	char what[128];

	for (bit = IBV_QP_STATE << 1; bit <= IBV_QP_DEST_QPN; bit <<= 1) {
		if (!(mask & bit))
			continue;
		snprintf(what, sizeof(what), "%s without %s", step,
			 mask_name(bit));
		expect_modify(qp, a, mask & ~bit, EINVAL, what);
	}
	for (; *forbidden; forbidden++) {
		snprintf(what, sizeof(what), "%s with forbidden %s", step,
			 mask_name(*forbidden));
		expect_modify(qp, a, mask | *forbidden, EINVAL, what);
	}
}

static void expect_state(struct ibv_qp *qp, enum ibv_qp_state s,
			 const char *name)
{
	tap_ret(qp_state(qp), s, "%s QP is %s", type_name(qp->qp_type), name);
}

/* A value the check marks rxe2-only is expected to pass on other devices. */
static void bad_value(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask,
		      const char *what, bool rxe2_only)
{
	char desc[160];

	if (rxe2_only && !rxe2) {
		tap_skip("%s %s: rxe2 only", type_name(qp->qp_type), what);
		return;
	}
	snprintf(desc, sizeof(desc), "%s%s", what, rxe2_only ? " (rxe2)" : "");
	expect_modify(qp, a, mask, EINVAL, desc);
}

static void test_rc_states(void)
{
	static const int init_forbidden[] = { IBV_QP_QKEY, IBV_QP_SQ_PSN,
					      IBV_QP_AV, 0 };
	static const int rtr_forbidden[] = { IBV_QP_SQ_PSN, IBV_QP_TIMEOUT,
					     IBV_QP_QKEY, 0 };
	static const int rts_forbidden[] = { IBV_QP_DEST_QPN, IBV_QP_RQ_PSN,
					     IBV_QP_PATH_MTU, 0 };
	struct ibv_qp_init_attr qinit;
	struct ibv_qp_attr a, b, q;
	struct ibv_qp *qp = create(IBV_QPT_RC);
	int mask, mb;

	if (!qp)
		tap_bail("ibv_create_qp RC: %s", strerror(errno));

	/* RESET -> anything but INIT, RESET, ERR is illegal */
	qp_attr_rts(IBV_QPT_RC, &a, &mask);
	expect_modify(qp, &a, mask, EINVAL, "RESET->RTS");
	qp_attr_rtr(IBV_QPT_RC, gid_index, &gid, qp->qp_num, &a, &mask);
	expect_modify(qp, &a, mask, EINVAL, "RESET->RTR");
	a.qp_state = IBV_QPS_SQD;
	expect_modify(qp, &a, IBV_QP_STATE, EINVAL, "RESET->SQD");

	qp_attr_init(IBV_QPT_RC, &a, &mask);
	test_masks(qp, &a, mask, init_forbidden, "RESET->INIT");
	b = a;
	b.port_num = 2;
	bad_value(qp, &b, mask, "RESET->INIT port 2", false);
	b = a;
	b.port_num = 0;
	bad_value(qp, &b, mask, "RESET->INIT port 0", false);
	b = a;
	b.pkey_index = pattr.pkey_tbl_len;
	bad_value(qp, &b, mask, "RESET->INIT pkey_index pkey_tbl_len", true);
	expect_state(qp, IBV_QPS_RESET, "still RESET");
	a.qp_access_flags = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;
	expect_modify(qp, &a, mask, 0, "RESET->INIT PKEY_INDEX|PORT|ACCESS_FLAGS");
	expect_state(qp, IBV_QPS_INIT, "INIT");

	/* INIT -> INIT takes the same attributes as optional ones */
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	expect_modify(qp, &a, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS, 0,
		      "INIT->INIT ACCESS_FLAGS");
	qp_attr_rts(IBV_QPT_RC, &a, &mask);
	expect_modify(qp, &a, mask, EINVAL, "INIT->RTS");
	a.qp_state = IBV_QPS_SQD;
	expect_modify(qp, &a, IBV_QP_STATE, EINVAL, "INIT->SQD");

	qp_attr_rtr(IBV_QPT_RC, gid_index, &gid, qp->qp_num, &a, &mask);
	test_masks(qp, &a, mask, rtr_forbidden, "INIT->RTR");
	b = a;
	b.path_mtu = pattr.max_mtu + 1;
	bad_value(qp, &b, mask, "INIT->RTR path_mtu beyond the port max_mtu",
		  false);
	b = a;
	b.ah_attr.grh.sgid_index = pattr.gid_tbl_len;
	bad_value(qp, &b, mask, "INIT->RTR sgid_index gid_tbl_len", false);
	b = a;
	b.max_dest_rd_atomic = dattr.max_qp_rd_atom + 1;
	bad_value(qp, &b, mask, "INIT->RTR max_dest_rd_atomic max_qp_rd_atom+1",
		  true);
	b = a;
	b.min_rnr_timer = 32;
	bad_value(qp, &b, mask, "INIT->RTR min_rnr_timer 32", true);
	b = a;
	b.dest_qp_num = 1 << 24;
	bad_value(qp, &b, mask, "INIT->RTR dest_qp_num 2^24", true);
	expect_state(qp, IBV_QPS_INIT, "still INIT");
	expect_modify(qp, &a, mask, 0,
		      "INIT->RTR AV|PATH_MTU|DEST_QPN|RQ_PSN|MAX_DEST_RD_ATOMIC|MIN_RNR_TIMER");
	expect_state(qp, IBV_QPS_RTR, "RTR");

	qp_attr_rts(IBV_QPT_RC, &a, &mask);
	test_masks(qp, &a, mask, rts_forbidden, "RTR->RTS");
	b = a;
	b.retry_cnt = 8;
	bad_value(qp, &b, mask, "RTR->RTS retry_cnt 8", true);
	b = a;
	b.rnr_retry = 8;
	bad_value(qp, &b, mask, "RTR->RTS rnr_retry 8", true);
	b = a;
	b.timeout = 32;
	bad_value(qp, &b, mask, "RTR->RTS timeout 32", false);
	b = a;
	b.max_rd_atomic = dattr.max_qp_init_rd_atom + 1;
	bad_value(qp, &b, mask, "RTR->RTS max_rd_atomic max_qp_init_rd_atom+1",
		  false);
	expect_state(qp, IBV_QPS_RTR, "still RTR");
	expect_modify(qp, &a, mask, 0,
		      "RTR->RTS SQ_PSN|TIMEOUT|RETRY_CNT|RNR_RETRY|MAX_QP_RD_ATOMIC");
	expect_state(qp, IBV_QPS_RTS, "RTS");

	/* what was set is what is reported */
	mb = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
	     IBV_QP_ACCESS_FLAGS | IBV_QP_AV | IBV_QP_PATH_MTU |
	     IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
	     IBV_QP_MIN_RNR_TIMER | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
	     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC |
	     IBV_QP_CAP;
	memset(&q, 0, sizeof(q));
	if (tap_ret_errno(ibv_query_qp(qp, &q, mb, &qinit), 0, "ibv_query_qp")) {
		tap_ok(q.qp_state == IBV_QPS_RTS && q.port_num == PORT &&
		       q.pkey_index == 0 &&
		       q.qp_access_flags == IBV_ACCESS_REMOTE_WRITE,
		       "query: state, port, pkey_index, access flags");
		tap_ok(q.path_mtu == IBV_MTU_1024 &&
		       q.dest_qp_num == qp->qp_num && q.rq_psn == 0x123456 &&
		       q.max_dest_rd_atomic == 1 && q.min_rnr_timer == 12,
		       "query: path_mtu, dest_qp_num, rq_psn, max_dest_rd_atomic, min_rnr_timer");
		tap_ok(q.sq_psn == 0x654321 && q.timeout == 14 &&
		       q.retry_cnt == 7 && q.rnr_retry == 7 &&
		       q.max_rd_atomic == 1,
		       "query: sq_psn, timeout, retry_cnt, rnr_retry, max_rd_atomic");
		tap_ok(q.ah_attr.is_global &&
		       q.ah_attr.grh.sgid_index == gid_index &&
		       !memcmp(&q.ah_attr.grh.dgid, &gid, sizeof(gid)) &&
		       q.ah_attr.grh.hop_limit == 64 && q.ah_attr.port_num == PORT,
		       "query: address vector (GRH, sgid_index, dgid, hop_limit, port)");
		tap_ok(q.cap.max_send_wr >= 16 && q.cap.max_recv_wr >= 16 &&
		       q.cap.max_send_sge >= 2 && q.cap.max_recv_sge >= 2,
		       "query: caps");
		tap_ok(qinit.qp_type == IBV_QPT_RC && qinit.send_cq == cq &&
		       qinit.recv_cq == cq && !qinit.srq,
		       "query: init attributes");
	}

	/* RTS -> SQD -> RTS */
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_SQD;
	expect_modify(qp, &a, IBV_QP_STATE, 0, "RTS->SQD");
	mb = qp_state(qp);
	tap_ok(mb == IBV_QPS_SQD, "RC QP is SQD (got %d)", mb);
	a.qp_state = IBV_QPS_RTS;
	expect_modify(qp, &a, IBV_QP_STATE, 0, "SQD->RTS");
	expect_state(qp, IBV_QPS_RTS, "RTS again");
	a.min_rnr_timer = 10;
	expect_modify(qp, &a, IBV_QP_STATE | IBV_QP_MIN_RNR_TIMER, 0,
		      "RTS->RTS MIN_RNR_TIMER");
	a.timeout = 10;
	expect_modify(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT, EINVAL,
		      "RTS->RTS with forbidden TIMEOUT");
	a.qp_state = IBV_QPS_RTR;
	expect_modify(qp, &a, IBV_QP_STATE, EINVAL, "RTS->RTR");
	a.qp_state = IBV_QPS_INIT;
	expect_modify(qp, &a, IBV_QP_STATE, EINVAL, "RTS->INIT");

	/* any -> ERR -> RESET -> INIT */
	a.qp_state = IBV_QPS_ERR;
	expect_modify(qp, &a, IBV_QP_STATE, 0, "RTS->ERR");
	expect_state(qp, IBV_QPS_ERR, "ERR");
	qp_attr_rts(IBV_QPT_RC, &b, &mask);
	expect_modify(qp, &b, mask, EINVAL, "ERR->RTS");
	a.qp_state = IBV_QPS_RESET;
	expect_modify(qp, &a, IBV_QP_STATE, 0, "ERR->RESET");
	expect_state(qp, IBV_QPS_RESET, "RESET");
	expect_modify(qp, &a, IBV_QP_STATE, 0, "RESET->RESET");
	tap_ret_errno(qp_to_init(qp), 0, "RC RESET->INIT again");
	a.qp_state = IBV_QPS_ERR;
	expect_modify(qp, &a, IBV_QP_STATE, 0, "INIT->ERR");
	a.qp_state = IBV_QPS_RESET;
	expect_modify(qp, &a, IBV_QP_STATE, 0, "ERR->RESET");
	tap_ret_errno(qp_to_init(qp), 0, "RC RESET->INIT");
	tap_ret_errno(qp_to_rtr(qp, gid_index, &gid), 0, "RC INIT->RTR");
	expect_modify(qp, &a, IBV_QP_STATE, 0, "RTR->RESET");
	tap_ret_errno(ibv_destroy_qp(qp), 0, "ibv_destroy_qp RC");
}

static void test_uc_states(void)
{
	struct ibv_qp *qp = create(IBV_QPT_UC);
	struct ibv_qp_attr a;
	int mask;

	if (!qp)
		tap_bail("ibv_create_qp UC: %s", strerror(errno));
	qp_attr_init(IBV_QPT_UC, &a, &mask);
	expect_modify(qp, &a, mask & ~IBV_QP_ACCESS_FLAGS, EINVAL,
		      "RESET->INIT without ACCESS_FLAGS");
	expect_modify(qp, &a, mask | IBV_QP_QKEY, EINVAL,
		      "RESET->INIT with forbidden QKEY");
	expect_modify(qp, &a, mask, 0, "RESET->INIT PKEY_INDEX|PORT|ACCESS_FLAGS");
	qp_attr_rtr(IBV_QPT_UC, gid_index, &gid, qp->qp_num, &a, &mask);
	expect_modify(qp, &a, mask & ~IBV_QP_RQ_PSN, EINVAL,
		      "INIT->RTR without RQ_PSN");
	expect_modify(qp, &a, mask | IBV_QP_MAX_DEST_RD_ATOMIC, EINVAL,
		      "INIT->RTR with forbidden MAX_DEST_RD_ATOMIC");
	expect_modify(qp, &a, mask, 0, "INIT->RTR AV|PATH_MTU|DEST_QPN|RQ_PSN");
	qp_attr_rts(IBV_QPT_UC, &a, &mask);
	expect_modify(qp, &a, mask | IBV_QP_RETRY_CNT, EINVAL,
		      "RTR->RTS with forbidden RETRY_CNT");
	expect_modify(qp, &a, mask, 0, "RTR->RTS SQ_PSN");
	expect_state(qp, IBV_QPS_RTS, "RTS");
	a.qp_state = IBV_QPS_ERR;
	expect_modify(qp, &a, IBV_QP_STATE, 0, "RTS->ERR");
	a.qp_state = IBV_QPS_RESET;
	expect_modify(qp, &a, IBV_QP_STATE, 0, "ERR->RESET");
	tap_ret_errno(ibv_destroy_qp(qp), 0, "ibv_destroy_qp UC");
}

static void test_ud_states(void)
{
	struct ibv_qp_init_attr qinit;
	struct ibv_qp *qp = create(IBV_QPT_UD);
	struct ibv_qp_attr a, b, q;
	int mask;

	if (!qp)
		tap_bail("ibv_create_qp UD: %s", strerror(errno));
	qp_attr_init(IBV_QPT_UD, &a, &mask);
	expect_modify(qp, &a, mask & ~IBV_QP_QKEY, EINVAL,
		      "RESET->INIT without QKEY");
	expect_modify(qp, &a, mask & ~IBV_QP_PORT, EINVAL,
		      "RESET->INIT without PORT");
	expect_modify(qp, &a, mask | IBV_QP_ACCESS_FLAGS, EINVAL,
		      "RESET->INIT with forbidden ACCESS_FLAGS");
	expect_modify(qp, &a, mask, 0, "RESET->INIT PKEY_INDEX|PORT|QKEY");
	qp_attr_rtr(IBV_QPT_UD, gid_index, &gid, qp->qp_num, &a, &mask);
	qp_attr_rtr(IBV_QPT_RC, gid_index, &gid, qp->qp_num, &b, &mask);
	expect_modify(qp, &b, IBV_QP_STATE | IBV_QP_AV, EINVAL,
		      "INIT->RTR with forbidden AV");
	expect_modify(qp, &b, IBV_QP_STATE | IBV_QP_DEST_QPN, EINVAL,
		      "INIT->RTR with forbidden DEST_QPN");
	expect_modify(qp, &a, IBV_QP_STATE, 0, "INIT->RTR (no attributes)");
	qp_attr_rts(IBV_QPT_UD, &a, &mask);
	expect_modify(qp, &a, IBV_QP_STATE, EINVAL, "RTR->RTS without SQ_PSN");
	expect_modify(qp, &a, mask, 0, "RTR->RTS SQ_PSN");
	memset(&q, 0, sizeof(q));
	if (tap_ret_errno(ibv_query_qp(qp, &q, IBV_QP_STATE | IBV_QP_QKEY |
				       IBV_QP_SQ_PSN | IBV_QP_PORT, &qinit),
			  0, "ibv_query_qp UD"))
		tap_ok(q.qp_state == IBV_QPS_RTS && q.qkey == 0x11111111 &&
		       q.sq_psn == 0x654321 && q.port_num == PORT,
		       "query UD: state, qkey, sq_psn, port");
	a.qp_state = IBV_QPS_SQD;
	expect_modify(qp, &a, IBV_QP_STATE, 0, "RTS->SQD");
	a.qp_state = IBV_QPS_RTS;
	expect_modify(qp, &a, IBV_QP_STATE, 0, "SQD->RTS");
	a.qp_state = IBV_QPS_ERR;
	expect_modify(qp, &a, IBV_QP_STATE, 0, "RTS->ERR");
	a.qp_state = IBV_QPS_RESET;
	expect_modify(qp, &a, IBV_QP_STATE, 0, "ERR->RESET");
	tap_ret_errno(ibv_destroy_qp(qp), 0, "ibv_destroy_qp UD");
}

static void test_psn_mask(void)
{
	struct ibv_qp_init_attr qinit;
	struct ibv_qp_attr a, q;
	struct ibv_qp *qp;
	int mask;

	qp = create(IBV_QPT_RC);
	if (!qp || qp_to_init(qp)) {
		tap_ok(false, "RC QP to INIT for the PSN masking check");
		if (qp)
			ibv_destroy_qp(qp);
		return;
	}
	qp_attr_rtr(IBV_QPT_RC, gid_index, &gid, qp->qp_num, &a, &mask);
	a.rq_psn = (1 << 24) | 0xabcdef;
	expect_modify(qp, &a, mask, 0, "INIT->RTR with rq_psn beyond 24 bits");
	qp_attr_rts(IBV_QPT_RC, &a, &mask);
	a.sq_psn = (1 << 25) | 0x123abc;
	expect_modify(qp, &a, mask, 0, "RTR->RTS with sq_psn beyond 24 bits");
	memset(&q, 0, sizeof(q));
	if (tap_ret_errno(ibv_query_qp(qp, &q, IBV_QP_RQ_PSN | IBV_QP_SQ_PSN,
				       &qinit), 0, "ibv_query_qp PSNs"))
		tap_ok(q.rq_psn == 0xabcdef && q.sq_psn == 0x123abc,
		       "PSNs masked to 24 bits (rq 0x%x, sq 0x%x)", q.rq_psn,
		       q.sq_psn);
	ibv_destroy_qp(qp);
}

/*
 * qp_access_flags with bits that only mean something for an MR are
 * accepted (mlx5 ignores them) and query reports the QP's own bits only;
 * bits no verbs header defines stay EINVAL.  FLUSH_GLOBAL (1 << 8) is a
 * QP bit: it lets IBTA 1.5 FLUSHes in (test_placement).
 */
static void test_mr_only_access(void)
{
	static const struct {
		unsigned int bit;
		const char *name;
	} mr_only[] = {
		{ IBV_ACCESS_MW_BIND, "MW_BIND" },
		{ IBV_ACCESS_ZERO_BASED, "ZERO_BASED" },
		{ IBV_ACCESS_ON_DEMAND, "ON_DEMAND" },
		{ IBV_ACCESS_HUGETLB, "HUGETLB" },
		{ 1 << 9, "FLUSH_PERSISTENT" },
		{ IBV_ACCESS_RELAXED_ORDERING, "RELAXED_ORDERING" },
		{ 1 << 29, "OPTIONAL bit 29" },
	};
	static const unsigned int undefined[] = { 1 << 10, 1 << 19, 1 << 30,
						  1u << 31 };
	unsigned int remote = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;
	struct ibv_qp_init_attr qinit;
	struct ibv_qp_attr a, q;
	struct ibv_qp *qp = create(IBV_QPT_RC);
	char what[96];
	size_t i;
	int mask;

	if (!qp) {
		tap_ok(false, "RC QP for the MR-only access bits");
		return;
	}
	for (i = 0; i < sizeof(mr_only) / sizeof(mr_only[0]); i++) {
		qp_attr_init(IBV_QPT_RC, &a, &mask);
		a.qp_access_flags = remote | mr_only[i].bit;
		snprintf(what, sizeof(what), "RESET->INIT access REMOTE_READ|REMOTE_WRITE|%s",
			 mr_only[i].name);
		expect_modify(qp, &a, mask, 0, what);
		memset(&q, 0, sizeof(q));
		ibv_query_qp(qp, &q, IBV_QP_ACCESS_FLAGS, &qinit);
		tap_ok(q.qp_access_flags == remote,
		       "query after %s: access 0x%x (the remote bits only)",
		       mr_only[i].name, q.qp_access_flags);
		a.qp_state = IBV_QPS_RESET;
		ibv_modify_qp(qp, &a, IBV_QP_STATE);
	}
	qp_attr_init(IBV_QPT_RC, &a, &mask);
	a.qp_access_flags = remote | 1 << 8;
	expect_modify(qp, &a, mask, 0, "RESET->INIT access with FLUSH_GLOBAL");
	memset(&q, 0, sizeof(q));
	ibv_query_qp(qp, &q, IBV_QP_ACCESS_FLAGS, &qinit);
	tap_ok(q.qp_access_flags == (remote | 1 << 8),
	       "query: access 0x%x keeps FLUSH_GLOBAL", q.qp_access_flags);
	a.qp_state = IBV_QPS_RESET;
	ibv_modify_qp(qp, &a, IBV_QP_STATE);
	for (i = 0; i < sizeof(undefined) / sizeof(undefined[0]); i++) {
		qp_attr_init(IBV_QPT_RC, &a, &mask);
		a.qp_access_flags = remote | undefined[i];
		snprintf(what, sizeof(what),
			 "RESET->INIT access with undefined bit 0x%x",
			 undefined[i]);
		bad_value(qp, &a, mask, what, true);
	}
	tap_ret_errno(ibv_destroy_qp(qp), 0, "ibv_destroy_qp RC");
}

int main(void)
{
	const char *dev = test_dev_name();

	rxe2 = test_is_rxe2(dev);
	ctx = test_open(dev);
	if (ibv_query_device(ctx, &dattr) || ibv_query_port(ctx, PORT, &pattr))
		tap_bail("ibv_query_device/port");
	gid_index = find_ipv4_gid(ctx, &gid);
	if (gid_index < 0)
		tap_bail("no IPv4 RoCEv2 GID");
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	if (!pd || !cq)
		tap_bail("ibv_alloc_pd/ibv_create_cq");

	test_create(IBV_QPT_RC);
	test_create(IBV_QPT_UC);
	test_create(IBV_QPT_UD);
	test_inline();
	test_rc_states();
	test_uc_states();
	test_ud_states();
	test_psn_mask();
	test_mr_only_access();

	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return tap_done();
}
