// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2: fault injection for CI, through two sysfs files of the device
 * (sysfs, not debugfs: it is there in a container too; docs/knobs.md
 * says why they are to move to configfs).
 *
 * fault_tx_drop holds N: one packet in N that the device transmits is
 * lost, as on a bad wire (0, the default, turns it off; 1 loses
 * everything).  It covers everything the device sends, to the network
 * or over loopback (packets, handed-over requests and ACKs alike), so RC
 * retransmission, READ re-requests and the recovery of kernel consumers
 * (nvme-rdma, RDMA CM) can be tested without netem and where netem
 * cannot reach: two devices in one namespace never touch a netdev.  Each
 * loss is counted in the port counter fault_tx_drops.  Which packets are
 * lost is a function of their number since N was written, mixed by a
 * hash: a run that sends the same packets loses the same ones, yet the
 * losses have no period.  A strict "every Nth" would lock step with
 * go-back-N: a retransmission of k packets with k a multiple of N loses
 * the same packet every time, until the retry count runs out.
 *
 * fault holds up to RXE2_FAULT_RULES rules, one written at a time:
 *
 *   ACTION [qpn=Q] [opcode=OP] [every=N | rate=N] [count=K] [ms=T]
 *
 * Transmit actions act on the packets the device sends (qpn: the
 * sending QP, ours; opcode: the BTH's): drop, dup (a second copy right
 * behind), corrupt (the ICRC made wrong: the receiver drops it), delay
 * (held ms=T, at most 1000, before it leaves) and reorder (held until the
 * device sends its next packet, which overtakes it; at most 10 ms).
 * Responder actions act on the new requests the device's RC QPs receive
 * (qpn: the responder QP; the first packet of a message): rnr_nak,
 * access_nak and remop_nak answer it with that NAK, as if the receive
 * queue were empty, the rkey bad or the receive WQE unusable.  Only a
 * request that takes a receive WQE (a SEND, a WRITE with immediate in
 * one packet) can draw an RNR NAK, as from a real responder.  odp_fail
 * fails the ODP page faults (the access completes or is NAKed as if the
 * process had no such memory); it takes no qpn or opcode.
 *
 * A rule sees the events its filters match; every=N fires on the Nth,
 * 2Nth, ... of them, rate=N on one in N chosen by the hash above, neither
 * on each; count=K retires it after K firings (it stays listed, and
 * stops matching).  The first rule that fires decides.  "clear" removes them all; reading the file lists them with
 * how many events they matched and how often they fired.  Each firing is
 * counted in the port counter fault_injected.
 *
 * While a transmit rule is live, every packet the device sends is an skb
 * (no staged request, no ACK handed over as a call) that meets the rules
 * once, in rxe2_tx_send(); one a rule acts on is routed through the IP
 * stack even to a local QP (through lo, which must be up), the others
 * go as usual.  At most RXE2_FAULT_MAX_HELD packets are held; more leave
 * at once.  Off, each hook costs one READ_ONCE() of rdev->fault_on, a
 * word next to fault_tx_drop, which the transmit path reads anyway.
 */
#include <net/ip.h>
#include <net/ipv6.h>

#include "rxe2_hdr.h"
#include "rxe2_verbs.h"

#define RXE2_FAULT_MAX_DELAY_MS		1000
#define RXE2_FAULT_REORDER_MS		10
#define RXE2_FAULT_MAX_HELD		1024

/* a packet held by delay or reorder, on rdev->fault.held */
struct rxe2_fault_held {
	struct list_head list;
	struct sk_buff *skb;
	unsigned long due;	/* jiffies */
	bool ipv6;
	bool reorder;		/* also leaves behind the next packet */
};

