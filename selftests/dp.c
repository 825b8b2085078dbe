// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Data-path selftest helpers, see dp.h. */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dp.h"
#include "tap.h"
#include "util.h"

void dp_open(struct dp_dev *d, const char *name)
{
	memset(d, 0, sizeof(*d));
	d->name = name;
	d->rxe2 = test_is_rxe2(name);
	d->ctx = test_open(name);
	if (ibv_query_device(d->ctx, &d->attr))
		tap_bail("ibv_query_device(%s): %s", name, strerror(errno));
	if (dp_query_port(d))
		tap_bail("ibv_query_port(%s): %s", name, strerror(errno));
	d->gidx = find_ipv4_gid(d->ctx, &d->gid);
	if (d->gidx < 0)
		tap_bail("%s has no IPv4 RoCEv2 GID", name);
	d->pd = ibv_alloc_pd(d->ctx);
	if (!d->pd)
		tap_bail("ibv_alloc_pd(%s): %s", name, strerror(errno));
}

void dp_close(struct dp_dev *d)
{
	if (d->pd)
		ibv_dealloc_pd(d->pd);
	if (d->ctx)
		ibv_close_device(d->ctx);
	memset(d, 0, sizeof(*d));
}

int dp_query_port(struct dp_dev *d)
{
	return ibv_query_port(d->ctx, PORT, &d->port);
}

void dp_conn_default(struct dp_conn *c)
{
	memset(c, 0, sizeof(*c));
	c->mtu = IBV_MTU_1024;
	c->timeout = 14;
	c->retry_cnt = 7;
	c->rnr_retry = 7;
	c->min_rnr_timer = 1;	/* 0.01 ms: RNR retries stay quick */
	c->rd_atomic = 1;
	c->sq_psn = 0x654321;
	c->rq_psn = 0x654321;
	c->access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		    IBV_ACCESS_REMOTE_ATOMIC;
	c->qkey = 0x11111111;
}

struct ibv_qp *dp_create_qp(struct dp_dev *d, enum ibv_qp_type type,
			    struct ibv_cq *scq, struct ibv_cq *rcq,
			    struct ibv_srq *srq, const struct ibv_qp_cap *cap)
{
	struct ibv_qp_init_attr init = {
		.qp_type = type,
		.send_cq = scq,
		.recv_cq = rcq,
		.srq = srq,
		.cap = *cap,
	};

	return ibv_create_qp(d->pd, &init);
}

