// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: raw packet QPs and flow steering: caps, flow specs, checksum offload, priorities, drop, VLAN/VXLAN/IPv6, hostile specs, flow counters, WQs and RSS, loopback inside the device, churn
 *
 * Raw packet QPs and flow steering.  A veth pair of its own, rxe2raw0
 * (02:00:00:00:09:01, 198.18.9.1) carrying the device rxe2_raw, and
 * rxe2raw1 (02:00:00:00:09:02, 198.18.9.2), where an AF_PACKET socket
 * plays the far side: it sends crafted frames and reads what the raw QPs
 * send.  IPv6 is off on both ends so that nothing else is on the wire.
 *
 *  1. capabilities: raw_packet_caps IP_CSUM, RAW_IP_CSUM and
 *     MANAGED_FLOW_STEERING, max_raw_ethy_qp; a raw QP with an SRQ is
 *     EOPNOTSUPP, without CAP_NET_RAW EPERM;
 *  2. a NORMAL flow (eth dst + IPv4 + UDP dport): the matching frame
 *     arrives byte for byte with IBV_WC_IP_CSUM_OK, one with a bad UDP
 *     checksum without it, a frame of another port not at all;
 *  3. send: a frame with IBV_SEND_IP_CSUM leaves with both checksums
 *     right, the rest byte for byte; too short and too long frames are
 *     LOC_LEN_ERR; SEND_WITH_IMM is EINVAL;
 *  4. priorities: the lower number wins; DONT_TRAP lets the next one have
 *     it too; ALL_DEFAULT takes what no flow took, MC_DEFAULT multicast;
 *     SNIFFER sees frames both ways;
 *  5. the drop action: the frame reaches neither a QP nor a UDP socket,
 *     which gets it again once the flow is gone;
 *  6. VLAN (the tag put back byte for byte), VXLAN by VNI and inner MAC,
 *     IPv6 with TCP;
 *  7. hostile specs and misuse: bad masks, inner specs without a tunnel,
 *     L4 without L3, specs on a SNIFFER, ESP, a UD QP, port 2, a QP
 *     with a flow cannot be destroyed (EBUSY); a frame longer than the
 *     receive buffer is dropped and counted, the WQE kept;
 *  8. counters (ibv_create_counters): packets and bytes per flow at the
 *     attached indexes, two flows adding into one object, the errors;
 *  9. WQs and RSS: the device's Toeplitz (checked against Microsoft's
 *     vector by the test's own) puts each frame in the WQ the test
 *     predicts; WQ states; the errors; teardown under a flood;
 *  9b. loopback inside the device, as mlx5's: what a raw QP sends to a
 *     multicast MAC (rdma-core's), to broadcast or to the port's own MAC
 *     reaches the device's flows (the sender's too, byte for byte; not a
 *     BLOCK_SELF_MCAST_LB QP's own multicast), multicast and broadcast
 *     the wire as well, own-MAC unicast not; other unicast only the
 *     wire; a sniffer sees each once; RSS QPs and completion timestamps
 *     on looped frames;
 * 10. churn: flows made and destroyed under a flood; the netdev deleted
 *     under a flow and a flood;
 * 11. everything released: `rdma resource show` back where it was.
 * TAP output.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/capability.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <rdma/ib_user_verbs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dp.h"
#include "tap.h"
#include "util.h"

#define DEV "rxe2_raw"
#define NDEV "rxe2raw0"
#define PEER "rxe2raw1"
#define BUF 2048
#define NRECV 16

static const uint8_t mac_dev[6] = { 2, 0, 0, 0, 9, 1 };
static const uint8_t mac_peer[6] = { 2, 0, 0, 0, 9, 2 };
static const uint8_t mac_mc[6] = { 0x01, 0x00, 0x5e, 0x01, 0x02, 0x03 };
#define IP_DEV 0xc6120901	/* 198.18.9.1 */
#define IP_PEER 0xc6120902

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static int psock;		/* AF_PACKET on PEER */
static int peer_ifindex;

/* ------------------------------------------------------------------ */
/* Frames                                                              */
/* ------------------------------------------------------------------ */

static uint32_t csum_add(uint32_t sum, const void *p, size_t len)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(b[i] << 8 | b[i + 1]);
	if (len & 1)
		sum += (uint32_t)b[len - 1] << 8;
	return sum;
}

static uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

struct frame {
	uint8_t b[BUF];
	size_t len;
	size_t l3;		/* offset of the IP header */
	size_t l4;
};

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v & 0xffff);
}

/* Ethernet header (VLAN tag if vlan >= 0) for ethertype type */
static void frame_eth(struct frame *f, const uint8_t *dst, const uint8_t *src,
		      int vlan, uint16_t type)
{
	memcpy(f->b, dst, 6);
	memcpy(f->b + 6, src, 6);
	f->l3 = 14;
	if (vlan >= 0) {
		put16(f->b + 12, 0x8100);
		put16(f->b + 14, (uint16_t)vlan);
		f->l3 = 18;
	}
	put16(f->b + f->l3 - 2, type);
}

static void frame_payload(struct frame *f, size_t off, size_t n, uint32_t seed)
{
	dp_fill(f->b + off, n, seed);
	f->len = off + n;
}

/* the IPv4/UDP or TCP checksums of a frame_ip4() packet, written */
static void frame_csum4(struct frame *f, uint8_t proto)
{
	uint8_t *ip = f->b + f->l3, *l4 = f->b + f->l4;
	size_t l4len = f->len - f->l4;
	uint8_t pseudo[12];
	size_t coff = proto == IPPROTO_UDP ? 6 : 16;
	uint16_t c;

	put16(ip + 10, 0);
	put16(ip + 10, csum_fold(csum_add(0, ip, 20)));
	memcpy(pseudo, ip + 12, 8);
	pseudo[8] = 0;
	pseudo[9] = proto;
	put16(pseudo + 10, (uint16_t)l4len);
	put16(l4 + coff, 0);
	c = csum_fold(csum_add(csum_add(0, pseudo, 12), l4, l4len));
	if (proto == IPPROTO_UDP && !c)
		c = 0xffff;
	put16(l4 + coff, c);
}

/* an IPv4 UDP frame of n payload bytes, checksums right */
static void frame_udp4(struct frame *f, const uint8_t *dst, int vlan,
		       uint32_t sip, uint32_t dip, uint16_t sport,
		       uint16_t dport, size_t n, uint32_t seed)
{
	uint8_t *ip, *udp;

	memset(f, 0, sizeof(*f));
	frame_eth(f, dst, mac_peer, vlan, ETH_P_IP);
	ip = f->b + f->l3;
	f->l4 = f->l3 + 20;
	udp = f->b + f->l4;
	frame_payload(f, f->l4 + 8, n, seed);
	ip[0] = 0x45;
	put16(ip + 2, (uint16_t)(20 + 8 + n));
	ip[6] = 0x40;		/* DF */
	ip[8] = 64;
	ip[9] = IPPROTO_UDP;
	put32(ip + 12, sip);
	put32(ip + 16, dip);
	put16(udp, sport);
	put16(udp + 2, dport);
	put16(udp + 4, (uint16_t)(8 + n));
	frame_csum4(f, IPPROTO_UDP);
}

/* a frame for the device: UDP 198.18.9.2:4000 -> 198.18.9.1:dport */
static void frame_to_dev(struct frame *f, uint16_t dport, size_t n,
			 uint32_t seed)
{
	frame_udp4(f, mac_dev, -1, IP_PEER, IP_DEV, 4000, dport, n, seed);
}

/* an IPv6 TCP segment (20-byte header, no options), checksum right */
static void frame_tcp6(struct frame *f, uint16_t dport, size_t n,
		       uint32_t seed)
{
	uint8_t *ip, *tcp, pseudo[40];

	memset(f, 0, sizeof(*f));
	frame_eth(f, mac_dev, mac_peer, -1, ETH_P_IPV6);
	ip = f->b + f->l3;
	f->l4 = f->l3 + 40;
	tcp = f->b + f->l4;
	frame_payload(f, f->l4 + 20, n, seed);
	ip[0] = 0x60;
	put16(ip + 4, (uint16_t)(20 + n));
	ip[6] = IPPROTO_TCP;
	ip[7] = 64;
	ip[8] = 0xfd;
	ip[23] = 2;
	ip[24] = 0xfd;
	ip[39] = 1;
	put16(tcp, 4000);
	put16(tcp + 2, dport);
	tcp[12] = 5 << 4;
	tcp[13] = 0x02;		/* SYN */
	memset(pseudo, 0, sizeof(pseudo));
	memcpy(pseudo, ip + 8, 32);
	put32(pseudo + 32, (uint32_t)(20 + n));
	pseudo[39] = IPPROTO_TCP;
	put16(tcp + 16, csum_fold(csum_add(csum_add(0, pseudo, 40), tcp,
					   20 + n)));
}

/* VXLAN to 4789 carrying an inner Ethernet frame to inner_dst */
static void frame_vxlan(struct frame *f, uint32_t vni,
			const uint8_t *inner_dst, uint32_t seed)
{
	struct frame in;
	uint8_t vx[8] = { 0x08 };

	frame_udp4(&in, inner_dst, -1, 0x0a000001, 0x0a000002, 1, 2, 32,
		   seed);
	vx[4] = vni >> 16;
	vx[5] = (vni >> 8) & 0xff;
	vx[6] = vni & 0xff;
	frame_to_dev(f, 4789, sizeof(vx) + in.len, 0);
	memcpy(f->b + f->l4 + 8, vx, sizeof(vx));
	memcpy(f->b + f->l4 + 16, in.b, in.len);
	frame_csum4(f, IPPROTO_UDP);
}

static void peer_send(const struct frame *f)
{
	if (send(psock, f->b, f->len, 0) != (ssize_t)f->len)
		tap_diag("  AF_PACKET send: %s", strerror(errno));
}

/* the next frame the peer receives (not one it sent) within ms, or -1 */
static ssize_t peer_recv(uint8_t *buf, size_t len, int ms)
{
	uint64_t end = dp_now_ms() + (uint64_t)ms * time_scale();

	for (;;) {
		struct pollfd p = { .fd = psock, .events = POLLIN };
		struct sockaddr_ll sll;
		socklen_t sl = sizeof(sll);
		int64_t left = (int64_t)(end - dp_now_ms());
		ssize_t n;

		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			return -1;
		n = recvfrom(psock, buf, len, 0, (struct sockaddr *)&sll, &sl);
		if (n < 0)
			return -1;
		if (sll.sll_pkttype != PACKET_OUTGOING)
			return n;
	}
}

