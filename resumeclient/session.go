package resumeclient

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"
)

// Defaults of a Session.
const (
	// DefaultRetry is the reconnection time when the server sent no retry
	// field. The WHATWG rules leave it to the client ("a few seconds");
	// 3 s is Chromium's value.
	DefaultRetry = 3 * time.Second
	// DefaultMaxWait caps one wait before a reconnect: the server's retry
	// times the backoff.
	DefaultMaxWait = time.Minute
	// DefaultMaxReconnects bounds the reconnect attempts in a row that
	// bring no progress (the probe's bound on reconnects per run, too).
	DefaultMaxReconnects = 5
	// MinRetry is the shortest wait a server's retry field can ask for: a
	// "retry: 0" must not turn a flapping server into a reconnect storm.
	MinRetry = 100 * time.Millisecond
)

// SessionOptions configure a Session. The zero value reconnects as a
// browser's EventSource does, within DefaultMaxReconnects attempts.
type SessionOptions struct {
	// Retry is the reconnection time until the server sends a retry field;
	// 0 means DefaultRetry, and a negative value reconnects at once.
	Retry time.Duration
	// MaxWait caps one wait (retry times backoff); 0 means DefaultMaxWait.
	MaxWait time.Duration
	// MaxReconnects bounds the reconnect attempts in a row that bring no
	// progress (a failed request, an empty stream, or one whose events
	// leave the last event ID where it was: a replay); 0 means
	// DefaultMaxReconnects, a negative value never reconnects.
	MaxReconnects int
	// NoJitter turns off the random part of the wait. By default every
	// wait is stretched by up to 25%, so that clients dropped together do
	// not come back together.
	NoJitter bool
	// OnConnect, when set, is called with each connection once its
	// response headers arrived and it is a 200 event stream, before any of
	// its events is read. The stream may be kept to Close it or to call
	// DropAtByte. A non-nil error closes it and ends the Session with that
	// error.
	OnConnect func(info ConnInfo, st *Stream) error
	// OnDrop, when set, is called when a connection ended in a way a
	// client reconnects after (a clean end of the body, a broken or
	// dropped connection, a read timeout, a failed request). It may change
	// d.Wait and d.Next; returning false ends the Session, and Next then
	// returns d.Err (io.EOF for a clean end).
	OnDrop func(d *Drop) bool
	// RetryConflict hands a 409 Conflict answer to a reconnect to OnDrop
	// (a *StatusError in Drop.Err, counted against MaxReconnects) instead
	// of failing the Session: a server that still holds the connection
	// the client dropped, and has not seen it close, may refuse the
	// resume until it does (the MCP Go SDK's Streamable HTTP server).
	RetryConflict bool
}

// Drop describes the end of one connection of a Session, and the next one.
type Drop struct {
	// Conn is the index of the connection that ended.
	Conn int
	// Info is what is known of that connection's request.
	Info ConnInfo
	// Err is why: io.EOF for a clean end of the body, or an error wrapping
	// ErrReset, ErrDropped, ErrIdle or ErrConnect.
	Err error
	// At is when the end was seen.
	At time.Time
	// Events is how many events the connection dispatched.
	Events int
	// Truncated reports an event that was cut off: it was never
	// dispatched and its id is not the last event ID.
	Truncated bool
	// Retry is the server's reconnection time, if it sent one.
	Retry    time.Duration
	HasRetry bool
	// Failures counts the attempts in a row, this one included, that
	// brought no progress (no event, or no new last event ID).
	Failures int
	// Wait is how long the Session waits before the next request.
	Wait time.Duration
	// Next is the next request: the original one (method, headers and body
	// again) with LastEventID set to the last event ID.
	Next Request
}

// Session is the WHATWG EventSource connect loop as a library: it opens a
// stream, hands out its events, and after a drop reconnects with the
// Last-Event-ID of the last dispatched event, waiting the server's retry
// time with backoff. It is not safe for concurrent use, except Close and
// Restart.
type Session struct {
	c    *Client
	ctx  context.Context // the caller's: the Session has no context of its own
	req  Request
	o    SessionOptions
	wait time.Duration

	retry    time.Duration
	hasRetry bool
	failures int
	conns    int
	events   int // on the current connection
	// info is the last connection's; once a drop has decided the next
	// request, its Request is that one (a Request less to keep).
	info    ConnInfo
	startID string // the last event ID when the current connection opened
	lastID  string
	err     error

	mu sync.Mutex
	st *Stream
	// stop cancels the context of the last request (its dial, then its
	// connection), for Close; wake is closed by Close to end a wait
	// between connections (made by the first wait).
	stop    context.CancelFunc
	wake    chan struct{}
	restart bool
	pending bool // Restart came between connections: apply it to the next
	closed  bool
}

