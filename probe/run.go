// Package probe says what a measurement means: dialects turn events into
// content chunks, actions and end markers; the timeline collects milestones;
// the reduction computes TFC, gaps, tail, close and stalls; samples are
// fixed and versioned. A probe returns a Record; it never writes a metric or
// a log line itself.
package probe

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
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
	// Drill is the resume drill to run; the zero value runs none.
	Drill Drill
	// FirstChunkTimeout, when > 0, ends the run as a timeout when no
	// content chunk has arrived this long after the start; ctx's deadline
	// still bounds the whole stream.
	FirstChunkTimeout time.Duration
}

// errNoFirstChunk is the cause of a cancel by FirstChunkTimeout.
var errNoFirstChunk = errors.New("no first chunk in time")

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

// Run sends one streaming request for o.Sample to t and measures it,
// running o.Drill's drops and resumes on the way. The caller owns the
// deadline: ctx's deadline is the probe's timeout, and a cancellation of ctx
// is recorded as client_cancelled.
func Run(ctx context.Context, t Target, o Options) Result {
	r := &run{t: t, o: o, drill: o.Drill.name()}
	r.rec = Record{
		RequestID: o.RequestID, Target: t.Name, Sample: o.Sample.Name, SampleVersion: o.Sample.Version,
		Dialect: t.Dialect, Drill: r.drill, StartedAt: time.Now().UTC().Format(time.RFC3339Nano),
	}
	if r.rec.RequestID == "" {
		r.rec.RequestID = NewRequestID()
	}
	if o.FirstChunkTimeout > 0 {
		var cancel context.CancelCauseFunc
		ctx, cancel = context.WithCancelCause(ctx)
		defer cancel(nil)
		r.firstTimer = time.AfterFunc(o.FirstChunkTimeout, func() { cancel(errNoFirstChunk) })
		defer r.firstTimer.Stop()
	}
	r.do(ctx)
	r.finish()
	return Result{Record: r.rec, Timeline: r.tl}
}

type run struct {
	t     Target
	o     Options
	d     Dialect
	drill string
	rec   Record
	tl    Timeline
	tok   *Tokens
	c     *resumeclient.Client
	req   resumeclient.Request
	check *resumeCheck

	conn      int // index of the current connection
	connTexts int // text events on the current connection, re-deliveries included
	staleConn bool
	stale     string // the defined answer to a stale id, when one came
	step      int    // drops the client made for the drill so far
	dupID     string // the id the duplicate drill resumes from twice
	cursor    string // resume cursor of the last dispatched event
	respID    string // the stream's id, for dialects that resume by it

	firstTimer *time.Timer // FirstChunkTimeout, stopped at the first chunk
}

func (r *run) fail(o Outcome, format string, args ...any) {
	r.rec.Outcome = o
	r.rec.Error = fmt.Sprintf(format, args...)
}

func (r *run) now() time.Time {
	if r.c.Now != nil {
		return r.c.Now()
	}
	return time.Now()
}

func (r *run) do(ctx context.Context) {
	d, err := LookupDialect(r.t.Dialect)
	if err != nil {
		r.fail(ProtocolError, "invalid target: %v", err)
		return
	}
	r.d = d
	if r.drill != DrillNone {
		if !d.Resumable() {
			r.rec.Verdict = VerdictNotSupported
			r.rec.ResumeDetail = fmt.Sprintf("the %s dialect has no resume: the %s drill ran as a plain request", r.t.Dialect, r.drill)
			r.drill = DrillNone
		} else {
			r.check = newResumeCheck(r.o.Drill.OpaqueIDs, cursorLabel(r.t.Dialect))
		}
	}
	r.req, err = d.Request(r.t, r.o.Sample, r.check != nil)
	if err != nil {
		r.fail(ProtocolError, "invalid target: %v", err)
		return
	}
	if r.req.Header == nil {
		r.req.Header = http.Header{}
	}
	r.req.Header.Set("X-Request-Id", r.rec.RequestID)
	r.c = r.o.Client
	if r.c == nil {
		r.c = &resumeclient.Client{MaxEventSize: r.t.MaxEventSize}
	}
	if r.t.MaxEventSize > 0 && r.c.MaxEventSize != r.t.MaxEventSize {
		c := *r.c
		c.MaxEventSize = r.t.MaxEventSize
		r.c = &c
	}
	if r.t.InsecureSkipVerify {
		r.c = insecure(r.c)
		defer r.c.HTTP.CloseIdleConnections()
	}
	st, err := r.c.Open(ctx, r.req)
	r.tl.Start, r.tl.Headers = st.Start, st.HeadersAt
	r.rec.HTTPStatus = st.Status
	r.rec.RetryAfterMs = retryAfter(st.Header, time.Now())
	if err != nil {
		r.classify(ctx, err)
		r.closed(st)
		return
	}
	for st != nil {
		st = r.read(ctx, st)
	}
}