int dp_connect(struct ibv_qp *qp, const struct dp_dev *d,
	       const union ibv_gid *dgid, uint32_t dqpn,
	       const struct dp_conn *c)
{
	struct ibv_qp_attr a;
	int mask, ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = PORT;
	mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
	if (qp->qp_type == IBV_QPT_UD) {
		a.qkey = c->qkey;
		mask |= IBV_QP_QKEY;
	} else {
		a.qp_access_flags = c->access;
		if (qp->qp_type == IBV_QPT_UC)
			a.qp_access_flags &= IBV_ACCESS_REMOTE_WRITE;
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	ret = ibv_modify_qp(qp, &a, mask);
	if (ret)
		return ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	mask = IBV_QP_STATE;
	if (qp->qp_type != IBV_QPT_UD) {
		a.path_mtu = c->mtu;
		a.dest_qp_num = dqpn;
		a.rq_psn = c->rq_psn;
		a.ah_attr.is_global = 1;
		a.ah_attr.port_num = PORT;
		a.ah_attr.grh.dgid = *dgid;
		a.ah_attr.grh.sgid_index = d->gidx;
		a.ah_attr.grh.hop_limit = 64;
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			IBV_QP_RQ_PSN;
		/* a responder's: RC, XRC's target */
		if (qp->qp_type == IBV_QPT_RC ||
		    qp->qp_type == IBV_QPT_XRC_RECV) {
			a.max_dest_rd_atomic = c->rd_atomic;
			a.min_rnr_timer = c->min_rnr_timer;
			mask |= IBV_QP_MAX_DEST_RD_ATOMIC |
				IBV_QP_MIN_RNR_TIMER;
		}
	}
	ret = ibv_modify_qp(qp, &a, mask);
	if (ret)
		return ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = c->sq_psn;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (qp->qp_type == IBV_QPT_XRC_RECV) {
		a.timeout = c->timeout;
		mask |= IBV_QP_TIMEOUT;
	}
	/* a requester's: RC, XRC's initiator */
	if (qp->qp_type == IBV_QPT_RC || qp->qp_type == IBV_QPT_XRC_SEND) {
		a.timeout = c->timeout;
		a.retry_cnt = c->retry_cnt;
		a.rnr_retry = c->rnr_retry;
		a.max_rd_atomic = c->rd_atomic;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	}
	return ibv_modify_qp(qp, &a, mask);
}

uint64_t dp_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

bool dp_async_event(struct dp_dev *d, struct ibv_async_event *ev, int ms)
{
	struct pollfd pfd = { .fd = d->ctx->async_fd, .events = POLLIN };
	uint64_t end = dp_now_ms() + ms;
	int fl = fcntl(d->ctx->async_fd, F_GETFL);

	if (fl < 0 || fcntl(d->ctx->async_fd, F_SETFL, fl | O_NONBLOCK))
		tap_bail("async_fd non-blocking: %s", strerror(errno));
	for (;;) {
		int left = (int)(end - dp_now_ms());

		if (!ibv_get_async_event(d->ctx, ev))
			return true;
		if (errno != EAGAIN || left <= 0)
			return false;
		poll(&pfd, 1, left);
	}
}

int dp_poll(struct ibv_cq *cq, struct ibv_wc *wc, int n, int timeout_ms)
{
	uint64_t end = dp_now_ms() + timeout_ms;
	unsigned int spins = 0;
	int got = 0;

	while (got < n) {
		int r = ibv_poll_cq(cq, n - got, wc + got);

		if (r < 0)
			return -1;
		got += r;
		if (got == n)
			break;
		if (r == 0) {
			if (dp_now_ms() > end)
				break;
			/* Spin briefly, then yield the (slow) CPU. */
			if (++spins > 64)
				usleep(200);
		}
	}
	return got;
}

int dp_poll_ex(struct ibv_cq_ex *cq, int n,
	       void (*read)(struct ibv_cq_ex *cq, int k, void *arg), void *arg)
{
	struct ibv_poll_cq_attr pa = { 0 };
	uint64_t end = dp_now_ms() + DP_WAIT_MS;
	int k = 0, r;

	while (k < n) {
		r = ibv_start_poll(cq, &pa);
		if (r == ENOENT) {
			if (dp_now_ms() > end)
				break;
			usleep(200);
			continue;
		}
		if (r) {
			tap_diag("  start_poll: %s", strerror(r));
			break;
		}
		do {
			read(cq, k++, arg);
			r = k < n ? ibv_next_poll(cq) : ENOENT;
		} while (!r);
		ibv_end_poll(cq);
		if (r != ENOENT) {
			tap_diag("  next_poll: %s", strerror(r));
			break;
		}
	}
	return k;
}

int dp_poll_none(struct ibv_cq *cq, struct ibv_wc *wc, int ms)
{
	int r;

	usleep(ms * 1000);
	r = ibv_poll_cq(cq, 1, wc);
	return r < 0 ? 0 : r;
}

struct dp_wc_want dp_want(uint64_t wr_id, int opcode)
{
	struct dp_wc_want w = {
		.wr_id = wr_id,
		.status = IBV_WC_SUCCESS,
		.opcode = opcode,
		.byte_len = -1,
		.wc_flags = -1,
		.imm = -1,
		.src_qp = -1,
		.sl = -1,
		.qp_num = -1,
		.inv_rkey = -1,
	};

	return w;
}

static const char *const status_names[] = {
	[IBV_WC_SUCCESS] = "SUCCESS",
	[IBV_WC_LOC_LEN_ERR] = "LOC_LEN_ERR",
	[IBV_WC_LOC_QP_OP_ERR] = "LOC_QP_OP_ERR",
	[IBV_WC_LOC_EEC_OP_ERR] = "LOC_EEC_OP_ERR",
	[IBV_WC_LOC_PROT_ERR] = "LOC_PROT_ERR",
	[IBV_WC_WR_FLUSH_ERR] = "WR_FLUSH_ERR",
	[IBV_WC_MW_BIND_ERR] = "MW_BIND_ERR",
	[IBV_WC_BAD_RESP_ERR] = "BAD_RESP_ERR",
	[IBV_WC_LOC_ACCESS_ERR] = "LOC_ACCESS_ERR",
	[IBV_WC_REM_INV_REQ_ERR] = "REM_INV_REQ_ERR",
	[IBV_WC_REM_ACCESS_ERR] = "REM_ACCESS_ERR",
	[IBV_WC_REM_OP_ERR] = "REM_OP_ERR",
	[IBV_WC_RETRY_EXC_ERR] = "RETRY_EXC_ERR",
	[IBV_WC_RNR_RETRY_EXC_ERR] = "RNR_RETRY_EXC_ERR",
	[IBV_WC_LOC_RDD_VIOL_ERR] = "LOC_RDD_VIOL_ERR",
	[IBV_WC_REM_INV_RD_REQ_ERR] = "REM_INV_RD_REQ_ERR",
	[IBV_WC_REM_ABORT_ERR] = "REM_ABORT_ERR",
	[IBV_WC_INV_EECN_ERR] = "INV_EECN_ERR",
	[IBV_WC_INV_EEC_STATE_ERR] = "INV_EEC_STATE_ERR",
	[IBV_WC_FATAL_ERR] = "FATAL_ERR",
	[IBV_WC_RESP_TIMEOUT_ERR] = "RESP_TIMEOUT_ERR",
	[IBV_WC_GENERAL_ERR] = "GENERAL_ERR",
};

const char *dp_status_str(int status)
{
	if (status >= 0 &&
	    status < (int)(sizeof(status_names) / sizeof(status_names[0])) &&
	    status_names[status])
		return status_names[status];
	return "?";
}

static int wc_mismatch(const struct ibv_wc *wc, const struct dp_wc_want *w,
		       char *why, size_t len)
{
	size_t n = 0;
	int bad = 0;

#define WHY(...)                                                              \
	do {                                                                  \
		bad++;                                                        \
		if (n < len)                                                  \
			n += snprintf(why + n, len - n, __VA_ARGS__);         \
	} while (0)
	if (wc->wr_id != w->wr_id)
		WHY(" wr_id %#llx want %#llx", (unsigned long long)wc->wr_id,
		    (unsigned long long)w->wr_id);
	if ((int)wc->status != w->status)
		WHY(" status %s(%d) want %s(%d) vendor_err %#x",
		    dp_status_str(wc->status), wc->status,
		    dp_status_str(w->status), w->status, wc->vendor_err);
	/* opcode, byte_len and flags are undefined in error completions */
	if (w->status != IBV_WC_SUCCESS)
		goto out;
	if (w->opcode >= 0 && (int)wc->opcode != w->opcode)
		WHY(" opcode %d want %d", wc->opcode, w->opcode);
	if (w->byte_len >= 0 && wc->byte_len != (uint32_t)w->byte_len)
		WHY(" byte_len %u want %ld", wc->byte_len, w->byte_len);
	if (w->wc_flags >= 0 &&
	    (wc->wc_flags & ~w->flags_ignore) != (unsigned int)w->wc_flags)
		WHY(" wc_flags %#x want %#lx", wc->wc_flags, w->wc_flags);
	if (w->imm >= 0 && (wc->wc_flags & IBV_WC_WITH_IMM) &&
	    be32toh(wc->imm_data) != (uint32_t)w->imm)
		WHY(" imm %#x want %#lx", be32toh(wc->imm_data), w->imm);
	if (w->inv_rkey >= 0 && (wc->wc_flags & IBV_WC_WITH_INV) &&
	    wc->invalidated_rkey != (uint32_t)w->inv_rkey)
		WHY(" invalidated_rkey %#x want %#lx", wc->invalidated_rkey,
		    w->inv_rkey);
	if (w->src_qp >= 0 && wc->src_qp != (uint32_t)w->src_qp)
		WHY(" src_qp %#x want %#lx", wc->src_qp, w->src_qp);
	if (w->sl >= 0 && wc->sl != w->sl)
		WHY(" sl %#x want %#lx", wc->sl, w->sl);
out:
	if (w->qp_num >= 0 && wc->qp_num != (uint32_t)w->qp_num)
		WHY(" qp_num %#x want %#lx", wc->qp_num, w->qp_num);
#undef WHY
	return bad;
}

static bool check_wc_v(const struct ibv_wc *wc, const struct dp_wc_want *w,
		       const char *fmt, va_list ap)
{
	char desc[512], why[512];
	bool ok;

	vsnprintf(desc, sizeof(desc), fmt, ap);
	why[0] = 0;
	ok = !wc_mismatch(wc, w, why, sizeof(why));
	tap_ok(ok, "%s", desc);
	if (!ok)
		tap_diag("  wc:%s", why);
	return ok;
}

bool dp_check_wc(const struct ibv_wc *wc, const struct dp_wc_want *w,
		 const char *fmt, ...)
{
	va_list ap;
	bool ok;

	va_start(ap, fmt);
	ok = check_wc_v(wc, w, fmt, ap);
	va_end(ap);
	return ok;
}

bool dp_expect(struct ibv_cq *cq, const struct dp_wc_want *w,
	       const char *fmt, ...)
{
	static int missing;
	struct ibv_wc wc;
	va_list ap;
	bool ok;
	int n;

	n = dp_poll(cq, &wc, 1, DP_WAIT_MS);
	va_start(ap, fmt);
	if (n == 1) {
		missing = 0;
		ok = check_wc_v(&wc, w, fmt, ap);
	} else {
		char desc[512];

		vsnprintf(desc, sizeof(desc), fmt, ap);
		ok = tap_ok(false, "%s", desc);
		tap_diag("  no completion within %d ms (wr_id %#llx)",
			 DP_WAIT_MS, (unsigned long long)w->wr_id);
		/* a dead data path must not cost minutes per test */
		if (++missing >= 3)
			tap_bail("3 expected completions in a row never came");
	}
	va_end(ap);
	return ok;
}

static uint8_t pat(size_t i, uint32_t seed)
{
	uint32_t x = (uint32_t)i * 2654435761u + seed * 40503u + (i >> 8);

	return (uint8_t)(x ^ (x >> 13) ^ (x >> 24));
}

void dp_fill(void *buf, size_t len, uint32_t seed)
{
	uint8_t *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = pat(i, seed);
}

long dp_verify(const void *buf, size_t len, uint32_t seed)
{
	const uint8_t *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != pat(i, seed))
			return (long)i;
	return -1;
}

