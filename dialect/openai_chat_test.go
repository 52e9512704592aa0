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
