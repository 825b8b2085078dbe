/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * librxe2: the libibverbs provider for the rdma_rxe2 soft-RoCE device.
 * Shared definitions of the provider's objects.
 */
#ifndef RXE2_PROVIDER_H
#define RXE2_PROVIDER_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "ibverbs_private.h"
#ifdef RXE2_IN_TREE
#include <rdma/rxe2-abi.h>	/* kernel-headers/rdma, as for any provider */
#else
#include "rxe2-abi.h"
#endif

/* the port's max_msg_sz: the largest message, and the largest FLUSH range */
#define RXE2_MAX_MSG_SIZE 0x80000000u

#define rxe2_container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

/* ------------------------------------------------------------------ */
/* udata wrappers: libibverbs' core part, then ours (uapi/rxe2-abi.h)  */
/* ------------------------------------------------------------------ */

struct rxe2_get_context_req {
	struct ibv_get_context ibv_cmd;
	struct rxe2_alloc_context_cmd drv;
};

struct rxe2_get_context_rsp {
	struct ib_uverbs_get_context_resp ibv_resp;
	struct rxe2_alloc_context_resp drv;
};

struct rxe2_create_cq_rsp {
	struct ib_uverbs_create_cq_resp ibv_resp;
	struct rxe2_create_cq_resp drv;
};

struct rxe2_create_cq_ex_rsp {
	struct ib_uverbs_ex_create_cq_resp ibv_resp;
	struct rxe2_create_cq_resp drv;
};

struct rxe2_resize_cq_rsp {
	struct ib_uverbs_resize_cq_resp ibv_resp;
	struct rxe2_resize_cq_resp drv;
};

struct rxe2_modify_srq_req {
	struct ibv_modify_srq ibv_cmd;
	struct rxe2_modify_srq_cmd drv;
};

struct rxe2_create_qp_req {
	struct ibv_create_qp ibv_cmd;
	struct rxe2_create_qp_cmd drv;
};

struct rxe2_create_qp_rsp {
	struct ib_uverbs_create_qp_resp ibv_resp;
	struct rxe2_create_qp_resp drv;
};

/* ibv_create_qp_ex with create_flags: the extended command */
struct rxe2_create_qp_ex_req {
	struct ibv_create_qp_ex ibv_cmd;
	struct rxe2_create_qp_cmd drv;
};

struct rxe2_create_qp_ex_rsp {
	struct ib_uverbs_ex_create_qp_resp ibv_resp;
	struct rxe2_create_qp_resp drv;
};

struct rxe2_create_srq_rsp {
	struct ib_uverbs_create_srq_resp ibv_resp;
	struct rxe2_create_srq_resp drv;
};

struct rxe2_create_wq_rsp {
	struct ib_uverbs_ex_create_wq_resp ibv_resp;
	struct rxe2_create_wq_resp drv;
};

struct rxe2_create_ah_rsp {
	struct ib_uverbs_create_ah_resp ibv_resp;
	struct rxe2_create_ah_resp drv;
};

/* shared and physical-address MRs (rxe2dv.c) */
struct rxe2_reg_mr_req {
	struct ibv_reg_mr ibv_cmd;
	struct rxe2_reg_mr_cmd drv;
};

/* rereg_mr: only access_ex (the FLUSH access bits, rxe2_pd.c) */
struct rxe2_rereg_mr_req {
	struct ibv_rereg_mr ibv_cmd;
	struct rxe2_reg_mr_cmd drv;
};

struct rxe2_reg_mr_rsp {
	struct ib_uverbs_reg_mr_resp ibv_resp;
	struct rxe2_reg_mr_resp drv;
};

