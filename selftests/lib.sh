# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Shell helpers shared by the shell tests and tools/bench; sourced, POSIX sh.

# ---- TAP output (the shell tests) ------------------------------------------
# n counts a test's TAP lines and failed its "not ok" ones (from 0 when
# this file is sourced); the test prints its plan itself, "1..N" first or
# "1..$n" last, and ends with [ $failed = 0 ] or its own verdict.  A test
# may set tap_prefix (after sourcing this file): it goes before every ok
# and not ok description.
n=0 failed=0 tap_prefix=''
ok() { n=$((n + 1)); echo "ok $n - $tap_prefix$*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $tap_prefix$*"; }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }

# check DESCRIPTION COMMAND...: one TAP line, ok when COMMAND succeeds.
# COMMAND runs in this shell (what it sets stays set) with its output in
# the file the test names in check_out; a failure shows that output as
# comments, only its last check_tail lines when the test sets check_tail
# (both after sourcing this file).
check_out='' check_tail=''
check() {
	_check_what=$1
	shift
	if "$@" >"$check_out" 2>&1; then
		ok "$_check_what"
	else
		not_ok "$_check_what"
		if [ -n "$check_tail" ]; then
			sed 's/^/#   /' "$check_out" | tail -n "$check_tail"
		else
			sed 's/^/#   /' "$check_out"
		fi
	fi
}

# check_sub DESCRIPTION COMMAND...: check with COMMAND in a subshell
# (nothing it sets stays) and its output in a variable, no file; a
# failure shows its last 20 lines (a failure without output, one empty
# comment line).
check_sub() {
	_check_what=$1
	shift
	if _check_o=$("$@" 2>&1); then
		ok "$_check_what"
	else
		not_ok "$_check_what"
		echo "$_check_o" | tail -n 20 | sed 's/^/#   /'
	fi
}

# ipv4_gid_index DEV: the index of DEV's RoCE v2 GID that holds an IPv4
# address (::ffff:a.b.c.d); fails when there is none.
ipv4_gid_index() {
	for _f in /sys/class/infiniband/"$1"/ports/1/gids/*; do
		_i=${_f##*/}
		case $(cat "$_f" 2>/dev/null) in
		0000:0000:0000:0000:0000:ffff:*) ;;
		*) continue ;;
		esac
		[ "$(cat /sys/class/infiniband/"$1"/ports/1/gid_attrs/types/"$_i" 2>/dev/null)" = "RoCE v2" ] ||
			continue
		echo "$_i"
		return 0
	done
	return 1
}

# scaled SECONDS: a program's time limit, SECONDS at the default 180 s per
# test and longer where selftests/run gives tests more (RXE2_TEST_TIMEOUT:
# make check-debug's sanitizer kernel runs about five times slower).
scaled() {
	echo $(($1 * ${RXE2_TEST_TIMEOUT:-180} / 180))
}

# wait_listen PORT: until a TCP port listens, at most 10 seconds.
wait_listen() {
	_n=0
	while [ $_n -lt 100 ]; do
		ss -ltn 2>/dev/null | grep -q ":$1 " && return 0
		sleep 0.1
		_n=$((_n + 1))
	done
	return 1
}

