// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2dump: capture and decode RoCEv2 traffic (UDP port 4791) on libpcap.
 *
 *   rxe2dump [-d RDMADEV | -i IFACE | -r FILE] [-w FILE] [-c COUNT]
 *            [-q QPN] [-o OPCODE] [-s SNAPLEN] [-nSTx] [BPF EXPRESSION]
 *
 * A live capture by RDMA device finds the device's netdev (sysfs) and
 * the network namespace that netdev lives in (the current one, then
 * every namespace of /run/netns and of the running processes), enters
 * it and captures there.  Every packet is decoded down to the IBTA
 * extension headers and MADs on QP1, and its invariant CRC is checked.
 * Per conversation (source and destination address, destination QP)
 * rxe2dump follows the PSNs of requests and responses and counts what a
 * person debugging RDMA asks first: gaps, packets sent again, NAKs by
 * kind, message sizes; the table is printed at the end.  It reads what
 * rdma_rxe and RoCEv2 NICs send as well: nothing here is rxe2's own.
 *
 * The header layouts, opcode numbers and syndromes are IBTA volume 1
 * (chapter 9, annex A17 for RoCEv2 and its ICRC); the 1.5 FLUSH and
 * ATOMIC WRITE opcodes as Linux's rdma_rxe sends them.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <net/if.h>
#include <pcap/pcap.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "icrc.h"

#define ROCE_PORT	4791
#define BTH_LEN		12
#define ICRC_LEN	4

/* extension headers, in the order they follow the BTH */
enum {
	H_RDETH = 1 << 0,
	H_DETH = 1 << 1,
	H_XRCETH = 1 << 2,
	H_FETH = 1 << 3,
	H_RETH = 1 << 4,
	H_ATOMETH = 1 << 5,
	H_AETH = 1 << 6,
	H_ATOMACK = 1 << 7,
	H_IMM = 1 << 8,
	H_IETH = 1 << 9,
	H_CNP = 1 << 10,	/* 16 reserved bytes */
};

static const struct {
	unsigned int mask;
	unsigned int len;
} hdr_len[] = {
	{ H_RDETH, 4 }, { H_DETH, 8 }, { H_XRCETH, 4 }, { H_FETH, 4 },
	{ H_RETH, 16 }, { H_ATOMETH, 28 }, { H_AETH, 4 }, { H_ATOMACK, 8 },
	{ H_IMM, 4 }, { H_IETH, 4 }, { H_CNP, 16 },
};

/* packet kinds within a message */
enum { K_FIRST = 1, K_MIDDLE = 2, K_LAST = 4, K_ONLY = K_FIRST | K_LAST };

struct op_base {
	const char *name;
	unsigned int hdrs;
	unsigned int kind;
	bool response;
};

/* the low five bits of an opcode: the operation (IBTA table 38) */
static const struct op_base op_base[32] = {
	[0x00] = { "SEND_FIRST", 0, K_FIRST },
	[0x01] = { "SEND_MIDDLE", 0, K_MIDDLE },
	[0x02] = { "SEND_LAST", 0, K_LAST },
	[0x03] = { "SEND_LAST_WITH_IMMEDIATE", H_IMM, K_LAST },
	[0x04] = { "SEND_ONLY", 0, K_ONLY },
	[0x05] = { "SEND_ONLY_WITH_IMMEDIATE", H_IMM, K_ONLY },
	[0x06] = { "RDMA_WRITE_FIRST", H_RETH, K_FIRST },
	[0x07] = { "RDMA_WRITE_MIDDLE", 0, K_MIDDLE },
	[0x08] = { "RDMA_WRITE_LAST", 0, K_LAST },
	[0x09] = { "RDMA_WRITE_LAST_WITH_IMMEDIATE", H_IMM, K_LAST },
	[0x0a] = { "RDMA_WRITE_ONLY", H_RETH, K_ONLY },
	[0x0b] = { "RDMA_WRITE_ONLY_WITH_IMMEDIATE", H_RETH | H_IMM, K_ONLY },
	[0x0c] = { "RDMA_READ_REQUEST", H_RETH, K_ONLY },
	[0x0d] = { "RDMA_READ_RESPONSE_FIRST", H_AETH, K_FIRST, true },
	[0x0e] = { "RDMA_READ_RESPONSE_MIDDLE", 0, K_MIDDLE, true },
	[0x0f] = { "RDMA_READ_RESPONSE_LAST", H_AETH, K_LAST, true },
	[0x10] = { "RDMA_READ_RESPONSE_ONLY", H_AETH, K_ONLY, true },
	[0x11] = { "ACKNOWLEDGE", H_AETH, K_ONLY, true },
	[0x12] = { "ATOMIC_ACKNOWLEDGE", H_AETH | H_ATOMACK, K_ONLY, true },
	[0x13] = { "COMPARE_SWAP", H_ATOMETH, K_ONLY },
	[0x14] = { "FETCH_ADD", H_ATOMETH, K_ONLY },
	[0x16] = { "SEND_LAST_WITH_INVALIDATE", H_IETH, K_LAST },
	[0x17] = { "SEND_ONLY_WITH_INVALIDATE", H_IETH, K_ONLY },
	[0x1c] = { "FLUSH", H_FETH | H_RETH, K_ONLY },
	[0x1d] = { "ATOMIC_WRITE", H_RETH, K_ONLY },
};

