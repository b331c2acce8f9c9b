#!/usr/bin/env bash
# start-slurm.sh [DIR]: a single-node Slurm on this machine, for the test of
# docs/distributed.md's job array (internal/slurmtest, go test -tags slurm).
#
# This host is the controller and the one compute node. Everything the
# daemons write (munge key and socket, slurm.conf, state, spool, logs, pid
# files) lives under DIR (default $GQUANT_SLURM_DIR, else /tmp/gquant-slurm);
# nothing under /etc is written. On a Debian machine without Slurm it first
# installs slurm-wlm and munge with apt-get (root, or passwordless sudo).
#
# On success the last line on standard output is
#     export SLURM_CONF=DIR/slurm.conf
# so `eval "$(start-slurm.sh DIR)"` points sbatch, sinfo and the rest at this
# cluster; everything else goes to standard error. Running it again while the
# cluster of DIR is up only prints that line. stop-slurm.sh DIR stops it.
#
# Settings and why (measured on Debian 12, slurm-wlm 22.05.8, munge 0.5.15):
# - SlurmUser=root: DIR and all under it belong to root, and slurmctld would
#   otherwise run as the package's "slurm" user. slurmd runs as root (the
#   default SlurmdUser) because it starts jobs as the submitting user.
# - ProctrackType=proctrack/linuxproc, TaskPlugin=task/none,
#   JobAcctGatherType=jobacct_gather/none: no cgroups at all. The cgroup
#   plugins worked on the machine this was written on (cgroup v1 writable by
#   root), but containers often do not allow it and the test needs no
#   containment.
# - SelectType=select/cons_tres with CR_CPU: the node is shared out by CPUs,
#   so array tasks that ask for fewer CPUs than the node has run side by side.
# - NodeName is `hostname -s` with NodeAddr=127.0.0.1 and SlurmctldHost
#   NAME(127.0.0.1): no DNS needed. CPUs is nproc, RealMemory is MemTotal of
#   /proc/meminfo in MiB, which is what slurmd itself measures; a larger value
#   would drain the node ("Low RealMemory").
# - AuthInfo=socket=...: our own munged with its own key and socket, so a
#   system munged (or none) does not matter. munged requires that everyone may
#   search the socket's folder and every folder above it (mode o+x), so DIR is
#   made 0755.
# - Ports: the first free pair from 6817/6818 upwards, so a system Slurm or a
#   second test cluster on the same machine does not collide.
# - MailProg=/bin/true: slurmctld logs an error when no mailer is installed.
# The "mpi/pmix ... can not load PMIx library" errors in the logs are
# harmless: the plugins are listed, never used (MpiDefault=none).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-${GQUANT_SLURM_DIR:-/tmp/gquant-slurm}}
timeout=${GQUANT_SLURM_TIMEOUT:-60} # seconds for each daemon to come up
cluster=gquanttest

log() { echo "start-slurm: $*" >&2; }
die() {
	log "error: $*"
	exit 1
}

