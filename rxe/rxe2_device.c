// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2: the ib_device, its port, the user context and the device's ops.
 */
#include <linux/ethtool.h>
#include <linux/rtnetlink.h>
#include <net/addrconf.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/restrack.h>

#include "rxe2.h"
#include "rxe2_verbs.h"
#include "rxe2_wire.h"

/*
 * Identity.  The vendor id is an OUI in the IEEE "locally administered"
 * space (second-lowest bit of the first octet set): "RXE" in ASCII.  No
 * real vendor can own it, so it never impersonates a hardware HCA.
 */
#define RXE2_VENDOR_PART_ID	0x0002
#define RXE2_HW_VER		1
#define RXE2_FW_MAJOR		1
#define RXE2_FW_MINOR		0
#define RXE2_FW_SUBMINOR	0

/*
 * One GID per address of the netdev and of its upper devices (VLANs,
 * bond masters), RoCEv2 only: 128 is plenty and keeps the per-device
 * sysfs tree (three files per entry) small.
 */
#define RXE2_GID_TBL_LEN	128

/*
 * An MR pins its pages: a finite, testable limit far above any memory a
 * process can pin on the machines we target.
 */
#define RXE2_MAX_MR_SIZE	(1ULL << 40)

/* responder resources per QP, as on common RoCE NICs */
#define RXE2_MAX_FAST_REG_PAGES	512
/* 4.096 us * 2^15 = 134 ms: generous for a software device under load */
#define RXE2_LOCAL_CA_ACK_DELAY	15

/* rxe2_dev_list (see the lock table in rxe2_verbs.h) */
DEFINE_MUTEX(rxe2_dev_lock);
LIST_HEAD(rxe2_dev_list);

