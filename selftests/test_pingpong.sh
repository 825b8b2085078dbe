#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# covers: rdma-core's ibv_rc/uc/ud/srq_pingpong, server and client on the device, received buffers validated (-c)
#
# rdma-core's example programs over the device under test: a server and a
# client of ibv_rc_pingpong, ibv_uc_pingpong, ibv_ud_pingpong and
# ibv_srq_pingpong in this guest, both on $RXE2_DEV (loopback over its
# IPv4 RoCEv2 GID, -g), a few iterations with -c (received buffers
# validated), each bounded by timeout.  Both sides must exit 0 and report
# the iterations.  TAP output.

dev=${RXE2_DEV:-rxe2_0}
work=$(mktemp -d /tmp/pingpong.XXXXXX) || exit 1
port=18600
. "$(dirname "$0")/lib.sh"
iters=5

# tool, extra args
pingpong() {
	tool=$1
	shift
	port=$((port + 1))
	if ! pair_run "$tool" "" "" tcp:$port 60 "$work/$tool." \
		"$tool" -d "$dev" -g "$gidx" -p $port -n $iters "$@" -- \
		"$tool" -d "$dev" -g "$gidx" -p $port -n $iters "$@" 127.0.0.1; then
		not_ok "$tool: server listens on $port"
		sed 's/^/#   /' "$work/$tool.srv"
		not_ok "$tool: client (not run)"
		return
	fi
	pair_sides "$tool $*" "$work/$tool." "$iters iters" \
		" after $iters iterations"
}

echo "1..9"
gidx=$(ipv4_gid_index "$dev")
if [ -n "$gidx" ]; then
	ok "$dev has an IPv4 RoCE v2 GID (index $gidx)"
else
	not_ok "$dev has an IPv4 RoCE v2 GID"
	exit 1
fi
pingpong ibv_rc_pingpong -s 3000 -c
pingpong ibv_uc_pingpong -s 3000 -c
pingpong ibv_ud_pingpong -s 512 -c
pingpong ibv_srq_pingpong -s 1000 -q 2 -c
rm -rf "$work"
[ $failed = 0 ]
