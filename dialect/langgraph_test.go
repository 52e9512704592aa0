package dialect_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/internal/builtin"
	"github.com/streamprobe/streamprobe/internal/refserver"
	"github.com/streamprobe/streamprobe/internal/testenv/langgraphpeer"
	"github.com/streamprobe/streamprobe/internal/testenv/reftest"
	"github.com/streamprobe/streamprobe/probe"
	"github.com/streamprobe/streamprobe/resumeclient"
)

// langGraphTarget is a langgraph target on url; resumable false asks for
// a run without stream_resumable.
func langGraphTarget(url, assistant string, resumable bool) dialect.Target {
	app := &dialect.App{AssistantID: assistant}
	if !resumable {
		app.StreamResumable = new(bool)
	}
	return dialect.Target{Name: "graph", URL: url, Dialect: "langgraph", App: app}
}

// drill runs sample with drill d against tg.
func drill(t *testing.T, tg dialect.Target, sample string, d probe.Drill, timeout time.Duration) probe.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	s, _ := dialect.LookupSample(sample)
	c := probe.NewClient(tg)
	defer c.HTTP.CloseIdleConnections()
	return probe.Run(ctx, tg, probe.Options{Sample: s, Client: c, Drill: d, Timeout: timeout}).Record
}

// Against the LangGraph JS API server itself (internal/testenv/langgraphpeer):
// one run on a thread of its own, the thread deleted after it; TFC is the
// first message chunk with text, not the metadata before it, and agrees
// with the server's own write of it; every character of the answer is a
// chunk; the end is the end of the run's stream.
func TestLangGraphPeer(t *testing.T) {
	peer := langgraphpeer.Start(t)
	tg := langGraphTarget(peer.URL, "", true)
	runProbe(t, tg, "short", reftest.RunDeadline) // warm-up: the first run loads the graph
	res := runProbe(t, tg, "long", reftest.RunDeadline)
	rec := res.Record
	if rec.Outcome != probe.Success || rec.Chunks != len(langgraphpeer.LongAnswer) || rec.SessionMs == nil || rec.EndMs == nil {
		t.Fatalf("outcome %s (%s), %d chunks (want %d), session_ms %v, end_ms %v", rec.Outcome, rec.Error, rec.Chunks, len(langgraphpeer.LongAnswer), rec.SessionMs, rec.EndMs)
	}
	log := waitLangGraph(t, peer, func(log []langgraphpeer.Exchange) bool { return deletes(log) == 2 })
	var stream langgraphpeer.Exchange
	for _, ex := range log {
		if ex.Method == "POST" && strings.HasSuffix(ex.Path, "/runs/stream") {
			stream = ex
		}
	}
	var firstText, meta float64 = -1, -1
	for _, ev := range stream.Events() {
		if ev.Name == "metadata" && meta < 0 {
			meta = ev.At
		}
		if ev.MessageText != "" && firstText < 0 {
			firstText = ev.At
		}
	}
	// The server stamps a write after it; the request reached it after the
	// probe sent it, and the headers came at once.
	tfc, fe, headers := reftest.Val(rec.TFCMs), reftest.Val(rec.FirstEventMs), reftest.Val(rec.HeadersMs)
	t.Logf("server: metadata at %.1f ms, first text at %.1f ms; probe: headers %.1f, first event %.1f, TFC %.1f ms", meta, firstText, headers, fe, tfc)
	const allowance = 5
	if firstText < 0 || tfc < firstText-allowance || tfc > firstText+headers+50 {
		t.Errorf("tfc_ms %.1f, the server wrote the first message chunk with text %.1f ms after the request came", tfc, firstText)
	}
	// The server hands the metadata event to node:http well before the
	// next one, yet it reaches the client with it (a Python reader sees
	// the same): only its order is checked.
	if fe >= tfc || fe < meta-allowance {
		t.Errorf("first_event_ms %.1f: want the metadata event (written at %.1f ms), before TFC %.1f", fe, meta, tfc)
	}
}

// deletes counts the threads deleted (204).
func deletes(log []langgraphpeer.Exchange) int {
	n := 0
	for _, ex := range log {
		if ex.Method == "DELETE" && strings.HasPrefix(ex.Path, "/threads/") && ex.Status == 204 {
			n++
		}
	}
	return n
}

