// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* TAP output for the selftests, see tap.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"

static int tap_planned = -1;
static int tap_count;
static int tap_failed;

void tap_plan(int n)
{
	tap_planned = n;
	printf("1..%d\n", n);
	fflush(stdout);
}

static void tap_line(bool cond, const char *directive, const char *fmt,
		     va_list ap)
{
	tap_count++;
	if (!cond)
		tap_failed++;
	printf("%sok %d - ", cond ? "" : "not ", tap_count);
	vprintf(fmt, ap);
	if (directive)
		printf(" # %s", directive);
	putchar('\n');
	/* Each line reaches the harness before a crash can eat it. */
	fflush(stdout);
}

bool tap_ok(bool cond, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tap_line(cond, NULL, fmt, ap);
	va_end(ap);
	return cond;
}

void tap_skip(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tap_line(true, "SKIP", fmt, ap);
	va_end(ap);
}

void tap_diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

void tap_bail(const char *fmt, ...)
{
	va_list ap;

	fputs("Bail out! ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	exit(1);
}

/* Rotating buffers: one diag line formats up to two errnos. */
static const char *errname(int err)
{
	static char bufs[4][64];
	static unsigned int next;
	char *buf = bufs[next++ % 4];

	if (err == 0)
		return "0";
	snprintf(buf, sizeof(bufs[0]), "%d (%s)", err, strerror(err));
	return buf;
}

bool tap_ret(long got, long want, const char *fmt, ...)
{
	bool cond = got == want;
	va_list ap;

	va_start(ap, fmt);
	tap_line(cond, NULL, fmt, ap);
	va_end(ap);
	if (!cond)
		tap_diag("  got %ld, want %ld", got, want);
	return cond;
}

bool tap_ret_errno(int ret, int err, const char *fmt, ...)
{
	bool cond = ret == err;
	va_list ap;

	va_start(ap, fmt);
	tap_line(cond, NULL, fmt, ap);
	va_end(ap);
	if (!cond) {
		if (ret < 0)
			tap_diag("  got %d, want %s", ret, errname(err));
		else
			tap_diag("  got %s, want %s", errname(ret),
				 errname(err));
	}
	return cond;
}

bool tap_neg_errno(int ret, int err, const char *fmt, ...)
{
	int saved = errno;
	bool cond = err ? (ret == -1 && saved == err) : ret == 0;
	va_list ap;

	va_start(ap, fmt);
	tap_line(cond, NULL, fmt, ap);
	va_end(ap);
	if (!cond) {
		if (!err)
			tap_diag("  got %d errno %s, want 0", ret, errname(saved));
		else if (ret == 0)
			tap_diag("  got success, want -1/errno %s", errname(err));
		else
			tap_diag("  got %d/errno %s, want -1/errno %s", ret,
				 errname(saved), errname(err));
	}
	return cond;
}

bool tap_null_errno(const void *p, int err, const char *fmt, ...)
{
	int saved = errno;
	bool cond = !p && saved == err;
	va_list ap;

	va_start(ap, fmt);
	tap_line(cond, NULL, fmt, ap);
	va_end(ap);
	if (!cond) {
		if (p)
			tap_diag("  got an object, want NULL/errno %s",
				 errname(err));
		else
			tap_diag("  got errno %s, want %s", errname(saved),
				 errname(err));
	}
	return cond;
}

int tap_done(void)
{
	if (tap_planned < 0) {
		printf("1..%d\n", tap_count);
	} else if (tap_planned != tap_count) {
		tap_diag("planned %d tests but ran %d", tap_planned, tap_count);
		fflush(stdout);
		return 1;
	}
	if (tap_failed)
		tap_diag("%d of %d failed", tap_failed, tap_count);
	fflush(stdout);
	return tap_failed ? 1 : 0;
}
