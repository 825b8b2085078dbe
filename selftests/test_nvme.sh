#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# covers: nvme-rdma host to an nvmet-rdma target over the device: connect, fio with crc32c verify (fast registration, SEND_WITH_INV), polled I/O, packet loss, disconnect, rmmod
#
# NVMe over RDMA on the device under test, both ends in this guest: the
# kernel's nvmet-rdma target exports a RAM disk (brd; where the kernel
# has no brd, as the sanitizer kernel, a 64 MiB file) on the device's
# IPv4 address, port 4420, and the kernel's nvme-rdma host connects to it
# over the same device (loopback through the device).  fio writes with
# verification through the host's block device, then everything is torn
# down and the modules unloaded.
#
# What it exercises on rxe2 (kernel consumers only, no user space verbs):
# the host registers every READ buffer and every WRITE too large for
# inline data with fast registration (ib_alloc_mr, ib_map_mr_sg,
# IB_WR_REG_MR) and sends the rkey in the command; the target moves data
# with rdma_rw (RDMA READ/WRITE from SGE lists under its PD's local DMA
# lkey) and answers with SEND_WITH_INV naming that rkey; the host checks
# that its receive completion says IB_WC_WITH_INVALIDATE with that very
# rkey, and otherwise posts LOCAL_INV.  A missed invalidation makes the
# next REG_MR of the MR fail, so a clean verified fio run proves the
# whole cycle.  The target uses an SRQ, CQs polled from softirq context,
# and ib_drain_qp at disconnect.
# One I/O queue and one poll queue (its CQ is IB_POLL_DIRECT, driven by
# polled fio I/O) of 32 entries keep the host within max_mr of the
# selftests' module parameters.  Two more fio runs lose one packet in 50
# of everything the device sends (its tx_drop in configfs): the data must
# verify and neither end may see an error or reconnect.  TAP output.

. "$(dirname "$0")/lib.sh"

dev=${RXE2_DEV:-rxe2_0}
nqn=nqn.2026-11.org.rxe2:selftest
port=4420
[ -e /sys/class/infiniband/"$dev"/rxe2_abi ] && tap_prefix="(rxe2: FRMR, SEND_WITH_INV) "

bail() {
	echo "Bail out! $*"
	exit 1
}

cleanup() {
	[ -d "$rxe2_cfs/$dev" ] && fault_tx_drop "$dev" 0 2>/dev/null
	nvme disconnect -n "$nqn" >/dev/null 2>&1
	nvmet_down "$nqn"
	modprobe -r nvme_rdma nvmet_rdma >/dev/null 2>&1
	nvmet_disk_down
}

fio_verify() {
	# $1 block size, $2 bytes; writes, then reads back and checks
	fio --name="bs$1" --filename="$ns" --direct=1 --ioengine=libaio \
		--iodepth=8 --rw=randwrite --bs="$1" --size="$2" \
		--verify=crc32c --do_verify=1 --verify_fatal=1 \
		--randrepeat=0 --output-format=terse --terse-version=3
}

