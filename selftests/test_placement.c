// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: IBTA 1.5 ATOMIC WRITE and FLUSH: capability and access bits, builder errors, byte-exact results, every responder error, a duplicate not executed again; loopback, two namespaces, with rdma_rxe
 *
 * IBTA 1.5 ATOMIC WRITE (ibv_wr_atomic_write) and FLUSH
 * (rxe2dv_wr_flush, libibverbs 44 has no ibv_wr_flush): the capability
 * bits, the access bits, the builder's errors, byte-exact results, every
 * responder error as the NAK and completion status it must be, a
 * duplicate that is answered and not executed again; on one device
 * (loopback), between two rxe2 devices in two namespaces, and with the
 * kernel's rdma_rxe in both directions where it has ATOMIC WRITE (Linux
 * 6.2 and later: the 6.12 boot).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/rxe2dv.h>

#include "dp.h"
#include "tap.h"
#include "util.h"

/* Linux 6.2's IB_UVERBS_DEVICE_* bits, which libibverbs 44 does not name */
#define CAP_FLUSH_GLOBAL	(1ULL << 38)
#define CAP_FLUSH_PERSISTENT	(1ULL << 39)
#define CAP_ATOMIC_WRITE	(1ULL << 40)
#define ACCESS_FLUSH_PERSISTENT	(1 << 9)
#define WC_FLUSH		8	/* IBV_WC_FLUSH of rdma-core 45 */
#define OP_READ_RESP_ONLY	0x10
#define OPS (IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | \
	     IBV_QP_EX_WITH_ATOMIC_WRITE | RXE2DV_QP_EX_WITH_FLUSH)
#define ACC_FLUSH (DP_ACCESS_ALL | RXE2DV_ACCESS_FLUSH_GLOBAL)
#define LEN 65536

/* a requester QP a (extended API) on da and a responder QP b on db */
struct pair {
	struct dp_dev *da, *db;
	struct ibv_cq *acq, *bcq;
	struct ibv_qp *a, *b;
	struct ibv_qp_ex *x;
	uint8_t *abuf, *bbuf;
	struct ibv_mr *amr, *bmr;
};

static struct dp_dev dev;

static struct ibv_qp *mkqp(struct dp_dev *d, struct ibv_cq *cq, uint64_t ops,
			   enum ibv_qp_type t)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = t,
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 32, .max_recv_wr = 32,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = d->pd,
	};

	if (ops) {
		a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		a.send_ops_flags = ops;
	}
	return ibv_create_qp_ex(d->ctx, &a);
}

/* b's QP has access bqp_access; b's MR has access bmr_access */
static bool mkpair(struct pair *p, struct dp_dev *da, struct dp_dev *db,
		   uint64_t ops, unsigned int bqp_access, int bmr_access)
{
	struct dp_conn c;

	memset(p, 0, sizeof(*p));
	p->da = da;
	p->db = db;
	p->acq = ibv_create_cq(da->ctx, 64, NULL, NULL, 0);
	p->bcq = ibv_create_cq(db->ctx, 64, NULL, NULL, 0);
	if (!p->acq || !p->bcq)
		tap_bail("ibv_create_cq: %s", strerror(errno));
	p->a = mkqp(da, p->acq, ops, IBV_QPT_RC);
	p->b = mkqp(db, p->bcq, 0, IBV_QPT_RC);
	if (!p->a || !p->b)
		tap_bail("ibv_create_qp_ex: %s", strerror(errno));
	p->x = ibv_qp_to_qp_ex(p->a);
	p->abuf = dp_alloc(LEN);
	p->bbuf = dp_alloc(LEN);
	p->amr = dp_reg(da->pd, p->abuf, LEN, DP_ACCESS_ALL);
	p->bmr = dp_reg(db->pd, p->bbuf, LEN, bmr_access);
	dp_conn_default(&c);
	c.rd_atomic = 4;
	if (dp_connect(p->a, da, &db->gid, p->b->qp_num, &c))
		return tap_ok(false, "connect a: %s", strerror(errno));
	c.access = bqp_access;
	if (dp_connect(p->b, db, &da->gid, p->a->qp_num, &c))
		return tap_ok(false, "connect b: %s", strerror(errno));
	return true;
}