struct opcode {
	const char *transport;	/* NULL: not a valid opcode */
	const struct op_base *op;
	unsigned int hdrs;
};

/*
 * Which operations each transport has (bits of the low five): RC all of
 * the table, XRC the same, UC SENDs and WRITEs, UD the two SEND_ONLYs,
 * RD all up to FETCH_ADD.
 */
#define OPS_RC	0x30dfffffu
#define OPS_UC	0x00000fffu
#define OPS_UD	0x00000030u
#define OPS_RD	0x001fffffu

static struct opcode opcode_of(uint8_t code)
{
	struct opcode o = { NULL, NULL, 0 };
	unsigned int low = code & 0x1f, ops = 0, extra = 0;

	if (code == 0x81) {	/* RoCEv2 congestion notification */
		static const struct op_base cnp = { "CNP", H_CNP, K_ONLY, false };

		o.transport = "CNP";
		o.op = &cnp;
		o.hdrs = H_CNP;
		return o;
	}
	switch (code >> 5) {
	case 0: o.transport = "RC"; ops = OPS_RC; break;
	case 1: o.transport = "UC"; ops = OPS_UC; break;
	case 2: o.transport = "RD"; ops = OPS_RD; extra = H_RDETH | H_DETH; break;
	case 3: o.transport = "UD"; ops = OPS_UD; extra = H_DETH; break;
	case 5: o.transport = "XRC"; ops = OPS_RC; break;
	default: return o;
	}
	if (!(ops & (1u << low)) || !op_base[low].name) {
		o.transport = NULL;
		return o;
	}
	o.op = &op_base[low];
	o.hdrs = o.op->hdrs | extra;
	/* XRC requests name the target SRQ; responses do not */
	if (code >> 5 == 5 && !o.op->response)
		o.hdrs |= H_XRCETH;
	/* an RD response carries the RDETH but no DETH */
	if (code >> 5 == 2 && o.op->response)
		o.hdrs &= ~H_DETH;
	return o;
}

/* ---- options ----------------------------------------------------------- */

static struct {
	const char *rdma_dev, *iface, *rfile, *wfile;
	long count;
	long qpn;		/* -1: any */
	int opcode;		/* -1: any */
	int snaplen;
	bool numeric_only;	/* -n: no names for opcodes */
	bool no_summary;	/* -S */
	bool terse;		/* -T: one line of fields per packet */
	bool hex;		/* -x: payload bytes too */
} opt = { .count = -1, .qpn = -1, .opcode = -1, .snaplen = 65535 };

static void usage(FILE *f)
{
	fprintf(f,
		"usage: rxe2dump [-d RDMADEV | -i IFACE | -r FILE] [-w FILE] [-c COUNT]\n"
		"                [-q QPN] [-o OPCODE] [-s SNAPLEN] [-nSTx] [BPF EXPRESSION]\n"
		"  -d RDMADEV  capture on the netdev of an RDMA device (rxe2_0, rxe0, mlx5_0...)\n"
		"  -i IFACE    capture on a network interface\n"
		"  -r FILE     read a pcap file ('-': standard input)\n"
		"  -w FILE     write the packets to a pcap file instead of decoding them\n"
		"  -c COUNT    stop after COUNT RoCEv2 packets\n"
		"  -q QPN      only packets to destination QP QPN\n"
		"  -o OPCODE   only BTH opcode OPCODE (number, or a name: RC_SEND_ONLY...)\n"
		"  -s SNAPLEN  bytes captured per packet (default 65535)\n"
		"  -n          opcodes as numbers only\n"
		"  -S          no per-conversation summary at the end\n"
		"  -T          terse: one line of fields per packet (for scripts)\n"
		"  -x          payload bytes in hex\n"
		"The BPF expression is ANDed with 'udp dst port 4791'.\n");
}

/* ---- conversations ----------------------------------------------------- */

enum { NAK_SEQ, NAK_INV, NAK_ACCESS, NAK_OP, NAK_RD, NAK_OTHER, NAK_KINDS };

static const char *const nak_name[NAK_KINDS] = {
	"PSN sequence error", "invalid request", "remote access error",
	"remote operational error", "invalid RD request", "reserved",
};

struct conv {
	struct conv *next;
	char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN];
	uint32_t dqpn;
	const char *transport;
	uint64_t pkts, bytes, msgs, msg_bytes, msg_min, msg_max, cur;
	uint64_t gaps, lost, resent, acks, rnr_naks, naks[NAK_KINDS];
	uint64_t bad_icrc;
	uint32_t req_next;	/* next request PSN expected */
	uint32_t resp_next;	/* next READ response PSN expected */
	bool req_seen, resp_seen, loose;
};

static struct conv *convs;
static uint64_t total_pkts, total_bad_icrc, total_other;

