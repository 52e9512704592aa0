package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// controlIDServer is an SSE server whose event ids hold terminal controls
// and a bidi override: ids with ESC, OSC and BEL (which no header may
// carry back, so the resume cannot be sent), and ids with C1 CSI (U+009B)
// and U+202E (which can). A resume replays from the sent id, inclusive
// (the off-by-one duplicate), so a drill's detail quotes the ids.
func controlIDServer(t *testing.T) *httptest.Server {
	ids := map[string]string{"/esc": "\x1b]0;owned\x07\x1b[2J-", "/c1": "\u009b2J\u202e-"}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		prefix := ids[r.URL.Path]
		from := 0
		if last := r.Header.Get("Last-Event-ID"); last != "" {
			fmt.Sscanf(strings.TrimPrefix(last, prefix), "%d", &from)
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for i := max(from, 1); i <= 8; i++ {
			fmt.Fprintf(w, "id: %s%d\ndata: chunk %d\n\n", prefix, i, i)
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv
}

// check's and report's text (and once's, whose records report reads)
// show no control character (ESC, OSC, BEL, CR, C1 CSI) nor a bidi
// override when the server's ids hold them. Each layer (the probe's
// show, the record's gate, the outputs' shown, report's reading) escapes
// them; the test fails when all of them are undone.
func TestCheckAndReportTextShowNoControls(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	srv := controlIDServer(t)
	dir := t.TempDir()
	var cfg strings.Builder
	for _, name := range []string{"esc", "c1"} {
		fmt.Fprintf(&cfg, "[[target]]\nname = %q\nurl = \"%s/%s\"\ndialect = \"sse\"\nend_data = \"[DONE]\"\nids = \"opaque\"\ndrills = [\"duplicate\"]\ndrop_after = 2\nevery = \"1h\"\njitter = \"0s\"\ntimeout = \"5s\"\n", name, srv.URL, name)
	}
	cfgPath := writeConfig(t, cfg.String())
	outputs := map[string]string{}
	_, outputs["check text"], outputs["check stderr"] = runCmd(t, "check", "-config", cfgPath, "-runs", "1")
	if !strings.Contains(outputs["check text"], "target esc") || !strings.Contains(outputs["check text"], "target c1") {
		t.Fatalf("check did not probe both targets:\n%s\n%s", outputs["check text"], outputs["check stderr"])
	}
	var log bytes.Buffer
	for _, name := range []string{"esc", "c1"} {
		_, rec, stderr := runCmd(t, "once", "-url", srv.URL+"/"+name, "-dialect", "sse", "-end-data", "[DONE]", "-ids", "opaque", "-drill", "duplicate", "-drop-after", "2", "-json")
		outputs["once "+name+" stderr"] = stderr
		if err := json.Compact(&log, []byte(rec)); err != nil {
			t.Fatalf("once %s: %v: %q", name, err, rec)
		}
		log.WriteByte('\n')
		_, outputs["once "+name+" text"], _ = runCmd(t, "once", "-url", srv.URL+"/"+name, "-dialect", "sse", "-end-data", "[DONE]", "-ids", "opaque", "-drill", "duplicate", "-drop-after", "2")
	}
	logPath := filepath.Join(dir, "results.jsonl")
	if err := os.WriteFile(logPath, log.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	// The records are once's, of a target the config does not name.
	_, outputs["report text"], outputs["report stderr"] = runCmd(t, "report", "-config", cfgPath, "-log", logPath, "-all-targets")
	// The ids reach the texts (escaped): otherwise the test shows nothing.
	for _, name := range []string{"check text", "report text"} {
		if !strings.Contains(outputs[name], "replayed id") || !strings.Contains(outputs[name], "2J") {
			t.Fatalf("%s does not quote the ids:\n%s\n%s", name, outputs[name], outputs[strings.Replace(name, "text", "stderr", 1)])
		}
	}
	for name, out := range outputs {
		t.Logf("%s:\n%s", name, out)
		if i := strings.IndexAny(out, "\x1b\x07\r\u009b\u202e"); i >= 0 {
			t.Errorf("%s holds a control character: ...%q...", name, out[max(0, i-80):min(len(out), i+40)])
		}
	}
}
