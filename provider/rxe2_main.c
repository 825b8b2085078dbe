// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * librxe2: registration with libibverbs, device matching, and the
 * verbs context (open/close of a device).
 */
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rxe2.h"

static const struct verbs_match_ent rxe2_match_table[] = {
	{ .u.driver_id = RXE2_DRIVER_ID, .kind = VERBS_MATCH_DRIVER_ID },
	{ .kind = VERBS_MATCH_SENTINEL },
};

static void rxe2_free_context(struct ibv_context *ibctx);

static const struct verbs_context_ops rxe2_ctx_ops = {
	.advise_mr = rxe2_advise_mr,
	.alloc_dm = rxe2_alloc_dm,
#if RXE2_RDMA_CORE >= 59
	.alloc_dmah = rxe2_alloc_dmah,
	.dealloc_dmah = rxe2_dealloc_dmah,
	.reg_mr_ex = rxe2_reg_mr_ex,
#endif
	.alloc_mw = rxe2_alloc_mw,
	.alloc_parent_domain = rxe2_alloc_parent_domain,
	.alloc_pd = rxe2_alloc_pd,
	.alloc_td = rxe2_alloc_td,
	.attach_counters_point_flow = rxe2_attach_counters_point_flow,
	.attach_mcast = rxe2_attach_mcast,
	.bind_mw = rxe2_bind_mw,
	.close_xrcd = rxe2_close_xrcd,
	.create_ah = rxe2_create_ah,
	.create_cq = rxe2_create_cq,
	.create_counters = rxe2_create_counters,
	.create_cq_ex = rxe2_create_cq_ex,
	.create_flow = rxe2_create_flow,
	.create_qp = rxe2_create_qp,
	.create_qp_ex = rxe2_create_qp_ex,
	.create_rwq_ind_table = rxe2_create_rwq_ind_table,
	.create_srq = rxe2_create_srq,
	.create_srq_ex = rxe2_create_srq_ex,
	.create_wq = rxe2_create_wq,
	.dealloc_mw = rxe2_dealloc_mw,
	.dealloc_pd = rxe2_dealloc_pd,
	.dealloc_td = rxe2_dealloc_td,
	.dereg_mr = rxe2_dereg_mr,
	.free_dm = rxe2_free_dm,
	.destroy_ah = rxe2_destroy_ah,
	.destroy_counters = rxe2_destroy_counters,
	.destroy_cq = rxe2_destroy_cq,
	.destroy_flow = rxe2_destroy_flow,
	.destroy_qp = rxe2_destroy_qp,
	.destroy_rwq_ind_table = rxe2_destroy_rwq_ind_table,
	.destroy_srq = rxe2_destroy_srq,
	.destroy_wq = rxe2_destroy_wq,
	.detach_mcast = rxe2_detach_mcast,
	.free_context = rxe2_free_context,
	.get_srq_num = rxe2_get_srq_num,
	.import_dm = rxe2_import_dm,
	.import_mr = rxe2_import_mr,
	.import_pd = rxe2_import_pd,
	.modify_cq = rxe2_modify_cq,
	.modify_qp = rxe2_modify_qp,
	.modify_qp_rate_limit = rxe2_modify_qp_rate_limit,
	.modify_srq = rxe2_modify_srq,
	.modify_wq = rxe2_modify_wq,
	.open_qp = rxe2_open_qp,
	.open_xrcd = rxe2_open_xrcd,
	.resize_cq = rxe2_resize_cq,
	.poll_cq = rxe2_poll_cq,
	.post_recv = rxe2_post_recv,
	.post_send = rxe2_post_send,
	.post_srq_ops = rxe2_post_srq_ops,
	.post_srq_recv = rxe2_post_srq_recv,
	.query_device_ex = rxe2_query_device_ex,
	.query_ece = rxe2_query_ece,
	.query_port = rxe2_query_port,
#if RXE2_RDMA_CORE >= 62
	.query_port_speed = rxe2_query_port_speed,
#endif
	.query_qp = rxe2_query_qp,
	.query_qp_data_in_order = rxe2_query_qp_data_in_order,
	.query_rt_values = rxe2_query_rt_values,
	.query_srq = rxe2_query_srq,
	.read_counters = rxe2_read_counters,
	.reg_dm_mr = rxe2_reg_dm_mr,
	.reg_dmabuf_mr = rxe2_reg_dmabuf_mr,
	.reg_mr = rxe2_reg_mr,
	.req_notify_cq = rxe2_req_notify_cq,
	.rereg_mr = rxe2_rereg_mr,
	.set_ece = rxe2_set_ece,
	.unimport_dm = rxe2_unimport_dm,
	.unimport_mr = rxe2_unimport_mr,
	.unimport_pd = rxe2_unimport_pd,
};

