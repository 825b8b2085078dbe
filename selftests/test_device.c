// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: device, port and GID queries (ibv_devices, query_device(_ex), query_port, query_gid(_ex), GID types, ibv_devinfo), the port speed and DMA handles, or the errno of a kernel without them
 *
 * Device, port and GID queries: ibv_devices, ibv_query_device(_ex),
 * ibv_query_port, ibv_query_gid(_ex), ibv_query_gid_type, ibv_devinfo;
 * the port's speed (UVERBS_METHOD_QUERY_PORT_SPEED, Linux 7.0) and DMA
 * handles with an MR made with one (UVERBS_OBJECT_DMAH, 6.17), asked of
 * the kernel directly (libibverbs 44 has neither verb) and through
 * ibv_query_port_speed/ibv_alloc_dmah where the loaded libibverbs has
 * them; on an older kernel, the exact errno that says it has none.
 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/utsname.h>

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/rdma_user_ioctl_cmds.h>

#include "rxe2-abi.h"
#include "dp.h"
#include "tap.h"
#include "util.h"

/*
 * The uverbs ABI's numbers of methods newer than libibverbs 44's
 * headers (include/uapi/rdma/ib_user_ioctl_cmds.h of Linux 7.0)
 */
#define QUERY_PORT_SPEED	(UVERBS_METHOD_QUERY_GID_ENTRY + 1)
#define QPS_PORT_NUM		0
#define QPS_RESP		1
#define OBJ_DMAH		(UVERBS_OBJECT_ASYNC_EVENT + 1)
#define DMAH_ALLOC		0
#define DMAH_FREE		1
#define DMAH_HANDLE		0
#define DMAH_CPU_ID		1
#define DMAH_MEM_TYPE		2
#define DMAH_PH			3
#define METHOD_REG_MR		(UVERBS_METHOD_REG_DMABUF_MR + 1)
enum {
	REG_MR_HANDLE, REG_MR_PD_HANDLE, REG_MR_DMA_HANDLE, REG_MR_IOVA,
	REG_MR_ADDR, REG_MR_LENGTH, REG_MR_ACCESS_FLAGS, REG_MR_FD,
	REG_MR_FD_OFFSET, REG_MR_RESP_LKEY, REG_MR_RESP_RKEY,
};

static char *run_cmd(const char *cmd, int *status)
{
	static char out[65536];
	size_t n = 0, r;
	FILE *f = popen(cmd, "r");

	out[0] = 0;
	if (!f) {
		*status = -1;
		return out;
	}
	while (n < sizeof(out) - 1 &&
	       (r = fread(out + n, 1, sizeof(out) - 1 - n, f)) > 0)
		n += r;
	out[n] = 0;
	*status = pclose(f);
	return out;
}

/* Does any line of text contain both a and b? */
static bool line_has(const char *text, const char *a, const char *b)
{
	const char *p = text;

	while (p && *p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char line[512];

		if (len >= sizeof(line))
			len = sizeof(line) - 1;
		memcpy(line, p, len);
		line[len] = 0;
		if (strstr(line, a) && strstr(line, b))
			return true;
		p = nl ? nl + 1 : NULL;
	}
	return false;
}

static bool is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

static uint64_t sysfs_guid(const char *dev)
{
	char path[256], buf[64];
	unsigned int a, b, c, d;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/node_guid",
		 dev);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f) ||
	    sscanf(buf, "%x:%x:%x:%x", &a, &b, &c, &d) != 4) {
		fclose(f);
		return 0;
	}
	fclose(f);
	return (uint64_t)a << 48 | (uint64_t)b << 32 | (uint64_t)c << 16 | d;
}

static void test_list(const char *dev)
{
	const char *ref = test_ref_dev_name();
	char *out;
	int st;

	out = run_cmd("ibv_devices 2>&1", &st);
	tap_ok(st == 0, "ibv_devices exits 0");
	tap_ok(line_has(out, dev, "") , "ibv_devices lists %s", dev);
	tap_ok(line_has(out, ref, ""), "ibv_devices lists %s", ref);
}

