package resumeclient

import (
	"errors"
	"strings"
	"testing"
	"time"
)

type got struct {
	typ, data, id string
	hasID         bool
}

// parseAll feeds in to a fresh parser in pieces of size step (0: whole) and
// returns the events, the comment count, the last event id and whether an
// event was left pending at the end.
func parseAll(t *testing.T, in string, step int) ([]got, int, string, bool) {
	t.Helper()
	var p Parser
	var evs []got
	comments := 0
	if step <= 0 {
		step = len(in)
	}
	for off := 0; off < len(in); off += step {
		end := min(off+step, len(in))
		p.Push([]byte(in[off:end]), time.Now())
		for {
			ev, err := p.Next()
			if err != nil {
				t.Fatalf("Next: %v", err)
			}
			if ev == nil {
				break
			}
			if ev.Kind == KindComment {
				comments++
				continue
			}
			evs = append(evs, got{string(ev.Type), string(ev.Data), string(ev.ID), ev.HasID})
		}
	}
	return evs, comments, p.LastEventID(), p.Pending()
}

func TestParserWHATWG(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		want      []got
		comments  int
		lastID    string
		truncated bool
	}{
		{name: "simple", in: "data: hello\n\n", want: []got{{data: "hello"}}},
		{name: "leading BOM stripped", in: "\xEF\xBB\xBFdata: a\n\n", want: []got{{data: "a"}}},
		{name: "only one BOM stripped", in: "\xEF\xBB\xBF\xEF\xBB\xBFdata: a\n\n", want: nil},
		{name: "BOM later is data", in: "data: a\n\n\xEF\xBB\xBFdata: b\n\n", want: []got{{data: "a"}}},
		{name: "CRLF line ends", in: "data: a\r\nid: 1\r\n\r\ndata: b\r\n\r\n", want: []got{{data: "a", id: "1", hasID: true}, {data: "b", id: "1"}}, lastID: "1"},
		{name: "CR line ends", in: "data: a\r\rdata: b\r\r", want: []got{{data: "a"}, {data: "b"}}},
		{name: "LF then CR is a blank line", in: "data: a\n\rdata: b\n\n", want: []got{{data: "a"}, {data: "b"}}},
		{name: "mixed line ends", in: "data: a\rdata: b\r\ndata: c\n\n", want: []got{{data: "a\nb\nc"}}},
		{name: "data without space", in: "data:x\n\n", want: []got{{data: "x"}}},
		{name: "only one space removed", in: "data:  x\n\n", want: []got{{data: " x"}}},
		{name: "multi-line data joined by LF", in: "data: a\ndata: b\ndata:\n\n", want: []got{{data: "a\nb\n"}}},
		{name: "data with no colon dispatches empty data", in: "data\n\n", want: []got{{data: ""}}},
		{name: "no data: not dispatched", in: "event: x\n\n", want: nil},
		{name: "event type", in: "event: add\ndata: 1\n\ndata: 2\n\n", want: []got{{typ: "add", data: "1"}, {data: "2"}}},
		{name: "comments ignored but counted", in: ": ping\n:\ndata: a\n: mid\n\n", want: []got{{data: "a"}}, comments: 3},
		{name: "unknown fields ignored", in: "foo: bar\ndata: a\nDATA: b\n\n", want: []got{{data: "a"}}},
		{name: "colon in value kept", in: "data: a: b\n\n", want: []got{{data: "a: b"}}},
		{name: "id with NUL ignored", in: "id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\n", want: []got{{data: "a", id: "1", hasID: true}, {data: "b", id: "1"}}, lastID: "1"},
		{name: "empty id resets", in: "id: 5\ndata: a\n\nid\ndata: b\n\n", want: []got{{data: "a", id: "5", hasID: true}, {data: "b", id: "", hasID: true}}, lastID: ""},
		{name: "empty id with colon resets", in: "id: 5\ndata: a\n\nid:\ndata: b\n\n", want: []got{{data: "a", id: "5", hasID: true}, {data: "b", id: "", hasID: true}}, lastID: ""},
		{name: "id persists across events", in: "id: 7\ndata: a\n\ndata: b\n\n", want: []got{{data: "a", id: "7", hasID: true}, {data: "b", id: "7"}}, lastID: "7"},
		{name: "id-only event sets last id, not dispatched", in: "id: 9\n\n", want: nil, lastID: "9"},
		{name: "cut-off event not dispatched", in: "data: a\n\ndata: b\n", want: []got{{data: "a"}}, truncated: true},
		{name: "cut-off event id not taken", in: "id: 1\ndata: a\n\nid: 2\ndata: b\n", want: []got{{data: "a", id: "1", hasID: true}}, lastID: "1", truncated: true},
		{name: "cut-off mid-line", in: "id: 1\ndata: a\n\nda", want: []got{{data: "a", id: "1", hasID: true}}, lastID: "1", truncated: true},
		{name: "trailing comment is not truncation", in: "data: a\n\n: bye\n", want: []got{{data: "a"}}, comments: 1},
		{name: "final blank line then EOF", in: "data: a\n\n", want: []got{{data: "a"}}},
		{name: "no trailing blank line", in: "data: a", want: nil, truncated: true},
		{name: "field name is case-sensitive", in: "Data: a\ndata: b\n\n", want: []got{{data: "b"}}},
		{name: "spec example", in: "data: YHOO\ndata: +2\ndata: 10\n\n", want: []got{{data: "YHOO\n+2\n10"}}},
	}
	for _, tt := range tests {
		for _, step := range []int{0, 1, 2, 3, 7} {
			evs, comments, lastID, pending := parseAll(t, tt.in, step)
			name := tt.name
			if len(evs) != len(tt.want) {
				t.Errorf("%s (step %d): got %d events %+v, want %d %+v", name, step, len(evs), evs, len(tt.want), tt.want)
				continue
			}
			for i := range evs {
				if evs[i] != tt.want[i] {
					t.Errorf("%s (step %d): event %d = %+v, want %+v", name, step, i, evs[i], tt.want[i])
				}
			}
			if comments != tt.comments {
				t.Errorf("%s (step %d): %d comments, want %d", name, step, comments, tt.comments)
			}
			if lastID != tt.lastID {
				t.Errorf("%s (step %d): last id %q, want %q", name, step, lastID, tt.lastID)
			}
			if pending != tt.truncated {
				t.Errorf("%s (step %d): truncated %v, want %v", name, step, pending, tt.truncated)
			}
		}
	}
}

