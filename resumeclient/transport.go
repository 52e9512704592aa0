package resumeclient

import (
	"bufio"
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Transport is the lean HTTP/1.1 transport of event streams: one request
// on a connection of its own, dialled for it and closed with its body. A
// live stream costs the connection, one small read buffer and no goroutine
// besides its reader's (net/http's Transport keeps a read and a write
// goroutine and 8 KiB of buffers per connection, for pooling that a
// stream, which holds its connection for minutes, does not use).
//
// It speaks HTTP/1.1 only (over TLS it offers ALPN "http/1.1"), as the
// OpenAI and Anthropic SDKs do by default. A request that goes through a
// proxy is handed to Fallback. DNS and connect times reach an
// httptrace.ClientTrace of the request's context as with net/http, TLS
// handshake times and GotConn too.
//
// The zero value is ready to use. Its methods are safe for concurrent use.
type Transport struct {
	// TLSClientConfig is the TLS configuration; nil means the defaults.
	TLSClientConfig *tls.Config
	// Proxy picks a proxy for a request; nil means
	// http.ProxyFromEnvironment. A request with a proxy goes to Fallback.
	Proxy func(*http.Request) (*url.URL, error)
	// Fallback carries the requests this transport does not (through a
	// proxy); nil means a clone of http.DefaultTransport with
	// TLSClientConfig and keep-alives off.
	Fallback http.RoundTripper
	// ReadBufferSize is the size of the buffer the response is read
	// through; 0 means DefaultTransportBuffer. The status line, a header
	// line and a chunk-size line may be longer (only a chunk-size line may
	// not: chunk extensions that long are refused).
	ReadBufferSize int
	// MaxResponseHeaderBytes bounds the response header; 0 means 1 MiB.
	MaxResponseHeaderBytes int64
	// DialTimeout bounds the TCP connect, TLSHandshakeTimeout the TLS
	// handshake; 0 means 30 s and 10 s, net/http's defaults.
	DialTimeout, TLSHandshakeTimeout time.Duration
	// DialContext, when set, makes the TCP connection to addr
	// ("host:port") instead of a net.Dialer with DialTimeout: the
	// target's network path (IP family, fixed address, source address),
	// the same function net/http's Transport.DialContext takes.
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)

	once     sync.Once
	fallback http.RoundTripper
}

// DefaultTransportBuffer is the default read buffer of a Transport. The
// stream's own read buffer is larger, and a read that finds this one empty
// goes straight into the stream's, so body bytes are rarely copied twice.
const DefaultTransportBuffer = 512

// errProxy tells RoundTrip to hand the request to the fallback.
var errProxy = errors.New("proxied")

func (t *Transport) fb() http.RoundTripper {
	t.once.Do(func() {
		t.fallback = t.Fallback
		if t.fallback == nil {
			tr := http.DefaultTransport.(*http.Transport).Clone()
			tr.DisableKeepAlives = true
			if t.TLSClientConfig != nil {
				tr.TLSClientConfig = t.TLSClientConfig.Clone()
			}
			if t.Proxy != nil {
				tr.Proxy = t.Proxy
			}
			if t.DialContext != nil {
				tr.DialContext = t.DialContext
			}
			t.fallback = tr
		}
	})
	return t.fallback
}

// CloseIdleConnections closes the fallback's idle connections; this
// transport keeps none.
func (t *Transport) CloseIdleConnections() {
	if c, ok := t.fb().(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// RoundTrip sends req on a new connection and reads the response header.
// The connection closes when the body is closed, read to its end, or the
// request's context is done.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.roundTrip(req)
	if errors.Is(err, errProxy) {
		return t.fb().RoundTrip(req)
	}
	if err != nil && req.Body != nil {
		req.Body.Close()
	}
	return resp, err
}

// roundTrip sends req on a connection of its own, in phases: check the
// request, dial, TLS handshake, write the request, read the response
// header.
func (t *Transport) roundTrip(req *http.Request) (*http.Response, error) {
	if err := checkRequest(req); err != nil {
		return nil, err
	}
	proxy := t.Proxy
	if proxy == nil {
		proxy = http.ProxyFromEnvironment
	}
	if p, err := proxy(req); err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	} else if p != nil {
		return nil, errProxy
	}
	ctx := req.Context()
	if err := ctx.Err(); err != nil {
		return nil, ctxErr(ctx)
	}
	trace := httptrace.ContextClientTrace(ctx)
	raw, err := t.dial(ctx, req.URL, trace)
	if err != nil {
		return nil, err
	}
	// From here on a done context closes the connection, which ends any
	// read or write in progress; it costs no goroutine until then. It
	// closes the TCP connection (conn becomes the TLS one, which the
	// function must not read while this goroutine sets it).
	conn := raw
	stop := context.AfterFunc(ctx, func() { raw.Close() })
	fail := func(err error) (*http.Response, error) {
		stop()
		conn.Close()
		if ctx.Err() != nil {
			return nil, ctxErr(ctx)
		}
		return nil, err
	}
	var tlsState *tls.ConnectionState
	if strings.EqualFold(req.URL.Scheme, "https") {
		tc, err := t.handshake(ctx, conn, req.URL.Hostname(), trace)
		if err != nil {
			return fail(err)
		}
		state := tc.ConnectionState()
		tlsState = &state
		conn = tc
	}
	if trace != nil && trace.GotConn != nil {
		trace.GotConn(httptrace.GotConnInfo{Conn: conn})
	}
	werr, readOn := writeRequest(ctx, conn, req, trace)
	if !readOn {
		return fail(werr)
	}
	resp, err := t.readResponse(conn, req, trace, werr)
	if err != nil {
		return fail(err)
	}
	resp.TLS = tlsState
	resp.Body = &connBody{body: resp.Body, conn: conn, stop: stop, ctx: ctx, buf: cmp.Or(t.ReadBufferSize, DefaultTransportBuffer)}
	return resp, nil
}

