#!/bin/bash
# e2e_servicetrust: what the units' scripts (dist/) take from files other users can
# write (issue 42). 1. perfconv-record's pidfile: target, as systemd takes a PIDFile=
# from outside a service's cgroup: a pid file of the service's user naming 1, a root
# process, or reached through that user's link or folder is refused and said, perf not
# run; one naming that user's own process, and root's naming a root process, are
# recorded. 2. perfconv-upload (and perfconv-record) refuse a configuration or key
# file that is not root's or that others can write, refuse a key or a configuration
# holding a token that others can read, and warn of a configuration others can read.
# The scripts are dist/'s, or those of PERFCONV_DIST (an older dist/, to see that this
# test fails on it). Root only: a pid file of another user is the point.
source "$(dirname "$0")/e2e_lib.sh"
at_exit() { kill_pids; }
DIST=${PERFCONV_DIST:-$PWD/dist}
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)

if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null || ! command -v unshare >/dev/null; then
	skip "e2e_servicetrust: needs root, setpriv and unshare"
	finish e2e_servicetrust
	exit
fi
chmod 755 "$TMP" # the other user reaches the folders below it

# --- 1. pidfile: targets ------------------------------------------------------------
# perf as the script runs it (its own PATH), replaced in a mount namespace of the test's
# by a stand-in that writes its arguments: what root would have recorded, at once
REAL_PERF=$(PATH=/usr/sbin:/usr/bin:/sbin:/bin command -v perf) || REAL_PERF=
cat >"$TMP/fakeperf" <<EOF
#!/bin/sh
echo "\$*" >"$TMP/perf.args"
EOF
chmod 755 "$TMP/fakeperf"
# record PIDFILE: perfconv-record web with PERFCONV_TARGET=pidfile:PIDFILE, as the unit
# runs it (root, its environment only); its stderr in $TMP/rec.err, its status in $rrc,
# perf's arguments in $perf_args (empty: perf not run). At most 20 s: the script of
# main read a FIFO put there for good.
# (The stand-in ends at once, while its pid lives: the script says perf ended, exit 1.)
# Its configuration root's 0600 file in a folder of its own (the script requires one).
mkdir -p "$TMP/recconf"
chmod 700 "$TMP/recconf"
install -m 600 /dev/null "$TMP/recconf/web.conf"
record() {
	rm -f "$TMP/perf.args"
	timeout "${RT:-20}" unshare --mount --propagation private sh -c 'mount --bind "$1" "$2" && shift 2 && exec "$@"' _ \
		"$TMP/fakeperf" "$REAL_PERF" env -i PATH=/usr/bin:/bin PERFCONV_TARGET="pidfile:$1" \
		PERFCONV_SPOOL="$TMP/spool" PERFCONV_CONFDIR="$TMP/recconf" PERFCONV_POLL=0.1 PERFCONV_JIT=no \
		sh "$DIST/perfconv-record" web 2>"$TMP/rec.err"
	rrc=$?
	perf_args=$(cat "$TMP/perf.args" 2>/dev/null)
}
# refused WHAT PIDFILE WORDS: recorded nothing, exit 1, and said WORDS of PIDFILE
refused() {
	record "$2"
	if [ $rrc = 1 ] && [ -z "$perf_args" ] && grep -qF "perfconv-record: pid file $2: $3" "$TMP/rec.err"; then
		ok "$1: refused, perf not run: $(cat "$TMP/rec.err")"
	else
		bad "$1: exit $rrc, perf ${perf_args:-not run}; said: $(cat "$TMP/rec.err")"
	fi
}
# recorded WHAT PIDFILE PID: perf run for PID
recorded() {
	record "$2"
	if [[ " $perf_args " == *" -p $3 "* ]] && grep -q "perf record .* -p $3 " "$TMP/rec.err"; then
		ok "$1: recorded: perf $perf_args"
	else
		bad "$1: exit $rrc, perf ${perf_args:-not run}; said: $(cat "$TMP/rec.err")"
	fi
}

if [ -z "$REAL_PERF" ]; then
	bad "pidfile: no perf in /usr/sbin:/usr/bin:/sbin:/bin to stand in for (linux-perf)"
