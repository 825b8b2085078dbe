/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * rxe2 user/kernel ABI: shared by the rdma_rxe2 kernel module and the
 * librxe2 libibverbs provider.  Every structure here crosses the
 * user/kernel boundary, either as uverbs driver udata or as memory the
 * kernel maps into the process (the queue rings).  The kernel treats all
 * of it as untrusted input.
 *
 * docs/architecture.md, "The queue ABI", explains the design.
 */
#ifndef RXE2_ABI_H
#define RXE2_ABI_H

#include <linux/types.h>
#include <rdma/ib_user_ioctl_cmds.h>

/*
 * uverbs ABI version reported by the device (ib_device_ops.uverbs_abi_ver).
 * Kept above every in-tree provider's accepted range: libibverbs falls
 * back to matching devices by name, and the stock rxe provider would take
 * a device called "rxe2_0" by its "rxe" prefix if the version fitted.
 */
#define RXE2_UVERBS_ABI_VERSION 32

/*
 * driver_id reported over netlink (RDMA_NLDEV_ATTR_UVERBS_DRIVER_ID).
 * Deliberately far outside the kernel's enum rdma_driver_id so it can
 * never collide with an in-tree driver, rdma_rxe included.
 */
#define RXE2_DRIVER_ID 0x52584532u /* "RXE2" */

/*
 * sysfs attribute of the ib_device (/sys/class/infiniband/<dev>/) that
 * the provider reads to confirm that a device is rxe2.  Its content is
 * "rxe2 <RXE2_UVERBS_ABI_VERSION>\n".
 */
#define RXE2_SYSFS_ABI_ATTR "rxe2_abi"

/* ------------------------------------------------------------------ */
/* Rings                                                               */
/* ------------------------------------------------------------------ */

/*
 * Every queue (SQ, RQ, SRQ, CQ) is one ring: a header followed by
 * num_slots fixed-size slots.  The kernel allocates it and the process
 * maps it with mmap(cmd_fd, mmap_offset, mmap_size).
 *
 * producer and consumer are free-running 32-bit counters; the slot of
 * index i is i & (num_slots - 1); the ring holds producer - consumer
 * entries, never more than num_slots.  Each side writes only its own
 * counter, with release semantics after the slot contents, and reads the
 * other's with acquire semantics.  The kernel keeps a private copy of
 * its own counter and never trusts the one in shared memory; a user
 * counter that claims more than num_slots entries is a broken queue.
 *
 * Who produces:  SQ, RQ, SRQ: the process;  CQ: the kernel.
 */
struct rxe2_ring_hdr {
	__u32 producer;
	__u32 flags;		/* RXE2_RING_F_*: written by the kernel only */
	__u32 reserved0[14];	/* producer and consumer on separate lines */
	__u32 consumer;
	__u32 reserved1[15];
};

/*
 * rxe2_ring_hdr.flags.  RXE2_RING_F_FLUSH is set on a QP's RQ ring once
 * the QP is in the error state and its RQ is being flushed; it is
 * cleared when the QP returns to RESET.  A process that posts receives
 * while it is set rings the send doorbell (POST_SEND with no work
 * request) after publishing its producer, so that the new WQEs complete
 * with WR_FLUSH_ERR at once instead of at the QP's next run.  Both sides
 * need a full barrier between their store and the load of the other's
 * word (producer then flags here, flags then producer in the kernel).
 * A kernel that never sets it is compatible with any provider.
 *
 * RXE2_RING_F_LIVE is set on a QP's SQ ring while the kernel's requester
 * is running and will read the producer again before it stops: a
 * process that publishes its producer and then finds it set (the same
 * full barrier between the two) may skip the doorbell.  A provider that
 * ignores it rings every time, as before.
 */
enum rxe2_ring_flags {
	RXE2_RING_F_FLUSH = 1 << 0,
	RXE2_RING_F_LIVE = 1 << 1,
};

#define RXE2_RING_DATA_OFFSET 128	/* first slot, from the ring start */

