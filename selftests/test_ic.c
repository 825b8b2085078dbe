// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: interconnect ids: rxe2dv_query_mr (inlen, comp_mask, rdma_rxe MRs, the raw ioctl, validity per access), ic_map; with two NUMA nodes MRs on node 0, 1 or both (move_pages), num_interconnects
 *
 * Interconnect ids: rxe2dv_query_mr() (the inlen/comp_mask rules, an
 * rdma_rxe MR refused, validity per access), MRs whose pages sit on
 * NUMA node 0, node 1 or both, the device's ic_map file regrouping
 * nodes, and rxe2dv_query_device()'s num_interconnects.  The two-node
 * part needs a guest booted with tools/vm --numa 2 (make check does);
 * with one node it skips, saying so.  Where the pages really are is
 * asked of the kernel (move_pages(2) with no target), not assumed.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/mempolicy.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rdma/rdma_user_ioctl_cmds.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <infiniband/rxe2dv.h>

#include "rxe2-abi.h"
#include "dp.h"
#include "tap.h"
#include "util.h"

#define ATTR_V1 16	/* every field of the first rxe2dv_mr_attr */
#define ATTR_V2 24	/* with page_size and num_pages */
#define POISON 0xa5
#define NPAGES 16

#define ALL_VALID (RXE2DV_MR_ATTR_VALIDITY_RECV_IC_ID | \
		   RXE2DV_MR_ATTR_VALIDITY_RDMA_READ_IC_ID | \
		   RXE2DV_MR_ATTR_VALIDITY_RDMA_RECV_IC_ID)

static const char *dev;
static char map_path[256];
static long page_size;

/* ---- the device's ic_map file ---- */

static int map_write(const char *s)
{
	int fd, ret = 0;

	fd = open(map_path, O_WRONLY);
	if (fd < 0)
		return errno;
	if (write(fd, s, strlen(s)) < 0)
		ret = errno;
	close(fd);
	return ret;
}

static bool map_read(char *buf, size_t len)
{
	FILE *f = fopen(map_path, "r");
	bool ok;

	if (!f)
		return false;
	ok = fgets(buf, len, f) != NULL;
	fclose(f);
	return ok;
}

/* ---- NUMA ---- */

/* nodes in /sys/devices/system/node/online ("0" or "0-1"); 1 if absent */
static int online_nodes(void)
{
	FILE *f = fopen("/sys/devices/system/node/online", "r");
	int a, b, n = 0;
	char sep;

	if (!f)
		return 1;
	while (fscanf(f, "%d", &a) == 1) {
		b = a;
		if (fscanf(f, "%c", &sep) == 1 && sep == '-') {
			if (fscanf(f, "%d", &b) != 1)
				break;
			if (fscanf(f, "%c", &sep) != 1)
				sep = '\n';
		}
		n += b - a + 1;
		if (sep != ',')
			break;
	}
	fclose(f);
	return n ? n : 1;
}

/*
 * NPAGES pages placed by a memory policy before they are touched:
 * MPOL_BIND to one node, MPOL_INTERLEAVE over a mask, or none (mode -1).
 */
static void *numa_buf(int mode, unsigned long mask)
{
	size_t len = NPAGES * page_size;
	void *p;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		tap_bail("mmap: %s", strerror(errno));
	if (mode >= 0 &&
	    syscall(SYS_mbind, p, len, mode, &mask, sizeof(mask) * 8,
		    MPOL_MF_STRICT | MPOL_MF_MOVE))
		tap_bail("mbind(mode %d, mask 0x%lx): %s", mode, mask,
			 strerror(errno));
	memset(p, 0x5a, len);
	return p;
}

/* bit n set when a page of the buffer is on node n; 0 if unknown */
static unsigned long page_nodes(void *buf)
{
	void *pages[NPAGES];
	int status[NPAGES];
	unsigned long nodes = 0;
	int i;

	for (i = 0; i < NPAGES; i++)
		pages[i] = (char *)buf + i * page_size;
	if (syscall(SYS_move_pages, 0, NPAGES, pages, NULL, status, 0))
		return 0;
	for (i = 0; i < NPAGES; i++) {
		if (status[i] < 0 || status[i] >= 64)
			return 0;
		nodes |= 1ul << status[i];
	}
	return nodes;
}