else
	# a process of root's and one of the service user's (nobody)
	sleep 300 &
	rootpid=$!
	PIDS+=("$rootpid")
	"${NOBODY[@]}" sleep 300 &
	userpid=$!
	PIDS+=("$userpid")
	# (setpriv takes the uid before it runs sleep)
	nobodys() { grep -q "^Uid:[[:space:]]*65534[[:space:]]65534[[:space:]]65534[[:space:]]65534$" "/proc/$1/status"; }
	wait_for 120 nobodys "$userpid" || bad "setpriv's sleep never became nobody's"
	# the service's folder and pid file, as RuntimeDirectory= and the service make them
	R=$TMP/run-svc
	mkdir "$R"
	chown 65534:65534 "$R"
	"${NOBODY[@]}" sh -c "echo 1 >$R/app.pid"
	refused "the service user's pid file naming 1" "$R/app.pid" "pid 1: not a process this could record"
	"${NOBODY[@]}" sh -c "echo $rootpid >$R/app.pid"
	refused "the service user's pid file naming a root process" "$R/app.pid" \
		"pid $rootpid is a process of uid 0 (real, effective, saved, fs: 0 0 0 0), not of uid 65534, who owns the file"
	"${NOBODY[@]}" sh -c "echo $userpid >$R/app.pid"
	recorded "the service user's pid file naming its own process" "$R/app.pid" "$userpid"
	# root's pid file in root's folder, naming a root process (a daemon started as root)
	mkdir "$TMP/run-root"
	echo "$rootpid" >"$TMP/run-root/root.pid"
	chmod 644 "$TMP/run-root/root.pid"
	recorded "root's pid file naming a root process" "$TMP/run-root/root.pid" "$rootpid"
	# the service user's link to root's pid file: not followed out of what that user
	# owns (systemd's CHASE_SAFE), so not recorded
	"${NOBODY[@]}" ln -sf "$TMP/run-root/root.pid" "$R/app.pid"
	refused "the service user's link to root's pid file" "$R/app.pid" \
		"$R/app.pid, a link uid 65534 owns, leads out of what that user owns to $TMP/run-root/root.pid"
	"${NOBODY[@]}" ln -sf ../run-root/root.pid "$R/app.pid"
	refused "the service user's relative link to root's pid file" "$R/app.pid" \
		"$TMP (uid 0's) is reached from $R/app.pid (uid 65534's), whose owner could have put it there"
	# a link of root's is followed (as /var/run to /run)
	ln -s run-root "$TMP/run-link"
	recorded "root's link to root's folder" "$TMP/run-link/root.pid" "$rootpid"
	# root's file in the service user's folder: that user could have moved it there
	rm -f "$R/app.pid"
	echo "$rootpid" >"$R/app.pid"
	refused "a root-owned pid file in the service user's folder" "$R/app.pid" \
		"$R/app.pid (uid 0's) is reached from $R (uid 65534's), whose owner could have put it there"
	# root's pid file that anyone may write, or with a second name
	chmod 666 "$TMP/run-root/root.pid"
	refused "root's pid file writable by all" "$TMP/run-root/root.pid" "writable by others than its owner (mode 666; chmod go-w)"
	chmod 644 "$TMP/run-root/root.pid"
	ln "$TMP/run-root/root.pid" "$TMP/run-root/second.pid"
	refused "root's pid file with two names" "$TMP/run-root/root.pid" "2 names (hard links) to one file"
	rm -f "$TMP/run-root/second.pid" "$R/app.pid"
	# a FIFO in its place: refused at once, not waited on (main's waited for good)
	"${NOBODY[@]}" mkfifo "$R/app.pid"
	t0=$SECONDS
	refused "the service user's FIFO as pid file" "$R/app.pid" "$R/app.pid: not a regular file"
	[ $((SECONDS - t0)) -le 5 ] || bad "the FIFO took $((SECONDS - t0)) s to refuse"
	rm -f "$R/app.pid"
	"${NOBODY[@]}" sh -c "echo $userpid >$R/app.pid"
	chmod 640 "$R/app.pid"
	kill "$userpid"
	wait "$userpid" 2>/dev/null
	# a service not running (yet): waited for, said, perf not run (ended here after 3 s)
	RT=3 record "$R/app.pid"
	[ $rrc = 124 ] && [ -z "$perf_args" ] && grep -qF "perfconv-record: pid file $R/app.pid: pid $userpid: no such process" "$TMP/rec.err" &&
		grep -q "waiting for it" "$TMP/rec.err" &&
		ok "a pid file naming a process that ended: waited for, said, perf not run: $(head -1 "$TMP/rec.err")" ||
		bad "a pid file naming a process that ended: exit $rrc, perf ${perf_args:-not run}; said: $(cat "$TMP/rec.err")"
	refused "a relative pid file path" "run/app.pid" "not an absolute path"
fi

