// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: processes scribbling over every mapped ring page while posting, polling and modifying QPs, some SIGKILLed: the kernel survives, a bystander RC pair keeps working, resource counts return
 *
 * Hostile shared queues.  Processes scribble random bytes and boundary
 * values over every page they have mapped from the device (ring headers
 * with their producer and consumer counters, WQE slots, CQEs) while their
 * threads post sends and receives, poll CQs, arm them, ring doorbells and
 * move QPs through their states.  Some are killed with SIGKILL midway,
 * the others tear down what they built.
 *
 * What must hold: the kernel survives (tools/vm fails the run on any
 * splat), a bystander's RC pair in this process carries 4 KiB SENDs byte
 * for byte before, during and after, and the device's resource counts
 * return to what they were.  A scribbling process may itself crash: its
 * own library reads what it scribbled; that is its business, and how it
 * ended is printed.  The seed is printed; RXE2_SEED replays it.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dp.h"
#include "tap.h"
#include "util.h"

#define NPROC		4
#define NKILLED		2	/* the first NKILLED children get SIGKILL */
#define RUN_MS		4000
#define MSG		4096

/* ---- a child: build, scribble, use, tear down ------------------------- */

static uint64_t rng = 1;

static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dULL;
}

struct region {
	uint8_t *addr;
	size_t len;
};

/* every writable mapping of a uverbs file in this process */
static int device_regions(struct region *r, int max)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0;

	if (!f)
		return 0;
	while (n < max && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char perms[8];

		if (!strstr(line, "/dev/infiniband/uverbs") ||
		    sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3 ||
		    perms[1] != 'w')
			continue;
		r[n].addr = (uint8_t *)lo;
		r[n].len = hi - lo;
		n++;
	}
	fclose(f);
	return n;
}

static uint32_t boundary(void)
{
	static const uint32_t v[] = {
		0, 1, 2, 3, 63, 64, 65, 127, 128, 255, 256, 4095, 4096,
		0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff, 0xdeadbeef,
	};

	return v[rnd() % (sizeof(v) / sizeof(v[0]))];
}

struct child {
	struct dp_dev d;
	struct dp_qp a, b;	/* RC, connected to each other */
	struct dp_qp u, u2;	/* UD; u sends to itself */
	struct ibv_srq *srq;
	struct ibv_qp *sq;	/* RC on the SRQ, connected to itself */
	struct ibv_cq *scq;
	struct ibv_mr *mr;
	uint8_t *buf;
	struct ibv_ah *ah;
	atomic_bool stop;
	/* what it saw, reported to the parent */
	struct report {
		int regions;		/* writable device mappings */
		int fatal;		/* QP/CQ/SRQ error events */
		long scribbles;
		long error_wcs;		/* completions other than SUCCESS */
	} rep;
};

static void scribble_once(const struct region *r, int n)
{
	const struct region *x;
	size_t off;

	if (!n)
		return;
	x = &r[rnd() % (unsigned int)n];
	off = (rnd() % (x->len / 4)) * 4;
	switch (rnd() % 4) {
	case 0: {	/* a boundary value in an aligned word */
		uint32_t v = boundary();

		memcpy(x->addr + off, &v, 4);
		break;
	}
	case 1: {	/* random bytes, up to one slot */
		size_t len = 1 + rnd() % 64;

		for (size_t i = 0; i < len && off + i < x->len; i++)
			x->addr[off + i] = (uint8_t)rnd();
		break;
	}
	case 2: {	/* a counter: the first words of the ring's header */
		uint32_t v = rnd() % 2 ? boundary() : (uint32_t)rnd();

		off = (rnd() % 3) * 64;
		memcpy(x->addr + off, &v, 4);
		break;
	}
	default: {	/* a whole page */
		size_t p = (rnd() % (x->len / 4096)) * 4096;

		memset(x->addr + p, (int)(rnd() & 0xff), 4096);
	}
	}
}

static void *scribbler(void *arg)
{
	struct child *c = arg;
	struct region r[64];
	int n = 0;

	for (unsigned int i = 0; !atomic_load(&c->stop); i++) {
		if (i % 64 == 0)
			n = device_regions(r, 64);
		if (n > c->rep.regions)
			c->rep.regions = n;
		scribble_once(r, n);
		c->rep.scribbles++;
		if (i % 16 == 0)
			usleep(500);
	}
	return NULL;
}

