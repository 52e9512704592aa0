package main

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/streamprobe/streamprobe/probe"
)

// maxOnceRSSKiB is the documented bound on the peak RSS of one `once` run,
// whatever the server sends (docs/how-it-works.md "Bounded memory").
const maxOnceRSSKiB = 128 << 10

// The peak RSS of the real binary stays bounded against a server that
// sends 10M tiny events, and against a gzip bomb that expands to 15M: the
// run stops at max_chunks with a clear protocol_error.
func TestOnceMemoryIsBounded(t *testing.T) {
	bin := buildBinary(t)
	tiny := func(w io.Writer, n int) {
		bw := bufio.NewWriterSize(w, 64<<10)
		for i := 0; i < n; i++ {
			if _, err := bw.WriteString("data: x\n\n"); err != nil {
				return
			}
		}
		bw.Flush()
	}
	for _, tt := range []struct {
		name  string
		serve http.HandlerFunc
	}{
		{"10M tiny events", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			tiny(w, 10_000_000)
		}},
		{"gzip bomb of 15M events", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.Header().Set("Content-Encoding", "gzip")
			zw, _ := gzip.NewWriterLevel(w, gzip.BestCompression)
			tiny(zw, 15_000_000)
			zw.Close()
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ts := httptest.NewServer(tt.serve)
			defer ts.Close()
			cmd := exec.Command(bin, "once", "-url", ts.URL, "-json", "-end-data", "[DONE]")
			out, _ := cmd.Output()
			var rec probe.Record
			if err := json.Unmarshal(out, &rec); err != nil {
				t.Fatalf("record: %v\n%s", err, out)
			}
			if rec.Outcome != probe.ProtocolError || !strings.Contains(rec.Error, "more than 100000 content chunks") || rec.Chunks != probe.DefaultMaxChunks {
				t.Errorf("outcome %s (%s), chunks %d", rec.Outcome, rec.Error, rec.Chunks)
			}
			if strings.HasPrefix(tt.name, "gzip") && (rec.WireBytes == nil || *rec.WireBytes >= rec.Bytes) {
				t.Errorf("wire_bytes %v, bytes %d: the compressed bytes are counted apart", rec.WireBytes, rec.Bytes)
			}
			rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss // KiB on Linux
			t.Logf("peak RSS %d KiB, chunks %d, bytes %d", rss, rec.Chunks, rec.Bytes)
			if rss > maxOnceRSSKiB {
				t.Errorf("peak RSS %d KiB, over the documented %d KiB", rss, maxOnceRSSKiB)
			}
		})
	}
}