static struct conv *conv_get(const char *src, const char *dst, uint32_t dqpn,
			     const char *transport)
{
	struct conv *c, **tail = &convs;

	for (c = convs; c; tail = &c->next, c = c->next)
		if (c->dqpn == dqpn && !strcmp(c->src, src) &&
		    !strcmp(c->dst, dst))
			return c;
	c = calloc(1, sizeof(*c));
	if (!c) {
		perror("rxe2dump");
		exit(1);
	}
	snprintf(c->src, sizeof(c->src), "%s", src);
	snprintf(c->dst, sizeof(c->dst), "%s", dst);
	c->dqpn = dqpn;
	c->transport = transport;
	c->msg_min = UINT64_MAX;
	*tail = c;
	return c;
}

/* b - a in 24-bit PSN space, -2^23 .. 2^23 - 1 */
static int32_t psn_diff(uint32_t b, uint32_t a)
{
	return (int32_t)((b - a) << 8) >> 8;
}

static void conv_msg_done(struct conv *c, uint64_t len)
{
	c->msgs++;
	c->msg_bytes += len;
	if (len < c->msg_min)
		c->msg_min = len;
	if (len > c->msg_max)
		c->msg_max = len;
}

/*
 * A request: its PSN against the next one expected.  Behind: sent again
 * (go-back-N, or a duplicate on the wire).  Ahead: a gap, the packets in
 * between never seen.  After a READ request the next PSN is not known
 * (it depends on the path MTU), so the next request sets it.
 */
static const char *conv_request(struct conv *c, uint32_t psn,
				const struct opcode *o, uint32_t paylen,
				uint32_t dmalen)
{
	const char *note = NULL;
	int32_t d = c->req_seen ? psn_diff(psn, c->req_next) : 0;
	bool read = !strcmp(o->op->name, "RDMA_READ_REQUEST");

	if (d < 0) {
		c->resent++;
		note = "sent again";
	} else if (d > 0 && !c->loose) {
		c->gaps++;
		c->lost += d;
		note = "PSN gap";
	}
	if (d >= 0 || !c->req_seen) {
		c->req_next = (psn + 1) & 0xffffff;
		c->loose = read;
	}
	c->req_seen = true;
	if (d < 0)
		return note;
	if (o->op->kind & K_FIRST)
		c->cur = 0;
	c->cur += paylen;
	/* a READ moves its request's length, an atomic 8 bytes */
	if (o->op->kind & K_LAST)
		conv_msg_done(c, read ? dmalen :
			      o->hdrs & H_ATOMETH ? 8 : c->cur);
	return note;
}

/* an ACK, NAK or read/atomic response */
static const char *conv_response(struct conv *c, uint32_t psn,
				 const struct opcode *o, uint8_t syndrome)
{
	unsigned int kind = syndrome >> 5;

	if (o->op->hdrs & H_AETH) {
		if (kind == 0)
			c->acks++;
		else if (kind == 1)
			c->rnr_naks++;
		else if (kind == 3)
			c->naks[(syndrome & 0x1f) < NAK_OTHER ?
				(syndrome & 0x1f) : NAK_OTHER]++;
	}
	if (!strncmp(o->op->name, "RDMA_READ_RESPONSE", 18)) {
		int32_t d = psn_diff(psn, c->resp_next);

		if (c->resp_seen && !(o->op->kind & K_FIRST) && d > 0) {
			c->gaps++;
			c->lost += d;
			c->resp_next = (psn + 1) & 0xffffff;
			return "PSN gap";
		}
		if (c->resp_seen && d < 0 && !(o->op->kind & K_FIRST)) {
			c->resent++;
			return "sent again";
		}
		c->resp_seen = true;
		c->resp_next = (psn + 1) & 0xffffff;
	}
	return NULL;
}

static void summary(void)
{
	struct conv *c;
	int i;

	printf("\n%" PRIu64 " RoCEv2 packets, %" PRIu64 " with a bad ICRC",
	       total_pkts, total_bad_icrc);
	if (total_other)
		printf(", %" PRIu64 " other packets", total_other);
	printf("\n%-36s %-4s %8s %10s %7s %20s %6s %6s %6s %6s %6s %5s\n",
	       "conversation (dst QP)", "tr", "packets", "bytes", "msgs",
	       "msg size min/avg/max", "gaps", "again", "acks", "rnr", "naks",
	       "icrc");
	for (c = convs; c; c = c->next) {
		char conv[128], sizes[64] = "-";
		uint64_t naks = 0;

		for (i = 0; i < NAK_KINDS; i++)
			naks += c->naks[i];
		snprintf(conv, sizeof(conv), "%s > %s 0x%06x", c->src, c->dst,
			 c->dqpn);
		if (c->msgs)
			snprintf(sizes, sizeof(sizes), "%" PRIu64 "/%" PRIu64
				 "/%" PRIu64, c->msg_min,
				 c->msg_bytes / c->msgs, c->msg_max);
		printf("%-36s %-4s %8" PRIu64 " %10" PRIu64 " %7" PRIu64
		       " %20s %6" PRIu64 " %6" PRIu64 " %6" PRIu64 " %6" PRIu64
		       " %6" PRIu64 " %5" PRIu64 "\n", conv, c->transport,
		       c->pkts, c->bytes, c->msgs, sizes, c->gaps, c->resent,
		       c->acks, c->rnr_naks, naks, c->bad_icrc);
		for (i = 0; i < NAK_KINDS; i++)
			if (c->naks[i])
				printf("%36s NAK %s: %" PRIu64 "\n", "",
				       nak_name[i], c->naks[i]);
	}
}

