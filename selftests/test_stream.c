// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: streaming SQs (a poster that does not wait hands its SQ to a work item on another CPU, posts ring no doorbell while the ring is live): WRITE, SEND, READ and two posting threads, every completion in order and every byte; a ping-pong stays inline
 *
 * An RC loopback pair.  The sender posts N small messages, one
 * ibv_post_send each, all signaled, and polls nothing until the last is
 * posted: after 16 such doorbells the device hands the SQ to a work item
 * on another CPU (sq_stream_handoffs), and posts that find the ring live
 * ring no doorbell at all.  Whatever ran them, every completion must come
 * in posting order with its wr_id, opcode and status, and every message
 * must land byte for byte: for WRITE, SEND (receives posted first) and
 * READ, and with two threads posting into the one SQ at once (each
 * thread's WQEs in its own order, none lost: a doorbell skipped in
 * error would leave WQEs that never complete).  Then a SEND ping-pong
 * between the two QPs, each side waiting for the other: it must never
 * be handed off (sq_stream_handoffs unchanged), since every doorbell
 * follows a request from the peer or a poll of the poster's CQ.
 * Nothing here measures time.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp.h"
#include "tap.h"
#include "util.h"

#define N	200		/* messages per stream; CQs hold 256 */
#define MSG	64
#define PINGS	40
#define WAIT_MS	60000
#define CTR	"sq_stream_handoffs"

static struct dp_dev dev;
static struct dp_qp a, b;
static uint8_t *src, *dst;
static struct ibv_mr *smr, *dmr;

static long handoffs(void)
{
	return dev.rxe2 ? dp_hw_counter(dev.name, CTR) : 0;
}

static uint32_t seed_of(int op, int i)
{
	return (uint32_t)(op * 1000 + i + 1);
}

static int post(int op, uint64_t wr_id, size_t o)
{
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_RDMA_WRITE, IBV_WR_SEND, IBV_WR_RDMA_READ
	};

	/* a READ brings dst's bytes into src; the others carry src's */
	return dp_post_send1(a.qp, wr_id, ops[op], src + o, MSG, smr->lkey,
			     (uintptr_t)dst + o, dmr->rkey, 0);
}

/* n completions on cq, the kth with wr_id want[k], opcode and success */
static bool collect(struct ibv_cq *cq, const uint64_t *want, int n,
		    int opcode, const char *what)
{
	static struct ibv_wc wc[N];
	int got, k, bad = 0;

	got = dp_poll(cq, wc, n, WAIT_MS);
	if (!tap_ret(got, n, "%s: all %d completions within %d s", what, n,
		     WAIT_MS / 1000))
		return false;
	for (k = 0; k < n; k++) {
		if (wc[k].status == IBV_WC_SUCCESS &&
		    wc[k].wr_id == want[k] && (int)wc[k].opcode == opcode)
			continue;
		if (!bad++)
			tap_diag("  wc %d: wr_id %llu (want %llu) status %s "
				 "opcode %d", k,
				 (unsigned long long)wc[k].wr_id,
				 (unsigned long long)want[k],
				 dp_status_str(wc[k].status), wc[k].opcode);
	}
	return tap_ret(bad, 0, "%s: completions in posting order, success",
		       what);
}

static void verify(int op, const char *what)
{
	uint8_t *buf = op == 2 ? src : dst;
	long off = -1;
	int i;

	for (i = 0; i < N && off < 0; i++) {
		off = dp_verify(buf + (size_t)i * MSG, MSG, seed_of(op, i));
		if (off >= 0)
			tap_diag("  message %d: byte %ld differs", i, off);
	}
	tap_ok(off < 0, "%s: %d x %d bytes placed exactly", what, N, MSG);
}

static void fill(int op)
{
	int i;

	for (i = 0; i < N; i++) {
		size_t o = (size_t)i * MSG;

		dp_fill((op == 2 ? dst : src) + o, MSG, seed_of(op, i));
		memset((op == 2 ? src : dst) + o, 0, MSG);
	}
}

/* op 0: WRITE src -> dst; 1: SEND src -> dst; 2: READ dst -> src */
static void stream(int op)
{
	static const char *const names[] = { "WRITE", "SEND", "READ" };
	static const int wc_ops[] = {
		IBV_WC_RDMA_WRITE, IBV_WC_SEND, IBV_WC_RDMA_READ
	};
	const char *what = names[op];
	uint64_t want[N];
	int i, fail = 0;
	long h0 = handoffs();

	fill(op);
	for (i = 0; i < N && op == 1; i++)
		fail += !!dp_post_recv1(b.qp, i, dst + (size_t)i * MSG, MSG,
					dmr->lkey);
	for (i = 0; i < N; i++) {
		want[i] = i;
		fail += !!post(op, i, (size_t)i * MSG);
	}
	if (!tap_ret(fail, 0, "%s: %d messages posted one by one before "
		     "any poll", what, N))
		return;
	if (!collect(a.scq, want, N, wc_ops[op], what))
		return;
	if (op == 1 && !collect(b.rcq, want, N, IBV_WC_RECV, "SEND receives"))
		return;
	verify(op, what);
	if (dev.rxe2)
		tap_ok(handoffs() > h0, "%s: the SQ was handed to a work item "
		       "(%s %ld -> %ld)", what, CTR, h0, handoffs());
}

