package probe

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/internal/refserver"
)

func at(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }

func TestOpenAIResponsesTimeline(t *testing.T) {
	t.Parallel()
	r := &refserver.Responses{}
	r.Created(at(50)).Meta(at(60), "response.in_progress").Reasoning(at(100), "thinking").
		Text(at(200), "Hel").Text(at(240), "lo").Text(at(280), "!").Completed(at(450), 11, 3)
	srv := serve(t, refserver.NewUnstarted(r.Steps()))
	res := runProbe(t, Target{Name: "resp", URL: srv.URL, Dialect: "openai-responses", Model: "m"}, "short", 5*time.Second)
	rec, tl := res.Record, res.Timeline
	if rec.Outcome != Success {
		t.Fatalf("outcome %s: %s", rec.Outcome, rec.Error)
	}
	c := closedConn(t, srv, 0)
	if c.Method != http.MethodPost || c.Path != "/v1/responses" || !strings.Contains(string(c.Body), `"stream":true`) || strings.Contains(string(c.Body), "background") {
		t.Errorf("request %s %s %s", c.Method, c.Path, c.Body)
	}
	s := c.Sent
	nearMs(t, "first_event_ms (response.created)", rec.FirstEventMs, tl.Start, s[0].Done)
	nearMs(t, "first_effective_ms (reasoning summary)", rec.FirstEffectiveMs, tl.Start, s[2].Done)
	nearMs(t, "tfc_ms (first output_text.delta)", rec.TFCMs, tl.Start, s[3].Done)
	nearMs(t, "end_ms (response.completed)", rec.EndMs, tl.Start, s[6].Done)
	for i, ch := range tl.Chunks {
		near(t, "text delta", ch, s[3+i].Done)
	}
	if rec.Chunks != 3 || rec.Tokens == nil || rec.Tokens.Prompt != 11 || rec.Tokens.Completion != 3 {
		t.Errorf("chunks %d tokens %+v", rec.Chunks, rec.Tokens)
	}
	if want := float64(s[6].Done.Sub(s[5].Done)) / 1e6; rec.CloseMs == nil || *rec.CloseMs < want-5 || *rec.CloseMs > want+5 {
		t.Errorf("close_ms %v, server %.1f", deref(rec.CloseMs), want)
	}
}

func TestOpenAIResponsesFailed(t *testing.T) {
	t.Parallel()
	r := &refserver.Responses{}
	r.Created(at(10)).Text(at(20), "a").Failed(at(30), "the model is overloaded")
	srv := serve(t, refserver.NewUnstarted(r.Steps()))
	rec := runProbe(t, Target{Name: "resp", URL: srv.URL, Dialect: "openai-responses"}, "short", 5*time.Second).Record
	if rec.Outcome != UpstreamError || !strings.Contains(rec.Error, "the model is overloaded") {
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
		verdict Verdict
		stale   string
		detail  string
	}{
		{"correct", nil, DrillDrop, VerdictPass, "", "every event once"},
		{"inclusive replay", func(s *refserver.Server) { s.Bug = refserver.Inclusive }, DrillDrop, VerdictDuplicate, "", "resume replayed id 3 again: off-by-one replay (sent starting_after=3)"},
		{"skip", func(s *refserver.Server) { s.Bug = refserver.Skip }, DrillDrop, VerdictMissed, "", "next id was 5"},
		{"restart", func(s *refserver.Server) { s.Bug = refserver.Restart }, DrillDrop, VerdictRestarted, "", "restarted from the first event (id 0)"},
		{"mismatch", func(s *refserver.Server) { s.Bug = refserver.Mismatch }, DrillDrop, VerdictMismatch, "", "id 3 arrived again with different data"},
		{"duplicate drill", nil, DrillDuplicate, VerdictPass, "", ""},
		{"stale cursor answered by 410", func(s *refserver.Server) { s.Stale = refserver.StaleGone }, DrillStale, VerdictStaleOK, "http_410", "stale starting_after=999999999 answered by http_410"},
		{"stale cursor answered by the live tail", func(s *refserver.Server) { s.Stale = refserver.StaleLive }, DrillStale, VerdictUndefinedStale, "", "live tail"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := refserver.NewUnstarted(responsesSchedule())
			if tt.setup != nil {
				tt.setup(srv)
			}
			serve(t, srv)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			rec := Run(ctx, Target{Name: "resp", URL: srv.URL, Dialect: "openai-responses"},
				Options{Sample: Samples["long"], Client: newClient(t), Drill: Drill{Name: tt.drill}}).Record
			if rec.Verdict != tt.verdict || rec.Outcome != Success {
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
			if tt.drill == DrillDrop && conns[1].LastEventID != "3" {
				t.Errorf("resumed starting_after=%q, want 3 (the last dispatched sequence_number)", conns[1].LastEventID)
			}
		})
	}
}

