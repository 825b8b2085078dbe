// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2fuzz: a RoCEv2 wire fuzzer.  It sits on one end of a link (a veth
 * peer, in practice), watches the RoCEv2 frames that leave it towards the
 * device under test and learns them as templates: live QP numbers, PSNs
 * inside the current window, rkeys, addresses and lengths of real MRs,
 * Q_Keys, MADs to QP1.  It then sends mutated copies of the templates out
 * of the same interface through an AF_PACKET socket, with the ICRC (and
 * the IP checksum) made correct again unless the mutation is about them.
 *
 * Every choice comes from one xorshift generator seeded by -s, so the
 * mutation stream is determined by the seed and the templates; the
 * templates come from live traffic and are not.  -w records the frames
 * sent as a pcap file and -r sends such a file again, frame for frame:
 * that is how a run that found something is replayed exactly.
 *
 * Usage: rxe2fuzz -i IFNAME [-n FRAMES] [-s SEED] [-t SECONDS] [-W SECONDS]
 *                 [-p PPS] [-w PCAP]
 *        rxe2fuzz -i IFNAME -r PCAP
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/ip.h>
#include <netinet/ip6.h>
#include <netinet/udp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "icrc.h"

#define ROCE_PORT	4791
#define FRAME_MAX	2048
#define BTH_LEN		12
#define ICRC_LEN	4
#define POOL_SIZE	128	/* templates kept per class */

/* ---- randomness ------------------------------------------------------ */

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* xorshift64*: small, fast, and the same on every machine */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

static uint32_t rnd_below(uint32_t n)
{
	return n ? (uint32_t)(rnd() % n) : 0;
}

static bool chance(unsigned int percent)
{
	return rnd_below(100) < percent;
}

/* a value that tends to sit on a boundary */
static uint32_t rnd_boundary32(uint32_t near)
{
	static const uint32_t edges[] = {
		0, 1, 2, 3, 4, 7, 8, 63, 64, 255, 256, 1023, 1024, 1025,
		4095, 4096, 4097, 65535, 65536, 0x7fffffff, 0x80000000,
		0xfffffffe, 0xffffffff,
	};

	switch (rnd_below(4)) {
	case 0:
		return edges[rnd_below(sizeof(edges) / sizeof(edges[0]))];
	case 1:
		return near + rnd_below(9) - 4;
	case 2:
		return near ^ (1u << rnd_below(32));
	default:
		return (uint32_t)rnd();
	}
}

/* ---- checksums (the ICRC: icrc.c) ---------------------------------- */

static uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static uint32_t csum_add(uint32_t sum, const uint8_t *p, size_t len)
{
	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	return sum;
}

/* ---- frames ---------------------------------------------------------- */

/*
 * A RoCEv2 frame taken apart: the bytes before the IP header, the IP and
 * UDP headers, and the transport bytes from the BTH to the ICRC (which is
 * recomputed).
 */
struct frame {
	uint8_t bytes[FRAME_MAX];
	size_t l3;		/* offset of the IP header */
	bool ipv6;
	size_t tlen;		/* BTH .. payload, without the ICRC */
};

static size_t frame_l4(const struct frame *f)
{
	return f->l3 + (f->ipv6 ? 40 : 20);
}

static uint8_t *frame_bth(struct frame *f)
{
	return f->bytes + frame_l4(f) + 8;
}

static size_t frame_len(const struct frame *f)
{
	return frame_l4(f) + 8 + f->tlen + ICRC_LEN;
}

/* a RoCEv2 frame from the wire into f; false if it is not one */
static bool frame_parse(struct frame *f, const uint8_t *p, size_t len)
{
	size_t l3 = 14, l4, ulen;
	uint16_t type;
	bool ipv6;

	if (len < l3 || len > FRAME_MAX)
		return false;
	type = (uint16_t)(p[12] << 8 | p[13]);
	if (type == 0x8100 && len >= 18) {	/* one VLAN tag */
		type = (uint16_t)(p[16] << 8 | p[17]);
		l3 = 18;
	}
	if (type == 0x0800) {
		if (len < l3 + 20 || p[l3] != 0x45 || p[l3 + 9] != IPPROTO_UDP)
			return false;
		ipv6 = false;
		l4 = l3 + 20;
	} else if (type == 0x86dd) {
		if (len < l3 + 40 || p[l3 + 6] != IPPROTO_UDP)
			return false;
		ipv6 = true;
		l4 = l3 + 40;
	} else {
		return false;
	}
	if (len < l4 + 8 || (p[l4 + 2] << 8 | p[l4 + 3]) != ROCE_PORT)
		return false;
	ulen = (size_t)(p[l4 + 4] << 8 | p[l4 + 5]);
	if (ulen < 8 + BTH_LEN + ICRC_LEN || l4 + ulen > len)
		return false;
	memcpy(f->bytes, p, l4 + ulen);
	f->l3 = l3;
	f->ipv6 = ipv6;
	f->tlen = ulen - 8 - ICRC_LEN;
	return true;
}