static void test_query_device(struct ibv_context *ctx, const char *dev,
			      bool rxe2)
{
	struct ibv_device_attr a;
	struct ibv_device_attr_ex ax;
	struct ibv_query_device_ex_input in = {};
	static const struct {
		const char *name;
		size_t off;
	} params[] = {
#define P(f) { #f, __builtin_offsetof(struct ibv_device_attr, f) }
		P(max_qp), P(max_qp_wr), P(max_cq), P(max_cqe), P(max_mr),
		P(max_pd), P(max_srq), P(max_srq_wr), P(max_srq_sge),
		P(max_ah),
#undef P
	};
	unsigned int i;
	int ret;

	memset(&a, 0, sizeof(a));
	if (!tap_ret_errno(ibv_query_device(ctx, &a), 0, "ibv_query_device"))
		return;
	tap_ok(a.node_guid != 0, "node_guid is non-zero");
	tap_ok(be64toh(a.node_guid) == sysfs_guid(dev),
	       "node_guid matches sysfs node_guid");
	tap_ok(a.sys_image_guid != 0, "sys_image_guid is non-zero");
	tap_ok(a.max_mr_size > 0, "max_mr_size > 0");
	tap_ok(a.page_size_cap & 4096, "page_size_cap includes 4 KiB");
	tap_ok(a.phys_port_cnt == 1, "phys_port_cnt == 1");
	tap_ok(a.max_qp >= 1 && a.max_qp_wr >= 1 && a.max_sge >= 1 &&
	       a.max_cq >= 1 && a.max_cqe >= 1 && a.max_mr >= 1 &&
	       a.max_pd >= 1 && a.max_ah >= 1,
	       "max_qp max_qp_wr max_sge max_cq max_cqe max_mr max_pd max_ah >= 1");
	tap_ok(a.max_srq >= 1 && a.max_srq_wr >= 1 && a.max_srq_sge >= 1,
	       "max_srq max_srq_wr max_srq_sge >= 1");
	tap_ok(a.max_sge_rd >= 1 && a.max_sge_rd <= a.max_sge,
	       "1 <= max_sge_rd <= max_sge");
	tap_ok(a.max_qp_rd_atom >= 1 && a.max_qp_init_rd_atom >= 1,
	       "max_qp_rd_atom, max_qp_init_rd_atom >= 1");
	tap_ok(a.max_pkeys >= 1, "max_pkeys >= 1");
	if (rxe2) {
		tap_ok(is_pow2(a.max_cqe), "max_cqe %d is a power of two (rxe2)",
		       a.max_cqe);
		for (i = 0; i < sizeof(params) / sizeof(params[0]); i++) {
			long want = module_param(params[i].name);
			int got = *(int *)((char *)&a + params[i].off);

			if (want < 0) {
				tap_skip("module parameter %s not exposed",
					 params[i].name);
				continue;
			}
			tap_ret(got, want, "%s equals the module parameter (rxe2)",
				params[i].name);
		}
	} else {
		tap_skip("max_cqe power of two: rxe2 only");
	}

	memset(&ax, 0, sizeof(ax));
	ret = ibv_query_device_ex(ctx, &in, &ax);
	tap_ret_errno(ret, 0, "ibv_query_device_ex, input comp_mask 0");
	tap_ok(!ret && !memcmp(&ax.orig_attr, &a, sizeof(a)),
	       "ibv_query_device_ex orig_attr equals ibv_query_device");
	ret = ibv_query_device_ex(ctx, NULL, &ax);
	tap_ret_errno(ret, 0, "ibv_query_device_ex without input");
	in.comp_mask = 1;
	tap_ret_errno(ibv_query_device_ex(ctx, &in, &ax), EINVAL,
		      "ibv_query_device_ex, unknown input comp_mask -> EINVAL");
}