/* ------------------------------------------------------------------ */
/* Raw QPs                                                             */
/* ------------------------------------------------------------------ */

struct rq {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	uint8_t *buf;		/* NRECV receive buffers of BUF bytes */
	struct ibv_mr *mr;
	uint32_t buflen;	/* posted per receive */
};

static struct ibv_qp *raw_qp_create_flags(struct ibv_cq *cq,
					  struct ibv_srq *srq, uint32_t flags)
{
	struct ibv_qp_init_attr_ex a = {
		.send_cq = cq,
		.recv_cq = cq,
		.srq = srq,
		.qp_type = IBV_QPT_RAW_PACKET,
		.cap = { .max_send_wr = 32, .max_recv_wr = NRECV + 1,
			 .max_send_sge = 2, .max_recv_sge = 2,
			 .max_inline_data = 64 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     (flags ? IBV_QP_INIT_ATTR_CREATE_FLAGS : 0),
		.pd = pd,
		.create_flags = flags,
	};

	return ibv_create_qp_ex(ctx, &a);
}

static struct ibv_qp *raw_qp_create(struct ibv_cq *cq, struct ibv_srq *srq)
{
	return raw_qp_create_flags(cq, srq, 0);
}

static int raw_qp_ready(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = PORT };
	int ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PORT);

	if (ret)
		return ret;
	a.qp_state = IBV_QPS_RTR;
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE);
	if (ret)
		return ret;
	a.qp_state = IBV_QPS_RTS;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

static void rq_post(struct rq *r, int i)
{
	if (dp_post_recv1(r->qp, (uint64_t)i, r->buf + (size_t)i * BUF,
			  r->buflen, r->mr->lkey))
		tap_bail("post_recv on a raw QP failed");
}

/* a raw QP made with create flags, RTS, NRECV receives posted; or false */
static bool rq_open_flags(struct rq *r, uint32_t buflen, uint32_t flags)
{
	int i;

	memset(r, 0, sizeof(*r));
	r->cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	r->buf = dp_alloc((size_t)NRECV * BUF);
	r->mr = r->cq && r->buf ?
		ibv_reg_mr(pd, r->buf, (size_t)NRECV * BUF,
			   IBV_ACCESS_LOCAL_WRITE) : NULL;
	r->qp = r->mr ? raw_qp_create_flags(r->cq, NULL, flags) : NULL;
	if (!r->qp || raw_qp_ready(r->qp))
		return false;
	r->buflen = buflen;
	for (i = 0; i < NRECV; i++)
		rq_post(r, i);
	return true;
}

static void rq_open(struct rq *r, uint32_t buflen)
{
	if (!rq_open_flags(r, buflen, 0))
		tap_bail("raw QP: %s", strerror(errno));
}

static void rq_close(struct rq *r)
{
	ibv_destroy_qp(r->qp);
	ibv_dereg_mr(r->mr);
	ibv_destroy_cq(r->cq);
	free(r->buf);
}

/*
 * The QP received f (byte for byte, CSUM_OK as csum_ok says) within the
 * wait; its buffer is posted again.
 */
static bool rq_got(struct rq *r, const struct frame *f, bool csum_ok,
		   const char *what)
{
	struct ibv_wc wc;
	uint8_t *b;

	if (dp_poll(r->cq, &wc, 1, DP_WAIT_MS) != 1)
		return tap_ok(false, "%s: received (no completion)", what);
	b = r->buf + wc.wr_id * BUF;
	if (!tap_ok(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
		    wc.byte_len == f->len && !memcmp(b, f->b, f->len) &&
		    !!(wc.wc_flags & IBV_WC_IP_CSUM_OK) == csum_ok,
		    "%s: received byte for byte, %s", what,
		    csum_ok ? "IP_CSUM_OK" : "no IP_CSUM_OK"))
		tap_diag("  status %s opcode %d byte_len %u (want %zu) flags 0x%x",
			 dp_status_str(wc.status), wc.opcode, wc.byte_len,
			 f->len, wc.wc_flags);
	rq_post(r, (int)wc.wr_id);
	return true;
}

static bool rq_none(struct rq *r, const char *what)
{
	struct ibv_wc wc;

	return tap_ok(dp_poll_none(r->cq, &wc, 300) == 0,
		      "%s: nothing received", what);
}

/* ------------------------------------------------------------------ */
/* Flows                                                               */
/* ------------------------------------------------------------------ */

struct flow_req {
	struct ibv_flow_attr attr;
	uint8_t specs[512];
	size_t used;
};

static void flow_init(struct flow_req *r, enum ibv_flow_attr_type type,
		      uint16_t prio, uint32_t flags)
{
	memset(r, 0, sizeof(*r));
	r->attr.type = type;
	r->attr.priority = prio;
	r->attr.flags = flags;
	r->attr.port = PORT;
	r->attr.size = sizeof(r->attr);
}

static void *flow_add(struct flow_req *r, size_t size)
{
	void *p = r->specs + r->used;

	r->used += size;
	r->attr.size += (uint16_t)size;
	r->attr.num_of_specs++;
	return p;
}

static void flow_eth(struct flow_req *r, const uint8_t *dst, int vlan,
		     bool inner)
{
	struct ibv_flow_spec_eth *s = flow_add(r, sizeof(*s));

	s->type = IBV_FLOW_SPEC_ETH | (inner ? IBV_FLOW_SPEC_INNER : 0);
	s->size = sizeof(*s);
	memcpy(s->val.dst_mac, dst, 6);
	memset(s->mask.dst_mac, 0xff, 6);
	if (vlan >= 0) {
		s->val.vlan_tag = htons((uint16_t)vlan);
		s->mask.vlan_tag = htons(0x0fff);
	}
}

static struct ibv_flow_spec_ipv4 *flow_ip4(struct flow_req *r, uint32_t dip)
{
	struct ibv_flow_spec_ipv4 *s = flow_add(r, sizeof(*s));

	s->type = IBV_FLOW_SPEC_IPV4;
	s->size = sizeof(*s);
	s->val.dst_ip = htonl(dip);
	s->mask.dst_ip = dip ? 0xffffffff : 0;
	return s;
}

static void flow_l4(struct flow_req *r, enum ibv_flow_spec_type t,
		    uint16_t dport)
{
	struct ibv_flow_spec_tcp_udp *s = flow_add(r, sizeof(*s));

	s->type = t;
	s->size = sizeof(*s);
	s->val.dst_port = htons(dport);
	s->mask.dst_port = 0xffff;
}

static struct ibv_flow *flow_create(struct ibv_qp *qp, struct flow_req *r)
{
	memmove((uint8_t *)&r->attr + sizeof(r->attr), r->specs, r->used);
	return ibv_create_flow(qp, &r->attr);
}

/* a NORMAL flow: eth dst, IPv4 dst dip, UDP to dport */
static struct ibv_flow *flow_udp_to(struct ibv_qp *qp, const uint8_t *dst,
				    uint32_t dip, uint16_t dport,
				    uint16_t prio, uint32_t flags)
{
	struct flow_req r;

	flow_init(&r, IBV_FLOW_ATTR_NORMAL, prio, flags);
	flow_eth(&r, dst, -1, false);
	flow_ip4(&r, dip);
	flow_l4(&r, IBV_FLOW_SPEC_UDP, dport);
	return flow_create(qp, &r);
}

/* eth dst = the device, IPv4 to it, UDP to dport */
static struct ibv_flow *flow_udp(struct ibv_qp *qp, uint16_t dport,
				 uint16_t prio, uint32_t flags)
{
	return flow_udp_to(qp, mac_dev, IP_DEV, dport, prio, flags);
}

static struct ibv_flow *flow_kind(struct ibv_qp *qp,
				  enum ibv_flow_attr_type type)
{
	struct flow_req r;

	flow_init(&r, type, 0, 0);
	return flow_create(qp, &r);
}

/* ------------------------------------------------------------------ */
/* The tests                                                           */
/* ------------------------------------------------------------------ */

static void test_caps(void)
{
	struct ibv_device_attr_ex a = {};
	struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(pd, &sa);
	struct ibv_qp *qp;
	pid_t pid;
	int st;

	tap_ret(ibv_query_device_ex(ctx, NULL, &a), 0, "query_device_ex");
	tap_ok(a.raw_packet_caps == IBV_RAW_PACKET_CAP_IP_CSUM,
	       "raw_packet_caps: IP_CSUM only (0x%x)", a.raw_packet_caps);
	tap_ok((a.orig_attr.device_cap_flags & IBV_DEVICE_RAW_IP_CSUM) &&
	       (a.orig_attr.device_cap_flags &
		IBV_DEVICE_MANAGED_FLOW_STEERING),
	       "device caps RAW_IP_CSUM and MANAGED_FLOW_STEERING");
	tap_ok(a.orig_attr.max_raw_ethy_qp == a.orig_attr.max_qp,
	       "max_raw_ethy_qp %u = max_qp", a.orig_attr.max_raw_ethy_qp);
	tap_null_errno(raw_qp_create(cq, srq), EOPNOTSUPP,
		       "a raw packet QP with an SRQ: EOPNOTSUPP");
	tap_ok(!dp_sh("ibv_devinfo -v -d " DEV " > /tmp/raw.devinfo && "
		      "grep -q 'RAW_IP_CSUM' /tmp/raw.devinfo && "
		      "grep -q 'MANAGED_FLOW_STEERING' /tmp/raw.devinfo && "
		      "grep -q 'IP csum offload' /tmp/raw.devinfo && "
		      "grep -q 'max_rwq_indirection_table_size:.*256' /tmp/raw.devinfo && "
		      "grep -q 'rx_hash_fields_mask:.*0xFF' /tmp/raw.devinfo && "
		      "grep -q 'SUPPORT_RAW_PACKET' /tmp/raw.devinfo && "
		      "grep -Eq 'max_wq_type_rq:[[:space:]]+[1-9]' /tmp/raw.devinfo"),
	       "ibv_devinfo -v lists the raw packet, flow steering and RSS caps");

	/* ib_core's rule: raw frames need CAP_NET_RAW */
	pid = fork();
	if (pid == 0) {
		struct __user_cap_header_struct h = {
			.version = _LINUX_CAPABILITY_VERSION_3 };
		struct __user_cap_data_struct d[2] = {};

		syscall(SYS_capget, &h, d);
		d[CAP_NET_RAW / 32].effective &= ~(1u << (CAP_NET_RAW % 32));
		if (syscall(SYS_capset, &h, d))
			_exit(2);
		qp = raw_qp_create(cq, NULL);
		_exit(!qp && errno == EPERM ? 0 : 1);
	}
	tap_ok(waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
	       WEXITSTATUS(st) == 0,
	       "a raw packet QP without CAP_NET_RAW: EPERM");
	ibv_destroy_srq(srq);
	ibv_destroy_cq(cq);
}

