package resumeclient_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/r3labs/sse/v2"

	"github.com/streamprobe/streamprobe/internal/refserver"
	rc "github.com/streamprobe/streamprobe/resumeclient"
)

// scripted is a loopback SSE server that plays one scripted answer per
// connection, in order, and logs each request.
type scripted struct {
	*httptest.Server
	mu    sync.Mutex
	reqs  []seen
	plays []func(w http.ResponseWriter)
}

type seen struct {
	method, lastID string
	hasLastID      bool
	body, ua       string
}

func newScripted(t *testing.T, plays ...func(w http.ResponseWriter)) *scripted {
	s := &scripted{plays: plays}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		_, has := r.Header["Last-Event-Id"]
		s.mu.Lock()
		n := len(s.reqs)
		s.reqs = append(s.reqs, seen{r.Method, r.Header.Get("Last-Event-ID"), has, string(b), r.UserAgent()})
		s.mu.Unlock()
		if n >= len(s.plays) {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		s.plays[n](w)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *scripted) seen() []seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]seen(nil), s.reqs...)
}

// stream answers 200 text/event-stream with wire, then ends cleanly.
func stream(wire string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, wire)
	}
}

// cut writes wire, then breaks the connection (no clean end).
func cut(wire string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, wire)
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	}
}

// overNetHTTP makes client use net/http's transport instead of the
// default rc.Transport (TestSessionOverNetHTTP).
var overNetHTTP bool

func client(t *testing.T) *rc.Client {
	if !overNetHTTP {
		return &rc.Client{}
	}
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &rc.Client{HTTP: &http.Client{Transport: tr}}
}

// TestSessionOverNetHTTP runs the conformance behaviours and the stops
// over net/http's transport, which a caller may set as Client.HTTP.
func TestSessionOverNetHTTP(t *testing.T) {
	overNetHTTP = true
	defer func() { overNetHTTP = false }()
	t.Run("reconnection", TestSessionReconnection)
	t.Run("stops", TestSessionStops)
	t.Run("cancel cause", TestSessionCancelCause)
}

// fast reconnects at once, so tests do not wait the 3 s default.
var fast = rc.SessionOptions{Retry: -1}

// drain reads a session to its end and returns the data of its events
// (with the connection index) and the final error.
func drain(t *testing.T, s *rc.Session) ([]string, error) {
	t.Helper()
	var out []string
	for {
		ev, err := s.Next()
		if err != nil {
			return out, err
		}
		if ev.Kind == rc.KindEvent {
			out = append(out, fmt.Sprintf("%d:%s", ev.Conn, ev.Data))
		}
	}
}

