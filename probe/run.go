// Package probe says what a measurement means: dialects turn events into
// content chunks, actions and end markers; the timeline collects milestones;
// the reduction computes TFC, gaps, tail, close and stalls; samples are
// fixed and versioned. A probe returns a Record; it never writes a metric or
// a log line itself.
package probe

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
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
}

// Millis returns the chunk times and the end marker in ms from the start.
func (tl *Timeline) Millis() ([]float64, *float64) {
	out := make([]float64, len(tl.Chunks))
	for i, c := range tl.Chunks {
		out[i] = ms(c.Sub(tl.Start))
	}
	return out, since(tl.Start, tl.End)
}

// Options are the per-run settings of a probe.
type Options struct {
	Sample Sample
	// CancelAfter is how many content chunks the cancel sample reads
	// before it cancels; 0 means DefaultCancelAfter.
	CancelAfter int
	// Client is the transport; nil means a plain resumeclient.Client.
	Client *resumeclient.Client
	// RequestID identifies the run; generated when empty. It is sent to
	// the target as X-Request-Id so a run can be traced on both ends.
	RequestID string
	// Drill names the drill in the record; empty means "none".
	Drill string
}

// Result is a Record and the timeline it was reduced from.
type Result struct {
	Record   Record
	Timeline Timeline
}

// NewRequestID returns a random 128-bit id in hex.
func NewRequestID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Run sends one streaming request for o.Sample to t and measures it. The
// caller owns the deadline: ctx's deadline is the probe's timeout, and a
// cancellation of ctx is recorded as client_cancelled.
func Run(ctx context.Context, t Target, o Options) Result {
	r := &run{t: t, o: o}
	r.rec = Record{
		RequestID: o.RequestID, Target: t.Name, Sample: o.Sample.Name, SampleVersion: o.Sample.Version,
		Dialect: t.Dialect, Drill: o.Drill, StartedAt: time.Now().UTC().Format(time.RFC3339Nano),
	}
	if r.rec.RequestID == "" {
		r.rec.RequestID = NewRequestID()
	}
	if r.rec.Drill == "" {
		r.rec.Drill = "none"
	}
	r.do(ctx)
	r.finish()
	return Result{Record: r.rec, Timeline: r.tl}
}

type run struct {
	t   Target
	o   Options
	d   Dialect
	rec Record
	tl  Timeline
	tok *Tokens
}

func (r *run) client() *resumeclient.Client {
	if r.o.Client != nil {
		return r.o.Client
	}
	return &resumeclient.Client{MaxEventSize: r.t.MaxEventSize}
}

func (r *run) fail(o Outcome, format string, args ...any) {
	r.rec.Outcome = o
	r.rec.Error = fmt.Sprintf(format, args...)
}

func (r *run) do(ctx context.Context) {
	d, err := LookupDialect(r.t.Dialect)
	if err != nil {
		r.fail(ProtocolError, "invalid target: %v", err)
		return
	}
	r.d = d
	req, err := d.Request(r.t, r.o.Sample)
	if err != nil {
		r.fail(ProtocolError, "invalid target: %v", err)
		return
	}
	if req.Header == nil {
		req.Header = http.Header{}
	}
	req.Header.Set("X-Request-Id", r.rec.RequestID)
	c := r.client()
	st, err := c.Open(ctx, req)
	if st != nil {
		r.tl.Start, r.tl.Headers = st.Start, st.HeadersAt
		r.rec.HTTPStatus = st.Status
		defer func() {
			st.Close()
			r.tl.Closed = now(c)
			r.rec.Bytes = st.Bytes()
			r.rec.LastEventID = st.LastEventID()
			if st.Truncated() {
				r.rec.Truncated++
			}
		}()
	}
	if err != nil {
		r.classify(ctx, err)
		return
	}
	r.read(ctx, c, st)
}

