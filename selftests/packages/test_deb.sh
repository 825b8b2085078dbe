#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The Debian packages of `make deb`, installed the way a user installs
# them, and rxe2 working from the installed files only:
# - dpkg -i of rxe2-dkms, librxe2-1, librxe2-dev and rxe2-tools in a
#   root laid over the guest's (an overlay with a tmpfs on top: the real
#   root stays read-only), whose postinst has DKMS build rdma_rxe2 for
#   the running kernel;
# - dkms status says installed, the module sits in updates/dkms with the
#   rdma-link-rxe2 alias, and its version is the tree's;
# - with the kernel's modprobe helper pointed into that root, `rdma link
#   add ... type rxe2` loads the DKMS-built module by itself; ibv_devinfo
#   in that root (its /etc/libibverbs.d, its provider) shows the device;
#   an rxe2dv program builds there with pkg-config librxe2 and runs;
#   rxe2dump and the man pages are there;
# - dpkg -r takes the module away again (DKMS removes it).
# Then the harness's module and links are put back.  TAP output.
#
# RXE2_DEB_LOWER (default /): the root the packages go into, under the
# overlay.  For a kernel of another Debian suite it is that suite's build
# root (tools/kroot dkms-root), which has that suite's compiler, the
# kernel's headers and modules, and DKMS: there only rxe2-dkms goes in,
# and the checks of the installed provider and tools are skipped, since
# librxe2 is built for Debian 12's libibverbs.  With make DISTRO= the
# guest's / is that distribution's root and the packages are built for
# it (make deb DISTRO=): the default, every check runs.

