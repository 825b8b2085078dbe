/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rxe2: the device.  Shared definitions of the rdma_rxe2 module.
 */
#ifndef RXE2_H
#define RXE2_H

#include <linux/netdevice.h>
#include <linux/netfilter.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "../uapi/rxe2-abi.h"

#define RXE2_PORT 1

/*
 * Object tables.  Each table hands out indexes in [min, max] from an
 * xarray and counts live objects so that the device limits reported in
 * struct ib_device_attr are enforced exactly.
 */
struct rxe2_table {
	struct xarray xa;
	u32 next;		/* cyclic allocation hint */
	u32 min;
	u32 max;
	atomic_t count;
	u32 limit;		/* the ib_device_attr limit this table enforces */
};

/*
 * Limits chosen at module load (module parameters named like the
 * ib_device_attr fields they set); a device copies them when it is
 * created, so they never change under a live device.
 */
struct rxe2_params {
	unsigned int max_qp;
	unsigned int max_qp_wr;
	unsigned int max_send_sge;
	unsigned int max_recv_sge;
	unsigned int max_cq;
	unsigned int max_cqe;
	unsigned int max_mr;
	unsigned int max_pd;
	unsigned int max_srq;
	unsigned int max_srq_wr;
	unsigned int max_srq_sge;
	unsigned int max_ah;
	unsigned int max_inline_data;
	unsigned int max_mcast_grp;
	unsigned int max_mcast_qp_attach;
	unsigned int max_dm_size;	/* bytes, page multiple; 0: no DM */
};

extern struct rxe2_params rxe2_params;

/*
 * Why a RoCEv2 packet was dropped.  Each drop is counted under exactly one
 * reason; the port counter rx_dropped is their sum (rxe2_counters.c).
 */
enum rxe2_drop_reason {
	RXE2_DROP_NO_QP,	/* no such QP or group, or the port is down */
	RXE2_DROP_MALFORMED,	/* lengths, headers, opcode for the QP type */
	RXE2_DROP_ICRC,		/* invariant CRC mismatch */
	RXE2_DROP_BACKLOG,	/* the QP's receive queue full, or QP dying */
	RXE2_DROP_QP_STATE,	/* the QP's state takes no such packet */
	RXE2_DROP_BAD_QKEY,	/* UD: a Q_Key not the QP's */
	RXE2_DROP_NO_RECV,	/* no usable receive WQE (UD; RC after RNR) */
	RXE2_DROP_TOO_LONG,	/* UD: longer than the receive buffers */
	RXE2_DROP_XRC_SRQ,	/* XRC: no XRC SRQ of the target's domain */
	RXE2_DROP_NUM
};

/*
 * Data path events, counted with an atomic: rare ones (errors, NAKs,
 * retries, ODP faults) or per message.  The port counters in
 * rxe2_counters.c name them; those rdma_rxe also has carry its names.
 */
enum rxe2_dp_counter {
	RXE2_DPC_DUP_REQUEST,		/* requests with an old PSN */
	RXE2_DPC_OUT_OF_SEQ_REQUEST,	/* PSN gaps seen: sequence NAKs sent */
	RXE2_DPC_RCVD_RNR_ERR,		/* RNR NAKs received */
	RXE2_DPC_SEND_RNR_ERR,		/* RNR NAKs sent */
	RXE2_DPC_RCVD_SEQ_ERR,		/* sequence NAKs received */
	RXE2_DPC_RETRY_EXCEEDED,	/* WQEs completed RETRY_EXC_ERR */
	RXE2_DPC_RNR_RETRY_EXCEEDED,	/* WQEs completed RNR_RETRY_EXC_ERR */
	RXE2_DPC_COMPLETER_RETRY,	/* go-back-N rewinds, any cause */
	RXE2_DPC_SEND_ERR,		/* packets that could not be sent */
	RXE2_DPC_LINK_DOWNED,		/* port ACTIVE -> DOWN */
	RXE2_DPC_ACK_TIMEOUTS,		/* retry timer expired, resent */
	RXE2_DPC_REORDER_HELD,		/* RC packets kept: came early */
	RXE2_DPC_READ_REREQUESTS,	/* READs asked again for a part */
	RXE2_DPC_RESEND_SKIPPED,	/* passes over what was not resent */
	RXE2_DPC_TAIL_PROBES,		/* resent before the ACK timeout */
	RXE2_DPC_ONE_COPY,		/* loopback requests read in place */
	RXE2_DPC_STREAM_HANDOFFS,	/* SQs handed to a CPU of their own */
	RXE2_DPC_LIVE_SQ_POSTS,		/* runs that found posts ringing none */
	/* inline-receive: completions that carried their data */
	RXE2_DPC_INLINE_RECV,
	RXE2_DPC_FAULT_TX_DROPS,	/* packets lost by tx_drop */
	RXE2_DPC_FAULT_INJECTED,	/* firings of the fault rules */
	/* on-demand paging (rxe2_odp.c); the last two are gauges */
	RXE2_DPC_ODP_PAGE_FAULTS,	/* accesses that had to fault pages in */
	RXE2_DPC_ODP_PAGE_FAULT_PAGES,	/* pages they mapped */
	RXE2_DPC_ODP_INVALIDATIONS,	/* notifier calls that unmapped pages */
	RXE2_DPC_ODP_INVALIDATION_PAGES,	/* pages they unmapped */
	RXE2_DPC_ODP_PREFETCHES,	/* advise_mr SGEs handled */
	RXE2_DPC_ODP_PREFETCH_PAGES,	/* pages they mapped */
	RXE2_DPC_ODP_FAILED_RESOLUTIONS,	/* faults the process cannot serve */
	RXE2_DPC_ODP_MRS_NOT_FOUND,	/* advise_mr naming no ODP MR */
	RXE2_DPC_ODP_MR_PAGES,		/* size of the live ODP MRs, pages */
	RXE2_DPC_ODP_MRS,		/* live ODP MRs */
	RXE2_DPC_NUM
};