static void test_normal(struct rq *a)
{
	struct ibv_flow *fl = flow_udp(a->qp, 5000, 0, 0);
	struct frame f;

	if (!tap_ok(fl, "NORMAL flow eth+ipv4+udp 5000 created (%s)",
		    fl ? "" : strerror(errno)))
		return;
	frame_to_dev(&f, 5000, 100, 1);
	peer_send(&f);
	rq_got(a, &f, true, "UDP to 5000");
	frame_to_dev(&f, 5000, 333, 2);
	f.b[f.l4 + 8] ^= 0xff;	/* the checksum no longer holds */
	peer_send(&f);
	rq_got(a, &f, false, "UDP to 5000 with a bad checksum");
	frame_to_dev(&f, 5001, 100, 3);
	peer_send(&f);
	rq_none(a, "UDP to 5001");
	tap_ret(ibv_destroy_flow(fl), 0, "destroy_flow");
	frame_to_dev(&f, 5000, 100, 4);
	peer_send(&f);
	rq_none(a, "UDP to 5000 after destroy_flow");
}

/* post one frame of f on qp, wait for its completion status */
static int raw_send(struct rq *r, const struct frame *f, unsigned int flags)
{
	struct ibv_mr *mr = ibv_reg_mr(pd, (void *)f->b, BUF, 0);
	struct ibv_wc wc;
	int ret;

	if (!mr)
		return -1;
	ret = dp_post_send1(r->qp, 77, IBV_WR_SEND, f->b, (uint32_t)f->len,
			    mr->lkey, 0, 0, flags);
	if (!ret)
		ret = dp_poll(r->cq, &wc, 1, DP_WAIT_MS) == 1 ?
		      (int)wc.status : -1;
	ibv_dereg_mr(mr);
	return ret;
}

static void test_send(struct rq *a)
{
	static struct frame f, want;
	struct ibv_send_wr wr = { .opcode = IBV_WR_SEND_WITH_IMM }, *bad;
	uint8_t got[BUF];
	struct rq e;
	ssize_t n;

	frame_udp4(&want, mac_peer, -1, IP_DEV, IP_PEER, 6000, 6001, 200, 9);
	memcpy(want.b + 6, mac_dev, 6);
	f = want;
	memset(f.b + f.l3 + 10, 0, 2);		/* no IP checksum */
	memset(f.b + f.l4 + 6, 0, 2);		/* no UDP checksum */
	tap_ret(raw_send(a, &f, IBV_SEND_IP_CSUM), IBV_WC_SUCCESS,
		"send a frame with IBV_SEND_IP_CSUM: SUCCESS");
	n = peer_recv(got, sizeof(got), 2000);
	tap_ok(n == (ssize_t)want.len && !memcmp(got, want.b, want.len),
	       "the peer got it byte for byte, both checksums written (%zd B)",
	       n);
	/* 62 bytes: within max_inline_data (64) */
	frame_udp4(&want, mac_peer, -1, IP_DEV, IP_PEER, 6000, 6001, 20, 10);
	memcpy(want.b + 6, mac_dev, 6);
	frame_csum4(&want, IPPROTO_UDP);
	tap_ret(raw_send(a, &want, IBV_SEND_INLINE), IBV_WC_SUCCESS,
		"send a 62-byte frame inline: SUCCESS");
	n = peer_recv(got, sizeof(got), 2000);
	tap_ok(n == (ssize_t)want.len && !memcmp(got, want.b, want.len),
	       "the peer got the inline frame byte for byte (%zd B)", n);
	tap_ret(ibv_post_send(a->qp, &wr, &bad), EINVAL,
		"SEND_WITH_IMM on a raw packet QP: EINVAL");

	/* frames the device cannot send fail their WQE and the QP */
	rq_open(&e, BUF);
	f.len = 13;
	tap_ret(raw_send(&e, &f, 0), IBV_WC_LOC_LEN_ERR,
		"a 13-byte frame: LOC_LEN_ERR");
	rq_close(&e);
	rq_open(&e, BUF);
	frame_udp4(&f, mac_peer, -1, IP_DEV, IP_PEER, 1, 2, 1500 - 28 + 5, 1);
	tap_ret(raw_send(&e, &f, 0), IBV_WC_LOC_LEN_ERR,
		"a frame 5 bytes over MTU 1500 + 18: LOC_LEN_ERR");
	rq_close(&e);
	tap_ok(peer_recv(got, sizeof(got), 300) < 0,
	       "neither reached the wire");
}

/* priorities, DONT_TRAP, the default flows and a sniffer */
static void test_priority(struct rq *a, struct rq *b, struct rq *c)
{
	struct ibv_flow *lo, *hi, *all, *mc, *sn;
	struct frame f, g;
	uint8_t got[BUF];

	lo = flow_udp(a->qp, 5100, 1, 0);
	hi = flow_udp(b->qp, 5100, 0, 0);
	tap_ok(lo && hi, "two flows for UDP 5100, priorities 1 (A) and 0 (B)");
	frame_to_dev(&f, 5100, 64, 11);
	peer_send(&f);
	rq_got(b, &f, true, "priority 0 wins: B");
	rq_none(a, "priority 1 loses: A");
	{
		/* the same match and priority twice: the older one wins */
		struct ibv_flow *tie = flow_udp(a->qp, 5100, 0, 0);

		tap_ok(tie != NULL, "A: a flow like B's, priority 0 too");
		peer_send(&f);
		rq_got(b, &f, true, "equal priorities: the older flow (B)");
		rq_none(a, "equal priorities: not the newer (A)");
		ibv_destroy_flow(tie);
	}
	ibv_destroy_flow(hi);
	hi = flow_udp(b->qp, 5100, 0, IBV_FLOW_ATTR_FLAGS_DONT_TRAP);
	tap_ok(hi != NULL, "B's flow again with DONT_TRAP");
	peer_send(&f);
	rq_got(b, &f, true, "DONT_TRAP: B has it");
	rq_got(a, &f, true, "DONT_TRAP: and A too");

	all = flow_kind(c->qp, IBV_FLOW_ATTR_ALL_DEFAULT);
	tap_ok(all != NULL, "ALL_DEFAULT flow on C");
	peer_send(&f);
	rq_got(b, &f, true, "with ALL_DEFAULT: B");
	rq_got(a, &f, true, "with ALL_DEFAULT: A");
	rq_none(c, "a frame a flow took: not C's");
	frame_to_dev(&g, 5101, 64, 12);
	peer_send(&g);
	rq_got(c, &g, true, "a frame no flow took: C's");

	mc = flow_kind(a->qp, IBV_FLOW_ATTR_MC_DEFAULT);
	tap_ok(mc != NULL, "MC_DEFAULT flow on A");
	frame_udp4(&g, mac_mc, -1, IP_PEER, 0xe0010203, 1, 5102, 40, 13);
	peer_send(&g);
	rq_got(a, &g, true, "a multicast frame: MC_DEFAULT (A)");
	rq_none(c, "a multicast frame: not ALL_DEFAULT's");
	ibv_destroy_flow(mc);
	ibv_destroy_flow(all);
	ibv_destroy_flow(hi);
	ibv_destroy_flow(lo);

	sn = flow_kind(c->qp, IBV_FLOW_ATTR_SNIFFER);
	tap_ok(sn != NULL, "SNIFFER flow on C");
	frame_to_dev(&f, 5103, 48, 14);
	peer_send(&f);
	rq_got(c, &f, true, "the sniffer sees a frame arrive");
	frame_udp4(&g, mac_peer, -1, IP_DEV, IP_PEER, 7, 8, 48, 15);
	memcpy(g.b + 6, mac_dev, 6);
	frame_csum4(&g, IPPROTO_UDP);
	tap_ret(raw_send(a, &g, 0), IBV_WC_SUCCESS, "A sends a frame");
	rq_got(c, &g, true, "the sniffer sees it leave");
	tap_ok(peer_recv(got, sizeof(got), 2000) == (ssize_t)g.len,
	       "and the peer has it");
	ibv_destroy_flow(sn);
}

/* a UDP socket on the device's address: whether the stack saw the frame */
static int udp_sock(uint16_t port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons(port),
				   .sin_addr.s_addr = htonl(IP_DEV) };
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);

	if (s < 0 || bind(s, (struct sockaddr *)&sin, sizeof(sin)))
		tap_bail("UDP socket on 198.18.9.1:%u: %s", port,
			 strerror(errno));
	return s;
}

static bool udp_got(int s, int ms)
{
	struct pollfd p = { .fd = s, .events = POLLIN };
	char b[BUF];

	return poll(&p, 1, ms * time_scale()) == 1 &&
	       recv(s, b, sizeof(b), 0) > 0;
}

static void test_drop(struct rq *a)
{
	struct ibv_flow *fl, *dr;
	struct ibv_flow_spec_action_drop *d;
	struct flow_req r;
	struct frame f;
	int s = udp_sock(5200);

	fl = flow_udp(a->qp, 5200, 0, IBV_FLOW_ATTR_FLAGS_DONT_TRAP);
	frame_to_dev(&f, 5200, 20, 21);
	peer_send(&f);
	rq_got(a, &f, true, "a flow's QP gets a copy");
	tap_ok(udp_got(s, 2000), "and the stack still gets the frame");

	flow_init(&r, IBV_FLOW_ATTR_NORMAL, 1, 0);
	flow_eth(&r, mac_dev, -1, false);
	flow_ip4(&r, IP_DEV);
	flow_l4(&r, IBV_FLOW_SPEC_UDP, 5200);
	d = flow_add(&r, sizeof(*d));
	d->type = IBV_FLOW_SPEC_ACTION_DROP;
	d->size = sizeof(*d);
	dr = flow_create(a->qp, &r);
	tap_ok(dr != NULL, "a drop flow for UDP 5200 behind it (%s)",
	       dr ? "" : strerror(errno));
	ibv_destroy_flow(fl);
	peer_send(&f);
	rq_none(a, "the drop flow: no QP gets it");
	tap_ok(!udp_got(s, 300), "the drop flow: the stack does not either");
	ibv_destroy_flow(dr);
	peer_send(&f);
	tap_ok(udp_got(s, 2000), "the drop flow gone: the stack gets it");
	close(s);
}

