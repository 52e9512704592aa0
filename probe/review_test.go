package probe

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/internal/refserver"
	"github.com/streamprobe/streamprobe/internal/testenv/reftest"
)

// Cases a review of the drill engine found; each failed before its fix.
func TestDrillReviewCases(t *testing.T) {
	t.Parallel()
	t.Run("stale drill after a drop by the server", func(t *testing.T) {
		t.Parallel()
		srv := refserver.NewUnstarted(drillSchedule())
		srv.ResetAfter = 2 // the server drops first; the client's own drop comes later
		reftest.Serve(t, srv)
		rec := runDrill(t, srv, Drill{Name: DrillStale}).Record
		if rec.Verdict != VerdictStaleOK || rec.LastEventIDSent != dialect.DefaultStaleID {
			t.Errorf("verdict %s (%s), sent %q", rec.Verdict, rec.ResumeDetail, rec.LastEventIDSent)
		}
	})
	t.Run("an id-less first event does not hide a restart", func(t *testing.T) {
		t.Parallel()
		steps := append([]refserver.Step{{At: 50 * time.Millisecond, Data: "no id"}}, drillSchedule()...)
		srv := refserver.NewUnstarted(steps)
		srv.Bug = refserver.Restart
		reftest.Serve(t, srv)
		rec := runDrill(t, srv, Drill{Name: DrillDrop}).Record
		if rec.Verdict != VerdictRestarted {
			t.Errorf("verdict %s (%s)", rec.Verdict, rec.ResumeDetail)
		}
	})
	t.Run("a drill that never dropped is not a pass", func(t *testing.T) {
		t.Parallel()
		srv := reftest.Serve(t, refserver.NewUnstarted(refserver.Events(refserver.Ms(10, 20), 30*time.Millisecond)))
		rec := runDrill(t, srv, Drill{Name: DrillDrop}).Record
		if rec.Verdict != VerdictNotExercised || !rec.Verdict.Failed() || !strings.Contains(rec.ResumeDetail, "ended after 2 content chunks") {
			t.Errorf("verdict %s (%s)", rec.Verdict, rec.ResumeDetail)
		}
	})
	t.Run("duplicate drill: tail without the reconnects", func(t *testing.T) {
		t.Parallel()
		srv := refserver.NewUnstarted(drillSchedule())
		srv.ResumeDelay = 300 * time.Millisecond
		reftest.Serve(t, srv)
		res := runDrill(t, srv, Drill{Name: DrillDuplicate})
		rec := res.Record
		// New chunks: 1-3, 4-6, then 7-12; the user waited from the first
		// drop to chunk 4 and from the second drop to chunk 7 (the third
		// connection brought only re-deliveries).
		var waited float64
		for _, sp := range res.Timeline.ResumeSpans() {
			waited += float64(sp.End.Sub(sp.Drop)) / 1e6
		}
		if len(res.Timeline.ResumeSpans()) != 2 || waited < 900 {
			t.Fatalf("spans %d, waited %.0f ms", len(res.Timeline.ResumeSpans()), waited)
		}
		if got := *rec.TailMs - *rec.TailExclReconnectMs; got < waited-1 || got > waited+1 {
			t.Errorf("tail - tail_excl_reconnect = %.1f ms, the resume spans add to %.1f ms", got, waited)
		}
	})
}

func TestSecretsStayHome(t *testing.T) {
	t.Parallel()
	const key = "sk-review-0123456789abcdef"
	t.Run("no redirect to another host", func(t *testing.T) {
		t.Parallel()
		hit := make(chan string, 1)
		other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hit <- r.Header.Get("X-Api-Key") }))
		defer other.Close()
		first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.URL+"/steal", http.StatusTemporaryRedirect)
		}))
		defer first.Close()
		h := http.Header{}
		h.Set("X-Api-Key", key)
		rec := runProbe(t, dialect.Target{Name: "r", URL: first.URL, Dialect: "anthropic-messages", Header: h}, "short", 3*time.Second).Record
		select {
		case got := <-hit:
			t.Fatalf("the other host got a request (x-api-key %q)", got)
		default:
		}
		if rec.Outcome != UpstreamError || !strings.Contains(rec.Error, "redirect to another host") {
			t.Errorf("outcome %s error %q", rec.Outcome, rec.Error)
		}
	})
	t.Run("an error body that echoes the key", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(401)
			io.WriteString(w, "invalid key: "+r.Header.Get("Authorization"))
		}))
		defer srv.Close()
		h := http.Header{}
		h.Set("Authorization", "Bearer "+key)
		rec := runProbe(t, dialect.Target{Name: "r", URL: srv.URL, Dialect: "openai-chat", Header: h}, "short", 3*time.Second).Record
		if strings.Contains(rec.Error, key) || !strings.Contains(rec.Error, "[redacted]") {
			t.Errorf("error %q", rec.Error)
		}
	})
}