func TestParserRetry(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want time.Duration
		ok   bool
	}{
		{"digits", "retry: 1500\n\n", 1500 * time.Millisecond, true},
		{"not digits", "retry: 15x\n\n", 0, false},
		{"negative", "retry: -1\n\n", 0, false},
		{"empty", "retry:\n\n", 0, false},
		{"last valid wins", "retry: 10\nretry: abc\n\n", 10 * time.Millisecond, true},
		{"space only", "retry:  20\n\n", 0, false},
	}
	for _, tt := range tests {
		var p Parser
		p.Push([]byte(tt.in), time.Now())
		for ev, err := p.Next(); ev != nil || err != nil; ev, err = p.Next() {
			if err != nil {
				t.Fatal(err)
			}
		}
		d, ok := p.Retry()
		if d != tt.want || ok != tt.ok {
			t.Errorf("%s: Retry() = %v, %v; want %v, %v", tt.name, d, ok, tt.want, tt.ok)
		}
	}
}

func TestParserEventTooLarge(t *testing.T) {
	p := Parser{MaxEventSize: 1024}
	line := []byte("data: " + strings.Repeat("x", 100) + "\n")
	var err error
	for i := 0; i < 100 && err == nil; i++ {
		p.Push(line, time.Now())
		_, err = p.Next()
	}
	if !errors.Is(err, ErrEventTooLarge) {
		t.Fatalf("err = %v, want ErrEventTooLarge", err)
	}
	if cap(p.data) > 4096 || cap(p.line) > 4096 {
		t.Errorf("buffers grew to %d/%d bytes past a 1024-byte limit", cap(p.data), cap(p.line))
	}
	// A single line with no end is bounded too.
	q := Parser{MaxEventSize: 1024}
	chunk := []byte(strings.Repeat("y", 512))
	err = nil
	for i := 0; i < 10 && err == nil; i++ {
		q.Push(chunk, time.Now())
		_, err = q.Next()
	}
	if !errors.Is(err, ErrEventTooLarge) {
		t.Fatalf("endless line: err = %v, want ErrEventTooLarge", err)
	}
}

