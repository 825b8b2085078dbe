// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2: the loopback hand-over: what a QP's runner sends to a QP on this
 * host goes to that QP's runner directly (the runners are rxe2_task.c's).
 *
 * Loopback.  A packet one of our QPs sends to a QP of an rxe2 device in
 * the same namespace is handed over by rxe2_qp_deliver() without the IP
 * stack.  The sender's runner (the top-level runner of this context)
 * takes the receiving QP's mutex with a trylock and runs it inline, one
 * level deep: a QP run inline delivers everything it sends by queueing
 * (plus a kick of the work item, except for packets to the top-level
 * runner, which looks at its queue again before it unlocks).  So a SEND,
 * its placement, its ACK and its completion all happen in the poster's
 * doorbell, and no QP's mutex is ever waited for while another is held
 * (see the lock table in rxe2_verbs.h).
 *
 * Not every hand-over is a packet: a positive ACK and a small request
 * go over as calls, without an skb (rxe2_qp_deliver_ack() from
 * rxe2_tx_loop_ack(), rxe2_qp_deliver_req() from rxe2_tx_finish()),
 * and a larger request has its payload read in place by the receiver
 * (rxe2_qp_direct_begin(), from rxe2_tx_direct()).  The receiver takes
 * them in rxe2_rx_run() and rxe2_rx_direct_take().  A packet that goes
 * through the IP stack to a device on this host is caught as it
 * arrives and run the same way (rxe2_catch_begin()).
 */
#include "rxe2_dp.h"
#include "rxe2_trace.h"
#include "rxe2_wire.h"

/* work was queued for @to by the runner of @from: run it or leave it */
static void rxe2_qp_deliver_run(struct rxe2_qp *from, struct rxe2_qp *to)
{
	struct rxe2_qp *top = from->dp.loop.inline_parent ?: from;

	if (to == top) {
		/* its runner looks at the queue before unlocking */
	} else if (!from->dp.loop.inline_parent &&
		   mutex_trylock(&to->state_lock)) {
		rxe2_qp_run_unlock(to, from, false);
	} else {
		rxe2_qp_wake(to);
	}
}

/*
 * rxe2_qp_deliver() - a loopback packet from the runner of @from (which
 * holds from's state_lock, in sleepable context) to @to, on which the
 * caller holds a reference (rxe2_qp_get()); consumes both.
 */
void rxe2_qp_deliver(struct rxe2_qp *from, struct rxe2_qp *to,
		     struct sk_buff *skb)
{
	if (skb_queue_len(&to->dp.rx_queue) >= RXE2_RX_BACKLOG ||
	    test_bit(RXE2_QPF_DYING, &to->dp.flags)) {
		rxe2_qp_dropped(to, RXE2_DROP_BACKLOG);
		kfree_skb(skb);
	} else {
		skb_queue_tail(&to->dp.rx_queue, skb);
		rxe2_qp_deliver_run(from, to);
	}
	rxe2_qp_put(to);
}

/*
 * rxe2_qp_deliver_ack() - a positive ACK (AETH smsn, PSN psn) from the
 * runner of @from to @to without a packet: @to's completer takes it as
 * if an ACK packet had arrived (rxe2_rx_run()).  Only while @to has no
 * packet queued, so it never overtakes an earlier response; whatever is
 * queued after it is taken after it.  ACKs are cumulative: one not taken
 * yet is replaced by the next.  True: handed over, and the caller's
 * reference on @to consumed; false: nothing done, send a packet.
 */
bool rxe2_qp_deliver_ack(struct rxe2_qp *from, struct rxe2_qp *to, u32 smsn,
			 u32 psn)
{
	struct rxe2_qp_dp *dp = &to->dp;
	unsigned long flags;
	bool ok;

	if (test_bit(RXE2_QPF_DYING, &dp->flags))
		return false;
	spin_lock_irqsave(&dp->rx_queue.lock, flags);
	ok = skb_queue_empty(&dp->rx_queue);
	if (ok) {
		dp->loop.ack_smsn = smsn;
		dp->loop.ack_psn = psn;
		WRITE_ONCE(dp->loop.ack_valid, true);
	}
	spin_unlock_irqrestore(&dp->rx_queue.lock, flags);
	if (!ok)
		return false;
	rxe2_qp_deliver_run(from, to);
	rxe2_qp_put(to);
	return true;
}

