#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# librxe2 built inside rdma-core trees (tools/rdma-core-intree; make
# check-rdma-core), each used uninstalled from its build directory with
# that tree's own libibverbs, tools and providers (-DIN_PLACE=1: its
# libibverbs reads BUILD/etc/libibverbs.d, whose rxe2.driver names
# BUILD/lib/librxe2):
#
#   test_intree.sh [BUILD_DIR...]     default: $RXE2_RDMA_CORE_BUILDS
#
# For every build:
# - librxe2-rdmavPABI.so is there and the build's rxe2.driver names it;
# - the build's ibv_devinfo shows rxe2_0, with no warning from libibverbs
#   (IBV_SHOW_WARNINGS), and the objects it loaded are the build's
#   libibverbs and librxe2, nothing of this repo's provider/;
# - the build's ibv_rc_pingpong -c and ibv_ud_pingpong -c on rxe2_0
#   (loopback over its IPv4 GID, as test_pingpong.sh), and ibv_rc_pingpong
#   -c between two rxe2 devices in two namespaces joined by a veth;
# - some of our C selftests ($RXE2_INTREE_TESTS) with the build's
#   libraries in front (LD_LIBRARY_PATH: libibverbs.so.1, and
#   librxe2.so.1 for the rxe2dv ones): one TAP line each.
# Run by selftests/run (RXE2_EXTRA_TESTS), which sets up rxe2_0.  TAP
# output; the plan is printed last.  Everything named itr* is removed.

export LC_ALL=C
here=$(cd "$(dirname "$0")" && pwd)
selftests=$(cd "$here/.." && pwd)
# shellcheck source=../lib.sh
. "$selftests/lib.sh"
dev=${RXE2_DEV:-rxe2_0}
: "${RXE2_INTREE_TESTS:=test_device test_cq_ex test_qp_ex test_wr_api test_rxe2dv test_send_ops test_first_error test_dm test_verbs_audit}"
xwork=$(mktemp -d /tmp/test_intree.XXXXXX) || exit 1
out=$xwork/out
check_out=$out check_tail=40

