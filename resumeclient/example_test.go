package resumeclient_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"time"

	"github.com/streamprobe/streamprobe/resumeclient"
	"github.com/streamprobe/streamprobe/textgate"
)

// A Session reads a stream across drops: here the server closes the stream
// after every two events, and the Session resumes with Last-Event-ID each
// time, as a browser's EventSource would.
func ExampleSession() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next := 1
		if id, err := strconv.Atoi(r.Header.Get("Last-Event-ID")); err == nil {
			next = id + 1
		}
		if next > 5 {
			w.WriteHeader(http.StatusNoContent) // done: stop reconnecting
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "retry: 10\n\n")
		for i := next; i < next+2 && i <= 5; i++ {
			fmt.Fprintf(w, "id: %d\ndata: event %d\n\n", i, i)
		}
	}))
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := (&resumeclient.Client{}).NewSession(ctx, resumeclient.Request{URL: srv.URL}, resumeclient.SessionOptions{})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	for {
		ev, err := s.Next()
		if err != nil {
			fmt.Println("end:", err)
			return
		}
		if ev.Kind == resumeclient.KindEvent {
			fmt.Printf("connection %d: id %s, %s\n", ev.Conn, ev.ID, ev.Data)
		}
	}
	// Output:
	// connection 0: id 1, event 1
	// connection 0: id 2, event 2
	// connection 1: id 3, event 3
	// connection 1: id 4, event 4
	// connection 2: id 5, event 5
	// end: unexpected HTTP status: 204 No Content, the server asks the client to stop reconnecting
}

// Client.Open sends one request and reads one response: the events come
// one at a time, each stamped with when its bytes arrived, until io.EOF
// at the clean end of the body.
func ExampleClient_Open() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, ": keep-alive\n\nid: 1\ndata: {\"text\":\"Hello\"}\n\nid: 2\nevent: done\ndata: [DONE]\n\n")
	}))
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := (&resumeclient.Client{}).Open(ctx, resumeclient.Request{URL: srv.URL})
	if err != nil {
		panic(err)
	}
	defer st.Close()
	fmt.Println("status", st.Status)
	for {
		ev, err := st.Next()
		if err == io.EOF {
			fmt.Println("clean end, last event id", st.LastEventID())
			return
		}
		if err != nil {
			panic(err)
		}
		if ev.Kind == resumeclient.KindComment {
			fmt.Printf("comment %q\n", ev.Data)
			continue
		}
		fmt.Printf("event %q id %s data %s (arrived after the headers: %v)\n", ev.Type, ev.ID, ev.Data, !ev.Dispatched.Before(st.HeadersAt))
	}
	// Output:
	// status 200
	// comment "keep-alive"
	// event "" id 1 data {"text":"Hello"} (arrived after the headers: true)
	// event "done" id 2 data [DONE] (arrived after the headers: true)
	// clean end, last event id 2
}

// A Parser takes bytes in any split, as reads deliver them: Push one
// read with its arrival time, then call Next until it returns nil. An
// event is dispatched by the blank line that ends it, so the one cut in
// the middle of the first read comes out of the second.
func ExampleParser() {
	var p resumeclient.Parser
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	reads := []string{"retry: 2000\nid: a\ndata: first\n\ndata: sec", "ond\ndata: line\n\n"}
	for i, read := range reads {
		p.Push([]byte(read), start.Add(time.Duration(i)*100*time.Millisecond))
		for {
			ev, err := p.Next()
			if err != nil {
				panic(err)
			}
			if ev == nil {
				break
			}
			fmt.Printf("read %d: id %q data %q, first byte at +%v, dispatched at +%v\n",
				i, ev.ID, ev.Data, ev.FirstByte.Sub(start), ev.Dispatched.Sub(start))
		}
	}
	retry, ok := p.Retry()
	fmt.Println("retry", retry, ok)
	// Output:
	// read 0: id "a" data "first", first byte at +0s, dispatched at +0s
	// read 1: id "a" data "second\nline", first byte at +0s, dispatched at +100ms
	// retry 2s true
}

// Scrub is the gate for any text a server controls: the request's secrets
// are redacted however they are encoded, control characters made visible,
// and the text bounded.
func ExampleScrub() {
	h := http.Header{"Authorization": {"Bearer sk-example-0123456789"}}
	secrets := textgate.Secrets(h, textgate.URLSecrets("https://api.example/v1?key=query-secret-42")...)
	body := "invalid key sk%2Dexample%2D0123456789 (query-secret-42)\r\n\x1b[31mred\x1b[0m"
	fmt.Println(textgate.Scrub(body, secrets, 0))
	fmt.Println(textgate.Scrub(strings.Repeat("x", 40), nil, 16))
	// Output:
	// invalid key [redacted] ([redacted]) \x1b[31mred\x1b[0m
	// xxxxxxxxxxxxx...
}
