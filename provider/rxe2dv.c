// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2dv: the public direct-verbs entry points of librxe2 (rxe2dv.h).
 * The provider and this library are one object, so a context the
 * provider opened is ours to look into.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ibverbs_private.h"
#include "rxe2.h"
#include "rxe2dv.h"

/* The kernel's bits are the public ones: no translation table. */
_Static_assert((int)RXE2DV_DEVICE_CAP_ODP == (int)RXE2_DV_CAP_ODP &&
	       (int)RXE2DV_DEVICE_CAP_PA_MR == (int)RXE2_DV_CAP_PA_MR &&
	       (int)RXE2DV_DEVICE_CAP_SHARED_MR ==
	       (int)RXE2_DV_CAP_SHARED_MR &&
	       (int)RXE2DV_DEVICE_CAP_MW == (int)RXE2_DV_CAP_MW, "rxe2dv caps");

_Static_assert((int)RXE2DV_MR_ATTR_VALIDITY_RECV_IC_ID ==
	       (int)RXE2_QUERY_MR_VALIDITY_RECV_IC_ID &&
	       (int)RXE2DV_MR_ATTR_VALIDITY_RDMA_READ_IC_ID ==
	       (int)RXE2_QUERY_MR_VALIDITY_RDMA_READ_IC_ID &&
	       (int)RXE2DV_MR_ATTR_VALIDITY_RDMA_RECV_IC_ID ==
	       (int)RXE2_QUERY_MR_VALIDITY_RDMA_RECV_IC_ID, "rxe2dv validity");

/* The end of a field: how much of the structure a caller must pass. */
#define rxe2dv_fieldend(type, field) \
	(offsetof(type, field) + sizeof(((type *)0)->field))

/*
 * Same test as the provider's match_device: the module's sysfs file,
 * with the ABI generation this library speaks.  It works on a device
 * list entry before any context is opened.
 */
static bool rxe2dv_sysfs_is_rxe2(const struct ibv_device *device)
{
	char path[sizeof(device->ibdev_path) + sizeof(RXE2_SYSFS_ABI_ATTR) + 1];
	unsigned int abi;
	char buf[32];
	ssize_t len;
	char tail;
	int fd;

	if (snprintf(path, sizeof(path), "%s/%s", device->ibdev_path,
		     RXE2_SYSFS_ABI_ATTR) >= (int)sizeof(path))
		return false;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return false;
	buf[len] = '\0';
	if (sscanf(buf, "rxe2 %u%c", &abi, &tail) != 2 || tail != '\n')
		return false;
	return abi == RXE2_UVERBS_ABI_VERSION;
}

bool rxe2dv_is_supported(struct ibv_device *device)
{
	if (!device)
		return false;
	return rxe2dv_sysfs_is_rxe2(device);
}

/*
 * Like ibv_wr_flush() of rdma-core 45: an error (not an rxe2 QP, a QP
 * made without RXE2DV_QP_EX_WITH_FLUSH, a bad type or level) fails the
 * batch, and ibv_wr_complete() returns it.
 */
void rxe2dv_wr_flush(struct ibv_qp_ex *qp, uint32_t rkey,
		     uint64_t remote_addr, size_t len, uint8_t type,
		     uint8_t level)
{
	if (!qp || !rxe2_is_rxe2_context(qp->qp_base.context))
		return;
	rxe2_wr_flush(qp, rkey, remote_addr, len, type, level);
}

int rxe2dv_query_device(struct ibv_context *context,
			struct rxe2dv_device_attr *attr, uint32_t inlen)
{
	struct rxe2dv_device_attr out = {};
	struct rxe2_context *ctx;

	if (!rxe2_is_rxe2_context(context))
		return EOPNOTSUPP;
	/* the values came with alloc_context, which an import skips */
	if (to_rctx(context)->imported)
		return EOPNOTSUPP;
	/* every field of the first version is mandatory */
	if (!attr || inlen < rxe2dv_fieldend(struct rxe2dv_device_attr,
					     num_interconnects))
		return EINVAL;

	ctx = to_rctx(context);
	out.device_caps = ctx->dv_caps;
	out.max_inline_recv = ctx->max_inline_recv;
	out.num_interconnects = ctx->num_interconnects;

	/*
	 * A caller built against a later header passes a longer structure:
	 * the fields this library does not know read 0, "not supported".
	 */
	if (inlen > sizeof(out)) {
		memcpy(attr, &out, sizeof(out));
		memset((char *)attr + sizeof(out), 0, inlen - sizeof(out));
	} else {
		memcpy(attr, &out, inlen);
	}
	return 0;
}

