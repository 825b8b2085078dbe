// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* rxe2: the tracepoints of rxe2_trace.h are defined here, once */
#define CREATE_TRACE_POINTS
#include "rxe2_trace.h"
