package resumeclient

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"
)

// rawServer accepts connections on loopback and hands each to serve; it
// returns the address.
func rawServer(t *testing.T, serve func(c net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() { defer wg.Done(); defer c.Close(); serve(c) }()
		}
	}()
	return ln.Addr().String()
}

// readRequest reads one request from c and returns it with its body.
func readRequest(t *testing.T, c net.Conn) (*http.Request, string) {
	req, err := http.ReadRequest(bufio.NewReader(c))
	if err != nil {
		t.Error(err)
		return nil, ""
	}
	b, _ := io.ReadAll(req.Body)
	return req, string(b)
}

func TestTransportStreamsOneRequestPerConnection(t *testing.T) {
	var mu sync.Mutex
	closed := 0
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("X-Seen", fmt.Sprintf("%s %s close=%v body=%q", r.Method, r.Proto, r.Close, b))
		for i := range 3 {
			fmt.Fprintf(w, "id: %d\ndata: %d\n\n", i, i)
			w.(http.Flusher).Flush()
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateClosed {
			mu.Lock()
			closed++
			mu.Unlock()
		}
	}
	srv.Start()
	defer srv.Close()

	c := &Client{}
	for run := range 3 {
		st, err := c.Open(context.Background(), Request{Method: "POST", URL: srv.URL, Body: []byte(`{"a":1}`)})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := st.Header.Get("X-Seen"), `POST HTTP/1.1 close=true body="{\"a\":1}"`; got != want {
			t.Errorf("server saw %s, want %s", got, want)
		}
		var data []string
		for {
			ev, err := st.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			data = append(data, string(ev.Data))
		}
		if strings.Join(data, ",") != "0,1,2" {
			t.Errorf("run %d: events %v", run, data)
		}
	}
	// Each request had a connection of its own, closed with its body.
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := closed
		mu.Unlock()
		if n == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of 3 connections closed", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A live stream over Transport costs no goroutine but its reader's:
// net/http's transport keeps two per connection.
func TestTransportKeepsNoGoroutinePerStream(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: x\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)

	count := func(rt http.RoundTripper) (transport int) {
		c := &Client{HTTP: &http.Client{Transport: rt}}
		var streams []*Stream
		for range 10 {
			st, err := c.Open(context.Background(), Request{URL: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.Next(); err != nil {
				t.Fatal(err)
			}
			streams = append(streams, st)
		}
		buf := make([]byte, 1<<20)
		stacks := string(buf[:runtime.Stack(buf, true)])
		for _, g := range strings.Split(stacks, "\n\n") {
			if strings.Contains(g, "net/http.(*persistConn)") || strings.Contains(g, "resumeclient.(*Transport)") {
				transport++
			}
		}
		for _, st := range streams {
			st.Close()
		}
		return transport
	}
	if n := count(&Transport{}); n != 0 {
		t.Errorf("Transport: %d goroutines of the transport for 10 live streams, want 0", n)
	}
	nh := &http.Transport{}
	defer nh.CloseIdleConnections()
	if n := count(nh); n != 20 {
		t.Errorf("net/http: %d goroutines of the transport for 10 live streams, want 20 (the comparison is void)", n)
	}
}

func TestTransportTLSSpeaksHTTP1(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("X-Proto", r.Proto)
		io.WriteString(w, "data: x\n\n")
	}))
	srv.EnableHTTP2 = true // the server offers h2; the transport must not take it
	srv.StartTLS()
	defer srv.Close()

	var tlsStart, tlsDone, gotConn, connectDone bool
	trace := &httptrace.ClientTrace{
		TLSHandshakeStart: func() { tlsStart = true },
		TLSHandshakeDone:  func(_ tls.ConnectionState, err error) { tlsDone = err == nil },
		GotConn:           func(httptrace.GotConnInfo) { gotConn = true },
		ConnectDone:       func(_, _ string, err error) { connectDone = err == nil },
	}
	ctx := httptrace.WithClientTrace(context.Background(), trace)
	tr := &Transport{TLSClientConfig: &tls.Config{RootCAs: srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs}}
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL, nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.Proto != "HTTP/1.1" || resp.Header.Get("X-Proto") != "HTTP/1.1" || string(b) != "data: x\n\n" {
		t.Errorf("got %s, server saw %s, body %q", resp.Proto, resp.Header.Get("X-Proto"), b)
	}
	if resp.TLS == nil || !resp.TLS.HandshakeComplete || resp.TLS.NegotiatedProtocol == "h2" {
		t.Errorf("TLS state %+v", resp.TLS)
	}
	if !tlsStart || !tlsDone || !gotConn || !connectDone {
		t.Errorf("trace: TLS start %v done %v, GotConn %v, ConnectDone %v", tlsStart, tlsDone, gotConn, connectDone)
	}

	// Without the server's CA the certificate is refused.
	req, _ = http.NewRequest("GET", srv.URL, nil)
	if _, err := (&Transport{}).RoundTrip(req); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("unverifiable certificate: %v", err)
	}
}