/* ---- MADs on QP1 --------------------------------------------------------- */

static const char *mad_class_name(uint8_t cls)
{
	switch (cls) {
	case 0x01: return "SubnMgt(LID routed)";
	case 0x81: return "SubnMgt(directed route)";
	case 0x03: return "SubnAdm";
	case 0x04: return "Perf";
	case 0x05: return "BM";
	case 0x06: return "DevMgt";
	case 0x07: return "CM";
	case 0x08: return "SNMP";
	case 0x10: return "CC";
	default: return "class";
	}
}

static const char *mad_method_name(uint8_t m)
{
	switch (m) {
	case 0x01: return "Get";
	case 0x02: return "Set";
	case 0x03: return "Send";
	case 0x05: return "Trap";
	case 0x06: return "Report";
	case 0x07: return "TrapRepress";
	case 0x81: return "GetResp";
	case 0x86: return "ReportResp";
	default: return "method";
	}
}

static const char *cm_attr_name(uint16_t a)
{
	static const char *const n[] = {
		[0x10] = "REQ", [0x11] = "MRA", [0x12] = "REJ", [0x13] = "REP",
		[0x14] = "RTU", [0x15] = "DREQ", [0x16] = "DREP",
		[0x17] = "SIDR_REQ", [0x18] = "SIDR_REP", [0x19] = "LAP",
		[0x1a] = "APR",
	};

	if (a == 0x0001)
		return "ClassPortInfo";
	return a < sizeof(n) / sizeof(n[0]) && n[a] ? n[a] : "attribute";
}

static void print_mad(const uint8_t *m, uint32_t len)
{
	uint16_t attr;
	uint64_t tid;
	int i;

	if (len < 24) {
		printf(" MAD (truncated, %u B)", len);
		return;
	}
	attr = (uint16_t)(m[16] << 8 | m[17]);
	for (tid = 0, i = 8; i < 16; i++)
		tid = tid << 8 | m[i];
	printf(" MAD v%u %s(0x%02x) v%u %s(0x%02x) status 0x%04x tid 0x%016" PRIx64,
	       m[0], mad_class_name(m[1]), m[1], m[2],
	       mad_method_name(m[3]), m[3], m[4] << 8 | m[5], tid);
	if (m[1] == 0x07)
		printf(" %s(0x%04x)", cm_attr_name(attr), attr);
	else
		printf(" attr 0x%04x", attr);
	/* CM REQ, REP: the communication ids and the QPN offered */
	if (m[1] == 0x07 && len >= 24 + 16 &&
	    (attr == 0x10 || attr == 0x13)) {
		const uint8_t *d = m + 24;

		printf(" local_comm_id 0x%08x", d[0] << 24 | d[1] << 16 |
		       d[2] << 8 | d[3]);
		if (attr == 0x13)
			printf(" remote_comm_id 0x%08x local_qpn 0x%06x",
			       d[4] << 24 | d[5] << 16 | d[6] << 8 | d[7],
			       d[12] << 16 | d[13] << 8 | d[14]);
		else if (len >= 24 + 36)
			printf(" local_qpn 0x%06x",
			       d[32] << 16 | d[33] << 8 | d[34]);
	}
}

/* ---- one packet ---------------------------------------------------------- */

static uint32_t be24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | p[1] << 8 | p[2];
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3];
}

static uint64_t be64(const uint8_t *p)
{
	return (uint64_t)be32(p) << 32 | be32(p + 4);
}

static void aeth_text(uint8_t syn, char *buf, size_t n)
{
	static const double rnr_ms[32] = {
		655.36, 0.01, 0.02, 0.03, 0.04, 0.06, 0.08, 0.12, 0.16, 0.24,
		0.32, 0.48, 0.64, 0.96, 1.28, 1.92, 2.56, 3.84, 5.12, 7.68,
		10.24, 15.36, 20.48, 30.72, 40.96, 61.44, 81.92, 122.88,
		163.84, 245.76, 327.68, 491.52,
	};

	switch (syn >> 5) {
	case 0:
		if ((syn & 0x1f) == 0x1f)
			snprintf(buf, n, "ACK credits invalid");
		else
			snprintf(buf, n, "ACK credits %u", syn & 0x1f);
		break;
	case 1:
		snprintf(buf, n, "RNR NAK timer %.2f ms", rnr_ms[syn & 0x1f]);
		break;
	case 3:
		snprintf(buf, n, "NAK %s",
			 nak_name[(syn & 0x1f) < NAK_OTHER ? (syn & 0x1f) :
				  NAK_OTHER]);
		break;
	default:
		snprintf(buf, n, "reserved syndrome 0x%02x", syn);
		break;
	}
}

struct ip_view {
	const uint8_t *ip;
	unsigned int iplen;
	bool v6;
	char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN];
	uint16_t sport;
	const uint8_t *udp_payload;
	uint32_t udp_len;	/* of the payload, as the UDP header says */
	uint32_t caplen;	/* of the payload, as captured */
};