static void test_query_port(struct ibv_context *ctx)
{
	struct ibv_port_attr p;

	memset(&p, 0, sizeof(p));
	if (!tap_ret_errno(ibv_query_port(ctx, PORT, &p), 0,
			   "ibv_query_port 1"))
		return;
	tap_ret(p.state, IBV_PORT_ACTIVE, "port state ACTIVE");
	tap_ret(p.link_layer, IBV_LINK_LAYER_ETHERNET,
		"port link_layer ETHERNET");
	tap_ok(p.active_mtu >= IBV_MTU_256 && p.active_mtu <= p.max_mtu,
	       "256 <= active_mtu (%d) <= max_mtu (%d)", p.active_mtu,
	       p.max_mtu);
	tap_ok(p.gid_tbl_len > 0, "gid_tbl_len %d > 0", p.gid_tbl_len);
	tap_ok(p.pkey_tbl_len >= 1, "pkey_tbl_len >= 1");
	tap_ret_errno(ibv_query_port(ctx, 2, &p), EINVAL,
		      "ibv_query_port 2 -> EINVAL");
	tap_ret_errno(ibv_query_port(ctx, 0, &p), EINVAL,
		      "ibv_query_port 0 -> EINVAL");
}

static bool netdev_has_ipv4(uint32_t ifindex, const uint8_t *v4)
{
	char name[IF_NAMESIZE];
	struct ifaddrs *ifa, *i;
	bool found = false;

	if (!if_indextoname(ifindex, name) || getifaddrs(&ifa))
		return false;
	for (i = ifa; i; i = i->ifa_next) {
		struct sockaddr_in *sin = (struct sockaddr_in *)i->ifa_addr;

		if (!sin || sin->sin_family != AF_INET ||
		    strcmp(i->ifa_name, name))
			continue;
		if (!memcmp(&sin->sin_addr, v4, 4))
			found = true;
	}
	freeifaddrs(ifa);
	return found;
}

/* A global IPv6 address of the netdev that also is a RoCEv2 GID. */
static int find_ipv6_gid(struct ibv_context *ctx, uint32_t ifindex,
			 int tbl_len, char *addr, size_t len)
{
	char name[IF_NAMESIZE];
	struct ifaddrs *ifa, *i;
	int found = -1, idx;

	if (!if_indextoname(ifindex, name) || getifaddrs(&ifa))
		return -1;
	for (i = ifa; i && found < 0; i = i->ifa_next) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)i->ifa_addr;

		if (!sin6 || sin6->sin6_family != AF_INET6 ||
		    strcmp(i->ifa_name, name) ||
		    IN6_IS_ADDR_LINKLOCAL(&sin6->sin6_addr))
			continue;
		inet_ntop(AF_INET6, &sin6->sin6_addr, addr, len);
		for (idx = 0; idx < tbl_len; idx++) {
			struct ibv_gid_entry e;

			if (ibv_query_gid_ex(ctx, PORT, idx, &e, 0) ||
			    e.gid_type != IBV_GID_TYPE_ROCE_V2 ||
			    memcmp(e.gid.raw, &sin6->sin6_addr, 16))
				continue;
			found = idx;
			break;
		}
	}
	freeifaddrs(ifa);
	return found;
}

static bool sysfs_gid_type_is_v2(const char *dev, int idx)
{
	char path[256], buf[64] = "";
	FILE *f;

	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/ports/1/gid_attrs/types/%d", dev,
		 idx);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	return !strcmp(buf, "RoCE v2\n");
}

