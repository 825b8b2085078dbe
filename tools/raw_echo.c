// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * raw_echo: a UDP echo server on a raw packet QP, the example of
 * docs/architecture.md ("Raw packet QPs and flow steering") that
 * `make demo` runs.
 *
 *   raw_echo -d DEV -p PORT [-n COUNT]
 *
 * Two flows on the QP: IPv4 + UDP to PORT with DONT_TRAP (the QP gets
 * the datagram), and the same match with the drop action behind it (so
 * the kernel stack does not: no ICMP port unreachable goes back).  Each
 * datagram goes back with MACs, addresses and ports swapped; the device
 * writes the checksums (IBV_SEND_IP_CSUM).  Exits after COUNT echoes
 * (default 3), or after 30 s without one.  Needs CAP_NET_RAW.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#define NBUF	16
#define BUFSZ	2048

/* the specs follow the attribute back to back, as libibverbs reads them */
struct echo_flow {
	struct ibv_flow_attr attr;
	struct ibv_flow_spec_ipv4 ip;
	struct ibv_flow_spec_tcp_udp udp;
	struct ibv_flow_spec_action_drop drop;	/* the second flow only */
};

_Static_assert(offsetof(struct echo_flow, drop) ==
	       sizeof(struct ibv_flow_attr) + sizeof(struct ibv_flow_spec_ipv4) +
	       sizeof(struct ibv_flow_spec_tcp_udp), "specs back to back");

static struct ibv_flow *echo_flow(struct ibv_qp *qp, uint16_t port,
				  bool drop)
{
	struct echo_flow f = {
		.attr = {
			.type = IBV_FLOW_ATTR_NORMAL,
			.size = sizeof(f.attr) + sizeof(f.ip) + sizeof(f.udp),
			.priority = drop ? 1 : 0,
			.num_of_specs = 2,
			.port = 1,
			.flags = drop ? 0 : IBV_FLOW_ATTR_FLAGS_DONT_TRAP,
		},
		.ip = { .type = IBV_FLOW_SPEC_IPV4, .size = sizeof(f.ip) },
		.udp = {
			.type = IBV_FLOW_SPEC_UDP,
			.size = sizeof(f.udp),
			.val.dst_port = htons(port),
			.mask.dst_port = 0xffff,
		},
		.drop = {
			.type = IBV_FLOW_SPEC_ACTION_DROP,
			.size = sizeof(f.drop),
		},
	};

	if (drop) {
		f.attr.size += sizeof(f.drop);
		f.attr.num_of_specs++;
	}
	return ibv_create_flow(qp, &f.attr);
}

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;

	for (int i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	return ctx;
}

static struct ibv_qp *raw_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq,
		.recv_cq = cq,
		.qp_type = IBV_QPT_RAW_PACKET,
		.cap = { .max_send_wr = NBUF, .max_recv_wr = NBUF,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	if (!qp)
		return NULL;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PORT))
		return NULL;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		return NULL;
	a.qp_state = IBV_QPS_RTS;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE) ? NULL : qp;
}

static int post_recv(struct ibv_qp *qp, struct ibv_mr *mr, uint64_t i)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)mr->addr + i * BUFSZ,
		.length = BUFSZ,
		.lkey = mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

static void swap(uint8_t *a, uint8_t *b, size_t n)
{
	uint8_t t[16];

	memcpy(t, a, n);
	memcpy(a, b, n);
	memcpy(b, t, n);
}

/*
 * Turn an Ethernet/IPv4/UDP frame around in place; false if it is not
 * one.  The device writes both checksums (IBV_SEND_IP_CSUM).
 */
static bool turn_around(uint8_t *f, uint32_t len)
{
	uint8_t *ip = f + 14, *udp;
	uint32_t ihl;

	if (len < 14 + 20 + 8 || f[12] != 0x08 || f[13] != 0x00)
		return false;
	ihl = (ip[0] & 0xf) * 4;
	if (ihl < 20 || 14 + ihl + 8 > len || ip[9] != 17)
		return false;
	udp = ip + ihl;
	swap(f, f + 6, 6);		/* MACs */
	swap(ip + 12, ip + 16, 4);	/* addresses */
	swap(udp, udp + 2, 2);		/* ports */
	ip[8] = 64;			/* a fresh TTL */
	return true;
}