// checkRequest refuses what net/http refuses: Request.Write would send an
// invalid method as is, drop a header with an invalid name without a word
// and turn a CR or LF in a value into a space.
func checkRequest(req *http.Request) error {
	u := req.URL
	if u == nil {
		return errors.New("request has no URL")
	}
	if scheme := strings.ToLower(u.Scheme); scheme != "http" && scheme != "https" {
		return fmt.Errorf("unsupported protocol scheme %q", u.Scheme)
	}
	if u.Host == "" {
		return errors.New("no host in request URL")
	}
	if req.Method != "" && !validToken(req.Method) {
		return fmt.Errorf("invalid method %q", req.Method)
	}
	if err := validHeader(req.Header); err != "" {
		return fmt.Errorf("invalid header %s", err)
	}
	if err := validHeader(req.Trailer); err != "" {
		return fmt.Errorf("invalid trailer %s", err)
	}
	return nil
}

// dial connects to u's host, at the scheme's port when u names none. The
// net package reports DNS and connect to the context's trace.
func (t *Transport) dial(ctx context.Context, u *url.URL, trace *httptrace.ClientTrace) (net.Conn, error) {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
	}
	addr := net.JoinHostPort(u.Hostname(), port)
	if trace != nil && trace.GetConn != nil {
		trace.GetConn(addr)
	}
	dial := t.DialContext
	if dial == nil {
		d := &net.Dialer{Timeout: cmp.Or(t.DialTimeout, 30*time.Second), KeepAlive: 30 * time.Second}
		dial = d.DialContext
	}
	raw, err := dial(ctx, "tcp", addr)
	if err != nil && ctx.Err() != nil {
		return nil, ctxErr(ctx)
	}
	return raw, err
}

// handshake runs the TLS handshake on conn, offering ALPN "http/1.1" only,
// within TLSHandshakeTimeout.
func (t *Transport) handshake(ctx context.Context, conn net.Conn, host string, trace *httptrace.ClientTrace) (*tls.Conn, error) {
	cfg := &tls.Config{}
	if t.TLSClientConfig != nil {
		cfg = t.TLSClientConfig.Clone()
	}
	if cfg.ServerName == "" {
		cfg.ServerName = host
	}
	cfg.NextProtos = []string{"http/1.1"}
	tc := tls.Client(conn, cfg)
	if trace != nil && trace.TLSHandshakeStart != nil {
		trace.TLSHandshakeStart()
	}
	timeout := cmp.Or(t.TLSHandshakeTimeout, 10*time.Second)
	hctx, cancel := context.WithTimeout(ctx, timeout)
	err := tc.HandshakeContext(hctx)
	if err != nil && hctx.Err() != nil && ctx.Err() == nil {
		// Our own timeout, not the caller's deadline: net/http's "TLS
		// handshake timeout", which is not DeadlineExceeded.
		err = handshakeTimeoutError(timeout)
	}
	cancel()
	if trace != nil && trace.TLSHandshakeDone != nil {
		trace.TLSHandshakeDone(tc.ConnectionState(), err)
	}
	return tc, err
}

// writeRequest sends req on conn (Connection: close: the connection
// carries one request) through a small buffer of its own, dropped once it
// is sent: only the read side lives as long as the stream. readOn is
// false when the request fails with werr: the body could not be read, or
// the context is done. A connection that broke while the request was written
// may still hold the server's answer, sent before it closed without
// reading the whole body (a 413, a 401): as with net/http, that answer is
// the result, and the write error only when there is none.
func writeRequest(ctx context.Context, conn net.Conn, req *http.Request, trace *httptrace.ClientTrace) (werr error, readOn bool) {
	out := req.Clone(ctx)
	out.Close = true
	cw := &connWriter{w: conn}
	bw := bufio.NewWriterSize(cw, 512)
	werr = out.Write(bw)
	if werr == nil {
		werr = bw.Flush()
	}
	if trace != nil && trace.WroteRequest != nil {
		trace.WroteRequest(httptrace.WroteRequestInfo{Err: werr})
	}
	return werr, werr == nil || (cw.err != nil && ctx.Err() == nil)
}