/* Where a ring is and how it is cut: part of every create response. */
struct rxe2_ring_info {
	__aligned_u64 mmap_offset;	/* mmap() offset on the context's fd */
	__u32 mmap_size;		/* bytes to map (page multiple) */
	__u32 num_slots;		/* power of two */
	__u32 slot_size;		/* bytes, multiple of 16 */
	__u32 reserved;
};

/* ------------------------------------------------------------------ */
/* Work queue entries                                                  */
/* ------------------------------------------------------------------ */

struct rxe2_sge {
	__aligned_u64 addr;
	__u32 length;
	__u32 lkey;
};

/*
 * A send WQE: a 64-byte header, then either num_sge rxe2_sge or, with
 * IB_UVERBS_SEND_INLINE in send_flags, inline_len bytes of payload.
 * opcode is enum ib_uverbs_wr_opcode; send_flags are the
 * enum ib_uverbs_send_flags bits (the values of ibv_send_flags).
 */
struct rxe2_send_wqe {
	__aligned_u64 wr_id;
	__u32 opcode;
	__u32 send_flags;
	__u32 num_sge;
	__u32 inline_len;
	__u32 ex;		/* imm_data (BE), invalidate_rkey, new rkey */
	__u32 xrc_srqn;		/* XRC_SEND: the target's XRC SRQ, else 0 */
	union {
		struct {
			__aligned_u64 remote_addr;
			__u32 rkey;
			__u32 reserved;
		} rdma;
		struct {
			__aligned_u64 remote_addr;
			__aligned_u64 compare_add;
			__aligned_u64 swap;
			__u32 rkey;
			__u32 reserved;
		} atomic;
		/*
		 * IB_UVERBS_WR_BIND_MW: the new rkey is in ex.  mw_rkey is
		 * the window's rkey before the bind (its index names the
		 * window); access is IB_UVERBS_ACCESS_* bits.  A type 1
		 * unbind has length 0 and mr_lkey 0.
		 */
		struct {
			__aligned_u64 addr;
			__aligned_u64 length;
			__u32 mr_lkey;
			__u32 mw_rkey;
			__u32 access;
			__u32 reserved;
		} bind_mw;
		/*
		 * RXE2_WR_ATOMIC_WRITE: data is the 8 bytes written, in
		 * memory order (they travel and land unchanged)
		 */
		struct {
			__aligned_u64 remote_addr;
			__u8 data[8];
			__u32 rkey;
			__u32 reserved;
		} atomic_write;
		/* RXE2_WR_FLUSH: type and level are enum rxe2_flush_* */
		struct {
			__aligned_u64 remote_addr;
			__aligned_u64 length;
			__u32 rkey;
			__u8 type;
			__u8 level;
			__u16 reserved;
		} flush;
		struct {
			__u32 ah_num;	/* from rxe2_create_ah_resp */
			__u32 remote_qpn;
			__u32 remote_qkey;
			__u32 reserved;
		} ud;
		__u8 raw[32];
	} wr;
	/* followed by struct rxe2_sge[num_sge] or inline data */
};

#define RXE2_SEND_WQE_HDR_SIZE 64

/*
 * IBTA 1.5 operations, with the values Linux 6.2 gave them (uverbs WR
 * and WC opcodes, access and capability bits); Linux 6.1's headers do
 * not have them.  Both are RC only and take no SGE.
 */
enum {
	RXE2_WR_FLUSH		= 14,	/* IB_UVERBS_WR_FLUSH */
	RXE2_WR_ATOMIC_WRITE	= 15,	/* IB_UVERBS_WR_ATOMIC_WRITE */
	RXE2_WC_FLUSH		= 8,	/* IB_UVERBS_WC_FLUSH */
	RXE2_WC_ATOMIC_WRITE	= 9,	/* IB_UVERBS_WC_ATOMIC_WRITE */
};

/*
 * Tag matching SRQs (IB_SRQT_TM): the completion opcodes, statuses and
 * wc_flags, with libibverbs' values (the kernel's enums lack them).
 */
