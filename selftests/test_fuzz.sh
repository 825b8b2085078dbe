#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# covers: tools/rxe2fuzz's mutated frames against a device under traffic of every kind: no kernel problem, RC and RDMA CM both ways afterwards, no QP left, the drop counters adding up
#
# The wire fuzzer (tools/rxe2fuzz) against a live rxe2 device.  Two
# namespaces joined by a veth, an rxe2 link on each end; traffic of every
# kind runs from fz2 to the target fz1 (RC WRITE, READ both ways, SEND,
# SRQ, XRC, atomics, ODP, UC, UD, RDMA CM with its MADs to QP1) while
# rxe2fuzz, on fz2's end of the veth, learns the frames that leave
# towards fz1 and sends mutated copies of them: live QPNs, PSNs, rkeys
# and MR ranges, lying lengths, wrong and right ICRCs.
#
# Then the target must be whole: no kernel problem in the log (no splat,
# no fatal event on QP1), a verified RC transfer (ibv_rc_pingpong -c) and
# an RDMA CM connection (rping -V) both ways, no QP left behind, the drop
# counters adding up.  make check runs RXE2_FUZZ_FRAMES=100000 frames,
# make fuzz 10^6 (selftests/run then checks that the module unloads);
# RXE2_FUZZ_PPS paces them (1500 frames/s by default); the fuzzer stops
# after RXE2_FUZZ_SECONDS (3000) even if it has not sent them all.
# RXE2_SEED replays the fuzzer's choices; the seed is printed.
#
#   netns fz1: fz1v  10.79.9.1  fz1rxe2   (the target)
#                |  veth
#   netns fz2: fz2v  10.79.9.2  fz2rxe2   (traffic, and rxe2fuzz on fz2v)

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
. "$here/lib.sh"
export LC_ALL=C
xwork=$(mktemp -d /tmp/fuzz.XXXXXX) || exit 1