long dp_verify_byte(const void *buf, size_t len, uint8_t c)
{
	const uint8_t *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != c)
			return (long)i;
	return -1;
}

void dp_expect_longer_attr(const uint8_t *buf, size_t buflen,
			   const void *ref, size_t reflen, size_t inlen)
{
	tap_ok(!memcmp(buf, ref, reflen),
	       "... known fields as with sizeof(attr)");
	tap_ok(dp_verify_byte(buf + reflen, inlen - reflen, 0) < 0,
	       "... unknown tail reads 0 (not supported)");
	tap_ok(dp_verify_byte(buf + inlen, buflen - inlen, 0xff) < 0,
	       "... nothing written past inlen");
}

long dp_hw_counter(const char *ibdev, const char *name)
{
	char path[256], buf[64];
	FILE *f;
	long v = -1;

	usleep(20000);
	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/ports/1/hw_counters/%s", ibdev,
		 name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f))
		v = strtol(buf, NULL, 10);
	fclose(f);
	return v;
}

void *dp_alloc(size_t len)
{
	void *p;

	if (posix_memalign(&p, 4096, len ? len : 1))
		tap_bail("posix_memalign(%zu) failed", len);
	memset(p, 0, len);
	return p;
}

struct ibv_mr *dp_reg(struct ibv_pd *pd, void *buf, size_t len, int access)
{
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, len, access);

	if (!mr)
		tap_bail("ibv_reg_mr(%zu, %#x): %s", len, access,
			 strerror(errno));
	return mr;
}

