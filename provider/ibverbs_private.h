/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The private libibverbs provider ABI, as librxe2 uses it.
 *
 * Why this file exists: no distribution's libibverbs-dev installs
 * <infiniband/driver.h>, the header providers are compiled against
 * inside the rdma-core tree.  A provider built out of tree must declare
 * that ABI itself.  Everything below was written from the facts in
 * rdma-core's sources (libibverbs/driver.h, kern-abi.h, cmd_ioctl.h,
 * init.c, device.c, dummy_ops.c) of each release it declares.
 *
 * The releases: check-libibverbs (run by the Makefile before compiling)
 * maps the installed libibverbs-dev to the rdma-core release whose layout
 * this file declares and writes RXE2_RDMA_CORE (44, 56, 65) with its
 * private ABI and version range into ibverbs_release.h; a libibverbs it
 * has no release for is refused there, by name.  What a release changed
 * is an "#if RXE2_RDMA_CORE >= <the release that changed it>" here, so
 * a release in between costs its line in check-libibverbs, its pins and
 * a run of check-layout.  docs/rdma-core.md has the history.
 *
 * Why it is safe: the private ABI number alone does not pin the layouts
 * (struct verbs_qp embeds the public ibv_qp_ex, which grew in 1.14.44
 * and 1.14.45 under IBVERBS_PRIVATE_34, and moved verbs_qp.comp_mask,
 * which libibverbs reads and writes), so six independent guards exist:
 *   1. check-libibverbs refuses a libibverbs-dev outside every range.
 *   2. The _Static_asserts below pin, per release, every size and offset
 *      that libibverbs reads or writes in our memory (x86_64 numbers).
 *   3. check-layout compiles this file and the release's own driver.h
 *      (Debian's source package of that release) and compares every
 *      structure member by member and every prototype (make
 *      check-layout; CI runs it for each release).
 *   4. The library is linked with -Wl,-z,defs and check-symbols checks
 *      that every private symbol binds to IBVERBS_PRIVATE_<PABI>, so a
 *      libibverbs with another private ABI refuses to load us; and
 *      rxe2_main.c refuses to register with a libibverbs outside the
 *      range it was built for.
 *   5. rxe2_alloc_context() checks at run time that what libibverbs
 *      wrote into our structures landed where these declarations say
 *      it should, and fails ibv_open_device() with EPROTO if not.
 *   6. rxe2_send_init() checks that libibverbs' ibv_qp_to_qp_ex()
 *      finds a QP's ibv_qp_ex where we put it (EPROTO if not).
 * Only what librxe2 uses is declared.
 *
 * The command wrappers (struct ibv_alloc_pd ...) are the "legacy write"
 * layout libibverbs' ibv_cmd_*() helpers expect: the uverbs command
 * header immediately followed by the kernel's core request.  A provider
 * appends its own udata right after the core request (and right after
 * the core response on the way back); libibverbs forwards everything past
 * sizeof(wrapper) as driver data, both over write() and over ioctl().
 */
#ifndef RXE2_IBVERBS_PRIVATE_H
#define RXE2_IBVERBS_PRIVATE_H

#ifdef RXE2_IN_TREE
/*
 * Built inside an rdma-core tree as providers/rxe2: provider/CMakeLists.txt
 * defines RXE2_IN_TREE, and RXE2_RDMA_CORE to the tree's release.  There
 * the private ABI is the tree's own <infiniband/driver.h>, so nothing
 * below is declared or pinned, and guards 1-4 are left out: rdma-core
 * links the provider to its own IBVERBS_PRIVATE_<PABI>.  Guards 5 and 6
 * stay, as they hold for any tree and still catch a libibverbs whose
 * layout moved under the same private ABI (v62 grew the ops under 59).
 */
#include <infiniband/driver.h>

#define RXE2_IOCTL_NO_UHW _UHW_NO_INDEX

#else /* !RXE2_IN_TREE: built on its own, against a distribution's libibverbs */

/* RXE2_RDMA_CORE, RXE2_IBVERBS_PABI and the version range, or -D of them */
#ifndef RXE2_RDMA_CORE
#include "ibverbs_release.h"
#endif

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

#if RXE2_RDMA_CORE != 44 && RXE2_RDMA_CORE != 56 && RXE2_RDMA_CORE != 65
#error "librxe2: ibverbs_private.h declares rdma-core 44, 56 and 65 only"
#endif

/* ccan's struct list_node: libibverbs links devices through these */
struct verbs_list_node {
	struct verbs_list_node *next;
	struct verbs_list_node *prev;
};

/* ------------------------------------------------------------------ */
/* Device discovery and matching                                       */
/* ------------------------------------------------------------------ */

enum verbs_match_kind {
	VERBS_MATCH_SENTINEL = 0,
	VERBS_MATCH_PCI = 1,
	VERBS_MATCH_MODALIAS = 2,
	VERBS_MATCH_DRIVER_ID = 3,
};

struct verbs_match_ent {
	void *driver_data;
	union {
		const char *modalias;
		uint64_t driver_id;
	} u;
	uint16_t vendor;
	uint16_t device;
	uint8_t kind;			/* enum verbs_match_kind */
};

/* One uverbs device found in sysfs; libibverbs owns it. */
struct verbs_sysfs_dev {
	struct verbs_list_node entry;
	void *provider_data;
	const struct verbs_match_ent *match;
	unsigned int flags;
	char sysfs_name[IBV_SYSFS_NAME_MAX];	/* "uverbsN" */
	dev_t sysfs_cdev;
	char ibdev_name[IBV_SYSFS_NAME_MAX];	/* "rxe2_0" */
	char ibdev_path[IBV_SYSFS_PATH_MAX];	/* /sys/class/infiniband/... */
	char modalias[512];
	uint64_t node_guid;
	uint32_t driver_id;		/* from netlink */
	enum ibv_node_type node_type;
	int ibdev_idx;
	uint32_t num_ports;
	uint32_t abi_ver;		/* uverbs abi_version of the device */
	struct timespec time_created;
};

struct verbs_device;

struct verbs_device_ops {
	const char *name;
	uint32_t match_min_abi_version;
	uint32_t match_max_abi_version;
	const struct verbs_match_ent *match_table;	/* sentinel-terminated */
	const struct verbs_device_ops **static_providers;
	bool (*match_device)(struct verbs_sysfs_dev *sysfs_dev);
	struct verbs_context *(*alloc_context)(struct ibv_device *device,
					       int cmd_fd, void *private_data);
	struct verbs_context *(*import_context)(struct ibv_device *device,
						int cmd_fd);
	struct verbs_device *(*alloc_device)(struct verbs_sysfs_dev *sysfs_dev);
	void (*uninit_device)(struct verbs_device *device);
};

/* Allocated by the provider's alloc_device, filled in by libibverbs. */
struct verbs_device {
	struct ibv_device device;	/* first: ibv_device * casts to this */
	const struct verbs_device_ops *ops;
	atomic_int refcount;
	struct verbs_list_node entry;
	struct verbs_sysfs_dev *sysfs;
	uint64_t core_support;
};

static inline struct verbs_device *verbs_get_device(const struct ibv_device *dev)
{
	return (struct verbs_device *)((const char *)dev -
				       offsetof(struct verbs_device, device));
}

/* ------------------------------------------------------------------ */
/* Objects libibverbs reaches into                                     */
/* ------------------------------------------------------------------ */

enum ibv_mr_type {
	IBV_MR_TYPE_MR,
	IBV_MR_TYPE_NULL_MR,
	IBV_MR_TYPE_IMPORTED_MR,
	IBV_MR_TYPE_DMABUF_MR,
};

struct verbs_mr {
	struct ibv_mr ibv_mr;
	enum ibv_mr_type mr_type;
	int access;
};

/* device memory: ibv_cmd_alloc_dm() fills handle */
struct verbs_dm {
	struct ibv_dm dm;
	uint32_t handle;
};

/* an XRC domain: ibv_cmd_open_xrcd() fills handle and sets comp_mask */
enum verbs_xrcd_mask {
	VERBS_XRCD_HANDLE = 1 << 0,
};

struct verbs_xrcd {
	struct ibv_xrcd xrcd;
	uint32_t comp_mask;		/* enum verbs_xrcd_mask */
	uint32_t handle;
};

/*
 * ibv_qp_to_qp_ex() casts every ibv_qp to this and reads comp_mask, so
 * each QP a provider hands out must be a full verbs_qp.
 */
enum verbs_qp_mask {
	VERBS_QP_XRCD = 1 << 0,
	VERBS_QP_EX = 1 << 1,
};

struct verbs_qp {
	union {
		struct ibv_qp qp;
		struct ibv_qp_ex qp_ex;
	};
	uint32_t comp_mask;		/* enum verbs_qp_mask */
	struct verbs_xrcd *xrcd;
};

/*
 * libibverbs treats every CQ as one of these: ibv_create_cq_ex() hands
 * out the ibv_cq_ex view, ibv_cq_ex_to_cq() casts it back, and the
 * leading fields of the two views are shared.
 */
struct verbs_cq {
	union {
		struct ibv_cq cq;
		struct ibv_cq_ex cq_ex;
	};
};

struct verbs_srq {
	struct ibv_srq srq;
	enum ibv_srq_type srq_type;
	struct verbs_xrcd *xrcd;
	struct ibv_cq *cq;
	uint32_t srq_num;
};

/* ------------------------------------------------------------------ */
/* The context operations                                              */
/* ------------------------------------------------------------------ */

struct ibv_parent_domain_init_attr;
struct ibv_td_init_attr;
struct ibv_counter_attach_attr;
struct ibv_counters_init_attr;
struct ibv_flow_action_esp_attr;
struct ibv_ops_wr;
struct ibv_ece;
struct ibv_values_ex;
struct ibv_modify_cq_attr;
struct ibv_qp_rate_limit_attr;
/* only in the ops of newer releases, which rxe2 leaves to libibverbs */
struct ibv_buf;
struct ibv_dmah;
struct ibv_dmah_init_attr;
struct ibv_mr_init_attr;
struct ibv_comp_cntr;
struct ibv_comp_cntr_init_attr;
struct ibv_comp_cntr_caps;
struct ibv_qp_attach_comp_cntr_attr;

/*
 * Every op a provider may implement, sorted by name: libibverbs copies
 * the non-NULL ones over its defaults with verbs_set_ops().  The order is
 * the ABI.  76 ops in 44 and 56; each release that added some is named
 * (RXE2_CONTEXT_OPS below counts them).
 */
struct verbs_context_ops {
	int (*advise_mr)(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
			 uint32_t flags, struct ibv_sge *sg_list,
			 uint32_t num_sges);
#if RXE2_RDMA_CORE >= 64
	void *(*alloc_buf)(struct ibv_pd *pd, size_t size,
			   struct ibv_buf **buf);
#endif
	struct ibv_dm *(*alloc_dm)(struct ibv_context *context,
				   struct ibv_alloc_dm_attr *attr);
#if RXE2_RDMA_CORE >= 59
	struct ibv_dmah *(*alloc_dmah)(struct ibv_context *context,
				       struct ibv_dmah_init_attr *attr);
#endif
	struct ibv_mw *(*alloc_mw)(struct ibv_pd *pd, enum ibv_mw_type type);
	struct ibv_mr *(*alloc_null_mr)(struct ibv_pd *pd);
	struct ibv_pd *(*alloc_parent_domain)(struct ibv_context *context,
					      struct ibv_parent_domain_init_attr *attr);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *context);
	struct ibv_td *(*alloc_td)(struct ibv_context *context,
				   struct ibv_td_init_attr *init_attr);
	void (*async_event)(struct ibv_context *context,
			    struct ibv_async_event *event);
	int (*attach_counters_point_flow)(struct ibv_counters *counters,
					  struct ibv_counter_attach_attr *attr,
					  struct ibv_flow *flow);
	int (*attach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
	int (*bind_mw)(struct ibv_qp *qp, struct ibv_mw *mw,
		       struct ibv_mw_bind *mw_bind);
	int (*close_xrcd)(struct ibv_xrcd *xrcd);
	void (*cq_event)(struct ibv_cq *cq);
	struct ibv_ah *(*create_ah)(struct ibv_pd *pd, struct ibv_ah_attr *attr);
#if RXE2_RDMA_CORE >= 65
	struct ibv_comp_cntr *(*create_comp_cntr)(struct ibv_context *context,
						  struct ibv_comp_cntr_init_attr *attr);
#endif
	struct ibv_counters *(*create_counters)(struct ibv_context *context,
						struct ibv_counters_init_attr *init_attr);
	struct ibv_cq *(*create_cq)(struct ibv_context *context, int cqe,
				    struct ibv_comp_channel *channel,
				    int comp_vector);
	struct ibv_cq_ex *(*create_cq_ex)(struct ibv_context *context,
					  struct ibv_cq_init_attr_ex *init_attr);
	struct ibv_flow *(*create_flow)(struct ibv_qp *qp,
					struct ibv_flow_attr *flow_attr);
	struct ibv_flow_action *(*create_flow_action_esp)(struct ibv_context *context,
							  struct ibv_flow_action_esp_attr *attr);
	struct ibv_qp *(*create_qp)(struct ibv_pd *pd,
				    struct ibv_qp_init_attr *attr);
	struct ibv_qp *(*create_qp_ex)(struct ibv_context *context,
				       struct ibv_qp_init_attr_ex *attr);
	struct ibv_rwq_ind_table *(*create_rwq_ind_table)(struct ibv_context *context,
							  struct ibv_rwq_ind_table_init_attr *init_attr);
	struct ibv_srq *(*create_srq)(struct ibv_pd *pd,
				      struct ibv_srq_init_attr *attr);
	struct ibv_srq *(*create_srq_ex)(struct ibv_context *context,
					 struct ibv_srq_init_attr_ex *attr);
	struct ibv_wq *(*create_wq)(struct ibv_context *context,
				    struct ibv_wq_init_attr *wq_init_attr);
#if RXE2_RDMA_CORE >= 59
	int (*dealloc_dmah)(struct ibv_dmah *dmah);
#endif
	int (*dealloc_mw)(struct ibv_mw *mw);
	int (*dealloc_pd)(struct ibv_pd *pd);
	int (*dealloc_td)(struct ibv_td *td);
	int (*dereg_mr)(struct verbs_mr *vmr);
	int (*destroy_ah)(struct ibv_ah *ah);
#if RXE2_RDMA_CORE >= 65
	int (*destroy_comp_cntr)(struct ibv_comp_cntr *comp_cntr);
#endif
	int (*destroy_counters)(struct ibv_counters *counters);
	int (*destroy_cq)(struct ibv_cq *cq);
	int (*destroy_flow)(struct ibv_flow *flow);
	int (*destroy_flow_action)(struct ibv_flow_action *action);
	int (*destroy_qp)(struct ibv_qp *qp);
	int (*destroy_rwq_ind_table)(struct ibv_rwq_ind_table *rwq_ind_table);
	int (*destroy_srq)(struct ibv_srq *srq);
	int (*destroy_wq)(struct ibv_wq *wq);
	int (*detach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
#if RXE2_RDMA_CORE >= 62
	int (*dm_export_dmabuf_fd)(struct ibv_dm *dm);
#endif
#if RXE2_RDMA_CORE >= 64
	void (*free_buf)(struct ibv_buf *buf);
#endif
	void (*free_context)(struct ibv_context *context);
	int (*free_dm)(struct ibv_dm *dm);
	int (*get_srq_num)(struct ibv_srq *srq, uint32_t *srq_num);
	struct ibv_dm *(*import_dm)(struct ibv_context *context,
				    uint32_t dm_handle);
	struct ibv_mr *(*import_mr)(struct ibv_pd *pd, uint32_t mr_handle);
	struct ibv_pd *(*import_pd)(struct ibv_context *context,
				    uint32_t pd_handle);
#if RXE2_RDMA_CORE >= 65
	int (*inc_comp_cntr)(struct ibv_comp_cntr *comp_cntr, uint64_t amount);
	int (*inc_err_comp_cntr)(struct ibv_comp_cntr *comp_cntr,
				 uint64_t amount);
#endif
	int (*modify_cq)(struct ibv_cq *cq, struct ibv_modify_cq_attr *attr);
	int (*modify_flow_action_esp)(struct ibv_flow_action *action,
				      struct ibv_flow_action_esp_attr *attr);
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			 int attr_mask);
	int (*modify_qp_rate_limit)(struct ibv_qp *qp,
				    struct ibv_qp_rate_limit_attr *attr);
	int (*modify_srq)(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
			  int srq_attr_mask);
	int (*modify_wq)(struct ibv_wq *wq, struct ibv_wq_attr *wq_attr);
	struct ibv_qp *(*open_qp)(struct ibv_context *context,
				  struct ibv_qp_open_attr *attr);
	struct ibv_xrcd *(*open_xrcd)(struct ibv_context *context,
				      struct ibv_xrcd_init_attr *attr);
	int (*poll_cq)(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
	int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr);
	int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr,
			 struct ibv_send_wr **bad_wr);
	int (*post_srq_ops)(struct ibv_srq *srq, struct ibv_ops_wr *op,
			    struct ibv_ops_wr **bad_op);
	int (*post_srq_recv)(struct ibv_srq *srq, struct ibv_recv_wr *recv_wr,
			     struct ibv_recv_wr **bad_recv_wr);
#if RXE2_RDMA_CORE >= 65
	int (*qp_attach_comp_cntr)(struct ibv_qp *qp,
				   struct ibv_comp_cntr *comp_cntr,
				   struct ibv_qp_attach_comp_cntr_attr *attr);
	int (*query_comp_cntr_caps)(struct ibv_context *context,
				    struct ibv_comp_cntr_caps *caps,
				    size_t caps_size);
#endif
	int (*query_device_ex)(struct ibv_context *context,
			       const struct ibv_query_device_ex_input *input,
			       struct ibv_device_attr_ex *attr,
			       size_t attr_size);
	int (*query_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	int (*query_port)(struct ibv_context *context, uint8_t port_num,
			  struct ibv_port_attr *port_attr);
#if RXE2_RDMA_CORE >= 62
	int (*query_port_speed)(struct ibv_context *context, uint32_t port_num,
				uint64_t *speed);
#endif
	int (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			int attr_mask, struct ibv_qp_init_attr *init_attr);
	int (*query_qp_data_in_order)(struct ibv_qp *qp, enum ibv_wr_opcode op,
				      uint32_t flags);
	int (*query_rt_values)(struct ibv_context *context,
			       struct ibv_values_ex *values);
	int (*query_srq)(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr);
#if RXE2_RDMA_CORE >= 65
	int (*read_comp_cntr)(struct ibv_comp_cntr *comp_cntr, uint64_t *value);
#endif
	int (*read_counters)(struct ibv_counters *counters,
			     uint64_t *counters_value, uint32_t ncounters,
			     uint32_t flags);
#if RXE2_RDMA_CORE >= 65
	int (*read_err_comp_cntr)(struct ibv_comp_cntr *comp_cntr,
				  uint64_t *value);
#endif
	struct ibv_mr *(*reg_dm_mr)(struct ibv_pd *pd, struct ibv_dm *dm,
				    uint64_t dm_offset, size_t length,
				    unsigned int access);
	struct ibv_mr *(*reg_dmabuf_mr)(struct ibv_pd *pd, uint64_t offset,
					size_t length, uint64_t iova, int fd,
					int access);
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t length,
				 uint64_t hca_va, int access);
#if RXE2_RDMA_CORE >= 59
	struct ibv_mr *(*reg_mr_ex)(struct ibv_pd *pd,
				    struct ibv_mr_init_attr *mr_init_attr);
#endif
	int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
	int (*rereg_mr)(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
			void *addr, size_t length, int access);
	int (*resize_cq)(struct ibv_cq *cq, int cqe);
#if RXE2_RDMA_CORE >= 65
	int (*set_comp_cntr)(struct ibv_comp_cntr *comp_cntr, uint64_t value);
#endif
	int (*set_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
#if RXE2_RDMA_CORE >= 65
	int (*set_err_comp_cntr)(struct ibv_comp_cntr *comp_cntr,
				 uint64_t value);
#endif
	void (*unimport_dm)(struct ibv_dm *dm);
	void (*unimport_mr)(struct ibv_mr *mr);
	void (*unimport_pd)(struct ibv_pd *pd);
};

/* ------------------------------------------------------------------ */
/* Legacy write command wrappers                                       */
/* ------------------------------------------------------------------ */

/*
 * The kernel structs end in a flexible driver_data[] array; embedding
 * them is what libibverbs itself does (a GNU C extension), and it puts
 * our udata exactly where the kernel looks for it.
 */
#define RXE2_DECLARE_WRITE_CMD(name, kstruct)			\
	struct name {						\
		struct ib_uverbs_cmd_hdr hdr;			\
		struct kstruct core;				\
	}

RXE2_DECLARE_WRITE_CMD(ibv_get_context, ib_uverbs_get_context);
RXE2_DECLARE_WRITE_CMD(ibv_query_port, ib_uverbs_query_port);
RXE2_DECLARE_WRITE_CMD(ibv_alloc_pd, ib_uverbs_alloc_pd);
RXE2_DECLARE_WRITE_CMD(ibv_reg_mr, ib_uverbs_reg_mr);
RXE2_DECLARE_WRITE_CMD(ibv_alloc_mw, ib_uverbs_alloc_mw);
RXE2_DECLARE_WRITE_CMD(ibv_rereg_mr, ib_uverbs_rereg_mr);
RXE2_DECLARE_WRITE_CMD(ibv_create_cq, ib_uverbs_create_cq);
RXE2_DECLARE_WRITE_CMD(ibv_resize_cq, ib_uverbs_resize_cq);
RXE2_DECLARE_WRITE_CMD(ibv_create_qp, ib_uverbs_create_qp);
RXE2_DECLARE_WRITE_CMD(ibv_modify_qp, ib_uverbs_modify_qp);
RXE2_DECLARE_WRITE_CMD(ibv_query_qp, ib_uverbs_query_qp);
RXE2_DECLARE_WRITE_CMD(ibv_create_srq, ib_uverbs_create_srq);
RXE2_DECLARE_WRITE_CMD(ibv_modify_srq, ib_uverbs_modify_srq);
RXE2_DECLARE_WRITE_CMD(ibv_query_srq, ib_uverbs_query_srq);
RXE2_DECLARE_WRITE_CMD(ibv_open_xrcd, ib_uverbs_open_xrcd);
RXE2_DECLARE_WRITE_CMD(ibv_create_xsrq, ib_uverbs_create_xsrq);
RXE2_DECLARE_WRITE_CMD(ibv_open_qp, ib_uverbs_open_qp);

/* Extended commands: the uverbs header, the extended header, the core */
#define RXE2_DECLARE_EX_CMD(name, kstruct)			\
	struct name {						\
		struct ib_uverbs_cmd_hdr hdr;			\
		struct ib_uverbs_ex_cmd_hdr ex_hdr;		\
		struct kstruct core;				\
	}

RXE2_DECLARE_EX_CMD(ibv_create_cq_ex, ib_uverbs_ex_create_cq);
RXE2_DECLARE_EX_CMD(ibv_create_qp_ex, ib_uverbs_ex_create_qp);
RXE2_DECLARE_EX_CMD(ibv_modify_cq, ib_uverbs_ex_modify_cq);
RXE2_DECLARE_EX_CMD(ibv_modify_qp_ex, ib_uverbs_ex_modify_qp);
RXE2_DECLARE_EX_CMD(ibv_create_wq, ib_uverbs_ex_create_wq);
RXE2_DECLARE_EX_CMD(ibv_modify_wq, ib_uverbs_ex_modify_wq);

/* ------------------------------------------------------------------ */
/* Functions exported under IBVERBS_PRIVATE_<PABI>                     */
/* ------------------------------------------------------------------ */

/*
 * The generation number is part of the symbol name, so a libibverbs
 * with another private ABI cannot even resolve it.
 */
#define RXE2_PASTE(a, b)	a##b
#define RXE2_PASTE2(a, b)	RXE2_PASTE(a, b)
#define verbs_register_driver \
	RXE2_PASTE2(verbs_register_driver_, RXE2_IBVERBS_PABI)
void verbs_register_driver(const struct verbs_device_ops *ops);

/*
 * Allocates alloc_size zeroed bytes and initialises the verbs_context
 * found context_offset bytes in (the offset travels as a pointer value).
 * On failure closes cmd_fd and returns NULL with errno set.
 */
void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd,
				    size_t alloc_size,
				    struct verbs_context *context_offset,
				    uint32_t driver_id);