/* the lengths, the IP checksum, the UDP checksum (IPv6) and the ICRC */
static void frame_fix(struct frame *f)
{
	uint8_t *ip = f->bytes + f->l3, *udp = f->bytes + frame_l4(f);
	size_t ulen = 8 + f->tlen + ICRC_LEN;
	uint32_t crc, sum;

	udp[4] = (uint8_t)(ulen >> 8);
	udp[5] = (uint8_t)ulen;
	udp[6] = udp[7] = 0;
	if (f->ipv6) {
		ip[4] = (uint8_t)(ulen >> 8);
		ip[5] = (uint8_t)ulen;
	} else {
		ip[2] = (uint8_t)((20 + ulen) >> 8);
		ip[3] = (uint8_t)(20 + ulen);
		ip[10] = ip[11] = 0;
		sum = csum_fold(csum_add(0, ip, 20));
		ip[10] = (uint8_t)(sum >> 8);
		ip[11] = (uint8_t)sum;
	}
	crc = icrc(ip, frame_l4(f) - f->l3, f->ipv6, udp + 8, f->tlen);
	for (int i = 0; i < 4; i++)
		udp[8 + f->tlen + i] = (uint8_t)(crc >> (8 * i));
	if (f->ipv6) {
		/* pseudo-header: addresses, length, next header */
		sum = csum_add(0, ip + 8, 32);
		sum += (uint32_t)ulen + IPPROTO_UDP;
		sum = csum_fold(csum_add(sum, udp, ulen));
		if (!sum)
			sum = 0xffff;
		udp[6] = (uint8_t)(sum >> 8);
		udp[7] = (uint8_t)sum;
	}
}

/* ---- what a BTH opcode carries (IBTA 9.2, table 38) ------------------- */

enum ext {
	EXT_RETH = 1, EXT_AETH = 2, EXT_ATOMIC = 4, EXT_ATOMACK = 8,
	EXT_IMM = 16, EXT_IETH = 32, EXT_DETH = 64, EXT_FETH = 128,
	EXT_XRCETH = 256,
};

/* the transport of a BTH opcode (its top 3 bits) */
enum { TR_RC = 0, TR_UC = 1, TR_UD = 3, TR_XRC = 5 };

static unsigned int op_transport(uint8_t opcode)
{
	return opcode >> 5;
}

/* RC and XRC operations 13..18: READ responses, ACK, atomic ACK */
static bool op_is_response(uint8_t opcode)
{
	return (opcode & 31) >= 13 && (opcode & 31) <= 18;
}

/* extended headers of an opcode, in wire order; 0 for none or unknown */
static unsigned int op_ext(uint8_t opcode)
{
	static const unsigned int rc[32] = {
		[4] = EXT_IMM, [5] = EXT_IMM,		/* SEND ..._IMM */
		[6] = EXT_RETH, [9] = EXT_IMM,		/* WRITE FIRST, LAST_IMM */
		[10] = EXT_RETH, [11] = EXT_RETH | EXT_IMM,
		[12] = EXT_RETH,			/* READ request */
		[13] = EXT_AETH, [15] = EXT_AETH,	/* READ resp FIRST, LAST */
		[16] = EXT_AETH, [17] = EXT_AETH,	/* READ resp ONLY, ACK */
		[18] = EXT_AETH | EXT_ATOMACK,
		[19] = EXT_ATOMIC, [20] = EXT_ATOMIC,
		[22] = EXT_IETH, [23] = EXT_IETH,	/* SEND ..._INV */
		[28] = EXT_FETH | EXT_RETH,		/* FLUSH (RC only) */
		[29] = EXT_RETH,			/* ATOMIC WRITE (RC only) */
	};
	unsigned int t = op_transport(opcode), op = opcode & 31;

	if (t == TR_UD)	/* SEND_ONLY, SEND_ONLY_IMM */
		return op == 4 ? EXT_DETH : op == 5 ? EXT_DETH | EXT_IMM : 0;
	/* XRC: RC's operations; requests name an XRC SRQ */
	if (t == TR_XRC && op < 24)
		return rc[op] | (op_is_response(opcode) ? 0 : EXT_XRCETH);
	return t == TR_RC || (t == TR_UC && op < 28) ? rc[op] : 0;
}

