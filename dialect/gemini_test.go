package dialect_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/internal/refserver"
	"github.com/streamprobe/streamprobe/internal/testenv/reftest"
	"github.com/streamprobe/streamprobe/probe"
	"github.com/streamprobe/streamprobe/resumeclient"
)

func TestGeminiTimeline(t *testing.T) {
	t.Parallel()
	g := &refserver.Gemini{}
	g.Thought(at(50), "Recalling.").Text(at(120), "Par").Text(at(160), "is").Finish(at(230), " it is.", "STOP", 9, 3, 2)
	srv := reftest.Serve(t, refserver.NewUnstarted(g.Steps()))
	h := http.Header{}
	h.Set("X-Goog-Api-Key", "test-key-0123456789")
	res := runProbe(t, dialect.Target{Name: "gem", URL: srv.URL, Dialect: "gemini", Header: h, Model: "gemini-2.5-flash"}, "short", reftest.RunDeadline)
	rec, tl := res.Record, res.Timeline
	if rec.Outcome != probe.Success {
		t.Fatalf("outcome %s: %s", rec.Outcome, rec.Error)
	}
	c := reftest.ClosedConn(t, srv, 0)
	if c.Method != http.MethodPost || c.Path != "/v1beta/models/gemini-2.5-flash:streamGenerateContent" || c.Query != "alt=sse" {
		t.Errorf("request %s %s?%s", c.Method, c.Path, c.Query)
	}
	var body dialect.GeminiRequest
	if err := json.Unmarshal(c.Body, &body); err != nil || len(body.Contents) != 1 || body.Contents[0].Role != "user" ||
		body.Contents[0].Parts[0].Text != dialect.Samples["short"].Prompt || body.GenerationConfig.MaxOutputTokens != 64 {
		t.Errorf("body %s (%v)", c.Body, err)
	}
	// Sent: 0 thought, 1-2 text, 3 text with finishReason STOP; then the
	// body ends.
	if tl.ChunkCount() != 3 {
		t.Fatalf("%d text chunks, want 3", tl.ChunkCount())
	}
	reftest.Milestone(t, "first_event_ms (the thought)", rec.FirstEventMs, tl.Start, srv, c, 0, tl.FirstEvent)
	reftest.Milestone(t, "first_effective_ms (the thought)", rec.FirstEffectiveMs, tl.Start, srv, c, 0, tl.FirstEffective)
	reftest.Milestone(t, "tfc_ms (first text part)", rec.TFCMs, tl.Start, srv, c, 1, tl.Chunks()[0])
	for i, ch := range tl.Chunks() {
		reftest.NotBefore(t, "text chunk", ch, reftest.Due(srv, c, 1+i))
	}
	// The end is the end of the body after the finishReason chunk.
	reftest.Milestone(t, "end_ms (end of the body)", rec.EndMs, tl.Start, srv, c, 3, tl.End)
	reftest.NotBefore(t, "end of the body", tl.End, tl.Chunks()[2])
	reftest.MsIs(t, "close_ms", rec.CloseMs, reftest.MsSince(tl.Chunks()[2], tl.End))
	if rec.Tokens == nil || rec.Tokens.Prompt != 9 || rec.Tokens.Completion != 5 {
		t.Errorf("tokens %+v, want prompt 9, completion 3+2 (thoughts)", rec.Tokens)
	}
}

