package probe

import (
	"time"

	"github.com/streamprobe/streamprobe/resumeclient"
)

// Timeline is the raw milestones of one request on the monotonic clock. Zero
// times are milestones that did not happen.
type Timeline struct {
	Start          time.Time
	Headers        time.Time
	FirstEvent     time.Time // first non-comment event with non-empty data
	FirstEffective time.Time // first content or action
	Chunks         []time.Time
	End            time.Time // the end marker
	Closed         time.Time // the stream was over for the client
	// Reconnects are the resumes, in order; Breaks[i] is the index in
	// Chunks of the first chunk after Reconnects[i] (len(Chunks) if none).
	Reconnects []Reconnect
	Breaks     []int
}

// Reconnect is the timeline of one reconnect.
type Reconnect struct {
	SentID     string    // the cursor sent (Last-Event-ID, starting_after)
	Drop       time.Time // the connection was dropped (by the client or the server)
	Start      time.Time // the new request was started
	Headers    time.Time // its response headers arrived
	FirstChunk time.Time // its first new content chunk arrived
	ByServer   bool      // the server dropped the connection
}

// Millis returns the chunk times and the end marker in ms from the start.
func (tl *Timeline) Millis() ([]float64, *float64) {
	out := make([]float64, len(tl.Chunks))
	for i, c := range tl.Chunks {
		out[i] = ms(c.Sub(tl.Start))
	}
	return out, since(tl.Start, tl.End)
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

// event takes one event or comment of the stream into the timeline; it
// returns true when the run is over (end marker, error, cancel).
func (r *run) event(ev *resumeclient.Event) bool {
	if ev.Kind == resumeclient.KindComment {
		r.rec.Comments++
		return false
	}
	if r.staleConn {
		return r.staleEvent(ev)
	}
	ch, err := r.d.Decode(r.t, ev)
	if err != nil {
		r.rec.Events++
		r.fail(ProtocolError, "%v", err)
		return true
	}
	if ch.Kind == Liveness {
		r.rec.Comments++
		return false
	}
	r.rec.Events++
	if r.tl.FirstEvent.IsZero() && len(ev.Data) > 0 {
		r.tl.FirstEvent = ev.Dispatched
	}
	cursor, hasCursor := r.position(ev, &ch)
	again := r.check != nil && r.check.event(cursor, hasCursor, ev.Type, ev.Data)
	if ch.HasUsage {
		r.usage(ch.Usage)
	}
	switch ch.Kind {
	case Text:
		return r.text(ev, again)
	case Effective:
		if r.tl.FirstEffective.IsZero() {
			r.tl.FirstEffective = ev.Dispatched
		}
	case End:
		r.tl.End = ev.Dispatched
		r.rec.Outcome = Success
		return true
	case Failed:
		r.fail(UpstreamError, "error event in the stream: %s", ch.Message)
		return true
	}
	return false
}

// staleEvent takes an event on a connection resumed from a stale id: the
// keep-alives and metadata before the answer are counted, and the first
// event of the answer ends the run with its judgement.
func (r *run) staleEvent(ev *resumeclient.Event) bool {
	if t := string(ev.Type); t != orStr(r.o.Drill.ErrorEvent, "error") && t != orStr(r.o.Drill.ResetEvent, "reset") {
		if ch, err := r.d.Decode(r.t, ev); err == nil && (ch.Kind == Liveness || ch.Kind == Meta) {
			if ch.Kind == Liveness {
				r.rec.Comments++
			} else {
				r.rec.Events++
			}
			return false
		}
	}
	r.rec.Events++
	r.staleAnswer(ev)
	return true
}

// position notes the resume position an event carries (its cursor, and
// the response id), dropping the connection when the drill's drop waited
// for a cursor, and whether the chunk was the stream's last; it returns
// the cursor for the resume check.
func (r *run) position(ev *resumeclient.Event, ch *Chunk) (string, bool) {
	cursor, hasCursor := r.d.Cursor(ev, *ch)
	if hasCursor {
		r.cursor, r.cursorCleared = cursor, cursor == ""
		if cursor != "" {
			r.cursorSeen.Store(true)
			if r.dropDue.CompareAndSwap(true, false) {
				r.st.Close() // the drill's DropAt came before a cursor: drop now
			}
		}
	}
	if ch.ResponseID != "" {
		r.respID = ch.ResponseID
	}
	if ch.Final {
		r.final = true
	}
	return cursor, hasCursor
}

// usage keeps the token counts an event reports, the latest non-zero one
// of each.
func (r *run) usage(u Tokens) {
	if r.tok == nil {
		r.tok = &Tokens{}
	}
	if u.Prompt > 0 {
		r.tok.Prompt = u.Prompt
	}
	if u.Completion > 0 {
		r.tok.Completion = u.Completion
	}
}

// text takes a content chunk (again: a re-delivery the check recognised,
// which is not a new chunk) and applies the limits that stop a run after
// so many chunks: max_chunks, the cancel sample, the drill's drop.
func (r *run) text(ev *resumeclient.Event, again bool) bool {
	r.connTexts++
	if !again {
		if limit := orInt(r.t.MaxChunks, DefaultMaxChunks); len(r.tl.Chunks) >= limit {
			r.fail(ProtocolError, "more than %d content chunks: the run stops to keep its memory bounded (max_chunks)", limit)
			return true
		}
		r.chunk(ev.Dispatched)
	}
	if r.o.Sample.Cancel && len(r.tl.Chunks) >= orInt(r.o.CancelAfter, DefaultCancelAfter) {
		r.fail(ClientCancelled, "cancelled by the %s sample after %d content chunks", r.o.Sample.Name, len(r.tl.Chunks))
		return true
	}
	if r.dropAfter > 0 && r.connTexts >= r.dropAfter {
		r.st.Close() // the drill's drop: Next reports ErrDropped
	}
	return false
}

// chunk adds a new content chunk.
func (r *run) chunk(at time.Time) {
	if r.firstOnConn && len(r.tl.Reconnects) > 0 {
		r.reconnect().FirstChunk = at
	}
	r.firstOnConn = false
	r.tl.Chunks = append(r.tl.Chunks, at)
	if len(r.tl.Chunks) == 1 && r.firstTimer != nil {
		r.firstTimer.Stop()
	}
	if r.tl.FirstEffective.IsZero() {
		r.tl.FirstEffective = at
	}
}

func (r *run) reconnect() *Reconnect { return &r.tl.Reconnects[len(r.tl.Reconnects)-1] }

// connDone notes what a connection that is over leaves in the record.
func (r *run) connDone() {
	st := r.st
	if st == nil {
		return
	}
	r.st = nil
	st.Close()
	r.tl.Closed = r.now()
	r.rec.Bytes += st.Bytes()
	if n, ok := st.WireBytes(); ok {
		total := n + deref64(r.rec.WireBytes)
		r.rec.WireBytes = &total
	}
	if id := st.LastEventID(); id != "" || r.conn == 0 {
		r.rec.LastEventID = id
	}
	if st.Truncated() {
		r.rec.Truncated++
	}
}

func deref64(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// DefaultMaxChunks bounds the content chunks of one run: the timeline
// keeps a time per chunk and the reduction a gap, so a run's memory is
// bounded (about 5 MB at this cap) whatever a server sends. A real answer
// has a few thousand.
const DefaultMaxChunks = 100_000
