package refserver

import (
	"strconv"
	"time"
)

// Events builds a generic schedule: one event per offset, with integer ids
// from 1 and data "chunk N", ending with an event whose data is [DONE] at
// end (skipped when end is negative).
func Events(at []time.Duration, end time.Duration) []Step {
	steps := make([]Step, 0, len(at)+1)
	for i, t := range at {
		steps = append(steps, Step{At: t, ID: strconv.Itoa(i + 1), Data: "chunk " + strconv.Itoa(i+1)})
	}
	if end >= 0 {
		steps = append(steps, Step{At: end, ID: strconv.Itoa(len(at) + 1), Data: "[DONE]"})
	}
	return steps
}

// DrillEvents is the generic stream the drills run on: 12 events 40 ms
// apart from 100 ms, ids 1 to 12, then [DONE] with id 13.
func DrillEvents() []Step {
	at := make([]time.Duration, 12)
	for i := range at {
		at[i] = time.Duration(100+40*i) * time.Millisecond
	}
	return Events(at, 600*time.Millisecond)
}
