#!/usr/bin/env bash
# stop-slurm.sh [--purge] [DIR]: stops the single-node Slurm that
# start-slurm.sh started in DIR (default $GQUANT_SLURM_DIR, else
# /tmp/gquant-slurm): cancels its jobs, then stops slurmd, slurmctld and
# munged, each found by the pid file in DIR and only if its command line names
# DIR. --purge then removes DIR (only if it holds start-slurm.sh's
# slurm.conf). Stopping what is not running is not an error.
set -euo pipefail

purge=""
if [ "${1:-}" = --purge ]; then
	purge=1
	shift
fi
dir=${1:-${GQUANT_SLURM_DIR:-/tmp/gquant-slurm}}
case $dir in
/*) ;;
*) dir=$PWD/$dir ;;
esac

log() { echo "stop-slurm: $*" >&2; }

if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
	here=$(cd "$(dirname "$0")" && pwd)
	exec sudo -n bash "$here/stop-slurm.sh" ${purge:+--purge} "$dir"
fi

conf=$dir/slurm.conf
export SLURM_CONF=$conf

# pid_of NAME PIDFILE: the pid in PIDFILE if that process is a live NAME
# started for DIR.
pid_of() {
	local pid cmd
	[ -s "$2" ] || return 1
	pid=$(cat "$2")
	[ -r "/proc/$pid/cmdline" ] || return 1
	cmd=$(tr '\0' ' ' <"/proc/$pid/cmdline")
	case $cmd in
	*"$1"*"$dir/"*) echo "$pid" ;;
	*) return 1 ;;
	esac
}

# stop NAME:PIDFILE...: SIGTERM to each, up to 15 s for all to exit, then
# SIGKILL to those left.
stop() {
	local spec name file pid pids="" i
	for spec in "$@"; do
		name=${spec%%:*}
		file=${spec#*:}
		if pid=$(pid_of "$name" "$file"); then
			kill -TERM "$pid" 2>/dev/null || true
			pids="$pids $pid"
			log "stopping $name (pid $pid)"
		fi
		rm -f "$file"
	done
	for ((i = 0; i < 150; i++)); do
		left=""
		for pid in $pids; do
			[ -d "/proc/$pid" ] && left="$left $pid"
		done
		[ -z "$left" ] && return 0
		sleep 0.1
	done
	log "killing$left: no exit 15 s after SIGTERM"
	# shellcheck disable=SC2086 # one pid a word
	kill -KILL $left 2>/dev/null || true
}

# Jobs first, while slurmctld and slurmd can still end them: a batch job's
# slurmstepd outlives slurmd otherwise.
if [ -f "$conf" ] && pid_of slurmctld "$dir/slurmctld.pid" >/dev/null; then
	jobs=$(timeout 10 squeue -h -o %A 2>/dev/null || true)
	if [ -n "$jobs" ]; then
		# shellcheck disable=SC2086 # one job id a word
		timeout 10 scancel $jobs 2>/dev/null || true
		for ((i = 0; i < 20; i++)); do
			[ -z "$(timeout 10 squeue -h -o %A 2>/dev/null || true)" ] && break
			sleep 0.5
		done
	fi
fi
# munged last: the Slurm daemons may still talk to each other on the way out.
stop "slurmd:$dir/slurmd.pid" "slurmctld:$dir/slurmctld.pid"
stop "munged:$dir/munge/munged.pid"

if [ -n "$purge" ] && [ -d "$dir" ]; then
	if grep -q '^# Written by internal/slurmtest/start-slurm.sh' "$conf" 2>/dev/null; then
		rm -rf "$dir"
		log "removed $dir"
	else
		log "not removing $dir: it holds no slurm.conf of start-slurm.sh"
	fi
fi
