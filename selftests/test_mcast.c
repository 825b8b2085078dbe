// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: UD multicast: the max_mcast limits exactly, attach and detach errnos, IGMP and MLD joins and leaves, EBUSY of an attached QP, a SEND to every attached QP once, BLOCK_SELF_MCAST_LB
 *
 * Multicast on the device under test (rxe2; the limits checked exactly
 * need the module parameters selftests/run loads, max_mcast_grp=16 and
 * max_mcast_qp_attach=8):
 *   - ibv_query_device reports max_mcast_grp, max_mcast_qp_attach and
 *     max_total_mcast_qp_attach, and they hold exactly: one QP more in a
 *     group, or one group more, is ENOMEM;
 *   - errnos: an RC QP or a unicast GID is EINVAL, detaching what is not
 *     attached EINVAL, attaching twice changes nothing;
 *   - the netdev joins the IP group (IGMP) with the first QP and leaves
 *     it with the last one; an attached QP cannot be destroyed (EBUSY,
 *     ib_core's rule);
 *   - a UD SEND to the group reaches every attached QP once, byte for
 *     byte, from the sender's QP number, and not a detached one;
 *   - an IPv6 group the same way (MLD membership);
 *   - a QP created with IBV_QP_CREATE_BLOCK_SELF_MCAST_LB does not get
 *     its own sends back, another attached QP does; one without the flag
 *     hears itself.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dp.h"
#include "tap.h"
#include "util.h"

#define QKEY	0x11111111
#define MSG	200
#define GRH	40
#define NRX	4

static struct dp_dev dev;
static uint8_t *buf;
static struct ibv_mr *mr;
static struct ibv_cq *cq;
static const char *ndev;

/* ::ffff:239.1.2.<n> */
static union ibv_gid group(int n)
{
	union ibv_gid g = { .raw = { [10] = 0xff, [11] = 0xff, [12] = 239,
				     [13] = 1, [14] = 2 } };

	g.raw[15] = n;
	return g;
}

static struct ibv_qp *ud_qp(bool block_self)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_UD,
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = dev.pd,
	};
	struct ibv_qp *qp;

	if (block_self) {
		a.comp_mask |= IBV_QP_INIT_ATTR_CREATE_FLAGS;
		a.create_flags = IBV_QP_CREATE_BLOCK_SELF_MCAST_LB;
	}
	qp = ibv_create_qp_ex(dev.ctx, &a);
	if (qp && (qp_to_init(qp) || qp_to_rtr(qp, dev.gidx, &dev.gid) ||
		   qp_to_rts(qp))) {
		ibv_destroy_qp(qp);
		qp = NULL;
	}
	return qp;
}

static bool igmp_member(int n)
{
	return !dp_sh("ip maddr show dev %s | grep -qw 239.1.2.%d", ndev, n);
}

static void test_limits(void)
{
	long grp = module_param("max_mcast_grp");
	long per = module_param("max_mcast_qp_attach");
	struct ibv_device_attr *a = &dev.attr;

	tap_ok(a->max_mcast_grp > 0 && a->max_mcast_qp_attach > 0 &&
	       a->max_total_mcast_qp_attach >= a->max_mcast_qp_attach,
	       "max_mcast_grp %d, max_mcast_qp_attach %d, max_total_mcast_qp_attach %d",
	       a->max_mcast_grp, a->max_mcast_qp_attach,
	       a->max_total_mcast_qp_attach);
	tap_ok(a->max_mcast_grp == grp && a->max_mcast_qp_attach == per &&
	       a->max_total_mcast_qp_attach == grp * per,
	       "the limits are the module's (%ld groups of %ld)", grp, per);
}

static void test_errors(void)
{
	union ibv_gid g = group(1), uni = dev.gid;
	struct dp_qp rc_a, rc_b;
	struct ibv_qp *qp = ud_qp(false);

	if (!qp)
		tap_bail("UD QP: %s", strerror(errno));
	if (!dp_rc_pair(&dev, &rc_a, &rc_b)) {
		tap_ret_errno(ibv_attach_mcast(rc_a.qp, &g, 0), EINVAL,
			      "attach an RC QP: EINVAL");
		dp_qp_free(&rc_a);
		dp_qp_free(&rc_b);
	}
	tap_ret_errno(ibv_attach_mcast(qp, &uni, 0), EINVAL,
		      "attach to a unicast GID: EINVAL");
	tap_ret_errno(ibv_detach_mcast(qp, &g, 0), EINVAL,
		      "detach from a group never attached: EINVAL");
	tap_ok(!igmp_member(1), "%s not in 239.1.2.1 before", ndev);
	tap_ret_errno(ibv_attach_mcast(qp, &g, 0), 0, "attach");
	tap_ok(igmp_member(1), "%s joined 239.1.2.1 (IGMP)", ndev);
	tap_ret_errno(ibv_attach_mcast(qp, &g, 0), 0,
		      "attach the same QP again: 0");
	tap_ret_errno(ibv_detach_mcast(qp, &g, 0), 0, "detach");
	tap_ok(!igmp_member(1), "%s left 239.1.2.1 with the last QP", ndev);
	tap_ret_errno(ibv_detach_mcast(qp, &g, 0), EINVAL,
		      "detach again: EINVAL");
	tap_ret_errno(ibv_attach_mcast(qp, &g, 0), 0, "attach, then destroy");
	/* ib_core keeps a process's QP while it is attached */
	if (!tap_ret_errno(ibv_destroy_qp(qp), EBUSY,
			   "destroy while attached: EBUSY"))
		return;		/* gone (or not): touch it no more */
	tap_ok(igmp_member(1), "%s still in 239.1.2.1", ndev);
	ibv_detach_mcast(qp, &g, 0);
	tap_ret_errno(ibv_destroy_qp(qp), 0, "detached: destroyed");
	tap_ok(!igmp_member(1), "%s left 239.1.2.1", ndev);
}

