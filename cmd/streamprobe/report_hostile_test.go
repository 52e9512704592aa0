package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/internal/testenv/leak"
)

// vmPass is the password of the VictoriaMetrics URL the hostile tests give
// report -vm: nothing report writes may show a piece of it.
const vmPass = "vm-s3cret-0123456789abcdef"

// hostileVM answers every query with body(query): a stand-in for a
// compromised or broken VictoriaMetrics (a real one never answers so).
func hostileVM(t *testing.T, body func(q string) string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, body(r.URL.Query().Get("query")))
	}))
	t.Cleanup(srv.Close)
	return strings.Replace(srv.URL, "http://", "http://probe:"+vmPass+"@", 1)
}

// reportConfig is a config naming target t for report.
func reportConfig(t *testing.T, targets ...string) string {
	t.Helper()
	var b strings.Builder
	for _, n := range targets {
		fmt.Fprintf(&b, "[[target]]\nname = %q\nurl = \"http://api.example\"\nsamples = [\"short\"]\n", n)
	}
	return writeConfig(t, b.String())
}

// hostileText is what a hostile VictoriaMetrics puts in its strings: the
// password of the URL it was asked at, as it is and in its Basic form,
// and terminal controls (ESC, BEL, right-to-left override).
func hostileText() string {
	basic := base64.StdEncoding.EncodeToString([]byte("probe:" + vmPass))
	return "denied \x1b[31m" + vmPass + "\x07 Basic " + basic + " \u202eevil"
}

// report -vm against a VictoriaMetrics whose error, and whose label
// values, carry the URL's password and terminal controls: no output of
// report (its error, its text, JSON, JUnit and HTML) shows a piece of
// the password or a raw control character.
func TestReportVMHostileStrings(t *testing.T) {
	for _, tt := range []struct {
		name string
		body func(q string) string
	}{
		{"error", func(string) string {
			return `{"status":"error","errorType":"bad_data","error":` + jsonString(hostileText()) + `}`
		}},
		{"labels", func(q string) string {
			if !strings.Contains(q, "streamprobe_runs_total{drill=\"none\"}") {
				return `{"status":"success","data":{"resultType":"vector","result":[]}}`
			}
			return `{"status":"success","data":{"resultType":"vector","result":[{"metric":{"region":` + jsonString(hostileText()) +
				`,"host":` + jsonString(hostileText()) + `,"target":"api","sample":"short","outcome":` + jsonString(hostileText()) + `},"value":[1,"3"]}]}}`
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			vm := hostileVM(t, tt.body)
			cfg := reportConfig(t, "api")
			dir := t.TempDir()
			outputs := map[string]string{}
			_, outputs["text"], outputs["stderr"] = runCmd(t, "report", "-config", cfg, "-vm", vm, "-junit", dir+"/r.xml", "-html", dir+"/r.html")
			_, outputs["json"], outputs["json stderr"] = runCmd(t, "report", "-config", cfg, "-vm", vm, "-json")
			for _, f := range []string{"r.xml", "r.html"} {
				if b, err := os.ReadFile(filepath.Join(dir, f)); err == nil {
					outputs[f] = string(b)
				}
			}
			if tt.name == "labels" && !strings.Contains(outputs["text"], "api") {
				t.Fatalf("no card for the target:\n%s\n%s", outputs["text"], outputs["stderr"])
			}
			if tt.name == "error" && !strings.Contains(outputs["stderr"], "denied") {
				t.Fatalf("the error is not named:\n%s", outputs["stderr"])
			}
			for name, out := range outputs {
				if p := leak.Any(out, vmPass); p != "" {
					t.Errorf("%s shows %q:\n%s", name, p, out)
				}
				if p := leak.Any(out, "probe:"+vmPass); p != "" {
					t.Errorf("%s shows %q:\n%s", name, p, out)
				}
				if strings.ContainsAny(out, "\x1b\x07\u202e") {
					t.Errorf("%s holds a raw control character:\n%q", name, out)
				}
			}
		})
	}
}

