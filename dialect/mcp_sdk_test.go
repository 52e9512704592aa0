package dialect_test

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/internal/testenv/mcppeer"
	"github.com/streamprobe/streamprobe/internal/testenv/mcppeer/gosdk"
	"github.com/streamprobe/streamprobe/internal/testenv/reftest"
	"github.com/streamprobe/streamprobe/probe"
)

// The mcp dialect against the official MCP SDK servers
// (internal/testenv/mcppeer: the TypeScript SDK in node, the Go SDK in process).
// Each verdict is the one the SDK's source predicts; the facts and their
// source lines are pinned on the wire by internal/testenv/mcppeer/sdk_test.go
// and listed in docs/mcp-peers.md.

// sdkPeers runs f against each SDK peer, in parallel.
func sdkPeers(t *testing.T, f func(t *testing.T, p *mcppeer.Peer, ts bool)) {
	t.Run("typescript-sdk", func(t *testing.T) {
		t.Parallel()
		p := mcppeer.StartTS(t)
		// Warm-up: node compiles the SDK's paths on the first call.
		runPeer(t, p, "", "short", `{"steps":1,"interval_ms":0}`, probe.Drill{}, reftest.RunDeadline)
		f(t, p, true)
	})
	t.Run("go-sdk", func(t *testing.T) { t.Parallel(); f(t, gosdk.Start(t), false) })
}

// runPeer runs sample on the peer's endpoint (with query q) calling the
// progress tool with args, within timeout.
func runPeer(t *testing.T, p *mcppeer.Peer, q, sample, args string, d probe.Drill, timeout time.Duration) probe.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	tg := dialect.Target{Name: p.Name, URL: p.URL + q, Dialect: "mcp", MCPVersion: p.Version,
		Tools: map[string]dialect.ToolCall{sample: {Name: mcppeer.Tool, Args: json.RawMessage(args)}}}
	return probe.Run(ctx, tg, probe.Options{Sample: dialect.Samples[sample], Client: reftest.NewClient(t), Drill: d})
}

// peerLog is the peer's log.
func peerLog(t *testing.T, p *mcppeer.Peer) []mcppeer.Exchange {
	t.Helper()
	log, err := p.Log()
	if err != nil {
		t.Fatal(err)
	}
	return log
}

// lastExchange is the newest exchange of method and JSON-RPC method.
func lastExchange(log []mcppeer.Exchange, method, rpc string) (mcppeer.Exchange, bool) {
	for i := len(log) - 1; i >= 0; i-- {
		if log[i].Method == method && (rpc == "" || log[i].RPC == rpc) {
			return log[i], true
		}
	}
	return mcppeer.Exchange{}, false
}

// waitPeer polls the peer's log until cond holds (the server reaching a
// state by itself), failing after reftest.RunDeadline.
func waitPeer(t *testing.T, p *mcppeer.Peer, what string, cond func([]mcppeer.Exchange) bool) []mcppeer.Exchange {
	t.Helper()
	for deadline := time.Now().Add(reftest.RunDeadline); ; time.Sleep(5 * time.Millisecond) {
		if log := peerLog(t, p); cond(log) {
			return log
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, reftest.RunDeadline)
		}
	}
}

