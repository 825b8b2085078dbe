#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# covers: tcpdump on the rxe2 netdev sees loopback RoCEv2 traffic (own GID, two rxe2 devices, a device on lo): UDP 4791, opcodes, ICRC, source MAC and IP; traffic without a capture
#
# Loopback traffic is visible to tcpdump on the rxe2 device's own netdev.
# rxe2 hands a packet to one of its own GIDs, or to another rxe2 device's
# GID on this host, straight to the receiving QP (no lo, no IP stack); a
# tap on the sending netdev still gets a copy with an Ethernet header from
# that netdev's MAC and a valid ICRC.  Checked here: ibv_rc_pingpong to
# $RXE2_DEV's own GID under tcpdump -i <its netdev>, then between
# two rxe2 devices on a veth pair of their own (each side's packets on
# its own netdev, although they never cross the veth), then the same
# pingpong with no capture, then a device on lo under tcpdump -i lo.
# The capture is parsed with python3 (when present): UDP port 4791, BTH
# opcodes, ICRC recomputed, source MAC and IP addresses.  TAP output.

dev=${RXE2_DEV:-rxe2_0}
work=$(mktemp -d /tmp/capture.XXXXXX) || exit 1
port=18700
iters=5
. "$(dirname "$0")/lib.sh"
check_out=$work/check.out

netdev_of() { rdma link show "$1/1" | sed -n 's/.* netdev \([^ ]*\).*/\1/p'; }
mac_of() { cat "/sys/class/net/$1/address"; }

cap_pids= cap_files=
# capture NETDEV FILE: tcpdump on NETDEV, RoCEv2 only, until cap_stop
capture() {
	# -s 2048 holds a whole packet at path MTU 1024; with the default
	# 256 KiB snap length the 2 MB ring has room for only 8 packets and
	# the kernel drops when tcpdump falls behind under emulation
	tcpdump -i "$1" -nn -U --immediate-mode -s 2048 -B 16384 -Z root \
		-w "$2" udp port 4791 2>"$2.err" &
	cap_pids="$cap_pids $!"
	cap_files="$cap_files $2"
	_i=0
	while ! grep -q "listening on" "$2.err" 2>/dev/null; do
		_i=$((_i + 1))
		[ $_i -gt 100 ] && return 1
		sleep 0.1
	done
}

cap_stop() {
	# --immediate-mode: libpcap hands each packet over at once instead of
	# a ring block at a time (a block not full at SIGINT would be lost);
	# -U: tcpdump writes it at once.  Under emulation tcpdump can still
	# lag behind the traffic, and SIGINT ends it without draining what is
	# queued for it: wait until no file has grown for 3 s (30 s max).
	_n=0 _same=0 _size=-1
	while [ $_same -lt 15 ] && [ $_n -lt 150 ]; do
		sleep 0.2
		_s=$(cat $cap_files 2>/dev/null | wc -c)
		if [ "$_s" = "$_size" ]; then _same=$((_same + 1)); else _same=0; fi
		_size=$_s
		_n=$((_n + 1))
	done
	for _p in $cap_pids; do kill -INT "$_p" 2>/dev/null; done
	for _p in $cap_pids; do wait "$_p" 2>/dev/null; done
	for _f in $cap_files; do
		grep -E "captured|received|dropped" "$_f.err" 2>/dev/null |
			sed "s|^|# tcpdump ${_f##*/}: |"
	done
	cap_pids= cap_files=
}

# pingpong SDEV SGID CDEV CGID: ibv_rc_pingpong server on SDEV, client on
# CDEV, both exit 0 after $iters iterations
pingpong() {
	port=$((port + 1))
	if ! pair_run ibv_rc_pingpong "" "" tcp:$port 60 "$work/" \
		ibv_rc_pingpong -d "$1" -g "$2" -p $port -n $iters -s 3000 -c -- \
		ibv_rc_pingpong -d "$3" -g "$4" -p $port -n $iters -s 3000 -c \
		127.0.0.1; then
		echo "server did not listen"
		cat "$work/srv"
		return 1
	fi
	cat "$work/srv" "$work/cli"
	[ "$pair_crc" = 0 ] && [ "$pair_src" = 0 ] &&
		grep -q "$iters iters" "$work/srv" &&
		grep -q "$iters iters" "$work/cli"
}