// closed notes what a stream that is over leaves in the record.
func (r *run) closed(st *resumeclient.Stream) {
	st.Close()
	r.tl.Closed = r.now()
	r.rec.Bytes += st.Bytes()
	if id := st.LastEventID(); id != "" || r.conn == 0 {
		r.rec.LastEventID = id
	}
	if st.Truncated() {
		r.rec.Truncated++
	}
}

// dropAfter is how many text events connection i reads before the drill
// drops it; 0 means it is not dropped.
// dropAfter is how many text events a connection reads before the drill
// drops it, given how many drops the client has made so far (a drop by the
// server does not advance the drill); 0 means it is not dropped.
func (r *run) dropAfter(step int) int {
	n := orInt(r.o.Drill.DropAfter, DefaultDropAfter)
	switch {
	case (r.drill == DrillDrop || r.drill == DrillStale) && step == 0 && r.o.Drill.DropAt == 0:
		return n
	case r.drill == DrillDuplicate && step <= 2 && (step > 0 || r.o.Drill.DropAt == 0):
		return n
	}
	return 0
}

// read consumes one connection. It returns the next connection when the
// drill (or a drop by the server) resumes, nil when the run is over.
func (r *run) read(ctx context.Context, st *resumeclient.Stream) *resumeclient.Stream {
	if r.step == 0 && r.drill != DrillNone && r.o.Drill.DropAt > 0 {
		// The first drop comes at DropAt, on whichever connection is open.
		tm := time.AfterFunc(r.o.Drill.DropAt-time.Since(r.tl.Start), func() { st.Close() })
		defer tm.Stop()
	}
	cancelAfter := orInt(r.o.CancelAfter, DefaultCancelAfter)
	dropAfter := r.dropAfter(r.step)
	first := r.conn > 0
	for {
		ev, err := st.Next()
		if err != nil {
			return r.ended(ctx, st, err)
		}
		if ev.Kind == resumeclient.KindComment {
			r.rec.Comments++
			continue
		}
		if r.staleConn {
			r.rec.Events++
			r.staleAnswer(st, ev)
			r.closed(st)
			return nil
		}
		ch, err := r.d.Decode(r.t, ev)
		if err != nil {
			r.rec.Events++
			r.fail(ProtocolError, "%v", err)
			r.closed(st)
			return nil
		}
		if ch.Kind == Liveness {
			r.rec.Comments++
			continue
		}
		r.rec.Events++
		if r.tl.FirstEvent.IsZero() && len(ev.Data) > 0 {
			r.tl.FirstEvent = ev.Dispatched
		}
		cursor, hasCursor := r.d.Cursor(ev, ch)
		if hasCursor {
			r.cursor = cursor
		}
		if ch.ResponseID != "" {
			r.respID = ch.ResponseID
		}
		again := false
		if r.check != nil {
			again = r.check.event(cursor, hasCursor, ev.Type, ev.Data)
		}
		if u := ch.Usage; u != nil {
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
		switch ch.Kind {
		case Text:
			r.connTexts++
			if !again {
				if first {
					r.reconnect().FirstChunk = ev.Dispatched
					first = false
				}
				r.tl.Chunks = append(r.tl.Chunks, ev.Dispatched)
				if len(r.tl.Chunks) == 1 && r.firstTimer != nil {
					r.firstTimer.Stop()
				}
				if r.tl.FirstEffective.IsZero() {
					r.tl.FirstEffective = ev.Dispatched
				}
			}
			if r.o.Sample.Cancel && len(r.tl.Chunks) >= cancelAfter {
				st.Close()
				r.fail(ClientCancelled, "cancelled by the %s sample after %d content chunks", r.o.Sample.Name, len(r.tl.Chunks))
				r.closed(st)
				return nil
			}
			if dropAfter > 0 && r.connTexts >= dropAfter {
				st.Close()
				return r.ended(ctx, st, resumeclient.ErrDropped)
			}
		case Effective:
			if r.tl.FirstEffective.IsZero() {
				r.tl.FirstEffective = ev.Dispatched
			}
		case End:
			r.tl.End = ev.Dispatched
			r.rec.Outcome = Success
			r.closed(st)
			return nil
		case Failed:
			r.fail(UpstreamError, "error event in the stream: %s", ch.Message)
			r.closed(st)
			return nil
		}
	}
}

func (r *run) reconnect() *Reconnect { return &r.tl.Reconnects[len(r.tl.Reconnects)-1] }

// ended handles the end of one connection: the end of the run, or a resume.
func (r *run) ended(ctx context.Context, st *resumeclient.Stream, err error) *resumeclient.Stream {
	dropAt := r.now()
	r.closed(st)
	byServer := false
	switch {
	case errors.Is(err, resumeclient.ErrDropped) && ctx.Err() == nil:
		if r.drill == DrillNone {
			r.classify(ctx, err)
			return nil
		}
		r.step++
	case r.staleConn:
		r.staleEnded(ctx, err)
		return nil
	case errors.Is(err, io.EOF) && r.d.EOFIsEnd(r.t):
		r.tl.End = dropAt
		r.rec.Outcome = Success
		return nil
	case r.check != nil && ctx.Err() == nil && (errors.Is(err, io.EOF) || errors.Is(err, resumeclient.ErrReset)) &&
		len(r.tl.Reconnects) < orInt(r.o.Drill.MaxReconnects, DefaultMaxReconnects):
		byServer = true
	case errors.Is(err, io.EOF):
		r.fail(UpstreamError, "stream closed by the server before the end marker")
		return nil
	default:
		r.classify(ctx, err)
		return nil
	}
	return r.resume(ctx, st, dropAt, byServer)
}

// resume opens the next connection of the drill with Last-Event-ID.
func (r *run) resume(ctx context.Context, st *resumeclient.Stream, dropAt time.Time, byServer bool) *resumeclient.Stream {
	last := r.cursor
	if last == "" {
		r.rec.Verdict = VerdictNotSupported
		r.rec.ResumeDetail = "the target sent no event ids before the drop: there is nothing to resume from"
		r.fail(UpstreamError, "dropped for the %s drill, and no event id to resume from", r.drill)
		return nil
	}
	next := r.conn + 1
	id := last
	switch {
	case byServer:
	case r.drill == DrillStale && r.step == 1:
		id = orStr(r.o.Drill.StaleID, DefaultStaleID)
		if r.o.Drill.StaleID == "" && r.t.Dialect == "openai-responses" {
			id = DefaultStaleCursor
		}
		r.staleConn = true
	case r.drill == DrillDuplicate && r.step == 1:
		r.dupID = id
	case r.drill == DrillDuplicate && r.step == 2:
		id = r.dupID // the same id again
	case r.drill == DrillDuplicate && r.step == 3:
		id = r.check.rewound(last, orInt(r.o.Drill.Rewind, DefaultRewind))
	}
	if byServer {
		if d, ok := st.Retry(); ok {
			t := time.NewTimer(min(d, 30*time.Second))
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				r.classify(ctx, ctx.Err())
				return nil
			}
		}
	}
	r.conn, r.connTexts = next, 0
	r.rec.LastEventIDSent = id
	r.rec.Resumed = true
	if r.check != nil {
		r.check.reconnected(id)
	}
	req, err := r.d.Resume(r.req, id, r.respID)
	if err != nil {
		r.fail(UpstreamError, "cannot resume: %v", err)
		return nil
	}
	r.tl.Reconnects = append(r.tl.Reconnects, Reconnect{SentID: id, Drop: dropAt, ByServer: byServer})
	r.tl.Breaks = append(r.tl.Breaks, len(r.tl.Chunks))
	rc := r.reconnect()
	ns, err := r.c.Open(ctx, req)
	rc.Start, rc.Headers = ns.Start, ns.HeadersAt
	if err != nil {
		if r.staleConn {
			r.staleOpen(ctx, ns, err)
		} else {
			r.classify(ctx, err)
		}
		r.closed(ns)
		return nil
	}
	if r.staleConn {
		if a := staleHeaderAnswer(ns.Header, orHeaders(r.o.Drill.StaleHeaders)); a != "" {
			r.staleOK(a)
			r.closed(ns)
			return nil
		}
	}
	return ns
}