func TestTransportCancel(t *testing.T) {
	hold := make(chan struct{})
	defer close(hold)
	addr := rawServer(t, func(c net.Conn) {
		req, _ := readRequest(t, c)
		if req != nil && req.URL.Path == "/body" {
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: 1\n\n")
		}
		<-hold
	})
	cause := errors.New("probe over budget")
	for _, path := range []string{"/headers", "/body"} {
		ctx, cancel := context.WithCancelCause(context.Background())
		req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+addr+path, nil)
		time.AfterFunc(50*time.Millisecond, func() { cancel(cause) })
		start := time.Now()
		resp, err := (&Transport{}).RoundTrip(req)
		if path == "/body" {
			if err != nil {
				t.Fatal(err)
			}
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		if !errors.Is(err, context.Canceled) || !errors.Is(err, cause) {
			t.Errorf("%s: cancelled with a cause: %v", path, err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: the cancel took %v", path, d)
		}
	}
}

func TestTransportHostileResponses(t *testing.T) {
	tests := []struct {
		name, wire string
		want       string // in the error; "" for none
		body       string
	}{
		{"endless header", "HTTP/1.1 200 OK\r\nX-A: " + strings.Repeat("a", 2<<20), "header exceeded 1048576 bytes", ""},
		{"many headers", "HTTP/1.1 200 OK\r\n" + strings.Repeat("X-A: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n", 40000), "header exceeded 1048576 bytes", ""},
		{"not HTTP", "SSH-2.0-OpenSSH_9.6\r\n\r\n", "malformed HTTP", ""},
		{"closed before the status", "", "EOF", ""},
		{"early hints first", "HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\ndata: x\n\n", "", "data: x\n\n"},
		{"long header line", "HTTP/1.1 200 OK\r\nX-Long: " + strings.Repeat("b", 5000) + "\r\nContent-Length: 2\r\n\r\nok", "", "ok"},
		{"chunk extension longer than the buffer", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2;" + strings.Repeat("e", 4000) + "\r\nok\r\n0\r\n\r\n", "too long", ""},
		{"cut chunk", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nabc", "unexpected EOF", ""},
		{"close-delimited body", "HTTP/1.1 200 OK\r\n\r\nall of it", "", "all of it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr := rawServer(t, func(c net.Conn) {
				readRequest(t, c)
				io.WriteString(c, tt.wire)
			})
			req, _ := http.NewRequest("GET", "http://"+addr+"/", nil)
			resp, err := (&Transport{}).RoundTrip(req)
			var body []byte
			if err == nil {
				body, err = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("error %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("error %v, want one with %q", err, tt.want)
			case tt.want == "" && string(body) != tt.body:
				t.Errorf("body %q, want %q", body, tt.body)
			}
		})
	}
}

// A request through a proxy goes to net/http's transport, which speaks to
// the proxy (here a real server that answers for the target).
func TestTransportProxyGoesToTheFallback(t *testing.T) {
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: via proxy for %s\n\n", r.URL.Host)
	}))
	defer proxy.Close()
	pu, _ := url.Parse(proxy.URL)
	tr := &Transport{Proxy: http.ProxyURL(pu)}
	defer tr.CloseIdleConnections()
	req, _ := http.NewRequest("GET", "http://target.invalid/stream", nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "data: via proxy for target.invalid\n\n" {
		t.Errorf("body %q", b)
	}
}

func TestTransportBadRequests(t *testing.T) {
	for _, tt := range []struct{ url, want string }{
		{"ftp://example.com/", `unsupported protocol scheme "ftp"`},
		{"http:///path", "no host"},
		{"http://127.0.0.1:1/", "connection refused"},
	} {
		req, _ := http.NewRequest("GET", tt.url, nil)
		if _, err := (&Transport{}).RoundTrip(req); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.url, err, tt.want)
		}
	}
}