static void test_headers(struct rq *a)
{
	static const uint8_t inner_mac[6] = { 2, 0, 0, 0, 0x42, 1 };
	struct ibv_flow_spec_tunnel *t;
	struct ibv_flow *fl;
	struct flow_req r;
	struct frame f;

	flow_init(&r, IBV_FLOW_ATTR_NORMAL, 0, 0);
	flow_eth(&r, mac_dev, 42, false);
	fl = flow_create(a->qp, &r);
	tap_ok(fl != NULL, "flow: VLAN 42");
	frame_udp4(&f, mac_dev, 42, IP_PEER, IP_DEV, 1, 5300, 60, 31);
	peer_send(&f);
	rq_got(a, &f, true, "a frame tagged 42, the tag back in place");
	frame_udp4(&f, mac_dev, 43, IP_PEER, IP_DEV, 1, 5300, 60, 32);
	peer_send(&f);
	rq_none(a, "a frame tagged 43");
	frame_to_dev(&f, 5300, 60, 33);
	peer_send(&f);
	rq_none(a, "an untagged frame");
	ibv_destroy_flow(fl);

	flow_init(&r, IBV_FLOW_ATTR_NORMAL, 0, 0);
	flow_ip4(&r, 0);
	flow_l4(&r, IBV_FLOW_SPEC_UDP, 4789);
	t = flow_add(&r, sizeof(*t));
	t->type = IBV_FLOW_SPEC_VXLAN_TUNNEL;
	t->size = sizeof(*t);
	t->val.tunnel_id = htonl(4242);
	t->mask.tunnel_id = htonl(0xffffff);
	flow_eth(&r, inner_mac, -1, true);
	fl = flow_create(a->qp, &r);
	tap_ok(fl != NULL, "flow: VXLAN VNI 4242, inner dst MAC (%s)",
	       fl ? "" : strerror(errno));
	frame_vxlan(&f, 4242, inner_mac, 34);
	peer_send(&f);
	rq_got(a, &f, true, "VNI 4242 to the inner MAC");
	frame_vxlan(&f, 4243, inner_mac, 35);
	peer_send(&f);
	rq_none(a, "VNI 4243");
	frame_vxlan(&f, 4242, mac_peer, 36);
	peer_send(&f);
	rq_none(a, "VNI 4242 to another inner MAC");
	ibv_destroy_flow(fl);

	{
		struct ibv_flow_spec_ipv6 *s6;

		flow_init(&r, IBV_FLOW_ATTR_NORMAL, 0, 0);
		s6 = flow_add(&r, sizeof(*s6));
		s6->type = IBV_FLOW_SPEC_IPV6;
		s6->size = sizeof(*s6);
		s6->val.next_hdr = IPPROTO_TCP;
		s6->mask.next_hdr = 0xff;
		flow_l4(&r, IBV_FLOW_SPEC_TCP, 80);
		fl = flow_create(a->qp, &r);
	}
	tap_ok(fl != NULL, "flow: IPv6, TCP port 80");
	frame_tcp6(&f, 80, 30, 37);
	peer_send(&f);
	rq_got(a, &f, true, "an IPv6 TCP segment to 80");
	frame_tcp6(&f, 81, 30, 38);
	peer_send(&f);
	rq_none(a, "one to 81");
	ibv_destroy_flow(fl);
}

/* eth + IPv4 + UDP to dport, counting into c */
static struct ibv_flow *flow_udp_counted(struct ibv_qp *qp, uint16_t dport,
					 struct ibv_counters *c)
{
	struct ibv_flow_spec_counter_action *cs;
	struct flow_req r;

	flow_init(&r, IBV_FLOW_ATTR_NORMAL, 0, 0);
	flow_eth(&r, mac_dev, -1, false);
	flow_ip4(&r, IP_DEV);
	flow_l4(&r, IBV_FLOW_SPEC_UDP, dport);
	cs = flow_add(&r, sizeof(*cs));
	cs->type = IBV_FLOW_SPEC_ACTION_COUNT;
	cs->size = sizeof(*cs);
	cs->counters = c;
	return flow_create(qp, &r);
}

/* ibv_create_counters on two flows: packets and bytes where attached */
static void test_counters(struct rq *a)
{
	struct ibv_counters_init_attr ia = {};
	struct ibv_counter_attach_attr pk = { .counter_desc = IBV_COUNTER_PACKETS },
		by = { .counter_desc = IBV_COUNTER_BYTES, .index = 1 },
		bad = { .counter_desc = IBV_COUNTER_PACKETS, .index = 64 };
	struct ibv_counters *c = ibv_create_counters(ctx, &ia);
	struct ibv_flow *f1, *f2;
	uint64_t v[5] = {}, want_bytes = 0;
	struct frame f;
	int i;

	if (!tap_ok(c != NULL, "ibv_create_counters"))
		return;
	tap_ret(ibv_attach_counters_point_flow(c, &pk, NULL), 0,
		"packets at index 0");
	tap_ret(ibv_attach_counters_point_flow(c, &by, NULL), 0,
		"bytes at index 1");
	pk.index = 3;
	tap_ret(ibv_attach_counters_point_flow(c, &pk, NULL), 0,
		"packets at index 3 too");
	tap_ret(ibv_attach_counters_point_flow(c, &bad, NULL), EINVAL,
		"index 64: EINVAL");
	tap_ret(ibv_read_counters(c, v, 4, 0), EINVAL,
		"reading counters no flow uses: EINVAL");

	f1 = flow_udp_counted(a->qp, 5700, c);
	f2 = flow_udp_counted(a->qp, 5701, c);
	tap_ok(f1 && f2, "two flows counting into it (%s)",
	       f1 && f2 ? "" : strerror(errno));
	tap_ret(ibv_attach_counters_point_flow(c, &by, f1), EOPNOTSUPP,
		"attaching to a live flow: EOPNOTSUPP");
	tap_ret(ibv_attach_counters_point_flow(c, &by, NULL), EBUSY,
		"attaching while flows use it: EBUSY");
	for (i = 0; i < 5; i++) {
		frame_to_dev(&f, i < 3 ? 5700 : 5701, 10 + 100 * i,
			     60 + (uint32_t)i);
		want_bytes += f.len;
		peer_send(&f);
		rq_got(a, &f, true, "a counted frame");
	}
	frame_to_dev(&f, 5702, 10, 70);
	peer_send(&f);
	usleep(100000);
	tap_ret(ibv_read_counters(c, v, 5, 0), 0, "ibv_read_counters");
	tap_ok(v[0] == 5 && v[1] == want_bytes && v[2] == 0 && v[3] == 5 &&
	       v[4] == 0,
	       "packets 5, bytes %llu, index 2 untouched, index 3 packets 5: "
	       "%llu %llu %llu %llu %llu", (unsigned long long)want_bytes,
	       (unsigned long long)v[0], (unsigned long long)v[1],
	       (unsigned long long)v[2], (unsigned long long)v[3],
	       (unsigned long long)v[4]);
	tap_ret(ibv_destroy_counters(c), EBUSY,
		"destroying counters flows use: EBUSY");
	ibv_destroy_flow(f1);
	ibv_destroy_flow(f2);
	tap_ret(ibv_destroy_counters(c), 0, "destroyed once the flows are gone");
}

/* the peer sends n frames to UDP port as fast as it can, in a child */
static pid_t peer_flood(uint16_t port, int n)
{
	pid_t pid = fork();
	struct frame f;

	if (pid)
		return pid;
	frame_to_dev(&f, port, 64, 51);
	for (int i = 0; i < n; i++)
		peer_send(&f);
	_exit(0);
}

/* ------------------------------------------------------------------ */
/* WQs and RSS                                                         */
/* ------------------------------------------------------------------ */

#define NWQ 4

/* the RSS key of Microsoft's verification suite */
static const uint8_t rss_key[40] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67,
	0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb,
	0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30,
	0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

/* the test's own Toeplitz, to predict the device's choice */
static uint32_t toeplitz(const uint8_t *key, const uint8_t *in, size_t n)
{
	uint32_t w = (uint32_t)key[0] << 24 | key[1] << 16 | key[2] << 8 |
		     key[3], h = 0;

	for (size_t i = 0; i < n; i++)
		for (int b = 0; b < 8; b++) {
			if (in[i] & (0x80 >> b))
				h ^= w;
			w = w << 1 | ((key[i + 4] >> (7 - b)) & 1);
		}
	return h;
}

/* IPv4 addresses and UDP ports of a frame_udp4() frame, hashed */
static uint32_t frame_hash4(const struct frame *f)
{
	uint8_t in[12];

	memcpy(in, f->b + f->l3 + 12, 8);
	memcpy(in + 8, f->b + f->l4, 4);
	return toeplitz(rss_key, in, sizeof(in));
}

struct rss {
	struct ibv_cq *cq[NWQ];
	struct ibv_wq *wq[NWQ];
	struct ibv_rwq_ind_table *tbl;
	struct ibv_qp *qp;
	uint8_t *buf;
	struct ibv_mr *mr;
};

static int wq_post(struct rss *r, int w, int i)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)r->buf + ((size_t)w * NRECV + i) * BUF,
		.length = BUF, .lkey = r->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = (uint64_t)(w * NRECV + i),
				  .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_wq_recv(r->wq[w], &wr, &bad);
}

static struct ibv_qp *rss_qp(struct ibv_rwq_ind_table *tbl, uint8_t klen,
			     uint64_t fields, uint32_t max_send_wr)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_RAW_PACKET,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_IND_TABLE |
			     IBV_QP_INIT_ATTR_RX_HASH,
		.pd = pd,
		.rwq_ind_tbl = tbl,
		.rx_hash_conf = {
			.rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ,
			.rx_hash_key_len = klen,
			.rx_hash_key = (uint8_t *)rss_key,
			.rx_hash_fields_mask = fields,
		},
		.cap = { .max_send_wr = max_send_wr },
	};

	return ibv_create_qp_ex(ctx, &a);
}

#define RSS_FIELDS (IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4 | \
		    IBV_RX_HASH_SRC_PORT_UDP | IBV_RX_HASH_DST_PORT_UDP)

