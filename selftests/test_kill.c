// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: SIGKILL of a process holding a context, PD, MR, CQ, QP, SRQ and AH: the device's resource counts back to the baseline
 *
 * A process killed with SIGKILL while holding a context with a PD, MR,
 * CQ, QP, SRQ and AH leaves nothing behind: the device's resource counts
 * return to what they were before it started.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"
#include "util.h"

static const char *const types[] = { "ctx", "pd", "mr", "cq", "qp", "srq" };
#define NTYPES (sizeof(types) / sizeof(types[0]))

/* The child: builds everything, reports, and waits to be killed. */
static void child(int fd)
{
	static char buf[8192];
	struct ibv_context *ctx = test_open(test_dev_name());
	struct ibv_srq_init_attr sinit = { .attr = { .max_wr = 8, .max_sge = 1 } };
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = PORT };
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_mr *mr = NULL;
	struct ibv_srq *srq = NULL;
	struct ibv_qp *qp = NULL;
	struct ibv_ah *ah = NULL;
	char ok = 0;
	int idx = find_ipv4_gid(ctx, &aa.grh.dgid);

	aa.grh.sgid_index = idx;
	aa.grh.hop_limit = 64;
	if (pd && cq && idx >= 0) {
		mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
		srq = ibv_create_srq(pd, &sinit);
		init.send_cq = cq;
		init.recv_cq = cq;
		qp = ibv_create_qp(pd, &init);
		ah = ibv_create_ah(pd, &aa);
		if (qp && !qp_to_init(qp) && !qp_to_rtr(qp, idx, &aa.grh.dgid))
			qp_to_rts(qp);
	}
	ok = mr && srq && qp && ah ? 'y' : 'n';
	if (write(fd, &ok, 1) != 1)
		_exit(1);
	for (;;)
		pause();
}

static void snapshot(const char *dev, int *c)
{
	unsigned int i;

	for (i = 0; i < NTYPES; i++)
		c[i] = res_count(dev, types[i]);
}

int main(void)
{
	const char *dev = test_dev_name();
	int before[NTYPES], during[NTYPES], after[NTYPES];
	struct timespec ts = { 0, 100 * 1000 * 1000 };
	unsigned int i, polls;
	bool more, same;
	int fds[2], st;
	char ok = 0;
	pid_t pid;

	snapshot(dev, before);
	if (before[0] < 0)
		tap_bail("no %s in rdma resource show", dev);
	if (pipe(fds))
		tap_bail("pipe");
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		tap_bail("fork");
	if (pid == 0) {
		/* never outlive a parent the harness timed out */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(fds[0]);
		child(fds[1]);
	}
	close(fds[1]);
	tap_ok(read(fds[0], &ok, 1) == 1 && ok == 'y',
	       "child created PD, MR, CQ, QP (RTS), SRQ and AH");
	snapshot(dev, during);
	more = true;
	for (i = 0; i < NTYPES; i++)
		if (during[i] != before[i] + 1) {
			tap_diag("  %s: %d before, %d with the child", types[i],
				 before[i], during[i]);
			more = false;
		}
	tap_ok(more, "rdma resource show counts one more ctx, pd, mr, cq, qp, srq");

	kill(pid, SIGKILL);
	tap_ok(waitpid(pid, &st, 0) == pid && WIFSIGNALED(st) &&
	       WTERMSIG(st) == SIGKILL, "child killed by SIGKILL");

	/* the file's release can trail the exit a little */
	for (polls = 0; polls < 50; polls++) {
		snapshot(dev, after);
		same = !memcmp(before, after, sizeof(before));
		if (same)
			break;
		nanosleep(&ts, NULL);
	}
	for (i = 0; i < NTYPES; i++)
		if (after[i] != before[i])
			tap_diag("  %s: %d before, %d after", types[i],
				 before[i], after[i]);
	tap_ok(same, "resource counts back to the baseline after the kill (%u polls)",
	       polls);
	return tap_done();
}
