package dialect_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/internal/refserver"
	"github.com/streamprobe/streamprobe/internal/testenv/reftest"
	"github.com/streamprobe/streamprobe/probe"
)

func at(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }

func TestOpenAIResponsesTimeline(t *testing.T) {
	t.Parallel()
	r := &refserver.Responses{}
	r.Created(at(50)).Meta(at(60), "response.in_progress").Reasoning(at(100), "thinking").
		Text(at(200), "Hel").Text(at(240), "lo").Text(at(280), "!").Completed(at(450), 11, 3)
	srv := reftest.Serve(t, refserver.NewUnstarted(r.Steps()))
	res := runProbe(t, dialect.Target{Name: "resp", URL: srv.URL, Dialect: "openai-responses", Model: "m"}, "short", reftest.RunDeadline)
	rec, tl := res.Record, res.Timeline
	if rec.Outcome != probe.Success {
		t.Fatalf("outcome %s: %s", rec.Outcome, rec.Error)
	}
	c := reftest.ClosedConn(t, srv, 0)
	if c.Method != http.MethodPost || c.Path != "/v1/responses" || !strings.Contains(string(c.Body), `"stream":true`) || strings.Contains(string(c.Body), "background") {
		t.Errorf("request %s %s %s", c.Method, c.Path, c.Body)
	}
	if tl.ChunkCount() != 3 {
		t.Fatalf("%d text deltas, want 3", tl.ChunkCount())
	}
	reftest.Milestone(t, "first_event_ms (response.created)", rec.FirstEventMs, tl.Start, srv, c, 0, tl.FirstEvent)
	reftest.Milestone(t, "first_effective_ms (reasoning summary)", rec.FirstEffectiveMs, tl.Start, srv, c, 2, tl.FirstEffective)
	reftest.Milestone(t, "tfc_ms (first output_text.delta)", rec.TFCMs, tl.Start, srv, c, 3, tl.Chunks()[0])
	reftest.Milestone(t, "end_ms (response.completed)", rec.EndMs, tl.Start, srv, c, 6, tl.End)
	for i, ch := range tl.Chunks() {
		reftest.NotBefore(t, "text delta", ch, reftest.Due(srv, c, 3+i))
	}
	if rec.Chunks != 3 || rec.Tokens == nil || rec.Tokens.Prompt != 11 || rec.Tokens.Completion != 3 {
		t.Errorf("chunks %d tokens %+v", rec.Chunks, rec.Tokens)
	}
	// close runs from the last text delta to response.completed, as the
	// client read them (a busy machine can make that interval shorter or
	// longer than the server's: it was once 10 ms short).
	reftest.MsIs(t, "close_ms", rec.CloseMs, reftest.MsSince(tl.Chunks()[2], tl.End))
}

func TestOpenAIResponsesFailed(t *testing.T) {
	t.Parallel()
	r := &refserver.Responses{}
	r.Created(at(10)).Text(at(20), "a").Failed(at(30), "the model is overloaded")
	srv := reftest.Serve(t, refserver.NewUnstarted(r.Steps()))
	rec := runProbe(t, dialect.Target{Name: "resp", URL: srv.URL, Dialect: "openai-responses"}, "short", reftest.RunDeadline).Record
	if rec.Outcome != probe.UpstreamError || !strings.Contains(rec.Error, "the model is overloaded") {
		t.Errorf("outcome %s error %q", rec.Outcome, rec.Error)
	}
}

// responsesSchedule: created, then 12 text deltas 40 ms apart, completed;
// sequence numbers 0..13.
func responsesSchedule() []refserver.Step {
	r := &refserver.Responses{}
	r.Created(at(50))
	for i := range 12 {
		r.Text(at(100+40*float64(i)), "w")
	}
	r.Completed(at(600), 10, 12)
	return r.Steps()
}