static const struct verbs_device_ops rxe2_dev_ops;

/*
 * The ibdev name is chosen by the user with `rdma link add`, and the
 * netlink driver_id is skipped when the kernel does not report one, so
 * the module's own sysfs attribute is what confirms a device is ours.
 * libibverbs calls this for every device, ours or not.
 */
static bool rxe2_match_device(struct verbs_sysfs_dev *sysfs_dev)
{
	char buf[32];
	unsigned int abi;
	char tail;

	if (ibv_read_ibdev_sysfs_file(buf, sizeof(buf), sysfs_dev, "%s",
				      RXE2_SYSFS_ABI_ATTR) <= 0)
		return false;
	if (sscanf(buf, "rxe2 %u%c", &abi, &tail) != 1)
		return false;
	if (abi != RXE2_UVERBS_ABI_VERSION) {
		fprintf(stderr,
			"librxe2: %s speaks rxe2 ABI %u, this provider %u; ignoring it\n",
			sysfs_dev->ibdev_name, abi, RXE2_UVERBS_ABI_VERSION);
		return false;
	}
	return true;
}

static struct verbs_device *rxe2_alloc_device(struct verbs_sysfs_dev *sysfs_dev)
{
	struct rxe2_device *dev;

	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return NULL;
	dev->sysfs_at_alloc = sysfs_dev;
	return &dev->vdev;
}

static void rxe2_uninit_device(struct verbs_device *vdev)
{
	free(rxe2_container_of(vdev, struct rxe2_device, vdev));
}

/*
 * Runtime canary, part 1: the fields libibverbs filled in our device
 * after alloc_device must sit where ibverbs_private.h says.  A libibverbs
 * whose private layout moved would show it here before any command is
 * sent with structures we mis-laid out.
 */
static int rxe2_check_device(struct ibv_device *ibdev)
{
	struct verbs_device *vdev = verbs_get_device(ibdev);
	struct rxe2_device *dev = rxe2_container_of(vdev, struct rxe2_device,
						    vdev);
	struct verbs_sysfs_dev *sysfs = vdev->sysfs;

	if (vdev->ops != &rxe2_dev_ops)
		return EPROTO;
	if (!sysfs || sysfs != dev->sysfs_at_alloc)
		return EPROTO;
	if (atomic_load(&vdev->refcount) < 1)
		return EPROTO;
	if (sysfs->abi_ver != RXE2_UVERBS_ABI_VERSION)
		return EPROTO;
	if (strncmp(ibdev->name, sysfs->ibdev_name, sizeof(ibdev->name)) ||
	    strncmp(ibdev->dev_name, sysfs->sysfs_name,
		    sizeof(ibdev->dev_name)) ||
	    strncmp(ibdev->ibdev_path, sysfs->ibdev_path,
		    sizeof(ibdev->ibdev_path)))
		return EPROTO;
	return 0;
}

/* Canary, part 2: what _verbs_init_and_alloc_context() wrote. */
static int rxe2_check_context(struct rxe2_context *ctx,
			      struct ibv_device *ibdev, int cmd_fd)
{
	struct verbs_context *vctx = &ctx->vctx;

	if (vctx->sz != sizeof(*vctx))
		return EPROTO;
	if (vctx->context.device != ibdev || vctx->context.cmd_fd != cmd_fd ||
	    vctx->context.async_fd != -1 || !vctx->priv)
		return EPROTO;
	if (vctx->context.abi_compat != __VERBS_ABI_IS_EXTENDED)
		return EPROTO;
	return 0;
}

/*
 * Canary, part 3: verbs_set_ops() read our 76-entry table by position;
 * ops spread over the whole table must have landed in the public slots
 * libibverbs mirrors them to.
 */
static int rxe2_check_ops(struct rxe2_context *ctx)
{
	struct verbs_context *vctx = &ctx->vctx;
	struct ibv_context_ops *pub = &vctx->context.ops;

	if (pub->_compat_alloc_pd != (void *)rxe2_alloc_pd ||
	    vctx->create_qp_ex != rxe2_create_qp_ex ||
	    pub->poll_cq != rxe2_poll_cq ||
	    pub->post_send != rxe2_post_send ||
	    pub->post_recv != rxe2_post_recv ||
	    pub->post_srq_recv != rxe2_post_srq_recv ||
	    vctx->query_device_ex != rxe2_query_device_ex ||
	    pub->req_notify_cq != rxe2_req_notify_cq)
		return EPROTO;
	return 0;
}

