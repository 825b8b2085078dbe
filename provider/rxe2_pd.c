// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * librxe2: protection domains, memory regions and memory windows.  They
 * live entirely in the kernel; the process keeps only handles and keys.
 * Binding a window is a send WQE (rxe2_send.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>

#include <rdma/ib_user_ioctl_cmds.h>

#include "rxe2.h"

struct ibv_pd *rxe2_alloc_pd(struct ibv_context *ibctx)
{
	struct ibv_alloc_pd cmd = {};
	struct ib_uverbs_alloc_pd_resp resp = {};
	struct rxe2_pd *pd;
	int err;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;

	err = ibv_cmd_alloc_pd(ibctx, &pd->ibpd, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (err) {
		free(pd);
		errno = err;
		return NULL;
	}
	return &pd->ibpd;
}

/* a PD, or a parent domain (rxe2_domain.c) */
int rxe2_dealloc_pd(struct ibv_pd *ibpd)
{
	struct rxe2_pd *pd = to_rpd(ibpd);
	int err;

	if (pd->protection)
		return rxe2_dealloc_parent_domain(pd);
	if (__atomic_load_n(&pd->parents, __ATOMIC_ACQUIRE))
		return EBUSY;
	err = ibv_cmd_dealloc_pd(ibpd);
	if (err)
		return err;
	free(pd);
	return 0;
}

/*
 * The end of every registration: the MR, or NULL with errno set and the
 * memory freed.  libibverbs reads vmr.access (ibv_rereg_mr, fork).
 */
struct ibv_mr *rxe2_mr_registered(struct rxe2_mr *mr, int err, int access)
{
	if (err) {
		free(mr);
		errno = err;
		return NULL;
	}
	mr->vmr.access = access;
	return &mr->vmr.ibv_mr;
}

/*
 * IBTA 1.5's FLUSH access bits travel as driver data: the core of Linux
 * 6.1 refuses them in the access flags before the driver sees them.
 */
#define RXE2_ACCESS_EX (RXE2_ACCESS_FLUSH_GLOBAL | RXE2_ACCESS_FLUSH_PERSISTENT)

/* libibverbs requires a full verbs_mr: it reads mr_type and access. */
struct ibv_mr *rxe2_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			   uint64_t hca_va, int access)
{
	struct rxe2_reg_mr_req req = {};
	struct ib_uverbs_reg_mr_resp resp = {};
	struct rxe2_mr *mr;
	int err;

	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return NULL;

	req.drv.access_ex = access & RXE2_ACCESS_EX;
	err = ibv_cmd_reg_mr(pd, addr, length, hca_va, access & ~RXE2_ACCESS_EX,
			     &mr->vmr, &req.ibv_cmd,
			     req.drv.access_ex ? sizeof(req) :
						 sizeof(req.ibv_cmd),
			     &resp, sizeof(resp));
	return rxe2_mr_registered(mr, err, access);
}

/*
 * An MR over a dma-buf: the kernel maps the exporter's pages and holds
 * them until dereg (rxe/rxe2_dmabuf.c).  The core takes only local
 * write and remote read/write/atomic access here (no FLUSH).
 */
struct ibv_mr *rxe2_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset,
				  size_t length, uint64_t iova, int fd,
				  int access)
{
	struct rxe2_mr *mr;
	int err;

	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return NULL;
	err = ibv_cmd_reg_dmabuf_mr(pd, offset, length, iova, fd, access,
#if RXE2_RDMA_CORE >= 54
				    &mr->vmr, NULL);	/* no driver attrs */
#else
				    &mr->vmr);
#endif
	return rxe2_mr_registered(mr, err, access);
}

/*
 * libibverbs has already refused bad flags, a translation without
 * address or length, and access bits without IBV_REREG_MR_CHANGE_ACCESS
 * (IBV_REREG_MR_ERR_INPUT); it turns our nonzero return into
 * IBV_REREG_MR_ERR_CMD and leaves errno as we set it.  The kernel finds
 * the new PD by its handle in this context's file, so a PD of another
 * context would name whatever PD of ours has that number: refuse it.
 */
