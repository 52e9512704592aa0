// Package resumeclient is the HTTP and Server-Sent Events transport of
// streamprobe. It builds the request, parses the stream by the WHATWG rules,
// keeps the last event id, sends Last-Event-ID on reconnect, drops
// connections on purpose, and timestamps every event on the monotonic clock
// the moment its bytes arrive, before any decoding. It knows nothing about
// LLMs, metrics or budgets.
package resumeclient

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/streamprobe/streamprobe/internal/version"
	"github.com/streamprobe/streamprobe/textgate"
)

// Request describes one streaming request. Body is resent as is on every
// reconnect.
type Request struct {
	Method string // GET when empty
	URL    string
	Header http.Header
	Body   []byte
	// LastEventID, when not empty, is sent as the Last-Event-ID header and
	// seeds the parser's last event ID.
	LastEventID string
	// Framing is how the response is cut into events: Server-Sent Events
	// (the zero value) or newline-delimited JSON. It sets the Accept
	// header and the Content-Type the response must have.
	Framing Framing
}

// Client opens streams. The zero value sends every request on a connection
// of its own through a Transport, with no overall timeout (the caller's
// context is the deadline).
type Client struct {
	// HTTP is the client used for requests; nil means one with a shared
	// Transport (HTTP/1.1, a connection per stream, proxies from the
	// environment through net/http's transport).
	HTTP *http.Client
	// MaxEventSize bounds one event; 0 means DefaultMaxEventSize.
	MaxEventSize int
	// Now is the clock; nil means time.Now. Its readings must carry the
	// monotonic clock.
	Now func() time.Time
	// ReadBuffer is the largest read buffer a stream grows; 0 means 4 KiB.
	// A stream starts with 1 KiB (or ReadBuffer, when smaller) and doubles
	// it whenever a read fills it, so one that trickles small events, as
	// an LLM answer does, keeps a small buffer.
	ReadBuffer int
	// ReadTimeout, when > 0, drops a stream that receives no byte (event,
	// comment or partial line) for this long, with ErrIdle; a Session then
	// reconnects.
	ReadTimeout time.Duration
	// UserAgent is sent as User-Agent; empty means "streamprobe/<version>".
	UserAgent string
}

// defaultHTTP is the client of a Client without one.
var defaultHTTP = &http.Client{Transport: &Transport{}, CheckRedirect: sameHostRedirect}

// UserAgent is the default User-Agent header.
var UserAgent = "streamprobe/" + version.String()

func (c *Client) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// validate checks the settings; every error wraps ErrInvalidOption.
func (c *Client) validate() error {
	switch {
	case c.MaxEventSize < 0:
		return fmt.Errorf("%w: MaxEventSize %d is negative", ErrInvalidOption, c.MaxEventSize)
	case c.ReadBuffer < 0:
		return fmt.Errorf("%w: ReadBuffer %d is negative", ErrInvalidOption, c.ReadBuffer)
	case c.ReadTimeout < 0:
		return fmt.Errorf("%w: ReadTimeout %v is negative", ErrInvalidOption, c.ReadTimeout)
	}
	return nil
}

// ConnInfo is what is known of one connection attempt once its response
// headers arrived, or it failed.
type ConnInfo struct {
	// Index is the connection's place in its Session: 0 for the first.
	Index int
	// Request is the request as sent; LastEventID is the Last-Event-ID
	// header it carried.
	Request Request
	// Start is when the request was started; HeadersAt when the response
	// headers arrived (zero when none did).
	Start, HeadersAt time.Time
	// Status and Header are the response's (0 and nil when none came);
	// Proto its protocol ("HTTP/1.1", "HTTP/2.0").
	Status int
	Header http.Header
	Proto  string
	// Setup is how long DNS, TCP and TLS took for this request's
	// connection (zero for a reused one).
	Setup ConnTimes
}

// Stream is one open event stream: one HTTP response being read.
type Stream struct {
	// Start is when the request was started on the client.
	Start time.Time
	// HeadersAt is when the response headers arrived.
	HeadersAt time.Time
	// Status is the HTTP status code of the response.
	Status int
	// Header is the response header.
	Header http.Header

	c         *Client
	body      io.ReadCloser
	cancel    context.CancelFunc
	parser    Parser
	lines     LineParser
	frames    frames // &parser or &lines
	buf       []byte
	maxBuf    int // buf grows up to this size
	bytes     int64
	dropAt    int64 // cut the connection after this many body bytes; 0 = never
	err       error
	readErr   error // returned once the bytes read with it are parsed
	zeroReads int
	closed    atomic.Bool
	idled     atomic.Bool // closed by the read timeout
	idle      *time.Timer
	once      sync.Once
	truncate  bool
	conn      int
	gz        *gzipBody // the compressed body, when it is one
	secrets   []string  // the request's, for the errors of a broken body
}

