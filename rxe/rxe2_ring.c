// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2: rings (placeholder, being written).
 */
#include "rxe2_verbs.h"

int rxe2_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma)
{
	return -EOPNOTSUPP;
}

void rxe2_mmap_free(struct rdma_user_mmap_entry *entry)
{
}