static const char *const rxe2_fault_names[RXE2_FAULT_NUM] = {
	[RXE2_FAULT_DROP] = "drop",
	[RXE2_FAULT_DUP] = "dup",
	[RXE2_FAULT_CORRUPT] = "corrupt",
	[RXE2_FAULT_DELAY] = "delay",
	[RXE2_FAULT_REORDER] = "reorder",
	[RXE2_FAULT_RNR_NAK] = "rnr_nak",
	[RXE2_FAULT_ACCESS_NAK] = "access_nak",
	[RXE2_FAULT_REMOP_NAK] = "remop_nak",
	[RXE2_FAULT_ODP_FAIL] = "odp_fail",
};

/* the hook each action belongs to, a bit of rdev->fault_on */
static const unsigned int rxe2_fault_hooks[RXE2_FAULT_NUM] = {
	[RXE2_FAULT_DROP] = RXE2_FAULT_ON_TX,
	[RXE2_FAULT_DUP] = RXE2_FAULT_ON_TX,
	[RXE2_FAULT_CORRUPT] = RXE2_FAULT_ON_TX,
	[RXE2_FAULT_DELAY] = RXE2_FAULT_ON_TX,
	[RXE2_FAULT_REORDER] = RXE2_FAULT_ON_TX,
	[RXE2_FAULT_RNR_NAK] = RXE2_FAULT_ON_RNR,
	[RXE2_FAULT_ACCESS_NAK] = RXE2_FAULT_ON_RESP,
	[RXE2_FAULT_REMOP_NAK] = RXE2_FAULT_ON_RESP,
	[RXE2_FAULT_ODP_FAIL] = RXE2_FAULT_ON_ODP,
};

static bool rxe2_fault_spent(const struct rxe2_fault_rule *r)
{
	return r->count && r->fired >= r->count;
}

/* rdev->fault_on from the live rules and the held packets; under lock */
static void rxe2_fault_update_on(struct rxe2_dev *rdev)
{
	struct rxe2_fault *f = &rdev->fault;
	unsigned int on = f->reorder_held ? RXE2_FAULT_ON_HELD : 0, i;

	for (i = 0; i < f->nrules; i++)
		if (!rxe2_fault_spent(&f->rules[i]))
			on |= rxe2_fault_hooks[f->rules[i].action];
	WRITE_ONCE(rdev->fault_on, on);
}

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

/* does live rule r fire on this event (its filters already matched)? */
static bool rxe2_fault_rule_fires(struct rxe2_fault_rule *r)
{
	u32 n = ++r->matched;

	if (r->every > 1 && n % r->every)
		return false;
	if (r->rate > 1 && rxe2_fault_mix(n) % r->rate)
		return false;
	r->fired++;
	return true;
}

/*
 * rxe2_fault_fire() - the first rule of hook @hook (an RXE2_FAULT_ON_*
 * bit) that matches qpn and opcode and fires; its action, or
 * RXE2_FAULT_NONE.  *ms: a delay's length.  Any context.
 */
enum rxe2_fault_action rxe2_fault_fire(struct rxe2_dev *rdev,
				       unsigned int hook, u32 qpn, u8 opcode,
				       unsigned int *ms)
{
	enum rxe2_fault_action act = RXE2_FAULT_NONE;
	struct rxe2_fault *f = &rdev->fault;
	unsigned long flags;
	unsigned int i;

	spin_lock_irqsave(&f->lock, flags);
	for (i = 0; i < f->nrules; i++) {
		struct rxe2_fault_rule *r = &f->rules[i];

		if (rxe2_fault_hooks[r->action] != hook ||
		    rxe2_fault_spent(r) ||
		    (r->qpn >= 0 && r->qpn != qpn) ||
		    (r->opcode >= 0 && r->opcode != opcode))
			continue;
		if (rxe2_fault_rule_fires(r)) {
			act = r->action;
			if (ms)
				*ms = r->ms;
			if (rxe2_fault_spent(r))
				rxe2_fault_update_on(rdev);
			break;
		}
	}
	spin_unlock_irqrestore(&f->lock, flags);
	if (act != RXE2_FAULT_NONE)
		rxe2_dp_count(rdev, RXE2_DPC_FAULT_INJECTED);
	return act;
}