// NewSession checks the options and returns a Session that opens its first
// connection on the first call to Next. ctx bounds the whole Session.
func (c *Client) NewSession(ctx context.Context, r Request, o SessionOptions) (*Session, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	if o.MaxWait < 0 {
		return nil, fmt.Errorf("%w: MaxWait %v is negative", ErrInvalidOption, o.MaxWait)
	}
	return &Session{c: c, ctx: ctx, req: r, o: o, info: ConnInfo{Request: r}, lastID: r.LastEventID}, nil
}

// Next returns the next event or comment, whatever connection it came on
// (Event.Conn says which). It returns io.EOF when a clean end was not
// followed by a reconnect, a *StatusError when a response was not an event
// stream (a 204 wraps ErrNoContent: the server asks to stop), an error
// wrapping ErrTooManyReconnects when the attempts ran out, and the
// context's error once it is done. The Event is valid until the next call.
func (s *Session) Next() (*Event, error) {
	for s.err == nil {
		st := s.current()
		if st == nil {
			s.connect()
			continue
		}
		ev, err := st.Next()
		if err == nil {
			if ev.Kind == KindEvent {
				s.events++
			}
			return ev, nil
		}
		s.ended(st, err)
	}
	return nil, s.err
}

func (s *Session) current() *Stream {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st
}

// connect opens the next connection after the wait.
func (s *Session) connect() {
	if s.conns > 0 && s.wait > 0 && !s.sleep(s.wait) {
		s.err = s.stopped()
		return
	}
	// The request's context is the only one the Session makes (one of
	// its own as well cost a cancelCtx, its Done channel and a children
	// map per live stream): Close cancels it.
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.err = s.stopped()
		return
	}
	ctx, cancel := context.WithCancel(s.ctx)
	s.stop = cancel
	s.mu.Unlock()
	// The request is made on the reader's own goroutine: the dial path
	// (net/http's client, the dialer, the response header) fits in the
	// 8 KiB stack the reads need anyway, where a goroutine of its own
	// would be a stack more per live stream (bench/README.md).
	st, info, err := s.c.open(ctx, cancel, s.info.Request)
	info.Index = s.conns
	s.conns++
	s.events = 0
	s.info = info
	var se *StatusError
	switch {
	case err == nil:
	case s.done():
		s.err = s.stopped()
		return
	case errors.As(err, &se) && se.Status == http.StatusConflict && s.o.RetryConflict && info.Index > 0:
		s.ended(nil, err)
		return
	case se != nil, info.Start.IsZero():
		// Not an event stream, or a request that cannot be built: the
		// WHATWG rules fail the connection for good.
		s.err = err
		return
	default:
		s.ended(nil, err)
		return
	}
	st.conn = info.Index
	s.startID = s.info.Request.LastEventID
	if s.o.OnConnect != nil {
		if err := s.o.OnConnect(info, st); err != nil {
			st.Close()
			s.err = err
			return
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		st.Close()
	}
	if s.pending {
		s.pending, s.restart = false, true
		st.Close()
	}
	s.st = st
}