func TestOpenAIResponsesResumeVerdicts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		setup   func(*refserver.Server)
		drill   string
		verdict probe.Verdict
		stale   string
		detail  string
	}{
		{"correct", nil, probe.DrillDrop, probe.VerdictPass, "", "every event once"},
		{"inclusive replay", func(s *refserver.Server) { s.Bug = refserver.Inclusive }, probe.DrillDrop, probe.VerdictDuplicate, "", "resume replayed id 3 again: off-by-one replay (sent starting_after=3)"},
		{"skip", func(s *refserver.Server) { s.Bug = refserver.Skip }, probe.DrillDrop, probe.VerdictMissed, "", "next id was 5"},
		{"restart", func(s *refserver.Server) { s.Bug = refserver.Restart }, probe.DrillDrop, probe.VerdictRestarted, "", "restarted from the first event (id 0)"},
		{"mismatch", func(s *refserver.Server) { s.Bug = refserver.Mismatch }, probe.DrillDrop, probe.VerdictMismatch, "", "id 3 arrived again with different data"},
		{"duplicate drill", nil, probe.DrillDuplicate, probe.VerdictPass, "", ""},
		{"stale cursor answered by 410", func(s *refserver.Server) { s.Stale = refserver.StaleGone }, probe.DrillStale, probe.VerdictStaleOK, "http_410", "stale starting_after=999999999 answered by http_410"},
		// A second of quiet after the third delta: the live tail goes on
		// however late a busy machine reconnects.
		{"stale cursor answered by the live tail", func(s *refserver.Server) {
			s.Stale = refserver.StaleLive
			for i := 4; i < len(s.Schedule); i++ {
				s.Schedule[i].At += time.Second
			}
		}, probe.DrillStale, probe.VerdictUndefinedStale, "", "live tail"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := refserver.NewUnstarted(responsesSchedule())
			if tt.setup != nil {
				tt.setup(srv)
			}
			reftest.Serve(t, srv)
			ctx, cancel := context.WithTimeout(context.Background(), reftest.RunDeadline)
			defer cancel()
			rec := probe.Run(ctx, dialect.Target{Name: "resp", URL: srv.URL, Dialect: "openai-responses"},
				probe.Options{Sample: dialect.Samples["long"], Client: reftest.NewClient(t), Drill: probe.Drill{Name: tt.drill}}).Record
			if rec.Verdict != tt.verdict || rec.Outcome != probe.Success {
				t.Fatalf("verdict %s (%s) outcome %s %s", rec.Verdict, rec.ResumeDetail, rec.Outcome, rec.Error)
			}
			if rec.StaleAnswer != tt.stale || !strings.Contains(rec.ResumeDetail, tt.detail) {
				t.Errorf("stale %q detail %q", rec.StaleAnswer, rec.ResumeDetail)
			}
			conns := srv.Conns()
			if !strings.Contains(string(conns[0].Body), `"background":true`) {
				t.Errorf("a drill's request is not a background response: %s", conns[0].Body)
			}
			if c := conns[1]; c.Method != http.MethodGet || c.Path != "/v1/responses/resp_ssetest" {
				t.Errorf("resume request %s %s", c.Method, c.Path)
			}
			if tt.drill == probe.DrillDrop && conns[1].LastEventID != "3" {
				t.Errorf("resumed starting_after=%q, want 3 (the last dispatched sequence_number)", conns[1].LastEventID)
			}
		})
	}
}

// An Azure-style URL: the resume keeps the query string (api-version) on
// the response's own URL.
func TestOpenAIResponsesResumeKeepsTheQuery(t *testing.T) {
	t.Parallel()
	srv := reftest.Serve(t, refserver.NewUnstarted(responsesSchedule()))
	ctx, cancel := context.WithTimeout(context.Background(), reftest.RunDeadline)
	defer cancel()
	rec := probe.Run(ctx, dialect.Target{Name: "azure", URL: srv.URL + "/openai?api-version=2025-04-01", Dialect: "openai-responses"},
		probe.Options{Sample: dialect.Samples["long"], Client: reftest.NewClient(t), Drill: probe.Drill{Name: probe.DrillDrop}}).Record
	c := srv.Conns()
	if rec.Verdict != probe.VerdictPass || len(c) < 2 || !strings.Contains(c[1].Query, "api-version=2025-04-01") || c[1].Path != "/openai/v1/responses/resp_ssetest" {
		t.Errorf("verdict %s (%s %s); resume %s?%s", rec.Verdict, rec.Error, rec.ResumeDetail, c[len(c)-1].Path, c[len(c)-1].Query)
	}
}

// An error event nests its code and message in an error object; the
// record names both (it said "error event in the stream: " and nothing).
func TestOpenAIResponsesNestedError(t *testing.T) {
	t.Parallel()
	r := &refserver.Responses{}
	r.Created(at(10)).Meta(at(20), "response.in_progress").
		Error(at(30), "insufficient_quota", "You exceeded your current quota, please check your plan and billing details.").
		FailedCode(at(40), "insufficient_quota", "You exceeded your current quota, please check your plan and billing details.")
	res, _, _ := play(t, r.Steps(), dialect.Target{Dialect: "openai-responses"})
	wantOutcome(t, res.Record, probe.UpstreamError, dialect.FinishNone,
		"error event in the stream: insufficient_quota: You exceeded your current quota, please check your plan and billing details.")

	// response.failed alone names its error's code too.
	f := &refserver.Responses{}
	f.Created(at(10)).FailedCode(at(20), "server_error", "The server had an error.")
	res, _, _ = play(t, f.Steps(), dialect.Target{Dialect: "openai-responses"})
	wantOutcome(t, res.Record, probe.UpstreamError, dialect.FinishError, "error event in the stream: server_error: The server had an error.")
}

