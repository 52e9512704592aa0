package dialect_test

import (
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/internal/builtin"
	"github.com/streamprobe/streamprobe/internal/refserver"
	"github.com/streamprobe/streamprobe/internal/testenv/aisdkpeer"
	"github.com/streamprobe/streamprobe/internal/testenv/reftest"
	"github.com/streamprobe/streamprobe/internal/testenv/resumablepeer"
	"github.com/streamprobe/streamprobe/probe"
)

// Against the AI SDK itself (internal/testenv/aisdkpeer: streamText over the SDK's
// mock model, paced by simulateReadableStream): the probe's TFC and gaps
// agree with the peer's own send times, within a few ms plus the lateness
// the peer's log shows over its nominal pacing (how busy the machine is).
func TestAISDKPeer(t *testing.T) {
	peer := aisdkpeer.Start(t)
	tg := dialect.Target{Name: "app", URL: peer.URL, Dialect: "ai-sdk-ui"}
	runProbe(t, tg, "short", reftest.RunDeadline) // warm-up: Node compiles on the first answer
	stop := reftest.StallWatch()
	res := runProbe(t, tg, "short", reftest.RunDeadline)
	stall := stop()
	rec, tl := res.Record, res.Timeline
	if rec.Outcome != probe.Success {
		t.Fatalf("outcome %s: %s", rec.Outcome, rec.Error)
	}
	log, err := peer.Log()
	if err != nil {
		t.Fatal(err)
	}
	// The text-delta writes, ms since the request reached the peer.
	var sent []float64
	reasoning := -1.0
	for _, s := range log {
		switch {
		case strings.Contains(s.Data, `"type":"text-delta"`):
			sent = append(sent, s.At)
		case strings.Contains(s.Data, `"type":"reasoning-delta"`) && reasoning < 0:
			reasoning = s.At
		}
	}
	if len(sent) != 4 || tl.ChunkCount() != 4 || reasoning < 0 {
		t.Fatalf("peer sent %d text deltas (reasoning at %v), the probe read %d chunks", len(sent), reasoning, tl.ChunkCount())
	}
	// The peer's own pacing is not under test: a Node timer that fires
	// late, or a send stamped late after its write, moves one gap up and
	// the next down (38.5 ms for 40 ms seen on a busy machine). How far a
	// gap strays either way widens the allowance of the probe's reading.
	nominal := float64(aisdkpeer.ChunkDelay) / 1e6
	lateness := 0.0
	for i := 1; i < len(sent); i++ {
		lateness = math.Max(lateness, math.Abs(sent[i]-sent[i-1]-nominal))
	}
	// How late this process woke while the run went (a busy machine
	// delays the probe's reads as much as the peer's timers) widens it too:
	// a first chunk read 20 ms late shortens the next gap by as much.
	allowance := 5 + lateness + float64(stall)/1e6
	t.Logf("peer sent text deltas at %.1f ms; probe TFC %.1f ms, headers %.1f ms, allowance %.1f ms (our longest stall %v)", sent, reftest.Val(rec.TFCMs), reftest.Val(rec.HeadersMs), allowance, stall)
	for i := 1; i < len(sent); i++ {
		got := reftest.MsSince(tl.Chunks()[0], tl.Chunks()[i])
		if want := sent[i] - sent[0]; math.Abs(got-want) > allowance {
			t.Errorf("chunk %d read %.1f ms after the first, the peer sent it %.1f ms after (allowance %.1f ms)", i, got, want, allowance)
		}
	}
	// TFC: not before the peer sent the first delta (the request left the
	// probe before it reached the peer), and not later than that plus the
	// time to the headers and the allowance. The peer stamps a send after
	// its write, so on a busy machine the probe can read a delta before
	// its stamp (first_effective 258.6 ms for a reasoning delta stamped
	// at 263.4, with both cores busy): the lower bounds take the same
	// allowance.
	if tfc := reftest.Val(rec.TFCMs); tfc < sent[0]-allowance || tfc > sent[0]+reftest.Val(rec.HeadersMs)+allowance {
		t.Errorf("tfc_ms %.1f, the peer sent the first text delta %.1f ms after the request came (headers %.1f ms, allowance %.1f ms)",
			tfc, sent[0], reftest.Val(rec.HeadersMs), allowance)
	}
	if fe := reftest.Val(rec.FirstEffectiveMs); fe < reasoning-allowance || fe >= reftest.Val(rec.TFCMs) {
		t.Errorf("first_effective_ms %.1f: want the reasoning delta (sent at %.1f ms), before TFC %.1f", fe, reasoning, reftest.Val(rec.TFCMs))
	}
	if rec.EndMs == nil || *rec.EndMs < reftest.Val(rec.TFCMs) {
		t.Errorf("end_ms %v", rec.EndMs)
	}

	// The SDK's error part ends the run as the provider's error, with the
	// text the SDK sends (it masks the model's message by default).
	errTarget := tg
	errTarget.Body, _ = json.Marshal(dialect.AISDKRequest{ID: "c", Trigger: "submit-message",
		Messages: []dialect.AISDKMessage{{ID: "m", Role: "user", Parts: []dialect.AISDKPart{{Type: "text", Text: "say error"}}}}})
	rec = runProbe(t, errTarget, "short", reftest.RunDeadline).Record
	if rec.Outcome != probe.UpstreamError || rec.Error != "error event in the stream: An error occurred." || rec.Chunks != 1 {
		t.Errorf("error part: outcome %s error %q chunks %d", rec.Outcome, rec.Error, rec.Chunks)
	}
}

