// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: RC data path: every opcode byte-exact at 0 B..1 MiB, unaligned, multi-SGE, inline, atomics, SEND_WITH_INV through a type 2 window, MTU 256/1024/4096; device to device over a veth
 *
 * RC data path, every opcode, byte for byte: two RC QPs on the device
 * under test connected to each other over its IPv4 RoCEv2 GID (loopback),
 * at path MTU 1024 (every size and opcode, aligned and unaligned), 256 and
 * 4096 (the netdev MTU is raised for 4096 and restored).  Multi-SGE gather
 * and scatter up to max_send_sge / max_recv_sge, inline sends up to
 * max_inline_data (the buffer is overwritten right after the post), both
 * atomics, and SEND_WITH_INV through a type 2 memory window.
 *
 * On rxe2 a second section links two more rxe2 devices to a veth pair of
 * its own and runs the same traffic device to device (rdma_rxe of Linux
 * 6.1 receives only on the ingress netdev, so two of its links in one
 * namespace cannot reach each other: skipped there).
 *
 * Every completion is checked field by field: wr_id, status, opcode,
 * byte_len (receives, READ, atomics), wc_flags, imm_data, invalidated
 * rkey, qp_num.  Receive buffers are posted larger than the message and
 * surrounded by canaries: a byte written outside the message fails.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dp.h"
#include "tap.h"
#include "util.h"

#define BUFSZ ((1u << 20) + 3 * 4096)
#define CANARY 0xa5
#define GUARD 64
#define MAX_SGE 32

struct side {
	struct dp_dev *d;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
	uint8_t *buf;
	struct ibv_mr *mr;
};

struct pair {
	struct side a, b;
	const char *tag;
	int max_send_sge, max_recv_sge;
	uint32_t max_inline;
};

static uint32_t seed = 1;
static uint64_t next_wr_id = 0x1000;

static const size_t sizes[] = { 0, 1, 63, 64, 255, 4096, 4097, 65536,
				1u << 20 };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

static bool side_setup(struct side *s, struct dp_dev *d,
		       const struct ibv_qp_cap *cap, struct ibv_qp_cap *got)
{
	struct ibv_qp_init_attr init = { 0 };
	struct ibv_qp_attr attr;

	s->d = d;
	s->scq = ibv_create_cq(d->ctx, 256, NULL, NULL, 0);
	s->rcq = ibv_create_cq(d->ctx, 256, NULL, NULL, 0);
	if (!s->scq || !s->rcq)
		return false;
	s->qp = dp_create_qp(d, IBV_QPT_RC, s->scq, s->rcq, NULL, cap);
	if (!s->qp)
		return false;
	if (got && !ibv_query_qp(s->qp, &attr, IBV_QP_CAP, &init))
		*got = init.cap;
	s->buf = dp_alloc(BUFSZ);
	s->mr = dp_reg(d->pd, s->buf, BUFSZ, DP_ACCESS_ALL);
	return true;
}

static void side_free(struct side *s)
{
	if (s->qp)
		ibv_destroy_qp(s->qp);
	if (s->mr)
		ibv_dereg_mr(s->mr);
	if (s->scq)
		ibv_destroy_cq(s->scq);
	if (s->rcq)
		ibv_destroy_cq(s->rcq);
	free(s->buf);
	memset(s, 0, sizeof(*s));
}

/* Caps: as many SGEs as the device allows (up to MAX_SGE), some inline. */
static bool pair_setup(struct pair *p, const char *tag, struct dp_dev *da,
		       struct dp_dev *db, enum ibv_mtu mtu)
{
	struct ibv_qp_cap cap = { .max_send_wr = 64, .max_recv_wr = 64,
				  .max_inline_data = 256 };
	struct ibv_qp_cap got = { 0 };
	struct dp_conn c;
	int e;

