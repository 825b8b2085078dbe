// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: loopback one copy (placed straight from the sender's MRs, loop_one_copy_pkts): WRITE and multi-SGE SEND, READ responses (deferred past the requester's run, READ then WRITE order), staged leftovers, bad keys, ODP sides, UC, tx_drop, a packet socket watching
 *
 * One copy on loopback (rxe2_tx_direct(), rxe2_qp_deliver_direct()): a
 * SEND or WRITE packet to a local QP whose payload is too large for a
 * staged call is placed by the receiver straight from the sender's
 * MRs.  On an RC or UC pair of one device at MTU 1024, every case checks
 * the completions, the data byte for byte and the port counter
 * loop_one_copy_pkts, which counts the packets that took that way:
 *
 *  - a 64 KiB WRITE from one SGE: all 64 packets;
 *  - a 20,000-byte SEND from three SGEs into three receive SGEs of other
 *    sizes: all 20 packets, the bytes where each SGE says;
 *  - a WRITE of 1,124 bytes: the first packet in place, the last (100
 *    bytes) a staged call, as before;
 *  - a SEND whose packet spans 8 SGEs (more than a source holds): copied
 *    as before, no packet in place;
 *  - a SEND whose second SGE has a bad lkey: LOC_PROT_ERR before any
 *    packet, as with a copy;
 *  - a WRITE to an rkey without remote write: REM_ACCESS_ERR, the
 *    target untouched;
 *  - an ODP source, faulted in by the sender first: in place, also into
 *    an ODP target of the same mm, after MADV_DONTNEED invalidated it,
 *    and with a packet across a page boundary; an ODP target from
 *    a pinned source: in place;
 *  - a UC WRITE of 4 KiB: 4 packets in place;
 *  - a 4 KiB WRITE while tx_drop loses every packet: none placed,
 *    all counted as dropped, the WRITE completes once resent;
 *  - a 4 KiB WRITE while a packet socket watches the netdev: in place
 *    still, and the socket sees its 4 packets with the payload exact;
 *  - READ responses (rxe2_tx_direct_resp()): a 64 KiB READ, all 64
 *    responses placed straight from the responder's MR into the
 *    READ's SGE, and 60,000 bytes into three SGEs (59); an 8 KiB READ,
 *    answered inline as packets (+0); a 32 KiB READ from an ODP MR into
 *    an ODP MR of the same mm; a 64 KiB READ posted with a WRITE to the
 *    same range behind it, no fence: the READ returns the bytes from
 *    before the WRITE, the WRITE lands after it.
 * TAP output.
 */
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "dp.h"
#include "tap.h"
#include "util.h"

#define LEN	(64 * 1024)
#define CTR	"loop_one_copy_pkts"

static struct dp_dev dev;
static uint8_t *abuf, *bbuf;
static struct ibv_mr *amr, *bmr;

static const struct ibv_qp_cap cap8 = {
	.max_send_wr = 16,
	.max_recv_wr = 16,
	.max_send_sge = 8,
	.max_recv_sge = 8,
};

static long one_copy(void)
{
	return dp_hw_counter(dev.name, CTR);
}

static bool pair(enum ibv_qp_type type, struct dp_qp *a, struct dp_qp *b)
{
	struct dp_conn c;

	dp_conn_default(&c);
	c.mtu = IBV_MTU_1024;
	return tap_ret(dp_pair(&dev, &dev, type, &cap8, &c, a, b), 0,
		       "%s pair on %s, MTU 1024",
		       type == IBV_QPT_RC ? "RC" : "UC", dev.name);
}

static void unpair(struct dp_qp *a, struct dp_qp *b)
{
	dp_qp_free(a);
	dp_qp_free(b);
}

/*
 * A WRITE of len bytes of pattern seed from local (lkey) to remote
 * (rkey), or a READ of them from remote into local: the completion, the
 * bytes where they land and nothing past them, and in_place packets
 * (requests or READ responses) counted in loop_one_copy_pkts.
 */
