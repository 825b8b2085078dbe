#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# covers: the rdma_rxe2 tracepoints: rxe2_tx/rxe2_rx against the packet counters, rxe2_qp_state, rxe2_retransmit under loss, rxe2_nak after a lost SEND_FIRST, rxe2_odp_fault with pages
#
# rxe2's tracepoints (system rdma_rxe2) through tracefs, on $RXE2_DEV
# talking to itself:
# - ibv_rc_pingpong of 3000 B messages: rxe2_tx and rxe2_rx events with
#   SEND_FIRST/MIDDLE/LAST and ACK opcodes, exactly as many of each as
#   the device's sent_pkts and rcvd_pkts counters moved; rxe2_qp_state
#   RESET -> INIT -> RTR -> RTS for both QPs;
# - the same while the device loses one packet in 5 (tx_drop):
#   rxe2_retransmit, as many rewinds as completer_retry_err moved;
# - the first SEND_FIRST lost (a fault rule): rxe2_nak sent and received;
# - ibv_rc_pingpong -o (on-demand paging): rxe2_odp_fault events with
#   pages, as many as num_page_faults moved.
# TAP output; the plan is printed last.

. "$(dirname "$0")/lib.sh"
dev=${RXE2_DEV:-rxe2_0}
work=$(mktemp -d /tmp/trace.XXXXXX) || exit 1

T=/sys/kernel/tracing
[ -d $T/events ] || mount -t tracefs nodev $T 2>/dev/null
if [ ! -d $T/events/rdma_rxe2 ]; then
	echo "1..0 # SKIP no tracefs or no rdma_rxe2 events"
	exit 0
fi
cleanup() {
	echo 0 >$T/events/rdma_rxe2/enable
	fault_clear "$dev"
	[ -d "$rxe2_cfs/$dev" ] && fault_tx_drop "$dev" 0 2>/dev/null
	echo >$T/trace
	rm -rf "$work"
}
trap cleanup EXIT

idx=$(rdma dev show "$dev" | sed -n 's/^\([0-9]*\): .*/\1/p')
gid=$(ipv4_gid_index "$dev")
ip=$(ibdev_ipv4 "$dev")
cnt() { cat /sys/class/infiniband/"$dev"/ports/1/hw_counters/"$1"; }

# run NAME PORT ARGS...: ibv_rc_pingpong server and client on $dev with
# the events on (two TAP lines: both exit 0), the trace of this device
# into $work/NAME.  With NAME "lossy" their exit status is not checked:
# on a slow guest (the sanitizer kernel) ibv_rc_pingpong's fixed 67 ms
# ACK timeout can run out under loss, and the events must match the
# counters either way.
run() {
	_name=$1 _port=$2
	shift 2
	echo >$T/trace
	echo 1 >$T/events/rdma_rxe2/enable
	if [ "$_name" = lossy ]; then
		timeout -k 2 "$(scaled 60)" ibv_rc_pingpong -d "$dev" -g "$gid" \
			-p "$_port" "$@" >"$work/srv" 2>&1 &
		wait_listen "$_port"
		timeout -k 2 "$(scaled 60)" ibv_rc_pingpong -d "$dev" -g "$gid" \
			-p "$_port" "$@" "$ip" >"$work/cli" 2>&1
		wait
	else
		xpair "$_name" "" "" tcp:$_port "" \
			ibv_rc_pingpong -d "$dev" -g "$gid" -p "$_port" "$@" -- \
			ibv_rc_pingpong -d "$dev" -g "$gid" -p "$_port" "$@" "$ip"
	fi
	echo 0 >$T/events/rdma_rxe2/enable
	grep " dev $idx " $T/trace >"$work/$_name"
}
events() { grep -c "$1: dev $idx $2" "$work/$3"; }

xwork=$work
s0=$(cnt sent_pkts) r0=$(cnt rcvd_pkts)
run plain 19501 -n 5 -s 3000
s1=$(cnt sent_pkts) r1=$(cnt rcvd_pkts)
tx=$(events rxe2_tx "" plain) rx=$(events rxe2_rx "" plain)
check_sub "rxe2_tx events ($tx) = sent_pkts moved ($((s1 - s0)))" \
	test "$tx" = $((s1 - s0))
check_sub "rxe2_rx events ($rx) = rcvd_pkts moved ($((r1 - r0)))" \
	test "$rx" = $((r1 - r0))
for op in 00:SEND_FIRST 01:SEND_MIDDLE 02:SEND_LAST 11:ACK; do
	k=$(events rxe2_tx "opcode 0x${op%%:*}" plain)
	check_sub "rxe2_tx ${op#*:} (0x${op%%:*}): $k events" test "$k" -ge 5
done
for t in "RESET -> INIT" "INIT -> RTR" "RTR -> RTS"; do
	k=$(grep -c "rxe2_qp_state: dev $idx qpn 0x[0-9a-f]* $t" "$work/plain")
	check_sub "rxe2_qp_state $t: both QPs ($k)" test "$k" = 2
done
head -n 3 "$work/plain" | sed 's/^/# /'

fault_tx_drop "$dev" 5
c0=$(cnt completer_retry_err)
run lossy 19502 -n 20 -s 3000
fault_tx_drop "$dev" 0
c1=$(cnt completer_retry_err)
rt=$(events rxe2_retransmit "" lossy)
check_sub "rxe2_retransmit events ($rt) = completer_retry_err moved ($((c1 - c0))), > 0" \
	sh -c "[ $rt -gt 0 ] && [ $rt = $((c1 - c0)) ]"
grep -m 2 rxe2_retransmit "$work/lossy" | sed 's/^/# /'

# A sequence NAK for certain: the first SEND_FIRST lost, its MIDDLE and
# its LAST (which asks for an ACK) are kept behind the gap, which then
# counts as a loss (rxe2_reorder.c).  The random losses above need not
# make one: a lost MIDDLE or LAST leaves fewer packets behind the gap
# (a tail probe resends), and the NAK itself may be lost.
fault_rule "$dev" drop opcode=0 count=1
run nak 19503 -n 2 -s 3000
fault_clear "$dev"
check_sub "rxe2_nak sent and received after a lost SEND_FIRST" sh -c \
	"grep -q 'rxe2_nak: dev $idx qpn 0x[0-9a-f]* sent' '$work/nak' &&
	 grep -q 'rxe2_nak: dev $idx qpn 0x[0-9a-f]* received' '$work/nak'"
grep -m 2 rxe2_nak "$work/nak" | sed 's/^/# /'

f0=$(cnt num_page_faults)
run odp 19503 -n 3 -s 3000 -o
f1=$(cnt num_page_faults)
of=$(grep -c "rxe2_odp_fault: dev $idx lkey 0x[0-9a-f]* iova 0x[0-9a-f]* len [0-9]* pages [1-9]" "$work/odp")
check_sub "rxe2_odp_fault events with pages ($of) = num_page_faults moved ($((f1 - f0))), > 0" \
	sh -c "[ $of -gt 0 ] && [ $of = $((f1 - f0)) ]"

echo "1..$n"
[ $failed = 0 ]
