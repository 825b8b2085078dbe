// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: ibv_import_device/pd/mr and unimport: the same process (a dup()ed fd), a forked child and an exec()ed process (fd by SCM_RIGHTS), each moving data through the imported objects and keys
 *
 * ibv_import_device, ibv_import_pd, ibv_import_mr and their unimport
 * calls, in the same process (a dup()ed command fd) and in two other
 * processes: a forked child importing its inherited copy of the fd, and
 * this program exec()ed again, which shares nothing with us but a unix
 * socket and gets the fd over it (SCM_RIGHTS).  ib_uverbs refuses
 * write() to both (their credentials are not the opener's), so every
 * command has to reach it through the ioctl entry: libibverbs' own and
 * rxe2's doorbell.
 *
 * The imported MR has the original's keys and length.  In the same
 * process, QPs of the imported context on the imported PD carry RDMA
 * WRITEs into the original MR and out of it, byte for byte.  Each other
 * process registers an MR of its own on the imported PD, makes a
 * connected RC pair (modify_qp to RTS), uses other write commands (PD,
 * SRQ, AH, query_qp, req_notify_cq), READs the exporter's data through
 * the imported rkey, SENDs it through the imported lkey, WRITEs into the
 * exporter's MR through the imported rkey, checks what it received byte
 * for byte, destroys everything and reports each step; the exporter
 * checks what was written.  Afterwards the original process still posts
 * on its own context, and after unimport the original objects are
 * destroyed normally.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/rxe2dv.h>

#include "dp.h"
#include "tap.h"
#include "util.h"

#define LEN 8192
#define HALF (LEN / 2)
#define PLAN (10 + 2 * (IM_NUM + 1) + 4)

/* how the exec()ed copy of this program knows it is the importer */
#define IMPORTER_ARG "--importer"

/* exporter to importer: what to import, and the patterns to move */
struct msg {
	uint32_t pd_handle;
	uint32_t mr_handle;
	uint64_t addr;		/* of the MR, in the exporter */
	uint64_t length;
	uint32_t lkey;
	uint32_t rkey;
	uint32_t src_seed;	/* the MR's first half holds this pattern */
	uint32_t dst_seed;	/* to be written into its second half */
};

/*
 * importer to exporter: one result per step, -1 when the step was not
 * reached, 0 when it passed, else an errno, IM_WC_BAD + a completion
 * status, IM_WC_NONE, or 1 + the index of the first wrong byte.
 */
enum {
	IM_IMPORT,	/* device, PD, MR and its keys and length */
	IM_SETUP,	/* own MR, CQs, RC pair at RTS */
	IM_VERBS,	/* PD, SRQ, AH, query_qp, req_notify_cq */
	IM_READ,
	IM_READ_DATA,
	IM_SEND,
	IM_SEND_DATA,
	IM_WRITE,
	IM_DESTROY,	/* everything destroyed, unimported, closed */
	IM_NUM
};

#define IM_WC_BAD 1000
#define IM_WC_NONE 999

struct report {
	int32_t res[IM_NUM];
};

/* a dp_dev over an imported context and PD */
static int dev_from(struct dp_dev *d, const char *name,
		    struct ibv_context *ctx, struct ibv_pd *pd)
{
	memset(d, 0, sizeof(*d));
	d->name = name;
	d->rxe2 = true;
	d->ctx = ctx;
	d->pd = pd;
	if (ibv_query_device(ctx, &d->attr) || dp_query_port(d))
		return -1;
	d->gidx = find_ipv4_gid(ctx, &d->gid);
	return d->gidx < 0 ? -1 : 0;
}

/* WRITE len bytes; 0 or the completion's status (+100) or -1 */
static int write1(struct dp_qp *a, void *laddr, uint32_t len, uint32_t lkey,
		  uint64_t raddr, uint32_t rkey)
{
	struct ibv_wc wc;

	if (dp_post_send1(a->qp, 1, IBV_WR_RDMA_WRITE, laddr, len, lkey,
			  raddr, rkey, 0))
		return -1;
	if (dp_poll(a->scq, &wc, 1, DP_WAIT_MS) != 1)
		return -1;
	return wc.status == IBV_WC_SUCCESS ? 0 : 100 + wc.status;
}

static void test_same_process(struct dp_dev *d, struct ibv_mr *mr)
{
	struct ibv_context *ctx2;
	struct ibv_pd *pd2;
	struct ibv_mr *mr2, *smr;
	struct rxe2dv_device_attr attr;
	struct dp_dev d2;
	struct dp_qp a, b;
	uint8_t *src;
	int fd;

	fd = dup(d->ctx->cmd_fd);
	ctx2 = ibv_import_device(fd);
	if (!tap_ok(ctx2, "ibv_import_device(dup of cmd_fd): %s",
		    ctx2 ? "ok" : strerror(errno)))
		tap_bail("no imported context");
	tap_ret(rxe2dv_query_device(ctx2, &attr, sizeof(attr)), EOPNOTSUPP,
		"rxe2dv_query_device on an imported context: EOPNOTSUPP");
	pd2 = ibv_import_pd(ctx2, d->pd->handle);
	if (!tap_ok(pd2 && pd2->handle == d->pd->handle,
		    "ibv_import_pd: %s", pd2 ? "ok" : strerror(errno)))
		tap_bail("no imported PD");
	mr2 = ibv_import_mr(pd2, mr->handle);
	if (!tap_ok(mr2, "ibv_import_mr: %s", mr2 ? "ok" : strerror(errno)))
		tap_bail("no imported MR");
	/*
	 * libibverbs 44's ibv_cmd_query_mr() does not ask for the address:
	 * the importer uses the one the exporter gives it.
	 */
	tap_ok(mr2->lkey == mr->lkey && mr2->rkey == mr->rkey &&
	       mr2->length == mr->length && mr2->pd == pd2 &&
	       mr2->context == ctx2 && mr2->handle == mr->handle,
	       "imported MR: keys 0x%x/0x%x, length %zu, handle, pd, context",
	       mr2->lkey, mr2->rkey, mr2->length);

	if (dev_from(&d2, d->name, ctx2, pd2) || dp_rc_pair(&d2, &a, &b))
		tap_bail("no QPs on the imported context");
	src = dp_alloc(LEN);
	smr = dp_reg(pd2, src, LEN, DP_ACCESS_ALL);
	dp_fill(src, LEN, 5);
	tap_ret(write1(&a, src, LEN, smr->lkey, (uintptr_t)mr->addr,
		       mr2->rkey), 0,
		"WRITE on imported context/PD into the imported MR's rkey");
	tap_ret(dp_verify(mr->addr, LEN, 5), -1,
		"... bytes exact in the original MR");
	memset(src, 0, LEN);
	tap_ret(write1(&a, mr->addr, LEN, mr2->lkey, (uintptr_t)src,
		       smr->rkey), 0, "WRITE from the imported MR's lkey");
	tap_ret(dp_verify(src, LEN, 5), -1, "... bytes exact");
	dp_qp_free(&a);
	dp_qp_free(&b);
	ibv_dereg_mr(smr);
	free(src);

	ibv_unimport_mr(mr2);
	ibv_unimport_pd(pd2);
	tap_ret(ibv_close_device(ctx2), 0, "unimport MR and PD, close");
}

/* ------------------------------------------------------------------ */
/* The importer: another process                                       */
/* ------------------------------------------------------------------ */

/* 0, IM_WC_BAD + status, or IM_WC_NONE for one completion on cq */
static int im_wait(struct ibv_cq *cq, uint64_t wr_id)
{
	struct ibv_wc wc;

	if (dp_poll(cq, &wc, 1, DP_WAIT_MS) != 1)
		return IM_WC_NONE;
	if (wc.status != IBV_WC_SUCCESS || wc.wr_id != wr_id) {
		fprintf(stderr, "# importer: wr_id %llu: %s\n",
			(unsigned long long)wc.wr_id,
			ibv_wc_status_str(wc.status));
		return IM_WC_BAD + (wc.status ? (int)wc.status : 99);
	}
	return 0;
}

/* 0 when every byte matches, else 1 + the first wrong one */
static int im_data(const void *buf, size_t len, uint32_t seed)
{
	long i = dp_verify(buf, len, seed);

	return i < 0 ? 0 : (int)(i + 1);
}

static int im_fail(const char *what)
{
	int e = errno ? errno : EIO;

	fprintf(stderr, "# importer: %s: %s\n", what, strerror(e));
	return e;
}

/*
 * Write commands that are not on the data path, each made and undone:
 * a PD of its own, an SRQ (modify, query), an AH, query_qp and
 * req_notify_cq on the pair.
 */
static int im_verbs(struct dp_dev *d, struct dp_qp *a)
{
	struct ibv_srq_init_attr sia = {
		.attr = { .max_wr = 16, .max_sge = 1 },
	};
	struct ibv_ah_attr aha = {
		.is_global = 1,
		.port_num = 1,
		.grh = { .dgid = d->gid, .sgid_index = d->gidx,
			 .hop_limit = 64 },
	};
	struct ibv_srq_attr sa = { .srq_limit = 4 };
	struct ibv_qp_init_attr qia;
	struct ibv_qp_attr qa;
	struct ibv_srq *srq;
	struct ibv_pd *pd;
	struct ibv_ah *ah;
	int e;

	pd = ibv_alloc_pd(d->ctx);
	if (!pd)
		return im_fail("ibv_alloc_pd");
	e = ibv_dealloc_pd(pd);
	if (e)
		return errno = e, im_fail("ibv_dealloc_pd");
	srq = ibv_create_srq(d->pd, &sia);
	if (!srq)
		return im_fail("ibv_create_srq");
	e = ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT);
	if (!e) {
		memset(&sa, 0, sizeof(sa));
		e = ibv_query_srq(srq, &sa);
		if (!e && sa.srq_limit != 4)
			e = EPROTO;
	}
	if (e)
		return errno = e, im_fail("ibv_modify_srq/ibv_query_srq");
	e = ibv_destroy_srq(srq);
	if (e)
		return errno = e, im_fail("ibv_destroy_srq");
	ah = ibv_create_ah(d->pd, &aha);
	if (!ah)
		return im_fail("ibv_create_ah");
	e = ibv_destroy_ah(ah);
	if (e)
		return errno = e, im_fail("ibv_destroy_ah");
	e = ibv_query_qp(a->qp, &qa, IBV_QP_STATE, &qia);
	if (!e && qa.qp_state != IBV_QPS_RTS)
		e = EPROTO;
	if (e)
		return errno = e, im_fail("ibv_query_qp");
	e = ibv_req_notify_cq(a->scq, 0);
	if (e)
		return errno = e, im_fail("ibv_req_notify_cq");
	return 0;
}

