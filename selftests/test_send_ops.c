// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: every send_ops_flags bit alone on RC, UC, UD, XRC_SEND and raw packet QPs: EOPNOTSUPP, or a builder whose WR completes byte-exact; what the device reports accepted on RC; FLUSH by ibv_wr_flush where the headers have it
 *
 * Every send_ops_flags bit, one at a time, on every QP type (issue 37
 * item 1): ibv_create_qp_ex either refuses the bit with EOPNOTSUPP or
 * the QP has the builder for it (and the setters every QP needs), and a
 * WR posted through that builder on an RC, UC or UD loopback pair (a
 * raw packet QP: one frame) completes with the opcode it names, its
 * data byte-exact.  Bits 13..63 are no operation: EOPNOTSUPP.  The
 * operations the device reports (atomics, ATOMIC_WRITE, FLUSH, memory
 * windows) must be accepted on RC.
 *
 * ibv_wr_flush() exists from libibverbs 45 on: built against 44 the
 * test posts a FLUSH with rxe2dv_wr_flush(); built against a later
 * release (tools/rdma-core-intree builds it with that tree's headers)
 * it calls ibv_wr_flush(), which jumps through qpx->wr_flush.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef TEST_RDMA_CORE
#include "../provider/ibverbs_release.h"
#define TEST_RDMA_CORE RXE2_RDMA_CORE
#endif
#if TEST_RDMA_CORE < 45
#include <infiniband/rxe2dv.h>
#endif

#include "dp.h"
#include "tap.h"
#include "util.h"

#define LEN 4096
#define BIT_FLUSH 11		/* IBV_QP_EX_WITH_FLUSH, rdma-core 45 on */
#define NUM_OP_BITS 13		/* IBV_QP_EX_WITH_RDMA_WRITE..ATOMIC_WRITE */
#define WC_FLUSH 8		/* IBV_WC_FLUSH, rdma-core 45 on */
#define ACCESS_FLUSH_GLOBAL (1 << 8)
#define DEV_CAP_FLUSH_GLOBAL (1ULL << 38)
#define DEV_CAP_ATOMIC_WRITE (1ULL << 40)
#define IMM 0x12345678

static struct dp_dev dev;
static struct ibv_device_attr_ex dattr;
static uint8_t *abuf, *bbuf;
static struct ibv_mr *amr, *bmr;
static struct ibv_cq *acq, *bcq;	/* the QP under test's, its peer's */

/* The builder each bit enables, by its offset in struct ibv_qp_ex */
static const struct {
	const char *name;
	size_t builder;		/* 0: none in these headers */
} bits[NUM_OP_BITS] = {
	{ "RDMA_WRITE", offsetof(struct ibv_qp_ex, wr_rdma_write) },
	{ "RDMA_WRITE_WITH_IMM", offsetof(struct ibv_qp_ex, wr_rdma_write_imm) },
	{ "SEND", offsetof(struct ibv_qp_ex, wr_send) },
	{ "SEND_WITH_IMM", offsetof(struct ibv_qp_ex, wr_send_imm) },
	{ "RDMA_READ", offsetof(struct ibv_qp_ex, wr_rdma_read) },
	{ "ATOMIC_CMP_AND_SWP", offsetof(struct ibv_qp_ex, wr_atomic_cmp_swp) },
	{ "ATOMIC_FETCH_AND_ADD", offsetof(struct ibv_qp_ex, wr_atomic_fetch_add) },
	{ "LOCAL_INV", offsetof(struct ibv_qp_ex, wr_local_inv) },
	{ "BIND_MW", offsetof(struct ibv_qp_ex, wr_bind_mw) },
	{ "SEND_WITH_INV", offsetof(struct ibv_qp_ex, wr_send_inv) },
	{ "TSO", offsetof(struct ibv_qp_ex, wr_send_tso) },
#if TEST_RDMA_CORE >= 45
	{ "FLUSH", offsetof(struct ibv_qp_ex, wr_flush) },
#else
	{ "FLUSH", 0 },
#endif
	{ "ATOMIC_WRITE", offsetof(struct ibv_qp_ex, wr_atomic_write) },
};

static const char *type_name(enum ibv_qp_type t)
{
	switch (t) {
	case IBV_QPT_RC: return "RC";
	case IBV_QPT_UC: return "UC";
	case IBV_QPT_UD: return "UD";
	case IBV_QPT_XRC_SEND: return "XRC_SEND";
	default: return "RAW_PACKET";
	}
}

static struct ibv_qp *create(enum ibv_qp_type t, uint64_t ops)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = t,
		.send_cq = acq,
		.recv_cq = t == IBV_QPT_XRC_SEND ? NULL : acq,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = dev.pd,
		.send_ops_flags = ops,
	};

	if (t == IBV_QPT_XRC_SEND)
		a.cap.max_recv_wr = a.cap.max_recv_sge = 0;
	return ibv_create_qp_ex(dev.ctx, &a);
}