# --- 2. the configuration and key files -------------------------------------------
# perfconv as the upload script runs it: a stand-in that writes its arguments
cat >"$TMP/fakeperfconv" <<EOF
#!/bin/sh
echo "\$*" >"$TMP/perfconv.args"
EOF
chmod 755 "$TMP/fakeperfconv"
E=$TMP/etc-perfconv
mkdir -m 700 "$E"
# unit SCRIPT: SCRIPT web with the environment of $E/web.conf (as systemd's
# EnvironmentFile= gives it, read as root whatever its mode); stderr in $TMP/unit.err,
# status in $urc, what it ran (perfconv or perf) in $ran (empty: nothing)
unit() {
	local run=(env -i PATH=/usr/bin:/bin bash -c 'set -a; source "$1"; set +a; exec sh "$2" web' _ "$E/web.conf" "$DIST/$1")
	rm -f "$TMP/perfconv.args" "$TMP/perf.args"
	if [ "$1" = perfconv-record ]; then
		timeout 20 unshare --mount --propagation private sh -c 'mount --bind "$1" "$2" && shift 2 && exec "$@"' _ \
			"$TMP/fakeperf" "$REAL_PERF" "${run[@]}" 2>"$TMP/unit.err"
	else
		timeout 20 "${run[@]}" 2>"$TMP/unit.err"
	fi
	urc=$?
	ran=$(cat "$TMP/perfconv.args" "$TMP/perf.args" 2>/dev/null)
}
# conf [LINE...]: $E/web.conf, root's, mode 0600, with the settings the test needs
conf() {
	rm -f "$E/web.conf"
	printf '%s\n' "PERFCONV_CONFDIR=$E" "PERFCONV=$TMP/fakeperfconv" "PERFCONV_SPOOL=$TMP/spool" \
		PERFCONV_BACKEND=otlp PERFCONV_URL=http://127.0.0.1:9/ "PERFCONV_TARGET=pid:$$" PERFCONV_JIT=no "$@" >"$E/web.conf"
	chmod 600 "$E/web.conf"
}
# conf_refused WHAT SCRIPT WORDS: exit 1, nothing run, WORDS said
conf_refused() {
	unit "$2"
	if [ $urc = 1 ] && [ -z "$ran" ] && grep -qF -- "$3" "$TMP/unit.err"; then
		ok "$1: $2 refuses it: $(cat "$TMP/unit.err")"
	else
		bad "$1: $2: exit $urc, ran ${ran:-nothing}; said: $(cat "$TMP/unit.err")"
	fi
}
# conf_warned WHAT WORDS: the upload runs, WORDS said once (empty: nothing said)
conf_warned() {
	unit perfconv-upload
	local said=0
	if [ -z "$2" ]; then [ -s "$TMP/unit.err" ] || said=1; else said=$(grep -cF -- "$2" "$TMP/unit.err"); fi
	if [ $urc = 0 ] && [[ $ran == "upload --to otlp --service web --watch $TMP/spool/web "* ]] && [ "$said" = 1 ]; then
		ok "$1: the upload runs, $([ -n "$2" ] && echo "said once: $(cat "$TMP/unit.err")" || echo "nothing said")"
	else
		bad "$1: exit $urc, ran ${ran:-nothing}; said: $(cat "$TMP/unit.err")"
	fi
}
if [ -n "$REAL_PERF" ]; then
	conf OTEL_EXPORTER_OTLP_HEADERS=Authorization=Bearer%20TOKEN
	install -m 600 /dev/null "$E/web.key"
	echo 0123456789abcdef >"$E/web.key"
	conf_warned "a configuration and key of root's, mode 0600, in root's 0700 folder" ""
	[[ $ran == *"--api-key-file $E/web.key"* ]] || bad "the key file is not given to perfconv: $ran"
	chmod 644 "$E/web.conf"
	conf_warned "a configuration holding a token, mode 0644 (as cp made it)" \
		"perfconv-upload: $E/web.conf: warning: readable by others (mode 644), with the token it holds: chmod 600 $E/web.conf, and replace the token, which others could read"
	conf
	chmod 644 "$E/web.conf"
	conf_warned "a configuration without a token, mode 0644" \
		"perfconv-upload: $E/web.conf: warning: readable by others (mode 644): a token put in it would be too (chmod 600 $E/web.conf)"
	conf
	chown 65534:65534 "$E/web.conf"
	conf_refused "a configuration another user owns" perfconv-upload \
		"perfconv-upload: $E/web.conf: owned by uid 65534, not root: its owner chooses what root runs and sends; not used (chown root:root $E/web.conf)"
	conf_refused "a configuration another user owns" perfconv-record \
		"perfconv-record: $E/web.conf: not root's alone (owner uid 65534, mode 600): it says what root runs; not used"
	conf
	chmod 620 "$E/web.conf"
	conf_refused "a configuration its group can write" perfconv-upload \
		"perfconv-upload: $E/web.conf: writable by others than root (mode 620); not used (chmod 600 $E/web.conf)"
	conf_refused "a configuration its group can write" perfconv-record \
		"perfconv-record: $E/web.conf: not root's alone (owner uid 0, mode 620): it says what root runs; not used"
	conf
	chown 65534 "$E/web.key"
	conf_refused "a key another user owns" perfconv-upload "perfconv-upload: $E/web.key: owned by uid 65534, not root"
	chown 0 "$E/web.key"
	chmod 777 "$E"
	conf_refused "a configuration folder anyone can write" perfconv-upload \
		"perfconv-upload: $E: owned by uid 0, mode 777: others than root could replace what is in it; not used (chown root:root $E; chmod 700 $E)"
	conf_refused "a configuration folder anyone can write" perfconv-record "perfconv-record: $E: not root's alone (owner uid 0, mode 777)"
	chmod 700 "$E"
	# and the record script with a good configuration runs perf
	conf
	unit perfconv-record
	[[ $ran == "record -e cpu-clock -p $$ "* ]] && ok "perfconv-record with root's 0600 configuration: perf $ran" ||
		bad "perfconv-record with a good configuration: exit $urc, ran ${ran:-nothing}: $(cat "$TMP/unit.err")"
fi

finish e2e_servicetrust
