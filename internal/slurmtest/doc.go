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
// its own in a temporary folder and stops it at the end. The job script and
// its stand-in for the quantize run are checked without the tag, by running
// the script with the variables Slurm would set.
package slurmtest
