#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# covers: the installed layout: link add autoloads the module, the provider found by name, the stock rxe provider leaves rxe2 alone, librxe2's links, header, pkg-config file and man pages
#
# The installed layout works without the build tree's shortcuts:
# - `rdma link add ... type rxe2` loads the module by itself, through the
#   kernel's request for "rdma-link-rxe2" and the alias depmod records;
# - `make -C provider install` puts the provider where libibverbs finds it
#   by name, and only rxe2's provider claims the device (the stock rxe
#   provider, which matches names by prefix, refuses rxe2's ABI version);
# - it installs librxe2 the way rdma-core installs libmlx5/libefa: one
#   library, librxe2.so.1, that is both the rxe2dv library applications
#   link with (header, pkg-config, man pages) and, through a link, the
#   provider libibverbs loads; an application built from the installed
#   files talks to the device through the provider libibverbs loaded.
# The guest's root is read-only, so the install goes to a staging root and
# is bind-mounted into place inside a private mount namespace.  TAP output.

export LC_ALL=C
PLAN=11
repo=$(cd "$(dirname "$0")/.." && pwd)
: "${RXE2_KO:=$repo/rxe/rdma_rxe2.ko}"
kver=$(uname -r)
# shellcheck source=lib.sh
. "$repo/selftests/lib.sh"
stage=$(mktemp -d /tmp/test_install.XXXXXX) || exit 1
out=$stage/out
check_out=$out

old_modprobe=$(cat /proc/sys/kernel/modprobe)
cleanup() {
	echo "$old_modprobe" >/proc/sys/kernel/modprobe
	rdma link delete rxe2_auto0 2>/dev/null
	ip link del rxe2_inst0 2>/dev/null
	# The harness expects the module loaded with its parameters.
	if ! grep -q '^rdma_rxe2 ' /proc/modules; then
		# shellcheck disable=SC2086 # the parameters are words
		insmod "$RXE2_KO" $RXE2_KO_PARAMS
	fi
	rm -rf "$stage"
}
trap cleanup EXIT

echo "1..$PLAN"

# Module: the layout `make install` produces (updates/ + depmod), in a
# staging root that the kernel's modprobe helper is pointed at.
mods=$stage/root/lib/modules/$kver
mkdir -p "$mods/updates" "$stage/modprobe.d"
cp "$RXE2_KO" "$mods/updates/"
echo "options rdma_rxe2 ${RXE2_KO_PARAMS:-}" >"$stage/modprobe.d/rxe2.conf"
check "depmod records the rdma-link-rxe2 alias" sh -c \
	"depmod -b '$stage/root' '$kver' && grep -q '^alias rdma-link-rxe2 rdma_rxe2\$' '$mods/modules.alias'"

cat >"$stage/modprobe" <<EOF
#!/bin/sh
# rdma_rxe2 from the staging root; everything else as usual
case "\$*" in
*rdma-link-rxe2*) exec /sbin/modprobe -d '$stage/root' -C '$stage/modprobe.d' "\$@" ;;
*) exec /sbin/modprobe "\$@" ;;
esac
EOF
chmod +x "$stage/modprobe"

# Links of the harness go away with the module; put them back afterwards.
saved=$(harness_links)
check "rmmod rdma_rxe2" rmmod rdma_rxe2
echo "$stage/modprobe" >/proc/sys/kernel/modprobe
ip link add rxe2_inst0 type dummy && ip link set rxe2_inst0 up
check "rdma link add type rxe2 loads the module by itself" \
	rdma link add rxe2_auto0 type rxe2 netdev rxe2_inst0
check "rdma_rxe2 is loaded with the configured options" sh -c \
	"grep -q '^rdma_rxe2 ' /proc/modules && \
	 [ \"\$(cat /sys/module/rdma_rxe2/parameters/max_qp)\" = \
	   \"\$(echo '${RXE2_KO_PARAMS:-}' | sed -n 's/.*max_qp=\([0-9]*\).*/\1/p')\" ]"

# Provider: `make install` into the staging root, mounted over the real
# directories in a private mount namespace; libibverbs loads it by name.
libdir=$(pkg-config --variable=libdir libibverbs)
provdir=$libdir/libibverbs
inst=$stage/inst
check "make -C provider install DESTDIR=..." \
	make -s -C "$repo/provider" install DESTDIR="$inst"