// readResponse reads the response header from conn, past any 1xx answer
// (100 Continue, 103 Early Hints), bounded by MaxResponseHeaderBytes. werr
// is the error writing the request, if any: with no response, it is the
// result.
func (t *Transport) readResponse(conn net.Conn, req *http.Request, trace *httptrace.ClientTrace, werr error) (*http.Response, error) {
	maxHeader := cmp.Or(t.MaxResponseHeaderBytes, 1<<20)
	lim := &headerLimit{r: conn, n: maxHeader}
	br := bufio.NewReaderSize(lim, cmp.Or(t.ReadBufferSize, DefaultTransportBuffer))
	if trace != nil && trace.GotFirstResponseByte != nil {
		if _, err := br.Peek(1); err == nil {
			trace.GotFirstResponseByte()
		}
	}
	for {
		resp, err := http.ReadResponse(br, req)
		switch {
		case err != nil && werr != nil:
			return nil, werr
		case err != nil && (errors.Is(err, errHeaderTooLarge) || lim.n == 0):
			// The limit cut the header: whatever the parser made of the
			// cut line, the header was too large.
			return nil, fmt.Errorf("server response header exceeded %d bytes", maxHeader)
		case err != nil:
			// net/http's parser quotes the malformed line, whole.
			return nil, gated(err, nil)
		}
		if resp.StatusCode < 100 || resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			lim.n = -1 // the body is not bounded here
			return resp, nil
		}
		resp.Body.Close()
	}
}

// ctxErr is the error of a request whose context is done: the context's,
// with its cause when there is another one.
func ctxErr(ctx context.Context) error {
	if c := context.Cause(ctx); c != nil && c != ctx.Err() {
		return fmt.Errorf("%w: %w", ctx.Err(), c)
	}
	return ctx.Err()
}

var errHeaderTooLarge = errors.New("response header too large")

// headerLimit fails a read once n bytes were read, while n >= 0.
type headerLimit struct {
	r io.Reader
	n int64
}

func (h *headerLimit) Read(p []byte) (int, error) {
	if h.n < 0 {
		return h.r.Read(p)
	}
	if h.n == 0 {
		return 0, errHeaderTooLarge
	}
	if int64(len(p)) > h.n {
		p = p[:h.n]
	}
	n, err := h.r.Read(p)
	h.n -= int64(n)
	return n, err
}

// connBody is a response body that owns its connection.
type connBody struct {
	body   io.ReadCloser
	conn   net.Conn
	stop   func() bool
	ctx    context.Context
	once   sync.Once
	err    error // the first read error, returned again as net/http does
	closed atomic.Bool
	buf    int // the read buffer's size: the longest chunk-size line read
}

func (b *connBody) Read(p []byte) (int, error) {
	if b.closed.Load() {
		// Bytes already buffered are not handed out after Close.
		return 0, http.ErrBodyReadAfterClose
	}
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.body.Read(p)
	if err != nil && !errors.Is(err, io.EOF) && b.ctx.Err() != nil {
		err = ctxErr(b.ctx)
	}
	if errors.Is(err, http.ErrLineTooLong) {
		// net/http's chunked reader reads a chunk-size line whole in the
		// read buffer: a longer one (long chunk extensions, legal but
		// rare) it calls a "header line too long".
		err = fmt.Errorf("a chunk-size line over %d bytes (its chunk extensions): this transport refuses it: %w", b.buf, err)
	}
	if err != nil {
		b.err = err
		b.release()
	}
	return n, err
}

func (b *connBody) Close() error {
	b.closed.Store(true)
	b.release()
	return nil
}

// release closes the connection; the body's end does it without Close.
func (b *connBody) release() {
	b.once.Do(func() {
		b.stop()
		b.conn.Close()
	})
}

// handshakeTimeoutError is the end of a TLS handshake that outlasted
// TLSHandshakeTimeout. It is a net.Error that timed out.
type handshakeTimeoutError time.Duration

func (e handshakeTimeoutError) Error() string {
	return fmt.Sprintf("TLS handshake timeout (%v)", time.Duration(e))
}
func (handshakeTimeoutError) Timeout() bool   { return true }
func (handshakeTimeoutError) Temporary() bool { return true }

// connWriter keeps the error of a write to the connection, to tell it
// from an error reading the request body.
type connWriter struct {
	w   io.Writer
	err error
}

func (c *connWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	if err != nil && c.err == nil {
		c.err = err
	}
	return n, err
}

// validHeader returns what is wrong with h, as net/http's transport
// checks it: a name that is not a token or a value with a control byte
// other than tab. Values are never quoted: they may be secret.
func validHeader(h http.Header) string {
	for k, vs := range h {
		if !validToken(k) {
			return fmt.Sprintf("field name %q", k)
		}
		for _, v := range vs {
			for i := 0; i < len(v); i++ {
				if c := v[i]; (c < ' ' && c != '\t') || c == 0x7f {
					return fmt.Sprintf("field value for %q", k)
				}
			}
		}
	}
	return ""
}

// validToken reports whether s is an RFC 9110 token (a method, a field
// name).
func validToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}
