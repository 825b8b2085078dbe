// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2: the table of the opcodes this device speaks: for each, what it
 * carries and means (enum rxe2_opf) and the length of its headers.  The
 * wire formats themselves are rxe2_hdr.h's.
 */
#include "rxe2_hdr.h"

#define B	sizeof(struct rxe2_bth)
#define RETH	sizeof(struct rxe2_reth)
#define AETH	sizeof(struct rxe2_aeth)
#define ATM	sizeof(struct rxe2_atmeth)
#define ATMACK	sizeof(struct rxe2_atmack)
#define DETH	sizeof(struct rxe2_deth)
#define FETH	sizeof(struct rxe2_feth)
#define IMM	4

#define XRCETH	sizeof(struct rxe2_xrceth)

#define F(x)	RXE2_OPF_##x
#define OP(f, l) { .flags = (f) | RXE2_OPF_VALID, .hdr_len = (l) }
/* a request; x: an XRC request, with the XRCETH */
#define REQ_OP(f, l, x)							\
	OP((f) | F(REQ) | ((x) ? F(XRCETH) : 0), (l) + ((x) ? XRCETH : 0))
#define SEND_OP(f, l, x) REQ_OP((f) | F(SEND) | F(PAYLOAD), l, x)
#define WRITE_OP(f, l, x) REQ_OP((f) | F(WRITE) | F(PAYLOAD), l, x)
#define RC_UC_OPS(base, x)						\
	[(base) + RXE2_OP_SEND_FIRST] = SEND_OP(F(FIRST), B, x),	\
	[(base) + RXE2_OP_SEND_MIDDLE] = SEND_OP(0, B, x),		\
	[(base) + RXE2_OP_SEND_LAST] = SEND_OP(F(LAST), B, x),		\
	[(base) + RXE2_OP_SEND_LAST_IMM] =				\
		SEND_OP(F(LAST) | F(IMM), B + IMM, x),			\
	[(base) + RXE2_OP_SEND_ONLY] =					\
		SEND_OP(F(FIRST) | F(LAST), B, x),			\
	[(base) + RXE2_OP_SEND_ONLY_IMM] =				\
		SEND_OP(F(FIRST) | F(LAST) | F(IMM), B + IMM, x),	\
	[(base) + RXE2_OP_WRITE_FIRST] =				\
		WRITE_OP(F(FIRST) | F(RETH), B + RETH, x),		\
	[(base) + RXE2_OP_WRITE_MIDDLE] = WRITE_OP(0, B, x),		\
	[(base) + RXE2_OP_WRITE_LAST] = WRITE_OP(F(LAST), B, x),	\
	[(base) + RXE2_OP_WRITE_LAST_IMM] =				\
		WRITE_OP(F(LAST) | F(IMM), B + IMM, x),			\
	[(base) + RXE2_OP_WRITE_ONLY] =					\
		WRITE_OP(F(FIRST) | F(LAST) | F(RETH), B + RETH, x),	\
	[(base) + RXE2_OP_WRITE_ONLY_IMM] =				\
		WRITE_OP(F(FIRST) | F(LAST) | F(RETH) | F(IMM),		\
			 B + RETH + IMM, x)

/*
 * What RC has beyond UC, for RC (base 0) and XRC (base 0xa0, x 1): the
 * same operations, an XRC request with its XRCETH.  The responses are
 * alike.
 */
#define RC_XRC_OPS(base, x)						\
	[(base) + RXE2_OP_READ_REQ] =					\
		REQ_OP(F(READ) | F(FIRST) | F(LAST) | F(RETH), B + RETH, x), \
	[(base) + RXE2_OP_READ_RESP_FIRST] =				\
		OP(F(READ) | F(FIRST) | F(AETH) | F(PAYLOAD), B + AETH), \
	[(base) + RXE2_OP_READ_RESP_MIDDLE] =				\
		OP(F(READ) | F(PAYLOAD), B),				\
	[(base) + RXE2_OP_READ_RESP_LAST] =				\
		OP(F(READ) | F(LAST) | F(AETH) | F(PAYLOAD), B + AETH),	\
	[(base) + RXE2_OP_READ_RESP_ONLY] =				\
		OP(F(READ) | F(FIRST) | F(LAST) | F(AETH) | F(PAYLOAD),	\
		   B + AETH),						\
	[(base) + RXE2_OP_ACK] = OP(F(FIRST) | F(LAST) | F(AETH), B + AETH), \
	[(base) + RXE2_OP_ATOMIC_ACK] =					\
		OP(F(ATOMIC) | F(FIRST) | F(LAST) | F(AETH) | F(ATMACK), \
		   B + AETH + ATMACK),					\
	[(base) + RXE2_OP_CMP_SWAP] =					\
		REQ_OP(F(ATOMIC) | F(FIRST) | F(LAST) | F(ATMETH), B + ATM, x), \
	[(base) + RXE2_OP_FETCH_ADD] =					\
		REQ_OP(F(ATOMIC) | F(FIRST) | F(LAST) | F(ATMETH), B + ATM, x), \
	[(base) + RXE2_OP_SEND_LAST_INV] =				\
		SEND_OP(F(LAST) | F(IETH), B + IMM, x),			\
	[(base) + RXE2_OP_SEND_ONLY_INV] =				\
		SEND_OP(F(FIRST) | F(LAST) | F(IETH), B + IMM, x),	\
	RC_UC_OPS(base, x)

const struct rxe2_opinfo rxe2_opinfo[256] = {
	RC_XRC_OPS(RXE2_TRANSPORT_RC, 0),
	RC_UC_OPS(RXE2_TRANSPORT_UC, 0),
	RC_XRC_OPS(RXE2_TRANSPORT_XRC, 1),
	/* IBTA 1.5, RC only: both are answered by an RDMA READ response */
	[RXE2_OP_FLUSH] = REQ_OP(F(PLACE) | F(FIRST) | F(LAST) | F(FETH) |
				 F(RETH), B + FETH + RETH, 0),
	[RXE2_OP_ATOMIC_WRITE] = REQ_OP(F(PLACE) | F(FIRST) | F(LAST) |
					F(RETH) | F(PAYLOAD), B + RETH, 0),
	[RXE2_TRANSPORT_UD + RXE2_OP_SEND_ONLY] =
		SEND_OP(F(FIRST) | F(LAST) | F(DETH), B + DETH, 0),
	[RXE2_TRANSPORT_UD + RXE2_OP_SEND_ONLY_IMM] =
		SEND_OP(F(FIRST) | F(LAST) | F(DETH) | F(IMM),
			B + DETH + IMM, 0),
};
