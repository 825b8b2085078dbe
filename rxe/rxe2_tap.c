// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2: the taps' copies of loopback packets.
 *
 * A loopback packet never passes through the netdev, so rxe2 shows
 * the netdev's taps (tcpdump -i, packet sockets) a copy of it as if it
 * had left through it: a link-layer header addressed to the receiving
 * device's netdev in front of the IP header, and a valid ICRC.  Packets
 * handed over as calls (rxe2_tx_begin(), rxe2_tx_loop_ack()) too: the
 * copy is the packet they stand for.
 *
 * The sender only copies the bytes into the device's ring, before the
 * receiver can see the packet: the IP packet, or a call's transport
 * headers and payload with its address vector.  The rest, an skb for
 * the copy, the ICRC and dev_queue_xmit_nit() with the taps' filters,
 * copies and timestamps, is done by a work item (rxe2_tap_show()), on
 * another CPU when one is free: a jiffy after the first copy, or at once
 * when RXE2_TAP_KICK bytes wait.  Not a clone of the packet: a clone held
 * until then kept the page its data sits in from being reused, and
 * every skb then took a freshly zeroed page.  Everything a device sends
 * passes through its one ring, so its taps see the packets in the order
 * they were sent, timestamped when shown (a jiffy or so late).  A sender
 * that finds the ring full shows what it holds itself: the taps slow the
 * traffic down rather than lose any of it.  The ring is allocated at the
 * first copy and freed with the device.  It is vmalloc()ed: a write past
 * its end hits the guard page and faults at once.  (A kmalloc()ed ring
 * sat against whatever was allocated next: a pad record's kind byte once
 * went one past the end and zeroed the first byte of someone else's
 * page, a block nvmet was writing among them.)
 */
#include <linux/etherdevice.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <linux/vmalloc.h>

#include "rxe2_dp.h"
#include "rxe2_sge.h"
#include "rxe2_wire.h"

#define RXE2_TAP_BYTES		(256 * 1024)	/* a power of two */
#define RXE2_TAP_KICK		(RXE2_TAP_BYTES / 4)

enum rxe2_tap_kind {
	RXE2_TAP_PAD,		/* nothing up to the end of the ring */
	RXE2_TAP_PKT,		/* data: the IP packet */
	RXE2_TAP_CALL,		/* data: what a call hands over */
};

/*
 * A copy in the ring: this header, then len bytes of data.  Records are
 * multiples of 8 bytes, so as few as 8 may be left before the ring's end
 * when one does not fit: the pad record written there has size and kind
 * alone, which must lie in its first 8 bytes (rxe2_tap_get()).
 */
struct rxe2_tap_rec {
	u32 size;		/* bytes to the next record */
	u8 kind;		/* enum rxe2_tap_kind */
	u8 dmac[ETH_ALEN] __aligned(2);	/* the receiving netdev: ether_addr_copy() */
	u16 len;
	u16 sport;		/* a call's UDP source port */
	struct rxe2_av av;	/* a call's; of a packet only av.ipv6 */
	u8 data[] __aligned(8);
};

/* the skb of a copied IP packet: as rxe2_tx_xmit() had it */
static struct sk_buff *rxe2_tap_pkt_skb(struct net_device *ndev,
					const struct rxe2_tap_rec *rec)
{
	unsigned int room = rxe2_tx_headroom(ndev);
	struct sk_buff *skb;

	skb = netdev_alloc_skb(ndev, room + rec->len);
	if (!skb)
		return NULL;
	skb_reserve(skb, room);
	skb_put_data(skb, rec->data, rec->len);
	skb_reset_network_header(skb);
	skb_set_transport_header(skb, rec->av.ipv6 ? sizeof(struct ipv6hdr) :
				      ip_hdrlen(skb));
	skb->protocol = htons(rec->av.ipv6 ? ETH_P_IPV6 : ETH_P_IP);
	skb->ip_summed = CHECKSUM_NONE;
	return skb;
}