static void test_gid(struct ibv_context *ctx, const char *dev)
{
	struct ibv_port_attr p;
	struct ibv_gid_entry e;
	union ibv_gid gid, gid2;
	char buf[INET6_ADDRSTRLEN];
	int idx;

	if (ibv_query_port(ctx, PORT, &p))
		tap_bail("ibv_query_port");
	tap_neg_errno(ibv_query_gid(ctx, PORT, 0, &gid), 0,
		      "ibv_query_gid index 0");
	idx = find_ipv4_gid(ctx, &gid);
	if (!tap_ok(idx >= 0, "a RoCEv2 GID ::ffff:a.b.c.d is in the table"))
		return;
	inet_ntop(AF_INET6, gid.raw, buf, sizeof(buf));
	tap_diag("IPv4 RoCEv2 GID at index %d: %s", idx, buf);
	memset(&e, 0, sizeof(e));
	tap_ret_errno(ibv_query_gid_ex(ctx, PORT, idx, &e, 0), 0,
		      "ibv_query_gid_ex on it");
	tap_ok(e.gid_index == (uint32_t)idx && e.port_num == PORT,
	       "ibv_query_gid_ex reports its index and port");
	tap_ok(e.ndev_ifindex && netdev_has_ipv4(e.ndev_ifindex, gid.raw + 12),
	       "its netdev (ifindex %u) holds the IPv4 address", e.ndev_ifindex);
	tap_neg_errno(ibv_query_gid(ctx, PORT, idx, &gid2), 0,
		      "ibv_query_gid on it");
	tap_ok(!memcmp(&gid, &gid2, sizeof(gid)),
	       "ibv_query_gid and ibv_query_gid_ex agree");
	/*
	 * ibv_query_gid_type() is IBVERBS_PRIVATE; the public API reports
	 * the type through ibv_query_gid_ex() and sysfs, which is what the
	 * private helper reads.
	 */
	tap_ret(e.gid_type, IBV_GID_TYPE_ROCE_V2,
		"ibv_query_gid_ex type is IBV_GID_TYPE_ROCE_V2");
	tap_ok(sysfs_gid_type_is_v2(dev, idx),
	       "sysfs gid_attrs/types/%d says RoCE v2", idx);
	buf[0] = 0;
	idx = find_ipv6_gid(ctx, e.ndev_ifindex, p.gid_tbl_len, buf,
			    sizeof(buf));
	tap_ok(idx >= 0, "the netdev's global IPv6 address %s is a RoCEv2 GID",
	       buf[0] ? buf : "(none)");
	tap_ret_errno(ibv_query_gid_ex(ctx, PORT, p.gid_tbl_len, &e, 0),
		      EINVAL, "ibv_query_gid_ex index gid_tbl_len -> EINVAL");
	tap_ret_errno(ibv_query_gid_ex(ctx, 2, 0, &e, 0), EINVAL,
		      "ibv_query_gid_ex port 2 -> EINVAL");
}

static void test_devinfo(const char *dev)
{
	char cmd[256];
	char *out;
	int st;

	snprintf(cmd, sizeof(cmd), "ibv_devinfo -v -d %s 2>&1", dev);
	out = run_cmd(cmd, &st);
	tap_ok(st == 0, "ibv_devinfo -v -d %s exits 0", dev);
	tap_ok(line_has(out, "hca_id:", dev), "ibv_devinfo shows hca_id %s",
	       dev);
	tap_ok(line_has(out, "transport:", "InfiniBand"),
	       "ibv_devinfo shows transport: InfiniBand");
	tap_ok(line_has(out, "port:", "1"), "ibv_devinfo shows port 1");
	tap_ok(line_has(out, "state:", "PORT_ACTIVE"),
	       "ibv_devinfo shows state: PORT_ACTIVE");
	tap_ok(line_has(out, "link_layer:", "Ethernet"),
	       "ibv_devinfo shows link_layer: Ethernet");
	if (st)
		tap_diag("ibv_devinfo said: %.400s", out);
}

/* the running kernel is at least major.minor */
static bool kernel_at_least(int major, int minor)
{
	struct utsname u;
	int ma = 0, mi = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &ma, &mi) != 2)
		tap_bail("uname");
	return ma > major || (ma == major && mi >= minor);
}

