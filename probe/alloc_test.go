package probe

import (
	"context"
	"strconv"
	"testing"
	"time"
	"unsafe"

	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/resumeclient"
)

// A run takes an event of an SSE stream with ids without allocating: the
// cursor is copied into memory the run reuses, the resume check keeps a
// hash per event and the chunk time in pages (one page per 64 events, so
// the average over 640 events rounds to 0 allocations; a single one per
// event, as string(ev.ID) was, reads 1).
func TestRunEventAllocatesNothing(t *testing.T) {
	o := Options{Sample: dialect.Samples["long"]}
	r := newRun(context.Background(), &dialect.Target{Name: "t", Dialect: "sse", URL: "http://127.0.0.1:1/"}, &o)
	if !r.prepare(&o) || r.check == nil {
		t.Fatalf("prepare: %s %s (check %v)", r.rec.Outcome, r.rec.Error, r.check != nil)
	}
	defer r.release()
	r.tl.Start = time.Now()
	id := make([]byte, 0, 16)
	ev := &resumeclient.Event{Kind: resumeclient.KindEvent, Type: []byte("message"), Data: []byte("a token"), HasID: true}
	n := 0
	step := func() {
		n++
		id = strconv.AppendInt(id[:0], int64(n), 10)
		ev.ID, ev.Dispatched = id, r.tl.Start.Add(time.Duration(n)*time.Millisecond)
		if r.event(ev) {
			t.Fatalf("event %d ended the run: %s %s", n, r.rec.Outcome, r.rec.Error)
		}
	}
	if a := testing.AllocsPerRun(640, step); a != 0 {
		t.Errorf("%v allocations per event", a)
	}
	if r.tl.ChunkCount() != n || string(r.cursor) != strconv.Itoa(n) || r.check.n != n || !r.check.counting {
		t.Errorf("after %d events: %d chunks, cursor %q, check %d (counting %v)", n, r.tl.ChunkCount(), r.cursor, r.check.n, r.check.counting)
	}
	if r.check.firstID != "1" {
		t.Errorf("first id %q: the check must keep a copy, not the event's memory", r.check.firstID)
	}
}

// The paths of reasoning allocate nothing per event either: a thinking
// part of a content array, reasoning_details, an inline <think> block's
// text read through its escapes, an empty refusal, a finish reason (the
// span of the reasoning is made once, at the first).
func TestRunReasoningEventAllocatesNothing(t *testing.T) {
	o := Options{Sample: dialect.Samples["long"]}
	r := newRun(context.Background(), &dialect.Target{Name: "t", Dialect: "openai-chat", URL: "http://127.0.0.1:1/"}, &o)
	if !r.prepare(&o) {
		t.Fatalf("prepare: %s %s", r.rec.Outcome, r.rec.Error)
	}
	defer r.release()
	r.tl.Start = time.Now()
	ev := &resumeclient.Event{Kind: resumeclient.KindEvent, Data: []byte(`{"choices":[{"delta":{"content":"\u003cthink\u003e"}}]}`)}
	if r.event(ev) || !r.think.Detected() {
		t.Fatalf("the <think> event: %s %s", r.rec.Outcome, r.rec.Error)
	}
	var data [][]byte
	for _, e := range []string{
		`{"choices":[{"delta":{"content":[{"type":"thinking","thinking":[{"type":"text","text":"hm"}]}]}}]}`,
		`{"choices":[{"delta":{"content":"","reasoning_details":[{"type":"reasoning.text","text":"15"}]}}]}`,
		`{"choices":[{"delta":{"content":"so \u003c/thin and \n on"},"finish_reason":null}]}`,
		`{"choices":[{"delta":{"reasoning_content":"r","refusal":""},"finish_reason":"length"}],"usage":null}`,
	} {
		data = append(data, []byte(e))
	}
	n := 0
	step := func() {
		n++
		ev.Data, ev.Dispatched = data[n%len(data)], r.tl.Start.Add(time.Duration(n)*time.Millisecond)
		if r.event(ev) {
			t.Fatalf("event %d ended the run: %s %s", n, r.rec.Outcome, r.rec.Error)
		}
	}
	if a := testing.AllocsPerRun(640, step); a != 0 {
		t.Errorf("%v allocations per event", a)
	}
	if r.tl.Reasoning == nil || r.tl.Reasoning.Count != n+1 || r.tl.ChunkCount() != 0 || r.finishReason != dialect.FinishLength {
		t.Errorf("reasoning %+v, %d chunks, finish %q: every event was reasoning", r.tl.Reasoning, r.tl.ChunkCount(), r.finishReason)
	}
}

// A run is one allocation per live stream, kept for as long as the stream
// lasts, in the 1536 B size class: what a run rarely needs lives behind a
// pointer (the resumes', a session dialect's cancel, the reasoning's span,
// a target's network path).
func TestRunFitsItsSizeClass(t *testing.T) {
	if n := unsafe.Sizeof(run{}); n > 1536 {
		t.Errorf("a run is %d B: over the 1536 B size class, every live stream would take 2048 B", n)
	}
}

// The same for the dialects without ids (a run without a resume check):
// a typical content event of each takes nothing from the heap.
func TestRunEventAllocatesNothingNewDialects(t *testing.T) {
	for _, tc := range []struct{ dialect, typ, data string }{
		{"cohere", "content-delta", `{"type":"content-delta","index":0,"delta":{"message":{"content":{"text":" word"}}}}`},
		{"text", "", " word"},
	} {
		t.Run(tc.dialect, func(t *testing.T) {
			o := Options{Sample: dialect.Samples["long"]}
			r := newRun(context.Background(), &dialect.Target{Name: "t", Dialect: tc.dialect, URL: "http://127.0.0.1:1/", Model: "m"}, &o)
			if !r.prepare(&o) {
				t.Fatalf("prepare: %s %s", r.rec.Outcome, r.rec.Error)
			}
			defer r.release()
			r.tl.Start = time.Now()
			ev := &resumeclient.Event{Kind: resumeclient.KindEvent, Type: []byte(tc.typ), Data: []byte(tc.data)}
			n := 0
			step := func() {
				n++
				ev.Dispatched = r.tl.Start.Add(time.Duration(n) * time.Millisecond)
				if r.event(ev) {
					t.Fatalf("event %d ended the run: %s %s", n, r.rec.Outcome, r.rec.Error)
				}
			}
			if a := testing.AllocsPerRun(640, step); a != 0 {
				t.Errorf("%v allocations per event", a)
			}
			if r.tl.ChunkCount() != n {
				t.Errorf("%d chunks after %d events", r.tl.ChunkCount(), n)
			}
		})
	}
}