void verbs_uninit_context(struct verbs_context *context);
void verbs_set_ops(struct verbs_context *vctx,
		   const struct verbs_context_ops *ops);

int ibv_read_ibdev_sysfs_file(char *buf, size_t size,
			      struct verbs_sysfs_dev *sysfs_dev,
			      const char *fnfmt, ...)
	__attribute__((format(printf, 4, 5)));

/* The ibv_cmd_*() helpers return 0 or a positive errno value. */
/* driver: NULL (rxe2 adds no driver attributes) */
struct ibv_command_buffer;
int ibv_cmd_query_context(struct ibv_context *context,
			  struct ibv_command_buffer *driver);
/* fd_arr (57 on): file descriptors to pass to the kernel (none here) */
int ibv_cmd_get_context(struct verbs_context *context,
			struct ibv_get_context *cmd, size_t cmd_size,
#if RXE2_RDMA_CORE >= 57
			struct ibv_fd_arr *fd_arr,
#endif
			struct ib_uverbs_get_context_resp *resp,
			size_t resp_size);
int ibv_cmd_query_device_any(struct ibv_context *context,
			     const struct ibv_query_device_ex_input *input,
			     struct ibv_device_attr_ex *attr, size_t attr_size,
			     struct ib_uverbs_ex_query_device_resp *resp,
			     size_t *resp_size);
