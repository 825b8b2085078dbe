// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2: MRs (placeholder, being written).
 */
#include "rxe2_verbs.h"

struct ib_mr *rxe2_get_dma_mr(struct ib_pd *ibpd, int access)
{
	return ERR_PTR(-EOPNOTSUPP);
}

struct ib_mr *rxe2_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			       u64 iova, int access, struct ib_udata *udata)
{
	return ERR_PTR(-EOPNOTSUPP);
}

int rxe2_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	return 0;
}
