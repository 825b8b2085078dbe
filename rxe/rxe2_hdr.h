/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rxe2: InfiniBand transport headers as carried by RoCEv2 (IBTA vol. 1
 * chapter 9, RoCEv2 annex A17): BTH and the extended transport headers,
 * and the table of opcodes this device speaks.
 */
#ifndef RXE2_HDR_H
#define RXE2_HDR_H

#include <linux/types.h>

#define RXE2_ICRC_LEN		4
#define RXE2_PSN_MASK		0xffffffu
#define RXE2_QPN_MASK		0xffffffu
#define RXE2_DEFAULT_PKEY	0xffff
#define RXE2_GSI_QKEY		0x80010000u

/* Base Transport Header, 12 bytes */
struct rxe2_bth {
	u8 opcode;
	u8 flags;		/* SE, M, PadCnt(2), TVer(4) */
	__be16 pkey;
	__be32 qpn;		/* resv8a (FECN, BECN) then DestQP */
	__be32 apsn;		/* AckReq, resv7, PSN */
};

#define RXE2_BTH_SE		0x80
#define RXE2_BTH_MIG		0x40
#define RXE2_BTH_PAD_SHIFT	4
#define RXE2_BTH_PAD_MASK	0x30
#define RXE2_BTH_TVER_MASK	0x0f
#define RXE2_BTH_ACKREQ		0x80000000u

/* RDMA Extended Transport Header, 16 bytes */
struct rxe2_reth {
	__be64 va;
	__be32 rkey;
	__be32 len;
} __packed;

/* ACK Extended Transport Header, 4 bytes: syndrome then MSN */
struct rxe2_aeth {
	__be32 smsn;
};

#define RXE2_AETH_ACK		0x00	/* | credit count */
#define RXE2_AETH_RNR		0x20	/* | timer code */
#define RXE2_AETH_NAK		0x60	/* | NAK code */
#define RXE2_AETH_TYPE_MASK	0x60
#define RXE2_AETH_VAL_MASK	0x1f
#define RXE2_AETH_CREDIT_INVALID 0x1f	/* end-to-end flow control unused */

/*
 * What a packet handed over locally (no skb) would have been on the wire,
 * BTH to ICRC, for the sent_bytes and rcvd_bytes counters: an ACK; a
 * request of len bytes of headers and payload (headers are multiples of
 * four bytes, so the pad rounds the whole up).
 */
#define RXE2_ACK_WIRE_LEN	(sizeof(struct rxe2_bth) + \
				 sizeof(struct rxe2_aeth) + RXE2_ICRC_LEN)
#define RXE2_REQ_WIRE_LEN(len)	(ALIGN(len, 4) + RXE2_ICRC_LEN)

enum rxe2_nak_code {
	RXE2_NAK_PSN_SEQ	= 0,
	RXE2_NAK_INV_REQ	= 1,
	RXE2_NAK_REM_ACCESS	= 2,
	RXE2_NAK_REM_OP		= 3,
	RXE2_NAK_INV_RD_REQ	= 4,
};

/* Atomic Extended Transport Header, 28 bytes */
struct rxe2_atmeth {
	__be64 va;
	__be32 rkey;
	__be64 swap_add;
	__be64 cmp;
} __packed;

/* Atomic Acknowledge Extended Transport Header, 8 bytes */
struct rxe2_atmack {
	__be64 orig;
} __packed;

/*
 * The operand of an atomic (FETCH_ADD, CMP_SWP, and IBTA 1.5's ATOMIC
 * WRITE): one 64-bit word, at an address aligned to its size.  The
 * operation fixes the length: the AtomicETH carries none, ATOMIC WRITE's
 * RETH must say this one, and the requester's SGEs take the original
 * value of this size.
 */
#define RXE2_ATOMIC_LEN		8

/*
 * FLUSH Extended Transport Header (IBTA 1.5), 4 bytes: placement type
 * in bits 3..0, selectivity level in bits 5..4, the rest reserved.
 */
struct rxe2_feth {
	__be32 bits;
};

#define RXE2_FETH_PLT_MASK	0x0f
#define RXE2_FETH_SEL_SHIFT	4
#define RXE2_FETH_SEL_MASK	0x30

/*
 * XRC Extended Transport Header, 4 bytes: resv8 then the XRC SRQ number
 * of the target.  Every XRC request carries it, right after the BTH;
 * responses do not.
 */
struct rxe2_xrceth {
	__be32 srqn;
};

#define RXE2_XRC_SRQN_MASK	0xffffffu

/* Datagram Extended Transport Header, 8 bytes */
struct rxe2_deth {
	__be32 qkey;
	__be32 sqp;		/* resv8 then SrcQP */
};

/* ImmDt and IETH are a single big-endian word each */

/* opcodes: the transport in bits 7..5, the operation in bits 4..0 */
#define RXE2_TRANSPORT_RC	0x00
#define RXE2_TRANSPORT_UC	0x20
#define RXE2_TRANSPORT_UD	0x60
#define RXE2_TRANSPORT_XRC	0xa0	/* RC's operations, 0xa0 + RC opcode */
#define RXE2_TRANSPORT_MASK	0xe0