/* ---- interconnect ids: rxe2dv_query_mr ---- */

int rxe2dv_query_mr(struct ibv_mr *mr, struct rxe2dv_mr_attr *attr,
		    uint32_t inlen)
{
	struct rxe2_query_mr_resp resp = {};
	struct rxe2dv_mr_attr out = {};
	struct ibv_command_buffer *cmd;
	union rxe2_ioctl_buf buf;
	int ret;

	if (!mr || !rxe2_is_rxe2_context(mr->context))
		return EOPNOTSUPP;
	/* every field of the first version is mandatory */
	if (!attr || inlen < rxe2dv_fieldend(struct rxe2dv_mr_attr,
					     rdma_recv_ic_id))
		return EINVAL;
	/* an input comp_mask asks for nothing yet: any bit is unknown */
	if (attr->comp_mask)
		return EINVAL;

	cmd = rxe2_ioctl_init(&buf, UVERBS_OBJECT_MR, RXE2_METHOD_MR_QUERY);
	rxe2_ioctl_obj(cmd, RXE2_ATTR_QUERY_MR_HANDLE, mr->handle);
	rxe2_ioctl_out(cmd, RXE2_ATTR_QUERY_MR_RESP, &resp, sizeof(resp));
	ret = rxe2_ioctl_optional(mr->context, cmd);	/* older module: none */
	if (ret)
		return ret;

	out.ic_id_validity = resp.ic_id_validity &
			     (RXE2DV_MR_ATTR_VALIDITY_RECV_IC_ID |
			      RXE2DV_MR_ATTR_VALIDITY_RDMA_READ_IC_ID |
			      RXE2DV_MR_ATTR_VALIDITY_RDMA_RECV_IC_ID);
	out.recv_ic_id = resp.recv_ic_id;
	out.rdma_read_ic_id = resp.rdma_read_ic_id;
	out.rdma_recv_ic_id = resp.rdma_recv_ic_id;
	/* an older module leaves them out (and its comp_mask zero) */
	if ((resp.comp_mask & RXE2_QUERY_MR_RESP_PAGES) &&
	    inlen >= rxe2dv_fieldend(struct rxe2dv_mr_attr, num_pages)) {
		out.comp_mask |= RXE2DV_MR_ATTR_MASK_PAGES;
		out.page_size = resp.page_size;
		out.num_pages = resp.num_pages;
	}

	if (inlen > sizeof(out)) {
		memcpy(attr, &out, sizeof(out));
		memset((char *)attr + sizeof(out), 0, inlen - sizeof(out));
	} else {
		memcpy(attr, &out, inlen);
	}
	return 0;
}

/* ---- inline-receive ---- */

struct ibv_qp *rxe2dv_create_qp(struct ibv_context *context,
				struct ibv_qp_init_attr_ex *attr,
				struct rxe2dv_qp_init_attr *dv_attr,
				uint32_t inlen)
{
	struct rxe2dv_qp_init_attr in = {};
	uint32_t inl = 0;
	struct ibv_qp *qp;

	if (!context || !rxe2_is_rxe2_context(context)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!attr || !dv_attr ||
	    inlen < rxe2dv_fieldend(struct rxe2dv_qp_init_attr, reserved)) {
		errno = EINVAL;
		return NULL;
	}
	/* a longer structure from a later header: its extra bytes are 0 */
	if (inlen > sizeof(in)) {
		const char *p = (const char *)dv_attr + sizeof(in);
		uint32_t i;

		for (i = 0; i < inlen - sizeof(in); i++) {
			if (p[i]) {
				errno = EOPNOTSUPP;
				return NULL;
			}
		}
	}
	memcpy(&in, dv_attr, sizeof(in));
	if (in.comp_mask & ~(uint64_t)RXE2DV_QP_INIT_ATTR_MASK_INLINE_RECV) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (in.reserved) {
		errno = EINVAL;
		return NULL;
	}
	if (in.comp_mask & RXE2DV_QP_INIT_ATTR_MASK_INLINE_RECV)
		inl = in.max_inl_recv;

	qp = rxe2_create_qp_inl(context, attr, &inl);
	if (qp && (in.comp_mask & RXE2DV_QP_INIT_ATTR_MASK_INLINE_RECV))
		dv_attr->max_inl_recv = inl;
	return qp;
}