// Every error kind of the Gemini API, each named in the record; a key the
// server echoes never shows.
func TestGeminiErrors(t *testing.T) {
	t.Parallel()
	const key = "AIzaSyTestKey0123456789abcdef"
	blocked := &refserver.Gemini{}
	blocked.Text(at(20), "Once").Finish(at(40), "", "SAFETY", 8, 1, 0)
	recitation := &refserver.Gemini{}
	recitation.Text(at(20), "Once").Finish(at(40), "", "RECITATION", 8, 1, 0)
	prompt := &refserver.Gemini{}
	prompt.PromptBlocked(at(20), "PROHIBITED_CONTENT")
	malformed := &refserver.Gemini{}
	malformed.Text(at(20), "Once").Finish(at(40), "", "MALFORMED_FUNCTION_CALL", 8, 1, 0)
	cut := &refserver.Gemini{}
	cut.Text(at(20), "Once").Text(at(40), " upon")
	inStream := []refserver.Step{{At: at(20), Data: refserver.GeminiError(500, "INTERNAL", "backend failed for "+key)}}
	tests := []struct {
		name    string
		steps   []refserver.Step
		status  int
		body    string
		outcome probe.Outcome
		want    string
	}{
		{"safety block", blocked.Steps(), 0, "", probe.Refused, "refused: the provider's filter stopped the answer (finishReason SAFETY)"},
		{"recitation", recitation.Steps(), 0, "", probe.Refused, "refused: the provider's filter stopped the answer (finishReason RECITATION)"},
		{"blocked prompt", prompt.Steps(), 0, "", probe.Refused, "refused: the provider's filter stopped the answer (promptFeedback.blockReason PROHIBITED_CONTENT)"},
		{"malformed function call", malformed.Steps(), 0, "", probe.UpstreamError, "answer stopped: finishReason MALFORMED_FUNCTION_CALL"},
		{"cut off before a finishReason", cut.Steps(), 0, "", probe.UpstreamError, "stream closed by the server before the end marker"},
		{"error object in the stream", inStream, 0, "", probe.UpstreamError, "INTERNAL: backend failed for [redacted]"},
		{"HTTP error body", nil, http.StatusBadRequest, refserver.GeminiError(400, "INVALID_ARGUMENT", "API key not valid: "+key), probe.UpstreamError, "400 Bad Request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := refserver.NewUnstarted(tt.steps)
			srv.Status, srv.ErrorBody = tt.status, tt.body
			reftest.Serve(t, srv)
			h := http.Header{}
			h.Set("X-Goog-Api-Key", key)
			rec := runProbe(t, dialect.Target{Name: "gem", URL: srv.URL + "/v1beta", Dialect: "gemini", Header: h, Model: "m"}, "short", reftest.RunDeadline).Record
			if rec.Outcome != tt.outcome || !strings.Contains(rec.Error, tt.want) {
				t.Errorf("outcome %s error %q, want %s with %q", rec.Outcome, rec.Error, tt.outcome, tt.want)
			}
			if strings.Contains(rec.Error, key) {
				t.Errorf("the key shows: %q", rec.Error)
			}
			if tt.status != 0 && (!strings.Contains(rec.Error, "INVALID_ARGUMENT") || rec.HTTPStatus != tt.status) {
				t.Errorf("HTTP %d error %q: the provider's status is not named", rec.HTTPStatus, rec.Error)
			}
		})
	}
}

func TestGeminiDecodeParts(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		data  string
		kind  dialect.ChunkKind
		final bool
	}{
		{`{"candidates":[{"content":{"parts":[{"text":"hi"}]}}]}`, dialect.Text, false},
		{`{"candidates":[{"content":{"parts":[{"text":"plan","thought":true}]}}]}`, dialect.Effective, false},
		{`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"get_weather","args":{}}}]}}]}`, dialect.Effective, false},
		{`{"candidates":[{"content":{"parts":[{"text":"plan","thought":true},{"text":"answer"}]}}]}`, dialect.Text, false},
		{`{"candidates":[{"content":{"parts":[{"text":""}]},"finishReason":"MAX_TOKENS"}]}`, dialect.Meta, true},
		{`{"candidates":[{"content":{"parts":[{"text":"end"}]},"finishReason":"STOP"}]}`, dialect.Text, true},
		{`{"usageMetadata":{"promptTokenCount":3}}`, dialect.Meta, false},
	} {
		c, err := dialect.Dialects["gemini"].Decode(dialect.Target{}, &resumeclient.Event{Kind: resumeclient.KindEvent, Data: []byte(tt.data)})
		if err != nil || c.Kind != tt.kind || c.Final != tt.final {
			t.Errorf("%s: kind %d final %v (%v), want %d %v", tt.data, c.Kind, c.Final, err, tt.kind, tt.final)
		}
	}
}

