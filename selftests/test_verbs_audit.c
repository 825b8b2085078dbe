// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: every libibverbs 44-65 verb librxe2 has no op for, as docs/rdma-core.md's table says: served by libibverbs byte for byte or EOPNOTSUPP, never a crash; newer verbs through dlsym()
 *
 * Every verb of libibverbs (44 to 65) that librxe2 has no op of its own
 * for, called, with the answer docs/rdma-core.md's table gives it: the
 * ones libibverbs' own code serves for every provider work on rxe2
 * (asserted byte for byte), the ones rxe2 cannot serve answer
 * EOPNOTSUPP (never EINVAL, never a crash), and the paths that reach a
 * provider's function pointer without libibverbs' EOPNOTSUPP stub
 * between (ibv_cq_ex readers, DM copies) find one.
 *
 * The binary is built against the installed headers (44 on Debian 12)
 * and may run on a newer libibverbs (an in-tree build): verbs newer than
 * the headers are looked up with dlsym() and called through prototypes
 * of their public ABI declared here; where the running libibverbs lacks
 * one, its lines are skipped.  A verb whose only object cannot be made
 * on rxe2 (a completion counter, a flow action) is called on a stand-in
 * object of this context: libibverbs dispatches on its context alone.
 *
 * Not here, owned by other items of issue 37: ibv_query_port_speed,
 * ibv_alloc_dmah and DMA handles (item 7, test_device), ODP caps (item 7,
 * test_odp), raw packet QP loopback and rate limits (items 4, 5),
 * ibv_wr_flush and the other ibv_qp_ex builders (item 1).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dp.h"
#include "tap.h"
#include "util.h"

static struct dp_dev dev;

/* a verb of a libibverbs newer than the headers, or NULL (lines skipped) */
static void *verb(const char *name)
{
	void *fn = dlsym(RTLD_DEFAULT, name);

	if (!fn)
		tap_skip("%s: not in this libibverbs", name);
	return fn;
}

/* ------------------------------------------------------------------ */
/* Verbs whose op librxe2 leaves unset: libibverbs answers EOPNOTSUPP  */
/* ------------------------------------------------------------------ */

static void unsupported(void)
{
	struct ibv_flow_action_esp_attr esp = {};
	struct ibv_flow_action stand_in = { .context = dev.ctx };

	/* mlx5's MR that drops writes and reads zeros: no such lkey here */
	tap_null_errno(ibv_alloc_null_mr(dev.pd), EOPNOTSUPP,
		       "ibv_alloc_null_mr: EOPNOTSUPP");
	/* IPsec ESP offload: no crypto on rxe2's wire */
	tap_null_errno(ibv_create_flow_action_esp(dev.ctx, &esp), EOPNOTSUPP,
		       "ibv_create_flow_action_esp: EOPNOTSUPP");
	tap_ret_errno(ibv_modify_flow_action_esp(&stand_in, &esp), EOPNOTSUPP,
		      "ibv_modify_flow_action_esp: EOPNOTSUPP");
	tap_ret_errno(ibv_destroy_flow_action(&stand_in), EOPNOTSUPP,
		      "ibv_destroy_flow_action: EOPNOTSUPP");
}

/* ------------------------------------------------------------------ */
/* ibv_import_dm: implemented (test_dm has the full story)             */
/* ------------------------------------------------------------------ */

static void import_dm(void)
{
	struct ibv_alloc_dm_attr a = { .length = 64 };
	uint8_t in[64], out[64];
	struct ibv_dm *dm, *idm;

	dm = ibv_alloc_dm(dev.ctx, &a);
	if (!tap_ok(dm != NULL, "ibv_alloc_dm of 64 bytes"))
		return;
	errno = 0;
	/* a DM of this very context: the same ib_ucontext, as over a dup() */
	idm = ibv_import_dm(dev.ctx, dm->handle);
	if (tap_ok(idm != NULL, "ibv_import_dm of its handle: %s",
		   idm ? "ok" : strerror(errno))) {
		dp_fill(in, sizeof(in), 41);
		memset(out, 0, sizeof(out));
		tap_ok(!ibv_memcpy_to_dm(idm, 0, in, sizeof(in)) &&
		       !ibv_memcpy_from_dm(out, dm, 0, sizeof(out)) &&
		       dp_verify(out, sizeof(out), 41) < 0,
		       "64 bytes written through the import read byte-exact from the DM");
		ibv_unimport_dm(idm);
	}
	tap_ret_errno(ibv_free_dm(dm), 0, "ibv_free_dm after unimport");
}

