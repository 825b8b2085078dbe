// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: ibv_rereg_mr under 64 KiB multi-packet traffic between two namespaces: translation, access and ODP flips while every operation lands whole in one page set; a WRITE stalled across rereg and dereg
 *
 * ibv_rereg_mr under multi-packet traffic over a real wire: two rxe2
 * devices in two network namespaces joined by a veth, so every packet of
 * a 64 KiB message (64 packets at MTU 1024) arrives on its own from the
 * network stack and a rereg can fall between two of them.  The owner's
 * MR keeps its addresses while a thread flips its translation between
 * two sets of pages (a memfd mapped over itself, then
 * IBV_REREG_MR_CHANGE_TRANSLATION) in a loop.  Meanwhile, each message
 * with a stamp of its own:
 *   - the peer RDMA WRITEs into the MR,
 *   - the peer SENDs into receive buffers in the MR,
 *   - the peer RDMA READs from it (both page sets carry other stamps;
 *     at MTU 512, 128 responses),
 *   - the owner RDMA WRITEs out of it (local SGE gather),
 *   - the owner RDMA READs into it (local SGE scatter),
 *   - the owner RDMA WRITEs gathering from 4 MRs (4 SGEs, 4 lkeys, the
 *     flipped MR last: beyond the 2 MRs a send WQE holds),
 *   - the peer SENDs into 6-SGE receives over 6 MRs (the flipped last).
 * Every message that completes with SUCCESS is whole in exactly one page
 * set, byte for byte, never a mix (a failed one would have to carry the
 * documented error status).  All of it again with an access rereg
 * (same rights, same pages) before each translation flip, and with
 * on-demand paging turned on and off in a loop instead (a new pinned or
 * ODP umem over the same pages each time).  Last, a peer
 * stalls mid-WRITE (its link goes down): a rereg of the translation
 * returns and the WRITE, resumed, finishes whole on the old pages, also
 * when the rereg changes the PD too (a QP of the new PD, not of the old,
 * then writes the new pages); one of the access that keeps remote write returns and the WRITE finishes;
 * one that revokes it, and a dereg, return, and the resumed WRITE fails
 * with REM_ACCESS_ERR.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dp.h"
#include "tap.h"
#include "util.h"

#define WIRE_A	"rxe2_rrw1"	/* the peer */
#define WIRE_B	"rxe2_rrw2"	/* the MR's owner */
#define MSG	(64 * 1024)
#define NMSG	24
#define SET	(NMSG * MSG)
#define WIN	4
#define RW	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		 IBV_ACCESS_REMOTE_READ)

static struct dp_dev wa, wb;
static int mfd;
static uint8_t *v;		/* the MR's addresses */
static uint8_t *view[2];	/* the two page sets */
static struct ibv_mr *mr;	/* the owner's, flipped */
static uint8_t *pbuf;		/* the peer's local memory */
static struct ibv_mr *pmr;
static atomic_int stop, flips, flip_err;
/* what the flipper does in a loop */
static enum {
	FLIP_TRANS,		/* a new translation (other pages, same VA) */
	FLIP_TRANS_ACCESS,	/* the same, an access rereg before each */
	FLIP_ODP,		/* access: on-demand paging on, off, ... */
} flip_mode;
static int cur_set;		/* the page set v maps */

static bool wire_up(void)
{
	uint64_t end;

	dp_sh("ip netns del rrw1 2>/dev/null; ip netns del rrw2 2>/dev/null");
	if (dp_sh("ip netns add rrw1 && ip netns add rrw2 && "
		  "ip -n rrw1 link add rrw1v type veth peer name rrw2v netns rrw2 && "
		  "ip -n rrw1 link set lo up && ip -n rrw2 link set lo up && "
		  "ip -n rrw1 addr add 10.79.6.1/24 dev rrw1v && "
		  "ip -n rrw2 addr add 10.79.6.2/24 dev rrw2v && "
		  "ip -n rrw1 link set rrw1v up && ip -n rrw2 link set rrw2v up && "
		  "ip netns exec rrw1 rdma link add " WIRE_A " type rxe2 netdev rrw1v && "
		  "ip netns exec rrw2 rdma link add " WIRE_B " type rxe2 netdev rrw2v"))
		return false;
	end = dp_now_ms() + 10000;
	while (dp_sh("grep -qs ffff:0a4f:0601 /sys/class/infiniband/" WIRE_A "/ports/1/gids/* && "
		     "grep -qs ffff:0a4f:0602 /sys/class/infiniband/" WIRE_B "/ports/1/gids/*")) {
		if (dp_now_ms() > end)
			return false;
		usleep(50000);
	}
	return true;
}

