/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rxe2: tracepoints (system rdma_rxe2), for perf trace, trace-cmd or
 * tracefs: every packet sent and taken, QP state changes, go-back-N
 * rewinds, NAKs both ways and ODP page faults.  Off, each costs a
 * static branch.  docs/architecture.md, "Tracepoints", has an example.
 * Only numbers cross into the ring buffer: no pointers, no strings.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM rdma_rxe2

#if !defined(RXE2_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define RXE2_TRACE_H

#include <linux/tracepoint.h>

/* a packet: dev is the ib_device index, qpn the BTH's destination QP */
DECLARE_EVENT_CLASS(rxe2_pkt_class,
	TP_PROTO(u32 dev, u8 opcode, u32 qpn, u32 psn, u32 len),
	TP_ARGS(dev, opcode, qpn, psn, len),
	TP_STRUCT__entry(
		__field(u32, dev)
		__field(u8, opcode)
		__field(u32, qpn)
		__field(u32, psn)
		__field(u32, len)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->opcode = opcode;
		__entry->qpn = qpn;
		__entry->psn = psn;
		__entry->len = len;
	),
	TP_printk("dev %u opcode 0x%02x qpn 0x%06x psn %u len %u",
		  __entry->dev, __entry->opcode, __entry->qpn, __entry->psn,
		  __entry->len)
);

/* sent (to the network or handed over locally); len: BTH to ICRC */
DEFINE_EVENT(rxe2_pkt_class, rxe2_tx,
	TP_PROTO(u32 dev, u8 opcode, u32 qpn, u32 psn, u32 len),
	TP_ARGS(dev, opcode, qpn, psn, len));

/* taken by a QP after the header and ICRC checks */
DEFINE_EVENT(rxe2_pkt_class, rxe2_rx,
	TP_PROTO(u32 dev, u8 opcode, u32 qpn, u32 psn, u32 len),
	TP_ARGS(dev, opcode, qpn, psn, len));

TRACE_EVENT(rxe2_qp_state,
	TP_PROTO(u32 dev, u32 qpn, int from, int to),
	TP_ARGS(dev, qpn, from, to),
	TP_STRUCT__entry(
		__field(u32, dev)
		__field(u32, qpn)
		__field(int, from)
		__field(int, to)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->qpn = qpn;
		__entry->from = from;
		__entry->to = to;
	),
	TP_printk("dev %u qpn 0x%06x %s -> %s", __entry->dev, __entry->qpn,
		  __print_symbolic(__entry->from, { 0, "RESET" }, { 1, "INIT" },
				   { 2, "RTR" }, { 3, "RTS" }, { 4, "SQD" },
				   { 5, "SQE" }, { 6, "ERR" }),
		  __print_symbolic(__entry->to, { 0, "RESET" }, { 1, "INIT" },
				   { 2, "RTR" }, { 3, "RTS" }, { 4, "SQD" },
				   { 5, "SQE" }, { 6, "ERR" }))
);

/* go-back-N: the requester resends from psn (it had sent up to next) */
TRACE_EVENT(rxe2_retransmit,
	TP_PROTO(u32 dev, u32 qpn, u32 psn, u32 next),
	TP_ARGS(dev, qpn, psn, next),
	TP_STRUCT__entry(
		__field(u32, dev)
		__field(u32, qpn)
		__field(u32, psn)
		__field(u32, next)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->qpn = qpn;
		__entry->psn = psn;
		__entry->next = next;
	),
	TP_printk("dev %u qpn 0x%06x from psn %u (next was %u)",
		  __entry->dev, __entry->qpn, __entry->psn, __entry->next)
);

/* an RNR NAK or NAK (AETH syndrome), sent or received by QP qpn */
TRACE_EVENT(rxe2_nak,
	TP_PROTO(u32 dev, u32 qpn, u32 psn, u8 syndrome, bool sent),
	TP_ARGS(dev, qpn, psn, syndrome, sent),
	TP_STRUCT__entry(
		__field(u32, dev)
		__field(u32, qpn)
		__field(u32, psn)
		__field(u8, syndrome)
		__field(bool, sent)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->qpn = qpn;
		__entry->psn = psn;
		__entry->syndrome = syndrome;
		__entry->sent = sent;
	),
	TP_printk("dev %u qpn 0x%06x %s psn %u syndrome 0x%02x", __entry->dev,
		  __entry->qpn, __entry->sent ? "sent" : "received",
		  __entry->psn, __entry->syndrome)
);

/* an access to an ODP MR that had to fault pages in (or could not) */
TRACE_EVENT(rxe2_odp_fault,
	TP_PROTO(u32 dev, u32 lkey, u64 iova, u64 len, int ret),
	TP_ARGS(dev, lkey, iova, len, ret),
	TP_STRUCT__entry(
		__field(u32, dev)
		__field(u32, lkey)
		__field(u64, iova)
		__field(u64, len)
		__field(int, ret)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->lkey = lkey;
		__entry->iova = iova;
		__entry->len = len;
		__entry->ret = ret;
	),
	TP_printk("dev %u lkey 0x%08x iova 0x%llx len %llu %s %d",
		  __entry->dev, __entry->lkey, __entry->iova, __entry->len,
		  __entry->ret < 0 ? "error" : "pages", __entry->ret)
);

#endif /* RXE2_TRACE_H */

/* the module's own directory: set by Kbuild for rxe2_trace.o */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE rxe2_trace
#include <trace/define_trace.h>