/* the data steps: READ and SEND the exporter's data, WRITE into it */
static void im_data_path(struct report *r, const struct msg *m,
			 struct ibv_mr *imr, struct dp_qp *a, struct dp_qp *b,
			 uint8_t *buf, struct ibv_mr *mr)
{
	void *src = (void *)(uintptr_t)m->addr;	/* the exporter's address */

	if (dp_post_send1(a->qp, 1, IBV_WR_RDMA_READ, buf, HALF, mr->lkey,
			  m->addr, imr->rkey, 0))
		r->res[IM_READ] = im_fail("post RDMA READ");
	else
		r->res[IM_READ] = im_wait(a->scq, 1);
	r->res[IM_READ_DATA] = im_data(buf, HALF, m->src_seed);

	if (dp_post_recv1(b->qp, 2, buf + HALF, HALF, mr->lkey) ||
	    dp_post_send1(a->qp, 3, IBV_WR_SEND, src, HALF, imr->lkey, 0, 0,
			  0))
		r->res[IM_SEND] = im_fail("post SEND");
	else
		r->res[IM_SEND] = im_wait(a->scq, 3) ?: im_wait(b->rcq, 2);
	r->res[IM_SEND_DATA] = im_data(buf + HALF, HALF, m->src_seed);

	dp_fill(buf, HALF, m->dst_seed);
	if (dp_post_send1(a->qp, 4, IBV_WR_RDMA_WRITE, buf, HALF, mr->lkey,
			  m->addr + HALF, imr->rkey, 0))
		r->res[IM_WRITE] = im_fail("post RDMA WRITE");
	else
		r->res[IM_WRITE] = im_wait(a->scq, 4);
}