	memset(p, 0, sizeof(*p));
	p->tag = tag;
	cap.max_send_sge = da->attr.max_sge < MAX_SGE ? da->attr.max_sge :
							MAX_SGE;
	cap.max_recv_sge = cap.max_send_sge;
	if (!side_setup(&p->a, da, &cap, &got) ||
	    !side_setup(&p->b, db, &cap, NULL)) {
		e = errno;
		tap_ok(false, "%s: create CQs and QPs", tag);
		tap_diag("  %s", strerror(e));
		return false;
	}
	p->max_send_sge = got.max_send_sge ? (int)got.max_send_sge :
					     (int)cap.max_send_sge;
	p->max_recv_sge = got.max_recv_sge ? (int)got.max_recv_sge :
					     (int)cap.max_recv_sge;
	if (p->max_send_sge > MAX_SGE)
		p->max_send_sge = MAX_SGE;
	if (p->max_recv_sge > MAX_SGE)
		p->max_recv_sge = MAX_SGE;
	p->max_inline = got.max_inline_data;
	dp_conn_default(&c);
	c.mtu = mtu;
	e = dp_connect(p->a.qp, da, &db->gid, p->b.qp->qp_num, &c);
	if (!e)
		e = dp_connect(p->b.qp, db, &da->gid, p->a.qp->qp_num, &c);
	if (!tap_ret_errno(e, 0, "%s: connect RC QPs %#x <-> %#x at MTU %d",
			   tag, p->a.qp->qp_num, p->b.qp->qp_num,
			   128 << mtu))
		return false;
	return true;
}

static void pair_free(struct pair *p)
{
	side_free(&p->a);
	side_free(&p->b);
}

static const char *op_name(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_SEND: return "SEND";
	case IBV_WR_SEND_WITH_IMM: return "SEND_WITH_IMM";
	case IBV_WR_SEND_WITH_INV: return "SEND_WITH_INV";
	case IBV_WR_RDMA_WRITE: return "RDMA_WRITE";
	case IBV_WR_RDMA_WRITE_WITH_IMM: return "RDMA_WRITE_WITH_IMM";
	case IBV_WR_RDMA_READ: return "RDMA_READ";
	case IBV_WR_ATOMIC_CMP_AND_SWP: return "ATOMIC_CMP_AND_SWP";
	case IBV_WR_ATOMIC_FETCH_AND_ADD: return "ATOMIC_FETCH_AND_ADD";
	default: return "?";
	}
}

static int send_wc_opcode(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return IBV_WC_RDMA_WRITE;
	case IBV_WR_RDMA_READ:
		return IBV_WC_RDMA_READ;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		return IBV_WC_COMP_SWAP;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return IBV_WC_FETCH_ADD;
	default:
		return IBV_WC_SEND;
	}
}

/*
 * The message is the concatenation of nsge pieces; piece i of layout
 * "salt" lives at a scattered, unaligned place in the buffer.  lens sum
 * to len; the last piece may be empty.
 */
static void layout(size_t len, int nsge, unsigned int salt, size_t base,
		   size_t *off, size_t *lens)
{
	size_t pos = base, left = len;
	int i;

	for (i = 0; i < nsge; i++) {
		size_t l = (i == nsge - 1) ? left :
			   left / (nsge - i) + ((i + salt) % 3) - 1;

		if (l > left || (i < nsge - 1 && left < (size_t)(nsge - i)))
			l = i == nsge - 1 ? left : left / (nsge - i);
		off[i] = pos;
		lens[i] = l;
		left -= l;
		/* a gap of 1..13 bytes between pieces */
		pos += l + 1 + (i * 7 + salt) % 13;
	}
}

/* End of the laid-out area (exclusive). */
static size_t layout_end(int nsge, const size_t *off, const size_t *lens)
{
	return off[nsge - 1] + lens[nsge - 1];
}

static void fill_pieces(uint8_t *buf, int nsge, const size_t *off,
			const size_t *lens, uint32_t s)
{
	static uint8_t tmp[BUFSZ];
	size_t pos = 0;
	int i;

	dp_fill(tmp, layout_end(nsge, off, lens) - off[0] + 1, s);
	for (i = 0; i < nsge; i++) {
		memcpy(buf + off[i], tmp + pos, lens[i]);
		pos += lens[i];
	}
}

/* -1 when the pieces hold the pattern, else the first bad message offset */
static long verify_pieces(const uint8_t *buf, int nsge, const size_t *off,
			  const size_t *lens, uint32_t s, size_t total)
{
	static uint8_t tmp[BUFSZ];
	size_t pos = 0;
	int i;

	for (i = 0; i < nsge; i++) {
		memcpy(tmp + pos, buf + off[i], lens[i]);
		pos += lens[i];
	}
	return dp_verify(tmp, total, s);
}