// A stream that trickles small events keeps its first 1 KiB buffer; one
// that brings more than a read takes grows it to ReadBuffer.
func TestStreamReadBufferGrowsOnlyWhenFilled(t *testing.T) {
	big := strings.Repeat("z", 20000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 5 {
			if r.URL.Path == "/big" {
				fmt.Fprintf(w, "data: %s\n\n", big)
			} else {
				fmt.Fprintf(w, "data: %d\n\n", i)
			}
			w.(http.Flusher).Flush()
			time.Sleep(5 * time.Millisecond)
		}
	}))
	defer srv.Close()
	for _, tt := range []struct {
		path string
		want int
	}{{"/small", 1 << 10}, {"/big", 4 << 10}} {
		st, err := (&Client{}).Open(context.Background(), Request{URL: srv.URL + tt.path})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for {
			ev, err := st.Next()
			if err != nil {
				break
			}
			if tt.path == "/big" && string(ev.Data) != big {
				t.Fatalf("event %d: %d bytes", n, len(ev.Data))
			}
			n++
		}
		if n != 5 || len(st.buf) != tt.want {
			t.Errorf("%s: %d events, buffer %d, want 5 and %d", tt.path, n, len(st.buf), tt.want)
		}
	}
}

// A TLS handshake that outlasts TLSHandshakeTimeout ends with a timeout of
// its own, as net/http's does: not with context.DeadlineExceeded, which the
// probe takes for its own deadline ("timeout: no response headers within
// 30s" after 10 s). The caller's deadline, when it comes first, stays
// DeadlineExceeded.
func TestTransportHandshakeTimeoutIsNotTheCallersDeadline(t *testing.T) {
	addr := rawServer(t, func(c net.Conn) { io.Copy(io.Discard, c) }) // never answers the ClientHello
	req, _ := http.NewRequest("GET", "https://"+addr+"/", nil)
	_, err := (&Transport{TLSHandshakeTimeout: 300 * time.Millisecond}).RoundTrip(req)
	var ne net.Error
	if err == nil || errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() ||
		err.Error() != "TLS handshake timeout (300ms)" {
		t.Errorf("handshake timeout: %v, want a net.Error that timed out, not DeadlineExceeded", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	req, _ = http.NewRequestWithContext(ctx, "GET", "https://"+addr+"/", nil)
	if _, err := (&Transport{TLSHandshakeTimeout: time.Hour}).RoundTrip(req); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("caller's deadline during the handshake: %v", err)
	}
}

// A context done right as the handshake ends closes the connection from
// its own goroutine while RoundTrip goes on with the TLS connection: under
// -race, the two once shared the variable holding the connection.
func TestTransportCancelAtHandshakeEnd(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	tr := &Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	for range 10 {
		ctx, cancel := context.WithCancel(context.Background())
		ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
			TLSHandshakeDone: func(tls.ConnectionState, error) { cancel() },
		})
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL, nil)
		// The answer may beat the close (net/http then returns it too).
		resp, err := tr.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		} else if !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled at the end of the handshake: %v", err)
		}
	}
}

// A server that answers (413, 401) and closes before it has read the whole
// body breaks the write of the request; its answer is still the result,
// as with net/http, not "connection reset by peer".
func TestTransportAnswerBeforeTheWholeBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "prompt too large", http.StatusRequestEntityTooLarge)
	}))
	defer srv.Close()
	// A raw server that closes at once, leaving the body unread (a reset).
	raw := rawServer(t, func(c net.Conn) {
		c.Read(make([]byte, 4096))
		io.WriteString(c, "HTTP/1.1 401 Unauthorized\r\nContent-Length: 9\r\nConnection: close\r\n\r\nbad key!\n")
	})
	// More than loopback's socket buffers hold: the write cannot finish.
	body := strings.Repeat("x", 32<<20)
	for _, u := range []string{srv.URL, "http://" + raw} {
		req, _ := http.NewRequest("POST", u, strings.NewReader(body))
		resp, err := (&Transport{}).RoundTrip(req)
		if err != nil {
			t.Errorf("%s: %v", u, err)
			continue
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode/100 != 4 || err != nil || !strings.Contains(string(b), "!") && !strings.Contains(string(b), "large") {
			t.Errorf("%s: %d %q %v", u, resp.StatusCode, b, err)
		}
	}
	// Through Client, the answer becomes a StatusError with its text.
	_, err := (&Client{}).Open(context.Background(), Request{Method: "POST", URL: srv.URL, Body: []byte(body)})
	var se *StatusError
	if !errors.As(err, &se) || se.Status != http.StatusRequestEntityTooLarge || !strings.Contains(se.Snippet, "prompt too large") {
		t.Errorf("Open: %v", err)
	}
	// A body that cannot be read is the error, whatever the server does.
	req, _ := http.NewRequest("POST", srv.URL, io.MultiReader(strings.NewReader("abc"), iotest.ErrReader(errors.New("prompt file gone"))))
	if _, err := (&Transport{}).RoundTrip(req); err == nil || !strings.Contains(err.Error(), "prompt file gone") {
		t.Errorf("unreadable body: %v", err)
	}
}

