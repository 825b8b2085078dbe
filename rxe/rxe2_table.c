// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2: object tables.  An xarray hands out cyclic indexes; a live count
 * enforces the device limit exactly, because the index range alone is
 * far larger than any limit we report.
 */
#include "rxe2_verbs.h"

void rxe2_table_init(struct rxe2_table *t, u32 min, u32 max, u32 limit)
{
	xa_init_flags(&t->xa, XA_FLAGS_ALLOC);
	t->min = min;
	t->max = max;
	t->next = min;
	t->limit = limit;
	atomic_set(&t->count, 0);
}

void rxe2_table_fini(struct rxe2_table *t)
{
	WARN_ON(!xa_empty(&t->xa));
	xa_destroy(&t->xa);
}

static bool rxe2_table_get_slot(struct rxe2_table *t)
{
	if (atomic_inc_return(&t->count) > t->limit) {
		atomic_dec(&t->count);
		return false;
	}
	return true;
}

/*
 * With obj == NULL the xarray keeps the index busy with a zero entry that
 * xa_load() reports as NULL: the data path cannot see an object until
 * rxe2_table_publish() makes it complete.
 */
int rxe2_table_add_gfp(struct rxe2_table *t, void *obj, u32 *index, gfp_t gfp)
{
	int ret;

	if (!rxe2_table_get_slot(t))
		return -ENOMEM;

	ret = xa_alloc_cyclic(&t->xa, index, obj, XA_LIMIT(t->min, t->max),
			      &t->next, gfp);
	if (ret < 0) {
		atomic_dec(&t->count);
		/* a full index range is the same condition as the limit */
		return ret == -EBUSY ? -ENOMEM : ret;
	}
	return 0;
}

int rxe2_table_add(struct rxe2_table *t, void *obj, u32 *index)
{
	return rxe2_table_add_gfp(t, obj, index, GFP_KERNEL);
}

int rxe2_table_add_at(struct rxe2_table *t, void *obj, u32 index)
{
	int ret;

	if (!rxe2_table_get_slot(t))
		return -ENOMEM;

	ret = xa_insert(&t->xa, index, obj, GFP_KERNEL);
	if (ret)
		atomic_dec(&t->count);
	return ret;
}

void rxe2_table_publish(struct rxe2_table *t, u32 index, void *obj)
{
	/* the slot is reserved, so this store never allocates */
	xa_store(&t->xa, index, obj, GFP_ATOMIC);
}

void rxe2_table_remove(struct rxe2_table *t, u32 index)
{
	xa_erase(&t->xa, index);
	atomic_dec(&t->count);
}

void rxe2_tables_init(struct rxe2_dev *rdev)
{
	const struct ib_device_attr *a = &rdev->attr;

	rxe2_table_init(&rdev->pd_table, 1, RXE2_INDEX_MAX, a->max_pd);
	rxe2_table_init(&rdev->ah_table, 1, RXE2_INDEX_MAX, a->max_ah);
	rxe2_table_init(&rdev->mr_table, RXE2_MR_KEY_MIN, RXE2_MR_KEY_MAX,
			 a->max_mr);
	rxe2_table_init(&rdev->cq_table, 1, RXE2_INDEX_MAX, a->max_cq);
	/* QP1 is inserted at its fixed number but counts like the others */
	rxe2_table_init(&rdev->qp_table, RXE2_QPN_MIN, RXE2_QPN_MAX, a->max_qp);
	rxe2_table_init(&rdev->srq_table, 1, RXE2_INDEX_MAX, a->max_srq);
	rxe2_table_init(&rdev->wq_table, 1, RXE2_INDEX_MAX, a->max_wq_type_rq);
}

void rxe2_tables_fini(struct rxe2_dev *rdev)
{
	rxe2_table_fini(&rdev->pd_table);
	rxe2_table_fini(&rdev->ah_table);
	rxe2_table_fini(&rdev->mr_table);
	rxe2_table_fini(&rdev->cq_table);
	rxe2_table_fini(&rdev->qp_table);
	rxe2_table_fini(&rdev->srq_table);
	rxe2_table_fini(&rdev->wq_table);
}