// The timeline of a tool call against each SDK: the chunks are the
// progress notifications and the result, read when the server wrote them
// (its own logged write times), the priming event counted as an event and
// not a chunk, and the last event id the server's last.
func TestMCPSDKTimeline(t *testing.T) {
	sdkPeers(t, func(t *testing.T, p *mcppeer.Peer, ts bool) {
		stop := reftest.StallWatch()
		res := runPeer(t, p, "", "short", `{"steps":5,"interval_ms":60}`, probe.Drill{}, reftest.RunDeadline)
		stall := stop()
		rec, tl := res.Record, res.Timeline
		if rec.Outcome != probe.Success || rec.Chunks != 6 || rec.Events != 7 || rec.Gaps.Count != 5 {
			t.Fatalf("outcome %s (%s), chunks %d events %d gaps %d; want success, 5 progress + the result, and the priming event", rec.Outcome, rec.Error, rec.Chunks, rec.Events, rec.Gaps.Count)
		}
		ex, ok := lastExchange(peerLog(t, p), "POST", "tools/call")
		if !ok {
			t.Fatal("the peer logged no tools/call")
		}
		evs := ex.Events()
		if len(evs) != 7 || evs[0].Data != "" || evs[0].ID == "" {
			t.Fatalf("the peer wrote %+v: want the priming event, 5 progress, the result", evs)
		}
		if rec.LastEventID != evs[6].ID {
			t.Errorf("last_event_id %q, the peer's last %q", rec.LastEventID, evs[6].ID)
		}
		sent := make([]float64, 6) // ms since the request reached the peer
		for i := range sent {
			sent[i] = evs[i+1].At
		}
		allowance := 5 + 2*float64(stall)/1e6
		t.Logf("%s wrote the chunks at %.1f ms; the probe read them at %.1f ms (TFC %.1f, headers %.1f); this process stalled up to %v",
			p.Name, sent, mustMillis(tl), reftest.Val(rec.TFCMs), reftest.Val(rec.HeadersMs), stall)
		for i := 1; i < len(sent); i++ {
			got, want := reftest.MsSince(tl.Chunks()[0], tl.Chunks()[i]), sent[i]-sent[0]
			if math.Abs(got-want) > allowance {
				t.Errorf("chunk %d read %.1f ms after the first, the peer wrote it %.1f ms after (allowance %.1f ms)", i, got, want, allowance)
			}
		}
		// TFC: not before the peer wrote the first progress (the request
		// left the probe before it reached the peer), less the allowance
		// (a peer stamps a write after it: on a busy machine the probe can
		// read it first, as TestAISDKPeer saw), not later than that plus
		// the time to the headers and the allowance.
		if tfc := reftest.Val(rec.TFCMs); tfc < sent[0]-allowance || tfc > sent[0]+reftest.Val(rec.HeadersMs)+allowance {
			t.Errorf("tfc_ms %.1f: the peer wrote the first progress %.1f ms after the request came (headers %.1f ms, allowance %.1f ms)", tfc, sent[0], reftest.Val(rec.HeadersMs), allowance)
		}
		if rec.CloseMs == nil || *rec.CloseMs != 0 || rec.EndMs == nil {
			t.Errorf("close_ms %v end_ms %v: the result is the end", rec.CloseMs, rec.EndMs)
		}
	})
}

// mustMillis is tl's chunk times in ms from its start.
func mustMillis(tl probe.Timeline) []float64 {
	m, _ := tl.Millis()
	return m
}

// goConflict reports whether the run ended on the Go SDK's 409 to a
// resume, and if so checks that it is the race the SDK's source has: the
// probe resumes at once after its drop, and the SDK refuses a GET for a
// stream still claimed by a connection it has not yet seen close
// (streamable.go:1323-1326; the claim ends when the handler returns,
// 1256-1257, 1724). The 409 GET must have arrived before the exchange
// that held the stream ended on the server. The probe sends a resume
// refused with 409 again a little later, within max_reconnects (the SDK's
// own client waits a backoff before each reconnect, streamable.go:
// 2719-2735, and so rarely meets it), so a run ends on it only when the
// SDK held the stream through every retry.
func goConflict(t *testing.T, p *mcppeer.Peer, rec probe.Record) bool {
	t.Helper()
	if rec.Outcome != probe.UpstreamError || !strings.Contains(rec.Error, "409 Conflict") {
		return false
	}
	log := peerLog(t, p)
	for i, ex := range log {
		if ex.Method != "GET" || ex.Status != 409 {
			continue
		}
		for _, prev := range log[:i] {
			if prev.Session == ex.Session && (prev.Method == "GET" || prev.RPC == "tools/call") && prev.Status == 200 &&
				(prev.EndAt == 0 || prev.Start+prev.EndAt > ex.Start) {
				t.Logf("the Go SDK refused the probe's resume with 409 while it still held the dropped connection (%.1f ms before it saw it close): %s", prev.Start+prev.EndAt-ex.Start, rec.Error)
				return true
			}
		}
		t.Errorf("a 409 to a resume (%+v) though no connection of the session held the stream: not the race of streamable.go:1323-1326", ex)
		return true
	}
	t.Errorf("the run ended on a 409 the peer did not log: %s", rec.Error)
	return true
}

