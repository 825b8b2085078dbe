/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rxe2: the device.  Shared definitions of the rdma_rxe2 module.
 */
#ifndef RXE2_H
#define RXE2_H

#include <linux/netdevice.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>

#include "../uapi/rxe2-abi.h"

#define RXE2_PORT 1

/*
 * Object tables.  Each table hands out indexes in [min, max] from an
 * xarray and counts live objects so that the device limits reported in
 * struct ib_device_attr are enforced exactly.
 */
struct rxe2_table {
	struct xarray xa;
	u32 next;		/* cyclic allocation hint */
	u32 min;
	u32 max;
	atomic_t count;
	u32 limit;		/* the ib_device_attr limit this table enforces */
};

struct rxe2_dev {
	struct ib_device ibdev;
	struct ib_device_attr attr;
	struct ib_port_attr port_attr;	/* static part; state comes from ndev */
	struct net_device *ndev;	/* held with dev_hold while linked */
	struct list_head list;		/* rxe2_dev_list, under rxe2_dev_lock */
	u64 node_guid;

	/* object tables: rxe2_verbs.h owns their use */
	struct rxe2_table pd_table;
	struct rxe2_table ah_table;
	struct rxe2_table mr_table;
	struct rxe2_table cq_table;
	struct rxe2_table qp_table;
	struct rxe2_table srq_table;

	atomic64_t rx_dropped;		/* RoCEv2 packets refused, see rxe2_net.c */
};

static inline struct rxe2_dev *to_rdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct rxe2_dev, ibdev);
}

struct rxe2_ucontext {
	struct ib_ucontext ibuc;
};

static inline struct rxe2_ucontext *to_ruc(struct ib_ucontext *ibuc)
{
	return container_of(ibuc, struct rxe2_ucontext, ibuc);
}

/* rxe2_device.c */
int rxe2_dev_add(const char *ibdev_name, struct net_device *ndev);
struct rxe2_dev *rxe2_dev_get_by_netdev(struct net_device *ndev);
void rxe2_port_event(struct rxe2_dev *rdev, enum ib_event_type event);
extern struct mutex rxe2_dev_lock;
extern struct list_head rxe2_dev_list;

/* rxe2_net.c */
int rxe2_net_init(void);
void rxe2_net_exit(void);

#endif /* RXE2_H */
