// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * librxe2: XRC domains and the XRC target QPs a process opens.
 *
 * ib_core keeps both: a domain opened on a file descriptor is shared by
 * every process that opens it on the same file, and an XRC_RECV QP of
 * that domain can be opened by each of them (ibv_open_qp).  Neither has
 * anything of ours: no ring, no driver data.  XRC SRQs are in
 * rxe2_srq.c, XRC_SEND and XRC_RECV QP creation in rxe2_qp.c.
 */
#include <errno.h>
#include <stdlib.h>

#include "rxe2.h"

struct ibv_xrcd *rxe2_open_xrcd(struct ibv_context *ibctx,
				struct ibv_xrcd_init_attr *attr)
{
	struct ib_uverbs_open_xrcd_resp resp;
	struct ibv_open_xrcd cmd = {};
	struct verbs_xrcd *xrcd;
	int err;

	xrcd = calloc(1, sizeof(*xrcd));
	if (!xrcd)
		return NULL;
	err = ibv_cmd_open_xrcd(ibctx, xrcd, sizeof(*xrcd), attr, &cmd,
				sizeof(cmd), &resp, sizeof(resp));
	if (err) {
		free(xrcd);
		errno = err;
		return NULL;
	}
	return &xrcd->xrcd;
}

int rxe2_close_xrcd(struct ibv_xrcd *ibxrcd)
{
	struct verbs_xrcd *xrcd = rxe2_container_of(ibxrcd, struct verbs_xrcd,
						    xrcd);
	int err;

	err = ibv_cmd_close_xrcd(xrcd);
	if (err)
		return err;
	free(xrcd);
	return 0;
}

/*
 * Another handle on an XRC_RECV QP of a domain this process opened: it
 * receives the QP's events and may modify it; the QP lives until the
 * last handle is destroyed.  No send queue: ibv_post_send is EINVAL.
 */
struct ibv_qp *rxe2_open_qp(struct ibv_context *ibctx,
			    struct ibv_qp_open_attr *attr)
{
	struct ib_uverbs_create_qp_resp resp;
	struct ibv_open_qp cmd = {};
	struct rxe2_qp *qp;
	int err;

	if (attr->qp_type != IBV_QPT_XRC_RECV) {
		errno = EINVAL;
		return NULL;
	}
	qp = rxe2_qp_alloc();
	if (!qp)
		return NULL;
	err = ibv_cmd_open_qp(ibctx, &qp->vqp, sizeof(qp->vqp), attr, &cmd,
			      sizeof(cmd), &resp, sizeof(resp));
	if (err) {
		rxe2_qp_free(qp);
		errno = err;
		return NULL;
	}
	return &qp->vqp.qp;
}