/*
 * Fault injection through configfs (rxe/rxe2_fault.c, docs/knobs.md):
 * /sys/kernel/config/rxe2/IBDEV/ with tx_drop and rules/NAME/, one file
 * per field of a rule.  A rule made here is named by a number one above
 * the last (four digits), so that the names sort in the order the rules
 * went live, the order they are asked in; IBDEV's directory goes when no
 * rule is left and tx_drop is 0 (it pins the module).  selftests/lib.sh
 * does the same for the shell tests.
 */
#define DP_CFS "/sys/kernel/config/rxe2"

/* the fields a rule line may set, the files of rules/NAME/ */
static const char *const dp_fault_fields[] = {
	"qpn", "opcode", "every", "rate", "count", "ms",
};

int dp_cfs_put(const char *path, const char *val)
{
	char buf[128];
	int fd, n, err = 0;

	fd = open(path, O_WRONLY);
	if (fd < 0)
		return errno;
	/* with a newline, as echo writes it: an empty value is not skipped */
	n = snprintf(buf, sizeof(buf), "%s\n", val);
	if (write(fd, buf, n) < 0)
		err = errno;
	close(fd);
	return err;
}

int dp_cfs_get(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd, err = 0;

	buf[0] = 0;
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return errno;
	n = read(fd, buf, len - 1);
	if (n < 0)
		err = errno;
	else
		buf[n] = 0;
	close(fd);
	buf[strcspn(buf, "\n")] = 0;
	return err;
}