# ibdev_ipv4 DEV: the IPv4 address of DEV's RoCE v2 GID (::ffff:a.b.c.d).
ibdev_ipv4() {
	for _f in /sys/class/infiniband/"$1"/ports/1/gids/*; do
		_g=$(cat "$_f" 2>/dev/null)
		case $_g in
		0000:0000:0000:0000:0000:ffff:*) ;;
		*) continue ;;
		esac
		_h=$(echo "${_g#0000:0000:0000:0000:0000:ffff:}" | tr -d :)
		printf '%d.%d.%d.%d\n' "0x$(echo "$_h" | cut -c1-2)" \
			"0x$(echo "$_h" | cut -c3-4)" "0x$(echo "$_h" | cut -c5-6)" \
			"0x$(echo "$_h" | cut -c7-8)"
		return 0
	done
	return 1
}

# wait_ibdev_gone DEV...: until none of the RDMA devices exists, at most
# 10 seconds (an rxe2 device goes with its netdev after an RCU grace
# period).
wait_ibdev_gone() {
	_n=0
	while [ $_n -lt 100 ]; do
		_left=
		for _d in "$@"; do
			[ -e /sys/class/infiniband/"$_d" ] && _left=1
		done
		[ -z "$_left" ] && return 0
		sleep 0.1
		_n=$((_n + 1))
	done
	return 1
}

# nsexec NS: the command prefix that runs a command in network namespace
# NS ("ip netns exec NS"), or nothing for NS "" (the current namespace).
nsexec() {
	[ -n "$1" ] && echo "ip netns exec $1"
}

# wait_listen_ns NS PORT: wait_listen inside network namespace NS ("" is
# the current one).
wait_listen_ns() {
	_n=0
	while [ $_n -lt 100 ]; do
		# shellcheck disable=SC2046 # empty or three words
		$(nsexec "$1") ss -ltn 2>/dev/null | grep -q ":$2 " && return 0
		sleep 0.1
		_n=$((_n + 1))
	done
	return 1
}

# wait_cm_listen PORT: until an RDMA CM ID listens on PORT (any device,
# any namespace: restrack lists them all), at most 10 seconds.  RDMA CM
# listeners have no socket that ss could show.
wait_cm_listen() {
	_n=0
	while [ $_n -lt 100 ]; do
		rdma resource show cm_id 2>/dev/null |
			grep -q "state LISTEN .*src-addr [^ ]*:$1 " && return 0
		sleep 0.1
		_n=$((_n + 1))
	done
	return 1
}

# gid_of_ipv4 A.B.C.D: the GID of an IPv4 address as sysfs prints it.
gid_of_ipv4() {
	# shellcheck disable=SC2046 # four octets, split on purpose
	# shellcheck disable=SC2183 # the four octets come from the split
	printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x\n' \
		$(echo "$1" | tr . ' ')
}

# gid_index DEV GID: the index of DEV's RoCE v2 GID GID (sysfs form, see
# gid_of_ipv4), waiting at most 10 seconds for ib_core to add it.
gid_index() {
	_n=0
	while [ $_n -lt 100 ]; do
		for _f in $(grep -lx "$2" /sys/class/infiniband/"$1"/ports/1/gids/* 2>/dev/null); do
			_i=${_f##*/}
			[ "$(cat /sys/class/infiniband/"$1"/ports/1/gid_attrs/types/"$_i" 2>/dev/null)" = "RoCE v2" ] ||
				continue
			echo "$_i"
			return 0
		done
		sleep 0.1
		_n=$((_n + 1))
	done
	return 1
}

# roce_capture_start NS IFACE FILE: tcpdump of RoCEv2 (UDP port 4791) on
# IFACE in namespace NS ("" is the current one) into the pcap FILE (the
# first 128 bytes of each packet: IP, UDP, BTH and extension headers), in
# the background; returns once tcpdump listens (at most 10 seconds).
# Sets roce_capture_pid for roce_capture_stop.
roce_capture_start() {
	# shellcheck disable=SC2046 # empty or three words
	$(nsexec "$1") tcpdump -i "$2" -nn -U -Z root -s 128 -w "$3" \
		udp port 4791 2>"$3.err" &
	roce_capture_pid=$! roce_capture_file=$3
	_n=0
	while [ $_n -lt 100 ]; do
		grep -q "listening on" "$3.err" 2>/dev/null && return 0
		kill -0 "$roce_capture_pid" 2>/dev/null || break
		sleep 0.1
		_n=$((_n + 1))
	done
	cat "$3.err" >&2
	return 1
}

