// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: ibv_create_qp_ex with random valid attributes (RC, UC, UD, create and send_ops flags, caps, SRQ) reaching RTS; each create flag's EINVAL or EOPNOTSUPP
 *
 * ibv_create_qp_ex with randomised but valid attributes, as rdma-core's
 * own tests draw them: RC, UC and UD, comp_mask with or without
 * CREATE_FLAGS (flags from what the device can do, zero included) and
 * SEND_OPS_FLAGS (a subset of the opcodes the type allows), any caps
 * within the device limits, an SRQ or not, sq_sig_all or not.  Each QP
 * must be created with at least the caps asked, reach RTS and go.
 * Then the create flags one by one: an undefined bit is EINVAL, a defined
 * flag for a QP type it does not apply to EINVAL, one the device lacks
 * EOPNOTSUPP.
 * The seed is printed; RXE2_SEED=<n> replays a run.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tap.h"
#include "util.h"

#define ITERATIONS 150

static struct ibv_context *ctx;
static struct ibv_device_attr_ex dattr;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_srq *srq;
static union ibv_gid gid;
static int gid_index;
static unsigned int seed;

static uint32_t rnd(uint32_t lo, uint32_t hi)
{
	return lo + (uint32_t)(random() % ((long)hi - lo + 1));
}

/* The send opcodes a QP type may carry (ibv_wr_* builders). */
static uint64_t type_ops(enum ibv_qp_type t)
{
	uint64_t ops = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;

	if (t == IBV_QPT_UD)
		return ops;
	ops |= IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM;
	if (t == IBV_QPT_UC)
		return ops;
	return ops | IBV_QP_EX_WITH_RDMA_READ |
	       IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
	       IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |
	       IBV_QP_EX_WITH_SEND_WITH_INV;
}

static void random_attr(enum ibv_qp_type t, struct ibv_qp_init_attr_ex *a)
{
	/* big rings cost time to allocate, not coverage */
	uint32_t max_wr = dattr.orig_attr.max_qp_wr < 4096 ?
			  dattr.orig_attr.max_qp_wr : 4096;

	memset(a, 0, sizeof(*a));
	a->qp_type = t;
	a->send_cq = cq;
	a->recv_cq = cq;
	a->pd = pd;
	a->comp_mask = IBV_QP_INIT_ATTR_PD;
	a->sq_sig_all = rnd(0, 1);
	a->cap.max_send_wr = rnd(1, max_wr);
	a->cap.max_send_sge = rnd(1, dattr.orig_attr.max_sge);
	a->cap.max_inline_data = rnd(0, 1) ? rnd(0, 64) : 0;
	if (t != IBV_QPT_UC && rnd(0, 3) == 0) {
		a->srq = srq;
	} else {
		a->cap.max_recv_wr = rnd(1, max_wr);
		a->cap.max_recv_sge = rnd(1, dattr.orig_attr.max_sge);
	}
	if (rnd(0, 1)) {
		a->comp_mask |= IBV_QP_INIT_ATTR_CREATE_FLAGS;
		/* UD: not hearing its own multicast; the others none */
		a->create_flags = t == IBV_QPT_UD && rnd(0, 1) ?
				  IBV_QP_CREATE_BLOCK_SELF_MCAST_LB : 0;
	}
	if (rnd(0, 1)) {
		a->comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		do
			a->send_ops_flags = type_ops(t) & random();
		while (!a->send_ops_flags);
	}
}

static const char *type_name(enum ibv_qp_type t)
{
	return t == IBV_QPT_RC ? "RC" : t == IBV_QPT_UC ? "UC" : "UD";
}

static bool up_and_down(struct ibv_qp *qp)
{
	bool ok = !qp_to_init(qp) && !qp_to_rtr(qp, gid_index, &gid) &&
		  !qp_to_rts(qp);

	return !ibv_destroy_qp(qp) && ok;
}

