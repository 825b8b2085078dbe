#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# rxe2's kernel feature probes, run by Kbuild: rxe2_probe.sh INCLUDE_DIR
# prints -DRXE2_HAVE_<NAME> for each feature whose new form the kernel's
# headers show, nothing for one whose old form they show, and
# RXE2_UNDECIDED_<NAME> when they show neither (Kbuild stops then: a probe
# never silently picks a path).  rxe2_compat.h maps each to one API.
#
# Each header is read with its declarations flattened onto one line and
# runs of white space squeezed to one blank, so a parameter moved to the
# next line does not change the answer; [^;]* stays inside a declaration.
# Upstream versions are noted for readers only: distributions backport.
inc=${1:?usage: rxe2_probe.sh INCLUDE_DIR}

flat() {
	{ tr -s "[:space:]" " " < "$inc/$1"; } 2>/dev/null
}

# probe NAME HEADER NEW OLD [OLD_HEADER]
probe() {
	if flat "$2" | grep -Eq "$3"; then
		echo "-DRXE2_HAVE_$1"
	elif flat "${5:-$2}" | grep -Eq "$4"; then
		:
	else
		echo "RXE2_UNDECIDED_$1"
	fi
}

# 6.10: create_cq and reg_user_mr_dmabuf take the uverbs attribute bundle
probe CREATE_CQ_ATTRS rdma/ib_verbs.h \
	'\(\*create_cq\)\([^;]*struct uverbs_attr_bundle \*' \
	'\(\*create_cq\)\([^;]*struct ib_udata \*'
probe DMABUF_ATTRS rdma/ib_verbs.h \
	'\(\*reg_user_mr_dmabuf\)\([^;]*struct uverbs_attr_bundle \*' \
	'\(\*reg_user_mr_dmabuf\)\([^;]*struct ib_udata \*'
# 6.17: MR registration takes a DMA handle
probe MR_DMAH rdma/ib_verbs.h \
	'\(\*reg_user_mr\)\([^;]*struct ib_dmah \*' \
	'\(\*reg_user_mr\)\([^;]*int mr_access_flags, struct ib_udata \*'
# 6.17: DMA handles (ibv_alloc_dmah), a driver object with alloc/dealloc
probe ALLOC_DMAH rdma/ib_verbs.h \
	'int \(\*alloc_dmah\)\(struct ib_dmah \*' \
	'\(\*reg_user_mr\)\([^;]*int mr_access_flags, struct ib_udata \*'
# 6.16: ODP of FLUSH and ATOMIC WRITE has a name in the kernel
probe ODP_FLUSH rdma/ib_verbs.h \
	'IB_ODP_SUPPORT_FLUSH *=' \
	'IB_ODP_SUPPORT_SRQ_RECV *='
# 7.0: ibv_query_port_speed, answered by the driver (UVERBS_METHOD_QUERY_PORT_SPEED)
probe QUERY_PORT_SPEED rdma/ib_verbs.h \
	'int \(\*query_port_speed\)\(struct ib_device \*' \
	'int \(\*query_port\)\(struct ib_device \*'
# 7.1: resize_cq became resize_user_cq with an unsigned count
probe RESIZE_USER_CQ rdma/ib_verbs.h \
	'\(\*resize_user_cq\)\(struct ib_cq \*[a-z]*, unsigned int' \
	'\(\*resize_cq\)\(struct ib_cq \*[a-z]*, int'
# 6.15: counter_bind_qp and counter_unbind_qp take the port
probe COUNTER_PORT rdma/ib_verbs.h \
	'\(\*counter_unbind_qp\)\(struct ib_qp \*[a-z]*, u32 [a-z_]*\)' \
	'\(\*counter_unbind_qp\)\(struct ib_qp \*[a-z]*\)'
# 6.15: rdma_counter is a driver object, and the core calls counter_init
# unconditionally when it makes one
probe RDMA_COUNTER_OBJ rdma/ib_verbs.h \
	'void \(\*counter_init\)\(struct rdma_counter \*' \
	'int \(\*counter_dealloc\)\(struct rdma_counter \*'
# 7.2: ib_umem_get() became ib_umem_get_va()
probe UMEM_GET_VA rdma/ib_umem.h \
	'struct ib_umem \*ib_umem_get_va\(' \
	'struct ib_umem \*ib_umem_get\(struct ib_device'
# 6.16: an ODP umem's PFNs and DMA addresses live in a struct hmm_dma_map
probe HMM_DMA_MAP rdma/ib_umem_odp.h \
	'struct hmm_dma_map map;' \
	'dma_addr_t \*dma_list;'
# 6.3: vma->vm_flags changes only through vm_flags_*()
probe VM_FLAGS_CLEAR linux/mm.h \
	'static inline void vm_flags_clear\(' \
	'unsigned long vm_flags;' linux/mm_types.h
# 6.2: dma_buf_vmap() wants the reservation lock held; _unlocked takes it
probe DMA_BUF_VMAP_UNLOCKED linux/dma-buf.h \
	'int dma_buf_vmap_unlocked\(' \
	'int dma_buf_vmap\('
# 6.2: timer_delete[_sync]() (del_timer[_sync]() gone in 6.15)
probe TIMER_DELETE linux/timer.h \
	'int timer_delete_sync\(' \
	'int del_timer_sync\('
# 6.16: from_timer() became timer_container_of()
probe TIMER_CONTAINER_OF linux/timer.h \
	'define timer_container_of\(' \
	'define from_timer\('
# 6.17: alloc_workqueue() wants WQ_PERCPU or WQ_UNBOUND (7.x warns without)
probe WQ_PERCPU linux/workqueue.h \
	'WQ_PERCPU *= ' \
	'WQ_UNBOUND *= '
# 6.13: hrtimer_setup() (hrtimer_init() gone in 6.15)
probe HRTIMER_SETUP linux/hrtimer.h \
	'void hrtimer_setup\(' \
	'void hrtimer_init\('
# 6.13: MODULE_IMPORT_NS() takes a string literal
probe IMPORT_NS_STRING linux/module.h \
	'define MODULE_IMPORT_NS\(ns\) MODULE_INFO\(import_ns, ns\)' \
	'define MODULE_IMPORT_NS\(ns\) MODULE_INFO\(import_ns, __stringify\(ns\)\)'
# 6.18: flowi4_tos became flowi4_dscp, a dscp_t
probe FLOWI4_DSCP net/flow.h \
	'define flowi4_dscp ' \
	'define flowi4_tos '
# 6.5: skb_gso_segment() is declared in <net/gso.h>
probe NET_GSO_H net/gso.h \
	'skb_gso_segment\(' \
	'skb_gso_segment\(' linux/netdevice.h