/*
 * Ethernet (with VLAN tags), Linux cooked capture or raw IP, then IPv4
 * or IPv6, then UDP to port 4791.  False: not RoCEv2.
 */
static bool find_roce(int linktype, const uint8_t *p, uint32_t caplen,
		      struct ip_view *v)
{
	uint32_t off = 0;
	uint16_t et = 0;
	const uint8_t *udp;

	if (linktype == DLT_EN10MB) {
		if (caplen < 14)
			return false;
		et = (uint16_t)(p[12] << 8 | p[13]);
		off = 14;
		while ((et == 0x8100 || et == 0x88a8) && caplen >= off + 4) {
			et = (uint16_t)(p[off + 2] << 8 | p[off + 3]);
			off += 4;
		}
	} else if (linktype == DLT_LINUX_SLL) {
		if (caplen < 16)
			return false;
		et = (uint16_t)(p[14] << 8 | p[15]);
		off = 16;
	} else if (linktype == DLT_RAW || linktype == DLT_IPV4 ||
		   linktype == DLT_IPV6) {
		et = caplen && p[0] >> 4 == 6 ? 0x86dd : 0x0800;
	} else {
		return false;
	}
	if (et == 0x0800) {
		if (caplen < off + 20 || p[off] >> 4 != 4 || p[off + 9] != 17)
			return false;
		v->iplen = (p[off] & 0xf) * 4u;
		v->v6 = false;
		if (v->iplen < 20 || caplen < off + v->iplen + 8)
			return false;
		inet_ntop(AF_INET, p + off + 12, v->src, sizeof(v->src));
		inet_ntop(AF_INET, p + off + 16, v->dst, sizeof(v->dst));
	} else if (et == 0x86dd) {
		if (caplen < off + 40 + 8 || p[off + 6] != 17)
			return false;
		v->iplen = 40;
		v->v6 = true;
		inet_ntop(AF_INET6, p + off + 8, v->src, sizeof(v->src));
		inet_ntop(AF_INET6, p + off + 24, v->dst, sizeof(v->dst));
	} else {
		return false;
	}
	v->ip = p + off;
	udp = v->ip + v->iplen;
	if ((udp[2] << 8 | udp[3]) != ROCE_PORT)
		return false;
	v->sport = (uint16_t)(udp[0] << 8 | udp[1]);
	v->udp_len = (uint32_t)(udp[4] << 8 | udp[5]);
	v->udp_len = v->udp_len >= 8 ? v->udp_len - 8 : 0;
	v->udp_payload = udp + 8;
	v->caplen = caplen - (uint32_t)(udp + 8 - p);
	return true;
}

struct decoded {
	uint8_t code;
	struct opcode o;
	uint32_t dqpn, psn, paylen, dmalen;
	uint8_t pad, syndrome;
	bool se, ackreq, mig;
	uint16_t pkey;
	const uint8_t *h[16];	/* each extension header present */
	const uint8_t *payload;
	int icrc;		/* 1 good, 0 bad, -1 not captured */
	bool truncated;
};

static const uint8_t *ext(const struct decoded *d, unsigned int mask)
{
	unsigned int i;

	for (i = 0; i < sizeof(hdr_len) / sizeof(hdr_len[0]); i++)
		if (hdr_len[i].mask == mask)
			return d->h[i];
	return NULL;
}

static bool decode_bth(const struct ip_view *v, struct decoded *d)
{
	const uint8_t *b = v->udp_payload;
	uint32_t len = v->udp_len, off = BTH_LEN, have;
	unsigned int i;

	memset(d, 0, sizeof(*d));
	if (len < BTH_LEN + ICRC_LEN || v->caplen < BTH_LEN)
		return false;
	d->code = b[0];
	d->se = b[1] & 0x80;
	d->mig = b[1] & 0x40;
	d->pad = (b[1] >> 4) & 3;
	d->pkey = (uint16_t)(b[2] << 8 | b[3]);
	d->dqpn = be24(b + 5);
	d->ackreq = b[8] & 0x80;
	d->psn = be24(b + 9);
	d->o = opcode_of(d->code);
	if (!d->o.transport)
		return true;
	for (i = 0; i < sizeof(hdr_len) / sizeof(hdr_len[0]); i++) {
		if (!(d->o.hdrs & hdr_len[i].mask))
			continue;
		if (off + hdr_len[i].len + ICRC_LEN > len) {
			d->truncated = true;
			return true;
		}
		d->h[i] = off + hdr_len[i].len <= v->caplen ? b + off : NULL;
		if (!d->h[i])
			d->truncated = true;
		off += hdr_len[i].len;
	}
	if (off + d->pad + ICRC_LEN > len) {
		d->truncated = true;
		return true;
	}
	d->paylen = len - off - d->pad - ICRC_LEN;
	d->payload = b + off;
	if (ext(d, H_RETH))
		d->dmalen = be32(ext(d, H_RETH) + 12);
	if (ext(d, H_AETH))
		d->syndrome = ext(d, H_AETH)[0];
	have = v->caplen;
	if (have >= len)
		d->icrc = icrc(v->ip, v->iplen, v->v6, b, len - ICRC_LEN) ==
			  (uint32_t)(b[len - 4] | b[len - 3] << 8 |
				     b[len - 2] << 16 | (uint32_t)b[len - 1] << 24);
	else
		d->icrc = -1;
	return true;
}

