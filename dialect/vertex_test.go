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

// vertexServer answers only a request with the OAuth token as a bearer
// token, as Vertex AI does (401 UNAUTHENTICATED else, its body echoing
// what it got).
func vertexServer(t *testing.T, steps []refserver.Step, token string) *refserver.Server {
	srv := refserver.NewUnstarted(steps)
	srv.StatusFor = func(r *http.Request, _ []byte) (int, string) {
		if r.Header.Get("Authorization") != "Bearer "+token || r.Header.Get("X-Goog-Api-Key") != "" {
			return http.StatusUnauthorized, refserver.GeminiError(401, "UNAUTHENTICATED", "Request had invalid authentication credentials: "+r.Header.Get("Authorization"))
		}
		return 0, ""
	}
	return reftest.Serve(t, srv)
}

const vertexToken = "ya29.c.streamprobe-vertex-access-token-0123456789"

// Gemini on Vertex AI: the URL from a location and the model, the key as
// a bearer token (a gemini target sends it as x-goog-api-key), the
// Gemini stream read as the gemini dialect reads it.
func TestVertexGemini(t *testing.T) {
	t.Parallel()
	g := &refserver.Gemini{}
	g.Thought(at(30), "hmm").Text(at(60), "Par").Finish(at(90), "is", "STOP", 8, 2, 1)
	srv := vertexServer(t, g.Steps(), vertexToken)
	h := http.Header{}
	h.Set("Authorization", "Bearer "+vertexToken)
	loc := srv.URL + "/v1/projects/my-project/locations/us-central1"
	res := runProbe(t, dialect.Target{Name: "vx", URL: loc, Dialect: "vertex-gemini", Model: "gemini-2.5-flash", Header: h}, "short", reftest.RunDeadline)
	rec, tl := res.Record, res.Timeline
	if rec.Outcome != probe.Success || tl.ChunkCount() != 2 || rec.Tokens == nil || rec.Tokens.Completion != 3 {
		t.Fatalf("outcome %s (%s), %d chunks, tokens %+v", rec.Outcome, rec.Error, tl.ChunkCount(), rec.Tokens)
	}
	c := reftest.ClosedConn(t, srv, 0)
	if c.Path != "/v1/projects/my-project/locations/us-central1/publishers/google/models/gemini-2.5-flash:streamGenerateContent" || c.Query != "alt=sse" {
		t.Errorf("request %s?%s", c.Path, c.Query)
	}
	reftest.Milestone(t, "tfc_ms", rec.TFCMs, tl.Start, srv, c, 1, tl.Chunks()[0])
	// A gemini target would send the same key as x-goog-api-key: refused.
	if k, _ := dialect.KeyHeader("vertex-gemini"); k != "Authorization" {
		t.Errorf("vertex-gemini's key goes in %s", k)
	}
	h2 := http.Header{}
	h2.Set("Authorization", "Bearer ya29.expired-token-0123456789")
	rec = runProbe(t, dialect.Target{Name: "vx", URL: loc, Dialect: "vertex-gemini", Model: "gemini-2.5-flash", Header: h2}, "short", reftest.RunDeadline).Record
	if rec.Outcome != probe.UpstreamError || !strings.Contains(rec.Error, "401 Unauthorized") || !strings.Contains(rec.Error, "UNAUTHENTICATED") ||
		strings.Contains(rec.Error, "expired-token") {
		t.Errorf("a wrong token: %s %q", rec.Outcome, rec.Error)
	}
}

// Claude on Vertex AI: streamRawPredict, the Messages API's body with
// anthropic_version in it and no model, the stream read as
// anthropic-messages reads it.
func TestVertexAnthropic(t *testing.T) {
	t.Parallel()
	a := &refserver.Anthropic{}
	a.MessageStart(at(20), 9).BlockStart(at(30), "text").Ping(at(35)).Text(at(50), "Par").Text(at(80), "is").MessageDelta(at(90), 2).Stop(at(100))
	srv := vertexServer(t, a.Steps(), vertexToken)
	h := http.Header{}
	h.Set("Authorization", "Bearer "+vertexToken)
	res := runProbe(t, dialect.Target{Name: "vx", URL: srv.URL + "/v1/projects/p/locations/us-east5/publishers/anthropic/models", Dialect: "vertex-anthropic",
		Model: "claude-sonnet-4-5@20250929", Header: h}, "short", reftest.RunDeadline)
	rec, tl := res.Record, res.Timeline
	if rec.Outcome != probe.Success || tl.ChunkCount() != 2 || rec.Comments != 1 || rec.Tokens == nil || rec.Tokens.Prompt != 9 {
		t.Fatalf("outcome %s (%s), %d chunks, %d comments, tokens %+v", rec.Outcome, rec.Error, tl.ChunkCount(), rec.Comments, rec.Tokens)
	}
	c := reftest.ClosedConn(t, srv, 0)
	var body map[string]any
	if err := json.Unmarshal(c.Body, &body); err != nil || c.Path != "/v1/projects/p/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict" ||
		body["anthropic_version"] != dialect.VertexAnthropicVersion || body["model"] != nil || body["stream"] != true || body["max_tokens"] != 64.0 {
		t.Errorf("request %s %s (%v)", c.Path, c.Body, err)
	}
	reftest.Milestone(t, "end_ms (message_stop)", rec.EndMs, tl.Start, srv, c, 6, tl.End)
}

func TestVertexURL(t *testing.T) {
	t.Parallel()
	const loc = "https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1"
	for _, tc := range []struct{ in, model, want, err string }{
		{loc, "gemini-2.5-flash", loc + "/publishers/google/models/gemini-2.5-flash:streamGenerateContent", ""},
		{loc + "/", "m", loc + "/publishers/google/models/m:streamGenerateContent", ""},
		{loc + "/publishers/google/models", "m", loc + "/publishers/google/models/m:streamGenerateContent", ""},
		{loc + "/publishers/google/models/x:streamGenerateContent?alt=sse", "", loc + "/publishers/google/models/x:streamGenerateContent?alt=sse", ""},
		{"https://aiplatform.googleapis.com", "m", "", "the URL names no location"},
		{loc, "", "", "no model"},
		{loc, "a/b", "", "a URL path segment"},
	} {
		got, err := dialect.VertexURL("vertex-gemini", tc.in, "google", tc.model, "streamGenerateContent")
		if got != tc.want || (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s %q: %q %v, want %q %q", tc.in, tc.model, got, err, tc.want, tc.err)
		}
	}
	var te *dialect.TargetError
	_, err := dialect.Dialects["vertex-anthropic"].Request(dialect.Target{URL: loc}, dialect.Samples["short"], false)
	if !asTargetError(err, &te) || te.Key != "model" {
		t.Errorf("no model: %v", err)
	}
}

func asTargetError(err error, te **dialect.TargetError) bool {
	e, ok := err.(*dialect.TargetError)
	*te = e
	return ok
}
