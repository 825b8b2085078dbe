#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# covers: rdma link life cycle: links on lo, veth, dummy, VLAN and bond, refusals, port state, GIDs, namespaces, UDP 4791 steering, coexistence with rdma_rxe, rmmod with links, rmmod refused while a fault injection directory is in configfs
#
# rdma link life cycle of rdma_rxe2: links on lo, veth, dummy, VLAN and
# bond netdevs, refusals, port state, GIDs, network namespaces, RoCEv2
# receive steering, coexistence with rdma_rxe, and rmmod with links.
# TAP output.  Runs as root in the test guest with rdma_rxe2 loaded;
# RXE2_KO (and RXE2_KO_PARAMS) let it reload the module.  It leaves the
# system as it found it, links that existed before included.

# shellcheck disable=SC2016,SC2034 # eval strings expand when they run
export LC_ALL=C
PLAN=63
SYS=/sys/class/infiniband

. "$(dirname "$0")/lib.sh"
out=$(mktemp /tmp/test_link.XXXXXX) || exit 1
check_out=$out

# poll TENTHS CMD ARGS...: until CMD succeeds, at most TENTHS/10 seconds
poll() {
	local i=0 max=$1
	shift
	while ! "$@" >/dev/null 2>&1; do
		i=$((i + 1))
		[ "$i" -ge "$max" ] && { "$@"; return 1; }
		sleep 0.1
	done
	return 0
}

is_rxe2() { [ -r "$SYS/$1/rxe2_abi" ]; }
gone() { [ ! -e "$SYS/$1" ] || { echo "$SYS/$1 still exists"; return 1; }; }
port_state() { cat "$SYS/$1/ports/1/state"; }

# GID sysfs form of an address: 8 groups of 4 hex digits
gid_of_ipv4() {
	local a b c d
	IFS=. read -r a b c d <<<"$1"
	printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' "$a" "$b" "$c" "$d"
}

gid_of_ipv6() {
	python3 -c 'import ipaddress, sys
e = ipaddress.IPv6Address(sys.argv[1]).exploded
print(e)' "$1"
}

# has_gid DEV GID: the GID is in the table, as a RoCE v2 GID
has_gid() {
	local f idx
	for f in "$SYS/$1"/ports/1/gids/*; do
		[ "$(cat "$f" 2>/dev/null)" = "$2" ] || continue
		idx=${f##*/}
		[ "$(cat "$SYS/$1/ports/1/gid_attrs/types/$idx" 2>/dev/null)" = \
		  "RoCE v2" ] && return 0
		echo "GID $2 at index $idx is not RoCE v2"
		return 1
	done
	echo "no GID $2 on $1"
	return 1
}

lacks_gid() {
	if grep -qsx "$2" "$SYS/$1"/ports/1/gids/*; then
		echo "GID $2 still on $1"
		return 1
	fi
}

# only RoCE v2 GIDs: rxe2 speaks RoCEv2 only
only_v2() {
	local t bad=0
	for t in "$SYS/$1"/ports/1/gid_attrs/types/*; do
		t=$(cat "$t" 2>/dev/null) || continue
		[ -z "$t" ] || [ "$t" = "RoCE v2" ] || { echo "type $t"; bad=1; }
	done
	return $bad
}

link_add() { rdma link add "$1" type rxe2 netdev "$2"; }
link_del() { rdma link delete "$1"; }

# link_ok NAME NETDEV [NETNS]: a registered rxe2 device on NETDEV, as
# sysfs, rdma link and the provider's identification file say; rdma link
# names the netdev only inside the netdev's namespace
link_ok() {
	local nsexec=
	[ -n "${3:-}" ] && nsexec="ip netns exec $3"
	is_rxe2 "$1" || { echo "$SYS/$1/rxe2_abi missing"; return 1; }
	[ "$(cat "$SYS/$1/rxe2_abi")" = "rxe2 32" ] ||
		{ echo "rxe2_abi: $(cat "$SYS/$1/rxe2_abi")"; return 1; }
	[ "$(cat "$SYS/$1/parent")" = "$2" ] ||
		{ echo "parent: $(cat "$SYS/$1/parent")"; return 1; }
	[ "$(cat "$SYS/$1/node_type")" = "1: CA" ] ||
		{ echo "node_type: $(cat "$SYS/$1/node_type")"; return 1; }
	$nsexec rdma link show "$1/1" | grep -Eq "netdev $2( |\$)" ||
		{ $nsexec rdma link show "$1/1"; return 1; }
}

# add_check NAME NETDEV: add, verify, delete, verify gone
add_del() {
	link_add "$1" "$2" || return 1
	link_ok "$1" "$2" || { link_del "$1"; return 1; }
	link_del "$1" || return 1
	gone "$1"
}

# ---- cleanup: everything this test creates is named t2* -------------------
cleanup() {
	local d
	for d in "$SYS"/t2*; do
		[ -e "$d" ] && rdma link delete "${d##*/}" 2>/dev/null
	done
	for d in t2ipip t2d0.100 t2b0 t2v0 t2d0 t2d1 t2d2 t2rxe; do
		ip link del "$d" 2>/dev/null
	done
	ip netns del t2ns 2>/dev/null
	rm -f "$out"
}
trap cleanup EXIT