/* Every byte of buf[from, to) outside the pieces is still CANARY. */
static long verify_gaps(const uint8_t *buf, size_t from, size_t to, int nsge,
			const size_t *off, const size_t *lens)
{
	size_t i;
	int k;

	for (i = from; i < to; i++) {
		bool inside = false;

		for (k = 0; k < nsge; k++)
			if (i >= off[k] && i < off[k] + lens[k]) {
				inside = true;
				break;
			}
		if (!inside && buf[i] != CANARY)
			return (long)i;
	}
	return -1;
}

static int post_recv_sges(struct side *s, uint64_t wr_id, int nsge,
			  const size_t *off, const size_t *lens)
{
	struct ibv_sge sge[MAX_SGE];
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = sge,
				  .num_sge = nsge }, *bad = NULL;
	int i;

	for (i = 0; i < nsge; i++) {
		sge[i].addr = (uintptr_t)s->buf + off[i];
		sge[i].length = lens[i];
		sge[i].lkey = s->mr->lkey;
	}
	return ibv_post_recv(s->qp, &wr, &bad);
}

/*
 * One message of op from A to B (READ: B's memory into A's), len bytes
 * gathered from nsg source pieces and scattered to nsr destination pieces
 * (one remote range for RDMA).  salt changes the offsets (0: aligned,
 * single-SGE layouts start at offset 0).
 */
static void one_op(struct pair *p, enum ibv_wr_opcode op, size_t len,
		   int nsg, int nsr, unsigned int salt, bool inl)
{
	size_t soff[MAX_SGE], slen[MAX_SGE], doff[MAX_SGE], dlen[MAX_SGE];
	struct ibv_sge sge[MAX_SGE];
	struct ibv_send_wr wr, *bad = NULL;
	struct side *src, *dst;
	bool rdma = op == IBV_WR_RDMA_WRITE ||
		    op == IBV_WR_RDMA_WRITE_WITH_IMM ||
		    op == IBV_WR_RDMA_READ;
	bool has_recv = op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM ||
			op == IBV_WR_RDMA_WRITE_WITH_IMM;
	bool imm = op == IBV_WR_SEND_WITH_IMM ||
		   op == IBV_WR_RDMA_WRITE_WITH_IMM;
	uint64_t id = next_wr_id++;
	uint32_t immv = 0x1234567 * (uint32_t)id;
	char what[160];
	size_t sbase = salt ? 1 + salt % 7 : 0, dbase = salt ? 3 + salt % 5 : 0;
	size_t end, rlen_extra = op == IBV_WR_SEND ||
				 op == IBV_WR_SEND_WITH_IMM ? GUARD : 0;
	struct dp_wc_want w;
	long bad_at;
	int r, i;

	snprintf(what, sizeof(what), "%s: %s%s %zu B, %d->%d SGE%s", p->tag,
		 op_name(op), inl ? " inline" : "", len, nsg, nsr,
		 salt ? ", unaligned" : "");
	seed++;
	/* READ moves B's memory into A's: swap the roles of the buffers. */
	src = op == IBV_WR_RDMA_READ ? &p->b : &p->a;
	dst = op == IBV_WR_RDMA_READ ? &p->a : &p->b;
	if (op == IBV_WR_RDMA_READ)
		nsr = 1;	/* the remote range is one; scatter locally */
	layout(len, nsg, salt, sbase, soff, slen);
	layout(len, nsr, salt + 5, dbase, doff, dlen);
	if (op == IBV_WR_RDMA_READ) {
		/* local scatter list on A, one remote range on B */
		size_t t[MAX_SGE], tl[MAX_SGE];

		memcpy(t, soff, sizeof(t));
		memcpy(tl, slen, sizeof(tl));
		layout(len, 1, salt, sbase, soff, slen);
		memcpy(doff, t, sizeof(t));
		memcpy(dlen, tl, sizeof(tl));
		nsr = nsg;
		nsg = 1;
	}
	/* The last receive piece is posted GUARD bytes larger. */
	dlen[nsr - 1] += rlen_extra;
	end = layout_end(nsr, doff, dlen) + GUARD;
	memset(dst->buf, CANARY, end);
	fill_pieces(src->buf, nsg, soff, slen, seed);

	if (has_recv) {
		if (op == IBV_WR_RDMA_WRITE_WITH_IMM)
			r = post_recv_sges(dst, id, 0, doff, dlen);
		else
			r = post_recv_sges(dst, id, nsr, doff, dlen);
		if (!tap_ret_errno(r, 0, "%s: ibv_post_recv", what))
			return;
	}

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = id;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED | (inl ? IBV_SEND_INLINE : 0);
	wr.sg_list = sge;
	wr.num_sge = op == IBV_WR_RDMA_READ ? nsr : nsg;
	for (i = 0; i < wr.num_sge; i++) {
		if (op == IBV_WR_RDMA_READ) {
			sge[i].addr = (uintptr_t)p->a.buf + doff[i];
			sge[i].length = dlen[i];
		} else {
			sge[i].addr = (uintptr_t)p->a.buf + soff[i];
			sge[i].length = slen[i];
		}
		/* inline data needs no key: pass a wrong one */
		sge[i].lkey = inl ? 0xdead : p->a.mr->lkey;
	}
	if (imm)
		wr.imm_data = htobe32(immv);
	if (rdma) {
		struct side *remote = &p->b;
		size_t roff = op == IBV_WR_RDMA_READ ? soff[0] : doff[0];

		wr.wr.rdma.remote_addr = (uintptr_t)remote->buf + roff;
		wr.wr.rdma.rkey = remote->mr->rkey;
	}
	r = ibv_post_send(p->a.qp, &wr, &bad);
	if (!tap_ret_errno(r, 0, "%s: ibv_post_send", what))
		return;
	if (inl)	/* inline data was copied at post time */
		for (i = 0; i < nsg; i++)
			memset(src->buf + soff[i], 0x5a, slen[i]);

	w = dp_want(id, send_wc_opcode(op));
	/* as rdma_rxe and mlx5 do: requester completions of *_WITH_IMM too */
	w.wc_flags = imm ? IBV_WC_WITH_IMM : 0;
	w.qp_num = p->a.qp->qp_num;
	if (op == IBV_WR_RDMA_READ)
		w.byte_len = (long)len;
	dp_expect(p->a.scq, &w, "%s: requester completion", what);

	if (has_recv) {
		w = dp_want(id, op == IBV_WR_RDMA_WRITE_WITH_IMM ?
				IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV);
		w.byte_len = (long)len;
		w.wc_flags = imm ? IBV_WC_WITH_IMM : 0;
		w.flags_ignore = IBV_WC_GRH;	/* meaningless for RC */
		w.imm = immv;
		w.qp_num = p->b.qp->qp_num;
		dp_expect(p->b.rcq, &w, "%s: responder completion", what);
	}

	dlen[nsr - 1] -= rlen_extra;
	if (op == IBV_WR_RDMA_WRITE || op == IBV_WR_RDMA_WRITE_WITH_IMM) {
		/* one contiguous remote range */
		nsr = 1;
		doff[0] = dbase;
		dlen[0] = len;
	}
	bad_at = verify_pieces(dst->buf, nsr, doff, dlen, seed, len);
	if (!tap_ok(bad_at < 0, "%s: data byte-exact", what))
		tap_diag("  first bad message byte %ld", bad_at);
	bad_at = verify_gaps(dst->buf, 0, end, nsr, doff, dlen);
	if (!tap_ok(bad_at < 0, "%s: nothing written outside the message",
		    what))
		tap_diag("  buffer byte %ld is %#x", bad_at,
			 dst->buf[bad_at]);
}