# verify PCAP MAC SRC DST MIN: every RoCEv2 packet in PCAP comes from MAC
# and IPv4 SRC to DST with a valid ICRC, and the RC SEND FIRST/MIDDLE/LAST
# and ACK opcodes each appear at least MIN times (each side sends $iters
# messages of three packets, each ACKed; retransmissions only add).
verify() {
	/usr/bin/python3 - "$@" <<'EOF'
import struct, sys, zlib

path, mac, src, dst, need = sys.argv[1:6]
need = int(need)
data = open(path, 'rb').read()
magic = struct.unpack('<I', data[:4])[0]
if magic not in (0xa1b2c3d4, 0xa1b23c4d):
    sys.exit('not a little-endian pcap file')
if struct.unpack('<I', data[20:24])[0] != 1:
    sys.exit('link type is not Ethernet')
off, ops, bad = 24, {}, 0
while off + 16 <= len(data):
    incl = struct.unpack('<I', data[off + 8:off + 12])[0]
    pkt = data[off + 16:off + 16 + incl]
    off += 16 + incl
    if struct.unpack('>H', pkt[12:14])[0] != 0x0800:
        continue
    ip = pkt[14:]
    ihl = (ip[0] & 15) * 4
    tot = struct.unpack('>H', ip[2:4])[0]
    if ip[9] != 17 or struct.unpack('>H', ip[ihl + 2:ihl + 4])[0] != 4791:
        continue
    ip = ip[:tot]
    s = '.'.join(str(b) for b in ip[12:16])
    d = '.'.join(str(b) for b in ip[16:20])
    smac = ':'.join('%02x' % b for b in pkt[6:12])
    if smac != mac or s != src or d != dst:
        print('packet %s > %s from %s' % (s, d, smac))
        bad += 1
        continue
    # ICRC: 8 bytes of ones, IP with TOS/TTL/checksum masked, UDP with
    # its checksum masked, BTH with resv8a masked, the rest
    m = bytearray(ip)
    m[1] = 0xff
    m[8] = 0xff
    m[10:12] = b'\xff\xff'
    m[ihl + 6:ihl + 8] = b'\xff\xff'
    m[ihl + 8 + 4] = 0xff
    crc = zlib.crc32(b'\xff' * 8 + bytes(m[:-4])) & 0xffffffff
    if crc != struct.unpack('<I', ip[-4:])[0]:
        print('bad ICRC, opcode 0x%02x' % ip[ihl + 8])
        bad += 1
    op = ip[ihl + 8]
    ops[op] = ops.get(op, 0) + 1
print('opcodes: ' + ' '.join('0x%02x:%d' % kv for kv in sorted(ops.items())))
for op in (0x00, 0x01, 0x02, 0x11):
    if ops.get(op, 0) < need:
        print('too few packets of opcode 0x%02x' % op)
        bad += 1
sys.exit(1 if bad else 0)
EOF
}