echo "1..$PLAN"

# ---- module -----------------------------------------------------------------
check "rdma_rxe2 is loaded" test -d /sys/module/rdma_rxe2
check "rxe2 is a known link type (newlink on lo works)" link_add t2lo lo
check "link on lo: sysfs, rxe2_abi, parent, rdma link" link_ok t2lo lo
check "link on lo: port ACTIVE (lo is up)" \
	poll 50 grep -qx "4: ACTIVE" "$SYS/t2lo/ports/1/state"
check "link on lo: GID ::ffff:127.0.0.1 (RoCE v2)" \
	poll 100 has_gid t2lo "$(gid_of_ipv4 127.0.0.1)"
check "link on lo: RoCE v2 GIDs only" only_v2 t2lo
check "second rxe2 link on lo fails with EEXIST" \
	eval 'link_add t2lo2 lo 2>&1 | grep "File exists"'
check "the failed second link left no device" gone t2lo2
check "rdma link delete of the link on lo" link_del t2lo
check "deleted device is gone from sysfs" gone t2lo

# ---- netdev kinds -------------------------------------------------------------
check "dummy netdev" ip link add t2d0 type dummy
check "link add/delete on dummy" add_del t2dm t2d0
check "veth pair" ip link add t2v0 type veth peer name t2v1
check "link add/delete on veth" add_del t2ve t2v0
check "vlan netdev (8021q)" ip link add link t2d0 name t2d0.100 type vlan id 100
check "link add/delete on vlan" add_del t2vl t2d0.100
modprobe bonding max_bonds=0 2>/dev/null	# no stray bond0
check "bond netdev" ip link add t2b0 type bond
check "link add/delete on bond" add_del t2bo t2b0
if ip link add t2ipip type ipip local 10.77.0.1 remote 10.77.0.2 2>"$out"; then
	check "link on a non-Ethernet netdev (ipip) fails with EINVAL" \
		eval 'link_add t2ip t2ipip 2>&1 | grep "Invalid argument"'
	check "the refused link left no device" gone t2ip
else
	skip "link on a non-Ethernet netdev (ipip) fails with EINVAL" "no ipip: $(cat "$out")"
	skip "the refused link left no device" "no ipip"
fi
check "link on a missing netdev fails" eval '! link_add t2no t2nosuchdev'

# ---- port state -------------------------------------------------------------
check "link on dummy t2d0" link_add t2dm t2d0
check "dummy down: port DOWN" \
	eval 'ip link set t2d0 down && poll 50 grep -qx "1: DOWN" "$SYS/t2dm/ports/1/state"'
check "dummy down: phys_state Disabled" \
	grep -qx "3: Disabled" "$SYS/t2dm/ports/1/phys_state"
check "dummy up: port ACTIVE" \
	eval 'ip link set t2d0 up && poll 50 grep -qx "4: ACTIVE" "$SYS/t2dm/ports/1/state"'
check "dummy up: phys_state LinkUp" \
	grep -qx "5: LinkUp" "$SYS/t2dm/ports/1/phys_state"
check "dummy (no link speed): rate 10 Gb/sec (1X FDR10)" \
	grep -qx "10 Gb/sec (1X FDR10)" "$SYS/t2dm/ports/1/rate"