// Against the reference target's UI message stream: milestones against
// its send times, and each error kind named.
func TestAISDKTimeline(t *testing.T) {
	t.Parallel()
	srv := reftest.Serve(t, refserver.NewUnstarted(builtin.AISDK("")))
	res := runProbe(t, dialect.Target{Name: "app", URL: srv.URL + "/api/chat", Dialect: "ai-sdk-ui"}, "short", reftest.RunDeadline)
	rec, tl := res.Record, res.Timeline
	if rec.Outcome != probe.Success {
		t.Fatalf("outcome %s: %s", rec.Outcome, rec.Error)
	}
	c := reftest.ClosedConn(t, srv, 0)
	var body dialect.AISDKRequest
	if err := json.Unmarshal(c.Body, &body); err != nil || c.Path != "/api/chat" || len(body.Messages) != 1 || body.Messages[0].Role != "user" ||
		body.Messages[0].Parts[0].Type != "text" || body.Messages[0].Parts[0].Text != dialect.Samples["short"].Prompt {
		t.Errorf("request %s %s", c.Path, c.Body)
	}
	// DemoAISDK: 0 start, 1 start-step, 2 reasoning-start, 3 reasoning-delta,
	// 4 reasoning-end, 5 text-start, 6-15 text-delta, 16 text-end,
	// 17 finish-step, 18 finish, 19 [DONE].
	if tl.ChunkCount() != 10 {
		t.Fatalf("%d chunks, want 10", tl.ChunkCount())
	}
	reftest.Milestone(t, "first_event_ms (start)", rec.FirstEventMs, tl.Start, srv, c, 0, tl.FirstEvent)
	reftest.Milestone(t, "first_effective_ms (reasoning-delta)", rec.FirstEffectiveMs, tl.Start, srv, c, 3, tl.FirstEffective)
	reftest.Milestone(t, "tfc_ms (first text-delta)", rec.TFCMs, tl.Start, srv, c, 6, tl.Chunks()[0])
	for i, ch := range tl.Chunks() {
		reftest.NotBefore(t, "text-delta", ch, reftest.Due(srv, c, 6+i))
	}
	reftest.Milestone(t, "end_ms ([DONE])", rec.EndMs, tl.Start, srv, c, 19, tl.End)
	for _, tt := range []struct{ fault, want string }{
		{"error-part", "error event in the stream: the model is overloaded"},
		{"abort", "error event in the stream: abort part: the server aborted the answer"},
		{"cut-off", "stream closed by the server before the end marker"},
	} {
		srv := reftest.Serve(t, refserver.NewUnstarted(builtin.AISDK(tt.fault)))
		rec := runProbe(t, dialect.Target{Name: "app", URL: srv.URL, Dialect: "ai-sdk-ui"}, "short", reftest.RunDeadline).Record
		if rec.Outcome != probe.UpstreamError || rec.Error != tt.want {
			t.Errorf("%s: outcome %s error %q, want %q", tt.fault, rec.Outcome, rec.Error, tt.want)
		}
	}
}

// The finish part names the reason: length is a success that says so,
// content-filter refused; reasoning deltas are reasoning.
func TestAISDKFinishReasons(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		reason  string
		outcome probe.Outcome
		finish  dialect.Finish
		words   string
	}{
		{"length", probe.Success, dialect.FinishLength, ""},
		{"content-filter", probe.Refused, dialect.FinishContentFilter, "refused: the provider's filter stopped the answer (finishReason content-filter)"},
	} {
		t.Run(tt.reason, func(t *testing.T) {
			t.Parallel()
			a := &refserver.AISDK{}
			a.Part(at(10), "start", nil).Reasoning(at(20), "Hmm").Text(at(40), "Par").Finish(at(50), tt.reason).Done(at(60))
			res, srv, conn := play(t, a.Steps(), dialect.Target{Dialect: "ai-sdk-ui", URL: "/api/chat"})
			wantOutcome(t, res.Record, tt.outcome, tt.finish, tt.words)
			wantReasoning(t, res, srv, conn, 1, 1, 1, false)
		})
	}
}

// resumableTarget is an ai-sdk-ui target on a resumable app's chat route.
func resumableTarget(url string) dialect.Target {
	return dialect.Target{Name: "app", URL: url, Dialect: "ai-sdk-ui", EndData: "[DONE]", App: &dialect.App{Resumable: true}}
}

