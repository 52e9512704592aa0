// Package probe is the engine of one measurement: Run sends a sample's
// request through the target's dialect over resumeclient, collects the
// timeline (milestones on the monotonic clock), runs a drill's drops and
// resumes and checks what each resume brought back, and reduces the
// timeline to TFC, gaps, tail, close and stalls in a Record. It asks the
// dialect for what differs between APIs and never checks a dialect's name.
// A probe returns a Record; it never writes a metric or a log line itself.
package probe

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"reflect"
	"sync/atomic"
	"time"

	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/resumeclient"
	"github.com/streamprobe/streamprobe/textgate"
)

// Options are the per-run settings of a probe.
type Options struct {
	Sample dialect.Sample
	// CancelAfter is how many content chunks the cancel sample reads
	// before it cancels; 0 means DefaultCancelAfter.
	CancelAfter int
	// Client is the transport, used as it is (TLS settings included); nil
	// means NewClient(t) for this run alone. Its MaxEventSize gives way to
	// the target's.
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
	// Sign, when set, signs the run's request before it is sent (AWS
	// SigV4 for a dialect.Signer's target): it sets its headers in h
	// (Authorization, X-Amz-Date, X-Amz-Security-Token), computed over the
	// method, the URL, h and the body. internal/jobs sets it for each run,
	// with that run's credentials.
	Sign func(method, url string, h http.Header, body []byte) error
	// Timeout is the limit the caller's deadline stands for, named in a
	// timeout's message; 0 reads it from ctx's deadline when Run starts
	// (to 10 ms).
	Timeout time.Duration
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
func Run(ctx context.Context, t dialect.Target, o Options) Result {
	// Run's own frame stays small: the goroutine that calls it blocks in
	// the stream's reads below it for as long as the stream lasts, and a
	// deep stack there doubles that goroutine's stack (8 to 16 KiB per
	// live stream). So the setup and the reduction run in functions of
	// their own that have returned by the time the reads block.
	r := newRun(ctx, &t, &o)
	defer r.release()
	if r.prepare(&o) {
		r.loop()
	}
	r.end()
	return Result{Record: r.rec, Timeline: r.tl}
}

// newRun starts the record of a run of o.Sample against t.
//
//go:noinline
func newRun(ctx context.Context, t *dialect.Target, o *Options) *run {
	r := &run{ctx: ctx, t: *t, drill: o.Drill.name(), dr: &noDrill, timeout: o.Timeout, firstChunkTimeout: o.FirstChunkTimeout}
	if !reflect.ValueOf(o.Drill).IsZero() {
		dr := o.Drill
		r.dr = &dr
	}
	if o.Sample.Cancel {
		r.cancelAfter = int32(min(orInt(o.CancelAfter, dialect.DefaultCancelAfter), math.MaxInt32))
	}
	r.rec = Record{
		RequestID: o.RequestID, Target: t.Name, Sample: o.Sample.Name, SampleVersion: o.Sample.Version,
		Dialect: t.Dialect, Drill: r.drill, StartedAt: time.Now().UTC().Format(time.RFC3339Nano),
	}
	if r.rec.RequestID == "" {
		r.rec.RequestID = NewRequestID()
	}
	r.t.RunID = r.rec.RequestID
	if t.NoInlineThink {
		r.think.Off()
	}
	if dl, ok := ctx.Deadline(); ok && o.Timeout == 0 {
		r.timeout = time.Until(dl).Round(10 * time.Millisecond)
	}
	if o.FirstChunkTimeout > 0 {
		r.ctx, r.cancel = context.WithCancelCause(ctx)
		cancel := r.cancel
		r.firstTimer = time.AfterFunc(o.FirstChunkTimeout, func() { cancel(errNoFirstChunk) })
	}
	return r
}

// end reduces the timeline into the record and gates it.
//
//go:noinline
func (r *run) end() {
	r.finish()
	r.rec.gate(r.secrets)
}

// release stops what the run started: the session (and its connection),
// the timers, a session dialect's session, its own client's connections.
func (r *run) release() {
	if r.sess != nil {
		r.sess.Close()
	}
	if r.res != nil {
		for _, t := range []*time.Timer{r.res.dropAt, r.res.afterEnd, r.res.staleWait} {
			if t != nil {
				t.Stop()
			}
		}
	}
	if r.cancelled != nil && r.cancelled.timer != nil {
		r.cancelled.timer.Stop()
	}
	if r.replies != nil {
		r.replies.wg.Wait() // each bounded by replyWait
	}
	if sd, ok := r.d.(dialect.Session); ok && r.sessionOpen {
		sd.CloseSession(r.ctx, r.c, r.t, r.req)
	}
	if r.firstTimer != nil {
		r.firstTimer.Stop()
	}
	if r.cancel != nil {
		r.cancel(nil)
	}
	if r.ownClient {
		r.c.HTTP.CloseIdleConnections()
	}
}

// run is the state of one Run, kept for as long as its stream lasts (one
// allocation per live stream: the rare state of resumes lives behind
// pointers, the flags are kept together).
type run struct {
	ctx context.Context
	// cancel cancels ctx with a cause (FirstChunkTimeout); nil without one.
	cancel context.CancelCauseFunc
	t      dialect.Target
	d      dialect.Dialect
	rs     dialect.Resumer // how d resumes; nil: it cannot
	drill  string
	// dr is the drill's options: a copy when Options.Drill sets any,
	// else noDrill (never written).
	dr *Drill
	// timeout is Options.Timeout, or the caller's deadline when that is
	// unset; firstChunkTimeout is Options.FirstChunkTimeout; cancelAfter is how many content chunks the cancel
	// sample reads before it cancels (0: not the cancel sample).
	timeout           time.Duration
	firstChunkTimeout time.Duration
	rec               Record
	tl                Timeline
	tok               *dialect.Tokens
	c                 *resumeclient.Client
	req               resumeclient.Request
	check             *resumeCheck
	sess              *resumeclient.Session
	st                *resumeclient.Stream // the open connection

	// The counts, together and as int32 (the run stays in the 1536 B
	// size class, one allocation per live stream).
	cancelAfter int32 // see timeout
	conn        int32 // index of the current connection
	connTexts   int32 // text events on the current connection, re-deliveries included
	dropAfter   int32 // the drill drops the connection after this many text events
	step        int32 // drops the client made for the drill so far
	connRetries int32 // failed attempts at the last resume in a row

	// cursor is the resume cursor of the last dispatched event, copied
	// into the same memory each time (the dialect's may be the event's).
	cursor []byte
	respID string // the stream's id, for dialects that resume by it

	firstTimer *time.Timer // FirstChunkTimeout, stopped at the first chunk

	secrets []string // the request's, for textgate.Scrub

	res       *resumed   // the resumes' state; nil before the first drop
	replies   *replies   // answers to the server's requests; nil before the first
	cancelled *cancelled // the session dialect's cancel message; nil before it

	dropDue       atomic.Bool // DropAt has come and its drop is not done yet
	cursorSeen    atomic.Bool // an event gave a cursor to resume from
	ownClient     bool        // c was made for this run alone
	firstOnConn   bool        // no new chunk yet on this (resumed) connection
	ended         bool        // onDrop judged the end of the run
	staleConn     bool
	final         bool // the dialect's last event came: the end of the body is the end
	cursorCleared bool // the last id field was empty
	sessionOpen   bool // a Session dialect's session is open: release ends it
	// unresumable: the stream cannot be resumed by design (the dialect's
	// Unresumable said so after the session setup): no drill drops it.
	unresumable bool
	// How the answer ends, as the stream says (see ending), and the
	// inline reasoning block's state: with the flags, in their padding.
	refused      bool
	finishReason dialect.Finish
	think        dialect.Think
}

// cancelled is a session dialect's cancel message: when it was sent, and
// the timer that closes the stream cancelWait later if it is still open.
type cancelled struct {
	at    time.Time
	timer *time.Timer
	shut  atomic.Bool // the timer ended the stream
}

// resumed is what a run keeps of its resumes: the last one's request and
// wait, and the drills' state (a run that never drops holds none of it).
type resumed struct {
	req        resumeclient.Request // its request
	dropAt     *time.Timer          // the drill's Drill.DropAt (made with the first connection)
	afterEnd   *time.Timer          // reading on after the end of a resumed stream (dialect.EndCloser)
	leftOpen   atomic.Bool          // the stream was still open afterEndWait after its end
	staleWait  *time.Timer          // the wait for a stale resume's first event
	staleQuiet atomic.Bool          // the stale resume sent no event in staleWait
	retries    int                  // requests of the resumes refused and sent again, in all
	stale      string               // the defined answer to a stale id, when one came
	staleNote  string               // a position header that came back and answered nothing
	dupID      string               // the id the duplicate drill resumes from twice
	retryAsked time.Duration        // the server's retry field then
	retryWait  time.Duration        // the wait taken from it (0: none)
	retryUntil time.Time            // when that wait ends
	task       *taskRun             // the task the call was made (MCP Tasks); nil none
	replay     *replayCheck         // a Replay resumer's check, set from the start
}

// noDrill is the options of a run without a drill's.
var noDrill Drill

func (r *run) fail(o Outcome, format string, args ...any) {
	r.rec.Outcome = o
	r.rec.Error = fmt.Sprintf(format, args...)
}

// show is an id (or any text from the stream) as a detail or an error
// quotes it: scrubbed and cut to MaxDetailID.
func (r *run) show(id string) string { return textgate.Scrub(id, r.secrets, dialect.MaxDetailID) }

func (r *run) now() time.Time {
	if r.c != nil && r.c.Now != nil {
		return r.c.Now()
	}
	return time.Now()
}

// prepare resolves the dialect, builds the request and the session; false
// when the run ended there (its record says why).
//
//go:noinline
func (r *run) prepare(o *Options) bool {
	d, err := dialect.Lookup(r.t.Dialect)
	if err != nil {
		r.fail(ProtocolError, "invalid target: %v", err)
		return false
	}
	r.d, r.rs = d, dialect.ResumerOf(d, r.t)
	if r.drill != DrillNone && r.rs == nil {
		r.rec.Verdict = VerdictNotSupported
		r.rec.ResumeDetail = fmt.Sprintf("the %s dialect has no resume: the %s drill ran as a plain request", r.t.Dialect, r.drill)
		r.drill = DrillNone
	}
	r.req, err = d.Request(r.t, o.Sample, r.drill != DrillNone)
	if err != nil {
		r.fail(ProtocolError, "invalid target: %v", err)
		return false
	}
	if o.Sign != nil && !r.sign(o.Sign) {
		return false
	}
	r.secrets = textgate.Secrets(r.req.Header, append(textgate.URLSecrets(r.req.URL), textgate.ProxySecrets()...)...)
	if r.rs != nil && (r.drill != DrillNone || !r.t.NoResume) {
		r.newCheck()
	}
	if r.req.Header == nil {
		r.req.Header = http.Header{}
	}
	r.req.Header.Set("X-Request-Id", r.rec.RequestID)
	r.c = o.Client
	if r.c == nil {
		r.c = NewClient(r.t)
		r.ownClient = true
	}
	if r.t.MaxEventSize > 0 && r.c.MaxEventSize != r.t.MaxEventSize {
		c := *r.c
		c.MaxEventSize = r.t.MaxEventSize
		r.c = &c
	}
	if sd, ok := d.(dialect.Session); ok {
		if !r.openSession(sd) {
			return false
		}
		r.sessionOpen = true // release ends it
		if v, ok := d.(dialect.Versioner); ok {
			r.rec.ProtocolVersion = v.ProtocolVersion(r.req)
		}
		if u, ok := d.(dialect.Unresumable); ok {
			r.unresumable = u.Unresumable(r.req) != ""
		}
	}
	r.sess, err = r.c.NewSession(r.ctx, r.req, resumeclient.SessionOptions{
		// The probe reconnects at once unless the server asks for a
		// wait: reconnect_ms then measures the server, not a client timer.
		Retry:         -1,
		MaxReconnects: orInt(r.dr.MaxReconnects, resumeclient.DefaultMaxReconnects) + 1,
		NoJitter:      true,
		OnConnect:     r.onConnect,
		OnDrop:        r.onDrop,
		RetryConflict: true,
	})
	if err != nil {
		r.fail(ProtocolError, "invalid client settings: %v", err)
		return false
	}
	return true
}

// newCheck makes the check of what the resumes bring back: by the
// cursors the events carry, or, for a resumer that replays the answer
// from its start, by each event's position and hash.
func (r *run) newCheck() {
	if dialect.ModeOf(r.rs) == dialect.Replay {
		// The replay check keeps the live answer from the first event:
		// its state lives with the resumes' (a run of any other resumer
		// holds none of it).
		r.res = &resumed{replay: newReplayCheck(r.show)}
		return
	}
	r.check = newResumeCheck(r.dr.OpaqueIDs, r.drill == DrillDuplicate, r.show, func(id string) string { return r.rs.Label(r.show(id)) })
}

// replayer is the check of a Replay resumer's resumes; nil for any other.
func (r *run) replayer() *replayCheck {
	if r.res == nil {
		return nil
	}
	return r.res.replay
}

// resumes reports whether the run resumes a stream it lost.
func (r *run) resumes() bool { return r.check != nil || r.replayer() != nil }

// sign signs the request with Options.Sign (its headers then are
// secrets like any other); a failure ends the run.
func (r *run) sign(sign func(method, url string, h http.Header, body []byte) error) bool {
	if r.req.Header == nil {
		r.req.Header = http.Header{}
	}
	if err := sign(r.req.Method, r.req.URL, r.req.Header, r.req.Body); err != nil {
		r.fail(UpstreamError, "credentials: signing the request: %s", textgate.Scrub(err.Error(), nil, dialect.MaxMessage))
		return false
	}
	return true
}

// loop reads the session to the end of the run. The reads block here for
// the whole stream: keep its frame small.
func (r *run) loop() {
	for {
		ev, err := r.sess.Next()
		if err != nil {
			r.sessionEnded(err)
			return
		}
		if r.event(ev) {
			r.connDone()
			return
		}
	}
}

// openSession runs a session dialect's requests before the stream; a
// failure ends the run, named as the setup's.
func (r *run) openSession(sd dialect.Session) bool {
	start := r.now()
	err := sd.OpenSession(r.ctx, r.c, r.t, &r.req)
	r.rec.SessionMs = ptr(ms(r.now().Sub(start)))
	if err == nil {
		return true
	}
	r.tl.Start = start
	var se *resumeclient.StatusError
	if errors.As(err, &se) {
		r.rec.HTTPStatus = se.Status
	}
	var we *dialect.WaitError
	if errors.As(err, &we) && errors.Is(r.ctx.Err(), context.DeadlineExceeded) {
		// The setup was answered, then the wait for what it needs ran out:
		// say what came, not only what did not.
		r.fail(Timeout, "session setup: timeout: %s, then nothing within %s", we.What, r.timeout)
		return false
	}
	if errors.Is(err, dialect.ErrSetup) {
		r.fail(ProtocolError, "session setup: %v", err)
		return false
	}
	r.classify(err)
	r.rec.Error = "session setup: " + r.rec.Error
	return false
}

// classify turns a transport error into an outcome and a one-line message.
func (r *run) classify(err error) {
	ctx := r.ctx
	switch {
	case errors.Is(err, resumeclient.ErrHTTPStatus):
		// Before the deadline: the wait for the error body may have
		// used the run's time up, and the status is the answer.
		r.fail(UpstreamError, "%v", err)
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
		what := "end marker"
		if en, ok := r.d.(dialect.EndNamer); ok {
			what = en.EndName()
		}
		if r.tl.Headers.IsZero() {
			what = "response headers"
		} else if r.tl.ChunkCount() == 0 {
			what = "first chunk"
		}
		if r.timeout > 0 {
			r.fail(Timeout, "timeout: no %s within %s", what, r.timeout)
		} else {
			r.fail(Timeout, "timeout: no %s in time", what)
		}
	case errors.Is(context.Cause(ctx), errNoFirstChunk):
		r.fail(Timeout, "timeout: no first chunk within %s", r.firstChunkTimeout)
	case errors.Is(ctx.Err(), context.Canceled):
		r.fail(ClientCancelled, "cancelled before the end (shutdown)")
	case errors.Is(err, resumeclient.ErrNotEventStream), errors.Is(err, resumeclient.ErrEventTooLarge), errors.Is(err, resumeclient.ErrBadFrame):
		r.fail(ProtocolError, "%v", err)
	case errors.Is(err, resumeclient.ErrConnect):
		r.fail(UpstreamError, "%v", err)
	case errors.Is(err, io.EOF):
		r.fail(UpstreamError, "stream closed by the server before the end marker")
	case errors.Is(err, resumeclient.ErrReset):
		r.fail(UpstreamError, "%v (after %d content chunks)", err, r.tl.ChunkCount())
	default:
		r.fail(UpstreamError, "%v", err)
	}
}

// finish reduces the timeline into the record.
func (r *run) finish() {
	rec, tl := &r.rec, &r.tl
	rec.FinishReason = r.finishReason
	if r.refused && !rec.FinishReason.Refused() {
		rec.FinishReason = dialect.FinishRefusal // the model's refusal, whatever reason closed it
	}
	if tl.Start.IsZero() {
		return
	}
	rec.HeadersMs = since(tl.Start, tl.Headers)
	rec.FirstEventMs = since(tl.Start, tl.FirstEvent)
	rec.FirstEffectiveMs = since(tl.Start, tl.FirstEffective)
	if sp := tl.Reasoning; sp != nil {
		rec.Reasoning = &Reasoning{Chunks: sp.Count, FirstMs: since(tl.Start, sp.First), LastMs: since(tl.Start, sp.Last), Inline: sp.Inline}
	}
	rec.EndMs = since(tl.Start, tl.End)
	s := tl.scores()
	fillScores(rec, s)
	r.finishResume(s)
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
	rec.Gaps = Gaps{Count: len(s.Gaps), P50Ms: round3(s.GapP50), P95Ms: round3(s.GapP95), MaxMs: round3(s.GapMax)}
	if len(s.Gaps) > 0 {
		// s.Gaps is the reduction's own: rounded where it is.
		for i, g := range s.Gaps {
			s.Gaps[i] = roundMs(g)
		}
		rec.Gaps.All = s.Gaps
		rec.Gaps.Values = s.Gaps[:min(len(s.Gaps), MaxGapValues):min(len(s.Gaps), MaxGapValues)]
	}
	for _, g := range s.Last5 {
		rec.Gaps.Last5 = append(rec.Gaps.Last5, roundMs(g))
	}
	rec.TailMs = round3(s.Tail)
	rec.CloseMs = round3(s.Close)
	rec.Stalls = s.Stalls
}