static bool rss_open(struct rss *r)
{
	struct ibv_rwq_ind_table_init_attr ta = { .log_ind_tbl_size = 2 };
	struct ibv_wq_attr ma = { .attr_mask = IBV_WQ_ATTR_STATE,
				  .wq_state = IBV_WQS_RDY };
	int w, i;

	memset(r, 0, sizeof(*r));
	r->buf = dp_alloc((size_t)NWQ * NRECV * BUF);
	r->mr = ibv_reg_mr(pd, r->buf, (size_t)NWQ * NRECV * BUF,
			   IBV_ACCESS_LOCAL_WRITE);
	for (w = 0; w < NWQ; w++) {
		struct ibv_wq_init_attr wa = {
			.wq_type = IBV_WQT_RQ, .max_wr = NRECV, .max_sge = 1,
			.pd = pd,
		};

		r->cq[w] = ibv_create_cq(ctx, 2 * NRECV, NULL, NULL, 0);
		wa.cq = r->cq[w];
		r->wq[w] = r->cq[w] ? ibv_create_wq(ctx, &wa) : NULL;
		if (!r->mr || !r->wq[w] || ibv_modify_wq(r->wq[w], &ma))
			return false;
		for (i = 0; i < NRECV; i++)
			if (wq_post(r, w, i))
				return false;
	}
	ta.ind_tbl = r->wq;
	r->tbl = ibv_create_rwq_ind_table(ctx, &ta);
	r->qp = r->tbl ? rss_qp(r->tbl, 40, RSS_FIELDS, 0) : NULL;
	return r->qp;
}

static void rss_close(struct rss *r)
{
	int w;

	if (r->qp)
		ibv_destroy_qp(r->qp);
	if (r->tbl)
		ibv_destroy_rwq_ind_table(r->tbl);
	for (w = 0; w < NWQ; w++) {
		if (r->wq[w])
			ibv_destroy_wq(r->wq[w]);
		if (r->cq[w])
			ibv_destroy_cq(r->cq[w]);
	}
	ibv_dereg_mr(r->mr);
	free(r->buf);
}

/* the frame came out of WQ w, whole */
static bool rss_got(struct rss *r, int w, const struct frame *f)
{
	struct ibv_wc wc;
	uint8_t *b;
	bool ok;

	if (dp_poll(r->cq[w], &wc, 1, DP_WAIT_MS) != 1)
		return false;
	b = r->buf + wc.wr_id * BUF;
	ok = wc.status == IBV_WC_SUCCESS && wc.byte_len == f->len &&
	     wc.qp_num == r->wq[w]->wq_num && (int)(wc.wr_id / NRECV) == w &&
	     !memcmp(b, f->b, f->len);
	wq_post(r, w, (int)(wc.wr_id % NRECV));
	return ok;
}

static void test_rss(void)
{
	struct ibv_device_attr_ex da = {};
	struct ibv_rwq_ind_table_init_attr big = { .log_ind_tbl_size = 9 };
	uint8_t tv[12] = { 66, 9, 149, 187, 161, 142, 100, 80,
			   0x0a, 0xea, 0x06, 0xe6 };
	int placed = 0, used = 0, per[NWQ] = {}, w, i;
	struct ibv_wq_attr ma = { .attr_mask = IBV_WQ_ATTR_STATE };
	struct ibv_flow *fl;
	struct ibv_wc wc;
	struct frame f;
	struct rss r;

	ibv_query_device_ex(ctx, NULL, &da);
	tap_ok(da.rss_caps.supported_qpts == 1u << IBV_QPT_RAW_PACKET &&
	       da.rss_caps.max_rwq_indirection_table_size == 256 &&
	       da.rss_caps.rx_hash_fields_mask == 0xff &&
	       da.rss_caps.rx_hash_function == IBV_RX_HASH_FUNC_TOEPLITZ &&
	       da.max_wq_type_rq == (uint32_t)da.orig_attr.max_qp,
	       "rss_caps: raw packet QPs, 256 entries, 8 fields, Toeplitz");
	/* Microsoft's vector: 66.9.149.187:2794 -> 161.142.100.80:1766 */
	tap_ok(toeplitz(rss_key, tv, 12) == 0x51ccc178,
	       "the test's Toeplitz gives Microsoft's 0x51ccc178");

	if (!tap_ok(rss_open(&r), "4 WQs, a table of 4, an RSS QP (%s)",
		    strerror(errno))) {
		rss_close(&r);
		return;
	}
	tap_ret(raw_qp_ready(r.qp), EOPNOTSUPP,
		"modify_qp on an RSS QP: EOPNOTSUPP (it receives as made)");
	fl = flow_udp(r.qp, 5800, 0, 0);
	tap_ok(fl != NULL, "a flow to the RSS QP");
	for (i = 0; i < 32; i++) {
		frame_udp4(&f, mac_dev, -1, IP_PEER, IP_DEV,
			   (uint16_t)(1000 + 37 * i), 5800, 40, 80 + (uint32_t)i);
		w = (int)(frame_hash4(&f) & (NWQ - 1));
		peer_send(&f);
		if (rss_got(&r, w, &f)) {
			placed++;
			used += !per[w]++;
		} else {
			tap_diag("  frame %d: not in WQ %d as predicted", i, w);
		}
	}
	tap_ok(placed == 32, "32 frames, each in the WQ its hash predicts");
	tap_ok(used >= 2, "spread over %d WQs (%d %d %d %d)", used, per[0],
	       per[1], per[2], per[3]);

	/* a WQ in RESET takes nothing; one in ERR flushes what it has */
	for (i = 0; ; i++) {
		frame_udp4(&f, mac_dev, -1, IP_PEER, IP_DEV,
			   (uint16_t)(3000 + i), 5800, 40, 1);
		if ((frame_hash4(&f) & (NWQ - 1)) == 0)
			break;
	}
	ma.wq_state = IBV_WQS_RESET;
	tap_ret(ibv_modify_wq(r.wq[0], &ma), 0, "WQ 0 to RESET");
	peer_send(&f);
	tap_ok(dp_poll_none(r.cq[0], &wc, 300) == 0,
	       "a frame for WQ 0 in RESET: not received");
	ma.wq_state = IBV_WQS_RDY;
	ibv_modify_wq(r.wq[0], &ma);
	for (i = 0; i < NRECV; i++)
		wq_post(&r, 0, i);
	peer_send(&f);
	tap_ok(rss_got(&r, 0, &f), "back in RDY with new WQEs: received");
	ma.wq_state = IBV_WQS_ERR;
	tap_ret(ibv_modify_wq(r.wq[0], &ma), 0, "WQ 0 to ERR");
	for (i = 0; dp_poll(r.cq[0], &wc, 1, 1000) == 1; i++)
		if (wc.status != IBV_WC_WR_FLUSH_ERR)
			break;
	tap_ok(i == NRECV, "its %d WQEs flushed (WR_FLUSH_ERR)", i);

	/* misuse */
	tap_null_errno(rss_qp(r.tbl, 20, RSS_FIELDS, 0), EINVAL,
		       "a 20-byte RSS key: EINVAL");
	tap_null_errno(rss_qp(r.tbl, 40, RSS_FIELDS | IBV_RX_HASH_INNER, 0),
		       EOPNOTSUPP, "hashing inner headers: EOPNOTSUPP");
	tap_null_errno(rss_qp(r.tbl, 40, RSS_FIELDS, 4), EOPNOTSUPP,
		       "an RSS QP with a send queue: EOPNOTSUPP");
	big.ind_tbl = calloc(512, sizeof(*big.ind_tbl));
	for (i = 0; i < 512; i++)
		big.ind_tbl[i] = r.wq[i % NWQ];
	tap_null_errno(ibv_create_rwq_ind_table(ctx, &big), EINVAL,
		       "a table of 512 entries: EINVAL");
	free(big.ind_tbl);
	tap_ret(ibv_destroy_wq(r.wq[1]), EBUSY,
		"destroying a WQ a table uses: EBUSY");
	tap_ret(ibv_destroy_rwq_ind_table(r.tbl), EBUSY,
		"destroying a table a QP uses: EBUSY");

	/* everything goes while frames pour in */
	{
		pid_t pid = peer_flood(5800, 5000);
		int st;

		usleep(20000);
		ibv_destroy_flow(fl);
		tap_ret(ibv_destroy_qp(r.qp), 0,
			"the RSS QP destroyed under a flood");
		r.qp = NULL;
		waitpid(pid, &st, 0);
	}
	rss_close(&r);
}

/* a NORMAL flow to UDP dport on qp with the tag action */
static struct ibv_flow *flow_udp_tagged(struct ibv_qp *qp, uint16_t dport,
					uint32_t tag, uint32_t flags)
{
	struct ibv_flow_spec_action_tag *t;
	struct flow_req r;

	flow_init(&r, IBV_FLOW_ATTR_NORMAL, 0, flags);
	flow_eth(&r, mac_dev, -1, false);
	flow_ip4(&r, IP_DEV);
	flow_l4(&r, IBV_FLOW_SPEC_UDP, dport);
	t = flow_add(&r, sizeof(*t));
	t->type = IBV_FLOW_SPEC_ACTION_TAG;
	t->size = sizeof(*t);
	t->tag_id = tag;
	return flow_create(qp, &r);
}

/* the tag of the flow that took a frame, in its completion */
static void test_flow_tag(void)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 16,
		.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_FLOW_TAG,
	};
	struct ibv_cq_ex *cqx = ibv_create_cq_ex(ctx, &ca);
	struct ibv_qp *qp = cqx ? raw_qp_create(ibv_cq_ex_to_cq(cqx), NULL) :
				  NULL;
	uint8_t *buf = dp_alloc(4 * BUF);
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, 4 * BUF, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_poll_cq_attr pa = {};
	struct ibv_flow *f1, *f2;
	uint32_t tags[2] = {}, n = 0;
	struct frame f;
	uint64_t end;

	if (!tap_ok(qp && mr && !raw_qp_ready(qp),
		    "a raw QP on a CQ with IBV_WC_EX_WITH_FLOW_TAG"))
		return;
	for (int i = 0; i < 4; i++)
		dp_post_recv1(qp, (uint64_t)i, buf + i * BUF, BUF, mr->lkey);
	tap_null_errno(flow_udp_tagged(qp, 6100, 1u << 24, 0), EINVAL,
		       "a tag of 25 bits: EINVAL");
	f1 = flow_udp_tagged(qp, 6100, 0xabcde, IBV_FLOW_ATTR_FLAGS_DONT_TRAP);
	f2 = flow_udp_tagged(qp, 6100, 0x123456, 0);
	tap_ok(f1 && f2, "two flows with tags 0xabcde and 0x123456");
	frame_to_dev(&f, 6100, 30, 90);
	peer_send(&f);
	end = dp_now_ms() + (uint64_t)DP_WAIT_MS;
	while (n < 2 && dp_now_ms() < end) {
		if (ibv_start_poll(cqx, &pa))
			continue;
		do {
			if (cqx->status == IBV_WC_SUCCESS &&
			    ibv_wc_read_byte_len(cqx) == f.len && n < 2)
				tags[n++] = ibv_wc_read_flow_tag(cqx);
		} while (!ibv_next_poll(cqx));
		ibv_end_poll(cqx);
	}
	tap_ok(n == 2 && ((tags[0] == 0xabcde && tags[1] == 0x123456) ||
			  (tags[1] == 0xabcde && tags[0] == 0x123456)),
	       "each copy carries its flow's tag (0x%x, 0x%x)", tags[0],
	       tags[1]);
	ibv_destroy_flow(f2);
	ibv_destroy_flow(f1);
	ibv_destroy_qp(qp);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(ibv_cq_ex_to_cq(cqx));
	free(buf);
}