/*
 * Per-packet events, counted per CPU (no shared cache line on the data
 * path) and summed when read.  Bytes are RoCEv2 UDP payload: BTH to
 * ICRC, pad included; a packet handed over locally counts what it would
 * have been on the wire.
 */
enum rxe2_pcpu_counter {
	RXE2_PC_SENT_PKTS,
	RXE2_PC_SENT_BYTES,
	RXE2_PC_RCVD_PKTS,
	RXE2_PC_RCVD_BYTES,
	RXE2_PC_ACK_DEFERRED,		/* RC requests without AckReq taken */
	RXE2_PC_RDMA_SENDS,		/* SEND WQEs completed successfully */
	RXE2_PC_RDMA_RECVS,		/* receive WQEs completed successfully */
	RXE2_PC_NUM
};

struct rxe2_pcpu_counters {
	u64 v[RXE2_PC_NUM];
};

/* the port counters: every source counter, and the sum of the drops */
#define RXE2_NUM_STATS	(RXE2_PC_NUM + RXE2_DPC_NUM + RXE2_DROP_NUM + 1)

/*
 * A QP counter (rxe2_counters.c): per CPU, one u64 per port counter,
 * indexed as rdma_stat_desc lists them.
 */
struct rxe2_counter_vals {
	u64 v[RXE2_NUM_STATS];
};

struct rxe2_counter {
	struct rxe2_counter_vals __percpu *vals;
	unsigned int nqps;	/* QPs bound, under the rdma_counter's lock */
};

struct rxe2_ic_map;

/* fault injection rules (rxe2_fault.c) */
enum rxe2_fault_action {
	RXE2_FAULT_DROP,	/* transmit: in this order, up to REORDER */
	RXE2_FAULT_DUP,
	RXE2_FAULT_CORRUPT,
	RXE2_FAULT_DELAY,
	RXE2_FAULT_REORDER,
	RXE2_FAULT_RNR_NAK,	/* responder: up to REMOP_NAK */
	RXE2_FAULT_ACCESS_NAK,
	RXE2_FAULT_REMOP_NAK,
	RXE2_FAULT_ODP_FAIL,
	RXE2_FAULT_NUM,
	RXE2_FAULT_NONE = RXE2_FAULT_NUM
};

/*
 * rdev->fault_on: the hooks live rules act in, and whether a packet
 * waits for the next one to overtake it
 */
#define RXE2_FAULT_ON_TX	BIT(0)	/* drop .. reorder */
#define RXE2_FAULT_ON_RNR	BIT(1)	/* rnr_nak */
#define RXE2_FAULT_ON_RESP	BIT(2)	/* access_nak, remop_nak */
#define RXE2_FAULT_ON_ODP	BIT(3)	/* odp_fail */
#define RXE2_FAULT_ON_HELD	BIT(4)	/* a reordered packet is held */
#define RXE2_FAULT_RULES	8

struct rxe2_fault_rule {
	u64 id;			/* its rules/<name>/ directory's */
	enum rxe2_fault_action action;	/* RXE2_FAULT_NONE: not set yet */
	int qpn;		/* -1: any */
	int opcode;		/* -1: any */
	u32 every, rate, count, ms;
	u32 matched, fired;	/* while live: a spent rule stops counting */
};

