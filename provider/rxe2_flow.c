// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * librxe2: flow steering and the counters objects of flows.
 *
 * ibv_create_flow() steers frames of the device's netdev to a raw packet
 * QP; the kernel (rxe/rxe2_flow.c) keeps the rules and sees every frame.
 * libibverbs converts the specs into the kernel's layout.
 *
 * Counters (ibv_create_counters): the kernel object holds the values;
 * the counter points (what to count at which index) are attached here,
 * statically (a NULL flow, as on mlx5), and travel to the kernel in the
 * driver data of each ibv_create_flow() whose COUNT spec names the
 * object.  Once a flow is bound, no point may be added (EBUSY) until the
 * last flow is gone.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "rxe2.h"

struct rxe2_counters {
	struct verbs_counters vcounters;
	pthread_mutex_t lock;		/* points, nflows */
	uint32_t npoints;
	struct rxe2_flow_counter_point points[RXE2_FLOW_COUNTER_POINTS];
	unsigned int nflows;		/* flows bound to it */
};

/* a flow and the counters object it counts into, if any */
struct rxe2_flow {
	struct ibv_flow flow;
	struct rxe2_counters *ctr;
};

static struct rxe2_counters *to_rctr(struct ibv_counters *c)
{
	return rxe2_container_of(c, struct rxe2_counters, vcounters.counters);
}

struct ibv_counters *rxe2_create_counters(struct ibv_context *ctx,
					  struct ibv_counters_init_attr *attr)
{
	struct rxe2_counters *c;
	int err;

	if (attr->comp_mask) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	err = ibv_cmd_create_counters(ctx, attr, &c->vcounters, NULL);
	if (err) {
		free(c);
		errno = err;
		return NULL;
	}
	pthread_mutex_init(&c->lock, NULL);
	return &c->vcounters.counters;
}

int rxe2_destroy_counters(struct ibv_counters *counters)
{
	struct rxe2_counters *c = to_rctr(counters);
	int err = ibv_cmd_destroy_counters(&c->vcounters);

	if (err)
		return err;
	pthread_mutex_destroy(&c->lock);
	free(c);
	return 0;
}

int rxe2_read_counters(struct ibv_counters *counters, uint64_t *values,
		       uint32_t ncounters, uint32_t flags)
{
	return ibv_cmd_read_counters(&to_rctr(counters)->vcounters, values,
				     ncounters, flags, NULL);
}

int rxe2_attach_counters_point_flow(struct ibv_counters *counters,
				    struct ibv_counter_attach_attr *attr,
				    struct ibv_flow *flow)
{
	struct rxe2_counters *c = to_rctr(counters);
	int err = 0;

	/* a point on a live flow (dynamic attach) is not there */
	if (flow)
		return EOPNOTSUPP;
	if (attr->comp_mask || attr->index >= RXE2_FLOW_COUNTER_INDEXES)
		return EINVAL;
	if (attr->counter_desc != IBV_COUNTER_PACKETS &&
	    attr->counter_desc != IBV_COUNTER_BYTES)
		return EOPNOTSUPP;
	pthread_mutex_lock(&c->lock);
	if (c->nflows)
		err = EBUSY;
	else if (c->npoints == RXE2_FLOW_COUNTER_POINTS)
		err = ENOMEM;
	else
		c->points[c->npoints++] = (struct rxe2_flow_counter_point){
			.description = attr->counter_desc,
			.index = attr->index,
		};
	pthread_mutex_unlock(&c->lock);
	return err;
}

/* the counters object of the flow's COUNT spec; EINVAL for two of them */
static int rxe2_flow_count_spec(struct ibv_flow_attr *attr,
				struct rxe2_counters **ctr)
{
	const uint8_t *p = (const uint8_t *)(attr + 1);
	uint8_t i;

	*ctr = NULL;
	for (i = 0; i < attr->num_of_specs; i++) {
		const struct ibv_flow_spec *s = (const void *)p;

		if (s->hdr.type == IBV_FLOW_SPEC_ACTION_COUNT) {
			if (*ctr || !s->flow_count.counters)
				return EINVAL;
			*ctr = to_rctr(s->flow_count.counters);
		}
		if (!s->hdr.size)
			return EINVAL;
		p += s->hdr.size;
	}
	return 0;
}

struct ibv_flow *rxe2_create_flow(struct ibv_qp *ibqp,
				  struct ibv_flow_attr *attr)
{
	struct rxe2_create_flow_cmd cmd = {};
	struct rxe2_counters *ctr;
	struct rxe2_flow *fl;
	int err;

	/* what the kernel would refuse anyway, refused without a call */
	if (ibqp->qp_type != IBV_QPT_RAW_PACKET) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	err = rxe2_flow_count_spec(attr, &ctr);
	if (err) {
		errno = err;
		return NULL;
	}
	fl = calloc(1, sizeof(*fl));
	if (!fl) {
		errno = ENOMEM;
		return NULL;
	}
	if (ctr) {
		/* the points go along; none may be added from now on */
		pthread_mutex_lock(&ctr->lock);
		cmd.npoints = ctr->npoints;
		memcpy(cmd.points, ctr->points, sizeof(cmd.points));
		ctr->nflows++;
		pthread_mutex_unlock(&ctr->lock);
	}
	err = ibv_cmd_create_flow(ibqp, &fl->flow, attr, ctr ? &cmd : NULL,
				  ctr ? sizeof(cmd) : 0);
	if (err) {
		if (ctr) {
			pthread_mutex_lock(&ctr->lock);
			ctr->nflows--;
			pthread_mutex_unlock(&ctr->lock);
		}
		free(fl);
		errno = err;
		return NULL;
	}
	fl->ctr = ctr;
	return &fl->flow;
}

int rxe2_destroy_flow(struct ibv_flow *flow)
{
	struct rxe2_flow *fl = rxe2_container_of(flow, struct rxe2_flow, flow);
	int err = ibv_cmd_destroy_flow(flow);

	if (err)
		return err;
	if (fl->ctr) {
		pthread_mutex_lock(&fl->ctr->lock);
		fl->ctr->nflows--;
		pthread_mutex_unlock(&fl->ctr->lock);
	}
	free(fl);
	return 0;
}
