// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Host-side unit test of librxe2's data path, no kernel needed: QPs, SRQs
 * and CQs whose rings are plain memory, a pipe standing in for the uverbs
 * file so every doorbell can be read back, and the provider's own
 * post_send / post_recv / poll_cq / ibv_qp_ex / ibv_cq_ex code checked
 * against the encoding of uapi/rxe2-abi.h.
 *
 *   make -C provider test
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <endian.h>
#include <sys/syscall.h>

#include <rdma/ib_user_ioctl_cmds.h>

#include "../rxe2.h"

static int failures, checks;

#define CHECK(cond, ...)						\
	do {								\
		checks++;						\
		if (!(cond)) {						\
			failures++;					\
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
			fprintf(stderr, __VA_ARGS__);			\
			fputc('\n', stderr);				\
		}							\
	} while (0)

/* a whole rxe2_context: the doorbell reads its write_refused */
static struct rxe2_context rctx;
static struct ibv_context *const ctx = &rctx.vctx.context;
static int db_read_fd;

static void fake_ring(struct rxe2_ring *ring, uint32_t num_slots,
		      uint32_t slot_size)
{
	size_t size = RXE2_RING_DATA_OFFSET + (size_t)num_slots * slot_size;

	memset(ring, 0, sizeof(*ring));
	ring->map = aligned_alloc(64, (size + 63) & ~(size_t)63);
	memset(ring->map, 0xa5, size);	/* garbage the provider must overwrite */
	ring->map_size = size;
	ring->hdr = ring->map;
	ring->hdr->producer = 0;
	ring->hdr->flags = 0;
	ring->hdr->consumer = 0;
	ring->slots = (uint8_t *)ring->map + RXE2_RING_DATA_OFFSET;
	ring->num_slots = num_slots;
	ring->slot_size = slot_size;
}

