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
