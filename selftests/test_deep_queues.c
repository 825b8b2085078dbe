// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: 4 RC loopback pairs, each with 8 WRITEs, then SENDs, then READs of 512 KiB posted before any poll: every completion within a bounded wait, every byte placed
 *
 * Several RC QP pairs on one device (loopback), each with a deep send
 * queue of large messages at once: for RDMA WRITE, SEND and RDMA READ in
 * turn, every QP posts DEPTH messages of MSG bytes, one ibv_post_send
 * each, round robin over the QPs, before anything is polled (as perftest
 * does).  Every completion must arrive within a bounded wait, with the
 * right wr_id, QP and length, and every destination byte must hold the
 * source's pattern.  This is the load that once lost packets on the
 * loopback path (ib_*_bw -q 4 -s 1M reporting 0 MB/s); nothing here
 * measures time.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp.h"
#include "tap.h"
#include "util.h"

#define NQP	4
#define DEPTH	8
#define MSG	(512u * 1024)
#define WAIT_MS	60000

struct side {
	struct dp_qp a, b;	/* a sends (or reads), b is the target */
	uint8_t *src, *dst;
	struct ibv_mr *smr, *dmr;
};

static uint32_t seed_of(int op, int q, int i)
{
	return (uint32_t)(op * 1000 + q * 100 + i + 1);
}

/* wait for n completions on each of the QPs' cq (send or receive) */
static bool collect(struct side *s, bool recv, int op_wc, const char *what)
{
	bool ok = true;
	int q;

	for (q = 0; q < NQP; q++) {
		struct ibv_cq *cq = recv ? s[q].b.rcq : s[q].a.scq;
		struct ibv_qp *qp = recv ? s[q].b.qp : s[q].a.qp;
		struct ibv_wc wc[DEPTH];
		int got, i, bad = 0;

		got = dp_poll(cq, wc, DEPTH, WAIT_MS);
		if (!tap_ret(got, DEPTH, "%s: QP %d: all %d %s completions "
			     "within %d s", what, q, DEPTH,
			     recv ? "receive" : "send", WAIT_MS / 1000)) {
			ok = false;
			continue;
		}
		for (i = 0; i < DEPTH; i++) {
			if (wc[i].status != IBV_WC_SUCCESS ||
			    wc[i].wr_id != (uint64_t)i ||
			    (int)wc[i].opcode != op_wc ||
			    wc[i].qp_num != qp->qp_num ||
			    (recv && wc[i].byte_len != MSG) ||
			    (op_wc == IBV_WC_RDMA_READ &&
			     wc[i].byte_len != MSG)) {
				if (!bad++)
					tap_diag("  wc %d: wr_id %llu status %s "
						 "opcode %d byte_len %u", i,
						 (unsigned long long)wc[i].wr_id,
						 dp_status_str(wc[i].status),
						 wc[i].opcode, wc[i].byte_len);
			}
		}
		ok &= tap_ret(bad, 0, "%s: QP %d: completions in order, "
			      "status, opcode, length", what, q);
	}
	return ok;
}

static void verify(struct side *s, int op, bool into_src, const char *what)
{
	int q, i;

	for (q = 0; q < NQP; q++) {
		long off = -1;

		for (i = 0; i < DEPTH && off < 0; i++) {
			uint8_t *buf = into_src ? s[q].src : s[q].dst;

			off = dp_verify(buf + (size_t)i * MSG, MSG,
					seed_of(op, q, i));
			if (off >= 0)
				tap_diag("  message %d: byte %ld differs", i,
					 off);
		}
		tap_ok(off < 0, "%s: QP %d: %d x %u bytes placed exactly",
		       what, q, DEPTH, MSG);
	}
}