static void wire_down(void)
{
	dp_sh("ip netns del rrw1; ip netns del rrw2");
}

static int flip_to(int set);

/* flips the translation until told to stop */
static void *flipper(void *arg)
{
	(void)arg;
	int odp = 0;

	while (!atomic_load(&stop)) {
		/*
		 * An ODP MR follows the process's mappings, so it is not
		 * moved by remapping v (that would move messages in
		 * flight): on-demand paging is turned on and off instead,
		 * a new umem (pinned or ODP) over the same pages each time.
		 */
		if (flip_mode == FLIP_ODP) {
			odp ^= IBV_ACCESS_ON_DEMAND;
			if (ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL,
					 NULL, 0, RW | odp)) {
				atomic_store(&flip_err, errno ? errno : -1);
				return NULL;
			}
			atomic_fetch_add(&flips, 1);
			continue;
		}
		if (flip_mode == FLIP_TRANS_ACCESS &&
		    ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL,
				 0, RW)) {
			atomic_store(&flip_err, errno ? errno : -1);
			return NULL;
		}
		if (flip_to(cur_set ^ 1)) {
			atomic_store(&flip_err, errno ? errno : -1);
			return NULL;
		}
		atomic_fetch_add(&flips, 1);
	}
	return NULL;
}

enum kind {
	K_WRITE, K_SEND, K_READ, K_GATHER, K_SCATTER,
	K_GATHER4,		/* owner WRITE, 4 SGEs, 4 lkeys */
	K_RECV6,		/* peer SEND, 6-SGE receive, 6 lkeys */
};

static const char *const kind_name[] = {
	"peer RDMA WRITE into the MR",
	"peer SEND into receive buffers in the MR",
	"peer RDMA READ from the MR",
	"owner RDMA WRITE gathering from the MR",
	"owner RDMA READ scattering into the MR",
	"owner RDMA WRITE gathering from 4 MRs, the MR last",
	"peer SEND into a receive of 6 MRs, the MR last",
};

/*
 * The many-lkey messages: SGE j (the pieces of MSG, in order) is in
 * the static buffer sbuf under its own MR smr[j], the last one in the
 * flipped MR.  Beyond the slots a WQE holds MRs in (2 for a send WQE):
 * the flipped MR's lkey is the one looked up at every packet.
 */
#define NPIECE	6
static const uint32_t piece_gather4[NPIECE] = {
	16384, 16384, 16384, 16384,
};
static const uint32_t piece_recv6[NPIECE] = {
	8192, 8192, 8192, 8192, 8192, 24576,
};
static uint8_t *sbuf;		/* the owner's static memory */
static struct ibv_mr *smr[NPIECE - 1];

static bool many_keys(enum kind k)
{
	return k == K_GATHER4 || k == K_RECV6;
}

/* the pieces of kind k's message, their number in *n */
static const uint32_t *pieces(enum kind k, int *n)
{
	*n = k == K_GATHER4 ? 4 : 6;
	return k == K_GATHER4 ? piece_gather4 : piece_recv6;
}

/* the message's SGE list: piece j at offset o of its buffer */
static void piece_sges(enum kind k, int i, struct ibv_sge *sge, int *n)
{
	const uint32_t *len = pieces(k, n);
	size_t o = (size_t)i * MSG, off = 0;
	int j;

	for (j = 0; j < *n; j++) {
		bool flipped = j == *n - 1;

		sge[j].addr = (uintptr_t)(flipped ? v : sbuf) + o + off;
		sge[j].length = len[j];
		sge[j].lkey = flipped ? mr->lkey : smr[j]->lkey;
		off += len[j];
	}
}

static uint32_t stamp(enum kind k, int i, int set)
{
	return 100000u * (k + 1) + 1000u * set + i;
}

struct tally {
	int ok, in[2], torn, failed, other, flushed;
};

/* piece j of message i of kind k as page set `set` has it */
static uint32_t piece_stamp(enum kind k, int i, int set, int j)
{
	return stamp(k, i, set) + ((uint32_t)(j + 1) << 24);
}

/*
 * A many-lkey message: the static pieces whole where they belong, the
 * flipped MR's piece whole in exactly one page set.  to: where the
 * message went (the peer's buffer for the gather, NULL for the receive:
 * into the owner's memory).
 */