struct raw_cmd {
	struct ib_uverbs_ioctl_hdr hdr;
	struct ib_uverbs_attr attrs[12];
};

/* one method call of the core (no driver attributes): 0 or errno */
static int raw_call(struct ibv_context *ctx, uint16_t obj, uint16_t method,
		    struct ib_uverbs_attr *at, int n)
{
	struct raw_cmd c;
	int i;

	memset(&c, 0, sizeof(c));
	c.hdr.length = sizeof(c.hdr) + n * sizeof(c.attrs[0]);
	c.hdr.object_id = obj;
	c.hdr.method_id = method;
	c.hdr.num_attrs = n;
	c.hdr.driver_id = RXE2_DRIVER_ID;	/* the kernel checks it first */
	for (i = 0; i < n; i++) {
		c.attrs[i] = at[i];
		c.attrs[i].flags = UVERBS_ATTR_F_MANDATORY;
	}
	if (ioctl(ctx->cmd_fd, RDMA_VERBS_IOCTL, &c))
		return errno;
	for (i = 0; i < n; i++)
		at[i].data = c.attrs[i].data;	/* new objects' handles */
	return 0;
}

static int raw_port_speed(struct ibv_context *ctx, uint32_t port,
			  uint64_t *speed)
{
	struct ib_uverbs_attr at[2] = {
		{ .attr_id = QPS_PORT_NUM, .len = 8, .data = port },
		{ .attr_id = QPS_RESP, .len = 8, .data = (uintptr_t)speed },
	};

	return raw_call(ctx, UVERBS_OBJECT_DEVICE, QUERY_PORT_SPEED, at, 2);
}

/* what rxe2 answers: the netdev's link speed, 10 Gb/s when it has none */
static uint64_t netdev_speed(struct dp_dev *d)
{
	const char *nd = dp_netdev(d);
	char path[128];
	long mbps = -1;
	FILE *f;

	if (!nd)
		tap_bail("no netdev for %s", d->name);
	snprintf(path, sizeof(path), "/sys/class/net/%s/speed", nd);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%ld", &mbps) != 1)
			mbps = -1;
		fclose(f);
	}
	if (mbps <= 0)
		mbps = 10000;
	tap_diag("%s: netdev %s, %ld Mb/s", d->name, nd, mbps);
	return mbps / 100;
}

static void test_port_speed(struct dp_dev *d)
{
	int (*qps)(struct ibv_context *, uint32_t, uint64_t *) =
		(int (*)(struct ibv_context *, uint32_t, uint64_t *))
		dlsym(RTLD_DEFAULT, "ibv_query_port_speed");
	uint64_t want = netdev_speed(d), speed = 0;
	bool has = kernel_at_least(7, 0);
	int r;

	r = raw_port_speed(d->ctx, 1, &speed);
	if (has) {
		tap_ok(r == 0 && speed == want,
		       "UVERBS_METHOD_QUERY_PORT_SPEED: %llu x 100 Mb/s, the netdev's rate (%s, %llu)",
		       (unsigned long long)want, strerror(r),
		       (unsigned long long)speed);
		speed = 0;
		tap_ret(raw_port_speed(d->ctx, 2, &speed), EINVAL,
			"... port 2: EINVAL");
	} else {
		tap_ret(r, EPROTONOSUPPORT,
			"kernel before 7.0: no UVERBS_METHOD_QUERY_PORT_SPEED (EPROTONOSUPPORT)");
	}
	if (!qps) {
		tap_diag("this libibverbs has no ibv_query_port_speed");
		return;
	}
	speed = 0;
	r = qps(d->ctx, 1, &speed);
	if (has)
		tap_ok(r == 0 && speed == want,
		       "ibv_query_port_speed: %llu (%s, %llu)",
		       (unsigned long long)want, strerror(r),
		       (unsigned long long)speed);
	else
		tap_ret(r, EOPNOTSUPP,
			"ibv_query_port_speed before 7.0: EOPNOTSUPP");
}

