// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Helpers shared by the selftests, see util.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "util.h"

const char *test_dev_name(void)
{
	const char *s = getenv("RXE2_DEV");

	return s && *s ? s : "rxe2_0";
}

const char *test_ref_dev_name(void)
{
	const char *s = getenv("RXE_DEV");

	return s && *s ? s : "rxe0";
}

struct ibv_context *test_open(const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list)
		tap_bail("ibv_get_device_list: %s", strerror(errno));
	for (i = 0; i < n; i++) {
		if (strcmp(ibv_get_device_name(list[i]), name))
			continue;
		ctx = ibv_open_device(list[i]);
		if (!ctx)
			tap_bail("ibv_open_device(%s): %s", name,
				 strerror(errno));
		break;
	}
	ibv_free_device_list(list);
	if (!ctx)
		tap_bail("device %s not found by libibverbs", name);
	return ctx;
}

bool test_is_rxe2(const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/rxe2_abi",
		 name);
	return access(path, F_OK) == 0;
}

/*
 * `rdma resource show` prints one line per device:
 *   "0: rxe2_0: pd 1 cq 1 qp 1 cm_id 0 mr 0 ctx 0 srq 0"
 * The text form is stable across iproute2 versions that know these names.
 */
static bool res_line(const char *dev, char *line, size_t len)
{
	char want[128];
	FILE *f;
	bool found = false;

	snprintf(want, sizeof(want), " %s: ", dev);
	f = popen("rdma resource show 2>/dev/null", "r");
	if (!f)
		return false;
	while (fgets(line, len, f)) {
		char *p = strstr(line, want);

		if (p) {
			memmove(line, p + strlen(want),
				strlen(p + strlen(want)) + 1);
			found = true;
			break;
		}
	}
	/* drain so that rdma is not killed by SIGPIPE mid-write */
	if (found) {
		char tmp[512];

		while (fgets(tmp, sizeof(tmp), f))
			;
	}
	pclose(f);
	return found;
}

int res_count(const char *dev, const char *type)
{
	char line[512];
	char *tok, *save = NULL;

	if (!res_line(dev, line, sizeof(line)))
		return -1;
	for (tok = strtok_r(line, " \t\n", &save); tok;
	     tok = strtok_r(NULL, " \t\n", &save)) {
		char *val = strtok_r(NULL, " \t\n", &save);

		if (!val)
			break;
		if (!strcmp(tok, type))
			return atoi(val);
	}
	return -1;
}

void res_snapshot(const char *dev, char *buf, size_t len)
{
	if (!res_line(dev, buf, len))
		buf[0] = 0;
	buf[strcspn(buf, "\n")] = 0;
}

long read_long(const char *path)
{
	long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

int time_scale(void)
{
	const char *t = getenv("RXE2_TEST_TIMEOUT");
	int s = t ? atoi(t) / 180 : 1;

	return s > 1 ? s : 1;
}

long module_param(const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "/sys/module/rdma_rxe2/parameters/%s",
		 name);
	return read_long(path);
}

int find_ipv4_gid(struct ibv_context *ctx, union ibv_gid *gid)
{
	static const uint8_t v4_prefix[12] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff
	};
	struct ibv_port_attr pattr;
	int i;

	if (ibv_query_port(ctx, PORT, &pattr))
		return -1;
	for (i = 0; i < pattr.gid_tbl_len; i++) {
		struct ibv_gid_entry e;

		if (ibv_query_gid_ex(ctx, PORT, i, &e, 0))
			continue;
		if (e.gid_type != IBV_GID_TYPE_ROCE_V2)
			continue;
		if (memcmp(e.gid.raw, v4_prefix, sizeof(v4_prefix)))
			continue;
		if (gid)
			*gid = e.gid;
		return i;
	}
	return -1;
}

void qp_attr_init(enum ibv_qp_type t, struct ibv_qp_attr *a, int *mask)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = IBV_QPS_INIT;
	a->pkey_index = 0;
	a->port_num = PORT;
	*mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
	if (t == IBV_QPT_UD) {
		a->qkey = 0x11111111;
		*mask |= IBV_QP_QKEY;
	} else {
		a->qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
		*mask |= IBV_QP_ACCESS_FLAGS;
	}
}

void qp_attr_rtr(enum ibv_qp_type t, int sgid_index, const union ibv_gid *dgid,
		 uint32_t dest_qpn, struct ibv_qp_attr *a, int *mask)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = IBV_QPS_RTR;
	*mask = IBV_QP_STATE;
	if (t == IBV_QPT_UD)
		return;
	a->path_mtu = IBV_MTU_1024;
	a->dest_qp_num = dest_qpn;
	a->rq_psn = 0x123456;
	a->ah_attr.is_global = 1;
	a->ah_attr.port_num = PORT;
	a->ah_attr.grh.dgid = *dgid;
	a->ah_attr.grh.sgid_index = sgid_index;
	a->ah_attr.grh.hop_limit = 64;
	*mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
	if (t == IBV_QPT_RC) {
		a->max_dest_rd_atomic = 1;
		a->min_rnr_timer = 12;
		*mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	}
}

void qp_attr_rts(enum ibv_qp_type t, struct ibv_qp_attr *a, int *mask)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = IBV_QPS_RTS;
	a->sq_psn = 0x654321;
	*mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (t == IBV_QPT_RC) {
		a->timeout = 14;
		a->retry_cnt = 7;
		a->rnr_retry = 7;
		a->max_rd_atomic = 1;
		*mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			 IBV_QP_MAX_QP_RD_ATOMIC;
	}
}

int qp_to_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	int mask;

	qp_attr_init(qp->qp_type, &a, &mask);
	return ibv_modify_qp(qp, &a, mask);
}

int qp_to_rtr(struct ibv_qp *qp, int sgid_index, const union ibv_gid *dgid)
{
	struct ibv_qp_attr a;
	int mask;

	qp_attr_rtr(qp->qp_type, sgid_index, dgid, qp->qp_num, &a, &mask);
	return ibv_modify_qp(qp, &a, mask);
}

int qp_to_rts(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	int mask;

	qp_attr_rts(qp->qp_type, &a, &mask);
	return ibv_modify_qp(qp, &a, mask);
}

int qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr init;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &init))
		return -1;
	return a.qp_state;
}