int ibv_cmd_query_port(struct ibv_context *context, uint8_t port_num,
		       struct ibv_port_attr *port_attr,
		       struct ibv_query_port *cmd, size_t cmd_size);
int ibv_cmd_alloc_pd(struct ibv_context *context, struct ibv_pd *pd,
		     struct ibv_alloc_pd *cmd, size_t cmd_size,
		     struct ib_uverbs_alloc_pd_resp *resp, size_t resp_size);
int ibv_cmd_dealloc_pd(struct ibv_pd *pd);
int ibv_cmd_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
		   uint64_t hca_va, int access, struct verbs_mr *vmr,
		   struct ibv_reg_mr *cmd, size_t cmd_size,
		   struct ib_uverbs_reg_mr_resp *resp, size_t resp_size);
/* sets lkey/rkey from the response, and the context when the PD changes */
int ibv_cmd_rereg_mr(struct verbs_mr *vmr, uint32_t flags, void *addr,
		     size_t length, uint64_t hca_va, int access,
		     struct ibv_pd *pd, struct ibv_rereg_mr *cmd,
		     size_t cmd_sz, struct ib_uverbs_rereg_mr_resp *resp,
		     size_t resp_sz);
int ibv_cmd_dereg_mr(struct verbs_mr *vmr);
/* link: further attributes of the method (driver ones), or NULL */
int ibv_cmd_alloc_dm(struct ibv_context *ctx,
		     const struct ibv_alloc_dm_attr *dm_attr,
		     struct verbs_dm *dm, struct ibv_command_buffer *link);