/* The kernel's answer to our alloc_context udata must be the same ABI. */
static int rxe2_check_alloc_resp(const struct rxe2_alloc_context_resp *resp)
{
	if (resp->abi_version != RXE2_UVERBS_ABI_VERSION ||
	    resp->send_wqe_hdr_size != RXE2_SEND_WQE_HDR_SIZE ||
	    resp->recv_wqe_hdr_size != RXE2_RECV_WQE_HDR_SIZE ||
	    resp->cqe_size != RXE2_CQE_SIZE)
		return EPROTO;
	return 0;
}

static void rxe2_free_context(struct ibv_context *ibctx)
{
	struct rxe2_context *ctx = to_rctx(ibctx);

	verbs_uninit_context(&ctx->vctx);
	free(ctx);
}

/*
 * A context over cmd_fd (ours to close), its layout checked against the
 * libibverbs it runs with; NULL with errno set.
 */
static struct rxe2_context *rxe2_new_context(struct ibv_device *ibdev,
					     int cmd_fd)
{
	struct rxe2_context *ctx;
	int err;

	err = rxe2_check_device(ibdev);
	if (err) {
		fprintf(stderr,
			"librxe2: libibverbs device layout differs from the one librxe2 was built for\n");
		close(cmd_fd);
		errno = err;
		return NULL;
	}

	/* the context's offset travels as a pointer value */
	ctx = _verbs_init_and_alloc_context(ibdev, cmd_fd, sizeof(*ctx),
			(struct verbs_context *)offsetof(struct rxe2_context,
							 vctx),
			RXE2_DRIVER_ID);
	if (!ctx)
		return NULL;

	err = rxe2_check_context(ctx, ibdev, cmd_fd);
	if (err) {
		fprintf(stderr,
			"librxe2: libibverbs context layout differs from the one librxe2 was built for\n");
		rxe2_free_context(&ctx->vctx.context);
		errno = err;
		return NULL;
	}
	return ctx;
}

static int rxe2_set_ops(struct rxe2_context *ctx)
{
	int err;

	verbs_set_ops(&ctx->vctx, &rxe2_ctx_ops);
	err = rxe2_check_ops(ctx);
	if (err)
		fprintf(stderr,
			"librxe2: libibverbs verbs_context_ops layout differs from the one librxe2 was built for\n");
	return err;
}

static struct verbs_context *rxe2_alloc_context(struct ibv_device *ibdev,
						int cmd_fd,
						void *private_data)
{
	struct rxe2_get_context_req req = {};
	struct rxe2_get_context_rsp rsp = {};
	struct rxe2_context *ctx;
	int err;

	(void)private_data;

	ctx = rxe2_new_context(ibdev, cmd_fd);
	if (!ctx)
		return NULL;

	req.drv.provider_abi = RXE2_UVERBS_ABI_VERSION;
	err = ibv_cmd_get_context(&ctx->vctx, &req.ibv_cmd, sizeof(req),
#if RXE2_RDMA_CORE >= 57
				  NULL,	/* rxe2 passes no fds */
#endif
				  &rsp.ibv_resp, sizeof(rsp));
	if (err)
		goto err_uninit;

	err = rxe2_check_alloc_resp(&rsp.drv);
	if (err) {
		fprintf(stderr,
			"librxe2: %s answered with rxe2 ABI %u (headers %u/%u/%u), expected %u (%u/%u/%u)\n",
			ibdev->name, rsp.drv.abi_version,
			rsp.drv.send_wqe_hdr_size, rsp.drv.recv_wqe_hdr_size,
			rsp.drv.cqe_size, RXE2_UVERBS_ABI_VERSION,
			RXE2_SEND_WQE_HDR_SIZE, RXE2_RECV_WQE_HDR_SIZE,
			RXE2_CQE_SIZE);
		goto err_uninit;
	}

	ctx->max_inline_recv = rsp.drv.max_inline_recv;
	ctx->num_interconnects = rsp.drv.num_interconnects;
	ctx->dv_caps = rsp.drv.dv_caps;

	err = rxe2_set_ops(ctx);
	if (err)
		goto err_uninit;
	return &ctx->vctx;

err_uninit:
	/* closes cmd_fd, and the async fd if get_context opened one */
	rxe2_free_context(&ctx->vctx.context);
	errno = err;
	return NULL;
}