static void freepair(struct pair *p)
{
	ibv_destroy_qp(p->a);
	ibv_destroy_qp(p->b);
	ibv_dereg_mr(p->amr);
	ibv_dereg_mr(p->bmr);
	ibv_destroy_cq(p->acq);
	ibv_destroy_cq(p->bcq);
	free(p->abuf);
	free(p->bbuf);
}

static int post_aw(struct pair *p, uint64_t id, uint32_t rkey, uint64_t addr,
		   uint64_t val)
{
	ibv_wr_start(p->x);
	p->x->wr_id = id;
	p->x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(p->x, rkey, addr, &val);
	return ibv_wr_complete(p->x);
}

static int post_flush(struct pair *p, uint64_t id, uint32_t rkey,
		      uint64_t addr, size_t len, uint8_t type, uint8_t level)
{
	ibv_wr_start(p->x);
	p->x->wr_id = id;
	p->x->wr_flags = IBV_SEND_SIGNALED;
	rxe2dv_wr_flush(p->x, rkey, addr, len, type, level);
	return ibv_wr_complete(p->x);
}

static bool expect(struct pair *p, uint64_t id, int status, int opcode,
		   long byte_len, const char *what)
{
	struct dp_wc_want w = dp_want(id, opcode);

	w.status = status;
	w.byte_len = byte_len;
	if (status != IBV_WC_SUCCESS)
		w.opcode = -1;	/* not defined for an error completion */
	return dp_expect(p->acq, &w, "%s: requester completion", what);
}

static void caps(void)
{
	struct ibv_device_attr_ex a;
	uint64_t f;

	tap_ret_errno(ibv_query_device_ex(dev.ctx, NULL, &a), 0,
		      "ibv_query_device_ex");
	f = a.device_cap_flags_ex;
	tap_ok((f & CAP_ATOMIC_WRITE) && (f & CAP_FLUSH_GLOBAL) &&
	       !(f & CAP_FLUSH_PERSISTENT),
	       "capabilities: ATOMIC_WRITE and FLUSH_GLOBAL, not FLUSH_PERSISTENT (%#llx)",
	       (unsigned long long)(f >> 32));
}

static void access_bits(void)
{
	uint8_t *buf = dp_alloc(4096);
	struct ibv_mr *mr;

	mr = ibv_reg_mr(dev.pd, buf, 4096, ACC_FLUSH);
	tap_ok(mr && mr->handle, "ibv_reg_mr with IBV_ACCESS_FLUSH_GLOBAL: %s",
	       mr ? "ok" : strerror(errno));
	if (mr) {
		tap_ret_errno(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL,
					   NULL, 0, DP_ACCESS_ALL), 0,
			      "ibv_rereg_mr dropping FLUSH_GLOBAL");
		tap_ret_errno(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL,
					   NULL, 0, ACC_FLUSH), 0,
			      "ibv_rereg_mr adding FLUSH_GLOBAL");
		tap_ret(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL,
				     NULL, 0, DP_ACCESS_ALL |
				     ACCESS_FLUSH_PERSISTENT),
			IBV_REREG_MR_ERR_CMD, "ibv_rereg_mr to FLUSH_PERSISTENT fails");
		tap_ret(errno, EOPNOTSUPP, "... with EOPNOTSUPP");
		ibv_dereg_mr(mr);
	}
	errno = 0;
	mr = ibv_reg_mr(dev.pd, buf, 4096, DP_ACCESS_ALL |
			ACCESS_FLUSH_PERSISTENT);
	tap_ok(!mr && errno == EOPNOTSUPP,
	       "ibv_reg_mr with IBV_ACCESS_FLUSH_PERSISTENT -> EOPNOTSUPP (%s)",
	       mr ? "registered" : strerror(errno));
	if (mr)
		ibv_dereg_mr(mr);
	free(buf);
}

static void create_errors(void)
{
	struct ibv_cq *cq = ibv_create_cq(dev.ctx, 8, NULL, NULL, 0);
	struct ibv_qp *qp;

	errno = 0;
	qp = mkqp(&dev, cq, IBV_QP_EX_WITH_ATOMIC_WRITE, IBV_QPT_UC);
	tap_ok(!qp && errno == EOPNOTSUPP,
	       "UC QP with IBV_QP_EX_WITH_ATOMIC_WRITE -> EOPNOTSUPP (%s)",
	       qp ? "created" : strerror(errno));
	if (qp)
		ibv_destroy_qp(qp);
	errno = 0;
	qp = mkqp(&dev, cq, RXE2DV_QP_EX_WITH_FLUSH, IBV_QPT_UD);
	tap_ok(!qp && errno == EOPNOTSUPP,
	       "UD QP with RXE2DV_QP_EX_WITH_FLUSH -> EOPNOTSUPP (%s)",
	       qp ? "created" : strerror(errno));
	if (qp)
		ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
}

