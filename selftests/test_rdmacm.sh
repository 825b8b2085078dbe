#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# covers: librdmacm on the device (IB CM over QP1 MADs): rping -V, ucmatose, udaddy, rdma_server/rdma_client, ib_send_bw/ib_write_bw/ib_read_lat -R
#
# librdmacm over the device under test: rping (RC, RDMA READ/WRITE with
# -V data validation), ucmatose (RC connections, SENDs), udaddy (UD
# with address and QKey exchange), rdma_server/rdma_client (rdma_create_ep,
# SEND/RECV) and perftest connected by RDMA CM (ib_send_bw -R,
# ib_write_bw -R, ib_read_lat -R) as server and client in this guest over
# the IPv4 address behind $RXE2_DEV's RoCEv2 GID, each bounded by timeout.
# Cross-namespace runs of the same tools are in test_netns.sh and, against
# the in-tree rdma_rxe, test_interop.sh.
# Connection setup runs the IB CM over MADs on the GSI QP (QP1): on rxe2
# these checks need the kernel's QP1 send/receive path (ib_mad is a kernel
# consumer of the rxe2 data path), not only the user-space provider.
# TAP output.

dev=${RXE2_DEV:-rxe2_0}
xwork=$(mktemp -d /tmp/rdmacm.XXXXXX) || exit 1
port=7470
. "$(dirname "$0")/lib.sh"
[ -e /sys/class/infiniband/"$dev"/rxe2_abi ] && tap_prefix="(rxe2: GSI QP1 MADs) "

# name, listen-port, expect-regex, server command..., --, client command...:
# both in this namespace, through lib.sh's xpair
pair() {
	_pname=$1 _pport=$2
	shift 2
	xpair "$_pname" "" "" "cm:$_pport" "$@"
}

echo "1..15"
ip=$(ibdev_ipv4 "$dev")
if [ -n "$ip" ]; then
	ok "$dev has an IPv4 RoCE v2 GID ($ip)"
else
	not_ok "$dev has an IPv4 RoCE v2 GID"
	exit 1
fi
pair rping $port "" rping -s -a "$ip" -p $port -C 5 -S 200 -V -- \
	rping -c -a "$ip" -p $port -C 5 -S 200 -V
pair ucmatose $((port + 1)) "test complete" ucmatose -b "$ip" -p $((port + 1)) -C 5 -- \
	ucmatose -s "$ip" -p $((port + 1)) -C 5
# udaddy's -p is the port space, its port is fixed
pair udaddy 7174 "test complete" udaddy -b "$ip" -C 5 -- \
	udaddy -s "$ip" -C 5
pair rdma_server $((port + 2)) "end 0" rdma_server -s "$ip" -p $((port + 2)) -- \
	rdma_client -s "$ip" -p $((port + 2))
# perftest -R: the QPs are connected and the parameters exchanged over
# RDMA CM alone, no TCP socket; -F: perftest's clock calibration fails
# under emulation often enough to fail the run without it
pair "ib_send_bw -R" $((port + 3)) "^ *65536 +100 " \
	ib_send_bw -F -R -d "$dev" -p $((port + 3)) -s 65536 -n 100 -- \
	ib_send_bw -F -R -d "$dev" -p $((port + 3)) -s 65536 -n 100 "$ip"
pair "ib_write_bw -R" $((port + 4)) "^ *65536 +100 " \
	ib_write_bw -F -R -d "$dev" -p $((port + 4)) -s 65536 -n 100 -- \
	ib_write_bw -F -R -d "$dev" -p $((port + 4)) -s 65536 -n 100 "$ip"
pair "ib_read_lat -R" $((port + 5)) "" \
	ib_read_lat -F -R -d "$dev" -p $((port + 5)) -n 100 -- \
	ib_read_lat -F -R -d "$dev" -p $((port + 5)) -n 100 "$ip"
rm -rf "$xwork"
[ $failed = 0 ]