enum {
	RXE2_WC_TM_ADD		= 130,	/* IBV_WC_TM_ADD */
	RXE2_WC_TM_DEL		= 131,
	RXE2_WC_TM_SYNC		= 132,
	RXE2_WC_TM_RECV		= 133,
	RXE2_WC_TM_NO_TAG	= 134,
	RXE2_WC_TM_ERR		= 22,	/* IBV_WC_TM_ERR, a status */
	RXE2_WC_TM_RNDV_INCOMPLETE = 23,
	RXE2_WC_F_TM_SYNC_REQ	= 1 << 4,	/* IBV_WC_TM_SYNC_REQ */
	RXE2_WC_F_TM_MATCH	= 1 << 5,
	RXE2_WC_F_TM_DATA_VALID	= 1 << 6,
};

/* FLUSH placement type (bits) and selectivity level */
enum rxe2_flush_type {
	RXE2_FLUSH_GLOBAL	= 1,
	RXE2_FLUSH_PERSISTENT	= 2,
};

enum rxe2_flush_level {
	RXE2_FLUSH_RANGE	= 0,
	RXE2_FLUSH_MR		= 1,
};

#define RXE2_ACCESS_FLUSH_GLOBAL	(1 << 8)
#define RXE2_ACCESS_FLUSH_PERSISTENT	(1 << 9)
#define RXE2_DEVICE_FLUSH_GLOBAL	(1ULL << 38)
#define RXE2_DEVICE_FLUSH_PERSISTENT	(1ULL << 39)
#define RXE2_DEVICE_ATOMIC_WRITE	(1ULL << 40)

/* A receive WQE (RQ and SRQ): a 16-byte header then num_sge rxe2_sge. */
struct rxe2_recv_wqe {
	__aligned_u64 wr_id;
	__u32 num_sge;
	__u32 reserved;
	/* followed by struct rxe2_sge[num_sge] */
};

#define RXE2_RECV_WQE_HDR_SIZE 16

/* ------------------------------------------------------------------ */
/* Completion queue entries                                            */
/* ------------------------------------------------------------------ */

/*
 * A CQE is 64 bytes.  status is enum ibv_wc_status (== enum
 * ib_wc_status), opcode is enum ibv_wc_opcode, wc_flags are ibv_wc_flags
 * bits.  A CQ whose slots are larger than 64 bytes carries inline
 * received data after the CQE (RXE2_CQE_F_INLINE, inline-receive; see
 * "Inline-receive" below for the slot layout).
 */
struct rxe2_cqe {
	__aligned_u64 wr_id;
	__u32 status;
	__u32 opcode;
	__u32 vendor_err;
	__u32 byte_len;
	/* imm_data (big endian), invalidated rkey, a raw frame's flow tag */
	__u32 ex;
	__u32 qp_num;
	__u32 src_qp;
	__u32 wc_flags;
	__u16 pkey_index;
	__u16 slid;
	__u8 sl;
	__u8 dlid_path_bits;
	__u8 port_num;
	__u8 flags;		/* RXE2_CQE_F_* */
	union {
		struct {
			/* RXE2_CQE_F_INLINE: SGEs in the slot */
			__u32 inline_num_sge;
			__u32 reserved;
		};
		/*
		 * A tag matching receive (RXE2_WC_TM_RECV) that matched:
		 * the TMH's tag; src_qp holds its app_ctx
		 */
		__aligned_u64 tm_tag;
	};
	/*
	 * CLOCK_MONOTONIC in ns when the device wrote the CQE, in a CQ
	 * created with IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION; else 0
	 */
	__aligned_u64 timestamp;
};

/*
 * sl of a UD receive CQE: the RoCE packet type, as mlx5 reports it and
 * UCX reads it (Annex 17 A17.4.5.1: a RoCEv2 UD completion says whether
 * the frame was IPv4 or IPv6): bit 3 a UDP header (RoCEv2), bits 2:0 the
 * L3 header.  An application learns from it where the 40-byte GRH area
 * holds the destination address.
 */