// response.incomplete with reason max_output_tokens is a length stop: a
// success, as in every other dialect (it was an upstream_error); its
// usage counts. content_filter is refused; another reason an error.
func TestOpenAIResponsesIncomplete(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		reason  string
		outcome probe.Outcome
		finish  dialect.Finish
		words   string
	}{
		{"max_output_tokens", probe.Success, dialect.FinishLength, ""},
		{"content_filter", probe.Refused, dialect.FinishContentFilter, "refused: the provider's filter stopped the answer (incomplete_details.reason content_filter)"},
		{"server_busy", probe.UpstreamError, dialect.FinishOther, "error event in the stream: response.incomplete: reason server_busy"},
	} {
		t.Run(tt.reason, func(t *testing.T) {
			t.Parallel()
			r := &refserver.Responses{}
			r.Created(at(10)).Meta(at(15), "response.in_progress").Text(at(20), "2 + 2").Text(at(30), " equals").
				Incomplete(at(40), tt.reason, 15, 9)
			res, srv, conn := play(t, r.Steps(), dialect.Target{Dialect: "openai-responses"})
			rec, tl := res.Record, res.Timeline
			wantOutcome(t, rec, tt.outcome, tt.finish, tt.words)
			if rec.Chunks != 2 || rec.Tokens == nil || rec.Tokens.Prompt != 15 || rec.Tokens.Completion != 9 {
				t.Errorf("chunks %d tokens %+v, want 2 and 15/9", rec.Chunks, rec.Tokens)
			}
			if tt.outcome != probe.UpstreamError {
				reftest.Milestone(t, "end_ms (response.incomplete)", rec.EndMs, tl.Start, srv, conn, 4, tl.End)
			}
		})
	}
}

// Hosted tools' input (MCP call arguments, the code interpreter's code)
// and a partial image are effective output, never chunks; a refusal's
// deltas are visible text, and the run ends refused.
func TestOpenAIResponsesHostedToolsAndRefusal(t *testing.T) {
	t.Parallel()
	// Each alone in a stream with no text, so that the first effective
	// output is there or absent, whatever the timing.
	for _, out := range []func(r *refserver.Responses){
		func(r *refserver.Responses) {
			r.Delta(at(20), "response.mcp_call_arguments.delta", `{"url":"https://ai-sdk.dev/"}`)
		},
		func(r *refserver.Responses) {
			r.Delta(at(20), "response.code_interpreter_call_code.delta", "print(2+2)")
		},
		func(r *refserver.Responses) {
			r.Delta(at(20), "response.apply_patch_call_operation_diff.delta", "+line")
		},
		func(r *refserver.Responses) { r.PartialImage(at(20)) },
	} {
		r := &refserver.Responses{}
		r.Created(at(10))
		out(r)
		r.Completed(at(40), 20, 40)
		res, srv, conn := play(t, r.Steps(), dialect.Target{Dialect: "openai-responses"})
		rec, tl := res.Record, res.Timeline
		wantOutcome(t, rec, probe.Success, dialect.FinishStop, "")
		if rec.Chunks != 0 || rec.Reasoning != nil {
			t.Errorf("%s: chunks %d reasoning %+v, want none", r.Steps()[1].Event, rec.Chunks, rec.Reasoning)
		}
		reftest.Milestone(t, "first_effective_ms ("+r.Steps()[1].Event+")", rec.FirstEffectiveMs, tl.Start, srv, conn, 1, tl.FirstEffective)
	}

	f := &refserver.Responses{}
	f.Created(at(10)).Delta(at(20), "response.refusal.delta", "I'm sorry,").Delta(at(30), "response.refusal.delta", " I can't.").
		Completed(at(40), 20, 5)
	res, _, _ := play(t, f.Steps(), dialect.Target{Dialect: "openai-responses"})
	wantOutcome(t, res.Record, probe.Refused, dialect.FinishRefusal, "refused: the model declined to answer (response.refusal.delta)")
	if res.Record.Chunks != 2 {
		t.Errorf("chunks %d, want the 2 refusal deltas", res.Record.Chunks)
	}
}
