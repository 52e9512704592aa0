// Package refserver is the reference target: a resumable Server-Sent Events
// server on loopback, behind the built-in target of
// run, check, once and demo, and the fixture of the tests. It streams a
// fixed schedule of events at exact offsets, logs when each one was really
// written, honours Last-Event-ID from a bounded retention window, plays the
// wire formats of the LLM APIs, and can switch on every resume bug the
// drills name. It is internal: not an API of streamprobe.
package refserver

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Step is one scheduled write.
type Step struct {
	// At is the offset from the start of the first connection's response
	// at which the step is written.
	At time.Duration
	// ID, Event and Data are the fields of an event. Data may hold LFs: it
	// becomes one data line per line. An empty ID writes no id line.
	ID    string
	Event string
	Data  string
	// Comment, when Data is empty, makes the step a comment line (a
	// heartbeat) instead of an event.
	Comment string
	// Raw, when set, is written verbatim instead of an encoded event.
	Raw string
	// Cursor is a resume position that is not written as an id line (the
	// Responses API's sequence_number, which lives in the JSON). A
	// request resumes from it with ?starting_after=Cursor.
	Cursor string
	// Splits cuts the wire form at these byte offsets into separate writes,
	// each flushed, SplitDelay apart.
	Splits []int
}

// Sent logs one step as it really went out.
type Sent struct {
	Index int    // index in the schedule
	ID    string // the step's id
	First time.Time
	Done  time.Time // after the flush of the last byte
}

// Conn logs one connection the server accepted.
type Conn struct {
	Start time.Time
	// LastEventID is the resume position the request carried: its
	// Last-Event-ID header, or its starting_after query parameter.
	LastEventID string
	Method      string
	Path        string
	Query       string
	Body        []byte
	Sent        []Sent
	Closed      time.Time // when the server saw the client go away, or ended
	ClientGone  bool      // the client closed before the server was done
}

// Server is a scheduled SSE server on loopback. Set the fields, then call
// Start; change nothing after that.
type Server struct {
	// URL is the server's base URL (http://127.0.0.1:port), set by Start.
	URL string

	// Schedule is the stream to play.
	Schedule []Step
	// ScheduleFor, when set, picks the schedule per request (it sees the
	// request body); nil or an empty result falls back to Schedule.
	ScheduleFor func(r *http.Request, body []byte) []Step
	// LineEnd is the line terminator: "\n" (default), "\r\n" or "\r".
	LineEnd string
	// SplitDelay is the pause between the pieces of a split step.
	SplitDelay time.Duration
	// Retention is how many past events are kept for resume; 0 keeps all.
	// A Last-Event-ID that is not among them is answered by Stale.
	Retention int
	// ResumeDelay is the wait before the first event of a resumed stream.
	ResumeDelay time.Duration
	// ResumeHeaderDelay is the wait before the response headers of a
	// request that carries Last-Event-ID (a slow reconnect handshake).
	ResumeHeaderDelay time.Duration
	// Status and ContentType override the answer (fault injection);
	// ErrorBody is the body of a Status answer (a JSON error object of
	// refserver's own when empty).
	Status      int
	ContentType string
	ErrorBody   string
	// ErrorBodyDelay is the wait between a fault answer's headers (sent
	// and flushed at once) and its body: a provider that takes its time
	// to say why.
	ErrorBodyDelay time.Duration
	// StatusFor, when set, picks a fault answer per request: a status
	// other than 0 is answered as Status with the body it returns.
	StatusFor func(r *http.Request, body []byte) (status int, errBody string)
	// ContentTypeFor, when set, picks the Content-Type per request (""
	// falls back to ContentType).
	ContentTypeFor func(r *http.Request) string
	// Hold keeps the connection open after the last step, sending nothing.
	Hold bool
	// ResetAfter, when > 0, breaks the first connection (no clean end of
	// the body) right after that many steps have been written: a drop by
	// the server, from which the client resumes by itself.
	ResetAfter int
	// CloseAfter, when > 0, ends the first connection cleanly (a normal end
	// of the body, no end marker) right after that many steps: a server
	// that closes a stream it could still resume, as a proxy's idle or
	// lifetime limit does.
	CloseAfter int
	// CutAt, when > 0, makes the first connection write the step with this
	// schedule index without its closing blank line (its id line included)
	// and then break: an id sent on an event that is cut off.
	CutAt int
	// Bug switches on a resume bug for reconnects with Last-Event-ID.
	Bug Bug
	// Stale is how a Last-Event-ID that is not retained is answered.
	Stale Stale
	// ResetEvent and ErrorEvent are the event types of the reset marker
	// and the error event (defaults "reset" and "error").
	ResetEvent, ErrorEvent string

	// Mount serves these paths with other handlers (the MCP server on
	// /mcp; a path that ends in "/" serves every path under it, the
	// LangGraph server on /langgraph/); a handler that is an io.Closer is
	// closed with the server.
	Mount map[string]http.Handler

	// KeepConns, when > 0, keeps only the logs of the last KeepConns
	// connections, for a server that runs for long (the daemon's built-in
	// reference target).
	KeepConns int

	http     *http.Server
	ln       net.Listener
	mu       sync.Mutex
	conns    []*Conn
	accepted int       // connections so far, whatever KeepConns trims
	first    time.Time // start of the first connection: the live clock
	wg       sync.WaitGroup
	quit     chan struct{}
}