static void rdma_case(struct dp_qp *a, enum ibv_wr_opcode op,
		      const char *what, uint8_t *local, uint32_t lkey,
		      uint8_t *remote, uint32_t rkey, uint32_t len,
		      uint32_t seed, long in_place)
{
	bool rd = op == IBV_WR_RDMA_READ;
	uint8_t *src = rd ? remote : local, *dst = rd ? local : remote;
	struct dp_wc_want w = dp_want(seed, rd ? IBV_WC_RDMA_READ :
						 IBV_WC_RDMA_WRITE);
	long c0 = one_copy();

	dp_fill(src, len, seed);
	memset(dst, 0, len + 1);
	if (!tap_ret(dp_post_send1(a->qp, seed, op, local, len, lkey,
				   (uintptr_t)remote, rkey, 0), 0,
		     "%s: post", what))
		return;
	dp_expect(a->scq, &w, "%s: completes", what);
	tap_ok(dp_verify(dst, len, seed) < 0 && dst[len] == 0,
	       "%s: %u bytes exact, nothing past them", what, len);
	tap_ret(one_copy() - c0, in_place, "%s: %s +%ld", what, CTR,
		in_place);
}

static void write_pinned(void)
{
	struct dp_qp a, b;

	if (!pair(IBV_QPT_RC, &a, &b))
		return;
	rdma_case(&a, IBV_WR_RDMA_WRITE,
		  "64 KiB WRITE", abuf, amr->lkey, bbuf, bmr->rkey, LEN, 11,
		  64);
	rdma_case(&a, IBV_WR_RDMA_WRITE,
		  "1124-byte WRITE", abuf, amr->lkey, bbuf, bmr->rkey, 1124, 12,
		  1);
	unpair(&a, &b);
}