/* which 1 KiB blocks of a piece hold the stamp's bytes ('x') or not */
static const char *blocks(const uint8_t *p, uint32_t len, enum kind k, int i,
			  int j)
{
	static char map[2][64];
	static int which;
	uint8_t *ref = malloc(len);
	char *m = map[which ^= 1];
	uint32_t b;

	if (!ref)
		return "?";
	dp_fill(ref, len, piece_stamp(k, i, 0, j));
	for (b = 0; b < len / 1024 && b < 63; b++)
		m[b] = !memcmp(p + b * 1024, ref + b * 1024, 1024) ? 'x' :
		       dp_verify_byte(p + b * 1024, 1024, 0) == -1 ? '0' : '?';
	m[b] = 0;
	free(ref);
	return m;
}

static void check_pieces(enum kind k, int i, const uint8_t *to,
			 struct tally *t)
{
	size_t o = (size_t)i * MSG, off = 0;
	const uint32_t *len;
	int n, j;

	len = pieces(k, &n);
	for (j = 0; j < n - 1; j++) {
		const uint8_t *p = to ? to + o + off : sbuf + o + off;

		long bad = dp_verify(p, len[j], piece_stamp(k, i, 0, j));

		if (bad != -1) {
			tap_diag("  message %d: piece %d (%u bytes) differs at %ld",
				 i, j, len[j], bad);
			t->torn++;
			return;
		}
		off += len[j];
	}
	if (to) {
		if (dp_verify(to + o + off, len[j],
			      piece_stamp(k, i, 0, j)) == -1)
			t->in[0]++;
		else if (dp_verify(to + o + off, len[j],
				   piece_stamp(k, i, 1, j)) == -1)
			t->in[1]++;
		else
			t->torn++;
		return;
	}
	if (dp_verify(view[0] + o + off, len[j], piece_stamp(k, i, 0, j)) == -1 &&
	    dp_verify_byte(view[1] + o + off, len[j], 0) == -1)
		t->in[0]++;
	else if (dp_verify(view[1] + o + off, len[j],
			   piece_stamp(k, i, 0, j)) == -1 &&
		 dp_verify_byte(view[0] + o + off, len[j], 0) == -1)
		t->in[1]++;
	else {
		tap_diag("  message %d: flipped piece (%u bytes): set 0 differs at %ld, zero from %ld; set 1 differs at %ld, zero from %ld; stamped 1 KiB blocks in set 0 %s, in set 1 %s",
			 i, len[j],
			 dp_verify(view[0] + o + off, len[j], piece_stamp(k, i, 0, j)),
			 dp_verify_byte(view[0] + o + off, len[j], 0),
			 dp_verify(view[1] + o + off, len[j], piece_stamp(k, i, 0, j)),
			 dp_verify_byte(view[1] + o + off, len[j], 0),
			 blocks(view[0] + o + off, len[j], k, i, j),
			 blocks(view[1] + o + off, len[j], k, i, j));
		t->torn++;
	}
}

/* message i landed in the MR: whole in exactly one page set */
static void check_landed(enum kind k, int i, struct tally *t)
{
	size_t o = (size_t)i * MSG;
	bool w0 = dp_verify(view[0] + o, MSG, stamp(k, i, 0)) == -1;
	bool w1 = dp_verify(view[1] + o, MSG, stamp(k, i, 0)) == -1;
	bool z0 = dp_verify_byte(view[0] + o, MSG, 0) == -1;
	bool z1 = dp_verify_byte(view[1] + o, MSG, 0) == -1;

	if (w0 && z1)
		t->in[0]++;
	else if (w1 && z0)
		t->in[1]++;
	else
		t->torn++;
}

/* message i was read out of the MR into buf: one page set's, whole */
static void check_read(enum kind k, int i, const uint8_t *buf,
		       struct tally *t)
{
	if (dp_verify(buf, MSG, stamp(k, i, 0)) == -1)
		t->in[0]++;
	else if (dp_verify(buf, MSG, stamp(k, i, 1)) == -1)
		t->in[1]++;
	else
		t->torn++;
}

/* the status a message that fails on a rereg or dereg gets */
static bool documented_error(enum kind k, int status)
{
	switch (k) {
	case K_WRITE:
	case K_READ:
		return status == IBV_WC_REM_ACCESS_ERR;
	case K_SEND:
	case K_RECV6:
		return status == IBV_WC_REM_OP_ERR;
	default:
		return status == IBV_WC_LOC_PROT_ERR;
	}
}

static int error_of(enum kind k)
{
	if (k == K_SEND || k == K_RECV6)
		return IBV_WC_REM_OP_ERR;
	return k <= K_READ ? IBV_WC_REM_ACCESS_ERR : IBV_WC_LOC_PROT_ERR;
}

