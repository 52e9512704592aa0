package dialect_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/internal/testenv/mcppeer"
	"github.com/streamprobe/streamprobe/internal/testenv/mcppeer/gosdk"
	"github.com/streamprobe/streamprobe/internal/testenv/mcppeer/mcpgo"
	"github.com/streamprobe/streamprobe/internal/testenv/reftest"
	"github.com/streamprobe/streamprobe/probe"
)

// The mcp dialect against github.com/mark3labs/mcp-go on 2025-11-25
// (internal/testenv/mcppeer/mcpgo; its behaviours pinned on the wire in
// internal/testenv/mcppeer/mcpgo2025_test.go).

// Two calls at once, no drill: the store's one counter for every stream
// (server/event_store.go:80-106) makes each stream's ids skip by the
// other's events. Nothing was resumed and nothing was lost: no verdict,
// both whole. (Both runs said MISSED "ids skip from 51 to 53" before.)
func TestMCPGoConcurrentCallsGetNoVerdict(t *testing.T) {
	t.Parallel()
	p := mcpgo.Start(t, mcpgo.V058)
	const args = `{"steps":10,"interval_ms":40}`
	recs := make([]probe.Record, 2)
	var wg sync.WaitGroup
	for i := range recs {
		wg.Go(func() { recs[i] = runPeer(t, p, "", "long", args, probe.Drill{}, reftest.RunDeadline).Record })
	}
	wg.Wait()
	for i, rec := range recs {
		if rec.Outcome != probe.Success || rec.Verdict != "" || rec.Chunks != 11 {
			t.Errorf("call %d: outcome %s (%s) verdict %q (%s) chunks %d; want success, no verdict, 10 progress + the result", i, rec.Outcome, rec.Error, rec.Verdict, rec.ResumeDetail, rec.Chunks)
		}
	}
}

// mcp-go runs the tool under the POST's request context
// (server/streamable_http.go v0.58.0:661, v1.2.1:719): the drill's drop
// cancels it, and the resume replays the stored "context canceled"
// error (v0.58.0:683,885-897; v1.2.1:747,975-984). The spec: a
// disconnection SHOULD NOT be taken as a cancel. The verdict names it.
func TestMCPGoCancelsTheCallOnDrop(t *testing.T) {
	t.Parallel()
	for _, v := range []string{mcpgo.V058, mcpgo.V121} {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			p := mcpgo.Start(t, v)
			p.Version = "2025-11-25" // v1.2.1 speaks 2026-07-28 too
			rec := runPeer(t, p, "", "long", `{"steps":20,"interval_ms":40}`, probe.Drill{Name: probe.DrillDrop, OpaqueIDs: true}, reftest.RunDeadline).Record
			if rec.Verdict != probe.VerdictCancelledOnDrop || !rec.Verdict.Failed() || rec.Outcome != probe.UpstreamError ||
				!strings.Contains(rec.ResumeDetail, "context canceled") || !rec.Resumed {
				t.Fatalf("verdict %s outcome %s (%s); detail %q; want cancelled_on_drop", rec.Verdict, rec.Outcome, rec.Error, rec.ResumeDetail)
			}
		})
	}
}

// A client that comes back after the call ended: the TypeScript SDK
// 1.32.2 replays the rest of the stream with the result and keeps the GET
// open (webStandardStreamableHttp.js:394-413), where the spec says the
// server SHOULD close it. The run's timings end at the result; the
// verdict names the open stream, 2 s later. The Go SDK closes it: a pass.
func TestMCPSDKResumeAfterTheEnd(t *testing.T) {
	// Two progress reports 60 ms apart, then the result; the client drops
	// after the second and comes back 1 s later, when the call has ended.
	d := probe.Drill{Name: probe.DrillDrop, DropAfter: 2, Away: time.Second, OpaqueIDs: true}
	check := func(t *testing.T, rec probe.Record, want probe.Verdict) {
		t.Helper()
		if rec.Verdict != want || rec.Outcome != probe.Success || rec.Chunks != 3 || !rec.Resumed || rec.ReconnectMs == nil || *rec.ReconnectMs < 1000 {
			t.Fatalf("verdict %s outcome %s (%s) chunks %d reconnect %v; detail %q; want %s", rec.Verdict, rec.Outcome, rec.Error, rec.Chunks, reftest.Shown(rec.ReconnectMs), rec.ResumeDetail, want)
		}
	}
	t.Run("typescript-sdk", func(t *testing.T) {
		t.Parallel()
		p := mcppeer.StartTS(t)
		// The result comes 100 ms after the last report: the store's ids
		// (Date.now() sorted as text) cannot swap them.
		rec := runPeer(t, p, "", "long", `{"steps":2,"interval_ms":60,"tail_ms":100}`, d, reftest.RunDeadline).Record
		check(t, rec, probe.VerdictLeftOpen)
		if !strings.Contains(rec.ResumeDetail, "still open 2s later") {
			t.Errorf("detail %q", rec.ResumeDetail)
		}
	})
	t.Run("go-sdk", func(t *testing.T) {
		t.Parallel()
		p := gosdk.Start(t)
		rec := runPeer(t, p, "", "long", `{"steps":2,"interval_ms":60}`, d, reftest.RunDeadline).Record
		if !goConflict(t, p, rec) {
			check(t, rec, probe.VerdictPass)
		}
	})
}
