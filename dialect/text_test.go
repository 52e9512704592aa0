package dialect_test

import (
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/internal/refserver"
	"github.com/streamprobe/streamprobe/internal/testenv/aisdkpeer"
	"github.com/streamprobe/streamprobe/internal/testenv/reftest"
	"github.com/streamprobe/streamprobe/probe"
)

func textServer(steps []refserver.Step) *refserver.Server {
	srv := refserver.NewUnstarted(steps)
	srv.ContentType = refserver.PlainText
	return srv
}

// A plain-text stream: every read is a chunk stamped when it arrived (a
// write split in two is two chunks, the second not before its piece was
// written), the end of the body is the end, the request posts the
// prompt both ways.
func TestTextTimeline(t *testing.T) {
	t.Parallel()
	x := &refserver.Text{}
	x.Write(at(60), "Paris").Write(at(120), " is the").Write(at(200), " capital.")
	srv := reftest.Serve(t, textServer(x.Steps()))
	srv.Schedule[1].Splits, srv.SplitDelay = []int{3}, at(30)
	res := runProbe(t, dialect.Target{Name: "app", URL: srv.URL + "/api/completion", Dialect: "text"}, "short", reftest.RunDeadline)
	rec, tl := res.Record, res.Timeline
	if rec.Outcome != probe.Success {
		t.Fatalf("outcome %s: %s", rec.Outcome, rec.Error)
	}
	c := reftest.ClosedConn(t, srv, 0)
	var body dialect.TextRequest
	if err := json.Unmarshal(c.Body, &body); err != nil || c.Method != http.MethodPost || c.Path != "/api/completion" ||
		body.Prompt != dialect.Samples["short"].Prompt || len(body.Messages) != 1 || body.Messages[0].Parts[0].Text != body.Prompt {
		t.Errorf("request %s %s %s (%v)", c.Method, c.Path, c.Body, err)
	}
	if tl.ChunkCount() != 4 || rec.Events != 4 || rec.Bytes != int64(len("Paris is the capital.")) {
		t.Fatalf("%d chunks, %d events, %d bytes: want a chunk per read (4)", tl.ChunkCount(), rec.Events, rec.Bytes)
	}
	reftest.Milestone(t, "tfc_ms (the first write)", rec.TFCMs, tl.Start, srv, c, 0, tl.Chunks()[0])
	reftest.NotBefore(t, "the split write's second piece", tl.Chunks()[2], reftest.Due(srv, c, 1).Add(at(30)))
	reftest.NotBefore(t, "last write", tl.Chunks()[3], reftest.Due(srv, c, 2))
	if rec.EndMs == nil || tl.End.Before(tl.Chunks()[3]) || rec.Truncated != 0 {
		t.Errorf("end_ms %v (the end of the body), truncated %d", reftest.Shown(rec.EndMs), rec.Truncated)
	}
}

// A model served without a reasoning parser behind a plain-text route
// streams its reasoning as a leading <think> block (docs/dialects.md
// "Definitions", inline reasoning): the block is reasoning, the answer's
// first read the TFC; with the detection off all of it is the answer.
func TestTextInlineThink(t *testing.T) {
	t.Parallel()
	x := &refserver.Text{}
	x.Write(at(40), "<think>The capital").Write(at(80), " is Paris.</think>\n\n").Write(at(160), "Paris").Write(at(240), " is the capital.")
	for _, off := range []bool{false, true} {
		srv := reftest.Serve(t, textServer(x.Steps()))
		res := runProbe(t, dialect.Target{Name: "app", URL: srv.URL + "/api/completion", Dialect: "text", NoInlineThink: off}, "short", reftest.RunDeadline)
		rec, tl := res.Record, res.Timeline
		if rec.Outcome != probe.Success {
			t.Fatalf("outcome %s: %s", rec.Outcome, rec.Error)
		}
		if off {
			if rec.Reasoning != nil || tl.ChunkCount() < 1 {
				t.Errorf("detection off: reasoning %+v, %d chunks: want none, every read a chunk", rec.Reasoning, tl.ChunkCount())
			}
			continue
		}
		// The network may join two writes in one read: the counts are
		// bounds, and TFC no sooner than the answer's first write.
		if n := tl.ChunkCount(); rec.Reasoning == nil || !rec.Reasoning.Inline || rec.Reasoning.Chunks < 1 || n < 1 || n > 2 {
			t.Fatalf("reasoning %+v, %d chunks: want the block's reads as inline reasoning, the answer one or two chunks", rec.Reasoning, n)
		}
		reftest.NotBefore(t, "tfc (the answer's first read)", tl.Chunks()[0], reftest.Due(srv, reftest.ClosedConn(t, srv, 0), 2))
	}
}