// Bug is a resume bug the server can play.
type Bug int

// The resume bugs.
const (
	// Correct resumes right after the sent id.
	Correct Bug = iota
	// Inclusive replays the sent id again (off-by-one).
	Inclusive
	// Skip resumes at id+2: one event is lost.
	Skip
	// Restart ignores Last-Event-ID and starts from the first event.
	Restart
	// Mismatch replays the sent id again with different data.
	Mismatch
)

// Stale is an answer to a Last-Event-ID the server does not retain.
type Stale int

// The answers to a stale id.
const (
	// StaleError sends an error event and closes (a defined answer).
	StaleError Stale = iota
	// StaleGone answers HTTP 410.
	StaleGone
	// StaleNoContent answers HTTP 204, "stop reconnecting".
	StaleNoContent
	// StaleReset sends a reset marker, then the whole stream again.
	StaleReset
	// StaleLive silently streams from the live position: the bug.
	StaleLive
	// StaleHeader answers, as Mercure 0.24 does, with a Last-Event-ID
	// response header naming where it really resumed (the oldest retained
	// event, or "earliest"), then streams from there.
	StaleHeader
	// StaleReplay silently replays the whole stream from the first event:
	// a full replay with no reset marker.
	StaleReplay
)

// NewServer returns a started server that plays schedule.
func NewServer(schedule []Step) *Server {
	s := &Server{Schedule: schedule}
	s.Start()
	return s
}

// NewUnstarted returns a server that is set up but not started.
func NewUnstarted(schedule []Step) *Server {
	return &Server{Schedule: schedule}
}

// Handler returns the server's handler, to mount on a server of the
// caller's (Start does not need to be called then).
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.serve) }

// Start starts listening on a free port of 127.0.0.1 (or [::1] where the
// machine has no IPv4 loopback). It panics when neither can be bound, as
// net/http/httptest does: a reference target that cannot listen is a
// broken machine, not a result.
func (s *Server) Start() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		if ln, err = net.Listen("tcp6", "[::1]:0"); err != nil {
			panic("refserver: cannot listen on loopback: " + err.Error())
		}
	}
	s.quit = make(chan struct{})
	s.ln, s.URL = ln, "http://"+ln.Addr().String()
	s.http = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: time.Minute}
	go s.http.Serve(ln) //nolint:errcheck // ends with ErrServerClosed at Close
}

// Close shuts the server down: it stops listening, closes every
// connection (a stream in flight ends as broken) and waits for the
// handlers to end.
func (s *Server) Close() {
	close(s.quit)
	// The listener first, by hand: Serve may not have taken it yet, and
	// until it has, http.Server.Close does not know it (a connection made
	// then would be reset, not refused).
	s.ln.Close()
	s.http.Close()
	// The listener too: http.Server.Close closes only the listeners its
	// Serve has taken, and Serve runs in a goroutine that may not have
	// started yet; the kernel would then accept a connection after Close
	// returned, and reset it once Serve starts and quits.
	s.ln.Close()
	s.wg.Wait()
	for _, h := range s.Mount {
		if c, ok := h.(io.Closer); ok {
			c.Close()
		}
	}
}

// Conns returns a copy of the connection logs so far.
func (s *Server) Conns() []Conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Conn, len(s.conns))
	for i, c := range s.conns {
		out[i] = *c
		out[i].Sent = append([]Sent(nil), c.Sent...)
	}
	return out
}

// WaitClosed waits until connection i has been seen to close, or d passes.
func (s *Server) WaitClosed(i int, d time.Duration) (Conn, bool) {
	deadline := time.Now().Add(d)
	for {
		cs := s.Conns()
		if i < len(cs) && !cs[i].Closed.IsZero() {
			return cs[i], true
		}
		if time.Now().After(deadline) {
			var c Conn
			if i < len(cs) {
				c = cs[i]
			}
			return c, false
		}
		time.Sleep(time.Millisecond)
	}
}