# roce_capture_stop: stops the capture and waits until the file is
# written; tcpdump's counts (captured, dropped) go to stdout as comments.
roce_capture_stop() {
	[ -n "${roce_capture_pid:-}" ] || return 0
	# Under emulation tcpdump can lag far behind the traffic, and SIGINT
	# ends it without draining the packets still queued for it: wait
	# until the file has not grown for a second (at most 20 seconds).
	_n=0 _same=0 _size=-1
	while [ $_same -lt 5 ] && [ $_n -lt 100 ]; do
		sleep 0.2
		_s=$(wc -c <"$roce_capture_file" 2>/dev/null || echo 0)
		if [ "$_s" = "$_size" ]; then _same=$((_same + 1)); else _same=0; fi
		_size=$_s
		_n=$((_n + 1))
	done
	kill -INT "$roce_capture_pid" 2>/dev/null
	wait "$roce_capture_pid" 2>/dev/null
	roce_capture_pid=
	grep -E "captured|received|dropped" "$roce_capture_file.err" 2>/dev/null |
		sed 's/^/# tcpdump: /'
}

# roce_decode PCAP: one line per RoCEv2 packet of a capture:
#   TIME SRC SPORT DST DPORT OPCODE NAME DESTQP PSN UDPLEN
# TIME as tcpdump -tt prints it, OPCODE the BTH opcode (two hex digits),
# NAME its IBTA name, DESTQP and PSN in hex.  The IP, UDP and BTH headers
# are read from the packet bytes (tcpdump -x), not from tcpdump's decoding.
roce_decode() {
	tcpdump -r "$1" -tt -nn -x 2>/dev/null | awk '
	function hexval(s,    i, v) {
		v = 0
		s = tolower(s)
		for (i = 1; i <= length(s); i++)
			v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
		return v
	}
	function emit(    off, bth, op) {
		if (hex == "")
			return
		if (fam == "IP")
			off = hexval(substr(hex, 2, 1)) * 8	# IHL words, hex digits
		else
			off = 80				# no extension headers
		bth = off + 16
		op = substr(hex, bth + 1, 2)
		printf "%s %s %d %s %d %s %s %s %s %d\n", ts, src,
			hexval(substr(hex, off + 1, 4)), dst,
			hexval(substr(hex, off + 5, 4)), op,
			(op in name) ? name[op] : "UNKNOWN",
			substr(hex, bth + 11, 6), substr(hex, bth + 19, 6),
			hexval(substr(hex, off + 9, 4))
		hex = ""
	}
	BEGIN {
		split("SEND_FIRST SEND_MIDDLE SEND_LAST SEND_LAST_IMM SEND_ONLY " \
		      "SEND_ONLY_IMM WRITE_FIRST WRITE_MIDDLE WRITE_LAST " \
		      "WRITE_LAST_IMM WRITE_ONLY WRITE_ONLY_IMM READ_REQUEST " \
		      "READ_RESPONSE_FIRST READ_RESPONSE_MIDDLE READ_RESPONSE_LAST " \
		      "READ_RESPONSE_ONLY ACKNOWLEDGE ATOMIC_ACKNOWLEDGE " \
		      "COMPARE_SWAP FETCH_ADD - SEND_LAST_INV SEND_ONLY_INV", n, " ")
		for (i = 1; i <= 24; i++)
			if (n[i] != "-")
				name[sprintf("%02x", i - 1)] = "RC_" n[i]
		name["20"] = "UC_SEND_FIRST"; name["21"] = "UC_SEND_MIDDLE"
		name["22"] = "UC_SEND_LAST"; name["23"] = "UC_SEND_LAST_IMM"
		name["24"] = "UC_SEND_ONLY"; name["25"] = "UC_SEND_ONLY_IMM"
		name["26"] = "UC_WRITE_FIRST"; name["27"] = "UC_WRITE_MIDDLE"
		name["28"] = "UC_WRITE_LAST"; name["29"] = "UC_WRITE_LAST_IMM"
		name["2a"] = "UC_WRITE_ONLY"; name["2b"] = "UC_WRITE_ONLY_IMM"
		name["64"] = "UD_SEND_ONLY"; name["65"] = "UD_SEND_ONLY_IMM"
		name["81"] = "CNP"
	}
	/^[0-9]+\.[0-9]+ IP6? / {
		emit()
		ts = $1; fam = $2; src = $3; dst = $5
		sub(/:$/, "", dst)
		sub(/\.[0-9]+$/, "", src)
		sub(/\.[0-9]+$/, "", dst)
		next
	}
	/^[ \t]+0x[0-9a-f]+:/ {
		for (i = 2; i <= NF; i++)
			hex = hex $i
		next
	}
	END { emit() }'
}