func now(c *resumeclient.Client) time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// read consumes the stream until the end marker, an error or the cancel.
func (r *run) read(ctx context.Context, c *resumeclient.Client, st *resumeclient.Stream) {
	cancelAfter := r.o.CancelAfter
	if cancelAfter <= 0 {
		cancelAfter = DefaultCancelAfter
	}
	for {
		ev, err := st.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				if r.d.EOFIsEnd(r.t) {
					r.tl.End = now(c)
					r.rec.Outcome = Success
					return
				}
				r.fail(UpstreamError, "stream closed by the server before the end marker")
				return
			}
			r.classify(ctx, err)
			return
		}
		if ev.Kind == resumeclient.KindComment {
			r.rec.Comments++
			continue
		}
		r.rec.Events++
		if r.tl.FirstEvent.IsZero() && len(ev.Data) > 0 {
			r.tl.FirstEvent = ev.Dispatched
		}
		ch, err := r.d.Decode(r.t, ev)
		if err != nil {
			r.fail(ProtocolError, "%v", err)
			return
		}
		if ch.Usage != nil {
			r.tok = ch.Usage
		}
		switch ch.Kind {
		case Text:
			r.tl.Chunks = append(r.tl.Chunks, ev.Dispatched)
			if r.tl.FirstEffective.IsZero() {
				r.tl.FirstEffective = ev.Dispatched
			}
			if r.o.Sample.Cancel && len(r.tl.Chunks) >= cancelAfter {
				st.Close()
				r.fail(ClientCancelled, "cancelled by the %s sample after %d content chunks", r.o.Sample.Name, len(r.tl.Chunks))
				return
			}
		case Effective:
			if r.tl.FirstEffective.IsZero() {
				r.tl.FirstEffective = ev.Dispatched
			}
		case End:
			r.tl.End = ev.Dispatched
			r.rec.Outcome = Success
			return
		case Failed:
			r.fail(UpstreamError, "error event in the stream: %s", ch.Message)
			return
		}
	}
}

// classify turns a transport error into an outcome and a one-line message.
func (r *run) classify(ctx context.Context, err error) {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
		what := "end marker"
		if r.tl.Headers.IsZero() {
			what = "response headers"
		} else if len(r.tl.Chunks) == 0 {
			what = "first chunk"
		}
		if dl, ok := ctx.Deadline(); ok && !r.tl.Start.IsZero() {
			r.fail(Timeout, "timeout: no %s within %s", what, dl.Sub(r.tl.Start).Round(time.Millisecond))
		} else {
			r.fail(Timeout, "timeout: no %s in time", what)
		}
	case errors.Is(ctx.Err(), context.Canceled):
		r.fail(ClientCancelled, "cancelled before the end (shutdown)")
	case errors.Is(err, resumeclient.ErrNotEventStream), errors.Is(err, resumeclient.ErrEventTooLarge):
		r.fail(ProtocolError, "%v", err)
	case errors.Is(err, resumeclient.ErrHTTPStatus):
		r.fail(UpstreamError, "%v", err)
	case errors.Is(err, resumeclient.ErrReset):
		r.fail(UpstreamError, "%v (after %d content chunks)", err, len(r.tl.Chunks))
	default:
		r.fail(UpstreamError, "%v", err)
	}
}

// finish reduces the timeline into the record.
func (r *run) finish() {
	rec, tl := &r.rec, &r.tl
	if tl.Start.IsZero() {
		return
	}
	rec.HeadersMs = since(tl.Start, tl.Headers)
	rec.FirstEventMs = since(tl.Start, tl.FirstEvent)
	rec.FirstEffectiveMs = since(tl.Start, tl.FirstEffective)
	rec.EndMs = since(tl.Start, tl.End)
	chunks, end := tl.Millis()
	s := Reduce(chunks, end)
	fillScores(rec, s)
	if !tl.Closed.IsZero() {
		rec.DurationMs = ms(tl.Closed.Sub(tl.Start))
	}
	if r.tok != nil {
		t := *r.tok
		rec.Tokens = &t
		if s.Tail != nil && *s.Tail > 0 && t.Completion > 0 {
			rec.VisibleTPS = ptr(float64(t.Completion) / (*s.Tail / 1000))
			*rec.VisibleTPS = float64(int64(*rec.VisibleTPS*100+0.5)) / 100
		}
	}
}

// fillScores copies a reduction into a record.
func fillScores(rec *Record, s Scores) {
	rec.Chunks = s.Chunks
	rec.TFCMs = s.TFC
	rec.Gaps = Gaps{Count: len(s.Gaps), P50Ms: round3(s.GapP50), P95Ms: round3(s.GapP95), MaxMs: round3(s.GapMax), Values: s.Gaps}
	for _, g := range s.Last5 {
		rec.Gaps.Last5 = append(rec.Gaps.Last5, *round3(&g))
	}
	rec.TailMs = round3(s.Tail)
	rec.CloseMs = round3(s.Close)
	rec.Stalls = s.Stalls
}