int ibv_cmd_free_dm(struct verbs_dm *dm);
int ibv_cmd_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length,
			  uint64_t iova, int fd, int access,
#if RXE2_RDMA_CORE >= 54
			  struct verbs_mr *vmr,
			  struct ibv_command_buffer *driver);
#else
			  struct verbs_mr *vmr);
#endif
int ibv_cmd_reg_dm_mr(struct ibv_pd *pd, struct verbs_dm *dm,
		      uint64_t offset, size_t length, unsigned int access,
		      struct verbs_mr *vmr, struct ibv_command_buffer *link);
int ibv_cmd_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
		      uint32_t flags, struct ibv_sge *sg_list,
		      uint32_t num_sge);
int ibv_cmd_query_mr(struct ibv_pd *pd, struct verbs_mr *vmr,
		     uint32_t mr_handle);
int ibv_cmd_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type,
		     struct ibv_mw *mw, struct ibv_alloc_mw *cmd,
		     size_t cmd_size, struct ib_uverbs_alloc_mw_resp *resp,
		     size_t resp_size);
int ibv_cmd_dealloc_mw(struct ibv_mw *mw);
int ibv_cmd_create_cq(struct ibv_context *context, int cqe,
		      struct ibv_comp_channel *channel, int comp_vector,
		      struct ibv_cq *cq, struct ibv_create_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_create_cq_resp *resp,
		      size_t resp_size);
