// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2: the driver's own uverbs ioctl methods, behind the rxe2dv_*
 * functions of librxe2 that the core verbs have no command for.
 * ib_uverbs finds them through ib_device.driver_def; their ids are in
 * the driver namespace of uapi/rxe2-abi.h.  A method is added to its
 * object's ADD_UVERBS_METHODS() list; an object not listed yet gets an
 * entry in rxe2_uapi_defs.
 */
#define UVERBS_MODULE_NAME rxe2_ib
#include <rdma/uverbs_named_ioctl.h>
#include <rdma/uverbs_std_types.h>

#include "rxe2_verbs.h"

/*
 * RXE2_METHOD_MR_QUERY: the MR's interconnect ids and page size.  The MR's uobject is
 * held for reading throughout, so neither dereg nor rereg (both take it
 * exclusively) can change the MR under the query.
 */
static int UVERBS_HANDLER(RXE2_METHOD_MR_QUERY)(struct uverbs_attr_bundle *attrs)
{
	struct ib_mr *ibmr = uverbs_attr_get_obj(attrs,
						 RXE2_ATTR_QUERY_MR_HANDLE);
	struct rxe2_query_mr_resp resp;

	if (IS_ERR(ibmr))
		return PTR_ERR(ibmr);
	rxe2_ic_query_mr(ibmr, &resp);
	rxe2_mr_query_pages(ibmr, &resp);
	return uverbs_copy_to_struct_or_zero(attrs, RXE2_ATTR_QUERY_MR_RESP,
					     &resp, sizeof(resp));
}

DECLARE_UVERBS_NAMED_METHOD(RXE2_METHOD_MR_QUERY,
			    UVERBS_ATTR_IDR(RXE2_ATTR_QUERY_MR_HANDLE,
					    UVERBS_OBJECT_MR,
					    UVERBS_ACCESS_READ,
					    UA_MANDATORY),
			    UVERBS_ATTR_PTR_OUT(RXE2_ATTR_QUERY_MR_RESP,
						UVERBS_ATTR_STRUCT(struct rxe2_query_mr_resp,
								   rdma_recv_ic_id),
						UA_MANDATORY));

ADD_UVERBS_METHODS(rxe2_mr_methods, UVERBS_OBJECT_MR,
		   &UVERBS_METHOD(RXE2_METHOD_MR_QUERY));

/*
 * RXE2_METHOD_SRQ_OPS: ibv_post_srq_ops() on a tag matching SRQ
 * (rxe2_tm.c).  ib_uverbs copied the operations in (UA_ALLOC_AND_COPY);
 * the SRQ's uobject is held for reading, so destroy waits for the call.
 */
static int UVERBS_HANDLER(RXE2_METHOD_SRQ_OPS)(struct uverbs_attr_bundle *attrs)
{
	struct ib_srq *ibsrq = uverbs_attr_get_obj(attrs,
						   RXE2_ATTR_SRQ_OPS_HANDLE);
	const struct rxe2_tm_op *ops;
	struct rxe2_srq_ops_resp *resp;
	int len, ret;
	u32 n;

	if (IS_ERR(ibsrq))
		return PTR_ERR(ibsrq);
	len = uverbs_attr_get_len(attrs, RXE2_ATTR_SRQ_OPS_IN);
	if (len < 0)
		return len;
	if (len % sizeof(*ops))
		return -EINVAL;
	n = len / sizeof(*ops);
	ops = uverbs_attr_get_alloced_ptr(attrs, RXE2_ATTR_SRQ_OPS_IN);
	if (IS_ERR(ops))
		return PTR_ERR(ops);
	resp = uverbs_zalloc(attrs, sizeof(*resp));
	if (IS_ERR(resp))
		return PTR_ERR(resp);
	ret = rxe2_tm_post_ops(ibsrq, ops, n, resp);
	if (ret)
		return ret;
	return uverbs_copy_to(attrs, RXE2_ATTR_SRQ_OPS_RESP, resp,
			      offsetof(struct rxe2_srq_ops_resp, handle[n]));
}

