#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Two machines, two kernels (make check-two-kernels: tools/vm-pair runs
# this in both guests, "A" on Debian 12's 6.1, "B" on 7.3).  Three
# virtio-net NICs per guest, each pair joined by its own QEMU socket
# netdev, each an IPv4 subnet of its own, one device per NIC (rxe2 takes
# RoCEv2 by destination address, so rdma_rxe needs a netdev of its own):
#
#   link 0  A rxe2     10.81.0.1  <->  10.81.0.2  rxe2     B
#   link 1  A rxe2     10.81.1.1  <->  10.81.1.2  rdma_rxe B
#   link 2  A rdma_rxe 10.81.2.1  <->  10.81.2.2  rxe2     B
#
# A is the server of every run, B the client: rxe2 <-> rxe2, rxe2 server
# with an rdma_rxe client, rdma_rxe server with an rxe2 client, on two
# different kernels.  Every link: perftest RC/UC/UD bandwidth and
# RC/UC/UD latency, rping -V (data verified) and ib_write_bw -R (RDMA
# CM).  Then an nvmet-rdma target on A (a brd RAM disk, one port per
# link) and nvme-rdma from B over each link with fio crc32c verify.
# tcpdump on every NIC on both sides all along; each capture decoded by
# tools/rxe2dump: every ICRC good, both ends' packets there, the
# operations' opcodes there.
#
# The guests coordinate over link 0 itself: before each step both meet
# at a barrier (A listens with busybox nc, B connects until it gets in),
# A starts its server and waits until it listens before it answers, so B
# runs its client once.  Every step has a timeout.  TAP per guest; the
# last line is "N passed, N failed".
#
# perftest: -F reports even when its clock calibration fails under TCG
# (and then prints 0.00 MB/s); runs pass on the exit status and the
# report line with the iteration count, never on a speed.

# Functions run through check look unreachable to shellcheck.
# shellcheck disable=SC2317
export LC_ALL=C
role=${1:-}
case $role in A|B) ;; *) echo "usage: $0 A|B" >&2; exit 2 ;; esac
repo=${RXE2_REPO:?RXE2_REPO not set (run through tools/vm-pair)}
ko=${RXE2_KO:-$repo/rxe/rdma_rxe2.ko}
# shellcheck source=../lib.sh
. "$repo/selftests/lib.sh"
dump=$repo/tools/rxe2dump
work=$(mktemp -d /tmp/two.XXXXXX) || exit 1
kver=$(uname -r)

tap_prefix="$role($kver): "
check_out=$work/check.out check_tail=30

finish() {
	echo "1..$n"
	echo "$((n - failed)) passed, $failed failed"
	[ $failed = 0 ]
	exit
}

# ---- the three links ----------------------------------------------------------
LINKS="0 1 2"
# type of A's and B's device per link
a_type=(rxe2 rxe2 rxe) b_type=(rxe2 rxe rxe2)
if [ "$role" = A ]; then my_type=("${a_type[@]}"); else my_type=("${b_type[@]}"); fi
ip_a() { echo "10.81.$1.1"; }
ip_b() { echo "10.81.$1.2"; }
my_ip() { if [ "$role" = A ]; then ip_a "$1"; else ip_b "$1"; fi; }
my_mac() { printf '52:54:00:72:78:%s%d' "$(echo "$role" | tr AB ab)" "$1"; }
dev_of() { echo "t${1}${my_type[$1]}"; }	# t0rxe2, t1rxe, ...
name_of() { case $1 in rxe2) echo rxe2 ;; *) echo rdma_rxe ;; esac; }
# "rxe2(6.1.0-57-amd64) <-> rdma_rxe(7.3.4+deb13-amd64)": A's side first
label_of() {
	echo "link $1 $(name_of "${a_type[$1]}")(${RXE2_PAIR_KVER_A:-A}) <-> $(name_of "${b_type[$1]}")(${RXE2_PAIR_KVER_B:-B})"
}

