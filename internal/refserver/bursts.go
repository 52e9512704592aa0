package refserver

import (
	"strconv"
	"strings"
	"time"
)

// Bursts is a stream as a buffering proxy delivers it: n events (ids 1..n,
// data "chunk i") released in len(at) bursts of about equal size, each
// burst one write and one flush at its offset, the end marker (data
// [DONE]) in the last one. The events of a burst arrive together: their
// gaps are near zero, and the freezes lie between the bursts.
func Bursts(n int, at ...time.Duration) []Step {
	steps := make([]Step, 0, len(at))
	next := 1
	for b, t := range at {
		var w strings.Builder
		last := n * (b + 1) / len(at)
		for ; next <= last; next++ {
			w.WriteString("id: " + strconv.Itoa(next) + "\ndata: chunk " + strconv.Itoa(next) + "\n\n")
		}
		if b == len(at)-1 {
			w.WriteString("id: " + strconv.Itoa(n+1) + "\ndata: [DONE]\n\n")
		}
		steps = append(steps, Step{At: t, ID: strconv.Itoa(next - 1), Raw: w.String()})
	}
	return steps
}
