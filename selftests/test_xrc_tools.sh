#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# covers: XRC with rdma-core's tools: ibv_xsrq_pingpong (one server, two clients at once) and rdma_xserver/rdma_xclient in XRC mode
#
# XRC with rdma-core's example programs over the device under test, in
# this guest over $RXE2_DEV's IPv4 RoCEv2 GID: ibv_xsrq_pingpong (one
# server, two clients at once: each client's XRC_SEND QP sends to the
# server's XRC SRQ through its XRC_RECV QP, and back), and librdmacm's
# rdma_xserver/rdma_xclient in XRC mode (-c x: the connection is made by
# the IB CM over RDMA_PS_IB, the client's SEND lands in an XRC SRQ whose
# number the server returns in the private data).  Each side bounded by
# timeout, must exit 0 and say it succeeded.  TAP output.

dev=${RXE2_DEV:-rxe2_0}
xwork=$(mktemp -d /tmp/xrctools.XXXXXX) || exit 1
port=18700
. "$(dirname "$0")/lib.sh"
iters=5

echo "1..6"
gidx=$(ipv4_gid_index "$dev")
ip=$(ibdev_ipv4 "$dev")
if [ -n "$gidx" ] && [ -n "$ip" ]; then
	ok "$dev has an IPv4 RoCE v2 GID (index $gidx, $ip)"
else
	not_ok "$dev has an IPv4 RoCE v2 GID"
	exit 1
fi

# ibv_xsrq_pingpong: a server for two clients, both clients at once
timeout -k 2 "$(scaled 90)" ibv_xsrq_pingpong -d "$dev" -g "$gidx" -p $port \
	-c 2 -n $iters >"$xwork/srv" 2>&1 &
spid=$!
if wait_listen $port; then
	for c in 1 2; do
		timeout -k 2 "$(scaled 90)" ibv_xsrq_pingpong -d "$dev" \
			-g "$gidx" -p $port -n $iters 127.0.0.1 \
			>"$xwork/cli$c" 2>&1 &
		eval "cpid$c=\$!"
	done
	# shellcheck disable=SC2154 # set by the eval above
	wait "$cpid1"
	c1=$?
	# shellcheck disable=SC2154
	wait "$cpid2"
	c2=$?
	wait "$spid"
	s=$?
	# one TAP line each, a failure's last 20 lines (lib.sh)
	pair_side "ibv_xsrq_pingpong -c 2: server" $s "$xwork/srv" '^success' \
		"" "" 20
	pair_side "ibv_xsrq_pingpong: client 1" $c1 "$xwork/cli1" '^success' \
		"" "" 20
	pair_side "ibv_xsrq_pingpong: client 2" $c2 "$xwork/cli2" '^success' \
		"" "" 20
else
	kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
	not_ok "ibv_xsrq_pingpong: server listens on $port"
	sed 's/^/#   /' "$xwork/srv" | tail -n 20
	not_ok "ibv_xsrq_pingpong: client 1 (not run)"
	not_ok "ibv_xsrq_pingpong: client 2 (not run)"
fi

# rdma_xserver/rdma_xclient -c x: connected by RDMA CM (RDMA_PS_IB)
xpair "rdma_xserver -c x" "" "" "cm:$((port + 1))" "end 0" \
	rdma_xserver -c x -p $((port + 1)) -- \
	rdma_xclient -c x -s "$ip" -p $((port + 1))
rm -rf "$xwork" /tmp/xrc_domain
[ $failed = 0 ]
