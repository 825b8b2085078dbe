// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: inline-receive (rxe2dv_create_qp): sizes and attribute rules, SENDs of 0..65 B on RC/UC/UD/SRQ in the CQE (buffer untouched until the poll), READ and atomic results, over the wire, its counter
 *
 * Inline-receive (rxe2dv_create_qp(3)): the device reports 64 bytes;
 * a QP asking more is EINVAL, a smaller size is rounded up and the size
 * applied comes back; the rxe2dv_qp_init_attr rules (inlen, comp_mask,
 * reserved).  SENDs of 0..64 bytes and 65 on RC, UC, UD (the 40-byte GRH
 * counts) and RC on an SRQ, scattered over three SGEs with gaps: a
 * message that fits completes with RXE2DV_WC_INLINE_RECV, and until the
 * completion is polled the receive buffer still holds its canary (the
 * kernel never wrote it; the completion event is waited for first);
 * after the poll the data is byte-exact, gaps and the bytes past
 * byte_len still hold the canary.  Larger messages, receive WQEs that
 * need more than 8 SGEs and QPs that did not ask take the normal path.
 * Requester: READ data (1..65 bytes) and atomic results land in the send
 * CQE of a QP with sq_sig_all; without sq_sig_all the normal path.  The
 * same over the network from/to the in-tree rxe0 (when present).  The
 * port counter inline_recv_completions moves by exactly the number of
 * inline completions seen.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <infiniband/rxe2dv.h>

#include "dp.h"
#include "tap.h"
#include "util.h"

#define MAXINL 64
#define GRH 40
#define BUFLEN 4096
#define CANARY 0xa5
#define NOINL UINT32_MAX	/* an ordinary QP */

static struct dp_dev dev, ref;
static bool have_ref;
static long inline_seen;	/* completions flagged inline */
static long inline_want;	/* completions that had to be inline */

/* ------------------------------------------------------------------ */

static long read_counter(const char *name)
{
	char cmd[128], line[4096], *p;
	long v = -1;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "rdma statistic show link %s/1", name);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		p = strstr(line, "inline_recv_completions ");
		if (p)
			v = strtol(p + strlen("inline_recv_completions "),
				   NULL, 10);
	}
	pclose(f);
	return v;
}

/* A QP; inl != NOINL makes it through rxe2dv_create_qp. */
static struct ibv_qp *mk_qp(struct dp_dev *d, enum ibv_qp_type t,
			    struct ibv_cq *scq, struct ibv_cq *rcq,
			    struct ibv_srq *srq, uint32_t inl, int sig_all)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = t,
		.send_cq = scq,
		.recv_cq = rcq,
		.srq = srq,
		.sq_sig_all = sig_all,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 3, .max_recv_sge = srq ? 0 : 10 },
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = d->pd,
	};
	struct rxe2dv_qp_init_attr dv = {
		.comp_mask = RXE2DV_QP_INIT_ATTR_MASK_INLINE_RECV,
		.max_inl_recv = inl,
	};
	struct ibv_qp *qp;

	if (inl == NOINL)
		qp = ibv_create_qp_ex(d->ctx, &a);
	else
		qp = rxe2dv_create_qp(d->ctx, &a, &dv, sizeof(dv));
	if (!qp)
		tap_bail("create QP on %s (inl %u): %s", d->name, inl,
			 strerror(errno));
	if (inl != NOINL && dv.max_inl_recv != MAXINL)
		tap_bail("applied inline size %u, want %u", dv.max_inl_recv,
			 MAXINL);
	return qp;
}

static struct ibv_cq *mk_cq(struct dp_dev *d, struct ibv_comp_channel *ch)
{
	struct ibv_cq *cq = ibv_create_cq(d->ctx, 64, NULL, ch, 0);

	if (!cq)
		tap_bail("ibv_create_cq: %s", strerror(errno));
	return cq;
}

static struct ibv_comp_channel *mk_channel(struct dp_dev *d)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(d->ctx);

	if (!ch)
		tap_bail("ibv_create_comp_channel: %s", strerror(errno));
	if (fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK))
		tap_bail("O_NONBLOCK: %s", strerror(errno));
	return ch;
}

/* Waits for the armed CQ's event (the CQE is there, not yet polled). */
static bool wait_event(struct ibv_comp_channel *ch)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	uint64_t end = dp_now_ms() + DP_WAIT_MS;
	struct ibv_cq *cq;
	void *ctx;

	for (;;) {
		int left = (int)(end - dp_now_ms());

		if (!ibv_get_cq_event(ch, &cq, &ctx)) {
			ibv_ack_cq_events(cq, 1);
			return true;
		}
		if (errno != EAGAIN || left <= 0)
			return false;
		poll(&pfd, 1, left);
	}
}

/* ------------------------------------------------------------------ */
/* A receive scattered over SGEs of a canary-filled buffer             */
/* ------------------------------------------------------------------ */

struct layout {
	int nsge;
	uint32_t len[10];
	uint32_t off[10];
};

/* SGEs with 16-byte gaps, the last one long enough for anything */
static const struct layout three = { 3, { 7, 13, 300 }, { 0, 23, 52 } };
static const struct layout three_ud = { 3, { 24, 30, 300 },
					{ 0, 40, 86 } };