static void print_ext(const struct decoded *d)
{
	const uint8_t *h;
	char aeth[48];

	if ((h = ext(d, H_RDETH)))
		printf(" RDETH eecnxt 0x%06x", be24(h + 1));
	if ((h = ext(d, H_DETH)))
		printf(" DETH qkey 0x%08x src_qp 0x%06x", be32(h), be24(h + 5));
	if ((h = ext(d, H_XRCETH)))
		printf(" XRCETH srq 0x%06x", be24(h + 1));
	if ((h = ext(d, H_FETH)))
		printf(" FETH sel %u plt %u", (h[3] >> 4) & 3, h[3] & 7);
	if ((h = ext(d, H_RETH)))
		printf(" RETH va 0x%016" PRIx64 " rkey 0x%08x len %u", be64(h),
		       be32(h + 8), be32(h + 12));
	if ((h = ext(d, H_ATOMETH)))
		printf(" AtomicETH va 0x%016" PRIx64 " rkey 0x%08x swap_add 0x%"
		       PRIx64 " cmp 0x%" PRIx64, be64(h), be32(h + 8),
		       be64(h + 12), be64(h + 20));
	if ((h = ext(d, H_AETH))) {
		aeth_text(h[0], aeth, sizeof(aeth));
		printf(" AETH %s msn %u", aeth, be24(h + 1));
	}
	if ((h = ext(d, H_ATOMACK)))
		printf(" AtomicAckETH orig 0x%016" PRIx64, be64(h));
	if ((h = ext(d, H_IMM)))
		printf(" ImmDt 0x%08x", be32(h));
	if ((h = ext(d, H_IETH)))
		printf(" IETH rkey 0x%08x", be32(h));
}

static void print_hex(const uint8_t *p, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		printf("%s%02x", i % 16 ? " " : "\n\t", p[i]);
}

static const char *opname(const struct decoded *d, char *buf, size_t n)
{
	if (!d->o.transport)
		snprintf(buf, n, "opcode 0x%02x (reserved)", d->code);
	else if (opt.numeric_only)
		snprintf(buf, n, "0x%02x", d->code);
	else
		snprintf(buf, n, "%s_%s", d->o.transport, d->o.op->name);
	return buf;
}

/* -T: fields for scripts (- when absent); hex unless said otherwise */
static void print_terse(uint64_t frame, const struct ip_view *v,
			const struct decoded *d)
{
	const uint8_t *h;

	printf("%" PRIu64 " %s %s 0x%02x 0x%06x %u %u %u", frame, v->src,
	       v->dst, d->code, d->dqpn, d->psn, d->pad, d->ackreq);
	if ((h = ext(d, H_RETH)))
		printf(" 0x%016" PRIx64 " 0x%08x %u", be64(h), be32(h + 8),
		       be32(h + 12));
	else if ((h = ext(d, H_ATOMETH)))	/* as tshark: no length */
		printf(" 0x%016" PRIx64 " 0x%08x -", be64(h), be32(h + 8));
	else
		printf(" - - -");
	if ((h = ext(d, H_AETH)))
		printf(" %u %u", h[0], be24(h + 1));
	else
		printf(" - -");
	if ((h = ext(d, H_DETH)))
		printf(" 0x%08x 0x%06x", be32(h), be24(h + 5));
	else
		printf(" - -");
	printf(" %u %s\n", d->paylen,
	       d->icrc < 0 ? "-" : d->icrc ? "ok" : "bad");
}

static void handle(uint64_t frame, const struct pcap_pkthdr *ph,
		   const struct ip_view *v, const struct decoded *d)
{
	struct conv *c;
	const char *note = NULL;
	char name[64];

	c = conv_get(v->src, v->dst, d->dqpn,
		     d->o.transport ? d->o.transport : "?");
	c->pkts++;
	c->bytes += d->paylen;
	if (d->icrc == 0) {
		c->bad_icrc++;
		total_bad_icrc++;
	}
	/* a CNP carries no PSN stream: counted as a packet only */
	if (d->o.transport && !d->truncated && !(d->o.hdrs & H_CNP)) {
		if (d->o.op->response)
			note = conv_response(c, d->psn, &d->o, d->syndrome);
		else if (strcmp(d->o.transport, "UD"))
			note = conv_request(c, d->psn, &d->o, d->paylen,
					    d->dmalen);
		else
			conv_msg_done(c, d->paylen);
	}
	if (opt.terse) {
		print_terse(frame, v, d);
		return;
	}
	printf("%ld.%06ld %s:%u > %s %s qp 0x%06x psn %u", (long)ph->ts.tv_sec,
	       (long)ph->ts.tv_usec, v->src, v->sport, v->dst,
	       opname(d, name, sizeof(name)), d->dqpn, d->psn);
	if (d->pkey != 0xffff)
		printf(" pkey 0x%04x", d->pkey);
	if (d->se)
		printf(" SE");
	if (d->ackreq)
		printf(" A");
	if (d->pad)
		printf(" pad %u", d->pad);
	print_ext(d);
	printf(" payload %u", d->paylen);
	if (d->dqpn == 1 && ext(d, H_DETH) && d->payload &&
	    !d->truncated && v->caplen >= (uint32_t)(d->payload -
						   v->udp_payload) + 24)
		print_mad(d->payload, d->paylen);
	if (d->truncated)
		printf(" [truncated]");
	else if (d->icrc == 0)
		printf(" [ICRC BAD]");
	else if (d->icrc < 0)
		printf(" [ICRC not captured]");
	if (note)
		printf(" [%s]", note);
	if (opt.hex && d->payload && !d->truncated) {
		uint32_t have = v->caplen - (uint32_t)(d->payload -
						       v->udp_payload);

		print_hex(d->payload, d->paylen < have ? d->paylen : have);
	}
	putchar('\n');
}