// serve plays one connection: it accepts the request, picks its schedule,
// answers a resume position (a retained id, a stale one), then plays the
// stream.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.wg.Add(1)
	defer s.wg.Done()
	r = slowed(r)
	if h := s.mounted(r.URL.Path); h != nil {
		h.ServeHTTP(w, r)
		return
	}
	c, connIdx, live := s.accept(r)
	gone := false
	defer func() {
		s.mu.Lock()
		c.Closed = time.Now()
		c.ClientGone = gone
		s.mu.Unlock()
	}()
	p := playback{steps: s.schedule(r, c.Body), contentType: s.contentType(r)}
	if s.fault(w, r, c.Body) {
		return
	}
	if c.LastEventID != "" && s.ResumeHeaderDelay > 0 {
		if !sleepUntil(r.Context(), s.quit, time.Now().Add(s.ResumeHeaderDelay)) {
			gone = true
			return
		}
	}
	if c.LastEventID != "" && s.Bug != Restart {
		if !s.resume(w, &p, c.LastEventID, live) {
			return
		}
	}
	gone = s.play(r.Context(), w, c, connIdx, p)
}

// mounted is the handler Mount gives path: its own, or the one of the
// longest prefix (a key ending in "/") it is under.
func (s *Server) mounted(path string) http.Handler {
	if h := s.Mount[path]; h != nil {
		return h
	}
	var best string
	for k := range s.Mount {
		if strings.HasSuffix(k, "/") && strings.HasPrefix(path, k) && len(k) > len(best) {
			best = k
		}
	}
	if best == "" {
		return nil
	}
	return s.Mount[best]
}

// playback is what one connection plays: the schedule from its step first
// on, delay before the first step written, and the steps written before
// the schedule (the Mismatch bug's changed event, a reset or error
// marker), and the answer's Content-Type.
type playback struct {
	steps       []Step
	first       int
	delay       time.Duration
	prefix      []Step
	contentType string
}

// accept logs a request as a new connection: its body (up to 1 MiB) and
// its resume position (Last-Event-ID, or starting_after). It returns the
// log, the connection's index and the live offset: the time since the
// first connection.
func (s *Server) accept(r *http.Request) (*Conn, int, time.Duration) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	resume := r.Header.Get("Last-Event-ID")
	if v := r.URL.Query().Get("starting_after"); v != "" {
		resume = v
	}
	c := &Conn{Start: time.Now(), LastEventID: resume, Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Body: body}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.conns = append(s.conns, c)
	if s.KeepConns > 0 && len(s.conns) > s.KeepConns {
		s.conns = append(s.conns[:0], s.conns[len(s.conns)-s.KeepConns:]...)
	}
	idx := s.accepted
	s.accepted++
	if s.first.IsZero() {
		s.first = c.Start
	}
	return c, idx, c.Start.Sub(s.first)
}

// schedule returns the steps to play for a request: ScheduleFor's choice,
// else Schedule.
func (s *Server) schedule(r *http.Request, body []byte) []Step {
	if s.ScheduleFor != nil {
		if alt := s.ScheduleFor(r, body); len(alt) > 0 {
			return alt
		}
	}
	return s.Schedule
}

// resume sets where a request that carries resume position id starts:
// after the id (or where the Bug puts it) when the id is retained, else
// as Stale says. It returns false when the answer is a status without a
// stream, already written.
func (s *Server) resume(w http.ResponseWriter, p *playback, id string, live time.Duration) bool {
	idx := s.find(p.steps, id, live)
	if idx < 0 {
		return s.stale(w, p, live)
	}
	p.first, p.delay = idx+1, s.ResumeDelay
	switch s.Bug {
	case Inclusive:
		p.first = idx
	case Skip:
		p.first = idx + 2
	case Mismatch:
		alt := p.steps[idx]
		alt.Data = changed(alt.Data)
		p.prefix = []Step{alt}
	}
	return true
}