static void layout_ones(struct layout *l, int n)
{
	int i;

	l->nsge = n;
	for (i = 0; i < n; i++) {
		l->len[i] = 1;
		l->off[i] = i * 3;
	}
	l->len[n - 1] = 64;
}

static void fill_sges(const struct layout *l, uint8_t *buf, uint32_t lkey,
		      struct ibv_sge *sge)
{
	int i;

	for (i = 0; i < l->nsge; i++) {
		sge[i].addr = (uintptr_t)buf + l->off[i];
		sge[i].length = l->len[i];
		sge[i].lkey = lkey;
	}
}

/*
 * The message as the SGEs hold it: byte i of the gathered view must be
 * want[i] (skip: the first skip bytes are not compared), the rest of each
 * SGE and everything outside them the canary.  Returns a reason or NULL.
 */
static const char *check_scatter(const struct layout *l, const uint8_t *buf,
				 const uint8_t *want, uint32_t len,
				 uint32_t skip)
{
	static uint8_t mask[BUFLEN];
	uint32_t pos = 0, i;
	int s;

	memset(mask, 0, sizeof(mask));
	for (s = 0; s < l->nsge; s++) {
		for (i = 0; i < l->len[s]; i++, pos++) {
			uint32_t at = l->off[s] + i;

			if (pos < len) {
				mask[at] = 1;
				if (pos >= skip && buf[at] != want[pos - skip])
					return "data differs";
			}
		}
	}
	for (i = 0; i < BUFLEN; i++)
		if (!mask[i] && buf[i] != CANARY)
			return "byte outside the message changed";
	return NULL;
}

struct rx_pair {
	const char *name;
	struct dp_dev *sd, *rd;		/* sender's, receiver's device */
	struct ibv_qp *sqp, *rqp;
	struct ibv_cq *scq, *rcq;
	struct ibv_cq *s_rcq, *r_scq;	/* the other CQ of each QP */
	bool own_rcq;
	struct ibv_comp_channel *ch;	/* rcq's */
	struct ibv_srq *srq;		/* receives from it, else rqp's RQ */
	struct ibv_ah *ah;		/* UD */
	uint8_t *sbuf, *rbuf;
	struct ibv_mr *smr, *rmr;
	bool inl;			/* the receiver asked for it */
	int fails;
	char first[256];
};

static void rx_fail(struct rx_pair *p, uint32_t size, const char *why)
{
	if (!p->fails++)
		snprintf(p->first, sizeof(p->first), "%u bytes: %s", size,
			 why);
}

static int post_send(struct rx_pair *p, uint32_t size)
{
	struct ibv_sge sge = { .addr = (uintptr_t)p->sbuf, .length = size,
			       .lkey = p->smr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = size,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
		.sg_list = &sge,
		.num_sge = 1,
	}, *bad;

	if (p->ah) {
		wr.wr.ud.ah = p->ah;
		wr.wr.ud.remote_qpn = p->rqp->qp_num;
		wr.wr.ud.remote_qkey = 0x11111111;
	}
	return ibv_post_send(p->sqp, &wr, &bad);
}

/* One SEND of size bytes into a receive laid out as l; want_inl decided */
static void rx_one(struct rx_pair *p, uint32_t size, const struct layout *l)
{
	uint32_t skip = p->ah ? GRH : 0, total = size + skip;
	bool want_inl = p->inl && total <= MAXINL;
	struct ibv_sge sge[10];
	struct ibv_recv_wr rwr = { .wr_id = 1000 + size, .sg_list = sge,
				   .num_sge = l->nsge }, *rbad;
	struct ibv_wc wc;
	const char *why;
	int i, ret;

	if (l->nsge > 8 && want_inl) {
		/* more than 8 non-empty SGEs would be needed: normal path */
		uint32_t cov = 0;
		int n = 0;

		for (i = 0; i < l->nsge && cov < total; i++, n++)
			cov += l->len[i];
		if (n > 8)
			want_inl = false;
	}
	memset(p->rbuf, CANARY, BUFLEN);
	dp_fill(p->sbuf, size, size * 7 + 1);
	fill_sges(l, p->rbuf, p->rmr->lkey, sge);
	ret = p->srq ? ibv_post_srq_recv(p->srq, &rwr, &rbad) :
		       ibv_post_recv(p->rqp, &rwr, &rbad);
	if (ret) {
		rx_fail(p, size, "post_recv failed");
		return;
	}
	if (ibv_req_notify_cq(p->rcq, 0)) {
		rx_fail(p, size, "req_notify failed");
		return;
	}
	if (post_send(p, size)) {
		rx_fail(p, size, "post_send failed");
		return;
	}
	if (dp_poll(p->scq, &wc, 1, DP_WAIT_MS) != 1 ||
	    wc.status != IBV_WC_SUCCESS) {
		rx_fail(p, size, "no good send completion");
		return;
	}
	if (!wait_event(p->ch)) {
		rx_fail(p, size, "no receive completion event");
		return;
	}
	if (want_inl && dp_verify_byte(p->rbuf, BUFLEN, CANARY) >= 0)
		rx_fail(p, size, "receive buffer written before the poll");
	if (dp_poll(p->rcq, &wc, 1, DP_WAIT_MS) != 1) {
		rx_fail(p, size, "receive completion missing");
		return;
	}
	if (wc.status != IBV_WC_SUCCESS || wc.wr_id != 1000 + size ||
	    wc.opcode != IBV_WC_RECV || wc.byte_len != total ||
	    wc.qp_num != p->rqp->qp_num) {
		char s[128];

		snprintf(s, sizeof(s), "wc status %s wr_id %llu byte_len %u",
			 dp_status_str(wc.status),
			 (unsigned long long)wc.wr_id, wc.byte_len);
		rx_fail(p, size, s);
		return;
	}
	if (!!(wc.wc_flags & RXE2DV_WC_INLINE_RECV) != want_inl)
		rx_fail(p, size, want_inl ? "not flagged inline" :
					    "flagged inline");
	if (wc.wc_flags & RXE2DV_WC_INLINE_RECV)
		inline_seen++;
	if (want_inl)
		inline_want++;
	if ((wc.wc_flags & IBV_WC_GRH) != (p->ah ? IBV_WC_GRH : 0))
		rx_fail(p, size, "GRH flag");
	why = check_scatter(l, p->rbuf, p->sbuf, total, skip);
	if (why)
		rx_fail(p, size, why);
	/* UD: bytes 0..19 of the GRH area are zero for IPv4 */
	if (p->ah && size + GRH <= MAXINL) {
		uint8_t g[20];
		uint32_t pos = 0;
		int s;

		for (s = 0; s < l->nsge && pos < 20; s++)
			for (i = 0; i < (int)l->len[s] && pos < 20; i++)
				g[pos++] = p->rbuf[l->off[s] + i];
		if (dp_verify_byte(g, 20, 0) >= 0)
			rx_fail(p, size, "GRH bytes 0..19 not zero");
	}
}