static void rxe2_init_attr(struct rxe2_dev *rdev)
{
	const struct rxe2_params *p = &rxe2_params;
	struct ib_device_attr *a = &rdev->attr;

	a->fw_ver = (u64)RXE2_FW_MAJOR << 32 | (u64)RXE2_FW_MINOR << 16 |
		    RXE2_FW_SUBMINOR;
	a->sys_image_guid = rdev->ibdev.node_guid;
	a->max_mr_size = RXE2_MAX_MR_SIZE;
	/* MRs are built from the kernel's pages: any multiple of them */
	a->page_size_cap = ~((u64)PAGE_SIZE - 1);
	a->vendor_id = RXE2_VENDOR_ID;
	a->vendor_part_id = RXE2_VENDOR_PART_ID;
	a->hw_ver = RXE2_HW_VER;
	a->max_qp = p->max_qp;
	a->max_qp_wr = p->max_qp_wr;
	/* raw packet QPs (rxe2_raw.c): checksums written and verified */
	a->max_raw_ethy_qp = p->max_qp;
	a->raw_packet_caps = IB_RAW_PACKET_CAP_IP_CSUM;
	/* WQs and RSS over them (rxe2_wq.c): raw packet QPs only */
	a->max_wq_type_rq = p->max_qp;
	a->rss_caps.supported_qpts = 1 << IB_QPT_RAW_PACKET;
	a->rss_caps.max_rwq_indirection_tables = p->max_qp;
	a->rss_caps.max_rwq_indirection_table_size = RXE2_MAX_IND_TBL_SIZE;
	rxe2_tm_caps(&a->tm_caps);	/* tag matching SRQs (rxe2_tm.c) */
	/*
	 * Only what the verbs and the data path implement.
	 * MEM_MGT_EXTENSIONS: fast registration (ib_alloc_mr,
	 * IB_WR_REG_MR), LOCAL_INV and SEND_WITH_INV, which nvme-rdma and
	 * other kernel consumers require.  MEM_WINDOW, TYPE_2B: memory
	 * windows of type 1 and 2B (rxe2_mw.c).  IBTA 1.5 ATOMIC WRITE and
	 * FLUSH with global placement (rxe2_place.c); not persistent.  XRC
	 * domains, SRQs and QPs (rxe2_xrc.c).
	 */
	a->device_cap_flags = IB_DEVICE_RC_RNR_NAK_GEN |
			      IB_DEVICE_SYS_IMAGE_GUID |
			      IB_DEVICE_PORT_ACTIVE_EVENT |
			      IB_DEVICE_SRQ_RESIZE |
			      IB_DEVICE_MEM_MGT_EXTENSIONS |
			      IB_DEVICE_MEM_WINDOW |
			      IB_DEVICE_MEM_WINDOW_TYPE_2B |
			      IB_DEVICE_XRC |
			      IB_DEVICE_MANAGED_FLOW_STEERING |
			      IB_DEVICE_RAW_IP_CSUM |
			      RXE2_DEVICE_ATOMIC_WRITE |
			      RXE2_DEVICE_FLUSH_GLOBAL;
	/*
	 * rdma link delete; ODP MRs (rxe2_odp.c); UD QPs that do not hear
	 * their own multicast (rxe2_mcast.c)
	 */
	a->kernel_cap_flags = IBK_ALLOW_USER_UNREG | IBK_ON_DEMAND_PAGING |
			      IBK_BLOCK_MULTICAST_LOOPBACK;
	/*
	 * Every opcode reaches MR memory through the same page lookup, so
	 * ODP works for all of them, ATOMIC WRITE too (one 8-byte store into
	 * a page faulted in for writing, rxe2_place.c); a FLUSH places
	 * nothing of its own and orders what WRITEs placed, wherever it
	 * faulted them in.  Implicit: reg_mr(0, SIZE_MAX).
	 */
	a->odp_caps.general_caps = IB_ODP_SUPPORT | IB_ODP_SUPPORT_IMPLICIT;
	a->odp_caps.per_transport_caps.rc_odp_caps = IB_ODP_SUPPORT_SEND |
		IB_ODP_SUPPORT_RECV | IB_ODP_SUPPORT_WRITE |
		IB_ODP_SUPPORT_READ | IB_ODP_SUPPORT_ATOMIC |
		IB_ODP_SUPPORT_SRQ_RECV | IB_ODP_SUPPORT_FLUSH |
		IB_ODP_SUPPORT_ATOMIC_WRITE;
	/* an XRC target is an RC responder over SRQs */
	a->odp_caps.per_transport_caps.xrc_odp_caps = IB_ODP_SUPPORT_SEND |
		IB_ODP_SUPPORT_WRITE | IB_ODP_SUPPORT_READ |
		IB_ODP_SUPPORT_ATOMIC | IB_ODP_SUPPORT_SRQ_RECV;
	a->odp_caps.per_transport_caps.uc_odp_caps = IB_ODP_SUPPORT_SEND |
		IB_ODP_SUPPORT_RECV | IB_ODP_SUPPORT_WRITE |
		IB_ODP_SUPPORT_SRQ_RECV;
	a->odp_caps.per_transport_caps.ud_odp_caps = IB_ODP_SUPPORT_SEND |
		IB_ODP_SUPPORT_RECV | IB_ODP_SUPPORT_SRQ_RECV;
	a->max_send_sge = p->max_send_sge;
	a->max_recv_sge = p->max_recv_sge;
	a->max_sge_rd = p->max_send_sge;
	a->max_cq = p->max_cq;
	a->max_cqe = p->max_cqe;
	a->max_mr = p->max_mr;
	a->max_mw = p->max_mr;
	a->max_pd = p->max_pd;
	a->max_qp_rd_atom = RXE2_MAX_RD_ATOM;
	a->max_qp_init_rd_atom = RXE2_MAX_RD_ATOM;
	a->max_res_rd_atom = min_t(u64, (u64)p->max_qp * RXE2_MAX_RD_ATOM,
				   INT_MAX);
	a->atomic_cap = IB_ATOMIC_HCA;
	a->masked_atomic_cap = IB_ATOMIC_NONE;
	a->max_ah = p->max_ah;
	a->max_srq = p->max_srq;
	a->max_srq_wr = p->max_srq_wr;
	a->max_srq_sge = p->max_srq_sge;
	a->max_fast_reg_page_list_len = RXE2_MAX_FAST_REG_PAGES;
	a->max_pkeys = 1;
	/* rxe2_mcast.c; IGMP/MLD membership follows the groups */
	a->max_mcast_grp = p->max_mcast_grp;
	a->max_mcast_qp_attach = p->max_mcast_qp_attach;
	/* device memory (rxe2_dm.c) */
	a->max_dm_size = p->max_dm_size & PAGE_MASK;
	a->max_total_mcast_qp_attach = p->max_mcast_grp *
				       p->max_mcast_qp_attach;
	a->local_ca_ack_delay = RXE2_LOCAL_CA_ACK_DELAY;
	/* completion timestamps and CQ moderation (rxe2_cq.c) */
	rxe2_cq_set_caps(a);

	rdev->max_inline_data = p->max_inline_data;
}