// Against the AI SDK's resumable streams (internal/testenv/resumablepeer,
// whose tests pin each behaviour): a drop after the route saved the
// stream's id is resumed by a replay from the start part, dropped by the
// client, then the rest (pass; the replay measured apart from the
// handshake); a resume before the save gets 204 while the answer streams,
// named as the loss it is (missed); the stale drill's unknown chat is the
// route's 500 (undefined_stale: 204 would say "no stream").
func TestAISDKResumablePeer(t *testing.T) {
	store := resumablepeer.NewStore(t)
	peer := resumablepeer.Start(t, store)
	tg := resumableTarget(peer.URL)
	runProbe(t, tg, "short", reftest.RunDeadline) // warm-up

	rec := drill(t, tg, "long", probe.Drill{Name: probe.DrillDrop}, reftest.RunDeadline)
	log := peer.Wait(t, "the resume", func(log []resumablepeer.Exchange) bool {
		return len(log) > 0 && log[len(log)-1].Method == "GET" && log[len(log)-1].EndAt > 0
	})
	get := log[len(log)-1]
	post, _ := resumablepeer.Post(log, get.Chat)
	t.Logf("drop: %s %s %q; the GET came %.1f ms after the POST, the id was saved at %.1f ms", rec.Outcome, rec.Verdict, rec.ResumeDetail, get.Start-post.Start, post.SavedAt)
	switch {
	case post.SavedAt > 0 && get.Start > post.Start+post.SavedAt:
		if rec.Verdict != probe.VerdictPass || rec.Outcome != probe.Success || rec.Chunks != resumablepeer.LongDeltas || rec.Replayed == 0 ||
			rec.Replayed != rec.Duplicates || rec.ReplayMs == nil || rec.ResumeHandshakeMs == nil || !strings.Contains(rec.ResumeDetail, "from its start") {
			t.Errorf("drop after the save: %s %s %q, %d chunks, replayed %d duplicates %d, replay_ms %v handshake %v", rec.Outcome, rec.Verdict, rec.ResumeDetail, rec.Chunks, rec.Replayed, rec.Duplicates, rec.ReplayMs, rec.ResumeHandshakeMs)
		}
	default: // a machine so slow that the resume beat the save
		if rec.Verdict != probe.VerdictMissed {
			t.Errorf("drop before the save: %s %q", rec.Verdict, rec.ResumeDetail)
		}
	}

	if _, err := store.Streams.Do("CLIENT", "PAUSE", "10000", "WRITE"); err != nil {
		t.Fatal(err)
	}
	rec = drill(t, tg, "long", probe.Drill{Name: probe.DrillDrop}, reftest.RunDeadline)
	store.Streams.Do("CLIENT", "UNPAUSE")
	if rec.Verdict != probe.VerdictMissed || !rec.Verdict.Failed() || rec.Outcome != probe.Success || !strings.Contains(rec.ResumeDetail, "204 No Content (no active stream) while the answer was still streaming") {
		t.Errorf("resume before the save: %s %s %q", rec.Outcome, rec.Verdict, rec.ResumeDetail)
	}

	rec = drill(t, tg, "long", probe.Drill{Name: probe.DrillStale}, reftest.RunDeadline)
	if rec.Verdict != probe.VerdictUndefinedStale || !strings.Contains(rec.ResumeDetail, "500") {
		t.Errorf("stale (an unknown chat): %s %s %q", rec.Outcome, rec.Verdict, rec.ResumeDetail)
	}
}

// Against the reference resumable app: each fault gets its verdict.
func TestAISDKResumableReference(t *testing.T) {
	srv := refserver.NewUnstarted(nil)
	srv.Mount = map[string]http.Handler{builtin.ResumablePath: refserver.NewResumable()}
	srv.Start()
	defer srv.Close()
	n := 0
	for _, dd := range builtin.Drills() {
		if dd.Resumable == "" {
			continue
		}
		n++
		timeout := reftest.RunDeadline
		if dd.WantOutcome != "" {
			timeout = 2 * time.Second
		}
		rec := drill(t, dd.Target(srv.URL), "long", dd.Drill, timeout)
		want := probe.Outcome(probe.Success)
		if dd.WantOutcome != "" {
			want = dd.WantOutcome
		}
		if rec.Verdict != dd.Want || rec.Outcome != want {
			t.Errorf("%s: verdict %s outcome %s (%s); detail %q", dd.Server, rec.Verdict, rec.Outcome, rec.Error, rec.ResumeDetail)
		}
	}
	if n < 7 {
		t.Errorf("%d resumable drills", n)
	}
	// A finished answer: 204 is right.
	rec := drill(t, resumableTarget(builtin.ResumableURL(srv.URL, "correct")), "short", probe.Drill{Name: probe.DrillDrop, DropAfter: 100}, reftest.RunDeadline)
	if rec.Verdict != probe.VerdictNotExercised {
		t.Errorf("short, never dropped: %s", rec.Verdict)
	}
}