static void sizes_matrix(struct pair *p, const size_t *sz, size_t nsz,
			 bool both_alignments)
{
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE,
		IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_READ,
	};
	size_t o, i;

	for (o = 0; o < sizeof(ops) / sizeof(ops[0]); o++)
		for (i = 0; i < nsz; i++) {
			if (both_alignments)
				one_op(p, ops[o], sz[i], 1, 1, 0, false);
			one_op(p, ops[o], sz[i], 1, 1, (unsigned int)i + 1,
			       false);
		}
}

static void multi_sge(struct pair *p)
{
	int ns = p->max_send_sge, nr = p->max_recv_sge;

	tap_diag("%s: max_send_sge %d, max_recv_sge %d, max_inline_data %u",
		 p->tag, ns, nr, p->max_inline);
	one_op(p, IBV_WR_SEND, 4097, ns, nr, 3, false);
	one_op(p, IBV_WR_SEND, 300, 2, nr, 4, false);
	one_op(p, IBV_WR_SEND_WITH_IMM, 5000, ns, 3 < nr ? 3 : nr, 5, false);
	one_op(p, IBV_WR_SEND, 65536, ns, nr, 6, false);
	one_op(p, IBV_WR_RDMA_WRITE, 9000, ns, 1, 7, false);
	one_op(p, IBV_WR_RDMA_WRITE_WITH_IMM, 3000, ns, 1, 8, false);
	one_op(p, IBV_WR_RDMA_READ, 9000, ns, 1, 9, false);
	one_op(p, IBV_WR_RDMA_READ, 1000, 2, 1, 10, false);
}