static int rxe2_query_device(struct ib_device *ibdev,
			     struct ib_device_attr *attr,
			     struct ib_udata *udata)
{
	/* no input is defined yet: anything but zeros is from the future */
	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;

	*attr = to_rdev(ibdev)->attr;
	return 0;
}

static void rxe2_get_dev_fw_str(struct ib_device *ibdev, char *str)
{
	snprintf(str, IB_FW_VERSION_NAME_MAX, "%u.%u.%u", RXE2_FW_MAJOR,
		 RXE2_FW_MINOR, RXE2_FW_SUBMINOR);
}

/* Ethernet speed in Mb/s to the nearest IB speed x width at or above it */
static const struct {
	u32 mbps;
	u16 speed;
	u8 width;
} rxe2_speeds[] = {
	{ 2500, IB_SPEED_SDR, IB_WIDTH_1X },
	{ 5000, IB_SPEED_DDR, IB_WIDTH_1X },
	{ 10000, IB_SPEED_FDR10, IB_WIDTH_1X },
	{ 14000, IB_SPEED_FDR, IB_WIDTH_1X },
	{ 25000, IB_SPEED_EDR, IB_WIDTH_1X },
	{ 40000, IB_SPEED_FDR10, IB_WIDTH_4X },
	{ 50000, IB_SPEED_HDR, IB_WIDTH_1X },
	{ 56000, IB_SPEED_FDR, IB_WIDTH_4X },
	{ 100000, IB_SPEED_EDR, IB_WIDTH_4X },
	{ 200000, IB_SPEED_HDR, IB_WIDTH_4X },
	{ 400000, IB_SPEED_NDR, IB_WIDTH_4X },
	{ U32_MAX, IB_SPEED_NDR, IB_WIDTH_8X },
};

/* lo and dummy have no link speed: call them 10 Gb/s, like veth */
#define RXE2_DEFAULT_MBPS	10000

/* under RTNL: the MTU the netdev has now */
static void rxe2_port_update(struct rxe2_dev *rdev)
{
	enum ib_mtu mtu;

	ASSERT_RTNL();
	mtu = iboe_get_mtu(rdev->ndev->mtu);
	WRITE_ONCE(rdev->active_mtu, mtu ? mtu : IB_MTU_256);
}

/*
 * The link speed, asked of the netdev when the port is queried, as
 * ib_get_eth_speed() does: never from the netdev notifier, whose caller
 * holds the instance lock of an ops-locked netdev (dummy, mlx5, ...)
 * that ethtool takes again since 7.2 (a deadlock of the whole RTNL).
 * Takes RTNL: no caller of query_port holds it.
 */
static u32 rxe2_port_mbps(struct rxe2_dev *rdev)
{
	struct ethtool_link_ksettings ks;
	int err;

	rtnl_lock();
	err = __ethtool_get_link_ksettings(rdev->ndev, &ks);
	rtnl_unlock();
	if (!err && ks.base.speed != (u32)SPEED_UNKNOWN && ks.base.speed)
		return ks.base.speed;
	return RXE2_DEFAULT_MBPS;
}

