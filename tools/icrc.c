// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The RoCEv2 ICRC of rxe2dump and rxe2fuzz: see icrc.h. */
#include <string.h>

#include "icrc.h"

#define BTH_LEN		12
#define UDP_LEN		8
#define LRH_LEN		8	/* the ones that stand for the LRH */
#define IP_MAX		60	/* an IPv4 header with the most options */

static uint32_t crc_table[256];

void icrc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
		crc_table[i] = c;
	}
}

static uint32_t crc_add(uint32_t crc, const uint8_t *p, size_t len)
{
	while (len--)
		crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

uint32_t icrc(const uint8_t *ip, size_t iplen, bool ipv6,
	      const uint8_t *bth, size_t len)
{
	uint8_t hdr[LRH_LEN + IP_MAX + UDP_LEN + BTH_LEN];
	size_t n = LRH_LEN;
	uint32_t crc;

	memset(hdr, 0xff, LRH_LEN);
	memcpy(hdr + n, ip, iplen + UDP_LEN);
	if (ipv6) {
		hdr[n] |= 0x0f;			/* traffic class, low half */
		memset(hdr + n + 1, 0xff, 3);	/* and the flow label */
		hdr[n + 7] = 0xff;		/* hop limit */
	} else {
		hdr[n + 1] = 0xff;		/* TOS */
		hdr[n + 8] = 0xff;		/* TTL */
		hdr[n + 10] = hdr[n + 11] = 0xff;	/* header checksum */
	}
	n += iplen;
	hdr[n + 6] = hdr[n + 7] = 0xff;		/* UDP checksum */
	n += UDP_LEN;
	memcpy(hdr + n, bth, BTH_LEN);
	hdr[n + 4] = 0xff;			/* resv8a: FECN, BECN */
	n += BTH_LEN;
	crc = crc_add(~0u, hdr, n);
	crc = crc_add(crc, bth + BTH_LEN, len - BTH_LEN);
	return ~crc;
}