/* ibv_dmah_init_attr of libibverbs 59 (libibverbs 44 has none) */
struct dmah_attr {
	uint32_t comp_mask;
	uint32_t cpu_id;
	uint8_t ph;
	uint8_t tph_mem_type;
};

/* DMAH_ALLOC with what is >= 0 of cpu, mem_type, ph: 0 or errno */
static int raw_dmah(struct ibv_context *ctx, int cpu, int mem_type, int ph,
		    uint32_t *handle)
{
	struct ib_uverbs_attr at[4] = { { .attr_id = DMAH_HANDLE } };
	int n = 1, r;

	if (cpu >= 0)
		at[n++] = (struct ib_uverbs_attr){ .attr_id = DMAH_CPU_ID,
						   .len = 4, .data = cpu };
	if (mem_type >= 0) {
		at[n].attr_id = DMAH_MEM_TYPE;
		at[n++].attr_data.enum_data.elem_id = mem_type;
	}
	if (ph >= 0)
		at[n++] = (struct ib_uverbs_attr){ .attr_id = DMAH_PH,
						   .len = 1, .data = ph };
	r = raw_call(ctx, OBJ_DMAH, DMAH_ALLOC, at, n);
	*handle = at[0].data;
	return r;
}

static int raw_dmah_free(struct ibv_context *ctx, uint32_t handle)
{
	struct ib_uverbs_attr at = { .attr_id = 0, .data = handle };

	return raw_call(ctx, OBJ_DMAH, DMAH_FREE, &at, 1);
}

static int raw_reg_mr(struct dp_dev *d, void *buf, size_t len,
		      uint32_t dmah, uint32_t *handle, uint32_t *lkey,
		      uint32_t *rkey)
{
	struct ib_uverbs_attr at[9] = {
		{ .attr_id = REG_MR_HANDLE },
		{ .attr_id = REG_MR_PD_HANDLE, .data = d->pd->handle },
		{ .attr_id = REG_MR_DMA_HANDLE, .data = dmah },
		{ .attr_id = REG_MR_ADDR, .len = 8, .data = (uintptr_t)buf },
		{ .attr_id = REG_MR_IOVA, .len = 8, .data = (uintptr_t)buf },
		{ .attr_id = REG_MR_LENGTH, .len = 8, .data = len },
		{ .attr_id = REG_MR_ACCESS_FLAGS, .len = 4,
		  .data = DP_ACCESS_ALL },
		{ .attr_id = REG_MR_RESP_LKEY, .len = 4,
		  .data = (uintptr_t)lkey },
		{ .attr_id = REG_MR_RESP_RKEY, .len = 4,
		  .data = (uintptr_t)rkey },
	};
	int r = raw_call(d->ctx, UVERBS_OBJECT_MR, METHOD_REG_MR, at, 9);

	*handle = at[0].data;
	return r;
}

static int raw_dereg_mr(struct dp_dev *d, uint32_t handle)
{
	struct ib_uverbs_attr at = { .attr_id = UVERBS_ATTR_DESTROY_MR_HANDLE,
				     .data = handle };

	return raw_call(d->ctx, UVERBS_OBJECT_MR, UVERBS_METHOD_MR_DESTROY,
			&at, 1);
}

/* an RDMA WRITE of len bytes from src into (rkey, dst) over a and b */
static bool write_into(struct dp_dev *d, uint8_t *dst, uint32_t rkey,
		       size_t len, uint32_t seed)
{
	struct dp_qp a = {}, b = {};
	struct dp_wc_want w = dp_want(7, IBV_WC_RDMA_WRITE);
	uint8_t *src = dp_alloc(len);
	struct ibv_mr *smr = dp_reg(d->pd, src, len, DP_ACCESS_ALL);
	bool ok = false;

	if (dp_rc_pair(d, &a, &b))
		tap_bail("RC pair: %s", strerror(errno));
	dp_fill(src, len, seed);
	if (!dp_post_send1(a.qp, 7, IBV_WR_RDMA_WRITE, src, len, smr->lkey,
			   (uintptr_t)dst, rkey, 0))
		ok = dp_expect(a.scq, &w, "RDMA WRITE into the DMA-handle MR");
	dp_qp_free(&a);
	dp_qp_free(&b);
	ibv_dereg_mr(smr);
	free(src);
	return ok;
}