static int query(struct ibv_mr *mr, struct rxe2dv_mr_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	return rxe2dv_query_mr(mr, attr, sizeof(*attr));
}

/* the answer for a buffer on one interconnect id, every access given */
static void expect_ids(struct ibv_mr *mr, int want_validity, int want_id,
		       const char *what)
{
	struct rxe2dv_mr_attr a;
	int ret = query(mr, &a);

	if (!tap_ret(ret, 0, "%s: rxe2dv_query_mr", what)) {
		tap_skip("%s: no answer", what);
		return;
	}
	/* an id without its validity bit reads 0 */
	int recv = want_validity & RXE2DV_MR_ATTR_VALIDITY_RECV_IC_ID ?
		   want_id : 0;
	int read = want_validity & RXE2DV_MR_ATTR_VALIDITY_RDMA_READ_IC_ID ?
		   want_id : 0;
	int write = want_validity & RXE2DV_MR_ATTR_VALIDITY_RDMA_RECV_IC_ID ?
		    want_id : 0;

	tap_ok(a.ic_id_validity == want_validity && a.recv_ic_id == recv &&
	       a.rdma_read_ic_id == read && a.rdma_recv_ic_id == write &&
	       a.comp_mask == RXE2DV_MR_ATTR_MASK_PAGES,
	       "%s: validity 0x%x (want 0x%x), ids %u/%u/%u (want %d/%d/%d)",
	       what, a.ic_id_validity, want_validity, a.recv_ic_id,
	       a.rdma_read_ic_id, a.rdma_recv_ic_id, recv, read, write);
}

/* ---- the inlen / comp_mask rules ---- */