// Open starts the request and waits for the response headers. A response
// that is not a 200 text/event-stream is a *StatusError (wrapping
// ErrHTTPStatus, ErrNoContent or ErrNotEventStream); a request that got no
// response wraps ErrConnect. On error no Stream is returned.
func (c *Client) Open(ctx context.Context, r Request) (*Stream, error) {
	ctx, cancel := context.WithCancel(ctx)
	st, _, err := c.open(ctx, cancel, r)
	return st, err
}

// open is Open that also says how far the attempt got. cancel cancels
// ctx: open calls it on error, the Stream when it is closed.
func (c *Client) open(ctx context.Context, cancel context.CancelFunc, r Request) (*Stream, ConnInfo, error) {
	info := ConnInfo{Request: r}
	if err := c.validate(); err != nil {
		cancel()
		return nil, info, err
	}
	if err := r.Check(); err != nil {
		cancel()
		return nil, info, err
	}
	trace := &connTrace{now: c.now}
	req, secrets, ownGzip, err := c.newRequest(httptrace.WithClientTrace(ctx, trace.hooks()), r)
	if err != nil {
		cancel()
		return nil, info, err
	}
	hc := c.httpClient()
	secrets = append(secrets, proxySecrets(hc.Transport, req)...)
	hc = guardRedirects(hc)
	info.Start = c.now()
	resp, err := hc.Do(req)
	if err != nil {
		cancel()
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return nil, info, gated(fmt.Errorf("%s %s: %w", req.Method, textgate.RedactURL(r.URL), unwrapURLError(err)), secrets)
		}
		info.Setup = trace.times()
		return nil, info, gated(fmt.Errorf("%w: %s %s: %w", ErrConnect, req.Method, textgate.RedactURL(r.URL), unwrapURLError(err)), secrets)
	}
	info.HeadersAt = c.now()
	info.Status, info.Header, info.Proto = resp.StatusCode, resp.Header, resp.Proto
	info.Setup = trace.times()
	if kind := responseKind(resp, r.Framing); kind != nil {
		err := newStatusError(resp, kind, info, ownGzip, secrets) // reads the body: before the cancel
		cancel()
		return nil, info, err
	}
	return c.newStream(resp, r, info, cancel, ownGzip, secrets), info, nil
}

// newRequest builds the HTTP request of r, and lists the secrets it
// carries; ownGzip is whether it asks for gzip itself (r did not ask for
// an encoding).
func (c *Client) newRequest(ctx context.Context, r Request) (req *http.Request, secrets []string, ownGzip bool, err error) {
	method := cmp.Or(r.Method, http.MethodGet)
	secrets = requestSecrets(r)
	var body io.Reader
	if r.Body != nil {
		body = bytes.NewReader(r.Body)
	}
	req, err = http.NewRequestWithContext(ctx, method, r.URL, body)
	if err != nil {
		return nil, nil, false, gated(fmt.Errorf("%w: building request: %w", ErrInvalidRequest, unwrapURLError(err)), secrets)
	}
	for k, vs := range r.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.Header.Set("Accept", r.Framing.Accept())
	req.Header.Set("Cache-Control", "no-cache")
	// Ask for gzip ourselves (net/http then leaves the body compressed), so
	// the bytes on the wire are counted apart from the decoded ones.
	ownGzip = req.Header.Get("Accept-Encoding") == ""
	if ownGzip {
		req.Header.Set("Accept-Encoding", "gzip")
	}
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", cmp.Or(c.UserAgent, UserAgent))
	}
	if r.LastEventID != "" {
		req.Header.Set("Last-Event-ID", r.LastEventID)
	}
	return req, secrets, ownGzip, nil
}

// httpClient is the client requests go through: c.HTTP or the default,
// following redirects only within the same host unless it says otherwise.
func (c *Client) httpClient() *http.Client {
	hc := cmp.Or(c.HTTP, defaultHTTP)
	if hc.CheckRedirect == nil {
		// Secrets in headers (X-Api-Key, ...) and the body must not follow
		// a redirect to another host.
		c2 := *hc
		c2.CheckRedirect = sameHostRedirect
		hc = &c2
	}
	return hc
}

