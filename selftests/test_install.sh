#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The installed layout works without the build tree's shortcuts:
# - `rdma link add ... type rxe2` loads the module by itself, through the
#   kernel's request for "rdma-link-rxe2" and the alias depmod records;
# - `make -C provider install` puts the provider where libibverbs finds it
#   by name, and only rxe2's provider claims the device (the stock rxe
#   provider, which matches names by prefix, refuses rxe2's ABI version).
# The guest's root is read-only, so the install goes to a staging root and
# is bind-mounted into place inside a private mount namespace.  TAP output.

export LC_ALL=C
PLAN=8
repo=$(cd "$(dirname "$0")/.." && pwd)
: "${RXE2_KO:=$repo/rxe/rdma_rxe2.ko}"
kver=$(uname -r)
. "$repo/selftests/lib.sh"
stage=$(mktemp -d /tmp/test_install.XXXXXX) || exit 1
out=$stage/out
n=0

ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; sed 's/^/#   /' "$out"; }
check() {
	local desc=$1
	shift
	if "$@" >"$out" 2>&1; then ok "$desc"; else not_ok "$desc"; fi
}

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
saved=
for d in /sys/class/infiniband/*; do
	[ -r "$d/rxe2_abi" ] && saved="$saved ${d##*/}:$(cat "$d/parent")"
done
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
provdir=$(pkg-config --variable=libdir libibverbs)/libibverbs
inst=$stage/inst
check "make -C provider install DESTDIR=..." \
	make -s -C "$repo/provider" install DESTDIR="$inst"
check "installed provider opens the device by name" \
	unshare -m sh -c "
		mkdir -p '$stage/prov' && cp -a '$provdir'/. '$stage/prov'/ &&
		cp '$inst$provdir'/librxe2-rdmav34.so '$stage/prov'/ &&
		mount --bind '$stage/prov' '$provdir' &&
		mount --bind '$inst/etc/libibverbs.d' /etc/libibverbs.d &&
		env -u RDMAV_DRIVERS ibv_devinfo -d rxe2_auto0 | grep -q 'transport:.*InfiniBand'"
check "without librxe2, the stock rxe provider does not take rxe2 devices" \
	unshare -m sh -c "
		mkdir -p '$stage/etc' && echo 'driver rxe' >'$stage/etc/rxe.driver' &&
		mount --bind '$stage/etc' /etc/libibverbs.d &&
		! env -u RDMAV_DRIVERS ibv_devices 2>/dev/null | grep -q rxe2_auto0"

# Restore the harness's module and links, with their IPv4 GIDs.
restore() {
	local s i
	rdma link delete rxe2_auto0 || return 1
	echo "$old_modprobe" >/proc/sys/kernel/modprobe
	rmmod rdma_rxe2 || return 1
	# shellcheck disable=SC2086 # the parameters are words
	insmod "$RXE2_KO" $RXE2_KO_PARAMS || return 1
	for s in $saved; do
		rdma link add "${s%%:*}" type rxe2 netdev "${s#*:}" || return 1
		i=0
		until ipv4_gid_index "${s%%:*}" >/dev/null; do
			i=$((i + 1))
			[ $i -le 100 ] || { echo "no IPv4 GID on ${s%%:*}"; return 1; }
			sleep 0.1
		done
	done
}
check "module reloaded and harness links back ($saved )" restore
[ "$n" -eq "$PLAN" ] || echo "# planned $PLAN, ran $n"
