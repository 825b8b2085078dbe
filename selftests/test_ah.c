// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: address handles over the IPv4 RoCEv2 GID: create, a second alike, a PD busy with them; EINVAL for a bad GID index, port 2, no GRH, an IPv6 link-local destination
 *
 * Address handles over the port's IPv4 RoCEv2 GID, good and bad.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tap.h"
#include "util.h"

static struct ibv_ah_attr ah_attr(const union ibv_gid *gid, int idx)
{
	struct ibv_ah_attr a = {
		.is_global = 1,
		.port_num = PORT,
		.grh = { .dgid = *gid, .sgid_index = idx, .hop_limit = 64 },
	};

	return a;
}

int main(void)
{
	const char *dev = test_dev_name();
	struct ibv_context *ctx = test_open(dev);
	struct ibv_port_attr p;
	struct ibv_ah_attr a;
	struct ibv_ah *ah, *ah2;
	struct ibv_pd *pd;
	union ibv_gid gid;
	int idx;

	if (ibv_query_port(ctx, PORT, &p))
		tap_bail("ibv_query_port");
	idx = find_ipv4_gid(ctx, &gid);
	if (idx < 0)
		tap_bail("no IPv4 RoCEv2 GID");
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		tap_bail("ibv_alloc_pd");

	a = ah_attr(&gid, idx);
	ah = ibv_create_ah(pd, &a);
	if (!tap_ok(ah != NULL, "ibv_create_ah to the IPv4 RoCEv2 GID (index %d)",
		    idx))
		tap_diag("  errno %d (%s)", errno, strerror(errno));
	ah2 = ibv_create_ah(pd, &a);
	tap_ok(ah2 != NULL && ah2 != ah, "a second AH with the same attributes");
	tap_ret_errno(ibv_dealloc_pd(pd), EBUSY,
		      "ibv_dealloc_pd with live AHs -> EBUSY");
	if (ah)
		tap_ret_errno(ibv_destroy_ah(ah), 0, "ibv_destroy_ah");
	else
		tap_skip("no AH to destroy");
	if (ah2)
		tap_ret_errno(ibv_destroy_ah(ah2), 0, "ibv_destroy_ah");
	else
		tap_skip("no AH to destroy");

	a = ah_attr(&gid, p.gid_tbl_len);
	ah = ibv_create_ah(pd, &a);
	tap_null_errno(ah, EINVAL, "ibv_create_ah sgid_index gid_tbl_len -> EINVAL");
	if (ah)
		ibv_destroy_ah(ah);

	a = ah_attr(&gid, idx);
	a.port_num = 2;
	ah = ibv_create_ah(pd, &a);
	tap_null_errno(ah, EINVAL, "ibv_create_ah port 2 -> EINVAL");
	if (ah)
		ibv_destroy_ah(ah);

	/* RoCE has no LIDs: an address without a GRH names nothing. */
	a = ah_attr(&gid, idx);
	a.is_global = 0;
	a.dlid = 1;
	ah = ibv_create_ah(pd, &a);
	tap_null_errno(ah, EINVAL, "ibv_create_ah without GRH -> EINVAL");
	if (ah)
		ibv_destroy_ah(ah);

	/*
	 * An IPv4 source GID and an IPv6 destination: no packet can carry
	 * both.  A link-local destination passes ib_core's address
	 * resolution (its MAC is in the GID), so the driver must say no;
	 * an AH it took failed every UD send with it and sent the QP to
	 * ERROR (QP1 too, by an AH ib_mad made from a received packet).
	 */
	a = ah_attr(&gid, idx);
	memset(a.grh.dgid.raw, 0, sizeof(a.grh.dgid.raw));
	a.grh.dgid.raw[0] = 0xfe;
	a.grh.dgid.raw[1] = 0x80;
	memcpy(a.grh.dgid.raw + 8, "\x02\x00\x5e\xff\xfe\x10\x20\x30", 8);
	ah = ibv_create_ah(pd, &a);
	tap_null_errno(ah, EINVAL,
		       "ibv_create_ah IPv4 source GID, IPv6 link-local destination -> EINVAL");
	if (ah)
		ibv_destroy_ah(ah);

	tap_ret_errno(ibv_dealloc_pd(pd), 0, "ibv_dealloc_pd");
	ibv_close_device(ctx);
	return tap_done();
}
