package dialect_test

import (
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/internal/refserver"
	"github.com/streamprobe/streamprobe/internal/testenv/reftest"
	"github.com/streamprobe/streamprobe/probe"
)

func TestOpenAIChatTimelineOverLoopback(t *testing.T) {
	t.Parallel()
	c := &refserver.Chat{Model: "m"}
	c.Heartbeat(50*time.Millisecond).Role(100*time.Millisecond).Heartbeat(150*time.Millisecond).
		Reasoning(200*time.Millisecond, "thinking").ToolArgs(220*time.Millisecond, `{"q":1}`).
		Text(300*time.Millisecond, "Hel").Text(340*time.Millisecond, "lo").Text(380*time.Millisecond, "!").
		Finish(390*time.Millisecond).Usage(395*time.Millisecond, 12, 3).Done(600 * time.Millisecond)
	srv := reftest.Serve(t, refserver.NewUnstarted(c.Steps(false)))
	res := runProbe(t, dialect.Target{Name: "chat", URL: srv.URL, Dialect: "openai-chat", Model: "m"}, "short", reftest.RunDeadline)
	rec, tl := res.Record, res.Timeline
	if rec.Outcome != probe.Success {
		t.Fatalf("outcome %s: %s", rec.Outcome, rec.Error)
	}
	conn := reftest.ClosedConn(t, srv, 0)
	if conn.Method != http.MethodPost || conn.Path != "/v1/chat/completions" {
		t.Errorf("request %s %s", conn.Method, conn.Path)
	}
	for _, want := range []string{`"stream":true`, `"include_usage":true`, `"model":"m"`} {
		if !strings.Contains(string(conn.Body), want) {
			t.Errorf("request body lacks %s", want)
		}
	}
	// Sent: 0 hb, 1 role, 2 hb, 3 reasoning, 4 tool, 5-7 text, 8 finish, 9
	// usage, 10 done.
	reftest.MsNotBefore(t, "first_event_ms (role-only delta)", rec.FirstEventMs, tl.Start, reftest.Due(srv, conn, 1))
	reftest.MsNotBefore(t, "first_effective_ms (reasoning)", rec.FirstEffectiveMs, tl.Start, reftest.Due(srv, conn, 3))
	reftest.MsNotBefore(t, "tfc_ms (first visible text)", rec.TFCMs, tl.Start, reftest.Due(srv, conn, 5))
	reftest.MsNotBefore(t, "end_ms ([DONE])", rec.EndMs, tl.Start, reftest.Due(srv, conn, 10))
	if rec.Chunks != 3 || tl.ChunkCount() != 3 {
		t.Fatalf("chunks = %d, want 3 (role, reasoning, tool, finish and usage are not content)", rec.Chunks)
	}
	for i, c := range tl.Chunks() {
		reftest.NotBefore(t, "text chunk", c, reftest.Due(srv, conn, 5+i))
	}
	// Each milestone is the client's reading of its event; close runs from
	// the last text chunk (not the finish or usage chunk after it) to
	// [DONE], whose reading is not before it was due.
	reftest.MsIs(t, "first_event_ms", rec.FirstEventMs, reftest.MsSince(tl.Start, tl.FirstEvent))
	reftest.MsIs(t, "first_effective_ms", rec.FirstEffectiveMs, reftest.MsSince(tl.Start, tl.FirstEffective))
	reftest.MsIs(t, "tfc_ms", rec.TFCMs, reftest.MsSince(tl.Start, tl.Chunks()[0]))
	reftest.MsIs(t, "end_ms", rec.EndMs, reftest.MsSince(tl.Start, tl.End))
	reftest.MsIs(t, "close_ms", rec.CloseMs, reftest.MsSince(tl.Chunks()[2], tl.End))
	if rec.Tokens == nil || rec.Tokens.Prompt != 12 || rec.Tokens.Completion != 3 {
		t.Errorf("tokens = %+v", rec.Tokens)
	}
	// 3 completion tokens over the tail the client measured, to the
	// hundredth.
	if tail := reftest.MsSince(tl.Chunks()[0], tl.Chunks()[2]); rec.VisibleTPS == nil || math.Abs(*rec.VisibleTPS-3/(tail/1000)) > 0.006 {
		t.Errorf("visible_output_tps = %v, want 3 tokens over the %.3f ms tail", reftest.Shown(rec.VisibleTPS), tail)
	}
	if rec.Comments != 2 {
		t.Errorf("comments = %d", rec.Comments)
	}
}

// Mistral's reasoning models send delta.content as an array of parts: a
// thinking part is reasoning, a text part visible text (it was a
// protocol_error: "want a string, got array").
func TestOpenAIChatContentParts(t *testing.T) {
	t.Parallel()
	c := &refserver.Chat{Model: "magistral-medium-2507"}
	c.ThinkingPart(at(20), "The user is asking").ThinkingPart(at(40), " for 2+2.").TextPart(at(60), "2 + 2 = 4").
		Finish(at(80)).Usage(at(90), 10, 46).Done(at(100))
	res, srv, conn := play(t, c.Steps(false), dialect.Target{Dialect: "openai-chat"})
	rec, tl := res.Record, res.Timeline
	wantOutcome(t, rec, probe.Success, dialect.FinishStop, "")
	if rec.Chunks != 1 {
		t.Fatalf("chunks %d, want 1 (the text part)", rec.Chunks)
	}
	reftest.Milestone(t, "first_effective_ms (the thinking part)", rec.FirstEffectiveMs, tl.Start, srv, conn, 0, tl.FirstEffective)
	reftest.Milestone(t, "tfc_ms (the text part)", rec.TFCMs, tl.Start, srv, conn, 2, tl.Chunks()[0])
	wantReasoning(t, res, srv, conn, 2, 0, 1, false)
}

