// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: up to 1,000 RC QPs (capped by max_qp) on two shared CQs, one SEND each posted before any poll: every completion matched to its QP, its data checked
 *
 * Many RC QPs with traffic at once: up to 1,000 QPs (fewer when the
 * device's max_qp is lower, e.g. the small limits selftests/run loads
 * rdma_rxe2 with), paired 2k <-> 2k+1 over the IPv4 RoCEv2 GID, sharing
 * one send and one receive CQ.  Every QP posts one receive and one small
 * SEND (16..47 bytes, its own pattern) before anything is polled; every
 * completion is then matched to its QP (wr_id, qp_num), byte_len and data
 * checked.  The phases are timed so a slow path shows.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp.h"
#include "tap.h"
#include "util.h"

#define WANT 1000
#define SLOT 64

static uint32_t msg_len(int i)
{
	return 16 + (uint32_t)i % 32;
}

int main(void)
{
	struct ibv_qp_cap cap = { .max_send_wr = 1, .max_recv_wr = 1,
				  .max_send_sge = 1, .max_recv_sge = 1 };
	struct ibv_qp **qp;
	struct ibv_cq *scq, *rcq;
	struct ibv_wc *wc;
	struct ibv_mr *smr, *rmr;
	struct dp_dev d;
	struct dp_conn c;
	uint8_t *sbuf, *rbuf, *seen;
	int n, i, got, bad, conn_fail = 0, post_fail = 0;
	int create_fail = 0, destroy_fail = 0;
	int cqe;
	uint64_t t0, t;

	dp_open(&d, test_dev_name());
	n = WANT;
	if (d.attr.max_qp - 16 < n)
		n = (d.attr.max_qp - 16) & ~1;
	cqe = n < d.attr.max_cqe ? n : d.attr.max_cqe;
	if (n < WANT)
		tap_diag("device max_qp %d: %d QPs instead of %d%s",
			 d.attr.max_qp, n, WANT,
			 d.rxe2 ? " (RXE2_KO_PARAMS with max_qp=1100 runs all)" :
				  "");
	if (n < 2 || cqe < n) {
		tap_skip("not enough QPs (%d) or CQ entries (%d)", n, cqe);
		return tap_done();
	}
	qp = calloc(n, sizeof(*qp));
	wc = calloc(n, sizeof(*wc));
	seen = calloc(n, 1);
	sbuf = dp_alloc((size_t)n * SLOT);
	rbuf = dp_alloc((size_t)n * SLOT);
	smr = dp_reg(d.pd, sbuf, (size_t)n * SLOT, IBV_ACCESS_LOCAL_WRITE);
	rmr = dp_reg(d.pd, rbuf, (size_t)n * SLOT, IBV_ACCESS_LOCAL_WRITE);
	scq = ibv_create_cq(d.ctx, cqe, NULL, NULL, 0);
	rcq = ibv_create_cq(d.ctx, cqe, NULL, NULL, 0);
	if (!qp || !wc || !seen || !scq || !rcq)
		tap_bail("setup: %s", strerror(errno));

	t0 = t = dp_now_ms();
	for (i = 0; i < n; i++) {
		qp[i] = dp_create_qp(&d, IBV_QPT_RC, scq, rcq, NULL, &cap);
		if (!qp[i] && !create_fail++)
			tap_diag("  QP %d: %s", i, strerror(errno));
	}
	t = dp_now_ms() - t;
	tap_ret(create_fail, 0, "%d RC QPs created (%llu ms)", n,
		(unsigned long long)t);
	t = dp_now_ms();
	if (create_fail)
		goto out;

	t = dp_now_ms();
	dp_conn_default(&c);
	for (i = 0; i < n; i++) {
		int e = dp_connect(qp[i], &d, &d.gid, qp[i ^ 1]->qp_num, &c);

		if (e && !conn_fail++)
			tap_diag("  QP %d: %s", i, strerror(e));
	}
	tap_ret(conn_fail, 0, "%d QPs connected in pairs (%llu ms)", n,
		(unsigned long long)(dp_now_ms() - t));
	if (conn_fail)
		goto out;

	t = dp_now_ms();
	memset(rbuf, 0xa5, (size_t)n * SLOT);
	for (i = 0; i < n; i++) {
		dp_fill(sbuf + (size_t)i * SLOT, msg_len(i), i);
		if (dp_post_recv1(qp[i], i, rbuf + (size_t)i * SLOT, SLOT,
				  rmr->lkey))
			post_fail++;
	}
	for (i = 0; i < n; i++)
		if (dp_post_send1(qp[i], 0x100000 + i, IBV_WR_SEND,
				  sbuf + (size_t)i * SLOT, msg_len(i),
				  smr->lkey, 0, 0, 0))
			post_fail++;
	tap_ret(post_fail, 0, "%d receives and %d SENDs posted", n, n);

	got = dp_poll(scq, wc, n, 60000);
	bad = 0;
	for (i = 0; i < got; i++) {
		int k = (int)(wc[i].wr_id - 0x100000);

		if (wc[i].status != IBV_WC_SUCCESS || k < 0 || k >= n ||
		    wc[i].opcode != IBV_WC_SEND ||
		    wc[i].qp_num != qp[k]->qp_num || (seen[k] & 1)) {
			if (!bad++)
				tap_diag("  send wc wr_id %#llx status %s",
					 (unsigned long long)wc[i].wr_id,
					 dp_status_str(wc[i].status));
		} else {
			seen[k] |= 1;
		}
	}
	tap_ok(got == n && !bad, "%d SEND completions, one per QP, all SUCCESS (%d bad)",
	       got, bad);

	got = dp_poll(rcq, wc, n, 60000);
	bad = 0;
	for (i = 0; i < got; i++) {
		int k = (int)wc[i].wr_id;

		if (wc[i].status != IBV_WC_SUCCESS || k < 0 || k >= n ||
		    wc[i].opcode != IBV_WC_RECV ||
		    wc[i].qp_num != qp[k]->qp_num ||
		    wc[i].byte_len != msg_len(k ^ 1) || (seen[k] & 2) ||
		    dp_verify(rbuf + (size_t)k * SLOT, msg_len(k ^ 1),
			      k ^ 1) >= 0 ||
		    dp_verify_byte(rbuf + (size_t)k * SLOT + msg_len(k ^ 1),
				   SLOT - msg_len(k ^ 1), 0xa5) >= 0) {
			if (!bad++)
				tap_diag("  recv wc wr_id %#llx status %s byte_len %u",
					 (unsigned long long)wc[i].wr_id,
					 dp_status_str(wc[i].status),
					 wc[i].byte_len);
		} else {
			seen[k] |= 2;
		}
	}
	tap_ok(got == n && !bad,
	       "%d receive completions: right QP, byte_len, data from its peer (%d bad)",
	       got, bad);
	/* speed is make bench's business; this only reports it */
	tap_diag("traffic took %llu ms", (unsigned long long)(dp_now_ms() - t));
	t = dp_now_ms();
out:
	for (i = 0; i < n; i++)
		if (qp[i] && ibv_destroy_qp(qp[i]) && !destroy_fail++)
			tap_diag("  destroy QP %d: %s", i, strerror(errno));
	t = dp_now_ms() - t;
	tap_ret(destroy_fail, 0, "%d QPs destroyed (%llu ms)", n,
		(unsigned long long)t);
	tap_diag("total %llu ms", (unsigned long long)(dp_now_ms() - t0));
	ibv_destroy_cq(scq);
	ibv_destroy_cq(rcq);
	ibv_dereg_mr(smr);
	ibv_dereg_mr(rmr);
	dp_close(&d);
	return tap_done();
}
