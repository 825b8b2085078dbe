#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# covers: UCX with its defaults: ucx_perftest am_lat over ud_verbs and UCP tag_bw over rc_verbs,ud_verbs; skipped without ucx-utils or verbs support
#
# UCX over rxe2 with UCX's defaults: ucx_perftest am_lat over ud_verbs
# (UCT) and UCP tag_bw with UCX_TLS=rc_verbs,ud_verbs,self, server and
# client on $RXE2_DEV.  UCX's UD transport drops every receive whose GRH
# does not carry one of the device's GIDs as destination, and reads from
# the completion's sl, the RoCE packet type as mlx5 reports it, whether
# that is an IPv4 address (the last 4 bytes) or an IPv6 one (the last
# 16): without it every receive is dropped and the endpoint times out.
# Debian's ucx-utils (tools/deps installs it); skipped when absent.
# TAP output.

dev=${RXE2_DEV:-rxe2_0}
work=$(mktemp -d /tmp/ucx.XXXXXX) || exit 1
port=19300
# UCX built with MPI (Debian 13's and sid's) runs ucx_perftest as an MPI
# job, which one process alone refuses, unless MPI mode is off
mpi_off=
ucx_perftest -h 2>&1 | grep -q -- '-P <0|1>' && mpi_off="-P 0"
. "$(dirname "$0")/lib.sh"
trap 'rm -rf "$work"' EXIT

# perftest DESC ARGS...: server and client of one ucx_perftest run on
# $dev, each bounded; both must exit 0 and the client print its results
perftest() {
	desc=$1
	shift
	port=$((port + 1))
	# shellcheck disable=SC2086	# "-P 0" or nothing
	if ! pair_run ucx_perftest "" "" tcp:$port 90 "$work/" \
		ucx_perftest $mpi_off -p $port "$@" -- \
		ucx_perftest $mpi_off -p $port "$@" 127.0.0.1; then
		not_ok "$desc: server listens"
		sed 's/^/#   /' "$work/srv"
		return
	fi
	if [ "$pair_crc" = 0 ] && [ "$pair_src" = 0 ] && grep -q "Final:" "$work/cli" &&
		! grep -qi "error" "$work/cli" "$work/srv"; then
		ok "$desc"
		grep "Final:" "$work/cli" | sed 's/^/# /'
	else
		not_ok "$desc (client rc $pair_crc, server rc $pair_src)"
		tail -n 15 "$work/cli" "$work/srv" | sed 's/^/#   /'
	fi
}

echo "1..3"
if ! command -v ucx_perftest >/dev/null; then
	for i in 1 2 3; do skip "ucx $i" "no ucx_perftest (ucx-utils)"; done
	exit 0
fi
# sid's UCX (1.23.0~rc1) was built without its verbs transports (no
# HAVE_IB, no libuct_ib): nothing of this test can run there
if ! ucx_info -b 2>/dev/null | grep -q '^#define HAVE_IB  *1'; then
	for i in 1 2 3; do skip "ucx $i" "this UCX is built without verbs (no HAVE_IB)"; done
	exit 0
fi
if ucx_info -d 2>/dev/null | grep -q "Device: $dev:1"; then
	ok "ucx_info lists $dev:1"
else
	not_ok "ucx_info lists $dev:1"
	ucx_info -d 2>&1 | grep -E "Transport|Device" | sed 's/^/#   /'
fi

# the UCT UD transport alone, its GID check on (UCX's default)
UCX_NET_DEVICES=$dev:1 perftest \
	"ucx_perftest -t am_lat -x ud_verbs on $dev:1, UCX defaults" \
	-t am_lat -x ud_verbs -d "$dev:1" -n 2000 -w 100

# UCP picks its lanes: UD for wire-up, RC for data
UCX_NET_DEVICES=$dev:1 UCX_TLS=rc_verbs,ud_verbs,self perftest \
	"ucx_perftest -t tag_bw, UCX_TLS=rc_verbs,ud_verbs,self on $dev:1" \
	-t tag_bw -s 65536 -n 500 -w 20
[ $failed = 0 ]