guid_of_mac() {
	local a b c d e f
	IFS=: read -r a b c d e f <"/sys/class/net/$1/address"
	printf '%02x%s:%sff:fe%s:%s%s\n' $((0x$a ^ 2)) "$b" "$c" "$d" "$e" "$f"
}
check "node_guid is the EUI-64 of the netdev MAC" eval '
	[ "$(cat "$SYS/t2dm/node_guid")" = "$(guid_of_mac t2d0)" ] ||
	{ cat "$SYS/t2dm/node_guid"; guid_of_mac t2d0; false; }'
check "fw_ver 1.0.0" grep -qx "1.0.0" "$SYS/t2dm/fw_ver"

# Through the provider (skipped when libibverbs cannot open rxe2 devices).
if ibv_devinfo -d t2dm >/dev/null 2>&1; then
	mtu_is() {
		ibv_devinfo -d t2dm | grep -Eq "active_mtu:[[:space:]]+$1 " ||
			{ ibv_devinfo -d t2dm | grep mtu; return 1; }
	}
	check "netdev mtu 1500: active_mtu 1024" \
		eval 'ip link set t2d0 mtu 1500 && poll 50 mtu_is 1024'
	check "netdev mtu 9000: active_mtu 4096" \
		eval 'ip link set t2d0 mtu 9000 && poll 50 mtu_is 4096'
	watch=$(mktemp /tmp/test_link.XXXXXX)
	stdbuf -oL ibv_asyncwatch -d t2dm >"$watch" 2>&1 &
	wpid=$!
	check "ibv_asyncwatch: PORT_ERR on down, PORT_ACTIVE on up" eval '
		poll 100 grep -q "async event FD" "$watch" &&
		ip link set t2d0 down &&
		poll 50 grep -q "IBV_EVENT_PORT_ERR" "$watch" &&
		ip link set t2d0 up &&
		poll 50 grep -q "IBV_EVENT_PORT_ACTIVE" "$watch" ||
		{ cat "$watch"; false; }'
	kill "$wpid" 2>/dev/null
	wait "$wpid" 2>/dev/null
	rm -f "$watch"
else
	skip "netdev mtu 1500: active_mtu 1024" "no rxe2 provider"
	skip "netdev mtu 9000: active_mtu 4096" "no rxe2 provider"
	skip "ibv_asyncwatch: PORT_ERR on down, PORT_ACTIVE on up" "no rxe2 provider"
fi

# ---- GIDs -------------------------------------------------------------------
G4=$(gid_of_ipv4 10.77.1.1)
G6=$(gid_of_ipv6 fd77::1)
check "ip addr add 10.77.1.1: RoCE v2 GID appears" \
	eval 'ip addr add 10.77.1.1/24 dev t2d0 && poll 100 has_gid t2dm "$G4"'
check "ip addr add fd77::1: RoCE v2 GID appears" \
	eval 'ip -6 addr add fd77::1/64 dev t2d0 nodad && poll 100 has_gid t2dm "$G6"'
check "ip addr del 10.77.1.1: GID disappears" \
	eval 'ip addr del 10.77.1.1/24 dev t2d0 && poll 100 lacks_gid t2dm "$G4"'
check "ip addr del fd77::1: GID disappears" \
	eval 'ip -6 addr del fd77::1/64 dev t2d0 && poll 100 lacks_gid t2dm "$G6"'

# ---- netdev removal -------------------------------------------------------------
check "link on veth t2v0" link_add t2ve t2v0
check "ip link del of the veth removes its rdma device" \
	eval 'ip link del t2v0 && poll 100 gone t2ve'

# A process using the device must not hold up its removal: ib_core
# disassociates it and reports a fatal event.
if ibv_devinfo -d t2dm >/dev/null 2>&1; then
	watch=$(mktemp /tmp/test_link.XXXXXX)
	stdbuf -oL ibv_asyncwatch -d t2dm >"$watch" 2>&1 &
	wpid=$!
	check "ip link del under a live process removes the device" eval '
		poll 100 grep -q "async event FD" "$watch" &&
		ip link del t2d0 && poll 100 gone t2dm'
	check "the process got IBV_EVENT_DEVICE_FATAL" \
		poll 50 grep -q "IBV_EVENT_DEVICE_FATAL" "$watch"
	kill "$wpid" 2>/dev/null
	wait "$wpid" 2>/dev/null
	rm -f "$watch"
	ip link add t2d0 type dummy 2>/dev/null
	ip link set t2d0 up
	link_add t2dm t2d0 >/dev/null 2>&1
