// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: completion channels on RC traffic: one event per arm, none unarmed, solicited-only arming, ibv_ack_cq_events before destroy
 *
 * Completion events through a completion channel, driven by real traffic
 * on an RC loopback pair: an armed CQ raises exactly one event per arm
 * (poll() on the channel fd with a deadline, then ibv_get_cq_event names
 * the CQ and its cq_context); an unarmed CQ raises none; a CQ armed with
 * solicited_only ignores unsolicited receives and fires for a SEND with
 * IBV_SEND_SOLICITED; ibv_ack_cq_events lets the CQ be destroyed.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp.h"
#include "tap.h"
#include "util.h"

static struct dp_dev dev;
static struct ibv_comp_channel *ch;
static struct ibv_cq *scq, *rcq;
static struct ibv_qp *qa, *qb;
static uint8_t *buf;
static struct ibv_mr *mr;
static unsigned int events;
static int ctx_tag_s, ctx_tag_r;

/* An event within ms: returns its CQ, or NULL. */
static struct ibv_cq *event(int ms)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct ibv_cq *cq = NULL;
	void *cqctx = NULL;

	if (poll(&pfd, 1, ms) != 1)
		return NULL;
	if (ibv_get_cq_event(ch, &cq, &cqctx))
		return NULL;
	events++;
	ibv_ack_cq_events(cq, 1);
	if ((cq == scq && cqctx != &ctx_tag_s) ||
	    (cq == rcq && cqctx != &ctx_tag_r))
		tap_diag("  cq_context %p does not belong to cq %p", cqctx,
			 (void *)cq);
	return cq;
}

static void send_one(uint64_t wid, unsigned int flags, bool recv_first)
{
	int r = 0;

	if (recv_first)
		r = dp_post_recv1(qb, wid, buf + 4096, 256, mr->lkey);
	if (!r)
		r = dp_post_send1(qa, wid, IBV_WR_SEND, buf, 32, mr->lkey, 0,
				  0, flags);
	if (r)
		tap_diag("  post: %s", strerror(r));
}

static int drain(struct ibv_cq *cq, int want)
{
	struct ibv_wc wc[8];

	return dp_poll(cq, wc, want, DP_WAIT_MS);
}

int main(void)
{
	struct ibv_qp_cap cap = dp_small_cap;
	struct ibv_cq *cq;
	struct dp_conn c;
	struct ibv_wc wc;
	int fl;

	dp_open(&dev, test_dev_name());
	ch = ibv_create_comp_channel(dev.ctx);
	if (!ch)
		tap_bail("ibv_create_comp_channel: %s", strerror(errno));
	fl = fcntl(ch->fd, F_GETFL);
	fcntl(ch->fd, F_SETFL, fl | O_NONBLOCK);
	scq = ibv_create_cq(dev.ctx, 64, &ctx_tag_s, ch, 0);
	rcq = ibv_create_cq(dev.ctx, 64, &ctx_tag_r, ch, 0);
	if (!scq || !rcq)
		tap_bail("ibv_create_cq: %s", strerror(errno));
	qa = dp_create_qp(&dev, IBV_QPT_RC, scq, scq, NULL, &cap);
	qb = dp_create_qp(&dev, IBV_QPT_RC, rcq, rcq, NULL, &cap);
	buf = dp_alloc(8192);
	mr = dp_reg(dev.pd, buf, 8192, IBV_ACCESS_LOCAL_WRITE);
	dp_conn_default(&c);
	if (!qa || !qb || dp_connect(qa, &dev, &dev.gid, qb->qp_num, &c) ||
	    dp_connect(qb, &dev, &dev.gid, qa->qp_num, &c))
		tap_bail("RC pair: %s", strerror(errno));

	/* 1. not armed: no event, completions still arrive */
	send_one(1, 0, true);
	tap_ret(drain(scq, 1), 1, "unarmed: send completion polled");
	tap_ret(drain(rcq, 1), 1, "unarmed: receive completion polled");
	tap_ok(event(200) == NULL, "unarmed: no completion event");

	/* 2. armed for any completion: one event each, then none */
	tap_ret_errno(ibv_req_notify_cq(scq, 0), 0, "arm the send CQ");
	tap_ret_errno(ibv_req_notify_cq(rcq, 0), 0, "arm the receive CQ");
	send_one(2, 0, true);
	cq = event(DP_WAIT_MS);
	tap_ok(cq == scq || cq == rcq, "armed: first event within %d ms",
	       DP_WAIT_MS);
	cq = event(DP_WAIT_MS);
	tap_ok(cq == scq || cq == rcq, "armed: second event within %d ms",
	       DP_WAIT_MS);
	tap_ok(event(200) == NULL, "armed once: exactly one event per CQ");
	tap_ret(drain(scq, 1), 1, "armed: send completion polled");
	tap_ret(drain(rcq, 1), 1, "armed: receive completion polled");
	send_one(3, 0, true);
	tap_ret(drain(rcq, 1), 1, "after the event: completion polled");
	tap_ret(drain(scq, 1), 1, "after the event: send completion polled");
	tap_ok(event(200) == NULL, "not re-armed: no event");

	/* 3. solicited only */
	tap_ret_errno(ibv_req_notify_cq(rcq, 1), 0,
		      "arm the receive CQ for solicited completions");
	send_one(4, 0, true);
	tap_ret(drain(rcq, 1), 1, "solicited-only: unsolicited receive polled");
	tap_ret(drain(scq, 1), 1, "solicited-only: its send completion");
	tap_ok(event(200) == NULL, "solicited-only: no event for it");
	send_one(5, IBV_SEND_SOLICITED, true);
	cq = event(DP_WAIT_MS);
	tap_ok(cq == rcq, "solicited-only: event on the receive CQ for a SOLICITED SEND");
	tap_ret(drain(rcq, 1), 1, "solicited-only: solicited receive polled");
	tap_ret(drain(scq, 1), 1, "solicited-only: its send completion");

	/* 4. re-armed: the next completion raises an event again */
	tap_ret_errno(ibv_req_notify_cq(scq, 0), 0, "re-arm the send CQ");
	send_one(6, 0, true);
	cq = event(DP_WAIT_MS);
	tap_ok(cq == scq, "re-armed: event on the send CQ");
	tap_ret(drain(scq, 1), 1, "re-armed: send completion polled");
	tap_ret(drain(rcq, 1), 1, "re-armed: receive completion polled");
	tap_ok(dp_poll_none(rcq, &wc, 10) == 0 && dp_poll_none(scq, &wc, 10) == 0,
	       "all completions consumed");
	tap_diag("%u events", events);

	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	tap_ret_errno(ibv_destroy_cq(scq), 0, "destroy the send CQ (events acked)");
	tap_ret_errno(ibv_destroy_cq(rcq), 0, "destroy the receive CQ");
	tap_ret_errno(ibv_destroy_comp_channel(ch), 0, "destroy the channel");
	ibv_dereg_mr(mr);
	dp_close(&dev);
	return tap_done();
}