func TestAnthropicMessagesTimeline(t *testing.T) {
	t.Parallel()
	a := &refserver.Anthropic{}
	a.Ping(at(30)).MessageStart(at(60), 21).BlockStart(at(80), "thinking").Ping(at(90)).Thinking(at(120), "hmm").
		BlockStart(at(150), "text").Text(at(200), "Bon").Text(at(240), "jour").MessageDelta(at(260), 2).Stop(at(330))
	srv := serve(t, refserver.NewUnstarted(a.Steps()))
	h := http.Header{}
	h.Set("X-Api-Key", "test-key")
	res := runProbe(t, Target{Name: "claude", URL: srv.URL, Dialect: "anthropic-messages", Header: h, Model: "m"}, "short", 5*time.Second)
	rec, tl := res.Record, res.Timeline
	if rec.Outcome != Success {
		t.Fatalf("outcome %s: %s", rec.Outcome, rec.Error)
	}
	c := closedConn(t, srv, 0)
	if c.Method != http.MethodPost || c.Path != "/v1/messages" || !strings.Contains(string(c.Body), `"stream":true`) || !strings.Contains(string(c.Body), `"max_tokens":64`) {
		t.Errorf("request %s %s %s", c.Method, c.Path, c.Body)
	}
	s := c.Sent // 0 ping, 1 start, 2 block, 3 ping, 4 thinking, 5 block, 6-7 text, 8 delta, 9 stop
	nearMs(t, "first_event_ms (message_start, not the ping)", rec.FirstEventMs, tl.Start, s[1].Done)
	nearMs(t, "first_effective_ms (thinking)", rec.FirstEffectiveMs, tl.Start, s[4].Done)
	nearMs(t, "tfc_ms (first text_delta)", rec.TFCMs, tl.Start, s[6].Done)
	nearMs(t, "end_ms (message_stop)", rec.EndMs, tl.Start, s[9].Done)
	if rec.Chunks != 2 || rec.Comments != 2 || rec.Tokens == nil || rec.Tokens.Prompt != 21 || rec.Tokens.Completion != 2 {
		t.Errorf("chunks %d comments (pings) %d tokens %+v", rec.Chunks, rec.Comments, rec.Tokens)
	}
}

func TestAnthropicErrorAndNoResume(t *testing.T) {
	t.Parallel()
	a := &refserver.Anthropic{}
	a.MessageStart(at(10), 5).Text(at(20), "x").Error(at(30), "Overloaded")
	srv := serve(t, refserver.NewUnstarted(a.Steps()))
	rec := runProbe(t, Target{Name: "claude", URL: srv.URL, Dialect: "anthropic-messages"}, "short", 5*time.Second).Record
	if rec.Outcome != UpstreamError || !strings.Contains(rec.Error, "Overloaded") {
		t.Errorf("outcome %s error %q", rec.Outcome, rec.Error)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	b := &refserver.Anthropic{}
	b.MessageStart(at(10), 5).Text(at(20), "x").Stop(at(30))
	srv2 := serve(t, refserver.NewUnstarted(b.Steps()))
	rec = Run(ctx, Target{Name: "claude", URL: srv2.URL, Dialect: "anthropic-messages"}, Options{Sample: Samples["long"], Client: newClient(t), Drill: Drill{Name: DrillDrop}}).Record
	if rec.Verdict != VerdictNotSupported || rec.Outcome != Success {
		t.Errorf("verdict %s outcome %s", rec.Verdict, rec.Outcome)
	}
}
