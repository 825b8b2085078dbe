// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2: the invariant CRC of RoCEv2 (IBTA annex A17.3.3).  CRC-32 (the
 * Ethernet polynomial, seed all ones, result inverted, sent least
 * significant byte first) over: 8 bytes of ones standing for the LRH,
 * the IP header with its variant fields (IPv4 TOS, TTL, checksum; IPv6
 * traffic class, flow label, hop limit) set to ones, the UDP header with
 * its checksum set to ones, the BTH with its resv8a byte (FECN/BECN) set
 * to ones, then the rest of the packet up to the ICRC.
 */
#include <linux/crc32.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>

#include "rxe2_wire.h"

/* the CRC before its inversion: rxe2_icrc() and rxe2_icrc_rxe_flush() */
static u32 rxe2_icrc_crc(struct sk_buff *skb, bool ipv6, unsigned int bth_off,
			 unsigned int len)
{
	u8 ps[8 + sizeof(struct ipv6hdr) + sizeof(struct udphdr) +
	      sizeof(struct rxe2_bth)];
	unsigned int iplen = ipv6 ? sizeof(struct ipv6hdr) :
				    sizeof(struct iphdr);
	unsigned int n = 8 + iplen + sizeof(struct udphdr);
	struct udphdr *uh;
	struct rxe2_bth *bth;
	u32 crc;

	memset(ps, 0xff, 8);
	memcpy(ps + 8, skb_network_header(skb), iplen + sizeof(struct udphdr));
	if (ipv6) {
		struct ipv6hdr *h = (struct ipv6hdr *)(ps + 8);

		h->priority = 0xf;
		memset(h->flow_lbl, 0xff, sizeof(h->flow_lbl));
		h->hop_limit = 0xff;
	} else {
		struct iphdr *h = (struct iphdr *)(ps + 8);

		h->tos = 0xff;
		h->ttl = 0xff;
		h->check = (__force __sum16)0xffff;	/* all ones: any byte order */
	}
	uh = (struct udphdr *)(ps + 8 + iplen);
	uh->check = (__force __sum16)0xffff;
	memcpy(ps + n, skb->data + bth_off, sizeof(*bth));
	bth = (struct rxe2_bth *)(ps + n);
	bth->qpn |= htonl(0xff000000u);
	n += sizeof(*bth);

	crc = crc32_le(~0u, ps, n);
	return crc32_le(crc, skb->data + bth_off + sizeof(*bth),
			len - sizeof(*bth));
}

/* rxe2_icrc() - the ICRC of a linear skb whose network header is set */
u32 rxe2_icrc(struct sk_buff *skb, bool ipv6, unsigned int bth_off,
	      unsigned int len)
{
	return ~rxe2_icrc_crc(skb, ipv6, bth_off, len);
}

/*
 * The ICRC rdma_rxe gives a FLUSH (Linux 6.2 to 6.12 at least): its
 * opcode table has no payload offset for FLUSH, so after the headers it
 * runs the CRC over the packet again from the BTH, raw.  rdma_rxe drops
 * a FLUSH with the IBTA's ICRC as corrupt; rxe2 accepts both and sends
 * this one when the module parameter flush_icrc_rxe is set (rxe2_tx.c).
 */
u32 rxe2_icrc_rxe_flush(struct sk_buff *skb, bool ipv6, unsigned int bth_off,
			unsigned int len)
{
	return ~crc32_le(rxe2_icrc_crc(skb, ipv6, bth_off, len),
			 skb->data + bth_off, len);
}