/*
 * rxe2_qp_deliver_req() - a request packet from the runner of @from to
 * @to without an skb: @req is its transport headers and payload, len
 * bytes (no pad, no ICRC), which @to's runner takes as if the packet had
 * arrived (rxe2_rx_run()).  Like an ACK, only while @to has no packet
 * queued and no earlier request of this kind waiting, so the order of
 * everything @to receives stays the order it was sent in.  True: handed
 * over, and the caller's reference on @to consumed; false: nothing done,
 * send a packet.
 */
bool rxe2_qp_deliver_req(struct rxe2_qp *from, struct rxe2_qp *to,
			 const void *req, u32 len)
{
	struct rxe2_qp_dp *dp = &to->dp;
	unsigned long flags;
	bool ok;

	if (!len || len > sizeof(dp->loop.req) ||
	    test_bit(RXE2_QPF_DYING, &dp->flags))
		return false;
	spin_lock_irqsave(&dp->rx_queue.lock, flags);
	/*
	 * Not while a READ is answered either: then the runner puts a
	 * request it dequeued back at the head of the queue (rxe2_rx_run()),
	 * and an empty queue seen in between would let this one overtake
	 * it.  resp.read.active is set before such a dequeue, which took
	 * this lock.
	 */
	ok = skb_queue_empty(&dp->rx_queue) &&
	     !READ_ONCE(dp->resp.read.active) &&
	     /* acquire: the runner has finished with the slot it freed */
	     !smp_load_acquire(&dp->loop.req_len);
	if (ok) {
		memcpy(dp->loop.req, req, len);
		/* release: the runner may take it without the lock */
		smp_store_release(&dp->loop.req_len, len);
	}
	spin_unlock_irqrestore(&dp->rx_queue.lock, flags);
	if (!ok)
		return false;
	rxe2_qp_deliver_run(from, to);
	rxe2_qp_put(to);
	return true;
}

/*
 * Packets a runner's own transmission brings back.  A packet routed to
 * a device on this host (over a veth into another namespace, say) is
 * received in the softirq that the transmit raises, and that softirq
 * runs before ip_local_out() returns, on the runner's CPU, on top of
 * the runner.  Waking the receiving QP's work item from there would
 * cost a scheduler round trip per packet, and behind busy pollers a
 * wait for a CPU.  So while a runner transmits, the receive hook
 * (rxe2_rx_catch()) leaves such QPs in the runner's catch instead, and
 * after the transmit the runner treats each as a loopback delivery
 * (rxe2_qp_deliver_run()): runs it inline or wakes it.  Preemption is
 * off while the per-CPU pointer is set, so only a softirq nested on
 * this runner ever sees it; the catch needs no lock.
 */
static DEFINE_PER_CPU(struct rxe2_catch *, rxe2_catcher);

void rxe2_catch_begin(struct rxe2_catch *c)
{
	c->n = 0;
	preempt_disable();
	this_cpu_write(rxe2_catcher, c);
}

/* @qp: the runner that transmitted */
void rxe2_catch_end(struct rxe2_qp *qp, struct rxe2_catch *c)
{
	unsigned int i;

	this_cpu_write(rxe2_catcher, NULL);
	preempt_enable();
	for (i = 0; i < c->n; i++) {
		rxe2_qp_deliver_run(qp, c->qp[i]);
		rxe2_qp_put(c->qp[i]);
	}
}

/*
 * The receive hook queued a packet for @qp: true when a runner
 * transmitting on this CPU took @qp into its catch, so no work item is
 * needed.
 */
bool rxe2_rx_catch(struct rxe2_qp *qp)
{
	struct rxe2_catch *c = this_cpu_read(rxe2_catcher);
	unsigned int i;

	if (!c)
		return false;
	for (i = 0; i < c->n; i++)
		if (c->qp[i] == qp)
			return true;
	if (c->n == ARRAY_SIZE(c->qp) || !rxe2_qp_get(qp))
		return false;
	c->qp[c->n++] = qp;
	return true;
}

/*
 * One-copy requests (rxe2_tx_direct()).  The runner of @from takes the
 * receiving QP's lock with a trylock at its first such packet and keeps
 * it, with a reference, for the rest of its requester's run: @to runs
 * inline for it as for a delivery (its ACKs go back to @from's queue),
 * and each packet it takes costs no lookup, lock or pass over @to.
 * Anything else @to gets meanwhile (a packet from elsewhere, its own
 * doorbell) finds it locked by a runner and waits for
 * rxe2_qp_direct_end(), at the end of the run or before a packet it
 * would not take: then @to runs what it has and is unlocked.  Not for a
 * QP run inline itself (one level only).  True: @to is @from's
 * loop.direct_to, the caller's reference on it kept until the end.
 */
