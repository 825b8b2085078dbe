// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2: fault injection for CI.  The device's sysfs file fault_tx_drop
 * holds N: one packet in N that the device transmits is lost, as on a
 * bad wire (0, the default, turns it off; 1 loses everything).  It
 * covers everything the device sends, to the network or over loopback
 * (packets, handed-over requests and ACKs alike), so RC retransmission,
 * READ re-requests and the recovery of kernel consumers (nvme-rdma, RDMA
 * CM) can be tested without netem and where netem cannot reach: two
 * devices in one namespace never touch a netdev.  Each loss is counted
 * in the port counter fault_tx_drops.  Off, it costs one READ_ONCE() per
 * packet.
 *
 * Which packets are lost is a function of their number since N was
 * written, mixed by a hash: a run that sends the same packets loses the
 * same ones, yet the losses have no period.  A strict "every Nth" would
 * lock step with go-back-N: a retransmission of k packets with k a
 * multiple of N loses the same packet every time, until the retry count
 * runs out.
 */
#include "rxe2_dp.h"

/* the murmur3 finaliser: every input bit moves every output bit */
static u32 rxe2_fault_mix(u32 x)
{
	x ^= x >> 16;
	x *= 0x85ebca6b;
	x ^= x >> 13;
	x *= 0xc2b2ae35;
	x ^= x >> 16;
	return x;
}

/* one packet in @every, pseudo-randomly: false unless this one is lost */
bool rxe2_fault_tx_drop_slow(struct rxe2_dev *rdev, u32 every)
{
	u32 seq = atomic_inc_return(&rdev->fault_tx_seq);

	if (rxe2_fault_mix(seq) % every)
		return false;
	rxe2_dp_count(rdev, RXE2_DPC_FAULT_TX_DROPS);
	return true;
}

static ssize_t fault_tx_drop_show(struct device *device,
				  struct device_attribute *attr, char *buf)
{
	struct rxe2_dev *rdev = to_rdev(rdma_device_to_ibdev(device));

	return sysfs_emit(buf, "%u\n", READ_ONCE(rdev->fault_tx_drop));
}

static ssize_t fault_tx_drop_store(struct device *device,
				   struct device_attribute *attr,
				   const char *buf, size_t count)
{
	struct rxe2_dev *rdev = to_rdev(rdma_device_to_ibdev(device));
	u32 every;
	int ret;

	ret = kstrtou32(buf, 0, &every);
	if (ret)
		return ret;
	atomic_set(&rdev->fault_tx_seq, 0);
	WRITE_ONCE(rdev->fault_tx_drop, every);
	return count;
}

DEVICE_ATTR_RW(fault_tx_drop);