static const struct {
	unsigned int ext;
	size_t len;
} ext_order[] = {
	{ EXT_DETH, 8 }, { EXT_XRCETH, 4 }, { EXT_FETH, 4 }, { EXT_RETH, 16 },
	{ EXT_ATOMIC, 28 },
	{ EXT_AETH, 4 }, { EXT_ATOMACK, 8 }, { EXT_IMM, 4 }, { EXT_IETH, 4 },
};

/* offset of header x after the BTH of opcode, or -1 if it has none */
static long ext_off(uint8_t opcode, unsigned int x)
{
	unsigned int have = op_ext(opcode);
	size_t off = BTH_LEN;

	if (!(have & x))
		return -1;
	for (size_t i = 0; i < sizeof(ext_order) / sizeof(ext_order[0]); i++) {
		if (ext_order[i].ext == x)
			return (long)off;
		if (have & ext_order[i].ext)
			off += ext_order[i].len;
	}
	return -1;
}

static size_t hdrs_len(uint8_t opcode)
{
	unsigned int have = op_ext(opcode);
	size_t off = BTH_LEN;

	for (size_t i = 0; i < sizeof(ext_order) / sizeof(ext_order[0]); i++)
		if (have & ext_order[i].ext)
			off += ext_order[i].len;
	return off;
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3];
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* ---- templates ------------------------------------------------------- */

/* frames are pooled by what they are, so that rare kinds get their share */
enum tclass { T_RC_REQ, T_RC_RESP, T_UC, T_UD, T_GSI, T_XRC, T_NCLASS };

static const char *const tclass_name[T_NCLASS] = {
	"RC request", "RC ACK/response", "UC", "UD", "GSI (QP1)",
	"XRC",
};

struct pool {
	struct frame frames[POOL_SIZE];
	unsigned int n, next;
	unsigned long seen;
};

static struct pool pools[T_NCLASS];

static enum tclass frame_class(struct frame *f)
{
	uint8_t *bth = frame_bth(f);
	uint8_t op = bth[0];

	switch (op_transport(op)) {
	case TR_UD:
		return (get32(bth + 4) & 0xffffff) == 1 ? T_GSI : T_UD;
	case TR_UC:
		return T_UC;
	case TR_XRC:
		/* requests and responses alike: XRC traffic is rarer than RC's */
		return T_XRC;
	default:
		return op_is_response(op) ? T_RC_RESP : T_RC_REQ;
	}
}

static void learn(const uint8_t *p, size_t len)
{
	struct frame f;
	struct pool *pl;

	if (!frame_parse(&f, p, len))
		return;
	pl = &pools[frame_class(&f)];
	pl->frames[pl->next] = f;
	pl->next = (pl->next + 1) % POOL_SIZE;
	if (pl->n < POOL_SIZE)
		pl->n++;
	pl->seen++;
}

static unsigned int pools_filled(void)
{
	unsigned int n = 0;

	for (int c = 0; c < T_NCLASS; c++)
		n += pools[c].n != 0;
	return n;
}

/* a template: a class with templates, chosen evenly, then a frame of it */
static const struct frame *pick_template(void)
{
	unsigned int k = rnd_below(pools_filled());

	for (int c = 0; c < T_NCLASS; c++) {
		if (!pools[c].n)
			continue;
		if (!k--)
			return &pools[c].frames[rnd_below(pools[c].n)];
	}
	return NULL;
}

/* a field of any template, for mixing live values between QPs */
static const struct frame *pick_any(void)
{
	return pick_template();
}

/* ---- mutations ------------------------------------------------------- */

/*
 * Each sent frame is a template with one mutation, sometimes two.  The
 * names are what the summary prints.  A mutation that changes how lengths
 * or checksums are written sets *after to the damage frame_fix() must not
 * repair.
 */