bool rxe2_qp_direct_begin(struct rxe2_qp *from, struct rxe2_qp *to)
{
	if (to == from || from->dp.loop.inline_parent ||
	    test_bit(RXE2_QPF_DYING, &to->dp.flags) ||
	    !mutex_trylock(&to->state_lock))
		return false;
	set_bit(RXE2_QPF_RUNNING, &to->dp.flags);
	to->dp.loop.inline_parent = from;
	from->dp.loop.direct_to = to;
	return true;
}

/*
 * rxe2_qp_after_parent() - @qp runs inline and has work it does better
 * once its parent is unlocked (a READ's responder, rxe2_resp_read_later()):
 * it leaves itself, with a reference, in the parent's loop.after, and the
 * parent's runner runs it right after unlocking the parent
 * (rxe2_qp_run_after()).  Only for a top-level parent, and one QP at a
 * time.  False: nobody to leave it to; the caller kicks the work item.
 */
bool rxe2_qp_after_parent(struct rxe2_qp *qp)
{
	struct rxe2_qp *parent = qp->dp.loop.inline_parent;

	if (!parent || parent->dp.loop.inline_parent)
		return false;
	if (READ_ONCE(parent->dp.loop.after) == qp)
		return true;	/* left there by an earlier pass */
	if (!rxe2_qp_get(qp))
		return false;
	if (!cmpxchg(&parent->dp.loop.after, NULL, qp))
		return true;
	rxe2_qp_put(qp);
	return false;
}

/*
 * The runner of @qp unlocked it: run the QP left in its loop.after as a
 * top-level run when @may_run (a top-level run that was not itself one
 * of these: one level, so a READ stream in both directions does not
 * recurse), else hand it to its work item.
 */
void rxe2_qp_run_after(struct rxe2_qp *qp, bool may_run)
{
	struct rxe2_qp *next = xchg(&qp->dp.loop.after, NULL);

	if (!next)
		return;
	if (may_run && mutex_trylock(&next->state_lock)) {
		set_bit(RXE2_QPF_AFTER, &next->dp.flags);
		rxe2_qp_run_unlock(next, NULL, false);
	} else {
		rxe2_qp_kick(next);
	}
	rxe2_qp_put(next);
}

/*
 * Our connected peer (referenced) if it is a QP of this host that a
 * packet may reach as a call (rxe2_tx_may_call()), else NULL.  Not for
 * an XRC target, which answers as its SRQ's PD allows at every run: its
 * READ responses stay packets.
 */
static struct rxe2_qp *rxe2_qp_call_peer(struct rxe2_qp *qp)
{
	struct rxe2_dev *rdev = rxe2_qp_rdev(qp);
	bool local;

	if (rxe2_qp_is_xrc_tgt(qp) || !rxe2_tx_may_call(rdev))
		return NULL;
	return rxe2_rx_loop_target(dev_net(rdev->ndev), &qp->dp.av.daddr,
				   qp->attr.dest_qp_num, &local);
}

bool rxe2_qp_peer_callable(struct rxe2_qp *qp)
{
	struct rxe2_qp *peer = rxe2_qp_call_peer(qp);

	if (!peer)
		return false;
	rxe2_qp_put(peer);
	return true;
}

/*
 * rxe2_qp_direct_to_peer() - rxe2_qp_direct_begin() for a responder
 * about to stream READ responses: its local peer, the READ's requester,
 * becomes its loop.direct_to, so that each response is placed in one
 * copy (rxe2_tx_direct_resp()).  True: begun, end it with
 * rxe2_qp_direct_end().
 */
bool rxe2_qp_direct_to_peer(struct rxe2_qp *qp)
{
	struct rxe2_qp *peer;

	/* run inline, it could not begin (one level): spare the lookup */
	if (qp->dp.loop.direct_to || qp->dp.loop.inline_parent)
		return false;
	peer = rxe2_qp_call_peer(qp);
	if (!peer)
		return false;
	if (rxe2_qp_direct_begin(qp, peer))
		return true;
	rxe2_qp_put(peer);
	return false;
}