static void rxe2_fault_out(struct rxe2_dev *rdev, struct sk_buff *skb,
			   bool ipv6)
{
	struct net *net = dev_net(rdev->ndev);
	int ret;

	if (ipv6)
		ret = ip6_local_out(net, NULL, skb);
	else
		ret = ip_local_out(net, NULL, skb);
	if (net_xmit_eval(ret))
		rxe2_dp_count(rdev, RXE2_DPC_SEND_ERR);
}

/* which held packets rxe2_fault_release() lets go */
enum rxe2_fault_let {
	RXE2_FAULT_LET_DUE,		/* those whose time has come */
	RXE2_FAULT_LET_OVERTAKEN,	/* and those a reorder holds */
	RXE2_FAULT_LET_ALL,		/* all, now */
	RXE2_FAULT_LET_PURGE,		/* none: all freed (teardown) */
};

static bool rxe2_fault_let_go(const struct rxe2_fault_held *h,
			      enum rxe2_fault_let let, unsigned long now)
{
	return let >= RXE2_FAULT_LET_ALL ||
	       (let == RXE2_FAULT_LET_OVERTAKEN && h->reorder) ||
	       time_after_eq(now, h->due);
}

/* run the work at @due unless it is armed to run sooner; under lock */
static void rxe2_fault_arm(struct rxe2_fault *f, unsigned long due,
			   unsigned long now)
{
	if (f->armed && !time_before(due, f->armed_at))
		return;
	f->armed = true;
	f->armed_at = due;
	mod_delayed_work(system_wq, &f->work,
			 time_after(due, now) ? due - now : 0);
}

/*
 * Send (or purge) the held packets @let names, in the order they were
 * held; arm the work for the rest.
 */
static void rxe2_fault_release(struct rxe2_dev *rdev, enum rxe2_fault_let let)
{
	struct rxe2_fault *f = &rdev->fault;
	struct rxe2_fault_held *h, *tmp;
	unsigned long next = 0, flags, now = jiffies;
	bool more = false;
	LIST_HEAD(out);

	spin_lock_irqsave(&f->lock, flags);
	f->reorder_held = false;
	list_for_each_entry_safe(h, tmp, &f->held, list) {
		if (rxe2_fault_let_go(h, let, now)) {
			list_move_tail(&h->list, &out);
			f->nheld--;
			continue;
		}
		f->reorder_held |= h->reorder;
		if (!more || time_before(h->due, next))
			next = h->due;
		more = true;
	}
	rxe2_fault_update_on(rdev);
	f->armed = false;	/* the work is running, or this rearms it */
	if (more)
		rxe2_fault_arm(f, next, now);
	spin_unlock_irqrestore(&f->lock, flags);

	list_for_each_entry_safe(h, tmp, &out, list) {
		if (let == RXE2_FAULT_LET_PURGE)
			kfree_skb(h->skb);
		else
			rxe2_fault_out(rdev, h->skb, h->ipv6);
		kfree(h);
	}
}

static void rxe2_fault_work(struct work_struct *w)
{
	struct rxe2_dev *rdev = container_of(to_delayed_work(w),
					     struct rxe2_dev, fault.work);

	rxe2_fault_release(rdev, RXE2_FAULT_LET_DUE);
}

/*
 * Hold a packet for ms, or (reorder) until the next one has left; it
 * leaves at once when the rules are gone ("clear" raced with it; a rule
 * its firing retired is still there) or too many are held.
 */