static void rxe2_port_speed(struct rxe2_dev *rdev, struct ib_port_attr *attr)
{
	u32 mbps = rxe2_port_mbps(rdev);
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(rxe2_speeds) - 1; i++)
		if (mbps <= rxe2_speeds[i].mbps)
			break;
	attr->active_speed = rxe2_speeds[i].speed;
	attr->active_width = rxe2_speeds[i].width;
}

static bool rxe2_port_is_active(struct rxe2_dev *rdev)
{
	return netif_running(rdev->ndev) && netif_oper_up(rdev->ndev);
}

static void rxe2_port_event(struct rxe2_dev *rdev, enum ib_event_type event)
{
	struct ib_event ev = {
		.device = &rdev->ibdev,
		.event = event,
		.element.port_num = RXE2_PORT,
	};

	ib_dispatch_event(&ev);
}

/* Under RTNL, which also serializes port_active, the last state reported. */
void rxe2_port_refresh(struct rxe2_dev *rdev)
{
	bool active;

	rxe2_port_update(rdev);
	active = rxe2_port_is_active(rdev);
	if (active == rdev->port_active)
		return;
	if (!active)
		rxe2_dp_count(rdev, RXE2_DPC_LINK_DOWNED);
	rdev->port_active = active;
	rxe2_port_event(rdev, active ? IB_EVENT_PORT_ACTIVE :
				       IB_EVENT_PORT_ERR);
}

/*
 * Driver details of an object for `rdma resource show ... -dd`: the
 * u32s of d[] that are shown, then an "odp" string if given, in the
 * driver's nest of the message (emptied again if it does not fit).
 */
int rxe2_res_put(struct sk_buff *msg, const struct rxe2_res_u32 *d, int n,
		 const char *odp)
{
	struct nlattr *nest = nla_nest_start_noflag(msg,
						    RDMA_NLDEV_ATTR_DRIVER);
	int i, err = 0;

	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < n && !err; i++)
		if (d[i].show)
			err = rdma_nl_put_driver_u32(msg, d[i].name, d[i].v);
	if (!err && odp)
		err = rdma_nl_put_driver_string(msg, "odp", odp);
	if (err) {
		nla_nest_cancel(msg, nest);
		return err;
	}
	nla_nest_end(msg, nest);
	return 0;
}

static int rxe2_query_port(struct ib_device *ibdev, u32 port,
			   struct ib_port_attr *attr)
{
	struct rxe2_dev *rdev = to_rdev(ibdev);
	bool active = rxe2_port_is_active(rdev);

	/* ib_core zeroed *attr and checked port */
	attr->state = active ? IB_PORT_ACTIVE : IB_PORT_DOWN;
	attr->phys_state = active ? IB_PORT_PHYS_STATE_LINK_UP :
				    IB_PORT_PHYS_STATE_DISABLED;
	attr->max_mtu = IB_MTU_4096;
	attr->active_mtu = READ_ONCE(rdev->active_mtu);
	attr->phys_mtu = ib_mtu_enum_to_int(IB_MTU_4096);
	attr->gid_tbl_len = RXE2_GID_TBL_LEN;
	attr->ip_gids = true;
	attr->port_cap_flags = IB_PORT_CM_SUP;
	attr->max_msg_sz = 1U << 31;
	attr->pkey_tbl_len = 1;
	attr->max_vl_num = 1;
	rxe2_port_speed(rdev, attr);
	return 0;
}

#ifdef RXE2_HAVE_QUERY_PORT_SPEED
/*
 * ibv_query_port_speed: the netdev's own rate in units of 100 Mb/s, not
 * rounded up to an IB speed x width as query_port must (a bond of three
 * 10 Gb/s links is 30 Gb/s, which no width of 2^n lanes gives).  ib_core
 * has checked the port.
 */
int rxe2_query_port_speed(struct ib_device *ibdev, u32 port, u64 *speed)
{
	*speed = rxe2_port_mbps(to_rdev(ibdev)) / 100;
	return 0;
}
#endif