enum mutation {
	M_REPLAY,		/* unchanged: a duplicate */
	M_PSN,			/* PSN moved near the window, or anywhere */
	M_OPCODE,		/* another opcode, same transport or any */
	M_BTH_FLAGS,		/* SE, M, pad count, transport version */
	M_BTH_FIELDS,		/* P_Key, DestQP, AckReq, reserved bits */
	M_EXT_FIELD,		/* RETH/AETH/AtomicETH/DETH/ImmDt/IETH/FETH */
	M_RKEY_MIX,		/* an rkey, VA or QPN from another template */
	M_PAYLOAD,		/* payload shortened, lengthened, rewritten */
	M_HDR_CUT,		/* cut inside the extended headers */
	M_MAD,			/* MAD header fields of a QP1 packet */
	M_HAVOC,		/* random bytes anywhere after the UDP header */
	M_UDP_LEN,		/* the UDP length lies */
	M_IP_LEN,		/* the IP length lies */
	M_IP_HDR,		/* IP options, fragments, version */
	M_ICRC,			/* a wrong ICRC */
	M_TRUNCATE,		/* the frame cut short, lengths as they were */
	M_NUM
};

static const char *const mutation_name[M_NUM] = {
	"replay", "psn", "opcode", "bth-flags", "bth-fields", "ext-field",
	"mix-live", "payload", "header-cut", "mad", "havoc", "udp-length",
	"ip-length", "ip-header", "bad-icrc", "truncate",
};

static unsigned long mutation_count[M_NUM];

/* damage done after frame_fix() */
struct after {
	int udp_len_delta;
	int ip_len_delta;
	bool ip_opts, ip_frag, ip_version, bad_icrc;
	size_t truncate_to;	/* 0: no */
};

static void mutate_psn(struct frame *f)
{
	uint8_t *bth = frame_bth(f);
	uint32_t apsn = get32(bth + 8), psn = apsn & 0xffffff;

	if (chance(80))
		psn += (uint32_t)(int32_t)(rnd_below(257) - 128);
	else if (chance(50))
		psn += 0x800000;	/* half the PSN space away */
	else
		psn = (uint32_t)rnd();
	put32(bth + 8, (apsn & 0xff000000) | (psn & 0xffffff));
}

static void mutate_opcode(struct frame *f)
{
	uint8_t *bth = frame_bth(f);

	if (chance(60))
		bth[0] = (uint8_t)((bth[0] & 0xe0) | rnd_below(32));
	else
		bth[0] = (uint8_t)rnd();
	/* the headers the new opcode expects are whatever bytes are there */
}

static void mutate_bth_flags(struct frame *f)
{
	uint8_t *bth = frame_bth(f);

	if (chance(50))
		bth[1] ^= (uint8_t)(1u << rnd_below(8));
	else
		bth[1] = (uint8_t)rnd();
}

static void mutate_bth_fields(struct frame *f)
{
	uint8_t *bth = frame_bth(f);
	uint32_t qpn;

	switch (rnd_below(5)) {
	case 0:	/* P_Key: another partition, the limited member, zero */
		bth[2] = (uint8_t)rnd();
		bth[3] = (uint8_t)rnd();
		break;
	case 1:	/* a neighbour of the QP, QP0, QP1, the multicast QPN */
		qpn = get32(bth + 4) & 0xffffff;
		switch (rnd_below(4)) {
		case 0: qpn += rnd_below(9) - 4; break;
		case 1: qpn = rnd_below(2); break;
		case 2: qpn = 0xffffff; break;
		default: qpn = (uint32_t)rnd(); break;
		}
		put32(bth + 4, (get32(bth + 4) & 0xff000000) | (qpn & 0xffffff));
		break;
	case 2:	/* AckReq */
		bth[8] ^= 0x80;
		break;
	case 3:	/* resv8a (FECN/BECN) and resv7 */
		bth[4] = (uint8_t)rnd();
		bth[8] = (uint8_t)((bth[8] & 0x80) | (rnd() & 0x7f));
		break;
	default: /* all of it */
		for (int i = 1; i < BTH_LEN; i++)
			if (chance(30))
				bth[i] = (uint8_t)rnd();
	}
}

/* a 32-bit field at off (inside the transport bytes) pushed to an edge */
static void mutate_word(struct frame *f, long off)
{
	uint8_t *bth = frame_bth(f);

	if (off < 0 || (size_t)off + 4 > f->tlen)
		return;
	put32(bth + off, rnd_boundary32(get32(bth + off)));
}