static void test_rules(struct ibv_pd *pd)
{
	static const uint32_t short_lens[] = { 0, 1, 8, 12, ATTR_V1 - 1 };
	unsigned char buf[sizeof(struct rxe2dv_mr_attr) + 32];
	struct rxe2dv_mr_attr a, ref;
	size_t i, big = sizeof(ref) + 6;
	bool untouched = true;
	int ret, bad = 0;
	struct ibv_mr *mr;
	void *mem;

	tap_ret(sizeof(struct rxe2dv_mr_attr), ATTR_V2,
		"struct rxe2dv_mr_attr is %d bytes", ATTR_V2);

	mem = numa_buf(-1, 0);
	mr = ibv_reg_mr(pd, mem, NPAGES * page_size, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
	if (!mr)
		tap_bail("ibv_reg_mr: %s", strerror(errno));

	for (i = 0; i < sizeof(short_lens) / sizeof(short_lens[0]); i++) {
		memset(buf, 0, sizeof(buf));
		memset(buf + 8, POISON, sizeof(buf) - 8);
		ret = rxe2dv_query_mr(mr, (void *)buf, short_lens[i]);
		if (ret != EINVAL) {
			tap_diag("inlen %u: %d, want EINVAL", short_lens[i], ret);
			bad++;
		}
		if (dp_verify_byte(buf, 8, 0) >= 0 ||
		    dp_verify_byte(buf + 8, sizeof(buf) - 8, POISON) >= 0)
			untouched = false;
	}
	tap_ok(!bad, "inlen shorter than %d bytes: EINVAL", ATTR_V1);
	tap_ok(untouched, "... and nothing written");

	tap_ret(rxe2dv_query_mr(mr, NULL, sizeof(a)), EINVAL, "NULL attr: EINVAL");
	tap_ret(rxe2dv_query_mr(NULL, &a, sizeof(a)), EOPNOTSUPP,
		"NULL mr: EOPNOTSUPP");

	memset(&a, POISON, sizeof(a));
	a.comp_mask = 1;
	ret = rxe2dv_query_mr(mr, &a, sizeof(a));
	tap_ret(ret, EINVAL, "comp_mask bit 0: EINVAL");
	a.comp_mask = 1ull << 63;
	ret = rxe2dv_query_mr(mr, &a, sizeof(a));
	tap_ret(ret, EINVAL, "comp_mask bit 63: EINVAL");
	tap_ok(a.comp_mask == 1ull << 63 &&
	       dp_verify_byte((char *)&a + 8, sizeof(a) - 8, POISON) < 0,
	       "... and nothing written");

	if (query(mr, &ref))
		tap_bail("rxe2dv_query_mr failed");

	/* exactly sizeof: a canary right behind it */
	memset(buf, POISON, sizeof(buf));
	memset(buf, 0, 8);
	ret = rxe2dv_query_mr(mr, (void *)buf, sizeof(ref));
	tap_ret(ret, 0, "inlen sizeof(attr): 0");
	tap_ok(!memcmp(buf, &ref, sizeof(ref)) &&
	       dp_verify_byte(buf + sizeof(ref), sizeof(buf) - sizeof(ref), POISON) < 0,
	       "... the fields, and nothing past inlen");

	/* a caller built against the first structure: no page fields */
	memset(buf, POISON, sizeof(buf));
	memset(buf, 0, 8);
	ret = rxe2dv_query_mr(mr, (void *)buf, ATTR_V1);
	tap_ret(ret, 0, "inlen %d (the first structure): 0", ATTR_V1);
	memcpy(&a, buf, ATTR_V1);
	tap_ok(a.comp_mask == 0 && !memcmp(buf + 8, (char *)&ref + 8, 8) &&
	       dp_verify_byte(buf + ATTR_V1, sizeof(buf) - ATTR_V1, POISON) < 0,
	       "... comp_mask 0, the ids, nothing past inlen");
	tap_ok(ref.comp_mask == RXE2DV_MR_ATTR_MASK_PAGES &&
	       ref.page_size == 4096 && ref.num_pages == NPAGES,
	       "full structure: PAGES valid, page_size %u, num_pages %u (%d)",
	       ref.page_size, ref.num_pages, NPAGES);

	/* a caller built against a later, longer structure */
	memset(buf, 0xff, sizeof(buf));
	memset(buf, 0, 8);
	ret = rxe2dv_query_mr(mr, (void *)buf, big);
	tap_ret(ret, 0, "inlen %zu (longer than the structure): 0", big);
	dp_expect_longer_attr(buf, sizeof(buf), &ref, sizeof(ref), big);

	/* the kernel looks the handle up itself: a stale or wrong one fails */
	{
		struct ibv_mr fake = *mr;

		fake.handle = pd->handle;
		tap_ret(rxe2dv_query_mr(&fake, &a, sizeof(a)), EINVAL,
			"handle of a PD: EINVAL (the kernel's type check)");
		fake.handle = mr->handle;
		ibv_dereg_mr(mr);
		memset(&a, 0, sizeof(a));
		tap_ret(rxe2dv_query_mr(&fake, &a, sizeof(a)), ENOENT,
			"handle of a deregistered MR: ENOENT");
	}
	munmap(mem, NPAGES * page_size);
}

static void test_other_device(const char *ref)
{
	struct ibv_device **list;
	struct rxe2dv_mr_attr a;
	struct ibv_context *ctx;
	struct ibv_mr *mr;
	struct ibv_pd *pd;
	bool found = false;
	int i, n;
	void *mem;

	list = ibv_get_device_list(&n);
	if (!list)
		tap_bail("ibv_get_device_list: %s", strerror(errno));
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), ref))
			found = true;
	ibv_free_device_list(list);
	if (!found) {
		tap_skip("no %s device: an rdma_rxe MR is not tested", ref);
		tap_skip("no %s device", ref);
		return;
	}

	ctx = test_open(ref);
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		tap_bail("ibv_alloc_pd(%s): %s", ref, strerror(errno));
	mem = numa_buf(-1, 0);
	mr = ibv_reg_mr(pd, mem, NPAGES * page_size, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		tap_bail("ibv_reg_mr(%s): %s", ref, strerror(errno));
	memset(&a, 0, 8);
	memset((char *)&a + 8, POISON, sizeof(a) - 8);
	tap_ret(rxe2dv_query_mr(mr, &a, sizeof(a)), EOPNOTSUPP,
		"MR of %s (rdma_rxe): EOPNOTSUPP", ref);
	tap_ok(dp_verify_byte((char *)&a + 8, sizeof(a) - 8, POISON) < 0,
	       "... nothing written");
	ibv_dereg_mr(mr);
	munmap(mem, NPAGES * page_size);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
}