// responseKind is the sentinel of a response that is not a 200 of the
// framing's media type (text/event-stream), nil for one that is.
func responseKind(resp *http.Response, f Framing) error {
	switch {
	case resp.StatusCode == http.StatusNoContent:
		return ErrNoContent
	case resp.StatusCode != http.StatusOK:
		return ErrHTTPStatus
	}
	if mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type")); f != FramingRaw && (err != nil || !f.accepts(mt)) {
		return ErrNotEventStream
	}
	return nil
}

// newStatusError reads the start of the body of a response that is not an
// event stream, closes it, and describes the response.
func newStatusError(resp *http.Response, kind error, info ConnInfo, ownGzip bool, secrets []string) *StatusError {
	var body io.ReadCloser = resp.Body
	if ownGzip && strings.EqualFold(resp.Header.Get("Content-Encoding"), "gzip") {
		body = newGzipBody(resp.Body)
	}
	snippet := errorSnippet(body, secrets)
	resp.Body.Close()
	return &StatusError{Status: resp.StatusCode, Header: resp.Header, Start: info.Start, HeadersAt: info.HeadersAt, Snippet: snippet, kind: kind, want: info.Request.Framing.wanted(),
		contentType: textgate.Scrub(resp.Header.Get("Content-Type"), secrets, maxShownHeader)}
}

// newStream is the Stream that reads an event-stream response.
func (c *Client) newStream(resp *http.Response, r Request, info ConnInfo, cancel context.CancelFunc, ownGzip bool, secrets []string) *Stream {
	s := &Stream{c: c, cancel: cancel, body: resp.Body, Start: info.Start, HeadersAt: info.HeadersAt, Status: resp.StatusCode, Header: resp.Header, secrets: secrets}
	if ownGzip && strings.EqualFold(resp.Header.Get("Content-Encoding"), "gzip") {
		s.gz = newGzipBody(resp.Body)
		s.body = s.gz
	}
	s.parser.MaxEventSize, s.lines.MaxEventSize = c.MaxEventSize, c.MaxEventSize
	s.parser.KeepTrailer = r.Framing == FramingSSETrailer
	s.frames = &s.parser
	switch mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); {
	case r.Framing == FramingNDJSON:
		s.frames = &s.lines
	case r.Framing == FramingSSEOrJSON && mt == "application/json":
		s.frames = &BodyParser{MaxEventSize: c.MaxEventSize}
	case r.Framing == FramingRaw:
		s.frames = &RawParser{}
	case r.Framing == FramingEventStream:
		s.frames = &EventStreamParser{MaxEventSize: c.MaxEventSize}
	}
	if r.LastEventID != "" {
		s.parser.SetLastEventID(r.LastEventID)
	}
	s.maxBuf = cmp.Or(c.ReadBuffer, 4<<10)
	s.buf = make([]byte, min(s.maxBuf, firstReadBuffer))
	if c.ReadTimeout > 0 {
		s.idle = time.AfterFunc(c.ReadTimeout, func() {
			s.idled.Store(true)
			s.Close()
		})
	}
	return s
}

// firstReadBuffer is a stream's first read buffer.
const firstReadBuffer = 1 << 10

// snippetWait bounds the read of the rest of an error body's snippet
// after its first bytes: a server may send a few bytes and keep the
// connection open.
const snippetWait = 250 * time.Millisecond

// sameHostRedirect follows up to 10 redirects within the same scheme and
// host, and refuses one to elsewhere.
func sameHostRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	if o := via[0].URL; req.URL.Scheme != o.Scheme || req.URL.Host != o.Host {
		return fmt.Errorf("redirect to another host (%s) refused: the request carries credentials", req.URL.Host)
	}
	return nil
}

// errorSnippet reads the start of an error body, for the message only:
// more than it shows, so that a secret of the request straddling the cut
// is redacted whole before the text is bounded (Scrub). It waits for the
// first bytes as long as the request's context lets it (the run's
// deadline: a provider may take its time to say why), then for the rest
// at most snippetWait.
func errorSnippet(body io.ReadCloser, secrets []string) string {
	b := make([]byte, 1024)
	n, err := io.ReadAtLeast(body, b, 1)
	if err == nil && n < len(b) {
		t := time.AfterFunc(snippetWait, func() { body.Close() })
		m, _ := io.ReadFull(body, b[n:])
		t.Stop()
		n += m
	}
	return textgate.Scrub(string(b[:n]), secrets, snippetLen)
}

// snippetLen bounds the body snippet of an error message.
const snippetLen = 128

