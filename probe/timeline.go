package probe

import (
	"time"
)

// Timeline is the raw milestones of one request on the monotonic clock. Zero
// times are milestones that did not happen.
type Timeline struct {
	Start          time.Time
	Headers        time.Time
	FirstEvent     time.Time // first non-comment event with non-empty data
	FirstEffective time.Time // first content or action
	// Reasoning is the span of the model's reasoning events, nil when
	// there was none (made at the first: most streams have none).
	Reasoning *ReasoningSpan
	// chunks are the content chunks' arrival times after Start, in
	// pages: a third of the memory of time.Time values, kept for as long
	// as the stream lasts, and never copied (ChunkCount, Chunk, Chunks).
	chunks pages[time.Duration]
	End    time.Time // the end marker
	Closed time.Time // the stream was over for the client
	// Reconnects are the resumes, in order; Breaks[i] is the index of
	// the first chunk after Reconnects[i] (ChunkCount if none).
	Reconnects []Reconnect
	Breaks     []int
}

// ReasoningSpan is when a stream's reasoning came: its first and last
// events, how many, and whether they were an inline <think> block.
type ReasoningSpan struct {
	First, Last time.Time
	Count       int
	Inline      bool
}

// Reconnect is the timeline of one reconnect.
type Reconnect struct {
	SentID     string    // the cursor sent (Last-Event-ID, starting_after)
	Drop       time.Time // the connection was dropped (by the client or the server)
	Start      time.Time // the new request was started
	Headers    time.Time // its response headers arrived
	FirstChunk time.Time // its first new content chunk arrived
	FirstEvent time.Time // its first event arrived (a replayed one included; Replay resumes only)
	Replayed   time.Time // its last event the client already had arrived (Replay resumes only)
	ByServer   bool      // the server dropped the connection
}

// ChunkCount is the number of content chunks.
func (tl *Timeline) ChunkCount() int { return tl.chunks.len() }

// Chunk is the arrival time of content chunk i (0 <= i < ChunkCount).
func (tl *Timeline) Chunk(i int) time.Time { return tl.Start.Add(*tl.chunks.at(i)) }

// Chunks returns the arrival times of the content chunks, in order, in a
// new slice.
func (tl *Timeline) Chunks() []time.Time {
	out := make([]time.Time, tl.ChunkCount())
	for i := range out {
		out[i] = tl.Chunk(i)
	}
	return out
}

// Millis returns the chunk times and the end marker in ms from the start.
func (tl *Timeline) Millis() ([]float64, *float64) {
	out := make([]float64, tl.ChunkCount())
	for i := range out {
		out[i] = ms(*tl.chunks.at(i))
	}
	return out, since(tl.Start, tl.End)
}

// scores is the timeline's reduction: Reduce of Millis, over the chunk
// times where they are.
func (tl *Timeline) scores() Scores {
	return reduce(tl.ChunkCount(), func(i int) float64 { return ms(*tl.chunks.at(i)) }, since(tl.Start, tl.End), tl.Breaks)
}

// ResumeSpan is the time a user waited on a resume: from the first drop
// after the last new chunk to the first new chunk after it (several
// reconnects that bring only re-deliveries make one span).
type ResumeSpan struct {
	Drop, End time.Time
	Chunk     int // index in Chunks of the first new chunk after it
	Handshake time.Duration
}

// ResumeSpans returns the timeline's resume spans, in order.
func (tl *Timeline) ResumeSpans() []ResumeSpan {
	var out []ResumeSpan
	var pending time.Time
	for i, rc := range tl.Reconnects {
		if pending.IsZero() {
			pending = rc.Drop
		}
		if rc.FirstChunk.IsZero() {
			continue
		}
		out = append(out, ResumeSpan{Drop: pending, End: rc.FirstChunk, Chunk: tl.Breaks[i], Handshake: rc.FirstChunk.Sub(rc.Start)})
		pending = time.Time{}
	}
	return out
}