static int rxe2_get_port_immutable(struct ib_device *ibdev, u32 port,
				   struct ib_port_immutable *immutable)
{
	/* RoCEv2 only: ib_core then creates RoCEv2 GIDs and no RoCEv1 ones */
	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	immutable->gid_tbl_len = RXE2_GID_TBL_LEN;
	immutable->pkey_tbl_len = 1;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

static int rxe2_query_pkey(struct ib_device *ibdev, u32 port, u16 index,
			   u16 *pkey)
{
	if (index)
		return -EINVAL;
	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

static enum rdma_link_layer rxe2_get_link_layer(struct ib_device *ibdev,
						u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

static int rxe2_alloc_ucontext(struct ib_ucontext *ibuc,
			       struct ib_udata *udata)
{
	struct rxe2_dev *rdev = to_rdev(ibuc->device);
	struct rxe2_alloc_context_cmd cmd;
	struct rxe2_alloc_context_resp resp = {
		.abi_version = RXE2_UVERBS_ABI_VERSION,
		.send_wqe_hdr_size = RXE2_SEND_WQE_HDR_SIZE,
		.recv_wqe_hdr_size = RXE2_RECV_WQE_HDR_SIZE,
		.cqe_size = RXE2_CQE_SIZE,
		.max_inline_recv = RXE2_INLINE_RECV_MAX,
		/* of the map as it is now: a later ic_map write is not seen */
		.num_interconnects = rxe2_ic_count(rdev),
	};

	/* the verbs' own attributes decide, so the two never disagree */
	if (rdev->attr.kernel_cap_flags & IBK_ON_DEMAND_PAGING)
		resp.dv_caps |= RXE2_DV_CAP_ODP;
	if (rdev->attr.max_mw)
		resp.dv_caps |= RXE2_DV_CAP_MW;
	resp.dv_caps |= rxe2_xmr_dv_caps();

	/*
	 * Only librxe2 talks to us and it always sends the command.  A
	 * provider older than the rxe2dv fields reads the first four.
	 */
	if (!udata || udata->inlen < sizeof(cmd) ||
	    udata->outlen < offsetofend(typeof(resp), cqe_size))
		return -EINVAL;
	if (ib_copy_from_udata(&cmd, udata, sizeof(cmd)))
		return -EFAULT;
	if (cmd.provider_abi != RXE2_UVERBS_ABI_VERSION || cmd.reserved)
		return -EINVAL;
	if (udata->inlen > sizeof(cmd) &&
	    !ib_is_udata_cleared(udata, sizeof(cmd),
				 udata->inlen - sizeof(cmd)))
		return -EINVAL;

	return ib_copy_to_udata(udata, &resp,
				min(sizeof(resp), udata->outlen)) ? -EFAULT : 0;
}

static void rxe2_dealloc_ucontext(struct ib_ucontext *ibuc)
{
}

/*
 * ibv_import_device() asks UVERBS_METHOD_QUERY_CONTEXT, which ib_core
 * answers only for a driver with this op.  rxe2 adds nothing to the
 * core's answer (num_comp_vectors, core_support).
 */
static int rxe2_query_ucontext(struct ib_ucontext *ibuc,
			       struct uverbs_attr_bundle *attrs)
{
	return 0;
}

/*
 * Its presence lets the device go away under live processes (rdma link
 * delete, netdev removal, rmmod): ib_core destroys their objects, zaps
 * their ring mappings and reports a fatal event, instead of waiting for
 * every process to close the device.  Nothing else ties a context to us.
 */
static void rxe2_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}

/*
 * The last device op ib_core calls, from any unregistration path (rdma
 * link delete, netdev removal, module unload) or from ib_dealloc_device()
 * when registration failed.
 */
static void rxe2_dealloc_driver(struct ib_device *ibdev)
{
	struct rxe2_dev *rdev = to_rdev(ibdev);

	mutex_lock(&rxe2_dev_lock);
	list_del_init(&rdev->list);
	mutex_unlock(&rxe2_dev_lock);

	rxe2_fault_fini(rdev);
	rxe2_tap_fini(rdev);
	rxe2_gids_forget(rdev);
	rxe2_tables_fini(rdev);
	rxe2_ic_fini(rdev);
	free_percpu(rdev->pcnt);
	WARN_ON(!xa_empty(&rdev->counters));	/* ib_core freed them all */
	xa_destroy(&rdev->counters);
	/* ib_core destroyed every flow */
	WARN_ON(!list_empty(&rdev->flows));
	rxe2_flows_fini(rdev);
	netdev_put(rdev->ndev, &rdev->ndev_tracker);
}

static ssize_t rxe2_abi_show(struct device *device,
			     struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "rxe2 %u\n", RXE2_UVERBS_ABI_VERSION);
}

static ssize_t parent_show(struct device *device,
			   struct device_attribute *attr, char *buf)
{
	struct rxe2_dev *rdev = to_rdev(rdma_device_to_ibdev(device));

