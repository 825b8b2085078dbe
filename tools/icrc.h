/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The RoCEv2 invariant CRC (IBTA annex A17.3.3), shared by rxe2dump,
 * which checks it, and rxe2fuzz, which writes it into the frames it
 * mutates: CRC-32 (the reflected 0xedb88320 polynomial, Ethernet's) over
 * 8 bytes of ones standing for the LRH, the IP and UDP headers with their
 * variant fields as ones, the BTH with resv8a as ones, and the rest of
 * the packet up to the ICRC.
 */
#ifndef RXE2_TOOLS_ICRC_H
#define RXE2_TOOLS_ICRC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* fills the CRC table; once, before the first icrc() */
void icrc_init(void);

/*
 * The ICRC of a RoCEv2 packet.  ip: the IP header, iplen its length
 * (20 to 60 for IPv4 with its options, 40 for IPv6), the UDP header
 * right behind it; bth: the BTH, len the bytes from the BTH up to (not
 * including) the ICRC.
 */
uint32_t icrc(const uint8_t *ip, size_t iplen, bool ipv6,
	      const uint8_t *bth, size_t len);

#endif