/* the builder refuses what it cannot post: nothing reaches the wire */
static void api_errors(void)
{
	struct pair p;
	struct ibv_send_wr wr = {}, *bad;
	struct ibv_sge sge;
	struct ibv_wc wc;
	uint64_t v = 1;
	struct ibv_qp *plain;

	if (!mkpair(&p, &dev, &dev, OPS, IBV_ACCESS_REMOTE_WRITE |
		    RXE2DV_ACCESS_FLUSH_GLOBAL, ACC_FLUSH))
		return;
	sge = (struct ibv_sge){ (uintptr_t)p.abuf, 8, p.amr->lkey };
	wr.opcode = IBV_WR_ATOMIC_WRITE;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	tap_ret_errno(ibv_post_send(p.a, &wr, &bad), EINVAL,
		      "ibv_post_send(IBV_WR_ATOMIC_WRITE): EINVAL, the builder only");
	ibv_wr_start(p.x);
	ibv_wr_atomic_write(p.x, p.bmr->rkey, (uintptr_t)p.bbuf, &v);
	ibv_wr_set_sge(p.x, p.amr->lkey, (uintptr_t)p.abuf, 8);
	tap_ret_errno(ibv_wr_complete(p.x), EINVAL,
		      "wr_atomic_write + wr_set_sge: EINVAL");
	tap_ret_errno(post_flush(&p, 1, p.bmr->rkey, (uintptr_t)p.bbuf, 8,
				 RXE2DV_FLUSH_PERSISTENT, RXE2DV_FLUSH_RANGE),
		      EOPNOTSUPP, "flush PERSISTENT: EOPNOTSUPP");
	tap_ret_errno(post_flush(&p, 1, p.bmr->rkey, (uintptr_t)p.bbuf, 8, 0,
				 RXE2DV_FLUSH_RANGE), EINVAL,
		      "flush of type 0: EINVAL");
	tap_ret_errno(post_flush(&p, 1, p.bmr->rkey, (uintptr_t)p.bbuf, 8, 4,
				 RXE2DV_FLUSH_RANGE), EINVAL,
		      "flush of an unknown type: EINVAL");
	tap_ret_errno(post_flush(&p, 1, p.bmr->rkey, (uintptr_t)p.bbuf, 8,
				 RXE2DV_FLUSH_GLOBAL, 2), EINVAL,
		      "flush of level 2: EINVAL");
	tap_ret_errno(post_flush(&p, 1, p.bmr->rkey, (uintptr_t)p.bbuf,
				 (1ULL << 31) + 1, RXE2DV_FLUSH_GLOBAL,
				 RXE2DV_FLUSH_RANGE), EINVAL,
		      "flush of 2 GiB + 1: EINVAL");
	tap_ret(dp_poll_none(p.acq, &wc, 50), 0, "no completion from any of them");

	plain = mkqp(&dev, p.acq, IBV_QP_EX_WITH_RDMA_WRITE, IBV_QPT_RC);
	if (plain) {
		struct pair q = p;

		q.x = ibv_qp_to_qp_ex(plain);
		tap_ret_errno(post_aw(&q, 1, p.bmr->rkey, (uintptr_t)p.bbuf, v),
			      EINVAL, "ATOMIC WRITE on a QP made without it: EINVAL");
		tap_ret_errno(post_flush(&q, 1, p.bmr->rkey, (uintptr_t)p.bbuf,
					 8, RXE2DV_FLUSH_GLOBAL,
					 RXE2DV_FLUSH_RANGE),
			      EINVAL, "FLUSH on a QP made without it: EINVAL");
		ibv_destroy_qp(plain);
	}
	freepair(&p);
}

