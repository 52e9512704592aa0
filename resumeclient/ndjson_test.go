package resumeclient

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// lineSplit feeds in to a LineParser in pieces of size step, as a Stream
// does (one buffer, scribbled over once used up), and returns the lines,
// whether one was pending at the end, and the error.
func lineSplit(in []byte, step, limit int) ([]string, bool, error) {
	p := &LineParser{MaxEventSize: limit}
	var out []string
	err := feedSplit(p, in, step, func(ev *Event, at time.Time) error {
		if ev.FirstByte.After(ev.Dispatched) || !ev.Dispatched.Equal(at) {
			return errStampOrder
		}
		out = append(out, string(ev.Data))
		return nil
	})
	if errors.Is(err, errStampOrder) {
		return out, false, err
	}
	return out, p.Pending(), err
}

var errStampOrder = errors.New("timestamps out of order")

// refLines is what NDJSON framing means: lines split at LF, a CR before
// the LF dropped, empty lines skipped, a last line without LF pending.
func refLines(in []byte) ([]string, bool) {
	parts := bytes.Split(in, []byte("\n"))
	var out []string
	for _, l := range parts[:len(parts)-1] {
		l = bytes.TrimSuffix(l, []byte("\r"))
		if len(l) > 0 {
			out = append(out, string(l))
		}
	}
	return out, len(parts[len(parts)-1]) > 0
}

func TestLineParser(t *testing.T) {
	t.Parallel()
	in := []byte("{\"a\":1}\n\n{\"b\":2}\r\n\r\n{\"done\":true}\n{\"cut")
	for _, step := range []int{1, 2, 5, len(in)} {
		got, pending, err := lineSplit(in, step, 0)
		want, wantPending := refLines(in)
		if err != nil || strings.Join(got, "|") != strings.Join(want, "|") || pending != wantPending || !pending {
			t.Errorf("step %d: %q pending %v (%v), want %q pending %v", step, got, pending, err, want, wantPending)
		}
	}
	if _, _, err := lineSplit([]byte(strings.Repeat("x", 40)+"\n"), 7, 32); !errors.Is(err, ErrEventTooLarge) {
		t.Errorf("a 40-byte line over a 32-byte limit: %v", err)
	}
	if _, _, err := lineSplit([]byte(strings.Repeat("x", 40)), 40, 32); !errors.Is(err, ErrEventTooLarge) {
		t.Errorf("a 40-byte partial line over a 32-byte limit: %v", err)
	}
}

// A line is stamped when the read that ends it arrives, its first byte
// when the read that began it did.
func TestLineParserTimes(t *testing.T) {
	t.Parallel()
	var p LineParser
	t0 := time.Unix(100, 0)
	p.Push([]byte(`{"message":`), t0)
	if ev, err := p.Next(); ev != nil || err != nil || !p.Pending() {
		t.Fatalf("%v %v pending %v", ev, err, p.Pending())
	}
	p.Push([]byte("{}}\n{\"x\":1}\n"), t0.Add(time.Second))
	ev, err := p.Next()
	if err != nil || string(ev.Data) != `{"message":{}}` || !ev.FirstByte.Equal(t0) || !ev.Dispatched.Equal(t0.Add(time.Second)) || ev.Size != 15 {
		t.Fatalf("%+v %v", ev, err)
	}
	ev, _ = p.Next()
	if string(ev.Data) != `{"x":1}` || !ev.FirstByte.Equal(t0.Add(time.Second)) || p.Pending() {
		t.Fatalf("%+v pending %v", ev, p.Pending())
	}
}

// Over HTTP: a Stream with NDJSON framing asks for application/x-ndjson,
// takes only that media type, and reports a cut-off last line as
// truncated.
func TestStreamNDJSON(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept") != "application/x-ndjson" {
			http.Error(w, "accept "+r.Header.Get("Accept"), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/x-ndjson")
		if r.URL.Path == "/sse" {
			w.Header().Set("Content-Type", "text/event-stream")
		}
		io.WriteString(w, "{\"n\":1}\n")
		w.(http.Flusher).Flush()
		io.WriteString(w, "{\"n\":2}\n{\"n\":")
	}))
	defer srv.Close()
	c := &Client{}
	st, err := c.Open(context.Background(), Request{URL: srv.URL, Framing: FramingNDJSON})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		ev, err := st.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
			break
		}
		got = append(got, string(ev.Data))
	}
	if strings.Join(got, " ") != `{"n":1} {"n":2}` || !st.Truncated() {
		t.Errorf("lines %q truncated %v", got, st.Truncated())
	}
	_, err = c.Open(context.Background(), Request{URL: srv.URL + "/sse", Framing: FramingNDJSON})
	if !errors.Is(err, ErrNotEventStream) || !strings.Contains(err.Error(), "response is not application/x-ndjson") {
		t.Errorf("an event stream where NDJSON was asked for: %v", err)
	}
}

// FuzzLineParser checks that the line parser never panics, gives the
// lines NDJSON framing means however the input is split, and reports a
// cut-off last line.
func FuzzLineParser(f *testing.F) {
	for _, s := range []string{"{\"a\":1}\n", "a\r\nb\n\nc", "\n\r\n\r", "{\"done\":true}\n{\"x\""} {
		f.Add([]byte(s), uint8(1))
		f.Add([]byte(s), uint8(4))
	}
	f.Fuzz(func(t *testing.T, in []byte, step uint8) {
		want, wantPending := refLines(in)
		got, pending, err := lineSplit(in, int(step)+1, 0)
		if err != nil || strings.Join(got, "\x00") != strings.Join(want, "\x00") || len(got) != len(want) || pending != wantPending {
			t.Fatalf("step %d: %q pending %v (%v), want %q pending %v", step+1, got, pending, err, want, wantPending)
		}
		// A limit: never more held than it, and an error only for a line
		// over it.
		limit := 8
		longest := 0
		for _, l := range bytes.Split(in, []byte("\n")) {
			longest = max(longest, len(l))
		}
		_, _, err = lineSplit(in, int(step)+1, limit)
		if (err != nil) != (longest > limit) {
			t.Fatalf("limit %d, longest line %d: %v", limit, longest, err)
		}
	})
}

// BenchmarkLineParserPerRead is the live NDJSON case: each Ollama line in
// its own read.
func BenchmarkLineParserPerRead(b *testing.B) {
	line := []byte(`{"model":"llama3.2","created_at":"2026-12-05T13:00:00.000000Z","message":{"role":"assistant","content":" word"},"done":false}` + "\n")
	var p LineParser
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		p.Push(line, time.Now())
		for {
			ev, err := p.Next()
			if err != nil {
				b.Fatal(err)
			}
			if ev == nil {
				break
			}
			n++
		}
	}
	if n == 0 {
		b.Fatal("no line")
	}
}
