// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: the rxe2dv library linked with -lrxe2: rxe2dv_is_supported (rxe2 yes, rxe no), rxe2dv_query_device against the verbs' attributes, its inlen rules, EOPNOTSUPP on an rdma_rxe context
 *
 * rxe2dv, the public direct-verbs library (librxe2, <infiniband/rxe2dv.h>):
 * rxe2dv_is_supported() and rxe2dv_query_device() with the inlen rules of
 * rxe2dv_query_device(3).  Linked with -lrxe2 from the build tree, whose
 * librxe2-rdmavNN.so is the same file libibverbs loads: a query that works
 * proves the two are one object.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/rxe2dv.h>

#include "dp.h"
#include "tap.h"
#include "util.h"

#define ATTR_V1 24	/* every field of the first rxe2dv_device_attr */
#define POISON 0xa5
#define PLAN 23

static struct ibv_device *find_dev(struct ibv_device **list, int n,
				   const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			return list[i];
	return NULL;
}

static void test_is_supported(const char *dev, const char *ref)
{
	struct ibv_device **list;
	struct ibv_device *d;
	int n;

	list = ibv_get_device_list(&n);
	if (!list)
		tap_bail("ibv_get_device_list: %s", strerror(errno));

	d = find_dev(list, n, dev);
	tap_ok(d && rxe2dv_is_supported(d), "rxe2dv_is_supported(%s) is true",
	       dev);
	d = find_dev(list, n, ref);
	if (d)
		tap_ok(!rxe2dv_is_supported(d),
		       "rxe2dv_is_supported(%s) (rdma_rxe) is false", ref);
	else
		tap_skip("no %s device to compare with", ref);
	tap_ok(!rxe2dv_is_supported(NULL), "rxe2dv_is_supported(NULL) is false");
	ibv_free_device_list(list);
}

/*
 * Distinct interconnect ids in the device's node map ("0:0,1:1"), or
 * -1 when it cannot be read.
 */
static int map_ics(const char *dev)
{
	unsigned int node, id, ids[1024];
	int n = 0, i;
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ic_map", dev);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (n < 1024 && fscanf(f, "%u:%u", &node, &id) == 2) {
		for (i = 0; i < n; i++)
			if (ids[i] == id)
				break;
		if (i == n)
			ids[n++] = id;
		if (fgetc(f) != ',')
			break;
	}
	fclose(f);
	return n ? n : -1;
}

/* rdma_rxe2's allow_pa_mr parameter reads Y */
static bool pa_mr_allowed(void)
{
	char c = 0;
	FILE *f = fopen("/sys/module/rdma_rxe2/parameters/allow_pa_mr", "r");

	if (!f)
		return false;
	if (fread(&c, 1, 1, f) != 1)
		c = 0;
	fclose(f);
	return c == 'Y';
}

/* CAP_SYS_RAWIO (17) in the effective set, from /proc/self/status */
static bool has_cap_sys_rawio(void)
{
	unsigned long long eff = 0;
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	fclose(f);
	return eff & (1ull << 17);
}

/* What the verbs say the device has, that device_caps must agree with. */
static void test_fields(struct ibv_context *ctx, const char *dev)
{
	struct ibv_device_attr_ex ex = {};
	struct rxe2dv_device_attr attr;
	uint64_t known = RXE2DV_DEVICE_CAP_ODP | RXE2DV_DEVICE_CAP_PA_MR |
			 RXE2DV_DEVICE_CAP_SHARED_MR | RXE2DV_DEVICE_CAP_MW;
	bool odp, mw;
	int ret;

	memset(&attr, POISON, sizeof(attr));
	ret = rxe2dv_query_device(ctx, &attr, sizeof(attr));
	tap_ret(ret, 0, "rxe2dv_query_device(sizeof(attr))");
	if (ret) {
		int i;

		for (i = 0; i < 9; i++)
			tap_skip("no attributes to check");
		return;
	}
	if (ibv_query_device_ex(ctx, NULL, &ex))
		tap_bail("ibv_query_device_ex: %s", strerror(errno));

	tap_ret(attr.comp_mask, 0, "comp_mask has no bits");
	tap_ok(!(attr.device_caps & ~known),
	       "device_caps 0x%llx has only defined bits",
	       (unsigned long long)attr.device_caps);
	odp = ex.odp_caps.general_caps & IBV_ODP_SUPPORT;
	tap_ret(!!(attr.device_caps & RXE2DV_DEVICE_CAP_ODP), odp,
		"ODP capability matches ibv_query_device_ex odp_caps");
	mw = ex.orig_attr.max_mw > 0;
	tap_ret(!!(attr.device_caps & RXE2DV_DEVICE_CAP_MW), mw,
		"MW capability matches max_mw %d", ex.orig_attr.max_mw);
	tap_ok(attr.device_caps & RXE2DV_DEVICE_CAP_SHARED_MR,
	       "shared-MR capability is set");
	/* PA MRs: only for an opener that could register one */
	tap_ret(!!(attr.device_caps & RXE2DV_DEVICE_CAP_PA_MR),
		pa_mr_allowed() && has_cap_sys_rawio(),
		"PA-MR capability is allow_pa_mr && CAP_SYS_RAWIO");
	tap_ret(odp, 1, "ODP is supported (IBV_ODP_SUPPORT)");
	tap_ret(attr.max_inline_recv, 64,
		"max_inline_recv is 64 (a CQ slot holds 64 bytes of data)");
	tap_ret(attr.num_interconnects, map_ics(dev),
		"num_interconnects: the distinct ids of the ic_map nodes");
}