/* 8 bytes land exactly, in order with the atomics around them */
static void atomic_write_ok(struct dp_dev *da, struct dp_dev *db,
			    uint64_t ops, const char *where)
{
	char what[128];
	struct pair p;
	uint64_t x = 0x0123456789abcdefULL, *t, y;
	uint8_t before[32];

	snprintf(what, sizeof(what), "ATOMIC WRITE (%s)", where);
	if (!mkpair(&p, da, db, ops, IBV_ACCESS_REMOTE_WRITE |
		    IBV_ACCESS_REMOTE_ATOMIC, DP_ACCESS_ALL))
		return;
	dp_fill(p.bbuf, 4096, 7);
	memcpy(before, p.bbuf + 4088, sizeof(before));
	tap_ret_errno(post_aw(&p, 1, p.bmr->rkey, (uintptr_t)p.bbuf + 4096, x),
		      0, "%s: posted", what);
	expect(&p, 1, IBV_WC_SUCCESS, IBV_WC_ATOMIC_WRITE, 8, what);
	tap_ok(!memcmp(p.bbuf + 4096, &x, 8) &&
	       !memcmp(p.bbuf + 4088, before, 8) &&
	       !memcmp(p.bbuf + 4104, before + 16, 16),
	       "%s: the 8 bytes, nothing around them", what);

	/* FADD +1, ATOMIC WRITE y, FADD +1: the second FADD sees y */
	t = (uint64_t *)(p.bbuf + 64);
	*t = 100;
	y = 0x5555aaaa5555aaaaULL;
	ibv_wr_start(p.x);
	p.x->wr_id = 2;
	p.x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_fetch_add(p.x, p.bmr->rkey, (uintptr_t)t, 1);
	ibv_wr_set_sge(p.x, p.amr->lkey, (uintptr_t)p.abuf, 8);
	p.x->wr_id = 3;
	ibv_wr_atomic_write(p.x, p.bmr->rkey, (uintptr_t)t, &y);
	p.x->wr_id = 4;
	ibv_wr_atomic_fetch_add(p.x, p.bmr->rkey, (uintptr_t)t, 1);
	ibv_wr_set_sge(p.x, p.amr->lkey, (uintptr_t)p.abuf + 8, 8);
	tap_ret_errno(ibv_wr_complete(p.x), 0, "%s: FADD, ATOMIC WRITE, FADD",
		      what);
	expect(&p, 2, IBV_WC_SUCCESS, IBV_WC_FETCH_ADD, 8, what);
	expect(&p, 3, IBV_WC_SUCCESS, IBV_WC_ATOMIC_WRITE, 8, what);
	expect(&p, 4, IBV_WC_SUCCESS, IBV_WC_FETCH_ADD, 8, what);
	tap_ok(((uint64_t *)p.abuf)[0] == 100 && ((uint64_t *)p.abuf)[1] == y &&
	       *t == y + 1, "%s: FADD saw 100, the next FADD saw the write, %#llx + 1 stays",
	       what, (unsigned long long)y);
	freepair(&p);
}

/* one responder error: the NAK's status, and both QPs in ERROR */
static void aw_error(uint32_t (*rkey)(struct pair *), uint64_t off,
		     unsigned int qp_access, int mr_access, int status,
		     const char *what)
{
	struct pair p;

	if (!mkpair(&p, &dev, &dev, OPS, qp_access, mr_access))
		return;
	tap_ret_errno(post_aw(&p, 9, rkey(&p), (uintptr_t)p.bbuf + off, 1),
		      0, "%s: posted", what);
	expect(&p, 9, status, 0, -1, what);
	tap_ret(qp_state(p.b), IBV_QPS_ERR, "%s: the responder QP in ERROR",
		what);
	tap_ok(dp_verify_byte(p.bbuf, LEN, 0) < 0, "%s: nothing written",
	       what);
	freepair(&p);
}

static uint32_t own_rkey(struct pair *p)
{
	return p->bmr->rkey;
}

static uint32_t bad_rkey(struct pair *p)
{
	return p->bmr->rkey ^ 0x80;
}

