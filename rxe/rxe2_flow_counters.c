// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2: counters objects of flows (ibv_create_counters, ibv_read_counters).
 *
 * An object is RXE2_FLOW_COUNTER_INDEXES 64-bit values, zero at creation.
 * A flow made with IBV_FLOW_SPEC_ACTION_COUNT names one, and its driver
 * data brings the object's counter points (librxe2 keeps what
 * ibv_attach_counters_point_flow() attached): which value, packets or
 * bytes of the whole frame, goes to which index.  Every frame the flow
 * takes, delivered or dropped, adds to them; flows sharing an object add
 * into the same values, and two points on one index add up too.
 *
 * ib_core counts the flows bound to an object (usecnt): it refuses to
 * destroy an object with flows (EBUSY) and to read one without (EINVAL).
 * The netfilter hooks reach an object through a flow under RCU, so its
 * destruction waits for a grace period after the last flow went.
 */
#include "rxe2_flow.h"

static inline struct rxe2_counters *to_rcounters(struct ib_counters *ibc)
{
	return container_of(ibc, struct rxe2_counters, ibc);
}

static int rxe2_create_counters(struct ib_counters *ibc,
				struct uverbs_attr_bundle *attrs)
{
	return 0;	/* ib_core allocated it zeroed */
}

static int rxe2_destroy_counters(struct ib_counters *ibc)
{
	/* a hook that found its last flow may still be adding to it */
	synchronize_rcu();
	return 0;
}

static int rxe2_read_counters(struct ib_counters *ibc,
			      struct ib_counters_read_attr *ra,
			      struct uverbs_attr_bundle *attrs)
{
	struct rxe2_counters *c = to_rcounters(ibc);
	u32 n = min_t(u32, ra->ncounters, RXE2_FLOW_COUNTER_INDEXES);
	u32 i;

	/* always the live values: there is no cache to prefer */
	for (i = 0; i < n; i++)
		ra->counters_buff[i] = atomic64_read(&c->vals[i]);
	return 0;
}

/*
 * The flow's counting: ibc from its COUNT spec (or NULL), the points from
 * the driver data.  Either both or neither.
 */
int rxe2_flow_count_bind(struct rxe2_flow_count *fc, struct ib_counters *ibc,
			 struct ib_udata *udata)
{
	struct rxe2_create_flow_cmd cmd;
	u32 i;
	int ret;

	if (!udata || !udata->inlen)
		return ibc ? -EINVAL : 0;
	if (!ibc)
		return -EINVAL;
	ret = rxe2_udata_read_cmd(udata, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	if (!cmd.npoints || cmd.npoints > RXE2_FLOW_COUNTER_POINTS ||
	    cmd.reserved)
		return -EINVAL;
	for (i = 0; i < cmd.npoints; i++) {
		if (cmd.points[i].index >= RXE2_FLOW_COUNTER_INDEXES)
			return -EINVAL;
		if (cmd.points[i].description != IB_COUNTER_PACKETS &&
		    cmd.points[i].description != IB_COUNTER_BYTES)
			return -EOPNOTSUPP;
	}
	fc->ctr = to_rcounters(ibc);
	fc->npoints = cmd.npoints;
	memcpy(fc->points, cmd.points, sizeof(cmd.points[0]) * cmd.npoints);
	return 0;
}

/* a frame of frame_len bytes (MAC header on) taken by the flow; RCU */
void rxe2_flow_count(const struct rxe2_flow_count *fc, u32 frame_len)
{
	u32 i;

	for (i = 0; i < fc->npoints; i++)
		atomic64_add(fc->points[i].description == IB_COUNTER_BYTES ?
			     frame_len : 1, &fc->ctr->vals[fc->points[i].index]);
}

const struct ib_device_ops rxe2_flow_counters_ops = {
	.create_counters = rxe2_create_counters,
	.destroy_counters = rxe2_destroy_counters,
	.read_counters = rxe2_read_counters,

	INIT_RDMA_OBJ_SIZE(ib_counters, rxe2_counters, ibc),
};
