// Package aisdkpeer runs the AI SDK (the npm package ai, installed here
// from package-lock.json with npm ci) as a real peer over loopback: a
// Node chat route serving streamText(...).toUIMessageStreamResponse()
// and a text route serving .toTextStreamResponse(), over the SDK's mock
// language model, paced by simulateReadableStream (server.mjs). Tests of
// the ai-sdk-ui and text dialects start it with Start.
package aisdkpeer

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/internal/testenv/nodepeer"
)

// The pacing server.mjs gives the mock model's stream.
const (
	InitialDelay = 150 * time.Millisecond
	ChunkDelay   = 40 * time.Millisecond
)

// Peer is a running server.mjs.
type Peer struct {
	// URL is the chat route, http://127.0.0.1:PORT/api/chat; TextURL the
	// text route, http://127.0.0.1:PORT/api/text.
	URL, TextURL string
	base         string
}

// Sent is one write of the last answer, as server.mjs logged it: At in ms
// since the request arrived, and the bytes written.
type Sent struct {
	At   float64 `json:"at"`
	Data string  `json:"data"`
}

// Dir is the folder of server.mjs and its node_modules.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// Start runs the peer for the test and stops it at cleanup. Without node
// or the installed SDK (npm ci in this folder) the test is skipped, but
// under CI (CI=true), where .ci/run installs both, it fails.
func Start(t testing.TB) *Peer {
	t.Helper()
	base := nodepeer.Start(t, "AI SDK", Dir(), "server.mjs", "ai")
	return &Peer{URL: base + "/api/chat", TextURL: base + "/api/text", base: base}
}

// Log returns the writes of the last answer the peer finished.
func (p *Peer) Log() ([]Sent, error) {
	resp, err := http.Get(p.base + "/log")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out []Sent
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, fmt.Errorf("the peer's log: %w", err)
	}
	return out, nil
}