/* op 0: WRITE src -> dst; 1: SEND src -> dst; 2: READ dst -> src */
static void run(struct side *s, int op)
{
	static const char *const names[] = { "WRITE", "SEND", "READ" };
	const char *what = names[op];
	int q, i, post_fail = 0;

	for (q = 0; q < NQP; q++)
		for (i = 0; i < DEPTH; i++) {
			size_t o = (size_t)i * MSG;

			if (op == 2) {
				dp_fill(s[q].dst + o, MSG, seed_of(op, q, i));
				memset(s[q].src + o, 0, MSG);
			} else {
				dp_fill(s[q].src + o, MSG, seed_of(op, q, i));
				memset(s[q].dst + o, 0, MSG);
			}
			if (op == 1 &&
			    dp_post_recv1(s[q].b.qp, i, s[q].dst + o, MSG,
					  s[q].dmr->lkey))
				post_fail++;
		}
	for (i = 0; i < DEPTH; i++)
		for (q = 0; q < NQP; q++) {
			size_t o = (size_t)i * MSG;
			int ret;

			if (op == 2)
				ret = dp_post_send1(s[q].a.qp, i,
						    IBV_WR_RDMA_READ,
						    s[q].src + o, MSG,
						    s[q].smr->lkey,
						    (uintptr_t)s[q].dst + o,
						    s[q].dmr->rkey, 0);
			else
				ret = dp_post_send1(s[q].a.qp, i,
						    op ? IBV_WR_SEND :
							 IBV_WR_RDMA_WRITE,
						    s[q].src + o, MSG,
						    s[q].smr->lkey,
						    (uintptr_t)s[q].dst + o,
						    s[q].dmr->rkey, 0);
			if (ret && !post_fail++)
				tap_diag("  post: %s", strerror(ret));
		}
	tap_ret(post_fail, 0, "%s: %d QPs x %d messages of %u bytes posted "
		"before any poll", what, NQP, DEPTH, MSG);
	if (post_fail)
		return;
	if (!collect(s, false, op == 2 ? IBV_WC_RDMA_READ :
			       op ? IBV_WC_SEND : IBV_WC_RDMA_WRITE, what))
		return;
	if (op == 1 && !collect(s, true, IBV_WC_RECV, what))
		return;
	verify(s, op, op == 2, what);
}

int main(void)
{
	struct ibv_qp_cap cap = { .max_send_wr = DEPTH,
				  .max_recv_wr = DEPTH,
				  .max_send_sge = 1, .max_recv_sge = 1 };
	struct side s[NQP];
	struct dp_conn c;
	struct dp_dev d;
	char stats[256];
	int q, ret, op;

	dp_open(&d, test_dev_name());
	dp_conn_default(&c);
	c.rd_atomic = DEPTH < d.attr.max_qp_rd_atom ? DEPTH :
			d.attr.max_qp_rd_atom;
	c.access |= IBV_ACCESS_LOCAL_WRITE;
	for (q = 0; q < NQP; q++) {
		ret = dp_pair(&d, &d, IBV_QPT_RC, &cap, &c, &s[q].a, &s[q].b);
		if (ret)
			tap_bail("QP pair %d: %s", q, strerror(ret));
		s[q].src = dp_alloc((size_t)DEPTH * MSG);
		s[q].dst = dp_alloc((size_t)DEPTH * MSG);
		s[q].smr = dp_reg(d.pd, s[q].src, (size_t)DEPTH * MSG,
				  DP_ACCESS_ALL);
		s[q].dmr = dp_reg(d.pd, s[q].dst, (size_t)DEPTH * MSG,
				  DP_ACCESS_ALL);
	}
	for (op = 0; op < 3; op++)
		run(s, op);
	if (d.rxe2) {
		snprintf(stats, sizeof(stats),
			 "rdma statistic show link %s/1 | sed 's/^/# /'",
			 d.name);
		dp_sh("%s", stats);
	}
	for (q = 0; q < NQP; q++) {
		dp_qp_free(&s[q].a);
		dp_qp_free(&s[q].b);
		ibv_dereg_mr(s[q].smr);
		ibv_dereg_mr(s[q].dmr);
		free(s[q].src);
		free(s[q].dst);
	}
	dp_close(&d);
	return tap_done();
}
