// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: MRs over dma-bufs (ibv_reg_dmabuf_mr) from udmabuf and the system heap: WRITE, READ and SEND byte-exact, the buffer's fds gone under WRITEs, the errors; skipped without an exporter
 *
 * MRs over dma-bufs (ibv_reg_dmabuf_mr) from the two exporters a stock
 * kernel may have: udmabuf (memfd pages) and the system dma-heap.  For
 * each: remote WRITE and READ and a SEND from the MR, byte-exact as seen
 * through the exporter's own CPU mapping; then the dma-buf's fds and
 * mapping gone with WRITEs in flight, read back through the MR, its
 * last user; the errors (a range
 * past the buffer, an fd that is no dma-buf, ON_DEMAND).  Debian's 6.1
 * kernel has neither exporter: there the test says so and skips.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/dma-heap.h>
#include <linux/udmabuf.h>

#include "dp.h"
#include "tap.h"
#include "util.h"

#define BUF_LEN		(256 * 1024)
#define MR_OFF		(4096 + 100)	/* where the MR starts in the buffer */
#define MR_LEN		(128 * 1024)
#define IOVA		0x7000000000ULL
/* the core wants iova and offset at the same place in their pages */
#define MR_IOVA		(IOVA + (MR_OFF & 4095))

/* a dma-buf, its fds and a CPU mapping of its memory */
struct buf {
	const char *name;
	int fd;			/* the dma-buf */
	int memfd;		/* udmabuf: the memfd behind it, else -1 */
	uint8_t *cpu;
};

static struct dp_dev dev;

static bool udmabuf(struct buf *b)
{
	struct udmabuf_create c = { .size = BUF_LEN };
	int dev_fd = open("/dev/udmabuf", O_RDWR);

	b->name = "udmabuf";
	b->fd = -1;
	b->memfd = memfd_create("rxe2-dmabuf", MFD_ALLOW_SEALING);
	if (dev_fd < 0 || b->memfd < 0 || ftruncate(b->memfd, BUF_LEN) ||
	    fcntl(b->memfd, F_ADD_SEALS, F_SEAL_SHRINK) < 0)
		goto fail;
	c.memfd = b->memfd;
	b->fd = ioctl(dev_fd, UDMABUF_CREATE, &c);
	if (b->fd < 0)
		goto fail;
	b->cpu = mmap(NULL, BUF_LEN, PROT_READ | PROT_WRITE, MAP_SHARED,
		      b->memfd, 0);
	if (b->cpu == MAP_FAILED)
		goto fail;
	close(dev_fd);
	return true;
fail:
	if (dev_fd >= 0)
		close(dev_fd);
	return false;
}

static bool dma_heap(struct buf *b)
{
	struct dma_heap_allocation_data a = {
		.len = BUF_LEN, .fd_flags = O_RDWR | O_CLOEXEC,
	};
	int heap = open("/dev/dma_heap/system", O_RDONLY);

	b->name = "system dma-heap";
	b->fd = -1;
	b->memfd = -1;
	if (heap < 0 || ioctl(heap, DMA_HEAP_IOCTL_ALLOC, &a) < 0)
		goto fail;
	b->fd = a.fd;
	b->cpu = mmap(NULL, BUF_LEN, PROT_READ | PROT_WRITE, MAP_SHARED,
		      b->fd, 0);
	if (b->cpu == MAP_FAILED)
		goto fail;
	close(heap);
	return true;
fail:
	if (heap >= 0)
		close(heap);
	return false;
}

static void errors(struct buf *b)
{
	struct ibv_mr *mr;
	int null_fd = open("/dev/null", O_RDWR);

	errno = 0;
	mr = ibv_reg_dmabuf_mr(dev.pd, BUF_LEN - 4096, 8192, IOVA, b->fd,
			       DP_ACCESS_ALL);
	tap_ok(!mr && errno == EINVAL, "%s: a range past the buffer: EINVAL (%s)",
	       b->name, mr ? "registered" : strerror(errno));
	if (mr)
		ibv_dereg_mr(mr);
	errno = 0;
	mr = ibv_reg_dmabuf_mr(dev.pd, 0, 4096, IOVA, null_fd, DP_ACCESS_ALL);
	tap_ok(!mr && errno == EINVAL, "%s: an fd that is no dma-buf: EINVAL (%s)",
	       b->name, mr ? "registered" : strerror(errno));
	if (mr)
		ibv_dereg_mr(mr);
	errno = 0;
	mr = ibv_reg_dmabuf_mr(dev.pd, 0, 4096, IOVA, b->fd,
			       DP_ACCESS_ALL | IBV_ACCESS_ON_DEMAND);
	tap_ok(!mr && errno == EINVAL, "%s: ON_DEMAND: EINVAL (%s)", b->name,
	       mr ? "registered" : strerror(errno));
	if (mr)
		ibv_dereg_mr(mr);
	close(null_fd);
}