/* Our udata must start right where the kernel expects it: no padding. */
#define RXE2_PIN_UDATA(type, core, drv)					\
	_Static_assert(offsetof(type, drv) == sizeof(core) &&		\
		       sizeof(type) == sizeof(core) +			\
		       sizeof(((type *)0)->drv), "udata layout of " #type)
RXE2_PIN_UDATA(struct rxe2_get_context_req, struct ibv_get_context, drv);
RXE2_PIN_UDATA(struct rxe2_get_context_rsp,
	       struct ib_uverbs_get_context_resp, drv);
RXE2_PIN_UDATA(struct rxe2_create_cq_rsp, struct ib_uverbs_create_cq_resp,
	       drv);
RXE2_PIN_UDATA(struct rxe2_create_cq_ex_rsp,
	       struct ib_uverbs_ex_create_cq_resp, drv);
RXE2_PIN_UDATA(struct rxe2_resize_cq_rsp, struct ib_uverbs_resize_cq_resp,
	       drv);
RXE2_PIN_UDATA(struct rxe2_modify_srq_req, struct ibv_modify_srq, drv);
RXE2_PIN_UDATA(struct rxe2_create_qp_req, struct ibv_create_qp, drv);
RXE2_PIN_UDATA(struct rxe2_rereg_mr_req, struct ibv_rereg_mr, drv);
RXE2_PIN_UDATA(struct rxe2_create_qp_rsp, struct ib_uverbs_create_qp_resp,
	       drv);
RXE2_PIN_UDATA(struct rxe2_create_qp_ex_req, struct ibv_create_qp_ex, drv);
RXE2_PIN_UDATA(struct rxe2_create_qp_ex_rsp,
	       struct ib_uverbs_ex_create_qp_resp, drv);
RXE2_PIN_UDATA(struct rxe2_create_srq_rsp, struct ib_uverbs_create_srq_resp,
	       drv);
RXE2_PIN_UDATA(struct rxe2_create_wq_rsp, struct ib_uverbs_ex_create_wq_resp,
	       drv);
RXE2_PIN_UDATA(struct rxe2_create_ah_rsp, struct ib_uverbs_create_ah_resp,
	       drv);
RXE2_PIN_UDATA(struct rxe2_reg_mr_req, struct ibv_reg_mr, drv);
RXE2_PIN_UDATA(struct rxe2_reg_mr_rsp, struct ib_uverbs_reg_mr_resp, drv);

/* ------------------------------------------------------------------ */
/* Objects                                                             */
/* ------------------------------------------------------------------ */

struct rxe2_device {
	struct verbs_device vdev;		/* first: libibverbs casts */
	/* what alloc_device was given, for the canary in alloc_context */
	struct verbs_sysfs_dev *sysfs_at_alloc;
};

struct rxe2_context {
	struct verbs_context vctx;
	/* what alloc_context's response said, for rxe2dv_query_device() */
	uint32_t max_inline_recv;
	uint32_t num_interconnects;
	uint64_t dv_caps;		/* enum rxe2_dv_caps */
	bool imported;			/* ibv_import_device: no dv values */
	/*
	 * ib_uverbs refused a write() on cmd_fd with EACCES: this process
	 * is not the one whose credentials opened the file (see
	 * rxe2_cmd.c), so the doorbell goes through the ioctl entry.
	 */
	atomic_bool write_refused;
};

/*
 * Every MR of ours.  A shared MR (rxe2dv_alloc_shared_mr,
 * rxe2dv_reg_shared_mr) also owns the mapping of its pages, which
 * dereg removes.
 */
struct rxe2_mr {
	struct verbs_mr vmr;		/* first: libibverbs frees through it */
	void *map;
	size_t map_size;
};

static inline struct rxe2_mr *to_rmr(struct verbs_mr *vmr)
{
	return rxe2_container_of(vmr, struct rxe2_mr, vmr);
}

bool rxe2_is_rxe2_context(struct ibv_context *ibctx);

static inline struct rxe2_context *to_rctx(struct ibv_context *ibctx)
{
	return rxe2_container_of(ibctx, struct rxe2_context, vctx.context);
}

/*
 * One mapped ring.  "mine" is the private copy of the counter this
 * process advances; after the ring is mapped the shared copy is only
 * written from it, never read back, so a scribbled header cannot steer
 * us.
 */
struct rxe2_ring {
	void *map;			/* NULL when the queue has no ring */
	size_t map_size;
	struct rxe2_ring_hdr *hdr;
	uint8_t *slots;
	uint32_t num_slots;		/* power of two */
	uint32_t slot_size;
	uint32_t mine;
};

/*
 * A protection domain, or a parent domain (rxe2_domain.c): an ibv_pd
 * with the kernel handle of the PD it wraps, usable wherever a PD is.
 * parents and a thread domain's parents count the parent domains that
 * use them, users the QPs, CQs and SRQs made on a parent domain: they
 * must go first (EBUSY).
 */
struct rxe2_pd {
	struct ibv_pd ibpd;
	struct rxe2_pd *protection;	/* a parent domain: the PD it wraps */
	struct rxe2_td *td;		/* a parent domain: its thread domain */
	int parents;			/* a PD: parent domains over it */
	int users;			/* a parent domain: objects on it */
};

struct rxe2_td {
	struct ibv_td ibtd;
	int parents;
};

static inline struct rxe2_pd *to_rpd(struct ibv_pd *ibpd)
{
	return rxe2_container_of(ibpd, struct rxe2_pd, ibpd);
}

static inline struct rxe2_td *to_rtd(struct ibv_td *ibtd)
{
	return rxe2_container_of(ibtd, struct rxe2_td, ibtd);
}

/* objects made on this PD are used by one thread at a time: no locks */
static inline bool rxe2_pd_single_thread(struct ibv_pd *ibpd)
{
	return to_rpd(ibpd)->td;
}

struct rxe2_cq {
	struct verbs_cq vcq;		/* ibv_cq and ibv_cq_ex views */
	pthread_spinlock_t lock;	/* serialises pollers */
	bool single_threaded;		/* IBV_CREATE_CQ_ATTR_SINGLE_THREADED */
	struct rxe2_ring ring;
	/* extended polling: the CQE start_poll/next_poll last reported */
	struct rxe2_cqe cur;
	uint32_t ex_producer;		/* producer seen by start_poll */
	/* IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK asked for */
	bool wallclock;
	int64_t wall_offset;		/* CLOCK_REALTIME - CLOCK_MONOTONIC */
	struct rxe2_pd *parent;		/* IBV_CQ_INIT_ATTR_MASK_PD */
};

static inline struct rxe2_cq *to_rcq(struct ibv_cq *ibcq)
{
	return rxe2_container_of(ibcq, struct rxe2_cq, vcq.cq);
}

static inline struct rxe2_cq *to_rcq_ex(struct ibv_cq_ex *ibcq)
{
	return rxe2_container_of(ibcq, struct rxe2_cq, vcq.cq_ex);
}

/*
 * The send doorbell: a uverbs POST_SEND write() that carries no work
 * request (drivers/infiniband/core/uverbs_cmd.c, ib_uverbs_post_send).
 * Built once per QP, so ringing it is a single write() of 32 bytes (or,
 * in a process write() refuses, the same command through the ioctl).
 */
struct rxe2_doorbell_cmd {
	struct ib_uverbs_cmd_hdr hdr;
	/* struct ib_uverbs_post_send without its flexible send_wr[] */
	struct {
		__aligned_u64 response;
		__u32 qp_handle;
		__u32 wr_count;
		__u32 sge_count;
		__u32 wqe_size;
	} core;
};

struct rxe2_qp {
	struct verbs_qp vqp;		/* ibv_qp and ibv_qp_ex views */
	struct rxe2_ring sq;
	struct rxe2_ring rq;		/* absent (map == NULL) with an SRQ */
	pthread_spinlock_t sq_lock;
	pthread_spinlock_t rq_lock;
	/* made on a parent domain with a thread domain: no locks */
	bool single_thread;
	struct rxe2_pd *parent;		/* the parent domain it was made on */

	/* what the kernel granted, the limits of every work request */
	uint32_t max_send_sge;
	uint32_t max_inline_data;
	uint32_t max_recv_sge;
	uint32_t send_opcodes;		/* 1 << IBV_WR_* allowed on this QP */
	uint32_t sq_signal_all;		/* IBV_SEND_SIGNALED or 0 */

	struct rxe2_doorbell_cmd db;
	struct ib_uverbs_post_send_resp db_resp;

	/* ibv_qp_ex work request builder (wr_start .. wr_complete) */
	uint32_t wr_opcodes;		/* 1 << IBV_WR_* from send_ops_flags */
	uint32_t wr_prod;		/* private producer of the batch */
	uint32_t wr_room;		/* free slots known beyond wr_prod */
	int wr_err;			/* first error of the batch */
	struct rxe2_send_wqe *wr_cur;	/* the WQE being built, or NULL */
	bool wr_cur_ud;			/* wr_set_ud_addr seen for it */
	bool wr_cur_xrc;		/* wr_set_xrc_srqn seen for it */
	bool wr_cur_data;		/* a data setter seen for it */
	uint64_t wr_cur_len;		/* bytes its data setter described */
};

/* the SQ's lock, unless a thread domain says one thread posts */
static inline void rxe2_sq_lock(struct rxe2_qp *qp)
{
	if (!qp->single_thread)
		pthread_spin_lock(&qp->sq_lock);
}

static inline void rxe2_sq_unlock(struct rxe2_qp *qp)
{
	if (!qp->single_thread)
		pthread_spin_unlock(&qp->sq_lock);
}

static inline struct rxe2_qp *to_rqp(struct ibv_qp *ibqp)
{
	return rxe2_container_of(ibqp, struct rxe2_qp, vqp.qp);
}

static inline struct rxe2_qp *to_rqp_ex(struct ibv_qp_ex *ibqp)
{
	return rxe2_container_of(ibqp, struct rxe2_qp, vqp.qp_ex);
}

struct rxe2_srq {
	struct verbs_srq vsrq;
	struct rxe2_ring rq;
	pthread_spinlock_t lock;
	uint32_t max_sge;		/* granted */
	struct rxe2_pd *parent;		/* the parent domain it was made on */
	/*
	 * A tag matching SRQ: ibv_post_srq_ops() builds its call in
	 * tm_ops, under tm_mutex (the call sleeps in the kernel)
	 */
	uint32_t tm_max_ops;
	struct rxe2_tm_op *tm_ops;
	struct rxe2_srq_ops_resp tm_resp;
	pthread_mutex_t tm_mutex;
};

static inline struct rxe2_srq *to_rsrq(struct ibv_srq *ibsrq)
{
	return rxe2_container_of(ibsrq, struct rxe2_srq, vsrq.srq);
}

struct rxe2_wq {
	struct ibv_wq ibwq;
	struct rxe2_ring rq;
	pthread_spinlock_t lock;	/* rq's producer */
	uint32_t max_sge;		/* asked (and granted) */
};

static inline struct rxe2_wq *to_rwq(struct ibv_wq *ibwq)
{
	return rxe2_container_of(ibwq, struct rxe2_wq, ibwq);
}

struct rxe2_ah {
	struct ibv_ah ibah;
	uint32_t ah_num;		/* goes into UD send WQEs */
};

static inline struct rxe2_ah *to_rah(struct ibv_ah *ibah)
{
	return rxe2_container_of(ibah, struct rxe2_ah, ibah);
}

/* ------------------------------------------------------------------ */
/* Ring access                                                         */
/* ------------------------------------------------------------------ */

static inline void *rxe2_ring_slot(const struct rxe2_ring *ring, uint32_t idx)
{
	return ring->slots +
	       (size_t)(idx & (ring->num_slots - 1)) * ring->slot_size;
}

/*
 * Free slots of a ring this process produces into, given our producer
 * prod.  The kernel's consumer is loaded with acquire semantics: once we
 * see a slot released, the kernel's reads of it are complete and the
 * slot may be rewritten.  A consumer that claims more than the ring
 * holds (or runs ahead of our producer) is a broken queue: EIO.
 */
static inline int rxe2_ring_room(const struct rxe2_ring *ring, uint32_t prod,
				 uint32_t *room)
{
	uint32_t cons = __atomic_load_n(&ring->hdr->consumer,
					__ATOMIC_ACQUIRE);
	uint32_t used = prod - cons;

	if (used > ring->num_slots)
		return EIO;
	*room = ring->num_slots - used;
	return 0;
}

/* Publish our producer: the slot contents before it, with release */
static inline void rxe2_ring_publish(struct rxe2_ring *ring)
{
	__atomic_store_n(&ring->hdr->producer, ring->mine, __ATOMIC_RELEASE);
}

/* ------------------------------------------------------------------ */
/* Entry points, one file per object                                   */
/* ------------------------------------------------------------------ */

/* rxe2_cmd.c: the command and room for its attributes in one piece */
#define RXE2_IOCTL_MAX_ATTRS 9	/* UVERBS_METHOD_REG_MR takes 9 */

union rxe2_ioctl_buf {
	struct ibv_command_buffer cmd;
	unsigned char room[sizeof(struct ibv_command_buffer) +
			   RXE2_IOCTL_MAX_ATTRS * sizeof(struct ib_uverbs_attr)];
};

struct ibv_command_buffer *rxe2_ioctl_init(union rxe2_ioctl_buf *buf,
					   uint16_t object, uint16_t method);
/* an object by its handle (UVERBS_ATTR_TYPE_IDR) */
void rxe2_ioctl_obj(struct ibv_command_buffer *cmd, uint16_t id,
		    uint32_t handle);
/* a new object: its handle is in the attribute's data after the call */
struct ib_uverbs_attr *rxe2_ioctl_new(struct ibv_command_buffer *cmd,
				      uint16_t id);
/* a constant (UVERBS_ATTR_CONST_IN) */
void rxe2_ioctl_const(struct ibv_command_buffer *cmd, uint16_t id,
		      uint64_t value);
/* an element of an enum (UVERBS_ATTR_TYPE_ENUM_IN) */
void rxe2_ioctl_enum(struct ibv_command_buffer *cmd, uint16_t id,
		     uint8_t elem);
/* a buffer the kernel reads (UVERBS_ATTR_TYPE_PTR_IN) */
void rxe2_ioctl_in(struct ibv_command_buffer *cmd, uint16_t id,
		   const void *ptr, size_t len);
/* a buffer the kernel writes (UVERBS_ATTR_TYPE_PTR_OUT) */
void rxe2_ioctl_out(struct ibv_command_buffer *cmd, uint16_t id, void *ptr,
		    size_t len);
/*
 * Run a method the kernel or our module may not have (a newer Linux's,
 * or a newer module's): 0 or an errno, EOPNOTSUPP when it is not there.
 */
int rxe2_ioctl_optional(struct ibv_context *ibctx,
			struct ibv_command_buffer *cmd);
/*
 * The legacy write() command req (header, core request of core_req_len
 * bytes, driver data; in_words and out_words filled in) run through
 * UVERBS_METHOD_INVOKE_WRITE, the response at resp (core_resp_len bytes,
 * then the driver's).  Returns 0 or an errno, as write() would have.
 */
int rxe2_cmd_write_ioctl(struct ibv_context *ibctx,
			 const struct ib_uverbs_cmd_hdr *req,
			 size_t core_req_len, void *resp,
			 size_t core_resp_len);

/* rxe2_ring.c */
enum rxe2_ring_kind { RXE2_RING_SQ, RXE2_RING_RQ, RXE2_RING_CQ };
int rxe2_ring_map(struct ibv_context *ibctx, struct rxe2_ring *ring,
		  enum rxe2_ring_kind kind, const struct rxe2_ring_info *info,
		  uint32_t min_slots, uint32_t min_slot_size);
void rxe2_ring_unmap(struct rxe2_ring *ring);
bool rxe2_ring_info_absent(const struct rxe2_ring_info *info);
uint32_t rxe2_recv_slot_size(uint32_t max_sge);
uint32_t rxe2_send_slot_size(uint32_t max_sge, uint32_t max_inline);

/* rxe2_device.c */
int rxe2_query_device_ex(struct ibv_context *ibctx,
			 const struct ibv_query_device_ex_input *input,
			 struct ibv_device_attr_ex *attr, size_t attr_size);
int rxe2_query_port(struct ibv_context *ibctx, uint8_t port_num,
		    struct ibv_port_attr *port_attr);

/* rxe2_pd.c */
struct ibv_pd *rxe2_alloc_pd(struct ibv_context *ibctx);
int rxe2_dealloc_pd(struct ibv_pd *ibpd);
struct ibv_td *rxe2_alloc_td(struct ibv_context *ibctx,
			     struct ibv_td_init_attr *attr);
int rxe2_dealloc_td(struct ibv_td *ibtd);
struct ibv_pd *rxe2_alloc_parent_domain(struct ibv_context *ibctx,
					struct ibv_parent_domain_init_attr *attr);
int rxe2_dealloc_parent_domain(struct rxe2_pd *pd);
struct rxe2_pd *rxe2_parent_get(struct ibv_pd *ibpd);
void rxe2_parent_put(struct rxe2_pd *parent);
struct ibv_mr *rxe2_reg_mr(struct ibv_pd *ibpd, void *addr, size_t length,
			   uint64_t hca_va, int access);
struct ibv_mr *rxe2_mr_registered(struct rxe2_mr *mr, int err, int access);
/* rxe2_dm.c: device memory */
struct ibv_dm *rxe2_alloc_dm(struct ibv_context *ibctx,
			     struct ibv_alloc_dm_attr *attr);
int rxe2_free_dm(struct ibv_dm *ibdm);
struct ibv_dm *rxe2_import_dm(struct ibv_context *ibctx, uint32_t dm_handle);
void rxe2_unimport_dm(struct ibv_dm *ibdm);
struct ibv_mr *rxe2_reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *ibdm,
			      uint64_t dm_offset, size_t length,
			      unsigned int access);
