// Package slurmtest runs docs/distributed.md's Slurm job array for real, on
// a single-node Slurm that its scripts start on this machine (issue 22).
//
// start-slurm.sh [DIR] installs Debian's slurm-wlm and munge if they are
// missing (apt-get, as root), writes a one-node slurm.conf and a munge key
// under DIR, starts munged, slurmctld and slurmd, and waits until the node is
// idle; stop-slurm.sh [--purge] DIR stops them. Both scripts say in their
// headers which settings a sandbox needs and why.
//
// The test that submits the array is behind the build tag "slurm" because it
// needs root and starts daemons:
//
//	go test -tags slurm ./internal/slurmtest
//
// With GQUANT_SLURM_DIR set it uses (and leaves running) the cluster that
// start-slurm.sh started there, as .ci/run does; without it the test starts
// its own in a temporary folder and stops it at the end. The job, a gquant
// built from this tree running quantize --only-shards
// $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT, is also checked without the
// tag, by running the script with the variables Slurm would set: in both,
// the union of the tasks' shards must be a one-host run's byte for byte, and
// gquant verify must pass it.
package slurmtest