func orHeaders(h []HeaderMatch) []HeaderMatch {
	if h == nil {
		return DefaultStaleHeaders
	}
	return h
}

func (r *run) staleOK(answer string) {
	r.stale = answer
	r.rec.Outcome = Success
}

// staleOpen judges a stale resume that got no stream.
func (r *run) staleOpen(ctx context.Context, st *resumeclient.Stream, err error) {
	switch {
	case st.Status == http.StatusNoContent:
		r.staleOK("http_204")
	case st.Status >= 400 && st.Status < 500:
		r.staleOK("http_" + strconv.Itoa(st.Status))
	default:
		r.classify(ctx, err)
		r.undefinedStale(fmt.Sprintf("got %s", r.rec.Error))
	}
}

// staleAnswer judges the first event after a stale resume.
func (r *run) staleAnswer(st *resumeclient.Stream, ev *resumeclient.Event) {
	switch string(ev.Type) {
	case orStr(r.o.Drill.ErrorEvent, "error"):
		r.staleOK("error_event")
	case orStr(r.o.Drill.ResetEvent, "reset"):
		r.staleOK("reset_event")
	default:
		where := "an event with no id"
		if ev.HasID && len(ev.ID) > 0 {
			where = "id " + string(ev.ID)
		}
		r.rec.Outcome = Success
		r.undefinedStale(fmt.Sprintf("the stream carried on from %s with no reset marker (live tail)", where))
	}
}

