// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * librxe2: address handles.  The kernel resolves and keeps the address;
 * a UD send WQE names it by the ah_num the kernel returns.
 */
#include <errno.h>
#include <stdlib.h>

#include "rxe2.h"

struct ibv_ah *rxe2_create_ah(struct ibv_pd *ibpd, struct ibv_ah_attr *attr)
{
	struct rxe2_create_ah_rsp rsp = {};
	struct rxe2_ah *ah;
	int err;

	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return NULL;

	err = ibv_cmd_create_ah(ibpd, &ah->ibah, attr, &rsp.ibv_resp,
				sizeof(rsp));
	if (err) {
		free(ah);
		errno = err;
		return NULL;
	}
	ah->ah_num = rsp.drv.ah_num;
	return &ah->ibah;
}

int rxe2_destroy_ah(struct ibv_ah *ibah)
{
	int err;

	err = ibv_cmd_destroy_ah(ibah);
	if (err)
		return err;
	free(to_rah(ibah));
	return 0;
}
