// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ibv_import_device, ibv_import_pd, ibv_import_mr and their unimport
 * calls, in the same process (a dup()ed command fd) and in a forked
 * child that receives the fd over a unix socket (SCM_RIGHTS): the
 * imported MR has the original's keys and length.  In the same process,
 * QPs of the imported context on the imported PD carry RDMA WRITEs into
 * the original MR and out of it, byte for byte.  The child creates and
 * destroys a CQ (ring mapped) on the imported context and sends back the
 * rkey it imported, through which the parent then WRITEs.  It cannot
 * post itself: ib_uverbs refuses write() commands (modify_qp, reg_mr,
 * rxe2's doorbell) from a process whose credentials are not the
 * opener's, and says so in the kernel log.  After unimport the
 * original objects still work and are destroyed normally.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/rxe2dv.h>

#include "dp.h"
#include "tap.h"
#include "util.h"

#define LEN 8192
#define PLAN 15

struct msg {
	uint32_t pd_handle;
	uint32_t mr_handle;
	uint64_t addr;
	uint64_t length;
	uint32_t lkey;
	uint32_t rkey;
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

static int child_run(int sock)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct msg m;
	struct iovec iov = { .iov_base = &m, .iov_len = sizeof(m) };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	int fd;

	if (recvmsg(sock, &mh, 0) != sizeof(m))
		return 2;
	cm = CMSG_FIRSTHDR(&mh);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return 3;
	memcpy(&fd, CMSG_DATA(cm), sizeof(fd));
	ctx = ibv_import_device(fd);
	if (!ctx)
		return 4;
	pd = ibv_import_pd(ctx, m.pd_handle);
	if (!pd)
		return 5;
	mr = ibv_import_mr(pd, m.mr_handle);
	if (!mr)
		return 6;
	if (mr->lkey != m.lkey || mr->rkey != m.rkey || mr->length != m.length)
		return 7;
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (!cq) {
		fprintf(stderr, "# child: ibv_create_cq: %s\n", strerror(errno));
		return 8;
	}
	if (ibv_destroy_cq(cq))
		return 9;
	/* the parent WRITEs through the rkey the child imported */
	m.rkey = mr->rkey;
	if (write(sock, &m, sizeof(m)) != sizeof(m))
		return 10;
	ibv_unimport_mr(mr);
	ibv_unimport_pd(pd);
	return ibv_close_device(ctx) ? 11 : 0;
}

static void test_other_process(struct dp_dev *d, struct ibv_mr *mr)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct msg m = {
		.pd_handle = d->pd->handle,
		.mr_handle = mr->handle,
		.addr = (uintptr_t)mr->addr,
		.length = mr->length,
		.lkey = mr->lkey,
		.rkey = mr->rkey,
	};
	struct iovec iov = { .iov_base = &m, .iov_len = sizeof(m) };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm;
	int sv[2], st = -1;
	pid_t pid;

	struct ibv_mr *smr;
	struct dp_qp a, b;
	uint8_t *src;

	memset(mr->addr, 0, LEN);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		tap_bail("socketpair: %s", strerror(errno));
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		tap_bail("fork: %s", strerror(errno));
	if (!pid) {
		close(sv[0]);
		_exit(child_run(sv[1]));
	}
	close(sv[1]);
	memset(cbuf, 0, sizeof(cbuf));
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &d->ctx->cmd_fd, sizeof(int));
	if (sendmsg(sv[0], &mh, 0) != sizeof(m))
		tap_bail("sendmsg: %s", strerror(errno));
	m.rkey = 0;
	if (read(sv[0], &m, sizeof(m)) != sizeof(m))
		m.rkey = 0;
	if (waitpid(pid, &st, 0) != pid)
		st = -1;
	close(sv[0]);
	tap_ret(WIFEXITED(st) ? WEXITSTATUS(st) : -1, 0,
		"child imports the fd (SCM_RIGHTS), PD and MR (keys, length), "
		"makes a CQ on it");
	if (dp_rc_pair(d, &a, &b))
		tap_bail("no QP pair");
	src = dp_alloc(LEN);
	smr = dp_reg(d->pd, src, LEN, DP_ACCESS_ALL);
	dp_fill(src, LEN, 7);
	tap_ret(write1(&a, src, LEN, smr->lkey, (uintptr_t)mr->addr, m.rkey),
		0, "WRITE through the rkey the child imported (0x%x)", m.rkey);
	tap_ret(dp_verify(mr->addr, LEN, 7), -1, "... bytes exact");
	dp_qp_free(&a);
	dp_qp_free(&b);
	ibv_dereg_mr(smr);
	free(src);
}

int main(void)
{
	struct ibv_mr *mr;
	struct dp_dev d;
	uint8_t *buf;
	int i;

	tap_plan(PLAN);
	if (!test_is_rxe2(test_dev_name())) {
		for (i = 0; i < PLAN; i++)
			tap_skip("%s is not rxe2", test_dev_name());
		return tap_done();
	}
	dp_open(&d, test_dev_name());
	buf = dp_alloc(LEN);
	mr = dp_reg(d.pd, buf, LEN, DP_ACCESS_ALL);
	test_same_process(&d, mr);
	test_other_process(&d, mr);
	tap_ret(ibv_dereg_mr(mr), 0, "the original MR deregisters");
	tap_ret(ibv_dealloc_pd(d.pd), 0, "the original PD deallocates");
	d.pd = NULL;
	dp_close(&d);
	free(buf);
	return tap_done();
}