enum rxe2_opcode {
	RXE2_OP_SEND_FIRST		= 0x00,
	RXE2_OP_SEND_MIDDLE		= 0x01,
	RXE2_OP_SEND_LAST		= 0x02,
	RXE2_OP_SEND_LAST_IMM		= 0x03,
	RXE2_OP_SEND_ONLY		= 0x04,
	RXE2_OP_SEND_ONLY_IMM		= 0x05,
	RXE2_OP_WRITE_FIRST		= 0x06,
	RXE2_OP_WRITE_MIDDLE		= 0x07,
	RXE2_OP_WRITE_LAST		= 0x08,
	RXE2_OP_WRITE_LAST_IMM		= 0x09,
	RXE2_OP_WRITE_ONLY		= 0x0a,
	RXE2_OP_WRITE_ONLY_IMM		= 0x0b,
	RXE2_OP_READ_REQ		= 0x0c,
	RXE2_OP_READ_RESP_FIRST		= 0x0d,
	RXE2_OP_READ_RESP_MIDDLE	= 0x0e,
	RXE2_OP_READ_RESP_LAST		= 0x0f,
	RXE2_OP_READ_RESP_ONLY		= 0x10,
	RXE2_OP_ACK			= 0x11,
	RXE2_OP_ATOMIC_ACK		= 0x12,
	RXE2_OP_CMP_SWAP		= 0x13,
	RXE2_OP_FETCH_ADD		= 0x14,
	RXE2_OP_SEND_LAST_INV		= 0x16,
	RXE2_OP_SEND_ONLY_INV		= 0x17,
	RXE2_OP_FLUSH			= 0x1c,	/* IBTA 1.5, RC only */
	RXE2_OP_ATOMIC_WRITE		= 0x1d,	/* IBTA 1.5, RC only */
};

/* what an opcode carries and means (rxe2_opcode.c holds the table) */
enum rxe2_opf {
	RXE2_OPF_RETH		= 1 << 0,
	RXE2_OPF_AETH		= 1 << 1,
	RXE2_OPF_ATMETH		= 1 << 2,
	RXE2_OPF_ATMACK		= 1 << 3,
	RXE2_OPF_IMM		= 1 << 4,
	RXE2_OPF_IETH		= 1 << 5,
	RXE2_OPF_DETH		= 1 << 6,
	RXE2_OPF_PAYLOAD	= 1 << 7,
	RXE2_OPF_FIRST		= 1 << 8,	/* first or only */
	RXE2_OPF_LAST		= 1 << 9,	/* last or only */
	RXE2_OPF_REQ		= 1 << 10,	/* to the responder */
	RXE2_OPF_SEND		= 1 << 11,
	RXE2_OPF_WRITE		= 1 << 12,
	RXE2_OPF_READ		= 1 << 13,
	RXE2_OPF_ATOMIC		= 1 << 14,
	RXE2_OPF_VALID		= 1 << 15,
	RXE2_OPF_FETH		= 1 << 16,
	RXE2_OPF_PLACE		= 1 << 17,	/* ATOMIC WRITE or FLUSH */
	RXE2_OPF_XRCETH		= 1 << 18,	/* an XRC request */
};

struct rxe2_opinfo {
	u32 flags;		/* enum rxe2_opf */
	u8 hdr_len;		/* BTH and every extended header */
};

extern const struct rxe2_opinfo rxe2_opinfo[256];

/* offsets of the extended headers after the BTH, in wire order */
static inline unsigned int rxe2_ext_off(u32 flags, enum rxe2_opf which)
{
	unsigned int off = sizeof(struct rxe2_bth);

	/* DETH (UD) or XRCETH (XRC requests) comes first; never both */
	if (which == RXE2_OPF_DETH || which == RXE2_OPF_XRCETH)
		return off;
	if (flags & RXE2_OPF_DETH)
		off += sizeof(struct rxe2_deth);
	if (flags & RXE2_OPF_XRCETH)
		off += sizeof(struct rxe2_xrceth);
	/* FLUSH: the FETH comes before the RETH */
	if (which == RXE2_OPF_FETH)
		return off;
	if (flags & RXE2_OPF_FETH)
		off += sizeof(struct rxe2_feth);
	if (which == RXE2_OPF_RETH)
		return off;
	if (flags & RXE2_OPF_RETH)
		off += sizeof(struct rxe2_reth);
	if (which == RXE2_OPF_ATMETH)
		return off;
	if (flags & RXE2_OPF_ATMETH)
		off += sizeof(struct rxe2_atmeth);
	if (which == RXE2_OPF_AETH)
		return off;
	if (flags & RXE2_OPF_AETH)
		off += sizeof(struct rxe2_aeth);
	if (which == RXE2_OPF_ATMACK)
		return off;
	if (flags & RXE2_OPF_ATMACK)
		off += sizeof(struct rxe2_atmack);
	return off;	/* ImmDt or IETH */
}

/*
 * The operation of an RC, UC or XRC opcode as its RC opcode: XRC opcodes
 * are 0xa0 + the RC opcode, UC's 0x20 + it.  (Not for UD.)
 */
static inline u8 rxe2_op_of(u8 opcode)
{
	return opcode & ~RXE2_TRANSPORT_MASK;
}

/* 24-bit PSN arithmetic: a - b as a signed distance */
static inline int rxe2_psn_diff(u32 a, u32 b)
{
	return (int)((a - b) << 8) >> 8;
}

#endif /* RXE2_HDR_H */