static int echo(struct ibv_qp *qp, struct ibv_mr *mr, struct ibv_wc *wc)
{
	uint8_t *f = (uint8_t *)mr->addr + wc->wr_id * BUFSZ;
	struct ibv_sge sge = {
		.addr = (uintptr_t)f,
		.length = wc->byte_len,
		.lkey = mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = wc->wr_id,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED | IBV_SEND_IP_CSUM,
	};
	struct ibv_send_wr *bad;

	const uint8_t *ip = f + 14, *udp;

	if (!turn_around(f, wc->byte_len))
		return post_recv(qp, mr, wc->wr_id);	/* not ours */
	/* turned around: the sender is the destination now */
	udp = ip + (ip[0] & 0xf) * 4;
	printf("raw_echo: %u bytes from %u.%u.%u.%u:%u, echoed\n",
	       (udp[4] << 8 | udp[5]) - 8, ip[16], ip[17], ip[18], ip[19],
	       udp[2] << 8 | udp[3]);
	return ibv_post_send(qp, &wr, &bad);
}

int main(int argc, char **argv)
{
	const char *dev = NULL;
	int port = 0, count = 3, done = 0, c;
	struct ibv_flow *copy, *steal;
	struct ibv_comp_channel *ch;
	struct ibv_context *ctx;
	struct ibv_mr *mr;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	void *buf;

	while ((c = getopt(argc, argv, "d:p:n:")) != -1) {
		switch (c) {
		case 'd': dev = optarg; break;
		case 'p': port = atoi(optarg); break;
		case 'n': count = atoi(optarg); break;
		default: dev = NULL; optind = argc; break;
		}
	}
	if (!dev || port <= 0 || port > 65535 || count <= 0) {
		fprintf(stderr, "usage: raw_echo -d DEV -p PORT [-n COUNT]\n");
		return 2;
	}
	ctx = open_dev(dev);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	ch = pd ? ibv_create_comp_channel(ctx) : NULL;
	cq = ch ? ibv_create_cq(ctx, 2 * NBUF, NULL, ch, 0) : NULL;
	buf = cq ? calloc(NBUF, BUFSZ) : NULL;
	mr = buf ? ibv_reg_mr(pd, buf, NBUF * BUFSZ, IBV_ACCESS_LOCAL_WRITE) :
		   NULL;
	qp = mr ? raw_qp(pd, cq) : NULL;
	if (!qp) {
		perror("raw_echo: device, PD, CQ, MR or raw packet QP");
		return 1;
	}
	for (uint64_t i = 0; i < NBUF; i++)
		if (post_recv(qp, mr, i))
			return 1;
	copy = echo_flow(qp, (uint16_t)port, false);
	steal = copy ? echo_flow(qp, (uint16_t)port, true) : NULL;
	if (!steal) {
		perror("raw_echo: ibv_create_flow");
		return 1;
	}
	printf("raw_echo: UDP port %d on %s\n", port, dev);
	fflush(stdout);

	while (done < count) {
		struct pollfd p = { .fd = ch->fd, .events = POLLIN };
		struct ibv_wc wc;
		struct ibv_cq *ecq;
		void *ectx;
		int n;

		ibv_req_notify_cq(cq, 0);
		while ((n = ibv_poll_cq(cq, 1, &wc)) > 0) {
			if (wc.status != IBV_WC_SUCCESS) {
				fprintf(stderr, "raw_echo: %s\n",
					ibv_wc_status_str(wc.status));
				return 1;
			}
			if (wc.opcode == IBV_WC_RECV) {
				if (echo(qp, mr, &wc))
					return 1;
			} else {
				done++;		/* an echo sent: its buffer back */
				if (post_recv(qp, mr, wc.wr_id))
					return 1;
				fflush(stdout);
			}
		}
		if (n < 0 || done >= count)
			break;
		if (poll(&p, 1, 30000) != 1) {
			fprintf(stderr, "raw_echo: 30 s without a datagram\n");
			return 1;
		}
		if (ibv_get_cq_event(ch, &ecq, &ectx))
			return 1;
		ibv_ack_cq_events(ecq, 1);
	}
	ibv_destroy_flow(steal);
	ibv_destroy_flow(copy);
	ibv_destroy_qp(qp);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_destroy_comp_channel(ch);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	free(buf);
	return 0;
}