static void mutate_ext_field(struct frame *f)
{
	uint8_t op = frame_bth(f)[0];
	long reth = ext_off(op, EXT_RETH), atm = ext_off(op, EXT_ATOMIC);
	long aeth = ext_off(op, EXT_AETH), deth = ext_off(op, EXT_DETH);
	long xrceth = ext_off(op, EXT_XRCETH);
	long imm = ext_off(op, EXT_IMM), ieth = ext_off(op, EXT_IETH);
	long feth = ext_off(op, EXT_FETH);
	long va = reth >= 0 ? reth : atm;
	size_t hl = hdrs_len(op);

	switch (rnd_below(8)) {
	case 0:	/* VA: high word, low word (MR edges, page edges) */
		mutate_word(f, va >= 0 ? va + 4 * (long)rnd_below(2) : -1);
		break;
	case 1:	/* rkey */
		mutate_word(f, va >= 0 ? va + 8 : -1);
		break;
	case 2:	/* DMA length, or the atomic operands */
		mutate_word(f, reth >= 0 ? reth + 12 :
			       atm >= 0 ? atm + 12 + 4 * (long)rnd_below(4) : -1);
		break;
	case 3:	/* AETH: syndrome and MSN */
		mutate_word(f, aeth);
		if (aeth >= 0 && (size_t)aeth < f->tlen && chance(50))
			frame_bth(f)[aeth] = (uint8_t)rnd();
		break;
	case 4:	/* DETH: Q_Key, source QP; XRCETH: the XRC SRQ */
		mutate_word(f, deth >= 0 ? deth + 4 * (long)rnd_below(2) :
			       xrceth);
		break;
	case 5:	/* ImmDt, IETH, FETH (placement type, selectivity) */
		mutate_word(f, imm >= 0 ? imm : ieth >= 0 ? ieth : feth);
		break;
	default: /* a byte somewhere in the headers */
		if (hl > BTH_LEN && hl <= f->tlen)
			frame_bth(f)[BTH_LEN + rnd_below((uint32_t)(hl - BTH_LEN))] =
				(uint8_t)rnd();
	}
}

/* another live QP's rkey, VA or QPN in this frame */
static void mutate_mix(struct frame *f)
{
	const struct frame *o = pick_any();
	uint8_t *bth = frame_bth(f);
	const uint8_t *obth;
	long mine, theirs;

	if (!o)
		return;
	obth = o->bytes + frame_l4(o) + 8;
	if (chance(30)) {	/* DestQP */
		memcpy(bth + 5, obth + 5, 3);
		return;
	}
	mine = ext_off(bth[0], EXT_RETH);
	if (mine < 0)
		mine = ext_off(bth[0], EXT_ATOMIC);
	theirs = ext_off(obth[0], EXT_RETH);
	if (theirs < 0)
		theirs = ext_off(obth[0], EXT_ATOMIC);
	if (mine < 0 || theirs < 0 || (size_t)mine + 16 > f->tlen ||
	    (size_t)theirs + 16 > o->tlen)
		return;
	/* VA and rkey together, or one of the two */
	switch (rnd_below(3)) {
	case 0: memcpy(bth + mine, obth + theirs, 12); break;
	case 1: memcpy(bth + mine, obth + theirs, 8); break;
	default: memcpy(bth + mine + 8, obth + theirs + 8, 4); break;
	}
}

static void mutate_payload(struct frame *f)
{
	size_t hl = hdrs_len(frame_bth(f)[0]), max = 1500 - 28 - 8 - ICRC_LEN;
	uint8_t *bth = frame_bth(f);

	if (hl > f->tlen)
		hl = f->tlen;
	switch (rnd_below(4)) {
	case 0:	/* shorter, down to nothing */
		f->tlen = hl + rnd_below((uint32_t)(f->tlen - hl + 1));
		break;
	case 1:	/* longer, up to the MTU or a little past a 4-byte step */
		if (f->ipv6)
			max -= 20;
		if (f->tlen < max)
			f->tlen += 1 + rnd_below((uint32_t)(max - f->tlen));
		if (frame_l4(f) + 8 + f->tlen + ICRC_LEN > FRAME_MAX)
			f->tlen = FRAME_MAX - frame_l4(f) - 8 - ICRC_LEN;
		break;
	case 2:	/* not a multiple of 4 */
		if (f->tlen > hl)
			f->tlen -= 1 + rnd_below(3);
		break;
	default: /* same length, other bytes */
		for (size_t i = hl; i < f->tlen; i++)
			if (chance(10))
				bth[i] = (uint8_t)rnd();
	}
	if (f->tlen < BTH_LEN)
		f->tlen = BTH_LEN;
}