struct ibv_mr *rxe2_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset,
				  size_t length, uint64_t iova, int fd,
				  int access);
int rxe2_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
		  void *addr, size_t length, int access);
int rxe2_dereg_mr(struct verbs_mr *vmr);
#if RXE2_RDMA_CORE >= 59
/* DMA handles (Linux 6.17) and the MRs made with them */
struct rxe2_dmah {
	struct ibv_dmah ibdmah;
	uint32_t handle;
};

struct ibv_dmah *rxe2_alloc_dmah(struct ibv_context *ibctx,
				 struct ibv_dmah_init_attr *attr);
int rxe2_dealloc_dmah(struct ibv_dmah *ibdmah);
struct ibv_mr *rxe2_reg_mr_ex(struct ibv_pd *pd,
			      struct ibv_mr_init_attr *attr);
#endif
#if RXE2_RDMA_CORE >= 62
int rxe2_query_port_speed(struct ibv_context *ibctx, uint32_t port_num,
			  uint64_t *speed);
#endif
int rxe2_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
		   uint32_t flags, struct ibv_sge *sg_list, uint32_t num_sge);
struct ibv_pd *rxe2_import_pd(struct ibv_context *ibctx, uint32_t pd_handle);
void rxe2_unimport_pd(struct ibv_pd *pd);
struct ibv_mr *rxe2_import_mr(struct ibv_pd *pd, uint32_t mr_handle);
void rxe2_unimport_mr(struct ibv_mr *mr);
struct ibv_mw *rxe2_alloc_mw(struct ibv_pd *ibpd, enum ibv_mw_type type);
int rxe2_dealloc_mw(struct ibv_mw *mw);
int rxe2_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *mw,
		 struct ibv_mw_bind *mw_bind);