enum rxe2_cqe_roce_type {
	RXE2_CQE_ROCE_V2_IPV6 = 0x8 | 0x1,
	RXE2_CQE_ROCE_V2_IPV4 = 0x8 | 0x2,
};

enum rxe2_cqe_flags {
	RXE2_CQE_F_INLINE = 1 << 0,	/* payload follows the CQE in its slot */
};

#define RXE2_CQE_SIZE 64

/* ibv_device_attr.vendor_id ("RXE"), and the vendor of rxe2's ECE */
#define RXE2_VENDOR_ID 0x525845

/*
 * IBV_QP_RATE_LIMIT (packet pacing of RC, UC and UD requests), in kbps
 * as the verb takes it; 0 is no limit.  The provider reports these as
 * packet_pacing_caps.
 */
#define RXE2_RATE_LIMIT_MIN 1000		/* 1 Mbit/s */
#define RXE2_RATE_LIMIT_MAX 100000000		/* 100 Gbit/s */

/*
 * Inline-receive.  A process's CQ created with at most
 * RXE2_CQ_INLINE_MAX_CQE entries has slots of RXE2_CQ_INLINE_SLOT_SIZE
 * bytes; a larger one, and every kernel CQ, has RXE2_CQE_SIZE-byte slots
 * and cannot serve an inline-receive QP (a CQ of a million entries is
 * 64 MiB, not 256).  A CQ keeps its slot size when it is resized.  A completion that carries its data
 * (RXE2_CQE_F_INLINE) is laid out in its slot as
 *
 *   offset   0  struct rxe2_cqe
 *   offset  64  byte_len bytes of data (at most RXE2_INLINE_RECV_MAX)
 *   offset 128  struct rxe2_sge[inline_num_sge] (at most
 *               RXE2_INLINE_RECV_MAX_SGE): the WQE's SGEs that cover
 *               byte_len, zero-length ones left out, in order
 *
 * The process scatters the data over those SGEs when it polls the CQE;
 * the kernel never wrote the buffers.  The SGEs are the ones the
 * process posted (receive WQE, or the READ/atomic send WQE), echoed
 * back so that a ring slot the process has reused since does not
 * matter.
 */
#define RXE2_INLINE_RECV_MAX 64
#define RXE2_INLINE_RECV_MAX_SGE 8
#define RXE2_CQE_INLINE_DATA_OFFSET RXE2_CQE_SIZE
#define RXE2_CQE_INLINE_SGE_OFFSET (RXE2_CQE_SIZE + RXE2_INLINE_RECV_MAX)
#define RXE2_CQ_INLINE_SLOT_SIZE \
	(RXE2_CQE_INLINE_SGE_OFFSET + RXE2_INLINE_RECV_MAX_SGE * 16)
#define RXE2_CQ_INLINE_MAX_CQE 65536

/* ------------------------------------------------------------------ */
/* uverbs driver udata                                                 */
/* ------------------------------------------------------------------ */

/*
 * Doorbell: a POST_SEND command with wr_count == 0 tells the kernel that
 * the SQ producer moved.  Receive queues need no doorbell: the kernel
 * reads the RQ/SRQ producer when a message arrives; only an RQ flagged
 * RXE2_RING_F_FLUSH (QP in ERROR) wants the same doorbell after a post.
 */

struct rxe2_alloc_context_cmd {
	__u32 provider_abi;	/* RXE2_UVERBS_ABI_VERSION */
	__u32 reserved;
};

/*
 * Capabilities librxe2 reports through rxe2dv_query_device(); the bits
 * are those of enum rxe2dv_device_caps in the public rxe2dv.h.
 */
enum rxe2_dv_caps {
	RXE2_DV_CAP_ODP = 1 << 0,	/* on-demand paging MRs */
	RXE2_DV_CAP_PA_MR = 1 << 1,	/* physical-address MRs */
	RXE2_DV_CAP_SHARED_MR = 1 << 2,	/* MRs shared between PDs */
	RXE2_DV_CAP_MW = 1 << 3,	/* memory windows */
};

