package refserver

import "time"

// PlainText is the Content-Type of a plain-text stream, as the AI SDK's
// toTextStreamResponse sends it.
const PlainText = "text/plain; charset=utf-8"

// Text builds the steps of a plain-text stream: bare text written as it
// comes, no framing (serve it as PlainText: set the Server's
// ContentType); the body's end is the end.
type Text struct{ steps []Step }

// Write adds a write of s.
func (x *Text) Write(at time.Duration, s string) *Text {
	x.steps = append(x.steps, Step{At: at, Raw: s})
	return x
}

// Steps returns the schedule.
func (x *Text) Steps() []Step { return append([]Step(nil), x.steps...) }
