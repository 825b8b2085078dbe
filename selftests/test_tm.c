// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: tag matching SRQs: tm_caps, creation limits, ibv_post_srq_ops, EAGER matched, unexpected and NO_TAG messages, phase sync, masks, rendezvous READ and FIN, RNR, errors, flushes at RESET and destroy
 *
 * Tag matching: a TM SRQ (IBV_SRQT_TM) with its tag list driven by
 * ibv_post_srq_ops, fed by RC QPs looped back over the IPv4 RoCEv2 GID
 * whose SENDs start with a struct ibv_tmh.  The SRQ's CQ is an extended
 * CQ with IBV_WC_EX_WITH_TM_INFO; the test keeps its own model of the
 * device's and the software's unexpected-message counts and checks
 * IBV_WC_TM_SYNC_REQ against it where mlx5 sets it: on ADD and DEL
 * completions while the counts differ (never on a SYNC's, and not on
 * an unexpected message's until software is 0x3fff behind).
 *
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
 *  4. EAGER into a tag of 8 SGEs byte for byte, tag and app_ctx in the TM
 *     info, the tag consumed; a 3-packet EAGER completes twice (MATCH,
 *     then DATA_VALID);
 *  5. EAGER and RNDV without a tag: unexpected, whole in an SRQ WQE,
 *     counted by the device;
 *  6. phase sync: a tag added behind the device's count is not matched
 *     until a sync reaches the count at its ADD; a tag added in sync
 *     still matches once the SRQ is out of sync;
 *  7. NO_TAG, FIN, an unknown TMH opcode, messages shorter than a TMH:
 *     whole in SRQ WQEs, not counted, a live tag of their tag untouched;
 *  8. RNDV into a tag on a QP with a send queue of its own
 *     (max_send_wr > 0): RNDV_INCOMPLETE, the headers in the buffer;
 *  9. rendezvous offload, on an RC QP made on the SRQ with max_send_wr 0
 *     (as rdma-core's test_tm_rndv makes it): no send queue for the
 *     process (post_send EINVAL, query_qp caps 0); a matched one-packet
 *     RNDV completes MATCH (byte_len 0), the device READs rvh.len bytes
 *     from the sender into the tag's SGEs, sends the FIN (TMH with
 *     opcode FIN, the RVH as sent) into a receive WQE of the sender,
 *     and completes DATA_VALID (byte_len rvh.len); one SGE, 8 SGEs, a
 *     buffer of exactly rvh.len, rvh.len 0; a buffer smaller than
 *     rvh.len: RNDV_INCOMPLETE as in 8, no FIN; a 2-packet RNDV (longer
 *     than max_rndv_hdr_size): unexpected, the tag not consumed; 4
 *     rendezvous of 3000 B in flight (SGE splits): MATCHes, FINs and
 *     DATA_VALIDs each in order; matched ones not counted, an unexpected
 *     RNDV is; the QP's send CQ stays empty;
 * 10. two QPs on the SRQ share its tags, completions name the QP;
 * 11. a full tag list (ENOMEM, no completion), a stale handle's DEL
 *     leaves the tag that reused its entry alone; masks (both sides
 *     masked, as mlx5 matches: bits outside the mask do not count),
 *     earliest first;
 * 12. RNR: an unexpected message waits for an SRQ WQE, counted once;
 * 13. a TM SRQ whose CQ has no TM info (ibv_poll_cq); EAGER longer than
 *     its tag's buffer: LOC_LEN_ERR, the QP in ERROR, REM_INV_REQ_ERR at
 *     the sender;
 * 14. rendezvous READ with a bad rkey (one naming no MR, one of an MR
 *     without REMOTE_READ), each on a fresh pair of its own: MATCH, then
 *     REM_ACCESS_ERR for the tag, no FIN, both QPs in ERROR;
 * 15. an unexpected message that fails mid-way is not counted: on a
 *     fresh pair of its own, a 3-packet EAGER for no tag into the only
 *     SRQ WQE (100 B): LOC_LEN_ERR for that WQE, the receiving QP in
 *     ERROR, REM_INV_REQ_ERR at the sender, nothing else on the SRQ's
 *     CQ; the counts stay equal: an ADD completes without TM_SYNC_REQ
 *     and a message from a healthy pair matches its tag;
 * 16. a rendezvous READ left in the kernel SQ, on fresh pairs of their
 *     own (a fault rule drops the receiver's READ requests): after the
 *     MATCH, RESET of the receiving QP, and in a second pair its
 *     destroy, completes the tag's buffer with WR_FLUSH_ERR, exactly
 *     once; no FIN at the sender; destroying the reset QP completes
 *     nothing again;
 * 17. a matched 3-packet EAGER cut off, on a fresh pair (the receiver
 *     with a send queue of its own; a fault rule drops the sender's
 *     SEND_LAST): MATCH (byte_len 0), no DATA_VALID; RESET of the
 *     receiving QP completes the buffer with WR_FLUSH_ERR; the tag is
 *     consumed;
 * 18. RNDV on a QP without a send queue connected with max_rd_atomic 0
 *     (fresh pair): handed to software, RNDV_INCOMPLETE with
 *     MATCH|DATA_VALID, the whole message in the buffer, no FIN;
 * 19. an unexpected message, then on the same QP (fresh pair) an RDMA
 *     WRITE with immediate whose rkey names no MR: an error completion
 *     for the SRQ WQE it took, REM_ACCESS_ERR at the sender, the QP in
 *     ERROR; the counts stay as they were: on r1 an ADD completes
 *     without TM_SYNC_REQ and a message for it matches;
 * 20. the QPs' own receive CQs stay empty; everything destroyed.
 * Fault rules are cleared after each check that sets one (and at exit).
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/tm_types.h>

#include "dp.h"
#include "tap.h"
#include "util.h"

#define TMH_LEN ((uint32_t)sizeof(struct ibv_tmh))
#define SLOT 4096
#define NSLOT 48
#define WQE_SLOT (NSLOT - 1)	/* SRQ WQEs: one outstanding at a time */
#define CANARY 0xa5
#define TAGS 8			/* the main SRQ's max_num_tags: it fills */
#define OPS 8			/* and its max_ops */
#define NO_TAG 0xdead0000ull	/* | n: tag values no ADD uses */
#define TM_MASK (IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |              \
		 IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_TM)
#define SIG IBV_OPS_SIGNALED
#define SYNC IBV_OPS_TM_SYNC
#define RVH_LEN ((uint32_t)sizeof(struct ibv_rvh))
#define FIN_LEN (TMH_LEN + RVH_LEN)	/* a FIN: TMH and RVH, 32 B */
#define FIN_SLOT 64		/* the sender's FIN receive buffers */
#define NFIN 32
#define XREGIONS 5		/* xbuf: the senders' rendezvous data */

static struct dp_dev dev;
static struct ibv_cq_ex *tcq;		/* the TM SRQ's CQ, with TM info */
static struct ibv_srq *srq;		/* TAGS tags, OPS ops */
static struct dp_qp s1, r1, s2, r2;	/* senders; receivers on srq */
static uint8_t *sbuf, *rbuf;
static struct ibv_mr *smr, *rmr;
/*
 * Rendezvous offload: xbuf holds what senders offer (xmr remote-readable,
 * xmr_local the same bytes without REMOTE_READ), fbuf the FIN receive
 * buffers of the sender s4, whose receive WQEs fin_posted / fin_taken
 * count (a FIFO: its RQ consumes them in order).
 */
static struct dp_qp s4, r4;
static uint8_t *xbuf, *fbuf;
static struct ibv_mr *xmr, *xmr_local, *fmr;
static unsigned int fin_posted, fin_taken;

/* Unexpected messages as the device counts them and as software does. */
static uint32_t dev_cnt, sw_cnt;
/* The message last built in sbuf: its TMH tag and app_ctx. */
static uint64_t msg_tag;
static uint32_t msg_ctx, seed = 1;
static uint64_t send_id = 0x100, wqe_id = 0x200, op_id = 0x10000;

/* A tagged buffer: by default one SGE over its whole slot of rbuf. */
struct tag {
	uint64_t tag, mask;
	uint64_t id;		/* recv_wr_id */
	int slot;
	uint32_t handle;
};

/* One completion of the SRQ's CQ as the extended getters read it. */
struct tm_wc {
	uint64_t wr_id, tag;
	int status, opcode;
	uint32_t byte_len, qp_num, priv;
	unsigned int flags;
};

struct tm_want {
	uint64_t wr_id;
	int status, opcode;
	long byte_len;		/* -1: not compared */
	unsigned int flags;	/* wc_flags exactly, IBV_WC_GRH aside */
	unsigned int ignore;	/* further wc_flags not compared */
	long qp_num;		/* -1: not compared */
	bool tm;		/* tag and priv compared */
	uint64_t tag;
	uint32_t priv;
};

static uint8_t *slot(int i)
{
	return rbuf + (size_t)i * SLOT;
}

static struct ibv_sge slot_sge(int i, uint32_t off, uint32_t len)
{
	struct ibv_sge s = { .addr = (uintptr_t)slot(i) + off, .length = len,
			     .lkey = rmr->lkey };

	return s;
}

static const char *opname(int opcode)
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
static unsigned int sync_req(void)
{
	return dev_cnt != sw_cnt ? IBV_WC_TM_SYNC_REQ : 0;
}

static void read_wc(struct ibv_cq_ex *cq, int k, void *arg)
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

static struct tm_want want(uint64_t wr_id, int opcode)
{
	struct tm_want w = { .wr_id = wr_id, .status = IBV_WC_SUCCESS,
			     .opcode = opcode, .byte_len = -1, .qp_num = -1 };

	return w;
}

static bool tm_match(const struct tm_wc *g, const struct tm_want *w)
{
	unsigned int ign = w->ignore | IBV_WC_GRH;

	return g->wr_id == w->wr_id && g->status == w->status &&
	       g->opcode == w->opcode &&
	       (w->byte_len < 0 || g->byte_len == (uint32_t)w->byte_len) &&
	       (g->flags & ~ign) == (w->flags & ~ign) &&
	       (w->qp_num < 0 || g->qp_num == (uint32_t)w->qp_num) &&
	       (!w->tm || (g->tag == w->tag && g->priv == w->priv));
}

static void tm_diag(const char *what, const struct tm_wc *g)
{
	tap_diag("  %s: wr_id %#llx %s opcode %s(%d) byte_len %u wc_flags %#x qp_num %#x tag %#llx priv %#x",
		 what, (unsigned long long)g->wr_id,
		 ibv_wc_status_str(g->status), opname(g->opcode), g->opcode,
		 g->byte_len, g->flags, g->qp_num,
		 (unsigned long long)g->tag, g->priv);
}

static void want_diag(const struct tm_want *w)
{
	tap_diag("  want: wr_id %#llx %s opcode %s(%d) byte_len %ld wc_flags %#x (ignoring %#x) qp_num %#lx tag %#llx priv %#x%s",
		 (unsigned long long)w->wr_id, ibv_wc_status_str(w->status),
		 opname(w->opcode), w->opcode, w->byte_len, w->flags,
		 w->ignore | IBV_WC_GRH, w->qp_num,
		 (unsigned long long)w->tag, w->priv,
		 w->tm ? "" : " (tag/priv not compared)");
}

/* The next completion of the SRQ's CQ, within DP_WAIT_MS; one TAP line. */
static bool expect_tm(const struct tm_want *w, const char *fmt, ...)
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

/* Nothing (more) on the SRQ's CQ after a short wait; one TAP line. */
static bool expect_none(const char *fmt, ...)
{
	struct ibv_poll_cq_attr pa = { 0 };
	struct tm_wc g;
	char desc[512];
	va_list ap;
	int r;

	va_start(ap, fmt);
	vsnprintf(desc, sizeof(desc), fmt, ap);
	va_end(ap);
	usleep(50000);
	r = ibv_start_poll(tcq, &pa);
	if (r == ENOENT)
		return tap_ok(true, "%s", desc);
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

/* An op's completion, TM_SYNC_REQ as the model has it; one TAP line. */
static bool expect_op(uint64_t wr_id, int opcode, int status,
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
static int post_ops(struct ibv_ops_wr *op, struct ibv_ops_wr **bad)
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

static void init_add(struct ibv_ops_wr *op, const struct tag *t,
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
static bool add(struct tag *t, int flags, uint32_t unexp, const char *what)
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

/*
 * DEL of handle: a TAP line for the post, one for the completion that
 * comes when signaled or when the handle names no tag (TM_ERR).
 */
static void del(uint32_t handle, int flags, uint32_t unexp, int status,
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
static void sync_op(int flags, uint32_t unexp, const char *what)
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
static void build(uint8_t op, uint64_t tag, uint32_t len)
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
static void send_built(struct dp_qp *from, uint32_t len, const char *what)
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

static void send_msg(struct dp_qp *from, uint8_t op, uint64_t tag,
		     uint32_t len, const char *what)
{
	build(op, tag, len);
	send_built(from, len, what);
}

/* One SRQ WQE over the WQE slot (canary-filled); its wr_id. */
static uint64_t post_wqe(void)
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
static bool check_scatter(int s, const struct ibv_sge *sge, int n,
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

static bool check_data(int s, const uint8_t *data, uint32_t len,
		       const char *what)
{
	struct ibv_sge sge = slot_sge(s, 0, SLOT);

	return check_scatter(s, &sge, 1, data, len, what);
}

/*
 * The one completion of a message of len bytes (after the TMH, or all
 * of it) that matched t on QP qp_num: MATCH|DATA_VALID, tag and app_ctx.
 */
static struct tm_want want_matched(const struct tag *t, uint32_t qp_num,
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
static void expect_match(struct dp_qp *to, const struct tag *t,
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
static void eager(struct dp_qp *from, struct dp_qp *to, const struct tag *t,
		  uint64_t tag, uint32_t len, const char *what)
{
	send_msg(from, IBV_TMH_EAGER, tag, len, what);
	expect_match(to, t, len, what);
}

/*
 * The message in sbuf came unexpected: whole in SRQ WQE wqe, counted by
 * the device; two TAP lines.
 */
static void expect_unexp(struct dp_qp *to, uint64_t wqe, uint32_t len,
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

/* A message that no tag may take; four TAP lines. */
static void unexpected(struct dp_qp *from, struct dp_qp *to, uint8_t op,
		       uint64_t tag, uint32_t len, const char *what)
{
	uint64_t wqe = post_wqe();

	send_msg(from, op, tag, len, what);
	expect_unexp(to, wqe, len, what);
}

/*
 * A message outside tag matching: whole in an SRQ WQE with the given
 * completion opcode, and not counted (a SYNC without TM_SYNC, the counts
 * equal before, reports no TM_SYNC_REQ); five TAP lines.
 */
static void untagged(uint8_t op, uint64_t tag, uint32_t len, int opcode,
		     const char *what)
{
	uint64_t wqe = post_wqe();
	struct tm_want w = want(wqe, opcode);

	send_msg(&s1, op, tag, len, what);
	w.byte_len = len;
	w.qp_num = r1.qp->qp_num;
	expect_tm(&w, "%s: %s SUCCESS for SRQ WQE %#llx, byte_len %u, no TM flags",
		  what, opname(opcode), (unsigned long long)wqe, len);
	check_data(WQE_SLOT, sbuf, len, what);
	sync_op(SIG, 0, what);
}

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
	tap_ret(ax.tm_caps.max_rndv_hdr_size, 64, "tm_caps.max_rndv_hdr_size 64");
	tap_ret(ax.tm_caps.max_num_tags, 1024, "tm_caps.max_num_tags 1024");
	tap_ret(ax.tm_caps.flags, IBV_TM_CAP_RC, "tm_caps.flags IBV_TM_CAP_RC");
	tap_ret(ax.tm_caps.max_ops, 256, "tm_caps.max_ops 256");
	tap_ret(ax.tm_caps.max_sge, 8, "tm_caps.max_sge 8");
	if (!(ax.tm_caps.flags & IBV_TM_CAP_RC))
		tap_bail("%s reports no tag matching (IBV_TM_CAP_RC)",
			 dev.name);
}

static struct ibv_srq *tm_srq(struct ibv_cq *cq, uint32_t mask,
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

/* EAGER of one packet into 8 SGEs, then of 3 packets into one. */
static void eager_tests(void)
{
	const char *what = "EAGER of 1016 B into 8 SGEs";
	struct tag t = { .tag = 0x0123456789abcdefull, .mask = ~0ull,
			 .id = 0x2001, .slot = 1 };
	struct tag m = { .tag = 0x77, .mask = ~0ull, .id = 0x2002, .slot = 2 };
	struct ibv_ops_wr op, *bad;
	struct ibv_sge sge[8];
	struct tm_want w;
	int i, r;

	/* pieces of 128 B with 16 B gaps: the gaps must keep the canary */
	memset(slot(t.slot), CANARY, SLOT);
	for (i = 0; i < 8; i++)
		sge[i] = slot_sge(t.slot, i * (128 + 16), 128);
	init_add(&op, &t, sge, 8, SIG, 0);
	r = post_ops(&op, &bad);
	t.handle = op.tm.handle;
	if (tap_ret_errno(r, 0, "%s: ADD tag %#llx with 8 SGEs", what,
			  (unsigned long long)t.tag))
		expect_op(op.wr_id, IBV_WC_TM_ADD, IBV_WC_SUCCESS, what);
	else
		tap_ok(false, "%s: TM_ADD completion (ADD refused)", what);
	send_msg(&s1, IBV_TMH_EAGER, t.tag, 1016, what);
	w = want_matched(&t, r1.qp->qp_num, 1000, msg_tag, msg_ctx);
	w.ignore = 0;
	expect_tm(&w, "%s: TM_RECV SUCCESS, MATCH|DATA_VALID, byte_len 1000, tag and app_ctx in host order",
		  what);
	check_scatter(t.slot, sge, 8, sbuf + TMH_LEN, 1000, what);
	del(t.handle, 0, 0, IBV_WC_TM_ERR, "EAGER: the matched tag is consumed");

	what = "EAGER of 2600 B (3 packets)";
	add(&m, SIG, 0, what);
	send_msg(&s1, IBV_TMH_EAGER, m.tag, 2600, what);
	w = want(m.id, IBV_WC_TM_RECV);
	w.byte_len = 0;
	w.flags = IBV_WC_TM_MATCH;
	w.qp_num = r1.qp->qp_num;
	w.tm = true;
	w.tag = msg_tag;
	w.priv = msg_ctx;
	expect_tm(&w, "%s: first TM_RECV: MATCH without DATA_VALID, byte_len 0, tag, app_ctx",
		  what);
	w.byte_len = 2600 - TMH_LEN;
	w.flags = IBV_WC_TM_DATA_VALID;
	w.tm = false;
	expect_tm(&w, "%s: second TM_RECV: DATA_VALID without MATCH, byte_len 2584",
		  what);
	check_data(m.slot, sbuf + TMH_LEN, 2600 - TMH_LEN, what);
	del(m.handle, 0, 0, IBV_WC_TM_ERR, "3-packet EAGER: the tag is consumed");
}

static void unexpected_msgs(void)
{
	struct tag l = { .tag = 0x4000, .mask = ~0ull, .id = 0x3001, .slot = 3 };

	unexpected(&s1, &r1, IBV_TMH_EAGER, NO_TAG | 1, 300,
		   "EAGER without a tag");
	sync_op(SIG, 0, "after an unexpected message, without TM_SYNC");
	unexpected(&s1, &r1, IBV_TMH_RNDV, NO_TAG | 2, 64,
		   "RNDV without a tag");
	add(&l, SIG | SYNC, dev_cnt, "ADD with TM_SYNC to the device's count");
	unexpected(&s1, &r1, IBV_TMH_EAGER, NO_TAG | 3, 100,
		   "EAGER without a tag, again");
	/* not only SYNC: any op carries the count */
	del(l.handle, SIG | SYNC, dev_cnt, IBV_WC_SUCCESS,
	    "DEL with TM_SYNC to the device's count");
	sync_op(SIG | SYNC, dev_cnt + 1,
		"software count one above the device's");
	sync_op(SIG | SYNC, dev_cnt, "software count back to the device's");
}

static void phase(void)
{
	struct tag a = { .tag = 0x4100, .mask = ~0ull, .id = 0x3101, .slot = 4 };
	struct tag b = { .tag = 0x4200, .mask = ~0ull, .id = 0x3102, .slot = 5 };
	struct tag c = { .tag = 0x4300, .mask = ~0ull, .id = 0x3103, .slot = 6 };

	/* added one behind the device: not eligible until synced */
	unexpected(&s1, &r1, IBV_TMH_EAGER, NO_TAG | 4, 100,
		   "phase: a message without a tag");
	add(&a, SIG | SYNC, dev_cnt - 1,
	    "phase: ADD with TM_SYNC one behind the device");
	unexpected(&s1, &r1, IBV_TMH_EAGER, a.tag, 100,
		   "phase: a message for the tag added behind");
	sync_op(SIG | SYNC, dev_cnt, "phase: sync to the device's count");
	eager(&s1, &r1, &a, a.tag, 200, "phase: once synced, the tag matches");

	/* eligible once synced to the count at its ADD, though still behind */
	unexpected(&s1, &r1, IBV_TMH_EAGER, NO_TAG | 5, 100,
		   "phase: another message without a tag");
	add(&b, SIG | SYNC, dev_cnt - 1,
	    "phase: ADD with TM_SYNC one behind the device, again");
	unexpected(&s1, &r1, IBV_TMH_EAGER, b.tag, 100,
		   "phase: a message for the second tag added behind");
	sync_op(SIG | SYNC, dev_cnt - 1,
		"phase: sync to the count at the ADD (one behind the device)");
	eager(&s1, &r1, &b, b.tag, 200,
	      "phase: synced to the count at its ADD, the tag matches");
	sync_op(SIG | SYNC, dev_cnt, "phase: sync to the device's count");

	/* added in sync: matches after an unexpected message too */
	add(&c, SIG, 0, "phase: ADD in sync");
	unexpected(&s1, &r1, IBV_TMH_EAGER, NO_TAG | 6, 100,
		   "phase: a message without a tag after the ADD");
	eager(&s1, &r1, &c, c.tag, 200,
	      "phase: the tag added in sync matches out of sync");
	sync_op(SIG | SYNC, dev_cnt, "phase: sync to the device's count");
}

static void not_tagged(void)
{
	struct tag live = { .tag = 0x4242, .mask = ~0ull, .id = 0x3201,
			    .slot = 7 };

	/* their TMH tag field names a live tag: it must stay untouched */
	add(&live, SIG, 0, "untagged messages: a live tag of their tag");
	untagged(IBV_TMH_NO_TAG, live.tag, 200, IBV_WC_TM_NO_TAG,
		 "NO_TAG message");
	untagged(IBV_TMH_FIN, live.tag, 100, IBV_WC_RECV, "FIN message");
	untagged(7, live.tag, 100, IBV_WC_RECV, "TMH opcode 7");
	untagged(IBV_TMH_EAGER, live.tag, 10, IBV_WC_RECV,
		 "10 B message (an EAGER TMH cut short)");
	untagged(IBV_TMH_EAGER, live.tag, 0, IBV_WC_RECV, "0 B message");
	del(live.handle, SIG, 0, IBV_WC_SUCCESS,
	    "untagged messages: the tag of their tag still live");
}

/*
 * RNDV into a matching tag on r1, a QP with a send queue of its own
 * (max_send_wr 32): that send queue is the process's, so rxe2 does not
 * READ through it (it does for QPs made without one: rndv_offload()).
 * The rendezvous goes to software: the completion is RNDV_INCOMPLETE and
 * the tag's buffer holds the message as sent (TMH, RVH, the rest).  The
 * RVH names 512 real bytes of sbuf (remote-readable): a READ made by
 * mistake would find them, and would show as a completion too many.
 */
static void rndv_match(void)
{
	const char *what = "RNDV into a tag";
	struct tag t = { .tag = 0x5151, .mask = ~0ull, .id = 0x3301,
			 .slot = 8 };
	const uint32_t len = 64;
	struct ibv_rvh rvh;
	struct tm_want w;

	add(&t, SIG, 0, what);
	build(IBV_TMH_RNDV, t.tag, len);
	rvh.va = htobe64((uintptr_t)sbuf + 2048);
	rvh.rkey = htobe32(smr->rkey);
	rvh.len = htobe32(512);
	memcpy(sbuf + TMH_LEN, &rvh, sizeof(rvh));
	send_built(&s1, len, what);
	w = want_matched(&t, r1.qp->qp_num, len, msg_tag, msg_ctx);
	w.status = IBV_WC_TM_RNDV_INCOMPLETE;
	w.ignore = 0;
	expect_tm(&w, "%s: TM_RECV RNDV_INCOMPLETE, MATCH|DATA_VALID, byte_len 64, tag, app_ctx",
		  what);
	check_data(t.slot, sbuf, len, "RNDV into a tag: TMH|RVH|rest");
	del(t.handle, 0, 0, IBV_WC_TM_ERR, "RNDV: the tag is consumed");
}

static void two_qps(void)
{
	struct tag x = { .tag = 0x6001, .mask = ~0ull, .id = 0x3401, .slot = 9 };
	struct tag y = { .tag = 0x6002, .mask = ~0ull, .id = 0x3402,
			 .slot = 10 };

	add(&x, SIG, 0, "two QPs: tag 1");
	add(&y, SIG, 0, "two QPs: tag 2");
	eager(&s2, &r2, &x, x.tag, 500, "two QPs: QP 2's message for tag 1");
	eager(&s1, &r1, &y, y.tag, 500, "two QPs: QP 1's message for tag 2");
	unexpected(&s2, &r2, IBV_TMH_EAGER, NO_TAG | 7, 100,
		   "two QPs: QP 2's message without a tag");
	sync_op(SIG | SYNC, dev_cnt, "two QPs: sync");
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

static void masks(void)
{
	struct tag m = { .tag = 0x1234, .mask = 0xffff, .id = 0x3601,
			 .slot = 21 };
	struct tag e = { .tag = 0xabcd1234, .mask = ~0ull, .id = 0x3602,
			 .slot = 22 };
	struct tag o = { .tag = 0x11234, .mask = 0xffff, .id = 0x3603,
			 .slot = 23 };
	struct tag a = { .tag = 0x5000, .mask = ~0ull, .id = 0x3604,
			 .slot = 24 };
	struct tag b = { .tag = 0x5000, .mask = ~0ull, .id = 0x3605,
			 .slot = 25 };

	add(&m, SIG, 0, "mask: tag 0x1234 mask 0xffff");
	add(&e, SIG, 0, "mask: tag 0xabcd1234, added after it");
	add(&o, SIG, 0, "mask: tag 0x11234 mask 0xffff (a bit outside)");
	add(&a, SIG, 0, "earliest first: tag 0x5000");
	add(&b, SIG, 0, "earliest first: tag 0x5000 again");
	eager(&s1, &r1, &m, 0xabcd1234, 300,
	      "mask: 0xabcd1234 matches 0x1234/0xffff, the earlier tag");
	eager(&s1, &r1, &e, 0xabcd1234, 300,
	      "mask: the next 0xabcd1234 matches the exact tag");
	/* both sides masked, as mlx5 matches for UCX */
	eager(&s1, &r1, &o, 0x21234, 100,
	      "mask: bits outside the mask do not count: 0x21234 matches 0x11234/0xffff");
	unexpected(&s1, &r1, IBV_TMH_EAGER, 0x11235, 100,
		   "mask: 0x11235 differs inside the mask: unexpected");
	eager(&s1, &r1, &a, 0x5000, 300,
	      "earliest first: the first of two equal tags");
	eager(&s1, &r1, &b, 0x5000, 300, "earliest first: then the second");
	del(o.handle, SIG, dev_cnt, IBV_WC_TM_ERR,
	    "mask: the tag with a bit outside its mask was consumed");
	sync_op(SIG | SYNC, dev_cnt, "mask: sync");
}

/* rnr_retry 7 (dp_conn_default): the sender waits for an SRQ WQE. */
static void rnr(void)
{
	const char *what = "RNR: unexpected message, no SRQ WQE";
	struct dp_wc_want w = dp_want(send_id, IBV_WC_SEND);
	struct ibv_wc wc;
	uint64_t wqe;
	int r;

	build(IBV_TMH_EAGER, NO_TAG | 8, 100);
	r = dp_post_send1(s1.qp, send_id++, IBV_WR_SEND, sbuf, 100,
			  smr->lkey, 0, 0, 0);
	tap_ret_errno(r, 0, "%s: post the SEND", what);
	tap_ret(dp_poll_none(s1.scq, &wc, 100), 0,
		"%s: the sender waits (RNR NAKs, rnr_retry 7)", what);
	expect_none("%s: nothing on the SRQ's CQ", what);
	wqe = post_wqe();
	w.qp_num = s1.qp->qp_num;
	dp_expect(s1.scq, &w, "%s: an SRQ WQE posted, the SEND completes",
		  what);
	expect_unexp(&r1, wqe, 100, what);
	sync_op(SIG | SYNC, dev_cnt, "RNR: counted once: sync");
}

static void qp_make(struct dp_qp *q, struct ibv_srq *s)
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

static void connect2(struct dp_qp *x, struct dp_qp *y)
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

static void add2(struct ibv_srq *s, struct ibv_cq *cq, struct tag *t,
		 uint32_t len, const char *what)
{
	struct ibv_sge sge = slot_sge(t->slot, 0, len);
	struct ibv_ops_wr op, *bad = NULL;
	struct dp_wc_want w;
	int r;

	memset(slot(t->slot), CANARY, SLOT);
	init_add(&op, t, &sge, 1, SIG, 0);
	r = ibv_post_srq_ops(s, &op, &bad);
	tap_ret_errno(r, 0, "%s: ADD tag %#llx (%u B)", what,
		      (unsigned long long)t->tag, len);
	w = dp_want(op.wr_id, IBV_WC_TM_ADD);
	w.wc_flags = 0;
	w.flags_ignore = IBV_WC_GRH;
	dp_expect(cq, &w, "%s: TM_ADD SUCCESS through ibv_poll_cq", what);
}

/* ------------------------------------------------------------------ */
/* Rendezvous offload: RC QPs made on the SRQ without a send queue     */
/* ------------------------------------------------------------------ */

/*
 * An RC QP on the main SRQ as rdma-core's tag matching tests make it: no
 * send queue (max_send_wr 0, max_send_sge 0) and, the SRQ's receives
 * being its own, no receive caps; its send CQ must exist all the same.
 */
static void qp_make_tm(struct dp_qp *q, const char *what)
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

/* One single-packet (or longer) RNDV message in sbuf and what it names. */
struct rndv {
	uint8_t *hdr;		/* the message, in sbuf */
	uint32_t len;		/* its length */
	uint64_t tag;
	uint32_t ctx;		/* app_ctx */
	const uint8_t *src;	/* the sender's data (rvh.va) */
	uint32_t rkey, rlen;	/* rvh.rkey, rvh.len */
	uint64_t send_id;
	uint8_t fin[FIN_LEN];	/* its FIN: the TMH as FIN, the RVH */
};

/*
 * The sender's data: rlen bytes at region r of xbuf (offset a little
 * into it: the READ's address is not page-aligned), a fresh pattern.
 */
static const uint8_t *rndv_src(int r, uint32_t rlen)
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
static void rndv_build(struct rndv *m, uint32_t off, uint64_t tag,
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
static bool rndv_post(struct dp_qp *from, struct rndv *m, const char *what)
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
static void rndv_sent(struct dp_qp *from, const struct rndv *m,
		      const char *what)
{
	struct dp_wc_want w = dp_want(m->send_id, IBV_WC_SEND);

	w.qp_num = from->qp->qp_num;
	dp_expect(from->scq, &w, "%s: the sender's %u B SEND completes",
		  what, m->len);
}

/* A FIN receive WQE on s4 over the next FIN buffer (canary-filled). */
static void fin_post(void)
{
	uint8_t *b = fbuf + (fin_posted % NFIN) * FIN_SLOT;
	int r;

	if (fin_posted - fin_taken >= NFIN)
		tap_bail("FIN buffers: %u outstanding", fin_posted - fin_taken);
	memset(b, CANARY, FIN_SLOT);
	r = dp_post_recv1(s4.qp, 0x6000 + fin_posted, b, FIN_SLOT, fmr->lkey);
	if (r)
		tap_bail("ibv_post_recv on the sender: %s", strerror(r));
	fin_posted++;
}

/*
 * m's FIN in the oldest FIN receive WQE of s4: RECV of 32 B, the bytes
 * of m->fin, nothing after them; two TAP lines.
 */
static void fin_expect(const struct rndv *m, const char *what)
{
	uint8_t *b = fbuf + (fin_taken % NFIN) * FIN_SLOT;
	struct dp_wc_want w = dp_want(0x6000 + fin_taken, IBV_WC_RECV);
	const uint8_t *img = m->fin;
	long bad = -1;
	uint32_t k;

	fin_taken++;
	w.byte_len = FIN_LEN;
	w.wc_flags = 0;
	w.flags_ignore = IBV_WC_GRH;
	w.qp_num = s4.qp->qp_num;
	dp_expect(s4.rcq, &w,
		  "%s: the FIN comes to the sender: RECV of 32 B in its receive WQE",
		  what);
	for (k = 0; k < FIN_SLOT && bad < 0; k++)
		if (b[k] != (k < FIN_LEN ? img[k] : CANARY))
			bad = k;
	if (!tap_ok(bad < 0,
		    "%s: the FIN is the TMH with opcode FIN (reserved, app_ctx, tag %#llx as sent) and the RVH as sent, nothing after",
		    what, (unsigned long long)m->tag))
		tap_diag("  FIN byte %ld is %#x, want %#x", bad, b[bad],
			 bad < FIN_LEN ? img[bad] : CANARY);
}

/* The completions of a READ rendezvous of m into t on to's QP. */
static struct tm_want want_rndv_match(const struct dp_qp *to,
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

static struct tm_want want_rndv_data(const struct dp_qp *to,
				     const struct tag *t,
				     const struct rndv *m)
{
	struct tm_want w = want(t->id, IBV_WC_TM_RECV);

	w.byte_len = m->rlen;
	w.flags = IBV_WC_TM_DATA_VALID;
	w.ignore = sync_req();
	w.qp_num = to->qp->qp_num;
	w.tm = true;		/* tag 0, priv 0 */
	return w;
}

/* ADD of t over sge[n] of its slot (canary-filled); two TAP lines. */
static void add_sg(struct tag *t, struct ibv_sge *sge, int n,
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
 * One rendezvous the device performs: a tag over sge[n], an RNDV of len
 * bytes naming rlen bytes of region r; MATCH, FIN, DATA_VALID, the data
 * in the SGEs, the tag consumed.  Ten TAP lines.
 */
static void rndv_read1(struct tag *t, struct ibv_sge *sge, int n,
		       uint32_t len, int r, uint32_t rlen, const char *what)
{
	struct tm_want w;
	struct rndv m;
	char d[160];

	add_sg(t, sge, n, what);
	fin_post();
	rndv_build(&m, 0, t->tag, len, rndv_src(r, rlen), xmr->rkey, rlen);
	if (rndv_post(&s4, &m, what))
		rndv_sent(&s4, &m, what);
	w = want_rndv_match(&r4, t, &m);
	expect_tm(&w, "%s: TM_RECV SUCCESS, MATCH only, byte_len 0, tag %#llx, app_ctx",
		  what, (unsigned long long)m.tag);
	fin_expect(&m, what);
	w = want_rndv_data(&r4, t, &m);
	expect_tm(&w, "%s: TM_RECV SUCCESS for the same wr_id, DATA_VALID only, byte_len %u, tag 0, priv 0",
		  what, rlen);
	check_scatter(t->slot, sge, n, m.src, rlen, what);
	snprintf(d, sizeof(d), "%s: the tag is consumed", what);
	del(t->handle, 0, 0, IBV_WC_TM_ERR, d);
}

/*
 * A matched RNDV the device leaves to software: RNDV_INCOMPLETE with
 * MATCH|DATA_VALID, the whole message in the buffer, no FIN (a FIN
 * receive WQE posted for it stays unused).  Eight TAP lines.
 */
static void rndv_sw1(struct tag *t, struct ibv_sge *sge, uint32_t len,
		     uint32_t rlen, const char *what)
{
	struct ibv_wc wc;
	struct tm_want w;
	struct rndv m;
	char d[160];

	add_sg(t, sge, 1, what);
	fin_post();
	rndv_build(&m, 0, t->tag, len, rndv_src(0, rlen), xmr->rkey, rlen);
	if (rndv_post(&s4, &m, what))
		rndv_sent(&s4, &m, what);
	w = want_matched(t, r4.qp->qp_num, len, m.tag, m.ctx);
	w.status = IBV_WC_TM_RNDV_INCOMPLETE;
	expect_tm(&w, "%s: TM_RECV RNDV_INCOMPLETE, MATCH|DATA_VALID, byte_len %u, tag, app_ctx",
		  what, len);
	check_scatter(t->slot, sge, 1, m.hdr, len, what);
	tap_ret(dp_poll_none(s4.rcq, &wc, 100), 0,
		"%s: no FIN: the sender's receive WQE stays unused", what);
	snprintf(d, sizeof(d), "%s: the tag is consumed", what);
	del(t->handle, 0, 0, IBV_WC_TM_ERR, d);
}

/*
 * Four rendezvous in flight on s4/r4: tags of 3000 B or more (one of
 * them 2 SGEs, one 3 SGEs), four RNDV messages sent back to back, each
 * naming 3000 B of its own region (3 READ responses at MTU 1024).
 */
static void rndv_inflight(void)
{
	const char *what = "4 rendezvous in flight";
	struct tag t[4];
	struct ibv_sge sge[4][3];
	int nsge[4] = { 1, 2, 1, 3 };
	uint32_t mlen[4] = { 64, 32, 48, 64 };
	struct tm_wc g[8], *mg[4] = { 0 }, *dg[4] = { 0 };
	int pos_m[4] = { 0 }, pos_d[4] = { 0 };
	struct tm_want w;
	struct rndv m[4];
	int i, n, nm = 0, nd = 0, posted = 0;
	bool order = true;
	char d[160];

	for (i = 0; i < 4; i++) {
		t[i] = (struct tag){ .tag = 0x9100 + i, .mask = ~0ull,
				     .id = 0x3b00 + i, .slot = 32 + i };
		sge[i][0] = slot_sge(t[i].slot, 0, SLOT);
	}
	sge[1][0] = slot_sge(t[1].slot, 0, 1100);
	sge[1][1] = slot_sge(t[1].slot, 1200, 2500);
	sge[2][0] = slot_sge(t[2].slot, 0, 3000);	/* exactly rvh.len */
	sge[3][0] = slot_sge(t[3].slot, 0, 1000);
	sge[3][1] = slot_sge(t[3].slot, 1024, 1000);
	sge[3][2] = slot_sge(t[3].slot, 2048, 1500);
	for (i = 0; i < 4; i++) {
		snprintf(d, sizeof(d), "%s: tag %d", what, i + 1);
		add_sg(&t[i], sge[i], nsge[i], d);
	}
	for (i = 0; i < 4; i++) {
		fin_post();
		rndv_build(&m[i], 128 * i, t[i].tag, mlen[i],
			   rndv_src(i, 3000), xmr->rkey, 3000);
	}
	for (i = 0; i < 4; i++)
		posted += rndv_post(&s4, &m[i], what);
	tap_ret(posted, 4, "%s: 4 SENDs posted back to back", what);
	for (i = 0; i < 4; i++)
		rndv_sent(&s4, &m[i], what);

	/* MATCH k before DATA_VALID k; among themselves each kind in order */
	n = dp_poll_ex(tcq, 8, read_wc, g);
	if (!tap_ret(n, 8, "%s: 8 completions on the SRQ's CQ", what))
		tap_diag("  got %d within %d ms", n, DP_WAIT_MS);
	for (i = 0; i < n; i++) {
		if ((g[i].flags & IBV_WC_TM_MATCH) && nm < 4) {
			pos_m[nm] = i;
			mg[nm++] = &g[i];
		} else if (!(g[i].flags & IBV_WC_TM_MATCH) && nd < 4) {
			pos_d[nd] = i;
			dg[nd++] = &g[i];
		} else {
			tm_diag("a fifth of its kind", &g[i]);
		}
	}
	for (i = 0; i < 4; i++) {
		w = want_rndv_match(&r4, &t[i], &m[i]);
		if (!tap_ok(i < nm && tm_match(mg[i], &w),
			    "%s: MATCH completion %d: wr_id %#llx, byte_len 0, tag %#llx, app_ctx",
			    what, i + 1, (unsigned long long)t[i].id,
			    (unsigned long long)t[i].tag)) {
			if (i < nm)
				tm_diag("got", mg[i]);
			want_diag(&w);
		}
	}
	for (i = 0; i < 4; i++) {
		w = want_rndv_data(&r4, &t[i], &m[i]);
		if (!tap_ok(i < nd && tm_match(dg[i], &w),
			    "%s: DATA_VALID completion %d: wr_id %#llx, byte_len 3000, tag 0",
			    what, i + 1, (unsigned long long)t[i].id)) {
			if (i < nd)
				tm_diag("got", dg[i]);
			want_diag(&w);
		}
	}
	for (i = 0; i < 4; i++)
		if (i >= nm || i >= nd || pos_m[i] > pos_d[i])
			order = false;
	tap_ok(order, "%s: each tag's MATCH comes before its DATA_VALID",
	       what);
	for (i = 0; i < 4; i++) {
		snprintf(d, sizeof(d), "%s: FIN %d", what, i + 1);
		fin_expect(&m[i], d);
	}
	for (i = 0; i < 4; i++) {
		snprintf(d, sizeof(d), "%s: tag %d's %d SGE%s", what, i + 1,
			 nsge[i], nsge[i] > 1 ? "s" : "");
		check_scatter(t[i].slot, sge[i], nsge[i], m[i].src, 3000, d);
	}
	for (i = 0; i < 4; i++) {
		snprintf(d, sizeof(d), "%s: tag %d is consumed", what, i + 1);
		del(t[i].handle, 0, 0, IBV_WC_TM_ERR, d);
	}
}

/*
 * The rendezvous offload on s4 (an ordinary RC QP) and r4 (on the SRQ,
 * made with max_send_wr 0): r4's send queue is the device's.
 */
static void rndv_offload(void)
{
	const char *what = "QP without a send queue";
	struct tag a = { .tag = 0x9001, .mask = ~0ull, .id = 0x3a01,
			 .slot = 36 };
	struct tag b = { .tag = 0x9002, .mask = ~0ull, .id = 0x3a02,
			 .slot = 37 };
	struct tag c = { .tag = 0x9003, .mask = ~0ull, .id = 0x3a03,
			 .slot = 38 };
	struct tag e = { .tag = 0x9004, .mask = ~0ull, .id = 0x3a04,
			 .slot = 39 };
	struct tag f = { .tag = 0x9005, .mask = ~0ull, .id = 0x3a05,
			 .slot = 40 };
	struct tag h = { .tag = 0x9006, .mask = ~0ull, .id = 0x3a06,
			 .slot = 41 };
	struct ibv_send_wr wr, *bad = NULL;
	struct ibv_qp_init_attr ia;
	struct ibv_sge sge[8], one;
	struct ibv_qp_attr qa;
	struct ibv_wc wc;
	int i, r, n;

	qp_make(&s4, NULL);
	qp_make_tm(&r4, what);
	connect2(&s4, &r4);

	memset(&qa, 0, sizeof(qa));
	memset(&ia, 0, sizeof(ia));
	r = ibv_query_qp(r4.qp, &qa, IBV_QP_CAP, &ia);
	if (!tap_ok(!r && !qa.cap.max_send_wr && !qa.cap.max_send_sge &&
		    !qa.cap.max_inline_data && !ia.cap.max_send_wr &&
		    !ia.cap.max_send_sge && !ia.cap.max_inline_data,
		    "%s: ibv_query_qp: max_send_wr, max_send_sge, max_inline_data 0",
		    what))
		tap_diag("  ret %d; attr cap %u/%u/%u, init_attr cap %u/%u/%u",
			 r, qa.cap.max_send_wr, qa.cap.max_send_sge,
			 qa.cap.max_inline_data, ia.cap.max_send_wr,
			 ia.cap.max_send_sge, ia.cap.max_inline_data);
	one = (struct ibv_sge){ .addr = (uintptr_t)sbuf, .length = 16,
				.lkey = smr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0xbad;
	wr.sg_list = &one;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	r = ibv_post_send(r4.qp, &wr, &bad);
	if (!tap_ok(r == EINVAL && bad == &wr,
		    "%s: ibv_post_send in RTS is EINVAL, *bad the WR", what))
		tap_diag("  got %d (%s), *bad %s", r, strerror(r),
			 bad == &wr ? "the WR" : bad ? "another" : "NULL");

	/* the device's rendezvous, one at a time */
	one = slot_sge(a.slot, 0, SLOT);
	rndv_read1(&a, &one, 1, 64, 0, 2000,
		   "RNDV READ of 2000 B into one SGE");
	/* 16 B gaps between the pieces: they must keep the canary */
	for (i = 0; i < 8; i++)
		sge[i] = slot_sge(e.slot, i * (300 + 16), 300);
	rndv_read1(&e, sge, 8, 32, 1, 2400,
		   "RNDV READ of 2400 B into 8 SGEs of 300 B");
	one = slot_sge(b.slot, 0, 1000);
	rndv_read1(&b, &one, 1, 32, 2, 1000,
		   "RNDV READ of 1000 B into a 1000 B buffer");
	one = slot_sge(c.slot, 0, SLOT);
	rndv_read1(&c, &one, 1, 48, 3, 0, "RNDV with rvh.len 0");

	/* what the device leaves to software */
	one = slot_sge(f.slot, 0, 999);
	rndv_sw1(&f, &one, 64, 1000,
		 "RNDV naming 1000 B, a 999 B buffer");
	/* longer than max_rndv_hdr_size: unexpected, the tag stays */
	add(&h, SIG, dev_cnt, "RNDV of 2 packets: its tag");
	unexpected(&s4, &r4, IBV_TMH_RNDV, h.tag, 1500,
		   "RNDV message of 1500 B (2 packets)");
	del(h.handle, SIG, dev_cnt, IBV_WC_SUCCESS,
	    "RNDV of 2 packets: the tag was not consumed");
	sync_op(SIG | SYNC, dev_cnt, "RNDV of 2 packets: sync");

	rndv_inflight();

	/* matched rendezvous were not counted, an unexpected one is */
	sync_op(SIG, 0, "rendezvous offload: matched RNDVs not counted");
	unexpected(&s4, &r4, IBV_TMH_RNDV, NO_TAG | 9, 64,
		   "RNDV without a tag on a QP without a send queue");
	sync_op(SIG | SYNC, dev_cnt, "rendezvous offload: sync");

	n = ibv_poll_cq(r4.scq, 1, &wc);
	if (!tap_ret(n, 0, "%s: its send CQ got nothing", what) && n > 0)
		tap_diag("  wr_id %#llx %s opcode %d",
			 (unsigned long long)wc.wr_id,
			 ibv_wc_status_str(wc.status), wc.opcode);
	tap_ret(ibv_poll_cq(r4.rcq, 1, &wc), 0,
		"%s: its own recv_cq got nothing", what);
	tap_ret(ibv_poll_cq(s4.rcq, 1, &wc), 0,
		"rendezvous offload: the sender got nothing but the FINs");
	expect_none("rendezvous offload: nothing more on the SRQ's CQ");
	tap_ok(!ibv_destroy_qp(s4.qp) && !ibv_destroy_qp(r4.qp) &&
	       !ibv_destroy_cq(s4.scq) && !ibv_destroy_cq(s4.rcq) &&
	       !ibv_destroy_cq(r4.scq) && !ibv_destroy_cq(r4.rcq),
	       "rendezvous offload: destroy the pair and its CQs");
	s4.qp = r4.qp = NULL;
}

/* The QP's state, polled every 5 ms until it is want or ms passed. */
static int wait_state(struct ibv_qp *qp, int want, int ms)
{
	uint64_t end = dp_now_ms() + ms;
	int st;

	for (;;) {
		st = qp_state(qp);
		if (st == want || dp_now_ms() > end)
			return st;
		usleep(5000);
	}
}

/*
 * An error completion on the SRQ's CQ, for wr_id of the QP qp_num (an
 * error's opcode and flags mean nothing); one TAP line.
 */
static void expect_tm_error(uint64_t wr_id, int status, uint32_t qp_num,
			    const char *whose, const char *what)
{
	struct tm_wc g;
	int n = dp_poll_ex(tcq, 1, read_wc, &g);

	if (tap_ok(n == 1 && g.wr_id == wr_id && g.status == status &&
		   g.qp_num == qp_num, "%s: %s for %s wr_id %#llx", what,
		   ibv_wc_status_str(status), whose,
		   (unsigned long long)wr_id))
		return;
	if (n == 1)
		tm_diag("got", &g);
	else
		tap_diag("  no completion within %d ms", DP_WAIT_MS);
}

/*
 * A rendezvous whose RVH names rkey, which the sender's responder
 * refuses for a READ, on a fresh pair of its own (both QPs break):
 * MATCH, then REM_ACCESS_ERR for the tag, no FIN, both QPs in ERROR.
 */
static void rndv_bad_rkey(uint32_t rkey, int tslot, const char *what)
{
	struct tag t = { .tag = 0x9200 + tslot, .mask = ~0ull,
			 .id = 0x3c00 + tslot, .slot = tslot };
	struct dp_qp s = { 0 }, r = { 0 };
	uint8_t *fb = fbuf + NFIN * FIN_SLOT;
	struct ibv_sge one = slot_sge(t.slot, 0, SLOT);
	struct tm_want w;
	struct ibv_wc wc;
	struct rndv m;
	int n, st;

	qp_make(&s, NULL);
	qp_make_tm(&r, what);
	connect2(&s, &r);
	add_sg(&t, &one, 1, what);
	memset(fb, CANARY, FIN_SLOT);
	n = dp_post_recv1(s.qp, 0x7000, fb, FIN_SLOT, fmr->lkey);
	if (n)
		tap_bail("ibv_post_recv on the sender: %s", strerror(n));
	rndv_build(&m, 0, t.tag, 64, rndv_src(4, 1000), rkey, 1000);
	/* acknowledged before the READ's NAK, or flushed by it */
	if (rndv_post(&s, &m, what)) {
		n = dp_poll(s.scq, &wc, 1, DP_WAIT_MS);
		if (!tap_ok(n == 1 && wc.wr_id == m.send_id &&
			    (wc.status == IBV_WC_SUCCESS ||
			     wc.status == IBV_WC_WR_FLUSH_ERR),
			    "%s: the sender's SEND completes (SUCCESS, or flushed once its QP failed)",
			    what))
			tap_diag("  %d completions; wr_id %#llx %s", n,
				 (unsigned long long)wc.wr_id,
				 n == 1 ? ibv_wc_status_str(wc.status) : "-");
		else
			tap_diag("  the SEND: %s", ibv_wc_status_str(wc.status));
	}
	w = want_rndv_match(&r, &t, &m);
	expect_tm(&w, "%s: TM_RECV SUCCESS, MATCH only, byte_len 0, tag, app_ctx",
		  what);
	expect_tm_error(t.id, IBV_WC_REM_ACCESS_ERR, r.qp->qp_num,
			"the READ fails: the tag's", what);
	tap_ret(wait_state(r.qp, IBV_QPS_ERR, 2000), IBV_QPS_ERR,
		"%s: the receiving QP in ERROR", what);
	st = wait_state(s.qp, IBV_QPS_ERR, 2000);
	tap_ret(st, IBV_QPS_ERR,
		"%s: the sender's QP in ERROR within 2 s (its responder NAKed the READ)",
		what);
	/* the FIN's receive WQE is flushed, if anything */
	n = dp_poll(s.rcq, &wc, 1, 200);
	if (!tap_ok(n == 0 || (n == 1 && wc.wr_id == 0x7000 &&
			       wc.status == IBV_WC_WR_FLUSH_ERR),
		    "%s: no FIN at the sender (its receive WQE unused or flushed)",
		    what))
		tap_diag("  wr_id %#llx %s byte_len %u",
			 (unsigned long long)wc.wr_id,
			 ibv_wc_status_str(wc.status), wc.byte_len);
	expect_none("%s: nothing more on the SRQ's CQ", what);
	tap_ret(ibv_poll_cq(r.scq, 1, &wc) + ibv_poll_cq(r.rcq, 1, &wc), 0,
		"%s: the receiving QP's own CQs got nothing", what);
	tap_ok(!ibv_destroy_qp(s.qp) && !ibv_destroy_qp(r.qp) &&
	       !ibv_destroy_cq(s.scq) && !ibv_destroy_cq(s.rcq) &&
	       !ibv_destroy_cq(r.scq) && !ibv_destroy_cq(r.rcq),
	       "%s: destroy the pair and its CQs", what);
}

static void rndv_errors(void)
{
	rndv_bad_rkey(xmr->rkey ^ 0x100, 42,
		      "RNDV naming rkey ^ 0x100 (no MR)");
	rndv_bad_rkey(xmr_local->rkey, 43,
		      "RNDV naming an MR without REMOTE_READ");
}

/*
 * A TM SRQ whose CQ has no TM info, polled with ibv_poll_cq, on a pair of
 * its own; last, eager data longer than the tag's buffer breaks the pair.
 */
static void plain_cq(void)
{
	const char *what = "CQ without TM info";
	struct ibv_cq_init_attr_ex ca = { .cqe = 64,
					  .wc_flags = IBV_WC_STANDARD_FLAGS };
	struct tag t = { .tag = 0x8001, .mask = ~0ull, .id = 0x3701,
			 .slot = 26 };
	struct tag l = { .tag = 0x8002, .mask = ~0ull, .id = 0x3702,
			 .slot = 27 };
	struct dp_qp s3 = { 0 }, r3 = { 0 };
	struct ibv_cq_ex *cx;
	struct ibv_cq *cq;
	struct dp_wc_want w;
	struct ibv_srq *s;
	struct ibv_wc wc;
	uint64_t sid;
	int r;

	cx = ibv_create_cq_ex(dev.ctx, &ca);
	if (!cx)
		tap_bail("ibv_create_cq_ex: %s", strerror(errno));
	cq = ibv_cq_ex_to_cq(cx);
	s = tm_srq(cq, TM_MASK, 4, 4);
	if (!tap_ok(s != NULL, "%s: a TM SRQ on it", what))
		tap_bail("TM SRQ: %s", strerror(errno));
	qp_make(&s3, NULL);
	qp_make(&r3, s);
	connect2(&s3, &r3);

	add2(s, cq, &t, SLOT, what);
	send_msg(&s3, IBV_TMH_EAGER, t.tag, 500, what);
	w = dp_want(t.id, IBV_WC_TM_RECV);
	w.byte_len = 500 - TMH_LEN;
	w.wc_flags = IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID;
	w.flags_ignore = IBV_WC_GRH;
	w.qp_num = r3.qp->qp_num;
	dp_expect(cq, &w, "%s: TM_RECV SUCCESS, MATCH|DATA_VALID, byte_len 484",
		  what);
	check_data(t.slot, sbuf + TMH_LEN, 500 - TMH_LEN, what);

	what = "EAGER of 200 B into a 64 B tag";
	add2(s, cq, &l, 64, what);
	build(IBV_TMH_EAGER, l.tag, TMH_LEN + 200);
	sid = send_id++;
	r = dp_post_send1(s3.qp, sid, IBV_WR_SEND, sbuf, TMH_LEN + 200,
			  smr->lkey, 0, 0, 0);
	tap_ret_errno(r, 0, "%s: post the SEND", what);
	w = dp_want(l.id, -1);
	w.status = IBV_WC_LOC_LEN_ERR;
	w.qp_num = r3.qp->qp_num;
	dp_expect(cq, &w, "%s: LOC_LEN_ERR for the tag's recv_wr_id", what);
	w = dp_want(sid, -1);
	w.status = IBV_WC_REM_INV_REQ_ERR;
	w.qp_num = s3.qp->qp_num;
	dp_expect(s3.scq, &w, "%s: REM_INV_REQ_ERR at the sender", what);
	tap_ret(qp_state(r3.qp), IBV_QPS_ERR, "%s: the receiving QP in ERROR",
		what);
	tap_ok(dp_verify_byte(slot(l.slot) + 64, SLOT - 64, CANARY) < 0,
	       "%s: nothing written past the 64 B", what);

	tap_ret(ibv_poll_cq(r3.rcq, 1, &wc), 0,
		"%s: the QP's own recv_cq got nothing", "TM SRQ 2");
	tap_ok(!ibv_destroy_qp(s3.qp) && !ibv_destroy_qp(r3.qp),
	       "TM SRQ 2: destroy its QPs");
	tap_ret_errno(ibv_destroy_srq(s), 0, "TM SRQ 2: destroy it");
	tap_ok(!ibv_destroy_cq(s3.scq) && !ibv_destroy_cq(s3.rcq) &&
	       !ibv_destroy_cq(r3.scq) && !ibv_destroy_cq(r3.rcq),
	       "TM SRQ 2: destroy the QPs' CQs");
	tap_ret_errno(ibv_destroy_cq(cq), 0, "TM SRQ 2: destroy its CQ");
}

/*
 * An unexpected message that never completes is not counted: on a pair of
 * its own (s5, and r5 on the main SRQ with a send queue of its own), the
 * only SRQ WQE holds 100 B and an EAGER of 2600 B (3 packets) for no tag
 * arrives.  Its first packet does not fit: LOC_LEN_ERR for that SRQ WQE,
 * r5 to ERROR, REM_INV_REQ_ERR at the sender, the rest never placed.  The
 * device's count stays where it was (the model's dev_cnt too): an ADD in
 * sync completes without TM_SYNC_REQ and s1's message for its tag
 * matches it.  Called with no tag live and no SRQ WQE posted.
 */
static void unexp_abort(void)
{
	const char *what = "unexpected EAGER failing mid-message";
	struct tag t = { .tag = 0x9300, .mask = ~0ull, .id = 0x3d01,
			 .slot = 44 };
	struct ibv_sge sge = slot_sge(WQE_SLOT, 0, 100);
	struct ibv_recv_wr rw = { .wr_id = wqe_id++, .sg_list = &sge,
				  .num_sge = 1 }, *rbad;
	struct dp_qp s5 = { 0 }, r5 = { 0 };
	struct dp_wc_want dw;
	struct ibv_wc wc;
	uint64_t sid;
	int r;

	qp_make(&s5, NULL);
	qp_make(&r5, srq);
	connect2(&s5, &r5);
	/* the premise: the counts equal, as the device has them */
	sync_op(SIG | SYNC, dev_cnt, "before the failing message: sync");

	memset(slot(WQE_SLOT), CANARY, SLOT);
	r = ibv_post_srq_recv(srq, &rw, &rbad);
	if (r)
		tap_bail("ibv_post_srq_recv on the TM SRQ: %s", strerror(r));
	build(IBV_TMH_EAGER, NO_TAG | 10, 2600);
	sid = send_id++;
	r = dp_post_send1(s5.qp, sid, IBV_WR_SEND, sbuf, 2600, smr->lkey, 0,
			  0, 0);
	tap_ret_errno(r, 0, "%s: post the 2600 B SEND (3 packets)", what);

	expect_tm_error(rw.wr_id, IBV_WC_LOC_LEN_ERR, r5.qp->qp_num,
			"the 100 B SRQ WQE's", what);
	dw = dp_want(sid, -1);
	dw.status = IBV_WC_REM_INV_REQ_ERR;
	dw.qp_num = s5.qp->qp_num;
	dp_expect(s5.scq, &dw, "%s: REM_INV_REQ_ERR at the sender", what);
	tap_ret(wait_state(r5.qp, IBV_QPS_ERR, 2000), IBV_QPS_ERR,
		"%s: the receiving QP in ERROR", what);
	tap_ret(wait_state(s5.qp, IBV_QPS_ERR, 2000), IBV_QPS_ERR,
		"%s: the sender's QP in ERROR", what);
	tap_ok(dp_verify_byte(slot(WQE_SLOT) + 100, SLOT - 100, CANARY) < 0,
	       "%s: nothing written past the SRQ WQE's 100 B", what);
	/* the receiver's flush has no receive WQE of its own to complete */
	expect_none("%s: nothing more on the SRQ's CQ", what);
	tap_ret(ibv_poll_cq(r5.scq, 1, &wc) + ibv_poll_cq(r5.rcq, 1, &wc), 0,
		"%s: the receiving QP's own CQs got nothing", what);

	/* not counted: dev_cnt stays, the counts are still equal */
	add(&t, SIG, 0, "after the failed message, not counted");
	eager(&s1, &r1, &t, t.tag, 200,
	      "after the failed message: the tag added in sync matches");
	del(t.handle, 0, 0, IBV_WC_TM_ERR,
	    "after the failed message: the tag is consumed");

	tap_ok(!ibv_destroy_qp(s5.qp) && !ibv_destroy_qp(r5.qp) &&
	       !ibv_destroy_cq(s5.scq) && !ibv_destroy_cq(s5.rcq) &&
	       !ibv_destroy_cq(r5.scq) && !ibv_destroy_cq(r5.rcq),
	       "%s: destroy the broken pair and its CQs", what);
}

/* ------------------------------------------------------------------ */
/* Cut-off messages and a failing WRITE with immediate, with faults    */
/* ------------------------------------------------------------------ */

/* RC BTH opcodes the fault rules name */
#define OP_SEND_LAST	0x02
#define OP_READ_REQ	0x0c

static bool fault_live;

/* "clear": no rule outlives its check, a bail-out included */
static void fault_clear(void)
{
	int r = dp_fault_write(dev.name, "clear");

	if (r)
		tap_diag("  writing \"clear\" to the fault file: %s",
			 strerror(r));
	fault_live = false;
}

static void fault_atexit(void)
{
	if (fault_live)
		fault_clear();
}

/* one rule alone in the fault file; one TAP line */
static bool fault_rule(const char *what, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static bool fault_rule(const char *what, const char *fmt, ...)
{
	static bool registered;
	char line[256];
	va_list ap;
	int r;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (!registered && !atexit(fault_atexit))
		registered = true;
	fault_live = true;
	dp_fault_write(dev.name, "clear");
	r = dp_fault_write(dev.name, line);
	if (r)
		fault_clear();
	return tap_ret_errno(r, 0, "%s: fault rule \"%s\" accepted", what,
			     line);
}

/* the fault file's content as a diagnostic (matched/fired counts) */
static void fault_diag(const char *what)
{
	char path[256], buf[512], *nl;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/fault",
		 dev.name);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	nl = strchr(buf, '\n');
	if (nl)
		*nl = 0;
	tap_diag("  %s: the fault file reads \"%s\"", what, buf);
}

/* a pair's QPs (those not destroyed yet) and CQs; one TAP line */
static void pair_destroy(struct dp_qp *s, struct dp_qp *r, const char *what)
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

/*
 * A rendezvous READ left in the kernel SQ of a QP without a send queue
 * (on a fresh pair of its own): the receiver's READ requests are
 * dropped, so after the MATCH the READ (and the FIN fenced behind it)
 * stays.  RESET (or, destroy: ibv_destroy_qp) of the receiver completes
 * the tag's buffer with WR_FLUSH_ERR, once; no FIN reaches the sender.
 * Matched, so not counted.
 */
static void rndv_left(bool destroy, int tslot, const char *what)
{
	struct tag t = { .tag = 0x9400 + tslot, .mask = ~0ull,
			 .id = 0x3e00 + tslot, .slot = tslot };
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_RESET };
	struct ibv_sge one = slot_sge(t.slot, 0, SLOT);
	uint8_t *fb = fbuf + NFIN * FIN_SLOT;
	struct dp_qp s = { 0 }, r = { 0 };
	struct tm_want w;
	struct ibv_wc wc;
	struct rndv m;
	uint32_t rqpn;
	int n;

	qp_make(&s, NULL);
	qp_make_tm(&r, what);
	connect2(&s, &r);
	rqpn = r.qp->qp_num;
	if (!fault_rule(what, "drop qpn=%u opcode=%d", rqpn, OP_READ_REQ)) {
		pair_destroy(&s, &r, what);
		return;
	}
	add_sg(&t, &one, 1, what);
	memset(fb, CANARY, FIN_SLOT);
	n = dp_post_recv1(s.qp, 0x7200 + tslot, fb, FIN_SLOT, fmr->lkey);
	if (n)
		tap_bail("ibv_post_recv on the sender: %s", strerror(n));
	rndv_build(&m, 0, t.tag, 64, rndv_src(4, 1000), xmr->rkey, 1000);
	/* acknowledged before the receiver is touched */
	if (rndv_post(&s, &m, what))
		rndv_sent(&s, &m, what);
	w = want_rndv_match(&r, &t, &m);
	expect_tm(&w, "%s: TM_RECV SUCCESS, MATCH only, byte_len 0, tag, app_ctx (the READ request dropped)",
		  what);
	fault_diag(what);
	if (destroy) {
		tap_ret_errno(ibv_destroy_qp(r.qp), 0,
			      "%s: ibv_destroy_qp of the receiving QP, its READ in the kernel SQ",
			      what);
		r.qp = NULL;
	} else {
		tap_ret_errno(ibv_modify_qp(r.qp, &qa, IBV_QP_STATE), 0,
			      "%s: ibv_modify_qp of the receiving QP to RESET, its READ in the kernel SQ",
			      what);
	}
	expect_tm_error(t.id, IBV_WC_WR_FLUSH_ERR, rqpn,
			"the READ left: the tag's", what);
	expect_none("%s: exactly one completion: nothing more on the SRQ's CQ",
		    what);
	n = dp_poll_none(s.rcq, &wc, 100);
	if (!tap_ret(n, 0, "%s: no FIN at the sender (its receive WQE unused)",
		     what) && n > 0)
		tap_diag("  wr_id %#llx %s byte_len %u",
			 (unsigned long long)wc.wr_id,
			 ibv_wc_status_str(wc.status), wc.byte_len);
	fault_clear();
	del(t.handle, 0, 0, IBV_WC_TM_ERR,
	    destroy ? "READ left at destroy: the tag is consumed" :
		      "READ left at RESET: the tag is consumed");
	pair_destroy(&s, &r, what);
	if (!destroy)
		expect_none("%s: destroying the reset QP completes nothing again",
			    what);
}

/*
 * A matched 3-packet EAGER cut off: on a fresh pair (the receiver with a
 * send queue of its own) the sender's SEND_LAST is dropped, every time
 * it is sent again.  The MATCH comes at the first packet; RESET of the
 * receiver then completes the buffer with WR_FLUSH_ERR (the SRQ's, and
 * reported matched).  Matched, so not counted.
 */
static void eager_cut_off(void)
{
	const char *what = "3-packet EAGER cut off by RESET";
	struct tag t = { .tag = 0x9500, .mask = ~0ull, .id = 0x3e10,
			 .slot = 28 };
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_RESET };
	struct dp_qp s = { 0 }, r = { 0 };
	struct tm_want w;
	uint32_t rqpn;
	int rc;

	qp_make(&s, NULL);
	qp_make(&r, srq);
	connect2(&s, &r);
	rqpn = r.qp->qp_num;
	if (!fault_rule(what, "drop qpn=%u opcode=%d", s.qp->qp_num,
			OP_SEND_LAST)) {
		pair_destroy(&s, &r, what);
		return;
	}
	add(&t, SIG, 0, what);
	build(IBV_TMH_EAGER, t.tag, 2600);
	rc = dp_post_send1(s.qp, send_id++, IBV_WR_SEND, sbuf, 2600, smr->lkey,
			   0, 0, 0);
	tap_ret_errno(rc, 0,
		      "%s: post the 2600 B SEND (3 packets, its SEND_LAST dropped)",
		      what);
	w = want(t.id, IBV_WC_TM_RECV);
	w.byte_len = 0;
	w.flags = IBV_WC_TM_MATCH;
	w.ignore = sync_req();
	w.qp_num = rqpn;
	w.tm = true;
	w.tag = msg_tag;
	w.priv = msg_ctx;
	expect_tm(&w, "%s: TM_RECV SUCCESS, MATCH only, byte_len 0, tag, app_ctx",
		  what);
	expect_none("%s: no DATA_VALID (the last packet never arrives)", what);
	fault_diag(what);
	tap_ret_errno(ibv_modify_qp(r.qp, &qa, IBV_QP_STATE), 0,
		      "%s: ibv_modify_qp of the receiving QP to RESET mid-message",
		      what);
	expect_tm_error(t.id, IBV_WC_WR_FLUSH_ERR, rqpn,
			"the matched buffer: the tag's", what);
	expect_none("%s: nothing more on the SRQ's CQ", what);
	fault_clear();
	del(t.handle, 0, 0, IBV_WC_TM_ERR, "EAGER cut off: the tag is consumed");
	pair_destroy(&s, &r, what);
	expect_none("%s: destroying the reset QP completes nothing again",
		    what);
}

/*
 * A QP without a send queue connected with max_rd_atomic 0 may not READ:
 * a matched one-packet RNDV is handed to software (RNDV_INCOMPLETE,
 * MATCH|DATA_VALID, the whole message in the buffer), no FIN.  dp_conn's
 * rd_atomic sets max_rd_atomic (RTS) and max_dest_rd_atomic (RTR) alike;
 * nothing READs from the receiver, so 0 for both.
 */
static void rndv_no_rd_atomic(void)
{
	const char *what = "RNDV on a QP without a send queue, max_rd_atomic 0";
	struct tag t = { .tag = 0x9600, .mask = ~0ull, .id = 0x3e20,
			 .slot = 29 };
	struct ibv_sge one = slot_sge(t.slot, 0, SLOT);
	uint8_t *fb = fbuf + NFIN * FIN_SLOT;
	struct dp_qp s = { 0 }, r = { 0 };
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr qa;
	struct dp_conn c;
	struct tm_want w;
	struct ibv_wc wc;
	struct rndv m;
	int rc, n;

	qp_make(&s, NULL);
	qp_make_tm(&r, what);
	dp_conn_default(&c);
	rc = dp_connect(s.qp, &dev, &dev.gid, r.qp->qp_num, &c);
	c.rd_atomic = 0;
	if (!rc)
		rc = dp_connect(r.qp, &dev, &dev.gid, s.qp->qp_num, &c);
	if (rc)
		tap_bail("connect (the receiver with rd_atomic 0): %s",
			 strerror(rc));
	memset(&qa, 0, sizeof(qa));
	memset(&ia, 0, sizeof(ia));
	rc = ibv_query_qp(r.qp, &qa, IBV_QP_STATE | IBV_QP_MAX_QP_RD_ATOMIC,
			  &ia);
	if (!tap_ok(!rc && qa.qp_state == IBV_QPS_RTS && !qa.max_rd_atomic,
		    "%s: ibv_query_qp: RTS, max_rd_atomic 0", what))
		tap_diag("  ret %d, state %d, max_rd_atomic %u", rc,
			 qa.qp_state, qa.max_rd_atomic);

	add_sg(&t, &one, 1, what);
	memset(fb, CANARY, FIN_SLOT);
	n = dp_post_recv1(s.qp, 0x7300, fb, FIN_SLOT, fmr->lkey);
	if (n)
		tap_bail("ibv_post_recv on the sender: %s", strerror(n));
	rndv_build(&m, 0, t.tag, 64, rndv_src(3, 1000), xmr->rkey, 1000);
	if (rndv_post(&s, &m, what))
		rndv_sent(&s, &m, what);
	w = want_matched(&t, r.qp->qp_num, 64, m.tag, m.ctx);
	w.status = IBV_WC_TM_RNDV_INCOMPLETE;
	expect_tm(&w, "%s: TM_RECV RNDV_INCOMPLETE, MATCH|DATA_VALID, byte_len 64, tag, app_ctx",
		  what);
	check_scatter(t.slot, &one, 1, m.hdr, 64, what);
	n = dp_poll_none(s.rcq, &wc, 100);
	if (!tap_ret(n, 0, "%s: no FIN: the sender's receive WQE stays unused",
		     what) && n > 0)
		tap_diag("  wr_id %#llx %s byte_len %u",
			 (unsigned long long)wc.wr_id,
			 ibv_wc_status_str(wc.status), wc.byte_len);
	expect_none("%s: nothing more on the SRQ's CQ (no DATA_VALID)", what);
	del(t.handle, 0, 0, IBV_WC_TM_ERR,
	    "RNDV with max_rd_atomic 0: the tag is consumed");
	n = ibv_poll_cq(r.scq, 1, &wc) + ibv_poll_cq(r.rcq, 1, &wc);
	tap_ret(n, 0, "%s: the receiving QP's own CQs got nothing", what);
	pair_destroy(&s, &r, what);
}

/*
 * A completed unexpected message, then a WRITE with immediate that takes
 * an SRQ WQE and fails (its rkey names no MR) on the same QP, on a fresh
 * pair of its own: the message stays counted (the failure must not take
 * it out of the counts again).  The counts, synced after the message,
 * stay equal: on the healthy r1 an ADD completes without TM_SYNC_REQ and
 * a message for it matches.
 */
static void write_imm_after_unexp(void)
{
	const char *what = "failing WRITE with immediate after an unexpected message";
	struct tag t = { .tag = 0x9700, .mask = ~0ull, .id = 0x3e30,
			 .slot = 30 };
	struct dp_qp s = { 0 }, r = { 0 };
	struct dp_wc_want dw;
	struct ibv_wc wc;
	struct tm_wc g;
	uint64_t wqe, sid;
	int rc, n;

	qp_make(&s, NULL);
	qp_make(&r, srq);
	connect2(&s, &r);
	unexpected(&s, &r, IBV_TMH_EAGER, NO_TAG | 11, 100,
		   "WRITE with immediate after it: an EAGER without a tag");
	sync_op(SIG | SYNC, dev_cnt,
		"WRITE with immediate after an unexpected message: sync");

	wqe = post_wqe();
	sid = send_id++;
	rc = dp_post_send1(s.qp, sid, IBV_WR_RDMA_WRITE_WITH_IMM, sbuf, 8,
			   smr->lkey, (uintptr_t)xbuf, xmr->rkey ^ 0x100, 0);
	tap_ret_errno(rc, 0,
		      "%s: post an 8 B RDMA WRITE with immediate, rkey ^ 0x100 (no MR)",
		      what);
	n = dp_poll_ex(tcq, 1, read_wc, &g);
	if (n == 1)
		tap_diag("  the SRQ WQE's completion: %s",
			 ibv_wc_status_str(g.status));
	if (!tap_ok(n == 1 && g.wr_id == wqe && g.status != IBV_WC_SUCCESS &&
		    g.qp_num == r.qp->qp_num,
		    "%s: an error completion for the SRQ WQE %#llx it took",
		    what, (unsigned long long)wqe)) {
		if (n == 1)
			tm_diag("got", &g);
		else
			tap_diag("  no completion within %d ms", DP_WAIT_MS);
	}
	dw = dp_want(sid, -1);
	dw.status = IBV_WC_REM_ACCESS_ERR;
	dw.qp_num = s.qp->qp_num;
	dp_expect(s.scq, &dw, "%s: REM_ACCESS_ERR at the sender", what);
	tap_ret(wait_state(r.qp, IBV_QPS_ERR, 2000), IBV_QPS_ERR,
		"%s: the receiving QP in ERROR", what);
	expect_none("%s: nothing more on the SRQ's CQ", what);
	n = ibv_poll_cq(r.scq, 1, &wc) + ibv_poll_cq(r.rcq, 1, &wc);
	tap_ret(n, 0, "%s: the receiving QP's own CQs got nothing", what);

	/* the counts equal, as the model has them */
	add(&t, SIG, 0, "after the failed WRITE with immediate, counts equal");
	eager(&s1, &r1, &t, t.tag, 200,
	      "after the failed WRITE with immediate: a tag added in sync matches");
	del(t.handle, 0, 0, IBV_WC_TM_ERR,
	    "after the failed WRITE with immediate: the tag is consumed");
	pair_destroy(&s, &r, what);
}

static void teardown(void)
{
	struct dp_qp *q[] = { &s1, &r1, &s2, &r2 };
	struct ibv_wc wc;
	int i, n = 0, bad = 0;

	n = ibv_poll_cq(r1.rcq, 1, &wc) + ibv_poll_cq(r2.rcq, 1, &wc);
	tap_ret(n, 0,
		"the receiving QPs' own recv_cqs got nothing: all went to the SRQ's CQ");
	expect_none("nothing left on the SRQ's CQ");
	for (i = 0; i < 4; i++)
		bad += !!ibv_destroy_qp(q[i]->qp);
	tap_ret(bad, 0, "destroy the 4 QPs");
	tap_ret_errno(ibv_destroy_srq(srq), 0, "destroy the TM SRQ");
	tap_ret_errno(ibv_destroy_cq(ibv_cq_ex_to_cq(tcq)), 0,
		      "destroy the TM SRQ's CQ");
	for (i = 0, bad = 0; i < 4; i++)
		bad += !!ibv_destroy_cq(q[i]->scq) + !!ibv_destroy_cq(q[i]->rcq);
	tap_ret(bad, 0, "destroy the QPs' 8 CQs");
	tap_ok(!ibv_dereg_mr(smr) && !ibv_dereg_mr(rmr) && !ibv_dereg_mr(xmr) &&
	       !ibv_dereg_mr(xmr_local) && !ibv_dereg_mr(fmr),
	       "deregister the MRs");
	tap_ret_errno(ibv_dealloc_pd(dev.pd), 0, "dealloc the PD");
	dev.pd = NULL;
	tap_ret_errno(ibv_close_device(dev.ctx), 0, "close the device");
	dev.ctx = NULL;
	free(sbuf);
	free(rbuf);
	free(xbuf);
	free(fbuf);
}

int main(void)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 256,
		.wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_TM_INFO,
	};

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
	if (!tap_ok(tcq && tcq->read_tm_info,
		    "ibv_create_cq_ex with IBV_WC_EX_WITH_TM_INFO, read_tm_info installed"))
		tap_bail("CQ with TM info: %s", tcq ? "no read_tm_info" :
			 strerror(errno));
	create_errors();
	srq = tm_srq(ibv_cq_ex_to_cq(tcq), TM_MASK, TAGS, OPS);
	if (!tap_ok(srq != NULL, "create TM SRQ: max_num_tags 8, max_ops 8"))
		tap_bail("TM SRQ: %s", strerror(errno));
	qp_make(&s1, NULL);
	qp_make(&r1, srq);
	qp_make(&s2, NULL);
	qp_make(&r2, srq);
	connect2(&s1, &r1);
	connect2(&s2, &r2);

	rc_only();
	ops_errors();
	ops_basic();
	eager_tests();
	unexpected_msgs();
	phase();
	not_tagged();
	rndv_match();
	rndv_offload();
	two_qps();
	limits();
	masks();
	rnr();
	plain_cq();
	rndv_errors();
	unexp_abort();
	rndv_left(false, 45, "RNDV READ left at RESET");
	rndv_left(true, 46, "RNDV READ left at destroy");
	eager_cut_off();
	rndv_no_rd_atomic();
	write_imm_after_unexp();
	teardown();
	return tap_done();
}