static void inline_sends(struct pair *p)
{
	struct ibv_send_wr wr, *bad = NULL;
	struct ibv_sge sge;
	uint32_t m = p->max_inline;
	int r;

	if (!m) {
		tap_skip("%s: max_inline_data is 0: no inline sends", p->tag);
		return;
	}
	one_op(p, IBV_WR_SEND, 1, 1, 1, 1, true);
	one_op(p, IBV_WR_SEND, m < 64 ? m : 64, 1, 1, 2, true);
	one_op(p, IBV_WR_SEND, m, 1, 1, 3, true);
	if (p->max_send_sge >= 2)
		one_op(p, IBV_WR_SEND_WITH_IMM, m, 2, 1, 4, true);
	one_op(p, IBV_WR_RDMA_WRITE, m, 1, 1, 5, true);
	one_op(p, IBV_WR_RDMA_WRITE_WITH_IMM, m - 1, 1, 1, 6, true);

	/* One byte over the limit is refused at post time. */
	memset(&wr, 0, sizeof(wr));
	sge = (struct ibv_sge){ .addr = (uintptr_t)p->a.buf,
				.length = m + 1 };
	wr.wr_id = 0xbad;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	r = ibv_post_send(p->a.qp, &wr, &bad);
	tap_ok(r != 0 && bad == &wr,
	       "%s: inline SEND of max_inline_data + 1 = %u B refused, bad_wr set (%s)",
	       p->tag, m + 1, strerror(r));
	if (p->a.d->rxe2)
		tap_ret_errno(r, EINVAL,
			      "%s: (rxe2) oversized inline SEND is EINVAL",
			      p->tag);
}