# ---- ping-pong pairs: a server, and its client once it listens -----------

# pair_run NAME SRV_NS CLI_NS WAIT SECS OUT SRV_CMD... -- CLI_CMD...: the
# server in network namespace SRV_NS ("" is the current one) in the
# background, its output in the file OUTsrv (OUT: a path's first part,
# $work/ or $work/run. say); once it listens (WAIT: tcp:PORT for a TCP
# listener, cm:PORT for an RDMA CM listener; at most 10 seconds) the
# client in CLI_NS, its output in OUTcli; each bounded by timeout SECS.  pair_src and pair_crc: their exit statuses.  A server that does
# not listen is killed and the client not run: returns 1.
pair_run() {
	_pr_name=$1 _pr_sns=$2 _pr_cns=$3 _pr_wait=$4 _pr_secs=$5 _pr_out=$6
	shift 6
	(
		# the server's words: those before --
		_pr_end=
		for _pr_a do
			shift
			[ "$_pr_a" = -- ] && _pr_end=1
			[ -n "$_pr_end" ] || set -- "$@" "$_pr_a"
		done
		# shellcheck disable=SC2046 # empty or three words
		exec timeout -k 2 "$_pr_secs" $(nsexec "$_pr_sns") "$@"
	) >"${_pr_out}srv" 2>&1 &
	_pr_spid=$!
	_pr_up=0
	case $_pr_wait in
	tcp:*) wait_listen_ns "$_pr_sns" "${_pr_wait#tcp:}" && _pr_up=1 ;;
	cm:*) wait_cm_listen "${_pr_wait#cm:}" && _pr_up=1 ;;
	esac
	if [ $_pr_up = 0 ]; then
		kill "$_pr_spid" 2>/dev/null
		wait "$_pr_spid" 2>/dev/null
		return 1
	fi
	while [ "$1" != -- ]; do shift; done
	shift
	# An RDMA CM listener shows in restrack a moment before it takes
	# requests: a client turned away then (REJECT, "unreachable") while
	# the server still waits gets two more tries, said as a comment.
	_pr_try=1
	while :; do
		# shellcheck disable=SC2046 # empty or three words
		timeout -k 2 "$_pr_secs" $(nsexec "$_pr_cns") "$@" >"${_pr_out}cli" 2>&1
		pair_crc=$?
		if [ $pair_crc = 0 ] || [ $_pr_try -ge 3 ] || [ "${_pr_wait#cm:}" = "$_pr_wait" ] ||
			! kill -0 "$_pr_spid" 2>/dev/null ||
			! grep -qi "reject\|unreachable\|refused" "${_pr_out}cli"; then
			break
		fi
		echo "# $_pr_name: client try $_pr_try turned away, again: $(grep -im1 "reject\|unreachable\|refused" "${_pr_out}cli")"
		_pr_try=$((_pr_try + 1))
		sleep 1
	done
	wait "$_pr_spid"
	pair_src=$?
}

# pair_side LABEL RC FILE EXPECT [NOTE [RC_NOTE [LINES]]]: one TAP line
# for one side of a run: ok "LABEL exits 0NOTE" when RC is 0 and FILE
# matches the extended regex EXPECT ("" = any); else not_ok "LABEL (rc
# RCRC_NOTE)" and FILE as comments, its last LINES lines (all without
# LINES), and a failure.
pair_side() {
	if [ "$2" = 0 ] && { [ -z "$4" ] || grep -Eq "$4" "$3"; }; then
		ok "$1 exits 0${5:-}"
		return 0
	fi
	not_ok "$1 (rc $2${6:-})"
	if [ -n "${7:-}" ]; then
		sed 's/^/#   /' "$3" | tail -n "$7"
	else
		sed 's/^/#   /' "$3"
	fi
	return 1
}

