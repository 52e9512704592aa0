package resumeclient

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// newTestClient is a client with the default transport.
func newTestClient(t *testing.T) *Client { return &Client{} }

func TestOpenErrorsNeverLeakSecrets(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "/next%zz?token=SECRET-LOCATION")
		w.WriteHeader(http.StatusFound)
	}))
	defer ts.Close()
	c := newTestClient(t)
	u := strings.Replace(ts.URL, "http://", "http://user:SECRET-PASS@", 1) + "/p?key=SECRET-QUERY"
	_, err := c.Open(context.Background(), Request{URL: u})
	if err == nil {
		t.Fatal("no error")
	}
	for _, s := range []string{"SECRET-PASS", "SECRET-QUERY", "SECRET-LOCATION"} {
		if strings.Contains(err.Error(), s) {
			t.Errorf("error leaks %s: %v", s, err)
		}
	}
	_, err = c.Open(context.Background(), Request{URL: "http://user:SECRET-PASS@127.0.0.1:1/x?key=SECRET-QUERY"})
	if err == nil || strings.Contains(err.Error(), "SECRET") {
		t.Errorf("refused connection error: %v", err)
	}
}

// A redirect whose Location does not parse is told by its type, not by
// the words of an error: it wraps ErrConnect and the redirect's cause,
// without the Location's token, through both transports. A server's
// malformed header line that happens to say "Location" is what it is,
// not a redirect (the message-text check took it for one).
func TestOpenClassifiesRedirectsByType(t *testing.T) {
	addr := rawServer(t, func(c net.Conn) {
		req, _ := readRequest(t, c)
		if req == nil {
			return
		}
		switch req.URL.Path {
		case "/redirect":
			io.WriteString(c, "HTTP/1.1 302 Found\r\nLocation: /next%zz?token=SECRET-LOCATION\r\nContent-Length: 0\r\n\r\n")
		case "/header":
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nBad Location line\r\n\r\n")
		}
	})
	for _, tr := range []struct {
		name string
		rt   http.RoundTripper
	}{{"Transport", &Transport{}}, {"net/http", &http.Transport{DisableKeepAlives: true}}} {
		c := &Client{HTTP: &http.Client{Transport: tr.rt}}
		_, err := c.Open(context.Background(), Request{URL: "http://" + addr + "/redirect"})
		if !errors.Is(err, ErrConnect) || !errors.Is(err, errBadLocation) || strings.Contains(err.Error(), "SECRET") {
			t.Errorf("%s: bad Location: %v, want ErrConnect and errBadLocation, no token", tr.name, err)
		}
		var esc url.EscapeError
		if !errors.As(err, &esc) {
			t.Errorf("%s: bad Location: %v does not wrap the parser's cause", tr.name, err)
		}
		_, err = c.Open(context.Background(), Request{URL: "http://" + addr + "/header"})
		if err == nil || errors.Is(err, errBadLocation) || !strings.Contains(err.Error(), `malformed MIME header: missing colon: "Bad Location line"`) {
			t.Errorf("%s: malformed header line: %v, want net/http's words and no redirect", tr.name, err)
		}
	}
}

// An error status whose body never ends must not hang Open.
func TestOpenErrorBodyThatNeverEnds(t *testing.T) {
	release := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, "slow down please")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer ts.Close()
	defer close(release)
	start := time.Now()
	st, err := newTestClient(t).Open(context.Background(), Request{URL: ts.URL})
	if !errors.Is(err, ErrHTTPStatus) || !strings.Contains(err.Error(), "429") || !strings.Contains(err.Error(), "slow down please") {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Open took %v", d)
	}
	var se *StatusError
	if st != nil || !errors.As(err, &se) || se.Status != 429 {
		t.Errorf("stream %v, err %#v: want no stream and a *StatusError with status 429", st, err)
	}
}