static void random_creates(enum ibv_qp_type t)
{
	struct ibv_qp_init_attr_ex a, asked;
	int i, bad = 0;
	struct ibv_qp *qp;
	bool ok;

	for (i = 0; i < ITERATIONS; i++) {
		random_attr(t, &a);
		asked = a;
		qp = ibv_create_qp_ex(ctx, &a);
		ok = qp && a.cap.max_send_wr >= asked.cap.max_send_wr &&
		     a.cap.max_send_sge >= asked.cap.max_send_sge &&
		     a.cap.max_inline_data >= asked.cap.max_inline_data &&
		     a.cap.max_recv_wr >= asked.cap.max_recv_wr &&
		     a.cap.max_recv_sge >= asked.cap.max_recv_sge;
		if (qp)
			ok = up_and_down(qp) && ok;
		if (ok)
			continue;
		if (!bad++)
			tap_diag("%s #%d (seed %u): %s: comp_mask 0x%x create_flags 0x%x send_ops 0x%llx sig_all %d srq %d wr %u/%u sge %u/%u inline %u",
				 type_name(t), i, seed,
				 qp ? "caps short or RTS failed" :
				 strerror(errno), asked.comp_mask,
				 asked.create_flags,
				 (unsigned long long)asked.send_ops_flags,
				 asked.sq_sig_all, !!asked.srq,
				 asked.cap.max_send_wr, asked.cap.max_recv_wr,
				 asked.cap.max_send_sge,
				 asked.cap.max_recv_sge,
				 asked.cap.max_inline_data);
	}
	tap_ok(!bad, "%s: %d random valid ibv_create_qp_ex attribute sets: %d failed (seed %u)",
	       type_name(t), ITERATIONS, bad, seed);
}

static void expect_flag(enum ibv_qp_type t, uint32_t flag, int err,
			const char *what)
{
	struct ibv_qp_init_attr_ex a;
	struct ibv_qp *qp;

	random_attr(t, &a);
	a.comp_mask |= IBV_QP_INIT_ATTR_CREATE_FLAGS;
	a.create_flags = flag;
	qp = ibv_create_qp_ex(ctx, &a);
	tap_null_errno(qp, err, "%s %s -> %s", type_name(t), what,
		       strerror(err));
	if (qp)
		ibv_destroy_qp(qp);
}

int main(void)
{
	const char *dev = test_dev_name();
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 64,
						  .max_sge = 1 } };
	const char *s = getenv("RXE2_SEED");

	seed = s ? strtoul(s, NULL, 0) : (unsigned int)time(NULL);
	srandom(seed);
	tap_diag("seed %u (RXE2_SEED=%u replays it)", seed, seed);
	ctx = test_open(dev);
	if (ibv_query_device_ex(ctx, NULL, &dattr))
		tap_bail("ibv_query_device_ex");
	gid_index = find_ipv4_gid(ctx, &gid);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	srq = pd ? ibv_create_srq(pd, &sa) : NULL;
	if (gid_index < 0 || !cq || !srq)
		tap_bail("IPv4 GID, PD, CQ, SRQ");

	random_creates(IBV_QPT_RC);
	random_creates(IBV_QPT_UC);
	random_creates(IBV_QPT_UD);

	expect_flag(IBV_QPT_UD, 1 << 20, EINVAL, "undefined create flag 1<<20");
	expect_flag(IBV_QPT_RC, 1 << 20, EINVAL, "undefined create flag 1<<20");
	/* the kernel's core: FCS and VLAN stripping are for raw packet QPs */
	expect_flag(IBV_QPT_UD, IBV_QP_CREATE_SCATTER_FCS, EINVAL,
		    "SCATTER_FCS");
	expect_flag(IBV_QPT_UD, IBV_QP_CREATE_CVLAN_STRIPPING, EINVAL,
		    "CVLAN_STRIPPING");
	/* create flags are for UD and raw packet QPs only */
	expect_flag(IBV_QPT_RC, IBV_QP_CREATE_BLOCK_SELF_MCAST_LB, EINVAL,
		    "BLOCK_SELF_MCAST_LB");
	expect_flag(IBV_QPT_UC, IBV_QP_CREATE_BLOCK_SELF_MCAST_LB, EINVAL,
		    "BLOCK_SELF_MCAST_LB");
	/* not advertised in device_cap_flags_ex: no PCI bus to pad for */
	if (!(dattr.device_cap_flags_ex & IBV_DEVICE_PCI_WRITE_END_PADDING))
		expect_flag(IBV_QPT_UD, IBV_QP_CREATE_PCI_WRITE_END_PADDING,
			    EOPNOTSUPP, "PCI_WRITE_END_PADDING (not advertised)");

	ibv_destroy_srq(srq);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return tap_done();
}