/* SEND of 20,000 bytes: SGEs 7000 + 7000 + 6000 into 5000 + 5000 + 12000 */
static void send_sges(void)
{
	const char *what = "20000-byte SEND, 3 SGEs into 3";
	struct dp_wc_want ws = dp_want(21, IBV_WC_SEND);
	struct dp_wc_want wr = dp_want(22, IBV_WC_RECV);
	uint8_t *src = abuf, *dst = bbuf, *ref;
	struct ibv_sge ss[3] = {
		{ (uintptr_t)src, 7000, amr->lkey },
		{ (uintptr_t)src + 8000, 7000, amr->lkey },
		{ (uintptr_t)src + 16000, 6000, amr->lkey },
	};
	struct ibv_sge rs[3] = {
		{ (uintptr_t)dst + 100, 5000, bmr->lkey },
		{ (uintptr_t)dst + 6000, 5000, bmr->lkey },
		{ (uintptr_t)dst + 12000, 12000, bmr->lkey },
	};
	struct ibv_send_wr swr = {
		.wr_id = 21, .sg_list = ss, .num_sge = 3,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_recv_wr rwr = { .wr_id = 22, .sg_list = rs, .num_sge = 3 };
	struct ibv_send_wr *bs;
	struct ibv_recv_wr *br;
	struct dp_qp a, b;
	long c0;

	if (!pair(IBV_QPT_RC, &a, &b))
		return;
	ref = malloc(20000);
	dp_fill(src, 24000, 21);
	memset(dst, 0, 25000);
	/* the message as the SEND gathers it */
	memcpy(ref, src, 7000);
	memcpy(ref + 7000, src + 8000, 7000);
	memcpy(ref + 14000, src + 16000, 6000);
	c0 = one_copy();
	tap_ret(ibv_post_recv(b.qp, &rwr, &br), 0, "%s: post recv", what);
	tap_ret(ibv_post_send(a.qp, &swr, &bs), 0, "%s: post send", what);
	dp_expect(a.scq, &ws, "%s: send completes", what);
	wr.byte_len = 20000;
	dp_expect(b.rcq, &wr, "%s: receive completes, 20000 bytes", what);
	tap_ok(!memcmp(dst + 100, ref, 5000) &&
	       !memcmp(dst + 6000, ref + 5000, 5000) &&
	       !memcmp(dst + 12000, ref + 10000, 10000),
	       "%s: every byte where its SGE says", what);
	tap_ok(dp_verify_byte(dst, 100, 0) < 0 &&
	       dp_verify_byte(dst + 5100, 900, 0) < 0 &&
	       dp_verify_byte(dst + 11000, 1000, 0) < 0 &&
	       dp_verify_byte(dst + 22000, 3000, 0) < 0,
	       "%s: nothing between or past them", what);
	tap_ret(one_copy() - c0, 20, "%s: %s +20", what, CTR);
	free(ref);
	unpair(&a, &b);
}

/* one packet of 8 SGEs of 128 bytes: more pieces than a source holds */
static void send_many_sges(void)
{
	const char *what = "1024-byte SEND from 8 SGEs";
	struct dp_wc_want ws = dp_want(31, IBV_WC_SEND);
	struct dp_wc_want wr = dp_want(32, IBV_WC_RECV);
	struct ibv_sge ss[8];
	struct ibv_send_wr swr = {
		.wr_id = 31, .sg_list = ss, .num_sge = 8,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *bs;
	struct dp_qp a, b;
	bool same = true;
	long c0;
	int i;

	if (!pair(IBV_QPT_RC, &a, &b))
		return;
	dp_fill(abuf, 2048, 31);
	memset(bbuf, 0, 2048);
	for (i = 0; i < 8; i++) {
		/* every other 128-byte block */
		ss[i].addr = (uintptr_t)abuf + 256 * i;
		ss[i].length = 128;
		ss[i].lkey = amr->lkey;
	}
	c0 = one_copy();
	tap_ret(dp_post_recv1(b.qp, 32, bbuf, 2048, bmr->lkey), 0,
		"%s: post recv", what);
	tap_ret(ibv_post_send(a.qp, &swr, &bs), 0, "%s: post send", what);
	dp_expect(a.scq, &ws, "%s: send completes", what);
	wr.byte_len = 1024;
	dp_expect(b.rcq, &wr, "%s: receive completes, 1024 bytes", what);
	for (i = 0; i < 8; i++)
		same &= !memcmp(bbuf + 128 * i, abuf + 256 * i, 128);
	tap_ok(same && dp_verify_byte(bbuf + 1024, 1024, 0) < 0,
	       "%s: bytes exact", what);
	tap_ret(one_copy() - c0, 0, "%s: copied, %s +0", what, CTR);
	unpair(&a, &b);
}

/* a SEND of two 1 KiB SGEs, the second with a bad lkey */
static void send_bad_lkey(void)
{
	const char *what = "SEND, second SGE's lkey bad";
	struct dp_wc_want ws = dp_want(41, IBV_WC_SEND);
	struct ibv_sge ss[2] = {
		{ (uintptr_t)abuf, 1024, amr->lkey },
		{ (uintptr_t)abuf + 1024, 1024, amr->lkey ^ 0x5a5a00 },
	};
	struct ibv_send_wr swr = {
		.wr_id = 41, .sg_list = ss, .num_sge = 2,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *bs;
	struct dp_qp a, b;
	long c0;

	if (!pair(IBV_QPT_RC, &a, &b))
		return;
	dp_fill(abuf, 2048, 41);
	memset(bbuf, 0, 2048);
	c0 = one_copy();
	tap_ret(dp_post_recv1(b.qp, 42, bbuf, 2048, bmr->lkey), 0,
		"%s: post recv", what);
	tap_ret(ibv_post_send(a.qp, &swr, &bs), 0, "%s: post send", what);
	ws.status = IBV_WC_LOC_PROT_ERR;
	ws.opcode = -1;
	dp_expect(a.scq, &ws, "%s: LOC_PROT_ERR", what);
	/* the requester checks every SGE of a message before its first packet */
	tap_ret(one_copy() - c0, 0, "%s: nothing sent, %s +0", what, CTR);
	tap_ok(dp_verify_byte(bbuf, 2048, 0) < 0, "%s: nothing placed", what);
	unpair(&a, &b);
}

static void write_no_access(void)
{
	const char *what = "WRITE to an rkey without remote write";
	struct dp_wc_want w = dp_want(51, -1);
	struct ibv_mr *ro;
	struct dp_qp a, b;

	if (!pair(IBV_QPT_RC, &a, &b))
		return;
	ro = dp_reg(dev.pd, bbuf, LEN, IBV_ACCESS_LOCAL_WRITE |
		    IBV_ACCESS_REMOTE_READ);
	dp_fill(abuf, 4096, 51);
	memset(bbuf, 0x33, 4096);
	tap_ret(dp_post_send1(a.qp, 51, IBV_WR_RDMA_WRITE, abuf, 4096,
			      amr->lkey, (uintptr_t)bbuf, ro->rkey, 0), 0,
		"%s: post", what);
	w.status = IBV_WC_REM_ACCESS_ERR;
	dp_expect(a.scq, &w, "%s: REM_ACCESS_ERR", what);
	tap_ok(dp_verify_byte(bbuf, 4096, 0x33) < 0, "%s: target untouched",
	       what);
	ibv_dereg_mr(ro);
	unpair(&a, &b);
}

static void write_odp(void)
{
	struct ibv_device_attr_ex ax;
	struct ibv_mr *oa, *ob;
	uint8_t *oabuf, *obbuf;
	struct dp_qp a, b;

	if (ibv_query_device_ex(dev.ctx, NULL, &ax) ||
	    !(ax.odp_caps.per_transport_caps.rc_odp_caps &
	      IBV_ODP_SUPPORT_WRITE)) {
		tap_skip("ODP WRITE not supported");
		return;
	}
	if (!pair(IBV_QPT_RC, &a, &b))
		return;
	oabuf = dp_alloc(8192);
	obbuf = dp_alloc(8192);
	oa = dp_reg(dev.pd, oabuf, 8192, DP_ACCESS_ALL | IBV_ACCESS_ON_DEMAND);
	ob = dp_reg(dev.pd, obbuf, 8192, DP_ACCESS_ALL | IBV_ACCESS_ON_DEMAND);
	/* the source's pages faulted in by the sender, then read in place */
	rdma_case(&a, IBV_WR_RDMA_WRITE,
		  "8 KiB WRITE from an ODP MR", oabuf, oa->lkey, bbuf,
		  bmr->rkey, 8191, 61, 8);
	rdma_case(&a, IBV_WR_RDMA_WRITE,
		  "8 KiB WRITE to an ODP MR", abuf, amr->lkey, obbuf, ob->rkey,
		  8191, 62, 8);
	/*
	 * Both ODP, one mm: the receiver holds its MR's mutex meanwhile,
	 * and the source, invalidated first, must be faulted in again.
	 */
	tap_ret(madvise(oabuf, 8192, MADV_DONTNEED), 0,
		"MADV_DONTNEED on the ODP source before ODP to ODP");
	rdma_case(&a, IBV_WR_RDMA_WRITE,
		  "8 KiB WRITE from an ODP MR to an ODP MR", oabuf, oa->lkey,
		  obbuf, ob->rkey, 8191, 63, 8);
	/* invalidated: faulted in again, the new pages' bytes */
	tap_ret(madvise(oabuf, 8192, MADV_DONTNEED), 0,
		"MADV_DONTNEED on the ODP source");
	rdma_case(&a, IBV_WR_RDMA_WRITE,
		  "8 KiB WRITE from an invalidated ODP MR", oabuf, oa->lkey,
		  bbuf, bmr->rkey, 8191, 64, 8);
	/* a packet across a page boundary: two pages in one piece */
	rdma_case(&a, IBV_WR_RDMA_WRITE,
		  "8000-byte WRITE from an ODP MR at offset 1", oabuf + 1,
		  oa->lkey, obbuf, ob->rkey, 8000, 65, 8);
	ibv_dereg_mr(oa);
	ibv_dereg_mr(ob);
	free(oabuf);
	free(obbuf);
	unpair(&a, &b);
}

/*
 * tx_drop at 1 loses every packet the device sends, one-copy
 * requests too: none is placed until it is cleared, then RC's resend
 * completes the WRITE.
 */
static void write_lost(void)
{
	const char *what = "4 KiB WRITE, tx_drop 1 while posted";
	struct dp_wc_want w = dp_want(91, IBV_WC_RDMA_WRITE);
	long c0, d0;
	struct dp_qp a, b;

	if (!pair(IBV_QPT_RC, &a, &b))
		return;
	dp_fill(abuf, 4096, 91);
	memset(bbuf, 0, 4096);
	c0 = one_copy();
	d0 = dp_hw_counter(dev.name, "fault_tx_drops");
	tap_ret_errno(dp_fault_tx_drop(dev.name, 1), 0, "%s: tx_drop 1", what);
	tap_ret(dp_post_send1(a.qp, 91, IBV_WR_RDMA_WRITE, abuf, 4096,
			      amr->lkey, (uintptr_t)bbuf, bmr->rkey, 0), 0,
		"%s: post", what);
	/* the doorbell sent all 4 packets before returning */
	tap_ret(one_copy() - c0, 0, "%s: none placed, %s +0", what, CTR);
	tap_ok(dp_hw_counter(dev.name, "fault_tx_drops") - d0 >= 4,
	       "%s: fault_tx_drops +4 at least", what);
	tap_ok(dp_verify_byte(bbuf, 4096, 0) < 0, "%s: target untouched",
	       what);
	tap_ret_errno(dp_fault_tx_drop(dev.name, 0), 0, "%s: tx_drop 0", what);
	dp_expect(a.scq, &w, "%s: completes once resent", what);
	tap_ok(dp_verify(bbuf, 4096, 91) < 0, "%s: 4096 bytes exact", what);
	unpair(&a, &b);
}

static void write_uc(void)
{
	struct dp_qp a, b;

	if (!pair(IBV_QPT_UC, &a, &b))
		return;
	rdma_case(&a, IBV_WR_RDMA_WRITE,
		  "UC 4 KiB WRITE", abuf, amr->lkey, bbuf, bmr->rkey, 4096, 71,
		  4);
	unpair(&a, &b);
}

/*
 * The WRITE packets to QP qpn the tap shows: their payloads put together
 * in PSN order (from psn0) into out; how many there were.
 */
static int tap_writes(int fd, uint32_t qpn, uint32_t psn0, uint8_t *out,
		      uint32_t mtu, int want)
{
	uint8_t f[4096];
	int n = 0;

	while (n < want) {
		ssize_t len = recv(fd, f, sizeof(f), 0);
		uint8_t *ip = f + ETH_HLEN, *bth;
		unsigned int ihl, hdr, pad, tot;
		uint32_t psn;
		uint8_t op;

		if (len < 0)
			break;	/* the timeout */
		ihl = (ip[0] & 15) * 4;
		if (len < ETH_HLEN + 20 || f[12] != 0x08 || f[13] != 0x00 ||
		    ip[9] != 17 ||
		    ((ip[ihl + 2] << 8) | ip[ihl + 3]) != 4791)
			continue;
		tot = (ip[2] << 8) | ip[3];
		bth = ip + ihl + 8;
		op = bth[0];
		if ((uint32_t)((bth[5] << 16) | (bth[6] << 8) | bth[7]) != qpn ||
		    op < 0x06 || op > 0x08)
			continue;
		psn = (uint32_t)((bth[9] << 16) | (bth[10] << 8) | bth[11]);
		hdr = 12 + (op == 0x06 ? 16 : 0);
		pad = (bth[1] >> 4) & 3;
		if (psn - psn0 >= (uint32_t)want ||
		    tot < ihl + 8 + hdr + pad + 4 ||
		    tot - ihl - 8 - hdr - pad - 4 > mtu)
			continue;
		memcpy(out + (psn - psn0) * mtu, bth + hdr,
		       tot - ihl - 8 - hdr - pad - 4);
		n++;
	}
	return n;
}

static void write_tapped(void)
{
	const char *what = "4 KiB WRITE under a packet socket";
	struct dp_wc_want w = dp_want(81, IBV_WC_RDMA_WRITE);
	struct dp_conn c;
	struct timeval tv = { .tv_sec = 2 };
	struct dp_qp a, b;
	uint8_t *seen;
	long c0;
	int fd;

	fd = dp_packet_socket(&dev, 4 << 20);
	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (!tap_ok(fd >= 0, "%s: AF_PACKET socket on %s", what,
		    dp_netdev(&dev)))
		return;
	if (!pair(IBV_QPT_RC, &a, &b)) {
		close(fd);
		return;
	}
	dp_conn_default(&c);	/* the PSN the pair starts from */
	seen = calloc(1, 4096);
	dp_fill(abuf, 4096, 81);
	memset(bbuf, 0, 4096);
	c0 = one_copy();
	tap_ret(dp_post_send1(a.qp, 81, IBV_WR_RDMA_WRITE, abuf, 4096,
			      amr->lkey, (uintptr_t)bbuf, bmr->rkey, 0), 0,
		"%s: post", what);
	dp_expect(a.scq, &w, "%s: completes", what);
	tap_ok(dp_verify(bbuf, 4096, 81) < 0, "%s: 4096 bytes exact", what);
	tap_ret(one_copy() - c0, 4, "%s: %s +4", what, CTR);
	tap_ret(tap_writes(fd, b.qp->qp_num, c.sq_psn, seen, 1024, 4), 4,
		"%s: the socket saw 4 WRITE packets", what);
	tap_ok(dp_verify(seen, 4096, 81) < 0,
	       "%s: their payload is the 4096 bytes", what);
	free(seen);
	close(fd);
	unpair(&a, &b);
}

static void read_pinned(void)
{
	struct dp_qp a, b;

	if (!pair(IBV_QPT_RC, &a, &b))
		return;
	rdma_case(&a, IBV_WR_RDMA_READ,
		  "64 KiB READ", abuf, amr->lkey, bbuf, bmr->rkey, LEN, 101,
		  64);
	/* below RXE2_READ_LATER_MIN: answered in the requester's call */
	rdma_case(&a, IBV_WR_RDMA_READ,
		  "8 KiB READ", abuf, amr->lkey, bbuf, bmr->rkey, 8192, 102, 0);
	unpair(&a, &b);
}

/* a 60,000-byte READ into SGEs of 10000 + 30000 + 20000, gaps between */
static void read_sges(void)
{
	const char *what = "60000-byte READ into 3 SGEs";
	struct dp_wc_want w = dp_want(111, IBV_WC_RDMA_READ);
	struct ibv_sge sg[3] = {
		{ (uintptr_t)abuf + 8, 10000, amr->lkey },
		{ (uintptr_t)abuf + 10100, 30000, amr->lkey },
		{ (uintptr_t)abuf + 40200, 20000, amr->lkey },
	};
	struct ibv_send_wr wr = {
		.wr_id = 111, .sg_list = sg, .num_sge = 3,
		.opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)bbuf,
			     .rkey = bmr->rkey },
	};
	struct ibv_send_wr *bad;
	struct dp_qp a, b;
	long c0;

	if (!pair(IBV_QPT_RC, &a, &b))
		return;
	dp_fill(bbuf, LEN, 111);
	memset(abuf, 0, LEN + 1);
	c0 = one_copy();
	tap_ret(ibv_post_send(a.qp, &wr, &bad), 0, "%s: post", what);
	dp_expect(a.scq, &w, "%s: completes", what);
	tap_ok(!memcmp(abuf + 8, bbuf, 10000) &&
	       !memcmp(abuf + 10100, bbuf + 10000, 30000) &&
	       !memcmp(abuf + 40200, bbuf + 40000, 20000),
	       "%s: every byte where its SGE says", what);
	tap_ok(dp_verify_byte(abuf, 8, 0) < 0 &&
	       dp_verify_byte(abuf + 10008, 92, 0) < 0 &&
	       dp_verify_byte(abuf + 40100, 100, 0) < 0 &&
	       dp_verify_byte(abuf + 60200, LEN + 1 - 60200, 0) < 0,
	       "%s: nothing between or past them", what);
	tap_ret(one_copy() - c0, 59, "%s: %s +59", what, CTR);
	unpair(&a, &b);
}

static void read_odp(void)
{
	const uint32_t len = 32 * 1024;
	struct ibv_device_attr_ex ax;
	uint8_t *oabuf, *obbuf;
	struct ibv_mr *oa, *ob;
	struct dp_qp a, b;

	if (ibv_query_device_ex(dev.ctx, NULL, &ax) ||
	    !(ax.odp_caps.per_transport_caps.rc_odp_caps &
	      IBV_ODP_SUPPORT_READ)) {
		tap_skip("ODP READ not supported");
		return;
	}
	if (!pair(IBV_QPT_RC, &a, &b))
		return;
	oabuf = dp_alloc(len + 1);
	obbuf = dp_alloc(len + 1);
	oa = dp_reg(dev.pd, oabuf, len + 1,
		    DP_ACCESS_ALL | IBV_ACCESS_ON_DEMAND);
	ob = dp_reg(dev.pd, obbuf, len + 1,
		    DP_ACCESS_ALL | IBV_ACCESS_ON_DEMAND);
	/* the responder's pages held for each response, the sink's faulted */
	rdma_case(&a, IBV_WR_RDMA_READ,
		  "32 KiB READ from an ODP MR into an ODP MR", oabuf, oa->lkey,
		  obbuf, ob->rkey, len, 121, 32);
	tap_ret(madvise(obbuf, len, MADV_DONTNEED), 0,
		"MADV_DONTNEED on the ODP READ source");
	rdma_case(&a, IBV_WR_RDMA_READ,
		  "32 KiB READ from an invalidated ODP MR", abuf, amr->lkey,
		  obbuf, ob->rkey, len, 122, 32);
	ibv_dereg_mr(oa);
	ibv_dereg_mr(ob);
	free(oabuf);
	free(obbuf);
	unpair(&a, &b);
}

/*
 * A READ and, behind it without a fence, a WRITE to the same range: the
 * responder answers the READ, deferred to be placed in one copy, before
 * it takes the WRITE, so the READ returns the bytes from before it.
 */
static void read_then_write(void)
{
	const char *what = "64 KiB READ, then a WRITE to its range";
	struct dp_wc_want wr = dp_want(131, IBV_WC_RDMA_READ);
	struct dp_wc_want ww = dp_want(132, IBV_WC_RDMA_WRITE);
	uint8_t *wsrc = dp_alloc(LEN);
	struct ibv_mr *wmr = dp_reg(dev.pd, wsrc, LEN, DP_ACCESS_ALL);
	struct ibv_sge rs = { (uintptr_t)abuf, LEN, amr->lkey };
	struct ibv_sge ws = { (uintptr_t)wsrc, LEN, wmr->lkey };
	struct ibv_send_wr w2 = {
		.wr_id = 132, .sg_list = &ws, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)bbuf,
			     .rkey = bmr->rkey },
	};
	struct ibv_send_wr w1 = {
		.wr_id = 131, .next = &w2, .sg_list = &rs, .num_sge = 1,
		.opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)bbuf,
			     .rkey = bmr->rkey },
	};
	struct ibv_send_wr *bad;
	struct dp_qp a, b;

	if (!pair(IBV_QPT_RC, &a, &b))
		goto out;
	dp_fill(bbuf, LEN, 131);
	dp_fill(wsrc, LEN, 132);
	memset(abuf, 0, LEN);
	tap_ret(ibv_post_send(a.qp, &w1, &bad), 0, "%s: post both", what);
	dp_expect(a.scq, &wr, "%s: the READ completes first", what);
	dp_expect(a.scq, &ww, "%s: then the WRITE", what);
	tap_ok(dp_verify(abuf, LEN, 131) < 0,
	       "%s: the READ has the bytes from before the WRITE", what);
	tap_ok(dp_verify(bbuf, LEN, 132) < 0,
	       "%s: the WRITE's bytes are in the range after", what);
	unpair(&a, &b);
out:
	ibv_dereg_mr(wmr);
	free(wsrc);
}

int main(void)
{
	dp_open(&dev, test_dev_name());
	if (!dev.rxe2) {
		tap_skip("%s is not rxe2", dev.name);
		dp_close(&dev);
		return tap_done();
	}
	abuf = dp_alloc(LEN + 1);
	bbuf = dp_alloc(LEN + 1);
	amr = dp_reg(dev.pd, abuf, LEN + 1, DP_ACCESS_ALL);
	bmr = dp_reg(dev.pd, bbuf, LEN + 1, DP_ACCESS_ALL);

	write_pinned();
	send_sges();
	send_many_sges();
	send_bad_lkey();
	write_no_access();
	write_odp();
	write_uc();
	write_lost();
	write_tapped();
	read_pinned();
	read_sges();
	read_odp();
	read_then_write();

	ibv_dereg_mr(amr);
	ibv_dereg_mr(bmr);
	free(abuf);
	free(bbuf);
	dp_close(&dev);
	return tap_done();
}
