package resumeclient

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// FramingSSEOrJSON: the server chooses. A JSON body, even pretty-printed
// and written in pieces, is one event, dispatched at the clean end of the
// body and stamped with the arrival of its last byte; an SSE answer is
// parsed as SSE; anything else is refused naming both types.
func TestFramingSSEOrJSON(t *testing.T) {
	t.Parallel()
	const body = "{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 2,\n  \"result\": {}\n}"
	lastAt := make(chan time.Time, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if got := r.Header.Get("Accept"); got != "application/json, text/event-stream" {
			t.Errorf("Accept %q", got)
		}
		switch r.URL.Path {
		case "/json":
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			for i, piece := range []string{body[:10], body[10:30], body[30:]} {
				if i == 2 {
					lastAt <- time.Now() // the last piece cannot arrive before this
				}
				w.Write([]byte(piece))
				w.(http.Flusher).Flush()
				time.Sleep(20 * time.Millisecond)
			}
		case "/sse":
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write([]byte("id: 7\ndata:\n\nid: 8\ndata: {}\n\n"))
		default:
			w.Header().Set("Content-Type", "text/html")
		}
	}))
	defer srv.Close()
	c := &Client{}
	open := func(path string) (*Stream, error) {
		return c.Open(context.Background(), Request{Method: http.MethodPost, URL: srv.URL + path, Body: []byte("{}"), Framing: FramingSSEOrJSON})
	}
	st, err := open("/json")
	if err != nil {
		t.Fatal(err)
	}
	ev, err := st.Next()
	if err != nil || string(ev.Data) != body || ev.HasID || ev.Size != len(body) || ev.Dispatched.Before(ev.FirstByte) {
		t.Fatalf("event %+v, err %v", ev, err)
	}
	if last := <-lastAt; ev.Dispatched.Before(last) {
		t.Errorf("stamped %v before the server wrote its last piece: want the arrival of the last byte", last.Sub(ev.Dispatched))
	}
	if _, err := st.Next(); !errors.Is(err, io.EOF) {
		t.Errorf("after the body: %v", err)
	}
	st, err = open("/sse")
	if err != nil {
		t.Fatal(err)
	}
	ev, _ = st.Next()
	if string(ev.ID) != "7" || len(ev.Data) != 0 {
		t.Errorf("priming event %+v", ev)
	}
	st.Close()
	if _, err := open("/html"); !errors.Is(err, ErrNotEventStream) || !strings.Contains(err.Error(), "not text/event-stream or application/json") {
		t.Errorf("html: %v", err)
	}
}

// A JSON body over MaxEventSize ends the stream with ErrEventTooLarge,
// its bytes let go.
func TestBodyParserLimit(t *testing.T) {
	t.Parallel()
	p := BodyParser{MaxEventSize: 8}
	p.Push([]byte("{\"a\":"), time.Now())
	if ev, err := p.Next(); ev != nil || err != nil || !p.Pending() {
		t.Fatalf("%v %v", ev, err)
	}
	p.Push([]byte("12345}"), time.Now())
	if _, err := p.Next(); !errors.Is(err, ErrEventTooLarge) || p.Flush() != nil || p.data != nil {
		t.Fatalf("err %v", err)
	}
	var empty BodyParser
	if empty.Flush() != nil {
		t.Error("an empty body is no event")
	}
}

// FramingSSETrailer: the lines of unknown fields after the last event
// (Gemini's error object, bare JSON) come as one KindTrailer event at the
// clean end of the body; plain SSE ignores them, as the rules say; an
// event after them clears them; they are bounded by MaxTrailer.
func TestFramingSSETrailer(t *testing.T) {
	t.Parallel()
	const obj = "{\r\n  \"error\": {\r\n    \"code\": 499,\r\n    \"status\": \"CANCELLED\"\r\n  }\r\n}"
	big := strings.Repeat("x", 1000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		switch r.URL.Path {
		case "/trailer":
			io.WriteString(w, "data: {\"a\":1}\r\n\r\n"+obj+"\r\n\r\n")
		case "/cleared":
			io.WriteString(w, "junk line\n\ndata: {\"a\":2}\n\n")
		case "/big":
			io.WriteString(w, "data: x\n\n"+strings.Repeat(big+"\n", 40))
		}
	}))
	defer srv.Close()
	read := func(path string, f Framing) (data []string, trailer string) {
		st, err := (&Client{}).Open(context.Background(), Request{URL: srv.URL + path, Framing: f})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		for {
			ev, err := st.Next()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					t.Errorf("%s: %v", path, err)
				}
				return data, trailer
			}
			if ev.Kind == KindTrailer {
				trailer = string(ev.Data)
				continue
			}
			data = append(data, string(ev.Data))
		}
	}
	if data, tr := read("/trailer", FramingSSETrailer); len(data) != 1 || tr != strings.ReplaceAll(obj, "\r\n", "\n") {
		t.Errorf("events %q trailer %q", data, tr)
	}
	if data, tr := read("/trailer", FramingSSE); len(data) != 1 || tr != "" {
		t.Errorf("plain SSE: events %q trailer %q", data, tr)
	}
	if data, tr := read("/cleared", FramingSSETrailer); len(data) != 1 || tr != "" {
		t.Errorf("an event after the junk: events %q trailer %q", data, tr)
	}
	if _, tr := read("/big", FramingSSETrailer); len(tr) >= MaxTrailer || len(tr) < MaxTrailer-2*len(big) {
		t.Errorf("trailer of %d bytes, want it bounded by %d", len(tr), MaxTrailer)
	}
}