# pair_sides LABEL OUT EXPECT [NOTE [RC_NOTE [LINES]]]: pair_side for the
# server ("LABEL: server", OUTsrv) and the client of the last pair_run;
# fails when one of them does.
pair_sides() {
	_ps_ret=0
	pair_side "$1: server" "$pair_src" "${2}srv" "$3" "${4:-}" "${5:-}" \
		"${6:-}" || _ps_ret=1
	pair_side "$1: client" "$pair_crc" "${2}cli" "$3" "${4:-}" "${5:-}" \
		"${6:-}" || _ps_ret=1
	return $_ps_ret
}

# ---- two-sided runs with a wire check (test_interop.sh, test_netns.sh) -----
# The calling test sets xwork (a scratch directory); the TAP lines are
# ok and not_ok's (above).
# shellcheck disable=SC2154 # xwork

# xpair NAME SRV_NS CLI_NS WAIT EXPECT SRV_CMD... -- CLI_CMD...: pair_run
# (above) with its output in $xwork/run.srv and run.cli, each side
# bounded by scaled 60.  One TAP line per side: it passed when it exited
# 0 and its output matches the extended regex EXPECT ("" = any).
# xpair_t0/xpair_t1: the time span of the run (date +%s.%N).
xpair() {
	_name=$1 _sns=$2 _cns=$3 _wait=$4 _expect=$5
	shift 5
	xpair_t0=$(date +%s.%N)
	if ! pair_run "$_name" "$_sns" "$_cns" "$_wait" "$(scaled 60)" \
		"$xwork/run." "$@"; then
		not_ok "$_name: server listens ($_wait)"
		sed 's/^/#   /' "$xwork/run.srv" | tail -n 20
		not_ok "$_name: client (not run)"
		xpair_t1=$(date +%s.%N)
		return 1
	fi
	xpair_t1=$(date +%s.%N)
	_secs=$(echo "$xpair_t0 $xpair_t1" | awk '{ printf "%.1f", $2 - $1 }')
	pair_sides "$_name" "$xwork/run." "$_expect" " (${_secs}s)" \
		", ${_secs}s" 40
}

# xwire_expect NAME FAMILY ADDR_A ADDR_B OPCODES...: records that the
# last xpair run (its time span) must show on the wire, in both
# directions between ADDR_A and ADDR_B (IP FAMILY 4 or 6), RoCEv2 packets
# whose BTH opcodes include one of each OPCODES group ("06|0a": either).
xwire_expect() {
	_n=$1
	shift
	echo "$_n|$xpair_t0|$xpair_t1|$*" >>"$xwork/wire"
}