static int post(enum kind k, struct dp_qp *pa, struct dp_qp *pb, int i)
{
	size_t o = (size_t)i * MSG;
	struct ibv_sge sge[NPIECE];
	struct ibv_send_wr wr = {
		.wr_id = i, .sg_list = sge, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)pbuf + o,
			     .rkey = pmr->rkey },
	}, *bad;

	switch (k) {
	case K_GATHER4:
		piece_sges(k, i, sge, &wr.num_sge);
		return ibv_post_send(pb->qp, &wr, &bad);
	case K_RECV6:
		return dp_post_send1(pa->qp, i, IBV_WR_SEND, pbuf + o, MSG,
				     pmr->lkey, 0, 0, 0);
	case K_WRITE:
		return dp_post_send1(pa->qp, i, IBV_WR_RDMA_WRITE, pbuf + o,
				     MSG, pmr->lkey, (uintptr_t)v + o,
				     mr->rkey, 0);
	case K_SEND:
		return dp_post_send1(pa->qp, i, IBV_WR_SEND, pbuf + o, MSG,
				     pmr->lkey, 0, 0, 0);
	case K_READ:
		return dp_post_send1(pa->qp, i, IBV_WR_RDMA_READ, pbuf + o,
				     MSG, pmr->lkey, (uintptr_t)v + o,
				     mr->rkey, 0);
	case K_GATHER:
		return dp_post_send1(pb->qp, i, IBV_WR_RDMA_WRITE, v + o, MSG,
				     mr->lkey, (uintptr_t)pbuf + o,
				     pmr->rkey, 0);
	default:
		return dp_post_send1(pb->qp, i, IBV_WR_RDMA_READ, v + o, MSG,
				     mr->lkey, (uintptr_t)pbuf + o,
				     pmr->rkey, 0);
	}
}

/* what the completion of message i says about where it went */
static void check(enum kind k, int i, struct tally *t)
{
	size_t o = (size_t)i * MSG;

	switch (k) {
	case K_WRITE:
	case K_SEND:
	case K_SCATTER:
		check_landed(k, i, t);
		break;
	case K_READ:
	case K_GATHER:
		check_read(k, i, pbuf + o, t);
		break;
	case K_GATHER4:
		check_pieces(k, i, pbuf, t);
		break;
	case K_RECV6:
		check_pieces(k, i, NULL, t);
		break;
	}
}

/* the many-lkey messages' stamps: where each comes from */
static void prepare_pieces(enum kind k)
{
	const uint32_t *len;
	int i, j, n;

	memset(sbuf, 0, SET);
	len = pieces(k, &n);
	for (i = 0; i < NMSG; i++) {
		size_t off = (size_t)i * MSG;

		for (j = 0; j < n; j++) {
			if (k == K_RECV6)
				dp_fill(pbuf + off, len[j],
					piece_stamp(k, i, 0, j));
			else if (j < n - 1)
				dp_fill(sbuf + off, len[j],
					piece_stamp(k, i, 0, j));
			else {
				dp_fill(view[0] + off, len[j],
					piece_stamp(k, i, 0, j));
				dp_fill(view[1] + off, len[j],
					piece_stamp(k, i, 1, j));
			}
			off += len[j];
		}
	}
}

static void prepare(enum kind k)
{
	int i;

	memset(view[0], 0, SET);
	memset(view[1], 0, SET);
	memset(pbuf, 0, SET);
	if (many_keys(k)) {
		prepare_pieces(k);
		return;
	}
	for (i = 0; i < NMSG; i++) {
		size_t o = (size_t)i * MSG;

		switch (k) {
		case K_WRITE:
		case K_SEND:
		case K_SCATTER:
			dp_fill(pbuf + o, MSG, stamp(k, i, 0));
			break;
		case K_READ:
		case K_GATHER:
			dp_fill(view[0] + o, MSG, stamp(k, i, 0));
			dp_fill(view[1] + o, MSG, stamp(k, i, 1));
			break;
		default:
			break;	/* prepare_pieces() */
		}
	}
}

static const char *const mode_name[] = {
	"", ", access reregs too", ", ODP on and off",
};