static struct rxe2_qp *fake_qp(enum ibv_qp_type type, uint32_t slots,
			       uint32_t max_sge, uint32_t max_inline,
			       uint64_t send_ops)
{
	struct ibv_qp_init_attr_ex attr = {
		.qp_type = type,
		.cap = { .max_send_wr = slots, .max_send_sge = max_sge,
			 .max_inline_data = max_inline,
			 .max_recv_wr = slots, .max_recv_sge = max_sge },
		.comp_mask = IBV_QP_INIT_ATTR_PD,
	};
	struct rxe2_qp *qp = calloc(1, sizeof(*qp));

	if (send_ops) {
		attr.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		attr.send_ops_flags = send_ops;
	}
	qp->vqp.qp.context = ctx;
	qp->vqp.qp.qp_type = type;
	qp->vqp.qp.state = IBV_QPS_RTS;
	qp->vqp.qp.handle = 0x1234;
	pthread_spin_init(&qp->sq_lock, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_init(&qp->rq_lock, PTHREAD_PROCESS_PRIVATE);
	fake_ring(&qp->sq, slots, rxe2_send_slot_size(max_sge, max_inline));
	fake_ring(&qp->rq, slots, rxe2_recv_slot_size(max_sge));
	if (rxe2_send_init(qp, &attr))
		return NULL;
	return qp;
}

/*
 * The uverbs file of a process ib_uverbs refuses write() to: this
 * program's write() answers EACCES for that fd and counts the attempts;
 * any other fd gets the real system call.
 */
static int refused_fd = -1;
static int refused_writes;

ssize_t write(int fd, const void *buf, size_t count)
{
	if (fd >= 0 && fd == refused_fd) {
		refused_writes++;
		errno = EACCES;
		return -1;
	}
	return syscall(SYS_write, fd, buf, count);
}

/* libibverbs' execute_ioctl(), replaced: what the provider asked for */
static struct ib_uverbs_ioctl_hdr ioctl_hdr;
static struct ib_uverbs_attr ioctl_attrs[8];
static int ioctl_calls;

int execute_ioctl(struct ibv_context *context, struct ibv_command_buffer *cmd)
{
	unsigned int n = cmd->next_attr - cmd->hdr.attrs;

	ioctl_calls++;
	if (context != ctx || cmd->buffer_error || n > 8)
		return EINVAL;
	ioctl_hdr = cmd->hdr;
	ioctl_hdr.num_attrs = n;
	memcpy(ioctl_attrs, cmd->hdr.attrs, n * sizeof(ioctl_attrs[0]));
	return 0;
}

/* Doorbells rung since the last call; each one checked byte for byte */
static int doorbells(struct rxe2_qp *qp)
{
	struct rxe2_doorbell_cmd db;
	int n = 0;

	while (read(db_read_fd, &db, sizeof(db)) == (ssize_t)sizeof(db)) {
		CHECK(db.hdr.command == IB_USER_VERBS_CMD_POST_SEND &&
		      db.hdr.in_words == 8 && db.hdr.out_words == 1,
		      "doorbell header %u/%u/%u", db.hdr.command,
		      db.hdr.in_words, db.hdr.out_words);
		CHECK(db.core.response == (uintptr_t)&qp->db_resp &&
		      db.core.qp_handle == 0x1234 && db.core.wr_count == 0 &&
		      db.core.sge_count == 0 &&
		      db.core.wqe_size == sizeof(struct ib_uverbs_send_wr),
		      "doorbell body");
		n++;
	}
	return n;
}

static struct rxe2_send_wqe *sq_wqe(struct rxe2_qp *qp, uint32_t idx)
{
	return rxe2_ring_slot(&qp->sq, idx);
}

static uint32_t sq_prod(struct rxe2_qp *qp)
{
	return __atomic_load_n(&qp->sq.hdr->producer, __ATOMIC_ACQUIRE);
}

static void test_post_send_rc(void)
{
	struct rxe2_qp *qp = fake_qp(IBV_QPT_RC, 4, 2, 64, 0);
	struct ibv_sge sge[3] = {
		{ .addr = 0x1000, .length = 100, .lkey = 0x11 },
		{ .addr = 0x2000, .length = 200, .lkey = 0x22 },
		{ .addr = 0x3000, .length = 300, .lkey = 0x33 },
	};
	struct ibv_send_wr wr[6], *bad;
	struct rxe2_send_wqe *w;
	struct rxe2_sge *s;
	int i, ret;

	memset(wr, 0, sizeof(wr));
	for (i = 0; i < 6; i++) {
		wr[i].wr_id = 100 + i;
		wr[i].next = i < 5 ? &wr[i + 1] : NULL;
		wr[i].sg_list = sge;
		wr[i].num_sge = 2;
	}
	wr[0].opcode = IBV_WR_SEND;
	wr[0].send_flags = IBV_SEND_SIGNALED | IBV_SEND_SOLICITED;
	wr[1].opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	wr[1].imm_data = htobe32(0xdeadbeef);
	wr[1].wr.rdma.remote_addr = 0xabcdef000;
	wr[1].wr.rdma.rkey = 0x777;
	wr[2].opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	wr[2].num_sge = 1;
	wr[2].sg_list = &(struct ibv_sge){ .addr = 0x8000, .length = 8,
					   .lkey = 0x88 };
	wr[2].wr.atomic.remote_addr = 0x10000;
	wr[2].wr.atomic.compare_add = 5;
	wr[2].wr.atomic.swap = 6;
	wr[2].wr.atomic.rkey = 0x999;
	wr[3].opcode = IBV_WR_SEND_WITH_INV;
	wr[3].invalidate_rkey = 0x4242;
	wr[3].num_sge = 0;
	wr[4].opcode = IBV_WR_SEND;
	wr[5].opcode = IBV_WR_SEND;

	bad = (void *)1;
	ret = rxe2_post_send(&qp->vqp.qp, wr, &bad);
	CHECK(ret == ENOMEM && bad == &wr[4], "SQ full: ret %d bad %p", ret,
	      (void *)bad);
	CHECK(sq_prod(qp) == 4, "producer %u after 4 WQEs", sq_prod(qp));
	CHECK(doorbells(qp) == 1, "one doorbell per post_send");

	w = sq_wqe(qp, 0);
	s = (struct rxe2_sge *)(w + 1);
	CHECK(w->wr_id == 100 && w->opcode == IB_UVERBS_WR_SEND &&
	      w->send_flags == (IBV_SEND_SIGNALED | IBV_SEND_SOLICITED) &&
	      w->num_sge == 2 && w->inline_len == 0 && w->ex == 0 &&
	      w->xrc_srqn == 0, "SEND header");
	CHECK(s[0].addr == 0x1000 && s[0].length == 100 && s[0].lkey == 0x11 &&
	      s[1].addr == 0x2000 && s[1].length == 200 && s[1].lkey == 0x22,
	      "SEND SGEs");
	w = sq_wqe(qp, 1);
	CHECK(w->opcode == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM &&
	      w->ex == htobe32(0xdeadbeef) &&
	      w->wr.rdma.remote_addr == 0xabcdef000 &&
	      w->wr.rdma.rkey == 0x777 && w->wr.rdma.reserved == 0,
	      "WRITE_WITH_IMM");
	w = sq_wqe(qp, 2);
	s = (struct rxe2_sge *)(w + 1);
	CHECK(w->opcode == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP &&
	      w->wr.atomic.remote_addr == 0x10000 &&
	      w->wr.atomic.compare_add == 5 && w->wr.atomic.swap == 6 &&
	      w->wr.atomic.rkey == 0x999 && w->num_sge == 1 &&
	      s[0].length == 8 && s[0].lkey == 0x88, "CMP_AND_SWP");
	w = sq_wqe(qp, 3);
	CHECK(w->opcode == IB_UVERBS_WR_SEND_WITH_INV && w->ex == 0x4242 &&
	      w->num_sge == 0, "SEND_WITH_INV");

	/* the kernel completes two: two more fit, one doorbell */
	__atomic_store_n(&qp->sq.hdr->consumer, 2, __ATOMIC_RELEASE);
	ret = rxe2_post_send(&qp->vqp.qp, &wr[4], &bad);
	CHECK(ret == 0 && sq_prod(qp) == 6, "refill: ret %d prod %u", ret,
	      sq_prod(qp));
	CHECK(sq_wqe(qp, 4)->wr_id == 104 && sq_wqe(qp, 5)->wr_id == 105,
	      "slots wrap");
	CHECK(doorbells(qp) == 1, "one doorbell");

	/* a consumer beyond the producer is a broken queue */
	__atomic_store_n(&qp->sq.hdr->consumer, 9, __ATOMIC_RELEASE);
	wr[5].next = NULL;
	ret = rxe2_post_send(&qp->vqp.qp, &wr[5], &bad);
	CHECK(ret == EIO && bad == &wr[5] && sq_prod(qp) == 6,
	      "broken consumer: %d", ret);
	CHECK(doorbells(qp) == 0, "no doorbell when nothing was posted");
}

static void test_post_send_checks(void)
{
	struct rxe2_qp *rc = fake_qp(IBV_QPT_RC, 8, 2, 32, 0);
	struct rxe2_qp *uc = fake_qp(IBV_QPT_UC, 8, 2, 32, 0);
	struct rxe2_qp *ud = fake_qp(IBV_QPT_UD, 8, 1, 32, 0);
	struct ibv_context other = { .cmd_fd = -1 };
	struct rxe2_ah ah = { .ibah = { .context = ctx }, .ah_num = 77 };
	struct rxe2_ah ah2 = { .ibah = { .context = &other }, .ah_num = 78 };
	char payload[40];
	struct ibv_sge sge[3] = {
		{ .addr = (uintptr_t)payload, .length = 10 },
		{ .addr = (uintptr_t)payload + 10, .length = 22 },
		{ .addr = (uintptr_t)payload + 32, .length = 1 },
	};
	struct ibv_send_wr wr, *bad;
	struct rxe2_send_wqe *w;
	int i, ret;

	for (i = 0; i < 40; i++)
		payload[i] = (char)i;

#define POST(Q, expect, what)						\
	do {								\
		uint32_t p0 = sq_prod(Q);				\
		bad = NULL;						\
		ret = rxe2_post_send(&(Q)->vqp.qp, &wr, &bad);		\
		CHECK(ret == (expect), "%s: got %d", what, ret);	\
		CHECK(ret ? bad == &wr && sq_prod(Q) == p0 :		\
		      sq_prod(Q) == p0 + 1, "%s: bad_wr/producer", what); \
		doorbells(Q);						\
	} while (0)

	memset(&wr, 0, sizeof(wr));
	wr.opcode = IBV_WR_SEND;
	wr.sg_list = sge;
	wr.num_sge = 2;
	wr.send_flags = IBV_SEND_INLINE;
	POST(rc, 0, "inline 32 bytes");
	w = sq_wqe(rc, 0);
	CHECK(w->inline_len == 32 && w->num_sge == 0 &&
	      (w->send_flags & IBV_SEND_INLINE) &&
	      !memcmp(w + 1, payload, 32), "inline payload");
	wr.num_sge = 3;
	POST(rc, EINVAL, "3 SGEs > max_send_sge 2");
	wr.num_sge = 2;
	sge[1].length = 23;
	POST(rc, EINVAL, "inline 33 bytes > 32");
	sge[1].length = 22;
	wr.send_flags = IBV_SEND_IP_CSUM;
	POST(rc, EINVAL, "IP_CSUM");
	wr.send_flags = 0;
	wr.num_sge = -1;
	POST(rc, EINVAL, "negative num_sge");
	wr.num_sge = 1;
	wr.opcode = IBV_WR_BIND_MW;
	memset(&wr.bind_mw, 0, sizeof(wr.bind_mw));
	POST(rc, EINVAL, "BIND_MW without a window");
	{
		struct ibv_mw mw = { .context = ctx, .rkey = 0xc0000105,
				     .type = IBV_MW_TYPE_1 };
		struct ibv_mr bmr = { .lkey = 0x1234 };

		wr.bind_mw.mw = &mw;
		wr.bind_mw.rkey = 0xc0000106;
		wr.bind_mw.bind_info.mr = &bmr;
		wr.bind_mw.bind_info.addr = 0x10000;
		wr.bind_mw.bind_info.length = 4096;
		wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_READ;
		POST(rc, EINVAL, "BIND_MW of a type 1 window");
		mw.type = IBV_MW_TYPE_2;
		POST(rc, 0, "BIND_MW of a type 2 window");
		w = sq_wqe(rc, sq_prod(rc) - 1);
		CHECK(w->opcode == IBV_WR_BIND_MW && w->ex == 0xc0000106 &&
		      w->wr.bind_mw.mw_rkey == 0xc0000105 &&
		      w->wr.bind_mw.mr_lkey == 0x1234 &&
		      w->wr.bind_mw.addr == 0x10000 &&
		      w->wr.bind_mw.length == 4096 &&
		      w->wr.bind_mw.access == IBV_ACCESS_REMOTE_READ,
		      "BIND_MW WQE");
		wr.bind_mw.bind_info.mr = NULL;
		POST(rc, EINVAL, "BIND_MW with a length and no MR");
		memset(&wr.bind_mw, 0, sizeof(wr.bind_mw));
	}
	wr.opcode = IBV_WR_TSO;
	POST(rc, EINVAL, "TSO");
	wr.opcode = 77;
	POST(rc, EINVAL, "opcode 77");
	wr.opcode = IBV_WR_RDMA_READ;
	wr.send_flags = IBV_SEND_INLINE;
	POST(rc, EINVAL, "inline RDMA_READ");
	wr.send_flags = 0;
	POST(rc, 0, "RDMA_READ");
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	sge[0].length = 7;
	POST(rc, EINVAL, "atomic with a 7-byte buffer");
	sge[0].length = 8;
	wr.wr.atomic.remote_addr = 0x1004;
	POST(rc, 0, "misaligned atomic: the responder NAKs it");
	wr.wr.atomic.remote_addr = 0x1008;
	POST(rc, 0, "FETCH_AND_ADD");
	wr.opcode = IBV_WR_LOCAL_INV;
	wr.invalidate_rkey = 0x5151;
	POST(rc, 0, "LOCAL_INV");
	w = sq_wqe(rc, sq_prod(rc) - 1);
	CHECK(w->opcode == IB_UVERBS_WR_LOCAL_INV && w->ex == 0x5151 &&
	      w->num_sge == 0, "LOCAL_INV WQE");

	rc->vqp.qp.state = IBV_QPS_RTR;
	wr.opcode = IBV_WR_SEND;
	POST(rc, EINVAL, "SEND in RTR");
	rc->vqp.qp.state = IBV_QPS_ERR;
	POST(rc, 0, "SEND in ERR (flushed by the kernel)");

	/* UC: no reads, atomics or send-with-invalidate */
	wr.opcode = IBV_WR_RDMA_READ;
	POST(uc, EINVAL, "UC RDMA_READ");
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	POST(uc, EINVAL, "UC atomic");
	wr.opcode = IBV_WR_SEND_WITH_INV;
	POST(uc, EINVAL, "UC SEND_WITH_INV");
	wr.opcode = IBV_WR_RDMA_WRITE;
	POST(uc, 0, "UC RDMA_WRITE");

	/* UD: sends only, an AH of this context */
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.wr.ud.ah = &ah.ibah;
	POST(ud, EINVAL, "UD RDMA_WRITE");
	wr.opcode = IBV_WR_SEND_WITH_IMM;
	wr.imm_data = htobe32(0x01020304);
	wr.wr.ud.ah = NULL;
	POST(ud, EINVAL, "UD without AH");
	wr.wr.ud.ah = &ah2.ibah;
	POST(ud, EINVAL, "UD with another context's AH");
	wr.wr.ud.ah = &ah.ibah;
	wr.wr.ud.remote_qpn = 0x1000000;
	POST(ud, EINVAL, "UD remote QPN beyond 24 bits");
	wr.wr.ud.remote_qpn = 0xabcdef;
	wr.wr.ud.remote_qkey = 0x11111111;
	POST(ud, 0, "UD SEND_WITH_IMM");
	w = sq_wqe(ud, 0);
	CHECK(w->opcode == IB_UVERBS_WR_SEND_WITH_IMM && w->wr.ud.ah_num == 77 &&
	      w->wr.ud.remote_qpn == 0xabcdef &&
	      w->wr.ud.remote_qkey == 0x11111111 &&
	      w->ex == htobe32(0x01020304) && w->num_sge == 1, "UD WQE");
#undef POST
}

static void test_sig_all(void)
{
	struct ibv_qp_init_attr_ex attr = {
		.qp_type = IBV_QPT_RC, .sq_sig_all = 1,
		.cap = { .max_send_wr = 4, .max_send_sge = 1 },
	};
	struct rxe2_qp *qp = fake_qp(IBV_QPT_RC, 4, 1, 0, 0);
	struct ibv_send_wr wr = { .opcode = IBV_WR_SEND }, *bad;

	rxe2_send_init(qp, &attr);
	CHECK(rxe2_post_send(&qp->vqp.qp, &wr, &bad) == 0 &&
	      sq_wqe(qp, 0)->send_flags == IBV_SEND_SIGNALED,
	      "sq_sig_all marks every WQE signaled");
	doorbells(qp);
}

static void test_post_recv(void)
{
	struct rxe2_qp *qp = fake_qp(IBV_QPT_RC, 2, 2, 0, 0);
	struct ibv_sge sge[3] = {
		{ .addr = 0x10, .length = 1, .lkey = 1 },
		{ .addr = 0x20, .length = 2, .lkey = 2 },
	};
	struct ibv_recv_wr wr[3] = {
		{ .wr_id = 1, .next = &wr[1], .sg_list = sge, .num_sge = 2 },
		{ .wr_id = 2, .next = &wr[2], .sg_list = sge, .num_sge = 0 },
		{ .wr_id = 3, .sg_list = sge, .num_sge = 1 },
	}, *bad;
	struct rxe2_recv_wqe *w;
	struct rxe2_sge *s;
	int ret;

	ret = rxe2_post_recv(&qp->vqp.qp, wr, &bad);
	CHECK(ret == ENOMEM && bad == &wr[2], "RQ full: %d", ret);
	CHECK(qp->rq.hdr->producer == 2, "RQ producer");
	w = rxe2_ring_slot(&qp->rq, 0);
	s = (struct rxe2_sge *)(w + 1);
	CHECK(w->wr_id == 1 && w->num_sge == 2 && w->reserved == 0 &&
	      s[1].addr == 0x20 && s[1].length == 2 && s[1].lkey == 2,
	      "recv WQE");
	CHECK(doorbells(qp) == 0, "no system call for receives");

	qp->rq.hdr->consumer = 1;
	wr[2].num_sge = 3;
	ret = rxe2_post_recv(&qp->vqp.qp, &wr[2], &bad);
	CHECK(ret == EINVAL && bad == &wr[2], "recv num_sge > max");
	wr[2].num_sge = 1;
	ret = rxe2_post_recv(&qp->vqp.qp, &wr[2], &bad);
	CHECK(ret == 0 && qp->rq.hdr->producer == 3, "recv after consume");

	qp->vqp.qp.state = IBV_QPS_RESET;
	ret = rxe2_post_recv(&qp->vqp.qp, &wr[2], &bad);
	CHECK(ret == EINVAL, "recv in RESET");
}

/*
 * RXE2_RING_F_FLUSH: once the kernel flags the RQ (QP in ERROR), every
 * post_recv rings the send doorbell exactly once, after the WQEs are
 * published; without the flag, never.  Other flag bits mean nothing.
 */
static void test_post_recv_flush(void)
{
	struct rxe2_qp *qp = fake_qp(IBV_QPT_RC, 4, 1, 0, 0);
	struct ibv_sge sge = { .addr = 0x10, .length = 1, .lkey = 1 };
	struct ibv_recv_wr wr[2] = {
		{ .wr_id = 7, .next = &wr[1], .sg_list = &sge, .num_sge = 1 },
		{ .wr_id = 8, .sg_list = &sge, .num_sge = 1 },
	}, *bad;
	int ret;

	qp->rq.hdr->flags = 1u << 5;
	ret = rxe2_post_recv(&qp->vqp.qp, wr, &bad);
	CHECK(ret == 0 && doorbells(qp) == 0, "no doorbell without FLUSH");

	qp->vqp.qp.state = IBV_QPS_ERR;
	qp->rq.hdr->flags = RXE2_RING_F_FLUSH;
	ret = rxe2_post_recv(&qp->vqp.qp, wr, &bad);
	CHECK(ret == 0 && qp->rq.hdr->producer == 4,
	      "recv posted while flushing: %d", ret);
	CHECK(doorbells(qp) == 1, "FLUSH: one doorbell per post_recv");
	CHECK(((struct rxe2_recv_wqe *)rxe2_ring_slot(&qp->rq, 3))->wr_id == 8,
	      "flushed WQE written before the doorbell");

	/* a full RQ still asks for the flush of what is there */
	ret = rxe2_post_recv(&qp->vqp.qp, wr, &bad);
	CHECK(ret == ENOMEM && bad == wr && doorbells(qp) == 1,
	      "full RQ while flushing: %d", ret);
}

static void put_cqe(struct rxe2_cq *cq, uint32_t idx, uint64_t wr_id)
{
	struct rxe2_cqe *c = rxe2_ring_slot(&cq->ring, idx);

	memset(c, 0, sizeof(*c));
	c->wr_id = wr_id;
	c->status = IBV_WC_SUCCESS;
	c->opcode = IBV_WC_RECV;
	c->vendor_err = 3;
	c->byte_len = 1000 + (uint32_t)wr_id;
	c->ex = htobe32(0xcafe);
	c->qp_num = 17;
	c->src_qp = 18;
	c->wc_flags = IBV_WC_WITH_IMM | IBV_WC_GRH;
	c->pkey_index = 1;
	c->slid = 2;
	c->sl = 3;
	c->dlid_path_bits = 4;
}

static struct rxe2_cq *fake_cq(uint32_t slots)
{
	struct rxe2_cq *cq = calloc(1, sizeof(*cq));

	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	cq->vcq.cq.context = ctx;
	fake_ring(&cq->ring, slots, RXE2_CQE_SIZE);
	return cq;
}

static void test_poll_cq(void)
{
	struct rxe2_cq *cq = fake_cq(4);
	struct ibv_wc wc[4];
	int n;

	CHECK(rxe2_poll_cq(&cq->vcq.cq, 4, wc) == 0, "empty CQ");
	put_cqe(cq, 0, 1);
	put_cqe(cq, 1, 2);
	put_cqe(cq, 2, 3);
	__atomic_store_n(&cq->ring.hdr->producer, 3, __ATOMIC_RELEASE);
	n = rxe2_poll_cq(&cq->vcq.cq, 2, wc);
	CHECK(n == 2 && cq->ring.hdr->consumer == 2, "poll 2 of 3");
	CHECK(wc[0].wr_id == 1 && wc[0].status == IBV_WC_SUCCESS &&
	      wc[0].opcode == IBV_WC_RECV && wc[0].vendor_err == 3 &&
	      wc[0].byte_len == 1001 && wc[0].imm_data == htobe32(0xcafe) &&
	      wc[0].qp_num == 17 && wc[0].src_qp == 18 &&
	      wc[0].wc_flags == (IBV_WC_WITH_IMM | IBV_WC_GRH) &&
	      wc[0].pkey_index == 1 && wc[0].slid == 2 && wc[0].sl == 3 &&
	      wc[0].dlid_path_bits == 4, "ibv_wc fields");
	n = rxe2_poll_cq(&cq->vcq.cq, 4, wc);
	CHECK(n == 1 && wc[0].wr_id == 3 && cq->ring.hdr->consumer == 3,
	      "the third");

	/* inline-receive was not asked for: such a CQE is an error */
	put_cqe(cq, 3, 4);
	((struct rxe2_cqe *)rxe2_ring_slot(&cq->ring, 3))->flags =
		RXE2_CQE_F_INLINE;
	__atomic_store_n(&cq->ring.hdr->producer, 4, __ATOMIC_RELEASE);
	n = rxe2_poll_cq(&cq->vcq.cq, 4, wc);
	CHECK(n == 1 && wc[0].status == IBV_WC_GENERAL_ERR &&
	      wc[0].byte_len == 0, "unexpected inline CQE");

	__atomic_store_n(&cq->ring.hdr->producer, 9, __ATOMIC_RELEASE);
	errno = 0;
	n = rxe2_poll_cq(&cq->vcq.cq, 4, wc);
	CHECK(n == -1 && errno == EIO && cq->ring.hdr->consumer == 4,
	      "producer claims 5 CQEs in a 4-slot ring");
}

static void test_poll_cq_ex(void)
{
	struct rxe2_cq *cq = fake_cq(4);
	struct ibv_cq_ex *cqx = &cq->vcq.cq_ex;
	struct ibv_poll_cq_attr attr = {};
	int ret, n = 0;

	rxe2_cq_install_ex_ops(cq);
	CHECK(ibv_start_poll(cqx, &attr) == ENOENT, "ex: empty");
	/* the lock was released: a second start must not deadlock */
	CHECK(ibv_start_poll(cqx, &attr) == ENOENT, "ex: empty again");

	/* wrap: consumer and producer near 2^32 */
	cq->ring.mine = 0xfffffffe;
	cq->ring.hdr->consumer = 0xfffffffe;
	put_cqe(cq, 0xfffffffe, 10);
	put_cqe(cq, 0xffffffff, 11);
	put_cqe(cq, 0, 12);
	__atomic_store_n(&cq->ring.hdr->producer, 1, __ATOMIC_RELEASE);
	ret = ibv_start_poll(cqx, &attr);
	while (!ret) {
		CHECK(cqx->wr_id == (uint64_t)(10 + n) &&
		      cqx->status == IBV_WC_SUCCESS, "ex CQE %d", n);
		CHECK(ibv_wc_read_opcode(cqx) == IBV_WC_RECV &&
		      ibv_wc_read_byte_len(cqx) == 1010u + n &&
		      ibv_wc_read_imm_data(cqx) == htobe32(0xcafe) &&
		      ibv_wc_read_qp_num(cqx) == 17 &&
		      ibv_wc_read_src_qp(cqx) == 18 &&
		      ibv_wc_read_wc_flags(cqx) ==
		      (IBV_WC_WITH_IMM | IBV_WC_GRH) &&
		      ibv_wc_read_slid(cqx) == 2 && ibv_wc_read_sl(cqx) == 3 &&
		      ibv_wc_read_dlid_path_bits(cqx) == 4 &&
		      ibv_wc_read_vendor_err(cqx) == 3, "ex getters");
		n++;
		ret = ibv_next_poll(cqx);
	}
	CHECK(ret == ENOENT && n == 3, "ex: 3 CQEs then ENOENT (%d, %d)", ret,
	      n);
	ibv_end_poll(cqx);
	CHECK(cq->ring.hdr->consumer == 1, "ex: consumer published");
	attr.comp_mask = 1;
	CHECK(ibv_start_poll(cqx, &attr) == EINVAL, "ex: attr comp_mask");
}

static void test_qp_ex(void)
{
	uint64_t ops = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE |
		       IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |
		       IBV_QP_EX_WITH_LOCAL_INV;
	struct rxe2_qp *qp = fake_qp(IBV_QPT_RC, 4, 2, 16, ops);
	struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(&qp->vqp.qp);
	struct ibv_qp_init_attr_ex attr = {};
	struct rxe2_send_wqe *w;
	char data[] = "0123456789abcdef";	/* 16 bytes and a NUL */
	struct ibv_data_buf bufs[2] = { { data, 4 }, { data + 8, 8 } };
	int ret;

	CHECK(qpx == &qp->vqp.qp_ex, "ibv_qp_to_qp_ex");
	if (!qpx)
		return;

	ibv_wr_start(qpx);
	qpx->wr_id = 1;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(qpx);
	ibv_wr_set_sge(qpx, 0x11, 0x1000, 64);
	qpx->wr_id = 2;
	qpx->wr_flags = 0;
	ibv_wr_rdma_write(qpx, 0x22, 0x2000);
	ibv_wr_set_inline_data_list(qpx, 2, bufs);
	qpx->wr_id = 3;
	ibv_wr_atomic_fetch_add(qpx, 0x33, 0x3000, 7);
	ibv_wr_set_sge(qpx, 0x44, 0x4000, 8);
	CHECK(sq_prod(qp) == 0, "nothing published before wr_complete");
	ret = ibv_wr_complete(qpx);
	CHECK(ret == 0 && sq_prod(qp) == 3, "wr_complete: %d, prod %u", ret,
	      sq_prod(qp));
	CHECK(doorbells(qp) == 1, "wr_complete rings once");
	w = sq_wqe(qp, 0);
	CHECK(w->wr_id == 1 && w->opcode == IB_UVERBS_WR_SEND &&
	      w->send_flags == IBV_SEND_SIGNALED && w->num_sge == 1 &&
	      ((struct rxe2_sge *)(w + 1))->lkey == 0x11, "wr_send");
	w = sq_wqe(qp, 1);
	CHECK(w->wr_id == 2 && w->opcode == IB_UVERBS_WR_RDMA_WRITE &&
	      w->send_flags == IBV_SEND_INLINE && w->inline_len == 12 &&
	      !memcmp(w + 1, "012389abcdef", 12) &&
	      w->wr.rdma.rkey == 0x22 && w->wr.rdma.remote_addr == 0x2000,
	      "wr_rdma_write inline");
	w = sq_wqe(qp, 2);
	CHECK(w->opcode == IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD &&
	      w->wr.atomic.compare_add == 7 && w->wr.atomic.rkey == 0x33,
	      "wr_atomic_fetch_add");

	/* abort: nothing published, no doorbell, the slots are reused */
	ibv_wr_start(qpx);
	qpx->wr_id = 9;
	ibv_wr_send(qpx);
	ibv_wr_abort(qpx);
	CHECK(sq_prod(qp) == 3 && doorbells(qp) == 0, "wr_abort");

	/* an op not in send_ops_flags fails the whole batch */
	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	ibv_wr_rdma_read(qpx, 1, 0x1000);
	CHECK(ibv_wr_complete(qpx) == EINVAL && sq_prod(qp) == 3 &&
	      doorbells(qp) == 0, "op outside send_ops_flags");

	/* atomic without its 8-byte buffer */
	ibv_wr_start(qpx);
	ibv_wr_atomic_fetch_add(qpx, 1, 0x1000, 1);
	CHECK(ibv_wr_complete(qpx) == EINVAL, "atomic without buffer");

	/* too much inline */
	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	ibv_wr_set_inline_data(qpx, data, 17);
	CHECK(ibv_wr_complete(qpx) == EINVAL, "inline beyond max");

	/* full: 1 slot left (consumer 0, producer 3) */
	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	ibv_wr_send(qpx);
	CHECK(ibv_wr_complete(qpx) == ENOMEM && sq_prod(qp) == 3,
	      "batch beyond the SQ");
	ibv_wr_start(qpx);
	ibv_wr_local_inv(qpx, 0x5555);
	CHECK(ibv_wr_complete(qpx) == 0 && sq_prod(qp) == 4 &&
	      sq_wqe(qp, 3)->ex == 0x5555 && doorbells(qp) == 1,
	      "wr_local_inv");

	/* send_ops_flags validation */
	attr.qp_type = IBV_QPT_UD;
	attr.comp_mask = IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	attr.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE;
	CHECK(rxe2_send_check_attr(&attr) == EOPNOTSUPP, "UD RDMA op");
	attr.qp_type = IBV_QPT_RC;
	attr.send_ops_flags = IBV_QP_EX_WITH_BIND_MW;
	CHECK(rxe2_send_check_attr(&attr) == 0, "RC BIND_MW op");
	attr.qp_type = IBV_QPT_UD;
	CHECK(rxe2_send_check_attr(&attr) == EOPNOTSUPP, "UD BIND_MW op");
	attr.qp_type = IBV_QPT_RC;
	attr.send_ops_flags = IBV_QP_EX_WITH_TSO;
	CHECK(rxe2_send_check_attr(&attr) == EOPNOTSUPP, "TSO op");
	attr.send_ops_flags = 1ull << 40;
	CHECK(rxe2_send_check_attr(&attr) == EOPNOTSUPP, "unknown op");
	attr.send_ops_flags = IBV_QP_EX_WITH_SEND_WITH_INV |
			      IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP;
	CHECK(rxe2_send_check_attr(&attr) == 0, "RC ops");
}

static void test_qp_ex_bind(void)
{
	struct rxe2_qp *qp = fake_qp(IBV_QPT_RC, 4, 1, 0,
				     IBV_QP_EX_WITH_BIND_MW);
	struct ibv_qp_ex *qpx = &qp->vqp.qp_ex;
	struct ibv_mw mw = { .context = ctx, .rkey = 0xc0000300,
			     .type = IBV_MW_TYPE_2 };
	struct ibv_mr mr = { .lkey = 0x4321 };
	struct ibv_mw_bind_info bi = { .mr = &mr, .addr = 0x2000,
				       .length = 512,
				       .mw_access_flags = IBV_ACCESS_REMOTE_WRITE };
	struct rxe2_send_wqe *w;

	ibv_wr_start(qpx);
	qpx->wr_id = 9;
	ibv_wr_bind_mw(qpx, &mw, 0xc0000301, &bi);
	CHECK(ibv_wr_complete(qpx) == 0 && sq_prod(qp) == 1 &&
	      doorbells(qp) == 1, "wr_bind_mw posted");
	w = sq_wqe(qp, 0);
	CHECK(w->opcode == IBV_WR_BIND_MW && w->wr_id == 9 &&
	      w->ex == 0xc0000301 && w->wr.bind_mw.mw_rkey == 0xc0000300 &&
	      w->wr.bind_mw.mr_lkey == 0x4321 &&
	      w->wr.bind_mw.addr == 0x2000 && w->wr.bind_mw.length == 512 &&
	      w->wr.bind_mw.access == IBV_ACCESS_REMOTE_WRITE,
	      "wr_bind_mw WQE");
	ibv_wr_start(qpx);
	ibv_wr_bind_mw(qpx, &mw, 0xc0000302, &bi);
	ibv_wr_set_sge(qpx, 1, 0x1000, 8);
	CHECK(ibv_wr_complete(qpx) == EINVAL && sq_prod(qp) == 1,
	      "wr_bind_mw takes no data");
	mw.type = IBV_MW_TYPE_1;
	ibv_wr_start(qpx);
	ibv_wr_bind_mw(qpx, &mw, 0xc0000302, &bi);
	CHECK(ibv_wr_complete(qpx) == EINVAL && sq_prod(qp) == 1,
	      "wr_bind_mw of a type 1 window");
}

static void test_qp_ex_ud(void)
{
	struct rxe2_qp *qp = fake_qp(IBV_QPT_UD, 4, 1, 0,
				     IBV_QP_EX_WITH_SEND);
	struct ibv_qp_ex *qpx = &qp->vqp.qp_ex;
	struct rxe2_ah ah = { .ibah = { .context = ctx }, .ah_num = 5 };

	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	ibv_wr_set_sge(qpx, 1, 2, 3);
	CHECK(ibv_wr_complete(qpx) == EINVAL, "UD send without address");
	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	ibv_wr_set_ud_addr(qpx, &ah.ibah, 0x42, 0x1111);
	ibv_wr_set_sge(qpx, 1, 2, 3);
	CHECK(ibv_wr_complete(qpx) == 0 && sq_wqe(qp, 0)->wr.ud.ah_num == 5 &&
	      sq_wqe(qp, 0)->wr.ud.remote_qpn == 0x42 &&
	      sq_wqe(qp, 0)->wr.ud.remote_qkey == 0x1111, "UD wr API");
	doorbells(qp);
}

/* ioctl_attrs[i] is the attribute id, with that length and data */
static bool ioctl_attr_is(unsigned int i, uint16_t id, uint16_t len,
			  uint64_t data)
{
	const struct ib_uverbs_attr *a = &ioctl_attrs[i];

	return i < ioctl_hdr.num_attrs && a->attr_id == id && a->len == len &&
	       a->data == data && a->flags == UVERBS_ATTR_F_MANDATORY;
}

/*
 * write() refused with EACCES: the same POST_SEND goes through
 * UVERBS_METHOD_INVOKE_WRITE, and the context's later doorbells skip
 * write().  Any other write() error is the post's error.
 */
static void test_doorbell_refused(void)
{
	struct rxe2_qp *qp = fake_qp(IBV_QPT_RC, 8, 1, 0, 0);
	struct ibv_send_wr wr = { .wr_id = 1, .opcode = IBV_WR_SEND };
	struct ibv_send_wr *bad;
	int pipe_fd = ctx->cmd_fd, ret;

	refused_fd = ctx->cmd_fd = 1000;
	ret = rxe2_post_send(&qp->vqp.qp, &wr, &bad);
	CHECK(ret == 0 && refused_writes == 1 && ioctl_calls == 1 &&
	      atomic_load(&rctx.write_refused),
	      "EACCES: ret %d, %d write()s, %d ioctls", ret, refused_writes,
	      ioctl_calls);
	CHECK(ioctl_hdr.object_id == UVERBS_OBJECT_DEVICE &&
	      ioctl_hdr.method_id == UVERBS_METHOD_INVOKE_WRITE &&
	      ioctl_hdr.num_attrs == 3, "INVOKE_WRITE with 3 attributes");
	CHECK(ioctl_attr_is(0, UVERBS_ATTR_WRITE_CMD, 8,
			    IB_USER_VERBS_CMD_POST_SEND) &&
	      ioctl_attr_is(1, UVERBS_ATTR_CORE_IN, sizeof(qp->db.core),
			    (uintptr_t)&qp->db.core) &&
	      ioctl_attr_is(2, UVERBS_ATTR_CORE_OUT, sizeof(qp->db_resp),
			    (uintptr_t)&qp->db_resp),
	      "WRITE_CMD POST_SEND, CORE_IN the request, CORE_OUT db_resp");

	ret = rxe2_post_send(&qp->vqp.qp, &wr, &bad);
	CHECK(ret == 0 && refused_writes == 1 && ioctl_calls == 2,
	      "remembered: straight to the ioctl (%d write()s, %d ioctls)",
	      refused_writes, ioctl_calls);

	/* a closed fd: EBADF is returned, not taken for a refusal */
	atomic_store(&rctx.write_refused, false);
	refused_fd = -1;
	ret = rxe2_post_send(&qp->vqp.qp, &wr, &bad);
	CHECK(ret == EBADF && ioctl_calls == 2 &&
	      !atomic_load(&rctx.write_refused), "EBADF: ret %d", ret);
	ctx->cmd_fd = pipe_fd;
}

int main(void)
{
	int fds[2];

	if (pipe2(fds, O_NONBLOCK))
		return 1;
	ctx->cmd_fd = fds[1];
	db_read_fd = fds[0];

	test_post_send_rc();
	test_post_send_checks();
	test_sig_all();
	test_post_recv();
	test_post_recv_flush();
	test_poll_cq();
	test_poll_cq_ex();
	test_qp_ex();
	test_qp_ex_bind();
	test_qp_ex_ud();
	test_doorbell_refused();

	printf("%d checks, %d failures\n", checks, failures);
	return failures ? 1 : 0;
}