/* prov_attr (59 on): a CQ buffer the provider allocated (none here) */
struct verbs_create_cq_prov_attr;
int ibv_cmd_create_cq_ex(struct ibv_context *context,
			 const struct ibv_cq_init_attr_ex *cq_attr,
#if RXE2_RDMA_CORE >= 59
			 struct verbs_create_cq_prov_attr *prov_attr,
#endif
			 struct verbs_cq *cq, struct ibv_create_cq_ex *cmd,
			 size_t cmd_size,
			 struct ib_uverbs_ex_create_cq_resp *resp,
			 size_t resp_size, uint32_t cmd_flags);
int ibv_cmd_req_notify_cq(struct ibv_cq *cq, int solicited_only);
int ibv_cmd_destroy_cq(struct ibv_cq *cq);
/* sets cq->cqe from the response */
int ibv_cmd_resize_cq(struct ibv_cq *cq, int cqe, struct ibv_resize_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_resize_cq_resp *resp,
		      size_t resp_size);
int ibv_cmd_modify_cq(struct ibv_cq *cq, struct ibv_modify_cq_attr *attr,
		      struct ibv_modify_cq *cmd, size_t cmd_size);
int ibv_cmd_create_qp_ex(struct ibv_context *context, struct verbs_qp *qp,
			 struct ibv_qp_init_attr_ex *attr_ex,
			 struct ibv_create_qp *cmd, size_t cmd_size,
			 struct ib_uverbs_create_qp_resp *resp,
			 size_t resp_size);
/* the extended command: create_flags (and the other ex attributes) */
int ibv_cmd_create_qp_ex2(struct ibv_context *context, struct verbs_qp *qp,
			  struct ibv_qp_init_attr_ex *attr_ex,
			  struct ibv_create_qp_ex *cmd, size_t cmd_size,
			  struct ib_uverbs_ex_create_qp_resp *resp,
#if RXE2_RDMA_CORE >= 64
			  size_t resp_size, struct ibv_command_buffer *driver);
#else
			  size_t resp_size);
#endif
int ibv_cmd_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		      int attr_mask, struct ibv_modify_qp *cmd,
		      size_t cmd_size);
/* the extended command: the only one that carries IBV_QP_RATE_LIMIT */
int ibv_cmd_modify_qp_ex(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			 int attr_mask, struct ibv_modify_qp_ex *cmd,
			 size_t cmd_size,
			 struct ib_uverbs_ex_modify_qp_resp *resp,
			 size_t resp_size);
int ibv_cmd_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *qp_attr,
		     int attr_mask, struct ibv_qp_init_attr *qp_init_attr,
		     struct ibv_query_qp *cmd, size_t cmd_size);
int ibv_cmd_destroy_qp(struct ibv_qp *qp);
int ibv_cmd_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			 uint16_t lid);
int ibv_cmd_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			 uint16_t lid);
int ibv_cmd_create_srq(struct ibv_pd *pd, struct ibv_srq *srq,
		       struct ibv_srq_init_attr *attr,
		       struct ibv_create_srq *cmd, size_t cmd_size,
		       struct ib_uverbs_create_srq_resp *resp,
		       size_t resp_size);
int ibv_cmd_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		       int srq_attr_mask, struct ibv_modify_srq *cmd,
		       size_t cmd_size);
int ibv_cmd_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		      struct ibv_query_srq *cmd, size_t cmd_size);
int ibv_cmd_destroy_srq(struct ibv_srq *srq);
/* XRC: vxrcd_size and vqp_sz are sizeof(struct verbs_xrcd / verbs_qp) */
int ibv_cmd_open_xrcd(struct ibv_context *context, struct verbs_xrcd *xrcd,
		      int vxrcd_size, struct ibv_xrcd_init_attr *attr,
		      struct ibv_open_xrcd *cmd, size_t cmd_size,
		      struct ib_uverbs_open_xrcd_resp *resp, size_t resp_size);
int ibv_cmd_close_xrcd(struct verbs_xrcd *xrcd);
int ibv_cmd_create_srq_ex(struct ibv_context *context, struct verbs_srq *srq,
			  struct ibv_srq_init_attr_ex *attr_ex,
			  struct ibv_create_xsrq *cmd, size_t cmd_size,
			  struct ib_uverbs_create_srq_resp *resp,
			  size_t resp_size);
int ibv_cmd_open_qp(struct ibv_context *context, struct verbs_qp *qp,
		    int vqp_sz, struct ibv_qp_open_attr *attr,
		    struct ibv_open_qp *cmd, size_t cmd_size,
		    struct ib_uverbs_create_qp_resp *resp, size_t resp_size);
int ibv_cmd_create_ah(struct ibv_pd *pd, struct ibv_ah *ah,
		      struct ibv_ah_attr *attr,
		      struct ib_uverbs_create_ah_resp *resp, size_t resp_size);