typedef struct ibv_dmah *(*alloc_dmah_fn)(struct ibv_context *,
					  struct dmah_attr *);
typedef int (*dealloc_dmah_fn)(struct ibv_dmah *);
typedef struct ibv_mr *(*reg_mr_ex_fn)(struct ibv_pd *, struct dp_mr_init_attr *);

/* the same through libibverbs (59 on) and librxe2 */
static void test_dmah_verbs(struct dp_dev *d, alloc_dmah_fn alloc,
			    dealloc_dmah_fn dealloc, reg_mr_ex_fn reg_mr_ex,
			    bool has)
{
	struct dmah_attr at = { .comp_mask = 7, .cpu_id = 0, .ph = 2 };
	const size_t len = 8192;
	uint8_t *buf = dp_alloc(len);
	struct dp_mr_init_attr mi = {
		.length = len, .access = DP_ACCESS_ALL,
		.comp_mask = DP_REG_MR_MASK_ADDR, .addr = buf,
	};
	struct ibv_dmah *dh;
	struct ibv_mr *mr;

	/* without a handle: an ordinary MR on every kernel */
	memset(buf, 0, len);
	mr = reg_mr_ex(d->pd, &mi);
	if (tap_ok(mr != NULL, "ibv_reg_mr_ex without a DMA handle (%s)",
		   mr ? "" : strerror(errno))) {
		if (write_into(d, buf + 8, mr->rkey, 3000, 41))
			tap_ret(dp_verify(buf + 8, 3000, 41), -1,
				"... the WRITE is in it byte for byte");
		tap_ret_errno(ibv_dereg_mr(mr), 0, "... dereg");
	}
	dh = alloc(d->ctx, &at);
	if (!has) {
		tap_ok(!dh && errno == EOPNOTSUPP,
		       "ibv_alloc_dmah before 6.17: EOPNOTSUPP (%s)",
		       strerror(errno));
		free(buf);
		return;
	}
	if (!tap_ok(dh != NULL, "ibv_alloc_dmah: CPU 0, volatile, hint 2 (%s)",
		    dh ? "" : strerror(errno))) {
		free(buf);
		return;
	}
	memset(buf, 0, len);
	mi.comp_mask |= DP_REG_MR_MASK_DMAH;
	mi.dmah = dh;
	mr = reg_mr_ex(d->pd, &mi);
	if (tap_ok(mr != NULL, "ibv_reg_mr_ex with the DMA handle (%s)",
		   mr ? "" : strerror(errno))) {
		if (write_into(d, buf + 16, mr->rkey, 6000, 43))
			tap_ret(dp_verify(buf + 16, 6000, 43), -1,
				"... the WRITE is in it byte for byte");
		tap_ok(dp_res_detail(d->name, "mr", "", "dmah_ph", "2"),
		       "... rdma resource show mr -dd: drv_dmah_ph 2");
		tap_ret(dealloc(dh), EBUSY,
			"ibv_dealloc_dmah while its MR lives: EBUSY");
		tap_ret_errno(ibv_dereg_mr(mr), 0, "... dereg");
	}
	tap_ret(dealloc(dh), 0, "ibv_dealloc_dmah");
	at.comp_mask = 1;	/* a CPU, no hint */
	dh = alloc(d->ctx, &at);
	tap_ok(!dh && errno == EINVAL, "ibv_alloc_dmah without a hint: EINVAL");
	free(buf);
}