case $dir in
/*) ;;
*) dir=$PWD/$dir ;;
esac

if [ "$(id -u)" != 0 ]; then
	if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
		exec sudo -n GQUANT_SLURM_TIMEOUT="$timeout" bash "$here/start-slurm.sh" "$dir"
	fi
	die "needs root (or passwordless sudo) to install packages and start slurmd"
fi

# --- packages ---------------------------------------------------------------
missing=""
for c in munged munge unmunge slurmctld slurmd sbatch sinfo scontrol squeue scancel; do
	command -v "$c" >/dev/null 2>&1 || missing="$missing $c"
done
if [ -n "$missing" ]; then
	command -v apt-get >/dev/null 2>&1 || die "missing$missing and no apt-get to install slurm-wlm and munge"
	log "installing slurm-wlm and munge (missing:$missing)"
	# The packages' postinst scripts would start the system's munge and Slurm
	# services (on /etc/munge, /etc/slurm, ports 6817/6818); a policy-rc.d
	# that says no keeps them off while we install.
	policy=/usr/sbin/policy-rc.d
	made_policy=""
	if [ ! -e "$policy" ]; then
		printf '#!/bin/sh\nexit 101\n' >"$policy"
		chmod 755 "$policy"
		made_policy=1
	fi
	t0=$(date +%s)
	status=0
	{
		apt-get update -q &&
			DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends slurm-wlm munge
	} >&2 || status=$?
	[ -n "$made_policy" ] && rm -f "$policy"
	[ "$status" = 0 ] || die "apt-get failed (exit $status)"
	log "installed in $(($(date +%s) - t0)) s"
fi

# --- the running cluster of DIR, if any --------------------------------------
conf=$dir/slurm.conf
export SLURM_CONF=$conf

# alive NAME PIDFILE: whether PIDFILE names a live NAME process started for
# DIR (its command line names DIR, so a reused pid or another cluster's daemon
# does not count).
alive() {
	local pid cmd
	[ -s "$2" ] || return 1
	pid=$(cat "$2")
	[ -r "/proc/$pid/cmdline" ] || return 1
	cmd=$(tr '\0' ' ' <"/proc/$pid/cmdline")
	case $cmd in
	*"$1"*"$dir/"*) return 0 ;;
	esac
	return 1
}

node=$(hostname -s)

# node_state: the node's state as sinfo prints it (idle, mixed, idle*, ...).
node_state() {
	timeout 10 sinfo -h -N -n "$node" -o %T 2>/dev/null | head -n1
}

if [ -f "$conf" ] && alive munged "$dir/munge/munged.pid" && alive slurmctld "$dir/slurmctld.pid" &&
	alive slurmd "$dir/slurmd.pid"; then
	case $(node_state) in
	idle | mixed | allocated | completing)
		log "already running in $dir"
		echo "export SLURM_CONF=$conf"
		exit 0
		;;
	esac
fi
if [ -f "$conf" ] || [ -d "$dir/munge" ]; then
	log "stopping what is left of an earlier start in $dir"
	bash "$here/stop-slurm.sh" "$dir" >&2
fi

# --- folders and munge key ----------------------------------------------------
mkdir -p "$dir"
chmod 755 "$dir"
d=$dir
while [ "$d" != / ]; do
	d=$(dirname "$d")
	[ "$(($(stat -c %#a "$d") & 1))" = 1 ] ||
		die "munged needs every folder above its socket searchable by all (chmod o+x $d)"
done
mkdir -p "$dir/munge" "$dir/state" "$dir/spool" "$dir/log"
chmod 755 "$dir/munge"
if [ ! -s "$dir/munge/munge.key" ]; then
	(
		umask 077
		head -c 1024 /dev/urandom >"$dir/munge/munge.key"
	)
fi

# --- ports --------------------------------------------------------------------
in_use() {
	if command -v ss >/dev/null 2>&1; then
		[ -n "$(ss -Hltn "sport = :$1" 2>/dev/null)" ]
	else
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
	fi
}
port=6817
while in_use "$port" || in_use "$((port + 1))"; do
	port=$((port + 2))
	[ "$port" -lt 6917 ] || die "no free pair of ports in 6817-6917"
done

# --- slurm.conf -----------------------------------------------------------------
cpus=$(nproc)
mem=$(awk '/^MemTotal:/ { print int($2 / 1024) }' /proc/meminfo)
cat >"$conf" <<EOF
# Written by internal/slurmtest/start-slurm.sh: a single-node Slurm for tests.
ClusterName=$cluster
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
InactiveLimit=0
KillWait=5
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF

# --- daemons ------------------------------------------------------------------
show_logs() {
	for f in "$dir/munge/munged.log" "$dir/log/slurmctld.log" "$dir/log/slurmd.log"; do
		[ -f "$f" ] || continue
		log "--- last lines of $f"
		tail -n 20 "$f" >&2
	done
	timeout 5 scontrol show node "$node" >&2 2>/dev/null || true
}

# wait_for WHAT COMMAND...: retries COMMAND every half second for $timeout s.
wait_for() {
	local what=$1 i
	shift
	for ((i = 0; i < timeout * 2; i++)); do
		if "$@" >/dev/null 2>&1; then
			return 0
		fi
		sleep 0.5
	done
	show_logs
	die "$what did not come up in $timeout s"
}

munge_ok() {
	munge -n -S "$dir/munge/munge.socket" | unmunge -S "$dir/munge/munge.socket"
}
ctld_ok() {
	timeout 10 scontrol ping | grep -q 'is UP'
}
node_idle() {
	[ "$(node_state)" = idle ]
}

t0=$(date +%s.%N)
# The daemons detach themselves; their standard streams go to the log folder
# so that a caller reading our output through a pipe does not wait on them.
munged --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
	--pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" \
	--seed-file="$dir/munge/munged.seed" </dev/null >>"$dir/log/daemons.out" 2>&1 ||
	{
		show_logs
		die "munged failed"
	}
wait_for munged munge_ok
slurmctld -f "$conf" -c </dev/null >>"$dir/log/daemons.out" 2>&1 || {
	show_logs
	die "slurmctld failed"
}
wait_for slurmctld ctld_ok
slurmd -f "$conf" -N "$node" -c </dev/null >>"$dir/log/daemons.out" 2>&1 || {
	show_logs
	die "slurmd failed"
}
wait_for "node $node (idle)" node_idle
log "up in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s: node $node, $cpus CPUs, $mem MiB, ports $port/$((port + 1)), $dir"
echo "export SLURM_CONF=$conf"