static void test_exact_limits(void)
{
	int per = dev.attr.max_mcast_qp_attach, grp = dev.attr.max_mcast_grp;
	struct ibv_qp *qps[65] = {};
	union ibv_gid g = group(2);
	int i, bad = 0;

	if (per >= 64 || grp > 200) {
		tap_skip("exact limits: load with small max_mcast_* parameters");
		tap_skip("exact limits: load with small max_mcast_* parameters");
		tap_skip("exact limits: load with small max_mcast_* parameters");
		return;
	}
	for (i = 0; i <= per; i++)
		if (!(qps[i] = ud_qp(false)))
			tap_bail("UD QP %d: %s", i, strerror(errno));
	for (i = 0; i < per; i++)
		bad += !!ibv_attach_mcast(qps[i], &g, 0);
	tap_ok(!bad, "%d QPs attached to one group", per);
	tap_ret_errno(ibv_attach_mcast(qps[per], &g, 0), ENOMEM,
		      "QP %d in the group: ENOMEM", per + 1);
	for (i = 0; i <= per; i++) {
		ibv_detach_mcast(qps[i], &g, 0);
		ibv_destroy_qp(qps[i]);
	}

	qps[0] = ud_qp(false);
	for (i = 0, bad = 0; i < grp; i++) {
		g = group(10 + i);
		bad += !!ibv_attach_mcast(qps[0], &g, 0);
	}
	g = group(10 + grp);
	tap_ret_errno(bad ? -1 : ibv_attach_mcast(qps[0], &g, 0), ENOMEM,
		      "%d groups, then group %d: ENOMEM", grp, grp + 1);
	for (i = 0; i < grp; i++) {
		g = group(10 + i);
		ibv_detach_mcast(qps[0], &g, 0);
	}
	ibv_destroy_qp(qps[0]);
}

static int mc_send(struct ibv_qp *qp, struct ibv_ah *ah, uint64_t id)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = MSG,
			       .lkey = mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = id,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = 0xffffff;
	wr.wr.ud.remote_qkey = QKEY;
	dp_fill(buf, MSG, (uint32_t)id);
	return ibv_post_send(qp, &wr, &bad);
}

static void post_recvs(struct ibv_qp **qps, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (dp_post_recv1(qps[i], 0x100 + i, buf + 4096 * (i + 1),
				  GRH + MSG, mr->lkey))
			tap_bail("post_recv: %s", strerror(errno));
}

/*
 * Sends one message from qps[from] to the group and checks which of the
 * n QPs got it (want: bit i for qps[i]) and that the data is exact.
 */
static void deliver(struct ibv_qp **qps, int n, int from, unsigned int want,
		    struct ibv_ah *ah, const char *what)
{
	unsigned int got = 0;
	struct ibv_wc wc[16];
	bool data = true, sent = false;
	int i, k, m;

	memset(buf + 4096, 0, 4096 * n);
	if (mc_send(qps[from], ah, 0x777))
		tap_bail("post_send: %s", strerror(errno));
	/* the send completion and the receives; then make sure no more */
	m = dp_poll(cq, wc, 1 + __builtin_popcount(want), DP_WAIT_MS);
	m += dp_poll_none(cq, wc + (m > 0 ? m : 0), 200);
	for (k = 0; k < m; k++) {
		if (wc[k].wr_id == 0x777) {
			sent = wc[k].status == IBV_WC_SUCCESS;
			continue;
		}
		i = wc[k].wr_id - 0x100;
		if (i < 0 || i >= n || wc[k].status != IBV_WC_SUCCESS ||
		    wc[k].byte_len != GRH + MSG ||
		    wc[k].src_qp != qps[from]->qp_num) {
			data = false;
			continue;
		}
		got |= 1u << i;
		if (dp_verify(buf + 4096 * (i + 1) + GRH, MSG, 0x777) >= 0)
			data = false;
	}
	tap_ok(sent && got == want && data,
	       "%s: receivers 0x%x (want 0x%x), data byte for byte", what,
	       got, want);
}