/* ---- capture --------------------------------------------------------------- */

static pcap_t *pc;
static pcap_dumper_t *dumper;
static int linktype;
static uint64_t frames, roce_seen;

static void on_packet(u_char *user, const struct pcap_pkthdr *ph,
		      const u_char *p)
{
	struct ip_view v;
	struct decoded d;

	(void)user;
	frames++;
	if (!find_roce(linktype, p, ph->caplen, &v) || !decode_bth(&v, &d)) {
		total_other++;
		return;
	}
	if (opt.qpn >= 0 && d.dqpn != (uint32_t)opt.qpn)
		return;
	if (opt.opcode >= 0 && d.code != opt.opcode)
		return;
	total_pkts++;
	if (dumper)
		pcap_dump((u_char *)dumper, ph, p);
	else
		handle(frames, ph, &v, &d);
	if (opt.count > 0 && ++roce_seen >= (uint64_t)opt.count)
		pcap_breakloop(pc);
}

static void on_signal(int sig)
{
	(void)sig;
	if (pc)
		pcap_breakloop(pc);
}

static int parse_opcode(const char *s)
{
	char *end;
	long v = strtol(s, &end, 0);
	int i;

	if (*s && !*end)
		return v >= 0 && v <= 255 ? (int)v : -1;
	for (i = 0; i < 256; i++) {
		struct opcode o = opcode_of((uint8_t)i);
		char name[64];

		if (!o.transport)
			continue;
		snprintf(name, sizeof(name), "%s_%s", o.transport, o.op->name);
		if (!strcasecmp(name, s))
			return i;
	}
	return -1;
}

/* the netdev of an RDMA device's port 1, from sysfs */
static int rdma_netdev(const char *dev, char *name, size_t n)
{
	static const char *const files[] = {
		"ports/1/gid_attrs/ndevs/0", "parent",
	};
	char path[PATH_MAX];
	unsigned int i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		FILE *f;

		snprintf(path, sizeof(path), "/sys/class/infiniband/%s/%s",
			 dev, files[i]);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(name, (int)n, f)) {
			name[strcspn(name, "\n")] = 0;
			fclose(f);
			if (*name)
				return 0;
		}
		fclose(f);
	}
	if (access("/sys/class/infiniband", F_OK) ||
	    snprintf(path, sizeof(path), "/sys/class/infiniband/%s", dev) < 0 ||
	    access(path, F_OK))
		fprintf(stderr, "rxe2dump: no RDMA device %s\n", dev);
	else
		fprintf(stderr, "rxe2dump: %s has no netdev on port 1\n", dev);
	return -1;
}

/* enter the namespace open at fd if it has an interface called name */
static bool try_netns(int fd, const char *name, int home)
{
	if (setns(fd, CLONE_NEWNET))
		return false;
	if (if_nametoindex(name))
		return true;
	if (setns(home, CLONE_NEWNET)) {
		perror("rxe2dump: back to the original network namespace");
		exit(1);
	}
	return false;
}

static bool try_netns_path(const char *path, const char *name, int home)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool found;

	if (fd < 0)
		return false;
	found = try_netns(fd, name, home);
	close(fd);
	if (found)
		fprintf(stderr, "rxe2dump: %s is in network namespace %s\n",
			name, path);
	return found;
}

/*
 * The netdev may live in another network namespace (rdma link add inside
 * a container, while the RDMA device is visible everywhere): the named
 * namespaces of ip netns first, then those of running processes.
 */
static int enter_netns_of(const char *name)
{
	char path[PATH_MAX];
	struct dirent *e;
	int home;
	DIR *d;

	if (if_nametoindex(name))
		return 0;
	home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (home < 0)
		return -1;
	d = opendir("/run/netns");
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/run/netns/%s", e->d_name);
		if (try_netns_path(path, name, home))
			goto found;
	}
	if (d)
		closedir(d);
	d = opendir("/proc");
	while (d && (e = readdir(d))) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/ns/net", e->d_name);
		if (try_netns_path(path, name, home))
			goto found;
	}
	if (d)
		closedir(d);
	close(home);
	fprintf(stderr, "rxe2dump: no network namespace has an interface %s\n",
		name);
	return -1;
found:
	closedir(d);
	close(home);
	return 0;
}