static int dp_not_dot(const struct dirent *e)
{
	return e->d_name[0] != '.';
}

/* the entries of rules/ in name order (free each and the array), or -1 */
static int dp_fault_names(const char *ibdev, struct dirent ***names)
{
	char dir[256];

	snprintf(dir, sizeof(dir), DP_CFS "/%s/rules", ibdev);
	return scandir(dir, names, dp_not_dot, alphasort);
}

static void dp_names_free(struct dirent **names, int n)
{
	while (n > 0)
		free(names[--n]);
	free(names);
}

/* IBDEV's directory gone if no rule is left and tx_drop is 0 (or gone) */
static void dp_fault_tidy(const char *ibdev)
{
	struct dirent **names;
	char path[256], v[32];
	int n;

	n = dp_fault_names(ibdev, &names);
	if (n < 0)
		return;
	dp_names_free(names, n);
	snprintf(path, sizeof(path), DP_CFS "/%s/tx_drop", ibdev);
	if (n || (!dp_cfs_get(path, v, sizeof(v)) && strcmp(v, "0")))
		return;
	snprintf(path, sizeof(path), DP_CFS "/%s", ibdev);
	rmdir(path);
}

static int dp_fault_clear(const char *ibdev)
{
	struct dirent **names;
	char path[512];
	int i, n, err = 0;

	n = dp_fault_names(ibdev, &names);
	if (n < 0)
		return errno == ENOENT ? 0 : errno;	/* no directory */
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), DP_CFS "/%s/rules/%s", ibdev,
			 names[i]->d_name);
		if (rmdir(path) && !err)
			err = errno;
	}
	dp_names_free(names, n);
	dp_fault_tidy(ibdev);
	return err;
}

/* IBDEV's directory, made if need be: 0 or mkdir's errno */
static int dp_fault_dir(const char *ibdev)
{
	char dir[256];

	snprintf(dir, sizeof(dir), DP_CFS "/%s", ibdev);
	return mkdir(dir, 0755) && errno != EEXIST ? errno : 0;
}

/* the fields of one rule line into rules/NAME/: 0 or an errno */
static int dp_fault_fill(const char *rule, char *line)
{
	char path[512], *save, *tok;
	unsigned int i;
	int err;

	tok = strtok_r(line, " \t", &save);
	snprintf(path, sizeof(path), "%s/action", rule);
	err = dp_cfs_put(path, tok);
	while (!err && (tok = strtok_r(NULL, " \t", &save))) {
		char *val = strchr(tok, '=');

		if (!val)
			return EINVAL;
		*val++ = 0;
		for (i = 0; i < sizeof(dp_fault_fields) / sizeof(dp_fault_fields[0]); i++)
			if (!strcmp(tok, dp_fault_fields[i]))
				break;
		/* not a field of a rule line (enable among them) */
		if (i == sizeof(dp_fault_fields) / sizeof(dp_fault_fields[0]))
			return EINVAL;
		snprintf(path, sizeof(path), "%s/%s", rule, tok);
		err = dp_cfs_put(path, val);
	}
	if (err)
		return err;
	snprintf(path, sizeof(path), "%s/enable", rule);
	return dp_cfs_put(path, "1");
}

