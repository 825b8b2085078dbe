#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# covers: tools/rxe2dump on rxe2 <-> rdma_rxe traffic: live capture by device name, -r decoding with good ICRCs, agreement with tshark, a flipped byte, -q/-o/-c, PSN gaps and NAKs under loss
#
# tools/rxe2dump, the libpcap capture tool, on real traffic between rxe2
# and the in-tree rdma_rxe (test_interop's topology: rdma_rxe on dmv0 in
# init_net, rxe2 on dmv1 in netns dmns, a veth between them):
#
# - live capture by RDMA device name from init_net (`-d dmrxe2`: it must
#   find dmv1 inside dmns by itself) into a file (-w) while SENDs,
#   WRITEs, READs, atomics, UD datagrams and an RDMA CM connection run;
# - `-r` of that file: every packet decoded, every ICRC good on both
#   implementations' packets, each operation's opcodes and headers there
#   (RETH, AETH, AtomicETH, AtomicAckETH, DETH, CM MADs on QP 1), no PSN
#   gap and no NAK in the per-conversation summary of a clean link;
# - tshark decodes the same file: opcode, destination QP, PSN, pad
#   count, AckReq, RETH, AETH and DETH fields agree packet by packet;
# - one payload byte flipped in a copy: exactly that packet's ICRC bad;
# - -q, -o and -c select what they say;
# - a second capture while rxe2 loses one packet in 50 (tx_drop):
#   the summary reports PSN gaps, packets sent again and PSN sequence
#   NAKs.
# TAP output; the plan is printed last.

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
. "$here/lib.sh"
export LC_ALL=C
xwork=$(mktemp -d /tmp/rxe2dump.XXXXXX) || exit 1
dump=$repo/tools/rxe2dump
check_out=$xwork/check.out check_tail=30

NS=dmns
A_RXE=10.79.3.2 A_RXE2=10.79.3.1