static bool has(const struct ibv_qp_ex *x, size_t off)
{
	void *fn;

	memcpy(&fn, (const char *)x + off, sizeof(fn));
	return fn != NULL;
}

/* The setters any builder needs, and the ones of the QP's type */
static bool has_setters(const struct ibv_qp_ex *x, enum ibv_qp_type t)
{
	return x->wr_start && x->wr_complete && x->wr_abort &&
	       x->wr_set_sge && x->wr_set_sge_list && x->wr_set_inline_data &&
	       x->wr_set_inline_data_list &&
	       (t != IBV_QPT_UD || x->wr_set_ud_addr) &&
	       (t != IBV_QPT_XRC_SEND || x->wr_set_xrc_srqn);
}

/* One completion on cq: wr_id, status SUCCESS, opcode */
static bool expect_wc(struct ibv_cq *cq, uint64_t id, int opcode,
		      const char *what)
{
	struct ibv_wc wc;
	int n = dp_poll(cq, &wc, 1, DP_WAIT_MS);

	if (n == 1 && wc.wr_id == id && wc.status == IBV_WC_SUCCESS &&
	    (int)wc.opcode == opcode)
		return true;
	tap_diag("%s: got %d completion(s): wr_id %#llx status %s opcode %d, want %#llx opcode %d",
		 what, n, n == 1 ? (unsigned long long)wc.wr_id : 0ULL,
		 n == 1 ? dp_status_str(wc.status) : "-",
		 n == 1 ? (int)wc.opcode : -1, (unsigned long long)id, opcode);
	return false;
}

struct peer {
	struct ibv_qp *a;	/* the QP under test */
	struct ibv_qp_ex *x;
	struct ibv_qp *b;	/* its loopback peer, a plain QP */
	struct ibv_ah *ah;	/* UD */
	uint32_t qkey;
};