static void mutate_hdr_cut(struct frame *f)
{
	size_t hl = hdrs_len(frame_bth(f)[0]);

	if (hl > BTH_LEN && hl <= f->tlen)
		f->tlen = BTH_LEN + rnd_below((uint32_t)(hl - BTH_LEN));
	else
		f->tlen = BTH_LEN + rnd_below(8);
}

/* MAD common header: base version, class, class version, method, status */
static void mutate_mad(struct frame *f)
{
	uint8_t *bth = frame_bth(f);
	size_t mad = hdrs_len(bth[0]);

	if (frame_class(f) != T_GSI || mad + 24 > f->tlen) {
		mutate_ext_field(f);
		return;
	}
	switch (rnd_below(5)) {
	case 0: bth[mad] = (uint8_t)rnd_below(4); break;	/* base ver */
	case 1: bth[mad + 1] = (uint8_t)rnd(); break;		/* class */
	case 2: bth[mad + 2] = (uint8_t)rnd(); break;		/* class ver */
	case 3: bth[mad + 3] = (uint8_t)rnd(); break;		/* method */
	default:
		for (int i = 0; i < 24; i++)
			if (chance(20))
				bth[mad + i] = (uint8_t)rnd();
	}
}

static void mutate_havoc(struct frame *f)
{
	unsigned int n = 1 + rnd_below(8);

	while (n--)
		frame_bth(f)[rnd_below((uint32_t)f->tlen)] = (uint8_t)rnd();
}

/* one mutation; returns which */
static enum mutation mutate(struct frame *f, struct after *a)
{
	enum mutation m = (enum mutation)rnd_below(M_NUM);
	size_t len;

	switch (m) {
	case M_REPLAY: break;
	case M_PSN: mutate_psn(f); break;
	case M_OPCODE: mutate_opcode(f); break;
	case M_BTH_FLAGS: mutate_bth_flags(f); break;
	case M_BTH_FIELDS: mutate_bth_fields(f); break;
	case M_EXT_FIELD: mutate_ext_field(f); break;
	case M_RKEY_MIX: mutate_mix(f); break;
	case M_PAYLOAD: mutate_payload(f); break;
	case M_HDR_CUT: mutate_hdr_cut(f); break;
	case M_MAD: mutate_mad(f); break;
	case M_HAVOC: mutate_havoc(f); break;
	case M_UDP_LEN:
		a->udp_len_delta = chance(50) ? (int)rnd_below(64) - 32 :
						(int)rnd_boundary32(0) & 0xffff;
		break;
	case M_IP_LEN:
		a->ip_len_delta = chance(50) ? (int)rnd_below(64) - 32 :
					       (int)rnd_boundary32(0) & 0xffff;
		break;
	case M_IP_HDR:
		if (chance(50))
			a->ip_frag = true;
		else if (chance(50))
			a->ip_opts = true;
		else
			a->ip_version = true;
		break;
	case M_ICRC: a->bad_icrc = true; break;
	case M_TRUNCATE:
		len = frame_len(f);
		a->truncate_to = f->l3 + rnd_below((uint32_t)(len - f->l3));
		break;
	default: break;
	}
	return m;
}

/* what frame_fix() would repair, broken on purpose */
static size_t apply_after(struct frame *f, const struct after *a)
{
	uint8_t *ip = f->bytes + f->l3, *udp = f->bytes + frame_l4(f);
	size_t len = frame_len(f);
	uint32_t v;

	if (a->udp_len_delta) {
		v = (uint32_t)((udp[4] << 8 | udp[5]) + a->udp_len_delta);
		udp[4] = (uint8_t)(v >> 8);
		udp[5] = (uint8_t)v;
	}
	if (a->ip_len_delta) {
		int at = f->ipv6 ? 4 : 2;

		v = (uint32_t)((ip[at] << 8 | ip[at + 1]) + a->ip_len_delta);
		ip[at] = (uint8_t)(v >> 8);
		ip[at + 1] = (uint8_t)v;
	}
	if (a->ip_frag && !f->ipv6)
		ip[6] |= chance(50) ? 0x20 : (uint8_t)(1 + rnd_below(0x1f));
	if (a->ip_opts && !f->ipv6)
		ip[0] = (uint8_t)(0x40 | (6 + rnd_below(10)));
	if (a->ip_version)
		ip[0] = (uint8_t)((ip[0] & 0x0f) | (f->ipv6 ? 0x40 : 0x60));
	if (a->bad_icrc)
		udp[8 + f->tlen + rnd_below(ICRC_LEN)] ^=
			(uint8_t)(1u << rnd_below(8));
	if (a->truncate_to && a->truncate_to < len)
		len = a->truncate_to;
	return len;
}

