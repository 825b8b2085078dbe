// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2: object tables (placeholder, being written).
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
	xa_destroy(&t->xa);
}

int rxe2_table_add(struct rxe2_table *t, void *obj, u32 *index)
{
	return -EOPNOTSUPP;
}

void rxe2_table_remove(struct rxe2_table *t, u32 index)
{
}

void rxe2_tables_init(struct rxe2_dev *rdev)
{
}

void rxe2_tables_fini(struct rxe2_dev *rdev)
{
}