int dp_fault_write(const char *ibdev, const char *text)
{
	char line[256], rule[256], *p = line, *end;
	struct dirent **names;
	int n, last = 0, err;

	snprintf(line, sizeof(line), "%s", text);
	while (*p == ' ' || *p == '\t' || *p == '\n')
		p++;
	end = p + strlen(p);
	while (end > p && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\n'))
		*--end = 0;
	if (!strcmp(p, "clear"))
		return dp_fault_clear(ibdev);
	if (!*p)
		return EINVAL;
	err = dp_fault_dir(ibdev);
	if (err)
		return err;
	n = dp_fault_names(ibdev, &names);
	if (n < 0)
		return errno;
	if (n)
		last = atoi(names[n - 1]->d_name);
	dp_names_free(names, n);
	snprintf(rule, sizeof(rule), DP_CFS "/%s/rules/%04d", ibdev, last + 1);
	if (mkdir(rule, 0755)) {
		err = errno;
		dp_fault_tidy(ibdev);
		return err;
	}
	err = dp_fault_fill(rule, p);
	if (err) {
		rmdir(rule);
		dp_fault_tidy(ibdev);
	}
	return err;
}

/* FIELD of rule NAME of IBDEV into v: 0 or the errno */
static int dp_rule_get(const char *ibdev, const char *name,
		       const char *field, char *v, size_t len)
{
	char path[512];

	snprintf(path, sizeof(path), DP_CFS "/%s/rules/%s/%s", ibdev, name,
		 field);
	return dp_cfs_get(path, v, len);
}

/* live rule NAME as a rule line and its counts; 0 (one[0] 0: not live) */
static int dp_rule_line(const char *ibdev, const char *name, char *one,
			size_t len)
{
	char v[64], m[32], f[32];
	size_t o;
	unsigned int i;
	int err;

	one[0] = 0;
	err = dp_rule_get(ibdev, name, "enable", v, sizeof(v));
	if (err || strcmp(v, "1"))
		return err;	/* not live: not asked */
	err = dp_rule_get(ibdev, name, "action", v, sizeof(v));
	if (err)
		return err;
	o = snprintf(one, len, "%s", v);
	for (i = 0; i < sizeof(dp_fault_fields) / sizeof(dp_fault_fields[0]); i++) {
		err = dp_rule_get(ibdev, name, dp_fault_fields[i], v, sizeof(v));
		if (err)
			return err;
		/* what a rule line leaves out reads any (qpn, opcode) or 0 */
		if (strcmp(v, i < 2 ? "any" : "0") && o < len)
			o += snprintf(one + o, len - o, " %s=%s",
				      dp_fault_fields[i], v);
	}
	err = dp_rule_get(ibdev, name, "matched", m, sizeof(m));
	if (!err)
		err = dp_rule_get(ibdev, name, "fired", f, sizeof(f));
	if (!err && o < len)
		snprintf(one + o, len - o, " matched=%s fired=%s\n", m, f);
	return err;
}

int dp_fault_read(const char *ibdev, char *buf, size_t len)
{
	struct dirent **names;
	size_t at = 0;
	int i, n, err = 0;

	buf[0] = 0;
	n = dp_fault_names(ibdev, &names);
	if (n < 0)
		return errno == ENOENT ? 0 : errno;
	for (i = 0; i < n && !err; i++) {
		char one[256];

		err = dp_rule_line(ibdev, names[i]->d_name, one, sizeof(one));
		if (!err && at < len)
			at += snprintf(buf + at, len - at, "%s", one);
	}
	dp_names_free(names, n);
	return err;
}

int dp_fault_tx_drop(const char *ibdev, unsigned int every)
{
	char path[256], v[16];
	int err = dp_fault_dir(ibdev);

	if (err)
		return err;
	snprintf(path, sizeof(path), DP_CFS "/%s/tx_drop", ibdev);
	snprintf(v, sizeof(v), "%u", every);
	err = dp_cfs_put(path, v);
	if (err || !every)
		dp_fault_tidy(ibdev);
	return err;
}

int dp_sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	int r, n;

	va_start(ap, fmt);
	n = vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	/* a command cut short would run as something else */
	if (n < 0 || (size_t)n >= sizeof(cmd)) {
		fprintf(stderr, "dp_sh: command longer than %zu bytes\n",
			sizeof(cmd));
		return -1;
	}
	fflush(stdout);
	r = system(cmd);
	if (r == -1)
		return -1;
	return WIFEXITED(r) ? WEXITSTATUS(r) : -1;
}

