// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * udp_lat: the kernel's own floor under bench-lat's two-device rows.  A
 * UDP ping-pong of 2-byte datagrams, both sides busy-polling a
 * non-blocking socket, as perftest's sides poll their CQs: half the
 * median round trip in usec.  The same path an RDMA packet between two
 * namespaces takes (IP, the veth, the softirq), without a device.
 *
 *   udp_lat server PORT
 *   udp_lat client ADDR PORT ITERS
 *
 * The server echoes until it gets an empty datagram.  The client checks
 * that every answer is the one it sent.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* busy-poll one datagram; its length, or -1 */
static ssize_t spin_recv(int fd, void *buf, size_t len,
			 struct sockaddr_in *from)
{
	socklen_t flen = sizeof(*from);
	ssize_t n;

	do {
		n = recvfrom(fd, buf, len, 0, (struct sockaddr *)from, &flen);
	} while (n < 0 && errno == EAGAIN);
	return n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int server(int fd)
{
	struct sockaddr_in from;
	char buf[64];
	ssize_t n;

	for (;;) {
		n = spin_recv(fd, buf, sizeof(buf), &from);
		if (n <= 0)
			return n < 0;
		sendto(fd, buf, n, 0, (struct sockaddr *)&from, sizeof(from));
	}
}

static int client(int fd, struct sockaddr_in *to, unsigned int iters)
{
	double *rtt = calloc(iters, sizeof(*rtt));
	struct sockaddr_in from;
	unsigned int i;
	uint16_t v, got;

	if (!rtt)
		return 1;
	for (i = 0; i < iters; i++) {
		double t0 = now_us();

		v = (uint16_t)(i + 1);
		if (sendto(fd, &v, sizeof(v), 0, (struct sockaddr *)to,
			   sizeof(*to)) != sizeof(v) ||
		    spin_recv(fd, &got, sizeof(got), &from) != sizeof(got) ||
		    got != v) {
			fprintf(stderr, "udp_lat: round %u failed\n", i);
			return 1;
		}
		rtt[i] = now_us() - t0;
	}
	sendto(fd, "", 0, 0, (struct sockaddr *)to, sizeof(*to));
	qsort(rtt, iters, sizeof(*rtt), cmp_double);
	printf("%.2f\n", rtt[iters / 2] / 2);
	free(rtt);
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	int fd, is_server;

	is_server = argc == 3 && !strcmp(argv[1], "server");
	if (!is_server && (argc != 5 || strcmp(argv[1], "client"))) {
		fprintf(stderr, "usage: udp_lat server PORT | client ADDR PORT ITERS\n");
		return 2;
	}
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0 || fcntl(fd, F_SETFL, O_NONBLOCK)) {
		perror("udp_lat: socket");
		return 1;
	}
	if (is_server) {
		sa.sin_port = htons(atoi(argv[2]));
		if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
			perror("udp_lat: bind");
			return 1;
		}
		return server(fd);
	}
	sa.sin_port = htons(atoi(argv[3]));
	if (inet_pton(AF_INET, argv[2], &sa.sin_addr) != 1 || atoi(argv[4]) < 1) {
		fprintf(stderr, "udp_lat: bad address or count\n");
		return 2;
	}
	return client(fd, &sa, atoi(argv[4]));
}