static void rx_setup(struct rx_pair *p, const char *name, struct dp_dev *sd,
		     struct dp_dev *rd, enum ibv_qp_type t,
		     struct ibv_srq *srq, struct ibv_cq *shared_rcq,
		     struct ibv_comp_channel *shared_ch, bool inl)
{
	struct dp_conn c;
	int r;

	memset(p, 0, sizeof(*p));
	p->name = name;
	p->sd = sd;
	p->rd = rd;
	p->inl = inl;
	p->srq = srq;
	p->own_rcq = !shared_rcq;
	p->ch = shared_ch ? shared_ch : mk_channel(rd);
	p->rcq = shared_rcq ? shared_rcq : mk_cq(rd, p->ch);
	p->scq = mk_cq(sd, NULL);
	p->s_rcq = mk_cq(sd, NULL);
	p->r_scq = mk_cq(rd, NULL);
	p->sqp = mk_qp(sd, t, p->scq, p->s_rcq, NULL, NOINL, 0);
	p->rqp = mk_qp(rd, t, p->r_scq, p->rcq, srq, inl ? 1 : NOINL, 0);
	p->sbuf = dp_alloc(BUFLEN);
	p->rbuf = dp_alloc(BUFLEN);
	p->smr = dp_reg(sd->pd, p->sbuf, BUFLEN, IBV_ACCESS_LOCAL_WRITE);
	p->rmr = dp_reg(rd->pd, p->rbuf, BUFLEN, IBV_ACCESS_LOCAL_WRITE);
	dp_conn_default(&c);
	r = dp_connect(p->sqp, sd, &rd->gid, p->rqp->qp_num, &c);
	if (!r)
		r = dp_connect(p->rqp, rd, &sd->gid, p->sqp->qp_num, &c);
	if (r)
		tap_bail("%s: connect: %s", name, strerror(r));
	if (t == IBV_QPT_UD) {
		struct ibv_ah_attr aa = {
			.is_global = 1,
			.port_num = PORT,
			.grh = { .dgid = rd->gid, .sgid_index = sd->gidx,
				 .hop_limit = 64 },
		};

		p->ah = ibv_create_ah(sd->pd, &aa);
		if (!p->ah)
			tap_bail("ibv_create_ah: %s", strerror(errno));
	}
}

static void rx_free(struct rx_pair *p)
{
	ibv_destroy_qp(p->sqp);
	ibv_destroy_qp(p->rqp);
	if (p->ah)
		ibv_destroy_ah(p->ah);
	ibv_destroy_cq(p->scq);
	ibv_destroy_cq(p->s_rcq);
	ibv_destroy_cq(p->r_scq);
	if (p->own_rcq) {
		ibv_destroy_cq(p->rcq);
		ibv_destroy_comp_channel(p->ch);
	}
	ibv_dereg_mr(p->smr);
	ibv_dereg_mr(p->rmr);
	free(p->sbuf);
	free(p->rbuf);
}

static void rx_sizes(struct rx_pair *p, uint32_t from, uint32_t to)
{
	const struct layout *l = p->ah ? &three_ud : &three;
	uint32_t s;

	p->fails = 0;
	for (s = from; s <= to; s++)
		rx_one(p, s, l);
	tap_ok(!p->fails, "%s: SENDs of %u..%u bytes%s: flag, byte_len, data, canary before and after the poll",
	       p->name, from, to, p->inl ? "" : " (QP without inline)");
	if (p->fails)
		tap_diag("  %d failures, first: %s", p->fails, p->first);
}