/*
 * The response grows at its end only.  The kernel writes as much of it
 * as the provider's buffer holds (at least up to cqe_size); a provider
 * zeroes its buffer first, so a field an older kernel does not write
 * reads 0, "not supported".
 */
struct rxe2_alloc_context_resp {
	__u32 abi_version;	/* RXE2_UVERBS_ABI_VERSION */
	__u32 send_wqe_hdr_size;	/* RXE2_SEND_WQE_HDR_SIZE */
	__u32 recv_wqe_hdr_size;	/* RXE2_RECV_WQE_HDR_SIZE */
	__u32 cqe_size;		/* RXE2_CQE_SIZE */
	/* for rxe2dv_query_device() */
	__u32 max_inline_recv;	/* bytes a receive may land in its CQE */
	__u32 num_interconnects;	/* distinct ids of the online nodes */
	__aligned_u64 dv_caps;	/* enum rxe2_dv_caps */
};

struct rxe2_create_cq_resp {
	struct rxe2_ring_info cq;
};

/*
 * ibv_resize_cq: the CQ moves to a new ring, its unpolled CQEs first, in
 * order, from slot 0 (producer = their number, consumer = 0).  The old
 * ring receives nothing more once the command returns; the process maps
 * the new one and unmaps the old.  No driver data in the command.
 */
struct rxe2_resize_cq_resp {
	struct rxe2_ring_info cq;
};

/*
 * Driver data of modify_srq (optional).  Without it, or with
 * ring_info_addr 0, IB_SRQ_MAX_WR is refused (EOPNOTSUPP) for a
 * process's SRQ: the uverbs command has no response, so the kernel
 * writes the new ring's struct rxe2_ring_info to ring_info_addr in the
 * caller's memory before the SRQ moves.  The new ring holds the
 * outstanding receive WQEs in order from slot 0 (consumer = 0, producer
 * = their number); the process continues from that producer.
 */
struct rxe2_modify_srq_cmd {
	__aligned_u64 ring_info_addr;
	__u32 comp_mask;	/* none defined: must be 0 */
	__u32 reserved;
};

/* rxe2_create_qp_cmd.comp_mask */
enum rxe2_create_qp_cmd_mask {
	RXE2_CREATE_QP_INLINE_RECV = 1 << 0,	/* max_inl_recv is valid */
	RXE2_CREATE_QP_RX_HASH = 1 << 1,	/* the rx_hash fields are */
};

/*
 * Inline-receive: max_inl_recv bytes asked (0: off); more than
 * rxe2_alloc_context_resp.max_inline_recv is EINVAL.  The size applied
 * comes back in rxe2_create_qp_resp.max_inl_recv.
 */
/*
 * RSS (IBV_QP_INIT_ATTR_RX_HASH, a raw packet QP over an indirection
 * table): Toeplitz with a 40-byte key over the IBV_RX_HASH_* fields.
 */
#define RXE2_RSS_KEY_LEN		40
#define RXE2_RX_HASH_FUNC_TOEPLITZ	1	/* IBV_RX_HASH_FUNC_TOEPLITZ */
enum rxe2_rx_hash_fields {			/* IBV_RX_HASH_* */
	RXE2_RX_HASH_SRC_IPV4		= 1 << 0,
	RXE2_RX_HASH_DST_IPV4		= 1 << 1,
	RXE2_RX_HASH_SRC_IPV6		= 1 << 2,
	RXE2_RX_HASH_DST_IPV6		= 1 << 3,
	RXE2_RX_HASH_SRC_PORT_TCP	= 1 << 4,
	RXE2_RX_HASH_DST_PORT_TCP	= 1 << 5,
	RXE2_RX_HASH_SRC_PORT_UDP	= 1 << 6,
	RXE2_RX_HASH_DST_PORT_UDP	= 1 << 7,
	RXE2_RX_HASH_FIELDS		= 0xff,
};