	return sysfs_emit(buf, "%s\n", netdev_name(rdev->ndev));
}

/* the provider identifies rxe2 devices by this file, see uapi */
static struct device_attribute rxe2_abi_attr = {
	.attr = { .name = RXE2_SYSFS_ABI_ATTR, .mode = 0444 },
	.show = rxe2_abi_show,
};
static DEVICE_ATTR_RO(parent);

static struct attribute *rxe2_dev_attrs[] = {
	&rxe2_abi_attr.attr,
	&dev_attr_parent.attr,
	&dev_attr_ic_map.attr,
	NULL,
};

static const struct attribute_group rxe2_dev_attr_group = {
	.attrs = rxe2_dev_attrs,
};

static const struct ib_device_ops rxe2_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RXE2_DRIVER_ID,
	.uverbs_abi_ver = RXE2_UVERBS_ABI_VERSION,
	/* sysfs, not netlink: libibverbs reads it before any verbs call */
	.device_group = &rxe2_dev_attr_group,

	.add_gid = rxe2_add_gid,
	.advise_mr = rxe2_advise_mr,
	.alloc_mr = rxe2_alloc_mr,
	.alloc_mw = rxe2_alloc_mw,
	.alloc_ucontext = rxe2_alloc_ucontext,
	.dealloc_driver = rxe2_dealloc_driver,
	.dealloc_mw = rxe2_dealloc_mw,
	.dealloc_ucontext = rxe2_dealloc_ucontext,
	.query_ucontext = rxe2_query_ucontext,
	.del_gid = rxe2_del_gid,
	.disassociate_ucontext = rxe2_disassociate_ucontext,
	.get_dev_fw_str = rxe2_get_dev_fw_str,
	.fill_res_cq_entry = rxe2_fill_res_cq_entry,
	.fill_res_mr_entry = rxe2_fill_res_mr_entry,
	.fill_res_qp_entry = rxe2_fill_res_qp_entry,
	.get_link_layer = rxe2_get_link_layer,
	/* no get_netdev: ib_device_set_netdev() lets ib_core answer it */
	.get_port_immutable = rxe2_get_port_immutable,
	.map_mr_sg = rxe2_map_mr_sg,
	.attach_mcast = rxe2_attach_mcast,
	.detach_mcast = rxe2_detach_mcast,
	.query_device = rxe2_query_device,
	.query_pkey = rxe2_query_pkey,
	.query_port = rxe2_query_port,
	RXE2_QUERY_PORT_SPEED_OPS
	.rereg_user_mr = rxe2_rereg_user_mr,

	INIT_RDMA_OBJ_SIZE(ib_mw, rxe2_mw, ibmw),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, rxe2_ucontext, ibuc),
};

/*
 * The verbs half of the device's ops, object sizes included
 * (INIT_RDMA_OBJ_SIZE); rxe2_init_ibdev() merges it with rxe2_dev_ops
 * through a second ib_set_device_ops() call.
 */
