# shellcheck shell=bash
# container.sh: a Debian root booted under its own systemd with systemd-nspawn, for
# tests/booted.sh (sourced): boot_ct, in_ct, run_ct, stop_ct. Needs $ROOT, $WORK.
#
# This machine's PID 1 is not systemd (and its cgroups are hybrid): nspawn runs with
# --keep-unit --register=no (no machined to register with), in a cgroup of its own
# made here ($CG under /sys/fs/cgroup/{unified,systemd}), under which it makes the
# payload's; those are removed at the end, as nspawn leaves them. perf needs its
# syscall (--system-call-filter) and CAP_PERFMON, kernel addresses CAP_SYSLOG (else
# /proc/kallsyms reads as zeros), its ring buffers CAP_IPC_LOCK. --private-network: the
# container's loopback its own, for the receiver on 127.0.0.1:4040.

CT_NAME=pcci-$$
CG=perfconv-booted-$$
# the hierarchies nspawn puts the payload in: hybrid (this machine's) or unified alone
if [ -d /sys/fs/cgroup/unified ]; then CG_DIRS=("/sys/fs/cgroup/unified/$CG" "/sys/fs/cgroup/systemd/$CG"); else CG_DIRS=("/sys/fs/cgroup/$CG"); fi
NSPAWN_PID='' INIT='' CT_PIDNS=''

# wait_until SECONDS COMMAND...: until COMMAND succeeds (a condition, polled), 1 at the
# deadline
wait_until() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ $SECONDS -lt $end ] || return 1
		sleep 0.2
	done
}

boot_ct() {
	local d
	for d in "${CG_DIRS[@]}"; do mkdir -p "$d" || return 1; done
	(
		for d in "${CG_DIRS[@]}"; do echo "$BASHPID" >"$d/cgroup.procs"; done
		exec setsid systemd-nspawn -D "$ROOT" -M "$CT_NAME" -b --keep-unit --register=no \
			--private-network --console=read-only \
			--capability=CAP_PERFMON,CAP_SYSLOG,CAP_IPC_LOCK --system-call-filter=perf_event_open
	) </dev/null >"$WORK/console.log" 2>&1 &
	NSPAWN_PID=$!
	# the container's init, then its manager's socket, then the boot done
	wait_until 30 eval 'INIT=$(pgrep -P "$NSPAWN_PID" -x systemd)' || return 1
	CT_PIDNS=$(readlink "/proc/$INIT/ns/pid")
	wait_until 30 test -S "/proc/$INIT/root/run/systemd/private" || return 1
	local state
	state=$(timeout 60 nsenter -t "$INIT" -a systemctl is-system-running --wait 2>&1)
	[ "$state" = running ] || { echo "booted: the container's systemd is $state: $(in_ct systemctl --failed --no-legend --plain | tr '\n' ' ')"; return 1; }
}

# ct_pids: the container's processes, seen from here (a service's own mount namespace
# hides its root, its pid namespace is the container's)
ct_pids() {
	local p
	[ -n "$CT_PIDNS" ] || return 0
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/ns/pid" 2>/dev/null)" = "$CT_PIDNS" ] && echo "${p#/proc/}"
	done
}

# in_ct COMMAND...: COMMAND in the container's namespaces, with this shell's seccomp
# and capabilities: to look (systemctl, journalctl, files), not to test what a service
# may do
in_ct() { nsenter -t "$INIT" -a env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"; }
# run_ct [systemd-run options] COMMAND...: COMMAND run by the container's systemd as a
# service of its own, with the container's limits: what an admin's shell would do
run_ct() { nsenter -t "$INIT" -a systemd-run --wait --pipe --quiet --collect "$@"; }

# stop_ct: the container powered off (SIGRTMIN+4 to its systemd), or killed when it does
# not end within 30 s; what is left of it killed, its mounts undone, its cgroups removed
stop_ct() {
	local p m d
	if [ -n "$INIT" ] && kill -0 "$INIT" 2>/dev/null; then
		kill -s SIGRTMIN+4 "$INIT" 2>/dev/null
	fi
	if [ -n "$NSPAWN_PID" ] && ! wait_until 30 eval '! kill -0 "$NSPAWN_PID" 2>/dev/null'; then
		echo "booted: the container did not power off within 30 s: killed"
		kill -9 "$NSPAWN_PID" 2>/dev/null
	fi
	[ -z "$NSPAWN_PID" ] || wait "$NSPAWN_PID" 2>/dev/null
	# what is left: the container's processes (its init killed ends them all), and any
	# other with its root in ROOT
	for p in $(ct_pids) /proc/[0-9]*; do
		case $p in
		/proc/*) case "$(readlink "$p/root" 2>/dev/null)" in "$ROOT" | "$ROOT"/*) kill -9 "${p#/proc/}" 2>/dev/null ;; esac ;;
		*) kill -9 "$p" 2>/dev/null ;;
		esac
	done
	awk -v r="$ROOT" '$2 == r || index($2, r "/") == 1 { print $2 }' /proc/self/mounts | sort -r |
		while read -r m; do umount "$m" 2>/dev/null || umount -l "$m"; done
	for d in "${CG_DIRS[@]}"; do
		[ -d "$d" ] || continue
		# a cgroup is removed once its processes are gone: the killed ones take a moment
		wait_until 10 eval "find $d -depth -type d -exec rmdir {} + 2>/dev/null; [ ! -d $d ]" ||
			echo "booted: $d not removed, processes in it: $(find "$d" -name cgroup.procs -exec cat {} + | tr '\n' ' ')"
	done
	NSPAWN_PID='' INIT='' CT_PIDNS=''
}