static void rxe2_fault_hold(struct rxe2_dev *rdev, struct sk_buff *skb,
			    bool ipv6, unsigned int ms, bool reorder)
{
	struct rxe2_fault_held *h = kmalloc(sizeof(*h), GFP_ATOMIC);
	struct rxe2_fault *f = &rdev->fault;
	unsigned long flags, now = jiffies;

	if (!h)
		goto out;
	h->skb = skb;
	h->ipv6 = ipv6;
	h->reorder = reorder;
	h->due = now + msecs_to_jiffies(ms);
	spin_lock_irqsave(&f->lock, flags);
	if (!f->nrules || f->nheld >= RXE2_FAULT_MAX_HELD) {
		spin_unlock_irqrestore(&f->lock, flags);
		kfree(h);
		goto out;
	}
	list_add_tail(&h->list, &f->held);
	f->nheld++;
	if (reorder) {
		f->reorder_held = true;
		rxe2_fault_update_on(rdev);
	}
	rxe2_fault_arm(f, h->due, now);
	spin_unlock_irqrestore(&f->lock, flags);
	return;
out:
	rxe2_fault_out(rdev, skb, ipv6);
}

/*
 * rxe2_fault_xmit() - send a routed packet (headers and ICRC complete)
 * the way transmit rule @act says; consumes the skb.  Caller: transmit
 * (rxe2_tx_xmit()), after it counted the packet as sent.
 */
void rxe2_fault_xmit(struct rxe2_dev *rdev, struct sk_buff *skb, bool ipv6,
		     enum rxe2_fault_action act, unsigned int ms)
{
	struct sk_buff *copy;

	switch (act) {
	case RXE2_FAULT_DUP:
		copy = skb_copy(skb, GFP_ATOMIC);
		rxe2_fault_out(rdev, skb, ipv6);
		if (copy)
			rxe2_fault_out(rdev, copy, ipv6);
		break;
	case RXE2_FAULT_CORRUPT:
		/* one bit of the ICRC, the last 4 bytes */
		skb_tail_pointer(skb)[-1] ^= 0x80;
		rxe2_fault_out(rdev, skb, ipv6);
		break;
	case RXE2_FAULT_DELAY:
		rxe2_fault_hold(rdev, skb, ipv6, ms, false);
		return;
	case RXE2_FAULT_REORDER:
		rxe2_fault_hold(rdev, skb, ipv6, RXE2_FAULT_REORDER_MS, true);
		return;
	default:	/* drop: rxe2_tx_faulty() did that */
		kfree_skb(skb);
		return;
	}
	rxe2_fault_overtaken(rdev);
}

/* a packet left: those a reorder rule held for it go behind it */
void rxe2_fault_overtaken_slow(struct rxe2_dev *rdev)
{
	rxe2_fault_release(rdev, RXE2_FAULT_LET_OVERTAKEN);
}

/* device setup and teardown (nothing is sent any more at teardown) */
void rxe2_fault_init(struct rxe2_dev *rdev)
{
	spin_lock_init(&rdev->fault.lock);
	INIT_LIST_HEAD(&rdev->fault.held);
	INIT_DELAYED_WORK(&rdev->fault.work, rxe2_fault_work);
}

