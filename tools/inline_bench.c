// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * inline_bench: small-SEND latency and message rate on one rxe2 device
 * (two RC QPs over its IPv4 RoCEv2 GID, loopback), with and without
 * inline-receive (rxe2dv_create_qp(3)); and the message rate of QPs and
 * CQs made on a parent domain with a thread domain (no provider locks)
 * against ordinary ones.  perftest can create neither, hence this tool;
 * `make bench` runs it (tools/bench).
 *
 *   inline_bench DEVICE [ITERS] [MESSAGES] [SIZE...]
 *
 * Latency: one thread ping-pongs a SEND between the QPs ITERS times and
 * reports half the mean round trip.  Rate: the sender keeps up to 64
 * SENDs outstanding, the receiver keeps 128 receives posted and the
 * sender never gets more than 128 SENDs ahead of the receiver's polls
 * (no RNR NAKs), MESSAGES messages are timed from the first post to the
 * last receive completion.
 * Each figure is the median of 5 runs, off and on alternating.  Prints
 * markdown table rows; asserts nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>
#include <infiniband/rxe2dv.h>

#define RQ_DEPTH 128
#define SQ_WINDOW 64
#define BUF 4096

struct end {
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	char *buf;
};

/* what a run's QPs are */
enum mode {
	PLAIN,
	INLINE_RECV,		/* rxe2dv_create_qp with inline-receive */
	THREAD_DOMAIN,		/* QP and CQs on a parent domain with a TD */
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_pd *pdom;	/* pd with a thread domain */
static struct ibv_td *td;
static union ibv_gid gid;
static int gidx = -1;

static void die(const char *what)
{
	fprintf(stderr, "inline_bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void find_gid(void)
{
	struct ibv_port_attr pa;
	int i;

	if (ibv_query_port(ctx, 1, &pa))
		die("ibv_query_port");
	for (i = 0; i < pa.gid_tbl_len; i++) {
		union ibv_gid g;
		static const uint8_t v4[12] = { [10] = 0xff, [11] = 0xff };

		if (ibv_query_gid(ctx, 1, i, &g))
			continue;
		if (!memcmp(g.raw, v4, 12)) {
			gid = g;
			gidx = i;
			return;
		}
	}
	errno = ENOENT;
	die("no IPv4 GID");
}

static struct ibv_cq *make_cq(int cqe, enum mode m)
{
	struct ibv_cq_init_attr_ex a = {
		.cqe = cqe,
		.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD,
		.parent_domain = pdom,
	};
	struct ibv_cq_ex *cq;

	if (m != THREAD_DOMAIN)
		return ibv_create_cq(ctx, cqe, NULL, NULL, 0);
	cq = ibv_create_cq_ex(ctx, &a);
	return cq ? ibv_cq_ex_to_cq(cq) : NULL;
}

static void make_end(struct end *e, enum mode m)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 2 * SQ_WINDOW,
			 .max_recv_wr = RQ_DEPTH,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = pd,
	};
	struct rxe2dv_qp_init_attr dv = {
		.comp_mask = RXE2DV_QP_INIT_ATTR_MASK_INLINE_RECV,
		.max_inl_recv = 64,
	};

	e->scq = make_cq(4 * SQ_WINDOW, m);
	e->rcq = make_cq(2 * RQ_DEPTH, m);
	if (!e->scq || !e->rcq)
		die("ibv_create_cq");
	a.send_cq = e->scq;
	a.recv_cq = e->rcq;
	if (m == THREAD_DOMAIN)
		a.pd = pdom;
	e->qp = m == INLINE_RECV ? rxe2dv_create_qp(ctx, &a, &dv, sizeof(dv)) :
				   ibv_create_qp_ex(ctx, &a);
	if (!e->qp)
		die("create QP");
	e->buf = calloc(1, BUF * 2);
	e->mr = ibv_reg_mr(pd, e->buf, BUF * 2, IBV_ACCESS_LOCAL_WRITE);
	if (!e->buf || !e->mr)
		die("ibv_reg_mr");
}

static void connect_to(struct end *e, uint32_t dqpn)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
	};

	if (ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		die("INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dqpn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.dgid = gid;
	a.ah_attr.grh.sgid_index = gidx;
	a.ah_attr.grh.hop_limit = 64;
	if (ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_AV |
			  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		die("RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			  IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			  IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC))
		die("RTS");
}

static void free_end(struct end *e)
{
	ibv_destroy_qp(e->qp);
	ibv_destroy_cq(e->scq);
	ibv_destroy_cq(e->rcq);
	ibv_dereg_mr(e->mr);
	free(e->buf);
}

static void post_recv(struct end *e)
{
	struct ibv_sge sge = { .addr = (uintptr_t)e->buf + BUF,
			       .length = BUF, .lkey = e->mr->lkey };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;

	if (ibv_post_recv(e->qp, &wr, &bad))
		die("ibv_post_recv");
}

static void post_send(struct end *e, uint32_t size, bool signaled)
{
	struct ibv_sge sge = { .addr = (uintptr_t)e->buf, .length = size,
			       .lkey = e->mr->lkey };
	struct ibv_send_wr wr = {
		.opcode = IBV_WR_SEND,
		.send_flags = signaled ? IBV_SEND_SIGNALED : 0,
		.sg_list = &sge,
		.num_sge = 1,
	}, *bad;

	if (ibv_post_send(e->qp, &wr, &bad))
		die("ibv_post_send");
}

#define POLL_MAX 32

/* One poll of up to max (<= POLL_MAX) completions, all successful */
static int poll_once(struct ibv_cq *cq, int max)
{
	struct ibv_wc wc[POLL_MAX];
	int i, r = ibv_poll_cq(cq, max, wc);

	if (r < 0)
		die("ibv_poll_cq");
	for (i = 0; i < r; i++)
		if (wc[i].status != IBV_WC_SUCCESS) {
			errno = EIO;
			die(ibv_wc_status_str(wc[i].status));
		}
	return r;
}

/* Polls cq until n completions, all successful; spins (a benchmark) */
static void poll_n(struct ibv_cq *cq, int n)
{
	double end = now_us() + 10e6;

	while (n > 0) {
		int r = poll_once(cq, n < 16 ? n : 16);

		n -= r;
		if (!r && now_us() > end) {
			errno = ETIMEDOUT;
			die("completion");
		}
	}
}

static void setup(struct end *a, struct end *b, enum mode m)
{
	int i;

	make_end(a, m);
	make_end(b, m);
	connect_to(a, b->qp->qp_num);
	connect_to(b, a->qp->qp_num);
	for (i = 0; i < RQ_DEPTH; i++) {
		post_recv(a);
		post_recv(b);
	}
}

/* half the mean round trip, in microseconds */
static double latency(uint32_t size, int iters, enum mode m)
{
	struct end a, b;
	double t0 = 0;
	int i;

	setup(&a, &b, m);
	for (i = -iters / 10; i < iters; i++) {
		/* one signalled send in 16 keeps the SQ and the CQ short */
		bool sig = (i & 15) == 15;

		if (i == 0)
			t0 = now_us();
		post_send(&a, size, sig);
		poll_n(b.rcq, 1);
		post_recv(&b);
		post_send(&b, size, sig);
		poll_n(a.rcq, 1);
		post_recv(&a);
		if (sig) {
			poll_n(a.scq, 1);
			poll_n(b.scq, 1);
		}
	}
	t0 = (now_us() - t0) / iters / 2;
	free_end(&a);
	free_end(&b);
	return t0;
}

/* messages per second, in thousands */
static double rate(uint32_t size, int msgs, enum mode m)
{
	struct end a, b;
	int sent = 0, got = 0, outstanding = 0;
	double t0;

	setup(&a, &b, m);
	t0 = now_us();
	while (got < msgs) {
		int r;

		/*
		 * A SEND is ACKed once its receive WQE is taken, before the
		 * receiver has polled and reposted it: counting the window by
		 * send completions alone lets the sender run out the RQ, and
		 * the RNR NAKs and their timer, not the device's per-message
		 * work, then set the rate.  So never more than RQ_DEPTH SENDs
		 * beyond what the receiver has reposted.
		 */
		while (sent < msgs && outstanding < SQ_WINDOW &&
		       sent - got < RQ_DEPTH) {
			/* every 16th is signalled: the window is counted by them */
			post_send(&a, size, (sent & 15) == 15 || sent == msgs - 1);
			sent++;
			outstanding++;
		}
		for (r = poll_once(a.scq, POLL_MAX); r > 0; r--)
			outstanding -= outstanding < 16 ? outstanding : 16;
		r = poll_once(b.rcq, POLL_MAX);
		for (int i = 0; i < r; i++)
			post_recv(&b);
		got += r;
	}
	t0 = msgs / (now_us() - t0) * 1e3;
	free_end(&a);
	free_end(&b);
	return t0;
}

/*
 * Each number is the median of ROUNDS runs, off and on alternating, so
 * that a burst of load on the (shared, emulated) machine hits both.
 */
#define ROUNDS 5

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v)
{
	qsort(v, ROUNDS, sizeof(*v), cmp_double);
	return v[ROUNDS / 2];
}

/*
 * One table row: ROUNDS runs with ordinary QPs ("off") and with mode m
 * ("on"), alternating so that neither gets the better stretch of a
 * shared host; the medians and their ratio.
 */
static void row(const char *what, const char *unit, int decimals,
		double (*measure)(uint32_t size, int count, enum mode m),
		enum mode m, uint32_t size, int count)
{
	double off[ROUNDS], on[ROUNDS];
	int r;

	for (r = 0; r < ROUNDS; r++) {
		off[r] = measure(size, count, PLAIN);
		on[r] = measure(size, count, m);
	}
	printf("| %s | %u | %s | %.*f | %.*f | %.2f |\n", what, size, unit,
	       decimals, median(off), decimals, median(on),
	       median(on) / median(off));
}

int main(int argc, char **argv)
{
	static const uint32_t def_sizes[] = { 8, 32, 64 };
	struct ibv_device **list;
	int iters, msgs, i, n, nsizes;
	uint32_t sizes[16];

	if (argc < 2) {
		fprintf(stderr, "usage: inline_bench DEVICE [ITERS] [MESSAGES] [SIZE...]\n");
		return 2;
	}
	iters = argc > 2 ? atoi(argv[2]) : 2000;
	msgs = argc > 3 ? atoi(argv[3]) : 20000;
	nsizes = 0;
	for (i = 4; i < argc && nsizes < 16; i++)
		sizes[nsizes++] = strtoul(argv[i], NULL, 0);
	if (!nsizes)
		for (i = 0; i < 3; i++)
			sizes[nsizes++] = def_sizes[i];
	for (i = 0; i < nsizes; i++)
		if (sizes[i] > BUF)
			sizes[i] = BUF;

	list = ibv_get_device_list(&n);
	if (!list)
		die("ibv_get_device_list");
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), argv[1]))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!ctx)
		die(argv[1]);
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		die("ibv_alloc_pd");
	td = ibv_alloc_td(ctx, &(struct ibv_td_init_attr){ 0 });
	pdom = td ? ibv_alloc_parent_domain(ctx,
			&(struct ibv_parent_domain_init_attr){ .pd = pd,
							       .td = td }) :
		    NULL;
	if (!pdom)
		die("thread domain");
	find_gid();

	for (i = 0; i < nsizes; i++)
		row("send latency (half RTT)", "usec", 2, latency, INLINE_RECV,
		    sizes[i], iters);
	for (i = 0; i < nsizes; i++)
		row("send message rate", "kmsg/s", 1, rate, INLINE_RECV,
		    sizes[i], msgs);
	/* "on" here: QP and CQs on the thread domain, no inline-receive */
	row("send message rate, thread domain", "kmsg/s", 1, rate,
	    THREAD_DOMAIN, sizes[0], msgs);
	ibv_dealloc_pd(pdom);
	ibv_dealloc_td(td);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return 0;
}
