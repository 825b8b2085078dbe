// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * librxe2: mapping the queue rings the kernel allocates (uapi/rxe2-abi.h,
 * "Rings").  The kernel's description of a ring is checked before it is
 * mapped: a wrong size here would turn every later index computation
 * into an out-of-bounds access in the process.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rxe2.h"

_Static_assert(sizeof(struct rxe2_ring_hdr) == RXE2_RING_DATA_OFFSET,
	       "ring header and first slot offset disagree");
_Static_assert(sizeof(struct rxe2_send_wqe) == RXE2_SEND_WQE_HDR_SIZE,
	       "send WQE header size");
_Static_assert(sizeof(struct rxe2_recv_wqe) == RXE2_RECV_WQE_HDR_SIZE,
	       "receive WQE header size");
_Static_assert(sizeof(struct rxe2_cqe) == RXE2_CQE_SIZE, "CQE size");
_Static_assert(sizeof(struct rxe2_sge) == 16, "SGE size");

static uint32_t rxe2_round16(uint64_t n)
{
	n = (n + 15) & ~(uint64_t)15;
	return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

/* Smallest slot that holds a receive WQE with max_sge SGEs */
uint32_t rxe2_recv_slot_size(uint32_t max_sge)
{
	return rxe2_round16(RXE2_RECV_WQE_HDR_SIZE +
			    (uint64_t)max_sge * sizeof(struct rxe2_sge));
}

/* Smallest slot that holds a send WQE with max_sge SGEs or max_inline bytes */
uint32_t rxe2_send_slot_size(uint32_t max_sge, uint32_t max_inline)
{
	uint64_t sges = (uint64_t)max_sge * sizeof(struct rxe2_sge);
	uint64_t body = sges > max_inline ? sges : max_inline;

	return rxe2_round16(RXE2_SEND_WQE_HDR_SIZE + body);
}

/*
 * Map the ring described by info, after checking that it is a ring this
 * provider can use: a power-of-two slot count of at least min_slots,
 * slots of at least min_slot_size bytes, and a mapping exactly as large
 * as header plus slots rounded to pages.  Returns 0 or an errno value;
 * EPROTO means the kernel broke the ABI.
 */
int rxe2_ring_map(struct ibv_context *ibctx, struct rxe2_ring *ring,
		  enum rxe2_ring_kind kind, const struct rxe2_ring_info *info,
		  uint32_t min_slots, uint32_t min_slot_size)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t need, rounded;
	void *map;

	memset(ring, 0, sizeof(*ring));

	if (!info->num_slots || (info->num_slots & (info->num_slots - 1)) ||
	    info->num_slots < min_slots)
		return EPROTO;
	if (!info->slot_size || info->slot_size % 16 ||
	    info->slot_size < min_slot_size)
		return EPROTO;
	need = RXE2_RING_DATA_OFFSET +
	       (uint64_t)info->num_slots * info->slot_size;
	rounded = (need + page - 1) & ~(page - 1);
	if (info->mmap_size != rounded || info->mmap_offset % page)
		return EPROTO;

	map = mmap(NULL, info->mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		   ibctx->cmd_fd, (off_t)info->mmap_offset);
	if (map == MAP_FAILED)
		return errno;

	ring->map = map;
	ring->map_size = info->mmap_size;
	ring->hdr = map;
	ring->slots = (uint8_t *)map + RXE2_RING_DATA_OFFSET;
	ring->num_slots = info->num_slots;
	ring->slot_size = info->slot_size;

	/*
	 * Our counter starts wherever the kernel initialised it; from now
	 * on only our private copy is authoritative.
	 */
	if (kind == RXE2_RING_CQ)
		ring->mine = __atomic_load_n(&ring->hdr->consumer,
					     __ATOMIC_RELAXED);
	else
		ring->mine = __atomic_load_n(&ring->hdr->producer,
					     __ATOMIC_RELAXED);
	return 0;
}

void rxe2_ring_unmap(struct rxe2_ring *ring)
{
	if (ring->map)
		munmap(ring->map, ring->map_size);
	memset(ring, 0, sizeof(*ring));
}

/* An all-zero ring_info: what the kernel sends for a ring it did not make */
bool rxe2_ring_info_absent(const struct rxe2_ring_info *info)
{
	static const struct rxe2_ring_info zero;

	return !memcmp(info, &zero, sizeof(zero));
}