else
	skip "ip link del under a live process removes the device" \
		"no rxe2 provider"
	skip "the process got IBV_EVENT_DEVICE_FATAL" "no rxe2 provider"
fi

# ---- network namespace ----------------------------------------------------------
check "veth into netns t2ns with 10.77.2.1" eval '
	ip netns add t2ns &&
	ip link add t2v0 type veth peer name t2v1 netns t2ns &&
	ip link set t2v0 up &&
	ip -n t2ns link set t2v1 up &&
	ip -n t2ns link set lo up &&
	ip -n t2ns addr add 10.77.2.1/24 dev t2v1'
check "rdma link add inside the netns" \
	ip netns exec t2ns rdma link add t2ns1 type rxe2 netdev t2v1
check "netns link: device registered on the namespaced veth" link_ok t2ns1 t2v1 t2ns
check "netns link: GID of the namespaced address" \
	poll 100 has_gid t2ns1 "$(gid_of_ipv4 10.77.2.1)"

# RoCEv2 steering: UDP to 4791 at an rxe2 GID is taken by rxe2 (no socket,
# so no ICMP port unreachable); at any other local address it is not.
udp_refused() {
	ip netns exec t2ns bash -c '
		exec 3>/dev/udp/'"$1"'/4791 || exit 2
		echo x >&3; sleep 0.3; echo x >&3' 2>&1 | grep -q refused
}
check "netns: UDP 4791 to a non-GID address draws port unreachable" \
	udp_refused 127.0.0.1
check "netns link on lo too" ip netns exec t2ns rdma link add t2ns2 type rxe2 netdev lo
rx_dropped() { cat "$SYS/$1/ports/1/hw_counters/rx_dropped"; }
check "netns: UDP 4791 to an rxe2 GID is taken by rxe2" eval '
	poll 100 has_gid t2ns2 "$(gid_of_ipv4 127.0.0.1)" &&
	before=$(rx_dropped t2ns2) && ! udp_refused 127.0.0.1 &&
	after=$(rx_dropped t2ns2) && echo "rx_dropped $before -> $after" &&
	[ "$after" -ge $((before + 2)) ]'
check "ip netns del removes the namespaced devices" \
	eval 'ip netns del t2ns && poll 200 gone t2ns1 && poll 200 gone t2ns2'

# ---- coexistence with rdma_rxe ------------------------------------------------------
if modprobe rdma_rxe 2>"$out"; then
	check "rdma_rxe link and rxe2 link side by side" eval '
		ip link add t2d1 type dummy && ip link add t2rxe type dummy &&
		link_add t2c2 t2d1 &&
		rdma link add t2c1 type rxe netdev t2rxe'
	check "rdma link show lists both" eval '
		rdma link show | grep -q "link t2c1/1 " &&
		rdma link show | grep -q "link t2c2/1 "'
	# rdma_rxe's socket holds 4791 in init_net; rxe2 still gets its own
	check "init_net: UDP 4791 to an rxe2 GID is taken by rxe2, not rdma_rxe" eval '
		ip link set t2d1 up && ip addr add 10.77.3.1/24 dev t2d1 &&
		poll 100 has_gid t2c2 "$(gid_of_ipv4 10.77.3.1)" &&
		before=$(rx_dropped t2c2) &&
		bash -c "exec 3>/dev/udp/10.77.3.1/4791 && echo x >&3 && echo x >&3" &&
		poll 50 eval "[ \$(rx_dropped t2c2) -ge $((before + 2)) ]" ||
		{ echo "rx_dropped $before -> $(rx_dropped t2c2)"; false; }'
	if [ -n "${RDMAV_DRIVERS:-}" ] && ls "$RDMAV_DRIVERS"-rdmav*.so >/dev/null 2>&1; then
		check "ibv_devices lists both" eval '
			ibv_devices | grep -qw t2c1 && ibv_devices | grep -qw t2c2'
	else
		skip "ibv_devices lists both" "RDMAV_DRIVERS provider not built"
	fi
	rdma link delete t2c1 2>/dev/null