static void run_kind(enum kind k, int mode)
{
	struct dp_qp pa, pb;
	struct ibv_qp_cap cap = dp_small_cap;
	struct ibv_cq *cq;
	struct ibv_wc wc[WIN];
	struct tally t = {};
	struct dp_conn c;
	pthread_t th;
	int posted = 0, done = 0, n, i, f0;
	bool peer_sends = k <= K_READ || k == K_RECV6;

	prepare(k);
	/*
	 * A run that flips the translation needs a pinned MR: the ODP runs
	 * leave it on demand after an odd number of flips, and an ODP MR
	 * follows v page by page while the flipper remaps it, so messages
	 * would mix the page sets (half the runs did, from K_GATHER4 on).
	 */
	if (mode != FLIP_ODP &&
	    ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, RW))
		tap_bail("rereg back to a pinned MR: %s", strerror(errno));
	dp_conn_default(&c);
	/* 128 READ responses: more than the responder sends in one run */
	if (k == K_READ)
		c.mtu = IBV_MTU_512;
	if (many_keys(k)) {
		cap.max_send_sge = 4;
		cap.max_recv_sge = 6;
	}
	if (dp_pair(&wa, &wb, IBV_QPT_RC, &cap, &c, &pa, &pb))
		tap_bail("QP pair over the wire: %s", strerror(errno));
	if (k == K_SEND)
		for (i = 0; i < NMSG; i++)
			if (dp_post_recv1(pb.qp, i, v + (size_t)i * MSG, MSG,
					  mr->lkey))
				tap_bail("post_recv: %s", strerror(errno));
	if (k == K_RECV6)
		for (i = 0; i < NMSG; i++) {
			struct ibv_sge sge[NPIECE];
			struct ibv_recv_wr wr = { .wr_id = i, .sg_list = sge },
					   *bad;

			piece_sges(k, i, sge, &wr.num_sge);
			if (ibv_post_recv(pb.qp, &wr, &bad))
				tap_bail("post_recv: %s", strerror(errno));
		}
	cq = peer_sends ? pa.scq : pb.scq;
	atomic_store(&stop, 0);
	flip_mode = mode;
	f0 = atomic_load(&flips);
	if (pthread_create(&th, NULL, flipper, NULL))
		tap_bail("pthread_create");
	while (done < NMSG) {
		while (posted < NMSG && posted - done < WIN)
			if (post(k, &pa, &pb, posted++))
				tap_bail("post: %s", strerror(errno));
		n = dp_poll(cq, wc, 1, DP_WAIT_MS);
		if (n == 1)
			n += ibv_poll_cq(cq, WIN - 1, wc + 1);
		if (n <= 0)
			break;
		for (i = 0; i < n; i++) {
			int id = (int)wc[i].wr_id;

			if (wc[i].status == IBV_WC_SUCCESS) {
				t.ok++;
				check(k, id, &t);
			} else if (documented_error(k, wc[i].status)) {
				t.failed++;
			} else if (wc[i].status == IBV_WC_WR_FLUSH_ERR) {
				t.flushed++;
			} else {
				t.other++;
				tap_diag("  message %d: %s", id,
					 dp_status_str(wc[i].status));
			}
		}
		done += n;
		if (t.failed || t.other)
			break;	/* the QP is in ERROR now */
	}
	atomic_store(&stop, 1);
	pthread_join(th, NULL);
	if (k == K_SEND || k == K_RECV6) {
		/* the receive side of what completed */
		n = dp_poll(pb.rcq, wc, 1, 100);
		while (n > 0)
			n = ibv_poll_cq(pb.rcq, WIN, wc);
	}
	tap_ret(atomic_load(&flip_err), 0, "%s%s: every rereg succeeded",
		kind_name[k], mode_name[mode]);
	tap_diag("  %d reregs%s; %d messages whole in the first pages, %d in the second, %d failed with %s",
		 atomic_load(&flips) - f0,
		 mode_name[mode], t.in[0], t.in[1], t.failed,
		 dp_status_str(error_of(k)));
	tap_ret(t.other, 0, "%s: no completion with another status",
		kind_name[k]);
	tap_ok(done == NMSG || t.failed, "%s: all %d messages completed (%d)",
	       kind_name[k], NMSG, done);
	/* a flush never hides the error completion that caused it */
	tap_ok(!t.flushed || t.failed, "%s: %d flushed, after %d errors",
	       kind_name[k], t.flushed, t.failed);
	tap_ret(t.torn, 0,
		"%s%s: every successful message is whole in one page set, none mixed",
		kind_name[k], mode_name[mode]);
	dp_qp_free(&pa);
	dp_qp_free(&pb);
}

/* the MR's translation to page set `set` (v keeps its address) */
static int flip_to(int set)
{
	if (mmap(v, SET, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, mfd,
		 set ? SET : 0) != v)
		return -1;
	cur_set = set;
	return ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, v, SET,
			    0);
}

/*
 * A peer stalls mid-WRITE: it is slowed down (tc tbf) so that the WRITE
 * is caught after its first bytes landed, then its link goes down.
 * Returns the pair with the WRITE (wr_id 1, all of SET) stalled, or
 * false (skipped, reason given) when it could not be caught.
 */
