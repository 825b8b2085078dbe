// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * librxe2: device and port queries.  The kernel owns every attribute;
 * the provider only renders the firmware version as text.
 */
#include <stdio.h>

#include "rxe2.h"

int rxe2_query_device_ex(struct ibv_context *ibctx,
			 const struct ibv_query_device_ex_input *input,
			 struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	uint64_t fw;
	int err;

	err = ibv_cmd_query_device_any(ibctx, input, attr, attr_size, &resp,
				       &resp_size);
	if (err)
		return err;

	/* what the kernel paces (rxe/rxe2_pace.c); the core has no field */
	if (attr_size >= offsetof(struct ibv_device_attr_ex,
				  packet_pacing_caps) +
			 sizeof(attr->packet_pacing_caps)) {
		attr->packet_pacing_caps.qp_rate_limit_min =
			RXE2_RATE_LIMIT_MIN;
		attr->packet_pacing_caps.qp_rate_limit_max =
			RXE2_RATE_LIMIT_MAX;
		attr->packet_pacing_caps.supported_qpts =
			1 << IBV_QPT_RC | 1 << IBV_QPT_UC | 1 << IBV_QPT_UD |
			1 << IBV_QPT_RAW_PACKET;
	}
	/* the RSS hash (rxe/rxe2_wq.c); the core passes the rest */
	if (attr_size >= offsetof(struct ibv_device_attr_ex, rss_caps) +
			 sizeof(attr->rss_caps)) {
		attr->rss_caps.rx_hash_fields_mask = RXE2_RX_HASH_FIELDS;
		attr->rss_caps.rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ;
	}
	/* fw_ver packs major.minor.sub_minor as 16-bit fields */
	fw = resp.base.fw_ver;
	snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver),
		 "%u.%u.%u", (unsigned int)(fw >> 32) & 0xffff,
		 (unsigned int)(fw >> 16) & 0xffff, (unsigned int)fw & 0xffff);
	return 0;
}

int rxe2_query_port(struct ibv_context *ibctx, uint8_t port_num,
		    struct ibv_port_attr *port_attr)
{
	struct ibv_query_port cmd = {};

	return ibv_cmd_query_port(ibctx, port_num, port_attr, &cmd,
				  sizeof(cmd));
}
