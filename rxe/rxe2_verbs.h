/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rxe2: verbs objects (PD, AH, MR, CQ, QP, SRQ) and their rings.
 * The device core (rxe2_device.c) installs rxe2_verbs_ops below.
 */
#ifndef RXE2_VERBS_H
#define RXE2_VERBS_H

#include "rxe2.h"

/* rxe2_table.c */
void rxe2_table_init(struct rxe2_table *t, u32 min, u32 max, u32 limit);
void rxe2_table_fini(struct rxe2_table *t);
int rxe2_table_add(struct rxe2_table *t, void *obj, u32 *index);
void rxe2_table_remove(struct rxe2_table *t, u32 index);
void rxe2_tables_init(struct rxe2_dev *rdev);	/* after rdev->attr is set */
void rxe2_tables_fini(struct rxe2_dev *rdev);

/* rxe2_ring.c: rings mapped into the process */
struct rxe2_ring;
int rxe2_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma);
void rxe2_mmap_free(struct rdma_user_mmap_entry *entry);

/* rxe2_pd.c */
struct rxe2_pd {
	struct ib_pd ibpd;
	u32 index;
};

struct rxe2_ah {
	struct ib_ah ibah;
	u32 ah_num;
	struct rdma_ah_attr attr;
};

int rxe2_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int rxe2_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int rxe2_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr,
		   struct ib_udata *udata);
int rxe2_create_user_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr,
			struct ib_udata *udata);
int rxe2_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr);
int rxe2_destroy_ah(struct ib_ah *ibah, u32 flags);

/* rxe2_mr.c: the MR table, lkeys and rkeys */
struct rxe2_mr;
struct ib_mr *rxe2_get_dma_mr(struct ib_pd *ibpd, int access);
struct ib_mr *rxe2_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			       u64 iova, int access, struct ib_udata *udata);
int rxe2_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);

/* rxe2_cq.c */
struct rxe2_cq;
int rxe2_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		   struct ib_udata *udata);
int rxe2_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int rxe2_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
int rxe2_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
int rxe2_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc);

/* rxe2_qp.c: QP objects and the IBTA state machine */
struct rxe2_qp;
int rxe2_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		   struct ib_udata *udata);
int rxe2_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_udata *udata);
int rxe2_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_qp_init_attr *init);
int rxe2_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
int rxe2_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		   const struct ib_send_wr **bad_wr);
int rxe2_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		   const struct ib_recv_wr **bad_wr);

/* rxe2_srq.c */
struct rxe2_srq;
int rxe2_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		    struct ib_udata *udata);
int rxe2_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		    enum ib_srq_attr_mask mask, struct ib_udata *udata);
int rxe2_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int rxe2_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
int rxe2_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr);

/*
 * The verbs half of the device's ops, object sizes included
 * (INIT_RDMA_OBJ_SIZE); rxe2_device.c merges it with its own through a
 * second ib_set_device_ops() call.  Defined in rxe2_pd.c.
 */
extern const struct ib_device_ops rxe2_verbs_ops;

#endif /* RXE2_VERBS_H */