# xwire_check PCAP: one TAP line per xwire_expect: the packets of the
# run's span in the decoded capture exist, go to UDP port 4791, are of
# the expected IP family and flow both ways, every opcode is a known
# IBTA opcode, UD packets (here only CM MADs) go to QP 1, and the
# required opcodes are there.
xwire_check() {
	roce_decode "$1" >"$xwork/wire.dec"
	while IFS='|' read -r _n _t0 _t1 _spec; do
		# shellcheck disable=SC2086 # words on purpose
		set -- $_spec
		_why=$(awk -v t0="$_t0" -v t1="$_t1" -v fam="$1" -v a="$2" \
			-v b="$3" -v req="$(shift 3; echo "$*")" '
		$1 + 0 < t0 + 0 || $1 + 0 > t1 + 0 { next }
		{
			pkts++
			seen[$6] = 1
			if ($5 != 4791)
				bad = bad " dport " $5 " (" $2 "." $3 " > " \
				      $4 ", opcode " $6 ", at " $1 ")"
			if ((fam == 6) != ($2 ~ /:/)) bad = bad " IPv" (fam == 6 ? 4 : 6)
			if ($7 == "UNKNOWN") bad = bad " opcode 0x" $6
			if ($7 ~ /^UD_/ && $8 != "000001") bad = bad " UD to QP 0x" $8
			if ($2 == a && $4 == b) ab++
			if ($2 == b && $4 == a) ba++
		}
		END {
			ops = ""
			for (i = 0; i < 256; i++)
				if (sprintf("%02x", i) in seen)
					ops = ops " " sprintf("%02x", i)
			if (!pkts) { print "no RoCEv2 packets"; exit 1 }
			n = split(req, g, " ")
			for (i = 1; i <= n; i++) {
				m = split(g[i], alt, "|"); hit = 0
				for (j = 1; j <= m; j++) if (alt[j] in seen) hit = 1
				if (!hit) bad = bad " no opcode " g[i]
			}
			if (!ab || !ba) bad = bad " one-way (" ab "/" ba ")"
			printf "%d packets, opcodes%s%s\n", pkts, ops,
				bad == "" ? "" : ";" bad
			if (bad != "") exit 1
		}' "$xwork/wire.dec")
		if [ $? = 0 ]; then
			ok "wire: $_n: $_why"
		else
			not_ok "wire: $_n: $_why"
			echo "#   span $_t0 .. $_t1; capture: $(wc -l <"$xwork/wire.dec") packets, $(head -n 1 "$xwork/wire.dec" | cut -d' ' -f1) .. $(tail -n 1 "$xwork/wire.dec" | cut -d' ' -f1)"
		fi
	done <"$xwork/wire"
	: >"$xwork/wire"
}

# netns_veth A B IPV4_A IPV4_B [IFINDEX_A]: network namespaces A and B
# joined by a veth (A's end ${A}v, B's end ${B}v) with the addresses
# (/24), lo up in both; no RDMA device (tools/bench-loss puts siw on it).
# Each namespace numbers its own netdevs, so both ends are ifindex 2
# unless IFINDEX_A says otherwise for A's.
# shellcheck disable=SC2086 # ${5:+index $5} is nothing or two words
netns_veth() {
	ip netns add "$1" && ip netns add "$2" &&
	ip -n "$1" link add "${1}v" ${5:+index $5} type veth peer name "${2}v" netns "$2" &&
	ip -n "$1" link set lo up && ip -n "$2" link set lo up &&
	ip -n "$1" addr add "$3/24" dev "${1}v" &&
	ip -n "$2" addr add "$4/24" dev "${2}v" &&
	ip -n "$1" link set "${1}v" up && ip -n "$2" link set "${2}v" up
}

# netns_pair A B IPV4_A IPV4_B: netns_veth and an rxe2 link on each end,
# created from inside its namespace: ${A}rxe2 and ${B}rxe2.  Sets GA and
# GB to their IPv4 RoCEv2 GID indexes.  netns_pair_del A B DEVS... removes
# it all again.
netns_pair() {
	netns_veth "$@" &&
	ip netns exec "$1" rdma link add "${1}rxe2" type rxe2 netdev "${1}v" &&
	ip netns exec "$2" rdma link add "${2}rxe2" type rxe2 netdev "${2}v" &&
	GA=$(gid_index "${1}rxe2" "$(gid_of_ipv4 "$3")") &&
	GB=$(gid_index "${2}rxe2" "$(gid_of_ipv4 "$4")") &&
	wait_port_active "${1}rxe2" "${2}rxe2"
}

# wait_port_active DEV...: port 1 of each ACTIVE.  A veth's carrier comes
# up through linkwatch, which may be a second after the addresses and so
# the GIDs: perftest started in between said "Port number 1 state is
# Down" and quit (test_teardown.sh on 6.12, once).
wait_port_active() {
	for _d in "$@"; do
		_n=0
		until grep -qs ACTIVE "/sys/class/infiniband/$_d/ports/1/state"; do
			_n=$((_n + 1))
			[ $_n -gt 100 ] && return 1
			sleep 0.1
		done
	done
}

netns_pair_del() {
	ip netns del "$1" 2>/dev/null
	ip netns del "$2" 2>/dev/null
	wait_ibdev_gone "${1}rxe2" "${2}rxe2"
}

# harness_links: the harness's rxe2 links as "ibdev:netdev" words, to
# give them back with harness_restore after a test took the module out.
harness_links() {
	for _d in /sys/class/infiniband/*; do
		[ -r "$_d/rxe2_abi" ] && printf '%s:%s ' "${_d##*/}" "$(cat "$_d/parent")"
	done
}

