// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2: module entry, limits and the "rxe2" rdma link type.
 */
#include <linux/module.h>
#include <linux/if_arp.h>
#include <rdma/rdma_netlink.h>

#include "rxe2.h"
#include "rxe2_verbs.h"

/*
 * Each limit is a read-only parameter named like the ib_device_attr
 * field it sets, so that a test can load the module with small limits
 * and exhaust them quickly.  The caps keep every value within what the
 * object numbering (24-bit QPNs and indexes) and the ring sizes support.
 */
struct rxe2_params rxe2_params = {
	.max_qp = 65536,
	.max_qp_wr = 16384,
	.max_send_sge = 32,
	.max_recv_sge = 32,
	.max_cq = 65536,
	/* libfabric's verbs;ofi_rxm asks 262144 (FI_UNIVERSE_SIZE 256) */
	.max_cqe = 1048576,
	.max_mr = 262144,
	.max_pd = 65536,
	.max_srq = 65536,
	.max_srq_wr = 16384,
	.max_srq_sge = 32,
	.max_ah = 65536,
	.max_inline_data = 256,
	/* as rdma_rxe */
	.max_mcast_grp = 8192,
	.max_mcast_qp_attach = 56,
	.max_dm_size = 4 << 20,
};

#define RXE2_LIMIT(name, cap, text)					\
	module_param_named(name, rxe2_params.name, uint, 0444);	\
	MODULE_PARM_DESC(name, text " (1.." __stringify(cap) ")")

#define RXE2_CAP_OBJ	8388608		/* 2^23 */
#define RXE2_CAP_WR	1048576		/* 2^20 */
#define RXE2_CAP_INLINE	4096
#define RXE2_CAP_MCAST	65536

RXE2_LIMIT(max_qp, RXE2_CAP_OBJ, "QPs per device");
RXE2_LIMIT(max_qp_wr, RXE2_CAP_WR, "work requests per send or receive queue");
RXE2_LIMIT(max_send_sge, RXE2_CAP_SGE, "SGEs per send work request");
RXE2_LIMIT(max_recv_sge, RXE2_CAP_SGE, "SGEs per receive work request");
RXE2_LIMIT(max_cq, RXE2_CAP_OBJ, "CQs per device");
RXE2_LIMIT(max_cqe, RXE2_CAP_WR, "entries per CQ, a power of two");
RXE2_LIMIT(max_mr, RXE2_CAP_OBJ, "MRs per device");
RXE2_LIMIT(max_pd, RXE2_CAP_OBJ, "PDs per device");
RXE2_LIMIT(max_srq, RXE2_CAP_OBJ, "SRQs per device");
RXE2_LIMIT(max_srq_wr, RXE2_CAP_WR, "work requests per SRQ");
RXE2_LIMIT(max_srq_sge, RXE2_CAP_SGE, "SGEs per SRQ work request");
RXE2_LIMIT(max_ah, RXE2_CAP_OBJ, "AHs per device");
RXE2_LIMIT(max_inline_data, RXE2_CAP_INLINE, "inline bytes per send work request");
RXE2_LIMIT(max_mcast_grp, RXE2_CAP_MCAST, "multicast groups per device");
RXE2_LIMIT(max_mcast_qp_attach, RXE2_CAP_MCAST, "QPs per multicast group");
/* ib_dm.length is a u32: one allocation stays below 4 GiB */
module_param_named(max_dm_size, rxe2_params.max_dm_size, uint, 0444);
MODULE_PARM_DESC(max_dm_size,
		 "device memory bytes per device, rounded down to pages (0: none; default 4 MiB)");

static bool rxe2_limit_ok(const char *name, unsigned int val, unsigned int cap)
{
	if (val >= 1 && val <= cap)
		return true;
	pr_err("rdma_rxe2: %s=%u is out of range 1..%u\n", name, val, cap);
	return false;
}