/* ------------------------------------------------------------------ */
/* ibv_cq_ex readers: called through the CQ's own pointers             */
/* ------------------------------------------------------------------ */

/* a flushed receive on cq: RC QP to INIT, one receive, then ERROR */
static struct ibv_qp *flushed_recv(struct ibv_cq_ex *cq, void *buf,
				   struct ibv_mr *mr)
{
	struct ibv_qp_attr err = { .qp_state = IBV_QPS_ERR };
	struct ibv_qp *qp;

	qp = dp_create_qp(&dev, IBV_QPT_RC, ibv_cq_ex_to_cq(cq),
			  ibv_cq_ex_to_cq(cq), NULL, &dp_small_cap);
	if (!qp)
		return NULL;
	if (qp_to_init(qp) || dp_post_recv1(qp, 7, buf, 64, mr->lkey) ||
	    ibv_modify_qp(qp, &err, IBV_QP_STATE)) {
		ibv_destroy_qp(qp);
		return NULL;
	}
	return qp;
}

/*
 * ibv_wc_read_cvlan() in a child: a NULL reader kills it, which is then
 * a failed line rather than the end of the test.  Its exit code is the
 * VLAN read, 0..255 (rxe2 has none: 0).
 */
static int cvlan_in_child(struct ibv_cq_ex *cq)
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid)
		_exit(ibv_wc_read_cvlan(cq) & 0xff);
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	if (WIFSIGNALED(status)) {
		tap_diag("ibv_wc_read_cvlan: the child died of signal %d",
			 WTERMSIG(status));
		return -1;
	}
	return WEXITSTATUS(status);
}

