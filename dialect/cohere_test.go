package dialect_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/internal/refserver"
	"github.com/streamprobe/streamprobe/internal/testenv/reftest"
	"github.com/streamprobe/streamprobe/probe"
)

// A Cohere v2 chat stream: the tool plan is the first effective output,
// content-delta text the chunks, message-end the end with the usage;
// message-start, content-start and content-end are events, never chunks.
func TestCohereTimeline(t *testing.T) {
	t.Parallel()
	c := &refserver.Cohere{}
	c.Start(at(30)).ToolPlan(at(50), "I will look it up.").ToolCall(at(70), "lookup", `{"q":"capital"}`).ContentStart(at(90)).
		Thinking(at(100), "recalling").Text(at(120), "Par").Text(at(160), "is").ContentEnd(at(200)).End(at(210), "COMPLETE", "", 12, 3)
	srv := reftest.Serve(t, refserver.NewUnstarted(c.Steps()))
	res := runProbe(t, dialect.Target{Name: "co", URL: srv.URL, Dialect: "cohere", Model: "command-a-03-2025"}, "short", reftest.RunDeadline)
	rec, tl := res.Record, res.Timeline
	if rec.Outcome != probe.Success {
		t.Fatalf("outcome %s: %s", rec.Outcome, rec.Error)
	}
	conn := reftest.ClosedConn(t, srv, 0)
	var body dialect.CohereRequest
	if err := json.Unmarshal(conn.Body, &body); err != nil || conn.Path != "/v2/chat" || !body.Stream || body.Model != "command-a-03-2025" ||
		body.MaxTokens != 64 || len(body.Messages) != 1 || body.Messages[0].Content != dialect.Samples["short"].Prompt {
		t.Errorf("request %s %s (%v)", conn.Path, conn.Body, err)
	}
	if tl.ChunkCount() != 2 || rec.Events != 10 {
		t.Fatalf("%d chunks, %d events: want 2 text deltas among 10 events", tl.ChunkCount(), rec.Events)
	}
	reftest.Milestone(t, "first_event_ms (message-start)", rec.FirstEventMs, tl.Start, srv, conn, 0, tl.FirstEvent)
	reftest.Milestone(t, "first_effective_ms (tool-plan-delta)", rec.FirstEffectiveMs, tl.Start, srv, conn, 1, tl.FirstEffective)
	reftest.Milestone(t, "tfc_ms (first text)", rec.TFCMs, tl.Start, srv, conn, 6, tl.Chunks()[0])
	reftest.Milestone(t, "end_ms (message-end)", rec.EndMs, tl.Start, srv, conn, 9, tl.End)
	if rec.Tokens == nil || rec.Tokens.Prompt != 72 || rec.Tokens.Completion != 4 {
		t.Errorf("tokens %+v: want usage.tokens (72, 4)", rec.Tokens)
	}
}

func TestCohereErrors(t *testing.T) {
	t.Parallel()
	const key = "co-key-0123456789abcdef"
	failed := &refserver.Cohere{}
	failed.Start(at(10)).Text(at(20), "a").End(at(40), "ERROR", "upstream failure for "+key, 5, 1)
	tests := []struct {
		name    string
		steps   []refserver.Step
		status  int
		body    string
		outcome probe.Outcome
		want    string
	}{
		{"message-end ERROR", failed.Steps(), 0, "", probe.UpstreamError, "error event in the stream: finish_reason ERROR: upstream failure for [redacted]"},
		{"HTTP 429", nil, http.StatusTooManyRequests, refserver.CohereError("You are using a Trial key, which is limited to 10 API calls / minute."), probe.UpstreamError,
			`429 Too Many Requests, body starts "{\"message\":\"You are using a Trial key`},
		{"bad event", []refserver.Step{{At: at(10), Event: "content-delta", Data: `{"type":"content-delta","delta":{"message":{"content":{"text":7}}}}`}}, 0, "",
			probe.ProtocolError, "cohere: delta.message.content.text: want a string, got number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := refserver.NewUnstarted(tt.steps)
			srv.Status, srv.ErrorBody = tt.status, tt.body
			reftest.Serve(t, srv)
			h := http.Header{}
			h.Set("Authorization", "Bearer "+key)
			rec := runProbe(t, dialect.Target{Name: "co", URL: srv.URL + "/v2", Dialect: "cohere", Header: h}, "short", reftest.RunDeadline).Record
			if rec.Outcome != tt.outcome || !strings.Contains(rec.Error, tt.want) || strings.Contains(rec.Error, key) {
				t.Errorf("outcome %s error %q, want %s with %q", rec.Outcome, rec.Error, tt.outcome, tt.want)
			}
		})
	}
	for in, want := range map[string]string{
		"https://api.cohere.com": "https://api.cohere.com/v2/chat", "https://api.cohere.com/v2/": "https://api.cohere.com/v2/chat",
		"https://gw.example/cohere/v2/chat?x=1": "https://gw.example/cohere/v2/chat?x=1",
	} {
		if got := dialect.CohereURL(in); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}