/* ------------------------------------------------------------------ */
/* Loopback inside the device                                          */
/* ------------------------------------------------------------------ */

static void peer_drain(void);

/* rdma-core's raw traffic tests send to this multicast MAC */
static const uint8_t mac_rc_mc[6] = { 0x01, 0x50, 0x56, 0x19, 0x20, 0xa7 };
static const uint8_t mac_bc[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

/* a UDP frame the device sends: from its MAC and address to dst */
static void frame_from_dev(struct frame *f, const uint8_t *dst, uint32_t dip,
			   uint16_t sport, uint16_t dport, size_t n,
			   uint32_t seed)
{
	frame_udp4(f, dst, -1, IP_DEV, dip, sport, dport, n, seed);
	memcpy(f->b + 6, mac_dev, 6);	/* outside every checksum */
}

/* whether the peer gets f, byte for byte, within ms */
static bool peer_got(const struct frame *f, int ms)
{
	uint64_t end = dp_now_ms() + (uint64_t)ms * time_scale();
	uint8_t got[BUF];
	ssize_t n;

	do {
		n = peer_recv(got, sizeof(got), ms);
		if (n == (ssize_t)f->len && !memcmp(got, f->b, f->len))
			return true;
	} while (n >= 0 && dp_now_ms() < end);
	return false;
}

/*
 * A QP's frame back to itself: its CQ has the send's completion and the
 * receive's, in either order; the receive byte for byte.
 */
static bool raw_send_self(struct rq *r, const struct frame *f)
{
	struct ibv_mr *mr = ibv_reg_mr(pd, (void *)f->b, BUF, 0);
	bool sent = false, got = false;
	struct ibv_wc wc;
	int i;

	if (!mr || dp_post_send1(r->qp, 77, IBV_WR_SEND, f->b,
				 (uint32_t)f->len, mr->lkey, 0, 0, 0))
		return false;
	for (i = 0; i < 2 && dp_poll(r->cq, &wc, 1, DP_WAIT_MS) == 1; i++) {
		if (wc.opcode == IBV_WC_SEND) {
			sent = wc.status == IBV_WC_SUCCESS;
			continue;
		}
		got = wc.status == IBV_WC_SUCCESS && wc.byte_len == f->len &&
		      !memcmp(r->buf + wc.wr_id * BUF, f->b, f->len) &&
		      (wc.wc_flags & IBV_WC_IP_CSUM_OK);
		rq_post(r, (int)wc.wr_id);
	}
	ibv_dereg_mr(mr);
	if (!sent || !got)
		tap_diag("  own frame: sent %d, received back %d", sent, got);
	return sent && got;
}

/*
 * What a raw QP sends reaches the device's own flows as on mlx5 with its
 * local loopback: multicast and broadcast both ways (flows and wire),
 * unicast to the port's own MAC to the flows only, other unicast to the
 * wire only; the sender may get its own frame unless made with
 * BLOCK_SELF_MCAST_LB (multicast only); a sniffer sees each frame once.
 */
static void test_loopback(struct rq *a, struct rq *b, struct rq *c)
{
	struct ibv_flow *fl, *fl2;
	struct frame f;
	struct rq s;

	peer_drain();
	fl = flow_udp_to(b->qp, mac_rc_mc, 0x02020202, 6200, 0, 0);
	tap_ok(fl != NULL, "loopback: B's flow for rdma-core's multicast MAC");
	frame_from_dev(&f, mac_rc_mc, 0x02020202, 1, 6200, 300, 40);
	tap_ret(raw_send(a, &f, IBV_SEND_IP_CSUM), IBV_WC_SUCCESS,
		"loopback: A sends it (multicast MAC, UDP 6200)");
	rq_got(b, &f, true, "loopback: multicast from A to B's flow");
	tap_ok(peer_got(&f, 2000), "loopback: the multicast frame on the wire too");
	ibv_destroy_flow(fl);

	fl = flow_udp_to(b->qp, mac_bc, 0xc61209ff, 6201, 0, 0);
	frame_from_dev(&f, mac_bc, 0xc61209ff, 2, 6201, 64, 41);
	tap_ret(raw_send(a, &f, 0), IBV_WC_SUCCESS, "loopback: A broadcasts");
	rq_got(b, &f, true, "loopback: broadcast from A to B's flow");
	tap_ok(peer_got(&f, 2000), "loopback: the broadcast on the wire too");
	ibv_destroy_flow(fl);

	fl = flow_udp(b->qp, 6202, 0, 0);
	frame_from_dev(&f, mac_dev, IP_DEV, 3, 6202, 1000, 42);
	tap_ret(raw_send(a, &f, 0), IBV_WC_SUCCESS,
		"loopback: A sends to the port's own MAC");
	rq_got(b, &f, true, "loopback: unicast to the own MAC to B's flow");
	tap_ok(!peer_got(&f, 500), "loopback: and not to the wire");
	ibv_destroy_flow(fl);

	fl = flow_udp_to(b->qp, mac_peer, IP_PEER, 6203, 0, 0);
	frame_from_dev(&f, mac_peer, IP_PEER, 4, 6203, 100, 43);
	tap_ret(raw_send(a, &f, 0), IBV_WC_SUCCESS,
		"loopback: A sends to the peer's MAC");
	tap_ok(peer_got(&f, 2000), "loopback: unicast to another MAC: the wire");
	rq_none(b, "loopback: unicast to another MAC: not B's flow");
	ibv_destroy_flow(fl);

	/* the sender's own flow */
	fl = flow_udp_to(a->qp, mac_rc_mc, 0x02020202, 6204, 0, 0);
	frame_from_dev(&f, mac_rc_mc, 0x02020202, 5, 6204, 80, 44);
	tap_ok(raw_send_self(a, &f), "loopback: A gets its own multicast");
	ibv_destroy_flow(fl);
	fl = flow_udp(a->qp, 6204, 0, 0);
	frame_from_dev(&f, mac_dev, IP_DEV, 5, 6204, 80, 45);
	tap_ok(raw_send_self(a, &f), "loopback: A gets its own unicast");
	ibv_destroy_flow(fl);

	/* BLOCK_SELF_MCAST_LB: not its own multicast; unicast still */
	if (!tap_ok(rq_open_flags(&s, BUF, IBV_QP_CREATE_BLOCK_SELF_MCAST_LB),
		    "loopback: a raw QP with IBV_QP_CREATE_BLOCK_SELF_MCAST_LB")) {
		tap_diag("  %s", strerror(errno));
		if (s.qp)
			ibv_destroy_qp(s.qp);
		ibv_dereg_mr(s.mr);
		ibv_destroy_cq(s.cq);
		free(s.buf);
		goto sniffer;
	}
	fl = flow_udp_to(s.qp, mac_rc_mc, 0x02020202, 6205, 0,
			 IBV_FLOW_ATTR_FLAGS_DONT_TRAP);
	fl2 = flow_udp_to(b->qp, mac_rc_mc, 0x02020202, 6205, 1, 0);
	frame_from_dev(&f, mac_rc_mc, 0x02020202, 6, 6205, 70, 46);
	tap_ret(raw_send(&s, &f, 0), IBV_WC_SUCCESS,
		"loopback: the blocking QP sends multicast");
	rq_got(b, &f, true, "loopback: B has the blocking QP's multicast");
	rq_none(&s, "loopback: the blocking QP does not");
	ibv_destroy_flow(fl2);
	ibv_destroy_flow(fl);
	fl = flow_udp(s.qp, 6206, 0, 0);
	frame_from_dev(&f, mac_dev, IP_DEV, 7, 6206, 70, 47);
	tap_ok(raw_send_self(&s, &f),
	       "loopback: the blocking QP gets its own unicast");
	ibv_destroy_flow(fl);
	rq_close(&s);

sniffer:
	/* a sniffer: every frame once, also one that never left */
	fl = flow_kind(c->qp, IBV_FLOW_ATTR_SNIFFER);
	frame_from_dev(&f, mac_rc_mc, 0x02020202, 8, 6207, 50, 48);
	tap_ret(raw_send(a, &f, 0), IBV_WC_SUCCESS, "loopback: A multicasts");
	rq_got(c, &f, true, "loopback: the sniffer sees the multicast");
	rq_none(c, "loopback: once");
	frame_from_dev(&f, mac_dev, IP_DEV, 8, 6207, 50, 49);
	tap_ret(raw_send(a, &f, 0), IBV_WC_SUCCESS,
		"loopback: A sends to its own MAC");
	rq_got(c, &f, true, "loopback: the sniffer sees that frame");
	rq_none(c, "loopback: once too");
	ibv_destroy_flow(fl);
	peer_drain();
}

/* rdma-core's RSS traffic: frames of a raw QP spread over an RSS QP's WQs */
static void test_loopback_rss(struct rq *a)
{
	int placed = 0, w, i;
	struct ibv_flow *fl;
	struct frame f;
	struct rss r;

	if (!tap_ok(rss_open(&r), "loopback: an RSS QP over 4 WQs")) {
		rss_close(&r);
		return;
	}
	fl = flow_udp_to(r.qp, mac_rc_mc, 0x02020202, 5900, 0, 0);
	for (i = 0; i < 16; i++) {
		frame_from_dev(&f, mac_rc_mc, 0x02020202,
			       (uint16_t)(2000 + 101 * i), 5900, 60,
			       200 + (uint32_t)i);
		w = (int)(frame_hash4(&f) & (NWQ - 1));
		if (raw_send(a, &f, 0) != IBV_WC_SUCCESS ||
		    !rss_got(&r, w, &f)) {
			tap_diag("  frame %d: not in WQ %d", i, w);
			break;	/* each miss waits the whole DP_WAIT_MS */
		}
		placed++;
	}
	tap_ret(placed, 16,
		"loopback: 16 frames from A, each in the WQ its hash predicts");
	ibv_destroy_flow(fl);
	rss_close(&r);
	peer_drain();
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* a looped frame's completion timestamp (the device clock: monotonic ns) */
static void test_loopback_ts(struct rq *a)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 16,
		.wc_flags = IBV_WC_EX_WITH_BYTE_LEN |
			    IBV_WC_EX_WITH_COMPLETION_TIMESTAMP,
	};
	struct ibv_cq_ex *cqx = ibv_create_cq_ex(ctx, &ca);
	struct ibv_qp *qp = cqx ? raw_qp_create(ibv_cq_ex_to_cq(cqx), NULL) :
				  NULL;
	uint8_t *buf = dp_alloc(4 * BUF);
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, 4 * BUF, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_poll_cq_attr pa = {};
	uint64_t t0, t1, ts = 0, end;
	uint32_t len = 0;
	struct ibv_flow *fl;
	struct frame f;
	bool got = false;

	if (!tap_ok(qp && mr && !raw_qp_ready(qp),
		    "loopback: a raw QP on a CQ with completion timestamps"))
		return;
	for (int i = 0; i < 4; i++)
		dp_post_recv1(qp, (uint64_t)i, buf + i * BUF, BUF, mr->lkey);
	fl = flow_udp_to(qp, mac_rc_mc, 0x02020202, 6300, 0, 0);
	frame_from_dev(&f, mac_rc_mc, 0x02020202, 9, 6300, 200, 50);
	t0 = mono_ns();
	tap_ret(raw_send(a, &f, 0), IBV_WC_SUCCESS, "loopback: A sends");
	end = dp_now_ms() + (uint64_t)DP_WAIT_MS;
	while (!got && dp_now_ms() < end) {
		if (ibv_start_poll(cqx, &pa))
			continue;
		got = cqx->status == IBV_WC_SUCCESS;
		len = ibv_wc_read_byte_len(cqx);
		ts = ibv_wc_read_completion_ts(cqx);
		ibv_end_poll(cqx);
	}
	t1 = mono_ns();
	tap_ok(got && len == f.len && !memcmp(buf, f.b, f.len),
	       "loopback: the timestamped QP received the frame byte for byte");
	tap_ok(got && ts >= t0 && ts <= t1,
	       "loopback: its completion timestamp lies between send and poll");
	ibv_destroy_flow(fl);
	ibv_destroy_qp(qp);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(ibv_cq_ex_to_cq(cqx));
	free(buf);
	peer_drain();
}