// stale answers a resume position that is not retained, as Stale says. It
// returns false when the answer is a status without a stream, already
// written.
func (s *Server) stale(w http.ResponseWriter, p *playback, live time.Duration) bool {
	switch s.Stale {
	case StaleGone:
		http.Error(w, "refserver: Last-Event-ID not retained", http.StatusGone)
		return false
	case StaleNoContent:
		w.WriteHeader(http.StatusNoContent)
		return false
	case StaleLive:
		p.first, p.delay = len(p.steps), 0
		for i, st := range p.steps {
			if st.At >= live {
				p.first = i
				break
			}
		}
	case StaleHeader:
		from := "earliest"
		p.first = 0
		if ids := s.retained(p.steps, live); len(ids) > 0 {
			p.first = ids[0]
			if p.first > 0 {
				from = p.steps[p.first-1].key()
			}
		}
		w.Header().Set("Last-Event-ID", from)
	case StaleReplay:
		p.first = 0
	case StaleReset:
		p.prefix = []Step{{Event: or(s.ResetEvent, "reset"), Data: "refserver: history lost, replaying"}}
	default:
		p.prefix = []Step{{Event: or(s.ErrorEvent, "error"), Data: "refserver: Last-Event-ID not retained"}}
		p.steps, p.first = nil, 0
	}
	return true
}

// play answers 200 with the stream: the prefix, the steps on their
// schedule, then the hold. It returns true when the client went away
// before the server was done.
func (s *Server) play(ctx context.Context, w http.ResponseWriter, c *Conn, connIdx int, p playback) bool {
	w.Header().Set("Content-Type", p.contentType)
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	rc.Flush()
	if !s.playPrefix(ctx, w, rc, c, &p) {
		return true
	}
	if gone, over := s.playSteps(ctx, w, rc, c, connIdx, p); over {
		return gone
	}
	if s.Hold {
		select {
		case <-ctx.Done():
			return true
		case <-s.quit:
		}
	}
	return false
}

// playPrefix writes the steps that come before the schedule, the first
// after the resume delay (which it uses up); it returns false when the
// client went away.
func (s *Server) playPrefix(ctx context.Context, w io.Writer, rc *http.ResponseController, c *Conn, p *playback) bool {
	for _, st := range p.prefix {
		sent := Sent{Index: -1, ID: st.ID}
		if p.first > 0 && p.first <= len(p.steps) {
			sent.Index = p.first - 1
		}
		st.At = 0
		if !sleepUntil(ctx, s.quit, time.Now().Add(p.delay)) {
			return false
		}
		if err := s.write(ctx, w, rc, s.encode(st), nil, &sent); err != nil {
			return false
		}
		s.logSent(c, sent)
		p.delay = 0
	}
	return true
}

// playSteps writes the steps from p.first on, each at its time from the
// connection's start (a resumed stream starts at its first step, after
// the delay), and plays the first connection's faults (CutAt, ResetAfter,
// CloseAfter). over is true when the handler must end now, gone when the
// client went away.
func (s *Server) playSteps(ctx context.Context, w io.Writer, rc *http.ResponseController, c *Conn, connIdx int, p playback) (gone, over bool) {
	var base time.Duration
	if p.first > 0 && p.first < len(p.steps) {
		base = p.steps[p.first].At
	}
	written := 0
	for i := p.first; i < len(p.steps); i++ {
		st := p.steps[i]
		if !sleepUntil(ctx, s.quit, c.Start.Add(p.delay+Stretch(ctx, st.At-base))) {
			return ctx.Err() != nil, true
		}
		wire := s.encode(st)
		if connIdx == 0 && s.CutAt > 0 && i == s.CutAt {
			s.cut(w, rc, wire)
		}
		sent := Sent{Index: i, ID: st.key()}
		if err := s.write(ctx, w, rc, wire, st.Splits, &sent); err != nil {
			return true, true
		}
		s.logSent(c, sent)
		written++
		if connIdx == 0 && s.ResetAfter > 0 && written == s.ResetAfter {
			panic(http.ErrAbortHandler)
		}
		if connIdx == 0 && s.CloseAfter > 0 && written == s.CloseAfter {
			return false, true
		}
	}
	return false, false
}

// cut writes an event without its closing blank line and breaks the
// connection (CutAt).
func (s *Server) cut(w io.Writer, rc *http.ResponseController, wire string) {
	io.WriteString(w, strings.TrimSuffix(wire, s.lineEnd()))
	rc.Flush()
	panic(http.ErrAbortHandler)
}

// logSent adds a written step to the connection's log.
func (s *Server) logSent(c *Conn, sent Sent) {
	s.mu.Lock()
	c.Sent = append(c.Sent, sent)
	s.mu.Unlock()
}

// contentType is the Content-Type of the answer to r.
func (s *Server) contentType(r *http.Request) string {
	if s.ContentTypeFor != nil {
		if ct := s.ContentTypeFor(r); ct != "" {
			return ct
		}
	}
	return or(s.ContentType, "text/event-stream; charset=utf-8")
}

