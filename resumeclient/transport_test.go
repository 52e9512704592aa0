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
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"
)

// rawServer accepts connections on loopback and hands each to serve; it
// returns the address.
func rawServer(t testing.TB, serve func(c net.Conn)) string {
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
		{"chunk extension longer than the buffer", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2;" + strings.Repeat("e", 4000) + "\r\nok\r\n0\r\n\r\n", "a chunk-size line over 512 bytes (its chunk extensions): this transport refuses it", ""},
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
	// Through Client, the request is refused before it is tried (a
	// Session does not retry it), and the value stays out of the error.
	_, err := (&Client{}).Open(context.Background(), Request{URL: "http://" + addr + "/?key=SECRET-Q", Header: http.Header{"Authorization": {"Bearer SECRET-5\r\n"}}})
	if !errors.Is(err, ErrInvalidRequest) || strings.Contains(err.Error(), "SECRET") || !strings.Contains(err.Error(), `"Authorization"`) {
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

// watchServer runs script on each connection, then waits for the client to
// close it and sends what the script returned on the channel.
func watchServer(t *testing.T, script func(c net.Conn, br *bufio.Reader) string) (string, <-chan string) {
	closed := make(chan string, 100)
	addr := rawServer(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		name := script(c, br)
		c.SetReadDeadline(time.Now().Add(time.Minute))
		io.Copy(io.Discard, br)
		closed <- name
	})
	return addr, closed
}

// Every way a request can end closes its connection: the server sees the
// client go on each of them (and goleak, in TestMain, that no goroutine
// stays).
func TestTransportClosesTheConnectionOnEveryPath(t *testing.T) {
	addr, closed := watchServer(t, func(c net.Conn, br *bufio.Reader) string {
		req, err := http.ReadRequest(br)
		if err != nil {
			return "unreadable request"
		}
		p := req.URL.Path
		switch p {
		case "/malformed":
			io.WriteString(c, "NOT HTTP\r\n\r\n")
		case "/1xx-then-malformed":
			io.WriteString(c, "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\n\r\nNOT HTTP\r\n\r\n")
		case "/unread", "/cancel-body":
			io.WriteString(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n")
		case "/eof":
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello")
		case "/redirect":
			io.WriteString(c, "HTTP/1.1 302 Found\r\nLocation: /eof\r\nContent-Length: 3\r\n\r\nbye")
		case "/short":
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhel")
			c.(*net.TCPConn).CloseWrite()
		}
		return p
	})
	get := func(ctx context.Context, path string, body io.Reader) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(ctx, "POST", "http://"+addr+path, body)
		return (&Transport{}).RoundTrip(req)
	}
	for _, p := range []string{"/malformed", "/1xx-then-malformed"} {
		if _, err := get(context.Background(), p, nil); err == nil {
			t.Errorf("%s: no error", p)
		}
	}
	if resp, err := get(context.Background(), "/unread", nil); err == nil {
		resp.Body.Close() // never read
	}
	if resp, err := get(context.Background(), "/eof", nil); err == nil {
		io.ReadAll(resp.Body) // read to the end, never closed
	}
	if resp, err := get(context.Background(), "/short", nil); err == nil {
		if _, err := io.ReadAll(resp.Body); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("body shorter than its Content-Length: %v, want unexpected EOF", err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if resp, err := get(ctx, "/cancel-body", nil); err == nil {
		b := make([]byte, 5)
		io.ReadFull(resp.Body, b)
		cancel()
		if _, err := io.ReadAll(resp.Body); !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled while reading: %v", err)
		}
	}
	// A body that fails to read midway: the request is never finished.
	if _, err := get(context.Background(), "/write-fail", io.MultiReader(strings.NewReader("abc"), iotest.ErrReader(errors.New("gone")))); err == nil {
		t.Error("failing request body: no error")
	}
	// net/http's client reads a redirect's body and closes it.
	resp, err := (&http.Client{Transport: &Transport{}}).Get("http://" + addr + "/redirect")
	if err == nil {
		io.ReadAll(resp.Body)
		resp.Body.Close()
	}

	// TLS: a server that is not one, and one that never answers.
	tlsAddr, tlsClosed := watchServer(t, func(c net.Conn, br *bufio.Reader) string {
		br.ReadByte()
		io.WriteString(c, "HTTP/1.1 400 Bad Request\r\n\r\n")
		return "tls garbage"
	})
	req, _ := http.NewRequest("GET", "https://"+tlsAddr+"/", nil)
	if _, err := (&Transport{}).RoundTrip(req); err == nil {
		t.Error("not a TLS server: no error")
	}
	silentAddr, silentClosed := watchServer(t, func(c net.Conn, br *bufio.Reader) string { return "tls silent" })
	req, _ = http.NewRequest("GET", "https://"+silentAddr+"/", nil)
	if _, err := (&Transport{TLSHandshakeTimeout: 200 * time.Millisecond}).RoundTrip(req); err == nil {
		t.Error("silent TLS server: no error")
	}

	// Each connection, seen closed by the server once.
	want := []string{"/1xx-then-malformed", "/cancel-body", "/eof", "/eof", "/malformed", "/redirect", "/short", "/unread", "/write-fail", "tls garbage", "tls silent"}
	var got []string
	timeout := time.After(30 * time.Second)
	for len(got) < len(want) {
		select {
		case p := <-closed:
			got = append(got, p)
		case p := <-tlsClosed:
			got = append(got, p)
		case p := <-silentClosed:
			got = append(got, p)
		case <-timeout:
			t.Fatalf("connections seen closed: %v, want %v", got, want)
		}
	}
	sort.Strings(got)
	if !slices.Equal(got, want) {
		t.Errorf("connections seen closed: %v, want %v", got, want)
	}
}

// Responses read as net/http's transport reads them: both transports see
// the same status, body, trailer and error for each, including bodies that
// must not be waited for (HEAD, 204, 304) on a connection the server keeps
// open.
func TestTransportReadsResponsesAsNetHTTP(t *testing.T) {
	tests := []struct{ name, method, wire string }{
		{"HEAD with a length", "HEAD", "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n"},
		{"204", "GET", "HTTP/1.1 204 No Content\r\n\r\n"},
		{"304", "GET", "HTTP/1.1 304 Not Modified\r\nContent-Length: 50\r\n\r\n"},
		{"HTTP/1.0 close-delimited", "GET", "HTTP/1.0 200 OK\r\n\r\nold server"},
		{"trailer", "GET", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-Usage\r\n\r\n3\r\nabc\r\n0\r\nX-Usage: 42\r\n\r\n"},
		{"Transfer-Encoding identity", "GET", "HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\n\r\nabc"},
		{"two lengths", "GET", "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd"},
		{"100 Continue first", "POST", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"},
	}
	result := func(rt http.RoundTripper, addr, method string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, method, "http://"+addr+"/", nil)
		resp, err := rt.RoundTrip(req)
		if err != nil {
			return "error"
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return fmt.Sprintf("%d %q then an error", resp.StatusCode, b)
		}
		return fmt.Sprintf("%d %q trailer %v", resp.StatusCode, b, resp.Trailer)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr := rawServer(t, func(c net.Conn) {
				br := bufio.NewReader(c)
				if _, err := http.ReadRequest(br); err != nil {
					return
				}
				io.WriteString(c, tt.wire)
				if !strings.HasPrefix(tt.wire, "HTTP/1.0") && !strings.Contains(tt.wire, "identity") {
					io.Copy(io.Discard, br) // open until the client goes
				}
			})
			nh := &http.Transport{DisableKeepAlives: true}
			defer nh.CloseIdleConnections()
			want := result(nh, addr, tt.method)
			if got := result(&Transport{}, addr, tt.method); got != want {
				t.Errorf("got %s, net/http %s", got, want)
			}
		})
	}
}

// Requests go out as net/http's client sends them through net/http's
// transport: req.Host, an IPv6 literal host, user info turned into Basic
// auth by http.Client (and kept off the request line), a body sent again
// on a 307 or 308 (GetBody), Expect: 100-continue.
func TestTransportSendsRequestsAsNetHTTP(t *testing.T) {
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/307" || r.URL.Path == "/308" {
			code := map[string]int{"/307": 307, "/308": 308}[r.URL.Path]
			http.Redirect(w, r, "/echo", code)
			return
		}
		b, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %s host=%s auth=%q body=%q", r.Method, r.RequestURI, r.Host, r.Header.Get("Authorization"), b)
	})
	srv := httptest.NewServer(handler)
	defer srv.Close()
	addr := srv.Listener.Addr().String()
	var servers = []string{addr}
	if ln, err := net.Listen("tcp", "[::1]:0"); err == nil {
		srv6 := httptest.NewUnstartedServer(handler)
		srv6.Listener.Close()
		srv6.Listener = ln
		srv6.Start()
		defer srv6.Close()
		servers = append(servers, ln.Addr().String())
	} else {
		t.Logf("no IPv6 loopback (%v): the [::1] case is not run", err)
	}
	for _, a := range servers {
		for _, tt := range []struct {
			name   string
			req    func() *http.Request
			follow bool
		}{
			{"Host", func() *http.Request {
				r, _ := http.NewRequest("GET", "http://"+a+"/echo?q=1", nil)
				r.Host = "api.example.com"
				return r
			}, false},
			{"user info", func() *http.Request {
				r, _ := http.NewRequest("GET", "http://user:pa55@"+a+"/echo", nil)
				return r
			}, true},
			{"307 with a body", func() *http.Request {
				r, _ := http.NewRequest("POST", "http://"+a+"/307", strings.NewReader(`{"prompt":"hi"}`))
				return r
			}, true},
			{"308 with a body", func() *http.Request {
				r, _ := http.NewRequest("POST", "http://"+a+"/308", strings.NewReader(`{"prompt":"hi"}`))
				return r
			}, true},
			{"Expect 100-continue", func() *http.Request {
				r, _ := http.NewRequest("POST", "http://"+a+"/echo", strings.NewReader("body"))
				r.Header.Set("Expect", "100-continue")
				return r
			}, false},
		} {
			do := func(rt http.RoundTripper) string {
				var resp *http.Response
				var err error
				if tt.follow {
					resp, err = (&http.Client{Transport: rt}).Do(tt.req())
				} else {
					resp, err = rt.RoundTrip(tt.req())
				}
				if err != nil {
					return "error " + err.Error()
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				return fmt.Sprintf("%d %s", resp.StatusCode, b)
			}
			nh := &http.Transport{}
			want := do(nh)
			nh.CloseIdleConnections()
			got := do(&Transport{})
			if got != want || !strings.HasPrefix(got, "200 ") {
				t.Errorf("%s %s: got %s, net/http %s", a, tt.name, got, want)
			}
			if strings.Contains(got, "pa55") {
				t.Errorf("%s: user info on the request line: %s", tt.name, got)
			}
		}
	}
}