# harness_restore "LINKS": the build tree's module with the harness's
# parameters, and those links with their IPv4 GIDs.
harness_restore() {
	# shellcheck disable=SC2086 # the parameters are words
	insmod "$RXE2_KO" $RXE2_KO_PARAMS || return 1
	for _s in $1; do
		rdma link add "${_s%%:*}" type rxe2 netdev "${_s#*:}" || return 1
		_n=0
		until ipv4_gid_index "${_s%%:*}" >/dev/null; do
			_n=$((_n + 1))
			[ $_n -le 100 ] || { echo "no IPv4 GID on ${_s%%:*}"; return 1; }
			sleep 0.1
		done
	done
}

# ---- NVMe over RDMA in one guest (test_nvme.sh, tools/bench-storage) ------
# The kernel's nvmet-rdma target exports one namespace through configfs
# on one RDMA port, the kernel's nvme-rdma host connects to it with
# nvme-cli over the same device (loopback through the device).
nvmet_cfg=/sys/kernel/config/nvmet

# nvmet_disk_up: the namespace's backing, a 64 MiB RAM disk: brd's
# /dev/ram0 (rd_size in KiB); where the kernel has no brd (the sanitizer
# kernel) a 64 MiB file, which nvmet's file backend exports with buffered
# I/O (tmpfs has no O_DIRECT).  Sets nvmet_disk (the path) and
# nvmet_file (the file, or empty).  nvmet_disk_down frees either.
nvmet_disk_up() {
	nvmet_disk=/dev/ram0 nvmet_file=
	modprobe brd rd_nr=1 rd_size=65536 2>/dev/null && return 0
	nvmet_file=$(mktemp /tmp/nvme-backing.XXXXXX) || return 1
	nvmet_disk=$nvmet_file
	truncate -s 64M "$nvmet_file"
}
nvmet_disk_down() {
	if [ -n "$nvmet_file" ]; then
		rm -f "$nvmet_file"
	else
		modprobe -r brd 2>/dev/null
	fi
	nvmet_file=
}

# nvmet_up NQN IP PORT: subsystem NQN (any host may connect) with
# namespace 1 on $nvmet_disk, and port 1 of the target on rdma, IPv4
# IP:PORT (the device whose netdev holds IP).  nvmet needs configfs,
# which creates its mount point when it loads.
nvmet_up() {
	_s=$nvmet_cfg/subsystems/$1
	mountpoint -q /sys/kernel/config ||
		mount -t configfs none /sys/kernel/config || return 1
	mkdir "$_s" &&
	echo 1 >"$_s/attr_allow_any_host" &&
	mkdir "$_s/namespaces/1" &&
	echo "$nvmet_disk" >"$_s/namespaces/1/device_path" &&
	{ [ -z "$nvmet_file" ] ||
	  echo 1 >"$_s/namespaces/1/buffered_io"; } &&
	echo 1 >"$_s/namespaces/1/enable" &&
	mkdir "$nvmet_cfg/ports/1" &&
	echo rdma >"$nvmet_cfg/ports/1/addr_trtype" &&
	echo ipv4 >"$nvmet_cfg/ports/1/addr_adrfam" &&
	echo "$2" >"$nvmet_cfg/ports/1/addr_traddr" &&
	echo "$3" >"$nvmet_cfg/ports/1/addr_trsvcid" &&
	ln -s "$_s" "$nvmet_cfg/ports/1/subsystems/$1"
}

# nvmet_down NQN: what nvmet_up made, or any part of it, removed again;
# fails when some of it is left
nvmet_down() {
	_s=$nvmet_cfg/subsystems/$1
	rm -f "$nvmet_cfg/ports/1/subsystems/$1" 2>/dev/null
	rmdir "$nvmet_cfg/ports/1" 2>/dev/null
	[ -d "$_s" ] && echo 0 >"$_s/namespaces/1/enable" 2>/dev/null
	rmdir "$_s/namespaces/1" 2>/dev/null
	rmdir "$_s" 2>/dev/null
	[ ! -d "$_s" ] && [ ! -d "$nvmet_cfg/ports/1" ]
}