/* ---- shared MRs, PA-MRs ---- */

/*
 * ibv_reg_mr's command carrying our request @drv, for the MRs that name
 * no user range (shared and PA MRs); @rsp gets the driver's answer.
 * NULL with errno set on failure.
 */
static struct rxe2_mr *rxe2dv_reg_mr_cmd(struct ibv_pd *pd, size_t length,
					 int access,
					 const struct rxe2_reg_mr_cmd *drv,
					 struct rxe2_reg_mr_rsp *rsp)
{
	struct rxe2_reg_mr_req req = {};
	struct rxe2_mr *mr;
	int err;

	if (!pd || !rxe2_is_rxe2_context(pd->context)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return NULL;
	req.drv = *drv;
	err = ibv_cmd_reg_mr(pd, NULL, length, 0, access, &mr->vmr,
			     &req.ibv_cmd, sizeof(req), &rsp->ibv_resp,
			     sizeof(*rsp));
	if (err) {
		free(mr);
		errno = err;
		return NULL;
	}
	mr->vmr.ibv_mr.pd = pd;
	return mr;
}

/*
 * Shared MRs.  reg_mr with driver data makes the MR and returns where
 * its pages are on the command fd; mapping them gives the MR its
 * address (the kernel takes the mapping's start as the MR's iova and
 * only then lets its keys work).  The mapping belongs to the MR:
 * ibv_dereg_mr() unmaps it.
 */
static struct ibv_mr *rxe2dv_shared_mr(struct ibv_pd *pd, size_t length,
				       int access,
				       const struct rxe2_reg_mr_cmd *drv,
				       void *addr_hint, uint64_t *share_id)
{
	struct rxe2_reg_mr_rsp rsp = {};
	struct rxe2_mr *mr;
	uint64_t len, off;
	void *map;
	int err;

	mr = rxe2dv_reg_mr_cmd(pd, length, access, drv, &rsp);
	if (!mr)
		return NULL;
	len = (uint64_t)rsp.drv.length_hi << 32 | rsp.drv.length_lo;
	off = (uint64_t)rsp.drv.mmap_offset_hi << 32 | rsp.drv.mmap_offset_lo;
	map = mmap(addr_hint, len,
		   PROT_READ | (rsp.drv.writable ? PROT_WRITE : 0), MAP_SHARED,
		   pd->context->cmd_fd, off);
	if (map == MAP_FAILED) {
		err = errno;
		ibv_cmd_dereg_mr(&mr->vmr);
		free(mr);
		errno = err;
		return NULL;
	}
	mr->map = map;
	mr->map_size = len;
	mr->vmr.ibv_mr.addr = map;
	mr->vmr.ibv_mr.length = len;
	if (share_id)
		*share_id = rsp.drv.share_id;
	return &mr->vmr.ibv_mr;
}

struct ibv_mr *rxe2dv_alloc_shared_mr(struct ibv_pd *pd, size_t length,
				      int access, mode_t share_mode,
				      uint64_t *share_id)
{
	struct rxe2_reg_mr_cmd drv = {
		.comp_mask = RXE2_REG_MR_SHARED_ALLOC,
		.share_mode = share_mode,
	};

	if (!share_id || share_mode & ~(mode_t)0666) {
		errno = EINVAL;
		return NULL;
	}
	return rxe2dv_shared_mr(pd, length, access, &drv, NULL, share_id);
}

struct ibv_mr *rxe2dv_reg_shared_mr(struct ibv_pd *pd, uint64_t share_id,
				    void *addr_hint, int access)
{
	struct rxe2_reg_mr_cmd drv = {
		.comp_mask = RXE2_REG_MR_SHARED_ATTACH,
		.share_id = share_id,
	};

	return rxe2dv_shared_mr(pd, 0, access, &drv, addr_hint, NULL);
}

/* addr NULL, length 0: the MR names all of physical memory */
struct ibv_mr *rxe2dv_reg_pa_mr(struct ibv_pd *pd, int access)
{
	struct rxe2_reg_mr_cmd drv = { .comp_mask = RXE2_REG_MR_PA };
	struct rxe2_reg_mr_rsp rsp = {};
	struct rxe2_mr *mr;

	mr = rxe2dv_reg_mr_cmd(pd, 0, access, &drv, &rsp);
	return mr ? &mr->vmr.ibv_mr : NULL;
}