/* ---- pcap files ------------------------------------------------------ */

struct pcap_rec {
	uint32_t sec, usec, caplen, len;
};

static FILE *pcap_create(const char *path)
{
	const uint32_t hdr[6] = {
		0xa1b2c3d4, 2 | 4u << 16, 0, 0, 65535, 1 /* Ethernet */
	};
	FILE *fp = fopen(path, "wb");

	if (fp && fwrite(hdr, sizeof(hdr), 1, fp) != 1) {
		fclose(fp);
		fp = NULL;
	}
	return fp;
}

static void pcap_put(FILE *fp, const uint8_t *p, size_t len)
{
	struct timespec ts;
	struct pcap_rec r;

	clock_gettime(CLOCK_REALTIME, &ts);
	r.sec = (uint32_t)ts.tv_sec;
	r.usec = (uint32_t)(ts.tv_nsec / 1000);
	r.caplen = r.len = (uint32_t)len;
	if (fwrite(&r, sizeof(r), 1, fp) != 1 || fwrite(p, len, 1, fp) != 1) {
		perror("rxe2fuzz: pcap write");
		exit(1);
	}
}

/* ---- the socket ------------------------------------------------------ */

static int sock_open(const char *ifname, struct sockaddr_ll *to)
{
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons(ETH_P_ALL),
	};
	int one = 1, fd;

	sll.sll_ifindex = (int)if_nametoindex(ifname);
	if (!sll.sll_ifindex) {
		fprintf(stderr, "rxe2fuzz: no interface %s\n", ifname);
		exit(2);
	}
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK, htons(ETH_P_ALL));
	if (fd < 0 || bind(fd, (struct sockaddr *)&sll, sizeof(sll))) {
		perror("rxe2fuzz: AF_PACKET socket");
		exit(2);
	}
	/* our own frames go straight to the driver, past the qdisc */
	setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one));
	*to = sll;
	return fd;
}

/* learn from every frame that left the interface, without waiting */
static void drain(int fd)
{
	uint8_t buf[FRAME_MAX];
	struct sockaddr_ll from;
	socklen_t fl;
	ssize_t n;

	for (int i = 0; i < 256; i++) {
		fl = sizeof(from);
		n = recvfrom(fd, buf, sizeof(buf), MSG_TRUNC,
			     (struct sockaddr *)&from, &fl);
		if (n < 0)
			return;
		if (from.sll_pkttype == PACKET_OUTGOING && n <= FRAME_MAX)
			learn(buf, (size_t)n);
	}
}