// A URL without a port dials the scheme's default one.
func TestTransportDefaultPorts(t *testing.T) {
	for _, tt := range []struct{ url, want string }{
		{"http://127.0.0.1/", "127.0.0.1:80"},
		{"https://127.0.0.1/", "127.0.0.1:443"},
		{"https://[::1]/", "[::1]:443"},
		{"HTTP://[::1]:8080/", "[::1]:8080"},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		var got string
		ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GetConn: func(hp string) { got = hp; cancel() }})
		req, _ := http.NewRequestWithContext(ctx, "GET", tt.url, nil)
		if _, err := (&Transport{Proxy: func(*http.Request) (*url.URL, error) { return nil, nil }}).RoundTrip(req); !errors.Is(err, context.Canceled) || got != tt.want {
			t.Errorf("%s: dialled %q (%v), want %s", tt.url, got, err, tt.want)
		}
		cancel()
	}
}

// SNI and verification as net/http does them: the host name is sent and
// verified, an IP literal is verified against the certificate's IPs and
// not sent, TLSClientConfig's ServerName and InsecureSkipVerify are used.
func TestTransportTLSServerName(t *testing.T) {
	var mu sync.Mutex
	var sni []string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	srv.TLS = &tls.Config{GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
		mu.Lock()
		sni = append(sni, h.ServerName)
		mu.Unlock()
		return nil, nil
	}}
	srv.StartTLS()
	defer srv.Close()
	pool := srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	for _, tt := range []struct {
		name, host string
		cfg        *tls.Config
		ok         bool
		sni        string
	}{
		{"IP literal", "127.0.0.1", &tls.Config{RootCAs: pool}, true, ""},
		{"name not in the certificate", "localhost", &tls.Config{RootCAs: pool}, false, "localhost"},
		{"ServerName set", "localhost", &tls.Config{RootCAs: pool, ServerName: "example.com"}, true, "example.com"},
		{"InsecureSkipVerify", "localhost", &tls.Config{InsecureSkipVerify: true}, true, "localhost"},
	} {
		mu.Lock()
		sni = nil
		mu.Unlock()
		req, _ := http.NewRequest("GET", fmt.Sprintf("https://%s:%d/", tt.host, port), nil)
		resp, err := (&Transport{TLSClientConfig: tt.cfg}).RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		mu.Lock()
		got := sni
		mu.Unlock()
		if (err == nil) != tt.ok || len(got) != 1 || got[0] != tt.sni {
			t.Errorf("%s: error %v, SNI %q; want ok %v, SNI %q", tt.name, err, got, tt.ok, tt.sni)
		}
	}
}