/* ------------------------------------------------------------------ */
/* Requester: READ and atomics into the send CQE                      */
/* ------------------------------------------------------------------ */

struct rq_pair {
	const char *name;
	struct ibv_qp *qp, *peer;
	struct ibv_cq *scq, *rcq, *pcq;
	struct ibv_comp_channel *ch;
	uint8_t *lbuf, *tbuf;
	struct ibv_mr *lmr, *tmr;
	bool inl;		/* inline and sq_sig_all */
	int sig_all;
};

static void rq_setup(struct rq_pair *p, const char *name, struct dp_dev *d,
		     struct dp_dev *pd, uint32_t inl, int sig_all)
{
	struct dp_conn c;
	int r;

	memset(p, 0, sizeof(*p));
	p->name = name;
	p->sig_all = sig_all;
	p->inl = inl != NOINL && sig_all;
	p->ch = mk_channel(d);
	p->scq = mk_cq(d, p->ch);
	p->rcq = mk_cq(d, NULL);
	p->pcq = mk_cq(pd, NULL);
	p->qp = mk_qp(d, IBV_QPT_RC, p->scq, p->rcq, NULL, inl, sig_all);
	p->peer = mk_qp(pd, IBV_QPT_RC, p->pcq, p->pcq, NULL, NOINL, 0);
	p->lbuf = dp_alloc(BUFLEN);
	p->tbuf = dp_alloc(BUFLEN);
	p->lmr = dp_reg(d->pd, p->lbuf, BUFLEN, IBV_ACCESS_LOCAL_WRITE);
	p->tmr = dp_reg(pd->pd, p->tbuf, BUFLEN, DP_ACCESS_ALL);
	dp_conn_default(&c);
	r = dp_connect(p->qp, d, &pd->gid, p->peer->qp_num, &c);
	if (!r)
		r = dp_connect(p->peer, pd, &d->gid, p->qp->qp_num, &c);
	if (r)
		tap_bail("%s: connect: %s", name, strerror(r));
}

static void rq_free(struct rq_pair *p)
{
	ibv_destroy_qp(p->qp);
	ibv_destroy_qp(p->peer);
	ibv_destroy_cq(p->scq);
	ibv_destroy_cq(p->rcq);
	ibv_destroy_cq(p->pcq);
	ibv_destroy_comp_channel(p->ch);
	ibv_dereg_mr(p->lmr);
	ibv_dereg_mr(p->tmr);
	free(p->lbuf);
	free(p->tbuf);
}

/*
 * One READ (op IBV_WR_RDMA_READ, len bytes) or atomic (len 8) into the
 * layout l of lbuf; *old gets the atomic result.  NULL or a reason.
 */
static const char *rq_one(struct rq_pair *p, enum ibv_wr_opcode op,
			  uint32_t len, const struct layout *l,
			  uint64_t cmp_add, uint64_t swap, bool *was_inl)
{
	bool want_inl = p->inl && len <= MAXINL;
	struct ibv_sge sge[10];
	struct ibv_send_wr wr = {
		.wr_id = 7,
		.opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.sg_list = sge,
		.num_sge = l->nsge,
	}, *bad;
	struct ibv_wc wc;

	memset(p->lbuf, CANARY, BUFLEN);
	fill_sges(l, p->lbuf, p->lmr->lkey, sge);
	if (op == IBV_WR_RDMA_READ) {
		wr.wr.rdma.remote_addr = (uintptr_t)p->tbuf;
		wr.wr.rdma.rkey = p->tmr->rkey;
	} else {
		wr.wr.atomic.remote_addr = (uintptr_t)p->tbuf + 1024;
		wr.wr.atomic.rkey = p->tmr->rkey;
		wr.wr.atomic.compare_add = cmp_add;
		wr.wr.atomic.swap = swap;
	}
	if (ibv_req_notify_cq(p->scq, 0))
		return "req_notify failed";
	if (ibv_post_send(p->qp, &wr, &bad))
		return "post_send failed";
	if (!wait_event(p->ch))
		return "no completion event";
	if (want_inl && dp_verify_byte(p->lbuf, BUFLEN, CANARY) >= 0)
		return "local buffer written before the poll";
	if (dp_poll(p->scq, &wc, 1, DP_WAIT_MS) != 1)
		return "completion missing";
	if (wc.status != IBV_WC_SUCCESS || wc.wr_id != 7 ||
	    wc.byte_len != len)
		return "bad completion";
	*was_inl = wc.wc_flags & RXE2DV_WC_INLINE_RECV;
	if (*was_inl)
		inline_seen++;
	if (want_inl)
		inline_want++;
	if (*was_inl != want_inl)
		return want_inl ? "not flagged inline" : "flagged inline";
	return NULL;
}

