// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: ECE (ibv_query_ece, ibv_set_ece): the device's vendor id with no options, EINVAL for anything else, EOPNOTSUPP for vendor id 0; ibv_query_qp_data_in_order
 *
 * Enhanced Connection Establishment (ibv_query_ece, ibv_set_ece).  rxe2
 * has no options to negotiate: a QP's ECE is the device's vendor id
 * with no options, the same value ibv_query_device reports; setting it
 * back succeeds, anything else is EINVAL (vendor id 0 is libibverbs'
 * EOPNOTSUPP).  ibv_query_qp_data_in_order answers 0.  RDMA CM carries it (rping in test_netns.sh and
 * test_interop.sh connects rxe2 to rxe2 and to rdma_rxe with it).
 */
#include <errno.h>
#include <string.h>

#include "dp.h"
#include "tap.h"
#include "util.h"

static int set(struct ibv_qp *qp, uint32_t vendor, uint32_t options,
	       uint32_t comp_mask)
{
	struct ibv_ece e = { .vendor_id = vendor, .options = options,
			     .comp_mask = comp_mask };

	return ibv_set_ece(qp, &e);
}

int main(void)
{
	struct dp_dev dev;
	struct dp_qp a, b;
	struct ibv_ece e;
	uint32_t vendor;

	dp_open(&dev, test_dev_name());
	vendor = dev.attr.vendor_id;
	if (dp_rc_pair(&dev, &a, &b))
		tap_bail("RC pair");
	memset(&e, 0xff, sizeof(e));
	tap_ret_errno(ibv_query_ece(a.qp, &e), 0, "ibv_query_ece");
	tap_ok(e.vendor_id == vendor && e.options == 0 && e.comp_mask == 0,
	       "ECE: the device's vendor id %#x, no options (got %#x, %#x, %#x)",
	       vendor, e.vendor_id, e.options, e.comp_mask);
	tap_ret_errno(set(a.qp, vendor, 0, 0), 0,
		      "ibv_set_ece with our vendor id and no options");
	tap_ret_errno(set(a.qp, vendor, 1, 0), EINVAL,
		      "an option rxe2 does not have -> EINVAL");
	tap_ret_errno(set(a.qp, 0x15b3, 0, 0), EINVAL,
		      "another vendor's id -> EINVAL");
	tap_ret_errno(set(a.qp, vendor, 0, 1), EINVAL,
		      "an unknown comp_mask -> EINVAL");
	tap_ret_errno(set(a.qp, 0, 0, 0), EOPNOTSUPP,
		      "vendor id 0 -> EOPNOTSUPP (libibverbs)");
	tap_ret(ibv_query_qp_data_in_order(a.qp, IBV_WR_RDMA_WRITE, 0), 0,
		"ibv_query_qp_data_in_order(WRITE): no ordering capability");
	memset(&e, 0, sizeof(e));
	tap_ok(!ibv_query_ece(b.qp, &e) && e.vendor_id == vendor &&
	       !e.options, "the peer QP answers the same");
	dp_qp_free(&a);
	dp_qp_free(&b);
	dp_close(&dev);
	return tap_done();
}