/* rxe2_cq.c */
struct ibv_cq *rxe2_create_cq(struct ibv_context *ibctx, int cqe,
			      struct ibv_comp_channel *channel,
			      int comp_vector);
struct ibv_cq_ex *rxe2_create_cq_ex(struct ibv_context *ibctx,
				    struct ibv_cq_init_attr_ex *attr);
void rxe2_cq_install_ex_ops(struct rxe2_cq *cq);
int rxe2_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc);
int rxe2_req_notify_cq(struct ibv_cq *ibcq, int solicited_only);
int rxe2_resize_cq(struct ibv_cq *ibcq, int cqe);
void rxe2_cq_clean(struct rxe2_cq *cq, uint32_t qpn, bool on_srq);
int rxe2_modify_cq(struct ibv_cq *ibcq, struct ibv_modify_cq_attr *attr);
int rxe2_query_ece(struct ibv_qp *ibqp, struct ibv_ece *ece);
int rxe2_query_qp_data_in_order(struct ibv_qp *ibqp, enum ibv_wr_opcode op,
				uint32_t flags);
int rxe2_set_ece(struct ibv_qp *ibqp, struct ibv_ece *ece);
int rxe2_modify_qp_rate_limit(struct ibv_qp *ibqp,
			      struct ibv_qp_rate_limit_attr *attr);