/* ---- the kernel method itself, without the library's checks ---- */

struct raw_cmd {
	struct ib_uverbs_ioctl_hdr hdr;
	struct ib_uverbs_attr attrs[4];
};

/* RXE2_METHOD_MR_QUERY (or @method) with @n attributes; 0 or errno */
static int raw_query(struct ibv_mr *mr, uint16_t method,
		     struct ib_uverbs_attr *attrs, int n)
{
	struct raw_cmd c;

	memset(&c, 0, sizeof(c));
	c.hdr.length = sizeof(c.hdr) + n * sizeof(c.attrs[0]);
	c.hdr.object_id = UVERBS_OBJECT_MR;
	c.hdr.method_id = method;
	c.hdr.num_attrs = n;
	c.hdr.driver_id = RXE2_DRIVER_ID;
	memcpy(c.attrs, attrs, n * sizeof(c.attrs[0]));
	return ioctl(mr->context->cmd_fd, RDMA_VERBS_IOCTL, &c) ? errno : 0;
}

static void test_raw(struct ibv_pd *pd)
{
	unsigned char out[32];
	struct rxe2dv_mr_attr ref;
	struct ib_uverbs_attr at[3] = {
		{ .attr_id = RXE2_ATTR_QUERY_MR_HANDLE,
		  .flags = UVERBS_ATTR_F_MANDATORY },
		{ .attr_id = RXE2_ATTR_QUERY_MR_RESP,
		  .flags = UVERBS_ATTR_F_MANDATORY,
		  .data = (uintptr_t)out },
		{ .attr_id = RXE2_UVERBS_DRIVER_ID(9),
		  .flags = UVERBS_ATTR_F_MANDATORY },
	};
	struct ibv_mr *mr;
	void *mem;

	mem = numa_buf(-1, 0);
	mr = ibv_reg_mr(pd, mem, NPAGES * page_size, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_READ);
	if (!mr)
		tap_bail("ibv_reg_mr: %s", strerror(errno));
	if (query(mr, &ref))
		tap_bail("rxe2dv_query_mr failed");
	at[0].data = mr->handle;

	at[1].len = 8;
	memset(out, POISON, sizeof(out));
	tap_ret(raw_query(mr, RXE2_METHOD_MR_QUERY, at, 2), EINVAL,
		"raw: 8-byte response buffer: EINVAL");
	tap_ok(dp_verify_byte(out, sizeof(out), POISON) < 0, "... nothing written");

	at[1].len = sizeof(out);
	tap_ret(raw_query(mr, RXE2_METHOD_MR_QUERY, at, 2), 0,
		"raw: 32-byte response buffer: 0");
	tap_ok(!memcmp(out + 8, (char *)&ref + 8, 16) &&
	       out[0] == RXE2_QUERY_MR_RESP_PAGES &&
	       dp_verify_byte(out + 1, 7, 0) < 0 &&
	       dp_verify_byte(out + 24, sizeof(out) - 24, 0) < 0,
	       "... the library's answer, comp_mask PAGES, the tail zeroed");

	tap_ret(raw_query(mr, RXE2_METHOD_MR_QUERY, at, 1), EINVAL,
		"raw: no response attribute: EINVAL");
	tap_ret(raw_query(mr, RXE2_METHOD_MR_QUERY, at, 3), EPROTONOSUPPORT,
		"raw: an unknown mandatory attribute: EPROTONOSUPPORT");
	at[2].flags = 0;
	tap_ret(raw_query(mr, RXE2_METHOD_MR_QUERY, at, 3), 0,
		"raw: the same attribute optional: ignored");
	tap_ret(raw_query(mr, RXE2_UVERBS_DRIVER_ID(9), at, 2),
		EPROTONOSUPPORT, "raw: an unknown driver method: EPROTONOSUPPORT");

	ibv_dereg_mr(mr);
	munmap(mem, NPAGES * page_size);
}

