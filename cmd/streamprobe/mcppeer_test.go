package main

import (
	"strings"
	"testing"

	"github.com/streamprobe/streamprobe/internal/testenv/mcppeer"
	"github.com/streamprobe/streamprobe/internal/testenv/mcppeer/gosdk"
	"github.com/streamprobe/streamprobe/probe"
)

// once -dialect mcp against the official MCP SDK servers (see
// docs/mcp-peers.md): a tool call measured, and each drill with the
// verdict and exit code the SDK's source predicts (probe's
// TestMCPSDKDrills says why for each).
func TestOnceMCPSDKPeers(t *testing.T) {
	for _, tc := range []struct {
		name  string
		start func(testing.TB) *mcppeer.Peer
		stale probe.Verdict
	}{
		{"typescript-sdk", mcppeer.StartTS, probe.VerdictUndefinedStale},
		{"go-sdk", gosdk.Start, probe.VerdictStaleOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := tc.start(t)
			once := func(args ...string) (int, probe.Record, string) {
				t.Helper()
				code, stdout, stderr := runCmd(t, append([]string{"once", "-dialect", "mcp", "-url", p.URL, "-tool", mcppeer.Tool, "-json"}, args...)...)
				recs := decodeRecords(t, stdout)
				if len(recs) != 1 {
					t.Fatalf("%q: exit %d, %d records: %s %s", args, code, len(recs), stdout, stderr)
				}
				return code, recs[0], stderr
			}
			code, rec, stderr := once("-tool-args", `{"steps":5,"interval_ms":40}`)
			if code != exitOK || rec.Outcome != probe.Success || rec.Chunks != 6 || rec.SessionMs == nil || rec.TFCMs == nil {
				t.Fatalf("tool call: exit %d record %+v %s", code, rec, stderr)
			}
			// The TFC is not before the peer wrote its first progress.
			log, err := p.Log()
			if err != nil {
				t.Fatal(err)
			}
			var call mcppeer.Exchange
			for _, ex := range log {
				if ex.Method == "POST" && ex.RPC == "tools/call" {
					call = ex
				}
			}
			if evs := call.Events(); len(evs) != 7 || *rec.TFCMs < evs[1].At-1 {
				t.Errorf("tfc_ms %.1f; the peer wrote %+v", *rec.TFCMs, evs)
			}
			for _, d := range []string{"drop", "duplicate"} {
				code, rec, stderr := once("-tool-args", `{"steps":30,"interval_ms":40}`, "-drill", d)
				if tc.name == "go-sdk" && code == exitFail && strings.Contains(rec.Error, "409 Conflict") {
					// The Go SDK's race with a resume sent at once after
					// the drop (probe's goConflict checks it on the log).
					t.Logf("%s: the Go SDK answered the resume 409: %s", d, rec.Error)
					continue
				}
				if code != exitOK || rec.Verdict != probe.VerdictPass {
					t.Errorf("-drill %s: exit %d verdict %s (%s) %s", d, code, rec.Verdict, rec.ResumeDetail, stderr)
				}
			}
			code, rec, stderr = once("-tool-args", `{"steps":12,"interval_ms":40}`, "-drill", "stale", "-timeout", "3s")
			want := exitOK
			if tc.stale.Failed() {
				want = exitFail
			}
			if code != want || rec.Verdict != tc.stale {
				t.Errorf("-drill stale: exit %d verdict %s (%s), want exit %d %s; %s", code, rec.Verdict, rec.ResumeDetail, want, tc.stale, stderr)
			}
		})
	}
}