func TestGeminiURL(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, model, want string }{
		{"https://generativelanguage.googleapis.com", "gemini-2.5-flash", "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"},
		{"https://generativelanguage.googleapis.com/", "m", "https://generativelanguage.googleapis.com/v1beta/models/m:streamGenerateContent?alt=sse"},
		{"https://proxy.example/v1beta", "m", "https://proxy.example/v1beta/models/m:streamGenerateContent?alt=sse"},
		{"https://h/v1beta/models/x:streamGenerateContent", "", "https://h/v1beta/models/x:streamGenerateContent?alt=sse"},
		{"https://h/v1beta/models/x:streamGenerateContent?alt=sse&k=v", "m", "https://h/v1beta/models/x:streamGenerateContent?alt=sse&k=v"},
		{"https://h?tenant=a", "m", "https://h/v1beta/models/m:streamGenerateContent?tenant=a&alt=sse"},
	} {
		got, err := dialect.GeminiURL(tt.in, tt.model)
		if err != nil || got != tt.want {
			t.Errorf("%s (model %q): %s %v, want %s", tt.in, tt.model, got, err, tt.want)
		}
	}
	if _, err := dialect.GeminiURL("https://h", ""); err == nil || !strings.Contains(err.Error(), "no model") {
		t.Errorf("no model: %v", err)
	}
}

// Vertex AI ends a stream that failed after it started with its error
// object after the last event, bare JSON, not an event: Google's SDK
// raises on it, and so does the record (it was a success).
func TestGeminiErrorAfterLastEvent(t *testing.T) {
	t.Parallel()
	g := &refserver.Gemini{}
	g.Finish(at(20), "First ", "STOP", 8, 1, 0).Finish(at(40), "Second ", "STOP", 8, 2, 0).
		ErrorAfter(at(60), 499, "CANCELLED", "The operation was cancelled.")
	res, _, _ := play(t, g.Steps(), dialect.Target{Dialect: "gemini", URL: "/v1beta", Model: "m"})
	wantOutcome(t, res.Record, probe.UpstreamError, dialect.FinishStop, "error object after the last event: CANCELLED: The operation was cancelled.")
	if res.Record.Chunks != 2 {
		t.Errorf("chunks %d, want 2", res.Record.Chunks)
	}
}

// Google's error body may come well after the headers of an HTTP error
// answer: the run waits for it (it kept nothing after 250 ms).
func TestGeminiLateErrorBody(t *testing.T) {
	t.Parallel()
	srv := refserver.NewUnstarted(nil)
	srv.Status, srv.ErrorBodyDelay = http.StatusTooManyRequests, 400*time.Millisecond
	srv.ErrorBody = refserver.GeminiError(429, "RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota).")
	reftest.Serve(t, srv)
	rec := runProbe(t, dialect.Target{Name: "gem", URL: srv.URL, Dialect: "gemini", Model: "m"}, "short", reftest.RunDeadline).Record
	if rec.Outcome != probe.UpstreamError || rec.HTTPStatus != 429 || !strings.Contains(rec.Error, "RESOURCE_EXHAUSTED") {
		t.Errorf("outcome %s HTTP %d error %q, want the provider's body named", rec.Outcome, rec.HTTPStatus, rec.Error)
	}
}

// The code a model writes for the code execution tool and an image model's
// image are effective output; the tool's result (the server's) is not.
func TestGeminiCodeAndImage(t *testing.T) {
	t.Parallel()
	// Each in a stream with no text, so that the first effective output
	// is there or absent, whatever the timing.
	code := &refserver.Gemini{}
	code.CodeResult(at(10), "28").Code(at(20), "print(sum([2, 3, 5, 7, 11]))").Finish(at(40), "", "STOP", 21, 126, 95)
	image := &refserver.Gemini{}
	image.CodeResult(at(10), "28").Image(at(20)).Finish(at(40), "", "STOP", 21, 1307, 0)
	result := &refserver.Gemini{}
	result.CodeResult(at(10), "28").Finish(at(40), "", "STOP", 21, 1, 0)
	for _, g := range []*refserver.Gemini{code, image} {
		res, srv, conn := play(t, g.Steps(), dialect.Target{Dialect: "gemini", Model: "m"})
		rec, tl := res.Record, res.Timeline
		wantOutcome(t, rec, probe.Success, dialect.FinishStop, "")
		reftest.Milestone(t, "first_effective_ms (executableCode, inlineData)", rec.FirstEffectiveMs, tl.Start, srv, conn, 1, tl.FirstEffective)
		if rec.Chunks != 0 || rec.Reasoning != nil {
			t.Errorf("chunks %d reasoning %+v", rec.Chunks, rec.Reasoning)
		}
	}
	res, _, _ := play(t, result.Steps(), dialect.Target{Dialect: "gemini", Model: "m"})
	if res.Record.FirstEffectiveMs != nil {
		t.Errorf("first_effective_ms %v: a codeExecutionResult is the server's output, not the model's", *res.Record.FirstEffectiveMs)
	}
}