/* a flow that must be refused with err */
static void refused(struct ibv_qp *qp, struct flow_req *r, int err,
		    const char *what)
{
	struct ibv_flow *fl = flow_create(qp, r);

	if (!tap_null_errno(fl, err, "%s: %s", what, strerror(err)) && fl)
		ibv_destroy_flow(fl);
}

/*
 * The create_flow command written by hand (libibverbs would rebuild the
 * sizes): an Ethernet spec whose sizes lie.  Returns write()'s errno.
 */
static int raw_create_flow(struct ibv_qp *qp, uint16_t spec_size,
			   uint16_t attr_size, uint8_t nspecs)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_ex_cmd_hdr ex;
		struct ib_uverbs_create_flow core;
		struct ib_uverbs_flow_spec_eth eth;
		uint8_t slack[64];
	} cmd = {};
	struct ib_uverbs_create_flow_resp resp = {};
	size_t in = sizeof(cmd.core) + sizeof(cmd.eth) + sizeof(cmd.slack);

	cmd.hdr.command = IB_USER_VERBS_CMD_FLAG_EXTENDED |
			  IB_USER_VERBS_EX_CMD_CREATE_FLOW;
	cmd.hdr.in_words = (uint16_t)(in / 8);
	cmd.hdr.out_words = sizeof(resp) / 8;
	cmd.ex.response = (uintptr_t)&resp;
	cmd.core.qp_handle = qp->handle;
	cmd.core.flow_attr.type = IBV_FLOW_ATTR_NORMAL;
	cmd.core.flow_attr.size = attr_size;
	cmd.core.flow_attr.num_of_specs = nspecs;
	cmd.core.flow_attr.port = PORT;
	cmd.eth.type = IBV_FLOW_SPEC_ETH;
	cmd.eth.size = spec_size;
	memset(cmd.eth.mask.dst_mac, 0xff, 6);
	if (write(ctx->cmd_fd, &cmd, sizeof(cmd.hdr) + sizeof(cmd.ex) + in) >= 0) {
		/* it made a flow after all: take it down again */
		struct {
			struct ib_uverbs_cmd_hdr hdr;
			struct ib_uverbs_ex_cmd_hdr ex;
			struct ib_uverbs_destroy_flow core;
		} d = {};

		d.hdr.command = IB_USER_VERBS_CMD_FLAG_EXTENDED |
				IB_USER_VERBS_EX_CMD_DESTROY_FLOW;
		d.hdr.in_words = sizeof(d.core) / 8;
		d.core.flow_handle = resp.flow_handle;
		if (write(ctx->cmd_fd, &d, sizeof(d)) < 0)
			tap_diag("  destroy_flow by hand: %s", strerror(errno));
		return 0;
	}
	return errno;
}

/* a RoCE UD packet aimed at the raw QP's number: dropped (rx_no_qp) */
static void test_roce_to_raw(struct rq *a)
{
	struct dp_dev d;
	struct dp_conn c;
	struct ibv_cq *cq;
	struct ibv_qp *ud;
	struct ibv_ah *ah;
	struct ibv_wc wc;
	char msg[32] = "not a frame";
	struct ibv_sge sge = { .addr = (uintptr_t)msg, .length = sizeof(msg) };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED |
						IBV_SEND_INLINE }, *bad;
	long before;
	struct ibv_qp_cap cap = dp_small_cap;

	dp_open(&d, DEV);
	dp_conn_default(&c);
	cap.max_inline_data = 64;
	cq = ibv_create_cq(d.ctx, 8, NULL, NULL, 0);
	ud = cq ? dp_create_qp(&d, IBV_QPT_UD, cq, cq, NULL, &cap) : NULL;
	if (!tap_ok(ud && !dp_connect(ud, &d, &d.gid, 0, &c),
		    "a UD QP on " DEV)) {
		dp_close(&d);
		return;
	}
	ah = dp_loop_ah(&d);
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = a->qp->qp_num;
	wr.wr.ud.remote_qkey = c.qkey;
	before = dp_hw_counter(DEV, "rx_no_qp");
	tap_ok(!ibv_post_send(ud, &wr, &bad) &&
	       dp_poll(cq, &wc, 1, DP_WAIT_MS) == 1 &&
	       wc.status == IBV_WC_SUCCESS,
	       "a UD SEND to the raw QP's number, sent");
	rq_none(a, "a RoCE packet to a raw QP");
	tap_ok(dp_hw_counter(DEV, "rx_no_qp") == before + 1,
	       "counted in rx_no_qp");
	ibv_destroy_ah(ah);
	ibv_destroy_qp(ud);
	ibv_destroy_cq(cq);
	dp_close(&d);
}

/*
 * A GSO frame leaving (UDP_SEGMENT: 10 datagrams of 100 bytes in one
 * skb) reaches a sniffer as the 10 frames of the wire, checksums right.
 */
static void test_gso(struct rq *c)
{
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(9),
				  .sin_addr.s_addr = htonl(0xc6120903) };
	int s = socket(AF_INET, SOCK_DGRAM, 0), seg = 100, n = 0, ok = 0;
	struct ibv_flow *sn;
	struct ibv_wc wc;
	char buf[1000];

	if (dp_sh("ip neigh replace 198.18.9.3 lladdr 02:00:00:00:09:02 "
		  "dev " NDEV " nud permanent") || s < 0 ||
	    setsockopt(s, SOL_SOCKET, SO_BINDTODEVICE, NDEV, sizeof(NDEV)) ||
	    setsockopt(s, IPPROTO_UDP, 103 /* UDP_SEGMENT */, &seg,
		       sizeof(seg))) {
		tap_skip("UDP GSO: %s", strerror(errno));
		if (s >= 0)
			close(s);
		return;
	}
	sn = flow_kind(c->qp, IBV_FLOW_ATTR_SNIFFER);
	memset(buf, 0x5a, sizeof(buf));
	tap_ok(sn && sendto(s, buf, sizeof(buf), 0, (struct sockaddr *)&to,
			    sizeof(to)) == (ssize_t)sizeof(buf),
	       "a sniffer, and 1000 bytes sent with UDP_SEGMENT 100");
	while (dp_poll(c->cq, &wc, 1, 2000) == 1) {
		const uint8_t *b = c->buf + wc.wr_id * BUF;

		n++;
		ok += wc.status == IBV_WC_SUCCESS && wc.byte_len == 142 &&
		      (wc.wc_flags & IBV_WC_IP_CSUM_OK) && b[36] == 0 && b[37] == 9 &&
		      b[142 - 1] == 0x5a;
		rq_post(c, (int)wc.wr_id);
	}
	tap_ok(n == 10 && ok == 10,
	       "the sniffer got 10 frames of 142 bytes, checksums right (%d, %d)",
	       n, ok);
	if (sn)
		ibv_destroy_flow(sn);
	close(s);
}

static void test_spec_sizes(struct rq *a)
{
	uint16_t eth = sizeof(struct ib_uverbs_flow_spec_eth);

	tap_ret(raw_create_flow(a->qp, eth, eth, 1), 0,
		"create_flow by hand, sizes right: made");
	tap_ret(raw_create_flow(a->qp, 4, eth, 1), EINVAL,
		"a spec of 4 bytes: EINVAL");
	tap_ret(raw_create_flow(a->qp, eth + 8, eth, 1), EINVAL,
		"a spec longer than the attribute says: EINVAL");
	tap_ret(raw_create_flow(a->qp, eth, eth, 2), EINVAL,
		"two specs announced, one given: EINVAL");
	tap_ret(raw_create_flow(a->qp, 0, eth, 1), EINVAL,
		"a spec of size 0: EINVAL");
}

