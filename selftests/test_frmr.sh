#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# covers: a kernel ULP (kmod/rxe2_frmr_test.ko): fast registration (ib_map_mr_sg, REG_MR), WRITE/READ/atomics through the fast MR, its errors, LOCAL_INV, SEND_WITH_INV
#
# Fast registration and invalidation as a kernel ULP sees them, including
# the failures nvme-rdma never provokes: loads selftests/kmod's
# rxe2_frmr_test.ko against the device under test, which runs its checks
# at load time and writes TAP lines to the kernel log (see the module's
# header comment), passes them on and unloads it.  On a device other than
# rxe2 the module runs too (RXE2_DEV=rxe0 to compare with rdma_rxe).

here=$(cd "$(dirname "$0")" && pwd)
dev=${RXE2_DEV:-rxe2_0}
ko=$here/kmod/rxe2_frmr_test.ko

if [ ! -f "$ko" ]; then
	echo "1..0 # SKIP $ko not built (make selftests)"
	exit 0
fi
rmmod rxe2_frmr_test 2>/dev/null
mark=$(dmesg | wc -l)
if ! insmod "$ko" dev="$dev"; then
	echo "1..1"
	echo "not ok 1 - insmod $ko dev=$dev"
	exit 1
fi
rmmod rxe2_frmr_test
out=$(dmesg | tail -n +"$((mark + 1))" | sed -n 's/.*rxe2_frmr_test: //p')
echo "$out"
echo "$out" | grep -q '^1\.\.[0-9]' || {
	echo "not ok - the module printed no plan"
	exit 1
}
! echo "$out" | grep -q '^not ok'