static void atomic_write_errors(void)
{
	aw_error(own_rkey, 4, IBV_ACCESS_REMOTE_WRITE, DP_ACCESS_ALL,
		 IBV_WC_REM_INV_REQ_ERR, "ATOMIC WRITE to an unaligned address");
	aw_error(own_rkey, 0, IBV_ACCESS_REMOTE_READ, DP_ACCESS_ALL,
		 IBV_WC_REM_INV_REQ_ERR,
		 "ATOMIC WRITE to a QP without remote write");
	aw_error(own_rkey, 0, IBV_ACCESS_REMOTE_WRITE,
		 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ,
		 IBV_WC_REM_ACCESS_ERR,
		 "ATOMIC WRITE to an MR without remote write");
	aw_error(own_rkey, LEN, IBV_ACCESS_REMOTE_WRITE, DP_ACCESS_ALL,
		 IBV_WC_REM_ACCESS_ERR, "ATOMIC WRITE past the MR's end");
	aw_error(bad_rkey, 0, IBV_ACCESS_REMOTE_WRITE, DP_ACCESS_ALL,
		 IBV_WC_REM_ACCESS_ERR, "ATOMIC WRITE with an unknown rkey");
}

/* WRITE 64 KiB then FLUSH: the FLUSH completes, the data is all there */
static void flush_ok(struct dp_dev *da, struct dp_dev *db, const char *where)
{
	char what[128];
	struct pair p;

	snprintf(what, sizeof(what), "WRITE then FLUSH (%s)", where);
	if (!mkpair(&p, da, db, OPS, IBV_ACCESS_REMOTE_WRITE |
		    RXE2DV_ACCESS_FLUSH_GLOBAL, ACC_FLUSH))
		return;
	dp_fill(p.abuf, LEN, 21);
	ibv_wr_start(p.x);
	p.x->wr_id = 1;
	p.x->wr_flags = 0;
	ibv_wr_rdma_write(p.x, p.bmr->rkey, (uintptr_t)p.bbuf);
	ibv_wr_set_sge(p.x, p.amr->lkey, (uintptr_t)p.abuf, LEN);
	p.x->wr_id = 2;
	p.x->wr_flags = IBV_SEND_SIGNALED;
	rxe2dv_wr_flush(p.x, p.bmr->rkey, (uintptr_t)p.bbuf, LEN,
			RXE2DV_FLUSH_GLOBAL, RXE2DV_FLUSH_RANGE);
	tap_ret_errno(ibv_wr_complete(p.x), 0, "%s: posted", what);
	if (expect(&p, 2, IBV_WC_SUCCESS, WC_FLUSH, 0, what))
		tap_ret(dp_verify(p.bbuf, LEN, 21), -1,
			"%s: 64 KiB in place when the FLUSH completes", what);
	tap_ret_errno(post_flush(&p, 3, p.bmr->rkey, 0, 0, RXE2DV_FLUSH_GLOBAL,
				 RXE2DV_FLUSH_MR), 0,
		      "%s: FLUSH of the whole MR posted", what);
	expect(&p, 3, IBV_WC_SUCCESS, WC_FLUSH, 0, what);
	tap_ret(qp_state(p.b), IBV_QPS_RTS, "%s: the responder QP still in RTS",
		what);
	freepair(&p);
}

static void flush_error(uint32_t (*rkey)(struct pair *), uint64_t off,
			size_t len, uint8_t level, unsigned int qp_access,
			int mr_access, int status, const char *what)
{
	struct pair p;

	if (!mkpair(&p, &dev, &dev, OPS, qp_access, mr_access))
		return;
	tap_ret_errno(post_flush(&p, 9, rkey(&p), (uintptr_t)p.bbuf + off, len,
				 RXE2DV_FLUSH_GLOBAL, level),
		      0, "%s: posted", what);
	expect(&p, 9, status, 0, -1, what);
	tap_ret(qp_state(p.b), IBV_QPS_ERR, "%s: the responder QP in ERROR",
		what);
	freepair(&p);
}

static void flush_errors(void)
{
	unsigned int qpf = IBV_ACCESS_REMOTE_WRITE | RXE2DV_ACCESS_FLUSH_GLOBAL;

	flush_error(own_rkey, 0, 64, RXE2DV_FLUSH_RANGE,
		    IBV_ACCESS_REMOTE_WRITE, ACC_FLUSH, IBV_WC_REM_INV_REQ_ERR,
		    "FLUSH to a QP without FLUSH_GLOBAL");
	flush_error(own_rkey, 0, 64, RXE2DV_FLUSH_RANGE, qpf, DP_ACCESS_ALL,
		    IBV_WC_REM_ACCESS_ERR, "FLUSH of an MR without FLUSH_GLOBAL");
	flush_error(own_rkey, 0, 0, RXE2DV_FLUSH_MR, qpf, DP_ACCESS_ALL,
		    IBV_WC_REM_ACCESS_ERR,
		    "FLUSH of a whole MR without FLUSH_GLOBAL");
	flush_error(own_rkey, LEN - 8, 64, RXE2DV_FLUSH_RANGE, qpf, ACC_FLUSH,
		    IBV_WC_REM_ACCESS_ERR, "FLUSH of a range past the MR's end");
	flush_error(bad_rkey, 0, 64, RXE2DV_FLUSH_MR, qpf, ACC_FLUSH,
		    IBV_WC_REM_ACCESS_ERR, "FLUSH of the MR of an unknown rkey");
}

