#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# covers: teardown under RC WRITE traffic (pinned and ODP): kill -9, netdev down and up or unregistered, namespace deleted, link delete, rmmod; no kernel problem, no stuck process
#
# Teardown under load.  Two rxe2 devices on the ends of a veth, each end
# in a namespace of its own; RC WRITE traffic between them over a pinned
# MR and over an ODP MR (page faults all along), from processes in the
# initial namespace (so that none keeps a namespace alive).  Then, each
# time on a fresh pair, one of: kill -9 of the clients, netdev down and
# up, the netdev unregistered, the namespace deleted, rdma link delete,
# rmmod of the module.  After each: no kernel problem in the log, every
# process gone within a bound after SIGKILL (none stuck in the kernel),
# the devices gone where their netdev went, and where they stay, no QP
# left behind and a checked ibv_rc_pingpong.  rmmod comes last; the
# module is loaded again and the harness's links put back.

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
export LC_ALL=C
xwork=$(mktemp -d /tmp/teardown.XXXXXX) || exit 1

A=td1 B=td2
V4_A=10.79.8.1 V4_B=10.79.8.2
DA=${A}rxe2 DB=${B}rxe2
pids=

pair_del() { netns_pair_del $A $B; }

cleanup() {
	# shellcheck disable=SC2086 # a list of PIDs
	[ -n "$pids" ] && kill -9 $pids 2>/dev/null
	wait
	pair_del
	rm -rf "$xwork"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

pair_add() { netns_pair $A $B $V4_A $V4_B; }

qps() {
	rdma resource show qp 2>/dev/null | grep -c "link $1/"
}

# qps_back DEV N: DEV has N QPs again within 10 s
qps_back() {
	i=0
	while [ $i -lt 50 ]; do
		[ "$(qps "$1")" = "$2" ] && return 0
		sleep 0.2
		i=$((i + 1))
	done
	rdma resource show qp | grep "link $1/"
	return 1
}

# traffic: WRITEs A <- B over a pinned MR and over an ODP MR, 60 s at
# most, servers and clients in this namespace (TCP over lo)
traffic_start() {
	pids=
	for odp in "" --odp; do
		port=$((18700 + ${#odp}))
		# shellcheck disable=SC2086 # $odp is a word or nothing
		ib_write_bw -d $DA -x "$GA" -p $port -s 65536 -D 60 -F $odp \
			>"$xwork/srv$port" 2>&1 &
		pids="$pids $!"
		wait_listen $port || return 1
		# shellcheck disable=SC2086
		ib_write_bw -d $DB -x "$GB" -p $port -s 65536 -D 60 -F $odp \
			127.0.0.1 >"$xwork/cli$port" 2>&1 &
		pids="$pids $!"
	done
	sleep 3		# connected and moving data
}

faults() { cat /sys/class/infiniband/$DA/ports/1/hw_counters/num_page_faults; }

# the clients still run, and the ODP MR of this pair's responder has
# faulted its pages in as the WRITEs came (the device is new each time)
traffic_live() {
	set -- $pids
	i=0
	while [ "$(faults)" = 0 ] && [ $i -lt 50 ]; do
		sleep 0.2
		i=$((i + 1))
	done
	echo "num_page_faults $(faults)"
	kill -0 "$2" && kill -0 "$4" && [ "$(faults)" -gt 0 ] && return 0
	# a client that ended early says why
	for f in "$xwork"/cli* "$xwork"/srv*; do
		echo "${f##*/}:"
		grep -v '^ *$' "$f" | tail -n 6
	done
	return 1
}

# every traffic process dies within 10 s of SIGKILL: none is stuck in
# the kernel
traffic_reaped() {
	# shellcheck disable=SC2086
	kill -9 $pids 2>/dev/null
	i=0
	while [ $i -lt 100 ]; do
		left=
		for p in $pids; do
			kill -0 "$p" 2>/dev/null && left="$left $p"
		done
		[ -z "$left" ] && { wait; pids=; return 0; }
		sleep 0.1
		i=$((i + 1))
	done
	for p in $left; do
		echo "pid $p: $(cat /proc/"$p"/stat 2>/dev/null | cut -d' ' -f3) $(cat /proc/"$p"/wchan 2>/dev/null)"
	done
	return 1
}

kernel_clean() {
	problems='Oops|BUG:|WARNING:|KASAN|UBSAN|general protection|refcount_t:|list_(add|del) corruption|blocked for more than'
	dmesg | sed -n "/$1/,\$p" >"$xwork/dmesg"
	! grep -Eq "$problems" "$xwork/dmesg" || {
		grep -E -B 2 -A 20 "$problems" "$xwork/dmesg" | head -n 40
		return 1
	}
}

say() {
	if "$@" >"$xwork/out" 2>&1; then
		ok "$what: $desc"
	else
		not_ok "$what: $desc"
		sed 's/^/#   /' "$xwork/out"
	fi
}

# stays EVENT: the event leaves the devices in place (they must work on)
# gone EVENT: the event takes the devices away
run_event() {
	kind=$1 what=$2
	shift 2
	marker="rxe2 test_teardown: $what $$"
	echo "$marker" >/dev/kmsg
	if ! pair_add >"$xwork/out" 2>&1 || ! base_a=$(qps $DA) ||
	   ! traffic_start >>"$xwork/out" 2>&1; then
		not_ok "$what: set up the pair and its traffic"
		sed 's/^/#   /' "$xwork/out" "$xwork"/srv* "$xwork"/cli* 2>/dev/null | tail -n 30
		traffic_reaped >/dev/null
		pair_del
		return
	fi
	desc="traffic running: the clients alive, ODP faults on $DA"
	say traffic_live
	desc="done under load"
	say "$@"
	sleep 2
	desc="every traffic process reaped within 10 s of SIGKILL"
	say traffic_reaped
	if [ "$kind" = gone ]; then
		desc="$DA and $DB are gone"
		say wait_ibdev_gone $DA $DB
	else
		pp="ibv_rc_pingpong -p 18710 -s 4096 -n 100 -c"
		xpair "$what: ibv_rc_pingpong -c between $DA and $DB afterwards" \
			"" "" tcp:18710 "" $pp -d $DA -g "$GA" -- \
			$pp -d $DB -g "$GB" 127.0.0.1
		desc="$DA back to its $base_a kernel QP(s), the traffic's gone"
		say qps_back $DA "$base_a"
	fi
	desc="no kernel problem in the log"
	say kernel_clean "$marker"
	pair_del
}

kill_clients() {
	# the clients are the 2nd and 4th processes started
	set -- $pids
	kill -9 "$2" "$4"
}

down_up() {
	ip -n $A link set ${A}v down && sleep 1 && ip -n $A link set ${A}v up
}
unregister() { timeout 30 ip -n $A link del ${A}v; }
netns_del() { ip netns del $A && ip netns del $B; }
link_del() { timeout 30 rdma link delete $DA && timeout 30 rdma link delete $DB; }
module_del() { timeout 60 rmmod rdma_rxe2; }

run_event stays "kill -9 of the clients" kill_clients
run_event stays "netdev down and up" down_up
run_event gone "netdev unregistered" unregister
run_event gone "namespaces deleted" netns_del
run_event gone "rdma link delete" link_del

# rmmod: the harness's links go with the module; put them back after
saved=
for d in /sys/class/infiniband/*; do
	[ -r "$d/rxe2_abi" ] && saved="$saved ${d##*/}:$(cat "$d/parent")"
done
run_event gone "rmmod rdma_rxe2" module_del
restore() {
	if [ ! -e /sys/module/rdma_rxe2 ]; then
		# shellcheck disable=SC2086 # the parameters are words
		insmod "$RXE2_KO" $RXE2_KO_PARAMS || return 1
	fi
	for s in $saved; do
		case ${s%%:*} in $DA|$DB) continue ;; esac
		[ -e "/sys/class/infiniband/${s%%:*}" ] ||
			rdma link add "${s%%:*}" type rxe2 netdev "${s#*:}" || return 1
	done
	[ -z "$RXE2_IPV4" ] || gid_index rxe2_0 "$(gid_of_ipv4 "$RXE2_IPV4")" >/dev/null
}
if restore >"$xwork/out" 2>&1; then
	ok "rdma_rxe2 loaded again, links back:$saved"
else
	not_ok "rdma_rxe2 loaded again, links back:$saved"
	sed 's/^/#   /' "$xwork/out"
fi

echo "1..$n"
[ $failed = 0 ]