// ended decides what follows the end of a connection (st is nil when the
// request failed).
func (s *Session) ended(st *Stream, err error) {
	s.mu.Lock()
	s.st = nil
	restart := s.restart
	s.restart = false
	s.mu.Unlock()
	if s.done() {
		s.err = s.stopped()
		return
	}
	if errors.Is(err, ErrEventTooLarge) {
		s.err = err
		return
	}
	d := &Drop{Conn: s.conns - 1, Info: s.info, Err: err, At: s.c.now(), Events: s.events}
	if st != nil {
		d.Truncated = st.Truncated()
		s.lastID = st.LastEventID()
		if r, ok := st.Retry(); ok {
			s.retry, s.hasRetry = r, true
		}
	}
	d.Retry, d.HasRetry = s.retry, s.hasRetry
	// Progress is an event that moved the last event ID on (or any event,
	// for a stream without ids): a server that replays the same events on
	// every connection is not making any.
	progress := s.events > 0 && (st == nil || s.lastID == "" || s.lastID != s.startID)
	switch {
	case restart:
	case progress:
		s.failures = 0
	default:
		s.failures++
	}
	d.Failures = s.failures
	d.Next = s.req
	d.Next.LastEventID = s.lastID
	d.Wait = s.backoff()
	if restart {
		d.Wait = 0
	}
	maxN := s.o.MaxReconnects
	if maxN == 0 {
		maxN = DefaultMaxReconnects
	}
	if s.failures > maxN || maxN < 0 {
		if maxN < 0 {
			s.err = err
		} else {
			s.err = fmt.Errorf("%w (%d in a row brought no event): %w", ErrTooManyReconnects, s.failures, err)
		}
		return
	}
	if s.o.OnDrop != nil && !s.o.OnDrop(d) {
		s.err = d.Err
		return
	}
	s.info.Request, s.wait = d.Next, max(d.Wait, 0)
}

// backoff is the wait before the next attempt: the server's retry (or the
// default), doubled for every failed attempt in a row after the first,
// capped, and jittered.
func (s *Session) backoff() time.Duration {
	base := s.o.Retry
	switch {
	case s.hasRetry:
		base = max(s.retry, MinRetry)
	case base == 0:
		base = DefaultRetry
	case base < 0:
		return 0
	}
	maxWait := s.o.MaxWait
	if maxWait == 0 {
		maxWait = DefaultMaxWait
	}
	w := base
	for i := 1; i < s.failures && w < maxWait; i++ {
		w *= 2
	}
	w = min(w, maxWait)
	if !s.o.NoJitter && w > 0 {
		w += time.Duration(rand.Int64N(int64(w)/4 + 1))
	}
	return w
}

// sleep waits d; false when Close or the context ended the wait.
func (s *Session) sleep(d time.Duration) bool {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return false
	}
	if s.wake == nil {
		s.wake = make(chan struct{})
	}
	wake := s.wake
	s.mu.Unlock()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.ctx.Done():
	case <-wake:
	}
	return false
}

// done reports whether the Session was closed or its context is done.
func (s *Session) done() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed || s.ctx.Err() != nil
}

// stopped is the error of a Session that is done: Close's, or the
// caller's context's.
func (s *Session) stopped() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("%w: the session was closed", ErrDropped)
	}
	if c := context.Cause(s.ctx); c != nil && c != s.ctx.Err() {
		return fmt.Errorf("%w: %w", s.ctx.Err(), c)
	}
	return s.ctx.Err()
}

// Restart drops the current connection and reconnects at once, with the
// last event ID; between connections, it drops the next one as soon as it
// opens. It is safe to call from another goroutine than Next's.
func (s *Session) Restart() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st == nil {
		s.pending = true
		return
	}
	s.restart = true
	s.st.Close()
}

// Drop closes the current connection on purpose, as a client that cuts a
// stream does: Next reports the drop (an error wrapping ErrDropped) to
// OnDrop, which decides what follows, as for any other end. Unlike
// Restart it asks for no reconnect of its own, and between connections it
// does nothing. It is safe to call from another goroutine than Next's.
func (s *Session) Drop() {
	if st := s.current(); st != nil {
		st.Close()
	}
}

// Close ends the Session and drops its connection. It is safe to call more
// than once and from another goroutine than Next's; a Next in progress
// returns an error wrapping ErrDropped.
func (s *Session) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	st, stop, wake := s.st, s.stop, s.wake
	s.mu.Unlock()
	if wake != nil {
		close(wake)
	}
	if stop != nil {
		stop()
	}
	if st != nil {
		st.Close()
	}
	return nil
}

// LastEventID is the last event ID: as of the last dispatched event, across
// connections.
func (s *Session) LastEventID() string {
	if st := s.current(); st != nil {
		return st.LastEventID()
	}
	return s.lastID
}

// Conns is how many connections were attempted so far.
func (s *Session) Conns() int { return s.conns }