iface_of_mac() {
	for _d in /sys/class/net/*; do
		[ "$(cat "$_d/address" 2>/dev/null)" = "$1" ] && { echo "${_d##*/}"; return 0; }
	done
	return 1
}

# ---- barrier over link 0 --------------------------------------------------------
# barrier NAME [WORD] [SECONDS]: both guests meet; each sends "NAME WORD"
# and gets the other's into peer_word.  A name that is not the one
# expected means the two scripts went out of step: no point going on.
ctl_port=7999
barrier() {
	_bn=$1 _word=${2:-ok} _t=${3:-300}
	peer_word=
	if [ "$role" = A ]; then
		_got=$(printf '%s %s\n' "$_bn" "$_word" |
			timeout "$_t" busybox nc -l -p $ctl_port 2>/dev/null | head -n 1)
	else
		_end=$(($(date +%s) + _t))
		_got=
		while [ "$(date +%s)" -lt $_end ]; do
			# shellcheck disable=SC2094 # one socket, both ways
			if exec 3<>"/dev/tcp/$(ip_a 0)/$ctl_port"; then
				printf '%s %s\n' "$_bn" "$_word" >&3
				read -r -t 30 _got <&3
				exec 3>&-
				[ -n "$_got" ] && break
			fi 2>/dev/null
			sleep 0.3
		done
	fi
	if [ "${_got%% *}" != "$_bn" ]; then
		not_ok "barrier '$_bn': the other guest said '${_got:-nothing}'"
		echo "Bail out! the two guests are out of step"
		finish
	fi
	peer_word=${_got#* }
}

# ---- setup --------------------------------------------------------------------
modprobe virtio_net 2>/dev/null	# a module on 6.1, built in on 7.x
declare -a ifc
setup_links() {
	for l in $LINKS; do
		_i=0
		until ifc[l]=$(iface_of_mac "$(my_mac "$l")"); do
			_i=$((_i + 1))
			[ $_i -gt 100 ] && { echo "no NIC with MAC $(my_mac "$l")"; return 1; }
			sleep 0.1
		done
		ip addr add "$(my_ip "$l")/24" dev "${ifc[l]}" &&
			ip link set "${ifc[l]}" up || return 1
		echo "link $l: ${ifc[l]} $(my_mac "$l") $(my_ip "$l") driver $(basename "$(readlink "/sys/class/net/${ifc[l]}/device/driver")")"
	done
}
check "three virtio-net NICs up with their addresses" setup_links

load_modules() {
	for dep in $(modinfo -F depends "$ko" | tr ',' ' '); do
		modprobe "$dep" || return 1
	done
	insmod "$ko" && modprobe rdma_rxe || return 1
	echo "rdma_rxe2 $(modinfo -F vermagic "$ko")"
}
check "insmod $ko, modprobe rdma_rxe" load_modules

# a private libibverbs.d: our provider from the build tree and rxe only
verbs_config() {
	_dir=/run/two/libibverbs.d
	mkdir -p $_dir && rm -f $_dir/*.driver &&
	echo "driver rxe" >$_dir/rxe.driver &&
	echo "driver $repo/provider/librxe2" >$_dir/rxe2.driver &&
	mount --bind $_dir /etc/libibverbs.d
}
check "/etc/libibverbs.d: rxe2 (build tree) and rxe" verbs_config
export RDMAV_DRIVERS=$repo/provider/librxe2

declare -a gid
add_devs() {
	for l in $LINKS; do
		rdma link add "$(dev_of "$l")" type "${my_type[l]}" netdev "${ifc[l]}" || return 1
		gid[l]=$(gid_index "$(dev_of "$l")" "$(gid_of_ipv4 "$(my_ip "$l")")") || {
			echo "no RoCE v2 GID for $(my_ip "$l") on $(dev_of "$l")"
			return 1
		}
		wait_port_active "$(dev_of "$l")" || { echo "$(dev_of "$l") not ACTIVE"; return 1; }
		echo "$(dev_of "$l") on ${ifc[l]}: GID index ${gid[l]}, $(ibv_devinfo -d "$(dev_of "$l")" | grep -m1 active_mtu | tr -s ' \t' ' ')"
	done
}
check "rdma links: $(for l in $LINKS; do printf '%s ' "$(dev_of "$l")"; done)" add_devs

# B boots once A's qemu listens: A waits here for it
barrier up ok 600

pings() {
	for l in $LINKS; do
		if [ "$role" = A ]; then _p=$(ip_b "$l"); else _p=$(ip_a "$l"); fi
		ping -c 2 -W 5 "$_p" | tail -n 2 || return 1
	done
}
check "ping the other machine on every link" pings

# ---- captures -------------------------------------------------------------------
declare -a cap_pid
cap_start() {
	for l in $LINKS; do
		tcpdump -i "${ifc[l]}" -nn -U -Z root -s 0 -w "$work/link$l.pcap" \
			udp port 4791 2>"$work/link$l.pcap.err" &
		cap_pid[l]=$!
	done
	for l in $LINKS; do
		_i=0
		until grep -q "listening on" "$work/link$l.pcap.err"; do
			_i=$((_i + 1))
			[ $_i -gt 100 ] && { cat "$work/link$l.pcap.err"; return 1; }
			sleep 0.1
		done
	done
}
check "tcpdump on every NIC (udp port 4791, whole packets)" cap_start
barrier captures

# ---- one step: A serves, B is the client -----------------------------------------
# wait_up tcp|cm PORT: until the server listens, at most 60 s (lib.sh's
# waits give 10 s; a perftest server on one emulated vCPU of a busy host
# can take longer to get there)
wait_up() {
	_i=0
	while [ $_i -lt 600 ]; do
		if [ "$1" = tcp ]; then
			ss -ltn 2>/dev/null | grep -q ":$2 " && return 0
		else
			rdma resource show cm_id 2>/dev/null |
				grep -q "state LISTEN .*src-addr [^ ]*:$2 " && return 0
		fi
		kill -0 "$_pid" 2>/dev/null || return 1
		sleep 0.1
		_i=$((_i + 1))
	done
	return 1
}
port=19000
# step NAME WAIT EXPECT SRV_CMD... -- CLI_CMD...: WAIT tcp or cm (how A
# knows its server listens on $port); EXPECT an extended regex the
# output must match ("" = any).
step() {
	_name=$1 _wait=$2 _expect=$3
	shift 3
	port=$((port + 1))
	_srv=()
	while [ "$1" != -- ]; do _srv+=("$1"); shift; done
	shift
	_out=$work/step.out
	if [ "$role" = A ]; then
		_t0=$(date +%s.%N)
		timeout -k 2 240 "${_srv[@]}" >"$_out" 2>&1 &
		_pid=$!
		wait_up "$_wait" $port
		_up=$?
		if [ $_up = 0 ]; then barrier "$port" ok; else barrier "$port" noserver; fi
		if [ $_up != 0 ]; then
			kill $_pid 2>/dev/null
			wait $_pid
			not_ok "$_name: server listens"
			sed 's/^/#   /' "$_out" | tail -n 20
			return
		fi
		wait $_pid
		_rc=$?
		_side=server
	else
		barrier "$port" ready
		if [ "$peer_word" != ok ]; then
			not_ok "$_name: client (server not listening)"
			return
		fi
		_t0=$(date +%s.%N)
		# An RDMA CM listener shows in restrack a moment before it
		# takes requests: a client turned away then tries twice more.
		for _try in 1 2 3; do
			timeout -k 2 120 "$@" >"$_out" 2>&1
			_rc=$?
			[ $_rc = 0 ] && break
			grep -qiE "reject|unreachable|refused|couldn't connect" "$_out" || break
			echo "# $_name: client try $_try turned away: $(grep -m1 -iE "reject|unreachable|refused|couldn't connect" "$_out")"
			sleep 1
		done
		_side=client
	fi
	_secs=$(echo "$_t0 $(date +%s.%N)" | awk '{ printf "%.1f", $2 - $1 }')
	if [ "$_rc" = 0 ] && { [ -z "$_expect" ] || grep -Eq "$_expect" "$_out"; }; then
		ok "$_name: $_side exits 0 (${_secs}s)"
		grep -E "$_expect" "$_out" 2>/dev/null | head -n 1 | sed 's/^/#   /'
	else
		not_ok "$_name: $_side (rc $_rc, ${_secs}s)"
		sed 's/^/#   /' "$_out" | tail -n 30
	fi
}

for l in $LINKS; do
	lab=$(label_of "$l")
	d=$(dev_of "$l") g=${gid[l]} sip=$(ip_a "$l")
	# B names A's address; A's copy of the words is the server's
	peer=()
	[ "$role" = B ] && peer=("$sip")
	pt() {	# NAME EXPECT PERFTEST ARGS...: both sides the same but the address
		_n=$1 _e=$2
		shift 2
		step "$lab: $_n" tcp "$_e" "$@" -F -d "$d" -x "$g" -p $((port + 1)) -- \
			"$@" -F -d "$d" -x "$g" -p $((port + 1)) "${peer[@]}"
	}
	pt "ib_write_bw RC 4096 B x200" "^ *4096 +200 " ib_write_bw -s 4096 -n 200
	pt "ib_send_bw UC 4096 B x200" "^ *4096 +200 " ib_send_bw -c UC -s 4096 -n 200
	pt "ib_send_bw UD 512 B x200" "^ *512 +200 " ib_send_bw -c UD -s 512 -n 200
	pt "ib_write_lat RC 64 B x200" "^ *64 +200 " ib_write_lat -s 64 -n 200
	pt "ib_send_lat UC 64 B x200" "^ *64 +200 " ib_send_lat -c UC -s 64 -n 200
	pt "ib_send_lat UD 64 B x200" "^ *64 +200 " ib_send_lat -c UD -s 64 -n 200
	# RDMA CM: the address picks the device on each side
	step "$lab: rping -V -S 1000 -C 10 (RDMA CM, data verified)" cm "" \
		rping -s -a "$sip" -p $((port + 1)) -C 10 -S 1000 -V -- \
		rping -c -a "$sip" -p $((port + 1)) -C 10 -S 1000 -V
	step "$lab: ib_write_bw -R 4096 B x200 (RDMA CM)" cm "^ *4096 +200 " \
		ib_write_bw -F -R -d "$d" -s 4096 -n 200 -p $((port + 1)) -- \
		ib_write_bw -F -R -d "$d" -s 4096 -n 200 -p $((port + 1)) "$sip"
done

# ---- nvme-rdma: target on A, host on B, over every link ----------------------------
nqn=nqn.2026-12.org.rxe2:two-kernels
cfg=/sys/kernel/config/nvmet
dmesg_mark=$(dmesg | wc -l)
target_up() {
	modprobe brd rd_nr=1 rd_size=65536 && modprobe nvmet_rdma || return 1
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
	mkdir "$cfg/subsystems/$nqn" &&
	echo 1 >"$cfg/subsystems/$nqn/attr_allow_any_host" &&
	mkdir "$cfg/subsystems/$nqn/namespaces/1" &&
	echo /dev/ram0 >"$cfg/subsystems/$nqn/namespaces/1/device_path" &&
	echo 1 >"$cfg/subsystems/$nqn/namespaces/1/enable" || return 1
	for l in $LINKS; do
		_p=$cfg/ports/$((l + 1))
		mkdir "$_p" && echo rdma >"$_p/addr_trtype" &&
		echo ipv4 >"$_p/addr_adrfam" && echo "$(ip_a "$l")" >"$_p/addr_traddr" &&
		echo 4420 >"$_p/addr_trsvcid" &&
		ln -s "$cfg/subsystems/$nqn" "$_p/subsystems/$nqn" || return 1
	done
}
target_down() {
	for l in $LINKS; do
		rm -f "$cfg/ports/$((l + 1))/subsystems/$nqn"
		rmdir "$cfg/ports/$((l + 1))"
	done
	echo 0 >"$cfg/subsystems/$nqn/namespaces/1/enable"
	rmdir "$cfg/subsystems/$nqn/namespaces/1" "$cfg/subsystems/$nqn" &&
	modprobe -r nvmet_rdma brd
}
ns_dev() {
	_i=0
	while [ $_i -lt 100 ]; do
		for _b in /sys/block/nvme*; do
			[ "$(cat "$_b/device/subsysnqn" 2>/dev/null)" = "$nqn" ] &&
				[ -b "/dev/${_b##*/}" ] && { echo "/dev/${_b##*/}"; return 0; }
		done
		sleep 0.1
		_i=$((_i + 1))
	done
	return 1
}
fio_verify() {	# DEV BS SIZE
	timeout 300 fio --name="bs$2" --filename="$1" --direct=1 --ioengine=libaio \
		--iodepth=8 --rw=randwrite --bs="$2" --size="$3" \
		--verify=crc32c --do_verify=1 --verify_fatal=1 \
		--randrepeat=0 --output-format=terse --terse-version=3 >"$work/fio.out" 2>&1 ||
		{ cat "$work/fio.out"; return 1; }
	# terse v3: field 6 read KiB, 47 write KiB
	awk -F';' '{ printf "wrote %s KiB, read back %s KiB\n", $48, $7 }' "$work/fio.out"
}
nvme_link() {	# LINK: connect, fio, disconnect; one TAP line each
	_a=$(ip_a "$1") _lab=$(label_of "$1")
	if ! _o=$(timeout 120 nvme connect -t rdma -a "$_a" -s 4420 -n "$nqn" -i 1 2>&1); then
		not_ok "$_lab: nvme connect -t rdma -a $_a -s 4420"
		echo "$_o" | sed 's/^/#   /'
		dmesg | tail -n 15 | sed 's/^/#   /'
		return 1
	fi
	ok "$_lab: nvme connect -t rdma -a $_a -s 4420"
	if _ns=$(ns_dev); then
		ok "$_lab: namespace $_ns ($(cat /sys/block/"${_ns##*/}"/size) sectors)"
		check "$_lab: fio randwrite bs=4k 2M, crc32c verify" fio_verify "$_ns" 4k 2M
		check "$_lab: fio randwrite bs=64k 8M, crc32c verify" fio_verify "$_ns" 64k 8M
	else
		not_ok "$_lab: namespace block device appears"
	fi
	check "$_lab: nvme disconnect" sh -c \
		"timeout 60 nvme disconnect -n '$nqn' | grep -q 'disconnected 1 controller'"
}
if [ "$role" = A ]; then
	if target_up >"$work/t.out" 2>&1; then
		ok "nvmet-rdma exports /dev/ram0 (brd 64 MiB) as $nqn on $(ip_a 0), $(ip_a 1), $(ip_a 2) port 4420"
		barrier nvme-target ok
	else
		not_ok "nvmet-rdma target on every link"
		sed 's/^/#   /' "$work/t.out"
		barrier nvme-target fail
	fi
	# the host's verdict, when it is done with all three links
	barrier nvme-done ok 1200
	check "nvme host on B: every link ($peer_word)" test "$peer_word" = clean
	check "nvmet configuration removed, nvmet_rdma brd unloaded" target_down
else
	barrier nvme-target ready
	f0=$failed
	if [ "$peer_word" = ok ]; then
		check "modprobe nvme_rdma" modprobe nvme_rdma
		for l in $LINKS; do nvme_link "$l"; done
		check "rmmod nvme_rdma" modprobe -r nvme_rdma
	else
		not_ok "nvme: no target on A"
	fi
	if [ $failed = "$f0" ]; then verdict=clean; else verdict=$((failed - f0))-failed; fi
	barrier nvme-done "$verdict" 1200
fi
# nvme-rdma and nvmet-rdma log lost commands, reconnects, bad
# invalidations and QP errors
nvme_log() {
	dmesg | tail -n +"$((dmesg_mark + 1))" >"$work/nvme.log"
	! grep -Ei 'bogus|error|fail|timeout|reconnect|reset' "$work/nvme.log"
}
check "kernel log clean during nvme-rdma" nvme_log

# ---- captures, decoded --------------------------------------------------------------
barrier traffic-done
cap_stop() {
	# tcpdump may trail the traffic under TCG: wait until the files stop growing
	_same=0 _i=0 _last=
	while [ $_same -lt 5 ] && [ $_i -lt 100 ]; do
		sleep 0.2
		_s=$(cat "$work"/link*.pcap | wc -c)
		if [ "$_s" = "$_last" ]; then _same=$((_same + 1)); else _same=0; fi
		_last=$_s _i=$((_i + 1))
	done
	for l in $LINKS; do kill -INT "${cap_pid[l]}"; done
	for l in $LINKS; do wait "${cap_pid[l]}"; done
	for l in $LINKS; do
		echo "link $l: $(grep -E 'captured|dropped by kernel' "$work/link$l.pcap.err" | tr '\n' ' ')"
	done
}
check "tcpdump stopped" cap_stop

# decode LINK: rxe2dump -r; every packet's ICRC good, both machines' packets
# there, the runs' operations there
decode() {
	_l=$1 _f=$work/link$1.pcap _t=$work/link$1.txt
	"$dump" -r "$_f" >"$_t" 2>&1 || { tail -n 20 "$_t"; return 1; }
	_sum=$(grep -E '^[0-9]+ RoCEv2 packets, [0-9]+ with a bad ICRC' "$_t")
	echo "$_sum"
	set -- $_sum
	[ "${1:-0}" -gt 0 ] && [ "${4:-x}" = 0 ] || return 1
	if grep -E 'ICRC BAD|ICRC not|truncated|reserved' "$_t" | head -n 5 | grep .; then
		return 1
	fi
	for _a in "$(ip_a "$_l")" "$(ip_b "$_l")"; do
		_c=$(grep -c "^[0-9.]* $_a:[0-9]* > " "$_t")
		echo "from $_a: $_c packets"
		[ "$_c" -gt 0 ] || return 1
	done
	# UD SENDs of perftest, not only the CM's MADs to QP 1
	grep 'UD_SEND_ONLY' "$_t" | grep -vq ' qp 0x000001 ' ||
		{ echo "no UD SEND to a QP other than 1"; return 1; }
	for _pat in "RC_RDMA_WRITE_" "RC_ACKNOWLEDGE" "UC_SEND_" \
		"RC_RDMA_READ_REQUEST" "RC_RDMA_READ_RESPONSE" "RC_SEND_ONLY_WITH_INVALIDATE" \
		"qp 0x000001 .* REQ\(0x0010\)" "REP\(0x0013\)" "RTU\(0x0014\)"; do
		grep -qE -- "$_pat" "$_t" || { echo "no $_pat in the capture"; return 1; }
	done
	echo "every operation's opcodes present"
}
for l in $LINKS; do
	check "capture of link $l decoded by rxe2dump: every ICRC good, both machines, every operation" decode "$l"
	sed -n '/RoCEv2 packets, /,$p' "$work/link$l.txt" | head -n 12 | sed 's/^/# /'
done

# ---- teardown ----------------------------------------------------------------------
teardown() {
	for l in $LINKS; do rdma link delete "$(dev_of "$l")" || return 1; done
	# shellcheck disable=SC2046 # three names
	wait_ibdev_gone $(for l in $LINKS; do dev_of "$l"; done) &&
	rmmod rdma_rxe2 && modprobe -r rdma_rxe
}
check "rdma links deleted, rdma_rxe2 and rdma_rxe unloaded" teardown
barrier end ok 120
rm -rf "$work"
finish