int rxe2_query_rt_values(struct ibv_context *ibctx,
			 struct ibv_values_ex *values);
int rxe2_destroy_cq(struct ibv_cq *ibcq);

/* rxe2_qp.c */
struct rxe2_qp *rxe2_qp_alloc(void);
void rxe2_qp_free(struct rxe2_qp *qp);
struct ibv_qp *rxe2_create_qp(struct ibv_pd *ibpd,
			      struct ibv_qp_init_attr *attr);
/* rxe2_wq.c */
struct ibv_wq *rxe2_create_wq(struct ibv_context *ibctx,
			      struct ibv_wq_init_attr *attr);
int rxe2_post_wq_recv(struct ibv_wq *ibwq, struct ibv_recv_wr *wr,
		      struct ibv_recv_wr **bad_wr);
int rxe2_modify_wq(struct ibv_wq *ibwq, struct ibv_wq_attr *attr);
int rxe2_destroy_wq(struct ibv_wq *ibwq);
struct ibv_rwq_ind_table *
rxe2_create_rwq_ind_table(struct ibv_context *ibctx,
			  struct ibv_rwq_ind_table_init_attr *attr);
int rxe2_destroy_rwq_ind_table(struct ibv_rwq_ind_table *tbl);

/* rxe2_flow.c */
struct ibv_flow *rxe2_create_flow(struct ibv_qp *ibqp,
				  struct ibv_flow_attr *attr);
