package daemon

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/internal/refserver"
	"github.com/streamprobe/streamprobe/probe"
)

// Every record in the results log carries the config's host, region and
// labels, so the logs of several hosts can be merged.
func TestResultsLogRecordsCarryOrigin(t *testing.T) {
	srv := refserver.NewServer(refserver.Events(refserver.Ms(10, 20, 30), 40*time.Millisecond))
	defer srv.Close()
	results := filepath.Join(t.TempDir(), "results.jsonl")
	d, _ := testDaemon(t, fmt.Sprintf(`results_log = %q
host = "edge-7"
region = "eu-west"
[labels]
team = "search"
[[target]]
name = "t"
url = %q
end_data = ""
samples = ["short"]
every = "200ms"
jitter = "0s"
`, results, srv.URL), nil)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx, nil) }()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if b, _ := os.ReadFile(results); bytes.Count(b, []byte("\n")) >= 2 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(results)
	sc := bufio.NewScanner(bytes.NewReader(b))
	n := 0
	for sc.Scan() {
		var r probe.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%q: %v", sc.Text(), err)
		}
		n++
		if r.Host != "edge-7" || r.Region != "eu-west" || r.Labels["team"] != "search" || len(r.Labels) != 1 {
			t.Errorf("record %d: host %q region %q labels %v", n, r.Host, r.Region, r.Labels)
		}
	}
	if n < 2 {
		t.Fatalf("%d records in the results log, want 2 or more:\n%s", n, b)
	}
	if !bytes.Contains(b, []byte(`"host":"edge-7","region":"eu-west","labels":{"team":"search"}`)) {
		t.Errorf("JSON names: %s", b)
	}
}
