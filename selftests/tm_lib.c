// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The tag matching tests' shared setup, model and checks: see tm_lib.h.
 * Each helper's comment says how many TAP lines it prints.
 */
#include <endian.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "tm_lib.h"
#include "util.h"

struct dp_dev dev;
struct ibv_cq_ex *tcq;
struct ibv_srq *srq;
struct dp_qp s1, r1, s2, r2;
uint8_t *sbuf, *rbuf;
struct ibv_mr *smr, *rmr;
uint8_t *xbuf, *fbuf;
struct ibv_mr *xmr, *xmr_local, *fmr;

uint32_t dev_cnt, sw_cnt;
uint64_t msg_tag;
uint32_t msg_ctx, seed = 1;
uint64_t send_id = 0x100, wqe_id = 0x200, op_id = 0x10000;

/*
 * The setup's and the teardown's own checks: TAP lines where tm_open()
 * was told so (test_tm_basic), elsewhere a line only when one fails.
 */
static bool own_checks;

static bool own_ok(bool ok, const char *desc)
{
	return (!own_checks && ok) || tap_ok(ok, "%s", desc);
}

static bool own_ret(long got, long want, const char *desc)
{
	return (!own_checks && got == want) || tap_ret(got, want, "%s", desc);
}

static bool own_ret_errno(int ret, int err, const char *desc)
{
	return (!own_checks && ret == err) ||
	       tap_ret_errno(ret, err, "%s", desc);
}

uint8_t *slot(int i)
{
	return rbuf + (size_t)i * SLOT;
}

struct ibv_sge slot_sge(int i, uint32_t off, uint32_t len)
{
	struct ibv_sge s = { .addr = (uintptr_t)slot(i) + off, .length = len,
			     .lkey = rmr->lkey };

	return s;
}

const char *opname(int opcode)
{
	switch (opcode) {
	case IBV_WC_TM_ADD:
		return "TM_ADD";
	case IBV_WC_TM_DEL:
		return "TM_DEL";
	case IBV_WC_TM_SYNC:
		return "TM_SYNC";
	case IBV_WC_TM_RECV:
		return "TM_RECV";
	case IBV_WC_TM_NO_TAG:
		return "TM_NO_TAG";
	case IBV_WC_RECV:
		return "RECV";
	}
	return "?";
}

/* What an op's completion says of the counts: they differ, or not. */
unsigned int sync_req(void)
{
	return dev_cnt != sw_cnt ? IBV_WC_TM_SYNC_REQ : 0;
}

void read_wc(struct ibv_cq_ex *cq, int k, void *arg)
{
	struct tm_wc *g = (struct tm_wc *)arg + k;
	struct ibv_wc_tm_info ti = { .tag = ~0ull, .priv = ~0u };

	g->wr_id = cq->wr_id;
	g->status = cq->status;
	g->opcode = ibv_wc_read_opcode(cq);
	g->byte_len = ibv_wc_read_byte_len(cq);
	g->qp_num = ibv_wc_read_qp_num(cq);
	g->flags = ibv_wc_read_wc_flags(cq);
	/* TM info belongs to tag-matching receives */
	if (g->opcode == IBV_WC_TM_RECV && cq->read_tm_info)
		ibv_wc_read_tm_info(cq, &ti);
	g->tag = ti.tag;
	g->priv = ti.priv;
}

struct tm_want want(uint64_t wr_id, int opcode)
{
	struct tm_want w = { .wr_id = wr_id, .status = IBV_WC_SUCCESS,
			     .opcode = opcode, .byte_len = -1, .qp_num = -1 };

	return w;
}

bool tm_match(const struct tm_wc *g, const struct tm_want *w)
{
	unsigned int ign = w->ignore | IBV_WC_GRH;

	return g->wr_id == w->wr_id && g->status == w->status &&
	       g->opcode == w->opcode &&
	       (w->byte_len < 0 || g->byte_len == (uint32_t)w->byte_len) &&
	       (g->flags & ~ign) == (w->flags & ~ign) &&
	       (w->qp_num < 0 || g->qp_num == (uint32_t)w->qp_num) &&
	       (!w->tm || (g->tag == w->tag && g->priv == w->priv));
}