static void rq_reads(struct rq_pair *p, uint32_t from, uint32_t to)
{
	const char *why = NULL;
	uint32_t s, bad_size = 0;
	int fails = 0;
	bool inl;

	dp_fill(p->tbuf, BUFLEN, 99);
	for (s = from; s <= to; s++) {
		/* a READ is as long as its SGEs: 7 + 13 + the rest */
		struct layout l = three;
		const char *w;

		l.len[0] = s < 7 ? s : 7;
		l.len[1] = s - l.len[0] < 13 ? s - l.len[0] : 13;
		l.len[2] = s - l.len[0] - l.len[1];
		w = rq_one(p, IBV_WR_RDMA_READ, s, &l, 0, 0, &inl);
		if (!w)
			w = check_scatter(&l, p->lbuf, p->tbuf, s, 0);
		if (w && !fails++) {
			why = w;
			bad_size = s;
		}
	}
	tap_ok(!fails, "%s: READs of %u..%u bytes over 3 SGEs %s", p->name,
	       from, to, p->inl ? "in the send CQE up to 64" :
				 "the normal way");
	if (fails)
		tap_diag("  %d failures, first at %u bytes: %s", fails,
			 bad_size, why);
}

static void rq_atomics(struct rq_pair *p)
{
	/* the 8-byte result split 3 + 5 over two SGEs */
	static const struct layout two = { 2, { 3, 5 }, { 0, 19 } };
	uint64_t *t = (uint64_t *)(p->tbuf + 1024), old;
	const char *why;
	uint8_t got[8];
	bool inl;
	int i;

	*t = 0x1122334455667788ull;
	why = rq_one(p, IBV_WR_ATOMIC_FETCH_AND_ADD, 8, &two, 5, 0, &inl);
	for (i = 0; !why && i < 8; i++)
		got[i] = p->lbuf[i < 3 ? i : 19 + i - 3];
	memcpy(&old, got, 8);
	if (!why && old != 0x1122334455667788ull)
		why = "wrong original value";
	if (!why && *t != 0x112233445566778dull)
		why = "target not added to";
	if (!why && (dp_verify_byte(p->lbuf + 3, 16, CANARY) >= 0 ||
		     dp_verify_byte(p->lbuf + 24, BUFLEN - 24, CANARY) >= 0))
		why = "bytes outside the SGEs changed";
	tap_ok(!why, "%s: FETCH_ADD result over 2 SGEs %s", p->name,
	       p->inl ? "in the send CQE" : "the normal way");
	if (why)
		tap_diag("  %s", why);

	why = rq_one(p, IBV_WR_ATOMIC_CMP_AND_SWP, 8, &three, 0x112233445566778dull,
		     42, &inl);
	if (!why)
		why = check_scatter(&three, p->lbuf,
				    (const uint8_t *)&(uint64_t){
					    0x112233445566778dull }, 8, 0);
	if (!why && *t != 42)
		why = "target not swapped";
	tap_ok(!why, "%s: CMP_AND_SWP result %s", p->name,
	       p->inl ? "in the send CQE" : "the normal way");
	if (why)
		tap_diag("  %s", why);
}

/* ------------------------------------------------------------------ */

/*
 * Inline-receive on an RC QP of a tag matching SRQ is EOPNOTSUPP: the
 * SRQ's CQ gets its receive completions, with tags instead of data,
 * however small that CQ is (this one has inline slots).
 */
static void tm_srq_refused(struct ibv_qp_init_attr_ex *a,
			   struct rxe2dv_qp_init_attr *dv)
{
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = 4, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_TM,
		.srq_type = IBV_SRQT_TM,
		.pd = dev.pd,
		.cq = a->recv_cq,
		.tm_cap = { .max_num_tags = 4, .max_ops = 4 },
	};
	struct ibv_srq *srq = ibv_create_srq_ex(dev.ctx, &sa);
	struct ibv_qp *qp;

	if (!tap_ok(srq != NULL, "a tag matching SRQ on a small CQ"))
		return;
	a->srq = srq;
	*dv = (struct rxe2dv_qp_init_attr){
		.comp_mask = RXE2DV_QP_INIT_ATTR_MASK_INLINE_RECV,
		.max_inl_recv = 16 };
	qp = rxe2dv_create_qp(dev.ctx, a, dv, sizeof(*dv));
	tap_null_errno(qp, EOPNOTSUPP,
		       "an RC QP of a tag matching SRQ: EOPNOTSUPP");
	if (qp)
		ibv_destroy_qp(qp);
	a->srq = NULL;
	tap_ret(ibv_destroy_srq(srq), 0, "destroy the tag matching SRQ");
}

