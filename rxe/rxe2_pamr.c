// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2: physical-address MRs (rxe2dv_reg_pa_mr).
 *
 * One MR covers all of physical memory: the addresses in its SGEs and
 * in remote accesses under its rkey are physical addresses.  It is as
 * powerful as /dev/mem, so it takes CAP_SYS_RAWIO and the module
 * parameter allow_pa_mr (off by default), and the data path reaches
 * only memory the kernel manages as RAM and can map: each page is
 * looked up (pfn_to_online_page), refused when reserved, poisoned or
 * offline, held by a reference for the copy and probed through the
 * kernel mapping.  Anything else fails like an address outside an MR.
 * Turning the parameter off stops every PA MR at once.
 */
#include <linux/capability.h>
#include <linux/highmem.h>
#include <linux/memory_hotplug.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/uaccess.h>

#include "rxe2_dp.h"
#include "rxe2_verbs.h"

static bool rxe2_allow_pa_mr;
/* set by the first PA MR registration, never cleared */
static bool rxe2_pa_mr_seen;

static int rxe2_allow_pa_mr_set(const char *val, const struct kernel_param *kp)
{
	int ret = param_set_bool(val, kp);

	if (!ret && READ_ONCE(rxe2_allow_pa_mr))
		pr_warn("rdma_rxe2: physical-address MRs allowed: a process with CAP_SYS_RAWIO can read and write any RAM through one\n");
	return ret;
}

static const struct kernel_param_ops rxe2_allow_pa_mr_ops = {
	.set = rxe2_allow_pa_mr_set,
	.get = param_get_bool,
};

module_param_cb(allow_pa_mr, &rxe2_allow_pa_mr_ops, &rxe2_allow_pa_mr, 0644);
MODULE_PARM_DESC(allow_pa_mr,
		 "Allow physical-address MRs to processes with CAP_SYS_RAWIO (default: no)");

static bool rxe2_pa_mr_permitted(void)
{
	return READ_ONCE(rxe2_allow_pa_mr) &&
	       ns_capable_noaudit(&init_user_ns, CAP_SYS_RAWIO);
}

u64 rxe2_xmr_dv_caps(void)
{
	u64 caps = RXE2_DV_CAP_SHARED_MR;

	/* what this caller could create now */
	if (rxe2_pa_mr_permitted())
		caps |= RXE2_DV_CAP_PA_MR;
	return caps;
}

struct ib_mr *rxe2_pamr_reg(struct ib_pd *ibpd, int access)
{
	struct rxe2_mr *mr;
	int ret;

	if (!READ_ONCE(rxe2_allow_pa_mr) || !capable(CAP_SYS_RAWIO))
		return ERR_PTR(-EPERM);
	ret = rxe2_mr_check_access(access);
	if (ret)
		return ERR_PTR(ret);
	/* windows bind only to ibv_reg_mr MRs; nothing to fault in */
	if (access & (IB_ACCESS_MW_BIND | IB_ACCESS_ON_DEMAND))
		return ERR_PTR(-EINVAL);

	mr = rxe2_mr_alloc(ibpd, access, true);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->type = RXE2_MR_PA;
	WRITE_ONCE(rxe2_pa_mr_seen, true);
	rxe2_mr_publish(mr, 0, U64_MAX);
	pr_warn_once("rdma_rxe2: a physical-address MR was registered (pid %d, %s)\n",
		     task_pid_nr(current), current->comm);
	return &mr->ibmr;
}

static struct page *rxe2_pamr_get_page(u64 pa)
{
	struct folio *folio;
	struct page *page;
	void *va;
	char probe;
	long bad;

	if (!READ_ONCE(rxe2_allow_pa_mr))
		return NULL;
	page = pfn_to_online_page(PHYS_PFN(pa));
	if (!page || PageReserved(page) || PageHWPoison(page) ||
	    PageOffline(page))
		return NULL;
	/* a free page may be anything next: only pages in use */
	folio = page_folio(page);
	if (!folio_try_get(folio))
		return NULL;
	if (page_folio(page) != folio)
		goto put;
	/* memory taken out of the kernel's mapping (secretmem …) */
	va = kmap_local_page(page);
	bad = copy_from_kernel_nofault(&probe, va, 1);
	kunmap_local(va);
	if (bad)
		goto put;
	return page;
put:
	folio_put(folio);
	return NULL;
}

/*
 * rxe2_mr_access() for a PA MR: each page taken and checked again (it
 * may have gone since the request was accepted), mapped for fn and
 * released.  fn may be NULL (only the checks).
 */
int rxe2_pamr_access(u64 pa, u32 len, rxe2_page_fn fn, void *arg)
{
	while (len) {
		u32 poff = pa & ~PAGE_MASK;
		u32 n = min_t(u32, len, PAGE_SIZE - poff);
		struct page *page = rxe2_pamr_get_page(pa);
		void *va;

		if (!page)
			return -EFAULT;
		if (fn) {
			va = kmap_local_page(page);
			fn(va + poff, n, arg);
			kunmap_local(va);
		}
		put_page(page);
		pa += n;
		len -= n;
	}
	return 0;
}

bool rxe2_pamr_check_range(u64 pa, u64 len)
{
	struct page *page;
	u64 p, last;

	if (!len)
		return true;	/* touches nothing */
	if (pa + len - 1 < pa)
		return false;
	last = (pa + len - 1) & PAGE_MASK;
	for (p = pa & PAGE_MASK; ; p += PAGE_SIZE) {
		page = rxe2_pamr_get_page(p);
		if (!page)
			return false;
		put_page(page);
		if (p == last)
			return true;
	}
}

/*
 * A QP that receives inline (max_inl_recv) uses no PA MR (seed 004): its
 * small messages and READ/atomic results reach the process's buffers
 * through the CQE, copied by librxe2 at the SGE addresses as virtual
 * addresses, which a PA MR's are not.  Its local SGEs are refused with
 * LOC_PROT_ERR, remote accesses through its rkeys with a remote-access
 * NAK (REM_ACCESS_ERR at the requester).
 */
bool rxe2_qp_allows_pa_mr(struct rxe2_qp *qp)
{
	return !qp->max_inl_recv;
}

/*
 * Inline-receive looks no receive SGE up: whether one of the SGEs that
 * would hold len bytes names a PA MR, so that such a receive takes the
 * normal path, which refuses it (rxe2_qp_may_use_mr()).  Free until a PA
 * MR has ever been registered.
 */
bool rxe2_sges_name_pa_mr(struct rxe2_qp *qp, const struct rxe2_sge *sge,
			  u32 num_sge, u32 len)
{
	struct rxe2_dev *rdev = rxe2_qp_rdev(qp);
	u32 i, covered = 0;
	bool pa = false;

	if (!READ_ONCE(rxe2_pa_mr_seen))
		return false;
	for (i = 0; i < num_sge && covered < len && !pa; i++) {
		struct rxe2_mr *mr;

		if (!sge[i].length)
			continue;
		mr = rxe2_mr_lookup(rdev, sge[i].lkey, rxe2_qp_pd(qp), 0);
		if (mr) {
			pa = mr->type == RXE2_MR_PA;
			rxe2_mr_put(mr);
		}
		covered += min(sge[i].length, len - covered);
	}
	return pa;
}
