// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * scale_bench: many QPs and MRs in one process on one device, for
 * `make bench` (tools/bench, the "scale" section).
 *
 *   scale_bench DEVICE NQP NMR [--hold]
 *
 * Creates NQP RC QPs (NQP even) and connects them as NQP/2 loopback
 * pairs, QP 2k to QP 2k+1, over the device's own IPv4 RoCEv2 GID, as
 * perftest and the other bench tools do; all QPs share one CQ and one
 * PD, each with a send and a receive queue of QP_DEPTH entries, one SGE
 * and no inline data.  Then registers NMR MRs, one 4 KiB page each (of
 * one anonymous mapping, faulted in before the clock starts), with local
 * write, remote read and remote write access.  Timed separately:
 * create, each of the modifies RESET->INIT, INIT->RTR, RTR->RTS, MR
 * registration, and at the end MR deregistration and QP destruction.
 *
 * Kernel memory is read from /proc/meminfo before and after creating the
 * QPs (to RTS) and before and after registering the MRs: "kmem" is
 * Slab + VmallocUsed + Percpu + KernelStack (slab objects, vmalloc'd
 * rings and page arrays, per-CPU data, thread stacks); "memfree" is the
 * drop of MemFree, which also counts pages the kernel takes directly
 * (page tables of the ring mappings, ...) but not the MR pages
 * themselves, faulted in beforehand.  Whatever else the guest does at
 * the time is counted too: run it on an idle system.  "maps_per_qp" is
 * the memory mappings (VMAs) a QP adds to the process: vm.max_map_count
 * (65530 by default) caps their number.
 *
 * With --hold, everything stays in place after the registrations until
 * stdin reaches end of file or SIGINT/SIGTERM arrives ("held" is printed
 * when that wait begins), so that other programs can measure the device
 * while the objects exist.
 *
 * Output: one "KEY VALUE UNIT" line per figure (comment lines start
 * with '#'), e.g. "qp_create 812.3 per_s"; for each timed loop also its
 * seconds (KEY_secs) and the rate of its last tenth of objects over
 * that of its first (KEY_tail, 1.00 when an object costs the same
 * however many exist).  Exit status 0, or 1 with what failed and its
 * errno on stderr.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#define PORT		1
#define QP_DEPTH	16
#define CQ_DEPTH	64
#define PAGE		4096

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static union ibv_gid gid;
static int gid_index;

static struct ibv_qp **qps;
static struct ibv_mr **mrs;
static char *pages;
static int nqp, nmr;

static volatile sig_atomic_t stop;