/* A type-2 MW bound with ibv_post_send on qp over buf's MR */
static struct ibv_mw *bound_mw(struct ibv_qp *qp, struct ibv_cq *cq,
			       struct ibv_mr *mr, uint8_t *buf, uint64_t id)
{
	struct ibv_mw *mw = ibv_alloc_mw(dev.pd, IBV_MW_TYPE_2);
	struct ibv_send_wr wr = {
		.wr_id = id,
		.opcode = IBV_WR_BIND_MW,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	if (!mw)
		return NULL;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info = (struct ibv_mw_bind_info){
		.mr = mr, .addr = (uintptr_t)buf, .length = LEN,
		.mw_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};
	if (ibv_post_send(qp, &wr, &bad) ||
	    !expect_wc(cq, id, IBV_WC_BIND_MW, "bind with ibv_post_send")) {
		ibv_dealloc_mw(mw);
		return NULL;
	}
	mw->rkey = wr.bind_mw.rkey;
	return mw;
}

static void start(struct peer *p, uint64_t id)
{
	ibv_wr_start(p->x);
	p->x->wr_id = id;
	p->x->wr_flags = IBV_SEND_SIGNALED;
}

static void set_sge(struct peer *p, uint32_t len)
{
	if (p->ah)
		ibv_wr_set_ud_addr(p->x, p->ah, p->b->qp_num, p->qkey);
	ibv_wr_set_sge(p->x, amr->lkey, (uintptr_t)abuf, len);
}

/* SEND, SEND_WITH_IMM, SEND_WITH_INV: the peer's receive, byte-exact */
static bool post_send_kind(struct peer *p, int bit, const char *what)
{
	uint32_t off = p->ah ? 40 : 0;	/* UD: the GRH first */
	struct ibv_mw *mw = NULL;
	struct ibv_wc wc;
	bool ok;

	if (bit == 9) {
		mw = bound_mw(p->b, bcq, bmr, bbuf, 0x30);
		if (!mw)
			return false;
	}
	dp_fill(abuf, 256, bit);
	memset(bbuf, 0, 512);
	if (dp_post_recv1(p->b, 0x20, bbuf, 512, bmr->lkey))
		return false;
	start(p, 0x10);
	if (bit == 2)
		ibv_wr_send(p->x);
	else if (bit == 3)
		ibv_wr_send_imm(p->x, htobe32(IMM));
	else
		ibv_wr_send_inv(p->x, mw->rkey);
	set_sge(p, 256);
	ok = !ibv_wr_complete(p->x) && expect_wc(acq, 0x10, IBV_WC_SEND, what);
	ok = ok && dp_poll(bcq, &wc, 1, DP_WAIT_MS) == 1 && wc.wr_id == 0x20 &&
	     wc.status == IBV_WC_SUCCESS && wc.byte_len == 256 + off &&
	     dp_verify(bbuf + off, 256, bit) < 0;
	if (ok && bit == 3)
		ok = (wc.wc_flags & IBV_WC_WITH_IMM) &&
		     be32toh(wc.imm_data) == IMM;
	if (ok && bit == 9)
		ok = (wc.wc_flags & IBV_WC_WITH_INV) &&
		     wc.invalidated_rkey == mw->rkey;
	if (mw)
		ibv_dealloc_mw(mw);
	return ok;
}

/* RDMA_WRITE, RDMA_WRITE_WITH_IMM and RDMA_READ of 256 bytes */
static bool post_rdma(struct peer *p, int bit, const char *what)
{
	struct ibv_wc wc;
	bool ok;

	dp_fill(bit == 4 ? bbuf : abuf, 256, bit);
	memset(bit == 4 ? abuf : bbuf, 0, 256);
	if (bit == 1 && dp_post_recv1(p->b, 0x20, NULL, 0, bmr->lkey))
		return false;
	start(p, 0x10);
	if (bit == 0)
		ibv_wr_rdma_write(p->x, bmr->rkey, (uintptr_t)bbuf);
	else if (bit == 1)
		ibv_wr_rdma_write_imm(p->x, bmr->rkey, (uintptr_t)bbuf,
				      htobe32(IMM));
	else
		ibv_wr_rdma_read(p->x, bmr->rkey, (uintptr_t)bbuf);
	set_sge(p, 256);
	ok = !ibv_wr_complete(p->x) &&
	     expect_wc(acq, 0x10, bit == 4 ? IBV_WC_RDMA_READ : IBV_WC_RDMA_WRITE,
		       what);
	if (ok && bit == 1)
		ok = dp_poll(bcq, &wc, 1, DP_WAIT_MS) == 1 &&
		     wc.wr_id == 0x20 && wc.status == IBV_WC_SUCCESS &&
		     wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
		     be32toh(wc.imm_data) == IMM;
	return ok && dp_verify(bit == 4 ? abuf : bbuf, 256, bit) < 0;
}

/* CMP_SWP, FETCH_ADD, ATOMIC_WRITE on 8 bytes of the peer's buffer */
static bool post_atomic(struct peer *p, int bit, const char *what)
{
	uint64_t *target = (uint64_t *)bbuf, *result = (uint64_t *)abuf;
	uint64_t val = 0x0102030405060708ULL;
	bool ok;

	*target = 40;
	*result = 0;
	start(p, 0x10);
	if (bit == 5)
		ibv_wr_atomic_cmp_swp(p->x, bmr->rkey, (uintptr_t)bbuf, 40, 77);
	else if (bit == 6)
		ibv_wr_atomic_fetch_add(p->x, bmr->rkey, (uintptr_t)bbuf, 2);
	else
		ibv_wr_atomic_write(p->x, bmr->rkey, (uintptr_t)bbuf, &val);
	if (bit != 12)
		set_sge(p, 8);
	ok = !ibv_wr_complete(p->x) &&
	     expect_wc(acq, 0x10, bit == 5 ? IBV_WC_COMP_SWAP :
			     bit == 6 ? IBV_WC_FETCH_ADD : IBV_WC_ATOMIC_WRITE,
		       what);
	if (bit == 5)
		return ok && *result == 40 && *target == 77;
	if (bit == 6)
		return ok && *result == 40 && *target == 42;
	return ok && *target == val;
}

/* LOCAL_INV and BIND_MW of a type-2 MW; the peer WRITEs through it */
static bool post_mw(struct peer *p, int bit, const char *what)
{
	struct ibv_mw *mw = bit == 7 ? bound_mw(p->a, acq, amr, abuf, 0x31) :
				       ibv_alloc_mw(dev.pd, IBV_MW_TYPE_2);
	struct ibv_mw_bind_info bi = {
		.mr = amr, .addr = (uintptr_t)abuf, .length = LEN,
		.mw_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};
	uint32_t rkey;
	bool ok;

	if (!mw)
		return false;
	rkey = ibv_inc_rkey(mw->rkey);
	start(p, 0x10);
	if (bit == 7)
		ibv_wr_local_inv(p->x, mw->rkey);
	else
		ibv_wr_bind_mw(p->x, mw, rkey, &bi);
	ok = !ibv_wr_complete(p->x) &&
	     expect_wc(acq, 0x10, bit == 7 ? IBV_WC_LOCAL_INV : IBV_WC_BIND_MW,
		       what);
	if (ok && bit == 8) {
		/* the new rkey reaches abuf */
		dp_fill(bbuf, 128, bit);
		memset(abuf, 0, 128);
		ok = !dp_post_send1(p->b, 0x40, IBV_WR_RDMA_WRITE, bbuf, 128,
				    bmr->lkey, (uintptr_t)abuf, rkey, 0) &&
		     expect_wc(bcq, 0x40, IBV_WC_RDMA_WRITE, what) &&
		     dp_verify(abuf, 128, bit) < 0;
	}
	ibv_dealloc_mw(mw);
	return ok;
}

static bool post_flush(struct peer *p, const char *what)
{
	start(p, 0x10);
#if TEST_RDMA_CORE >= 45
	ibv_wr_flush(p->x, bmr->rkey, (uintptr_t)bbuf, 256, IBV_FLUSH_GLOBAL,
		     IBV_FLUSH_RANGE);
#else
	rxe2dv_wr_flush(p->x, bmr->rkey, (uintptr_t)bbuf, 256,
			RXE2DV_FLUSH_GLOBAL, RXE2DV_FLUSH_RANGE);
#endif
	return !ibv_wr_complete(p->x) && expect_wc(acq, 0x10, WC_FLUSH, what);
}

/* A minimal Ethernet frame to the broadcast address */
static bool post_raw(struct peer *p, const char *what)
{
	memset(abuf, 0xff, 6);
	memset(abuf + 6, 0x02, 6);
	abuf[12] = 0x88;
	abuf[13] = 0xb5;	/* IEEE local experimental EtherType */
	memset(abuf + 14, 0x5a, 50);
	start(p, 0x10);
	ibv_wr_send(p->x);
	set_sge(p, 64);
	return !ibv_wr_complete(p->x) && expect_wc(acq, 0x10, IBV_WC_SEND, what);
}

static bool post_through(struct peer *p, enum ibv_qp_type t, int bit,
			 const char *what)
{
	if (t == IBV_QPT_RAW_PACKET)
		return post_raw(p, what);
	switch (bit) {
	case 0: case 1: case 4:
		return post_rdma(p, bit, what);
	case 2: case 3: case 9:
		return post_send_kind(p, bit, what);
	case 5: case 6: case 12:
		return post_atomic(p, bit, what);
	case 7: case 8:
		return post_mw(p, bit, what);
	case BIT_FLUSH:
		return post_flush(p, what);
	default:
		return false;
	}
}

static bool connect_peer(struct peer *p, enum ibv_qp_type t)
{
	struct dp_conn c;

	dp_conn_default(&c);
	if (dattr.device_cap_flags_ex & DEV_CAP_FLUSH_GLOBAL)
		c.access |= ACCESS_FLUSH_GLOBAL;
	p->qkey = c.qkey;
	if (t == IBV_QPT_RAW_PACKET) {
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT,
					 .port_num = 1 };

		if (ibv_modify_qp(p->a, &a, IBV_QP_STATE | IBV_QP_PORT))
			return false;
		a.qp_state = IBV_QPS_RTR;
		if (ibv_modify_qp(p->a, &a, IBV_QP_STATE))
			return false;
		a.qp_state = IBV_QPS_RTS;
		return !ibv_modify_qp(p->a, &a, IBV_QP_STATE);
	}
	p->b = dp_create_qp(&dev, t, bcq, bcq, NULL, &dp_small_cap);
	if (!p->b)
		return false;
	if (t == IBV_QPT_UD) {
		p->ah = dp_loop_ah(&dev);
		return !dp_connect(p->a, &dev, NULL, 0, &c) &&
		       !dp_connect(p->b, &dev, NULL, 0, &c);
	}
	return !dp_connect(p->a, &dev, &dev.gid, p->b->qp_num, &c) &&
	       !dp_connect(p->b, &dev, &dev.gid, p->a->qp_num, &c);
}