/*
 * The response is lost, the requester sends the request again: the
 * responder answers the duplicate from what it remembers.  The process
 * overwrites the target after the first execution; a second one would
 * bring the old value back.
 */
static void duplicate(void)
{
	const char *what = "ATOMIC WRITE whose response is lost";
	char rule[64];
	struct pair p;
	uint64_t x = 0x1111222233334444ULL, z = 0x9999, t0;
	volatile uint64_t *t;
	long d0;
	int r;

	if (!mkpair(&p, &dev, &dev, OPS, IBV_ACCESS_REMOTE_WRITE |
		    RXE2DV_ACCESS_FLUSH_GLOBAL, ACC_FLUSH))
		return;
	snprintf(rule, sizeof(rule), "drop qpn=%u opcode=%d count=2",
		 p.b->qp_num, OP_READ_RESP_ONLY);
	r = dp_fault_write(dev.name, rule);
	if (r) {
		tap_ok(false, "%s: fault rule: %s", what, strerror(r));
		freepair(&p);
		return;
	}
	d0 = dp_hw_counter(dev.name, "duplicate_request");
	t = (volatile uint64_t *)(p.bbuf + 128);
	post_aw(&p, 1, p.bmr->rkey, (uintptr_t)t, x);
	for (t0 = dp_now_ms(); *t != x && dp_now_ms() - t0 < DP_WAIT_MS;)
		usleep(100);
	tap_ok(*t == x, "%s: executed once", what);
	*t = z;
	expect(&p, 1, IBV_WC_SUCCESS, IBV_WC_ATOMIC_WRITE, 8, what);
	tap_ok(*t == z, "%s: not executed again (%#llx)", what,
	       (unsigned long long)*t);
	post_flush(&p, 2, p.bmr->rkey, (uintptr_t)p.bbuf, 64,
		   RXE2DV_FLUSH_GLOBAL, RXE2DV_FLUSH_RANGE);
	expect(&p, 2, IBV_WC_SUCCESS, WC_FLUSH, 0,
	       "FLUSH whose response is lost");
	tap_ok(dp_hw_counter(dev.name, "duplicate_request") - d0 >= 2,
	       "duplicate_request counted both");
	dp_fault_write(dev.name, "clear");
	freepair(&p);
}

/*
 * rdma_rxe computes a FLUSH's ICRC over the headers twice (no payload
 * offset in its opcode table); rxe2 sends the IBTA's unless told to
 * send rdma_rxe's, and takes either.
 */
static bool flush_icrc_rxe(bool on)
{
	return !dp_sh("echo %d > /sys/module/rdma_rxe2/parameters/flush_icrc_rxe",
		      on);
}

/* two rxe2 devices in two network namespaces, over a veth */
static void two_namespaces(void)
{
	struct dp_dev d1, d2;
	bool up;
	uint64_t end;

	dp_sh("ip netns del pla 2>/dev/null; ip netns del plb 2>/dev/null");
	up = !dp_sh("ip netns add pla && ip netns add plb && "
		    "ip link add plva netns pla type veth peer name plvb netns plb && "
		    "ip -n pla addr add 10.79.3.1/24 dev plva && "
		    "ip -n plb addr add 10.79.3.2/24 dev plvb && "
		    "ip -n pla link set plva up && ip -n plb link set plvb up && "
		    "ip netns exec pla rdma link add plx0 type rxe2 netdev plva && "
		    "ip netns exec plb rdma link add plx1 type rxe2 netdev plvb");
	for (end = dp_now_ms() + 10000; up && dp_now_ms() < end; usleep(50000))
		if (!dp_sh("grep -qs ffff:0a4f:0301 /sys/class/infiniband/plx0/ports/1/gids/* && "
			   "grep -qs ffff:0a4f:0302 /sys/class/infiniband/plx1/ports/1/gids/*"))
			break;
	if (tap_ok(up && dp_now_ms() < end,
		   "rxe2 plx0 (netns pla) and plx1 (netns plb) over a veth")) {
		dp_open(&d1, "plx0");
		dp_open(&d2, "plx1");
		atomic_write_ok(&d1, &d2, OPS, "two namespaces");
		flush_ok(&d1, &d2, "two namespaces");
		if (tap_ok(flush_icrc_rxe(true), "flush_icrc_rxe=1"))
			flush_ok(&d1, &d2, "two namespaces, rdma_rxe's ICRC");
		flush_icrc_rxe(false);
		dp_close(&d1);
		dp_close(&d2);
	}
	dp_sh("rdma link del plx0; rdma link del plx1; "
	      "ip netns del pla; ip netns del plb");
}

