// Package mcppeer runs real MCP server libraries as peers over loopback
// for the mcp dialect's tests. For 2025-11-25 (sessions, resume): the
// TypeScript SDK (@modelcontextprotocol/sdk, installed here from
// package-lock.json with npm ci; server.mjs) started by StartTS, and the Go
// SDK (github.com/modelcontextprotocol/go-sdk, a test-only module
// dependency) started by gosdk.Start in the package below. For 2026-07-28
// (stateless, per-request _meta and headers, server/discover): the
// TypeScript SDK v2 (@modelcontextprotocol/server, tsv2/) started by
// StartTS2, the Go SDK with Stateless = true (gosdk.StartStateless), and
// github.com/mark3labs/mcp-go v1.2.1 with tasks (mcpgo.Start; its v0.58.0
// too, for 2025-11-25), a module of its own run as a child process. Only
// tests import the packages below. All serve the same tool, `progress`
// (arguments `steps`, `interval_ms`, `close_after`, `retry_ms`, `text`),
// and log every HTTP exchange with the server's own write times, so a test
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
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/internal/testenv/nodepeer"
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
	// Version, when set, is the MCP protocol version a client pins with
	// the peer (a 2025 test of a library that speaks 2026-07-28 too).
	Version string
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
	// The 2026-07-28 standard request headers (SEP-2243), as received.
	ProtocolVersion string `json:"protocol_version"`
	MCPMethod       string `json:"mcp_method"`
	MCPName         string `json:"mcp_name"`
	Status          int    `json:"status"`
	Writes          []Sent `json:"writes"`
	Ended           bool   `json:"ended"`
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

// Event is one SSE event a peer wrote, with the time of its write (or,
// in the tests' own reader, one a client read).
type Event struct {
	At    float64
	Name  string // the event field
	ID    string
	Retry string
	Data  string
	// HasData: a data line came (a priming event's data is empty).
	HasData bool
}

// Field adds one line of an SSE event to e and reports whether it was a
// field the tests read (a comment or another field is not).
func (e *Event) Field(line string) bool {
	if strings.HasPrefix(line, ":") {
		return false
	}
	k, v, _ := strings.Cut(line, ":")
	v = strings.TrimPrefix(v, " ")
	switch k {
	case "event":
		e.Name = v
	case "id":
		e.ID = v
	case "retry":
		e.Retry = v
	case "data":
		if e.HasData {
			e.Data += "\n"
		}
		e.Data += v
		e.HasData = true
	default:
		return false
	}
	return true
}

// Events parses the exchange's writes as SSE events (comments dropped).
func (e Exchange) Events() []Event {
	var out []Event
	for _, w := range e.Writes {
		for _, block := range strings.Split(w.Data, "\n\n") {
			ev := Event{At: w.At}
			fields := 0
			for _, line := range strings.Split(block, "\n") {
				if ev.Field(line) {
					fields++
				}
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
// installs both, it fails; its stderr is shown when the test fails.
func StartTS(t testing.TB) *Peer {
	t.Helper()
	base := nodepeer.Start(t, "MCP TypeScript SDK", Dir(), "server.mjs", "@modelcontextprotocol/sdk")
	return &Peer{Name: "typescript-sdk", URL: base + "/mcp", Log: func() ([]Exchange, error) { return GetLog(base + "/log") }}
}

// StartTS2 runs the TypeScript SDK v2 peer (tsv2/server.mjs:
// @modelcontextprotocol/server with @modelcontextprotocol/node, serving
// 2026-07-28 statelessly and 2025-era traffic through the SDK's stateless
// fallback) for the test and stops it at cleanup, as StartTS does.
// ?json=1 on the URL answers application/json, ?strict=1 refuses
// 2025-era traffic.
func StartTS2(t testing.TB) *Peer {
	t.Helper()
	base := nodepeer.Start(t, "MCP TypeScript SDK v2", filepath.Join(Dir(), "tsv2"), "server.mjs", "@modelcontextprotocol/server")
	return &Peer{Name: "typescript-sdk-v2", URL: base + "/mcp", Log: func() ([]Exchange, error) { return GetLog(base + "/log") }}
}

// GetLog reads a child peer's log (GET /log, a JSON array of Exchange).
func GetLog(url string) ([]Exchange, error) {
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
