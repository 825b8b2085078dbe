// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * mpi_bench: the MPI rows of make bench.  Two ranks; rank 0 prints.
 *
 *   mpi_bench lat SIZE ITERS   ping-pong, half the round trip in usec
 *   mpi_bench bw SIZE ITERS    streaming: ITERS messages in windows of 64
 *                              non-blocking sends, then one reply; MB/s
 *
 * Every message carries a pattern of its iteration and is checked byte
 * for byte on arrival, so a fast wrong answer is no answer: a mismatch
 * prints where and exits 1.  The first tenth of the iterations warms up.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 64

static void fill(unsigned char *buf, size_t size, unsigned int iter)
{
	size_t i;

	for (i = 0; i < size; i++)
		buf[i] = (unsigned char)(iter * 131 + i * 7 + 1);
}

static void check(const unsigned char *buf, size_t size, unsigned int iter)
{
	size_t i;

	for (i = 0; i < size; i++) {
		unsigned char want = (unsigned char)(iter * 131 + i * 7 + 1);

		if (buf[i] != want) {
			fprintf(stderr,
				"mpi_bench: message %u byte %zu is 0x%02x, not 0x%02x\n",
				iter, i, buf[i], want);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
	}
}

/* ping-pong: rank 0 sends iteration i, rank 1 checks it and echoes it */
static double pingpong(int rank, unsigned char *buf, size_t size,
		       unsigned int iters)
{
	unsigned int warm = iters / 10, i;
	int peer = !rank;
	double t0 = 0;

	for (i = 0; i < warm + iters; i++) {
		if (i == warm)
			t0 = MPI_Wtime();
		if (rank == 0) {
			fill(buf, size, i);
			MPI_Send(buf, (int)size, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
			memset(buf, 0, size);
			MPI_Recv(buf, (int)size, MPI_BYTE, peer, 0, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			check(buf, size, i);
		} else {
			MPI_Recv(buf, (int)size, MPI_BYTE, peer, 0, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			check(buf, size, i);
			MPI_Send(buf, (int)size, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
		}
	}
	return (MPI_Wtime() - t0) * 1e6 / iters / 2;
}

/* streaming: windows of WINDOW sends from rank 0, each window acked */
static double stream(int rank, size_t size, unsigned int iters)
{
	unsigned int windows = (iters + WINDOW - 1) / WINDOW;
	unsigned int warm = windows / 10, w, j;
	MPI_Request req[WINDOW];
	MPI_Status st[WINDOW];
	unsigned char *bufs;
	double t0 = 0;
	char ack = 0;

	bufs = malloc(size ? size * WINDOW : 1);
	if (!bufs)
		MPI_Abort(MPI_COMM_WORLD, 1);
	for (w = 0; w < warm + windows; w++) {
		if (w == warm)
			t0 = MPI_Wtime();
		for (j = 0; j < WINDOW; j++) {
			unsigned char *b = bufs + j * size;

			if (rank == 0) {
				fill(b, size, w * WINDOW + j);
				MPI_Isend(b, (int)size, MPI_BYTE, 1, 0,
					  MPI_COMM_WORLD, &req[j]);
			} else {
				memset(b, 0, size);
				MPI_Irecv(b, (int)size, MPI_BYTE, 0, 0,
					  MPI_COMM_WORLD, &req[j]);
			}
		}
		MPI_Waitall(WINDOW, req, st);
		if (rank == 1) {
			for (j = 0; j < WINDOW; j++)
				check(bufs + j * size, size, w * WINDOW + j);
			MPI_Send(&ack, 1, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
		} else {
			MPI_Recv(&ack, 1, MPI_BYTE, 1, 1, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
		}
	}
	free(bufs);
	return (double)size * WINDOW * windows /
	       ((MPI_Wtime() - t0) * 1e6);
}

int main(int argc, char **argv)
{
	unsigned int iters;
	unsigned char *buf;
	int rank, nranks;
	size_t size;
	double v;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	if (argc != 4 || nranks != 2 ||
	    (strcmp(argv[1], "lat") && strcmp(argv[1], "bw"))) {
		if (rank == 0)
			fprintf(stderr, "usage: mpirun -np 2 mpi_bench lat|bw SIZE ITERS\n");
		MPI_Finalize();
		return 2;
	}
	size = strtoul(argv[2], NULL, 0);
	iters = strtoul(argv[3], NULL, 0);
	buf = malloc(size ? size : 1);
	if (!buf || !iters)
		MPI_Abort(MPI_COMM_WORLD, 2);
	if (!strcmp(argv[1], "lat"))
		v = pingpong(rank, buf, size, iters);
	else
		v = stream(rank, size, iters);
	if (rank == 0)
		printf("%s %zu %u %.2f\n", argv[1], size, iters, v);
	free(buf);
	MPI_Finalize();
	return 0;
}