/* the device's live fault rules (rxe2_fault.c), all under lock */
struct rxe2_fault {
	/* everything below, and rdev->fault_on's writes; IRQs off */
	spinlock_t lock;
	unsigned int nrules;
	struct rxe2_fault_rule rules[RXE2_FAULT_RULES];
	struct list_head held;		/* packets delayed or reordered */
	unsigned int nheld;
	bool reorder_held;		/* one of them waits to be overtaken */
	bool armed;			/* work queued, to run at armed_at */
	unsigned long armed_at;		/* jiffies */
	struct delayed_work work;	/* sends held packets when due */
};

/*
 * Copies of loopback packets for the taps of the device's netdev, in a
 * ring shown by a work item in the order they were sent (rxe2_tap.c).
 */
struct rxe2_tap {
	spinlock_t lock;		/* senders: the ring's head */
	u8 *ring;			/* made at the first copy */
	u32 head;			/* bytes ever written to it */
	u32 tail;			/* bytes ever shown from it */
	struct mutex show_lock;		/* one shows them at a time: order */
	bool busy;			/* the work item is showing them */
	struct delayed_work work;
};

struct rxe2_dev {
	struct ib_device ibdev;
	struct ib_device_attr attr;
	u32 max_inline_data;		/* per-QP limit, not in ib_device_attr */
	struct net_device *ndev;	/* held until dealloc_driver */
	netdevice_tracker ndev_tracker;
	struct list_head list;		/* rxe2_dev_list, under rxe2_dev_lock */

	/*
	 * Port facts derived from ndev, refreshed by the netdevice notifier
	 * under RTNL; readers use READ_ONCE().
	 */
	enum ib_mtu active_mtu;
	bool port_active;		/* last state reported by an event */

	/* object tables: rxe2_verbs.h owns their use */
	struct rxe2_table pd_table;
	struct rxe2_table ah_table;
	struct rxe2_table mr_table;
	struct rxe2_table cq_table;
	struct rxe2_table qp_table;
	struct rxe2_table srq_table;
	struct rxe2_table wq_table;
	atomic_t ind_tbl_count;		/* RSS indirection tables */
	atomic_t mw_count;		/* memory windows, against attr.max_mw */
	atomic64_t dm_used;		/* device memory bytes, max_dm_size */
	/* reregs that published an object (struct rxe2_mr, seq) */
	u64 mr_seq;

	/* NUMA node -> interconnect id; NULL: the identity (rxe2_ic.c) */
	struct rxe2_ic_map __rcu *ic_map;

	/* multicast groups and QP attachments, under rxe2_mcg_mutex */
	unsigned int mcg_count;
	unsigned int mcg_attached;

	atomic64_t rx_drops[RXE2_DROP_NUM];	/* RoCEv2 packets refused */
	/* fault injection (rxe2_fault.c): tx_drop, lose one packet in N */
	u32 fault_tx_drop;		/* N, 0: off; READ_ONCE/WRITE_ONCE */
	atomic_t fault_tx_seq;		/* packets sent since N was set */
	/* RXE2_FAULT_ON_* bits: READ_ONCE, written under fault.lock */
	unsigned int fault_on;
	atomic64_t dp_cnt[RXE2_DPC_NUM];	/* data path events */
	struct rxe2_pcpu_counters __percpu *pcnt;	/* per-packet events */
	struct xarray counters;		/* QP counters by id (rxe2_counters.c) */
	/*
	 * Flow steering (rxe2_flow.c).  flow_mutex, taken under RTNL,
	 * guards the rest; the netfilter hooks read flows under RCU.
	 */
	struct mutex flow_mutex;
	struct list_head flows;		/* the order frames meet them */
	unsigned int nflows;
	u64 flow_seq;
	bool flow_hooked;		/* flow_ops registered in flow_net */
	bool flow_dead;			/* the netdev is unregistering */
	struct net *flow_net;
	struct nf_hook_ops flow_ops[2];	/* ingress, egress */
	struct rxe2_fault fault;	/* cold: only while rules are set */
	struct rxe2_tap tap;		/* cold: only while a tap watches */
};

static inline void rxe2_dp_count(struct rxe2_dev *rdev, enum rxe2_dp_counter c)
{
	atomic64_inc(&rdev->dp_cnt[c]);
}

static inline void rxe2_pcount(struct rxe2_dev *rdev,
			       enum rxe2_pcpu_counter c, u64 n)
{
	this_cpu_add(rdev->pcnt->v[c], n);
}

/* a packet sent, or received and taken, of len bytes (BTH to ICRC) */
static inline void rxe2_count_pkt(struct rxe2_dev *rdev, bool sent, u32 len)
{
	enum rxe2_pcpu_counter c = sent ? RXE2_PC_SENT_PKTS : RXE2_PC_RCVD_PKTS;

	this_cpu_inc(rdev->pcnt->v[c]);
	this_cpu_add(rdev->pcnt->v[c + 1], len);
}

static inline void rxe2_rx_dropped(struct rxe2_dev *rdev,
				   enum rxe2_drop_reason why)
{
	atomic64_inc(&rdev->rx_drops[why]);
}