static bool stall_write(struct dp_qp *pa, struct dp_qp *pb, int set)
{
	struct dp_conn c;
	uint64_t end;
	bool started = false;

	memset(view[0], 0, SET);
	memset(view[1], 0, SET);
	dp_fill(pbuf, SET, 4242);
	dp_conn_default(&c);
	c.timeout = 18;		/* 7 retries of ~1 s: the stall stays short of that */
	if (dp_pair(&wa, &wb, IBV_QPT_RC, &dp_small_cap, &c, pa, pb))
		tap_bail("QP pair over the wire: %s", strerror(errno));
	/* slow enough (2 MiB in ~8 s) to catch the WRITE in the middle */
	if (dp_sh("ip netns exec rrw1 tc qdisc add dev rrw1v root tbf rate 2mbit burst 32kb latency 20s")) {
		tap_skip("no tc tbf to slow the peer down");
		goto skip;
	}
	if (dp_post_send1(pa->qp, 1, IBV_WR_RDMA_WRITE, pbuf, SET, pmr->lkey,
			  (uintptr_t)v, mr->rkey, 0))
		tap_bail("post: %s", strerror(errno));
	end = dp_now_ms() + DP_WAIT_MS;
	while (dp_now_ms() < end && !started)
		started = view[set][MSG] != 0;
	dp_sh("ip -n rrw1 link set rrw1v down");
	dp_sh("ip netns exec rrw1 tc qdisc del dev rrw1v root");
	if (started && dp_verify(view[set], SET, 4242) != -1)
		return true;
	tap_skip("the WRITE was not caught mid-message (%s)",
		 started ? "it finished first" : "nothing arrived");
skip:
	dp_sh("ip -n rrw1 link set rrw1v up");
	dp_qp_free(pa);
	dp_qp_free(pb);
	return false;
}

static void on_alarm(int sig)
{
	static const char msg[] = "not ok - rereg/dereg hung behind a stalled message\n";

	(void)sig;
	if (write(1, msg, sizeof(msg) - 1) < 0)
		_exit(2);
	_exit(1);
}

/* resume the stalled WRITE: its completion (or -1) */
static int resume(struct dp_qp *pa)
{
	struct ibv_wc wc;

	dp_sh("ip -n rrw1 link set rrw1v up");
	if (dp_poll(pa->scq, &wc, 1, 60000) != 1)
		return -1;
	return wc.status;
}

/* a WRITE of MSG bytes through a new QP pair whose owner side is in pd */
static int write_in_pd(struct ibv_pd *pd, uint32_t seed)
{
	struct ibv_pd *own = wb.pd;
	struct dp_qp pa, pb;
	struct dp_conn c;
	struct ibv_wc wc;
	int ret = -1;

	dp_conn_default(&c);
	wb.pd = pd;
	ret = dp_pair(&wa, &wb, IBV_QPT_RC, &dp_small_cap, &c, &pa, &pb);
	wb.pd = own;
	if (ret)
		tap_bail("QP pair in the new PD: %s", strerror(errno));
	dp_fill(pbuf, MSG, seed);
	if (dp_post_send1(pa.qp, 2, IBV_WR_RDMA_WRITE, pbuf, MSG, pmr->lkey,
			  (uintptr_t)v, mr->rkey, 0))
		tap_bail("post: %s", strerror(errno));
	ret = dp_poll(pa.scq, &wc, 1, DP_WAIT_MS) == 1 ? (int)wc.status : -1;
	dp_qp_free(&pa);
	dp_qp_free(&pb);
	return ret;
}

/*
 * Translation and PD changed at once while a peer is stalled mid-WRITE
 * on a fresh MR: the WRITE holds the object that is the ib_mr itself,
 * and ib_core sets the new PD on that ib_mr once the rereg returns.  The
 * WRITE, resumed, still finishes whole on the old pages under the old
 * PD; a QP of the new PD reaches the new pages.
 */