static int im_destroy(struct ibv_context *ctx, struct ibv_pd *pd,
		      struct ibv_mr *imr, struct dp_qp *a, struct dp_qp *b,
		      struct ibv_mr *mr)
{
	struct dp_qp *q[] = { a, b };
	int e = 0, i;

	for (i = 0; i < 2; i++) {
		e = e ?: ibv_destroy_qp(q[i]->qp);
		e = e ?: ibv_destroy_cq(q[i]->scq);
		e = e ?: ibv_destroy_cq(q[i]->rcq);
	}
	e = e ?: ibv_dereg_mr(mr);
	if (e)
		return errno = e, im_fail("destroy QP, CQ or MR");
	ibv_unimport_mr(imr);
	ibv_unimport_pd(pd);
	if (ibv_close_device(ctx))
		return im_fail("ibv_close_device");
	return 0;
}

static void im_run(struct report *r, const struct msg *m, int fd)
{
	struct ibv_context *ctx;
	struct ibv_mr *imr, *mr;
	struct ibv_pd *pd;
	struct dp_qp a, b;
	struct dp_dev d;
	uint8_t *buf;

	ctx = ibv_import_device(fd);
	if (!ctx) {
		r->res[IM_IMPORT] = im_fail("ibv_import_device");
		return;
	}
	pd = ibv_import_pd(ctx, m->pd_handle);
	imr = pd ? ibv_import_mr(pd, m->mr_handle) : NULL;
	if (!imr) {
		r->res[IM_IMPORT] = im_fail("ibv_import_pd/ibv_import_mr");
		return;
	}
	r->res[IM_IMPORT] = imr->lkey == m->lkey && imr->rkey == m->rkey &&
			    imr->length == m->length ? 0 : EPROTO;

	if (posix_memalign((void **)&buf, 4096, LEN)) {
		r->res[IM_SETUP] = ENOMEM;
		return;
	}
	memset(buf, 0, LEN);
	mr = ibv_reg_mr(pd, buf, LEN, DP_ACCESS_ALL);
	if (!mr) {
		r->res[IM_SETUP] = im_fail("ibv_reg_mr");
		return;
	}
	if (dev_from(&d, test_dev_name(), ctx, pd)) {
		r->res[IM_SETUP] = im_fail("query device, port, GID");
		return;
	}
	r->res[IM_SETUP] = dp_rc_pair(&d, &a, &b);
	if (r->res[IM_SETUP])
		return;
	r->res[IM_VERBS] = im_verbs(&d, &a);
	im_data_path(r, m, imr, &a, &b, buf, mr);
	r->res[IM_DESTROY] = im_destroy(ctx, pd, imr, &a, &b, mr);
	free(buf);
}