struct rxe2_create_qp_cmd {
	__u32 comp_mask;	/* enum rxe2_create_qp_cmd_mask */
	__u32 max_inl_recv;	/* RXE2_CREATE_QP_INLINE_RECV, else 0 */
	/* RXE2_CREATE_QP_RX_HASH: */
	__aligned_u64 rx_hash_fields_mask;	/* enum rxe2_rx_hash_fields */
	__u8 rx_hash_function;	/* RXE2_RX_HASH_FUNC_TOEPLITZ */
	__u8 rx_hash_key_len;	/* RXE2_RSS_KEY_LEN */
	__u8 rx_hash_reserved[6];
	__u8 rx_hash_key[RXE2_RSS_KEY_LEN];
};

/*
 * max_inl_recv was added later: a response buffer that ends before it
 * is accepted (and the QP gets no inline-receive).
 */
struct rxe2_create_qp_resp {
	struct rxe2_ring_info sq;
	struct rxe2_ring_info rq;	/* all zero when the QP uses an SRQ */
	__u32 max_inl_recv;	/* inline-receive size applied, bytes */
	__u32 reserved;
};

/* ibv_create_wq: its receive ring, like an RQ's */
struct rxe2_create_wq_resp {
	struct rxe2_ring_info rq;
};

struct rxe2_create_srq_resp {
	struct rxe2_ring_info rq;
};

struct rxe2_create_ah_resp {
	__u32 ah_num;		/* names the AH in a UD send WQE */
	__u32 reserved;
};

/* ------------------------------------------------------------------ */
/* Driver ioctl methods (uverbs RDMA_VERBS_IOCTL)                      */
/* ------------------------------------------------------------------ */

/*
 * Methods and attributes of our own live in the driver namespace of
 * the uverbs ioctl ids (UVERBS_ID_NS_SHIFT and up): ib_uverbs sends an
 * id from there to the device's driver_def tree, rxe/rxe2_dv.c.  Each
 * method is on a core object; new ones take the next id of their
 * object's enum.
 */
#define RXE2_UVERBS_DRIVER_ID(n)	((1U << UVERBS_ID_NS_SHIFT) + (n))

/* Methods on UVERBS_OBJECT_MR */
enum rxe2_mr_methods {
	/* rxe2dv_query_mr(): the MR's interconnect ids */
	RXE2_METHOD_MR_QUERY = RXE2_UVERBS_DRIVER_ID(0),
};

enum rxe2_mr_query_attrs {
	RXE2_ATTR_QUERY_MR_HANDLE = RXE2_UVERBS_DRIVER_ID(0),	/* IDR, MR */
	RXE2_ATTR_QUERY_MR_RESP = RXE2_UVERBS_DRIVER_ID(1),	/* PTR_OUT */
};

/* Methods on UVERBS_OBJECT_SRQ */
enum rxe2_srq_methods {
	/* ibv_post_srq_ops() on a tag matching SRQ */
	RXE2_METHOD_SRQ_OPS = RXE2_UVERBS_DRIVER_ID(0),
};

enum rxe2_srq_ops_attrs {
	RXE2_ATTR_SRQ_OPS_HANDLE = RXE2_UVERBS_DRIVER_ID(0),	/* IDR, SRQ */
	RXE2_ATTR_SRQ_OPS_IN = RXE2_UVERBS_DRIVER_ID(1),	/* rxe2_tm_op[] */
	RXE2_ATTR_SRQ_OPS_RESP = RXE2_UVERBS_DRIVER_ID(2),	/* PTR_OUT */
};

/*
 * Attributes of our own on core methods.  UVERBS_METHOD_DM_ALLOC
 * (ibv_alloc_dm): where the DM's pages are on the context's fd (map
 * the allocation's length rounded up to pages, MAP_SHARED).
 */
enum rxe2_dm_alloc_attrs {
	RXE2_ATTR_ALLOC_DM_RESP_MMAP_OFFSET = RXE2_UVERBS_DRIVER_ID(0),	/* u64 */
};