bool dp_res_detail(const char *dev, const char *res, const char *filter,
		   const char *name, const char *v)
{
	return !dp_sh("rdma resource show %s %s %s%s %s -dd | "
		      "grep -Eq ' drv_%s %s( |$)'", res, *filter ? "link" : "dev",
		      dev, *filter ? "/1" : "", filter, name, v);
}

const char *dp_netdev(const struct dp_dev *d)
{
	static char name[64];
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/ports/%d/gid_attrs/ndevs/%d",
		 d->name, PORT, d->gidx);
	f = fopen(path, "r");
	if (!f)
		return NULL;
	if (!fgets(name, sizeof(name), f)) {
		fclose(f);
		return NULL;
	}
	fclose(f);
	name[strcspn(name, "\n")] = 0;
	return name[0] ? name : NULL;
}

int dp_packet_socket(const struct dp_dev *d, int rcvbuf)
{
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET,
		/* the taps dev_queue_xmit_nit() shows are ETH_P_ALL's */
		.sll_protocol = htons(ETH_P_ALL),
	};
	const char *netdev = dp_netdev(d);
	int fd;

	sll.sll_ifindex = netdev ? if_nametoindex(netdev) : 0;
	if (!sll.sll_ifindex)
		return -1;
	fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll))) {
		close(fd);
		return -1;
	}
	return fd;
}

int dp_set_mtu(struct dp_dev *d, const char *netdev, int mtu,
	       enum ibv_mtu want)
{
	uint64_t end;

	if (dp_sh("ip link set dev %s mtu %d", netdev, mtu))
		return -1;
	end = dp_now_ms() + 5000;
	do {
		if (!dp_query_port(d) && d->port.active_mtu >= want)
			return 0;
		usleep(20000);
	} while (dp_now_ms() < end);
	return -1;
}

const struct ibv_qp_cap dp_small_cap = {
	.max_send_wr = 64, .max_recv_wr = 64,
	.max_send_sge = 1, .max_recv_sge = 1,
};

void dp_qp_free(struct dp_qp *q)
{
	if (q->qp)
		ibv_destroy_qp(q->qp);
	if (q->scq)
		ibv_destroy_cq(q->scq);
	if (q->rcq)
		ibv_destroy_cq(q->rcq);
	memset(q, 0, sizeof(*q));
}

static int qp_make(struct dp_dev *d, enum ibv_qp_type type,
		   const struct ibv_qp_cap *cap, struct dp_qp *q)
{
	memset(q, 0, sizeof(*q));
	q->d = d;
	q->scq = ibv_create_cq(d->ctx, 256, NULL, NULL, 0);
	q->rcq = ibv_create_cq(d->ctx, 256, NULL, NULL, 0);
	if (q->scq && q->rcq)
		q->qp = dp_create_qp(d, type, q->scq, q->rcq, NULL, cap);
	return q->qp ? 0 : (errno ? errno : ENOMEM);
}

int dp_pair(struct dp_dev *da, struct dp_dev *db, enum ibv_qp_type type,
	    const struct ibv_qp_cap *cap, const struct dp_conn *c,
	    struct dp_qp *a, struct dp_qp *b)
{
	int e;

	e = qp_make(da, type, cap, a);
	if (!e)
		e = qp_make(db, type, cap, b);
	if (!e)
		e = dp_connect(a->qp, da, &db->gid, b->qp->qp_num, c);
	if (!e)
		e = dp_connect(b->qp, db, &da->gid, a->qp->qp_num, c);
	if (e) {
		dp_qp_free(a);
		dp_qp_free(b);
	}
	return e;
}