static void test_stall_pd(void)
{
	struct dp_qp pa, pb;
	struct ibv_pd *pd2;
	int set, ret;

	/* a fresh MR: its first rereg retires the ib_mr's own object */
	if (ibv_dereg_mr(mr))
		tap_bail("dereg: %s", strerror(errno));
	mr = dp_reg(wb.pd, v, SET, RW);
	pd2 = ibv_alloc_pd(wb.ctx);
	if (!pd2)
		tap_bail("alloc_pd: %s", strerror(errno));
	set = cur_set;
	if (!stall_write(&pa, &pb, set)) {
		tap_skip("rereg (translation and PD) under a stalled message");
		tap_skip("the stalled WRITE completes");
		tap_skip("on the old pages");
		tap_skip("a QP of the new PD writes the new pages");
		tap_skip("a QP of the old PD is refused");
		ibv_dealloc_pd(pd2);
		return;
	}
	alarm(60);
	ret = -1;
	if (mmap(v, SET, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, mfd,
		 set ^ 1 ? SET : 0) == v) {
		cur_set = set ^ 1;
		ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION |
				   IBV_REREG_MR_CHANGE_PD, pd2, v, SET, 0);
	}
	tap_ret(ret, 0,
		"rereg (translation and PD) returns while a peer is stalled mid-WRITE");
	alarm(0);
	ret = resume(&pa);
	tap_ok(ret == IBV_WC_SUCCESS,
	       "the stalled WRITE, resumed, completes under the old PD: %s",
	       ret < 0 ? "no completion" : dp_status_str(ret));
	tap_ok(dp_verify(view[set], SET, 4242) == -1 &&
	       dp_verify_byte(view[set ^ 1], SET, 0) == -1,
	       "it finished on the old pages, whole, none in the new ones");
	dp_qp_free(&pa);
	dp_qp_free(&pb);
	ret = write_in_pd(pd2, 4343);
	tap_ok(ret == IBV_WC_SUCCESS &&
	       dp_verify(view[set ^ 1], MSG, 4343) == -1 &&
	       dp_verify(view[set], SET, 4242) == -1,
	       "a QP of the new PD writes the new pages: %s",
	       ret < 0 ? "no completion" : dp_status_str(ret));
	ret = write_in_pd(wb.pd, 4444);
	tap_ok(ret == IBV_WC_REM_ACCESS_ERR &&
	       dp_verify(view[set ^ 1], MSG, 4343) == -1,
	       "a QP of the old PD is refused now: %s",
	       ret < 0 ? "no completion" : dp_status_str(ret));
	/* back to the device's PD for what follows */
	if (ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, wb.pd, NULL, 0, 0))
		tap_bail("rereg back to the first PD: %s", strerror(errno));
	if (ibv_dealloc_pd(pd2))
		tap_bail("dealloc_pd: %s", strerror(errno));
}

/*
 * rereg of the translation while a peer is stalled mid-WRITE returns at
 * once; the WRITE, resumed, finishes whole on the pages it started on.
 * A rereg of the access that keeps remote write: the WRITE finishes
 * through the new object.  One that revokes it, or a dereg: the call
 * returns and the resumed WRITE fails with REM_ACCESS_ERR.
 */
