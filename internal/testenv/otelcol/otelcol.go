// Package otelcol runs the OpenTelemetry Collector's OTLP receiver as a
// test peer of the daemon's OTLP export: internal/testenv/otelpeer, a
// module of its own (go.opentelemetry.io/collector/receiver/otlpreceiver,
// pinned in its go.sum), built once per machine with the go command into
// the temporary directory, run on loopback for a test, stopped in
// t.Cleanup. It answers what the receiver got as OTLP JSON, and this
// package reads the parts the tests check. Debian's victoria-metrics
// (1.79) has no OTLP endpoint, hence this peer. A test helper, internal
// to streamprobe.
package otelcol

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Collector is a running peer.
type Collector struct {
	// URL is its OTLP/HTTP metrics endpoint (http://host:port/v1/metrics).
	URL string
	api string
}

// peerDir is the peer module's directory.
func peerDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "otelpeer")
}

// Bin builds the peer (once per content of its sources) and returns its
// path. A machine that cannot build it (no module proxy, no cache) skips
// the test, unless CI is set: .ci/run downloads its modules first.
func Bin(t testing.TB) string {
	t.Helper()
	dir := peerDir()
	h := sha256.New()
	for _, f := range []string{"go.mod", "go.sum", "collector/main.go"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		h.Write(b)
	}
	bin := filepath.Join(os.TempDir(), "streamprobe-otelcol-"+hex.EncodeToString(h.Sum(nil))[:16])
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	tmp := bin + fmt.Sprintf(".%d", os.Getpid())
	cmd := exec.Command("go", "build", "-o", tmp, "./collector")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=readonly", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("building the collector peer (internal/testenv/otelpeer): %v\n%s", err, out)
		}
		t.Skipf("the collector peer does not build here (%v); .ci/run downloads its modules:\n%s", err, out)
	}
	if err := os.Rename(tmp, bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

// Start runs the peer on loopback until the test ends.
func Start(t testing.TB) *Collector {
	t.Helper()
	cmd := exec.Command(Bin(t))
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close() // the peer ends when its stdin does
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	f := strings.Fields(line)
	if err != nil || len(f) != 3 || f[0] != "ready" {
		t.Fatalf("the collector peer did not start: %q %v", line, err)
	}
	go io.Copy(io.Discard, stdout)
	return &Collector{URL: "http://" + f[1] + "/v1/metrics", api: "http://" + f[2]}
}

// Export is one export request the receiver got.
type Export struct {
	ResourceMetrics []struct {
		Resource struct {
			Attributes []KV `json:"attributes"`
		} `json:"resource"`
		ScopeMetrics []struct {
			Scope struct {
				Name string `json:"name"`
			} `json:"scope"`
			Metrics []Metric `json:"metrics"`
		} `json:"scopeMetrics"`
	} `json:"resourceMetrics"`
}

// KV is an attribute.
type KV struct {
	Key   string `json:"key"`
	Value struct {
		String *string `json:"stringValue"`
		Int    *string `json:"intValue"`
		Bool   *bool   `json:"boolValue"`
	} `json:"value"`
}

// Text is the attribute's value as text.
func (kv KV) Text() string {
	switch {
	case kv.Value.String != nil:
		return *kv.Value.String
	case kv.Value.Int != nil:
		return *kv.Value.Int
	case kv.Value.Bool != nil:
		return strconv.FormatBool(*kv.Value.Bool)
	}
	return ""
}

// Attrs are attributes by key.
func Attrs(kvs []KV) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		m[kv.Key] = kv.Text()
	}
	return m
}

// Metric is one metric of an export: a histogram (explicit or
// exponential) or a sum.
type Metric struct {
	Name      string `json:"name"`
	Unit      string `json:"unit"`
	Histogram *struct {
		AggregationTemporality int     `json:"aggregationTemporality"`
		DataPoints             []Point `json:"dataPoints"`
	} `json:"histogram"`
	ExponentialHistogram *struct {
		DataPoints []Point `json:"dataPoints"`
	} `json:"exponentialHistogram"`
	Sum *struct {
		IsMonotonic bool    `json:"isMonotonic"`
		DataPoints  []Point `json:"dataPoints"`
	} `json:"sum"`
}

// Point is a data point (the fields of the kinds above).
type Point struct {
	Attributes     []KV      `json:"attributes"`
	Count          string    `json:"count"`
	Sum            *float64  `json:"sum"`
	ExplicitBounds []float64 `json:"explicitBounds"`
	BucketCounts   []string  `json:"bucketCounts"`
	Scale          *int      `json:"scale"`
	AsInt          string    `json:"asInt"`
}

// Received is every export request the receiver got, in order.
func (c *Collector) Received(t testing.TB) []Export {
	t.Helper()
	resp, err := http.Get(c.api + "/received")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out []Export
	dec := json.NewDecoder(resp.Body)
	for dec.More() {
		var e Export
		if err := dec.Decode(&e); err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}
