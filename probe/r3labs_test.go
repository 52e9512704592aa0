package probe

import (
	"context"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/r3labs/sse/v2"

	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/internal/testenv/reftest"
)

// A server nobody here wrote: r3labs/sse's Server with AutoReplay replays
// every event whose id is >= Last-Event-ID, the sent id included. The drop
// drill must name that off-by-one replay.
func TestDropDrillAgainstR3labsServer(t *testing.T) {
	server := sse.New()
	server.AutoReplay = true
	server.CreateStream("probe")
	for i := range 10 {
		server.Publish("probe", &sse.Event{Data: []byte("event " + strconv.Itoa(i))})
	}
	server.Publish("probe", &sse.Event{Data: []byte("[DONE]")})
	ts := httptest.NewServer(server)
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
		server.Close()
	})
	ctx, cancel := context.WithTimeout(context.Background(), reftest.RunDeadline)
	defer cancel()
	rec := Run(ctx, dialect.Target{Name: "r3labs", URL: ts.URL + "?stream=probe", Dialect: "sse", EndData: "[DONE]"},
		Options{Sample: dialect.Samples["long"], Client: reftest.NewClient(t), Drill: Drill{Name: DrillDrop}}).Record
	if rec.Verdict != VerdictDuplicate {
		t.Fatalf("verdict %s (%s), want duplicate; outcome %s %s", rec.Verdict, rec.ResumeDetail, rec.Outcome, rec.Error)
	}
	// r3labs numbers its events from 0: the drop after 3 chunks leaves
	// Last-Event-ID 2, and the server sends id 2 again.
	if want := "resume replayed id 2 again: off-by-one replay (sent Last-Event-ID: 2)"; rec.ResumeDetail != want {
		t.Errorf("resume_detail %q, want %q", rec.ResumeDetail, want)
	}
	if rec.Duplicates != 1 || rec.Missed != 0 || rec.Chunks != 10 || rec.Outcome != Success {
		t.Errorf("duplicates %d missed %d chunks %d outcome %s", rec.Duplicates, rec.Missed, rec.Chunks, rec.Outcome)
	}
}