// A refusal streams in delta.refusal (content null): visible text, and the
// run ends refused, not an empty success.
func TestOpenAIChatRefusal(t *testing.T) {
	t.Parallel()
	c := &refserver.Chat{Model: "gpt-4o"}
	c.Role(at(10)).Refusal(at(20), "I'm").Refusal(at(30), " sorry").Refusal(at(40), ", I can't help.").
		Finish(at(50)).Usage(at(60), 79, 9).Done(at(70))
	res, srv, conn := play(t, c.Steps(false), dialect.Target{Dialect: "openai-chat"})
	rec, tl := res.Record, res.Timeline
	wantOutcome(t, rec, probe.Refused, dialect.FinishRefusal, "refused: the model declined to answer (delta.refusal)")
	if rec.Chunks != 3 || rec.Passed() || rec.Intended() {
		t.Fatalf("chunks %d, passed %v: want the 3 refusal deltas, and a run that did not pass", rec.Chunks, rec.Passed())
	}
	reftest.Milestone(t, "tfc_ms (the first refusal delta)", rec.TFCMs, tl.Start, srv, conn, 1, tl.Chunks()[0])
	reftest.Milestone(t, "end_ms ([DONE])", rec.EndMs, tl.Start, srv, conn, 6, tl.End)
}

// Reasoning sent only as reasoning_details[].text (OpenRouter, Snowflake
// Cortex) is reasoning: effective output, never a chunk.
func TestOpenAIChatReasoningDetails(t *testing.T) {
	t.Parallel()
	c := &refserver.Chat{Model: "claude-sonnet-4-6"}
	c.Role(at(10)).ReasoningDetail(at(20), "15").ReasoningDetail(at(40), " * 27 = 405").Text(at(80), "405").
		Finish(at(90)).Usage(at(95), 45, 73).Done(at(100))
	res, srv, conn := play(t, c.Steps(false), dialect.Target{Dialect: "openai-chat"})
	rec, tl := res.Record, res.Timeline
	wantOutcome(t, rec, probe.Success, dialect.FinishStop, "")
	reftest.Milestone(t, "first_effective_ms (reasoning_details)", rec.FirstEffectiveMs, tl.Start, srv, conn, 1, tl.FirstEffective)
	reftest.Milestone(t, "tfc_ms (the text)", rec.TFCMs, tl.Start, srv, conn, 3, tl.Chunks()[0])
	wantReasoning(t, res, srv, conn, 2, 1, 2, false)
	if rec.Chunks != 1 {
		t.Errorf("chunks %d, want 1", rec.Chunks)
	}
}

// A length stop is a success that names its reason; a content filter's
// stop is refused.
func TestOpenAIChatFinishReasons(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		reason  string
		outcome probe.Outcome
		finish  dialect.Finish
		words   string
	}{
		{"length", probe.Success, dialect.FinishLength, ""},
		{"tool_calls", probe.Success, dialect.FinishToolCalls, ""},
		{"content_filter", probe.Refused, dialect.FinishContentFilter, "refused: the provider's filter stopped the answer (finish_reason content_filter)"},
	} {
		t.Run(tt.reason, func(t *testing.T) {
			t.Parallel()
			c := &refserver.Chat{}
			c.Role(at(10)).Text(at(20), "{\"").FinishWith(at(30), tt.reason).Usage(at(40), 79, 1).Done(at(50))
			res, _, _ := play(t, c.Steps(false), dialect.Target{Dialect: "openai-chat"})
			wantOutcome(t, res.Record, tt.outcome, tt.finish, tt.words)
			if res.Record.Chunks != 1 {
				t.Errorf("chunks %d", res.Record.Chunks)
			}
		})
	}
}

// A model that streams its reasoning inline (DeepSeek-R1, QwQ on an
// OpenAI-compatible server) sends <think>...</think> ahead of the answer:
// the block is reasoning, TFC the answer's first text. inline_think off
// measures it all as text.
func TestOpenAIChatInlineThink(t *testing.T) {
	t.Parallel()
	c := &refserver.Chat{Model: "deepseek-r1"}
	c.Role(at(10)).Text(at(20), "<think>").Text(at(30), "\nOkay, the capital").Text(at(40), " of France.\n</th").
		Text(at(50), "ink>").Text(at(60), "\n\n").Text(at(80), "Paris").Text(at(90), ".").Finish(at(95)).Done(at(100))
	res, srv, conn := play(t, c.Steps(false), dialect.Target{Dialect: "openai-chat"})
	rec, tl := res.Record, res.Timeline
	wantOutcome(t, rec, probe.Success, dialect.FinishStop, "")
	if rec.Chunks != 2 {
		t.Fatalf("chunks %d, want 2 (Paris, the full stop)", rec.Chunks)
	}
	reftest.Milestone(t, "first_effective_ms (<think>)", rec.FirstEffectiveMs, tl.Start, srv, conn, 1, tl.FirstEffective)
	reftest.Milestone(t, "tfc_ms (Paris)", rec.TFCMs, tl.Start, srv, conn, 6, tl.Chunks()[0])
	wantReasoning(t, res, srv, conn, 4, 1, 4, true)

	res, srv, conn = play(t, c.Steps(false), dialect.Target{Dialect: "openai-chat", NoInlineThink: true})
	rec, tl = res.Record, res.Timeline
	if rec.Chunks != 7 || rec.Reasoning != nil {
		t.Fatalf("inline_think off: chunks %d reasoning %+v, want 7 and none", rec.Chunks, rec.Reasoning)
	}
	reftest.Milestone(t, "inline_think off: tfc_ms (<think>)", rec.TFCMs, tl.Start, srv, conn, 1, tl.Chunks()[0])
}