static int64_t rd64(const void *p)
{
	int64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static void atomic_one(struct pair *p, enum ibv_wr_opcode op, size_t roff,
		       uint64_t init, uint64_t cmp_add, uint64_t swap,
		       uint64_t want_after, const char *desc)
{
	struct ibv_send_wr wr, *bad = NULL;
	struct ibv_sge sge;
	struct dp_wc_want w;
	uint64_t id = next_wr_id++;
	size_t loff = 4096 + 8 * (id % 16);
	int r;

	memcpy(p->b.buf + roff, &init, 8);
	memset(p->a.buf + loff, CANARY, 24);
	sge = (struct ibv_sge){ .addr = (uintptr_t)p->a.buf + loff + 8,
				.length = 8, .lkey = p->a.mr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = id;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.atomic.remote_addr = (uintptr_t)p->b.buf + roff;
	wr.wr.atomic.rkey = p->b.mr->rkey;
	wr.wr.atomic.compare_add = cmp_add;
	wr.wr.atomic.swap = swap;
	r = ibv_post_send(p->a.qp, &wr, &bad);
	if (!tap_ret_errno(r, 0, "%s: %s %s: ibv_post_send", p->tag,
			   op_name(op), desc))
		return;
	w = dp_want(id, send_wc_opcode(op));
	w.byte_len = 8;
	w.wc_flags = 0;
	w.qp_num = p->a.qp->qp_num;
	dp_expect(p->a.scq, &w, "%s: %s %s: completion", p->tag, op_name(op),
		  desc);
	tap_ok((uint64_t)rd64(p->a.buf + loff + 8) == init &&
	       dp_verify_byte(p->a.buf + loff, 8, CANARY) < 0 &&
	       dp_verify_byte(p->a.buf + loff + 16, 8, CANARY) < 0,
	       "%s: %s %s: original value %#llx returned, neighbours intact",
	       p->tag, op_name(op), desc, (unsigned long long)init);
	if (!tap_ok((uint64_t)rd64(p->b.buf + roff) == want_after,
		    "%s: %s %s: remote memory is %#llx", p->tag, op_name(op),
		    desc, (unsigned long long)want_after))
		tap_diag("  got %#llx",
			 (unsigned long long)rd64(p->b.buf + roff));
}

static void atomics(struct pair *p)
{
	if (p->a.d->attr.atomic_cap == IBV_ATOMIC_NONE) {
		tap_skip("%s: device reports IBV_ATOMIC_NONE: no atomics",
			 p->tag);
		return;
	}
	atomic_one(p, IBV_WR_ATOMIC_CMP_AND_SWP, 8192, 0x1122334455667788ull,
		   0x1122334455667788ull, 0xa1a2a3a4a5a6a7a8ull,
		   0xa1a2a3a4a5a6a7a8ull, "equal (swapped)");
	atomic_one(p, IBV_WR_ATOMIC_CMP_AND_SWP, 8200, 0x1122334455667788ull,
		   0x1122334455667788ull ^ 1, 0xa1a2a3a4a5a6a7a8ull,
		   0x1122334455667788ull, "different (kept)");
	atomic_one(p, IBV_WR_ATOMIC_FETCH_AND_ADD, 8208, 0xfffffffffffffffeull,
		   3, 0, 1, "wrapping add");
	atomic_one(p, IBV_WR_ATOMIC_FETCH_AND_ADD, 8216, 0x100000000ull,
		   0xffffffffull, 0, 0x1ffffffffull, "carry");
}

/*
 * SEND_WITH_INV: B binds a type 2 window on its MR, A writes through it,
 * then invalidates it with SEND_WITH_INV; a WRITE through the dead rkey
 * afterwards is REM_ACCESS_ERR (this leaves the pair in ERROR: run last).
 */
static void send_with_inv(struct pair *p)
{
	struct ibv_send_wr wr, *bad = NULL;
	struct ibv_recv_wr rwr, *rbad = NULL;
	struct ibv_sge sge;
	struct dp_wc_want w;
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	uint8_t *win;
	uint32_t rkey;
	int r;

	win = dp_alloc(8192);
	mr = ibv_reg_mr(p->b.d->pd, win, 8192, DP_ACCESS_ALL |
			IBV_ACCESS_MW_BIND);
	mw = mr ? ibv_alloc_mw(p->b.d->pd, IBV_MW_TYPE_2) : NULL;
	if (!mw) {
		int e = errno;

		bool adv = p->b.d->attr.device_cap_flags &
			   (IBV_DEVICE_MEM_WINDOW | IBV_DEVICE_MEM_WINDOW_TYPE_2A |
			    IBV_DEVICE_MEM_WINDOW_TYPE_2B);

		/* refusing is fine only when the device does not claim MWs */
		tap_ok(!adv && (e == EOPNOTSUPP || e == EINVAL || e == ENOSYS),
		       "%s: %s refused with %d (%s) and the device advertises no memory windows",
		       p->tag, mr ? "ibv_alloc_mw(TYPE_2)" :
				    "ibv_reg_mr(IBV_ACCESS_MW_BIND)",
		       e, strerror(e));
		tap_skip("%s: SEND_WITH_INV needs a memory window (%s)",
			 p->tag, mr ? "ibv_alloc_mw" : "MW_BIND MR");
		if (mr)
			ibv_dereg_mr(mr);
		free(win);
		return;
	}
	rkey = ibv_inc_rkey(mw->rkey);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0xb1d;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info.mr = mr;
	wr.bind_mw.bind_info.addr = (uintptr_t)win + 100;
	wr.bind_mw.bind_info.length = 4000;
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	r = ibv_post_send(p->b.qp, &wr, &bad);
	if (!tap_ret_errno(r, 0, "%s: bind MW type 2 (rkey %#x)", p->tag,
			   rkey))
		goto out;
	w = dp_want(0xb1d, IBV_WC_BIND_MW);
	w.qp_num = p->b.qp->qp_num;
	if (!dp_expect(p->b.scq, &w, "%s: BIND_MW completion", p->tag))
		goto out;

	/* WRITE through the window */
	seed++;
	dp_fill(p->a.buf, 4000, seed);
	sge = (struct ibv_sge){ .addr = (uintptr_t)p->a.buf, .length = 4000,
				.lkey = p->a.mr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0x3e1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = (uintptr_t)win + 100;
	wr.wr.rdma.rkey = rkey;
	r = ibv_post_send(p->a.qp, &wr, &bad);
	w = dp_want(0x3e1, IBV_WC_RDMA_WRITE);
	if (!tap_ret_errno(r, 0, "%s: RDMA_WRITE through the MW", p->tag) ||
	    !dp_expect(p->a.scq, &w, "%s: RDMA_WRITE through the MW completes",
		       p->tag))
		goto out;
	tap_ok(dp_verify(win + 100, 4000, seed) < 0 &&
	       dp_verify_byte(win, 100, 0) < 0 &&
	       dp_verify_byte(win + 4100, 4092, 0) < 0,
	       "%s: MW write byte-exact, window bounds respected", p->tag);

	/* SEND_WITH_INV of the window's rkey */
	memset(&rwr, 0, sizeof(rwr));
	sge = (struct ibv_sge){ .addr = (uintptr_t)p->b.buf, .length = 64,
				.lkey = p->b.mr->lkey };
	rwr.wr_id = 0x1f1;
	rwr.sg_list = &sge;
	rwr.num_sge = 1;
	r = ibv_post_recv(p->b.qp, &rwr, &rbad);
	seed++;
	dp_fill(p->a.buf + 8192, 17, seed);
	{
		struct ibv_sge ssge = { .addr = (uintptr_t)p->a.buf + 8192,
					.length = 17,
					.lkey = p->a.mr->lkey };

		memset(&wr, 0, sizeof(wr));
		wr.wr_id = 0x1f2;
		wr.opcode = IBV_WR_SEND_WITH_INV;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.sg_list = &ssge;
		wr.num_sge = 1;
		wr.invalidate_rkey = rkey;
		if (!r)
			r = ibv_post_send(p->a.qp, &wr, &bad);
	}
	if (!tap_ret_errno(r, 0, "%s: post SEND_WITH_INV", p->tag))
		goto out;
	w = dp_want(0x1f2, IBV_WC_SEND);
	w.wc_flags = 0;
	dp_expect(p->a.scq, &w, "%s: SEND_WITH_INV requester completion",
		  p->tag);
	w = dp_want(0x1f1, IBV_WC_RECV);
	w.byte_len = 17;
	w.wc_flags = IBV_WC_WITH_INV;
	w.flags_ignore = IBV_WC_GRH;
	w.inv_rkey = rkey;
	w.qp_num = p->b.qp->qp_num;
	if (!p->b.d->rxe2) {
		/*
		 * rdma_rxe copies the kernel's IB_WC_WITH_INVALIDATE (1 << 2)
		 * into the user CQE, where it reads as IBV_WC_IP_CSUM_OK.
		 */
		struct ibv_wc wc;

		if (dp_poll(p->b.rcq, &wc, 1, DP_WAIT_MS) == 1 &&
		    (wc.wc_flags & ~IBV_WC_GRH) == IBV_WC_IP_CSUM_OK)
			wc.wc_flags = IBV_WC_WITH_INV;
		else
			memset(&wc, 0xff, sizeof(wc));
		dp_check_wc(&wc, &w,
			    "%s: SEND_WITH_INV responder: RECV, invalidated_rkey %#x (rdma_rxe: its WITH_INV reads as IP_CSUM_OK; exact on rxe2)",
			    p->tag, rkey);
	} else {
		dp_expect(p->b.rcq, &w,
			  "%s: (rxe2) SEND_WITH_INV responder: RECV, WITH_INV, invalidated_rkey %#x",
			  p->tag, rkey);
	}
	tap_ok(dp_verify(p->b.buf, 17, seed) < 0,
	       "%s: SEND_WITH_INV data byte-exact", p->tag);

	/* the window is dead now */
	memset(&wr, 0, sizeof(wr));
	sge = (struct ibv_sge){ .addr = (uintptr_t)p->a.buf, .length = 16,
				.lkey = p->a.mr->lkey };
	wr.wr_id = 0x3e2;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = (uintptr_t)win + 100;
	wr.wr.rdma.rkey = rkey;
	memset(win + 100, 0, 16);
	r = ibv_post_send(p->a.qp, &wr, &bad);
	w = dp_want(0x3e2, -1);
	w.status = IBV_WC_REM_ACCESS_ERR;
	if (tap_ret_errno(r, 0, "%s: RDMA_WRITE through the invalidated MW",
			  p->tag))
		dp_expect(p->a.scq, &w,
			  "%s: write through an invalidated MW is REM_ACCESS_ERR",
			  p->tag);
	tap_ok(dp_verify_byte(win + 100, 16, 0) < 0,
	       "%s: invalidated MW memory untouched", p->tag);
out:
	ibv_dealloc_mw(mw);
	ibv_dereg_mr(mr);
	free(win);
}

static const size_t small_sizes[] = { 0, 1, 255, 256, 257, 4097, 65536 };
#define NSMALL (sizeof(small_sizes) / sizeof(small_sizes[0]))

static void loopback(struct dp_dev *d)
{
	const char *nd = dp_netdev(d);
	int old_mtu = 0;
	struct pair p;
	char path[128];
	FILE *f;

	if (pair_setup(&p, "loop MTU 1024", d, d, IBV_MTU_1024)) {
		sizes_matrix(&p, sizes, NSIZES, true);
		multi_sge(&p);
		inline_sends(&p);
		atomics(&p);
		send_with_inv(&p);
	}
	pair_free(&p);

	if (pair_setup(&p, "loop MTU 256", d, d, IBV_MTU_256)) {
		sizes_matrix(&p, small_sizes, NSMALL, false);
		one_op(&p, IBV_WR_SEND, 2000, p.max_send_sge, p.max_recv_sge,
		       2, false);
		atomics(&p);
	}
	pair_free(&p);

	/* 4096 needs a netdev MTU above 4096 + headers. */
	if (nd) {
		snprintf(path, sizeof(path), "/sys/class/net/%s/mtu", nd);
		f = fopen(path, "r");
		if (f) {
			if (fscanf(f, "%d", &old_mtu) != 1)
				old_mtu = 0;
			fclose(f);
		}
	}
	if (!nd || !old_mtu) {
		tap_skip("loop MTU 4096: netdev of %s unknown", d->name);
		return;
	}
	if (!tap_ok(!dp_set_mtu(d, nd, 9000, IBV_MTU_4096),
		    "%s: active MTU 4096 after netdev %s mtu 9000", d->name,
		    nd))
		goto restore;
	if (pair_setup(&p, "loop MTU 4096", d, d, IBV_MTU_4096)) {
		sizes_matrix(&p, small_sizes, NSMALL, false);
		one_op(&p, IBV_WR_SEND, 1u << 20, 1, 1, 3, false);
		one_op(&p, IBV_WR_RDMA_READ, 1u << 20, 1, 1, 4, false);
		atomics(&p);
	}
	pair_free(&p);
restore:
	tap_ok(!dp_set_mtu(d, nd, old_mtu, IBV_MTU_256),
	       "%s: netdev %s mtu restored to %d", d->name, nd, old_mtu);
}

/* Two fresh rxe2 links on a veth pair of our own. */
static void dev_to_dev(struct dp_dev *d)
{
	struct dp_dev d0, d1;
	struct pair p;
	bool ok;

	if (!d->rxe2) {
		tap_skip("(rxe2) device to device: rdma_rxe in one namespace receives only on the ingress netdev");
		return;
	}
	ok = dp_veth_links();
	if (!tap_ok(ok, "(rxe2) veth rxe2dp0/1 with links rxe2_dp0, rxe2_dp1"))
		goto out;
	dp_open(&d0, "rxe2_dp0");
	dp_open(&d1, "rxe2_dp1");
	if (pair_setup(&p, "(rxe2) dev-to-dev MTU 4096", &d0, &d1,
		       IBV_MTU_4096)) {
		sizes_matrix(&p, small_sizes, NSMALL, false);
		one_op(&p, IBV_WR_SEND, 1u << 20, 1, 1, 3, false);
		one_op(&p, IBV_WR_RDMA_WRITE, 1u << 20, 1, 1, 4, false);
		one_op(&p, IBV_WR_RDMA_READ, 1u << 20, 1, 1, 5, false);
		multi_sge(&p);
		atomics(&p);
	}
	pair_free(&p);
	if (pair_setup(&p, "(rxe2) dev-to-dev MTU 1024", &d0, &d1,
		       IBV_MTU_1024)) {
		sizes_matrix(&p, small_sizes, NSMALL, false);
		inline_sends(&p);
	}
	pair_free(&p);
	dp_close(&d0);
	dp_close(&d1);
out:
	tap_ok(!dp_veth_links_del(), "(rxe2) links and veth removed");
}

int main(void)
{
	struct dp_dev d;
	uint64_t t0 = dp_now_ms();

	dp_open(&d, test_dev_name());
	tap_diag("%s: max_sge %d, atomic_cap %d, active_mtu %d", d.name,
		 d.attr.max_sge, d.attr.atomic_cap, 128 << d.port.active_mtu);
	loopback(&d);
	dp_close(&d);
	d.rxe2 = test_is_rxe2(test_dev_name());
	dev_to_dev(&d);
	tap_diag("took %llu ms", (unsigned long long)(dp_now_ms() - t0));
	return tap_done();
}