int rxe2_destroy_flow(struct ibv_flow *flow);
struct ibv_counters *rxe2_create_counters(struct ibv_context *ctx,
					  struct ibv_counters_init_attr *attr);
int rxe2_destroy_counters(struct ibv_counters *counters);
int rxe2_read_counters(struct ibv_counters *counters, uint64_t *values,
		       uint32_t ncounters, uint32_t flags);
int rxe2_attach_counters_point_flow(struct ibv_counters *counters,
				    struct ibv_counter_attach_attr *attr,
				    struct ibv_flow *flow);

struct ibv_qp *rxe2_create_qp_ex(struct ibv_context *ibctx,
				 struct ibv_qp_init_attr_ex *attr);
struct ibv_qp *rxe2_create_qp_inl(struct ibv_context *ibctx,
				  struct ibv_qp_init_attr_ex *attr,
				  uint32_t *max_inl_recv);
int rxe2_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		   int attr_mask);
int rxe2_attach_mcast(struct ibv_qp *ibqp, const union ibv_gid *gid,
		      uint16_t lid);
int rxe2_detach_mcast(struct ibv_qp *ibqp, const union ibv_gid *gid,
		      uint16_t lid);
int rxe2_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		  int attr_mask, struct ibv_qp_init_attr *init_attr);
int rxe2_destroy_qp(struct ibv_qp *ibqp);
int rxe2_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		   struct ibv_recv_wr **bad_wr);
int rxe2_post_recv_ring(struct rxe2_ring *ring, pthread_spinlock_t *lock,
			uint32_t max_sge, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad_wr);