void tm_diag(const char *what, const struct tm_wc *g)
{
	tap_diag("  %s: wr_id %#llx %s opcode %s(%d) byte_len %u wc_flags %#x qp_num %#x tag %#llx priv %#x",
		 what, (unsigned long long)g->wr_id,
		 ibv_wc_status_str(g->status), opname(g->opcode), g->opcode,
		 g->byte_len, g->flags, g->qp_num,
		 (unsigned long long)g->tag, g->priv);
}

void want_diag(const struct tm_want *w)
{
	tap_diag("  want: wr_id %#llx %s opcode %s(%d) byte_len %ld wc_flags %#x (ignoring %#x) qp_num %#lx tag %#llx priv %#x%s",
		 (unsigned long long)w->wr_id, ibv_wc_status_str(w->status),
		 opname(w->opcode), w->opcode, w->byte_len, w->flags,
		 w->ignore | IBV_WC_GRH, w->qp_num,
		 (unsigned long long)w->tag, w->priv,
		 w->tm ? "" : " (tag/priv not compared)");
}

/* The next completion of the SRQ's CQ, within DP_WAIT_MS; one TAP line. */
bool expect_tm(const struct tm_want *w, const char *fmt, ...)
{
	static int missing;
	struct tm_wc g;
	char desc[512];
	va_list ap;
	bool ok;

	va_start(ap, fmt);
	vsnprintf(desc, sizeof(desc), fmt, ap);
	va_end(ap);
	if (dp_poll_ex(tcq, 1, read_wc, &g) != 1) {
		tap_ok(false, "%s", desc);
		tap_diag("  no completion on the SRQ's CQ within %d ms (wr_id %#llx)",
			 DP_WAIT_MS, (unsigned long long)w->wr_id);
		/* a dead data path must not cost minutes */
		if (++missing >= 3)
			tap_bail("3 expected completions in a row never came");
		return false;
	}
	missing = 0;
	ok = tap_ok(tm_match(&g, w), "%s", desc);
	if (!ok) {
		tm_diag("got", &g);
		want_diag(w);
	}
	return ok;
}

/*
 * Nothing (more) on the SRQ's CQ after a short wait; one TAP line, or
 * (quiet) a line only when something is there.
 */
static bool none_on_tcq(bool quiet, const char *desc)
{
	struct ibv_poll_cq_attr pa = { 0 };
	struct tm_wc g;
	int r;

	usleep(50000);
	r = ibv_start_poll(tcq, &pa);
	if (r == ENOENT)
		return quiet || tap_ok(true, "%s", desc);
	tap_ok(false, "%s", desc);
	if (r) {
		tap_diag("  start_poll: %s", strerror(r));
		return false;
	}
	read_wc(tcq, 0, &g);
	ibv_end_poll(tcq);
	tm_diag("a completion", &g);
	return false;
}

