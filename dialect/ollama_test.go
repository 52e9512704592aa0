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

func ollamaServer(steps []refserver.Step) *refserver.Server {
	srv := refserver.NewUnstarted(steps)
	srv.ContentType = refserver.NDJSON
	return srv
}

func TestOllamaTimeline(t *testing.T) {
	t.Parallel()
	o := &refserver.Ollama{}
	o.Thinking(at(50), "hmm").ToolCall(at(80), "lookup").Text(at(120), "Par").Text(at(160), "is").Text(at(200), ".").Done(at(260), "stop", 26, 3)
	srv := reftest.Serve(t, ollamaServer(o.Steps()))
	// The line with "is" arrives in three writes 20 ms apart: a line is
	// stamped when the write that ends it arrives.
	srv.Schedule[3].Splits, srv.SplitDelay = []int{10, 40}, at(20)
	res := runProbe(t, dialect.Target{Name: "llama", URL: srv.URL, Dialect: "ollama", Model: "llama3.2"}, "short", reftest.RunDeadline)
	rec, tl := res.Record, res.Timeline
	if rec.Outcome != probe.Success {
		t.Fatalf("outcome %s: %s", rec.Outcome, rec.Error)
	}
	c := reftest.ClosedConn(t, srv, 0)
	var body dialect.OllamaRequest
	if err := json.Unmarshal(c.Body, &body); err != nil || c.Method != http.MethodPost || c.Path != "/api/chat" || !body.Stream ||
		body.Model != "llama3.2" || body.Options.NumPredict != 64 || len(body.Messages) != 1 || body.Messages[0].Content != dialect.Samples["short"].Prompt {
		t.Errorf("request %s %s %s (%v)", c.Method, c.Path, c.Body, err)
	}
	if tl.ChunkCount() != 3 {
		t.Fatalf("%d text lines, want 3", tl.ChunkCount())
	}
	reftest.Milestone(t, "first_event_ms (thinking)", rec.FirstEventMs, tl.Start, srv, c, 0, tl.FirstEvent)
	reftest.Milestone(t, "first_effective_ms (thinking)", rec.FirstEffectiveMs, tl.Start, srv, c, 0, tl.FirstEffective)
	reftest.Milestone(t, "tfc_ms (first content)", rec.TFCMs, tl.Start, srv, c, 2, tl.Chunks()[0])
	// The split line: not before its last piece was written.
	reftest.NotBefore(t, "the split line", tl.Chunks()[1], reftest.Due(srv, c, 3).Add(at(40)))
	reftest.NotBefore(t, "last text line", tl.Chunks()[2], reftest.Due(srv, c, 4))
	reftest.Milestone(t, "end_ms (done: true)", rec.EndMs, tl.Start, srv, c, 5, tl.End)
	reftest.MsIs(t, "close_ms", rec.CloseMs, reftest.MsSince(tl.Chunks()[2], tl.End))
	if rec.Tokens == nil || rec.Tokens.Prompt != 26 || rec.Tokens.Completion != 3 || rec.Truncated != 0 {
		t.Errorf("tokens %+v truncated %d", rec.Tokens, rec.Truncated)
	}
}