int ibv_cmd_destroy_ah(struct ibv_ah *ah);
/* flow steering: ucmd is the driver's part of the command (none here) */
int ibv_cmd_create_flow(struct ibv_qp *qp, struct ibv_flow *flow_id,
			struct ibv_flow_attr *flow_attr, void *ucmd,
			size_t ucmd_size);
int ibv_cmd_destroy_flow(struct ibv_flow *flow_id);
/* WQs and indirection tables */
int ibv_cmd_create_wq(struct ibv_context *context,
		      struct ibv_wq_init_attr *wq_init_attr, struct ibv_wq *wq,
		      struct ibv_create_wq *cmd, size_t cmd_size,
		      struct ib_uverbs_ex_create_wq_resp *resp,
		      size_t resp_size);
int ibv_cmd_modify_wq(struct ibv_wq *wq, struct ibv_wq_attr *attr,
		      struct ibv_modify_wq *cmd, size_t cmd_size);
int ibv_cmd_destroy_wq(struct ibv_wq *wq);
int ibv_cmd_create_rwq_ind_table(struct ibv_context *context,
				 struct ibv_rwq_ind_table_init_attr *init_attr,
				 struct ibv_rwq_ind_table *rwq_ind_table,
				 struct ib_uverbs_ex_create_rwq_ind_table_resp *resp,
				 size_t resp_size);
int ibv_cmd_destroy_rwq_ind_table(struct ibv_rwq_ind_table *rwq_ind_table);
/* counters objects: link is a further command buffer (none here) */
struct verbs_counters {
	struct ibv_counters counters;
	uint32_t handle;
};
int ibv_cmd_create_counters(struct ibv_context *context,
			    struct ibv_counters_init_attr *init_attr,
			    struct verbs_counters *vcounters,
			    struct ibv_command_buffer *link);
int ibv_cmd_destroy_counters(struct verbs_counters *vcounters);
int ibv_cmd_read_counters(struct verbs_counters *vcounters,
			  uint64_t *counters_value, uint32_t ncounters,
			  uint32_t flags, struct ibv_command_buffer *link);

/* ------------------------------------------------------------------ */
/* Driver ioctl methods (rxe2dv.c)                                     */
/* ------------------------------------------------------------------ */

#include <rdma/rdma_user_ioctl_cmds.h>

/*
 * libibverbs' ioctl command: this header, then the attribute array
 * (hdr.attrs) in the same memory.  execute_ioctl() sends
 * hdr.attrs[0 .. next_attr) plus those of the buffers chained through
 * next (none for us), fills in hdr.length, num_attrs and driver_id and
 * calls RDMA_VERBS_IOCTL on the context's cmd_fd; it returns 0 or the
 * errno.  The uhw indexes must be RXE2_IOCTL_NO_UHW (no legacy udata)
 * and the three flag bits 0.  This layout and execute_ioctl() read the
 * same in rdma-core v36.0, v44.0 and v56.0 (libibverbs/cmd_ioctl.[ch]).
 */
#define RXE2_IOCTL_NO_UHW 0xff

struct ibv_command_buffer {
	struct ibv_command_buffer *next;
	struct ib_uverbs_attr *next_attr;
	struct ib_uverbs_attr *last_attr;
	uint8_t uhw_in_idx;
	uint8_t uhw_out_idx;
	uint8_t uhw_in_headroom_dwords;
	uint8_t uhw_out_headroom_dwords;
	uint8_t buffer_error:1;
	uint8_t fallback_require_ex:1;
	uint8_t fallback_ioctl_only:1;
	struct ib_uverbs_ioctl_hdr hdr;	/* attrs[] follow */
};

int execute_ioctl(struct ibv_context *context, struct ibv_command_buffer *cmd);

/* ------------------------------------------------------------------ */
/* Pinned layout                                                       */
/* ------------------------------------------------------------------ */