/* ---- validity per access ---- */

static const struct {
	int access;
	int validity;
	const char *name;
} accesses[] = {
	{ 0, 0, "local read only" },
	{ IBV_ACCESS_LOCAL_WRITE, RXE2DV_MR_ATTR_VALIDITY_RECV_IC_ID,
	  "LOCAL_WRITE" },
	{ IBV_ACCESS_REMOTE_READ, RXE2DV_MR_ATTR_VALIDITY_RDMA_READ_IC_ID,
	  "REMOTE_READ" },
	{ IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ,
	  RXE2DV_MR_ATTR_VALIDITY_RECV_IC_ID |
	  RXE2DV_MR_ATTR_VALIDITY_RDMA_READ_IC_ID, "LOCAL_WRITE|REMOTE_READ" },
	{ IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
	  RXE2DV_MR_ATTR_VALIDITY_RECV_IC_ID |
	  RXE2DV_MR_ATTR_VALIDITY_RDMA_RECV_IC_ID, "LOCAL_WRITE|REMOTE_WRITE" },
	{ IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
	  IBV_ACCESS_REMOTE_ATOMIC,
	  RXE2DV_MR_ATTR_VALIDITY_RECV_IC_ID |
	  RXE2DV_MR_ATTR_VALIDITY_RDMA_RECV_IC_ID,
	  "LOCAL_WRITE|REMOTE_WRITE|REMOTE_ATOMIC" },
	{ IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
	  IBV_ACCESS_REMOTE_WRITE, ALL_VALID,
	  "LOCAL_WRITE|REMOTE_READ|REMOTE_WRITE" },
};

/* the lowest node in a node bit mask */
static int first_node(unsigned long nodes)
{
	return __builtin_ctzl(nodes);
}