static void test_create(void)
{
	struct ibv_cq *cq = mk_cq(&dev, NULL);
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_RC,
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = dev.pd,
	};
	struct rxe2dv_device_attr da;
	struct rxe2dv_qp_init_attr dv;
	struct {
		struct rxe2dv_qp_init_attr a;
		uint64_t more;
	} big;
	static const uint32_t asks[] = { 1, 17, 63, 64 };
	struct ibv_qp *qp;
	size_t i;

	tap_ret(rxe2dv_query_device(dev.ctx, &da, sizeof(da)), 0,
		"rxe2dv_query_device");
	tap_ret(da.max_inline_recv, MAXINL, "max_inline_recv is %d",
		MAXINL);

	dv = (struct rxe2dv_qp_init_attr){
		.comp_mask = RXE2DV_QP_INIT_ATTR_MASK_INLINE_RECV,
		.max_inl_recv = da.max_inline_recv + 1 };
	qp = rxe2dv_create_qp(dev.ctx, &a, &dv, sizeof(dv));
	tap_null_errno(qp, EINVAL, "max_inl_recv %u (max + 1): EINVAL",
		       da.max_inline_recv + 1);
	if (qp)
		ibv_destroy_qp(qp);
	tap_ret(dv.max_inl_recv, da.max_inline_recv + 1,
		"max_inl_recv not written on failure");

	dv.max_inl_recv = UINT32_MAX;
	qp = rxe2dv_create_qp(dev.ctx, &a, &dv, sizeof(dv));
	tap_null_errno(qp, EINVAL, "max_inl_recv 0xffffffff: EINVAL");
	if (qp)
		ibv_destroy_qp(qp);

	for (i = 0; i < sizeof(asks) / sizeof(asks[0]); i++) {
		dv.max_inl_recv = asks[i];
		qp = rxe2dv_create_qp(dev.ctx, &a, &dv, sizeof(dv));
		tap_ok(qp && dv.max_inl_recv == MAXINL,
		       "max_inl_recv %u applied as %u", asks[i],
		       dv.max_inl_recv);
		if (qp)
			ibv_destroy_qp(qp);
	}

	dv.max_inl_recv = 0;
	qp = rxe2dv_create_qp(dev.ctx, &a, &dv, sizeof(dv));
	tap_ok(qp && dv.max_inl_recv == 0, "max_inl_recv 0: off, 0 applied");
	if (qp)
		ibv_destroy_qp(qp);

	/* a CQ above 65536 entries has 64-byte CQEs: no room for data */
	a.recv_cq = ibv_create_cq(dev.ctx, 65537, NULL, NULL, 0);
	if (a.recv_cq) {
		dv.max_inl_recv = 16;
		qp = rxe2dv_create_qp(dev.ctx, &a, &dv, sizeof(dv));
		tap_null_errno(qp, EINVAL,
			       "receive CQ of 65537 entries: EINVAL");
		if (qp)
			ibv_destroy_qp(qp);
		ibv_destroy_cq(a.recv_cq);
	} else {
		tap_skip("a CQ of 65537 entries: max_cqe %d",
			 dev.attr.max_cqe);
	}
	a.recv_cq = cq;

	/* a tag matching SRQ's completions carry tags, not data */
	tm_srq_refused(&a, &dv);

	/* without the mask bit the field is neither read nor written */
	dv = (struct rxe2dv_qp_init_attr){ .max_inl_recv = 1000 };
	qp = rxe2dv_create_qp(dev.ctx, &a, &dv, sizeof(dv));
	tap_ok(qp && dv.max_inl_recv == 1000,
	       "comp_mask 0: an ordinary QP, max_inl_recv untouched");
	if (qp)
		ibv_destroy_qp(qp);

	dv = (struct rxe2dv_qp_init_attr){ .comp_mask = 1 << 1 };
	tap_null_errno(rxe2dv_create_qp(dev.ctx, &a, &dv, sizeof(dv)),
		       EOPNOTSUPP, "unknown comp_mask bit: EOPNOTSUPP");
	dv = (struct rxe2dv_qp_init_attr){
		.comp_mask = RXE2DV_QP_INIT_ATTR_MASK_INLINE_RECV,
		.max_inl_recv = 8, .reserved = 1 };
	tap_null_errno(rxe2dv_create_qp(dev.ctx, &a, &dv, sizeof(dv)),
		       EINVAL, "reserved != 0: EINVAL");
	dv.reserved = 0;
	tap_null_errno(rxe2dv_create_qp(dev.ctx, &a, &dv, 8), EINVAL,
		       "inlen 8: EINVAL");
	tap_null_errno(rxe2dv_create_qp(dev.ctx, &a, NULL, sizeof(dv)),
		       EINVAL, "dv_attr NULL: EINVAL");
	memset(&big, 0, sizeof(big));
	big.a = dv;
	big.more = 1;
	tap_null_errno(rxe2dv_create_qp(dev.ctx, &a, &big.a, sizeof(big)),
		       EOPNOTSUPP, "non-zero bytes past the structure: EOPNOTSUPP");
	big.more = 0;
	qp = rxe2dv_create_qp(dev.ctx, &a, &big.a, sizeof(big));
	tap_ok(qp && big.a.max_inl_recv == MAXINL,
	       "a longer structure with a zero tail is accepted");
	if (qp)
		ibv_destroy_qp(qp);

	if (have_ref) {
		a.send_cq = a.recv_cq = mk_cq(&ref, NULL);
		a.pd = ref.pd;
		dv = (struct rxe2dv_qp_init_attr){
			.comp_mask = RXE2DV_QP_INIT_ATTR_MASK_INLINE_RECV,
			.max_inl_recv = 8 };
		tap_null_errno(rxe2dv_create_qp(ref.ctx, &a, &dv, sizeof(dv)),
			       EOPNOTSUPP, "a context of rdma_rxe: EOPNOTSUPP");
		ibv_destroy_cq(a.send_cq);
	} else {
		tap_skip("no %s: rxe2dv_create_qp on another driver",
			 test_ref_dev_name());
	}
	ibv_destroy_cq(cq);
}