static void post_some(struct child *c)
{
	struct ibv_sge sge = { .addr = (uintptr_t)c->buf, .length = 256,
			       .lkey = c->mr->lkey };
	struct ibv_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 }, *rbad;
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_SEND, IBV_WR_RDMA_WRITE, IBV_WR_RDMA_READ,
		IBV_WR_SEND_WITH_IMM, IBV_WR_ATOMIC_FETCH_AND_ADD,
	};

	wr.opcode = ops[rnd() % (sizeof(ops) / sizeof(ops[0]))];
	wr.wr.rdma.remote_addr = (uintptr_t)c->buf + (rnd() % 2) * 4096;
	wr.wr.rdma.rkey = c->mr->rkey;
	if (wr.opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		sge.length = 8;
		wr.wr.atomic.remote_addr = (uintptr_t)c->buf + 8192;
		wr.wr.atomic.rkey = c->mr->rkey;
		wr.wr.atomic.compare_add = 1;
	}
	ibv_post_recv(c->b.qp, &rwr, &rbad);
	ibv_post_recv(c->a.qp, &rwr, &rbad);
	ibv_post_send(c->a.qp, &wr, &bad);
	ibv_post_srq_recv(c->srq, &rwr, &rbad);
	wr.opcode = IBV_WR_SEND;
	sge.length = 64;
	ibv_post_send(c->sq, &wr, &bad);
	ibv_post_recv(c->u.qp, &rwr, &rbad);
	wr.wr.ud.ah = c->ah;
	wr.wr.ud.remote_qpn = c->u.qp->qp_num;
	wr.wr.ud.remote_qkey = 0x11111111;
	ibv_post_send(c->u.qp, &wr, &bad);
}

static void *poster(void *arg)
{
	struct child *c = arg;

	while (!atomic_load(&c->stop)) {
		post_some(c);
		usleep(200);
	}
	return NULL;
}

static void *poller(void *arg)
{
	struct child *c = arg;
	struct ibv_cq *cqs[] = { c->a.scq, c->a.rcq, c->b.scq, c->b.rcq,
				 c->u.scq, c->u.rcq, c->scq };
	struct ibv_wc wc[16];

	for (unsigned int i = 0; !atomic_load(&c->stop); i++) {
		struct ibv_cq *cq = cqs[i % (sizeof(cqs) / sizeof(cqs[0]))];

		int got = ibv_poll_cq(cq, 16, wc);

		for (int k = 0; k < got; k++)
			c->rep.error_wcs += wc[k].status != IBV_WC_SUCCESS;
		if (i % 32 == 0)
			ibv_req_notify_cq(cq, (int)(rnd() % 2));
		if (i % 8 == 0)
			usleep(100);
	}
	return NULL;
}

/* a QP of the child through a random state change */
static void change_state(struct child *c)
{
	struct ibv_qp *qps[] = { c->a.qp, c->b.qp, c->u.qp, c->sq };
	struct ibv_qp *qp = qps[rnd() % 4];
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	struct dp_conn conn;

	dp_conn_default(&conn);
	switch (rnd() % 3) {
	case 0:
		ibv_modify_qp(qp, &attr, IBV_QP_STATE);
		break;
	case 1:
		attr.qp_state = IBV_QPS_RESET;
		ibv_modify_qp(qp, &attr, IBV_QP_STATE);
		break;
	default:	/* back to RTS, towards its peer */
		attr.qp_state = IBV_QPS_RESET;
		ibv_modify_qp(qp, &attr, IBV_QP_STATE);
		dp_connect(qp, &c->d, &c->d.gid,
			   qp == c->a.qp ? c->b.qp->qp_num :
			   qp == c->b.qp ? c->a.qp->qp_num : qp->qp_num, &conn);
	}
}

static int child_build(struct child *c)
{
	struct ibv_srq_init_attr si = { .attr = { .max_wr = 64, .max_sge = 1 } };
	struct dp_conn conn;

	dp_open(&c->d, test_dev_name());
	dp_conn_default(&conn);
	conn.qkey = 0x11111111;
	c->buf = dp_alloc(3 * 4096);
	c->mr = dp_reg(c->d.pd, c->buf, 3 * 4096, IBV_ACCESS_LOCAL_WRITE |
		       IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		       IBV_ACCESS_REMOTE_ATOMIC);
	if (!c->mr || dp_rc_pair(&c->d, &c->a, &c->b))
		return 1;
	if (dp_pair(&c->d, &c->d, IBV_QPT_UD, &dp_small_cap, &conn, &c->u,
		    &c->u2))
		return 1;
	c->srq = ibv_create_srq(c->d.pd, &si);
	c->scq = ibv_create_cq(c->d.ctx, 256, NULL, NULL, 0);
	if (!c->srq || !c->scq)
		return 1;
	c->sq = dp_create_qp(&c->d, IBV_QPT_RC, c->scq, c->scq, c->srq,
			     &dp_small_cap);
	c->ah = dp_loop_ah(&c->d);
	if (!c->sq || dp_connect(c->sq, &c->d, &c->d.gid, c->sq->qp_num, &conn))
		return 1;
	return 0;
}

