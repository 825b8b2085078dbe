# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Shell helpers shared by the shell tests and tools/bench; sourced, POSIX sh.

# ipv4_gid_index DEV: the index of DEV's RoCE v2 GID that holds an IPv4
# address (::ffff:a.b.c.d); fails when there is none.
ipv4_gid_index() {
	for _f in /sys/class/infiniband/"$1"/ports/1/gids/*; do
		_i=${_f##*/}
		case $(cat "$_f" 2>/dev/null) in
		0000:0000:0000:0000:0000:ffff:*) ;;
		*) continue ;;
		esac
		[ "$(cat /sys/class/infiniband/"$1"/ports/1/gid_attrs/types/"$_i" 2>/dev/null)" = "RoCE v2" ] ||
			continue
		echo "$_i"
		return 0
	done
	return 1
}

# wait_listen PORT: until a TCP port listens, at most 10 seconds.
wait_listen() {
	_n=0
	while [ $_n -lt 100 ]; do
		ss -ltn 2>/dev/null | grep -q ":$1 " && return 0
		sleep 0.1
		_n=$((_n + 1))
	done
	return 1
}