static void test_rx_loopback(void)
{
	struct rx_pair p, q;
	struct layout l;
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16,
						  .max_sge = 10 } };
	struct ibv_srq *srq;
	int k;

	rx_setup(&p, "RC", &dev, &dev, IBV_QPT_RC, NULL, NULL, NULL, true);
	rx_sizes(&p, 0, MAXINL + 1);
	/* 8 SGEs covering the message: inline; 10: the normal path */
	for (k = 8; k <= 10; k += 2) {
		layout_ones(&l, k);
		p.fails = 0;
		rx_one(&p, 12, &l);
		tap_ok(!p.fails, "RC: 12 bytes over %d SGEs %s", k,
		       k <= 8 ? "inline" : "the normal way (more than 8)");
		if (p.fails)
			tap_diag("  %s", p.first);
	}

	rx_setup(&p, "UC", &dev, &dev, IBV_QPT_UC, NULL, NULL, NULL, true);
	rx_sizes(&p, 0, MAXINL + 1);

	rx_setup(&p, "UD", &dev, &dev, IBV_QPT_UD, NULL, NULL, NULL, true);
	rx_sizes(&p, 0, MAXINL - GRH + 1);

	srq = ibv_create_srq(dev.pd, &sa);
	if (!srq)
		tap_bail("ibv_create_srq: %s", strerror(errno));
	rx_setup(&p, "RC on SRQ", &dev, &dev, IBV_QPT_RC, srq, NULL, NULL,
		 true);
	rx_sizes(&p, 0, MAXINL + 1);
	/* the same SRQ, the same receive CQ, a QP that did not ask */
	rx_setup(&q, "RC on SRQ", &dev, &dev, IBV_QPT_RC, srq, p.rcq, p.ch,
		 false);
	rx_sizes(&q, 0, 16);
	/* and the first QP still gets its messages inline */
	rx_sizes(&p, 30, 32);

	/* a QP without inline on a plain RQ */
	rx_setup(&p, "RC", &dev, &dev, IBV_QPT_RC, NULL, NULL, NULL, false);
	rx_sizes(&p, 0, 8);
}

/*
 * Over the network: two rxe2 devices in two namespaces joined by a veth,
 * so the packets go through the IP stack and the receive hook (rxe2's
 * loopback shortcut only covers GIDs of the sender's namespace).
 */
#define WIRE_A "rxe2_inl1"
#define WIRE_B "rxe2_inl2"

static bool wire_up(void)
{
	uint64_t end;

	dp_sh("ip netns del inl1 2>/dev/null; ip netns del inl2 2>/dev/null");
	if (dp_sh("ip netns add inl1 && ip netns add inl2 && "
		  "ip -n inl1 link add inl1v type veth peer name inl2v netns inl2 && "
		  "ip -n inl1 link set lo up && ip -n inl2 link set lo up && "
		  "ip -n inl1 addr add 10.79.5.1/24 dev inl1v && "
		  "ip -n inl2 addr add 10.79.5.2/24 dev inl2v && "
		  "ip -n inl1 link set inl1v up && ip -n inl2 link set inl2v up && "
		  "ip netns exec inl1 rdma link add " WIRE_A " type rxe2 netdev inl1v && "
		  "ip netns exec inl2 rdma link add " WIRE_B " type rxe2 netdev inl2v"))
		return false;
	end = dp_now_ms() + 10000;
	while (dp_sh("grep -qs ffff:0a4f:0501 /sys/class/infiniband/" WIRE_A "/ports/1/gids/* && "
		     "grep -qs ffff:0a4f:0502 /sys/class/infiniband/" WIRE_B "/ports/1/gids/*")) {
		if (dp_now_ms() > end)
			return false;
		usleep(50000);
	}
	return true;
}

static void wire_down(void)
{
	dp_sh("ip netns del inl1; ip netns del inl2");
}

static long wire_counters(void)
{
	long a = read_counter(WIRE_A), b = read_counter(WIRE_B);

	return a < 0 || b < 0 ? -1 : a + b;
}

static long veth_rx(void)
{
	FILE *f = popen("ip netns exec inl2 cat /sys/class/net/inl2v/statistics/rx_packets", "r");
	long v = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	pclose(f);
	return v;
}