static void cq_ex_readers(void)
{
	struct ibv_poll_cq_attr pa = {};
	struct ibv_device_attr_ex da;
	struct ibv_cq_init_attr_ex a = {
		.cqe = 16,
		.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_QP_NUM,
	};
	struct ibv_cq_init_attr_ex vlan = {
		.cqe = 16, .wc_flags = IBV_WC_EX_WITH_CVLAN,
	};
	uint8_t *buf = dp_alloc(4096);
	struct ibv_mr *mr = dp_reg(dev.pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_cq_ex *cq;
	struct ibv_qp *qp;
	int ret, i;

	tap_ret_errno(ibv_query_device_ex(dev.ctx, NULL, &da), 0,
		      "ibv_query_device_ex");
	tap_ok(!(da.raw_packet_caps & IBV_RAW_PACKET_CAP_CVLAN_STRIPPING),
	       "no CVLAN stripping in raw_packet_caps");
	tap_null_errno(ibv_create_cq_ex(dev.ctx, &vlan), EOPNOTSUPP,
		       "ibv_create_cq_ex with IBV_WC_EX_WITH_CVLAN: EOPNOTSUPP");

	cq = ibv_create_cq_ex(dev.ctx, &a);
	if (!tap_ok(cq != NULL, "ibv_create_cq_ex without CVLAN"))
		goto out;
	tap_ok(cq->read_opcode && cq->read_vendor_err && cq->read_byte_len &&
	       cq->read_imm_data && cq->read_qp_num && cq->read_src_qp &&
	       cq->read_wc_flags && cq->read_slid && cq->read_sl &&
	       cq->read_dlid_path_bits && cq->read_completion_ts &&
	       cq->read_cvlan && cq->read_flow_tag && cq->read_tm_info &&
	       cq->read_completion_wallclock_ns,
	       "every ibv_wc_read_*() of the CQ has a reader");
	qp = flushed_recv(cq, buf, mr);
	if (!tap_ok(qp != NULL, "an RC QP with a receive flushed to it"))
		goto out_cq;
	for (i = 0; i < 10000; i++) {	/* 10 s: a TCG guest is slow */
		ret = ibv_start_poll(cq, &pa);
		if (ret != ENOENT)
			break;
		usleep(1000);
	}
	if (tap_ret_errno(ret, 0, "ibv_start_poll finds the flush")) {
		tap_ok(cq->wr_id == 7 && cq->status == IBV_WC_WR_FLUSH_ERR &&
		       ibv_wc_read_qp_num(cq) == qp->qp_num,
		       "wr_id 7, IBV_WC_WR_FLUSH_ERR, the QP's number");
		tap_ret(cvlan_in_child(cq), 0,
			"ibv_wc_read_cvlan on a CQ without CVLAN: 0, no crash");
		ibv_end_poll(cq);
	}
	ibv_destroy_qp(qp);
out_cq:
	ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
out:
	ibv_dereg_mr(mr);
	free(buf);
}

/* ------------------------------------------------------------------ */
/* Verbs newer than the headers: dlsym()                               */
/* ------------------------------------------------------------------ */

/* struct ibv_comp_cntr of libibverbs 1.18 (rdma-core 65): its head */
struct audit_comp_cntr {
	struct ibv_context *context;
	uint32_t handle;
};

/* RDMA WRITE of len bytes (seed) from a to the MR at raddr/rkey */
static bool write_into(struct dp_qp *a, uint64_t raddr, uint32_t rkey,
		       uint32_t len, uint32_t seed, const char *what)
{
	uint8_t *src = dp_alloc(len);
	struct ibv_mr *smr = dp_reg(dev.pd, src, len, IBV_ACCESS_LOCAL_WRITE);
	struct dp_wc_want w = dp_want(seed, IBV_WC_RDMA_WRITE);
	bool ok;

	dp_fill(src, len, seed);
	dp_post_send1(a->qp, seed, IBV_WR_RDMA_WRITE, src, len, smr->lkey,
		      raddr, rkey, 0);
	ok = dp_expect(a->scq, &w, "%s", what);
	ibv_dereg_mr(smr);
	free(src);
	return ok;
}

static void reg_mr_ex(struct dp_qp *a)
{
	struct ibv_mr *(*reg)(struct ibv_pd *, struct dp_mr_init_attr *);
	struct dp_mr_init_attr attr = {};
	uint8_t *buf;
	struct ibv_mr *mr;

	reg = verb("ibv_reg_mr_ex");
	if (!reg)
		return;
	/*
	 * librxe2's own reg_mr_ex (DMA handles, test_device) serves an
	 * address as reg_mr does, on every libibverbs that has the verb
	 * (before 1.17 libibverbs' stub alone answered EOPNOTSUPP)
	 */
	buf = dp_alloc(8192);
	/* rxe2's reg_mr underneath: zero-based here */
	attr.length = 8192;
	attr.access = DP_ACCESS_ALL;
	attr.comp_mask = DP_REG_MR_MASK_ADDR | DP_REG_MR_MASK_IOVA;
	attr.addr = buf;
	attr.iova = 0;
	mr = reg(dev.pd, &attr);
	if (tap_ok(mr != NULL, "ibv_reg_mr_ex of 8 KiB at iova 0: %s",
		   mr ? "ok" : strerror(errno))) {
		tap_ok(mr->addr == buf && mr->length == 8192,
		       "ibv_reg_mr_ex: addr and length");
		if (write_into(a, 1000, mr->rkey, 3000, 51,
			       "RDMA WRITE into it at iova 1000"))
			tap_ok(dp_verify(buf + 1000, 3000, 51) < 0 &&
			       dp_verify_byte(buf, 1000, 0) < 0 &&
			       dp_verify_byte(buf + 4000, 4192, 0) < 0,
			       "ibv_reg_mr_ex: the bytes at offset 1000, nothing else");
		ibv_dereg_mr(mr);
	}
	free(buf);
}

/* rdma-core 64's ibv_alloc_buf(): libibverbs' host memory for rxe2 */
static void bufs(struct dp_qp *a)
{
	void *(*alloc)(struct ibv_pd *, size_t, void **);
	struct ibv_mr *(*reg)(struct ibv_pd *, void *, void *, size_t, int);
	int (*export)(void *);
	void (*release)(void *);
	struct ibv_mr *mr;
	uint8_t *p;
	void *buf = NULL;

	alloc = verb("ibv_alloc_buf");
	reg = verb("ibv_reg_buf_mr");
	release = verb("ibv_free_buf");
	if (!alloc || !reg || !release)
		return;
	p = alloc(dev.pd, 16384, &buf);
	if (!tap_ok(p && buf && !((uintptr_t)p & 4095),
		    "ibv_alloc_buf of 16 KiB: page-aligned memory"))
		return;
	memset(p, 0, 16384);
	mr = reg(dev.pd, buf, p + 4096, 8192, DP_ACCESS_ALL);
	if (tap_ok(mr != NULL, "ibv_reg_buf_mr of 8 KiB inside it: %s",
		   mr ? "ok" : strerror(errno))) {
		if (write_into(a, (uintptr_t)p + 4096 + 100, mr->rkey, 5000,
			       52, "RDMA WRITE into the buffer's MR"))
			tap_ok(dp_verify(p + 4196, 5000, 52) < 0 &&
			       dp_verify_byte(p, 4196, 0) < 0 &&
			       dp_verify_byte(p + 9196, 16384 - 9196, 0) < 0,
			       "ibv_reg_buf_mr: the bytes where written, nothing else");
		ibv_dereg_mr(mr);
	}
	export = dlsym(RTLD_DEFAULT, "ibv_export_buf_dmabuf_fd");
	if (export)
		/* host memory from posix_memalign(): no dma-buf behind it */
		tap_neg_errno(export(buf), ENODATA,
			      "ibv_export_buf_dmabuf_fd: ENODATA (host memory)");
	else
		tap_skip("ibv_export_buf_dmabuf_fd: not in this libibverbs");
	release(buf);
}

static void dm_export(void)
{
	int (*export)(struct ibv_dm *) = verb("ibv_dm_export_dmabuf_fd");
	struct ibv_alloc_dm_attr a = { .length = 4096 };
	struct ibv_dm *dm;

	if (!export)
		return;
	dm = ibv_alloc_dm(dev.ctx, &a);
	if (!tap_ok(dm != NULL, "ibv_alloc_dm for the export"))
		return;
	/* DM pages are vmalloc()ed, not a dma-buf exporter's */
	tap_neg_errno(export(dm), EOPNOTSUPP,
		      "ibv_dm_export_dmabuf_fd: EOPNOTSUPP");
	ibv_free_dm(dm);
}

/* rdma-core 65's completion counters: none on rxe2 */
static void comp_cntrs(struct dp_qp *a)
{
	int (*caps)(struct ibv_context *, void *, size_t);
	void *(*create)(struct ibv_context *, void *);
	int (*attach)(struct ibv_qp *, void *, void *);
	static const char *const u64_ops[] = {
		"ibv_set_comp_cntr", "ibv_set_err_comp_cntr",
		"ibv_inc_comp_cntr", "ibv_inc_err_comp_cntr",
	};
	static const char *const read_ops[] = {
		"ibv_read_comp_cntr", "ibv_read_err_comp_cntr",
	};
	struct audit_comp_cntr stand_in = { .context = dev.ctx };
	uint32_t attr[4] = {};
	uint8_t c[64];
	uint64_t v;
	size_t i;

	caps = verb("_ibv_query_comp_cntr_caps");
	create = verb("ibv_create_comp_cntr");
	if (caps) {
		memset(c, 0xff, sizeof(c));
		/* ibv_comp_cntr_caps: 16 bytes in 65 */
		tap_ret_errno(caps(dev.ctx, c, 16), EOPNOTSUPP,
			      "ibv_query_comp_cntr_caps: EOPNOTSUPP");
		tap_ok(dp_verify_byte(c, 16, 0) < 0 &&
		       dp_verify_byte(c + 16, sizeof(c) - 16, 0xff) < 0,
		       "ibv_query_comp_cntr_caps: the caps zeroed, max_counters 0");
	}
	if (create)
		tap_null_errno(create(dev.ctx, attr), EOPNOTSUPP,
			       "ibv_create_comp_cntr: EOPNOTSUPP");
	if (!create)
		return;
	attach = dlsym(RTLD_DEFAULT, "ibv_qp_attach_comp_cntr");
	if (attach)
		tap_ret_errno(attach(a->qp, &stand_in, attr), EOPNOTSUPP,
			      "ibv_qp_attach_comp_cntr: EOPNOTSUPP");
	for (i = 0; i < sizeof(u64_ops) / sizeof(u64_ops[0]); i++) {
		int (*op)(void *, uint64_t) = dlsym(RTLD_DEFAULT, u64_ops[i]);

		if (op)
			tap_ret_errno(op(&stand_in, 1), EOPNOTSUPP,
				      "%s: EOPNOTSUPP", u64_ops[i]);
	}
	for (i = 0; i < sizeof(read_ops) / sizeof(read_ops[0]); i++) {
		int (*op)(void *, uint64_t *) = dlsym(RTLD_DEFAULT,
						      read_ops[i]);

		if (op)
			tap_ret_errno(op(&stand_in, &v), EOPNOTSUPP,
				      "%s: EOPNOTSUPP", read_ops[i]);
	}
	{
		int (*op)(void *) = dlsym(RTLD_DEFAULT,
					  "ibv_destroy_comp_cntr");

		if (op)
			tap_ret_errno(op(&stand_in), EOPNOTSUPP,
				      "ibv_destroy_comp_cntr: EOPNOTSUPP");
	}
}

int main(void)
{
	struct dp_qp a, b;

	dp_open(&dev, test_dev_name());
	unsupported();
	import_dm();
	cq_ex_readers();
	dm_export();
	if (dp_rc_pair(&dev, &a, &b))
		tap_bail("an RC pair");
	reg_mr_ex(&a);
	bufs(&a);
	comp_cntrs(&a);
	dp_qp_free(&a);
	dp_qp_free(&b);
	dp_close(&dev);
	return tap_done();
}