/*
 * The importer's side of the socket: the message (with the command fd
 * attached when fd < 0), the steps, the report.  Returns the exit status.
 */
static int importer(int sock, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct report r;
	struct msg m;
	struct iovec iov = { .iov_base = &m, .iov_len = sizeof(m) };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm;
	int i;

	for (i = 0; i < IM_NUM; i++)
		r.res[i] = -1;
	if (recvmsg(sock, &mh, 0) != sizeof(m))
		return 2;
	if (fd < 0) {
		cm = CMSG_FIRSTHDR(&mh);
		if (!cm || cm->cmsg_level != SOL_SOCKET ||
		    cm->cmsg_type != SCM_RIGHTS ||
		    cm->cmsg_len != CMSG_LEN(sizeof(int)))
			return 3;
		memcpy(&fd, CMSG_DATA(cm), sizeof(fd));
	}
	im_run(&r, &m, fd);
	if (write(sock, &r, sizeof(r)) != sizeof(r))
		return 4;
	for (i = 0; i < IM_NUM; i++)
		if (r.res[i])
			return 1;
	return 0;
}

/* ------------------------------------------------------------------ */
/* The exporter                                                        */
/* ------------------------------------------------------------------ */

static const char *const im_what[IM_NUM] = {
	[IM_IMPORT] = "imports device, PD and MR (keys, length)",
	[IM_SETUP] = "own MR, CQs, an RC pair moved to RTS",
	[IM_VERBS] = "PD, SRQ (modify, query), AH, query_qp, req_notify_cq",
	[IM_READ] = "RDMA READ from the exporter's MR (imported rkey)",
	[IM_READ_DATA] = "... bytes exact",
	[IM_SEND] = "SEND from the exporter's MR (imported lkey)",
	[IM_SEND_DATA] = "... bytes exact",
	[IM_WRITE] = "RDMA WRITE into the exporter's MR (imported rkey)",
	[IM_DESTROY] = "destroys QPs, CQs, MR; unimports; closes",
};

/*
 * One importer: a forked child that imports its inherited copy of the
 * command fd, or (exec) this program run again, which gets it over the
 * socket.  Ten TAP lines.
 */