/* One accepted bit: its builder, and a WR posted through it */
static void accepted(enum ibv_qp_type t, int bit, struct ibv_qp *qp)
{
	struct peer p = { .a = qp, .x = ibv_qp_to_qp_ex(qp) };
	char what[96];
	bool postable = t == IBV_QPT_RC || t == IBV_QPT_UC ||
			t == IBV_QPT_UD || t == IBV_QPT_RAW_PACKET;

	snprintf(what, sizeof(what), "%s with %s", type_name(t),
		 bits[bit].name);
	if (!tap_ok(p.x && has_setters(p.x, t) &&
		    (!bits[bit].builder || has(p.x, bits[bit].builder)),
		    "%s: accepted, its builder and the setters are set", what))
		return;
	if (!postable || bit == 10) {
		tap_skip("%s: not posted (%s)", what,
			 postable ? "TSO: test_raw's" : "no XRC target here: test_xrc's");
		return;
	}
	tap_ok(connect_peer(&p, t) && post_through(&p, t, bit, what),
	       "%s: a WR posted through the builder completes, data byte-exact",
	       what);
	if (p.b)
		ibv_destroy_qp(p.b);
	if (p.ah)
		ibv_destroy_ah(p.ah);
}

/* The bits rxe2 must accept on the type: what the device reports */
static uint64_t required(enum ibv_qp_type t)
{
	uint64_t rc = 0x3ff & ~(1ULL << 10);	/* WRITE..SEND_WITH_INV */

	if (dattr.orig_attr.atomic_cap == IBV_ATOMIC_NONE)
		rc &= ~(3ULL << 5);
	if (dattr.device_cap_flags_ex & DEV_CAP_ATOMIC_WRITE)
		rc |= 1ULL << 12;
	if (dattr.device_cap_flags_ex & DEV_CAP_FLUSH_GLOBAL)
		rc |= 1ULL << BIT_FLUSH;
	switch (t) {
	case IBV_QPT_RC:
		return rc;
	case IBV_QPT_XRC_SEND:
		return 0x2ff;		/* WRITE..LOCAL_INV, SEND_WITH_INV */
	case IBV_QPT_UC:
		return 0xf;		/* WRITE, WRITE_IMM, SEND, SEND_IMM */
	case IBV_QPT_UD:
	case IBV_QPT_RAW_PACKET:
		return t == IBV_QPT_UD ? 0xc : 0x4;
	default:
		return 0;
	}
}

