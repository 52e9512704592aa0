package dialect_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/internal/refserver"
	"github.com/streamprobe/streamprobe/internal/testenv/reftest"
	"github.com/streamprobe/streamprobe/probe"
)

func TestAnthropicMessagesTimeline(t *testing.T) {
	t.Parallel()
	a := &refserver.Anthropic{}
	a.Ping(at(30)).MessageStart(at(60), 21).BlockStart(at(80), "thinking").Ping(at(90)).Thinking(at(120), "hmm").
		BlockStart(at(150), "text").Text(at(200), "Bon").Text(at(240), "jour").MessageDelta(at(260), 2).Stop(at(330))
	srv := reftest.Serve(t, refserver.NewUnstarted(a.Steps()))
	h := http.Header{}
	h.Set("X-Api-Key", "test-key")
	res := runProbe(t, dialect.Target{Name: "claude", URL: srv.URL, Dialect: "anthropic-messages", Header: h, Model: "m"}, "short", reftest.RunDeadline)
	rec, tl := res.Record, res.Timeline
	if rec.Outcome != probe.Success {
		t.Fatalf("outcome %s: %s", rec.Outcome, rec.Error)
	}
	c := reftest.ClosedConn(t, srv, 0)
	if c.Method != http.MethodPost || c.Path != "/v1/messages" || !strings.Contains(string(c.Body), `"stream":true`) || !strings.Contains(string(c.Body), `"max_tokens":64`) {
		t.Errorf("request %s %s %s", c.Method, c.Path, c.Body)
	}
	// Sent: 0 ping, 1 start, 2 block, 3 ping, 4 thinking, 5 block, 6-7
	// text, 8 delta, 9 stop.
	if tl.ChunkCount() != 2 {
		t.Fatalf("%d text deltas, want 2", tl.ChunkCount())
	}
	reftest.Milestone(t, "first_event_ms (message_start, not the ping)", rec.FirstEventMs, tl.Start, srv, c, 1, tl.FirstEvent)
	reftest.Milestone(t, "first_effective_ms (thinking)", rec.FirstEffectiveMs, tl.Start, srv, c, 4, tl.FirstEffective)
	reftest.Milestone(t, "tfc_ms (first text_delta)", rec.TFCMs, tl.Start, srv, c, 6, tl.Chunks()[0])
	reftest.Milestone(t, "end_ms (message_stop)", rec.EndMs, tl.Start, srv, c, 9, tl.End)
	if rec.Chunks != 2 || rec.Comments != 2 || rec.Tokens == nil || rec.Tokens.Prompt != 21 || rec.Tokens.Completion != 2 {
		t.Errorf("chunks %d comments (pings) %d tokens %+v", rec.Chunks, rec.Comments, rec.Tokens)
	}
}

func TestAnthropicErrorAndNoResume(t *testing.T) {
	t.Parallel()
	a := &refserver.Anthropic{}
	a.MessageStart(at(10), 5).Text(at(20), "x").Error(at(30), "Overloaded")
	srv := reftest.Serve(t, refserver.NewUnstarted(a.Steps()))
	rec := runProbe(t, dialect.Target{Name: "claude", URL: srv.URL, Dialect: "anthropic-messages"}, "short", reftest.RunDeadline).Record
	if rec.Outcome != probe.UpstreamError || !strings.Contains(rec.Error, "Overloaded") {
		t.Errorf("outcome %s error %q", rec.Outcome, rec.Error)
	}
	ctx, cancel := context.WithTimeout(context.Background(), reftest.RunDeadline)
	defer cancel()
	b := &refserver.Anthropic{}
	b.MessageStart(at(10), 5).Text(at(20), "x").Stop(at(30))
	srv2 := reftest.Serve(t, refserver.NewUnstarted(b.Steps()))
	rec = probe.Run(ctx, dialect.Target{Name: "claude", URL: srv2.URL, Dialect: "anthropic-messages"}, probe.Options{Sample: dialect.Samples["long"], Client: reftest.NewClient(t), Drill: probe.Drill{Name: probe.DrillDrop}}).Record
	if rec.Verdict != probe.VerdictNotSupported || rec.Outcome != probe.Success {
		t.Errorf("verdict %s outcome %s", rec.Verdict, rec.Outcome)
	}
}