# nvme_ns_dev NQN: the host's namespace block device of subsystem NQN,
# once it shows up (at most 10 seconds): its sysfs device is the
# controller, or with native multipath the subsystem, and both name the
# NQN
nvme_ns_dev() {
	_i=0
	while [ $_i -lt 100 ]; do
		for _b in /sys/block/nvme*; do
			[ "$(cat "$_b/device/subsysnqn" 2>/dev/null)" = "$1" ] &&
				[ -b /dev/"${_b##*/}" ] && echo /dev/"${_b##*/}" &&
				return 0
		done
		sleep 0.1
		_i=$((_i + 1))
	done
	return 1
}

# ---- fault injection (rxe/rxe2_fault.c, docs/knobs.md) ----------------------
# configfs: /sys/kernel/config/rxe2/IBDEV/ holds tx_drop and rules/NAME/,
# a rule's fields one file each.  These helpers make a rule from the one
# line selftests/dp.c's dp_fault_write() takes, name it by a number one
# above the last (so that the names' order is the order the rules went
# live, which is the order they are asked in), and remove IBDEV's
# directory once no rule is left and tx_drop is 0: a directory pins the
# module, and rmmod must find none.
rxe2_cfs=/sys/kernel/config/rxe2

# fault_tidy IBDEV: IBDEV's directory gone if nothing in it is on (a
# device that is gone has nothing on)
fault_tidy() {
	_fd=$rxe2_cfs/$1
	[ -d "$_fd" ] || return 0
	[ -z "$(ls "$_fd/rules")" ] || return 0
	_ft=$(cat "$_fd/tx_drop" 2>/dev/null) || _ft=0
	[ "$_ft" = 0 ] || return 0
	rmdir "$_fd"
}

# fault_rule IBDEV ACTION [FIELD=VALUE...]: one rule, live last
# (FIELD: qpn, opcode, every, rate, count, ms); a rule refused leaves
# nothing behind
fault_rule() {
	_fd=$rxe2_cfs/$1
	shift
	[ -d "$_fd" ] || mkdir "$_fd" || return 1
	# shellcheck disable=SC2012 # numbers only, the names made here
	_fn=$(ls "$_fd/rules" | sed 's/^0*//' | sort -n | tail -n 1)
	_fr=$_fd/rules/$(printf %04d $((${_fn:-0} + 1)))
	mkdir "$_fr" || { fault_tidy "${_fd##*/}"; return 1; }
	_fok=1
	echo "$1" >"$_fr/action" || _fok=
	shift
	for _fkv in "$@"; do
		[ -n "$_fok" ] || break
		case ${_fkv%%=*} in
		qpn|opcode|every|rate|count|ms)
			echo "${_fkv#*=}" >"$_fr/${_fkv%%=*}" || _fok= ;;
		*) echo "fault_rule: no field ${_fkv%%=*}" >&2; _fok= ;;
		esac
	done
	[ -n "$_fok" ] && echo 1 >"$_fr/enable" && return 0
	rmdir "$_fr"
	fault_tidy "${_fd##*/}"
	return 1
}

# fault_clear IBDEV: every rule of IBDEV removed (what delay and reorder
# hold leaves now)
fault_clear() {
	_fd=$rxe2_cfs/$1
	[ -d "$_fd" ] || return 0
	for _fr in "$_fd"/rules/*; do
		[ -d "$_fr" ] && { rmdir "$_fr" || return 1; }
	done
	fault_tidy "$1"
}

# fault_tx_drop IBDEV N: IBDEV loses one packet in N it sends (0: off)
fault_tx_drop() {
	_fd=$rxe2_cfs/$1
	[ -d "$_fd" ] || mkdir "$_fd" || return 1
	echo "$2" >"$_fd/tx_drop" || { fault_tidy "$1"; return 1; }
	[ "$2" != 0 ] || fault_tidy "$1"
}

# fault_off_all: no fault injection left on any device, no directory left
# (selftests/run after each test, which may have been killed mid-way)
fault_off_all() {
	for _fd in "$rxe2_cfs"/*; do
		[ -d "$_fd" ] || continue
		for _fr in "$_fd"/rules/*; do
			[ -d "$_fr" ] && rmdir "$_fr"
		done
		echo 0 >"$_fd/tx_drop" 2>/dev/null
		rmdir "$_fd"
	done
}