// The drills on each SDK, each with the verdict the SDK's source gives:
// drop and duplicate pass on both (the store replays the resumed stream's
// events after the id, the same again for the same id, and the tool is
// not run again); the stale id gets a defined answer from the Go SDK (400:
// streamprobe-stale-id-0 is not <stream>_<n>, streamable.go:1234-1237; a
// well-formed id of no stream is 400 too, 1337-1348) and none from the
// TypeScript SDK with its example InMemoryEventStore: 200 and an empty
// stream that never ends (inMemoryEventStore.js:37-39,
// webStandardStreamableHttp.js:315-326, 393-414): undefined_stale, a
// failure, as the run's timeout comes.
func TestMCPSDKDrills(t *testing.T) {
	// 1.2 s of tool: every resume comes while it runs (a resume after the
	// end may meet the TypeScript store's same-millisecond reorder, see
	// TestMCPSDKServerClose).
	const args = `{"steps":30,"interval_ms":40}`
	sdkPeers(t, func(t *testing.T, p *mcppeer.Peer, ts bool) {
		for _, d := range []string{probe.DrillDrop, probe.DrillDuplicate} {
			rec := runPeer(t, p, "", "long", args, probe.Drill{Name: d}, reftest.RunDeadline).Record
			if !ts && goConflict(t, p, rec) {
				continue
			}
			if rec.Verdict != probe.VerdictPass || rec.Outcome != probe.Success || rec.Chunks != 31 || !rec.Resumed {
				t.Errorf("%s: verdict %s outcome %s (%s) chunks %d; detail %q", d, rec.Verdict, rec.Outcome, rec.Error, rec.Chunks, rec.ResumeDetail)
			}
			if d == probe.DrillDuplicate && (rec.Duplicates == 0 || rec.Duplicates != rec.Replayed) {
				t.Errorf("duplicate: replayed %d duplicates %d: the same id twice replays the same events again", rec.Replayed, rec.Duplicates)
			}
		}
		calls, runs := 0, 0
		var gets []int
		log := waitPeer(t, p, "every tool run ended", func(log []mcppeer.Exchange) bool {
			c, r := 0, 0
			for _, ex := range log {
				if ex.Method == "POST" && ex.RPC == "tools/call" {
					c++
				}
				if ex.Method == "TOOL" {
					r++
				}
			}
			return c == r
		})
		for _, ex := range log {
			if ex.Method == "GET" {
				gets = append(gets, ex.Status)
			}
			if ex.Method == "POST" && ex.RPC == "tools/call" {
				calls++
			}
			if ex.Method == "TOOL" {
				runs++
			}
		}
		t.Logf("%s: resume GET statuses %v", p.Name, gets)
		if want := 2 + map[bool]int{true: 1, false: 0}[ts]; calls != want || runs != want {
			t.Errorf("%d tools/call, %d tool runs, want %d each: a resume must not run the tool again", calls, runs, want)
		}

		if ts {
			// The run ends 3 s after the stale resume, not at its timeout.
			rec := runPeer(t, p, "", "long", args, probe.Drill{Name: probe.DrillStale}, reftest.RunDeadline).Record
			if rec.Verdict != probe.VerdictUndefinedStale || !rec.Verdict.Failed() || rec.Outcome != probe.Success || !strings.Contains(rec.ResumeDetail, "the stream stayed open 3s with no event") {
				t.Errorf("stale: verdict %s outcome %s (%s); detail %q; want undefined_stale: the SDK's example store answers an unknown id with an empty stream left open (inMemoryEventStore.js:37-39, webStandardStreamableHttp.js:393-414)", rec.Verdict, rec.Outcome, rec.Error, rec.ResumeDetail)
			}
			return
		}
		for _, id := range []string{"", "ABCDEFGHIJKLMNOPQRSTUVWXYZ_3"} {
			rec := runPeer(t, p, "", "long", args, probe.Drill{Name: probe.DrillStale, StaleID: id}, reftest.RunDeadline).Record
			if rec.Verdict != probe.VerdictStaleOK || rec.StaleAnswer != "http_400" || rec.Outcome != probe.Success {
				t.Errorf("stale %q: verdict %s answer %q outcome %s (%s); want stale_ok http_400 (streamable.go:1234-1237, 1337-1348)", id, rec.Verdict, rec.StaleAnswer, rec.Outcome, rec.Error)
			}
		}
	})
}