# polled I/O (RWF_HIPRI) goes to the poll queue, whose CQ is IB_POLL_DIRECT:
# the block layer's poll calls ib_process_cq_direct() on the rxe2 CQ
fio_polled() {
	[ "$(cat /sys/block/"${ns##*/}"/queue/io_poll)" = 1 ] || {
		echo "io_poll is off on ${ns##*/}"
		return 1
	}
	fio --name=polled --filename="$ns" --direct=1 --ioengine=pvsync2 \
		--hipri=1 --rw=randwrite --bs=16k --size=4M \
		--verify=crc32c --do_verify=1 --verify_fatal=1 \
		--randrepeat=0 --output-format=terse --terse-version=3
}

for t in nvme fio modprobe; do
	command -v $t >/dev/null 2>&1 || {
		echo "1..0 # SKIP $t not installed (make deps)"
		exit 0
	}
done

echo "1..20"
ip=$(ibdev_ipv4 "$dev") || bail "$dev has no IPv4 RoCE v2 GID"
ok "$dev has an IPv4 RoCE v2 GID ($ip)"
dmesg_before=$(dmesg | wc -l)

# a 64 MiB RAM disk, or a file where the kernel has no brd (lib.sh)
nvmet_disk_up || bail "no brd, no backing file"
check_sub "modprobe nvmet_rdma nvme_rdma" modprobe -a nvmet_rdma nvme_rdma

if nvmet_up "$nqn" "$ip" $port; then
	ok "nvmet exports $nvmet_disk as $nqn on rdma $ip:$port"
else
	not_ok "nvmet exports $nvmet_disk on rdma $ip:$port"
	cleanup
	exit 1
fi

if out=$(nvme connect -t rdma -a "$ip" -s $port -n "$nqn" -Q 32 -i 1 -P 1 2>&1); then
	ok "nvme connect -t rdma -a $ip -s $port"
else
	not_ok "nvme connect -t rdma -a $ip -s $port"
	echo "$out" | sed 's/^/#   /'
	dmesg | tail -n +"$dmesg_before" | tail -n 20 | sed 's/^/#   /'
	cleanup
	exit 1
fi
if ns=$(nvme_ns_dev "$nqn"); then
	ok "namespace block device $ns"
else
	not_ok "namespace block device appears"
	cleanup
	exit 1
fi
check_sub "the controller's transport is rdma" sh -c \
	"grep -lx '$nqn' /sys/class/nvme/nvme*/subsysnqn | \
	 sed 's/subsysnqn/transport/' | xargs cat | grep -qx rdma"

# the host's fast-registration MRs: one pool of queue-size MRs per queue
# (admin, I/O, poll), all in restrack
mrs=$(rdma resource show "$dev" 2>/dev/null | sed -n 's/.* mr \([0-9]*\).*/\1/p')
if [ "${mrs:-0}" -ge 96 ]; then
	ok "$dev holds the host's fast-registration MRs (mr $mrs >= 3 x 32)"
else
	not_ok "$dev holds the host's fast-registration MRs (mr ${mrs:-?}, want >= 96)"
fi

# Capture one RC SEND_LAST/ONLY_WITH_INVALIDATE (BTH opcodes 0x16, 0x17:
# the first byte after the UDP header) on the device's netdev, where
# rxe2 shows its loopback traffic: the target answers READs with remote
# invalidation of the host's rkey.
if command -v tcpdump >/dev/null 2>&1; then
	cap=$(mktemp /tmp/nvme-cap.XXXXXX)
	ndev=$(rdma link show "$dev/1" | sed -n 's/.* netdev \([^ ]*\).*/\1/p')
	timeout 120 tcpdump -i "$ndev" -n -p -c 1 \
		'udp dst port 4791 and (udp[8] = 0x16 or udp[8] = 0x17)' \
		>"$cap" 2>&1 &
	cap_pid=$!
	sleep 1
fi
# 4 KiB: inline writes (SEND with data) and FRMR reads; 64 KiB and
# 512 KiB: FRMR for both directions, many pages per MR
check_sub "fio randwrite bs=4k 4M, crc32c verify" fio_verify 4k 4M
if [ -n "${cap_pid:-}" ]; then
	wait "$cap_pid"
	if grep -q '1 packet captured' "$cap"; then
		ok "SEND_WITH_INV on the wire (target to host)"
	else
		not_ok "SEND_WITH_INV on the wire (target to host)"
		sed 's/^/#   /' "$cap" | tail -n 5
	fi
	rm -f "$cap"
else
	ok "SEND_WITH_INV on the wire # SKIP no tcpdump"
fi
check_sub "fio randwrite bs=64k 16M, crc32c verify" fio_verify 64k 16M
check_sub "fio randwrite bs=512k 16M, crc32c verify" fio_verify 512k 16M
check_sub "fio polled (pvsync2 hipri, IB_POLL_DIRECT CQ) bs=16k 4M, verify" \
	fio_polled

# one packet in 50 that rxe2_0 sends is lost (both directions: host and
# target share the device): go-back-N passes over the host's REG_MRs,
# READ responses are asked again, and nothing may reach the error path
drops_file=/sys/class/infiniband/$dev/ports/1/hw_counters/fault_tx_drops
if [ -r "/sys/class/infiniband/$dev/rxe2_abi" ] && [ -d "$rxe2_cfs" ]; then
	drops0=$(cat "$drops_file")
	fault_tx_drop "$dev" 50
	check_sub "fio randwrite bs=64k 4M, verify, one packet in 50 lost" \
		fio_verify 64k 4M
	check_sub "fio randwrite bs=4k 1M, verify, one packet in 50 lost" \
		fio_verify 4k 1M
	fault_tx_drop "$dev" 0
	drops=$(($(cat "$drops_file") - drops0))
	if [ "$drops" -gt 0 ]; then
		ok "the fault injection lost $drops packets"
	else
		not_ok "the fault injection lost packets (fault_tx_drops $drops)"
	fi
else
	ok "fio under loss # SKIP $dev is not rxe2 or no configfs"
	ok "fio under loss # SKIP $dev is not rxe2 or no configfs"
	ok "fault_tx_drops # SKIP $dev is not rxe2 or no configfs"
fi

check_sub "nvme disconnect" sh -c \
	"nvme disconnect -n '$nqn' | grep -q 'disconnected 1 controller'"
check_sub "nvmet configuration removed" nvmet_down "$nqn"
check_sub "rmmod nvme_rdma nvmet_rdma" modprobe -r nvme_rdma nvmet_rdma
nvmet_disk_down

# nvme-rdma logs a remote invalidation of the wrong rkey as "Bogus remote
# invalidation"; a failed MR registration, a QP error or a lost command
# shows as an error, a reconnect or a timeout.
log=$(dmesg | tail -n +"$((dmesg_before + 1))")
bad=$(echo "$log" | grep -Ei 'bogus|error|fail|timeout|reconnect|reset')
if [ -z "$bad" ]; then
	ok "kernel log clean during the run"
else
	not_ok "kernel log clean during the run"
	echo "$bad" | head -n 20 | sed 's/^/#   /'
fi
echo "# $(rdma statistic show link "$dev"/1 2>/dev/null)"

# Both ULPs take their CQs from ib_core's per-device CQ pool
# (ib_cq_pool_get), which keeps them until the device goes away.  Re-create
# the link so that the CQ count is back at the baseline for the tests that
# follow (and selftests/run's final resource check stays exact).
relink() {
	nd=$(rdma link show "$dev"/1 | sed -n 's/.* netdev \([^ ]*\).*/\1/p')
	[ -n "$nd" ] && rdma link delete "$dev" &&
		rdma link add "$dev" type rxe2 netdev "$nd" || return 1
	_i=0
	while [ $_i -lt 100 ]; do
		[ "$(ibdev_ipv4 "$dev")" = "$ip" ] && return 0
		sleep 0.1
		_i=$((_i + 1))
	done
	return 1
}
if [ -n "$tap_prefix" ]; then	# an rxe2 link
	check_sub "$dev re-created (frees ib_core's CQ pool), GID $ip back" relink
else
	ok "re-create $dev # SKIP not an rxe2 link"
fi
[ $failed = 0 ]