// Every error of the transport, as Client.Open reports it, is one line
// without the URL's user info or query or a header's value.
func TestTransportErrorsThroughOpenKeepSecretsOut(t *testing.T) {
	addr, _ := watchServer(t, func(c net.Conn, br *bufio.Reader) string {
		req, err := http.ReadRequest(br)
		if err != nil {
			return ""
		}
		switch req.URL.Path {
		case "/malformed":
			io.WriteString(c, "HTTP/1.1 200 OK\r\nBad Header SECRET-Q\r\n\r\n")
		case "/huge":
			io.WriteString(c, "HTTP/1.1 200 OK\r\nX-A: "+strings.Repeat("a", 2<<20))
		case "/cut":
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 100\r\n\r\ndata: x\n")
			c.(*net.TCPConn).CloseWrite()
		}
		return ""
	})
	silent := rawServer(t, func(c net.Conn) { io.Copy(io.Discard, c) })
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer tlsSrv.Close()
	secretURL := func(base, path string) string {
		return strings.Replace(base, "://", "://user:SECRET-P@", 1) + path + "?key=SECRET-Q"
	}
	// The default handshake timeout (10 s) for every case but the silent
	// server's: a real handshake of the race-built test binary on a busy
	// machine has taken more than 200 ms ("unknown authority" failed with
	// a timeout). The silent server never answers, so any timeout shows
	// its error: a short one keeps the test short.
	c := &Client{HTTP: &http.Client{Transport: &Transport{}}}
	short := &Client{HTTP: &http.Client{Transport: &Transport{TLSHandshakeTimeout: 200 * time.Millisecond}}}
	for _, tt := range []struct {
		name, url string
		header    http.Header
		want      string
		c         *Client
	}{
		{"refused", secretURL("http://127.0.0.1:1", "/"), nil, "connection refused", c},
		{"malformed header", secretURL("http://"+addr, "/malformed"), nil, "malformed MIME header", c},
		{"header too large", secretURL("http://"+addr, "/huge"), nil, "header exceeded", c},
		{"invalid header value", secretURL("http://"+addr, "/"), http.Header{"X-Api-Key": {"SECRET-H\n"}}, `header "X-Api-Key" has the byte 0x0a`, c},
		{"unknown authority", secretURL(tlsSrv.URL, "/"), nil, "certificate", c},
		{"handshake timeout", secretURL("https://"+silent, "/"), nil, "TLS handshake timeout", short},
	} {
		_, err := tt.c.Open(context.Background(), Request{URL: tt.url, Header: tt.header})
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "SECRET-P") ||
			strings.Contains(err.Error(), "key=SECRET-Q") || strings.Contains(err.Error(), "SECRET-H") || strings.ContainsAny(err.Error(), "\r\n") {
			t.Errorf("%s: %v, want one line with %q and no secret", tt.name, err, tt.want)
		}
	}
	// A body cut short of its Content-Length is a reset, not a clean end.
	st, err := c.Open(context.Background(), Request{URL: secretURL("http://"+addr, "/cut")})
	if err != nil {
		t.Fatal(err)
	}
	for err == nil {
		_, err = st.Next()
	}
	if !errors.Is(err, ErrReset) || !errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), "SECRET") {
		t.Errorf("cut body: %v, want ErrReset with unexpected EOF", err)
	}
}