/* Methods on UVERBS_OBJECT_DM */
enum rxe2_dm_methods {
	/*
	 * ibv_import_dm(): what alloc answered (where the pages are on the
	 * context's fd) and the length asked for, which the copy verbs of
	 * the importer are bounded by
	 */
	RXE2_METHOD_DM_QUERY = RXE2_UVERBS_DRIVER_ID(0),
};

enum rxe2_dm_query_attrs {
	RXE2_ATTR_QUERY_DM_HANDLE = RXE2_UVERBS_DRIVER_ID(0),	/* IDR, DM */
	RXE2_ATTR_QUERY_DM_RESP_MMAP_OFFSET = RXE2_UVERBS_DRIVER_ID(1), /* u64 */
	RXE2_ATTR_QUERY_DM_RESP_LENGTH = RXE2_UVERBS_DRIVER_ID(2),	/* u64 */
};

/* rxe2_query_mr_resp.ic_id_validity */
enum rxe2_query_mr_validity {
	RXE2_QUERY_MR_VALIDITY_RECV_IC_ID = 1 << 0,
	RXE2_QUERY_MR_VALIDITY_RDMA_READ_IC_ID = 1 << 1,
	RXE2_QUERY_MR_VALIDITY_RDMA_RECV_IC_ID = 1 << 2,
};

/*
 * The answer of RXE2_METHOD_MR_QUERY.  It grows at its end only; the
 * kernel requires every field up to rdma_recv_ic_id, writes as much as
 * the attribute's length holds and zeroes the rest.  An id is valid
 * when its bit is set in ic_id_validity (docs/architecture.md,
 * "Interconnects").
 */
/* comp_mask of rxe2_query_mr_resp: which later fields the kernel wrote */
enum rxe2_query_mr_resp_mask {
	RXE2_QUERY_MR_RESP_PAGES = 1 << 0,	/* page_size, num_pages */
};

struct rxe2_query_mr_resp {
	__aligned_u64 comp_mask;	/* out: enum rxe2_query_mr_resp_mask */
	__u16 ic_id_validity;		/* enum rxe2_query_mr_validity */
	__u16 recv_ic_id;
	__u16 rdma_read_ic_id;
	__u16 rdma_recv_ic_id;
	/*
	 * The translation: bytes per entry (4096, or 2 MiB where the
	 * memory is huge pages) and entries (pinned and shared MRs: all of
	 * them; explicit ODP MRs: of the range; 0 for the others).
	 */
	__u32 page_size;
	__u32 num_pages;
};

/*
 * Driver data of reg_mr: shared MRs and physical-address MRs
 * (rxe2dv_alloc_shared_mr, rxe2dv_reg_shared_mr, rxe2dv_reg_pa_mr).
 * Without it, or with comp_mask 0, reg_mr registers the caller's memory.
 * comp_mask holds exactly one of:
 *
 * RXE2_REG_MR_SHARED_ALLOC: the kernel allocates length bytes (rounded
 *   up to pages, zeroed) and makes them shareable under a new share_id,
 *   readable/writable by the owner (the caller's fsuid), its group
 *   (fsgid) and others as share_mode (S_IRUSR .. S_IWOTH, 0666 at most)
 *   allows.
 * RXE2_REG_MR_SHARED_ATTACH: another MR over the pages of share_id;
 *   length is ignored (use 0).
 *   Both: start and hca_va are ignored (use 0).  The response names the
 *   pages' mmap offset on the context's fd; the MR works from the first
 *   mmap() of it on, at the mapping's address (iova = vm_start).
 * RXE2_REG_MR_PA: start, length and hca_va 0; lkeys/rkeys address
 *   physical memory.  Needs CAP_SYS_RAWIO and the module parameter
 *   allow_pa_mr (EPERM otherwise).
 */
enum rxe2_reg_mr_flags {
	RXE2_REG_MR_SHARED_ALLOC = 1 << 0,
	RXE2_REG_MR_SHARED_ATTACH = 1 << 1,
	RXE2_REG_MR_PA = 1 << 2,
};