static void child_teardown(struct child *c)
{
	ibv_destroy_qp(c->sq);
	ibv_destroy_srq(c->srq);
	ibv_destroy_cq(c->scq);
	ibv_destroy_ah(c->ah);
	dp_qp_free(&c->a);
	dp_qp_free(&c->b);
	dp_qp_free(&c->u);
	dp_qp_free(&c->u2);
	ibv_dereg_mr(c->mr);
	dp_close(&c->d);
}

/* the errors the kernel raised against this process's queues */
static void count_events(struct child *c)
{
	struct ibv_async_event ev;

	while (dp_async_event(&c->d, &ev, 0)) {
		switch (ev.event_type) {
		case IBV_EVENT_QP_FATAL:
		case IBV_EVENT_QP_REQ_ERR:
		case IBV_EVENT_QP_ACCESS_ERR:
		case IBV_EVENT_CQ_ERR:
		case IBV_EVENT_SRQ_ERR:
			c->rep.fatal++;
			break;
		default:
			break;
		}
		ibv_ack_async_event(&ev);
	}
}

static int child_main(uint64_t seed, int ready_fd, int go_fd, int report_fd)
{
	static struct child c;
	pthread_t t[3];
	uint64_t end;
	char ok;

	rng = seed ? seed : 1;
	ok = child_build(&c) ? 'n' : 'y';
	if (write(ready_fd, &ok, 1) != 1 || ok != 'y')
		return 1;
	/* the clock starts when the parent's bystander is ready too */
	if (read(go_fd, &ok, 1) != 1)
		return 1;
	pthread_create(&t[0], NULL, scribbler, &c);
	pthread_create(&t[1], NULL, poster, &c);
	pthread_create(&t[2], NULL, poller, &c);
	end = dp_now_ms() + RUN_MS;
	while (dp_now_ms() < end) {
		change_state(&c);
		count_events(&c);
		usleep(20000);
	}
	atomic_store(&c.stop, true);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	count_events(&c);
	child_teardown(&c);
	return write(report_fd, &c.rep, sizeof(c.rep)) != sizeof(c.rep);
}

/* ---- the parent: a bystander, the children, the verdict ---------------- */

struct bystander {
	struct dp_dev d;
	struct dp_qp a, b;
	uint8_t *src, *dst;
	struct ibv_mr *smr, *dmr;
	unsigned int sent;
};

/* one 4 KiB SEND a -> b, checked byte for byte */
static bool bystander_send(struct bystander *s)
{
	struct ibv_wc wc;
	uint32_t seed = 0x5eed0000u + s->sent++;

	dp_fill(s->src, MSG, seed);
	memset(s->dst, 0, MSG);
	if (dp_post_recv1(s->b.qp, 1, s->dst, MSG, s->dmr->lkey) ||
	    dp_post_send1(s->a.qp, 2, IBV_WR_SEND, s->src, MSG, s->smr->lkey,
			  0, 0, 0))
		return false;
	if (dp_poll(s->a.scq, &wc, 1, DP_WAIT_MS) != 1 ||
	    wc.status != IBV_WC_SUCCESS)
		return false;
	if (dp_poll(s->b.rcq, &wc, 1, DP_WAIT_MS) != 1 ||
	    wc.status != IBV_WC_SUCCESS || wc.byte_len != MSG)
		return false;
	return dp_verify(s->dst, MSG, seed) < 0;
}

static unsigned int bystander_run(struct bystander *s, unsigned int n)
{
	unsigned int good = 0;

	for (unsigned int i = 0; i < n; i++)
		good += bystander_send(s);
	return good;
}