static const struct ib_device_ops rxe2_verbs_ops = {
	.alloc_pd = rxe2_alloc_pd,
	.dealloc_pd = rxe2_dealloc_pd,

	.create_ah = rxe2_create_ah,
	.create_user_ah = rxe2_create_user_ah,
	.query_ah = rxe2_query_ah,
	.destroy_ah = rxe2_destroy_ah,

	.get_dma_mr = rxe2_get_dma_mr,
	.reg_user_mr = rxe2_reg_user_mr,
	.dereg_mr = rxe2_dereg_mr,
	.alloc_dm = rxe2_alloc_dm,
	.dealloc_dm = rxe2_dealloc_dm,
	.reg_dm_mr = rxe2_reg_dm_mr,
	.reg_user_mr_dmabuf = rxe2_reg_user_mr_dmabuf,
	RXE2_DMAH_OPS

	.create_cq = rxe2_create_cq,
	.destroy_cq = rxe2_destroy_cq,
	.RXE2_OP_RESIZE_CQ = rxe2_resize_cq,
	.req_notify_cq = rxe2_req_notify_cq,
	.modify_cq = rxe2_modify_cq,
	.poll_cq = rxe2_poll_cq,

	.create_qp = rxe2_create_qp,
	.modify_qp = rxe2_modify_qp,
	.query_qp = rxe2_query_qp,
	.destroy_qp = rxe2_destroy_qp,
	.post_send = rxe2_post_send,
	.post_recv = rxe2_post_recv,

	.alloc_xrcd = rxe2_alloc_xrcd,
	.dealloc_xrcd = rxe2_dealloc_xrcd,
	.create_srq = rxe2_create_srq,
	.modify_srq = rxe2_modify_srq,
	.query_srq = rxe2_query_srq,
	.destroy_srq = rxe2_destroy_srq,
	.post_srq_recv = rxe2_post_srq_recv,

	.mmap = rxe2_mmap,
	.mmap_free = rxe2_mmap_free,

	INIT_RDMA_OBJ_SIZE(ib_pd, rxe2_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_ah, rxe2_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, rxe2_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_qp, rxe2_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, rxe2_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_xrcd, rxe2_xrcd, ibxrcd),
};

/*
 * The netdev unregisters (under RTNL): every device on it, registered or
 * already being unregistered, takes its flow hooks off it.  A device on
 * rxe2_dev_list is not freed while we hold the lock.
 */
void rxe2_netdev_unregistering(struct net_device *ndev)
{
	struct rxe2_dev *rdev;

	mutex_lock(&rxe2_dev_lock);
	list_for_each_entry(rdev, &rxe2_dev_list, list)
		if (rdev->ndev == ndev)
			rxe2_flows_netdev_gone(rdev);
	mutex_unlock(&rxe2_dev_lock);
}

struct rxe2_dev *rxe2_dev_get_by_netdev(struct net_device *ndev)
{
	struct ib_device *ibdev = ib_device_get_by_netdev(ndev, RXE2_DRIVER_ID);

	return ibdev ? to_rdev(ibdev) : NULL;
}

static bool rxe2_netdev_linked(struct net_device *ndev)
{
	struct rxe2_dev *rdev;

	lockdep_assert_held(&rxe2_dev_lock);
	list_for_each_entry(rdev, &rxe2_dev_list, list)
		if (rdev->ndev == ndev)
			return true;
	return false;
}