else
	skip "rdma_rxe link and rxe2 link side by side" "no rdma_rxe"
	skip "rdma link show lists both" "no rdma_rxe"
	skip "init_net: UDP 4791 to an rxe2 GID is taken by rxe2, not rdma_rxe" "no rdma_rxe"
	skip "ibv_devices lists both" "no rdma_rxe"
fi

# ---- rmmod with links -----------------------------------------------------------
if [ -n "${RXE2_KO:-}" ] && [ -r "$RXE2_KO" ]; then
	# the harness's own links come back after the reload
	saved=
	for d in "$SYS"/*; do
		is_rxe2 "${d##*/}" || continue
		case ${d##*/} in t2*) continue ;; esac
		saved="$saved ${d##*/}:$(cat "$d/parent")"
	done
	params=$(grep -H . /sys/module/rdma_rxe2/parameters/* 2>/dev/null)

	ip link add t2d2 type dummy 2>/dev/null
	link_add t2r1 lo >/dev/null 2>&1
	link_add t2r2 t2d2 >/dev/null 2>&1
	rxe2_left() {
		local d left=
		for d in "$SYS"/*; do
			[ -r "$d/rxe2_abi" ] && left="$left ${d##*/}"
		done
		[ -z "$left" ] || { echo "left:$left"; return 1; }
	}
	# a configfs directory (fault injection) pins the module: configfs
	# took a reference at its mkdir, and rmmod is refused until rmdir
	check "rmmod refused while rxe2/t2r1 is in configfs" eval '
		mkdir "$rxe2_cfs/t2r1" && ! rmmod rdma_rxe2 &&
		[ -d /sys/module/rdma_rxe2 ]'
	check "rmdir rxe2/t2r1" rmdir "$rxe2_cfs/t2r1"
	check "rmmod rdma_rxe2 with 3 links present" eval '
		[ -e "$SYS/t2r1" ] && [ -e "$SYS/t2r2" ] && [ -e "$SYS/t2dm" ] &&
		rmmod rdma_rxe2'
	check "no rxe2 device left" rxe2_left
	check "no rxe2 link left in rdma link show" \
		eval '! rdma link show | grep -q "link t2r[123]/"'
	check "netdevs released (ip link del does not hang)" \
		timeout 20 sh -c 'ip link del t2d0 && ip link del t2d2 &&
				  { ! ip link show t2d1 >/dev/null 2>&1 ||
				    ip link del t2d1; }'
	check "insmod refuses max_cqe=1000 (not a power of two)" \
		eval '! insmod "$RXE2_KO" max_cqe=1000 && [ ! -d /sys/module/rdma_rxe2 ]'
	check "insmod refuses max_qp=0" \
		eval '! insmod "$RXE2_KO" max_qp=0 && [ ! -d /sys/module/rdma_rxe2 ]'
	# shellcheck disable=SC2086 # the parameters are words on purpose
	check "insmod rdma_rxe2 again" insmod "$RXE2_KO" ${RXE2_KO_PARAMS:-}
	check "module parameters as before" \
		eval '[ "$(grep -H . /sys/module/rdma_rxe2/parameters/*)" = "$params" ]'
	# back with their GIDs, as the harness set them up
	restore() {
		local s a
		for s in $saved; do
			link_add "${s%%:*}" "${s#*:}" || return 1
			for a in $(ip -4 -o addr show dev "${s#*:}" |
				   awk '{ sub(/\/.*/, "", $4); print $4 }'); do
				poll 100 has_gid "${s%%:*}" "$(gid_of_ipv4 "$a")" ||
					return 1
			done
		done
	}
	check "links that existed before are back ($saved )" restore
else
	for t in "rmmod refused while rxe2/t2r1 is in configfs" "rmdir rxe2/t2r1" \
		 "rmmod rdma_rxe2 with 3 links present" "no rxe2 device left" \
		 "no rxe2 link left in rdma link show" \
		 "netdevs released (ip link del does not hang)" \
		 "insmod refuses max_cqe=1000 (not a power of two)" \
		 "insmod refuses max_qp=0" "insmod rdma_rxe2 again" "module parameters as before" \
		 "links that existed before are back"; do
		skip "$t" "RXE2_KO not set"
	done
fi

[ "$n" -eq "$PLAN" ] || echo "# ran $n checks, planned $PLAN"
[ "$failed" -eq 0 ]