static const char *how(int status, char *buf, size_t len)
{
	if (WIFEXITED(status))
		snprintf(buf, len, "exit %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "signal %d (%s)", WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
	else
		snprintf(buf, len, "status %#x", status);
	return buf;
}

static bool res_back(const char *dev, const char *want, char *got, size_t len)
{
	for (int i = 0; i < 100; i++) {
		res_snapshot(dev, got, len);
		if (!strcmp(got, want))
			return true;
		usleep(100000);
	}
	return false;
}

int main(void)
{
	const char *env = getenv("RXE2_SEED");
	uint64_t seed = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL);
	char before[512], after[512], hbuf[64];
	struct bystander s = { 0 };
	int ready[2], report[2], go[2];
	struct report rep, sum = { 0 };
	pid_t pid[NPROC];
	unsigned int good, during = 0, during_ok = 0;
	int started = 0;
	uint64_t start, end;

	tap_plan(NPROC + 8);
	tap_diag("seed %llu (RXE2_SEED to replay)", (unsigned long long)seed);
	res_snapshot(test_dev_name(), before, sizeof(before));

	/* children first: no mapping of ours is inherited by them */
	if (pipe(ready) || pipe(report) || pipe(go))
		tap_bail("pipe: %s", strerror(errno));
	for (int i = 0; i < NPROC; i++) {
		pid[i] = fork();
		if (pid[i] < 0)
			tap_bail("fork: %s", strerror(errno));
		if (!pid[i]) {
			if (!freopen("/dev/null", "w", stdout))
				_exit(2);
			close(ready[0]);
			close(report[0]);
			close(go[1]);
			_exit(child_main(seed * 31 + (uint64_t)i, ready[1],
					 go[0], report[1]));
		}
	}
	close(ready[1]);
	close(report[1]);
	close(go[0]);
	for (int i = 0; i < NPROC; i++) {
		char ok = 0;

		if (read(ready[0], &ok, 1) == 1 && ok == 'y')
			started++;
	}
	tap_ret(started, NPROC, "%d processes built RC, UD and SRQ-fed QPs",
		NPROC);

	dp_open(&s.d, test_dev_name());
	s.src = dp_alloc(MSG);
	s.dst = dp_alloc(MSG);
	s.smr = dp_reg(s.d.pd, s.src, MSG, IBV_ACCESS_LOCAL_WRITE);
	s.dmr = dp_reg(s.d.pd, s.dst, MSG, IBV_ACCESS_LOCAL_WRITE);
	if (!s.smr || !s.dmr || dp_rc_pair(&s.d, &s.a, &s.b))
		tap_bail("bystander pair");
	tap_ret(bystander_run(&s, 10), 10,
		"bystander: 10 SENDs of 4 KiB byte for byte before");

	/* go; SIGKILL the first NKILLED at random moments while they scribble */
	if (write(go[1], "gggg", NPROC) != NPROC)
		tap_bail("go: %s", strerror(errno));
	/*
	 * Every kill falls 300 ms to RUN_MS / 2 + 300 ms after the go, well
	 * inside the children's RUN_MS: counted from the previous kill, the
	 * second could come after its child had ended by itself.
	 */
	start = dp_now_ms();
	end = start + RUN_MS + 2000;
	for (int i = 0; i < NKILLED; i++) {
		uint64_t at;

		rng = seed + (uint64_t)i;
		at = start + 300 + rnd() % (RUN_MS / 2);
		while (dp_now_ms() < at) {
			during++;
			during_ok += bystander_send(&s);
		}
		kill(pid[i], SIGKILL);
	}
	while (dp_now_ms() < end) {
		during++;
		during_ok += bystander_send(&s);
	}
	tap_ok(during && during_ok == during,
	       "bystander: %u of %u SENDs byte for byte while they scribbled",
	       during_ok, during);

	for (int i = 0; i < NPROC; i++) {
		int st = 0;
		bool in_time = false;

		for (int k = 0; k < 300; k++) {
			if (waitpid(pid[i], &st, WNOHANG) == pid[i]) {
				in_time = true;
				break;
			}
			usleep(100000);
		}
		if (!in_time) {
			kill(pid[i], SIGKILL);
			waitpid(pid[i], &st, 0);
		}
		if (i < NKILLED)
			tap_ok(in_time && WIFSIGNALED(st) &&
			       WTERMSIG(st) == SIGKILL,
			       "process %d: killed mid-way (%s)", i,
			       how(st, hbuf, sizeof(hbuf)));
		else
			tap_ok(in_time, "process %d: ended within 30 s (%s)", i,
			       how(st, hbuf, sizeof(hbuf)));
	}

	/* the survivors' reports: the scribbles reached the kernel */
	while (read(report[0], &rep, sizeof(rep)) == sizeof(rep)) {
		tap_diag("a survivor: %d device mappings, %ld scribbles, %d error events, %ld error completions",
			 rep.regions, rep.scribbles, rep.fatal, rep.error_wcs);
		sum.regions += rep.regions > 0;
		sum.fatal += rep.fatal;
	}
	tap_ok(sum.regions == NPROC - NKILLED && sum.fatal > 0,
	       "the survivors scribbled on their mappings and the kernel raised %d error events against their queues",
	       sum.fatal);

	good = bystander_run(&s, 50);
	tap_ret(good, 50, "bystander: 50 SENDs byte for byte after");
	tap_ret(qp_state(s.a.qp), IBV_QPS_RTS, "bystander requester in RTS");
	tap_ret(qp_state(s.b.qp), IBV_QPS_RTS, "bystander responder in RTS");
	dp_qp_free(&s.a);
	dp_qp_free(&s.b);
	ibv_dereg_mr(s.smr);
	ibv_dereg_mr(s.dmr);
	dp_close(&s.d);

	tap_ok(res_back(test_dev_name(), before, after, sizeof(after)),
	       "resources back to before: '%s' (now '%s')", before, after);
	return tap_done();
}