static inline struct rxe2_dev *to_rdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct rxe2_dev, ibdev);
}

struct rxe2_ucontext {
	struct ib_ucontext ibuc;
};

static inline struct rxe2_ucontext *to_ruc(struct ib_ucontext *ibuc)
{
	return container_of(ibuc, struct rxe2_ucontext, ibuc);
}

/* rxe2_counters.c: port counters and QP counters */
void rxe2_counters_init(void);
extern const struct ib_device_ops rxe2_counter_ops;
/* which port counter each source counter is */
extern u8 rxe2_stat_of_pc[RXE2_PC_NUM];
extern u8 rxe2_stat_of_dp[RXE2_DPC_NUM];
extern u8 rxe2_stat_of_drop[RXE2_DROP_NUM];

/* rxe2_flow.c: flow steering */
extern const struct ib_device_ops rxe2_flow_ops;
void rxe2_flows_init(struct rxe2_dev *rdev);
void rxe2_flows_netdev_gone(struct rxe2_dev *rdev);
void rxe2_flows_fini(struct rxe2_dev *rdev);
struct rxe2_qp;
void rxe2_flow_loopback(struct rxe2_qp *sender, struct sk_buff *skb,
			bool sniffed);

/* rxe2_flow_counters.c: counters objects; the rest is in rxe2_flow.h */
extern const struct ib_device_ops rxe2_flow_counters_ops;

/* rxe2_device.c */
int rxe2_dev_add(const char *ibdev_name, struct net_device *ndev);
/* a registered device, with a reference: drop it with ib_device_put() */
struct rxe2_dev *rxe2_dev_get_by_netdev(struct net_device *ndev);
void rxe2_netdev_unregistering(struct net_device *ndev);
/* under RTNL: re-read the netdev, report a state change as an event */
void rxe2_port_refresh(struct rxe2_dev *rdev);
extern struct mutex rxe2_dev_lock;
extern struct list_head rxe2_dev_list;

/* rxe2_net.c */
int rxe2_net_init(void);
void rxe2_net_exit(void);
int rxe2_add_gid(const struct ib_gid_attr *attr, void **context);
int rxe2_del_gid(const struct ib_gid_attr *attr, void **context);
void rxe2_gids_forget(struct rxe2_dev *rdev);
struct rxe2_dev *rxe2_gid_lookup(const struct net *net,
				 const struct in6_addr *addr);

/* rxe2_fault.c: fault injection, configfs's rxe2/<ibdev>/ */
int rxe2_fault_cfs_init(void);
void rxe2_fault_cfs_exit(void);
bool rxe2_fault_tx_drop_slow(struct rxe2_dev *rdev, u32 every);
void rxe2_fault_init(struct rxe2_dev *rdev);
void rxe2_fault_fini(struct rxe2_dev *rdev);
enum rxe2_fault_action rxe2_fault_fire(struct rxe2_dev *rdev,
				       unsigned int hook, u32 qpn, u8 opcode,
				       unsigned int *ms);
void rxe2_fault_xmit(struct rxe2_dev *rdev, struct sk_buff *skb, bool ipv6,
		     enum rxe2_fault_action act, unsigned int ms);
void rxe2_fault_overtaken_slow(struct rxe2_dev *rdev);

/* is a fault rule live for this hook (RXE2_FAULT_ON_*)? */
static inline bool rxe2_fault_on(struct rxe2_dev *rdev, unsigned int hook)
{
	return unlikely(READ_ONCE(rdev->fault_on) & hook);
}

/* a packet left: a reordered one held for it follows */
static inline void rxe2_fault_overtaken(struct rxe2_dev *rdev)
{
	if (rxe2_fault_on(rdev, RXE2_FAULT_ON_HELD))
		rxe2_fault_overtaken_slow(rdev);
}

/* is the packet about to be sent lost (fault injection)? */
static inline bool rxe2_fault_tx_drop(struct rxe2_dev *rdev)
{
	u32 every = READ_ONCE(rdev->fault_tx_drop);

	return unlikely(every) && rxe2_fault_tx_drop_slow(rdev, every);
}

/* rxe2_ic.c: interconnects, the device's ic_map sysfs file */
extern struct device_attribute dev_attr_ic_map;
/* distinct interconnect ids over the online nodes */
u32 rxe2_ic_count(struct rxe2_dev *rdev);
void rxe2_ic_query_mr(struct ib_mr *ibmr, struct rxe2_query_mr_resp *resp);
void rxe2_ic_fini(struct rxe2_dev *rdev);

/* rxe2_dv.c: the driver's uverbs ioctl methods (ib_device.driver_def) */
extern const struct uapi_definition rxe2_uapi_defs[];

#endif /* RXE2_H */