static void test_delivery(void)
{
	union ibv_gid g = group(3);
	struct ibv_ah_attr aa = {
		.is_global = 1,
		.port_num = PORT,
		.grh = { .dgid = g, .sgid_index = dev.gidx, .hop_limit = 1 },
	};
	struct ibv_qp *q[NRX + 1];
	struct ibv_ah *ah;
	int i;

	/* q[0] blocks its own multicast; q[3] is detached; q[4] never was */
	for (i = 0; i <= NRX; i++)
		if (!(q[i] = ud_qp(i == 0)))
			tap_bail("UD QP %d: %s", i, strerror(errno));
	ah = ibv_create_ah(dev.pd, &aa);
	if (!ah)
		tap_bail("AH to 239.1.2.3: %s", strerror(errno));
	for (i = 0; i < NRX; i++)
		if (ibv_attach_mcast(q[i], &g, 0))
			tap_bail("attach %d: %s", i, strerror(errno));
	ibv_detach_mcast(q[3], &g, 0);

	post_recvs(q, NRX + 1);
	deliver(q, NRX + 1, 4, 0x7, ah,
		"SEND from an outside QP to the group");
	post_recvs(q, 3);
	deliver(q, NRX + 1, 0, 0x6, ah,
		"SEND from a member with BLOCK_SELF_MCAST_LB: not back to it");
	post_recvs(q, 3);
	deliver(q, NRX + 1, 1, 0x7, ah,
		"SEND from a member without it: to every member, itself too");
	/* drain what the receives left over */
	dp_poll_none(cq, (struct ibv_wc[16]){}, 100);
	ibv_destroy_ah(ah);
	for (i = 0; i <= NRX; i++) {
		ibv_detach_mcast(q[i], &g, 0);
		ibv_destroy_qp(q[i]);
	}
}

/* a global IPv6 RoCEv2 GID of the port (not IPv4-mapped, not fe80::) */
static int find_ipv6_gid(void)
{
	int i;

	for (i = 0; i < dev.port.gid_tbl_len; i++) {
		struct ibv_gid_entry e;

		if (ibv_query_gid_ex(dev.ctx, PORT, i, &e, 0) ||
		    e.gid_type != IBV_GID_TYPE_ROCE_V2 ||
		    (e.gid.raw[0] == 0xfe && (e.gid.raw[1] & 0xc0) == 0x80) ||
		    (!e.gid.global.subnet_prefix && e.gid.raw[10] == 0xff))
			continue;
		return i;
	}
	return -1;
}

/* an IPv6 group: ff0e::4:6, sent from the IPv6 GID, to two members */
static void test_ipv6(void)
{
	union ibv_gid g = { .raw = { 0xff, 0x0e, [13] = 4, [15] = 6 } };
	struct ibv_ah_attr aa = {
		.is_global = 1,
		.port_num = PORT,
		.grh = { .dgid = g, .hop_limit = 1 },
	};
	struct ibv_qp *q[3];
	struct ibv_ah *ah;
	int i, gi = find_ipv6_gid();
	bool added = false;

	/* a netdev taken down by an earlier test lost its IPv6 address */
	if (gi < 0 && !dp_sh("ip -6 addr add fd00:7278:4:99::1/64 dev %s nodad",
			     ndev)) {
		added = true;
		for (i = 0; i < 50 && gi < 0; i++) {
			usleep(100000);
			gi = find_ipv6_gid();
		}
	}
	if (gi < 0) {
		tap_skip("IPv6 group: no global IPv6 GID");
		tap_skip("IPv6 group: no global IPv6 GID");
		return;
	}
	aa.grh.sgid_index = gi;
	for (i = 0; i < 3; i++)
		if (!(q[i] = ud_qp(false)))
			tap_bail("UD QP %d: %s", i, strerror(errno));
	ah = ibv_create_ah(dev.pd, &aa);
	if (!ah)
		tap_bail("AH to ff0e::4:6: %s", strerror(errno));
	for (i = 0; i < 2; i++)
		if (ibv_attach_mcast(q[i], &g, 0))
			tap_bail("attach %d to ff0e::4:6: %s", i,
				 strerror(errno));
	tap_ok(!dp_sh("ip maddr show dev %s | grep -qw ff0e::4:6", ndev),
	       "%s joined ff0e::4:6 (MLD)", ndev);
	post_recvs(q, 3);
	deliver(q, 3, 2, 0x3, ah, "IPv6 group: SEND from an outside QP");
	dp_poll_none(cq, (struct ibv_wc[16]){}, 100);
	ibv_destroy_ah(ah);
	for (i = 0; i < 3; i++) {
		ibv_detach_mcast(q[i], &g, 0);
		ibv_destroy_qp(q[i]);
	}
	if (added)
		dp_sh("ip -6 addr del fd00:7278:4:99::1/64 dev %s", ndev);
}

int main(void)
{
	dp_open(&dev, test_dev_name());
	ndev = dp_netdev(&dev);
	buf = dp_alloc(65536);
	mr = dp_reg(dev.pd, buf, 65536, DP_ACCESS_ALL);
	cq = ibv_create_cq(dev.ctx, 256, NULL, NULL, 0);
	if (!ndev || !cq)
		tap_bail("netdev, CQ");

	test_limits();
	test_errors();
	test_exact_limits();
	test_delivery();
	test_ipv6();

	ibv_destroy_cq(cq);
	ibv_dereg_mr(mr);
	dp_close(&dev);
	return tap_done();
}
