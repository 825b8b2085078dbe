// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Commands librxe2 builds itself instead of through libibverbs'
 * ibv_cmd_*(): the attribute array of an ioctl method call, and a legacy
 * write() command run through the ioctl entry.
 *
 * Why a write command may have to travel as an ioctl: ib_uverbs' write()
 * refuses with EACCES every caller whose credentials are not the struct
 * cred the file was opened with (ib_uverbs_write() checks
 * ib_safe_file_access(), Linux 6.1 and 6.12).  A process
 * that imported the command fd (ibv_import_device() on an fd received
 * over SCM_RIGHTS, or inherited across fork(), which gives the child a
 * struct cred of its own) is such a caller.  The ioctl entry
 * (ib_uverbs_ioctl()) makes no such check, and its method
 * UVERBS_METHOD_INVOKE_WRITE of UVERBS_OBJECT_DEVICE runs any write
 * handler with the request split into attributes:
 *
 *   UVERBS_ATTR_WRITE_CMD  the command number (hdr.command), a u64 const
 *   UVERBS_ATTR_CORE_IN    the core request: what follows the uverbs
 *                          header up to the driver data, its leading
 *                          "response" field included (and ignored)
 *   UVERBS_ATTR_CORE_OUT   where the core response goes; the handler
 *                          writes it there (uverbs_response()), not at
 *                          the request's "response" address
 *   UVERBS_ATTR_UHW_IN/OUT the driver's udata, as for any method
 *
 * The kernel refuses with ENOSPC a CORE_IN or CORE_OUT shorter than the
 * command's core structures.  libibverbs 44 sends its own ibv_cmd_*()
 * write commands this way whenever the kernel has the method
 * (use_ioctl_write, probed when a context is made), so the write()s left
 * in another process are only the ones a provider issues itself.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <rdma/ib_user_ioctl_cmds.h>

#include "ibverbs_private.h"
#include "rxe2.h"

struct ibv_command_buffer *rxe2_ioctl_init(union rxe2_ioctl_buf *buf,
					   uint16_t object, uint16_t method)
{
	struct ibv_command_buffer *cmd = &buf->cmd;

	memset(buf, 0, sizeof(*buf));
	cmd->hdr.object_id = object;
	cmd->hdr.method_id = method;
	cmd->uhw_in_idx = RXE2_IOCTL_NO_UHW;
	cmd->uhw_out_idx = RXE2_IOCTL_NO_UHW;
	cmd->next_attr = cmd->hdr.attrs;
	cmd->last_attr = cmd->hdr.attrs + RXE2_IOCTL_MAX_ATTRS;
	return cmd;
}

/*
 * The next attribute, mandatory: a kernel that does not know it fails
 * the call (EPROTONOSUPPORT) rather than ignoring what we asked for.
 */
static struct ib_uverbs_attr *rxe2_ioctl_attr(struct ibv_command_buffer *cmd,
					      uint16_t id, size_t len)
{
	struct ib_uverbs_attr *attr;

	/* execute_ioctl() answers EINVAL for a buffer marked in error */
	if (cmd->next_attr >= cmd->last_attr || len > UINT16_MAX) {
		cmd->buffer_error = 1;
		return cmd->last_attr - 1;
	}
	attr = cmd->next_attr++;
	memset(attr, 0, sizeof(*attr));
	attr->attr_id = id;
	attr->flags = UVERBS_ATTR_F_MANDATORY;
	attr->len = len;
	return attr;
}

void rxe2_ioctl_obj(struct ibv_command_buffer *cmd, uint16_t id,
		    uint32_t handle)
{
	rxe2_ioctl_attr(cmd, id, 0)->data = handle;
}

struct ib_uverbs_attr *rxe2_ioctl_new(struct ibv_command_buffer *cmd,
				      uint16_t id)
{
	return rxe2_ioctl_attr(cmd, id, 0);
}

void rxe2_ioctl_enum(struct ibv_command_buffer *cmd, uint16_t id,
		     uint8_t elem)
{
	rxe2_ioctl_attr(cmd, id, 0)->attr_data.enum_data.elem_id = elem;
}

/*
 * ib_uverbs answers EPROTONOSUPPORT for a method, or a mandatory
 * attribute, it does not know: the verb is then not supported, as
 * libibverbs' own answer without the op says.
 */
int rxe2_ioctl_optional(struct ibv_context *ibctx,
			struct ibv_command_buffer *cmd)
{
	int err = execute_ioctl(ibctx, cmd);

	return err == EPROTONOSUPPORT ? EOPNOTSUPP : err;
}

void rxe2_ioctl_const(struct ibv_command_buffer *cmd, uint16_t id,
		      uint64_t value)
{
	rxe2_ioctl_attr(cmd, id, sizeof(value))->data = value;
}

void rxe2_ioctl_in(struct ibv_command_buffer *cmd, uint16_t id,
		   const void *ptr, size_t len)
{
	struct ib_uverbs_attr *attr = rxe2_ioctl_attr(cmd, id, len);

	/* the kernel reads an input of up to 8 bytes from .data itself */
	if (len <= sizeof(attr->data))
		memcpy(&attr->data, ptr, len);
	else
		attr->data = (uintptr_t)ptr;
}

void rxe2_ioctl_out(struct ibv_command_buffer *cmd, uint16_t id, void *ptr,
		    size_t len)
{
	rxe2_ioctl_attr(cmd, id, len)->data = (uintptr_t)ptr;
}

int rxe2_cmd_write_ioctl(struct ibv_context *ibctx,
			 const struct ib_uverbs_cmd_hdr *req,
			 size_t core_req_len, void *resp,
			 size_t core_resp_len)
{
	const uint8_t *body = (const uint8_t *)(req + 1);
	size_t req_len = (size_t)req->in_words * 4;
	size_t resp_len = (size_t)req->out_words * 4;
	struct ibv_command_buffer *cmd;
	union rxe2_ioctl_buf buf;

	/* an extended command's header counts other units */
	if ((req->command & IB_USER_VERBS_CMD_FLAG_EXTENDED) ||
	    req_len < sizeof(*req))
		return EINVAL;
	req_len -= sizeof(*req);	/* in_words counts the header too */
	if (core_req_len > req_len || core_resp_len > resp_len ||
	    (resp_len && !resp))
		return EINVAL;

	cmd = rxe2_ioctl_init(&buf, UVERBS_OBJECT_DEVICE,
			      UVERBS_METHOD_INVOKE_WRITE);
	rxe2_ioctl_const(cmd, UVERBS_ATTR_WRITE_CMD, req->command);
	if (core_req_len)
		rxe2_ioctl_in(cmd, UVERBS_ATTR_CORE_IN, body, core_req_len);
	if (core_resp_len)
		rxe2_ioctl_out(cmd, UVERBS_ATTR_CORE_OUT, resp, core_resp_len);
	if (req_len > core_req_len)
		rxe2_ioctl_in(cmd, UVERBS_ATTR_UHW_IN, body + core_req_len,
			      req_len - core_req_len);
	if (resp_len > core_resp_len)
		rxe2_ioctl_out(cmd, UVERBS_ATTR_UHW_OUT,
			       (uint8_t *)resp + core_resp_len,
			       resp_len - core_resp_len);
	return execute_ioctl(ibctx, cmd);
}
