// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * memcpy bandwidth of one core over 64 KiB blocks, in MB/s: the ceiling
 * for any software RDMA device in the same machine, printed next to the
 * perftest numbers by make bench.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BLOCK (64 * 1024)
#define SPAN (16 * 1024 * 1024)	/* larger than the caches */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(void)
{
	char *src = malloc(SPAN), *dst = malloc(SPAN);
	double start, elapsed;
	size_t bytes = 0, off = 0;

	if (!src || !dst)
		return 1;
	memset(src, 0x5a, SPAN);
	memset(dst, 0, SPAN);
	start = now();
	do {
		memcpy(dst + off, src + off, BLOCK);
		bytes += BLOCK;
		off = (off + BLOCK) % SPAN;
	} while ((elapsed = now() - start) < 1.0);
	/* keep the copies observable */
	if (dst[SPAN / 2] != 0x5a)
		return 1;
	printf("%.0f\n", bytes / elapsed / 1e6);
	return 0;
}