static void test_access(struct ibv_pd *pd)
{
	size_t len = NPAGES * page_size;
	unsigned long nodes;
	struct ibv_mr *mr;
	unsigned int i;
	void *mem;
	int node;

	/* one node: whatever the default policy chose, all on one */
	mem = numa_buf(-1, 0);
	nodes = page_nodes(mem);
	if (!tap_ok(nodes && !(nodes & (nodes - 1)),
		    "the test buffer sits on one node (mask 0x%lx)", nodes))
		tap_bail("cannot tell where the pages are");
	node = first_node(nodes);

	for (i = 0; i < sizeof(accesses) / sizeof(accesses[0]); i++) {
		char what[96];

		mr = ibv_reg_mr(pd, mem, len, accesses[i].access);
		if (!mr)
			tap_bail("ibv_reg_mr(%s): %s", accesses[i].name,
				 strerror(errno));
		snprintf(what, sizeof(what), "%s on node %d", accesses[i].name,
			 node);
		expect_ids(mr, accesses[i].validity, node, what);
		ibv_dereg_mr(mr);
	}

	/* rereg: the answer follows the MR's current access */
	mr = ibv_reg_mr(pd, mem, len, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		tap_bail("ibv_reg_mr: %s", strerror(errno));
	if (ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			 IBV_ACCESS_REMOTE_READ))
		tap_bail("ibv_rereg_mr: %s", strerror(errno));
	expect_ids(mr, RXE2DV_MR_ATTR_VALIDITY_RDMA_READ_IC_ID, node,
		   "after rereg LOCAL_WRITE -> REMOTE_READ");
	ibv_dereg_mr(mr);

	/* the map applies to existing MRs at once */
	mr = ibv_reg_mr(pd, mem, len, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
	if (!mr)
		tap_bail("ibv_reg_mr: %s", strerror(errno));
	{
		char m[32];

		snprintf(m, sizeof(m), "%d:4242\n", node);
		tap_ret(map_write(m), 0, "ic_map: node %d -> id 4242", node);
		expect_ids(mr, ALL_VALID, 4242, "ic_map node -> 4242");
		tap_ret(map_write("\n"), 0, "ic_map: empty write restores it");
		expect_ids(mr, ALL_VALID, node, "default map again");
	}
	ibv_dereg_mr(mr);
	munmap(mem, len);
}

/*
 * ---- ODP: an MR with nothing resident has no valid id; once prefetched,
 * its pages' node is the id ----
 */

static void test_odp(struct ibv_pd *pd)
{
	size_t len = NPAGES * page_size;
	struct ibv_mr *mr;
	void *mem;

	mem = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		tap_bail("mmap: %s", strerror(errno));
	mr = ibv_reg_mr(pd, mem, len, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_ON_DEMAND);
	if (!mr) {
		tap_skip("no ODP MR (%s): the untouched-ODP case is not tested",
			 strerror(errno));
		tap_skip("no ODP MR");
	} else {
		struct ibv_sge sge = { .addr = (uintptr_t)mem,
				       .length = len, .lkey = mr->lkey };
		unsigned long nodes;

		expect_ids(mr, 0, 0, "ODP MR with nothing resident");
		/* mapped in the device now: where its pages are decides */
		if (tap_ret(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
					  IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1), 0,
			    "ODP: prefetch the MR (FLUSH)")) {
			nodes = page_nodes(mem);
			if (tap_ok(nodes && !(nodes & (nodes - 1)),
				   "ODP: the pages sit on one node (mask 0x%lx)",
				   nodes))
				expect_ids(mr, ALL_VALID, first_node(nodes),
					   "ODP MR after a prefetch");
		}
		ibv_dereg_mr(mr);
	}
	munmap(mem, len);
}

/* ---- num_interconnects ---- */

static unsigned int num_ics(void)
{
	struct rxe2dv_device_attr attr;
	struct ibv_context *ctx = test_open(dev);
	int ret;

	ret = rxe2dv_query_device(ctx, &attr, sizeof(attr));
	ibv_close_device(ctx);
	if (ret)
		tap_bail("rxe2dv_query_device: %d", ret);
	return attr.num_interconnects;
}

static void test_num_ics(int nnodes)
{
	tap_ret(num_ics(), nnodes,
		"num_interconnects with the default map: %d (online nodes)",
		nnodes);
}

/* ---- two nodes ---- */

/*
 * What ic_map reads: nodes 0 and 1 as given, the other online nodes
 * (0..nnodes-1 in a tools/vm guest) their own numbers.
 */
static const char *map_text(int nnodes, int id0, int id1)
{
	static char buf[256];
	int n, len;

	len = snprintf(buf, sizeof(buf), "%d:%d,%d:%d", 0, id0, 1, id1);
	for (n = 2; n < nnodes && len < (int)sizeof(buf) - 16; n++)
		len += snprintf(buf + len, sizeof(buf) - len, ",%d:%d", n, n);
	snprintf(buf + len, sizeof(buf) - len, "\n");
	return buf;
}

#define NUMA_CHECKS 26