cleanup() {
	roce_capture_stop >/dev/null
	[ -d "$rxe2_cfs/dmrxe2" ] && fault_tx_drop dmrxe2 0 2>/dev/null
	rdma link delete dmrxe 2>/dev/null
	ip link del dmv0 2>/dev/null
	ip netns del $NS 2>/dev/null
	wait_ibdev_gone dmrxe2
	rm -rf "$xwork"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

if [ ! -x "$dump" ]; then
	echo "1..0 # SKIP $dump not built (make)"
	exit 0
fi

setup() {
	ip netns add $NS &&
	ip link add dmv0 type veth peer name dmv1 netns $NS &&
	ip addr add $A_RXE/24 dev dmv0 && ip link set dmv0 up &&
	ip -n $NS link set lo up &&
	ip -n $NS addr add $A_RXE2/24 dev dmv1 &&
	ip -n $NS link set dmv1 up &&
	modprobe rdma_rxe &&
	rdma link add dmrxe type rxe netdev dmv0 &&
	ip netns exec $NS rdma link add dmrxe2 type rxe2 netdev dmv1
}
if setup >"$xwork/out" 2>&1; then
	ok "rdma_rxe dmrxe on dmv0 (init_net) <-veth-> rxe2 dmrxe2 on dmv1 (netns $NS)"
else
	not_ok "rdma_rxe on dmv0 <-veth-> rxe2 on dmv1 in $NS"
	sed 's/^/#   /' "$xwork/out"
	echo "1..$n"
	exit 1
fi
g_rxe=$(gid_index dmrxe "$(gid_of_ipv4 $A_RXE)")
g_rxe2=$(gid_index dmrxe2 "$(gid_of_ipv4 $A_RXE2)")
if [ -z "$g_rxe" ] || [ -z "$g_rxe2" ]; then
	not_ok "IPv4 RoCE v2 GIDs (dmrxe '$g_rxe', dmrxe2 '$g_rxe2')"
	echo "1..$n"
	exit 1
fi

# start_capture FILE: rxe2dump -d dmrxe2 -w FILE from init_net, in the
# background, until stop_capture (lib.sh's roce_capture_stop: it waits
# until the file stops growing, then SIGINT, and shows the tool's counts)
start_capture() {
	"$dump" -d dmrxe2 -w "$1" 2>"$1.err" &
	roce_capture_pid=$! roce_capture_file=$1
	_i=0
	while ! grep -q "listening on" "$1.err" 2>/dev/null; do
		_i=$((_i + 1))
		if [ $_i -gt 100 ] || ! kill -0 $roce_capture_pid 2>/dev/null; then
			roce_capture_pid=
			return 1
		fi
		sleep 0.1
	done
}

stop_capture() {
	roce_capture_stop
	grep -q "RoCEv2 packets written" "$1.err"
}

cap=$xwork/clean.pcap
if start_capture "$cap"; then
	ok "rxe2dump -d dmrxe2 -w: finds dmv1 in netns $NS and listens"
	sed 's/^/# /' "$cap.err"
else
	not_ok "rxe2dump -d dmrxe2 -w: finds dmv1 in netns $NS and listens"
	sed 's/^/#   /' "$cap.err"
	echo "1..$n"
	exit 1
fi

# rxe2 serves in dmns, rdma_rxe is the client, then the other way round
port=19300
port=$((port + 1))
xpair "ibv_rc_pingpong -s 3000 -c" $NS "" tcp:$port "3 iters" \
	ibv_rc_pingpong -d dmrxe2 -g $g_rxe2 -p $port -n 3 -s 3000 -c -- \
	ibv_rc_pingpong -d dmrxe -g $g_rxe -p $port -n 3 -s 3000 -c $A_RXE2
for op in write read; do
	port=$((port + 1))
	xpair "ib_${op}_bw -s 2048 -n 5" $NS "" tcp:$port "" \
		ib_${op}_bw -F -d dmrxe2 -x $g_rxe2 -p $port -s 2048 -n 5 -- \
		ib_${op}_bw -F -d dmrxe -x $g_rxe -p $port -s 2048 -n 5 $A_RXE2
done
port=$((port + 1))
xpair "ib_atomic_bw -n 5" $NS "" tcp:$port "" \
	ib_atomic_bw -F -d dmrxe2 -x $g_rxe2 -p $port -n 5 -- \
	ib_atomic_bw -F -d dmrxe -x $g_rxe -p $port -n 5 $A_RXE2
port=$((port + 1))
xpair "ibv_ud_pingpong -s 512" "" $NS tcp:$port "3 iters" \
	ibv_ud_pingpong -d dmrxe -g $g_rxe -p $port -n 3 -s 512 -- \
	ibv_ud_pingpong -d dmrxe2 -g $g_rxe2 -p $port -n 3 -s 512 $A_RXE
port=$((port + 1))
xpair "rping -C 3 -V (RDMA CM)" $NS "" cm:$port "" \
	rping -s -a $A_RXE2 -p $port -C 3 -S 100 -V -- \
	rping -c -a $A_RXE2 -p $port -C 3 -S 100 -V
if stop_capture "$cap"; then
	ok "rxe2dump -w: the capture is written"
else
	not_ok "rxe2dump -w: the capture is written"
fi

"$dump" -r "$cap" >"$xwork/clean.txt" 2>&1
rc=$?
sed -n '/^$/,$p' "$xwork/clean.txt" | sed 's/^/# /'
awk '/^[0-9]+\.[0-9]+ / { n++ } END { exit !(n > 0) }' "$xwork/clean.txt" &&
	[ $rc = 0 ]
check "rxe2dump -r decodes the capture (rc $rc)" test $? = 0

npk=$(grep -c '^[0-9]*\.[0-9]* ' "$xwork/clean.txt")
ntshark=-
if command -v tshark >/dev/null 2>&1; then
	ntshark=$(tshark -r "$cap" -Y infiniband 2>/dev/null | wc -l)
	check "every packet decoded: $npk lines, tshark's infiniband count $ntshark" \
		test "$npk" = "$ntshark"
else
	skip "every packet decoded ($npk)" "no tshark"
fi
check "no ICRC bad, truncated or reserved opcode" sh -c \
	"! grep -E 'ICRC BAD|ICRC not|truncated|reserved' '$xwork/clean.txt'"
for a in $A_RXE $A_RXE2; do
	check "packets from $a, all with a good ICRC" \
		grep -q "^[0-9.]* $a:[0-9]* > " "$xwork/clean.txt"
done
for pat in "RC_SEND_FIRST .* payload 1024" "RC_SEND_LAST " \
	"RC_RDMA_WRITE_FIRST .* RETH va 0x[0-9a-f]* rkey 0x[0-9a-f]* len 2048" \
	"RC_RDMA_READ_REQUEST .* RETH .* len 2048" \
	"RC_RDMA_READ_RESPONSE_FIRST .* AETH ACK" \
	"RC_RDMA_READ_RESPONSE_LAST .* AETH ACK" \
	"RC_ACKNOWLEDGE .* AETH ACK credits" \
	"RC_FETCH_ADD .* AtomicETH va" \
	"RC_ATOMIC_ACKNOWLEDGE .* AtomicAckETH orig" \
	"UD_SEND_ONLY .* DETH qkey 0x[0-9a-f]* src_qp .* payload 512" \
	"qp 0x000001 .* MAD v1 CM(0x07) v2 Send(0x03) .* REQ(0x0010)" \
	"MAD .* REP(0x0013)" "MAD .* RTU(0x0014)" "MAD .* DREQ(0x0015)"; do
	check "decoded: $pat" grep -q -- "$pat" "$xwork/clean.txt"
done
# the summary: columns 10 gaps, 11 sent again, 14 NAKs
sed -n '/^conversation/,$p' "$xwork/clean.txt" |
	awk 'NR > 1 && NF >= 15 { rows++; if ($10 || $14) bad++ }
	     END { exit !(rows >= 4 && !bad) }'
check "summary of a clean link: conversations, no PSN gap, no NAK" test $? = 0

# tshark and rxe2dump -T, field by field
if command -v tshark >/dev/null 2>&1 && command -v python3 >/dev/null 2>&1; then
	"$dump" -T -r "$cap" >"$xwork/terse.txt" 2>&1
	tshark -r "$cap" -Y infiniband -T fields -E separator=/t \
		-e frame.number -e infiniband.bth.opcode \
		-e infiniband.bth.destqp -e infiniband.bth.psn \
		-e infiniband.bth.padcnt -e infiniband.bth.a \
		-e infiniband.reth.va -e infiniband.reth.r_key \
		-e infiniband.reth.dmalen -e infiniband.aeth.syndrome \
		-e infiniband.aeth.msn -e infiniband.deth.q_key \
		-e infiniband.deth.srcqp >"$xwork/tshark.txt" 2>/dev/null
	python3 - "$xwork/terse.txt" "$xwork/tshark.txt" >"$xwork/cmp.out" 2>&1 <<'EOF'
import sys

def num(s):
    s = s.strip()
    if s in ('', '-'):
        return None
    if s in ('True', 'true'):
        return 1
    if s in ('False', 'false'):
        return 0
    return int(s.split(',')[0], 0)

ours = {}
for line in open(sys.argv[1]):
    f = line.split()
    # frame src dst opcode dqpn psn pad ackreq va rkey len syn msn qkey srcqp paylen icrc
    ours[int(f[0])] = [num(x) for x in [f[3], f[4], f[5], f[6], f[7], f[8],
                                        f[9], f[10], f[11], f[12], f[13], f[14]]]
theirs = {}
for line in open(sys.argv[2]):
    f = line.rstrip('\n').split('\t')
    theirs[int(f[0])] = [num(x) for x in f[1:13]]
names = ['opcode', 'destqp', 'psn', 'padcnt', 'ackreq', 'reth.va',
         'reth.rkey', 'reth.len', 'aeth.syndrome', 'aeth.msn', 'deth.qkey',
         'deth.srcqp']
bad = 0
if set(ours) != set(theirs):
    print('frames only in rxe2dump:', sorted(set(ours) - set(theirs))[:10])
    print('frames only in tshark:', sorted(set(theirs) - set(ours))[:10])
    bad += 1
for fr in sorted(set(ours) & set(theirs)):
    for i, nm in enumerate(names):
        if ours[fr][i] != theirs[fr][i]:
            bad += 1
            if bad < 10:
                print('frame %d %s: rxe2dump %s tshark %s' %
                      (fr, nm, ours[fr][i], theirs[fr][i]))
print('%d frames compared, %d differences' % (len(set(ours) & set(theirs)), bad))
sys.exit(1 if bad or not ours else 0)
EOF
	rc=$?
	sed 's/^/# /' "$xwork/cmp.out" | tail -n 1
	if [ $rc = 0 ]; then
		ok "tshark agrees: opcode, QP, PSN, pad, AckReq, RETH, AETH, DETH of every packet"
	else
		not_ok "tshark agrees with rxe2dump -T"
		sed 's/^/#   /' "$xwork/cmp.out"
	fi
else
	skip "tshark agrees with rxe2dump -T" "no tshark or python3"
fi

# one payload byte flipped: the 20th packet's last byte before the ICRC
python3 - "$cap" "$xwork/bad.pcap" <<'EOF'
import struct, sys
d = bytearray(open(sys.argv[1], 'rb').read())
off, k = 24, 0
while off < len(d):
    incl = struct.unpack_from('<I', d, off + 8)[0]
    k += 1
    if k == 20:
        d[off + 16 + incl - 5] ^= 0x5a
        break
    off += 16 + incl
open(sys.argv[2], 'wb').write(d)
EOF
"$dump" -r "$xwork/bad.pcap" >"$xwork/bad.txt" 2>&1
nbad=$(grep -c 'ICRC BAD' "$xwork/bad.txt")
frame20=$(sed -n '20p' "$xwork/bad.txt")
check "one byte flipped: exactly one ICRC bad ($nbad), the 20th packet" \
	sh -c "[ '$nbad' = 1 ] && echo '$frame20' | grep -q 'ICRC BAD' &&
	       grep -q ' 1 with a bad ICRC' '$xwork/bad.txt'"

# selections
qpn=$(sed -n 's/.* RC_RDMA_WRITE_FIRST qp \(0x[0-9a-f]*\) .*/\1/p' "$xwork/clean.txt" | head -n 1)
"$dump" -S -r "$cap" -q "$qpn" >"$xwork/q.txt" 2>&1
check "-q $qpn: only packets to that QP" sh -c \
	"[ -s '$xwork/q.txt' ] && ! grep -v ' qp $qpn ' '$xwork/q.txt'"
"$dump" -S -r "$cap" -o RC_ACKNOWLEDGE >"$xwork/o.txt" 2>&1
check "-o RC_ACKNOWLEDGE: only ACKs" sh -c \
	"[ -s '$xwork/o.txt' ] && ! grep -v ' RC_ACKNOWLEDGE ' '$xwork/o.txt'"
"$dump" -S -r "$cap" -c 3 >"$xwork/c.txt" 2>&1
check "-c 3: three packets" test "$(wc -l <"$xwork/c.txt")" = 3
"$dump" -S -r "$cap" "src host $A_RXE" >"$xwork/f.txt" 2>&1
check "BPF 'src host $A_RXE': only rdma_rxe's packets" sh -c \
	"[ -s '$xwork/f.txt' ] && ! grep -v '^[0-9.]* $A_RXE:' '$xwork/f.txt'"

# loss: rxe2 is the WRITE requester and loses one packet in 50
cap=$xwork/lossy.pcap
if start_capture "$cap"; then
	fault_tx_drop dmrxe2 50
	port=$((port + 1))
	xpair "ib_write_bw -n 100 -s 8192, dmrxe2 loses 1 in 50" "" $NS tcp:$port "" \
		ib_write_bw -F -d dmrxe -x $g_rxe -p $port -s 8192 -n 100 -- \
		ib_write_bw -F -d dmrxe2 -x $g_rxe2 -p $port -s 8192 -n 100 $A_RXE
	fault_tx_drop dmrxe2 0
	stop_capture "$cap"
	"$dump" -r "$cap" >"$xwork/lossy.txt" 2>&1
	sed -n '/^$/,$p' "$xwork/lossy.txt" | sed 's/^/# /'
	sed -n '/^conversation/,$p' "$xwork/lossy.txt" |
		awk 'NR > 1 && NF >= 15 { g += $10; a += $11 }
		     /NAK PSN sequence error/ { s += $NF }
		     END { exit !(g > 0 && a > 0 && s > 0) }'
	check "under loss the summary shows PSN gaps, packets sent again, sequence NAKs" \
		test $? = 0
else
	not_ok "rxe2dump -d dmrxe2 -w (second capture)"
fi

echo "1..$n"
[ $failed = 0 ]