/*
 * access_ex: access bits the core of Linux 6.1 refuses before the
 * driver sees them (RXE2_ACCESS_FLUSH_GLOBAL); librxe2 moves them here
 * from the access flags on every kernel.
 */
struct rxe2_reg_mr_cmd {
	__u32 comp_mask;	/* one enum rxe2_reg_mr_flags bit, or 0 */
	__u32 share_mode;	/* SHARED_ALLOC: permission bits */
	__aligned_u64 share_id;	/* SHARED_ATTACH */
	__u32 access_ex;
	__u32 reserved;
};

/*
 * SHARED_*: the caller's response buffer must hold all of it.  The core
 * response (struct ib_uverbs_reg_mr_resp) is 12 bytes, so this one has
 * 4-byte alignment: 64-bit values travel as low and high halves.
 */
struct rxe2_reg_mr_resp {
	__u32 share_id;
	__u32 writable;		/* the mapping may be PROT_WRITE */
	__u32 length_lo;	/* bytes, page multiple */
	__u32 length_hi;
	__u32 mmap_offset_lo;	/* map length bytes, MAP_SHARED */
	__u32 mmap_offset_hi;
};

/*
 * ibv_create_flow's driver data: the counter points of the counters object
 * its IBV_FLOW_SPEC_ACTION_COUNT names (ibv_attach_counters_point_flow()
 * with a NULL flow: librxe2 keeps them and sends them here).  description
 * is enum ib_uverbs_counters_description (packets 0, bytes 1); index
 * below RXE2_FLOW_COUNTER_INDEXES.
 */
#define RXE2_FLOW_COUNTER_POINTS	16
#define RXE2_FLOW_COUNTER_INDEXES	64

struct rxe2_flow_counter_point {
	__u32 description;
	__u32 index;
};

struct rxe2_create_flow_cmd {
	__u32 npoints;
	__u32 reserved;
	struct rxe2_flow_counter_point points[RXE2_FLOW_COUNTER_POINTS];
};

/* ------------------------------------------------------------------ */
/* Tag matching list operations (RXE2_METHOD_SRQ_OPS)                  */
/* ------------------------------------------------------------------ */

#define RXE2_TM_MAX_TAGS	1024	/* tagged buffers in one list */
#define RXE2_TM_MAX_SGE		8	/* SGEs of a tagged buffer */
#define RXE2_TM_MAX_OPS		256	/* operations in one call */

/* rxe2_tm_op.opcode: enum ibv_ops_wr_opcode */
enum rxe2_tm_opcode {
	RXE2_TM_OP_ADD	= 0,
	RXE2_TM_OP_DEL	= 1,
	RXE2_TM_OP_SYNC	= 2,
};

/* rxe2_tm_op.flags: enum ibv_ops_flags */
enum rxe2_tm_op_flags {
	RXE2_TM_OPF_SIGNALED	= 1 << 0,
	RXE2_TM_OPF_SYNC	= 1 << 1,	/* unexpected_cnt is valid */
};

/* One ibv_ops_wr; RXE2_ATTR_SRQ_OPS_IN is an array of them */
struct rxe2_tm_op {
	__aligned_u64 wr_id;
	__aligned_u64 recv_wr_id;	/* ADD: the tagged buffer's wr_id */
	__aligned_u64 tag;		/* ADD */
	__aligned_u64 mask;		/* ADD */
	__u32 opcode;			/* enum rxe2_tm_opcode */
	__u32 flags;			/* enum rxe2_tm_op_flags */
	__u32 unexpected_cnt;
	__u32 handle;			/* DEL */
	__u32 num_sge;			/* ADD */
	__u32 reserved;
	struct rxe2_sge sge[RXE2_TM_MAX_SGE];
};

/*
 * The answer: the operations are performed in order until one is
 * refused; done counts those performed, error is the refused one's
 * errno (0 when all were done), handle[i] is ADD i's handle.
 */
struct rxe2_srq_ops_resp {
	__u32 done;
	__u32 error;
	__u32 handle[RXE2_TM_MAX_OPS];
};

#endif /* RXE2_ABI_H */