func session(t *testing.T, req rc.Request, o rc.SessionOptions) *rc.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	s, err := client(t).NewSession(ctx, req, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// The six reconnection behaviours a conformance suite checks, each against
// a real loopback server.
func TestSessionReconnection(t *testing.T) {
	t.Run("resends the last event id after a clean end", func(t *testing.T) {
		srv := newScripted(t, stream("id: 1\ndata: a\n\nid: 2\ndata: b\n\n"), stream("id: 3\ndata: c\n\n"))
		got, err := drain(t, session(t, rc.Request{URL: srv.URL}, fast))
		if !errors.Is(err, rc.ErrNoContent) {
			t.Fatalf("end: %v, want ErrNoContent (the third answer is 204)", err)
		}
		if want := "0:a 0:b 1:c"; strings.Join(got, " ") != want {
			t.Errorf("events %q, want %q", got, want)
		}
		if r := srv.seen(); r[1].lastID != "2" || r[2].lastID != "3" || r[0].hasLastID {
			t.Errorf("Last-Event-ID sent: %+v", r)
		}
	})
	t.Run("resends the last id that was set, across events without one", func(t *testing.T) {
		srv := newScripted(t, stream("id: 7\ndata: a\n\ndata: b\n\n"), stream(""))
		drain(t, session(t, rc.Request{URL: srv.URL}, fast))
		if r := srv.seen(); r[1].lastID != "7" {
			t.Errorf("second request sent Last-Event-ID %q, want 7", r[1].lastID)
		}
	})
	t.Run("an explicitly empty id clears it", func(t *testing.T) {
		srv := newScripted(t, stream("id: 7\ndata: a\n\nid:\ndata: b\n\n"), stream(""))
		drain(t, session(t, rc.Request{URL: srv.URL}, fast))
		if r := srv.seen(); r[1].hasLastID {
			t.Errorf("second request sent Last-Event-ID %q, want none", r[1].lastID)
		}
	})
	t.Run("resends method and body", func(t *testing.T) {
		srv := newScripted(t, stream("id: 1\ndata: a\n\n"), stream(""))
		drain(t, session(t, rc.Request{Method: "POST", URL: srv.URL, Body: []byte(`{"q":1}`)}, fast))
		r := srv.seen()
		if r[1].method != "POST" || r[1].body != `{"q":1}` || r[0].body != r[1].body {
			t.Errorf("requests %+v", r)
		}
		if !strings.HasPrefix(r[0].ua, "streamprobe/") {
			t.Errorf("User-Agent %q", r[0].ua)
		}
	})
	t.Run("discards the cut-off event and its id", func(t *testing.T) {
		srv := newScripted(t, cut("id: 1\ndata: a\n\nid: 2\ndata: half"), stream("id: 2\ndata: b\n\n"))
		got, _ := drain(t, session(t, rc.Request{URL: srv.URL}, fast))
		if want := "0:a 1:b"; strings.Join(got, " ") != want {
			t.Errorf("events %q, want %q", got, want)
		}
		if r := srv.seen(); r[1].lastID != "1" {
			t.Errorf("resumed with %q, want 1: a cut-off event's id is never used", r[1].lastID)
		}
	})
	t.Run("the new connection works after a network error", func(t *testing.T) {
		srv := newScripted(t, cut("id: 1\ndata: a\n\n"), cut("id: 2\ndata: b\n\n"), stream("id: 3\ndata: c\n\n"))
		var drops []string
		o := fast
		o.OnDrop = func(d *rc.Drop) bool {
			drops = append(drops, fmt.Sprintf("%d:%v:%d", d.Conn, errors.Is(d.Err, rc.ErrReset), d.Events))
			return true
		}
		got, _ := drain(t, session(t, rc.Request{URL: srv.URL}, o))
		if want := "0:a 1:b 2:c"; strings.Join(got, " ") != want {
			t.Errorf("events %q, want %q", got, want)
		}
		if want := "0:true:1 1:true:1 2:false:1"; strings.Join(drops, " ") != want {
			t.Errorf("drops %q, want %q", drops, want)
		}
	})
}

// The rules that end a session: a status other than 200, another content
// type, 204, a hook that says stop, and attempts that run out.
func TestSessionStops(t *testing.T) {
	t.Run("not 200", func(t *testing.T) {
		srv := newScripted(t, stream("id: 1\ndata: a\n\n"), func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "5")
			http.Error(w, "gone for good", http.StatusGone)
		})
		got, err := drain(t, session(t, rc.Request{URL: srv.URL}, fast))
		var se *rc.StatusError
		if !errors.As(err, &se) || se.Status != 410 || !errors.Is(err, rc.ErrHTTPStatus) || se.Snippet != "gone for good" || se.Header.Get("Retry-After") != "5" {
			t.Fatalf("err %v (%+v)", err, se)
		}
		if se.Start.IsZero() || se.HeadersAt.Before(se.Start) {
			t.Errorf("times %v %v", se.Start, se.HeadersAt)
		}
		if len(got) != 1 || len(srv.seen()) != 2 {
			t.Errorf("events %q, requests %d", got, len(srv.seen()))
		}
	})
	t.Run("wrong content type", func(t *testing.T) {
		srv := newScripted(t, func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{}`)
		})
		_, err := drain(t, session(t, rc.Request{URL: srv.URL}, fast))
		if !errors.Is(err, rc.ErrNotEventStream) || len(srv.seen()) != 1 {
			t.Fatalf("err %v after %d requests", err, len(srv.seen()))
		}
	})
	t.Run("204 on the first request", func(t *testing.T) {
		srv := newScripted(t)
		_, err := drain(t, session(t, rc.Request{URL: srv.URL}, fast))
		if !errors.Is(err, rc.ErrNoContent) || !errors.Is(err, rc.ErrHTTPStatus) {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("OnDrop says stop", func(t *testing.T) {
		srv := newScripted(t, stream("id: 1\ndata: a\n\n"), stream("id: 2\ndata: b\n\n"))
		o := fast
		o.OnDrop = func(d *rc.Drop) bool { return false }
		got, err := drain(t, session(t, rc.Request{URL: srv.URL}, o))
		if err != io.EOF || len(got) != 1 || len(srv.seen()) != 1 {
			t.Fatalf("err %v, events %q, requests %d", err, got, len(srv.seen()))
		}
	})
	t.Run("bounded attempts", func(t *testing.T) {
		var plays []func(http.ResponseWriter)
		for range 10 {
			plays = append(plays, stream(": nothing here\n\n"))
		}
		srv := newScripted(t, plays...)
		o := fast
		o.MaxReconnects = 3
		_, err := drain(t, session(t, rc.Request{URL: srv.URL}, o))
		if !errors.Is(err, rc.ErrTooManyReconnects) || !errors.Is(err, io.EOF) {
			t.Fatalf("err %v", err)
		}
		if n := len(srv.seen()); n != 4 {
			t.Errorf("%d requests, want 4 (the first and 3 reconnects)", n)
		}
	})
	t.Run("a refused connection is retried, then given up", func(t *testing.T) {
		o := fast
		o.MaxReconnects = 2
		var drops int
		o.OnDrop = func(d *rc.Drop) bool {
			drops++
			if !errors.Is(d.Err, rc.ErrConnect) {
				t.Errorf("drop err %v", d.Err)
			}
			return true
		}
		_, err := drain(t, session(t, rc.Request{URL: "http://127.0.0.1:1/"}, o))
		if !errors.Is(err, rc.ErrTooManyReconnects) || !errors.Is(err, rc.ErrConnect) || drops != 2 {
			t.Fatalf("err %v after %d drops", err, drops)
		}
	})
	t.Run("invalid options", func(t *testing.T) {
		_, err := (&rc.Client{ReadTimeout: -1}).NewSession(context.Background(), rc.Request{URL: "http://x/"}, rc.SessionOptions{})
		if !errors.Is(err, rc.ErrInvalidOption) || !strings.Contains(err.Error(), "ReadTimeout") {
			t.Fatalf("err %v", err)
		}
		_, err = client(t).NewSession(context.Background(), rc.Request{URL: "http://x/"}, rc.SessionOptions{MaxWait: -1})
		if !errors.Is(err, rc.ErrInvalidOption) {
			t.Fatalf("err %v", err)
		}
	})
}

// The server's retry field sets the wait before the next request; the
// measured wait is a lower bound, never a race.
func TestSessionHonoursRetry(t *testing.T) {
	srv := newScripted(t, stream("retry: 300\nid: 1\ndata: a\n\n"), stream("id: 2\ndata: b\n\n"))
	var d0 rc.Drop
	var starts []time.Time
	o := rc.SessionOptions{NoJitter: true}
	o.OnDrop = func(d *rc.Drop) bool {
		if d.Conn == 0 {
			d0 = *d
		}
		return d.Conn == 0
	}
	o.OnConnect = func(info rc.ConnInfo, _ *rc.Stream) error { starts = append(starts, info.Start); return nil }
	got, _ := drain(t, session(t, rc.Request{URL: srv.URL}, o))
	if len(got) != 2 || len(starts) != 2 {
		t.Fatalf("events %q, connections %d", got, len(starts))
	}
	if !d0.HasRetry || d0.Retry != 300*time.Millisecond || d0.Wait != 300*time.Millisecond {
		t.Errorf("drop %+v", d0)
	}
	if gap := starts[1].Sub(d0.At); gap < 300*time.Millisecond {
		t.Errorf("reconnected %v after the drop, before the server's retry of 300ms", gap)
	}
}

// Backoff doubles the wait for every attempt in a row that brought no
// event, a server's retry is never taken below MinRetry, and jitter only
// ever adds up to a quarter.
func TestSessionBackoff(t *testing.T) {
	var plays []func(http.ResponseWriter)
	for range 4 {
		plays = append(plays, stream("retry: 10\n\n"))
	}
	srv := newScripted(t, plays...)
	var waits []time.Duration
	o := rc.SessionOptions{MaxReconnects: 3}
	o.OnDrop = func(d *rc.Drop) bool { waits = append(waits, d.Wait); return true }
	drain(t, session(t, rc.Request{URL: srv.URL}, o))
	if len(waits) != 3 {
		t.Fatalf("waits %v", waits)
	}
	for i, w := range waits {
		base := rc.MinRetry << i // the server's 10 ms is raised to the floor
		if w < base || w > base+base/4 {
			t.Errorf("wait %d = %v, want %v to %v", i, w, base, base+base/4)
		}
	}
}

func TestSessionRestart(t *testing.T) {
	srv := refserver.NewServer(refserver.Events(refserver.Ms(0, 10, 2000, 2010), 2020))
	t.Cleanup(srv.Close)
	s := session(t, rc.Request{URL: srv.URL}, rc.SessionOptions{})
	var got []string
	for len(got) < 4 {
		ev, err := s.Next()
		if err != nil {
			t.Fatalf("after %q: %v", got, err)
		}
		got = append(got, fmt.Sprintf("%d:%s", ev.Conn, ev.ID))
		if len(got) == 2 {
			s.Restart() // reconnects at once, not after the 3 s default
		}
	}
	if want := "0:1 0:2 1:3 1:4"; strings.Join(got, " ") != want {
		t.Errorf("events %q, want %q", got, want)
	}
	if c := srv.Conns(); len(c) != 2 || c[1].LastEventID != "2" {
		t.Errorf("conns %+v", c)
	}
}

// Drop cuts the current connection as the client's own drop: OnDrop sees
// ErrDropped, with the events so far, and decides what follows (here: the
// same request from the last id, at once).
func TestSessionDrop(t *testing.T) {
	srv := refserver.NewServer(refserver.Events(refserver.Ms(0, 10, 2000, 2010), 2020))
	t.Cleanup(srv.Close)
	var drops []error
	s := session(t, rc.Request{URL: srv.URL}, rc.SessionOptions{OnDrop: func(d *rc.Drop) bool {
		drops = append(drops, d.Err)
		d.Wait = 0
		return errors.Is(d.Err, rc.ErrDropped)
	}})
	var got []string
	for len(got) < 4 {
		ev, err := s.Next()
		if err != nil {
			t.Fatalf("after %q: %v", got, err)
		}
		got = append(got, fmt.Sprintf("%d:%s", ev.Conn, ev.ID))
		if len(got) == 2 {
			s.Drop()
		}
	}
	if want := "0:1 0:2 1:3 1:4"; strings.Join(got, " ") != want {
		t.Errorf("events %q, want %q", got, want)
	}
	if len(drops) != 1 || !errors.Is(drops[0], rc.ErrDropped) {
		t.Errorf("drops %v, want one ErrDropped", drops)
	}
	if c := srv.Conns(); len(c) != 2 || c[1].LastEventID != "2" {
		t.Errorf("conns %+v", c)
	}
}

// A stream that goes silent is dropped after the read timeout and resumed;
// comment lines count as traffic and carry their text.
func TestSessionReadTimeoutAndComments(t *testing.T) {
	silent := make(chan struct{})
	srv := newScripted(t, func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, ": keep-alive 1\n\nid: 1\ndata: a\n\n")
		w.(http.Flusher).Flush()
		<-silent // until the test ends: only the client's read timeout ends this stream
	}, stream("id: 2\ndata: b\n\n"))
	t.Cleanup(func() { close(silent) })
	c := client(t)
	c.ReadTimeout = 200 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	o := fast
	var why error
	o.OnDrop = func(d *rc.Drop) bool {
		if why == nil {
			why = d.Err
		}
		return true
	}
	s, err := c.NewSession(ctx, rc.Request{URL: srv.URL}, o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var got []string
	for {
		ev, err := s.Next()
		if err != nil {
			break
		}
		got = append(got, fmt.Sprintf("%d:%d:%s", ev.Conn, ev.Kind, ev.Data))
	}
	want := fmt.Sprintf("0:%d:keep-alive 1 0:%d:a 1:%d:b", rc.KindComment, rc.KindEvent, rc.KindEvent)
	if strings.Join(got, " ") != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if !errors.Is(why, rc.ErrIdle) {
		t.Errorf("first drop: %v, want ErrIdle", why)
	}
	if r := srv.seen(); len(r) < 2 || r[1].lastID != "1" {
		t.Errorf("requests %+v", r)
	}
}

func TestSessionCloseStopsAWait(t *testing.T) {
	srv := newScripted(t, stream("retry: 60000\nid: 1\ndata: a\n\n"))
	s := session(t, rc.Request{URL: srv.URL}, rc.SessionOptions{})
	if _, err := s.Next(); err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(50 * time.Millisecond)
		s.Close()
	}()
	start := time.Now()
	_, err := s.Next()
	if !errors.Is(err, rc.ErrDropped) {
		t.Fatalf("err %v, want ErrDropped", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Close took %v to end a 60 s wait", d)
	}
}

// Close ends a request that waits for its response headers (the Session
// has no context of its own: Close cancels the request's), and a closed
// Session opens nothing more.
func TestSessionCloseStopsARequest(t *testing.T) {
	arrived := make(chan struct{})
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select { // no headers until the client is gone
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(func() { close(release); srv.Close() })
	s := session(t, rc.Request{URL: srv.URL}, rc.SessionOptions{})
	errc := make(chan error, 1)
	go func() {
		_, err := s.Next()
		errc <- err
	}()
	<-arrived
	s.Close()
	select {
	case err := <-errc:
		if !errors.Is(err, rc.ErrDropped) {
			t.Fatalf("err %v, want ErrDropped", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end a request waiting for its headers")
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := s.Next(); !errors.Is(err, rc.ErrDropped) {
		t.Errorf("Next after Close: %v", err)
	}

	closed := session(t, rc.Request{URL: srv.URL}, rc.SessionOptions{})
	closed.Close()
	if _, err := closed.Next(); !errors.Is(err, rc.ErrDropped) || closed.Conns() != 0 {
		t.Errorf("a Session closed before its first Next: err %v after %d connections", err, closed.Conns())
	}
}

// A server nobody here wrote: r3labs/sse replays from Last-Event-ID
// (inclusive, its off-by-one) after the connection broke.
func TestSessionAgainstR3labs(t *testing.T) {
	server := sse.New()
	server.AutoReplay = true
	server.AutoStream = true
	t.Cleanup(server.Close)
	server.CreateStream("s")
	publish := func(i int) { server.Publish("s", &sse.Event{Data: []byte("e" + strconv.Itoa(i))}) }
	publish(0)
	publish(1)
	ts := httptest.NewServer(server)
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
	})
	s := session(t, rc.Request{URL: ts.URL + "?stream=s"}, fast)
	var got []string
	for len(got) < 5 {
		ev, err := s.Next()
		if err != nil {
			t.Fatalf("after %q: %v", got, err)
		}
		if ev.Kind != rc.KindEvent {
			continue
		}
		got = append(got, fmt.Sprintf("%d:%s=%s", ev.Conn, ev.ID, ev.Data))
		if len(got) == 2 {
			ts.CloseClientConnections() // the server side breaks
			publish(2)                  // while the client is away
			publish(3)
		}
	}
	// r3labs numbers from 0 and replays the sent id 1 again.
	if want := "0:0=e0 0:1=e1 1:1=e1 1:2=e2 1:3=e3"; strings.Join(got, " ") != want {
		t.Errorf("events %q, want %q", got, want)
	}
}

// The same behaviours against the project's reference server, which logs
// what each connection asked for and what it really sent.
func TestSessionAgainstTheReferenceServer(t *testing.T) {
	t.Run("a clean close mid-stream is resumed from the last id", func(t *testing.T) {
		srv := refserver.NewUnstarted(refserver.Events(refserver.Ms(1, 2, 3, 4, 5, 6, 7, 8), -1))
		srv.CloseAfter = 5
		srv.Start()
		t.Cleanup(srv.Close)
		o := fast
		o.OnDrop = func(d *rc.Drop) bool { return d.Conn == 0 } // one resume, then the end
		got, err := drain(t, session(t, rc.Request{URL: srv.URL}, o))
		if err != io.EOF || len(got) != 8 {
			t.Fatalf("events %q, end %v", got, err)
		}
		if c := srv.Conns(); len(c) != 2 || c[1].LastEventID != "5" || c[1].Sent[0].ID != "6" {
			t.Errorf("connections %+v", c)
		}
	})
	t.Run("an event cut off mid-way is never dispatched nor its id sent", func(t *testing.T) {
		srv := refserver.NewUnstarted(refserver.Events(refserver.Ms(1, 2, 3, 4, 5), -1))
		srv.CutAt = 3 // the 4th event (id 4) goes out without its blank line
		srv.Start()
		t.Cleanup(srv.Close)
		o := fast
		o.OnDrop = func(d *rc.Drop) bool { return d.Conn == 0 }
		got, _ := drain(t, session(t, rc.Request{URL: srv.URL}, o))
		if want := "0:chunk 1 0:chunk 2 0:chunk 3 1:chunk 4 1:chunk 5"; strings.Join(got, " ") != want {
			t.Errorf("events %q, want %q (id 4 once, on the new connection)", got, want)
		}
		if c := srv.Conns(); len(c) != 2 || c[1].LastEventID != "3" {
			t.Errorf("resumed with %q, want 3", c[len(c)-1].LastEventID)
		}
	})
	t.Run("an explicitly empty id sends no Last-Event-ID", func(t *testing.T) {
		srv := refserver.NewUnstarted([]refserver.Step{{At: time.Millisecond, ID: "1", Data: "a"}, {At: 2 * time.Millisecond, Raw: "id\ndata: b\n\n"}})
		srv.CloseAfter = 2
		srv.Start()
		t.Cleanup(srv.Close)
		o := fast
		o.OnDrop = func(d *rc.Drop) bool { return d.Conn == 0 }
		drain(t, session(t, rc.Request{URL: srv.URL}, o))
		if c := srv.Conns(); len(c) != 2 || c[1].LastEventID != "" {
			t.Errorf("second connection sent Last-Event-ID %q, want none", c[len(c)-1].LastEventID)
		}
	})
}

// A server that answers every reconnect with "retry: 0" and the same event
// again makes no progress: the Session waits at least MinRetry, backs off,
// and gives up instead of storming it.
func TestSessionNoReconnectStorm(t *testing.T) {
	var plays []func(http.ResponseWriter)
	for range 50 {
		plays = append(plays, stream("retry: 0\nid: 1\ndata: a\n\n"))
	}
	srv := newScripted(t, plays...)
	o := rc.SessionOptions{MaxReconnects: 3, NoJitter: true}
	var waits []time.Duration
	o.OnDrop = func(d *rc.Drop) bool { waits = append(waits, d.Wait); return true }
	_, err := drain(t, session(t, rc.Request{URL: srv.URL}, o))
	if !errors.Is(err, rc.ErrTooManyReconnects) {
		t.Fatalf("end %v", err)
	}
	if n := len(srv.seen()); n != 5 {
		t.Errorf("%d requests, want 5: the first, one that made progress, then 3 replays", n)
	}
	for i, w := range waits {
		if w < rc.MinRetry {
			t.Errorf("wait %d = %v, under MinRetry", i, w)
		}
	}
}

// Restart between connections drops the next one as soon as it opens.
func TestSessionRestartBetweenConnections(t *testing.T) {
	srv := newScripted(t, stream("id: 1\ndata: a\n\n"), stream("id: 2\ndata: b\n\n"), stream("id: 3\ndata: c\n\n"))
	var s *rc.Session
	o := fast
	var why []error
	o.OnDrop = func(d *rc.Drop) bool {
		why = append(why, d.Err)
		if d.Conn == 0 {
			s.Restart() // no connection is open now
		}
		return d.Conn < 2
	}
	s = session(t, rc.Request{URL: srv.URL}, o)
	got, _ := drain(t, s)
	if len(why) < 2 || !errors.Is(why[1], rc.ErrDropped) {
		t.Fatalf("drops %v: the second connection was not dropped by the pending Restart", why)
	}
	if strings.Contains(strings.Join(got, " "), "1:b") {
		t.Errorf("events %q: the restarted connection delivered an event", got)
	}
}

// A key in the URL's query, echoed back in an error body, is redacted like
// a header's.
func TestErrorBodyEchoingAQueryKey(t *testing.T) {
	const key = "sk-query-0123456789abcdef"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "bad request for "+r.URL.String(), http.StatusBadRequest)
	}))
	t.Cleanup(srv.Close)
	_, err := drain(t, session(t, rc.Request{URL: srv.URL + "/v1?key=" + key}, fast))
	if err == nil || strings.Contains(err.Error(), key) || strings.Contains(err.Error(), key[:12]) || !strings.Contains(err.Error(), "[redacted]") {
		t.Errorf("err %v", err)
	}
}

// A cancel with a cause of the caller's still wraps context.Canceled.
func TestSessionCancelCause(t *testing.T) {
	open := make(chan struct{})
	srv := newScripted(t, func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: a\n\n")
		w.(http.Flusher).Flush()
		<-open // the stream stays open until the test ends: only the cancel ends it
	})
	t.Cleanup(func() { close(open) })
	ctx, cancel := context.WithCancelCause(context.Background())
	s, err := client(t).NewSession(ctx, rc.Request{URL: srv.URL}, fast)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Next(); err != nil {
		t.Fatal(err)
	}
	mine := errors.New("mine")
	cancel(mine)
	_, err = s.Next()
	if !errors.Is(err, context.Canceled) || !errors.Is(err, mine) {
		t.Errorf("err %v: want context.Canceled and the cause", err)
	}
}