static void walk(enum ibv_qp_type t)
{
	uint64_t refused_wrong = 0, missing = 0;
	int bit;

	for (bit = 0; bit < 64; bit++) {
		struct ibv_qp *qp = create(t, 1ULL << bit);

		if (!qp) {
			if (errno != EOPNOTSUPP)
				refused_wrong |= 1ULL << bit;
			if (required(t) & (1ULL << bit))
				missing |= 1ULL << bit;
			continue;
		}
		if (bit < NUM_OP_BITS)
			accepted(t, bit, qp);
		else
			tap_ok(false, "%s: unknown bit %d accepted", type_name(t),
			       bit);
		ibv_destroy_qp(qp);
	}
	tap_ok(!refused_wrong, "%s: every refused bit is EOPNOTSUPP (others: %#llx)",
	       type_name(t), (unsigned long long)refused_wrong);
	tap_ok(!missing, "%s: every operation the device reports is accepted (refused: %#llx)",
	       type_name(t), (unsigned long long)missing);
}

int main(void)
{
	static const enum ibv_qp_type types[] = {
		IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD, IBV_QPT_XRC_SEND,
		IBV_QPT_RAW_PACKET,
	};
	unsigned int i;

	dp_open(&dev, test_dev_name());
	if (ibv_query_device_ex(dev.ctx, NULL, &dattr))
		tap_bail("ibv_query_device_ex: %s", strerror(errno));
	abuf = dp_alloc(LEN);
	bbuf = dp_alloc(LEN);
	amr = dp_reg(dev.pd, abuf, LEN, DP_ACCESS_ALL | IBV_ACCESS_MW_BIND);
	bmr = ibv_reg_mr(dev.pd, bbuf, LEN, DP_ACCESS_ALL | IBV_ACCESS_MW_BIND |
			 (dattr.device_cap_flags_ex & DEV_CAP_FLUSH_GLOBAL ?
			  ACCESS_FLUSH_GLOBAL : 0));
	acq = ibv_create_cq(dev.ctx, 64, NULL, NULL, 0);
	bcq = ibv_create_cq(dev.ctx, 64, NULL, NULL, 0);
	if (!bmr || !acq || !bcq)
		tap_bail("MR or CQ: %s", strerror(errno));
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		walk(types[i]);
	ibv_destroy_cq(acq);
	ibv_destroy_cq(bcq);
	ibv_dereg_mr(amr);
	ibv_dereg_mr(bmr);
	dp_close(&dev);
	return tap_done();
}