// Close from another goroutine ends a Read blocked on the connection, and
// a cancel racing the body's end leaves either a clean end or the
// context's error (run with -race).
func TestTransportCloseAndCancelRaceTheReader(t *testing.T) {
	hold := make(chan struct{})
	defer close(hold)
	addr := rawServer(t, func(c net.Conn) {
		req, _ := readRequest(t, c)
		if req == nil {
			return
		}
		if req.URL.Path == "/end" {
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello")
			return
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n")
		<-hold
	})
	req, _ := http.NewRequest("GET", "http://"+addr+"/hold", nil)
	resp, err := (&Transport{}).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() {
		_, err := io.ReadAll(resp.Body)
		done <- err
	}()
	time.Sleep(20 * time.Millisecond) // most often, the reader is blocked by now
	resp.Body.Close()
	select {
	case err := <-done:
		if err == nil {
			t.Error("a read ended by Close: no error")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Close did not end the blocked Read")
	}

	for range 20 {
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+addr+"/end", nil)
		resp, err := (&Transport{}).RoundTrip(req)
		if err != nil {
			cancel()
			if !errors.Is(err, context.Canceled) {
				t.Fatal(err)
			}
			continue
		}
		go cancel()
		b, err := io.ReadAll(resp.Body)
		if err != nil && !errors.Is(err, context.Canceled) || err == nil && string(b) != "hello" {
			t.Errorf("cancel racing the end: %q %v", b, err)
		}
		resp.Body.Close()
		cancel()
	}
}