static pcap_t *open_capture(char *err)
{
	char ifname[IF_NAMESIZE + 1];
	const char *iface = opt.iface;
	pcap_t *p;

	if (opt.rfile)
		return pcap_open_offline(opt.rfile, err);
	if (opt.rdma_dev) {
		if (rdma_netdev(opt.rdma_dev, ifname, sizeof(ifname)) ||
		    enter_netns_of(ifname))
			return NULL;
		iface = ifname;
		fprintf(stderr, "rxe2dump: %s is on %s\n", opt.rdma_dev, iface);
	}
	p = pcap_create(iface, err);
	if (!p)
		return NULL;
	if (pcap_set_snaplen(p, opt.snaplen) || pcap_set_promisc(p, 0) ||
	    pcap_set_timeout(p, 100) || pcap_set_immediate_mode(p, 1) ||
	    pcap_set_buffer_size(p, 8 << 20) || pcap_activate(p) < 0) {
		snprintf(err, PCAP_ERRBUF_SIZE, "%s: %s", iface, pcap_geterr(p));
		pcap_close(p);
		return NULL;
	}
	fprintf(stderr, "rxe2dump: listening on %s\n", iface);
	return p;
}

static int set_filter(int argc, char **argv)
{
	char expr[4096] = "udp dst port 4791";
	struct bpf_program prog;
	size_t n = strlen(expr);
	int i;

	if (argc > 0) {
		n += (size_t)snprintf(expr + n, sizeof(expr) - n, " and (");
		for (i = 0; i < argc && n < sizeof(expr); i++)
			n += (size_t)snprintf(expr + n, sizeof(expr) - n,
					      "%s%s", i ? " " : "", argv[i]);
		if (n < sizeof(expr))
			snprintf(expr + n, sizeof(expr) - n, ")");
	}
	if (n >= sizeof(expr)) {
		fprintf(stderr, "rxe2dump: filter expression too long\n");
		return -1;
	}
	if (pcap_compile(pc, &prog, expr, 1, PCAP_NETMASK_UNKNOWN) ||
	    pcap_setfilter(pc, &prog)) {
		fprintf(stderr, "rxe2dump: filter '%s': %s\n", expr,
			pcap_geterr(pc));
		return -1;
	}
	pcap_freecode(&prog);
	return 0;
}

int main(int argc, char **argv)
{
	char err[PCAP_ERRBUF_SIZE];
	struct sigaction sa;
	int c, sources;
	char *end;

	while ((c = getopt(argc, argv, "d:i:r:w:c:q:o:s:nSTxh")) != -1) {
		switch (c) {
		case 'd': opt.rdma_dev = optarg; break;
		case 'i': opt.iface = optarg; break;
		case 'r': opt.rfile = optarg; break;
		case 'w': opt.wfile = optarg; break;
		case 'c':
			opt.count = strtol(optarg, &end, 0);
			if (*end || opt.count <= 0)
				goto bad;
			break;
		case 'q':
			opt.qpn = strtol(optarg, &end, 0);
			if (*end || opt.qpn < 0 || opt.qpn > 0xffffff)
				goto bad;
			break;
		case 'o':
			opt.opcode = parse_opcode(optarg);
			if (opt.opcode < 0)
				goto bad;
			break;
		case 's':
			opt.snaplen = (int)strtol(optarg, &end, 0);
			if (*end || opt.snaplen < 64)
				goto bad;
			break;
		case 'n': opt.numeric_only = true; break;
		case 'S': opt.no_summary = true; break;
		case 'T': opt.terse = true; opt.no_summary = true; break;
		case 'x': opt.hex = true; break;
		case 'h': usage(stdout); return 0;
		default: goto bad;
		}
	}
	sources = !!opt.rdma_dev + !!opt.iface + !!opt.rfile;
	if (sources != 1) {
		fprintf(stderr, "rxe2dump: one of -d, -i, -r\n");
		goto bad;
	}
	icrc_init();
	err[0] = 0;
	pc = open_capture(err);
	if (!pc) {
		if (err[0])	/* libpcap's; ours are printed already */
			fprintf(stderr, "rxe2dump: %s\n", err);
		return 1;
	}
	linktype = pcap_datalink(pc);
	if (set_filter(argc - optind, argv + optind))
		return 1;
	if (opt.wfile) {
		dumper = pcap_dump_open(pc, opt.wfile);
		if (!dumper) {
			fprintf(stderr, "rxe2dump: %s\n", pcap_geterr(pc));
			return 1;
		}
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	setvbuf(stdout, NULL, opt.rfile ? _IOFBF : _IOLBF, 0);
	if (pcap_loop(pc, -1, on_packet, NULL) == PCAP_ERROR)
		fprintf(stderr, "rxe2dump: %s\n", pcap_geterr(pc));
	if (dumper) {
		struct pcap_stat st;

		pcap_dump_close(dumper);
		fprintf(stderr, "rxe2dump: %" PRIu64 " RoCEv2 packets written to %s\n",
			total_pkts, opt.wfile);
		if (!opt.rfile && !pcap_stats(pc, &st))
			fprintf(stderr, "rxe2dump: %u packets dropped by the kernel\n",
				st.ps_drop);
	} else if (!opt.no_summary) {
		summary();
	}
	pcap_close(pc);
	return 0;
bad:
	usage(stderr);
	return 2;
}