static void write_read(struct buf *b, struct dp_qp *a, struct ibv_mr *mr,
		       uint8_t *host, struct ibv_mr *hmr, uint32_t seed,
		       const char *when)
{
	struct dp_wc_want w;

	dp_fill(host, 5000, seed);
	dp_post_send1(a->qp, 1, IBV_WR_RDMA_WRITE, host, 5000, hmr->lkey,
		      MR_IOVA + 10, mr->rkey, 0);
	w = dp_want(1, IBV_WC_RDMA_WRITE);
	dp_expect(a->scq, &w, "%s %s: RDMA WRITE 5000 B", b->name, when);
	tap_ret(dp_verify(b->cpu + MR_OFF + 10, 5000, seed), -1,
		"%s %s: the WRITE in the buffer, byte-exact", b->name, when);
	dp_fill(b->cpu + MR_OFF + 70000, 9000, seed + 1);
	memset(host, 0, 9000);
	dp_post_send1(a->qp, 2, IBV_WR_RDMA_READ, host, 9000, hmr->lkey,
		      MR_IOVA + 70000, mr->rkey, 0);
	w = dp_want(2, IBV_WC_RDMA_READ);
	w.byte_len = 9000;
	dp_expect(a->scq, &w, "%s %s: RDMA READ 9000 B", b->name, when);
	tap_ret(dp_verify(host, 9000, seed + 1), -1,
		"%s %s: what the READ brought, byte-exact", b->name, when);
}

/*
 * WRITEs in flight while the process lets go of the buffer (every fd
 * and its CPU mapping): the MR is then the buffer's last user.  A READ
 * of it all brings the WRITEs back.
 */
static void close_under_traffic(struct buf *b, struct dp_qp *a,
				struct ibv_mr *mr, uint8_t *host,
				struct ibv_mr *hmr)
{
	struct dp_wc_want w;
	struct ibv_wc wc[32];
	int i, n, bad = 0;

	dp_fill(host, 32 * 1024, 77);
	for (i = 0; i < 32; i++)
		dp_post_send1(a->qp, 100 + i, IBV_WR_RDMA_WRITE,
			      host + i * 1024, 1024, hmr->lkey,
			      MR_IOVA + 20000 + i * 1024, mr->rkey, 0);
	close(b->fd);
	if (b->memfd >= 0)
		close(b->memfd);
	munmap(b->cpu, BUF_LEN);
	b->fd = b->memfd = -1;
	b->cpu = NULL;
	n = dp_poll(a->scq, wc, 32, DP_WAIT_MS);
	for (i = 0; i < n; i++)
		bad += wc[i].status != IBV_WC_SUCCESS;
	tap_ok(n == 32 && !bad, "%s: 32 WRITEs complete while its fds close and its mapping goes (%d, %d bad)",
	       b->name, n, bad);
	memset(host + 32 * 1024, 0, 32 * 1024);
	dp_post_send1(a->qp, 200, IBV_WR_RDMA_READ, host + 32 * 1024,
		      32 * 1024, hmr->lkey, MR_IOVA + 20000, mr->rkey, 0);
	w = dp_want(200, IBV_WC_RDMA_READ);
	w.byte_len = 32 * 1024;
	dp_expect(a->scq, &w, "%s: READ them back with the MR its last user",
		  b->name);
	tap_ret(dp_verify(host + 32 * 1024, 32 * 1024, 77), -1,
		"%s: all 32 KiB, byte-exact", b->name);
}

static void run(struct buf *b)
{
	uint8_t *host = dp_alloc(64 * 1024);
	struct ibv_mr *hmr = dp_reg(dev.pd, host, 64 * 1024, DP_ACCESS_ALL);
	struct dp_wc_want w;
	struct dp_qp a, q;
	struct ibv_mr *mr;

	errors(b);
	mr = ibv_reg_dmabuf_mr(dev.pd, MR_OFF, MR_LEN, MR_IOVA, b->fd,
			       DP_ACCESS_ALL);
	if (!tap_ok(mr != NULL, "%s: ibv_reg_dmabuf_mr of 128 KiB at %u: %s",
		    b->name, MR_OFF, mr ? "ok" : strerror(errno)))
		goto out;
	if (dp_rc_pair(&dev, &a, &q))
		tap_bail("RC pair");
	write_read(b, &a, mr, host, hmr, 30, "while open");

	dp_fill(b->cpu + MR_OFF + 1000, 600, 40);
	dp_post_recv1(q.qp, 3, host, 1024, hmr->lkey);
	dp_post_send1(a.qp, 3, IBV_WR_SEND, (void *)(uintptr_t)(MR_IOVA + 1000),
		      600, mr->lkey, 0, 0, 0);
	w = dp_want(3, IBV_WC_SEND);
	dp_expect(a.scq, &w, "%s: SEND from the dma-buf MR", b->name);
	w = dp_want(3, IBV_WC_RECV);
	w.byte_len = 600;
	dp_expect(q.rcq, &w, "%s: its receive", b->name);
	tap_ret(dp_verify(host, 600, 40), -1, "%s: the SEND's bytes", b->name);

	close_under_traffic(b, &a, mr, host, hmr);
	dp_qp_free(&a);
	dp_qp_free(&q);
	tap_ret_errno(ibv_dereg_mr(mr), 0, "%s: ibv_dereg_mr", b->name);
out:
	if (b->fd >= 0)
		close(b->fd);
	if (b->memfd >= 0)
		close(b->memfd);
	if (b->cpu)
		munmap(b->cpu, BUF_LEN);
	ibv_dereg_mr(hmr);
	free(host);
}

int main(void)
{
	struct buf b;

	dp_open(&dev, test_dev_name());
	if (udmabuf(&b))
		run(&b);
	else
		tap_skip("udmabuf: no /dev/udmabuf in this kernel (CONFIG_UDMABUF)");
	if (dma_heap(&b))
		run(&b);
	else
		tap_skip("system dma-heap: no /dev/dma_heap/system in this kernel (CONFIG_DMABUF_HEAPS_SYSTEM)");
	dp_close(&dev);
	return tap_done();
}