// DropAtByte makes the stream cut its own connection once n bytes of the
// body have been read, even in the middle of an event, as a network drop
// would. n <= 0 disables it.
func (s *Stream) DropAtByte(n int64) { s.dropAt = n }

// Next returns the next event or comment. At a clean end of the body it
// returns io.EOF; a broken connection gives an error wrapping ErrReset, a
// drop ErrDropped, and the context's error when it was cancelled. The Event
// is valid until the next call.
func (s *Stream) Next() (*Event, error) {
	// Every stream's read loop: one pass per read.
	if s.err != nil {
		return nil, s.err
	}
	for {
		if s.closed.Load() {
			return nil, s.finish(s.classify(nil))
		}
		ev, err := s.frames.Next()
		if err != nil {
			return nil, s.finish(err)
		}
		if ev != nil {
			ev.Conn = s.conn
			return ev, nil
		}
		buf := s.buf
		if s.dropAt > 0 {
			left := s.dropAt - s.bytes
			if left <= 0 {
				s.Close()
				return nil, s.finish(fmt.Errorf("%w at byte %d", ErrDropped, s.bytes))
			}
			if int64(len(buf)) > left {
				buf = buf[:left]
			}
		}
		if s.readErr != nil {
			// The error that came with the last bytes, now they are parsed.
			return s.end(s.readErr)
		}
		n, err := s.body.Read(buf)
		at := s.c.now()
		if n > 0 && s.idle != nil && !s.closed.Load() {
			s.idle.Reset(s.c.ReadTimeout)
		}
		if err != nil {
			if errors.Is(err, io.EOF) && !s.closed.Load() {
				err = io.EOF
			} else {
				err = s.classify(err)
			}
		}
		if n > 0 {
			if n == len(s.buf) && n < s.maxBuf {
				// A full read: there is more waiting. The parser is
				// done with the old buffer once Push's bytes are used.
				s.buf = make([]byte, min(2*len(s.buf), s.maxBuf))
			}
			s.zeroReads = 0
			s.bytes += int64(n)
			s.frames.Push(buf[:n], at)
			s.readErr = err
			continue
		}
		if err != nil {
			return s.end(err)
		}
		if s.zeroReads++; s.zeroReads > 100 {
			return nil, s.finish(fmt.Errorf("%w: %w", ErrReset, io.ErrNoProgress))
		}
	}
}

// end ends the stream with err, after the event a clean end of the body
// completes (a JSON body), if any.
func (s *Stream) end(err error) (*Event, error) {
	if err == io.EOF {
		if ev := s.frames.Flush(); ev != nil {
			ev.Conn = s.conn
			return ev, nil
		}
	}
	return nil, s.finish(err)
}

