// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: the tap ring under a packet socket: 200,000 UD SENDs of random sizes wrap the 256 KiB ring with pad records of every size; every packet shown once, byte for byte; no BUG or Oops
 *
 * The tap ring under a packet socket (rxe2_tap.c): while a tap watches the
 * device's netdev, every loopback packet is copied into a 256 KiB ring,
 * one record per packet, and shown to the tap by a work item.  A record
 * that does not fit before the ring's end leaves a pad record there; as
 * records are multiples of 8 bytes, as few as 8 bytes may be left for it.
 * A pad record whose kind byte lay at offset 8 once wrote one zero byte
 * past the ring, into the first byte of the next page (an NVMe block in
 * test_nvme.sh, a slab's red zone under slub_debug).  The ring is
 * vmalloc()ed now, so such a write faults at its guard page.
 *
 * Here: UD SENDs of random sizes (4 to 48 bytes, seed printed) from one
 * QP to another of the device, 200,000 of them, under an AF_PACKET
 * socket: the ring wraps some 80 times with a pad of every size, 8 bytes
 * included with near certainty.  Every send completes; every packet the
 * socket shows is one of them, once, its payload exact and of its size;
 * those it does not show are its own drops; the kernel log gains no
 * BUG or Oops.  TAP output.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "dp.h"
#include "tap.h"
#include "util.h"

#define QKEY		0x2222
#define SENDS		200000
#define BATCH		32
#define MIN_LEN		4	/* the sequence number */
#define MAX_LEN		48
#define KERNEL_BAD	"BUG:|Oops|general protection|stack-protector"

static struct dp_dev dev;
static struct dp_qp snd, rcv;
static struct ibv_ah *ah;
static uint8_t *sbuf;
static struct ibv_mr *smr;
static uint8_t len_of[SENDS];
static uint8_t seen[SENDS];

static uint8_t payload_byte(uint32_t seq, uint32_t i)
{
	return (uint8_t)(seq * 7 + i * 13 + 1);
}

static void payload_fill(uint8_t *p, uint32_t seq, uint32_t len)
{
	uint32_t i;

	memcpy(p, &seq, 4);
	for (i = 4; i < len; i++)
		p[i] = payload_byte(seq, i);
}

struct tally {
	long good, bad, foreign;
};

/* the first few bad packets are told */
#define BAD_TOLD	10

/* one frame from the socket: a UD SEND_ONLY to rcv, checked */
static void frame(const uint8_t *f, ssize_t n, struct tally *t)
{
	const uint8_t *ip = f + ETH_HLEN, *bth, *pay;
	unsigned int ihl, tot, pad;
	uint32_t seq, len, i;

	if (n < ETH_HLEN + 20 || f[12] != 0x08 || f[13] != 0x00 ||
	    ip[9] != 17)
		return;
	ihl = (ip[0] & 15) * 4;
	tot = (ip[2] << 8) | ip[3];
	if (ETH_HLEN + tot > (unsigned int)n ||
	    ((ip[ihl + 2] << 8) | ip[ihl + 3]) != 4791)
		return;
	bth = ip + ihl + 8;
	if (bth[0] != 0x64 ||	/* UD SEND_ONLY */
	    (uint32_t)((bth[5] << 16) | (bth[6] << 8) | bth[7]) !=
	    rcv.qp->qp_num) {
		t->foreign++;
		return;
	}
	pad = (bth[1] >> 4) & 3;
	pay = bth + 12 + 8;	/* BTH, DETH */
	len = tot - ihl - 8 - 12 - 8 - pad - 4;
	memcpy(&seq, pay, 4);
	if (len < MIN_LEN || seq >= SENDS || seen[seq] ||
	    len != len_of[seq]) {
		if (t->bad++ < BAD_TOLD)
			tap_diag("bad packet: seq %u len %u (sent %u, seen %u)",
				 seq, len, seq < SENDS ? len_of[seq] : 0,
				 seq < SENDS ? seen[seq] : 0);
		return;
	}
	for (i = 4; i < len; i++)
		if (pay[i] != payload_byte(seq, i)) {
			if (t->bad++ < BAD_TOLD)
				tap_diag("seq %u: byte %u is %#x, sent %#x",
					 seq, i, pay[i], payload_byte(seq, i));
			return;
		}
	seen[seq] = 1;
	t->good++;
}

/* what the socket holds now; wait_ms for the first frame */
static void drain(int fd, int wait_ms, struct tally *t)
{
	struct timeval tv = { .tv_sec = wait_ms / 1000,
			      .tv_usec = (wait_ms % 1000) * 1000 };
	uint8_t f[2048];
	ssize_t n;

	if (wait_ms)	/* not after every batch: it does not wait */
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while ((n = recv(fd, f, sizeof(f), wait_ms ? 0 : MSG_DONTWAIT)) > 0)
		frame(f, n, t);
}

/* BATCH sends from seq on; false when one fails */
static bool send_batch(uint32_t seq, unsigned int *rnd)
{
	struct ibv_send_wr wr[BATCH], *bad = NULL;
	struct ibv_sge sge[BATCH];
	struct ibv_wc wc[BATCH];
	int i, got = 0, n;

	for (i = 0; i < BATCH; i++) {
		uint32_t len = MIN_LEN + rand_r(rnd) % (MAX_LEN - MIN_LEN + 1);
		uint8_t *p = sbuf + (size_t)i * MAX_LEN;

		len_of[seq + i] = (uint8_t)len;
		payload_fill(p, seq + i, len);
		sge[i] = (struct ibv_sge){ .addr = (uintptr_t)p,
					   .length = len, .lkey = smr->lkey };
		memset(&wr[i], 0, sizeof(wr[i]));
		wr[i].wr_id = seq + i;
		wr[i].opcode = IBV_WR_SEND;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
		wr[i].wr.ud.ah = ah;
		wr[i].wr.ud.remote_qpn = rcv.qp->qp_num;
		wr[i].wr.ud.remote_qkey = QKEY;
		wr[i].next = i + 1 < BATCH ? &wr[i + 1] : NULL;
	}
	if (ibv_post_send(snd.qp, wr, &bad)) {
		tap_diag("post at seq %u: %s", seq, strerror(errno));
		return false;
	}
	while (got < BATCH) {
		n = dp_poll(snd.scq, wc, BATCH - got, DP_WAIT_MS);
		if (n <= 0) {
			tap_diag("seq %u: %d of %d completions", seq, got,
				 BATCH);
			return false;
		}
		for (i = 0; i < n; i++)
			if (wc[i].status != IBV_WC_SUCCESS) {
				tap_diag("seq %llu: %s", (unsigned long long)
					 wc[i].wr_id,
					 dp_status_str(wc[i].status));
				return false;
			}
		got += n;
	}
	return true;
}

static void ring_wraps(int fd)
{
	struct tpacket_stats st = { 0 };
	socklen_t sl = sizeof(st);
	struct tally t = { 0 };
	unsigned int seed = (unsigned int)time(NULL), rnd = seed;
	long bad_log0, bad_log1;
	uint32_t seq;
	bool sent = true;

	tap_diag("seed %u (sizes %u to %u bytes)", seed, MIN_LEN, MAX_LEN);
	/* the kernel log is make check's too: count, never clear it */
	bad_log0 = dp_sh("exit $(dmesg | grep -cE '%s')", KERNEL_BAD);
	/* reading the socket's statistics resets them: from here on */
	getsockopt(fd, SOL_PACKET, PACKET_STATISTICS, &st, &sl);
	for (seq = 0; seq < SENDS && sent; seq += BATCH) {
		sent = send_batch(seq, &rnd);
		drain(fd, 0, &t);
	}
	tap_ok(sent, "%d UD SENDs of %u to %u bytes under a tap: all "
	       "complete with SUCCESS", SENDS, MIN_LEN, MAX_LEN);
	drain(fd, 2000, &t);
	sl = sizeof(st);
	getsockopt(fd, SOL_PACKET, PACKET_STATISTICS, &st, &sl);
	tap_diag("shown %ld, socket drops %u, other packets %ld", t.good,
		 st.tp_drops, t.foreign);
	tap_ret(t.bad, 0, "every packet the socket showed is one sent, "
		"once, its payload exact and of its size");
	/* its drops may include a packet of someone else's */
	tap_ok(t.good + st.tp_drops >= SENDS,
	       "the socket showed every packet but its own drops");
	tap_ok(t.good >= SENDS / 2, "it showed most of them (%ld)", t.good);
	bad_log1 = dp_sh("exit $(dmesg | grep -cE '%s')", KERNEL_BAD);
	tap_ret(bad_log1, bad_log0, "no BUG or Oops in the kernel log");
}

int main(void)
{
	/* no receives: the receiver drops them, the tap has seen them */
	struct ibv_qp_cap cap = { .max_send_wr = BATCH, .max_recv_wr = 1,
				  .max_send_sge = 1, .max_recv_sge = 1 };
	struct dp_conn c;
	int fd, r;

	dp_open(&dev, test_dev_name());
	if (!dev.rxe2) {
		tap_skip("%s is not rxe2", dev.name);
		dp_close(&dev);
		return tap_done();
	}
	sbuf = dp_alloc((size_t)BATCH * MAX_LEN);
	smr = dp_reg(dev.pd, sbuf, (size_t)BATCH * MAX_LEN, 0);
	dp_conn_default(&c);
	c.qkey = QKEY;
	r = dp_ud_qp(&dev, &cap, &c, &snd);
	if (!r)
		r = dp_ud_qp(&dev, &cap, &c, &rcv);
	if (r)
		tap_bail("UD QP in RTS: %s", strerror(r));
	ah = dp_loop_ah(&dev);
	fd = dp_packet_socket(&dev, 8 << 20);
	if (tap_ok(fd >= 0, "AF_PACKET socket on %s", dp_netdev(&dev))) {
		ring_wraps(fd);
		close(fd);
	}
	ibv_destroy_ah(ah);
	dp_qp_free(&snd);
	dp_qp_free(&rcv);
	ibv_dereg_mr(smr);
	dp_close(&dev);
	return tap_done();
}