static void test_hostile(struct rq *a)
{
	struct ibv_flow_spec_ipv4_ext *s4;
	struct ibv_flow_spec_esp *esp;
	struct ibv_flow *fl;
	struct flow_req r;
	struct frame f;
	struct dp_qp u = {};
	struct dp_dev d = { 0 };
	struct rq small;
	long too_long;

	flow_init(&r, IBV_FLOW_ATTR_NORMAL, 0, 0);
	s4 = flow_add(&r, sizeof(*s4));
	s4->type = IBV_FLOW_SPEC_IPV4_EXT;
	s4->size = sizeof(*s4);
	s4->mask.flags = 0x8;
	refused(a->qp, &r, EINVAL, "IPv4 flags mask beyond 3 bits");
	flow_init(&r, IBV_FLOW_ATTR_NORMAL, 0, 0);
	flow_l4(&r, IBV_FLOW_SPEC_UDP, 1);
	refused(a->qp, &r, EINVAL, "UDP without an IP spec");
	flow_init(&r, IBV_FLOW_ATTR_NORMAL, 0, 0);
	flow_eth(&r, mac_dev, -1, true);
	refused(a->qp, &r, EINVAL, "an inner spec without a tunnel");
	flow_init(&r, IBV_FLOW_ATTR_SNIFFER, 0, 0);
	flow_eth(&r, mac_dev, -1, false);
	refused(a->qp, &r, EINVAL, "a SNIFFER with specs");
	flow_init(&r, IBV_FLOW_ATTR_NORMAL, 0, 0);
	flow_ip4(&r, IP_DEV);
	esp = flow_add(&r, sizeof(*esp));
	esp->type = IBV_FLOW_SPEC_ESP;
	esp->size = sizeof(*esp);
	refused(a->qp, &r, EOPNOTSUPP, "an ESP spec");
	flow_init(&r, IBV_FLOW_ATTR_NORMAL, 0, 0);
	r.attr.port = 2;
	refused(a->qp, &r, EINVAL, "port 2");
	flow_init(&r, IBV_FLOW_ATTR_NORMAL, 0, IBV_FLOW_ATTR_FLAGS_EGRESS);
	refused(a->qp, &r, EOPNOTSUPP, "IBV_FLOW_ATTR_FLAGS_EGRESS");

	d.ctx = ctx;
	d.pd = pd;
	u.scq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	u.qp = u.scq ? dp_create_qp(&d, IBV_QPT_UD, u.scq, u.scq, NULL,
				    &dp_small_cap) : NULL;
	flow_init(&r, IBV_FLOW_ATTR_NORMAL, 0, 0);
	if (u.qp)
		refused(u.qp, &r, EOPNOTSUPP, "a flow on a UD QP");
	else
		tap_ok(false, "UD QP: %s", strerror(errno));
	if (u.qp)
		ibv_destroy_qp(u.qp);
	if (u.scq)
		ibv_destroy_cq(u.scq);

	fl = flow_udp(a->qp, 5400, 0, 0);
	tap_ret(ibv_destroy_qp(a->qp), EBUSY,
		"destroying a QP that has a flow: EBUSY");

	ibv_destroy_flow(fl);

	/* a frame longer than the buffers: dropped, the WQE kept */
	rq_open(&small, 128);
	fl = flow_udp(small.qp, 5400, 0, 0);
	too_long = dp_hw_counter(DEV, "rx_too_long");
	frame_to_dev(&f, 5400, 500, 41);
	peer_send(&f);
	frame_to_dev(&f, 5400, 50, 42);
	peer_send(&f);
	rq_got(&small, &f, true, "after a frame too long for the WQE, the next one");
	tap_ok(dp_hw_counter(DEV, "rx_too_long") == too_long + 1,
	       "rx_too_long counted the long one");
	tap_ok(qp_state(small.qp) == IBV_QPS_RTS, "the QP is still in RTS");
	ibv_destroy_flow(fl);
	rq_close(&small);
}

/* receives until the CQ stays empty for 500 ms; false on an error CQE */
static bool rq_drain(struct rq *r, int *got)
{
	struct ibv_wc wc;

	*got = 0;
	while (dp_poll(r->cq, &wc, 1, 500) == 1) {
		if (wc.status != IBV_WC_SUCCESS)
			return false;
		rq_post(r, (int)wc.wr_id);
		(*got)++;
	}
	return true;
}

/*
 * Flows made and destroyed while frames pour in, beside one that stays
 * (priority 5): the list changes under the hook.  How many frames arrive
 * depends on the receive WQEs' pace (the rest are counted drops); what
 * arrives must be whole and the QP must stay up.
 */
static void test_churn(struct rq *a)
{
	struct ibv_flow *keep = flow_udp(a->qp, 5500, 5, 0);
	pid_t pid = peer_flood(5500, 20000);
	int i, made = 0, got = 0, st;
	bool whole;

	for (i = 0; i < 200; i++) {
		struct ibv_flow *fl = flow_udp(a->qp, 5500, (uint16_t)(i % 3),
					       IBV_FLOW_ATTR_FLAGS_DONT_TRAP);

		made += fl != NULL;
		usleep(500);
		if (fl)
			ibv_destroy_flow(fl);
	}
	waitpid(pid, &st, 0);
	tap_ok(keep && made == 200,
	       "200 flows made and destroyed beside a lasting one, under a flood");
	/* drained first: the count printed is the one checked */
	whole = rq_drain(a, &got);
	tap_ok(whole && got > 0 && qp_state(a->qp) == IBV_QPS_RTS,
	       "what they took arrived whole, the QP still in RTS (%d frames)",
	       got);
	if (keep)
		ibv_destroy_flow(keep);
}

/*
 * A process with a raw QP, flows, counters and an RSS QP over WQs is
 * killed (SIGKILL) while frames pour in: everything it had goes.
 */
static void test_kill(void)
{
	char before[512], after[512];
	int pfd[2], st;
	pid_t child, flood;
	char c;

	res_snapshot(DEV, before, sizeof(before));
	if (pipe(pfd))
		return;
	child = fork();
	if (child == 0) {
		struct rq q;
		struct rss r;
		struct ibv_counters_init_attr ia = {};
		struct ibv_counter_attach_attr pk = {};
		struct ibv_counters *ctr;

		close(pfd[0]);
		ctx = test_open(DEV);
		pd = ibv_alloc_pd(ctx);
		rq_open(&q, BUF);
		ctr = ibv_create_counters(ctx, &ia);
		ibv_attach_counters_point_flow(ctr, &pk, NULL);
		flow_udp_counted(q.qp, 5900, ctr);
		flow_kind(q.qp, IBV_FLOW_ATTR_SNIFFER);
		if (rss_open(&r))
			flow_udp(r.qp, 5901, 0, 0);
		if (write(pfd[1], "r", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(pfd[1]);
	tap_ok(read(pfd[0], &c, 1) == 1, "a child with raw QPs, flows, "
	       "counters, WQs and an RSS QP");
	close(pfd[0]);
	flood = peer_flood(5900, 5000);
	usleep(50000);
	kill(child, SIGKILL);
	waitpid(child, &st, 0);
	waitpid(flood, &st, 0);
	res_snapshot(DEV, after, sizeof(after));
	tap_ok(!strcmp(before, after),
	       "killed under a flood: its resources are gone (%s)", after);
}

/* the netdev goes away under a flow and a flood */
static void test_unplug(void)
{
	struct rq u;
	struct ibv_flow *fl;
	pid_t pid;
	int st;

	rq_open(&u, BUF);
	fl = flow_udp(u.qp, 5600, 0, 0);
	pid = peer_flood(5600, 20000);
	usleep(20000);
	tap_ok(!dp_sh("ip link del " NDEV), "ip link del " NDEV
	       " under a flow and a flood");
	waitpid(pid, &st, 0);
	tap_ok(!dp_sh("for i in $(seq 100); do [ -e /sys/class/infiniband/"
		      DEV " ] || exit 0; sleep 0.1; done; exit 1"),
	       DEV " went away with its netdev");
	/* the objects are gone with the device; freeing them still works */
	if (fl)
		ibv_destroy_flow(fl);
	rq_close(&u);
}

static bool setup(void)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET,
				   .sll_protocol = htons(ETH_P_ALL) };

	dp_sh("rdma link del " DEV " 2>/dev/null; ip link del " NDEV
	      " 2>/dev/null");
	if (dp_sh("ip link add " NDEV " address 02:00:00:00:09:01 type veth "
		  "peer name " PEER " address 02:00:00:00:09:02 && "
		  "sysctl -qw net.ipv6.conf." NDEV ".disable_ipv6=1 "
		  "net.ipv6.conf." PEER ".disable_ipv6=1 && "
		  "ip addr add 198.18.9.1/24 dev " NDEV " && "
		  "ip addr add 198.18.9.2/24 dev " PEER " && "
		  "sysctl -qw net.ipv4.conf." NDEV ".accept_local=1 "
		  "net.ipv4.conf." NDEV ".rp_filter=0 && "
		  "ip link set " NDEV " up && ip link set " PEER " up && "
		  "rdma link add " DEV " type rxe2 netdev " NDEV))
		return false;
	peer_ifindex = (int)if_nametoindex(PEER);
	sll.sll_ifindex = peer_ifindex;
	psock = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	if (psock < 0 || bind(psock, (struct sockaddr *)&sll, sizeof(sll)))
		return false;
	ctx = test_open(DEV);
	pd = ibv_alloc_pd(ctx);
	return pd != NULL;
}

/* whatever the peer's stack said meanwhile (ARP...) is not for us */
static void peer_drain(void)
{
	uint8_t b[BUF];

	while (peer_recv(b, sizeof(b), 0) >= 0)
		;
}

int main(void)
{
	char before[512], after[512];
	struct rq a, b, c;

	if (!setup())
		tap_bail("veth " NDEV "/" PEER " with " DEV ": %s",
			 strerror(errno));
	res_snapshot(DEV, before, sizeof(before));
	test_caps();
	rq_open(&a, BUF);
	rq_open(&b, BUF);
	rq_open(&c, BUF);
	peer_drain();
	test_normal(&a);
	peer_drain();
	test_send(&a);
	test_priority(&a, &b, &c);
	test_drop(&a);
	test_headers(&a);
	peer_drain();
	test_hostile(&a);
	test_roce_to_raw(&a);
	test_gso(&c);
	test_spec_sizes(&a);
	test_counters(&a);
	test_flow_tag();
	test_loopback(&a, &b, &c);
	test_loopback_rss(&a);
	test_loopback_ts(&a);
	test_rss();
	test_churn(&a);
	test_kill();
	rq_close(&c);
	rq_close(&b);
	rq_close(&a);
	res_snapshot(DEV, after, sizeof(after));
	tap_ok(!strcmp(before, after), "resources back where they were (%s)",
	       after);
	test_unplug();
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	close(psock);
	dp_sh("rdma link del " DEV " 2>/dev/null; ip link del " NDEV
	      " 2>/dev/null");
	return tap_done();
}