static void test_stall(void)
{
	struct dp_qp pa, pb;
	int set = cur_set, ret;

	signal(SIGALRM, on_alarm);
	if (stall_write(&pa, &pb, set)) {
		alarm(60);
		tap_ret(flip_to(set ^ 1), 0,
			"rereg (translation) returns while a peer is stalled mid-WRITE");
		alarm(0);
		ret = resume(&pa);
		tap_ok(ret == IBV_WC_SUCCESS,
		       "the stalled WRITE, resumed, completes: %s",
		       ret < 0 ? "no completion" : dp_status_str(ret));
		tap_ok(dp_verify(view[set], SET, 4242) == -1 &&
		       dp_verify_byte(view[set ^ 1], SET, 0) == -1,
		       "it finished on the old pages, whole, none in the new ones");
		dp_qp_free(&pa);
		dp_qp_free(&pb);
	} else {
		tap_skip("rereg under a stalled message");
		tap_skip("the stalled WRITE completes");
		tap_skip("on the old pages");
	}

	/*
	 * The QPs go away while the responder holds the old translation:
	 * the hold ends with them and the old pages are released then.
	 */
	set = cur_set;
	if (stall_write(&pa, &pb, set)) {
		tap_ret(flip_to(set ^ 1), 0,
			"rereg (translation) under a stalled WRITE, again");
		tap_ret(ibv_destroy_qp(pb.qp), 0,
			"the responder QP holding the old pages is destroyed");
		pb.qp = NULL;
		dp_sh("ip -n rrw1 link set rrw1v up");
		dp_qp_free(&pa);
		dp_qp_free(&pb);
	} else {
		tap_skip("rereg under a stalled message, again");
		tap_skip("destroy of the QP holding the old pages");
	}

	test_stall_pd();

	/* same pages, same rights: the WRITE goes on through the new object */
	set = cur_set;
	if (stall_write(&pa, &pb, set)) {
		alarm(60);
		tap_ret(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL,
				     0, RW), 0,
			"rereg (access kept) returns while a peer is stalled mid-WRITE");
		alarm(0);
		ret = resume(&pa);
		tap_ok(ret == IBV_WC_SUCCESS &&
		       dp_verify(view[set], SET, 4242) == -1,
		       "the resumed WRITE completes whole: %s",
		       ret < 0 ? "no completion" : dp_status_str(ret));
		dp_qp_free(&pa);
		dp_qp_free(&pb);
	} else {
		tap_skip("rereg (access kept) under a stalled message");
		tap_skip("the stalled WRITE completes");
	}

	/* remote write revoked mid-message: the rest of it is refused */
	set = cur_set;
	if (stall_write(&pa, &pb, set)) {
		alarm(60);
		tap_ret(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL,
				     0, IBV_ACCESS_LOCAL_WRITE |
				     IBV_ACCESS_REMOTE_READ), 0,
			"rereg revoking remote write returns while a peer is stalled mid-WRITE");
		alarm(0);
		ret = resume(&pa);
		tap_ok(ret == IBV_WC_REM_ACCESS_ERR,
		       "the resumed WRITE fails: %s",
		       ret < 0 ? "no completion" : dp_status_str(ret));
		tap_ret(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL,
				     0, RW), 0, "remote write granted again");
		dp_qp_free(&pa);
		dp_qp_free(&pb);
	} else {
		tap_skip("revocation under a stalled message");
		tap_skip("the stalled WRITE fails");
		tap_skip("remote write granted again");
	}

	/* and the MR deregistered: the rest of it is refused too */
	set = cur_set;
	if (stall_write(&pa, &pb, set)) {
		alarm(60);
		ret = ibv_dereg_mr(mr);
		tap_ret(ret, 0, "dereg returns while a peer is stalled mid-WRITE");
		alarm(0);
		mr = NULL;
		ret = resume(&pa);
		tap_ok(ret == IBV_WC_REM_ACCESS_ERR,
		       "the resumed WRITE fails on the deregistered MR: %s",
		       ret < 0 ? "no completion" : dp_status_str(ret));
		dp_qp_free(&pa);
		dp_qp_free(&pb);
	} else {
		tap_skip("dereg under a stalled message");
		tap_skip("the stalled WRITE fails");
	}
}

int main(void)
{
	int k;

	if (!test_is_rxe2(test_dev_name())) {
		tap_skip("needs rxe2 devices in namespaces");
		return tap_done();
	}
	if (!wire_up()) {
		tap_skip("no namespaces with rxe2 links over a veth");
		wire_down();
		return tap_done();
	}
	dp_open(&wa, WIRE_A);
	dp_open(&wb, WIRE_B);
	mfd = memfd_create("rxe2-rereg-wire", 0);
	if (mfd < 0 || ftruncate(mfd, 2 * SET))
		tap_bail("memfd: %s", strerror(errno));
	v = mmap(NULL, SET, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	view[0] = mmap(NULL, SET, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	view[1] = mmap(NULL, SET, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, SET);
	if (v == MAP_FAILED || view[0] == MAP_FAILED || view[1] == MAP_FAILED)
		tap_bail("mmap: %s", strerror(errno));
	mr = dp_reg(wb.pd, v, SET, RW);
	pbuf = dp_alloc(SET);
	pmr = dp_reg(wa.pd, pbuf, SET, RW);
	sbuf = dp_alloc(SET);
	for (k = 0; k < NPIECE - 1; k++)
		smr[k] = dp_reg(wb.pd, sbuf, SET, RW);

	for (k = K_WRITE; k <= K_SCATTER; k++)
		run_kind(k, FLIP_TRANS);
	for (k = K_WRITE; k <= K_SCATTER; k++)
		run_kind(k, FLIP_TRANS_ACCESS);
	for (k = K_WRITE; k <= K_SCATTER; k++)
		run_kind(k, FLIP_ODP);
	/* more lkeys than a WQE holds MRs for */
	run_kind(K_GATHER4, FLIP_TRANS);
	run_kind(K_RECV6, FLIP_TRANS);
	/* pinned again for what follows */
	if (ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, RW))
		tap_bail("rereg back to pinned: %s", strerror(errno));

	test_stall();

	if (mr)
		ibv_dereg_mr(mr);
	ibv_dereg_mr(pmr);
	for (k = 0; k < NPIECE - 1; k++)
		ibv_dereg_mr(smr[k]);
	dp_close(&wa);
	dp_close(&wb);
	wire_down();
	return tap_done();
}