static void die(const char *what, int i)
{
	int e = errno;

	if (i >= 0)
		fprintf(stderr, "scale_bench: %s (object %d): %s (errno %d)\n",
			what, i, strerror(e), e);
	else
		fprintf(stderr, "scale_bench: %s: %s (errno %d)\n", what,
			strerror(e), e);
	exit(1);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* the kernel memory figures of /proc/meminfo, in KiB */
struct mem {
	long kmem;		/* Slab + VmallocUsed + Percpu + KernelStack */
	long memfree;
};

static void read_mem(struct mem *m)
{
	char key[64];
	long v;
	FILE *f;

	memset(m, 0, sizeof(*m));
	f = fopen("/proc/meminfo", "r");
	if (!f)
		die("open /proc/meminfo", -1);
	while (fscanf(f, "%63[^:]: %ld kB\n", key, &v) == 2) {
		if (!strcmp(key, "Slab") || !strcmp(key, "VmallocUsed") ||
		    !strcmp(key, "Percpu") || !strcmp(key, "KernelStack"))
			m->kmem += v;
		else if (!strcmp(key, "MemFree"))
			m->memfree = v;
	}
	fclose(f);
}

/* the process's memory mappings: each takes one of vm.max_map_count */
static long count_maps(void)
{
	long n = 0;
	FILE *f;
	int c;

	f = fopen("/proc/self/maps", "r");
	if (!f)
		die("open /proc/self/maps", -1);
	while ((c = getc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

static void print_mem(const char *what, const struct mem *a,
		      const struct mem *b, int n)
{
	printf("kmem_per_%s %.0f bytes\n", what,
	       (b->kmem - a->kmem) * 1024.0 / n);
	printf("memfree_per_%s %.0f bytes\n", what,
	       (a->memfree - b->memfree) * 1024.0 / n);
}

/*
 * A timed loop over n objects: its rate, and the rate of its last tenth
 * over that of its first, which shows whether an object costs more the
 * more of them exist (1.00: no).
 */
struct timing {
	const char *name;
	int n;
	double start, head_end, tail_start;
};

static void timing_start(struct timing *t, const char *name, int n)
{
	t->name = name;
	t->n = n;
	t->head_end = t->tail_start = 0;
	t->start = now();
}

/* before object i */
static void timing_step(struct timing *t, int i)
{
	if (i == t->n / 10)
		t->head_end = now();
	if (i == t->n - t->n / 10)
		t->tail_start = now();
}

static void timing_end(struct timing *t)
{
	double end = now();

	printf("%s %.1f per_s\n", t->name, t->n / (end - t->start));
	printf("%s_secs %.3f s\n", t->name, end - t->start);
	if (t->n >= 10 && end > t->tail_start)
		printf("%s_tail %.2f of_head\n", t->name,
		       (t->head_end - t->start) / (end - t->tail_start));
	fflush(stdout);
}

/* the first RoCEv2 GID that holds an IPv4 address */
static void find_gid(void)
{
	static const uint8_t v4[12] = { [10] = 0xff, [11] = 0xff };
	struct ibv_port_attr pa;
	int i;

	if (ibv_query_port(ctx, PORT, &pa))
		die("ibv_query_port", -1);
	for (i = 0; i < pa.gid_tbl_len; i++) {
		struct ibv_gid_entry e;

		if (ibv_query_gid_ex(ctx, PORT, i, &e, 0))
			continue;
		if (e.gid_type == IBV_GID_TYPE_ROCE_V2 &&
		    !memcmp(e.gid.raw, v4, sizeof(v4))) {
			gid = e.gid;
			gid_index = i;
			return;
		}
	}
	errno = ENOENT;
	die("no IPv4 RoCEv2 GID on port 1", -1);
}

static void open_device(const char *name)
{
	struct ibv_device **list;
	struct ibv_device_attr attr;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list)
		die("ibv_get_device_list", -1);
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			break;
	if (i == n) {
		errno = ENODEV;
		die(name, -1);
	}
	ctx = ibv_open_device(list[i]);
	if (!ctx)
		die("ibv_open_device", -1);
	ibv_free_device_list(list);

	if (ibv_query_device(ctx, &attr))
		die("ibv_query_device", -1);
	printf("# %s: max_qp %d max_mr %d max_cq %d\n", name, attr.max_qp,
	       attr.max_mr, attr.max_cq);
	if (nqp > attr.max_qp || nmr > attr.max_mr) {
		fprintf(stderr, "scale_bench: %s allows %d QPs and %d MRs\n",
			name, attr.max_qp, attr.max_mr);
		exit(1);
	}
	find_gid();
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		die("ibv_alloc_pd", -1);
	cq = ibv_create_cq(ctx, CQ_DEPTH, NULL, NULL, 0);
	if (!cq)
		die("ibv_create_cq", -1);
}

static void create_qps(void)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = QP_DEPTH, .max_recv_wr = QP_DEPTH,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct timing t;
	int i;

	timing_start(&t, "qp_create", nqp);
	for (i = 0; i < nqp; i++) {
		timing_step(&t, i);
		qps[i] = ibv_create_qp(pd, &a);
		if (!qps[i])
			die("ibv_create_qp", i);
	}
	timing_end(&t);
}

static void to_init(void)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = PORT,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ,
	};
	struct timing t;
	int i;

	timing_start(&t, "qp_init", nqp);
	for (i = 0; i < nqp; i++) {
		timing_step(&t, i);
		if (ibv_modify_qp(qps[i], &a, IBV_QP_STATE |
				  IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				  IBV_QP_ACCESS_FLAGS))
			die("modify to INIT", i);
	}
	timing_end(&t);
}

/* QP 2k and 2k+1 are each other's peer */
static void to_rtr(void)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = IBV_MTU_1024,
		.max_dest_rd_atomic = 1,
		.min_rnr_timer = 12,
		.ah_attr = {
			.is_global = 1,
			.port_num = PORT,
			.grh = { .dgid = gid, .sgid_index = gid_index,
				 .hop_limit = 64 },
		},
	};
	struct timing t;
	int i;

	timing_start(&t, "qp_rtr", nqp);
	for (i = 0; i < nqp; i++) {
		timing_step(&t, i);
		a.dest_qp_num = qps[i ^ 1]->qp_num;
		if (ibv_modify_qp(qps[i], &a, IBV_QP_STATE | IBV_QP_AV |
				  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				  IBV_QP_MIN_RNR_TIMER))
			die("modify to RTR", i);
	}
	timing_end(&t);
}

