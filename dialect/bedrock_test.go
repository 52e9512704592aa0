package dialect_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/internal/refserver"
	"github.com/streamprobe/streamprobe/internal/testenv/awspeer"
	"github.com/streamprobe/streamprobe/internal/testenv/reftest"
	"github.com/streamprobe/streamprobe/internal/tokensource"
	"github.com/streamprobe/streamprobe/probe"
)

// The test credentials: none of them may show in a record.
const (
	awsKeyID  = "AKIASTREAMPROBETEST1"
	awsSecret = "streamprobe/test/secret/0123456789abcdefghij"
	awsToken  = "IQoJb3JpZ2luX2VjEStreamprobeSessionToken0123456789"
)

// bedrockPeer serves steps behind the SDK signer's check of every
// request's signature (credentials awsKeyID / awsSecret / awsToken,
// region us-west-2).
func bedrockPeer(t *testing.T, steps []refserver.Step) (*refserver.Server, *awspeer.Verifier, string) {
	srv := refserver.NewUnstarted(steps)
	srv.ContentType = refserver.EventStream
	v := &awspeer.Verifier{Creds: aws.Credentials{AccessKeyID: awsKeyID, SecretAccessKey: awsSecret, SessionToken: awsToken},
		Region: "us-west-2", Service: "bedrock", Next: srv.Handler()}
	hs := httptest.NewServer(v)
	t.Cleanup(hs.Close)
	return srv, v, hs.URL
}

// runSigned runs sample against tg with its request signed as a job
// signs it: credentials from the environment (here a map, with this
// secret), fetched before the run.
func runSigned(t *testing.T, tg dialect.Target, secret string) probe.Result {
	t.Helper()
	a := &tokensource.AWS{Region: "us-west-2", Service: "bedrock", Getenv: func(k string) string {
		return map[string]string{"AWS_ACCESS_KEY_ID": awsKeyID, "AWS_SECRET_ACCESS_KEY": secret, "AWS_SESSION_TOKEN": awsToken}[k]
	}}
	sign, err := a.Signer(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), reftest.RunDeadline)
	defer cancel()
	c := probe.NewClient(tg)
	t.Cleanup(c.HTTP.CloseIdleConnections)
	return probe.Run(ctx, tg, probe.Options{Sample: dialect.Samples["short"], Client: c, Timeout: reftest.RunDeadline, Sign: sign})
}

// ConverseStream against a loopback peer that checks the SigV4 signature
// with the SDK's signer and writes the SDK's event stream frames: the
// milestones against the server's send times, reasoning as effective
// output, the usage from metadata, the end at the body's end after
// messageStop.
func TestBedrockConverseSigned(t *testing.T) {
	t.Parallel()
	b := &refserver.Bedrock{}
	b.Start(at(30)).Reasoning(at(50), "thinking").ToolUse(at(70), `{"q":1}`).Text(at(120), "Par").Text(at(160), "is").
		Stop(at(200), "end_turn").Metadata(at(210), 21, 5, at(210))
	srv, v, url := bedrockPeer(t, b.Steps())
	srv.Schedule[4].Splits, srv.SplitDelay = []int{7, 40}, at(20) // one message in three writes
	res := runSigned(t, dialect.Target{Name: "br", URL: url, Dialect: "bedrock", Model: "anthropic.claude-sonnet-4-5-20250929-v1:0"}, awsSecret)
	rec, tl := res.Record, res.Timeline
	if rec.Outcome != probe.Success || v.Verified() != 1 {
		t.Fatalf("outcome %s: %s (signatures verified %d, refused %q)", rec.Outcome, rec.Error, v.Verified(), v.Failures())
	}
	c := reftest.ClosedConn(t, srv, 0)
	var body struct {
		Messages []struct {
			Role    string
			Content []struct{ Text string }
		}
		InferenceConfig struct{ MaxTokens int }
	}
	if err := json.Unmarshal(c.Body, &body); err != nil || c.Path != "/model/anthropic.claude-sonnet-4-5-20250929-v1:0/converse-stream" ||
		len(body.Messages) != 1 || body.Messages[0].Content[0].Text != dialect.Samples["short"].Prompt || body.InferenceConfig.MaxTokens != 64 {
		t.Errorf("request %s %s (%v)", c.Path, c.Body, err)
	}
	if tl.ChunkCount() != 2 || rec.Events != 8 {
		t.Fatalf("%d chunks, %d events", tl.ChunkCount(), rec.Events)
	}
	reftest.Milestone(t, "first_event_ms (messageStart)", rec.FirstEventMs, tl.Start, srv, c, 0, tl.FirstEvent)
	reftest.Milestone(t, "first_effective_ms (reasoning)", rec.FirstEffectiveMs, tl.Start, srv, c, 1, tl.FirstEffective)
	reftest.Milestone(t, "tfc_ms (first text)", rec.TFCMs, tl.Start, srv, c, 3, tl.Chunks()[0])
	reftest.NotBefore(t, "the split message", tl.Chunks()[1], reftest.Due(srv, c, 4).Add(at(40)))
	reftest.NotBefore(t, "end (the body's end after messageStop)", tl.End, reftest.Due(srv, c, 7))
	if rec.Tokens == nil || rec.Tokens.Prompt != 21 || rec.Tokens.Completion != 5 {
		t.Errorf("tokens %+v", rec.Tokens)
	}
}