static void test_wire(void)
{
	long seen0 = inline_seen, want0 = inline_want, before, after;
	struct dp_dev wa, wb;
	struct rx_pair p;
	struct rq_pair q;
	long veth0;

	if (!wire_up()) {
		tap_skip("no namespaces with rxe2 links: veth");
		tap_skip("no namespaces with rxe2 links: SENDs over the network");
		tap_skip("no namespaces with rxe2 links: UD over the network");
		tap_skip("no namespaces with rxe2 links: READ over the network");
		tap_skip("no namespaces with rxe2 links: FETCH_ADD over the network");
		tap_skip("no namespaces with rxe2 links: CMP_AND_SWP over the network");
		tap_skip("no namespaces with rxe2 links: counters");
		wire_down();
		return;
	}
	dp_open(&wa, WIRE_A);
	dp_open(&wb, WIRE_B);
	before = wire_counters();
	veth0 = veth_rx();

	rx_setup(&p, "RC over the network", &wa, &wb, IBV_QPT_RC, NULL, NULL,
		 NULL, true);
	rx_sizes(&p, 0, MAXINL + 1);
	rx_free(&p);
	rx_setup(&p, "UD over the network", &wa, &wb, IBV_QPT_UD, NULL, NULL,
		 NULL, true);
	rx_sizes(&p, 0, MAXINL - GRH + 1);
	rx_free(&p);
	rq_setup(&q, "RC sq_sig_all over the network", &wa, &wb, 1, 1);
	rq_reads(&q, 1, MAXINL + 1);
	rq_atomics(&q);
	rq_free(&q);

	after = wire_counters();
	/* 66 RC and 26 UD SENDs, 65 READ requests, 2 atomics at least */
	tap_ok(veth_rx() - veth0 >= 159,
	       "the packets crossed the veth (%ld received on inl2v, at least 159 requests)",
	       veth_rx() - veth0);
	tap_ok(before >= 0 && after - before == inline_seen - seen0 &&
	       inline_seen - seen0 == inline_want - want0,
	       "network: inline_recv_completions of both devices moved by %ld, %ld inline completions seen, %ld expected",
	       after - before, inline_seen - seen0, inline_want - want0);
	dp_close(&wa);
	dp_close(&wb);
	wire_down();
}

/* The extended polling API sees the flag through ibv_wc_read_wc_flags */
static void test_cq_ex(void)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 16,
		.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_QP_NUM,
	};
	struct ibv_poll_cq_attr pa = {};
	struct ibv_cq_ex *cqx;
	struct ibv_sge sge[3];
	struct ibv_recv_wr rwr = { .wr_id = 55, .sg_list = sge,
				   .num_sge = 3 }, *rbad;
	struct rx_pair p;
	struct ibv_wc wc;
	const char *why = NULL;
	uint64_t end;
	int ret;

	cqx = ibv_create_cq_ex(dev.ctx, &ca);
	if (!cqx)
		tap_bail("ibv_create_cq_ex: %s", strerror(errno));
	rx_setup(&p, "RC cq_ex", &dev, &dev, IBV_QPT_RC, NULL,
		 ibv_cq_ex_to_cq(cqx), NULL, true);
	memset(p.rbuf, CANARY, BUFLEN);
	dp_fill(p.sbuf, 33, 5);
	fill_sges(&three, p.rbuf, p.rmr->lkey, sge);
	if (ibv_post_recv(p.rqp, &rwr, &rbad) || post_send(&p, 33) ||
	    dp_poll(p.scq, &wc, 1, DP_WAIT_MS) != 1)
		tap_bail("RC cq_ex: post or send completion failed");
	end = dp_now_ms() + DP_WAIT_MS;
	while ((ret = ibv_start_poll(cqx, &pa)) == ENOENT &&
	       dp_now_ms() < end)
		usleep(1000);
	if (ret) {
		why = "no completion";
	} else {
		if (cqx->status != IBV_WC_SUCCESS || cqx->wr_id != 55 ||
		    ibv_wc_read_byte_len(cqx) != 33 ||
		    ibv_wc_read_qp_num(cqx) != p.rqp->qp_num)
			why = "bad completion";
		else if (!(ibv_wc_read_wc_flags(cqx) & RXE2DV_WC_INLINE_RECV))
			why = "not flagged inline";
		else
			why = check_scatter(&three, p.rbuf, p.sbuf, 33, 0);
		ibv_end_poll(cqx);
	}
	if (!why)
		inline_seen++;
	inline_want++;
	tap_ok(!why, "ibv_start_poll: a 33-byte SEND inline, RXE2DV_WC_INLINE_RECV from ibv_wc_read_wc_flags, data scattered");
	if (why)
		tap_diag("  %s", why);
	rx_free(&p);
}

static void test_requester(void)
{
	struct rq_pair p;

	rq_setup(&p, "RC sq_sig_all", &dev, &dev, 1, 1);
	rq_reads(&p, 1, MAXINL + 1);
	rq_atomics(&p);

	rq_setup(&p, "RC without sq_sig_all", &dev, &dev, 1, 0);
	rq_reads(&p, 16, 16);
	rq_atomics(&p);
}

int main(void)
{
	char path[256];
	struct stat st;
	long before, after;

	if (!test_is_rxe2(test_dev_name())) {
		tap_plan(1);
		tap_skip("%s is not rxe2: inline-receive is rxe2dv", test_dev_name());
		return tap_done();
	}
	dp_open(&dev, test_dev_name());
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s",
		 test_ref_dev_name());
	have_ref = !stat(path, &st);
	if (have_ref)
		dp_open(&ref, test_ref_dev_name());

	before = read_counter(dev.name);
	test_create();
	test_rx_loopback();
	test_cq_ex();
	test_requester();
	after = read_counter(dev.name);

	tap_ok(inline_seen == inline_want && inline_want > 0,
	       "%ld completions flagged inline, %ld expected", inline_seen,
	       inline_want);
	tap_ok(before >= 0 && after - before == inline_seen,
	       "inline_recv_completions moved by %ld (from %ld to %ld), one per inline completion",
	       after - before, before, after);
	test_wire();
	/* rxe2_0's objects go with the process: the run checks for leaks */
	return tap_done();
}
