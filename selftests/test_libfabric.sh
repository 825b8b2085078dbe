#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# covers: libfabric's verbs provider with its defaults: fi_pingpong -e msg and -e rdm (ofi_rxm's 262144-entry CQ); skipped without libfabric-bin
#
# libfabric's verbs provider over rxe2 with libfabric's defaults:
# fi_pingpong -p verbs -e rdm (verbs;ofi_rxm) and -e msg, server and
# client on $RXE2_DEV.  ofi_rxm sizes its verbs CQ for FI_UNIVERSE_SIZE
# peers (256 by default: 262144 entries), which the device must take.
# Debian's libfabric-bin (tools/deps installs it); skipped when absent.
# TAP output.

dev=${RXE2_DEV:-rxe2_0}
work=$(mktemp -d /tmp/ofi.XXXXXX) || exit 1
port=19400
. "$(dirname "$0")/lib.sh"
trap 'rm -rf "$work"' EXIT

# pingpong EP: fi_pingpong server and client over verbs on $dev; both
# exit 0 and the client prints its results
pingpong() {
	port=$((port + 1))
	if ! pair_run fi_pingpong "" "" tcp:$port "$(scaled 90)" "$work/" \
		fi_pingpong -p verbs -e "$1" -d "$dev" -I 200 -B $port -- \
		fi_pingpong -p verbs -e "$1" -d "$dev" -I 200 -P $port 127.0.0.1; then
		not_ok "fi_pingpong -e $1: server listens"
		sed 's/^/#   /' "$work/srv"
		return
	fi
	if [ "$pair_crc" = 0 ] && [ "$pair_src" = 0 ] && grep -q "usec/xfer" "$work/cli"; then
		ok "fi_pingpong -p verbs -e $1 on $dev, libfabric defaults"
		grep -A1 "usec/xfer" "$work/cli" | tail -n 1 | sed 's/^/# /'
	else
		not_ok "fi_pingpong -p verbs -e $1 on $dev (client rc $pair_crc, server rc $pair_src)"
		tail -n 12 "$work/cli" "$work/srv" | sed 's/^/#   /'
	fi
}

echo "1..2"
if ! command -v fi_pingpong >/dev/null; then
	skip "fi_pingpong -e msg" "no fi_pingpong (libfabric-bin)"
	skip "fi_pingpong -e rdm" "no fi_pingpong (libfabric-bin)"
	exit 0
fi
unset FI_UNIVERSE_SIZE
pingpong msg
pingpong rdm
[ $failed = 0 ]