static bool rxe2_params_ok(void)
{
	const struct rxe2_params *p = &rxe2_params;
	bool ok = true;

	ok &= rxe2_limit_ok("max_qp", p->max_qp, RXE2_CAP_OBJ);
	ok &= rxe2_limit_ok("max_qp_wr", p->max_qp_wr, RXE2_CAP_WR);
	ok &= rxe2_limit_ok("max_send_sge", p->max_send_sge, RXE2_CAP_SGE);
	ok &= rxe2_limit_ok("max_recv_sge", p->max_recv_sge, RXE2_CAP_SGE);
	ok &= rxe2_limit_ok("max_cq", p->max_cq, RXE2_CAP_OBJ);
	ok &= rxe2_limit_ok("max_cqe", p->max_cqe, RXE2_CAP_WR);
	ok &= rxe2_limit_ok("max_mr", p->max_mr, RXE2_CAP_OBJ);
	ok &= rxe2_limit_ok("max_pd", p->max_pd, RXE2_CAP_OBJ);
	ok &= rxe2_limit_ok("max_srq", p->max_srq, RXE2_CAP_OBJ);
	ok &= rxe2_limit_ok("max_srq_wr", p->max_srq_wr, RXE2_CAP_WR);
	ok &= rxe2_limit_ok("max_srq_sge", p->max_srq_sge, RXE2_CAP_SGE);
	ok &= rxe2_limit_ok("max_ah", p->max_ah, RXE2_CAP_OBJ);
	ok &= rxe2_limit_ok("max_inline_data", p->max_inline_data,
			    RXE2_CAP_INLINE);
	ok &= rxe2_limit_ok("max_mcast_grp", p->max_mcast_grp, RXE2_CAP_MCAST);
	ok &= rxe2_limit_ok("max_mcast_qp_attach", p->max_mcast_qp_attach,
			    RXE2_CAP_MCAST);
	if (ok && !is_power_of_2(p->max_cqe)) {
		pr_err("rdma_rxe2: max_cqe=%u is not a power of two\n",
		       p->max_cqe);
		ok = false;
	}
	return ok;
}

/*
 * RoCE needs an Ethernet frame format; loopback is accepted too because
 * it carries the same frames and makes single-host testing trivial.
 */
static int rxe2_newlink(const char *ibdev_name, struct net_device *ndev)
{
	if (ndev->type != ARPHRD_ETHER && !(ndev->flags & IFF_LOOPBACK))
		return -EINVAL;
	return rxe2_dev_add(ibdev_name, ndev);
}

static struct rdma_link_ops rxe2_link_ops = {
	.type = "rxe2",
	.newlink = rxe2_newlink,
};

static int __init rxe2_module_init(void)
{
	int err;

	if (!rxe2_params_ok())
		return -EINVAL;
	rxe2_counters_init();

	err = rxe2_mr_init();
	if (err)
		return err;
	err = rxe2_odp_init();
	if (err)
		goto err_mr;
	err = rxe2_net_init();
	if (err)
		goto err_odp;
	/* fault injection's directories find the devices by name */
	err = rxe2_fault_cfs_init();
	if (err)
		goto err_net;

	rdma_link_register(&rxe2_link_ops);
	return 0;

err_net:
	rxe2_net_exit();
err_odp:
	rxe2_odp_exit();
err_mr:
	rxe2_mr_exit();
	return err;
}

static void __exit rxe2_module_exit(void)
{
	/*
	 * First, while every device is still there: nothing is below it
	 * (each directory pins the module), and nothing reaches a device
	 * through it any more.
	 */
	rxe2_fault_cfs_exit();
	/* waits for a newlink in progress, then no new device can appear */
	rdma_link_unregister(&rxe2_link_ops);
	/* fences queued unregistrations too: no device op runs after it */
	ib_unregister_driver(RXE2_DRIVER_ID);
	rxe2_net_exit();
	/* every MR is gone, so is every prefetch: only the queue is left */
	rxe2_odp_exit();
	/* and every MR: only a teardown of replaced pages may be queued */
	rxe2_mr_exit();
}

module_init(rxe2_module_init);
module_exit(rxe2_module_exit);

MODULE_ALIAS_RDMA_LINK("rxe2");
MODULE_DESCRIPTION("rxe2: software RDMA over Converged Ethernet (RoCEv2)");
MODULE_LICENSE("Dual BSD/GPL");
/* the release: dkms.conf, debian/changelog and librxe2 say the same */
MODULE_VERSION("1.0.0");