// message_delta's usage is cumulative: its input_tokens, where sent,
// count what server tools added to the prompt (a web search answer: 2,068
// at message_start, 22,397 in the end).
func TestAnthropicCumulativeUsage(t *testing.T) {
	t.Parallel()
	a := &refserver.Anthropic{}
	a.MessageStart(at(10), 2068).BlockStart(at(20), "server_tool_use").InputJSON(at(30), `{"query": "weather`).
		InputJSON(at(40), ` in Paris"}`).BlockStart(at(60), "web_search_tool_result").BlockStart(at(70), "text").
		Text(at(80), "It is sunny.").MessageDeltaUsage(at(90), "end_turn", 22397, 637).Stop(at(100))
	res, srv, conn := play(t, a.Steps(), dialect.Target{Dialect: "anthropic-messages"})
	rec, tl := res.Record, res.Timeline
	wantOutcome(t, rec, probe.Success, dialect.FinishStop, "")
	if rec.Tokens == nil || rec.Tokens.Prompt != 22397 || rec.Tokens.Completion != 637 {
		t.Errorf("tokens %+v, want prompt 22397 (message_delta's), completion 637", rec.Tokens)
	}
	reftest.Milestone(t, "first_effective_ms (the server tool's input)", rec.FirstEffectiveMs, tl.Start, srv, conn, 2, tl.FirstEffective)
	reftest.Milestone(t, "tfc_ms", rec.TFCMs, tl.Start, srv, conn, 6, tl.Chunks()[0])
}

// stop_reason refusal ends the run refused (it was a success with no
// chunk); max_tokens is a length stop, a success; a redacted thinking
// block is reasoning.
func TestAnthropicStopReasons(t *testing.T) {
	t.Parallel()
	a := &refserver.Anthropic{}
	a.MessageStart(at(10), 18).Ping(at(20)).MessageDeltaUsage(at(30), "refusal", 18, 5).Stop(at(40))
	res, _, _ := play(t, a.Steps(), dialect.Target{Dialect: "anthropic-messages"})
	wantOutcome(t, res.Record, probe.Refused, dialect.FinishRefusal, "refused: the model declined to answer (stop_reason refusal)")
	if res.Record.Chunks != 0 || res.Record.TFCMs != nil || res.Record.Passed() {
		t.Errorf("chunks %d tfc %v passed %v", res.Record.Chunks, reftest.Shown(res.Record.TFCMs), res.Record.Passed())
	}

	b := &refserver.Anthropic{}
	b.MessageStart(at(10), 92).BlockStart(at(20), "redacted_thinking").BlockStart(at(40), "text").Text(at(50), "Sure").
		BlockStart(at(60), "tool_use").InputJSON(at(70), `{"a`).MessageDeltaUsage(at(80), "max_tokens", 0, 124).Stop(at(90))
	res, srv, conn := play(t, b.Steps(), dialect.Target{Dialect: "anthropic-messages"})
	rec, tl := res.Record, res.Timeline
	wantOutcome(t, rec, probe.Success, dialect.FinishLength, "")
	if rec.Tokens == nil || rec.Tokens.Prompt != 92 || rec.Tokens.Completion != 124 {
		t.Errorf("tokens %+v: an input_tokens left out keeps message_start's", rec.Tokens)
	}
	reftest.Milestone(t, "first_effective_ms (redacted_thinking)", rec.FirstEffectiveMs, tl.Start, srv, conn, 1, tl.FirstEffective)
	wantReasoning(t, res, srv, conn, 1, 1, 1, false)
}