cleanup() {
	cap_stop
	rdma link delete t2capa0 2>/dev/null
	rdma link delete t2capb0 2>/dev/null
	rdma link delete t2lo0 2>/dev/null
	ip link del t2capa 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

echo "1..11"
gidx=$(ipv4_gid_index "$dev")
ndev=$(netdev_of "$dev")
addr=$(ip -4 -o addr show dev "$ndev" 2>/dev/null |
	sed -n 's/.* inet \([0-9.]*\)\/.*/\1/p' | head -n 1)
if [ -n "$gidx" ] && [ -n "$ndev" ] && [ -n "$addr" ]; then
	ok "$dev on $ndev has an IPv4 RoCE v2 GID (index $gidx, $addr)"
else
	not_ok "$dev has a netdev with an IPv4 RoCE v2 GID"
	exit 1
fi
if ! command -v tcpdump >/dev/null; then
	for i in 2 3 4 5 6 7 8 9 10 11; do skip "capture $i" "no tcpdump"; done
	exit 0
fi
have_py=1
[ -x /usr/bin/python3 ] || have_py=0

# 1. to its own GID
capture "$ndev" "$work/own.pcap" || echo "# tcpdump did not start"
check "ibv_rc_pingpong to $dev's own GID under tcpdump -i $ndev" \
	pingpong "$dev" "$gidx" "$dev" "$gidx"
cap_stop
if [ $have_py = 1 ]; then
	check "$ndev saw the loopback SENDs and ACKs from its MAC, valid ICRCs" \
		verify "$work/own.pcap" "$(mac_of "$ndev")" "$addr" "$addr" \
		$((2 * iters))
else
	skip "loopback packets on $ndev" "no python3 to parse the capture"
fi

# 2. between two rxe2 devices on this host (a veth pair of our own, set
# up as test_rc_ops does: ib_core's address resolution between two local
# addresses needs accept_local)
ip link add t2capa type veth peer name t2capb &&
	ip addr add 198.18.78.1/24 dev t2capa &&
	ip addr add 198.18.78.2/24 dev t2capb &&
	ip link set t2capa up && ip link set t2capb up &&
	sysctl -qw net.ipv4.conf.t2capa.accept_local=1 \
		net.ipv4.conf.t2capb.accept_local=1 \
		net.ipv4.conf.t2capa.rp_filter=0 \
		net.ipv4.conf.t2capb.rp_filter=0 &&
	rdma link add t2capa0 type rxe2 netdev t2capa &&
	rdma link add t2capb0 type rxe2 netdev t2capb
i=0
while { ! ga=$(ipv4_gid_index t2capa0) || ! gb=$(ipv4_gid_index t2capb0); } &&
	[ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
if [ -n "$ga" ] && [ -n "$gb" ]; then
	ok "rxe2 devices t2capa0, t2capb0 on veth t2capa/t2capb"
	capture t2capa "$work/a.pcap" || echo "# tcpdump on t2capa did not start"
	capture t2capb "$work/b.pcap" || echo "# tcpdump on t2capb did not start"
	check "ibv_rc_pingpong t2capa0 <-> t2capb0 under tcpdump on both netdevs" \
		pingpong t2capa0 "$ga" t2capb0 "$gb"
	cap_stop
	if [ $have_py = 1 ]; then
		check "t2capa saw t2capa0's packets to t2capb0, valid ICRCs" \
			verify "$work/a.pcap" "$(mac_of t2capa)" 198.18.78.1 \
			198.18.78.2 $iters
		check "t2capb saw t2capb0's packets to t2capa0, valid ICRCs" \
			verify "$work/b.pcap" "$(mac_of t2capb)" 198.18.78.2 \
			198.18.78.1 $iters
	else
		skip "t2capa capture" "no python3"
		skip "t2capb capture" "no python3"
	fi
else
	not_ok "rxe2 devices t2capa0, t2capb0 on veth t2capa/t2capb"
	skip "two devices" "no links"
	skip "t2capa capture" "no links"
	skip "t2capb capture" "no links"
fi

# 3. nobody captures: the same traffic still works
check "ibv_rc_pingpong to $dev's own GID without a capture" \
	pingpong "$dev" "$gidx" "$dev" "$gidx"

# 4. a device on lo itself: libpcap drops lo's outgoing copies (they
# duplicate the incoming ones), so while a tap watches lo the loopback
# packets really pass through it and are seen coming in
if rdma link add t2lo0 type rxe2 netdev lo; then
	i=0
	while ! gl=$(ipv4_gid_index t2lo0) && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	capture lo "$work/lo.pcap" || echo "# tcpdump on lo did not start"
	check "ibv_rc_pingpong on t2lo0 to ::ffff:127.0.0.1 under tcpdump -i lo" \
		pingpong t2lo0 "$gl" t2lo0 "$gl"
	cap_stop
	if [ $have_py = 1 ]; then
		check "lo saw t2lo0's loopback SENDs and ACKs, valid ICRCs" \
			verify "$work/lo.pcap" 00:00:00:00:00:00 127.0.0.1 \
			127.0.0.1 $((2 * iters))
	else
		skip "loopback packets on lo" "no python3 to parse the capture"
	fi
	check "ibv_rc_pingpong on t2lo0 without a capture" \
		pingpong t2lo0 "$gl" t2lo0 "$gl"
	rdma link delete t2lo0
else
	not_ok "rdma link add t2lo0 type rxe2 netdev lo"
	skip "lo capture" "no link"
	skip "lo capture parsed" "no link"
fi
[ $failed = 0 ]