func TestOllamaErrors(t *testing.T) {
	t.Parallel()
	const key = "sk-ollama-proxy-0123456789"
	errLine := &refserver.Ollama{}
	errLine.Text(at(20), "a").Error(at(40), "model runner crashed, key "+key)
	cut := &refserver.Ollama{}
	cut.Text(at(20), "a").Cut(at(40))
	tests := []struct {
		name      string
		steps     []refserver.Step
		status    int
		body      string
		ct        string
		outcome   probe.Outcome
		want      string
		truncated int
	}{
		{"error line", errLine.Steps(), 0, "", "", probe.UpstreamError, "error event in the stream: model runner crashed, key [redacted]", 0},
		{"cut-off last line", cut.Steps(), 0, "", "", probe.UpstreamError, "stream closed by the server before the end marker", 1},
		{"HTTP error body", nil, http.StatusNotFound, refserver.OllamaError(`model "x" not found, try pulling it first`), "", probe.UpstreamError, `404 Not Found, body starts "{\"error\":\"model \\\"x\\\" not found`, 0},
		{"not NDJSON", errLine.Steps(), 0, "", "text/event-stream", probe.ProtocolError, "response is not application/x-ndjson", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := ollamaServer(tt.steps)
			srv.Status, srv.ErrorBody = tt.status, tt.body
			if tt.ct != "" {
				srv.ContentType = tt.ct
			}
			reftest.Serve(t, srv)
			h := http.Header{}
			h.Set("Authorization", "Bearer "+key)
			rec := runProbe(t, dialect.Target{Name: "llama", URL: srv.URL + "/", Dialect: "ollama", Header: h}, "short", reftest.RunDeadline).Record
			if rec.Outcome != tt.outcome || !strings.Contains(rec.Error, tt.want) || rec.Truncated != tt.truncated {
				t.Errorf("outcome %s error %q truncated %d, want %s with %q, truncated %d", rec.Outcome, rec.Error, rec.Truncated, tt.outcome, tt.want, tt.truncated)
			}
			if strings.Contains(rec.Error, key) {
				t.Errorf("the key shows: %q", rec.Error)
			}
		})
	}
}

func TestOllamaURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"http://127.0.0.1:11434":               "http://127.0.0.1:11434/api/chat",
		"http://127.0.0.1:11434/":              "http://127.0.0.1:11434/api/chat",
		"http://h/api":                         "http://h/api/chat",
		"http://h/api/chat":                    "http://h/api/chat",
		"http://h/api/generate":                "http://h/api/generate",
		"https://gw.example/ollama?tenant=a":   "https://gw.example/ollama/api/chat?tenant=a",
		"https://gw.example/ollama/api/chat?x": "https://gw.example/ollama/api/chat?x",
	} {
		if got := dialect.OllamaURL(in); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
	if dialect.HasEventIDs("ollama") || !dialect.HasEventIDs("openai-chat") || !dialect.HasEventIDs("sse") {
		t.Error("HasEventIDs: only ollama's NDJSON has none")
	}
}

// DeepSeek-R1 on Ollama's /api/generate streams its reasoning inline,
// <think> and </think> escaped as Go's encoder escapes them
// (\u003cthink\u003e): the block is reasoning, TFC the answer's first
// text (it was the <think> line). done_reason length is a length stop.
func TestOllamaInlineThink(t *testing.T) {
	t.Parallel()
	o := &refserver.Ollama{Model: "deepseek-r1:14b"}
	o.Generate(at(10), "<think>").Generate(at(20), "\n").Generate(at(30), "Okay").Generate(at(40), "</think>").
		Generate(at(50), "\n\n").Generate(at(70), "R").Generate(at(80), "ab").Done(at(90), "length", 9, 64)
	if !strings.Contains(o.Steps()[0].Raw, `\u003cthink\u003e`) {
		t.Fatalf("the server does not escape as Ollama does: %s", o.Steps()[0].Raw)
	}
	res, srv, conn := play(t, o.Steps(), dialect.Target{Dialect: "ollama", URL: "/api/generate", Model: "deepseek-r1:14b"})
	rec, tl := res.Record, res.Timeline
	wantOutcome(t, rec, probe.Success, dialect.FinishLength, "")
	if rec.Chunks != 2 {
		t.Fatalf("chunks %d, want 2 (R, ab)", rec.Chunks)
	}
	reftest.Milestone(t, "first_effective_ms (<think>)", rec.FirstEffectiveMs, tl.Start, srv, conn, 0, tl.FirstEffective)
	reftest.Milestone(t, "tfc_ms (R)", rec.TFCMs, tl.Start, srv, conn, 5, tl.Chunks()[0])
	wantReasoning(t, res, srv, conn, 4, 0, 3, true)
}