/* a copy to the taps of ndev: an skb, its ICRC, dev_queue_xmit_nit() */
static void rxe2_tap_show(struct net_device *ndev,
			  const struct rxe2_tap_rec *rec)
{
	struct sk_buff *skb;

	if (rec->kind == RXE2_TAP_PKT)
		skb = rxe2_tap_pkt_skb(ndev, rec);
	else
		skb = rxe2_tx_call_skb(ndev, &rec->av, rec->sport, rec->data,
				       rec->len);
	if (!skb)
		return;
	rxe2_tx_icrc(skb, rec->av.ipv6, skb->len - skb_transport_offset(skb) -
		     sizeof(struct udphdr));
	skb->dev = ndev;
	if (dev_hard_header(skb, ndev, ntohs(skb->protocol), rec->dmac, NULL,
			    skb->len) < 0) {
		kfree_skb(skb);
		return;
	}
	skb_reset_mac_header(skb);
	/*
	 * Packet sockets take their receive queue lock without disabling
	 * bottom halves, as on the transmit path: so do we.
	 */
	local_bh_disable();
	dev_queue_xmit_nit(skb, ndev);
	local_bh_enable();
	consume_skb(skb);
}

/* show every copy in the ring, in order; caller holds tap->show_lock */
static void rxe2_tap_show_all(struct rxe2_dev *rdev)
{
	struct rxe2_tap *tap = &rdev->tap;
	u32 tail = tap->tail;

	/* acquire: the records up to head are written */
	while (tail != smp_load_acquire(&tap->head)) {
		const struct rxe2_tap_rec *rec =
			(void *)tap->ring + tail % RXE2_TAP_BYTES;

		if (rec->kind != RXE2_TAP_PAD)
			rxe2_tap_show(rdev->ndev, rec);
		tail += rec->size;
		/* release: done with the record, a sender may reuse it */
		smp_store_release(&tap->tail, tail);
		cond_resched();
	}
}

static void rxe2_tap_work(struct work_struct *work)
{
	struct rxe2_dev *rdev = container_of(to_delayed_work(work),
					     struct rxe2_dev, tap.work);
	struct rxe2_tap *tap = &rdev->tap;

	mutex_lock(&tap->show_lock);
	do {
		WRITE_ONCE(tap->busy, true);
		rxe2_tap_show_all(rdev);
		WRITE_ONCE(tap->busy, false);
		smp_mb();	/* not busy, then look: pairs with _put() */
	} while (tap->tail != smp_load_acquire(&tap->head));
	mutex_unlock(&tap->show_lock);
}

/*
 * Whether a record of len bytes of data can go into the ring, made at the
 * first copy: false without memory, or for one larger than an eighth of
 * the ring (more than a packet at path MTU 4096, which cannot be), which
 * could wait for room forever.
 */
static bool rxe2_tap_ring(struct rxe2_tap *tap, u32 len)
{
	u8 *ring;

	if (len > RXE2_TAP_BYTES / 8)
		return false;
	if (likely(READ_ONCE(tap->ring)))
		return true;
	ring = vmalloc(RXE2_TAP_BYTES);
	if (!ring)
		return false;
	spin_lock(&tap->lock);
	if (!tap->ring) {
		WRITE_ONCE(tap->ring, ring);
		ring = NULL;
	}
	spin_unlock(&tap->lock);
	vfree(ring);
	return true;
}

/*
 * A record of @len bytes of data at the head of the ring (which exists:
 * rxe2_tap_ring()), with tap->lock held: the caller fills it and
 * publishes it (rxe2_tap_put()).
 */
static struct rxe2_tap_rec *rxe2_tap_get(struct rxe2_dev *rdev, u32 len)
	__acquires(&rdev->tap.lock)
{
	struct rxe2_tap *tap = &rdev->tap;
	u32 size = ALIGN(sizeof(struct rxe2_tap_rec) + len, 8);
	struct rxe2_tap_rec *rec;

	/* a pad record in the ring's last 8 bytes stays inside it */
	BUILD_BUG_ON(offsetofend(struct rxe2_tap_rec, kind) > 8);
	spin_lock(&tap->lock);
	for (;;) {
		u32 off = tap->head % RXE2_TAP_BYTES;
		u32 pad = off + size > RXE2_TAP_BYTES ? RXE2_TAP_BYTES - off : 0;

		/* acquire: pairs with rxe2_tap_show_all() freeing records */
		if (tap->head + pad + size - smp_load_acquire(&tap->tail) <=
		    RXE2_TAP_BYTES) {
			if (pad) {
				/* the ring's end: the record starts over */
				rec = (void *)tap->ring + off;
				rec->kind = RXE2_TAP_PAD;
				rec->size = pad;
				/* release: pairs with rxe2_tap_show_all() */
				smp_store_release(&tap->head, tap->head + pad);
			}
			break;
		}
		/* the taps fall behind: show the ring here */
		spin_unlock(&tap->lock);
		mutex_lock(&tap->show_lock);
		rxe2_tap_show_all(rdev);
		mutex_unlock(&tap->show_lock);
		spin_lock(&tap->lock);
	}
	rec = (void *)tap->ring + tap->head % RXE2_TAP_BYTES;
	rec->size = size;
	rec->len = len;
	return rec;
}