/* Nothing (more) on the SRQ's CQ after a short wait; one TAP line. */
bool expect_none(const char *fmt, ...)
{
	char desc[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(desc, sizeof(desc), fmt, ap);
	va_end(ap);
	return none_on_tcq(false, desc);
}

/* An op's completion, TM_SYNC_REQ as the model has it; one TAP line. */
bool expect_op(uint64_t wr_id, int opcode, int status,
	       const char *what)
{
	struct tm_want w = want(wr_id, opcode);

	w.status = status;
	/* as on mlx5: ADD and DEL say so, a SYNC never does */
	w.flags = opcode == IBV_WC_TM_SYNC ? 0 : sync_req();
	return expect_tm(&w, "%s: %s %s, %s", what, opname(opcode),
			 ibv_wc_status_str(status),
			 w.flags ? "TM_SYNC_REQ (counts differ)" :
				   "no TM_SYNC_REQ (counts equal)");
}

/*
 * ibv_post_srq_ops on the main SRQ; the model takes the TM_SYNC counts
 * of the ops performed: all, or those before *bad.
 */
int post_ops(struct ibv_ops_wr *op, struct ibv_ops_wr **bad)
{
	struct ibv_ops_wr *o;
	int r;

	*bad = NULL;
	r = ibv_post_srq_ops(srq, op, bad);
	for (o = op; o && (!r || o != *bad); o = o->next)
		if (o->flags & SYNC)
			sw_cnt = o->tm.unexpected_cnt;
	return r;
}

void init_add(struct ibv_ops_wr *op, const struct tag *t,
	      struct ibv_sge *sge, int nsge, int flags, uint32_t unexp)
{
	memset(op, 0, sizeof(*op));
	op->wr_id = op_id++;
	op->opcode = IBV_WR_TAG_ADD;
	op->flags = flags;
	op->tm.unexpected_cnt = unexp;
	op->tm.add.recv_wr_id = t->id;
	op->tm.add.sg_list = sge;
	op->tm.add.num_sge = nsge;
	op->tm.add.tag = t->tag;
	op->tm.add.mask = t->mask;
}

/*
 * ADD of t over its whole slot (canary-filled first): a TAP line for the
 * post, one more for the completion when signaled.
 */
bool add(struct tag *t, int flags, uint32_t unexp, const char *what)
{
	struct ibv_sge sge = slot_sge(t->slot, 0, SLOT);
	struct ibv_ops_wr op, *bad;
	int r;

	memset(slot(t->slot), CANARY, SLOT);
	init_add(&op, t, &sge, 1, flags, unexp);
	r = post_ops(&op, &bad);
	t->handle = op.tm.handle;
	if (!tap_ret_errno(r, 0, "%s: ADD tag %#llx mask %#llx%s", what,
			   (unsigned long long)t->tag,
			   (unsigned long long)t->mask,
			   flags & SYNC ? " with TM_SYNC" : "")) {
		if (flags & SIG)
			tap_ok(false, "%s: TM_ADD completion (ADD refused)",
			       what);
		return false;
	}
	if (flags & SIG)
		expect_op(op.wr_id, IBV_WC_TM_ADD, IBV_WC_SUCCESS, what);
	return true;
}

/*
 * DEL of handle: a TAP line for the post, one for the completion that
 * comes when signaled or when the handle names no tag (TM_ERR).
 */
void del(uint32_t handle, int flags, uint32_t unexp, int status,
	 const char *what)
{
	struct ibv_ops_wr op = { .wr_id = op_id++, .opcode = IBV_WR_TAG_DEL,
				 .flags = flags }, *bad;
	int r;

	op.tm.handle = handle;
	op.tm.unexpected_cnt = unexp;
	r = post_ops(&op, &bad);
	if (!tap_ret_errno(r, 0, "%s: DEL handle %#x%s", what, handle,
			   flags & SYNC ? " with TM_SYNC" : "")) {
		if ((flags & SIG) || status != IBV_WC_SUCCESS)
			tap_ok(false, "%s: TM_DEL completion (DEL refused)",
			       what);
		return;
	}
	if ((flags & SIG) || status != IBV_WC_SUCCESS)
		expect_op(op.wr_id, IBV_WC_TM_DEL, status, what);
}

/* A SYNC op: a TAP line for the post, one for its completion if signaled. */
void sync_op(int flags, uint32_t unexp, const char *what)
{
	struct ibv_ops_wr op = { .wr_id = op_id++, .opcode = IBV_WR_TAG_SYNC,
				 .flags = flags }, *bad;
	char cnt[48];
	int r;

	op.tm.unexpected_cnt = unexp;
	if (flags & SYNC)
		snprintf(cnt, sizeof(cnt), "with TM_SYNC, unexpected_cnt %u",
			 unexp);
	else
		snprintf(cnt, sizeof(cnt), "without TM_SYNC");
	r = post_ops(&op, &bad);
	if (!tap_ret_errno(r, 0, "%s: SYNC %s", what, cnt)) {
		if (flags & SIG)
			tap_ok(false, "%s: TM_SYNC completion (SYNC refused)",
			       what);
		return;
	}
	if (flags & SIG)
		expect_op(op.wr_id, IBV_WC_TM_SYNC, IBV_WC_SUCCESS, what);
}

/*
 * A message of len bytes in sbuf: a fresh pattern (no earlier message's
 * bytes can pass for it), the TMH or as much of it as fits in front.
 */
void build(uint8_t op, uint64_t tag, uint32_t len)
{
	struct ibv_tmh h = { .opcode = op };

	msg_tag = tag;
	msg_ctx = 0xc0de0000 + seed;
	h.app_ctx = htobe32(msg_ctx);
	h.tag = htobe64(tag);
	dp_fill(sbuf, SLOT, seed++);
	memcpy(sbuf, &h, len < TMH_LEN ? len : TMH_LEN);
}

/* Sends what sbuf holds and waits for the send's SUCCESS; one TAP line. */
void send_built(struct dp_qp *from, uint32_t len, const char *what)
{
	struct dp_wc_want w = dp_want(send_id, IBV_WC_SEND);
	int r;

	r = dp_post_send1(from->qp, send_id++, IBV_WR_SEND, sbuf, len,
			  smr->lkey, 0, 0, 0);
	if (r) {
		tap_ret_errno(r, 0, "%s: post the SEND", what);
		return;
	}
	w.qp_num = from->qp->qp_num;
	dp_expect(from->scq, &w, "%s: the %u B SEND completes", what, len);
}

void send_msg(struct dp_qp *from, uint8_t op, uint64_t tag,
	      uint32_t len, const char *what)
{
	build(op, tag, len);
	send_built(from, len, what);
}

/* One SRQ WQE over the WQE slot (canary-filled); its wr_id. */
uint64_t post_wqe(void)
{
	struct ibv_sge sge = slot_sge(WQE_SLOT, 0, SLOT);
	struct ibv_recv_wr wr = { .wr_id = wqe_id++, .sg_list = &sge,
				  .num_sge = 1 }, *bad;
	int r;

	memset(slot(WQE_SLOT), CANARY, SLOT);
	r = ibv_post_srq_recv(srq, &wr, &bad);
	if (r)
		tap_bail("ibv_post_srq_recv on the TM SRQ: %s", strerror(r));
	return wr.wr_id;
}

/*
 * Slot s holds data scattered over sge[] (addresses in the slot) and the
 * canary everywhere else; one TAP line.
 */
bool check_scatter(int s, const struct ibv_sge *sge, int n,
		   const uint8_t *data, uint32_t len, const char *what)
{
	static uint8_t img[SLOT];
	uint32_t done = 0, k;
	long bad = -1;
	int i;

	memset(img, CANARY, SLOT);
	for (i = 0; i < n && done < len; i++) {
		k = sge[i].length < len - done ? sge[i].length : len - done;
		memcpy(img + (sge[i].addr - (uintptr_t)slot(s)), data + done,
		       k);
		done += k;
	}
	for (k = 0; k < SLOT && bad < 0; k++)
		if (slot(s)[k] != img[k])
			bad = k;
	if (!tap_ok(bad < 0 && done == len,
		    "%s: %u B placed byte for byte, nothing written around them",
		    what, len))
		tap_diag("  buffer byte %ld is %#x, want %#x", bad,
			 bad < 0 ? 0 : slot(s)[bad], bad < 0 ? 0 : img[bad]);
	return bad < 0;
}

bool check_data(int s, const uint8_t *data, uint32_t len,
		const char *what)
{
	struct ibv_sge sge = slot_sge(s, 0, SLOT);

	return check_scatter(s, &sge, 1, data, len, what);
}

/*
 * The one completion of a message of len bytes (after the TMH, or all
 * of it) that matched t on QP qp_num: MATCH|DATA_VALID, tag and app_ctx.
 */
struct tm_want want_matched(const struct tag *t, uint32_t qp_num,
			    uint32_t len, uint64_t tag, uint32_t ctx)
{
	struct tm_want w = want(t->id, IBV_WC_TM_RECV);

	w.byte_len = len;
	w.flags = IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID;
	/* the spec names TM_SYNC_REQ for op completions only */
	w.ignore = sync_req();
	w.qp_num = qp_num;
	w.tm = true;
	w.tag = tag;
	w.priv = ctx;
	return w;
}

/* The message in sbuf (len bytes) matched t on to's QP; two TAP lines. */
void expect_match(struct dp_qp *to, const struct tag *t,
		  uint32_t len, const char *what)
{
	struct tm_want w = want_matched(t, to->qp->qp_num, len - TMH_LEN,
					msg_tag, msg_ctx);

	expect_tm(&w, "%s: TM_RECV SUCCESS for wr_id %#llx, MATCH|DATA_VALID, byte_len %u, qp_num, tag %#llx, app_ctx",
		  what, (unsigned long long)t->id, len - TMH_LEN,
		  (unsigned long long)msg_tag);
	check_data(t->slot, sbuf + TMH_LEN, len - TMH_LEN, what);
}

/* An EAGER message for t (its TMH tag tag): three TAP lines. */
void eager(struct dp_qp *from, struct dp_qp *to, const struct tag *t,
	   uint64_t tag, uint32_t len, const char *what)
{
	send_msg(from, IBV_TMH_EAGER, tag, len, what);
	expect_match(to, t, len, what);
}

/*
 * The message in sbuf came unexpected: whole in SRQ WQE wqe, counted by
 * the device; two TAP lines.
 */
void expect_unexp(struct dp_qp *to, uint64_t wqe, uint32_t len,
		  const char *what)
{
	struct tm_want w = want(wqe, IBV_WC_TM_RECV);

	dev_cnt++;
	w.byte_len = len;
	/* mlx5 asks for a sync here only when 0x3fff behind */
	w.flags = 0;
	w.qp_num = to->qp->qp_num;
	w.tm = true;
	expect_tm(&w, "%s: unexpected: TM_RECV for SRQ WQE %#llx, no MATCH/DATA_VALID/SYNC_REQ, byte_len %u, tag 0, priv 0",
		  what, (unsigned long long)wqe, len);
	check_data(WQE_SLOT, sbuf, len, what);
}

/* A message that no tag may take; three TAP lines. */
void unexpected(struct dp_qp *from, struct dp_qp *to, uint8_t op,
		uint64_t tag, uint32_t len, const char *what)
{
	uint64_t wqe = post_wqe();

	send_msg(from, op, tag, len, what);
	expect_unexp(to, wqe, len, what);
}

/* tm_caps exactly; rxe2 without tag matching is a failure, not a skip */
static void caps(void)
{
	struct ibv_device_attr_ex ax;
	int r;

	memset(&ax, 0, sizeof(ax));
	r = ibv_query_device_ex(dev.ctx, NULL, &ax);
	if (r)
		tap_bail("ibv_query_device_ex: %s", strerror(r));
	/* the in-tree rxe has no tag matching: RXE2_DEV=rxe0 stays green */
	if (!dev.rxe2 && !(ax.tm_caps.flags & IBV_TM_CAP_RC)) {
		tap_skip("tag matching: %s is not rxe2 and has none", dev.name);
		dp_close(&dev);
		exit(tap_done());
	}
	own_ret(ax.tm_caps.max_rndv_hdr_size, 64, "tm_caps.max_rndv_hdr_size 64");
	own_ret(ax.tm_caps.max_num_tags, 1024, "tm_caps.max_num_tags 1024");
	own_ret(ax.tm_caps.flags, IBV_TM_CAP_RC, "tm_caps.flags IBV_TM_CAP_RC");
	own_ret(ax.tm_caps.max_ops, 256, "tm_caps.max_ops 256");
	own_ret(ax.tm_caps.max_sge, 8, "tm_caps.max_sge 8");
	if (!(ax.tm_caps.flags & IBV_TM_CAP_RC))
		tap_bail("%s reports no tag matching (IBV_TM_CAP_RC)",
			 dev.name);
}

struct ibv_srq *tm_srq(struct ibv_cq *cq, uint32_t mask,
		       uint32_t tags, uint32_t ops)
{
	struct ibv_srq_init_attr_ex a;

	memset(&a, 0, sizeof(a));
	a.attr.max_wr = 64;
	a.attr.max_sge = 8;
	a.comp_mask = mask;
	a.srq_type = IBV_SRQT_TM;
	a.pd = dev.pd;
	a.cq = cq;
	a.tm_cap.max_num_tags = tags;
	a.tm_cap.max_ops = ops;
	errno = 0;
	return ibv_create_srq_ex(dev.ctx, &a);
}

void qp_make(struct dp_qp *q, struct ibv_srq *s)
{
	struct ibv_qp_cap cap = { .max_send_wr = 32, .max_recv_wr = 32,
				  .max_send_sge = 1, .max_recv_sge = 1 };

	q->d = &dev;
	q->scq = ibv_create_cq(dev.ctx, 64, NULL, NULL, 0);
	/* QPs on the SRQ get a receive CQ of their own that must stay empty */
	q->rcq = ibv_create_cq(dev.ctx, 64, NULL, NULL, 0);
	if (!q->scq || !q->rcq)
		tap_bail("ibv_create_cq: %s", strerror(errno));
	q->qp = dp_create_qp(&dev, IBV_QPT_RC, q->scq, q->rcq, s, &cap);
	if (!q->qp)
		tap_bail("create RC QP%s: %s", s ? " on the TM SRQ" : "",
			 strerror(errno));
}

void connect2(struct dp_qp *x, struct dp_qp *y)
{
	struct dp_conn c;
	int r;

	dp_conn_default(&c);
	r = dp_connect(x->qp, &dev, &dev.gid, y->qp->qp_num, &c);
	if (!r)
		r = dp_connect(y->qp, &dev, &dev.gid, x->qp->qp_num, &c);
	if (r)
		tap_bail("connect: %s", strerror(r));
}

/* a pair's QPs (those not destroyed yet) and CQs; one TAP line */
void pair_destroy(struct dp_qp *s, struct dp_qp *r, const char *what)
{
	int bad = 0;

	if (s->qp)
		bad += !!ibv_destroy_qp(s->qp);
	if (r->qp)
		bad += !!ibv_destroy_qp(r->qp);
	bad += !!ibv_destroy_cq(s->scq) + !!ibv_destroy_cq(s->rcq) +
	       !!ibv_destroy_cq(r->scq) + !!ibv_destroy_cq(r->rcq);
	s->qp = r->qp = NULL;
	tap_ret(bad, 0, "%s: destroy the pair and its CQs", what);
}

/* ------------------------------------------------------------------ */
/* Rendezvous: RC QPs made on the SRQ without a send queue, messages   */
/* ------------------------------------------------------------------ */

/*
 * An RC QP on the main SRQ as rdma-core's tag matching tests make it: no
 * send queue (max_send_wr 0, max_send_sge 0) and, the SRQ's receives
 * being its own, no receive caps; its send CQ must exist all the same.
 */
void qp_make_tm(struct dp_qp *q, const char *what)
{
	struct ibv_qp_cap cap = { 0 };

	q->d = &dev;
	q->scq = ibv_create_cq(dev.ctx, 64, NULL, NULL, 0);
	q->rcq = ibv_create_cq(dev.ctx, 64, NULL, NULL, 0);
	if (!q->scq || !q->rcq)
		tap_bail("ibv_create_cq: %s", strerror(errno));
	q->qp = dp_create_qp(&dev, IBV_QPT_RC, q->scq, q->rcq, srq, &cap);
	if (!tap_ok(q->qp != NULL,
		    "%s: RC QP on the TM SRQ with max_send_wr 0, max_send_sge 0 created",
		    what))
		tap_bail("create RC QP on the TM SRQ with max_send_wr 0: %s",
			 strerror(errno));
}

/*
 * The sender's data: rlen bytes at region r of xbuf (offset a little
 * into it: the READ's address is not page-aligned), a fresh pattern.
 */
const uint8_t *rndv_src(int r, uint32_t rlen)
{
	uint8_t *p = xbuf + (size_t)r * SLOT + 64 * (r + 1);

	dp_fill(p, rlen ? rlen : 1, seed++);
	return p;
}

/*
 * An RNDV message of len bytes at sbuf + off: a fresh pattern, the TMH
 * (reserved bytes 0, as tm_types.h asks) and the RVH naming rlen bytes
 * at src under rkey.
 */
void rndv_build(struct rndv *m, uint32_t off, uint64_t tag,
		uint32_t len, const uint8_t *src, uint32_t rkey,
		uint32_t rlen)
{
	struct ibv_tmh h = { .opcode = IBV_TMH_RNDV };
	struct ibv_rvh v;

	m->hdr = sbuf + off;
	m->len = len;
	m->tag = tag;
	m->ctx = 0xc0de0000 + seed;
	m->src = src;
	m->rkey = rkey;
	m->rlen = rlen;
	h.app_ctx = htobe32(m->ctx);
	h.tag = htobe64(tag);
	v.va = htobe64((uintptr_t)src);
	v.rkey = htobe32(rkey);
	v.len = htobe32(rlen);
	dp_fill(m->hdr, len, seed++);
	memcpy(m->hdr, &h, TMH_LEN);
	memcpy(m->hdr + TMH_LEN, &v, RVH_LEN);
	memcpy(m->fin, m->hdr, FIN_LEN);
	m->fin[0] = IBV_TMH_FIN;
}

/* Posts the message's SEND on from; one TAP line only when refused. */
bool rndv_post(struct dp_qp *from, struct rndv *m, const char *what)
{
	int r;

	m->send_id = send_id++;
	r = dp_post_send1(from->qp, m->send_id, IBV_WR_SEND, m->hdr, m->len,
			  smr->lkey, 0, 0, 0);
	if (r)
		tap_ret_errno(r, 0, "%s: post the SEND", what);
	return !r;
}

/* The message's SEND completes SUCCESS at from; one TAP line. */
void rndv_sent(struct dp_qp *from, const struct rndv *m,
	       const char *what)
{
	struct dp_wc_want w = dp_want(m->send_id, IBV_WC_SEND);

	w.qp_num = from->qp->qp_num;
	dp_expect(from->scq, &w, "%s: the sender's %u B SEND completes",
		  what, m->len);
}

/* The completions of a READ rendezvous of m into t on to's QP. */
struct tm_want want_rndv_match(const struct dp_qp *to,
			       const struct tag *t,
			       const struct rndv *m)
{
	struct tm_want w = want(t->id, IBV_WC_TM_RECV);

	w.byte_len = 0;
	w.flags = IBV_WC_TM_MATCH;
	w.ignore = sync_req();
	w.qp_num = to->qp->qp_num;
	w.tm = true;
	w.tag = m->tag;
	w.priv = m->ctx;
	return w;
}

/* ADD of t over sge[n] of its slot (canary-filled); two TAP lines. */
void add_sg(struct tag *t, struct ibv_sge *sge, int n,
	    const char *what)
{
	struct ibv_ops_wr op, *bad;
	uint32_t len = 0;
	int i, r;

	for (i = 0; i < n; i++)
		len += sge[i].length;
	memset(slot(t->slot), CANARY, SLOT);
	init_add(&op, t, sge, n, SIG, 0);
	r = post_ops(&op, &bad);
	t->handle = op.tm.handle;
	if (tap_ret_errno(r, 0, "%s: ADD tag %#llx, %d SGE%s of %u B in all",
			  what, (unsigned long long)t->tag, n, n > 1 ? "s" : "",
			  len))
		expect_op(op.wr_id, IBV_WC_TM_ADD, IBV_WC_SUCCESS, what);
	else
		tap_ok(false, "%s: TM_ADD completion (ADD refused)", what);
}

/*
 * The device, tm_caps, the buffers and their MRs, the SRQ's CQ; checks:
 * the checks of all this (and of tm_pairs() and tm_close()) as TAP lines.
 */
void tm_open(bool checks)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 256,
		.wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_TM_INFO,
	};

	own_checks = checks;
	dp_open(&dev, test_dev_name());
	caps();
	sbuf = dp_alloc(SLOT);
	rbuf = dp_alloc(SLOT * NSLOT);
	/* remote read: the RVH of the RNDV test names real bytes */
	smr = dp_reg(dev.pd, sbuf, SLOT,
		     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	rmr = dp_reg(dev.pd, rbuf, SLOT * NSLOT, IBV_ACCESS_LOCAL_WRITE);
	/* what rendezvous senders offer, readable or not; their FIN buffers */
	xbuf = dp_alloc(SLOT * XREGIONS);
	xmr = dp_reg(dev.pd, xbuf, SLOT * XREGIONS,
		     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	xmr_local = dp_reg(dev.pd, xbuf, SLOT * XREGIONS,
			   IBV_ACCESS_LOCAL_WRITE);
	fbuf = dp_alloc(SLOT);
	fmr = dp_reg(dev.pd, fbuf, SLOT, IBV_ACCESS_LOCAL_WRITE);
	tcq = ibv_create_cq_ex(dev.ctx, &ca);
	if (!own_ok(tcq && tcq->read_tm_info,
		    "ibv_create_cq_ex with IBV_WC_EX_WITH_TM_INFO, read_tm_info installed"))
		tap_bail("CQ with TM info: %s", tcq ? "no read_tm_info" :
			 strerror(errno));
}

/* The main SRQ on the SRQ's CQ, s1 -> r1 and s2 -> r2 on it, connected. */
void tm_pairs(void)
{
	srq = tm_srq(ibv_cq_ex_to_cq(tcq), TM_MASK, TAGS, OPS);
	if (!own_ok(srq != NULL, "create TM SRQ: max_num_tags 8, max_ops 8"))
		tap_bail("TM SRQ: %s", strerror(errno));
	qp_make(&s1, NULL);
	qp_make(&r1, srq);
	qp_make(&s2, NULL);
	qp_make(&r2, srq);
	connect2(&s1, &r1);
	connect2(&s2, &r2);
}

/* The QPs' own receive CQs stay empty; everything destroyed. */
void tm_close(void)
{
	struct dp_qp *q[] = { &s1, &r1, &s2, &r2 };
	struct ibv_wc wc;
	int i, n = 0, bad = 0;

	n = ibv_poll_cq(r1.rcq, 1, &wc) + ibv_poll_cq(r2.rcq, 1, &wc);
	own_ret(n, 0,
		"the receiving QPs' own recv_cqs got nothing: all went to the SRQ's CQ");
	none_on_tcq(!own_checks, "nothing left on the SRQ's CQ");
	for (i = 0; i < 4; i++)
		bad += !!ibv_destroy_qp(q[i]->qp);
	own_ret(bad, 0, "destroy the 4 QPs");
	own_ret_errno(ibv_destroy_srq(srq), 0, "destroy the TM SRQ");
	own_ret_errno(ibv_destroy_cq(ibv_cq_ex_to_cq(tcq)), 0,
		      "destroy the TM SRQ's CQ");
	for (i = 0, bad = 0; i < 4; i++)
		bad += !!ibv_destroy_cq(q[i]->scq) + !!ibv_destroy_cq(q[i]->rcq);
	own_ret(bad, 0, "destroy the QPs' 8 CQs");
	own_ok(!ibv_dereg_mr(smr) && !ibv_dereg_mr(rmr) && !ibv_dereg_mr(xmr) &&
	       !ibv_dereg_mr(xmr_local) && !ibv_dereg_mr(fmr),
	       "deregister the MRs");
	own_ret_errno(ibv_dealloc_pd(dev.pd), 0, "dealloc the PD");
	dev.pd = NULL;
	own_ret_errno(ibv_close_device(dev.ctx), 0, "close the device");
	dev.ctx = NULL;
	free(sbuf);
	free(rbuf);
	free(xbuf);
	free(fbuf);
}