int rxe2_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
		  void *addr, size_t length, int access)
{
	struct rxe2_rereg_mr_req req = {};
	struct ib_uverbs_rereg_mr_resp resp = {};
	int err;

	if ((flags & IBV_REREG_MR_CHANGE_PD) &&
	    (!pd || pd->context != vmr->ibv_mr.context)) {
		errno = EINVAL;
		return EINVAL;
	}
	if (flags & IBV_REREG_MR_CHANGE_ACCESS)
		req.drv.access_ex = access & RXE2_ACCESS_EX;
	err = ibv_cmd_rereg_mr(vmr, flags, addr, length, (uintptr_t)addr,
			       access & ~RXE2_ACCESS_EX, pd, &req.ibv_cmd,
			       req.drv.access_ex ? sizeof(req) :
						   sizeof(req.ibv_cmd),
			       &resp, sizeof(resp));
	if (err) {
		errno = err;
		return err;
	}
	if (flags & IBV_REREG_MR_CHANGE_ACCESS)
		vmr->access = access;
	return 0;
}

/*
 * ibv_advise_mr: the kernel checks everything (ibv_advise_mr(3) errnos)
 * and prefetches ODP MRs, synchronously with IBV_ADVISE_MR_FLAG_FLUSH.
 */
int rxe2_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
		   uint32_t flags, struct ibv_sge *sg_list, uint32_t num_sge)
{
	int err;

	err = ibv_cmd_advise_mr(pd, advice, flags, sg_list, num_sge);
	if (err)
		errno = err;
	return err;
}

/*
 * A shared MR's mapping goes first: once the MR is gone its key can no
 * longer reach the pages, and the mapping is the process's last handle
 * on them through this MR.  An MR that cannot be deregistered keeps it.
 */
int rxe2_dereg_mr(struct verbs_mr *vmr)
{
	struct rxe2_mr *mr = to_rmr(vmr);
	int err;

	err = ibv_cmd_dereg_mr(vmr);
	if (err)
		return err;
	if (mr->map)
		munmap(mr->map, mr->map_size);
	free(mr);
	return 0;
}

/*
 * ibv_import_pd / ibv_import_mr: objects of the context whose command
 * fd this imported context shares.  The kernel checks the handles at
 * every use; an MR's keys, address and length come from the kernel.
 */
struct ibv_pd *rxe2_import_pd(struct ibv_context *ibctx, uint32_t pd_handle)
{
	struct rxe2_pd *pd;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;
	pd->ibpd.context = ibctx;
	pd->ibpd.handle = pd_handle;
	return &pd->ibpd;
}

/* the application deallocates the parent domains over it first */
void rxe2_unimport_pd(struct ibv_pd *ibpd)
{
	free(to_rpd(ibpd));
}

struct ibv_mr *rxe2_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
	struct rxe2_mr *mr;
	int err;

	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return NULL;
	err = ibv_cmd_query_mr(pd, &mr->vmr, mr_handle);
	if (err) {
		free(mr);
		errno = err;
		return NULL;
	}
	return &mr->vmr.ibv_mr;
}

/* the MR stays registered; a shared MR's mapping is its importer's */
void rxe2_unimport_mr(struct ibv_mr *ibmr)
{
	free(to_rmr(rxe2_container_of(ibmr, struct verbs_mr, ibv_mr)));
}

struct ibv_mw *rxe2_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct ibv_alloc_mw cmd = {};
	struct ib_uverbs_alloc_mw_resp resp = {};
	struct ibv_mw *mw;
	int err;

	mw = calloc(1, sizeof(*mw));
	if (!mw)
		return NULL;

	err = ibv_cmd_alloc_mw(pd, type, mw, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (err) {
		free(mw);
		errno = err;
		return NULL;
	}
	return mw;
}

int rxe2_dealloc_mw(struct ibv_mw *mw)
{
	int err;

	err = ibv_cmd_dealloc_mw(mw);
	if (err)
		return err;
	free(mw);
	return 0;
}

#if RXE2_RDMA_CORE >= 59
/*
 * The handle is checked as mlx5 checks it: the processing hint is
 * mandatory, a steering tag needs both the CPU and the memory type.
 * The kernel checks them again (rxe/rxe2_mr.c) and the CPU against our
 * affinity.
 */
struct ibv_dmah *rxe2_alloc_dmah(struct ibv_context *ibctx,
				 struct ibv_dmah_init_attr *attr)
{
	const uint32_t st = IBV_DMAH_INIT_ATTR_MASK_CPU_ID |
			    IBV_DMAH_INIT_ATTR_MASK_TPH_MEM_TYPE;
	struct ib_uverbs_attr *handle;
	struct ibv_command_buffer *cmd;
	union rxe2_ioctl_buf buf;
	struct rxe2_dmah *dmah;
	int err;