void rxe2_qp_direct_end(struct rxe2_qp *from)
{
	struct rxe2_qp *to = from->dp.loop.direct_to;

	if (!to)
		return;
	from->dp.loop.direct_to = NULL;
	to->dp.loop.inline_parent = NULL;
	/*
	 * What it got meanwhile runs as for any delivery; without that, no
	 * whole pass over the QP: unlock as rxe2_qp_run_unlock() would.
	 * (Its timers queue the work item themselves.)
	 */
	if (rxe2_qp_has_work(to) || rxe2_qp_unlock_relook(to))
		rxe2_qp_run_unlock(to, from, false);
	else
		rxe2_qp_notify(to);
	rxe2_qp_put(to);
}

/*
 * The call did not work: hand over the packet it stands for, which the
 * taps have a copy of already.  Consumes the reference on @to.
 */
void rxe2_tx_call_failed(struct rxe2_qp *qp, const struct rxe2_av *av,
			 u16 sport, struct rxe2_qp *to, const void *hdr,
			 u32 len)
{
	struct rxe2_dev *rdev = rxe2_qp_rdev(qp);
	struct sk_buff *skb;

	skb = rxe2_tx_call_skb(rdev->ndev, av, sport, hdr, len);
	if (!skb) {
		rxe2_qp_put(to);
		return;	/* lost: RC retries */
	}
	rxe2_skb_cb(skb)->trusted = true;
	rxe2_qp_deliver(qp, to, skb);
	rxe2_fault_overtaken(rdev);
}

/*
 * rxe2_tx_loop_ack() - a positive ACK to a local peer QP as a call, not a
 * packet (rxe2_qp_deliver_ack()): no skb, no headers, nothing to parse.
 * While a tap watches our netdev, it gets a copy of the ACK packet
 * first, and the packet is handed over if the call does not work.
 * True: handed over, or dropped as a receiver would (counted); false:
 * send the ACK as a packet.  Caller: the runner of qp.
 */
bool rxe2_tx_loop_ack(struct rxe2_qp *qp, u32 smsn, u32 psn)
{
	struct rxe2_dev *rdev = rxe2_qp_rdev(qp);
	struct net_device *ndev = rdev->ndev;
	struct {
		struct rxe2_bth bth;
		struct rxe2_aeth aeth;
	} ack;
	bool tapped = false;
	struct rxe2_qp *to;
	bool local;

	if (!READ_ONCE(rdev->port_active) || rxe2_tx_lo_tapped(ndev) ||
	    rxe2_fault_on(rdev, RXE2_FAULT_ON_TX))
		return false;
	if (rxe2_fault_tx_drop(rdev))
		return true;	/* lost on the way */
	to = rxe2_rx_loop_target(dev_net(ndev), &qp->dp.av.daddr,
				 qp->attr.dest_qp_num, &local);
	if (!local)
		return false;
	/*
	 * An ACK of another transport (RC to an XRC initiator or back)
	 * goes as a packet, which the receiver drops as one of the wrong
	 * type, as it would from the network.
	 */
	if (to && rxe2_qp_transport(to) != rxe2_qp_transport(qp)) {
		rxe2_qp_put(to);
		return false;
	}
	if (to && dev_nit_active(ndev)) {
		rxe2_bth_init(&ack.bth, rxe2_qp_transport(qp) | RXE2_OP_ACK,
			      false, 0, qp->attr.dest_qp_num, false, psn);
		ack.aeth.smsn = htonl(smsn);
		tapped = rxe2_tap_call(rdev, to, &qp->dp.av, qp->dp.src_port,
				       &ack, sizeof(ack), NULL, 0);
		if (!tapped) {
			rxe2_qp_put(to);
			return false;
		}
	}
	if (to && !rxe2_qp_deliver_ack(qp, to, smsn, psn)) {
		if (!tapped) {
			rxe2_qp_put(to);
			return false;
		}
		rxe2_tx_call_failed(qp, &qp->dp.av, qp->dp.src_port, to,
				    &ack, sizeof(ack));
	}
	rxe2_qp_count_pkt(qp, true, RXE2_ACK_WIRE_LEN);
	trace_rxe2_tx(rdev->ibdev.index, RXE2_OP_ACK, qp->attr.dest_qp_num, psn,
		      RXE2_ACK_WIRE_LEN);
	return true;
}
