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
	res := runProbe(t, Target{Name: "resp", URL: srv.URL, Dialect: "openai-responses", Model: "m"}, "short", runDeadline)
	rec, tl := res.Record, res.Timeline
	if rec.Outcome != Success {
		t.Fatalf("outcome %s: %s", rec.Outcome, rec.Error)
	}
	c := closedConn(t, srv, 0)
	if c.Method != http.MethodPost || c.Path != "/v1/responses" || !strings.Contains(string(c.Body), `"stream":true`) || strings.Contains(string(c.Body), "background") {
		t.Errorf("request %s %s %s", c.Method, c.Path, c.Body)
	}
	if tl.ChunkCount() != 3 {
		t.Fatalf("%d text deltas, want 3", tl.ChunkCount())
	}
	milestone(t, "first_event_ms (response.created)", rec.FirstEventMs, tl, srv, c, 0, tl.FirstEvent)
	milestone(t, "first_effective_ms (reasoning summary)", rec.FirstEffectiveMs, tl, srv, c, 2, tl.FirstEffective)
	milestone(t, "tfc_ms (first output_text.delta)", rec.TFCMs, tl, srv, c, 3, tl.Chunks()[0])
	milestone(t, "end_ms (response.completed)", rec.EndMs, tl, srv, c, 6, tl.End)
	for i, ch := range tl.Chunks() {
		notBefore(t, "text delta", ch, due(srv, c, 3+i))
	}
	if rec.Chunks != 3 || rec.Tokens == nil || rec.Tokens.Prompt != 11 || rec.Tokens.Completion != 3 {
		t.Errorf("chunks %d tokens %+v", rec.Chunks, rec.Tokens)
	}
	// close runs from the last text delta to response.completed, as the
	// client read them (a busy machine can make that interval shorter or
	// longer than the server's: it was once 10 ms short).
	msIs(t, "close_ms", rec.CloseMs, msSince(tl.Chunks()[2], tl.End))
}

func TestOpenAIResponsesFailed(t *testing.T) {
	t.Parallel()
	r := &refserver.Responses{}
	r.Created(at(10)).Text(at(20), "a").Failed(at(30), "the model is overloaded")
	srv := serve(t, refserver.NewUnstarted(r.Steps()))
	rec := runProbe(t, Target{Name: "resp", URL: srv.URL, Dialect: "openai-responses"}, "short", runDeadline).Record
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
		// A second of quiet after the third delta: the live tail goes on
		// however late a busy machine reconnects.
		{"stale cursor answered by the live tail", func(s *refserver.Server) {
			s.Stale = refserver.StaleLive
			for i := 4; i < len(s.Schedule); i++ {
				s.Schedule[i].At += time.Second
			}
		}, DrillStale, VerdictUndefinedStale, "", "live tail"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := refserver.NewUnstarted(responsesSchedule())
			if tt.setup != nil {
				tt.setup(srv)
			}
			serve(t, srv)
			ctx, cancel := context.WithTimeout(context.Background(), runDeadline)
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
	res := runProbe(t, Target{Name: "claude", URL: srv.URL, Dialect: "anthropic-messages", Header: h, Model: "m"}, "short", runDeadline)
	rec, tl := res.Record, res.Timeline
	if rec.Outcome != Success {
		t.Fatalf("outcome %s: %s", rec.Outcome, rec.Error)
	}
	c := closedConn(t, srv, 0)
	if c.Method != http.MethodPost || c.Path != "/v1/messages" || !strings.Contains(string(c.Body), `"stream":true`) || !strings.Contains(string(c.Body), `"max_tokens":64`) {
		t.Errorf("request %s %s %s", c.Method, c.Path, c.Body)
	}
	// Sent: 0 ping, 1 start, 2 block, 3 ping, 4 thinking, 5 block, 6-7
	// text, 8 delta, 9 stop.
	if tl.ChunkCount() != 2 {
		t.Fatalf("%d text deltas, want 2", tl.ChunkCount())
	}
	milestone(t, "first_event_ms (message_start, not the ping)", rec.FirstEventMs, tl, srv, c, 1, tl.FirstEvent)
	milestone(t, "first_effective_ms (thinking)", rec.FirstEffectiveMs, tl, srv, c, 4, tl.FirstEffective)
	milestone(t, "tfc_ms (first text_delta)", rec.TFCMs, tl, srv, c, 6, tl.Chunks()[0])
	milestone(t, "end_ms (message_stop)", rec.EndMs, tl, srv, c, 9, tl.End)
	if rec.Chunks != 2 || rec.Comments != 2 || rec.Tokens == nil || rec.Tokens.Prompt != 21 || rec.Tokens.Completion != 2 {
		t.Errorf("chunks %d comments (pings) %d tokens %+v", rec.Chunks, rec.Comments, rec.Tokens)
	}
}

func TestAnthropicErrorAndNoResume(t *testing.T) {
	t.Parallel()
	a := &refserver.Anthropic{}
	a.MessageStart(at(10), 5).Text(at(20), "x").Error(at(30), "Overloaded")
	srv := serve(t, refserver.NewUnstarted(a.Steps()))
	rec := runProbe(t, Target{Name: "claude", URL: srv.URL, Dialect: "anthropic-messages"}, "short", runDeadline).Record
	if rec.Outcome != UpstreamError || !strings.Contains(rec.Error, "Overloaded") {
		t.Errorf("outcome %s error %q", rec.Outcome, rec.Error)
	}
	ctx, cancel := context.WithTimeout(context.Background(), runDeadline)
	defer cancel()
	b := &refserver.Anthropic{}
	b.MessageStart(at(10), 5).Text(at(20), "x").Stop(at(30))
	srv2 := serve(t, refserver.NewUnstarted(b.Steps()))
	rec = Run(ctx, Target{Name: "claude", URL: srv2.URL, Dialect: "anthropic-messages"}, Options{Sample: Samples["long"], Client: newClient(t), Drill: Drill{Name: DrillDrop}}).Record
	if rec.Verdict != VerdictNotSupported || rec.Outcome != Success {
		t.Errorf("verdict %s outcome %s", rec.Verdict, rec.Outcome)
	}
}