	if (attr->comp_mask & ~(st | IBV_DMAH_INIT_ATTR_MASK_PH)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!(attr->comp_mask & IBV_DMAH_INIT_ATTR_MASK_PH) ||
	    ((attr->comp_mask & st) && (attr->comp_mask & st) != st)) {
		errno = EINVAL;
		return NULL;
	}
	dmah = calloc(1, sizeof(*dmah));
	if (!dmah)
		return NULL;
	cmd = rxe2_ioctl_init(&buf, UVERBS_OBJECT_DMAH,
			      UVERBS_METHOD_DMAH_ALLOC);
	handle = rxe2_ioctl_new(cmd, UVERBS_ATTR_ALLOC_DMAH_HANDLE);
	if (attr->comp_mask & IBV_DMAH_INIT_ATTR_MASK_CPU_ID)
		rxe2_ioctl_in(cmd, UVERBS_ATTR_ALLOC_DMAH_CPU_ID,
			      &attr->cpu_id, sizeof(attr->cpu_id));
	/* an enum attribute: the value is its element, no data */
	if (attr->comp_mask & IBV_DMAH_INIT_ATTR_MASK_TPH_MEM_TYPE)
		rxe2_ioctl_enum(cmd, UVERBS_ATTR_ALLOC_DMAH_TPH_MEM_TYPE,
				attr->tph_mem_type);
	rxe2_ioctl_in(cmd, UVERBS_ATTR_ALLOC_DMAH_PH, &attr->ph,
		      sizeof(attr->ph));
	err = rxe2_ioctl_optional(ibctx, cmd);	/* Linux 6.17 on */
	if (err) {
		free(dmah);
		errno = err;
		return NULL;
	}
	dmah->handle = handle->data;
	dmah->ibdmah.context = ibctx;
	return &dmah->ibdmah;
}

/* EBUSY while an MR made with it lives (the kernel counts them) */
int rxe2_dealloc_dmah(struct ibv_dmah *ibdmah)
{
	struct rxe2_dmah *dmah = (struct rxe2_dmah *)ibdmah;
	struct ibv_command_buffer *cmd;
	union rxe2_ioctl_buf buf;
	int err;

	cmd = rxe2_ioctl_init(&buf, UVERBS_OBJECT_DMAH,
			      UVERBS_METHOD_DMAH_FREE);
	rxe2_ioctl_obj(cmd, UVERBS_ATTR_FREE_DMA_HANDLE, dmah->handle);
	err = execute_ioctl(ibdmah->context, cmd);
	if (err)
		return err;
	free(dmah);
	return 0;
}

/*
 * An MR with a DMA handle: only UVERBS_METHOD_REG_MR carries one, and
 * it carries no driver data, so the FLUSH access bits go in the access
 * flags, which every kernel with the method takes.  Without a handle the
 * registration is ibv_reg_mr's or ibv_reg_dmabuf_mr's (libibverbs has
 * checked the combination and done the fork protection).
 */
struct ibv_mr *rxe2_reg_mr_ex(struct ibv_pd *pd,
			      struct ibv_mr_init_attr *attr)
{
	const uint64_t known = IBV_REG_MR_MASK_IOVA | IBV_REG_MR_MASK_ADDR |
			       IBV_REG_MR_MASK_FD | IBV_REG_MR_MASK_FD_OFFSET |
			       IBV_REG_MR_MASK_DMAH;
	uint64_t mask = attr->comp_mask;
	uint64_t iova = (mask & IBV_REG_MR_MASK_IOVA) ? attr->iova :
			(uintptr_t)attr->addr;
	uint64_t length = attr->length;
	struct ib_uverbs_attr *handle;
	struct ibv_command_buffer *cmd;
	union rxe2_ioctl_buf buf;
	uint32_t lkey, rkey;
	struct rxe2_mr *mr;
	int err;

