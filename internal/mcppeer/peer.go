// Package mcppeer runs the official MCP SDKs as real peers over loopback
// for the mcp dialect's tests: the TypeScript SDK
// (@modelcontextprotocol/sdk, installed here from package-lock.json with
// npm ci; server.mjs) started by StartTS, and the Go SDK
// (github.com/modelcontextprotocol/go-sdk, a test-only module dependency)
// started by gosdk.Start in the package below, which nothing but tests
// imports. Both serve the same tool, `progress` (arguments `steps`,
// `interval_ms`, `close_after`, `text`; the Go peer also `retry_ms`), and
// log every HTTP exchange with the server's own write times, so a test
// compares the probe's readings with what the server sent and when.
//
// The endpoint is Peer.URL (/mcp). Query parameters on it choose the
// session's transport options: ?json=1 answers application/json,
// ?store=0 runs without an event store (no ids, no resume), and for the
// TypeScript peer ?retry=MS sets the priming event's retry: field.
//
// What each SDK does on resume is pinned, with the SDK source lines, by
// the tests in this folder (sdk_test.go); docs/mcp-peers.md says it in
// prose.
package mcppeer

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// The tool both peers serve and its defaults (steps 5, one report every
// 50 ms).
const (
	Tool            = "progress"
	DefaultSteps    = 5
	DefaultInterval = 50 * time.Millisecond
)

// Peer is a running SDK server.
type Peer struct {
	// Name is "typescript-sdk" or "go-sdk".
	Name string
	// URL is the MCP endpoint, http://127.0.0.1:PORT/mcp.
	URL string
	// Log returns every HTTP exchange the peer served so far, oldest first.
	Log func() ([]Exchange, error)
}

// Exchange is one HTTP request the peer served, as the peer logged it.
//
// The end of each tool call is logged as an Exchange too, of Method
// "TOOL", RPC "done" or "cancelled", the call's text argument in its one
// write: a test knows from it that a tool finished while no stream
// carried its answer.
type Exchange struct {
	Seq int `json:"seq"`
	// Start is when the request arrived, in ms on the peer's clock (the
	// same for every exchange of a peer).
	Start       float64 `json:"start"`
	Method      string  `json:"method"`
	RPC         string  `json:"rpc"` // the JSON-RPC method of a POST ("response" for a client's answer)
	Session     string  `json:"session"`
	LastEventID string  `json:"last_event_id"`
	Status      int     `json:"status"`
	Writes      []Sent  `json:"writes"`
	Ended       bool    `json:"ended"`
	// EndAt is when the response ended (the connection closed or the
	// handler returned), in ms since the request arrived; 0 while open.
	EndAt float64 `json:"end_at"`
}

// Sent is one write of an exchange: At in ms since the request arrived,
// and the bytes written.
type Sent struct {
	At   float64 `json:"at"`
	Data string  `json:"data"`
}

// Event is one SSE event a peer wrote, with the time of its write.
type Event struct {
	At    float64
	Name  string // the event field
	ID    string
	Retry string
	Data  string
}

// Events parses the exchange's writes as SSE events (comments dropped).
func (e Exchange) Events() []Event {
	var out []Event
	for _, w := range e.Writes {
		for _, block := range strings.Split(w.Data, "\n\n") {
			if strings.TrimSpace(block) == "" {
				continue
			}
			ev := Event{At: w.At}
			fields := 0
			for _, line := range strings.Split(block, "\n") {
				k, v, _ := strings.Cut(line, ":")
				v = strings.TrimPrefix(v, " ")
				switch k {
				case "event":
					ev.Name = v
				case "id":
					ev.ID = v
				case "retry":
					ev.Retry = v
				case "data":
					ev.Data = v
				default:
					continue
				}
				fields++
			}
			if fields > 0 {
				out = append(out, ev)
			}
		}
	}
	return out
}

// Dir is the folder of server.mjs and its node_modules.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// StartTS runs the TypeScript SDK peer (server.mjs) for the test and
// stops it at cleanup. Without node or the installed SDK (npm ci in this
// folder) the test is skipped, but under CI (CI=true), where .ci/run
// installs both, it fails.
func StartTS(t testing.TB) *Peer {
	t.Helper()
	dir := Dir()
	_, errNode := exec.LookPath("node")
	_, errSDK := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json"))
	if errNode != nil || errSDK != nil {
		msg := fmt.Sprintf("the MCP TypeScript SDK peer needs node and `npm ci` in %s (node: %v, sdk: %v)", dir, errNode, errSDK)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	cmd := exec.Command("node", "server.mjs")
	cmd.Dir = dir
	stderr := &lockedWriter{}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	port := make(chan int, 1)
	go func() {
		var first struct{ Port int }
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			json.Unmarshal(sc.Bytes(), &first)
		}
		port <- first.Port
		io.Copy(io.Discard, stdout)
		cmd.Wait()
		close(done)
	}()
	t.Cleanup(func() {
		stdin.Close() // server.mjs exits when its stdin ends
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			if s := stderr.String(); s != "" {
				t.Logf("the TypeScript SDK peer's stderr:\n%s", s)
			}
		}
	})
	select {
	case p := <-port:
		if p == 0 {
			<-done
			t.Fatalf("the TypeScript SDK peer printed no port; its stderr:\n%s", stderr.String())
		}
		base := fmt.Sprintf("http://127.0.0.1:%d", p)
		return &Peer{Name: "typescript-sdk", URL: base + "/mcp", Log: func() ([]Exchange, error) { return getLog(base + "/log") }}
	case <-time.After(60 * time.Second):
		t.Fatal("the TypeScript SDK peer did not start within 60 s")
	}
	return nil
}

func getLog(url string) ([]Exchange, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out []Exchange
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, fmt.Errorf("the peer's log: %w", err)
	}
	return out, nil
}

// lockedWriter collects a child's stderr for the test to show.
type lockedWriter struct {
	mu sync.Mutex
	b  strings.Builder
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.b.Len() < 1<<20 {
		w.b.Write(p)
	}
	return len(p), nil
}

func (w *lockedWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}