/* publish the record rxe2_tap_get() gave; the work item comes for it */
static void rxe2_tap_put(struct rxe2_dev *rdev, struct rxe2_tap_rec *rec)
	__releases(&rdev->tap.lock)
{
	struct rxe2_tap *tap = &rdev->tap;
	u32 used;
	int cpu;

	/* release: the record is written */
	smp_store_release(&tap->head, tap->head + rec->size);
	used = tap->head - READ_ONCE(tap->tail);
	spin_unlock(&tap->lock);
	smp_mb();	/* published, then read busy: pairs with rxe2_tap_work() */
	if (READ_ONCE(tap->busy))
		return;	/* the work item shows it */
	/*
	 * On the next CPU: this one is busy sending.  The work item runs
	 * in a jiffy, to show a burst at once, or now when the ring fills.
	 */
	cpu = cpumask_next(raw_smp_processor_id(), cpu_online_mask);
	if (cpu >= nr_cpu_ids)
		cpu = cpumask_first(cpu_online_mask);
	if (used < RXE2_TAP_KICK)
		queue_delayed_work_on(cpu, system_wq, &tap->work, 1);
	else if (timer_pending(&tap->work.timer) ||
		 !delayed_work_pending(&tap->work))
		mod_delayed_work_on(cpu, system_wq, &tap->work, 0);
}

/*
 * rxe2_tap_copy() - copy a loopback packet to @to (IP and UDP headers on,
 * ICRC not computed) for the taps of our netdev.  Caller: the runner of
 * a QP, before the receiver can see the packet.
 */
void rxe2_tap_copy(struct rxe2_dev *rdev, struct rxe2_qp *to,
		   const struct rxe2_av *av, struct sk_buff *skb)
{
	struct rxe2_tap_rec *rec;

	if (!rxe2_tap_ring(&rdev->tap, skb->len))
		return;
	rec = rxe2_tap_get(rdev, skb->len);
	rec->kind = RXE2_TAP_PKT;
	ether_addr_copy(rec->dmac, rxe2_qp_rdev(to)->ndev->dev_addr);
	rec->av.ipv6 = av->ipv6;
	skb_copy_bits(skb, 0, rec->data, skb->len);
	rxe2_tap_put(rdev, rec);
}

/*
 * rxe2_tap_call() - copy what a call to @to hands over for the taps of
 * our netdev: @len bytes of transport headers and payload at @hdr, then,
 * for a one-copy request, @paylen bytes of payload read from @src (which
 * the receiver then reads again from its start).  False without memory.
 * Caller: the runner of a QP, before the call.
 */
bool rxe2_tap_call(struct rxe2_dev *rdev, struct rxe2_qp *to,
		   const struct rxe2_av *av, u16 sport, const void *hdr,
		   u32 len, struct rxe2_src *src, u32 paylen)
{
	struct rxe2_tap_rec *rec;

	if (!rxe2_tap_ring(&rdev->tap, len + paylen))
		return false;
	rec = rxe2_tap_get(rdev, len + paylen);
	rec->kind = RXE2_TAP_CALL;
	ether_addr_copy(rec->dmac, rxe2_qp_rdev(to)->ndev->dev_addr);
	rec->av = *av;
	rec->sport = sport;
	memcpy(rec->data, hdr, len);
	if (src) {
		rxe2_src_read(src, rec->data + len, paylen);
		rxe2_src_rewind(src);
	}
	rxe2_tap_put(rdev, rec);
	return true;
}

void rxe2_tap_init(struct rxe2_dev *rdev)
{
	spin_lock_init(&rdev->tap.lock);
	mutex_init(&rdev->tap.show_lock);
	INIT_DELAYED_WORK(&rdev->tap.work, rxe2_tap_work);
}

/* at device teardown: nothing is sent any more */
void rxe2_tap_fini(struct rxe2_dev *rdev)
{
	cancel_delayed_work_sync(&rdev->tap.work);
	vfree(rdev->tap.ring);
}