static void to_rts(void)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTS,
		.timeout = 14,
		.retry_cnt = 7,
		.rnr_retry = 7,
		.max_rd_atomic = 1,
	};
	struct timing t;
	int i;

	timing_start(&t, "qp_rts", nqp);
	for (i = 0; i < nqp; i++) {
		timing_step(&t, i);
		if (ibv_modify_qp(qps[i], &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
				  IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				  IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC))
			die("modify to RTS", i);
	}
	timing_end(&t);
}

static void reg_mrs(void)
{
	struct timing t;
	int i;

	timing_start(&t, "mr_reg", nmr);
	for (i = 0; i < nmr; i++) {
		timing_step(&t, i);
		mrs[i] = ibv_reg_mr(pd, pages + (size_t)i * PAGE, PAGE,
				    IBV_ACCESS_LOCAL_WRITE |
				    IBV_ACCESS_REMOTE_READ |
				    IBV_ACCESS_REMOTE_WRITE);
		if (!mrs[i])
			die("ibv_reg_mr", i);
	}
	timing_end(&t);
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* until stdin ends or a signal: the read returns EINTR (no SA_RESTART) */
static void hold(void)
{
	struct sigaction sa = { .sa_handler = on_signal };
	char buf[256];

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL))
		die("sigaction", -1);
	printf("held\n");
	fflush(stdout);
	while (!stop) {
		ssize_t r = read(0, buf, sizeof(buf));

		if (r == 0 || (r < 0 && errno != EINTR))
			break;
	}
	printf("# released\n");
	fflush(stdout);
}

static void dereg_mrs(void)
{
	struct timing t;
	int i;

	timing_start(&t, "mr_dereg", nmr);
	for (i = 0; i < nmr; i++) {
		timing_step(&t, i);
		errno = ibv_dereg_mr(mrs[i]);
		if (errno)
			die("ibv_dereg_mr", i);
	}
	timing_end(&t);
}

static void destroy_qps(void)
{
	struct timing t;
	int i;

	timing_start(&t, "qp_destroy", nqp);
	for (i = 0; i < nqp; i++) {
		timing_step(&t, i);
		errno = ibv_destroy_qp(qps[i]);
		if (errno)
			die("ibv_destroy_qp", i);
	}
	timing_end(&t);
}

int main(int argc, char **argv)
{
	struct mem m0, m1, m2, m3;
	bool do_hold = false;
	long maps;
	double t0;
	size_t i;

	if (argc == 5 && !strcmp(argv[4], "--hold"))
		do_hold = true;
	else if (argc != 4)
		goto usage;
	nqp = atoi(argv[2]);
	nmr = atoi(argv[3]);
	if (nqp < 2 || nqp % 2 || nmr < 1)
		goto usage;
	setvbuf(stdout, NULL, _IOLBF, 0);

	qps = calloc(nqp, sizeof(*qps));
	mrs = calloc(nmr, sizeof(*mrs));
	if (!qps || !mrs)
		die("calloc", -1);
	pages = mmap(NULL, (size_t)nmr * PAGE, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pages == MAP_FAILED)
		die("mmap", -1);
	for (i = 0; i < (size_t)nmr; i++)
		pages[i * PAGE] = 1;

	t0 = now();
	open_device(argv[1]);
	printf("device %s -\n", argv[1]);
	printf("qps %d QPs\n", nqp);
	printf("mrs %d MRs\n", nmr);

	read_mem(&m0);
	maps = count_maps();
	create_qps();
	to_init();
	to_rtr();
	to_rts();
	read_mem(&m1);
	print_mem("qp", &m0, &m1, nqp);
	printf("maps_per_qp %.2f mappings\n", (double)(count_maps() - maps) / nqp);

	reg_mrs();
	read_mem(&m2);
	print_mem("mr", &m1, &m2, nmr);

	if (do_hold)
		hold();

	dereg_mrs();
	destroy_qps();
	read_mem(&m3);
	/* what is not back once everything is gone (RCU may still hold some) */
	printf("kmem_left %ld KiB\n", m3.kmem - m0.kmem);

	if (ibv_destroy_cq(cq))
		die("ibv_destroy_cq", -1);
	if (ibv_dealloc_pd(pd))
		die("ibv_dealloc_pd", -1);
	if (ibv_close_device(ctx))
		die("ibv_close_device", -1);
	printf("total_secs %.3f s\n", now() - t0);
	return 0;

usage:
	fprintf(stderr, "usage: scale_bench DEVICE NQP NMR [--hold] (NQP even, >= 2; NMR >= 1)\n");
	return 2;
}