layout() {
	local l=$inst$libdir pc_libs
	pc_libs=$(PKG_CONFIG_SYSROOT_DIR=$inst PKG_CONFIG_PATH=$l/pkgconfig \
		pkg-config --libs librxe2) || return 1
	[ -f "$l/librxe2.so.1.0.0" ] && [ ! -L "$l/librxe2.so.1.0.0" ] &&
	[ "$(readlink "$l/librxe2.so.1")" = librxe2.so.1.0.0 ] &&
	[ "$(readlink "$l/librxe2.so")" = librxe2.so.1 ] &&
	[ "$(readlink "$inst$provdir"/librxe2-rdmav"$("$repo/provider/check-libibverbs" --pabi)".so)" = ../librxe2.so.1.0.0 ] &&
	[ -f "$inst/usr/include/infiniband/rxe2dv.h" ] &&
	readelf -d "$l/librxe2.so.1.0.0" | grep -q 'SONAME.*\[librxe2.so.1\]' &&
	[ "${pc_libs% }" = "-L$l -lrxe2" ]
}
check "installed: librxe2.so.1 with soname and dev links, provider link, header, librxe2.pc" \
	layout

# Later rxe2dv functions cannot ship without their page.
man_pages() {
	local sym m=$inst/usr/share/man
	man -l "$m/man7/rxe2dv.7" 2>&1 | grep -q '^NAME' || {
		echo "rxe2dv(7) missing or not rendered"
		return 1
	}
	for sym in $(nm -D --defined-only "$inst$libdir/librxe2.so.1" |
		     awk '$2 == "T" { sub(/@.*/, "", $3); print $3 }'); do
		echo "$sym"
		man -l "$m/man3/$sym.3" 2>&1 | grep -q "^ *$sym - " || {
			echo "no rendered man page for $sym"
			return 1
		}
	done
	for tool in rxe2fuzz rxe2dump; do
		man -l "$m/man1/$tool.1" 2>&1 | grep -q "^ *$tool - " || {
			echo "$tool(1) missing or not rendered"
			return 1
		}
	done
}
check "every exported rxe2dv_* function, rxe2fuzz and rxe2dump have an installed man page" man_pages

# An application built only from the installed files (the staging root's
# -I/-L stand in for the real ones).
cat >"$stage/app.c" <<'APP'
#include <stdio.h>
#include <string.h>
#include <infiniband/rxe2dv.h>

int main(int argc, char **argv)
{
	struct rxe2dv_device_attr attr;
	struct ibv_device **list;
	struct ibv_context *ctx;
	int i, n, ret;

	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n; i++) {
		if (strcmp(ibv_get_device_name(list[i]), argv[argc - 1]))
			continue;
		if (!rxe2dv_is_supported(list[i]))
			return 2;
		ctx = ibv_open_device(list[i]);
		if (!ctx)
			return 3;
		ret = rxe2dv_query_device(ctx, &attr, sizeof(attr));
		printf("rxe2dv_query_device: %d, interconnects %u\n", ret,
		       attr.num_interconnects);
		return ret ? 4 : 0;
	}
	return 1;
}
APP
check "an application builds with pkg-config librxe2 from the installed files" \
	sh -c "cc -o '$stage/app' '$stage/app.c' \
		\$(PKG_CONFIG_SYSROOT_DIR='$inst' PKG_CONFIG_PATH='$inst$libdir/pkgconfig' \
		   pkg-config --cflags --libs librxe2) -libverbs"

# The installed library directory laid over the real one (a read-only
# overlay), so the provider link resolves to the installed librxe2.so.1;
# the application's librxe2 and libibverbs' provider are one object.
# The sanitizer kernel of make check-debug has no overlayfs: skipped there.
modprobe -q overlay 2>/dev/null
if ! grep -qw overlay /proc/filesystems; then
	ok "installed provider opens the device by name # SKIP no overlayfs in this kernel (the sanitizer kernel)"
else
check "installed provider opens the device by name; the application uses it" \
	unshare -m sh -c "
		mount -t overlay overlay -o 'lowerdir=$inst$libdir:$libdir' '$libdir' &&
		mount --bind '$inst/etc/libibverbs.d' /etc/libibverbs.d &&
		env -u RDMAV_DRIVERS ibv_devinfo -d rxe2_auto0 | grep -q 'transport:.*InfiniBand' &&
		env -u RDMAV_DRIVERS '$stage/app' rxe2_auto0 &&
		env -u RDMAV_DRIVERS LD_DEBUG=files '$stage/app' rxe2_auto0 2>&1 |
			grep -c 'calling init: .*librxe2' | grep -qx 1"
fi
check "without librxe2, the stock rxe provider does not take rxe2 devices" \
	unshare -m sh -c "
		mkdir -p '$stage/etc' && echo 'driver rxe' >'$stage/etc/rxe.driver' &&
		mount --bind '$stage/etc' /etc/libibverbs.d &&
		! env -u RDMAV_DRIVERS ibv_devices 2>/dev/null | grep -q rxe2_auto0"

# Restore the harness's module and links, with their IPv4 GIDs.
restore() {
	rdma link delete rxe2_auto0 || return 1
	echo "$old_modprobe" >/proc/sys/kernel/modprobe
	rmmod rdma_rxe2 || return 1
	harness_restore "$saved"
}
check "module reloaded and harness links back ($saved )" restore
[ "$n" -eq "$PLAN" ] || echo "# planned $PLAN, ran $n"