DECLARE_UVERBS_NAMED_METHOD(RXE2_METHOD_SRQ_OPS,
			    UVERBS_ATTR_IDR(RXE2_ATTR_SRQ_OPS_HANDLE,
					    UVERBS_OBJECT_SRQ,
					    UVERBS_ACCESS_READ,
					    UA_MANDATORY),
			    UVERBS_ATTR_PTR_IN(RXE2_ATTR_SRQ_OPS_IN,
					       UVERBS_ATTR_MIN_SIZE(sizeof(struct rxe2_tm_op)),
					       UA_MANDATORY,
					       UA_ALLOC_AND_COPY),
			    UVERBS_ATTR_PTR_OUT(RXE2_ATTR_SRQ_OPS_RESP,
						UVERBS_ATTR_MIN_SIZE(offsetof(struct rxe2_srq_ops_resp,
									      handle)),
						UA_MANDATORY));

ADD_UVERBS_METHODS(rxe2_srq_methods, UVERBS_OBJECT_SRQ,
		   &UVERBS_METHOD(RXE2_METHOD_SRQ_OPS));

/* ibv_alloc_dm answers where the DM's pages are mapped (rxe2_dm.c) */
ADD_UVERBS_ATTRIBUTES_SIMPLE(rxe2_dm_alloc, UVERBS_OBJECT_DM,
			     UVERBS_METHOD_DM_ALLOC,
			     UVERBS_ATTR_PTR_OUT(RXE2_ATTR_ALLOC_DM_RESP_MMAP_OFFSET,
						 UVERBS_ATTR_TYPE(u64),
						 UA_MANDATORY));

/*
 * RXE2_METHOD_DM_QUERY: ibv_import_dm() in a context sharing this one's
 * ib_ucontext (a dup()ed or passed command fd) maps the same pages, and
 * bounds its copies by the length asked for at alloc.  ib_uverbs found
 * the handle in this file's own objects and holds the DM for reading,
 * so a concurrent ibv_free_dm() waits for the query.
 */
static int UVERBS_HANDLER(RXE2_METHOD_DM_QUERY)(struct uverbs_attr_bundle *attrs)
{
	struct ib_dm *ibdm = uverbs_attr_get_obj(attrs,
						 RXE2_ATTR_QUERY_DM_HANDLE);
	u64 offset, length;
	int ret;

	if (IS_ERR(ibdm))
		return PTR_ERR(ibdm);
	rxe2_dm_query(ibdm, &offset, &length);
	ret = uverbs_copy_to(attrs, RXE2_ATTR_QUERY_DM_RESP_MMAP_OFFSET,
			     &offset, sizeof(offset));
	if (ret)
		return ret;
	return uverbs_copy_to(attrs, RXE2_ATTR_QUERY_DM_RESP_LENGTH, &length,
			      sizeof(length));
}

DECLARE_UVERBS_NAMED_METHOD(RXE2_METHOD_DM_QUERY,
			    UVERBS_ATTR_IDR(RXE2_ATTR_QUERY_DM_HANDLE,
					    UVERBS_OBJECT_DM,
					    UVERBS_ACCESS_READ,
					    UA_MANDATORY),
			    UVERBS_ATTR_PTR_OUT(RXE2_ATTR_QUERY_DM_RESP_MMAP_OFFSET,
						UVERBS_ATTR_TYPE(u64),
						UA_MANDATORY),
			    UVERBS_ATTR_PTR_OUT(RXE2_ATTR_QUERY_DM_RESP_LENGTH,
						UVERBS_ATTR_TYPE(u64),
						UA_MANDATORY));

ADD_UVERBS_METHODS(rxe2_dm_methods, UVERBS_OBJECT_DM,
		   &UVERBS_METHOD(RXE2_METHOD_DM_QUERY));

const struct uapi_definition rxe2_uapi_defs[] = {
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_MR, &rxe2_mr_methods),
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_DM, &rxe2_dm_alloc),
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_DM, &rxe2_dm_methods),
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_SRQ, &rxe2_srq_methods),
	{},
};
