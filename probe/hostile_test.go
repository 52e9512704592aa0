package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/internal/refserver"
	"github.com/streamprobe/streamprobe/internal/testenv/leak"
	"github.com/streamprobe/streamprobe/internal/testenv/reftest"
)

// idSchedule is a stream whose third event's id is id, closed by the
// server after it (the client resumes from that id), then the end.
func idSchedule(id string) []refserver.Step {
	var steps []refserver.Step
	for i, sid := range []string{"i1", "i2", id, "i4", "i5"} {
		steps = append(steps, refserver.Step{At: time.Duration(i) * 5 * time.Millisecond, ID: sid, Data: fmt.Sprintf("chunk %d", i)})
	}
	return append(steps, refserver.Step{At: 30 * time.Millisecond, Data: "[DONE]"})
}

func hostileTarget(url string) dialect.Target {
	return dialect.Target{Name: "t", URL: url, Dialect: "sse", EndData: "[DONE]", Header: http.Header{"Authorization": {"Bearer " + echoedKey}}}
}

// An event id that echoes the key, in every form, never shows it in the
// record: not in last_event_id, last_event_id_sent nor resume_detail.
func TestEchoedKeyInAnIDNeverShows(t *testing.T) {
	t.Parallel()
	for name, form := range leak.Encodings {
		for _, bug := range []refserver.Bug{refserver.Correct, refserver.Inclusive} {
			t.Run(fmt.Sprintf("%s bug %d", name, bug), func(t *testing.T) {
				t.Parallel()
				id := "k" + form(echoedKey)
				srv := reftest.Serve(t, &refserver.Server{Schedule: idSchedule(id), CloseAfter: 3, Bug: bug})
				ctx, cancel := context.WithTimeout(context.Background(), reftest.RunDeadline)
				defer cancel()
				rec := Run(ctx, hostileTarget(srv.URL), Options{Sample: dialect.Samples["long"], Drill: Drill{OpaqueIDs: true}}).Record
				if !rec.Resumed || rec.LastEventIDSent == "" {
					t.Fatalf("not resumed: %+v", rec)
				}
				if bug == refserver.Inclusive && rec.Verdict != VerdictDuplicate {
					t.Fatalf("verdict %s, want duplicate", rec.Verdict)
				}
				b, _ := json.Marshal(rec)
				if p := leak.Any(string(b), echoedKey); p != "" {
					t.Fatalf("the record shows %q: %s", p, b)
				}
				if !strings.Contains(rec.LastEventIDSent, "[redacted]") {
					t.Errorf("last_event_id_sent %q: want the key redacted", rec.LastEventIDSent)
				}
			})
		}
	}
}

// Ids of 8 KB (and of 1 MB with a larger max_event_size) leave a record
// line under MaxRecordLine: every field has its cap.
func TestHugeIDsLeaveABoundedRecord(t *testing.T) {
	t.Parallel()
	for _, size := range []int{8 << 10, 1 << 20} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			t.Parallel()
			var steps []refserver.Step
			for i := 0; i < 8; i++ {
				steps = append(steps, refserver.Step{At: time.Duration(i) * 5 * time.Millisecond, ID: fmt.Sprintf("%d%s", i, strings.Repeat("x", size)), Data: "c"})
			}
			steps = append(steps, refserver.Step{At: 50 * time.Millisecond, Data: "[DONE]"})
			for _, d := range []Drill{{Name: DrillDrop}, {Name: DrillDuplicate}, {Name: DrillStale}} {
				srv := reftest.Serve(t, &refserver.Server{Schedule: steps, Bug: refserver.Inclusive})
				tg := hostileTarget(srv.URL)
				tg.MaxEventSize = 4 << 20
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // megabyte ids, -race, a busy machine
				rec := Run(ctx, tg, Options{Sample: dialect.Samples["long"], Drill: d}).Record
				cancel()
				b, _ := json.Marshal(rec)
				if len(b) > MaxRecordLine {
					t.Errorf("%s drill: a %d-byte record line, over %d", d.Name, len(b), MaxRecordLine)
				}
				for _, f := range []struct {
					name string
					v    string
					cap  int
				}{{"last_event_id", rec.LastEventID, MaxRecordID}, {"last_event_id_sent", rec.LastEventIDSent, MaxRecordID},
					{"resume_detail", rec.ResumeDetail, MaxRecordDetail}, {"error", rec.Error, MaxRecordError}} {
					if len(f.v) > f.cap {
						t.Errorf("%s drill: %s is %d bytes, over %d", d.Name, f.name, len(f.v), f.cap)
					}
				}
				if rec.Verdict == "" {
					t.Errorf("%s drill: no verdict (%s)", d.Name, rec.Error)
				}
			}
		})
	}
}