// An error body that comes well after the headers (here 400 ms, where the
// wait was 250 ms) is waited for: the provider's message is the answer.
// One that never comes ends the wait with the caller's deadline.
func TestOpenErrorBodyAfterTheHeaders(t *testing.T) {
	release := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		w.(http.Flusher).Flush()
		if r.URL.Path == "/never" {
			select {
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		time.Sleep(400 * time.Millisecond)
		io.WriteString(w, `{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}`)
	}))
	defer ts.Close()
	defer close(release)
	_, err := newTestClient(t).Open(context.Background(), Request{URL: ts.URL})
	var se *StatusError
	if !errors.As(err, &se) || se.Status != 503 || !strings.Contains(se.Snippet, "The model is overloaded.") {
		t.Errorf("err = %v: want the body that came 400 ms after the headers", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err = newTestClient(t).Open(ctx, Request{URL: ts.URL + "/never"})
	if !errors.As(err, &se) || se.Status != 503 || se.Snippet != "" || ctx.Err() == nil {
		t.Errorf("err = %v (context %v): want the status, no body, after the deadline", err, ctx.Err())
	}
}

func TestDropAtByteCutsMidEvent(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "id: 1\ndata: one\n\nid: 2\ndata: two\n\n")
	}))
	defer ts.Close()
	st, err := newTestClient(t).Open(context.Background(), Request{URL: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	st.DropAtByte(int64(len("id: 1\ndata: one\n\nid: 2\nda")))
	ev, err := st.Next()
	if err != nil || string(ev.Data) != "one" {
		t.Fatalf("first: %v %v", ev, err)
	}
	if _, err := st.Next(); !errors.Is(err, ErrDropped) {
		t.Fatalf("err = %v, want ErrDropped", err)
	}
	if st.LastEventID() != "1" || !st.Truncated() {
		t.Errorf("last id %q truncated %v: the cut-off event's id must not be taken", st.LastEventID(), st.Truncated())
	}
}

func TestRequestHeadersAndBodyResent(t *testing.T) {
	var got []*http.Request
	var bodies []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = append(got, r)
		bodies = append(bodies, string(b))
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		io.WriteString(w, "data: x\n\n")
	}))
	defer ts.Close()
	c := newTestClient(t)
	req := Request{Method: "POST", URL: ts.URL, Body: []byte(`{"a":1}`)}
	for _, id := range []string{"", "7"} {
		req.LastEventID = id
		st, err := c.Open(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		for {
			if _, err := st.Next(); err != nil {
				break
			}
		}
	}
	if len(got) != 2 || bodies[0] != `{"a":1}` || bodies[1] != bodies[0] {
		t.Fatalf("bodies %q", bodies)
	}
	if got[0].Header.Get("Accept") != "text/event-stream" || got[0].Header.Get("Cache-Control") != "no-cache" {
		t.Errorf("headers %v", got[0].Header)
	}
	if _, ok := got[0].Header["Last-Event-Id"]; ok {
		t.Error("Last-Event-ID sent with an empty id")
	}
	if got[1].Header.Get("Last-Event-ID") != "7" {
		t.Errorf("Last-Event-ID %q", got[1].Header.Get("Last-Event-ID"))
	}
}

// An error body that echoes the request's key, at every offset around the
// 128-byte cut of the message: no piece of the key of 4 bytes or more is
// ever shown.
func TestErrorBodyEchoingTheKeyAtTheCut(t *testing.T) {
	const key = "sk-test-0123456789abcdefghijklmnop"
	var pad int
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, strings.Repeat("x", pad)+"invalid key "+r.Header.Get("Authorization")+" given")
	}))
	defer ts.Close()
	c := newTestClient(t)
	for pad = 60; pad <= 140; pad++ {
		_, err := c.Open(context.Background(), Request{URL: ts.URL, Header: http.Header{"Authorization": {"Bearer " + key}}})
		if err == nil {
			t.Fatal("no error")
		}
		msg := err.Error()
		for n := 4; n <= len(key); n++ {
			for i := 0; i+n <= len(key); i++ {
				if piece := key[i : i+n]; len(piece) >= 8 && strings.Contains(msg, piece) {
					t.Fatalf("pad %d: message shows %q of the key: %s", pad, piece, msg)
				}
			}
		}
		if !strings.Contains(msg, "401") {
			t.Errorf("pad %d: %s", pad, msg)
		}
	}
}
