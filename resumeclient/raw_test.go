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

// A raw stream: every read that brought bytes is one event, stamped when
// it arrived, its bytes in place; any Content-Type is read, and the clean
// end of the body ends it.
func TestRawStream(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept") != "text/plain, */*" {
			http.Error(w, "accept", 400)
			return
		}
		if r.URL.Path == "/none" {
			w.Header()["Content-Type"] = nil
		} else {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		}
		for _, s := range []string{"Par", "is is", " the capital."} {
			io.WriteString(w, s)
			w.(http.Flusher).Flush()
			time.Sleep(30 * time.Millisecond)
		}
	}))
	defer srv.Close()
	for _, path := range []string{"/", "/none"} {
		st, err := (&Client{}).Open(context.Background(), Request{URL: srv.URL + path, Framing: FramingRaw})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		var last time.Time
		for {
			ev, err := st.Next()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					t.Fatal(err)
				}
				break
			}
			if !ev.FirstByte.Equal(ev.Dispatched) || ev.Size != len(ev.Data) || ev.Dispatched.Sub(last) < 20*time.Millisecond {
				t.Errorf("%s: event %q stamped %v / %v after %v", path, ev.Data, ev.FirstByte, ev.Dispatched, last)
			}
			last = ev.Dispatched
			got = append(got, string(ev.Data))
		}
		if strings.Join(got, "|") != "Par|is is| the capital." || st.Truncated() {
			t.Errorf("%s: reads %q truncated %v", path, got, st.Truncated())
		}
	}
}

// RawParser hands out a read's bytes as they are, once.
func TestRawParser(t *testing.T) {
	t.Parallel()
	var p RawParser
	b := []byte("hello")
	at := time.Unix(5, 0)
	p.Push(b, at)
	ev, err := p.Next()
	if err != nil || ev == nil || &ev.Data[0] != &b[0] || !ev.Dispatched.Equal(at) || ev.Kind != KindEvent {
		t.Fatalf("%+v %v", ev, err)
	}
	if ev, err := p.Next(); ev != nil || err != nil || p.Pending() || p.Flush() != nil {
		t.Fatalf("a second event %v %v", ev, err)
	}
	if FramingRaw.HasEventIDs() || FramingEventStream.HasEventIDs() || FramingNDJSON.HasEventIDs() || !FramingSSE.HasEventIDs() || !FramingSSEOrJSON.HasEventIDs() {
		t.Error("HasEventIDs")
	}
}
