/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rxe2dv: direct verbs of the rdma_rxe2 soft-RoCE device.
 *
 *   #include <infiniband/rxe2dv.h>
 *   cc ... $(pkg-config --cflags --libs librxe2)
 *
 * See rxe2dv(7).
 */
#ifndef INFINIBAND_RXE2DV_H
#define INFINIBAND_RXE2DV_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/* True for a device the rxe2 provider drives. */
bool rxe2dv_is_supported(struct ibv_device *device);

/* Bits of rxe2dv_device_attr.device_caps; see rxe2dv_query_device(3). */
enum rxe2dv_device_caps {
	RXE2DV_DEVICE_CAP_ODP = 1 << 0,
	RXE2DV_DEVICE_CAP_PA_MR = 1 << 1,
	RXE2DV_DEVICE_CAP_SHARED_MR = 1 << 2,
	RXE2DV_DEVICE_CAP_MW = 1 << 3,
};

/*
 * Fields are only ever added at the end.  inlen tells the library how
 * much of the structure the caller was built with.
 */
struct rxe2dv_device_attr {
	uint64_t comp_mask;		/* out: no bits defined yet */
	uint64_t device_caps;		/* enum rxe2dv_device_caps */
	uint32_t max_inline_recv;	/* bytes; 0: no inline receive */
	uint32_t num_interconnects;
};

int rxe2dv_query_device(struct ibv_context *context,
			struct rxe2dv_device_attr *attr, uint32_t inlen);

/* ---- IBTA 1.5 FLUSH: rxe2dv_wr_flush(3) ---- */

/*
 * libibverbs 44 has no ibv_wr_flush(); these are the values rdma-core
 * 45 gives its send_ops_flags bit and enums.
 */
#define RXE2DV_QP_EX_WITH_FLUSH (1ULL << 11)

enum rxe2dv_flush_type {
	RXE2DV_FLUSH_GLOBAL = 1,
	RXE2DV_FLUSH_PERSISTENT = 2,
};

enum rxe2dv_flush_level {
	RXE2DV_FLUSH_RANGE = 0,
	RXE2DV_FLUSH_MR = 1,
};

/* MR and QP access bit for the target of a FLUSH (IBV_ACCESS_FLUSH_GLOBAL) */
#define RXE2DV_ACCESS_FLUSH_GLOBAL (1 << 8)

void rxe2dv_wr_flush(struct ibv_qp_ex *qp, uint32_t rkey,
		     uint64_t remote_addr, size_t len, uint8_t type,
		     uint8_t level);

/* ---- interconnect ids of a memory region: rxe2dv_query_mr(3) ---- */

/* Bits of rxe2dv_mr_attr.ic_id_validity */
enum rxe2dv_mr_attr_ic_id_validity {
	RXE2DV_MR_ATTR_VALIDITY_RECV_IC_ID = 1 << 0,
	RXE2DV_MR_ATTR_VALIDITY_RDMA_READ_IC_ID = 1 << 1,
	RXE2DV_MR_ATTR_VALIDITY_RDMA_RECV_IC_ID = 1 << 2,
};

/* Bits of rxe2dv_mr_attr.comp_mask (out): the later fields that are valid */
enum rxe2dv_mr_attr_mask {
	RXE2DV_MR_ATTR_MASK_PAGES = 1 << 0,	/* page_size, num_pages */
};

/* Fields are only ever added at the end, as for rxe2dv_device_attr. */
struct rxe2dv_mr_attr {
	uint64_t comp_mask;		/* out: enum rxe2dv_mr_attr_mask */
	uint16_t ic_id_validity;	/* enum rxe2dv_mr_attr_ic_id_validity */
	uint16_t recv_ic_id;
	uint16_t rdma_read_ic_id;
	uint16_t rdma_recv_ic_id;
	/* bytes per translation entry (4096, or 2 MiB for huge pages) */
	uint32_t page_size;
	uint32_t num_pages;		/* translation entries */
};

int rxe2dv_query_mr(struct ibv_mr *mr, struct rxe2dv_mr_attr *attr,
		    uint32_t inlen);

/* ---- inline-receive: see rxe2dv_create_qp(3) ---- */

/* rxe2dv_qp_init_attr.comp_mask */
enum rxe2dv_qp_init_attr_mask {
	RXE2DV_QP_INIT_ATTR_MASK_INLINE_RECV = 1 << 0,
};

/*
 * Fields are only ever added at the end; inlen tells the library how
 * much of the structure the caller was built with.
 */
struct rxe2dv_qp_init_attr {
	uint64_t comp_mask;		/* enum rxe2dv_qp_init_attr_mask */
	/*
	 * in: bytes asked (0: off); out: the size applied, which may be
	 * larger (rounded up to what a CQE holds)
	 */
	uint32_t max_inl_recv;
	uint32_t reserved;		/* must be 0 */
};

struct ibv_qp *rxe2dv_create_qp(struct ibv_context *context,
				struct ibv_qp_init_attr_ex *attr,
				struct rxe2dv_qp_init_attr *dv_attr,
				uint32_t inlen);

/*
 * ibv_wc.wc_flags (ibv_poll_cq) and ibv_wc_read_wc_flags() (extended
 * polling): the completion carried its data, which librxe2 copied into
 * the receive buffers (or the READ/atomic SGEs) while polling it.
 */
#define RXE2DV_WC_INLINE_RECV (1U << 31)

/* ---- shared MRs, PA-MRs ---- */

/*
 * Shared MRs: memory the device allocates, mapped into the caller, that
 * any number of MRs in this or other processes can cover.  share_mode
 * takes the S_IRUSR .. S_IWOTH bits.  See rxe2dv_alloc_shared_mr(3) and
 * rxe2dv_reg_shared_mr(3).  Release either with ibv_dereg_mr().
 */
struct ibv_mr *rxe2dv_alloc_shared_mr(struct ibv_pd *pd, size_t length,
				      int access, mode_t share_mode,
				      uint64_t *share_id);
struct ibv_mr *rxe2dv_reg_shared_mr(struct ibv_pd *pd, uint64_t share_id,
				    void *addr_hint, int access);

/*
 * Physical-address MR: addresses under its keys are physical addresses.
 * Needs CAP_SYS_RAWIO and rdma_rxe2's allow_pa_mr; see
 * rxe2dv_reg_pa_mr(3).
 */
struct ibv_mr *rxe2dv_reg_pa_mr(struct ibv_pd *pd, int access);

#ifdef __cplusplus
}
#endif

#endif /* INFINIBAND_RXE2DV_H */
