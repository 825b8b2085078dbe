// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2: interconnects.  A software device reaches memory through the
 * CPU's memory topology, so an "interconnect" is a set of NUMA nodes:
 * by default node N is interconnect N, and the device's sysfs file
 * ic_map regroups nodes (docs/architecture.md, "Interconnects").
 *
 * The map is read locklessly (RCU) by queries; a write replaces it
 * whole.  NULL means the default, one interconnect per node.
 */
#include <linux/nodemask.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "rxe2.h"
#include "rxe2_verbs.h"

struct rxe2_ic_map {
	struct rcu_head rcu;
	u16 id[];			/* nr_node_ids entries */
};

/* serializes writers of every device's map */
static DEFINE_MUTEX(rxe2_ic_lock);

static u16 rxe2_ic_of(const struct rxe2_ic_map *map, int nid)
{
	return map ? map->id[nid] : nid;
}

u32 rxe2_ic_count(struct rxe2_dev *rdev)
{
	const struct rxe2_ic_map *map;
	int nid, other;
	u32 n = 0;

	rcu_read_lock();
	map = rcu_dereference(rdev->ic_map);
	for_each_online_node(nid) {
		bool seen = false;

		for_each_online_node(other) {
			if (other >= nid)
				break;
			if (rxe2_ic_of(map, other) == rxe2_ic_of(map, nid)) {
				seen = true;
				break;
			}
		}
		if (!seen)
			n++;
	}
	rcu_read_unlock();
	return n;
}

/*
 * The one interconnect behind every node in @nodes, in *@id; false when
 * @nodes is empty or spans more than one.
 */
static bool rxe2_ic_single(struct rxe2_dev *rdev, const nodemask_t *nodes,
			   u16 *id)
{
	const struct rxe2_ic_map *map;
	bool found = false, one = true;
	int nid;

	rcu_read_lock();
	map = rcu_dereference(rdev->ic_map);
	for_each_node_mask(nid, *nodes) {
		u16 ic = rxe2_ic_of(map, nid);

		if (found && ic != *id) {
			one = false;
			break;
		}
		*id = ic;
		found = true;
	}
	rcu_read_unlock();
	return found && one;
}

/*
 * An operation's id is valid when the MR allows the operation and all
 * its resident pages sit behind one interconnect.  Receives and RDMA
 * WRITEs are placed through the same path as RDMA READs are read, so
 * the three ids, when valid, are the same.  An MR with no resident page
 * (nothing pinned yet) has no valid id.
 */
void rxe2_ic_query_mr(struct ib_mr *ibmr, struct rxe2_query_mr_resp *resp)
{
	struct rxe2_dev *rdev = to_rdev(ibmr->device);
	nodemask_t nodes;
	int access;
	u16 id;

	memset(resp, 0, sizeof(*resp));
	if (!rxe2_mr_resident_nodes(ibmr, &nodes, &access))
		return;
	if (!rxe2_ic_single(rdev, &nodes, &id))
		return;
	if (access & IB_ACCESS_LOCAL_WRITE) {
		resp->ic_id_validity |= RXE2_QUERY_MR_VALIDITY_RECV_IC_ID;
		resp->recv_ic_id = id;
	}
	if (access & IB_ACCESS_REMOTE_READ) {
		resp->ic_id_validity |= RXE2_QUERY_MR_VALIDITY_RDMA_READ_IC_ID;
		resp->rdma_read_ic_id = id;
	}
	if (access & IB_ACCESS_REMOTE_WRITE) {
		resp->ic_id_validity |= RXE2_QUERY_MR_VALIDITY_RDMA_RECV_IC_ID;
		resp->rdma_recv_ic_id = id;
	}
}

/* "node:id" for every online node, comma-separated */
static ssize_t ic_map_show(struct device *device,
			   struct device_attribute *attr, char *buf)
{
	struct rxe2_dev *rdev = to_rdev(rdma_device_to_ibdev(device));
	const struct rxe2_ic_map *map;
	const char *sep = "";
	int len = 0, nid;

	rcu_read_lock();
	map = rcu_dereference(rdev->ic_map);
	for_each_online_node(nid) {
		len += sysfs_emit_at(buf, len, "%s%d:%u", sep, nid,
				     rxe2_ic_of(map, nid));
		sep = ",";
	}
	rcu_read_unlock();
	len += sysfs_emit_at(buf, len, "\n");
	return len;
}

/* "node:id[,node:id...]"; unnamed nodes keep their own number */
static struct rxe2_ic_map *rxe2_ic_parse(char *s)
{
	struct rxe2_ic_map *map;
	unsigned long *named;
	char *tok;
	int nid;

	map = kmalloc(struct_size(map, id, nr_node_ids), GFP_KERNEL);
	named = bitmap_zalloc(nr_node_ids, GFP_KERNEL);
	if (!map || !named)
		goto nomem;
	for (nid = 0; nid < nr_node_ids; nid++)
		map->id[nid] = nid;

	while ((tok = strsep(&s, ",")) != NULL) {
		char *node_s = strsep(&tok, ":");
		unsigned int node;
		u16 id;

		if (!tok || kstrtouint(node_s, 10, &node) ||
		    kstrtou16(tok, 10, &id))
			goto inval;
		if (node >= nr_node_ids || !node_possible(node) ||
		    test_and_set_bit(node, named))
			goto inval;
		map->id[node] = id;
	}
	bitmap_free(named);
	return map;

inval:
	bitmap_free(named);
	kfree(map);
	return ERR_PTR(-EINVAL);
nomem:
	bitmap_free(named);
	kfree(map);
	return ERR_PTR(-ENOMEM);
}

/* an empty write restores the default map */
static ssize_t ic_map_store(struct device *device,
			    struct device_attribute *attr, const char *buf,
			    size_t count)
{
	struct rxe2_dev *rdev = to_rdev(rdma_device_to_ibdev(device));
	struct rxe2_ic_map *map = NULL, *old;
	char *s;

	s = kstrndup(buf, count, GFP_KERNEL);
	if (!s)
		return -ENOMEM;
	strim(s);
	if (*s)
		map = rxe2_ic_parse(s);
	kfree(s);
	if (IS_ERR(map))
		return PTR_ERR(map);

	mutex_lock(&rxe2_ic_lock);
	old = rcu_replace_pointer(rdev->ic_map, map,
				  lockdep_is_held(&rxe2_ic_lock));
	mutex_unlock(&rxe2_ic_lock);
	if (old)
		kfree_rcu(old, rcu);
	return count;
}

DEVICE_ATTR_RW(ic_map);

/* from dealloc_driver: no sysfs writer or query is left */
void rxe2_ic_fini(struct rxe2_dev *rdev)
{
	kfree(rcu_dereference_protected(rdev->ic_map, true));
}