func (s *Stream) classify(err error) error {
	if s.idled.Load() {
		return fmt.Errorf("%w (%v)", ErrIdle, s.c.ReadTimeout)
	}
	if s.closed.Load() {
		return ErrDropped
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	// The chunked reader and the trailer parser may quote the server's
	// bytes.
	return gated(fmt.Errorf("%w: %w", ErrReset, err), s.secrets)
}

func (s *Stream) finish(err error) error {
	s.truncate = s.frames.Pending()
	s.err = err
	s.Close()
	return err
}

// Truncated reports whether the stream ended with an event started but not
// dispatched. Such an event is never returned and its id is never taken.
func (s *Stream) Truncated() bool { return s.truncate }

// Bytes is the number of body bytes read so far, after decompression.
func (s *Stream) Bytes() int64 { return s.bytes }

// WireBytes is the number of compressed body bytes read so far, and
// whether the body was compressed (gzip) at all.
func (s *Stream) WireBytes() (int64, bool) {
	if s.gz == nil {
		return 0, false
	}
	return s.gz.wire.n, true
}

// LastEventID is the last event ID string: as of the last dispatched event.
func (s *Stream) LastEventID() string { return s.frames.LastEventID() }

// Retry is the reconnection time the server asked for, if it did.
func (s *Stream) Retry() (time.Duration, bool) { return s.frames.Retry() }

// Close drops the connection at once. It is safe to call more than once and
// from another goroutine than the reader.
func (s *Stream) Close() error {
	s.once.Do(func() {
		s.closed.Store(true)
		if s.idle != nil {
			s.idle.Stop()
		}
		s.cancel()
		if s.body != nil {
			s.body.Close()
		}
	})
	return nil
}

// requestSecrets lists the secrets of a request for Scrub: its header
// values, its URL's query values and user info, and the credentials of
// the environment's proxies.
func requestSecrets(r Request) []string {
	return textgate.Secrets(r.Header, append(textgate.URLSecrets(r.URL), textgate.ProxySecrets()...)...)
}

// proxySecrets lists the credentials of the proxy rt sends req through,
// if it is one of the transports whose proxy is known.
func proxySecrets(rt http.RoundTripper, req *http.Request) []string {
	var proxy func(*http.Request) (*url.URL, error)
	switch t := rt.(type) {
	case nil:
		proxy = http.ProxyFromEnvironment
	case *Transport:
		proxy = t.Proxy
		if proxy == nil {
			proxy = http.ProxyFromEnvironment
		}
	case *http.Transport:
		proxy = t.Proxy
	}
	if proxy == nil {
		return nil
	}
	u, err := proxy(req)
	if err != nil || u == nil {
		return nil
	}
	return textgate.UserSecrets(u.User)
}

// MaxErrorText bounds the message of every error the package returns
// that may quote the network: net/http's, the TLS stack's, a malformed
// header line's.
const MaxErrorText = 512

// maxShownHeader bounds a response header value an error quotes.
const maxShownHeader = 128

// gatedError is an error whose message went through Scrub; errors.Is and
// errors.As still reach everything it wraps.
type gatedError struct {
	msg string
	err error
}

func (e *gatedError) Error() string { return e.msg }
func (e *gatedError) Unwrap() error { return e.err }

// gated returns err with its message scrubbed of secrets and bounded.
func gated(err error, secrets []string) error {
	return &gatedError{msg: textgate.Scrub(err.Error(), secrets, MaxErrorText), err: err}
}

// Check reports why the request cannot be sent as it is: a header value
// (Last-Event-ID included) with a byte no HTTP field may carry. Open makes
// no attempt at such a request, so a Session does not retry it. The error
// wraps ErrInvalidRequest and never quotes the value: it may be secret.
func (r Request) Check() error {
	if i := InvalidHeaderByte(r.LastEventID); i >= 0 {
		return fmt.Errorf("%w: the Last-Event-ID value has the byte 0x%02x at offset %d, which no HTTP header may carry", ErrInvalidRequest, r.LastEventID[i], i)
	}
	for k, vs := range r.Header {
		if !validToken(k) {
			return fmt.Errorf("%w: header name %q is not a token", ErrInvalidRequest, textgate.Scrub(k, nil, maxShownHeader))
		}
		for _, v := range vs {
			if i := InvalidHeaderByte(v); i >= 0 {
				return fmt.Errorf("%w: the value of header %q has the byte 0x%02x at offset %d, which no HTTP header may carry", ErrInvalidRequest, k, v[i], i)
			}
		}
	}
	return nil
}

// InvalidHeaderByte returns the offset of the first byte of v that an
// HTTP field value may not carry (a control character other than tab:
// CR, LF, NUL, ...), or -1. SSE allows such bytes in an event id, so a
// server may send an id that a client can never send back.
func InvalidHeaderByte(v string) int {
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return i
		}
	}
	return -1
}

// unwrapURLError drops net/http's *url.Error wrapper, whose message repeats
// the full URL (query included); the cause stays reachable with errors.Is.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return err
}

// errBadLocation ends a request answered by a redirect whose Location
// does not parse. net/http's client would end it with an error quoting
// the Location, which may carry a token; the guard ends it first.
var errBadLocation = errors.New("redirect with a Location that cannot be followed")

// guardRedirects returns hc with its transport wrapped in a
// locationGuard.
func guardRedirects(hc *http.Client) *http.Client {
	rt := hc.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	c2 := *hc
	c2.Transport = locationGuard{rt: rt}
	return &c2
}

// locationGuard fails a response that net/http's client would follow as
// a redirect while its Location does not parse, with errBadLocation
// wrapping the parser's cause (which does not quote the whole value).
type locationGuard struct{ rt http.RoundTripper }

func (g locationGuard) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := g.rt.RoundTrip(req)
	if err != nil || !followed(req, resp.StatusCode) {
		return resp, err
	}
	loc := resp.Header.Get("Location")
	if loc == "" {
		return resp, nil
	}
	if _, err := req.URL.Parse(loc); err != nil {
		resp.Body.Close()
		return nil, fmt.Errorf("%w: %w", errBadLocation, unwrapURLError(err))
	}
	return resp, nil
}

// followed reports whether net/http's client follows a response with this
// status as a redirect (it resends a body only when it can rewind it).
func followed(req *http.Request, status int) bool {
	switch status {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther:
		return true
	case http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return req.GetBody != nil || req.Body == nil || req.Body == http.NoBody
	}
	return false
}