FRAMES=${RXE2_FUZZ_FRAMES:-100000}
# paced, so that every kind of traffic takes its turn during the run
PPS=${RXE2_FUZZ_PPS:-1500}
# the sanitizer kernel takes about 155 frames/s: make check-debug gives
# its 10^6 frames 9000 s
FUZZ_SECONDS=${RXE2_FUZZ_SECONDS:-3000}
SEED=${RXE2_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
A=fz1 B=fz2
V4_A=10.79.9.1 V4_B=10.79.9.2
DA=${A}rxe2 DB=${B}rxe2
stop=$xwork/stop

cleanup() {
	touch "$stop"
	# shellcheck disable=SC2046 # the PIDs of the traffic loops
	kill $(jobs -p) 2>/dev/null
	wait
	ip netns pids $A 2>/dev/null | xargs -r kill -9 2>/dev/null
	ip netns pids $B 2>/dev/null | xargs -r kill -9 2>/dev/null
	netns_pair_del $A $B
	rm -rf "$xwork"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

if netns_pair $A $B $V4_A $V4_B >"$xwork/out" 2>&1; then
	ok "netns $A and $B joined by a veth, $DA and $DB on its ends"
else
	not_ok "netns $A and $B joined by a veth, $DA and $DB on its ends"
	sed 's/^/#   /' "$xwork/out"
	echo "1..$n"
	exit 1
fi

counters() {
	for _f in /sys/class/infiniband/$DA/ports/1/hw_counters/*; do
		echo "${_f##*/} $(cat "$_f")"
	done
}

# qps DEV: the QPs of DEV in restrack, one line each
qps() {
	rdma resource show qp 2>/dev/null | grep -c "link $1/"
}

# pair PORT SRV_NS SRV_DEV SRV_GID CLI_NS CLI_DEV CLI_GID SRV_IP CMD ARGS:
# one perftest run (the server first), both bounded; results ignored:
# the fuzzer is entitled to break these QPs.
pair() {
	_p=$1 _sns=$2 _sd=$3 _sg=$4 _cns=$5 _cd=$6 _cg=$7 _ip=$8
	shift 8
	timeout -k 2 30 ip netns exec "$_sns" "$@" -d "$_sd" -x "$_sg" \
		-p "$_p" -F >/dev/null 2>&1 &
	_spid=$!
	wait_listen_ns "$_sns" "$_p" &&
		timeout -k 2 30 ip netns exec "$_cns" "$@" -d "$_cd" -x "$_cg" \
			-p "$_p" -F "$_ip" >/dev/null 2>&1
	wait $_spid
}

# to_a CMD ARGS: B is the client, so its requests go to A
to_a() { pair 18600 $A $DA "$GA" $B $DB "$GB" $V4_A "$@"; }
# from_a CMD ARGS: A is the client: B sends A ACKs and READ responses
from_a() { pair 18601 $B $DB "$GB" $A $DA "$GA" $V4_B "$@"; }

# XRC: B's XRC_SEND QP to an XRC SRQ behind A's XRC_RECV QP, and back
xrc_to_a() {
	timeout -k 2 30 ip netns exec $A ibv_xsrq_pingpong -d $DA -g "$GA" \
		-p 18602 -n 200 >/dev/null 2>&1 &
	_spid=$!
	wait_listen_ns $A 18602 &&
		timeout -k 2 30 ip netns exec $B ibv_xsrq_pingpong -d $DB \
			-g "$GB" -p 18602 -n 200 $V4_A >/dev/null 2>&1
	wait $_spid
}

# every kind of traffic in turn, until told to stop
traffic() {
	while [ ! -e "$stop" ]; do
		for t in "to_a ib_write_bw -s 4096 -D 3" \
			 "to_a ib_read_bw -s 4096 -D 3" \
			 "from_a ib_read_bw -s 4096 -D 3" \
			 "to_a ib_send_bw -s 4096 -D 3" \
			 "to_a ib_send_bw -c UD -s 1024 -D 3" \
			 "to_a ib_atomic_bw -D 3" \
			 "to_a ib_write_bw --odp -s 4096 -D 3" \
			 "to_a ib_write_bw -c UC -s 4096 -D 3" \
			 "to_a ib_send_bw --use-srq -s 4096 -D 3" \
			 "xrc_to_a" \
			 "from_a ib_write_bw -s 4096 -D 3"; do
			[ -e "$stop" ] && return
			$t
		done
	done
}

# RDMA CM connections, so that MADs go to QP1
cm_traffic() {
	while [ ! -e "$stop" ]; do
		timeout -k 2 20 ip netns exec $A rping -s -a $V4_A -p 7179 \
			-C 20 -S 128 >/dev/null 2>&1 &
		_spid=$!
		sleep 0.5
		timeout -k 2 20 ip netns exec $B rping -c -a $V4_A -p 7179 \
			-C 20 -S 128 >/dev/null 2>&1
		kill $_spid 2>/dev/null
		wait $_spid 2>/dev/null
	done
}

marker="rxe2 test_fuzz: start $$"
echo "$marker" >/dev/kmsg
qps_before=$(qps $DA)
counters >"$xwork/c0"

traffic &
cm_traffic &
t0=$(date +%s)
ip netns exec $B "$repo/tools/rxe2fuzz" -i ${B}v -n "$FRAMES" -s "$SEED" \
	-p "$PPS" -t "$FUZZ_SECONDS" -W "$(scaled 20)" >"$xwork/fuzz.out" 2>&1
frc=$?
t1=$(date +%s)
sed 's/^/# /' "$xwork/fuzz.out"
sent=$(sed -n 's/^rxe2fuzz: seed [0-9]*: \([0-9]*\) frames.*/\1/p' "$xwork/fuzz.out")
if [ $frc = 0 ] && [ "${sent:-0}" -ge "$FRAMES" ]; then
	ok "rxe2fuzz -s $SEED sent $sent frames at $DA's live QPs in $((t1 - t0)) s"
else
	not_ok "rxe2fuzz -s $SEED: exit $frc, ${sent:-no} frames of $FRAMES"
fi
touch "$stop"
wait

# The counters say where the frames went: every drop under its reason.
counters >"$xwork/c1"
join "$xwork/c0" "$xwork/c1" | awk '$3 != $2 { print "# counter " $1 ": +" $3 - $2 }'
delta() {
	join "$xwork/c0" "$xwork/c1" |
		awk -v k="$1" '$1 == k { d = $3 - $2 } END { print d + 0 }'
}
drops=$(delta rx_dropped)
reasons=0
for r in rx_no_qp rx_malformed rx_icrc_errors rx_backlog_drops \
	 rx_qp_state_drops rx_bad_qkey rx_no_recv_wqe rx_too_long; do
	reasons=$((reasons + $(delta $r)))
done
if [ "$drops" -gt 0 ] && [ "$reasons" = "$drops" ]; then
	ok "$DA dropped $drops frames, each counted under a reason"
else
	not_ok "$DA rx_dropped +$drops, the reasons add up to $reasons"
fi
# what the fuzzer sends for sure: wrong ICRCs, lying headers, unknown QPs
for r in rx_icrc_errors rx_malformed rx_no_qp; do
	if [ "$(delta $r)" -gt 0 ]; then
		ok "$r counted the fuzzer's frames (+$(delta $r))"
	else
		not_ok "$r did not move"
	fi
done

problems='Oops|BUG:|WARNING:|KASAN|UBSAN|general protection|Call Trace|Fatal error|refcount_t:|list_(add|del) corruption'
dmesg | sed -n "/$marker/,\$p" >"$xwork/dmesg"
if grep -Eq "$problems" "$xwork/dmesg"; then
	not_ok "no kernel problem and no fatal QP event during the fuzz"
	grep -E -B 2 -A 20 "$problems" "$xwork/dmesg" | head -n 60 | sed 's/^/#   /'
else
	ok "no kernel problem and no fatal QP event during the fuzz"
fi

# The device works: data checked byte for byte, connections through QP1.
pp="ibv_rc_pingpong -p 18610 -s 4096 -n 200 -c"
xpair "after the fuzz: ibv_rc_pingpong -c to $DA, 200 x 4 KiB checked" \
	$A $B tcp:18610 "" $pp -d $DA -g "$GA" -- $pp -d $DB -g "$GB" $V4_A
xpair "after the fuzz: ibv_rc_pingpong -c from $DA, 200 x 4 KiB checked" \
	$B $A tcp:18610 "" $pp -d $DB -g "$GB" -- $pp -d $DA -g "$GA" $V4_B
rp="rping -p 7180 -C 50 -V -S 1000"
xpair "after the fuzz: rping -V to $DA over RDMA CM, 50 pings checked" \
	$A $B cm:7180 "" $rp -s -a $V4_A -- $rp -c -a $V4_A
xpair "after the fuzz: rping -V from $DA over RDMA CM, 50 pings checked" \
	$B $A cm:7180 "" $rp -s -a $V4_B -- $rp -c -a $V4_B

i=0
while [ "$(qps $DA)" != "$qps_before" ] && [ $i -lt 50 ]; do
	sleep 0.2
	i=$((i + 1))
done
if [ "$(qps $DA)" = "$qps_before" ]; then
	ok "$DA has its $qps_before QP(s) of before the fuzz, no more"
else
	not_ok "$DA has $(qps $DA) QPs, $qps_before before the fuzz"
	rdma resource show qp | grep "link $DA/" | sed 's/^/#   /'
fi

echo "1..$n"
[ $failed = 0 ]
