// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * librxe2: flow steering.  ibv_create_flow() steers frames of the
 * device's netdev to a raw packet QP; the kernel (rxe/rxe2_flow.c) keeps
 * the rules and sees every frame.  libibverbs converts the specs into the
 * kernel's layout; nothing of the driver's rides along.
 */
#include <errno.h>
#include <stdlib.h>

#include "rxe2.h"

struct ibv_flow *rxe2_create_flow(struct ibv_qp *ibqp,
				  struct ibv_flow_attr *attr)
{
	struct ibv_flow *flow;
	int err;

	/* what the kernel would refuse anyway, refused without a call */
	if (ibqp->qp_type != IBV_QPT_RAW_PACKET) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	flow = calloc(1, sizeof(*flow));
	if (!flow) {
		errno = ENOMEM;
		return NULL;
	}
	err = ibv_cmd_create_flow(ibqp, flow, attr, NULL, 0);
	if (err) {
		free(flow);
		errno = err;
		return NULL;
	}
	return flow;
}

int rxe2_destroy_flow(struct ibv_flow *flow)
{
	int err = ibv_cmd_destroy_flow(flow);

	if (err)
		return err;
	free(flow);
	return 0;
}
