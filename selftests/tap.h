/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Minimal TAP (Test Anything Protocol) producer shared by the selftests.
 *
 * libibverbs reports errors three ways depending on the verb, and the
 * helpers below name which one a check expects so that a verb that
 * answers the right errno through the wrong channel still fails:
 *   tap_ret_errno()   the verb returns the errno value (ibv_modify_qp...)
 *   tap_neg_errno()   the verb returns -1 and sets errno (ibv_query_gid...)
 *   tap_null_errno()  the verb returns NULL and sets errno (ibv_create_*)
 */
#ifndef RXE2_TAP_H
#define RXE2_TAP_H

#include <stdbool.h>

#define TAP_PRINTF(a, b) __attribute__((format(printf, a, b)))

void tap_plan(int n);
bool tap_ok(bool cond, const char *fmt, ...) TAP_PRINTF(2, 3);
void tap_skip(const char *fmt, ...) TAP_PRINTF(1, 2);
void tap_diag(const char *fmt, ...) TAP_PRINTF(1, 2);
void tap_bail(const char *fmt, ...) TAP_PRINTF(1, 2) __attribute__((noreturn));

/* exact return value */
bool tap_ret(long got, long want, const char *fmt, ...) TAP_PRINTF(3, 4);
/* ret must be the positive errno err (or 0 when err is 0) */
bool tap_ret_errno(int ret, int err, const char *fmt, ...) TAP_PRINTF(3, 4);
/* ret must be -1 with errno == err */
bool tap_neg_errno(int ret, int err, const char *fmt, ...) TAP_PRINTF(3, 4);
/* p must be NULL with errno == err; a non-NULL p is the caller's to free */
bool tap_null_errno(const void *p, int err, const char *fmt, ...)
	TAP_PRINTF(3, 4);

/* Prints a trailing plan if none was given; returns the exit status. */
int tap_done(void);

#endif /* RXE2_TAP_H */
