// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The data path is not implemented yet: rxe2's ibv_post_send,
 * ibv_post_recv and ibv_post_srq_recv refuse every work request with
 * EOPNOTSUPP and point bad_wr at the first one.  rxe2-specific; the
 * data-path issue replaces these checks.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tap.h"
#include "util.h"

#define WHY "data path not implemented (EOPNOTSUPP)"

int main(void)
{
	const char *dev = test_dev_name();
	struct ibv_context *ctx;
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_srq_init_attr sinit = {
		.attr = { .max_wr = 4, .max_sge = 1 },
	};
	struct ibv_send_wr swr, *bad_swr;
	struct ibv_recv_wr rwr, *bad_rwr;
	struct ibv_sge sge;
	struct ibv_srq *srq;
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_pd *pd;
	union ibv_gid gid;
	static char buf[4096];
	int idx;

	if (!test_is_rxe2(dev)) {
		tap_skip("%s is not rxe2: the EOPNOTSUPP checks are rxe2 only", dev);
		return tap_done();
	}
	ctx = test_open(dev);
	idx = find_ipv4_gid(ctx, &gid);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	srq = ibv_create_srq(pd, &sinit);
	if (idx < 0 || !pd || !cq || !srq)
		tap_bail("setup: %s", strerror(errno));
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	init.send_cq = cq;
	init.recv_cq = cq;
	qp = ibv_create_qp(pd, &init);
	if (!mr || !qp || qp_to_init(qp) || qp_to_rtr(qp, idx, &gid) ||
	    qp_to_rts(qp))
		tap_bail("setup: %s", strerror(errno));

	sge = (struct ibv_sge){ .addr = (uintptr_t)buf, .length = 64,
				.lkey = mr->lkey };
	memset(&swr, 0, sizeof(swr));
	swr.wr_id = 1;
	swr.sg_list = &sge;
	swr.num_sge = 1;
	swr.opcode = IBV_WR_SEND;
	swr.send_flags = IBV_SEND_SIGNALED;
	bad_swr = NULL;
	tap_ret_errno(ibv_post_send(qp, &swr, &bad_swr), EOPNOTSUPP,
		      "ibv_post_send: " WHY);
	tap_ok(bad_swr == &swr, "ibv_post_send bad_wr is the first WR");

	memset(&rwr, 0, sizeof(rwr));
	rwr.wr_id = 2;
	rwr.sg_list = &sge;
	rwr.num_sge = 1;
	bad_rwr = NULL;
	tap_ret_errno(ibv_post_recv(qp, &rwr, &bad_rwr), EOPNOTSUPP,
		      "ibv_post_recv: " WHY);
	tap_ok(bad_rwr == &rwr, "ibv_post_recv bad_wr is the first WR");
	bad_rwr = NULL;
	tap_ret_errno(ibv_post_srq_recv(srq, &rwr, &bad_rwr), EOPNOTSUPP,
		      "ibv_post_srq_recv: " WHY);
	tap_ok(bad_rwr == &rwr, "ibv_post_srq_recv bad_wr is the first WR");

	tap_ret_errno(ibv_destroy_qp(qp), 0, "ibv_destroy_qp");
	tap_ret_errno(ibv_destroy_srq(srq), 0, "ibv_destroy_srq");
	tap_ret_errno(ibv_dereg_mr(mr), 0, "ibv_dereg_mr");
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return tap_done();
}