// jsonString is s as a JSON string.
func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteString(`\` + string(r))
		case r < 0x20:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// Counters that overflowed or were forged (+Inf, 1e308, NaN, negative)
// are named as bad data and never judged: no "-9223372036854775808 runs",
// no "-0%", no NaN or -Inf.
func TestReportVMNonFiniteCounters(t *testing.T) {
	vm := hostileVM(t, func(q string) string {
		if !strings.Contains(q, "streamprobe_runs_total{drill=\"none\"}") && !strings.Contains(q, "stalled_runs_total") {
			return `{"status":"success","data":{"resultType":"vector","result":[]}}`
		}
		var res []string
		for i, v := range []string{"+Inf", "1e308", "NaN", "-5", "2"} {
			res = append(res, fmt.Sprintf(`{"metric":{"region":"eu","target":"api","sample":"short","outcome":"o%d"},"value":[1,%q]}`, i, v))
		}
		return `{"status":"success","data":{"resultType":"vector","result":[` + strings.Join(res, ",") + `]}}`
	})
	cfg := reportConfig(t, "api")
	_, out, errb := runCmd(t, "report", "-config", cfg, "-vm", vm)
	for _, bad := range []string{"-9223372036854775808", "NaN", "Inf", "-0%"} {
		if strings.Contains(out, bad) {
			t.Errorf("the card shows %q:\n%s", bad, out)
		}
	}
	if !strings.Contains(errb, "bad data: 8 value(s)") || !strings.Contains(out, "2 runs") {
		t.Errorf("bad data not named, or the good series not counted:\n%s\n%s", out, errb)
	}
}

// A VictoriaMetrics that answers a hundred thousand drill labels and
// thousands of samples for one target: the card lists at most
// scorecard.MaxKinds drills and samples, the output stays small, and the
// skipped series are counted.
func TestReportVMBoundsTheCard(t *testing.T) {
	vm := hostileVM(t, func(q string) string {
		var b strings.Builder
		b.WriteString(`{"status":"success","data":{"resultType":"vector","result":[`)
		n := 0
		add := func(labels string) {
			if n > 0 {
				b.WriteByte(',')
			}
			n++
			fmt.Fprintf(&b, `{"metric":{%s},"value":[1,"1"]}`, labels)
		}
		switch {
		case strings.Contains(q, `drill!="none"`):
			for i := range 100_000 {
				add(fmt.Sprintf(`"region":"eu","target":"api","drill":"d%d"`, i))
			}
		case strings.Contains(q, "streamprobe_runs_total"):
			for i := range 5_000 {
				add(fmt.Sprintf(`"region":"eu","target":"api","sample":"s%d","outcome":"success"`, i))
			}
		}
		b.WriteString(`]}}`)
		return b.String()
	})
	cfg := reportConfig(t, "api")
	_, out, errb := runCmd(t, "report", "-config", cfg, "-vm", vm, "-json")
	if len(out) > 512<<10 {
		t.Errorf("a %d-byte report for one target", len(out))
	}
	if d := strings.Count(out, `"drill":"d`); d > 16 {
		t.Errorf("%d drills listed", d)
	}
	if !strings.Contains(errb, "past the report's bounds") {
		t.Errorf("the skipped series are not counted:\n%s", errb)
	}
}

// report stops within a second of a SIGINT (its context ends), saying so:
// against a VictoriaMetrics that keeps streaming an answer, and over a
// large results log.
func TestReportStopsOnInterrupt(t *testing.T) {
	stream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"status":"success","data":{"resultType":"vector","result":[`)
		for i := 0; r.Context().Err() == nil; i++ {
			if i > 0 {
				fmt.Fprint(w, ",")
			}
			fmt.Fprintf(w, `{"metric":{"region":"eu","target":"api","sample":"short","outcome":"o%d"},"value":[1,"1"]}`, i)
			if i%100 == 0 {
				w.(http.Flusher).Flush()
				time.Sleep(time.Millisecond)
			}
		}
	}))
	defer stream.Close()
	big := filepath.Join(t.TempDir(), "big.jsonl")
	line := `{"request_id":"r","target":"api","sample":"short","drill":"none","outcome":"success","chunks":1,"gaps":{"count":0},"started_at":"2026-12-03T10:00:00Z"}` + "\n"
	if err := os.WriteFile(big, []byte(strings.Repeat(line, 2_000_000)), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := reportConfig(t, "api")
	for name, source := range map[string][]string{"vm": {"-vm", stream.URL}, "log": {"-log", big}} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(200*time.Millisecond, cancel)
			var out, errb strings.Builder
			start := time.Now()
			code := cmdReport(ctx, append([]string{"-config", cfg}, source...), &out, &errb)
			took := time.Since(start)
			t.Logf("stopped %v after the start (the interrupt came at 200ms)", took)
			if code != exitFail || !strings.Contains(errb.String(), "interrupted") {
				t.Errorf("exit %d, stderr %q", code, errb.String())
			}
			// A second is the promise on a quiet machine; a busy one may
			// add its own delay, so the bound here is wider.
			if took > 10*time.Second {
				t.Errorf("report took %v to stop", took)
			}
		})
	}
}

// Runs of targets the config does not name are counted and skipped: a
// log of 20,000 unknown targets makes no card and says how many it
// skipped; -all-targets makes their cards.
func TestReportSkipsUnknownTargets(t *testing.T) {
	log := filepath.Join(t.TempDir(), "r.jsonl")
	var b strings.Builder
	for i := range 20_000 {
		fmt.Fprintf(&b, `{"request_id":"r%d","target":"t%d","sample":"short","drill":"none","outcome":"success","chunks":1,"tfc_ms":10,"gaps":{"count":0},"started_at":"2026-12-03T10:00:00Z"}`+"\n", i, i)
	}
	fmt.Fprintf(&b, `{"request_id":"k","target":"api","sample":"short","drill":"none","outcome":"success","chunks":1,"tfc_ms":10,"gaps":{"count":0},"started_at":"2026-12-03T10:00:00Z"}`+"\n")
	if err := os.WriteFile(log, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := reportConfig(t, "api")
	_, out, errb := runCmd(t, "report", "-config", cfg, "-log", log)
	if strings.Count(out, "target t") != 0 || !strings.Contains(out, "target api") {
		t.Errorf("cards:\n%.2000s", out)
	}
	if !strings.Contains(errb, "skipped 20000 run(s) of 1000 or more target(s) the config does not name") {
		t.Errorf("stderr: %s", errb)
	}
	_, out, _ = runCmd(t, "report", "-config", cfg, "-log", log, "-all-targets")
	if n := strings.Count(out, "target t"); n < 1000 {
		t.Errorf("-all-targets: %d cards of unknown targets", n)
	}
}
