// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2: fault injection for CI, configured through configfs:
 * /sys/kernel/config/rxe2/<ibdev>/, made by root with mkdir (configfs, not
 * debugfs, which lockdown closes to writers; not sysfs, which cannot make
 * a rule on mkdir: docs/knobs.md says why, and documents every file).
 *
 * tx_drop holds N: one packet in N that the device transmits is lost, as
 * on a bad wire (0, the default, turns it off; 1 loses everything).  It
 * covers everything the device sends, to the network or over loopback
 * (packets, handed-over requests and ACKs alike), so RC retransmission,
 * READ re-requests and the recovery of kernel consumers (nvme-rdma, RDMA
 * CM) can be tested without netem and where netem cannot reach: two
 * devices in one namespace never touch a netdev.  Each loss is counted in
 * the port counter fault_tx_drops.  Which packets are lost is a function
 * of their number since N was written, mixed by a hash: a run that sends
 * the same packets loses the same ones, yet the losses have no period.  A
 * strict "every Nth" would lock step with go-back-N: a retransmission of
 * k packets with k a multiple of N loses the same packet every time,
 * until the retry count runs out.
 *
 * rules/<name>/ is one rule, up to RXE2_FAULT_RULES of them, made with
 * mkdir; a file per field: action, qpn, opcode, every, rate, count, ms,
 * written while the rule is off, then enable.
 *
 * Transmit actions act on the packets the device sends (qpn: the
 * sending QP, ours; opcode: the BTH's): drop, dup (a second copy right
 * behind), corrupt (the ICRC made wrong: the receiver drops it), delay
 * (held ms, at most 1000, before it leaves) and reorder (held until the
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
 * on each; count=K retires it after K firings (it stays live, and stops
 * matching).  Enabled, a rule joins the device's list last; the first
 * live rule that fires decides.  matched and fired count the events it
 * matched and its firings; each firing is also counted in the port
 * counter fault_injected.  Removing the last transmit rule (enable 0, or
 * rmdir) sends what delay and reorder hold.
 *
 * The directories are the user's, not the device's: every access finds
 * the device by the directory's name (ENODEV when there is none), so a
 * directory outlives its device, and a device made again under the name
 * starts with no rule live.  A live rule is a copy in the device's list
 * (struct rxe2_fault, the hooks' only state), known by its id.  Each
 * directory pins the module (configfs takes a reference per mkdir), so
 * rmmod waits for them to go, and the subsystem is unregistered empty.
 *
 * While a transmit rule is live, every packet the device sends is an skb
 * (no staged request, no ACK handed over as a call) that meets the rules
 * once, in rxe2_tx_send(); one a rule acts on is routed through the IP
 * stack even to a local QP (through lo, which must be up), the others
 * go as usual.  At most RXE2_FAULT_MAX_HELD packets are held; more leave
 * at once.  Off, each hook costs one READ_ONCE() of rdev->fault_on, a
 * word next to fault_tx_drop, which the transmit path reads anyway.
 */
#include <linux/configfs.h>
#include <net/ip.h>
#include <net/ipv6.h>

#include "rxe2_hdr.h"
#include "rxe2_verbs.h"

/* Debian builds it as a module; a kernel without it cannot take rules */
#if !IS_ENABLED(CONFIG_CONFIGFS_FS)
#error "rdma_rxe2 needs configfs (CONFIG_CONFIGFS_FS) for its fault injection"
#endif

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

/* is a transmit rule live, spent or not (what delay and reorder hold for)? */
static bool rxe2_fault_has_tx(const struct rxe2_fault *f)
{
	unsigned int i;

	for (i = 0; i < f->nrules; i++)
		if (rxe2_fault_hooks[f->rules[i].action] == RXE2_FAULT_ON_TX)
			return true;
	return false;
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
 * leaves at once when no transmit rule is live any more (its removal
 * raced with it; a rule its firing retired is still there) or too many
 * are held.
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
	if (!rxe2_fault_has_tx(f) || f->nheld >= RXE2_FAULT_MAX_HELD) {
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


/*
 * The configfs side: /sys/kernel/config/rxe2/<ibdev>/ (struct rxe2_cfs_dev)
 * with tx_drop and rules/, and rules/<name>/ (struct rxe2_cfs_rule).
 *
 * rxe2_cfs_lock orders every rule's writers, enable among them, against
 * each other: configfs runs the stores of different open files, and of
 * different files of one item, concurrently.  It is taken in configfs
 * callbacks only (with configfs' su_mutex, or an attribute's fragment
 * semaphore, held outside it) and takes rxe2_dev_lock inside it: the
 * device found by name is not freed while that is held, as
 * rxe2_dealloc_driver() takes it before rxe2_fault_fini(), so a write
 * in progress when the device is removed ends first, and the removal's
 * purge comes after it.
 */
static DEFINE_MUTEX(rxe2_cfs_lock);
static u64 rxe2_cfs_next_id;	/* rule ids, under rxe2_cfs_lock */

struct rxe2_cfs_dev {
	struct config_group group;	/* named after the device */
	struct config_group rules;	/* rules/, made with it */
	unsigned int nrules;		/* entries of rules/, rxe2_cfs_lock */
};

struct rxe2_cfs_rule {
	struct config_item item;
	struct rxe2_cfs_dev *dev;	/* outlives it: configfs' reference */
	/* the fields, and the counts of its last time live; rxe2_cfs_lock */
	struct rxe2_fault_rule r;
};

static struct rxe2_cfs_dev *to_cfs_dev(struct config_item *item)
{
	return container_of(to_config_group(item), struct rxe2_cfs_dev,
			    group);
}

static struct rxe2_cfs_rule *to_cfs_rule(struct config_item *item)
{
	return container_of(item, struct rxe2_cfs_rule, item);
}

/*
 * The registered rxe2 device named @name, returned with rxe2_dev_lock
 * held; NULL, and the lock not held, when there is none.  ibdev.name is
 * an array a rename rewrites in place, never freed, whose last byte stays
 * NUL: a lookup racing with a rename sees one name or the other.
 */
static struct rxe2_dev *rxe2_cfs_dev_lock(const char *name)
{
	struct rxe2_dev *rdev;

	mutex_lock(&rxe2_dev_lock);
	list_for_each_entry(rdev, &rxe2_dev_list, list) {
		if (strcmp(rdev->ibdev.name, name) ||
		    !ib_device_try_get(&rdev->ibdev))
			continue;
		/* registered, and not on its way out: the lock keeps it */
		ib_device_put(&rdev->ibdev);
		return rdev;
	}
	mutex_unlock(&rxe2_dev_lock);
	return NULL;
}

/* the device of a rule's <ibdev> directory, as rxe2_cfs_dev_lock() */
static struct rxe2_dev *rxe2_cfs_rule_dev_lock(struct rxe2_cfs_rule *c)
{
	return rxe2_cfs_dev_lock(config_item_name(&c->dev->group.cg_item));
}

/* the index of rule @id in the device's list, or -1; under fault.lock */
static int rxe2_fault_find(const struct rxe2_fault *f, u64 id)
{
	unsigned int i;

	for (i = 0; i < f->nrules; i++)
		if (f->rules[i].id == id)
			return i;
	return -1;
}

/* is rule @r live in @rdev?  Its counts there into @r if so */
static bool rxe2_fault_live(struct rxe2_dev *rdev, struct rxe2_fault_rule *r)
{
	struct rxe2_fault *f = &rdev->fault;
	int i;

	spin_lock_irq(&f->lock);
	i = rxe2_fault_find(f, r->id);
	if (i >= 0) {
		r->matched = f->rules[i].matched;
		r->fired = f->rules[i].fired;
	}
	spin_unlock_irq(&f->lock);
	return i >= 0;
}

/* what the old one-line parser refused beyond each field's own range */
static bool rxe2_fault_rule_ok(const struct rxe2_fault_rule *r)
{
	return r->action < RXE2_FAULT_NUM && !(r->every && r->rate) &&
	       (r->action == RXE2_FAULT_DELAY) == !!r->ms &&
	       (r->action != RXE2_FAULT_ODP_FAIL ||
		(r->qpn < 0 && r->opcode < 0));
}

/* rule @r goes live in @rdev, last in the list, its counts from zero */
static int rxe2_fault_link(struct rxe2_dev *rdev, struct rxe2_fault_rule *r)
{
	struct rxe2_fault *f = &rdev->fault;
	int ret = 0;

	if (!rxe2_fault_rule_ok(r))
		return -EINVAL;
	spin_lock_irq(&f->lock);
	if (rxe2_fault_find(f, r->id) >= 0)
		goto out;		/* live already: nothing to do */
	/* only a rename can gather more than one directory's rules */
	if (f->nrules == RXE2_FAULT_RULES) {
		ret = -ENOSPC;
		goto out;
	}
	r->matched = 0;
	r->fired = 0;
	f->rules[f->nrules++] = *r;
	rxe2_fault_update_on(rdev);
out:
	spin_unlock_irq(&f->lock);
	return ret;
}

/*
 * Rule @r leaves @rdev's list, the others keeping their order, its last
 * counts kept in @r; with the last transmit rule gone, what delay and
 * reorder hold leaves now.
 */
static void rxe2_fault_unlink(struct rxe2_dev *rdev, struct rxe2_fault_rule *r)
{
	struct rxe2_fault *f = &rdev->fault;
	bool tx_left;
	int i;

	spin_lock_irq(&f->lock);
	i = rxe2_fault_find(f, r->id);
	if (i < 0) {
		spin_unlock_irq(&f->lock);
		return;
	}
	r->matched = f->rules[i].matched;
	r->fired = f->rules[i].fired;
	memmove(&f->rules[i], &f->rules[i + 1],
		(f->nrules - i - 1) * sizeof(f->rules[0]));
	f->nrules--;
	tx_left = rxe2_fault_has_tx(f);
	rxe2_fault_update_on(rdev);
	spin_unlock_irq(&f->lock);
	if (!tx_left)
		rxe2_fault_release(rdev, RXE2_FAULT_LET_ALL);
}

/*
 * Rule @r out of every device: the one named by its directory, and one
 * it stayed live in under its old name after a rename.  rxe2_dev_lock
 * held.
 */
static void rxe2_fault_unlink_all(struct rxe2_fault_rule *r)
{
	struct rxe2_dev *rdev;

	lockdep_assert_held(&rxe2_dev_lock);
	list_for_each_entry(rdev, &rxe2_dev_list, list)
		rxe2_fault_unlink(rdev, r);
}

/* <ibdev>/tx_drop */
static ssize_t rxe2_cfs_tx_drop_show(struct config_item *item, char *page)
{
	struct rxe2_dev *rdev = rxe2_cfs_dev_lock(config_item_name(item));
	u32 every;

	if (!rdev)
		return -ENODEV;
	every = READ_ONCE(rdev->fault_tx_drop);
	mutex_unlock(&rxe2_dev_lock);
	return sysfs_emit(page, "%u\n", every);
}

static ssize_t rxe2_cfs_tx_drop_store(struct config_item *item,
				      const char *page, size_t len)
{
	struct rxe2_dev *rdev;
	u32 every;

	if (kstrtou32(page, 0, &every))
		return -EINVAL;
	rdev = rxe2_cfs_dev_lock(config_item_name(item));
	if (!rdev)
		return -ENODEV;
	atomic_set(&rdev->fault_tx_seq, 0);
	WRITE_ONCE(rdev->fault_tx_drop, every);
	mutex_unlock(&rxe2_dev_lock);
	return len;
}

CONFIGFS_ATTR(rxe2_cfs_, tx_drop);

/* the fields of rules/<name>/, one file each */
enum rxe2_cfs_field {
	RXE2_CFS_ACTION,
	RXE2_CFS_QPN,
	RXE2_CFS_OPCODE,
	RXE2_CFS_EVERY,
	RXE2_CFS_RATE,
	RXE2_CFS_COUNT,
	RXE2_CFS_MS,
};

/* a field's value from what was written; each file's range, or -EINVAL */
static int rxe2_cfs_parse(enum rxe2_cfs_field field, const char *page,
			  s64 *val)
{
	u32 max = U32_MAX, v;
	int a;

	switch (field) {
	case RXE2_CFS_ACTION:
		if (sysfs_streq(page, "none")) {
			*val = RXE2_FAULT_NONE;
			return 0;
		}
		a = sysfs_match_string(rxe2_fault_names, page);
		if (a < 0)
			return -EINVAL;
		*val = a;
		return 0;
	case RXE2_CFS_QPN:
	case RXE2_CFS_OPCODE:
		if (sysfs_streq(page, "any")) {
			*val = -1;
			return 0;
		}
		max = field == RXE2_CFS_QPN ? RXE2_QPN_MASK : 0xff;
		break;
	case RXE2_CFS_MS:
		max = RXE2_FAULT_MAX_DELAY_MS;
		break;
	default:
		break;
	}
	if (kstrtou32(page, 0, &v) || v > max)
		return -EINVAL;
	*val = v;
	return 0;
}

static void rxe2_cfs_set(struct rxe2_fault_rule *r, enum rxe2_cfs_field field,
			 s64 val)
{
	switch (field) {
	case RXE2_CFS_ACTION:
		r->action = val;
		break;
	case RXE2_CFS_QPN:
		r->qpn = val;
		break;
	case RXE2_CFS_OPCODE:
		r->opcode = val;
		break;
	case RXE2_CFS_EVERY:
		r->every = val;
		break;
	case RXE2_CFS_RATE:
		r->rate = val;
		break;
	case RXE2_CFS_COUNT:
		r->count = val;
		break;
	case RXE2_CFS_MS:
		r->ms = val;
		break;
	}
}

static ssize_t rxe2_cfs_show(struct config_item *item, char *page,
			     enum rxe2_cfs_field field)
{
	struct rxe2_cfs_rule *c = to_cfs_rule(item);
	const struct rxe2_fault_rule *r = &c->r;
	struct rxe2_dev *rdev;
	ssize_t ret;
	int id;

	mutex_lock(&rxe2_cfs_lock);
	rdev = rxe2_cfs_rule_dev_lock(c);
	if (!rdev) {
		ret = -ENODEV;
		goto out;
	}
	mutex_unlock(&rxe2_dev_lock);
	switch (field) {
	case RXE2_CFS_ACTION:
		ret = sysfs_emit(page, "%s\n", r->action < RXE2_FAULT_NUM ?
				 rxe2_fault_names[r->action] : "none");
		break;
	case RXE2_CFS_QPN:
	case RXE2_CFS_OPCODE:
		id = field == RXE2_CFS_QPN ? r->qpn : r->opcode;
		ret = id < 0 ? sysfs_emit(page, "any\n") :
			       sysfs_emit(page, "%d\n", id);
		break;
	case RXE2_CFS_EVERY:
		ret = sysfs_emit(page, "%u\n", r->every);
		break;
	case RXE2_CFS_RATE:
		ret = sysfs_emit(page, "%u\n", r->rate);
		break;
	case RXE2_CFS_COUNT:
		ret = sysfs_emit(page, "%u\n", r->count);
		break;
	default:
		ret = sysfs_emit(page, "%u\n", r->ms);
		break;
	}
out:
	mutex_unlock(&rxe2_cfs_lock);
	return ret;
}

/* a field is written while the rule is off: a live copy never changes */
static ssize_t rxe2_cfs_store(struct config_item *item, const char *page,
			      size_t len, enum rxe2_cfs_field field)
{
	struct rxe2_cfs_rule *c = to_cfs_rule(item);
	struct rxe2_dev *rdev;
	ssize_t ret = len;
	s64 val;

	if (rxe2_cfs_parse(field, page, &val))
		return -EINVAL;
	mutex_lock(&rxe2_cfs_lock);
	rdev = rxe2_cfs_rule_dev_lock(c);
	if (!rdev) {
		ret = -ENODEV;
		goto out;
	}
	if (rxe2_fault_live(rdev, &c->r))
		ret = -EBUSY;
	else
		rxe2_cfs_set(&c->r, field, val);
	mutex_unlock(&rxe2_dev_lock);
out:
	mutex_unlock(&rxe2_cfs_lock);
	return ret;
}

#define RXE2_CFS_FIELD(name, field)					\
static ssize_t rxe2_cfs_##name##_show(struct config_item *item,	\
				      char *page)			\
{									\
	return rxe2_cfs_show(item, page, field);			\
}									\
static ssize_t rxe2_cfs_##name##_store(struct config_item *item,	\
				       const char *page, size_t len)	\
{									\
	return rxe2_cfs_store(item, page, len, field);			\
}									\
CONFIGFS_ATTR(rxe2_cfs_, name)

RXE2_CFS_FIELD(action, RXE2_CFS_ACTION);
RXE2_CFS_FIELD(qpn, RXE2_CFS_QPN);
RXE2_CFS_FIELD(opcode, RXE2_CFS_OPCODE);
RXE2_CFS_FIELD(every, RXE2_CFS_EVERY);
RXE2_CFS_FIELD(rate, RXE2_CFS_RATE);
RXE2_CFS_FIELD(count, RXE2_CFS_COUNT);
RXE2_CFS_FIELD(ms, RXE2_CFS_MS);

/* rules/<name>/enable: 1 iff live in the device of the directory's name */
static ssize_t rxe2_cfs_enable_show(struct config_item *item, char *page)
{
	struct rxe2_cfs_rule *c = to_cfs_rule(item);
	struct rxe2_dev *rdev;
	bool live;

	mutex_lock(&rxe2_cfs_lock);
	rdev = rxe2_cfs_rule_dev_lock(c);
	if (!rdev) {
		mutex_unlock(&rxe2_cfs_lock);
		return -ENODEV;
	}
	live = rxe2_fault_live(rdev, &c->r);
	mutex_unlock(&rxe2_dev_lock);
	mutex_unlock(&rxe2_cfs_lock);
	return sysfs_emit(page, "%d\n", live);
}

static ssize_t rxe2_cfs_enable_store(struct config_item *item,
				     const char *page, size_t len)
{
	struct rxe2_cfs_rule *c = to_cfs_rule(item);
	struct rxe2_dev *rdev;
	unsigned int on;
	int ret = 0;

	if (kstrtouint(page, 0, &on) || on > 1)
		return -EINVAL;
	mutex_lock(&rxe2_cfs_lock);
	rdev = rxe2_cfs_rule_dev_lock(c);
	if (!rdev) {
		ret = -ENODEV;
		goto out;
	}
	if (on)
		ret = rxe2_fault_link(rdev, &c->r);
	else
		rxe2_fault_unlink_all(&c->r);
	mutex_unlock(&rxe2_dev_lock);
out:
	mutex_unlock(&rxe2_cfs_lock);
	return ret ? ret : len;
}

CONFIGFS_ATTR(rxe2_cfs_, enable);

/* rules/<name>/matched and fired: while live the device's, else the last */
static ssize_t rxe2_cfs_count_of(struct config_item *item, char *page,
				 bool fired)
{
	struct rxe2_cfs_rule *c = to_cfs_rule(item);
	struct rxe2_dev *rdev;
	u32 n;

	mutex_lock(&rxe2_cfs_lock);
	rdev = rxe2_cfs_rule_dev_lock(c);
	if (!rdev) {
		mutex_unlock(&rxe2_cfs_lock);
		return -ENODEV;
	}
	rxe2_fault_live(rdev, &c->r);
	mutex_unlock(&rxe2_dev_lock);
	n = fired ? c->r.fired : c->r.matched;
	mutex_unlock(&rxe2_cfs_lock);
	return sysfs_emit(page, "%u\n", n);
}

static ssize_t rxe2_cfs_matched_show(struct config_item *item, char *page)
{
	return rxe2_cfs_count_of(item, page, false);
}

static ssize_t rxe2_cfs_fired_show(struct config_item *item, char *page)
{
	return rxe2_cfs_count_of(item, page, true);
}

CONFIGFS_ATTR_RO(rxe2_cfs_, matched);
CONFIGFS_ATTR_RO(rxe2_cfs_, fired);

static struct configfs_attribute *rxe2_cfs_rule_attrs[] = {
	&rxe2_cfs_attr_action,
	&rxe2_cfs_attr_qpn,
	&rxe2_cfs_attr_opcode,
	&rxe2_cfs_attr_every,
	&rxe2_cfs_attr_rate,
	&rxe2_cfs_attr_count,
	&rxe2_cfs_attr_ms,
	&rxe2_cfs_attr_enable,
	&rxe2_cfs_attr_matched,
	&rxe2_cfs_attr_fired,
	NULL,
};

static void rxe2_cfs_rule_release(struct config_item *item)
{
	kfree(to_cfs_rule(item));
}

/*
 * Not const: ct_item_ops and ct_group_ops point to const operations
 * only from Linux 7.3 on, and a pointer to the writable kind fits both.
 */
static struct configfs_item_operations rxe2_cfs_rule_item_ops = {
	.release = rxe2_cfs_rule_release,
};

static const struct config_item_type rxe2_cfs_rule_type = {
	.ct_item_ops = &rxe2_cfs_rule_item_ops,
	.ct_attrs = rxe2_cfs_rule_attrs,
	.ct_owner = THIS_MODULE,
};

/* mkdir rules/<name>: a rule, off, every field unset */
static struct config_item *rxe2_cfs_rule_make(struct config_group *rules,
					      const char *name)
{
	struct rxe2_cfs_dev *d = container_of(rules, struct rxe2_cfs_dev,
					      rules);
	struct rxe2_cfs_rule *c = NULL;
	struct rxe2_dev *rdev;
	int ret = 0;

	mutex_lock(&rxe2_cfs_lock);
	rdev = rxe2_cfs_dev_lock(config_item_name(&d->group.cg_item));
	if (!rdev) {
		ret = -ENODEV;
		goto out;
	}
	mutex_unlock(&rxe2_dev_lock);
	if (d->nrules == RXE2_FAULT_RULES) {
		ret = -ENOSPC;
		goto out;
	}
	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c) {
		ret = -ENOMEM;
		goto out;
	}
	c->dev = d;
	c->r.action = RXE2_FAULT_NONE;
	c->r.qpn = -1;
	c->r.opcode = -1;
	c->r.id = ++rxe2_cfs_next_id;
	d->nrules++;
	config_item_init_type_name(&c->item, name, &rxe2_cfs_rule_type);
out:
	mutex_unlock(&rxe2_cfs_lock);
	return ret ? ERR_PTR(ret) : &c->item;
}

/* rmdir rules/<name>: the rule leaves whatever device it is live in */
static void rxe2_cfs_rule_drop(struct config_group *rules,
			       struct config_item *item)
{
	struct rxe2_cfs_rule *c = to_cfs_rule(item);

	mutex_lock(&rxe2_cfs_lock);
	mutex_lock(&rxe2_dev_lock);
	rxe2_fault_unlink_all(&c->r);
	mutex_unlock(&rxe2_dev_lock);
	c->dev->nrules--;
	mutex_unlock(&rxe2_cfs_lock);
	config_item_put(item);
}

static struct configfs_group_operations rxe2_cfs_rules_group_ops = {
	.make_item = rxe2_cfs_rule_make,
	.drop_item = rxe2_cfs_rule_drop,
};

static const struct config_item_type rxe2_cfs_rules_type = {
	.ct_group_ops = &rxe2_cfs_rules_group_ops,
	.ct_owner = THIS_MODULE,
};

static struct configfs_attribute *rxe2_cfs_dev_attrs[] = {
	&rxe2_cfs_attr_tx_drop,
	NULL,
};

static void rxe2_cfs_dev_release(struct config_item *item)
{
	kfree(to_cfs_dev(item));
}

static struct configfs_item_operations rxe2_cfs_dev_item_ops = {
	.release = rxe2_cfs_dev_release,
};

static const struct config_item_type rxe2_cfs_dev_type = {
	.ct_item_ops = &rxe2_cfs_dev_item_ops,
	.ct_attrs = rxe2_cfs_dev_attrs,
	.ct_owner = THIS_MODULE,
};

/*
 * mkdir <ibdev>: only for an rxe2 device of that name, as rdma_cm does
 * (a typo is ENODEV, not a directory that never works); rules/ with it
 */
static struct config_group *rxe2_cfs_dev_make(struct config_group *root,
					      const char *name)
{
	struct rxe2_cfs_dev *d;
	struct rxe2_dev *rdev;

	if (strlen(name) >= IB_DEVICE_NAME_MAX)
		return ERR_PTR(-ENODEV);
	rdev = rxe2_cfs_dev_lock(name);
	if (!rdev)
		return ERR_PTR(-ENODEV);
	mutex_unlock(&rxe2_dev_lock);
	d = kzalloc(sizeof(*d), GFP_KERNEL);
	if (!d)
		return ERR_PTR(-ENOMEM);
	config_group_init_type_name(&d->group, name, &rxe2_cfs_dev_type);
	config_group_init_type_name(&d->rules, "rules", &rxe2_cfs_rules_type);
	configfs_add_default_group(&d->rules, &d->group);
	return &d->group;
}

/*
 * rmdir <ibdev> (configfs refuses it while rules/ has an entry): the
 * device keeps its tx_drop, as rdma_cm's devices keep their settings
 */
static void rxe2_cfs_dev_drop(struct config_group *root,
			      struct config_item *item)
{
	configfs_remove_default_groups(to_config_group(item));
	config_item_put(item);
}

static struct configfs_group_operations rxe2_cfs_root_group_ops = {
	.make_group = rxe2_cfs_dev_make,
	.drop_item = rxe2_cfs_dev_drop,
};

static const struct config_item_type rxe2_cfs_root_type = {
	.ct_group_ops = &rxe2_cfs_root_group_ops,
	.ct_owner = THIS_MODULE,
};

static struct configfs_subsystem rxe2_cfs_subsys = {
	.su_group = {
		.cg_item = {
			.ci_namebuf = "rxe2",
			.ci_type = &rxe2_cfs_root_type,
		},
	},
};

/* module init: /sys/kernel/config/rxe2/ */
int rxe2_fault_cfs_init(void)
{
	int err;

	config_group_init(&rxe2_cfs_subsys.su_group);
	mutex_init(&rxe2_cfs_subsys.su_mutex);
	err = configfs_register_subsystem(&rxe2_cfs_subsys);
	if (err)
		mutex_destroy(&rxe2_cfs_subsys.su_mutex);
	return err;
}

/*
 * module exit: every directory below it pinned the module, so none is
 * left and no callback of ours runs any more
 */
void rxe2_fault_cfs_exit(void)
{
	configfs_unregister_subsystem(&rxe2_cfs_subsys);
	mutex_destroy(&rxe2_cfs_subsys.su_mutex);
}
