// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * covers: objects of another context (another device, another open of the same one) handed to verbs: refused (EINVAL on rxe2, ENOENT elsewhere), never used, the context still usable
 *
 * Objects of another context (another device, or another open of the
 * same device) handed to a verb are refused, never used and never a
 * crash; the context stays usable afterwards.
 *
 * Which errno: the kernel can only see handle numbers, and ib_uverbs
 * answers ENOENT for a number the file does not hold.  A foreign object
 * whose number the file does hold would be silently taken for the local
 * one, so the rxe2 provider checks every object's context itself and
 * answers EINVAL before the kernel is asked: on rxe2 all cases are
 * EINVAL, elsewhere (the in-tree rxe provider does not check) ENOENT.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tap.h"
#include "util.h"

static struct ibv_qp *qp_create(struct ibv_pd *pd, struct ibv_cq *scq,
				struct ibv_cq *rcq, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.send_cq = scq,
		.recv_cq = rcq,
		.srq = srq,
		.cap = { .max_send_wr = 4, .max_recv_wr = srq ? 0 : 4,
			 .max_send_sge = 1, .max_recv_sge = srq ? 0 : 1 },
	};

	return ibv_create_qp(pd, &init);
}

static int foreign_errno = ENOENT;

static void refused(struct ibv_qp *qp, const char *what)
{
	tap_null_errno(qp, foreign_errno, "ibv_create_qp with %s -> %s", what,
		       foreign_errno == EINVAL ? "EINVAL" : "ENOENT");
	if (qp)
		ibv_destroy_qp(qp);
}

int main(void)
{
	const char *dev = test_dev_name();
	const char *ref = test_ref_dev_name();
	struct ibv_srq_init_attr sinit = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_context *a, *b, *r;
	struct ibv_pd *pda, *pdb, *pdr;
	struct ibv_cq *cqa, *cqb, *cqr;
	struct ibv_srq *srqb, *srqr;
	struct ibv_qp *qp;
	char desc[128];
	struct ibv_pd *padb[3], *padr[3];
	struct ibv_context *c;
	struct ibv_cq *cqc;
	struct ibv_pd *pdc;
	bool rxe2 = test_is_rxe2(dev);
	int qps, i;

	if (rxe2)
		foreign_errno = EINVAL;
	a = test_open(dev);
	b = test_open(dev);
	r = test_open(ref);
	/*
	 * uverbs numbers each file's objects from 0, lowest free first.  The
	 * padding PDs push the foreign CQs and SRQs to handle numbers that
	 * context a never hands out, so the kernel itself can refuse them.
	 */
	pdb = ibv_alloc_pd(b);
	pdr = ibv_alloc_pd(r);
	for (i = 0; i < 3; i++) {
		padb[i] = ibv_alloc_pd(b);
		padr[i] = ibv_alloc_pd(r);
	}
	cqb = ibv_create_cq(b, 16, NULL, NULL, 0);
	cqr = ibv_create_cq(r, 16, NULL, NULL, 0);
	srqb = pdb ? ibv_create_srq(pdb, &sinit) : NULL;
	srqr = pdr ? ibv_create_srq(pdr, &sinit) : NULL;
	pda = ibv_alloc_pd(a);
	cqa = ibv_create_cq(a, 16, NULL, NULL, 0);
	if (!pdb || !pdr || !cqb || !cqr || !srqb || !srqr || !pda || !cqa)
		tap_bail("setup: %s", strerror(errno));
	qps = res_count(dev, "qp");

	snprintf(desc, sizeof(desc), "a CQ of %s", ref);
	refused(qp_create(pda, cqr, cqr, NULL), desc);
	snprintf(desc, sizeof(desc), "a send CQ of %s", ref);
	refused(qp_create(pda, cqr, cqa, NULL), desc);
	snprintf(desc, sizeof(desc), "a recv CQ of %s", ref);
	refused(qp_create(pda, cqa, cqr, NULL), desc);
	snprintf(desc, sizeof(desc), "an SRQ of %s", ref);
	refused(qp_create(pda, cqa, cqa, srqr), desc);
	refused(qp_create(pda, cqb, cqb, NULL),
		"a CQ of another context of the same device");
	refused(qp_create(pda, cqa, cqb, NULL),
		"a recv CQ of another context of the same device");
	refused(qp_create(pda, cqa, cqa, srqb),
		"an SRQ of another context of the same device");
	/*
	 * Context c's CQ carries the same handle number as context a's own
	 * CQ: only the provider can tell them apart, by the context.  The
	 * in-tree rxe provider does not look and would use a's CQ.
	 */
	c = test_open(dev);
	pdc = ibv_alloc_pd(c);
	cqc = ibv_create_cq(c, 16, NULL, NULL, 0);
	if (!pdc || !cqc)
		tap_bail("setup: %s", strerror(errno));
	if (rxe2 && cqc->handle == cqa->handle)
		refused(qp_create(pda, cqc, cqc, NULL),
			"a foreign CQ whose handle number is a local CQ's (rxe2)");
	else
		tap_skip("foreign CQ with a local handle number: rxe2 only%s",
			 cqc->handle == cqa->handle ? "" : ", and handles differ");
	tap_ret(res_count(dev, "qp"), qps, "no QP was left behind");

	qp = qp_create(pda, cqa, cqa, NULL);
	tap_ok(qp != NULL, "the context still creates a QP with its own CQ");
	if (qp)
		tap_ret_errno(ibv_destroy_qp(qp), 0, "ibv_destroy_qp");
	else
		tap_skip("no QP");
	tap_ret_errno(ibv_destroy_cq(cqb), 0,
		      "the other context's CQ is untouched and destroyable");

	ibv_destroy_cq(cqa);
	ibv_dealloc_pd(pda);
	ibv_destroy_srq(srqb);
	ibv_destroy_srq(srqr);
	ibv_destroy_cq(cqr);
	for (i = 0; i < 3; i++) {
		ibv_dealloc_pd(padb[i]);
		ibv_dealloc_pd(padr[i]);
	}
	ibv_dealloc_pd(pdb);
	ibv_dealloc_pd(pdr);
	ibv_destroy_cq(cqc);
	ibv_dealloc_pd(pdc);
	ibv_close_device(c);
	ibv_close_device(a);
	ibv_close_device(b);
	ibv_close_device(r);
	return tap_done();
}