int dp_rc_pair(struct dp_dev *d, struct dp_qp *a, struct dp_qp *b)
{
	struct dp_conn c;
	int r;

	dp_conn_default(&c);
	r = dp_pair(d, d, IBV_QPT_RC, &dp_small_cap, &c, a, b);
	if (r)
		tap_diag("dp_pair: %s", strerror(r));
	return r;
}

int dp_ud_qp(struct dp_dev *d, const struct ibv_qp_cap *cap,
	     const struct dp_conn *c, struct dp_qp *q)
{
	int r = qp_make(d, IBV_QPT_UD, cap, q);

	if (!r)
		r = dp_connect(q->qp, d, NULL, 0, c);
	if (r)
		dp_qp_free(q);
	return r;
}

int dp_post_send1(struct ibv_qp *qp, uint64_t wr_id, enum ibv_wr_opcode op,
		  const void *addr, uint32_t len, uint32_t lkey,
		  uint64_t raddr, uint32_t rkey, unsigned int flags)
{
	struct ibv_sge sge = { .addr = (uintptr_t)addr, .length = len,
			       .lkey = lkey };
	struct ibv_send_wr wr, *bad = NULL;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED | flags;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	if (op == IBV_WR_ATOMIC_CMP_AND_SWP ||
	    op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 1;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	return ibv_post_send(qp, &wr, &bad);
}

int dp_post_recv1(struct ibv_qp *qp, uint64_t wr_id, void *addr,
		  uint32_t len, uint32_t lkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)addr, .length = len,
			       .lkey = lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = 1 }, *bad = NULL;

	return ibv_post_recv(qp, &wr, &bad);
}

bool dp_veth_links(void)
{
	uint64_t end;

	dp_sh("ip link del rxe2dp0 2>/dev/null");
	if (dp_sh("ip link add rxe2dp0 mtu 9000 type veth peer name rxe2dp1 mtu 9000 && "
		  "ip addr add 198.18.7.1/24 dev rxe2dp0 && "
		  "ip addr add 198.18.7.2/24 dev rxe2dp1 && "
		  "ip link set rxe2dp0 up && ip link set rxe2dp1 up && "
		  /*
		   * Both ends are local addresses of this host: ARP and
		   * packets between them carry a local source address,
		   * which Linux drops as martian unless accept_local.
		   */
		  "sysctl -qw net.ipv4.conf.rxe2dp0.accept_local=1 "
		  "net.ipv4.conf.rxe2dp1.accept_local=1 "
		  "net.ipv4.conf.rxe2dp0.rp_filter=0 "
		  "net.ipv4.conf.rxe2dp1.rp_filter=0 && "
		  "rdma link add rxe2_dp0 type rxe2 netdev rxe2dp0 && "
		  "rdma link add rxe2_dp1 type rxe2 netdev rxe2dp1"))
		return false;
	/* the GID table fills asynchronously */
	end = dp_now_ms() + 10000;
	while (dp_sh("grep -qs ffff:c612:0701 /sys/class/infiniband/rxe2_dp0/ports/1/gids/* && "
		     "grep -qs ffff:c612:0702 /sys/class/infiniband/rxe2_dp1/ports/1/gids/*")) {
		if (dp_now_ms() > end) {
			tap_diag("  no IPv4 GIDs on rxe2_dp0/rxe2_dp1");
			return false;
		}
		usleep(50000);
	}
	return true;
}

int dp_veth_links_del(void)
{
	return dp_sh("rdma link del rxe2_dp0; rdma link del rxe2_dp1; ip link del rxe2dp0");
}

struct ibv_ah *dp_loop_ah(struct dp_dev *d)
{
	struct ibv_ah_attr aa = {
		.is_global = 1,
		.port_num = PORT,
		.grh = {
			.dgid = d->gid,
			.sgid_index = d->gidx,
			.hop_limit = 64,
		},
	};
	struct ibv_ah *ah = ibv_create_ah(d->pd, &aa);

	if (!ah)
		tap_bail("ibv_create_ah: %s", strerror(errno));
	return ah;
}