/* rxe2_send.c */
int rxe2_send_check_attr(const struct ibv_qp_init_attr_ex *attr);
int rxe2_send_init(struct rxe2_qp *qp, const struct ibv_qp_init_attr_ex *attr);
void rxe2_wr_flush(struct ibv_qp_ex *ibqpx, uint32_t rkey,
		   uint64_t remote_addr, size_t len, uint8_t type,
		   uint8_t level);
int rxe2_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		   struct ibv_send_wr **bad_wr);
int rxe2_ring_doorbell(struct rxe2_qp *qp);

/* rxe2_srq.c */
struct ibv_srq *rxe2_create_srq(struct ibv_pd *ibpd,
				struct ibv_srq_init_attr *attr);
int rxe2_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		    int attr_mask);
int rxe2_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr);
int rxe2_destroy_srq(struct ibv_srq *ibsrq);
int rxe2_post_srq_ops(struct ibv_srq *ibsrq, struct ibv_ops_wr *wr,
		      struct ibv_ops_wr **bad_wr);
int rxe2_tm_srq_check(const struct ibv_srq_init_attr_ex *attr);
int rxe2_tm_srq_init(struct rxe2_srq *srq,
		     const struct ibv_srq_init_attr_ex *attr);
void rxe2_tm_srq_cleanup(struct rxe2_srq *srq);
int rxe2_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad_wr);
struct ibv_srq *rxe2_create_srq_ex(struct ibv_context *ibctx,
				   struct ibv_srq_init_attr_ex *attr);
int rxe2_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num);

/* rxe2_xrc.c */
#define RXE2_XRC_SRQN_MAX	0xffffffu	/* the XRCETH has 24 bits */
struct ibv_xrcd *rxe2_open_xrcd(struct ibv_context *ibctx,
				struct ibv_xrcd_init_attr *attr);
int rxe2_close_xrcd(struct ibv_xrcd *ibxrcd);
struct ibv_qp *rxe2_open_qp(struct ibv_context *ibctx,
			    struct ibv_qp_open_attr *attr);

/* rxe2_ah.c */
struct ibv_ah *rxe2_create_ah(struct ibv_pd *ibpd, struct ibv_ah_attr *attr);
int rxe2_destroy_ah(struct ibv_ah *ibah);

#endif /* RXE2_PROVIDER_H */