static void test_other_process(struct dp_dev *d, struct ibv_mr *mr,
			       const char *self, bool exec, uint32_t seed)
{
	const char *how = exec ? "exec'd, fd by SCM_RIGHTS" : "forked";
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct msg m = {
		.pd_handle = d->pd->handle,
		.mr_handle = mr->handle,
		.addr = (uintptr_t)mr->addr,
		.length = mr->length,
		.lkey = mr->lkey,
		.rkey = mr->rkey,
		.src_seed = seed,
		.dst_seed = seed + 1,
	};
	struct iovec iov = { .iov_base = &m, .iov_len = sizeof(m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;
	struct report r;
	char sockarg[16];
	int sv[2], st = -1, i, fd;
	pid_t pid;

	dp_fill(mr->addr, HALF, m.src_seed);
	memset((uint8_t *)mr->addr + HALF, 0, HALF);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		tap_bail("socketpair: %s", strerror(errno));
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		tap_bail("fork: %s", strerror(errno));
	if (!pid) {
		close(sv[0]);
		if (!exec) {
			fd = dup(d->ctx->cmd_fd);
			_exit(fd < 0 ? 5 : importer(sv[1], fd));
		}
		/* only the socket crosses exec */
		if (fcntl(sv[1], F_SETFD, 0))
			_exit(6);
		snprintf(sockarg, sizeof(sockarg), "%d", sv[1]);
		execl(self, self, IMPORTER_ARG, sockarg, (char *)NULL);
		fprintf(stderr, "# exec %s: %s\n", self, strerror(errno));
		_exit(7);
	}
	close(sv[1]);
	if (exec) {
		memset(cbuf, 0, sizeof(cbuf));
		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof(cbuf);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &d->ctx->cmd_fd, sizeof(int));
	}
	if (sendmsg(sv[0], &mh, 0) != sizeof(m))
		tap_bail("sendmsg: %s", strerror(errno));
	if (read(sv[0], &r, sizeof(r)) != sizeof(r))
		for (i = 0; i < IM_NUM; i++)
			r.res[i] = -1;
	if (waitpid(pid, &st, 0) != pid)
		st = -1;
	close(sv[0]);

	for (i = 0; i < IM_DESTROY; i++)
		tap_ret(r.res[i], 0, "%s importer: %s", how, im_what[i]);
	tap_ret(dp_verify((uint8_t *)mr->addr + HALF, HALF, m.dst_seed), -1,
		"... bytes exact in the exporter's MR");
	tap_ok(r.res[IM_DESTROY] == 0 && WIFEXITED(st) &&
	       WEXITSTATUS(st) == 0, "%s importer: %s; exits 0 (status %#x)",
	       how, im_what[IM_DESTROY], st);
}

/* the original process still posts on its own context and MR */
static void test_original_works(struct dp_dev *d, struct ibv_mr *mr)
{
	struct ibv_mr *smr;
	struct dp_qp a, b;
	uint8_t *src;

	memset(mr->addr, 0, LEN);
	if (dp_rc_pair(d, &a, &b))
		tap_bail("no QP pair");
	src = dp_alloc(LEN);
	smr = dp_reg(d->pd, src, LEN, DP_ACCESS_ALL);
	dp_fill(src, LEN, 7);
	tap_ret(write1(&a, src, LEN, smr->lkey, (uintptr_t)mr->addr,
		       mr->rkey), 0,
		"the exporter still WRITEs on its own context");
	tap_ret(dp_verify(mr->addr, LEN, 7), -1, "... bytes exact");
	dp_qp_free(&a);
	dp_qp_free(&b);
	ibv_dereg_mr(smr);
	free(src);
}

int main(int argc, char **argv)
{
	char self[4096];
	struct ibv_mr *mr;
	struct dp_dev d;
	uint8_t *buf;
	ssize_t n;
	int i;

	if (argc == 3 && !strcmp(argv[1], IMPORTER_ARG))
		return importer(atoi(argv[2]), -1);

	tap_plan(PLAN);
	if (!test_is_rxe2(test_dev_name())) {
		for (i = 0; i < PLAN; i++)
			tap_skip("%s is not rxe2", test_dev_name());
		return tap_done();
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		tap_bail("readlink /proc/self/exe: %s", strerror(errno));
	self[n] = 0;
	dp_open(&d, test_dev_name());
	buf = dp_alloc(LEN);
	mr = dp_reg(d.pd, buf, LEN, DP_ACCESS_ALL);
	test_same_process(&d, mr);
	test_other_process(&d, mr, self, false, 11);
	test_other_process(&d, mr, self, true, 21);
	test_original_works(&d, mr);
	tap_ret(ibv_dereg_mr(mr), 0, "the original MR deregisters");
	tap_ret(ibv_dealloc_pd(d.pd), 0, "the original PD deallocates");
	d.pd = NULL;
	dp_close(&d);
	free(buf);
	return tap_done();
}