// fault answers r with the injected status (Status, or StatusFor's), if
// there is one, and reports whether it did.
func (s *Server) fault(w http.ResponseWriter, r *http.Request, body []byte) bool {
	status, errBody := s.Status, s.ErrorBody
	if s.StatusFor != nil {
		if st, b := s.StatusFor(r, body); st != 0 {
			status, errBody = st, b
		}
	}
	if status == 0 || status == http.StatusOK {
		return false
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if s.ErrorBodyDelay > 0 {
		http.NewResponseController(w).Flush()
		if !sleepUntil(r.Context(), s.quit, time.Now().Add(s.ErrorBodyDelay)) {
			return true
		}
	}
	io.WriteString(w, or(errBody, `{"error":{"message":"refserver: injected status"}}`))
	return true
}

func (s *Server) write(ctx context.Context, w io.Writer, rc *http.ResponseController, wire string, splits []int, sent *Sent) error {
	prev := 0
	cuts := append(append([]int(nil), splits...), len(wire))
	for k, cut := range cuts {
		cut = min(max(cut, prev), len(wire))
		if cut == prev && k < len(cuts)-1 {
			continue
		}
		if k > 0 && s.SplitDelay > 0 {
			if !sleepUntil(ctx, s.quit, time.Now().Add(s.SplitDelay)) {
				return ctx.Err()
			}
		}
		if _, err := io.WriteString(w, wire[prev:cut]); err != nil {
			return err
		}
		if err := rc.Flush(); err != nil {
			return err
		}
		if sent.First.IsZero() {
			sent.First = time.Now()
		}
		prev = cut
	}
	sent.Done = time.Now()
	return nil
}

// find returns the index of the step whose id is id, within the retention
// window at the live offset, or -1.
func (s *Server) find(steps []Step, id string, live time.Duration) int {
	for _, i := range s.retained(steps, live) {
		if steps[i].key() == id {
			return i
		}
	}
	return -1
}

// retained returns the indexes of the steps that can be resumed from at
// the live offset, oldest first.
func (s *Server) retained(steps []Step, live time.Duration) []int {
	var ids []int
	for i, st := range steps {
		if st.key() != "" && (s.Retention == 0 || st.At <= live) {
			ids = append(ids, i)
		}
	}
	if s.Retention > 0 && len(ids) > s.Retention {
		// Only the newest Retention events produced so far can be
		// resumed from: the window moves with the stream.
		ids = ids[len(ids)-s.Retention:]
	}
	return ids
}

// key is the step's resume position: its id, else its cursor.
func (st Step) key() string {
	if st.ID != "" {
		return st.ID
	}
	return st.Cursor
}

// changed alters an event's data for the Mismatch bug, keeping a JSON
// object valid JSON.
func changed(data string) string {
	if strings.HasPrefix(data, "{") && strings.HasSuffix(data, "}") {
		return strings.TrimSuffix(data, "}") + `,"ssetest_changed":true}`
	}
	return data + " (changed)"
}

func (s *Server) lineEnd() string { return or(s.LineEnd, "\n") }

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func (s *Server) encode(st Step) string {
	if st.Raw != "" {
		return st.Raw
	}
	nl := s.lineEnd()
	var b strings.Builder
	if st.Data == "" && st.Comment != "" {
		b.WriteString(":" + st.Comment + nl)
		return b.String()
	}
	if st.ID != "" {
		b.WriteString("id: " + st.ID + nl)
	}
	if st.Event != "" {
		b.WriteString("event: " + st.Event + nl)
	}
	for _, line := range strings.Split(st.Data, "\n") {
		b.WriteString("data: " + line + nl)
	}
	b.WriteString(nl)
	return b.String()
}

func sleepUntil(ctx context.Context, quit <-chan struct{}, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-ctx.Done():
		return false
	case <-quit:
		return false
	}
}

// Ms turns milliseconds into offsets, for compact schedules in tests.
func Ms(ms ...float64) []time.Duration {
	out := make([]time.Duration, len(ms))
	for i, m := range ms {
		out[i] = time.Duration(m * float64(time.Millisecond))
	}
	return out
}

// SentAt returns the Done times of the steps connection c wrote whose
// schedule index satisfies keep.
func (c Conn) SentAt(keep func(i int) bool) []time.Time {
	var out []time.Time
	for _, s := range c.Sent {
		if keep == nil || keep(s.Index) {
			out = append(out, s.Done)
		}
	}
	return out
}