// A wrong secret: the peer refuses the signature (403) and echoes the
// Authorization and the session token; the record names the refusal and
// shows neither the key id, the signature nor the token.
func TestBedrockBadSignatureShowsNoCredential(t *testing.T) {
	t.Parallel()
	b := &refserver.Bedrock{}
	_, v, url := bedrockPeer(t, b.Text(at(10), "x").Steps())
	rec := runSigned(t, dialect.Target{Name: "br", URL: url, Dialect: "bedrock", Model: "m"}, "a-wrong-secret-0123456789").Record
	if rec.Outcome != probe.UpstreamError || !strings.Contains(rec.Error, "403 Forbidden") || len(v.Failures()) != 1 {
		t.Fatalf("outcome %s error %q (refused %q)", rec.Outcome, rec.Error, v.Failures())
	}
	out, _ := json.Marshal(rec)
	for _, s := range []string{awsKeyID, awsToken, "Signature=", awsSecret} {
		if strings.Contains(string(out), s) {
			t.Errorf("the record shows %q: %s", s, out)
		}
	}
}

// InvokeModelWithResponseStream: each chunk's bytes are the model's own
// event (a Claude model's Messages API events here), message_stop the
// last, the invocation metrics the usage; a Llama chunk's generation is
// text too.
func TestBedrockInvoke(t *testing.T) {
	t.Parallel()
	b := &refserver.Bedrock{}
	b.Chunk(at(20), map[string]any{"type": "message_start", "message": map[string]any{"usage": map[string]any{"input_tokens": 9}}}).
		Chunk(at(40), map[string]any{"type": "content_block_delta", "delta": map[string]any{"type": "text_delta", "text": "Par"}}).
		Chunk(at(60), map[string]any{"generation": "is", "stop_reason": nil}).
		Chunk(at(80), map[string]any{"type": "message_stop", "amazon-bedrock-invocationMetrics": map[string]any{"inputTokenCount": 9, "outputTokenCount": 2, "invocationLatency": 80, "firstByteLatency": 20}})
	srv, _, url := bedrockPeer(t, b.Steps())
	rec := runSigned(t, dialect.Target{Name: "br", URL: url + "/model/anthropic.claude-3-haiku-20240307-v1:0/invoke-with-response-stream", Dialect: "bedrock"}, awsSecret).Record
	if rec.Outcome != probe.Success || rec.Chunks != 2 || rec.Tokens == nil || rec.Tokens.Completion != 2 || rec.EndMs == nil {
		t.Fatalf("outcome %s (%s) chunks %d tokens %+v end %v", rec.Outcome, rec.Error, rec.Chunks, rec.Tokens, reftest.Shown(rec.EndMs))
	}
	c := reftest.ClosedConn(t, srv, 0)
	var body dialect.BedrockAnthropic
	if err := json.Unmarshal(c.Body, &body); err != nil || body.AnthropicVersion != dialect.BedrockAnthropicVersion || body.MaxTokens != 64 {
		t.Errorf("invoke body %s (%v)", c.Body, err)
	}
}