static void send_frame(int fd, const struct sockaddr_ll *to,
		       const uint8_t *p, size_t len)
{
	struct pollfd pfd = { .fd = fd, .events = POLLOUT };

	while (sendto(fd, p, len, 0, (const struct sockaddr *)to,
		      sizeof(*to)) < 0) {
		if (errno == EAGAIN || errno == ENOBUFS) {
			poll(&pfd, 1, 10);
			continue;
		}
		if (errno == EINVAL || errno == EMSGSIZE)
			return;	/* shorter than a header: not sendable */
		perror("rxe2fuzz: sendto");
		exit(1);
	}
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- the two modes --------------------------------------------------- */

static int replay(int fd, const struct sockaddr_ll *to, const char *path)
{
	uint8_t buf[65536];
	struct pcap_rec r;
	uint32_t hdr[6];
	unsigned long n = 0;
	FILE *fp = fopen(path, "rb");

	if (!fp || fread(hdr, sizeof(hdr), 1, fp) != 1 || hdr[0] != 0xa1b2c3d4) {
		fprintf(stderr, "rxe2fuzz: %s is not a pcap file we wrote\n",
			path);
		return 2;
	}
	while (fread(&r, sizeof(r), 1, fp) == 1) {
		if (r.caplen > sizeof(buf) || fread(buf, r.caplen, 1, fp) != 1)
			break;
		send_frame(fd, to, buf, r.caplen);
		n++;
	}
	fclose(fp);
	printf("rxe2fuzz: replayed %lu frames from %s\n", n, path);
	return 0;
}

struct fuzz_opts {
	unsigned long frames;
	double seconds;		/* give up after */
	double wait;		/* for the first RoCEv2 frame */
	unsigned long pps;	/* 0: as fast as the link takes them */
	FILE *pcap;
};

static void print_summary(unsigned long sent, double secs, uint64_t seed)
{
	printf("rxe2fuzz: seed %llu: %lu frames in %.1f s (%.0f/s)\n",
	       (unsigned long long)seed, sent, secs, secs > 0 ? sent / secs : 0);
	for (int c = 0; c < T_NCLASS; c++)
		printf("rxe2fuzz: templates %-16s %lu seen\n", tclass_name[c],
		       pools[c].seen);
	for (int m = 0; m < M_NUM; m++)
		printf("rxe2fuzz: mutation  %-16s %lu\n", mutation_name[m],
		       mutation_count[m]);
}

static int fuzz(int fd, const struct sockaddr_ll *to,
		const struct fuzz_opts *o, uint64_t seed)
{
	double t0 = now_s(), last_print = t0;
	unsigned long sent = 0;
	struct frame f;
	struct after a;
	size_t len;

	while (sent < o->frames) {
		double t = now_s();

		if (t - t0 > o->seconds)
			break;
		drain(fd);
		if (!pools_filled()) {
			if (t - t0 > o->wait) {
				fprintf(stderr,
					"rxe2fuzz: no RoCEv2 traffic seen leaving the interface in %g s\n",
					o->wait);
				return 1;
			}
			usleep(10000);
			continue;
		}
		if (o->pps && sent > o->pps * (t - t0)) {
			usleep(1000);
			continue;
		}
		f = *pick_template();
		memset(&a, 0, sizeof(a));
		mutation_count[mutate(&f, &a)]++;
		if (chance(10))	/* now and then, a second one */
			mutation_count[mutate(&f, &a)]++;
		frame_fix(&f);
		len = apply_after(&f, &a);
		send_frame(fd, to, f.bytes, len);
		if (o->pcap)
			pcap_put(o->pcap, f.bytes, len);
		sent++;
		if (t - last_print >= 10) {
			printf("rxe2fuzz: %lu frames, %.0f s\n", sent, t - t0);
			fflush(stdout);
			last_print = t;
		}
	}
	print_summary(sent, now_s() - t0, seed);
	return sent < o->frames;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: rxe2fuzz -i IFNAME [-n FRAMES] [-s SEED] [-t SECONDS] [-W SECONDS] [-p PPS] [-w PCAP]\n"
		"       rxe2fuzz -i IFNAME -r PCAP\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct fuzz_opts o = { .frames = 100000, .seconds = 3600, .wait = 20 };
	const char *ifname = NULL, *wpath = NULL, *rpath = NULL;
	uint64_t seed = (uint64_t)time(NULL) ^ (uint64_t)getpid() << 32;
	struct sockaddr_ll to;
	int c, fd, rc;

	while ((c = getopt(argc, argv, "i:n:s:t:W:p:w:r:")) != -1) {
		switch (c) {
		case 'i': ifname = optarg; break;
		case 'n': o.frames = strtoul(optarg, NULL, 0); break;
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 't': o.seconds = strtod(optarg, NULL); break;
		case 'W': o.wait = strtod(optarg, NULL); break;
		case 'p': o.pps = strtoul(optarg, NULL, 0); break;
		case 'w': wpath = optarg; break;
		case 'r': rpath = optarg; break;
		default: usage();
		}
	}
	if (!ifname || optind != argc)
		usage();
	fd = sock_open(ifname, &to);
	if (rpath)
		return replay(fd, &to, rpath);
	if (wpath && !(o.pcap = pcap_create(wpath))) {
		perror(wpath);
		return 2;
	}
	icrc_init();
	rng_state = seed ? seed : 1;
	printf("rxe2fuzz: seed %llu (-s to replay the same choices), %lu frames on %s\n",
	       (unsigned long long)seed, o.frames, ifname);
	fflush(stdout);
	rc = fuzz(fd, &to, &o, seed);
	if (o.pcap && fclose(o.pcap)) {
		perror(wpath);
		return 2;
	}
	return rc;
}
