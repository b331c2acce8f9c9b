//go:build amd64 && !purego

package iquant

import "github.com/gquant/gquant/internal/cpu"

// useNeighbourAVX2 selects the assembly neighbour search, eight candidates
// per AVX2 vector (VFMADD231PS is a correctly rounded float32 FMA, so no tie
// check is needed). It is off with the purego tag, which tests the portable
// code.
var useNeighbourAVX2 = cpu.X86.HasFMA && cpu.X86.HasAVX2

// neighbourJobsAVX2 runs the vector search for each of the njobs jobs:
// over the job's chunks of eight candidates from lanes[laneOff] (see
// codeGrid.lanes) of the group of dim values x[group*dim:], w[group*dim:],
// the tables diff = fma(job.scale, q[l], -x[c]) and w[c]*diff are built in lane
// c<<bits + l (expand gives the coordinate of each lane, q the value of each
// level), each candidate sums fma(wdiff, diff, d2) over its coordinates in
// order, and pos receives the position of the first candidate with the
// smallest sum below math.MaxFloat32, or -1.
//
//go:noescape
func neighbourJobsAVX2(x, w *float32, q *[8]float32, expand *[4][8]int32, lanes *uint32, jobs *nbJob, njobs, dim int)