// Cohere's stream by the definitions every dialect shares
// (docs/dialects.md "Definitions"): thinking is reasoning (counted in the
// record, never a chunk), finish_reason is named in the one vocabulary
// (COMPLETE and STOP_SEQUENCE stop, MAX_TOKENS a length stop and a
// success, TOOL_CALL tool_calls, ERROR an error), and a leading <think>
// block of the text is reasoning.
func TestCohereDefinitions(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		reason  string
		finish  dialect.Finish
		outcome probe.Outcome
	}{
		{"COMPLETE", dialect.FinishStop, probe.Success},
		{"STOP_SEQUENCE", dialect.FinishStop, probe.Success},
		{"MAX_TOKENS", dialect.FinishLength, probe.Success},
		{"TOOL_CALL", dialect.FinishToolCalls, probe.Success},
		{"ERROR", dialect.FinishError, probe.UpstreamError},
		{"SOMETHING_NEW", dialect.FinishOther, probe.Success},
	} {
		t.Run(tt.reason, func(t *testing.T) {
			t.Parallel()
			c := &refserver.Cohere{}
			c.Start(at(10)).ContentStart(at(20)).Thinking(at(30), "recalling").Thinking(at(40), "more").Text(at(60), "Paris").ContentEnd(at(80)).End(at(90), tt.reason, "", 5, 2)
			srv := reftest.Serve(t, refserver.NewUnstarted(c.Steps()))
			rec := runProbe(t, dialect.Target{Name: "co", URL: srv.URL, Dialect: "cohere"}, "short", reftest.RunDeadline).Record
			if rec.Outcome != tt.outcome || rec.FinishReason != tt.finish {
				t.Errorf("outcome %s (%s), finish_reason %q: want %s, %q", rec.Outcome, rec.Error, rec.FinishReason, tt.outcome, tt.finish)
			}
			if rec.Reasoning == nil || rec.Reasoning.Chunks != 2 || rec.Chunks != 1 {
				t.Errorf("reasoning %+v, %d chunks: want the two thinking deltas as reasoning, the text as the one chunk", rec.Reasoning, rec.Chunks)
			}
		})
	}
	c := &refserver.Cohere{}
	c.Start(at(10)).ContentStart(at(20)).Text(at(30), "<think>hm").Text(at(50), "</think>").Text(at(70), "Paris").ContentEnd(at(80)).End(at(90), "COMPLETE", "", 5, 2)
	srv := reftest.Serve(t, refserver.NewUnstarted(c.Steps()))
	res := runProbe(t, dialect.Target{Name: "co", URL: srv.URL, Dialect: "cohere"}, "short", reftest.RunDeadline)
	rec, tl := res.Record, res.Timeline
	if rec.Reasoning == nil || !rec.Reasoning.Inline || tl.ChunkCount() != 1 {
		t.Fatalf("reasoning %+v, %d chunks: want the <think> block as inline reasoning, the answer one chunk", rec.Reasoning, tl.ChunkCount())
	}
	reftest.Milestone(t, "tfc_ms (the answer after the block)", rec.TFCMs, tl.Start, srv, reftest.ClosedConn(t, srv, 0), 4, tl.Chunks()[0])
}