#ifndef RXE2_LAYOUT_UNPINNED	/* check-layout: what is, not what we pinned */
#define RXE2_PIN_SIZE(type, size) \
	_Static_assert(sizeof(type) == (size), "size of " #type)
#define RXE2_PIN_OFF(type, member, off) \
	_Static_assert(offsetof(type, member) == (off), #type "." #member)

/* How many ops each release's verbs_context_ops holds */
#if RXE2_RDMA_CORE >= 65
#define RXE2_CONTEXT_OPS 93
#else
#define RXE2_CONTEXT_OPS 76
#endif

/* Relations that hold on every architecture */
_Static_assert(sizeof(struct verbs_context_ops) ==
	       RXE2_CONTEXT_OPS * sizeof(void *),
	       "verbs_context_ops holds exactly its release's ops");
_Static_assert(offsetof(struct verbs_device, device) == 0,
	       "ibv_device must open verbs_device");
_Static_assert(offsetof(struct verbs_mr, ibv_mr) == 0,
	       "ibv_mr must open verbs_mr");
_Static_assert(offsetof(struct verbs_qp, qp) == 0 &&
	       offsetof(struct ibv_qp_ex, qp_base) == 0,
	       "ibv_qp must open verbs_qp");
_Static_assert(offsetof(struct verbs_cq, cq) == 0 &&
	       offsetof(struct verbs_cq, cq_ex) == 0,
	       "ibv_cq and ibv_cq_ex must open verbs_cq");
/* the fields libibverbs reaches through either view must coincide */
_Static_assert(offsetof(struct ibv_cq, context) ==
	       offsetof(struct ibv_cq_ex, context) &&
	       offsetof(struct ibv_cq, channel) ==
	       offsetof(struct ibv_cq_ex, channel) &&
	       offsetof(struct ibv_cq, cq_context) ==
	       offsetof(struct ibv_cq_ex, cq_context) &&
	       offsetof(struct ibv_cq, handle) ==
	       offsetof(struct ibv_cq_ex, handle) &&
	       offsetof(struct ibv_cq, cqe) == offsetof(struct ibv_cq_ex, cqe) &&
	       offsetof(struct ibv_cq, mutex) ==
	       offsetof(struct ibv_cq_ex, mutex) &&
	       offsetof(struct ibv_cq, cond) == offsetof(struct ibv_cq_ex, cond) &&
	       offsetof(struct ibv_cq, comp_events_completed) ==
	       offsetof(struct ibv_cq_ex, comp_events_completed) &&
	       offsetof(struct ibv_cq, async_events_completed) ==
	       offsetof(struct ibv_cq_ex, async_events_completed),
	       "ibv_cq and ibv_cq_ex share their leading fields");
/* the attributes follow the header with no padding between */
_Static_assert(offsetof(struct ibv_command_buffer, hdr) +
	       sizeof(struct ib_uverbs_ioctl_hdr) ==
	       sizeof(struct ibv_command_buffer),
	       "ioctl attributes follow ibv_command_buffer");
_Static_assert(offsetof(struct verbs_srq, srq) == 0,
	       "ibv_srq must open verbs_srq");
_Static_assert(offsetof(struct verbs_context, context) +
	       sizeof(struct ibv_context) == sizeof(struct verbs_context),
	       "ibv_context must close verbs_context");

#if defined(__x86_64__)
/*
 * Numbers on x86_64, measured from each release's own headers (v44.0,
 * 56.1, 65.0); those a release changed are in its block at the end.
 */
RXE2_PIN_SIZE(struct verbs_list_node, 16);

RXE2_PIN_SIZE(struct verbs_match_ent, 24);
RXE2_PIN_OFF(struct verbs_match_ent, u, 8);
RXE2_PIN_OFF(struct verbs_match_ent, vendor, 16);
RXE2_PIN_OFF(struct verbs_match_ent, device, 18);
RXE2_PIN_OFF(struct verbs_match_ent, kind, 20);

RXE2_PIN_SIZE(struct verbs_sysfs_dev, 992);
RXE2_PIN_OFF(struct verbs_sysfs_dev, provider_data, 16);
RXE2_PIN_OFF(struct verbs_sysfs_dev, match, 24);
RXE2_PIN_OFF(struct verbs_sysfs_dev, flags, 32);
RXE2_PIN_OFF(struct verbs_sysfs_dev, sysfs_name, 36);
RXE2_PIN_OFF(struct verbs_sysfs_dev, sysfs_cdev, 104);
RXE2_PIN_OFF(struct verbs_sysfs_dev, ibdev_name, 112);
RXE2_PIN_OFF(struct verbs_sysfs_dev, ibdev_path, 176);
RXE2_PIN_OFF(struct verbs_sysfs_dev, modalias, 432);
RXE2_PIN_OFF(struct verbs_sysfs_dev, node_guid, 944);
RXE2_PIN_OFF(struct verbs_sysfs_dev, driver_id, 952);
RXE2_PIN_OFF(struct verbs_sysfs_dev, node_type, 956);
RXE2_PIN_OFF(struct verbs_sysfs_dev, ibdev_idx, 960);
RXE2_PIN_OFF(struct verbs_sysfs_dev, num_ports, 964);
RXE2_PIN_OFF(struct verbs_sysfs_dev, abi_ver, 968);
RXE2_PIN_OFF(struct verbs_sysfs_dev, time_created, 976);

RXE2_PIN_SIZE(struct verbs_device_ops, 72);
RXE2_PIN_OFF(struct verbs_device_ops, match_min_abi_version, 8);
RXE2_PIN_OFF(struct verbs_device_ops, match_max_abi_version, 12);
RXE2_PIN_OFF(struct verbs_device_ops, match_table, 16);
RXE2_PIN_OFF(struct verbs_device_ops, static_providers, 24);
RXE2_PIN_OFF(struct verbs_device_ops, match_device, 32);
RXE2_PIN_OFF(struct verbs_device_ops, alloc_context, 40);
RXE2_PIN_OFF(struct verbs_device_ops, import_context, 48);
RXE2_PIN_OFF(struct verbs_device_ops, alloc_device, 56);
RXE2_PIN_OFF(struct verbs_device_ops, uninit_device, 64);

RXE2_PIN_SIZE(struct ibv_device, 664);
RXE2_PIN_SIZE(struct verbs_device, 712);
RXE2_PIN_OFF(struct verbs_device, ops, 664);
RXE2_PIN_OFF(struct verbs_device, refcount, 672);
RXE2_PIN_OFF(struct verbs_device, entry, 680);
RXE2_PIN_OFF(struct verbs_device, sysfs, 696);
RXE2_PIN_OFF(struct verbs_device, core_support, 704);

RXE2_PIN_SIZE(struct ibv_mr, 48);
RXE2_PIN_SIZE(struct verbs_mr, 56);
RXE2_PIN_SIZE(struct ibv_dm, 32);
RXE2_PIN_OFF(struct verbs_dm, handle, 32);
RXE2_PIN_OFF(struct verbs_mr, mr_type, 48);
RXE2_PIN_OFF(struct verbs_mr, access, 52);

RXE2_PIN_SIZE(struct ibv_qp, 160);

RXE2_PIN_SIZE(struct ibv_cq, 128);
RXE2_PIN_SIZE(struct ibv_cq_ex, 288);
RXE2_PIN_OFF(struct ibv_cq_ex, comp_mask, 128);
RXE2_PIN_OFF(struct ibv_cq_ex, status, 132);
RXE2_PIN_OFF(struct ibv_cq_ex, wr_id, 136);
RXE2_PIN_OFF(struct ibv_cq_ex, start_poll, 144);
RXE2_PIN_OFF(struct ibv_cq_ex, read_completion_wallclock_ns, 280);
RXE2_PIN_SIZE(struct verbs_cq, 288);

RXE2_PIN_OFF(struct ibv_qp_ex, comp_mask, 160);
RXE2_PIN_OFF(struct ibv_qp_ex, wr_id, 168);
RXE2_PIN_OFF(struct ibv_qp_ex, wr_flags, 176);
RXE2_PIN_OFF(struct ibv_qp_ex, wr_atomic_cmp_swp, 184);
RXE2_PIN_OFF(struct ibv_qp_ex, wr_start, 320);
RXE2_PIN_OFF(struct ibv_qp_ex, wr_atomic_write, 344);

RXE2_PIN_SIZE(struct ibv_srq, 128);
RXE2_PIN_OFF(struct verbs_srq, srq_type, 128);
RXE2_PIN_OFF(struct verbs_srq, xrcd, 136);
RXE2_PIN_OFF(struct verbs_srq, cq, 144);
RXE2_PIN_OFF(struct verbs_srq, srq_num, 152);
RXE2_PIN_SIZE(struct verbs_srq, 160);
RXE2_PIN_SIZE(struct ibv_xrcd, 8);
RXE2_PIN_OFF(struct verbs_xrcd, comp_mask, 8);
RXE2_PIN_OFF(struct verbs_xrcd, handle, 12);
RXE2_PIN_SIZE(struct verbs_xrcd, 16);

RXE2_PIN_SIZE(struct ibv_command_buffer, 56);
RXE2_PIN_OFF(struct ibv_command_buffer, next_attr, 8);
RXE2_PIN_OFF(struct ibv_command_buffer, last_attr, 16);
RXE2_PIN_OFF(struct ibv_command_buffer, uhw_in_idx, 24);
RXE2_PIN_OFF(struct ibv_command_buffer, uhw_out_idx, 25);
RXE2_PIN_OFF(struct ibv_command_buffer, hdr, 32);
RXE2_PIN_SIZE(struct ib_uverbs_ioctl_hdr, 24);
RXE2_PIN_SIZE(struct ib_uverbs_attr, 16);


/* The wrappers: header + core request, our udata follows at this size */
RXE2_PIN_SIZE(struct ib_uverbs_cmd_hdr, 8);
RXE2_PIN_SIZE(struct ibv_get_context, 16);
RXE2_PIN_SIZE(struct ibv_query_port, 24);
RXE2_PIN_SIZE(struct ibv_alloc_pd, 16);
RXE2_PIN_SIZE(struct ibv_reg_mr, 48);
RXE2_PIN_SIZE(struct ibv_alloc_mw, 24);
RXE2_PIN_SIZE(struct ibv_rereg_mr, 56);
RXE2_PIN_SIZE(struct ibv_create_cq, 40);
RXE2_PIN_SIZE(struct ibv_resize_cq, 24);
RXE2_PIN_SIZE(struct ibv_create_qp, 64);
RXE2_PIN_SIZE(struct ibv_modify_qp, 120);
RXE2_PIN_SIZE(struct ibv_query_qp, 24);
RXE2_PIN_SIZE(struct ibv_create_srq, 40);
RXE2_PIN_SIZE(struct ibv_modify_srq, 24);
RXE2_PIN_SIZE(struct ibv_query_srq, 24);
RXE2_PIN_SIZE(struct ibv_open_xrcd, 24);
RXE2_PIN_SIZE(struct ibv_create_xsrq, 56);
RXE2_PIN_SIZE(struct ibv_open_qp, 40);
RXE2_PIN_SIZE(struct ib_uverbs_ex_cmd_hdr, 16);
RXE2_PIN_SIZE(struct ibv_create_cq_ex, 56);
RXE2_PIN_SIZE(struct ibv_create_qp_ex, 88);
RXE2_PIN_SIZE(struct ibv_modify_cq, 40);
RXE2_PIN_SIZE(struct ibv_modify_qp_ex, 144);

/* Core responses: our udata follows at this size */
RXE2_PIN_SIZE(struct ib_uverbs_get_context_resp, 8);
RXE2_PIN_SIZE(struct ib_uverbs_alloc_pd_resp, 4);
RXE2_PIN_SIZE(struct ib_uverbs_reg_mr_resp, 12);
RXE2_PIN_SIZE(struct ib_uverbs_rereg_mr_resp, 8);
RXE2_PIN_SIZE(struct ib_uverbs_create_cq_resp, 8);
RXE2_PIN_SIZE(struct ib_uverbs_ex_create_cq_resp, 16);
RXE2_PIN_SIZE(struct ib_uverbs_resize_cq_resp, 8);
RXE2_PIN_SIZE(struct ib_uverbs_create_qp_resp, 32);
RXE2_PIN_SIZE(struct ib_uverbs_create_srq_resp, 16);
RXE2_PIN_SIZE(struct ib_uverbs_open_xrcd_resp, 4);
RXE2_PIN_SIZE(struct ib_uverbs_create_ah_resp, 4);

/* 44: ibv_qp_ex ends with wr_atomic_write */
#if RXE2_RDMA_CORE == 44
RXE2_PIN_SIZE(struct ibv_qp_ex, 352);
RXE2_PIN_OFF(struct verbs_qp, comp_mask, 352);
RXE2_PIN_OFF(struct verbs_qp, xrcd, 360);
RXE2_PIN_SIZE(struct verbs_qp, 368);
#else	/* 45 on: wr_flush follows it */
RXE2_PIN_SIZE(struct ibv_qp_ex, 360);
RXE2_PIN_OFF(struct verbs_qp, comp_mask, 360);
RXE2_PIN_OFF(struct verbs_qp, xrcd, 368);
RXE2_PIN_SIZE(struct verbs_qp, 376);
#endif

#if RXE2_RDMA_CORE < 59	/* 44 and 56: 76 ops */
RXE2_PIN_SIZE(struct verbs_context_ops, 608);
RXE2_PIN_OFF(struct verbs_context_ops, alloc_pd, 5 * 8);
RXE2_PIN_OFF(struct verbs_context_ops, create_cq_ex, 16 * 8);
RXE2_PIN_OFF(struct verbs_context_ops, create_qp_ex, 20 * 8);
RXE2_PIN_OFF(struct verbs_context_ops, free_context, 39 * 8);
RXE2_PIN_OFF(struct verbs_context_ops, poll_cq, 53 * 8);
RXE2_PIN_OFF(struct verbs_context_ops, post_recv, 54 * 8);
RXE2_PIN_OFF(struct verbs_context_ops, post_send, 55 * 8);
RXE2_PIN_OFF(struct verbs_context_ops, post_srq_recv, 57 * 8);
RXE2_PIN_OFF(struct verbs_context_ops, query_device_ex, 58 * 8);
RXE2_PIN_OFF(struct verbs_context_ops, req_notify_cq, 69 * 8);
RXE2_PIN_OFF(struct verbs_context_ops, resize_cq, 71 * 8);
RXE2_PIN_OFF(struct verbs_context_ops, unimport_pd, 75 * 8);
RXE2_PIN_SIZE(struct verbs_context, 648);
RXE2_PIN_OFF(struct verbs_context, sz, 312);
RXE2_PIN_OFF(struct verbs_context, context, 320);
#else	/* 65: 93 ops, and verbs_context has their pointers too */
RXE2_PIN_SIZE(struct verbs_context_ops, 744);
RXE2_PIN_OFF(struct verbs_context_ops, alloc_pd, 7 * 8);
RXE2_PIN_OFF(struct verbs_context_ops, create_cq_ex, 19 * 8);
RXE2_PIN_OFF(struct verbs_context_ops, create_qp_ex, 23 * 8);
RXE2_PIN_OFF(struct verbs_context_ops, free_context, 46 * 8);
RXE2_PIN_OFF(struct verbs_context_ops, poll_cq, 62 * 8);
RXE2_PIN_OFF(struct verbs_context_ops, post_recv, 63 * 8);
RXE2_PIN_OFF(struct verbs_context_ops, post_send, 64 * 8);
RXE2_PIN_OFF(struct verbs_context_ops, post_srq_recv, 66 * 8);
RXE2_PIN_OFF(struct verbs_context_ops, query_device_ex, 69 * 8);
RXE2_PIN_OFF(struct verbs_context_ops, req_notify_cq, 84 * 8);
RXE2_PIN_OFF(struct verbs_context_ops, resize_cq, 86 * 8);
RXE2_PIN_OFF(struct verbs_context_ops, unimport_pd, 92 * 8);
RXE2_PIN_SIZE(struct verbs_context, 696);
RXE2_PIN_OFF(struct verbs_context, sz, 360);
RXE2_PIN_OFF(struct verbs_context, context, 368);
#endif
#endif /* __x86_64__ */
#endif /* RXE2_LAYOUT_UNPINNED */

#endif /* RXE2_IN_TREE */

#endif /* RXE2_IBVERBS_PRIVATE_H */