static void test_dmah(struct dp_dev *d)
{
	reg_mr_ex_fn reg_mr_ex = (reg_mr_ex_fn)dlsym(RTLD_DEFAULT,
						     "ibv_reg_mr_ex");
	alloc_dmah_fn alloc = (alloc_dmah_fn)dlsym(RTLD_DEFAULT,
						   "ibv_alloc_dmah");
	dealloc_dmah_fn dealloc = (dealloc_dmah_fn)dlsym(RTLD_DEFAULT,
							 "ibv_dealloc_dmah");
	bool has = kernel_at_least(6, 17);
	uint32_t h, mrh, lkey, rkey;
	const size_t len = 8192;
	uint8_t *buf;
	int r;

	r = raw_dmah(d->ctx, 0, 0, 1, &h);
	if (!has) {
		tap_ret(r, EPROTONOSUPPORT,
			"kernel before 6.17: no UVERBS_OBJECT_DMAH (EPROTONOSUPPORT)");
	} else if (tap_ret(r, 0, "DMA handle: CPU 0, volatile memory, hint 1")) {
		buf = dp_alloc(len);
		memset(buf, 0, len);
		r = raw_reg_mr(d, buf, len, h, &mrh, &lkey, &rkey);
		if (tap_ret(r, 0, "UVERBS_METHOD_REG_MR with the handle")) {
			if (write_into(d, buf + 100, rkey, 5000, 37))
				tap_ret(dp_verify(buf + 100, 5000, 37), -1,
					"... the WRITE is in it byte for byte");
			tap_ok(dp_res_detail(d->name, "mr", "", "dmah_ph",
					     "1") &&
			       dp_res_detail(d->name, "mr", "", "dmah_cpu",
					     "0"),
			       "rdma resource show mr -dd: drv_dmah_ph 1 drv_dmah_cpu 0");
			tap_ret(raw_dmah_free(d->ctx, h), EBUSY,
				"freeing the handle of a live MR: EBUSY");
			tap_ret(raw_dereg_mr(d, mrh), 0, "dereg the MR");
		}
		tap_ret(raw_dmah_free(d->ctx, h), 0, "free the handle");
		free(buf);
		tap_ret(raw_dmah(d->ctx, -1, -1, -1, &h), EINVAL,
			"no processing hint: EINVAL");
		tap_ret(raw_dmah(d->ctx, 0, -1, 1, &h), EINVAL,
			"a CPU without a memory type: EINVAL");
		tap_ret(raw_dmah(d->ctx, -1, 1, 1, &h), EINVAL,
			"a memory type without a CPU: EINVAL");
		tap_ret(raw_dmah(d->ctx, -1, -1, 4, &h), EINVAL,
			"processing hint 4 (PCIe has 2 bits): EINVAL");
		if (!tap_ret(raw_dmah(d->ctx, -1, -1, 3, &h), 0,
			     "hint 3 alone"))
			h = 0;
		else
			tap_ret(raw_dmah_free(d->ctx, h), 0, "... freed");
	}
	if (!alloc || !dealloc || !reg_mr_ex) {
		tap_diag("this libibverbs has no ibv_alloc_dmah");
		return;
	}
	test_dmah_verbs(d, alloc, dealloc, reg_mr_ex, has);
}

int main(void)
{
	const char *dev = test_dev_name();
	bool rxe2 = test_is_rxe2(dev);
	struct ibv_context *ctx = test_open(dev);

	tap_diag("device %s%s", dev, rxe2 ? " (rxe2)" : " (not rxe2)");
	test_list(dev);
	test_query_device(ctx, dev, rxe2);
	test_query_port(ctx);
	test_gid(ctx, dev);
	test_devinfo(dev);
	ibv_close_device(ctx);
	if (rxe2) {
		struct dp_dev d;

		dp_open(&d, dev);
		test_port_speed(&d);
		test_dmah(&d);
		dp_close(&d);
	}
	return tap_done();
}