// SEP-1699: the tool closes its own stream after 2 reports and goes on.
// The TypeScript SDK's priming event carries retry: 300 (its transport's
// retryInterval, webStandardStreamableHttp.js:213-214) and the close is
// the end of the body (805-813); the Go SDK's close is an event "close"
// with retry: 300 (streamable.go:1009-1026). The probe resumes by itself
// after the retry, from the last id, and the run is a success with a
// pass: every message once, the tool run once.
func TestMCPSDKServerClose(t *testing.T) {
	sdkPeers(t, func(t *testing.T, p *mcppeer.Peer, ts bool) {
		q := ""
		if ts {
			q = "?retry=300"
		}
		// The tool runs on 800 ms after the close, past the 300 ms retry:
		// a resume after the call ended would meet the TypeScript SDK's
		// example store replaying the last progress and the response,
		// stored within the same millisecond, in random order
		// (inMemoryEventStore.js:47; internal/testenv/mcppeer's
		// TestResumeAfterEnd): the probe then ends at the response with
		// one progress unread, and says pass.
		rec := runPeer(t, p, q, "short", `{"steps":10,"interval_ms":100,"close_after":2,"retry_ms":300}`, probe.Drill{}, reftest.RunDeadline).Record
		if rec.Outcome != probe.Success || rec.Verdict != probe.VerdictPass || rec.Chunks != 11 || rec.ServerDrops != 1 || rec.Reconnects != 1 {
			t.Fatalf("outcome %s (%s) verdict %s chunks %d server drops %d reconnects %d; detail %q", rec.Outcome, rec.Error, rec.Verdict, rec.Chunks, rec.ServerDrops, rec.Reconnects, rec.ResumeDetail)
		}
		log := peerLog(t, p)
		post, _ := lastExchange(log, "POST", "tools/call")
		get, ok := lastExchange(log, "GET", "")
		if !ok || get.LastEventID == "" || get.Status != 200 {
			t.Fatalf("resume GET %+v", get)
		}
		evs := post.Events()
		if len(evs) < 3 || get.LastEventID != evs[2].ID {
			t.Errorf("the resume sent Last-Event-ID %q, the last id before the close was %q", get.LastEventID, evs[len(evs)-1].ID)
		}
		// The retry: the GET came about 300 ms after the peer ended the
		// POST's response (both on the peer's clock). The peer stamps the
		// end after the close, late when its event loop is busy (297.6 ms
		// seen with both cores loaded), so the bound is 250 ms: a resume
		// that ignored retry: comes within a few ms.
		if wait := get.Start - (post.Start + post.EndAt); post.EndAt == 0 || wait < 250 {
			t.Errorf("the resume came %.1f ms after the close, the server asked retry: 300", wait)
		}
	})
}

// The cancel sample: notifications/cancelled after 3 chunks. The
// TypeScript SDK stops the tool and sends nothing more, no response
// (protocol.js:346-347, 397-399), and leaves the stream open: the client
// closes it after its wait. The Go SDK answers the cancelled call anyway
// (jsonrpc2 answers every call, internal/jsonrpc2/conn.go:694-720), with
// an error result ("context canceled"): the record says the result still
// came (result_after_cancel), which the spec says a receiver SHOULD NOT
// send.
func TestMCPSDKCancel(t *testing.T) {
	sdkPeers(t, func(t *testing.T, p *mcppeer.Peer, ts bool) {
		rec := runPeer(t, p, "", "cancel", `{"steps":40,"interval_ms":40}`, probe.Drill{}, reftest.RunDeadline).Record
		if rec.Outcome != probe.ClientCancelled || rec.Chunks != dialect.DefaultCancelAfter {
			t.Fatalf("outcome %s (%s) chunks %d", rec.Outcome, rec.Error, rec.Chunks)
		}
		if ts {
			if rec.ResultAfterCancel || rec.CancelEndMs != nil || !strings.Contains(rec.Error, "the stream was still open") {
				t.Errorf("error %q result_after_cancel %v: want no result and the stream left open (protocol.js:397-399)", rec.Error, rec.ResultAfterCancel)
			}
			return
		}
		if !rec.ResultAfterCancel || rec.CancelEndMs == nil || !strings.Contains(rec.Error, "the result still came") {
			t.Errorf("error %q result_after_cancel %v: the Go SDK answers a cancelled call (internal/jsonrpc2/conn.go:694-720)", rec.Error, rec.ResultAfterCancel)
		}
	})
}

// JSON response mode (?json=1): one application/json answer, the result
// its one chunk, no ids; progress never reaches the call (the TypeScript
// SDK drops it, webStandardStreamableHttp.js:866; the Go SDK sends it to
// a standalone GET the probe does not open, streamable.go:1852-1856).
// Without an event store (?store=0) there are no ids: the drop drill says
// not_supported, no failure of resume.
func TestMCPSDKJSONAndNoStore(t *testing.T) {
	sdkPeers(t, func(t *testing.T, p *mcppeer.Peer, ts bool) {
		rec := runPeer(t, p, "?json=1", "short", `{"steps":2,"interval_ms":30}`, probe.Drill{}, reftest.RunDeadline).Record
		if rec.Outcome != probe.Success || rec.Chunks != 1 || rec.LastEventID != "" || rec.TFCMs == nil || *rec.TFCMs < 60 {
			t.Errorf("json: outcome %s (%s) chunks %d last id %q tfc %v", rec.Outcome, rec.Error, rec.Chunks, rec.LastEventID, rec.TFCMs)
		}
		rec = runPeer(t, p, "?store=0", "long", `{"steps":8,"interval_ms":30}`, probe.Drill{Name: probe.DrillDrop}, reftest.RunDeadline).Record
		if rec.Verdict != probe.VerdictNotSupported || rec.Verdict.Failed() || !strings.Contains(rec.ResumeDetail, "no event ids") {
			t.Errorf("no store, drop: verdict %s outcome %s (%s); detail %q", rec.Verdict, rec.Outcome, rec.Error, rec.ResumeDetail)
		}
	})
}