static void test_inlen(struct ibv_context *ctx)
{
	static const uint32_t short_lens[] = { 0, 1, 8, 16, ATTR_V1 - 1 };
	struct rxe2dv_device_attr ref;
	unsigned char buf[sizeof(ref) + 32];
	size_t i, big = sizeof(ref) + 16;
	bool untouched = true;
	int ret, bad = 0;

	tap_ret(sizeof(struct rxe2dv_device_attr), ATTR_V1,
		"struct rxe2dv_device_attr is %d bytes", ATTR_V1);

	for (i = 0; i < sizeof(short_lens) / sizeof(short_lens[0]); i++) {
		memset(buf, POISON, sizeof(buf));
		ret = rxe2dv_query_device(ctx, (void *)buf, short_lens[i]);
		if (ret != EINVAL) {
			tap_diag("inlen %u: %d, want EINVAL", short_lens[i], ret);
			bad++;
		}
		if (dp_verify_byte(buf, sizeof(buf), POISON) >= 0)
			untouched = false;
	}
	tap_ok(!bad, "inlen shorter than %d bytes: EINVAL", ATTR_V1);
	tap_ok(untouched, "... and nothing written");

	tap_ret(rxe2dv_query_device(ctx, NULL, sizeof(ref)), EINVAL,
		"NULL attr: EINVAL");

	if (rxe2dv_query_device(ctx, &ref, sizeof(ref)))
		tap_bail("rxe2dv_query_device failed");

	/* a caller built against a later, longer structure */
	memset(buf, 0xff, sizeof(buf));
	ret = rxe2dv_query_device(ctx, (void *)buf, big);
	tap_ret(ret, 0, "inlen %zu (longer than the structure): 0", big);
	dp_expect_longer_attr(buf, sizeof(buf), &ref, sizeof(ref), big);
}

static void test_other_device(const char *ref)
{
	struct rxe2dv_device_attr attr;
	struct ibv_device **list;
	struct ibv_context *ctx;
	int n;

	list = ibv_get_device_list(&n);
	if (!list)
		tap_bail("ibv_get_device_list: %s", strerror(errno));
	if (!find_dev(list, n, ref)) {
		ibv_free_device_list(list);
		tap_skip("no %s device: non-rxe2 context not tested", ref);
		tap_skip("no %s device", ref);
		return;
	}
	ibv_free_device_list(list);

	ctx = test_open(ref);
	memset(&attr, POISON, sizeof(attr));
	tap_ret(rxe2dv_query_device(ctx, &attr, sizeof(attr)), EOPNOTSUPP,
		"rxe2dv_query_device on %s (rdma_rxe): EOPNOTSUPP", ref);
	tap_ok(dp_verify_byte(&attr, sizeof(attr), POISON) < 0, "... nothing written");
	ibv_close_device(ctx);
}

int main(void)
{
	const char *dev = test_dev_name();
	const char *ref = test_ref_dev_name();
	struct ibv_context *ctx;

	tap_plan(PLAN);
	if (!test_is_rxe2(dev)) {
		int i;

		for (i = 0; i < PLAN; i++)
			tap_skip("%s is not an rxe2 device: rxe2dv has nothing to test",
				 dev);
		return tap_done();
	}

	test_is_supported(dev, ref);
	ctx = test_open(dev);
	test_fields(ctx, dev);
	test_inlen(ctx);
	ibv_close_device(ctx);
	test_other_device(ref);
	return tap_done();
}