void rxe2_fault_fini(struct rxe2_dev *rdev)
{
	spin_lock_irq(&rdev->fault.lock);
	rdev->fault.nrules = 0;
	rxe2_fault_update_on(rdev);
	spin_unlock_irq(&rdev->fault.lock);
	cancel_delayed_work_sync(&rdev->fault.work);
	rxe2_fault_release(rdev, RXE2_FAULT_LET_PURGE);
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

/* "key=value" into the rule; -EINVAL for anything else */
static int rxe2_fault_parse_opt(struct rxe2_fault_rule *r, char *tok)
{
	char *val = strchr(tok, '=');
	u32 v;

	if (!val || kstrtou32(val + 1, 0, &v))
		return -EINVAL;
	*val = 0;
	if (!strcmp(tok, "qpn") && v <= RXE2_QPN_MASK)
		r->qpn = v;
	else if (!strcmp(tok, "opcode") && v <= 0xff)
		r->opcode = v;
	else if (!strcmp(tok, "every") && v)
		r->every = v;
	else if (!strcmp(tok, "rate") && v)
		r->rate = v;
	else if (!strcmp(tok, "count"))
		r->count = v;
	else if (!strcmp(tok, "ms") && v <= RXE2_FAULT_MAX_DELAY_MS)
		r->ms = v;
	else
		return -EINVAL;
	return 0;
}

static int rxe2_fault_parse(struct rxe2_fault_rule *r, char *line)
{
	char *tok = strsep(&line, " \t");
	int a, ret;

	a = match_string(rxe2_fault_names, RXE2_FAULT_NUM, tok);
	if (a < 0)
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	r->action = a;
	r->qpn = -1;
	r->opcode = -1;
	while ((tok = strsep(&line, " \t"))) {
		if (!*tok)
			continue;
		ret = rxe2_fault_parse_opt(r, tok);
		if (ret)
			return ret;
	}
	if ((r->every && r->rate) ||
	    (r->action == RXE2_FAULT_DELAY) != !!r->ms ||
	    (r->action == RXE2_FAULT_ODP_FAIL &&
	     (r->qpn >= 0 || r->opcode >= 0)))
		return -EINVAL;
	return 0;
}

static ssize_t fault_store(struct device *device,
			   struct device_attribute *attr, const char *buf,
			   size_t count)
{
	struct rxe2_dev *rdev = to_rdev(rdma_device_to_ibdev(device));
	struct rxe2_fault_rule r;
	char *line, *dup;
	int ret = 0;

	dup = kstrndup(buf, count, GFP_KERNEL);
	if (!dup)
		return -ENOMEM;
	line = strim(dup);
	if (!strcmp(line, "clear")) {
		spin_lock_irq(&rdev->fault.lock);
		rdev->fault.nrules = 0;
		rxe2_fault_update_on(rdev);
		spin_unlock_irq(&rdev->fault.lock);
		/* what delay or reorder holds leaves now */
		rxe2_fault_release(rdev, RXE2_FAULT_LET_ALL);
		goto out;
	}
	ret = rxe2_fault_parse(&r, line);
	if (ret)
		goto out;
	spin_lock_irq(&rdev->fault.lock);
	if (rdev->fault.nrules == RXE2_FAULT_RULES) {
		ret = -ENOSPC;
	} else {
		rdev->fault.rules[rdev->fault.nrules++] = r;
		rxe2_fault_update_on(rdev);
	}
	spin_unlock_irq(&rdev->fault.lock);
out:
	kfree(dup);
	return ret ? ret : count;
}

static ssize_t fault_show(struct device *device,
			  struct device_attribute *attr, char *buf)
{
	struct rxe2_dev *rdev = to_rdev(rdma_device_to_ibdev(device));
	int len = 0;
	unsigned int i;

	spin_lock_irq(&rdev->fault.lock);
	for (i = 0; i < rdev->fault.nrules; i++) {
		const struct rxe2_fault_rule *r = &rdev->fault.rules[i];

		len += sysfs_emit_at(buf, len, "%s",
				     rxe2_fault_names[r->action]);
		if (r->qpn >= 0)
			len += sysfs_emit_at(buf, len, " qpn=%d", r->qpn);
		if (r->opcode >= 0)
			len += sysfs_emit_at(buf, len, " opcode=%d", r->opcode);
		if (r->every)
			len += sysfs_emit_at(buf, len, " every=%u", r->every);
		if (r->rate)
			len += sysfs_emit_at(buf, len, " rate=%u", r->rate);
		if (r->count)
			len += sysfs_emit_at(buf, len, " count=%u", r->count);
		if (r->ms)
			len += sysfs_emit_at(buf, len, " ms=%u", r->ms);
		len += sysfs_emit_at(buf, len, " matched=%u fired=%u\n",
				     r->matched, r->fired);
	}
	spin_unlock_irq(&rdev->fault.lock);
	return len;
}

DEVICE_ATTR_RW(fault);