func TestBedrockErrors(t *testing.T) {
	t.Parallel()
	thr := &refserver.Bedrock{}
	thr.Start(at(10)).Text(at(20), "a").Exception(at(30), "throttlingException", "Too many tokens, please wait before trying again. key "+awsKeyID)
	cut := &refserver.Bedrock{}
	cut.Start(at(10)).Text(at(20), "a")
	frame := []byte(refserver.Frame("event", "contentBlockDelta", []byte(`{"delta":{"text":"a"}}`)))
	frame[len(frame)-8] ^= 0x20 // a payload byte: the message CRC no longer matches
	broken := []refserver.Step{{At: at(10), Raw: string(frame)}}
	tests := []struct {
		name    string
		steps   []refserver.Step
		status  int
		body    string
		outcome probe.Outcome
		want    string
	}{
		{"throttlingException", thr.Steps(), 0, "", probe.UpstreamError, "error event in the stream: throttlingException: Too many tokens, please wait before trying again. key [redacted]"},
		{"no messageStop", cut.Steps(), 0, "", probe.UpstreamError, "stream closed by the server before the end marker"},
		{"HTTP 400", nil, http.StatusBadRequest, refserver.BedrockError("The provided model identifier is invalid."), probe.UpstreamError,
			`400 Bad Request, body starts "{\"message\":\"The provided model identifier is invalid.\"}"`},
		{"corrupt frame", broken, 0, "", probe.ProtocolError, "malformed event stream message"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, _, url := bedrockPeer(t, tt.steps)
			srv.Status, srv.ErrorBody = tt.status, tt.body
			rec := runSigned(t, dialect.Target{Name: "br", URL: url, Dialect: "bedrock", Model: "m"}, awsSecret).Record
			if rec.Outcome != tt.outcome || !strings.Contains(rec.Error, tt.want) || strings.Contains(rec.Error, awsKeyID) {
				t.Errorf("outcome %s error %q, want %s with %q", rec.Outcome, rec.Error, tt.outcome, tt.want)
			}
		})
	}
	// A Bedrock API key: a bearer token, no signature.
	b := &refserver.Bedrock{}
	srv := refserver.NewUnstarted(b.Text(at(10), "a").Stop(at(20), "end_turn").Steps())
	srv.ContentType = refserver.EventStream
	reftest.Serve(t, srv)
	h := http.Header{}
	h.Set("Authorization", "Bearer ABSKQmVkcm9ja0FQSUtleS1zdHJlYW1wcm9iZQ==")
	rec := runProbe(t, dialect.Target{Name: "br", URL: srv.URL, Dialect: "bedrock", Model: "m", Header: h}, "short", reftest.RunDeadline).Record
	if rec.Outcome != probe.Success || rec.Chunks != 1 {
		t.Errorf("API key: outcome %s (%s)", rec.Outcome, rec.Error)
	}
	if _, err := dialect.Dialects["bedrock"].Request(dialect.Target{URL: "https://bedrock-runtime.us-east-1.amazonaws.com"}, dialect.Samples["short"], false); err == nil {
		t.Error("a bedrock target with no model and a base URL: want an error")
	}
}

// Bedrock's ConverseStream by the definitions every dialect shares
// (docs/dialects.md "Definitions"): reasoningContent is reasoning (counted
// in the record, never a chunk), messageStop's stopReason is named in the
// one vocabulary (a guardrail's or the content filter's stop ends the run
// refused), and a leading <think> block of the text is reasoning.
func TestBedrockDefinitions(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		reason  string
		finish  dialect.Finish
		outcome probe.Outcome
	}{
		{"end_turn", dialect.FinishStop, probe.Success},
		{"stop_sequence", dialect.FinishStop, probe.Success},
		{"max_tokens", dialect.FinishLength, probe.Success},
		{"tool_use", dialect.FinishToolCalls, probe.Success},
		{"guardrail_intervened", dialect.FinishContentFilter, probe.Refused},
		{"content_filtered", dialect.FinishContentFilter, probe.Refused},
		{"something_new", dialect.FinishOther, probe.Success},
	} {
		t.Run(tt.reason, func(t *testing.T) {
			t.Parallel()
			b := &refserver.Bedrock{}
			b.Start(at(10)).Reasoning(at(20), "thinking").Reasoning(at(30), "more").Text(at(50), "Paris").Stop(at(60), tt.reason).Metadata(at(70), 9, 3, at(70))
			_, _, url := bedrockPeer(t, b.Steps())
			rec := runSigned(t, dialect.Target{Name: "br", URL: url, Dialect: "bedrock", Model: "m"}, awsSecret).Record
			if rec.Outcome != tt.outcome || rec.FinishReason != tt.finish {
				t.Errorf("outcome %s (%s), finish_reason %q: want %s, %q", rec.Outcome, rec.Error, rec.FinishReason, tt.outcome, tt.finish)
			}
			if tt.outcome == probe.Refused && !strings.Contains(rec.Error, "stopReason "+tt.reason) {
				t.Errorf("error %q does not name the stop reason", rec.Error)
			}
			if rec.Reasoning == nil || rec.Reasoning.Chunks != 2 || rec.Chunks != 1 {
				t.Errorf("reasoning %+v, %d chunks: want the two reasoning deltas as reasoning, the text as the one chunk", rec.Reasoning, rec.Chunks)
			}
		})
	}
	b := &refserver.Bedrock{}
	b.Start(at(10)).Text(at(20), "<think>hm").Text(at(40), "</think>").Text(at(60), "Paris").Stop(at(70), "end_turn").Metadata(at(80), 9, 3, at(80))
	_, _, url := bedrockPeer(t, b.Steps())
	res := runSigned(t, dialect.Target{Name: "br", URL: url, Dialect: "bedrock", Model: "m"}, awsSecret)
	if rec := res.Record; rec.Reasoning == nil || !rec.Reasoning.Inline || res.Timeline.ChunkCount() != 1 {
		t.Fatalf("reasoning %+v, %d chunks: want the <think> block as inline reasoning, the answer one chunk", rec.Reasoning, res.Timeline.ChunkCount())
	}
}