A=itr1 B=itr2
V4_A=10.79.5.1 V4_B=10.79.5.2
cleanup() {
	netns_pair_del $A $B
	rm -rf "$xwork"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

builds=("$@")
# shellcheck disable=SC2206 # a list of directories
[ ${#builds[@]} -gt 0 ] || builds=(${RXE2_RDMA_CORE_BUILDS:-})
if [ ${#builds[@]} = 0 ]; then
	echo "1..0 # SKIP no rdma-core build given (RXE2_RDMA_CORE_BUILDS)"
	exit 0
fi

gidx=$(ipv4_gid_index "$dev")
if netns_pair $A $B $V4_A $V4_B >"$out" 2>&1; then
	ok "netns $A and $B joined by a veth, an rxe2 link in each (GIDs $GA, $GB)"
	pair=1
else
	not_ok "netns $A and $B joined by a veth, an rxe2 link in each"
	sed 's/^/#   /' "$out"
	pair=0
fi

port=19300
for b in "${builds[@]}"; do
	lib=$b/lib
	# the build's libibverbs.so.1.<minor>.<release>.0 and its private ABI
	ver=$(readlink "$lib/libibverbs.so.1" 2>/dev/null)
	ver=${ver#libibverbs.so.}
	rel=$(echo "$ver" | cut -d. -f3)
	prov=$(echo "$lib"/librxe2-rdmav*.so)
	pabi=${prov##*-rdmav}
	pabi=${pabi%.so}
	[ -e "$prov" ] || pabi=
	tag="rdma-core $rel (libibverbs $ver, IBVERBS_PRIVATE_$pabi)"
	echo "# ---- $b: $tag"
	# The build's tools and libraries only: no RDMAV_DRIVERS (the
	# harness points it at provider/, rdmav34, which this libibverbs
	# could not load); its bin/ first in PATH, for the tools our tests
	# run (Debian's ibv_devinfo needs IBVERBS_PRIVATE_34).
	run=(env -u RDMAV_DRIVERS -u IBV_DRIVERS LD_LIBRARY_PATH="$lib"
	     PATH="$b/bin:$PATH")

	built() {
		if [ -z "$rel" ] || [ -z "$pabi" ]; then
			echo "no libibverbs.so.1 or librxe2-rdmav*.so in $lib"
			return 1
		fi
		ls -l "$prov" "$lib"/librxe2.so*
		cat "$b/etc/libibverbs.d/rxe2.driver"
		[ "$(readlink -f "$prov")" = "$(readlink -f "$lib/librxe2.so.1")" ] &&
		[ "$(cat "$b/etc/libibverbs.d/rxe2.driver")" = "driver $lib/librxe2" ]
	}
	check "$tag: $prov built, $b/etc/libibverbs.d/rxe2.driver names it" built

	devinfo() {
		"${run[@]}" IBV_SHOW_WARNINGS=1 "$b/bin/ibv_devinfo" -d "$dev" \
			>"$xwork/devinfo" 2>"$xwork/devinfo.err"
		local rc=$?
		cat "$xwork/devinfo" "$xwork/devinfo.err"
		[ $rc = 0 ] && [ ! -s "$xwork/devinfo.err" ] &&
		grep -Eq "^hca_id:[[:space:]]+$dev\$" "$xwork/devinfo" &&
		grep -Eq 'transport:[[:space:]]+InfiniBand' "$xwork/devinfo" &&
		grep -Eq 'state:[[:space:]]+PORT_ACTIVE' "$xwork/devinfo"
	}
	check "$tag: its ibv_devinfo -d $dev, no libibverbs warning" devinfo

	# LD_DEBUG=files names every object as it is initialised.
	loaded() {
		rm -f "$xwork"/ld.*
		"${run[@]}" LD_DEBUG=files LD_DEBUG_OUTPUT="$xwork/ld" \
			"$b/bin/ibv_devinfo" -l || return 1
		cat "$xwork"/ld.* | sed -n 's/.*calling init: //p' |
			sort -u >"$xwork/init"
		cat "$xwork/init"
		grep -qx "$lib/libibverbs.so.1" "$xwork/init" &&
		grep -qx "$prov" "$xwork/init" &&
		[ "$(grep -c '/libibverbs\.so\.1$' "$xwork/init")" = 1 ] &&
		! grep -v "^$lib/" "$xwork/init" |
			grep -q -- '-rdmav[0-9]*\.so$\|/provider/'
	}
	check "$tag: the objects loaded are its libibverbs and its librxe2" loaded

	# tool ARGS...: server and client on $dev, as test_pingpong.sh
	pingpong() {
		local tool=$1
		shift
		port=$((port + 1))
		if ! pair_run "$tool" "" "" tcp:$port "$(scaled 60)" "$xwork/" \
			"${run[@]}" "$b/bin/$tool" -d "$dev" -g "$gidx" -p $port \
			-n 5 "$@" -- \
			"${run[@]}" "$b/bin/$tool" -d "$dev" -g "$gidx" -p $port \
			-n 5 "$@" 127.0.0.1; then
			not_ok "$tag: $tool $*: server listens on $port"
			sed 's/^/#   /' "$xwork/srv"
			return
		fi
		pair_sides "$tag: $tool $* on $dev" "$xwork/" "5 iters" \
			" after 5 iterations"
	}
	if [ -n "$gidx" ]; then
		pingpong ibv_rc_pingpong -s 4096 -c
		pingpong ibv_ud_pingpong -s 512 -c
	else
		not_ok "$tag: $dev has an IPv4 RoCE v2 GID (no ping-pong)"
	fi

	if [ $pair = 1 ]; then
		port=$((port + 1))
		xpair "$tag: ibv_rc_pingpong -s 65536 -c, ${A}rxe2 to ${B}rxe2 over the veth" \
			$A $B tcp:$port "5 iters" \
			"${run[@]}" "$b/bin/ibv_rc_pingpong" -d ${A}rxe2 -g "$GA" \
				-p $port -n 5 -s 65536 -c -- \
			"${run[@]}" "$b/bin/ibv_rc_pingpong" -d ${B}rxe2 -g "$GB" \
				-p $port -n 5 -s 65536 -c $V4_A
	fi

	# Our selftests, built against Debian's libibverbs 44 (or, those
	# tools/rdma-core-intree built in BUILD/rxe2-selftests, against
	# the build's own headers), over the build's libraries: one line
	# each, with its counts.
	for t in $RXE2_INTREE_TESTS; do
		exe=$selftests/$t hdrs="installed headers"
		if [ -x "$b/rxe2-selftests/$t" ]; then
			exe=$b/rxe2-selftests/$t hdrs="its own headers"
		fi
		if [ ! -x "$exe" ]; then
			not_ok "$tag: $t (not built)"
			continue
		fi
		timeout -k 5 "$(scaled 180)" "${run[@]}" "$exe" \
			>"$out" 2>&1 </dev/null
		rc=$?
		p=$(grep -c '^ok' "$out")
		f=$(grep -c '^not ok' "$out")
		plan=$(sed -n 's/^1\.\.\([0-9]*\).*/\1/p' "$out" | head -n 1)
		if [ $rc = 0 ] && [ "$f" = 0 ] && [ "$plan" = "$p" ]; then
			ok "$tag: $t ($hdrs) over its libraries: $p passed"
		else
			not_ok "$tag: $t ($hdrs) over its libraries: rc $rc, $p passed, $f failed, plan ${plan:-none}"
			grep -A8 '^not ok' "$out" | sed 's/^/#   /' | head -n 60
			[ "$f" != 0 ] || tail -n 20 "$out" | sed 's/^/#   /'
		fi
	done
done

echo "1..$n"
[ $failed = 0 ]
