//go:build race

package pipeline

// raceEnabled: the race detector is on, whose shadow memory multiplies
// what the process holds, so memory measurements mean nothing.
const raceEnabled = true