// Like net/http's transport, Transport refuses a request it would send
// altered: a header name that is not a token (Request.Write drops it
// without a word, and the server answers 401), a value with a control byte
// (a CR or LF became a space), a method that is not a token. The error
// names the field, never its value. Nothing is dialled.
func TestTransportRefusesInvalidRequests(t *testing.T) {
	var mu sync.Mutex
	dialled := 0
	addr := rawServer(t, func(c net.Conn) {
		mu.Lock()
		dialled++
		mu.Unlock()
		readRequest(t, c)
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
	})
	for _, tt := range []struct {
		name   string
		method string
		header http.Header
		want   string
	}{
		{"name with a space", "GET", http.Header{"X-Api-Key ": {"SECRET-1"}}, `invalid header field name "X-Api-Key "`},
		{"name with a colon", "GET", http.Header{"Authorization:": {"SECRET-2"}}, `invalid header field name "Authorization:"`},
		{"value with LF", "GET", http.Header{"Authorization": {"Bearer SECRET-3\n"}}, `invalid header field value for "Authorization"`},
		{"value with NUL", "GET", http.Header{"X-Api-Key": {"SECRET-4\x00"}}, `invalid header field value for "X-Api-Key"`},
		{"method", "GET /admin HTTP/1.1\r\nX:", http.Header{}, "invalid method"},
	} {
		req, _ := http.NewRequest("GET", "http://"+addr+"/", strings.NewReader("body"))
		req.Method, req.Header = tt.method, tt.header
		_, err := (&Transport{}).RoundTrip(req)
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "SECRET") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line with %s", tt.name, err, tt.want)
		}
	}
	// Through Client, the value stays out of the error too.
	_, err := (&Client{}).Open(context.Background(), Request{URL: "http://" + addr + "/?key=SECRET-Q", Header: http.Header{"Authorization": {"Bearer SECRET-5\r\n"}}})
	if !errors.Is(err, ErrConnect) || strings.Contains(err.Error(), "SECRET") || !strings.Contains(err.Error(), `"Authorization"`) {
		t.Errorf("Open: %v", err)
	}
	// Tab is allowed in a value, and a valid request goes out.
	req, _ := http.NewRequest("GET", "http://"+addr+"/", nil)
	req.Header.Set("X-A", "a\tb")
	resp, err := (&Transport{}).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	mu.Lock()
	defer mu.Unlock()
	if dialled != 1 {
		t.Errorf("%d connections, want 1 (the valid request's)", dialled)
	}
}

// Bytes already buffered are not handed out after Close, as with net/http.
func TestTransportReadAfterClose(t *testing.T) {
	addr := rawServer(t, func(c net.Conn) {
		readRequest(t, c)
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789")
	})
	req, _ := http.NewRequest("GET", "http://"+addr+"/", nil)
	resp, err := (&Transport{}).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 2)
	if _, err := io.ReadFull(resp.Body, b); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if n, err := resp.Body.Read(b); n != 0 || !errors.Is(err, http.ErrBodyReadAfterClose) {
		t.Errorf("read after Close: %d bytes, %v", n, err)
	}

	// A body read to its end keeps saying io.EOF (a reader such as gzip's
	// may ask again), until it is closed.
	req, _ = http.NewRequest("GET", "http://"+addr+"/", nil)
	if resp, err = (&Transport{}).RoundTrip(req); err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(resp.Body); string(b) != "0123456789" || err != nil {
		t.Fatalf("%q %v", b, err)
	}
	for range 2 {
		if n, err := resp.Body.Read(b); n != 0 || err != io.EOF {
			t.Errorf("read after the end: %d bytes, %v, want io.EOF", n, err)
		}
	}
	resp.Body.Close()
}