func TestParserTimestamps(t *testing.T) {
	var p Parser
	t0 := time.Now()
	t1 := t0.Add(10 * time.Millisecond)
	t2 := t0.Add(25 * time.Millisecond)
	p.Push([]byte(": hb\nid: 1\nda"), t0)
	ev, _ := p.Next()
	if ev == nil || ev.Kind != KindComment || !ev.Dispatched.Equal(t0) {
		t.Fatalf("comment = %+v", ev)
	}
	if ev, _ := p.Next(); ev != nil {
		t.Fatalf("unexpected event %+v", ev)
	}
	p.Push([]byte("ta: x\n"), t1)
	if ev, _ := p.Next(); ev != nil {
		t.Fatalf("unexpected event %+v", ev)
	}
	p.Push([]byte("\n"), t2)
	ev, _ = p.Next()
	if ev == nil {
		t.Fatal("no event")
	}
	if !ev.FirstByte.Equal(t0) || !ev.Dispatched.Equal(t2) {
		t.Errorf("first byte %v, dispatched %v; want t0, t0+25ms", ev.FirstByte.Sub(t0), ev.Dispatched.Sub(t0))
	}
	if ev.Size != len("id: 1\ndata: x\n\n") {
		t.Errorf("size %d", ev.Size)
	}
}

// Cases a review found; each fails on the first version of the parser.
func TestParserReviewCases(t *testing.T) {
	t.Run("CRLF size", func(t *testing.T) {
		var p Parser
		p.Push([]byte("data: x\r\n\r\ndata: yy\r\n\r\n"), time.Now())
		for _, want := range []int{11, 12} {
			ev, _ := p.Next()
			if ev == nil || ev.Size != want {
				t.Fatalf("event %+v, want size %d", ev, want)
			}
		}
	})
	t.Run("one huge read is refused before it is copied", func(t *testing.T) {
		p := Parser{MaxEventSize: 1 << 20}
		p.Push(make([]byte, 64<<20), time.Now())
		if _, err := p.Next(); !errors.Is(err, ErrEventTooLarge) {
			t.Fatalf("err = %v", err)
		}
		if cap(p.line) > 2<<20 {
			t.Errorf("line buffer grew to %d bytes", cap(p.line))
		}
	})
	t.Run("type and id count against the limit", func(t *testing.T) {
		p := Parser{MaxEventSize: 1000}
		big := strings.Repeat("x", 400)
		p.Push([]byte("event: "+big+"\nid: "+big+"\ndata: "+big+"\n\n"), time.Now())
		if _, err := p.Next(); !errors.Is(err, ErrEventTooLarge) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("long retry is clamped, not ignored", func(t *testing.T) {
		var p Parser
		p.Push([]byte("retry: 0000000001000\n\n"), time.Now())
		p.Next()
		if d, ok := p.Retry(); !ok || d != time.Second {
			t.Errorf("retry %v %v", d, ok)
		}
	})
	t.Run("partial comment at EOF is not truncation", func(t *testing.T) {
		var p Parser
		p.Push([]byte("data: a\n\n: keepal"), time.Now())
		p.Next()
		p.Next()
		if p.Pending() {
			t.Error("a cut-off comment counted as a truncated event")
		}
	})
	t.Run("partial BOM then data keeps its first byte time", func(t *testing.T) {
		var p Parser
		t0 := time.Now()
		p.Push([]byte("\xEF\xBB"), t0)
		p.Next()
		p.Push([]byte("X\ndata: x\n\n"), t0.Add(time.Second))
		ev, _ := p.Next()
		if ev == nil || !ev.FirstByte.Equal(t0) || ev.Size != 13 {
			t.Fatalf("event %+v", ev)
		}
	})
}
