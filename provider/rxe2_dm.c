// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * librxe2: device memory (ibv_alloc_dm).  The kernel allocates the pages
 * (rxe/rxe2_dm.c) and says where they are on the command fd; we map
 * them once, keep the mapping to ourselves (as a NIC's BAR is mapped
 * by its provider) and implement ibv_memcpy_to_dm()/_from_dm() as
 * memcpy() on it, bounded by the length asked for and in 4-byte words
 * as mlx5's are.  ibv_import_dm() maps the same pages in a context
 * sharing the command fd.  MRs over the DM are zero-based: an SGE or a
 * remote address names an offset into the MR.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rdma/ib_user_ioctl_cmds.h>

#include "rxe2.h"

struct rxe2_dm {
	struct verbs_dm vdm;
	uint8_t *map;
	size_t map_len;
	uint64_t length;		/* what was allocated: copies stay in it */
};

static struct rxe2_dm *to_rdm(struct ibv_dm *ibdm)
{
	return rxe2_container_of(ibdm, struct rxe2_dm, vdm.dm);
}

/*
 * The copy verbs answer as mlx5's do, the reference programs are
 * written for: a range outside the allocation is EFAULT, and an offset
 * or length that is not a multiple of 4 is EINVAL (a NIC moves device
 * memory in 32-bit words), in that order.  Nothing is copied then.
 * Written so that no offset and length can wrap around.
 */
static int rxe2_dm_check(const struct rxe2_dm *dm, uint64_t off, size_t len)
{
	if (off > dm->length || len > dm->length - off)
		return EFAULT;
	if ((off | len) & 3)
		return EINVAL;
	return 0;
}

static int rxe2_memcpy_to_dm(struct ibv_dm *ibdm, uint64_t dm_offset,
			     const void *host_addr, size_t length)
{
	struct rxe2_dm *dm = to_rdm(ibdm);
	int err = rxe2_dm_check(dm, dm_offset, length);

	if (err)
		return err;
	memcpy(dm->map + dm_offset, host_addr, length);
	return 0;
}

static int rxe2_memcpy_from_dm(void *host_addr, struct ibv_dm *ibdm,
			       uint64_t dm_offset, size_t length)
{
	struct rxe2_dm *dm = to_rdm(ibdm);
	int err = rxe2_dm_check(dm, dm_offset, length);

	if (err)
		return err;
	memcpy(host_addr, dm->map + dm_offset, length);
	return 0;
}

/* the pages of a DM, allocated here or imported, in this process */
static int rxe2_dm_map(struct ibv_context *ibctx, struct rxe2_dm *dm,
		       uint64_t length, uint64_t offset)
{
	long page = sysconf(_SC_PAGESIZE);

	dm->length = length;
	dm->map_len = (length + page - 1) & ~(uint64_t)(page - 1);
	dm->map = mmap(NULL, dm->map_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		       ibctx->cmd_fd, offset);
	if (dm->map == MAP_FAILED)
		return errno;
	dm->vdm.dm.memcpy_to_dm = rxe2_memcpy_to_dm;
	dm->vdm.dm.memcpy_from_dm = rxe2_memcpy_from_dm;
	return 0;
}

struct ibv_dm *rxe2_alloc_dm(struct ibv_context *ibctx,
			     struct ibv_alloc_dm_attr *attr)
{
	struct ibv_command_buffer *link;
	union rxe2_ioctl_buf buf;
	uint64_t offset = 0;
	struct rxe2_dm *dm;
	int err;

	if (attr->comp_mask) {
		errno = EINVAL;
		return NULL;
	}
	dm = calloc(1, sizeof(*dm));
	if (!dm)
		return NULL;
	link = rxe2_ioctl_init(&buf, UVERBS_OBJECT_DM, UVERBS_METHOD_DM_ALLOC);
	rxe2_ioctl_out(link, RXE2_ATTR_ALLOC_DM_RESP_MMAP_OFFSET, &offset,
		       sizeof(offset));
	err = ibv_cmd_alloc_dm(ibctx, attr, &dm->vdm, link);
	if (err)
		goto err_free;
	err = rxe2_dm_map(ibctx, dm, attr->length, offset);
	if (err) {
		ibv_cmd_free_dm(&dm->vdm);
		goto err_free;
	}
	return &dm->vdm.dm;

err_free:
	free(dm);
	errno = err;
	return NULL;
}

/* EBUSY while an MR is over it: the DM stays as it was */
int rxe2_free_dm(struct ibv_dm *ibdm)
{
	struct rxe2_dm *dm = to_rdm(ibdm);
	int err;

	err = ibv_cmd_free_dm(&dm->vdm);
	if (err)
		return err;
	munmap(dm->map, dm->map_len);
	free(dm);
	return 0;
}

/*
 * ibv_import_dm: a DM of the context whose command fd this one shares
 * (the same ib_ucontext, so the same mmap offsets).  The kernel checks
 * the handle and says where the pages are and how long the DM is.  It
 * may be freed here with ibv_free_dm(), or only unmapped with
 * ibv_unimport_dm().
 */
struct ibv_dm *rxe2_import_dm(struct ibv_context *ibctx, uint32_t dm_handle)
{
	struct ibv_command_buffer *cmd;
	union rxe2_ioctl_buf buf;
	uint64_t offset = 0, length = 0;
	struct rxe2_dm *dm;
	int err;

	dm = calloc(1, sizeof(*dm));
	if (!dm)
		return NULL;
	cmd = rxe2_ioctl_init(&buf, UVERBS_OBJECT_DM, RXE2_METHOD_DM_QUERY);
	rxe2_ioctl_obj(cmd, RXE2_ATTR_QUERY_DM_HANDLE, dm_handle);
	rxe2_ioctl_out(cmd, RXE2_ATTR_QUERY_DM_RESP_MMAP_OFFSET, &offset,
		       sizeof(offset));
	rxe2_ioctl_out(cmd, RXE2_ATTR_QUERY_DM_RESP_LENGTH, &length,
		       sizeof(length));
	err = rxe2_ioctl_optional(ibctx, cmd);	/* an older module: none */
	if (!err)
		err = rxe2_dm_map(ibctx, dm, length, offset);
	if (err) {
		free(dm);
		errno = err;
		return NULL;
	}
	dm->vdm.dm.context = ibctx;
	dm->vdm.dm.handle = dm_handle;
	dm->vdm.handle = dm_handle;
	return &dm->vdm.dm;
}

/* the DM stays allocated: only this context's mapping goes */
void rxe2_unimport_dm(struct ibv_dm *ibdm)
{
	struct rxe2_dm *dm = to_rdm(ibdm);

	munmap(dm->map, dm->map_len);
	free(dm);
}

/* ib_core checks IBV_ACCESS_ZERO_BASED and the range */
struct ibv_mr *rxe2_reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *ibdm,
			      uint64_t dm_offset, size_t length,
			      unsigned int access)
{
	struct rxe2_mr *mr;
	int err;

	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return NULL;
	err = ibv_cmd_reg_dm_mr(pd, &to_rdm(ibdm)->vdm, dm_offset, length,
				access, &mr->vmr, NULL);
	return rxe2_mr_registered(mr, err, access);
}