struct poster {
	int t;
	int fail;
};

/* thread t posts the WRITEs of the slots t, t + 2, t + 4, ... */
static void *post_half(void *arg)
{
	struct poster *p = arg;
	int i;

	for (i = p->t; i < N; i += 2)
		p->fail += !!post(0, i, (size_t)i * MSG);
	return NULL;
}

static void two_threads(void)
{
	static struct ibv_wc wc[N];
	struct poster p[2] = { { .t = 0 }, { .t = 1 } };
	pthread_t th[2];
	int t, k, got, bad = 0, next[2] = { 0, 1 };

	fill(0);
	for (t = 0; t < 2; t++)
		if (pthread_create(&th[t], NULL, post_half, &p[t]))
			tap_bail("pthread_create: %s", strerror(errno));
	for (t = 0; t < 2; t++)
		pthread_join(th[t], NULL);
	if (!tap_ret(p[0].fail + p[1].fail, 0, "two threads: %d WRITEs "
		     "posted into one SQ at once", N))
		return;
	got = dp_poll(a.scq, wc, N, WAIT_MS);
	if (!tap_ret(got, N, "two threads: all %d completions within %d s", N,
		     WAIT_MS / 1000))
		return;
	/* each thread's in its own order; together each wr_id once */
	for (k = 0; k < N; k++) {
		t = wc[k].wr_id & 1;
		if (wc[k].status == IBV_WC_SUCCESS &&
		    wc[k].opcode == IBV_WC_RDMA_WRITE &&
		    wc[k].wr_id == (uint64_t)next[t]) {
			next[t] += 2;
			continue;
		}
		if (!bad++)
			tap_diag("  wc %d: wr_id %llu status %s, next %d/%d", k,
				 (unsigned long long)wc[k].wr_id,
				 dp_status_str(wc[k].status), next[0],
				 next[1]);
	}
	tap_ret(bad, 0, "two threads: each thread's completions in its "
		"order, none lost or repeated");
	verify(0, "two threads");
}

/* one SEND from q to its peer, waited for on both sides */
static bool ping(struct dp_qp *q, struct dp_qp *peer, int i, uint8_t *from,
		 uint8_t *to, uint32_t skey, uint32_t pkey)
{
	struct ibv_wc wc;

	if (dp_post_recv1(peer->qp, i, to, MSG, pkey) ||
	    dp_post_send1(q->qp, i, IBV_WR_SEND, from, MSG, skey, 0, 0, 0))
		return false;
	return dp_poll(q->scq, &wc, 1, WAIT_MS) == 1 &&
	       wc.status == IBV_WC_SUCCESS &&
	       dp_poll(peer->rcq, &wc, 1, WAIT_MS) == 1 &&
	       wc.status == IBV_WC_SUCCESS && wc.byte_len == MSG &&
	       wc.wr_id == (uint64_t)i;
}

static void ping_pong(void)
{
	long h0 = handoffs();
	int i, bad = -1;

	for (i = 0; i < PINGS && bad < 0; i++) {
		dp_fill(src, MSG, seed_of(3, i));
		dp_fill(dst + MSG, MSG, seed_of(4, i));
		if (!ping(&a, &b, i, src, dst, smr->lkey, dmr->lkey) ||
		    dp_verify(dst, MSG, seed_of(3, i)) >= 0 ||
		    !ping(&b, &a, i, dst + MSG, src + MSG, dmr->lkey,
			  smr->lkey) ||
		    dp_verify(src + MSG, MSG, seed_of(4, i)) >= 0)
			bad = i;
	}
	tap_ret(bad, -1, "ping-pong: %d round trips, every byte", PINGS);
	if (dev.rxe2)
		tap_ret(handoffs() - h0, 0, "ping-pong: never handed off (%s)",
			CTR);
}

int main(void)
{
	struct ibv_qp_cap cap = { .max_send_wr = N, .max_recv_wr = N,
				  .max_send_sge = 1, .max_recv_sge = 1 };
	struct dp_conn c;
	int ret, op;

	dp_open(&dev, test_dev_name());
	dp_conn_default(&c);
	c.rd_atomic = dev.attr.max_qp_rd_atom < 16 ?
		      dev.attr.max_qp_rd_atom : 16;
	ret = dp_pair(&dev, &dev, IBV_QPT_RC, &cap, &c, &a, &b);
	if (ret)
		tap_bail("QP pair: %s", strerror(ret));
	src = dp_alloc((size_t)N * MSG);
	dst = dp_alloc((size_t)N * MSG);
	smr = dp_reg(dev.pd, src, (size_t)N * MSG, DP_ACCESS_ALL);
	dmr = dp_reg(dev.pd, dst, (size_t)N * MSG, DP_ACCESS_ALL);
	for (op = 0; op < 3; op++)
		stream(op);
	two_threads();
	ping_pong();
	dp_qp_free(&a);
	dp_qp_free(&b);
	ibv_dereg_mr(smr);
	ibv_dereg_mr(dmr);
	free(src);
	free(dst);
	dp_close(&dev);
	return tap_done();
}