export LC_ALL=C
PLAN=11
repo=$(cd "$(dirname "$0")/../.." && pwd)
: "${RXE2_KO:=$repo/rxe/rdma_rxe2.ko}"
kver=$(uname -r)
lower=${RXE2_DEB_LOWER:-/}
# shellcheck source=../lib.sh
. "$repo/selftests/lib.sh"
debs=$repo/.build/deb
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$repo/dkms.conf")
stage=$(mktemp -d /tmp/test_deb.XXXXXX) || exit 1
root=$stage/root
out=$stage/out
check_out=$out
inroot() { chroot "$root" env -u RDMAV_DRIVERS PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"; }

old_modprobe=$(cat /proc/sys/kernel/modprobe)
saved=
cleanup() {
	echo "$old_modprobe" >/proc/sys/kernel/modprobe
	rdma link delete rxe2_deb0 2>/dev/null
	ip link del rxe2_deb0v 2>/dev/null
	# the root and everything under it (the rbind of /sys has mounts
	# of its own); lazily, should a process of the root still hold one
	umount -R -l "$root" 2>/dev/null
	umount -l "$stage/rw" 2>/dev/null
	if ! grep -q '^rdma_rxe2 ' /proc/modules; then
		# shellcheck disable=SC2086 # the parameters are words
		insmod "$RXE2_KO" $RXE2_KO_PARAMS
	fi
	# never into a mount that is still there (the guest's /dev, /sys)
	mountpoint -q "$root" || rm -rf --one-file-system "$stage"
}
trap cleanup EXIT

echo "1..$PLAN"
if ! ls "$debs"/rxe2-dkms_*.deb >/dev/null 2>&1; then
	echo "not ok 1 - no packages in $debs (make deb)"
	exit 1
fi
modprobe -q overlay 2>/dev/null
if ! grep -qw overlay /proc/filesystems; then
	for i in $(seq "$PLAN"); do
		echo "ok $i - packages # SKIP no overlayfs in this kernel"
	done
	exit 0
fi

# dh_dkms's postinst builds for the running kernel and for the newest
# one with a /boot/config-*; under TCG each build takes many minutes, so
# the root shows the running kernel's config and headers only (the
# overlay hides the others; the real /boot and /lib/modules are untouched).
hide_other_kernels() {
	local c
	for c in "$root"/boot/config-*; do
		[ "$c" = "$root/boot/config-$kver" ] || rm -f "$c" || return 1
	done
	# and DKMS (Debian 13's) builds for every kernel with headers
	for c in "$root"/lib/modules/*/build; do
		[ "$c" = "$root/lib/modules/$kver/build" ] || rm -f "$c" || return 1
	done
}

# The root: the guest's own, with a tmpfs on top for what dpkg writes.
setup_root() {
	mkdir -p "$stage/rw" "$root" &&
	mount -t tmpfs -o size=1g tmpfs "$stage/rw" &&
	mkdir -p "$stage/rw/upper" "$stage/rw/work" &&
	mount -t overlay overlay \
		-o "lowerdir=$lower,upperdir=$stage/rw/upper,workdir=$stage/rw/work" "$root" &&
	mount -t proc proc "$root/proc" &&
	mount --rbind /sys "$root/sys" &&
	mount --make-rslave "$root/sys" &&
	mount --bind /dev "$root/dev" &&
	mount --bind /dev/pts "$root/dev/pts" &&
	mount -t tmpfs tmpfs "$root/run" &&
	mount -t tmpfs tmpfs "$root/tmp" &&
	hide_other_kernels &&
	cp $(pkg_files) "$root/tmp/"
}

# another suite's root takes the module's package alone
userland() { [ "$lower" = / ]; }
pkg_files() {
	if userland; then
		echo "$debs"/rxe2-dkms_*.deb "$debs"/librxe2-1_*.deb \
			"$debs"/librxe2-dev_*.deb "$debs"/rxe2-tools_*.deb
	else
		echo "$debs"/rxe2-dkms_*.deb
	fi
}
skip_userland() {
	n=$((n + 1))
	echo "ok $n - $1 # SKIP $lower: librxe2 is built for Debian 12's libibverbs"
}
check "a root over the guest's, writable on a tmpfs" setup_root

# dpkg -i as a user would; rxe2-dkms's postinst builds the module
install_debs() {
	inroot sh -c 'dpkg -i /tmp/*.deb' || return 1
	inroot dkms status rxe2 | grep -q "rxe2/$version, $kver, .*: installed"
}
check "dpkg -i $(pkg_files | wc -w) package(s) into $lower; DKMS built and installed rxe2/$version for $kver" \
	install_debs

# DKMS compresses the module as the kernel's own are (.ko.xz on Debian)
ko=$(ls "$root/lib/modules/$kver/updates/dkms/"rdma_rxe2.ko* 2>/dev/null | head -n 1)
check "the module in updates/dkms, with the rdma-link-rxe2 alias, version $version" \
	sh -c "[ -n '$ko' ] && [ -f '$ko' ] &&
	       grep -q '^alias rdma-link-rxe2 rdma_rxe2\$' '$root/lib/modules/$kver/modules.alias' &&
	       [ \"\$(modinfo -F version '$ko')\" = '$version' ] &&
	       [ \"\$(modinfo -F vermagic '$ko' | cut -d' ' -f1)\" = '$kver' ]"
check "the tree's versions agree: dkms.conf, debian/changelog, librxe2, the module" sh -c "
	grep -q '^rxe2 ($version)' '$repo/debian/changelog' &&
	grep -q '^VERSION := $version\$' '$repo/provider/Makefile' &&
	grep -q '^MODULE_VERSION(\"$version\");' '$repo/rxe/rxe2_main.c'"

# The harness's module out; the packaged one comes in by itself.
saved=$(harness_links)
cat >"$stage/modprobe" <<EOF
#!/bin/sh
# rdma_rxe2 from the packages' root; everything else as usual
case "\$*" in
*rdma-link-rxe2*|*rdma_rxe2*) exec chroot '$root' /sbin/modprobe "\$@" ;;
*) exec /sbin/modprobe "\$@" ;;
esac
EOF
chmod +x "$stage/modprobe"
check "rmmod the harness's rdma_rxe2" rmmod rdma_rxe2
echo "$stage/modprobe" >/proc/sys/kernel/modprobe
ip link add rxe2_deb0v type dummy && ip link set rxe2_deb0v up &&
	ip addr add 198.18.99.1/24 dev rxe2_deb0v
check "rdma link add type rxe2 loads the DKMS-built module" sh -c "
	rdma link add rxe2_deb0 type rxe2 netdev rxe2_deb0v &&
	[ \"\$(cat /sys/module/rdma_rxe2/srcversion)\" = \"\$(modinfo -F srcversion '$ko')\" ] &&
	[ \"\$(cat /sys/module/rdma_rxe2/version)\" = '$version' ]"

if ! userland; then
	skip_userland "ibv_devinfo from the installed provider"
	skip_userland "an rxe2dv program built with pkg-config librxe2"
	skip_userland "rxe2dump, rxe2fuzz and their man pages"
else
check "ibv_devinfo from the installed provider shows rxe2_deb0" sh -c "
	chroot '$root' env -u RDMAV_DRIVERS ibv_devinfo -d rxe2_deb0 |
		grep -q 'transport:.*InfiniBand' &&
	chroot '$root' sh -c 'grep -l rxe2 /etc/libibverbs.d/*.driver' | grep -qx /etc/libibverbs.d/rxe2.driver"

cat >"$root/tmp/app.c" <<'APP'
#include <stdio.h>
#include <string.h>
#include <infiniband/rxe2dv.h>

int main(int argc, char **argv)
{
	struct rxe2dv_device_attr attr;
	struct ibv_device **list;
	struct ibv_context *ctx;
	int i, n;

	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n; i++) {
		if (strcmp(ibv_get_device_name(list[i]), argv[1]))
			continue;
		if (!rxe2dv_is_supported(list[i]))
			return 2;
		ctx = ibv_open_device(list[i]);
		if (!ctx || rxe2dv_query_device(ctx, &attr, sizeof(attr)))
			return 3;
		printf("rxe2dv on %s\n", argv[1]);
		return 0;
	}
	return 1;
}
APP
check "an rxe2dv program builds with pkg-config librxe2 and runs" inroot sh -c "
	cc -o /tmp/app /tmp/app.c \$(pkg-config --cflags --libs librxe2) -libverbs &&
	/tmp/app rxe2_deb0 | grep -qx 'rxe2dv on rxe2_deb0'"

check "rxe2dump, rxe2fuzz and their man pages, rxe2dv(7)" inroot sh -c "
	rxe2dump -h 2>&1 | grep -q rxe2dump && [ -x /usr/bin/rxe2fuzz ] &&
	man -P cat rxe2dump 2>/dev/null | grep -q '^ *rxe2dump - ' &&
	man -P cat rxe2dv 2>/dev/null | grep -q '^NAME'"
fi

check "dpkg -r rxe2-dkms: DKMS takes the module away" sh -c "
	rdma link delete rxe2_deb0 && rmmod rdma_rxe2 &&
	chroot '$root' dpkg -r rxe2-dkms >/dev/null &&
	[ ! -e '$ko' ] && ! chroot '$root' dkms status rxe2 | grep -q ."

restore() {
	echo "$old_modprobe" >/proc/sys/kernel/modprobe
	harness_restore "$saved"
}
check "module reloaded and harness links back ($saved )" restore
[ "$n" -eq "$PLAN" ] || echo "# planned $PLAN, ran $n"
