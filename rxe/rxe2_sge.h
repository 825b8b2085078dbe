/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rxe2: copying between a WQE's SGE list and a buffer, through the MRs
 * the SGEs name, and the one-copy loopback sources that let a receiver
 * read a sender's MRs directly (rxe2_sge.c).  The requester, the
 * responder, the completer (READ data), transmit and the taps copy
 * through these; the MRs themselves are rxe2_verbs.h's.
 */
#ifndef RXE2_SGE_H
#define RXE2_SGE_H

#include "rxe2_dp.h"

/* copy between a list of SGEs and a buffer: a cursor over the list */
struct rxe2_sge_cursor {
	const struct rxe2_sge *sge;
	u32 num;
	u32 idx;
	u32 off;		/* within sge[idx] */
};

/* rxe2_sge.c */
int rxe2_sge_copy(struct rxe2_qp *qp, struct rxe2_sge_cursor *c, void *buf,
		  u32 len, bool to_mem, struct rxe2_mr_hold *hold,
		  unsigned int nhold, u64 *seq);
void rxe2_sge_seek(struct rxe2_sge_cursor *c, u32 offset);
void rxe2_sge_from_ib(struct rxe2_sge *sge, const struct ib_sge *sg_list,
		      int num);

/*
 * The payload of a one-copy loopback request (rxe2_tx_direct()): ranges
 * of the sender's MRs, each MR referenced until rxe2_src_put(), read in
 * order by the receiver's placement while the sender waits.  Not a
 * packet's worth of SGEs in more pieces than this: copied instead.  A
 * range of an ODP MR is faulted in first and read from its pages, each
 * referenced (rxe2_odp_hold()): at most a packet (4096 bytes) at any
 * page offset, two pages.
 */
#define RXE2_SRC_PIECES		4
#define RXE2_SRC_ODP_PAGES	2

struct rxe2_src {
	struct {
		struct rxe2_mr *mr;
		u64 iova;
		u32 len;
		u8 npages;		/* ODP: pages[] hold the range */
		u16 page_off;		/* where it starts in pages[0] */
		struct page *pages[RXE2_SRC_ODP_PAGES];
	} piece[RXE2_SRC_PIECES];
	unsigned int num;
	unsigned int idx;	/* reading piece[idx] at off */
	u32 off;
	bool err;		/* a read failed: the sender fails the WQE */
};

int rxe2_src_get(struct rxe2_qp *qp, struct rxe2_sge_cursor *c, u32 len,
		 struct rxe2_mr_hold *hold, unsigned int nhold, u64 *seq,
		 struct rxe2_src *src);
int rxe2_src_of_mr(struct rxe2_mr *mr, u64 iova, u32 len,
		   struct rxe2_src *src);
void rxe2_src_put(struct rxe2_src *src);
void rxe2_src_read(struct rxe2_src *src, void *buf, u32 len);
void rxe2_src_rewind(struct rxe2_src *src);
int rxe2_mr_copy_src(struct rxe2_mr *mr, u64 iova, struct rxe2_src *src,
		     u32 len);
int rxe2_sge_copy_src(struct rxe2_qp *qp, struct rxe2_sge_cursor *c,
		      struct rxe2_src *src, u32 len,
		      struct rxe2_mr_hold *hold, unsigned int nhold, u64 *seq);

#endif /* RXE2_SGE_H */