/*
 * ibv_import_device: a second context over the command fd (dup'ed by
 * the caller, ours to close) of a context opened elsewhere, maybe in
 * another process.  The kernel object is the original's; only its
 * alloc_context answer (the rxe2dv values) cannot be asked again, so
 * rxe2dv_query_device() refuses an imported context.
 */
static struct verbs_context *rxe2_import_context(struct ibv_device *ibdev,
						 int cmd_fd)
{
	struct rxe2_context *ctx;
	int err;

	ctx = rxe2_new_context(ibdev, cmd_fd);
	if (!ctx)
		return NULL;
	err = ibv_cmd_query_context(&ctx->vctx.context, NULL);
	if (err)
		goto err_uninit;
	ctx->imported = true;
	err = rxe2_set_ops(ctx);
	if (err)
		goto err_uninit;
	return &ctx->vctx;

err_uninit:
	rxe2_free_context(&ctx->vctx.context);
	errno = err;
	return NULL;
}

static const struct verbs_device_ops rxe2_dev_ops = {
	.name = "rxe2",
	.match_min_abi_version = RXE2_UVERBS_ABI_VERSION,
	.match_max_abi_version = RXE2_UVERBS_ABI_VERSION,
	.match_table = rxe2_match_table,
	.match_device = rxe2_match_device,
	.alloc_device = rxe2_alloc_device,
	.uninit_device = rxe2_uninit_device,
	.alloc_context = rxe2_alloc_context,
	.import_context = rxe2_import_context,
};

/*
 * Direct verbs take any ibv_context; only one this copy of the provider
 * opened carries a struct rxe2_context.
 */
bool rxe2_is_rxe2_context(struct ibv_context *ibctx)
{
	return ibctx && ibctx->device &&
	       verbs_get_device(ibctx->device)->ops == &rxe2_dev_ops;
}

#ifdef RXE2_IN_TREE
/* in a tree, registration as every provider of rdma-core registers */
PROVIDER_DRIVER(rxe2, rxe2_dev_ops);
#else
struct rxe2_libver {
	unsigned int v[3];
	bool found;
};

static int rxe2_find_libibverbs(struct dl_phdr_info *info, size_t size,
				void *data)
{
	struct rxe2_libver *ver = data;
	char path[PATH_MAX];
	const char *base;

	(void)size;
	if (!strstr(info->dlpi_name, "/libibverbs.so"))
		return 0;
	if (!realpath(info->dlpi_name, path))
		return 0;
	base = strrchr(path, '/') + 1;
	ver->found = sscanf(base, "libibverbs.so.%u.%u.%u", &ver->v[0],
			    &ver->v[1], &ver->v[2]) == 3;
	return 1;
}

static bool rxe2_ver_below(const unsigned int v[3], const char *limit)
{
	unsigned int l[3] = {};
	int i;

	if (sscanf(limit, "%u.%u.%u", &l[0], &l[1], &l[2]) != 3)
		return false;
	for (i = 0; i < 3; i++)
		if (v[i] != l[i])
			return v[i] < l[i];
	return false;
}

/*
 * The private ABI symbols resolving proves only IBVERBS_PRIVATE_<PABI>; the
 * layouts in ibverbs_private.h hold for a narrower range.  The version
 * is in the real file name of the libibverbs we were loaded into.  When
 * it cannot be found (static or renamed library) the canary in
 * alloc_context still guards.
 */
static bool rxe2_libibverbs_supported(void)
{
	struct rxe2_libver ver = {};

	dl_iterate_phdr(rxe2_find_libibverbs, &ver);
	if (!ver.found)
		return true;
	if (rxe2_ver_below(ver.v, RXE2_IBVERBS_MIN_VERSION) ||
	    !rxe2_ver_below(ver.v, RXE2_IBVERBS_END_VERSION)) {
		fprintf(stderr,
			"librxe2: libibverbs %u.%u.%u is outside the supported range [%s, %s); rxe2 devices are unavailable\n",
			ver.v[0], ver.v[1], ver.v[2], RXE2_IBVERBS_MIN_VERSION,
			RXE2_IBVERBS_END_VERSION);
		return false;
	}
	return true;
}

static __attribute__((constructor)) void rxe2_register_driver(void)
{
	if (rxe2_libibverbs_supported())
		verbs_register_driver(&rxe2_dev_ops);
}
#endif