// What a plain-text stream can say of an error: an HTTP status with its
// body; a body broken mid-stream is a reset. A drill runs as a plain
// request (the config refuses one at load).
func TestTextErrors(t *testing.T) {
	t.Parallel()
	const key = "sk-text-route-0123456789"
	x := &refserver.Text{}
	x.Write(at(20), "a").Write(at(40), "b").Write(at(60), "c")
	srv := textServer(nil)
	srv.Status, srv.ErrorBody = http.StatusInternalServerError, "upstream model failed for key "+key
	reftest.Serve(t, srv)
	h := http.Header{}
	h.Set("Authorization", "Bearer "+key)
	rec := runProbe(t, dialect.Target{Name: "app", URL: srv.URL, Dialect: "text", Header: h}, "short", reftest.RunDeadline).Record
	if rec.Outcome != probe.UpstreamError || !strings.Contains(rec.Error, `500 Internal Server Error, body starts "upstream model failed for key [redacted]"`) || strings.Contains(rec.Error, key) {
		t.Errorf("HTTP error: outcome %s error %q", rec.Outcome, rec.Error)
	}
	reset := textServer(x.Steps())
	reset.ResetAfter = 2
	reftest.Serve(t, reset)
	rec = runProbe(t, dialect.Target{Name: "app", URL: reset.URL, Dialect: "text"}, "short", reftest.RunDeadline).Record
	if rec.Outcome != probe.UpstreamError || rec.Chunks != 2 || !strings.Contains(rec.Error, "connection broken mid-stream") {
		t.Errorf("reset: outcome %s chunks %d error %q", rec.Outcome, rec.Chunks, rec.Error)
	}
	if dialect.HasEventIDs("text") {
		t.Error("a text stream has no event ids: no drill can run")
	}
}

// Against the AI SDK itself: streamText(...).toTextStreamResponse() over
// the SDK's mock model (internal/testenv/aisdkpeer's /api/text). Each text
// delta is one write of the SDK's, read as one chunk; the probe's TFC and
// gaps agree with the peer's own send times.
func TestTextAISDKPeer(t *testing.T) {
	peer := aisdkpeer.Start(t)
	tg := dialect.Target{Name: "app", URL: peer.TextURL, Dialect: "text"}
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
	var sent []float64
	var text string
	for _, s := range log {
		sent = append(sent, s.At)
		text += s.Data
	}
	// Each read is a chunk: four writes are four reads, unless two
	// arrive together (a busy machine), one read then: never more chunks
	// than writes, and every byte once.
	n := tl.ChunkCount()
	if text != "Paris is the capital." || len(sent) != 4 || n < 1 || n > len(sent) || rec.Bytes != int64(len(text)) {
		t.Fatalf("peer wrote %q in %d writes; the probe read %d chunks, %d bytes", text, len(sent), n, rec.Bytes)
	}
	nominal := float64(aisdkpeer.ChunkDelay) / 1e6
	lateness := 0.0
	for i := 1; i < len(sent); i++ {
		lateness = math.Max(lateness, math.Abs(sent[i]-sent[i-1]-nominal))
	}
	allowance := 5 + lateness + float64(stall)/1e6
	t.Logf("peer wrote at %.1f ms; probe TFC %.1f ms, headers %.1f ms, allowance %.1f ms (our longest stall %v), %d chunks", sent, reftest.Val(rec.TFCMs), reftest.Val(rec.HeadersMs), allowance, stall, n)
	// No read before the write it holds (chunk i holds write i or a later
	// one), and none long after: a read is stamped as it returns, not
	// when the body ends (the last write is 120 ms after the first). The
	// upper bound is generous, as the machine is shared: a probe
	// descheduled for a few tens of ms reads late, never early.
	const slack = 100.0
	for i := range n {
		got := reftest.MsSince(tl.Start, tl.Chunks()[i])
		if got < sent[i]-allowance {
			t.Errorf("chunk %d read at %.1f ms, before the peer's write %d (%.1f ms)", i, got, i, sent[i])
		}
		if n == len(sent) && got > sent[i]+reftest.Val(rec.HeadersMs)+allowance+slack {
			t.Errorf("chunk %d read at %.1f ms, the peer wrote it at %.1f ms (headers %.1f ms, allowance %.1f + %.0f ms)", i, got, sent[i], reftest.Val(rec.HeadersMs), allowance, slack)
		}
	}
	if n < len(sent) {
		t.Logf("%d writes came in %d reads: a read is compared with the first write it may hold only", len(sent), n)
	}
	if rec.EndMs == nil || *rec.EndMs < reftest.Val(rec.TFCMs) || rec.FirstEffectiveMs == nil || *rec.FirstEffectiveMs != *rec.TFCMs {
		t.Errorf("end_ms %v first_effective_ms %v", reftest.Shown(rec.EndMs), reftest.Shown(rec.FirstEffectiveMs))
	}
}