// staleEnded judges a stale resume whose stream ended before any event.
func (r *run) staleEnded(ctx context.Context, err error) {
	if errors.Is(err, io.EOF) {
		r.rec.Outcome = Success
		r.undefinedStale("the stream closed with no event and no defined answer")
		return
	}
	r.classify(ctx, err)
	r.undefinedStale("no answer: " + r.rec.Error)
}

func (r *run) undefinedStale(why string) {
	r.rec.Verdict = VerdictUndefinedStale
	r.rec.ResumeDetail = fmt.Sprintf("stale %s got no defined answer: %s", cursorLabel(r.t.Dialect)(r.rec.LastEventIDSent), why)
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
	case errors.Is(context.Cause(ctx), errNoFirstChunk):
		r.fail(Timeout, "timeout: no first chunk within %s", r.o.FirstChunkTimeout)
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
	s := Reduce(chunks, end, tl.Breaks...)
	fillScores(rec, s)
	r.finishDrill(s)
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

// insecure returns a copy of c whose transport does not verify TLS
// certificates, for a target that asked for it.
func insecure(c *resumeclient.Client) *resumeclient.Client {
	base, _ := http.DefaultTransport.(*http.Transport)
	if c.HTTP != nil {
		if tr, ok := c.HTTP.Transport.(*http.Transport); ok {
			base = tr
		}
	}
	tr := base.Clone()
	if tr.TLSClientConfig == nil {
		tr.TLSClientConfig = &tls.Config{}
	}
	tr.TLSClientConfig.InsecureSkipVerify = true
	out := *c
	out.HTTP = &http.Client{Transport: tr}
	return &out
}

// retryAfter reads a Retry-After header (seconds, or an HTTP date) as ms.
func retryAfter(h http.Header, now time.Time) *float64 {
	v := h.Get("Retry-After")
	if v == "" {
		return nil
	}
	if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n >= 0 {
		return ptr(float64(n) * 1000)
	}
	if t, err := http.ParseTime(v); err == nil {
		return ptr(math.Max(0, float64(t.Sub(now).Milliseconds())))
	}
	return nil
}