	if (mask & ~known) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* a dma-buf: an fd and its offset and an iova, no address */
	if (mask & IBV_REG_MR_MASK_FD) {
		if ((mask & (IBV_REG_MR_MASK_ADDR | IBV_REG_MR_MASK_FD_OFFSET |
			     IBV_REG_MR_MASK_IOVA)) !=
		    (IBV_REG_MR_MASK_FD_OFFSET | IBV_REG_MR_MASK_IOVA)) {
			errno = EINVAL;
			return NULL;
		}
	} else if (!(mask & IBV_REG_MR_MASK_ADDR) ||
		   (mask & IBV_REG_MR_MASK_FD_OFFSET)) {
		errno = EINVAL;
		return NULL;
	}
	if (!(mask & IBV_REG_MR_MASK_DMAH)) {
		if (mask & IBV_REG_MR_MASK_FD)
			return rxe2_reg_dmabuf_mr(pd, attr->fd_offset,
						  attr->length, attr->iova,
						  attr->fd, attr->access);
		return rxe2_reg_mr(pd, attr->addr, attr->length, iova,
				   attr->access);
	}
	if (attr->dmah->context != pd->context) {
		errno = EINVAL;
		return NULL;
	}
	/* the implicit ODP MR: the whole address space */
	if ((attr->access & IBV_ACCESS_ON_DEMAND) && !attr->addr &&
	    attr->length == SIZE_MAX)
		length = UINT64_MAX;

	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return NULL;
	cmd = rxe2_ioctl_init(&buf, UVERBS_OBJECT_MR, UVERBS_METHOD_REG_MR);
	handle = rxe2_ioctl_new(cmd, UVERBS_ATTR_REG_MR_HANDLE);
	rxe2_ioctl_obj(cmd, UVERBS_ATTR_REG_MR_PD_HANDLE, pd->handle);
	rxe2_ioctl_obj(cmd, UVERBS_ATTR_REG_MR_DMA_HANDLE,
		       ((struct rxe2_dmah *)attr->dmah)->handle);
	if (mask & IBV_REG_MR_MASK_FD) {
		rxe2_ioctl_const(cmd, UVERBS_ATTR_REG_MR_FD_OFFSET,
				 attr->fd_offset);
		rxe2_ioctl_in(cmd, UVERBS_ATTR_REG_MR_FD, &attr->fd,
			      sizeof(attr->fd));
	} else {
		rxe2_ioctl_const(cmd, UVERBS_ATTR_REG_MR_ADDR,
				 (uintptr_t)attr->addr);
	}
	rxe2_ioctl_const(cmd, UVERBS_ATTR_REG_MR_IOVA, iova);
	rxe2_ioctl_const(cmd, UVERBS_ATTR_REG_MR_LENGTH, length);
	rxe2_ioctl_in(cmd, UVERBS_ATTR_REG_MR_ACCESS_FLAGS, &attr->access,
		      sizeof(uint32_t));
	rxe2_ioctl_out(cmd, UVERBS_ATTR_REG_MR_RESP_LKEY, &lkey, sizeof(lkey));
	rxe2_ioctl_out(cmd, UVERBS_ATTR_REG_MR_RESP_RKEY, &rkey, sizeof(rkey));
	err = rxe2_ioctl_optional(pd->context, cmd);
	if (!err) {
		mr->vmr.ibv_mr.handle = handle->data;
		mr->vmr.ibv_mr.lkey = lkey;
		mr->vmr.ibv_mr.rkey = rkey;
		mr->vmr.ibv_mr.context = pd->context;
		mr->vmr.ibv_mr.pd = pd;
		mr->vmr.mr_type = (mask & IBV_REG_MR_MASK_FD) ?
				  IBV_MR_TYPE_DMABUF_MR : IBV_MR_TYPE_MR;
	}
	return rxe2_mr_registered(mr, err, attr->access);
}
#endif

#if RXE2_RDMA_CORE >= 62
/*
 * The netdev's own rate, 100 Mb/s a unit, as the kernel answers it
 * (rxe/rxe2_device.c); a kernel before 7.0 has no way to ask.
 */
int rxe2_query_port_speed(struct ibv_context *ibctx, uint32_t port_num,
			  uint64_t *speed)
{
	struct ibv_command_buffer *cmd;
	union rxe2_ioctl_buf buf;

	cmd = rxe2_ioctl_init(&buf, UVERBS_OBJECT_DEVICE,
			      UVERBS_METHOD_QUERY_PORT_SPEED);
	rxe2_ioctl_const(cmd, UVERBS_ATTR_QUERY_PORT_SPEED_PORT_NUM, port_num);
	rxe2_ioctl_out(cmd, UVERBS_ATTR_QUERY_PORT_SPEED_RESP, speed,
		       sizeof(*speed));
	return rxe2_ioctl_optional(ibctx, cmd);	/* Linux 7.0 on */
}
#endif