// An id with a terminal's title and clear-screen sequences reaches the
// record with them made visible, never as control bytes.
func TestControlBytesInIDsAreVisible(t *testing.T) {
	t.Parallel()
	srv := reftest.Serve(t, &refserver.Server{Schedule: idSchedule("3\x1b]0;pwned\x07\x1b[2J\u202e"), CloseAfter: 3, Bug: refserver.Inclusive})
	ctx, cancel := context.WithTimeout(context.Background(), reftest.RunDeadline)
	defer cancel()
	rec := Run(ctx, hostileTarget(srv.URL), Options{Sample: dialect.Samples["long"], Drill: Drill{OpaqueIDs: true}}).Record
	// The id cannot be sent (unsendable_id): it shows in last_event_id and
	// the detail, never in last_event_id_sent.
	for name, v := range map[string]string{"last_event_id": rec.LastEventID, "resume_detail": rec.ResumeDetail} {
		if strings.ContainsAny(v, "\x1b\x07\u202e") {
			t.Errorf("%s %q holds control characters", name, v)
		}
		if !strings.Contains(v, `\x1b]0;pwned\x07`) {
			t.Errorf("%s %q: want the sequence visible", name, v)
		}
	}
}

// An id holding a byte that SSE allows and no HTTP header may carry is the
// server's resume defect, named at once: one request, no retries.
func TestUnsendableIDIsTheServersDefect(t *testing.T) {
	t.Parallel()
	for _, d := range []Drill{{}, {Name: DrillDrop}} {
		srv := reftest.Serve(t, &refserver.Server{Schedule: idSchedule("3\x01"), CloseAfter: 3})
		if d.Name != "" {
			srv = reftest.Serve(t, &refserver.Server{Schedule: idSchedule("3\x01")})
			d.DropAfter = 3
		}
		ctx, cancel := context.WithTimeout(context.Background(), reftest.RunDeadline)
		rec := Run(ctx, hostileTarget(srv.URL), Options{Sample: dialect.Samples["long"], Drill: d}).Record
		cancel()
		if rec.Verdict != VerdictUnsendableID || !rec.Verdict.Failed() || !strings.Contains(rec.ResumeDetail, "0x01") {
			t.Errorf("drill %q: verdict %s (%s), want unsendable_id naming the byte", d.Name, rec.Verdict, rec.ResumeDetail)
		}
		if rec.Outcome != UpstreamError || !strings.Contains(rec.Error, "no HTTP header may carry") {
			t.Errorf("drill %q: %s %q", d.Name, rec.Outcome, rec.Error)
		}
		if n := len(srv.Conns()); n != 1 {
			t.Errorf("drill %q: %d requests, want 1: the resume cannot be sent", d.Name, n)
		}
		if rec.LastEventIDSent != "" || rec.Resumed {
			t.Errorf("drill %q: last_event_id_sent %q, resumed %v: nothing was sent", d.Name, rec.LastEventIDSent, rec.Resumed)
		}
	}
}

// values_ms keeps the first MaxGapValues gaps; the run's own percentiles
// and count are over all of them.
func TestGapValuesAreCapped(t *testing.T) {
	gaps := make([]float64, MaxGapValues+500)
	chunks := make([]float64, len(gaps)+1)
	for i := range gaps {
		chunks[i+1] = chunks[i] + 1
	}
	var rec Record
	fillScores(&rec, Reduce(chunks, nil))
	if rec.Gaps.Count != len(gaps) || len(rec.Gaps.Values) != MaxGapValues || len(rec.Gaps.Every()) != len(gaps) {
		t.Errorf("count %d, %d values, %d in all; want %d, %d and %d", rec.Gaps.Count, len(rec.Gaps.Values), len(rec.Gaps.Every()), len(gaps), MaxGapValues, len(gaps))
	}
	if b, _ := json.Marshal(rec); bytes.Count(b, []byte(",")) > MaxGapValues+100 {
		t.Errorf("the record's JSON carries more than %d gaps", MaxGapValues)
	}
}