static void test_numa(struct ibv_pd *pd, int nnodes)
{
	size_t len = NPAGES * page_size;
	struct ibv_mr *mr0, *mr1, *mri;
	void *b0, *b1, *bi;
	char line[256];
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
		     IBV_ACCESS_REMOTE_WRITE;
	int i;

	if (nnodes < 2) {
		for (i = 0; i < NUMA_CHECKS; i++)
			tap_skip("one NUMA node: needs a guest with two (tools/vm --numa 2)");
		return;
	}

	b0 = numa_buf(MPOL_BIND, 1ul << 0);
	b1 = numa_buf(MPOL_BIND, 1ul << 1);
	bi = numa_buf(MPOL_INTERLEAVE, 3ul);
	tap_ret(page_nodes(b0), 1, "MPOL_BIND node 0: every page on node 0");
	tap_ret(page_nodes(b1), 2, "MPOL_BIND node 1: every page on node 1");
	tap_ret(page_nodes(bi), 3, "MPOL_INTERLEAVE 0,1: pages on both nodes");

	mr0 = ibv_reg_mr(pd, b0, len, access);
	mr1 = ibv_reg_mr(pd, b1, len, access);
	mri = ibv_reg_mr(pd, bi, len, access);
	if (!mr0 || !mr1 || !mri)
		tap_bail("ibv_reg_mr: %s", strerror(errno));

	tap_ok(map_read(line, sizeof(line)) &&
	       !strcmp(line, map_text(nnodes, 0, 1)),
	       "ic_map reads \"0:0,1:1...\" by default");
	expect_ids(mr0, ALL_VALID, 0, "MR on node 0");
	expect_ids(mr1, ALL_VALID, 1, "MR on node 1");
	expect_ids(mri, 0, 0, "MR interleaved over nodes 0 and 1");

	/* both nodes behind one interconnect */
	tap_ret(map_write("0:7,1:7\n"), 0, "ic_map \"0:7,1:7\"");
	tap_ok(map_read(line, sizeof(line)) &&
	       !strcmp(line, map_text(nnodes, 7, 7)),
	       "... reads back");
	expect_ids(mri, ALL_VALID, 7, "interleaved MR, both nodes -> 7");
	expect_ids(mr1, ALL_VALID, 7, "MR on node 1, both nodes -> 7");
	tap_ret(num_ics(), nnodes - 1, "num_interconnects %d (new context)",
		nnodes - 1);

	/* a partial map: node 1 named, node 0 keeps its own number */
	tap_ret(map_write("1:0"), 0, "ic_map \"1:0\"");
	expect_ids(mri, ALL_VALID, 0, "interleaved MR, node 1 -> 0");

	/* refused writes leave the map alone */
	tap_ok(map_write("0:65536") == EINVAL && map_write("9999:1") == EINVAL &&
	       map_write("0:1,0:2") == EINVAL && map_write("0") == EINVAL &&
	       map_write("a:1") == EINVAL && map_write("0:1,") == EINVAL,
	       "ic_map: id > 65535, unknown node, node twice, no id, junk: EINVAL");
	if (!map_read(line, sizeof(line)))
		line[0] = '\0';
	tap_ok(!strcmp(line, map_text(nnodes, 0, 0)), "... and the map is unchanged: %.*s",
	       (int)strcspn(line, "\n"), line);

	tap_ret(map_write("\n"), 0, "ic_map: empty write");
	expect_ids(mri, 0, 0, "default again: interleaved MR has no id");
	tap_ret(num_ics(), nnodes, "num_interconnects %d (new context)",
		nnodes);

	ibv_dereg_mr(mr0);
	ibv_dereg_mr(mr1);
	ibv_dereg_mr(mri);
	munmap(b0, len);
	munmap(b1, len);
	munmap(bi, len);
}

int main(void)
{
	const char *ref = test_ref_dev_name();
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	int nnodes;

	dev = test_dev_name();
	page_size = sysconf(_SC_PAGESIZE);
	if (!test_is_rxe2(dev)) {
		tap_skip("%s is not an rxe2 device: rxe2dv has nothing to test",
			 dev);
		return tap_done();
	}
	snprintf(map_path, sizeof(map_path), "/sys/class/infiniband/%s/ic_map",
		 dev);
	nnodes = online_nodes();
	tap_diag("%d online NUMA node(s)", nnodes);

	/* a map left over by an earlier run must not decide anything */
	if (map_write("\n"))
		tap_bail("cannot reset %s: %s", map_path, strerror(errno));

	ctx = test_open(dev);
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		tap_bail("ibv_alloc_pd: %s", strerror(errno));

	test_rules(pd);
	test_other_device(ref);
	test_raw(pd);
	test_access(pd);
	test_odp(pd);
	test_num_ics(nnodes);
	test_numa(pd, nnodes);

	map_write("\n");
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return tap_done();
}