static void rxe2_init_ibdev(struct rxe2_dev *rdev, struct net_device *ndev)
{
	struct ib_device *ibdev = &rdev->ibdev;
	u8 mac[ETH_ALEN] = {};

	/* lo has no MAC: its GUID is the EUI-64 of 00:00:00:00:00:00 */
	if (ndev->addr_len == ETH_ALEN)
		ether_addr_copy(mac, ndev->dev_addr);
	addrconf_addr_eui48((u8 *)&ibdev->node_guid, mac);

	ibdev->node_type = RDMA_NODE_IB_CA;
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = 1;
	ibdev->local_dma_lkey = 0;
	strscpy(ibdev->node_desc, "rxe2", sizeof(ibdev->node_desc));

	ib_set_device_ops(ibdev, &rxe2_dev_ops);
	ib_set_device_ops(ibdev, &rxe2_verbs_ops);
	ib_set_device_ops(ibdev, &rxe2_counter_ops);
	ib_set_device_ops(ibdev, &rxe2_flow_ops);
	ib_set_device_ops(ibdev, &rxe2_flow_counters_ops);
	ib_set_device_ops(ibdev, &rxe2_wq_ops);
	ibdev->driver_def = rxe2_uapi_defs;

	/*
	 * ib_uverbs enables only the core write commands by default: the CQ
	 * arm and the send doorbell (a POST_SEND without work requests) are
	 * opt-in.
	 */
	ibdev->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ) |
				  BIT_ULL(IB_USER_VERBS_CMD_POST_SEND);
}

int rxe2_dev_add(const char *ibdev_name, struct net_device *ndev)
{
	struct rxe2_dev *rdev;
	bool gone;
	int err;

	rdev = ib_alloc_device(rxe2_dev, ibdev);
	if (!rdev)
		return -ENOMEM;

	INIT_LIST_HEAD(&rdev->list);
	rdev->ndev = ndev;
	netdev_hold(ndev, &rdev->ndev_tracker, GFP_KERNEL);
	rxe2_init_ibdev(rdev, ndev);
	rxe2_init_attr(rdev);
	rxe2_tables_init(rdev);
	rxe2_fault_init(rdev);
	rxe2_tap_init(rdev);
	xa_init_flags(&rdev->counters, XA_FLAGS_ALLOC1);
	rxe2_flows_init(rdev);
	/* from here on, ib_dealloc_device() undoes all of it */
	rdev->pcnt = alloc_percpu(struct rxe2_pcpu_counters);
	if (!rdev->pcnt) {
		err = -ENOMEM;
		goto err_dealloc;
	}

	rtnl_lock();
	rxe2_port_update(rdev);
	rdev->port_active = rxe2_port_is_active(rdev);
	rtnl_unlock();

	err = ib_device_set_netdev(&rdev->ibdev, ndev, RXE2_PORT);
	if (err)
		goto err_dealloc;

	mutex_lock(&rxe2_dev_lock);
	if (rxe2_netdev_linked(ndev)) {
		mutex_unlock(&rxe2_dev_lock);
		err = -EEXIST;
		goto err_dealloc;
	}
	list_add_tail(&rdev->list, &rxe2_dev_list);
	mutex_unlock(&rxe2_dev_lock);

	/*
	 * Our own reference: once registered, a concurrent netdev removal
	 * may unregister and free the device before we look at it below.
	 */
	get_device(&rdev->ibdev.dev);
	err = ib_register_device(&rdev->ibdev, ibdev_name, NULL);
	if (err) {
		mutex_lock(&rxe2_dev_lock);
		list_del_init(&rdev->list);
		mutex_unlock(&rxe2_dev_lock);
		ib_dealloc_device(&rdev->ibdev);
		put_device(&rdev->ibdev.dev);
		return err;
	}

	/*
	 * The netdev may have changed while we registered, before the
	 * notifier could find us; under RTNL either the change is visible
	 * here or its notifier call is still to come.
	 */
	rtnl_lock();
	gone = ndev->reg_state != NETREG_REGISTERED;
	/* an rdma link delete may have beaten us to it, too */
	if (!gone && ib_device_try_get(&rdev->ibdev)) {
		rxe2_port_refresh(rdev);
		ib_device_put(&rdev->ibdev);
	}
	rtnl_unlock();
	if (gone)
		ib_unregister_device(&rdev->ibdev);
	put_device(&rdev->ibdev.dev);
	return gone ? -ENODEV : 0;

err_dealloc:
	ib_dealloc_device(&rdev->ibdev);
	return err;
}