/*
 * rdma_rxe on plv0 (init_net), rxe2 on plv1 (netns plns): rdma_rxe of
 * Linux 6.1 only receives in init_net (see test_interop.sh).  This
 * process stays in init_net: ib_core resolves each QP's path in the
 * namespace of its GID's netdev.
 */
static bool rxe_links(void)
{
	uint64_t end;

	dp_sh("ip netns del plns 2>/dev/null; ip link del plv0 2>/dev/null");
	if (dp_sh("modprobe rdma_rxe && ip netns add plns && "
		  "ip link add plv0 type veth peer name plv1 netns plns && "
		  "ip addr add 10.79.2.2/24 dev plv0 && ip link set plv0 up && "
		  "ip -n plns link set lo up && "
		  "ip -n plns addr add 10.79.2.1/24 dev plv1 && "
		  "ip -n plns link set plv1 up && "
		  "rdma link add plrxe type rxe netdev plv0 && "
		  "ip netns exec plns rdma link add plrxe2 type rxe2 netdev plv1"))
		return false;
	end = dp_now_ms() + 10000;
	while (dp_sh("grep -qs ffff:0a4f:0202 /sys/class/infiniband/plrxe/ports/1/gids/* && "
		     "grep -qs ffff:0a4f:0201 /sys/class/infiniband/plrxe2/ports/1/gids/*")) {
		if (dp_now_ms() > end)
			return false;
		usleep(50000);
	}
	return true;
}

static void rxe_links_del(void)
{
	dp_sh("rdma link del plrxe; rdma link del plrxe2; "
	      "ip link del plv0; ip netns del plns");
}

/* both ways; FLUSH only from rxe2: rdma-core 44's rxe provider lacks it */
static void interop(void)
{
	const char *why = "rdma_rxe: ATOMIC WRITE and FLUSH need Linux 6.2";
	struct ibv_device_attr_ex a;
	struct dp_dev r, x;

	if (!tap_ok(rxe_links(), "rdma_rxe plrxe and rxe2 plrxe2 over a veth"))
		goto out;
	dp_open(&r, "plrxe");
	dp_open(&x, "plrxe2");
	if (ibv_query_device_ex(r.ctx, NULL, &a) ||
	    !(a.device_cap_flags_ex & CAP_ATOMIC_WRITE) ||
	    !(a.device_cap_flags_ex & CAP_FLUSH_GLOBAL)) {
		tap_skip("interop: %s", why);
	} else {
		atomic_write_ok(&x, &r, OPS, "rxe2 to rdma_rxe");
		if (tap_ok(flush_icrc_rxe(true), "flush_icrc_rxe=1"))
			flush_ok(&x, &r, "rxe2 to rdma_rxe, its FLUSH ICRC");
		flush_icrc_rxe(false);
		atomic_write_ok(&r, &x, OPS & ~RXE2DV_QP_EX_WITH_FLUSH,
				"rdma_rxe to rxe2");
	}
	dp_close(&r);
	dp_close(&x);
out:
	rxe_links_del();
}

int main(void)
{
	dp_open(&dev, test_dev_name());
	caps();
	access_bits();
	create_errors();
	api_errors();
	atomic_write_ok(&dev, &dev, OPS, "loopback");
	atomic_write_errors();
	flush_ok(&dev, &dev, "loopback");
	flush_errors();
	duplicate();
	two_namespaces();
	interop();
	dp_close(&dev);
	return tap_done();
}
