/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rxe2: what flows (rxe2_flow.c) and their counters objects
 * (rxe2_flow_counters.c) share.
 */
#ifndef RXE2_FLOW_H
#define RXE2_FLOW_H

#include "rxe2_verbs.h"

/* ibv_create_counters: one 64-bit value per index */
struct rxe2_counters {
	struct ib_counters ibc;
	atomic64_t vals[RXE2_FLOW_COUNTER_INDEXES];
};

/* a flow's IBV_FLOW_SPEC_ACTION_COUNT: its object and what goes where */
struct rxe2_flow_count {
	struct rxe2_counters *ctr;	/* NULL: the flow counts nothing */
	u32 npoints;
	struct rxe2_flow_counter_point points[RXE2_FLOW_COUNTER_POINTS];
};

int rxe2_flow_count_bind(struct rxe2_flow_count *fc, struct ib_counters *ibc,
			 struct ib_udata *udata);
void rxe2_flow_count(const struct rxe2_flow_count *fc, u32 frame_len);

#endif /* RXE2_FLOW_H */