// waitLangGraph waits (up to the run deadline) for the peer's log to
// satisfy ok, and returns it.
func waitLangGraph(t *testing.T, p *langgraphpeer.Peer, ok func([]langgraphpeer.Exchange) bool) []langgraphpeer.Exchange {
	t.Helper()
	deadline := time.Now().Add(reftest.RunDeadline)
	for {
		log, err := p.Log()
		if err != nil {
			t.Fatal(err)
		}
		if ok(log) || time.Now().After(deadline) {
			return log
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The drills on the real server give what its source predicts
// (internal/testenv/langgraphpeer's tests pin each): with stream_resumable,
// drop and duplicate pass; without it the rejoin loses the events the
// dropped stream's reader still takes (missed); an id the run never had
// gets the live tail (undefined_stale).
func TestLangGraphPeerDrills(t *testing.T) {
	peer := langgraphpeer.Start(t)
	runProbe(t, langGraphTarget(peer.URL, "", true), "short", reftest.RunDeadline) // warm-up
	for _, tc := range []struct {
		drill     string
		resumable bool
		want      probe.Verdict
		detail    string
	}{
		{probe.DrillDrop, true, probe.VerdictPass, "every event once, in order"},
		{probe.DrillDuplicate, true, probe.VerdictPass, "every event once, in order"},
		{probe.DrillDrop, false, probe.VerdictMissed, "skip"},
		{probe.DrillStale, true, probe.VerdictUndefinedStale, "live tail"},
	} {
		rec := drill(t, langGraphTarget(peer.URL, "", tc.resumable), "long", probe.Drill{Name: tc.drill}, reftest.RunDeadline)
		t.Logf("%s (stream_resumable %v): %s %s; %s", tc.drill, tc.resumable, rec.Outcome, rec.Verdict, rec.ResumeDetail)
		if rec.Verdict != tc.want || rec.Outcome != probe.Success || !rec.Resumed || !strings.Contains(rec.ResumeDetail, tc.detail) {
			t.Errorf("%s (stream_resumable %v): outcome %s (%s), verdict %s %q; want %s (%s)", tc.drill, tc.resumable, rec.Outcome, rec.Error, rec.Verdict, rec.ResumeDetail, tc.want, tc.detail)
		}
		if tc.want == probe.VerdictMissed && rec.Missed == 0 {
			t.Errorf("missed %d", rec.Missed)
		}
	}
	// Every probe run deleted its thread, the drills' included.
	if log := waitLangGraph(t, peer, func(log []langgraphpeer.Exchange) bool { return deletes(log) == 5 }); deletes(log) != 5 {
		t.Errorf("%d threads deleted, want 5", deletes(log))
	}
}

// The cancel sample cancels the run by the API (POST .../cancel, 202) and
// reads on: the server ends the stream.
func TestLangGraphPeerCancel(t *testing.T) {
	peer := langgraphpeer.Start(t)
	rec := runProbe(t, langGraphTarget(peer.URL, "", true), "cancel", reftest.RunDeadline).Record
	if rec.Outcome != probe.ClientCancelled || rec.Chunks < 3 || !strings.Contains(rec.Error, "cancel message") {
		t.Errorf("outcome %s (%s), %d chunks", rec.Outcome, rec.Error, rec.Chunks)
	}
	log := waitLangGraph(t, peer, func(log []langgraphpeer.Exchange) bool { return deletes(log) == 1 })
	cancels := 0
	for _, ex := range log {
		if ex.Method == "POST" && strings.HasSuffix(ex.Path, "/cancel") && ex.Status == 202 {
			cancels++
		}
	}
	if cancels != 1 || deletes(log) != 1 {
		t.Errorf("%d cancels (202), %d deletes: want 1 each", cancels, deletes(log))
	}
}

// Against the reference LangGraph server: each fault gets its verdict, a
// correct server a pass, and the thread is deleted after every run.
func TestLangGraphReference(t *testing.T) {
	srv := refserver.NewUnstarted(nil)
	lg := refserver.NewLangGraph()
	srv.Mount = map[string]http.Handler{builtin.LangGraphPath: lg}
	srv.Start()
	defer srv.Close()
	base := srv.URL + "/langgraph"
	runs := 0
	for _, dd := range builtin.Drills() {
		if dd.LangGraph == "" {
			continue
		}
		runs++
		rec := drill(t, dd.Target(srv.URL), "long", dd.Drill, reftest.RunDeadline)
		if dd.WantOutcome != "" {
			rec = drill(t, dd.Target(srv.URL), "long", dd.Drill, 2*time.Second)
		}
		if rec.Verdict != dd.Want || dd.WantOutcome != "" && rec.Outcome != dd.WantOutcome || dd.WantOutcome == "" && rec.Outcome != probe.Success {
			t.Errorf("%s: verdict %s outcome %s (%s); detail %q", dd.Server, rec.Verdict, rec.Outcome, rec.Error, rec.ResumeDetail)
		}
	}
	rec := runProbe(t, langGraphTarget(base, "", true), "short", reftest.RunDeadline).Record
	if rec.Outcome != probe.Success || rec.Chunks != 10 {
		t.Errorf("short: %s (%s), %d chunks", rec.Outcome, rec.Error, rec.Chunks)
	}
	if lg.Threads() != 0 {
		t.Errorf("%d threads left: every run deletes its own", lg.Threads())
	}
}

// What each event of a run's stream is: the message chunks' text is a
// content chunk (string content, or text blocks), reasoning and tool call
// arguments are effective output, node updates and the state are
// metadata, an error event fails the run with its message.
func TestLangGraphDecode(t *testing.T) {
	d := dialect.Dialects["langgraph"]
	tg := dialect.Target{Header: http.Header{"Authorization": {"Bearer sk-secret-0123456789"}}}
	for _, tc := range []struct {
		typ, data string
		kind      dialect.ChunkKind
		want      string // the message, or the response id
	}{
		{"messages", `[{"content":"Par","type":"AIMessageChunk"},{"langgraph_node":"agent"}]`, dialect.Text, ""},
		{"messages", `[{"content":[{"type":"text","text":"Par"}]},{}]`, dialect.Text, ""},
		{"messages", `[{"content":"","additional_kwargs":{"reasoning_content":"think"}},{}]`, dialect.Effective, ""},
		{"messages", `[{"content":[{"type":"thinking","thinking":"hmm"}]},{}]`, dialect.Effective, ""},
		{"messages", `[{"content":"","tool_call_chunks":[{"name":"f","args":"{\"a\""}]},{}]`, dialect.Effective, ""},
		{"messages", `[{"content":"","usage_metadata":{"input_tokens":3,"output_tokens":4}},{"content":"not the message"}]`, dialect.Meta, ""},
		{"messages/partial", `[{"content":"Paris so far","type":"ai"}]`, dialect.Text, ""},
		{"metadata", "{\n  \"run_id\": \"r-1\",\n  \"attempt\": 1\n}", dialect.Meta, "r-1"},
		{"values", `{"messages":[{"type":"ai","content":"all of it"}]}`, dialect.Meta, ""},
		{"updates", `{"agent":{"messages":[{"content":"x"}]}}`, dialect.Meta, ""},
		{"error", `{"error":"GraphRecursionError","message":"too deep for sk-secret-0123456789"}`, dialect.Failed, "error event: GraphRecursionError: too deep for [redacted]"},
		{"error", `"Run not found"`, dialect.Failed, "error event: Run not found"},
	} {
		c, err := d.Decode(tg, &resumeclient.Event{Kind: resumeclient.KindEvent, Type: []byte(tc.typ), Data: []byte(tc.data)})
		if err != nil {
			t.Errorf("%s %s: %v", tc.typ, tc.data, err)
			continue
		}
		got := c.Message + c.ResponseID
		if c.Kind != tc.kind || got != tc.want {
			t.Errorf("%s %s: kind %d %q, want %d %q", tc.typ, tc.data, c.Kind, got, tc.kind, tc.want)
		}
		if reasoning := strings.Contains(tc.data, "reasoning_content") || strings.Contains(tc.data, "thinking"); c.Reasoning != reasoning {
			t.Errorf("%s %s: reasoning %v", tc.typ, tc.data, c.Reasoning)
		}
		if strings.Contains(tc.data, "usage_metadata") && (!c.HasUsage || c.Usage.Prompt != 3 || c.Usage.Completion != 4) {
			t.Errorf("usage %+v", c.Usage)
		}
	}
	if _, err := d.Decode(tg, &resumeclient.Event{Kind: resumeclient.KindEvent, Type: []byte("messages"), Data: []byte(`{"content":"x"`)}); err == nil || !strings.HasPrefix(err.Error(), "langgraph: ") {
		t.Errorf("a broken messages event: %v", err)
	}
}

// The URL is the server's base: a query could not go along to every path
// the dialect appends, so it is refused, naming the url key.
func TestLangGraphURLTakesNoQuery(t *testing.T) {
	_, err := dialect.Dialects["langgraph"].Request(dialect.Target{URL: "http://127.0.0.1:2024/?key=x", Dialect: "langgraph"}, dialect.Samples["short"], false)
	var te *dialect.TargetError
	if !errors.As(err, &te) || te.Key != "url" || !strings.Contains(err.Error(), "takes no query") {
		t.Errorf("error %v", err)
	}
}
