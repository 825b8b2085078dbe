// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: UD data path: the GRH area with the IPv4 header, the GRH flag, src_qp, sl (the RoCE packet type), Q_Key mismatch dropped, sizes to the path MTU, unaligned buffers, inline, SEND_WITH_IMM
 *
 * UD data path over the IPv4 RoCEv2 GID (loopback): two senders to one
 * receiver.  Every receive starts with the 40-byte GRH area, where RoCEv2
 * over IPv4 puts the IPv4 header in bytes 20..39 (as ib_core's
 * rdma_network_hdr and every RoCE HCA do); wc_flags carry GRH (and
 * WITH_IMM), src_qp names the sender, byte_len is payload + 40, and on
 * rxe2 sl is the RoCE packet type as mlx5 reports it (0xa: RoCEv2 over
 * IPv4; UCX's UD transport reads it to find the destination address).  A Q_Key
 * mismatch is dropped silently (the sender still completes), the next
 * good message lands in the same receive.  Sizes up to the path MTU,
 * unaligned receive buffers, inline sends, SEND_WITH_IMM.
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

#define QKEY 0x11111111
#define BUFLEN 16384
#define GRH 40

static struct dp_dev dev;
static uint8_t *sbuf, *rbuf;
static struct ibv_mr *smr, *rmr;
static struct ibv_ah *ah;
static struct dp_qp snd, snd2, rcv;
static uint64_t id = 0x10;

static int ud_send(struct dp_qp *s, uint64_t wr_id, enum ibv_wr_opcode op,
		   uint32_t len, uint32_t qkey, uint32_t imm, bool inl)
{
	struct ibv_sge sge = { .addr = (uintptr_t)sbuf, .length = len,
			       .lkey = smr->lkey };
	struct ibv_send_wr wr, *bad = NULL;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED | (inl ? IBV_SEND_INLINE : 0);
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.imm_data = htobe32(imm);
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = rcv.qp->qp_num;
	wr.wr.ud.remote_qkey = qkey;
	return ibv_post_send(s->qp, &wr, &bad);
}

/* The GRH area holds the IPv4 header of a UDP packet from us to us. */
static bool check_grh(const uint8_t *g, uint32_t len, bool imm)
{
	uint32_t pad = (4 - (len & 3)) & 3;

	const uint8_t *ip = g + 20;
	uint16_t tot;

	memcpy(&tot, ip + 2, 2);
	return (ip[0] >> 4) == 4 && ip[9] == 17 /* UDP */ &&
	       !memcmp(ip + 12, dev.gid.raw + 12, 4) &&
	       !memcmp(ip + 16, dev.gid.raw + 12, 4) &&
	       /* IPv4 20 + UDP 8 + BTH 12 + DETH 8 [+ ImmDt 4] + payload
		* + pad + ICRC 4
		*/
	       ntohs(tot) == 20 + 8 + 12 + 8 + (imm ? 4 : 0) + len + pad + 4;
}

static void one(struct dp_qp *s, uint32_t len, size_t roff, bool imm,
		bool inl)
{
	struct dp_wc_want w;
	uint64_t wid = id++;
	uint32_t immv = 0xc0ffee00 + (uint32_t)wid;
	char what[128];
	int r;

	snprintf(what, sizeof(what), "UD %s%s %u B from QP %#x%s",
		 imm ? "SEND_WITH_IMM" : "SEND", inl ? " inline" : "", len,
		 s->qp->qp_num, roff ? " into an unaligned buffer" : "");
	memset(rbuf, 0xa5, BUFLEN);
	dp_fill(sbuf, len, (uint32_t)wid);
	r = dp_post_recv1(rcv.qp, wid, rbuf + roff, GRH + len + 32,
			  rmr->lkey);
	if (!r)
		r = ud_send(s, wid, imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
			    len, QKEY, immv, inl);
	if (!tap_ret_errno(r, 0, "%s: post", what))
		return;
	if (inl)
		memset(sbuf, 0x5a, len);
	w = dp_want(wid, IBV_WC_SEND);
	w.wc_flags = imm ? IBV_WC_WITH_IMM : 0;
	w.qp_num = s->qp->qp_num;
	dp_expect(s->scq, &w, "%s: sender completion", what);
	w = dp_want(wid, IBV_WC_RECV);
	w.byte_len = GRH + len;
	w.wc_flags = IBV_WC_GRH | (imm ? IBV_WC_WITH_IMM : 0);
	w.imm = immv;
	w.src_qp = s->qp->qp_num;
	w.qp_num = rcv.qp->qp_num;
	/* rxe2 as mlx5: RoCEv2 (bit 3) over IPv4 (2), where UCX looks */
	if (dev.rxe2)
		w.sl = 0x8 | 0x2;
	dp_expect(rcv.rcq, &w, "%s: RECV, GRH flag, src_qp, byte_len %u%s",
		  what, GRH + len, dev.rxe2 ? ", sl RoCEv2/IPv4" : "");
	tap_ok(check_grh(rbuf + roff, len, imm),
	       "%s: GRH area carries the IPv4/UDP header, our addresses",
	       what);
	tap_ok(dp_verify(rbuf + roff + GRH, len, (uint32_t)wid) < 0 &&
	       dp_verify_byte(rbuf + roff + GRH + len, 32, 0xa5) < 0 &&
	       dp_verify_byte(rbuf, roff, 0xa5) < 0,
	       "%s: payload byte-exact after the GRH, nothing beyond", what);
}

static void qkey_mismatch(void)
{
	struct dp_wc_want w;
	struct ibv_wc wc;
	int r;

	memset(rbuf, 0xa5, BUFLEN);
	r = dp_post_recv1(rcv.qp, 0x900, rbuf, GRH + 64, rmr->lkey);
	if (!r) {
		dp_fill(sbuf, 64, 1);
		r = ud_send(&snd, 0x901, IBV_WR_SEND, 64, QKEY ^ 0x100, 0,
			    false);
	}
	if (!tap_ret_errno(r, 0, "Q_Key mismatch: post"))
		return;
	w = dp_want(0x901, IBV_WC_SEND);
	dp_expect(snd.scq, &w, "Q_Key mismatch: sender completes (UD)");
	tap_ok(dp_poll_none(rcv.rcq, &wc, 200) == 0,
	       "Q_Key mismatch: dropped, no receive completion");
	tap_ok(dp_verify_byte(rbuf, GRH + 64, 0xa5) < 0,
	       "Q_Key mismatch: receive buffer untouched");
	dp_fill(sbuf, 64, 2);
	r = ud_send(&snd2, 0x902, IBV_WR_SEND, 64, QKEY, 0, false);
	tap_ret_errno(r, 0, "Q_Key match after a mismatch: post");
	w = dp_want(0x902, IBV_WC_SEND);
	dp_expect(snd2.scq, &w, "Q_Key match: sender completion");
	w = dp_want(0x900, IBV_WC_RECV);
	w.byte_len = GRH + 64;
	w.src_qp = snd2.qp->qp_num;
	w.wc_flags = IBV_WC_GRH;
	dp_expect(rcv.rcq, &w,
		  "Q_Key match: the receive left over gets the good message");
	tap_ok(dp_verify(rbuf + GRH, 64, 2) < 0, "Q_Key match: data byte-exact");
}

/*
 * A datagram longer than the receive buffer is the sender's doing: on
 * rxe2 it is dropped and counted (rx_dropped), the receiver stays in RTS
 * with its receive for the next datagram, which lands there whole.
 */
static void too_long(void)
{
	long drops = dp_hw_counter(dev.name, "rx_dropped");
	struct dp_wc_want w;
	struct ibv_wc wc;
	int r;

	if (!dev.rxe2) {
		tap_skip("too long: rxe2's rule (rdma_rxe completes LOC_LEN_ERR)");
		return;
	}
	memset(rbuf, 0xa5, BUFLEN);
	r = dp_post_recv1(rcv.qp, 0xa00, rbuf, GRH + 64, rmr->lkey);
	if (!r) {
		dp_fill(sbuf, 200, 3);
		r = ud_send(&snd, 0xa01, IBV_WR_SEND, 200, QKEY, 0, false);
	}
	if (!tap_ret_errno(r, 0, "(rxe2) 200 B into a 64 B receive: post"))
		return;
	w = dp_want(0xa01, IBV_WC_SEND);
	dp_expect(snd.scq, &w, "(rxe2) too long: sender completes (UD)");
	tap_ok(dp_poll_none(rcv.rcq, &wc, 200) == 0 &&
	       dp_verify_byte(rbuf, GRH + 64, 0xa5) < 0,
	       "(rxe2) too long: dropped, no receive completion, buffer untouched");
	tap_ret(qp_state(rcv.qp), IBV_QPS_RTS, "(rxe2) too long: receiver still RTS");
	tap_ret(dp_hw_counter(dev.name, "rx_dropped") - drops, 1,
		"(rxe2) too long: counted in rx_dropped");
	dp_fill(sbuf, 64, 4);
	r = ud_send(&snd, 0xa02, IBV_WR_SEND, 64, QKEY, 0, false);
	tap_ret_errno(r, 0, "(rxe2) too long, then 64 B: post");
	w = dp_want(0xa02, IBV_WC_SEND);
	dp_expect(snd.scq, &w, "(rxe2) then 64 B: sender completion");
	w = dp_want(0xa00, IBV_WC_RECV);
	w.byte_len = GRH + 64;
	dp_expect(rcv.rcq, &w, "(rxe2) then 64 B: into the receive kept");
	tap_ok(dp_verify(rbuf + GRH, 64, 4) < 0,
	       "(rxe2) then 64 B: data byte-exact");
}

/*
 * The same to QP1, whose buffers (ib_mad's) hold 256 bytes: a 1000-byte
 * datagram with the GSI Q_Key must not break it (issue 14: one frame
 * from the wire disabled RDMA CM).  ib_core logs a fatal event on QP1
 * as "Fatal error (1) on MAD QP (1)".
 */
static void create(struct dp_qp *q, const struct dp_conn *c);

static void too_long_to_qp1(void)
{
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	struct ibv_wc wc;
	struct dp_conn c;
	struct dp_qp gsi_sender;
	int r, before;

	if (!dev.rxe2) {
		tap_skip("too long to QP1: rxe2 only");
		return;
	}
	/*
	 * The GSI Q_Key has its high bit set: a WR cannot name it, the
	 * sending QP's own Q_Key is used (root may set that one).
	 */
	dp_conn_default(&c);
	c.qkey = 0x80010000;
	create(&gsi_sender, &c);
	memset(&wr, 0, sizeof(wr));
	sge = (struct ibv_sge){ .addr = (uintptr_t)sbuf, .length = 1000,
				.lkey = smr->lkey };
	wr.wr_id = 0xb01;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = 1;
	wr.wr.ud.remote_qkey = 0x80010000;
	memset(sbuf, 0x01, 1000);	/* base version 1, class 1: a MAD */
	/* the kernel log is make check's too: count, never clear it */
	before = dp_sh("exit $(dmesg | grep -c 'Fatal error.*MAD QP')");
	r = ibv_post_send(gsi_sender.qp, &wr, &bad);
	tap_ok(!r && dp_poll(gsi_sender.scq, &wc, 1, DP_WAIT_MS) == 1 &&
	       wc.status == IBV_WC_SUCCESS,
	       "(rxe2) 1000 B datagram to QP1 sent");
	usleep(200000);
	tap_ret(dp_sh("exit $(dmesg | grep -c 'Fatal error.*MAD QP')"), before,
		"(rxe2) QP1 survived it (no fatal event on the MAD QP)");
	dp_qp_free(&gsi_sender);
}

static void create(struct dp_qp *q, const struct dp_conn *c)
{
	struct ibv_qp_cap cap = { .max_send_wr = 32, .max_recv_wr = 32,
				  .max_send_sge = 1, .max_recv_sge = 1,
				  .max_inline_data = 64 };
	int r = dp_ud_qp(&dev, &cap, c, q);

	if (r)
		tap_bail("UD QP in RTS: %s", strerror(r));
}

int main(void)
{
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	struct dp_conn c;
	uint32_t mtu;

	dp_open(&dev, test_dev_name());
	sbuf = dp_alloc(BUFLEN);
	rbuf = dp_alloc(BUFLEN);
	smr = dp_reg(dev.pd, sbuf, BUFLEN, IBV_ACCESS_LOCAL_WRITE);
	rmr = dp_reg(dev.pd, rbuf, BUFLEN, IBV_ACCESS_LOCAL_WRITE);
	dp_conn_default(&c);
	c.qkey = QKEY;
	create(&snd, &c);
	create(&snd2, &c);
	create(&rcv, &c);
	ah = dp_loop_ah(&dev);
	mtu = 128u << dev.port.active_mtu;
	tap_diag("active MTU %u", mtu);

	one(&snd, 0, 0, false, false);
	one(&snd, 1, 0, false, false);
	one(&snd2, 63, 3, false, false);
	one(&snd, 255, 1, true, false);
	one(&snd2, 1000, 0, true, false);
	one(&snd, mtu, 5, false, false);
	one(&snd2, mtu, 0, true, false);
	ibv_query_qp(snd.qp, &qa, IBV_QP_CAP, &qi);
	if (qi.cap.max_inline_data >= 64) {
		one(&snd, 64, 0, false, true);
		one(&snd2, 17, 7, true, true);
	} else {
		tap_skip("UD inline: max_inline_data %u",
			 qi.cap.max_inline_data);
	}
	qkey_mismatch();
	too_long();
	too_long_to_qp1();

	ibv_destroy_ah(ah);
	dp_qp_free(&snd);
	dp_qp_free(&snd2);
	dp_qp_free(&rcv);
	ibv_dereg_mr(smr);
	ibv_dereg_mr(rmr);
	dp_close(&dev);
	return tap_done();
}
