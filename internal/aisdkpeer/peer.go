// Package aisdkpeer runs the AI SDK (the npm package ai, installed here
// from package-lock.json with npm ci) as a real peer over loopback: a
// Node chat route serving streamText(...).toUIMessageStreamResponse()
// over the SDK's mock language model, paced by simulateReadableStream
// (server.mjs). Tests of the ai-sdk-ui dialect start it with Start.
package aisdkpeer

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
	"testing"
	"time"
)

// The pacing server.mjs gives the mock model's stream.
const (
	InitialDelay = 150 * time.Millisecond
	ChunkDelay   = 40 * time.Millisecond
)

// Peer is a running server.mjs.
type Peer struct {
	// URL is the chat route, http://127.0.0.1:PORT/api/chat.
	URL  string
	base string
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
	dir := Dir()
	_, errNode := exec.LookPath("node")
	_, errSDK := os.Stat(filepath.Join(dir, "node_modules", "ai", "package.json"))
	if errNode != nil || errSDK != nil {
		msg := fmt.Sprintf("the AI SDK peer needs node and `npm ci` in %s (node: %v, sdk: %v)", dir, errNode, errSDK)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	cmd := exec.Command("node", "server.mjs")
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
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
	t.Cleanup(func() {
		stdin.Close() // server.mjs exits when its stdin ends
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
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
	select {
	case p := <-port:
		if p == 0 {
			t.Fatal("the AI SDK peer printed no port")
		}
		base := fmt.Sprintf("http://127.0.0.1:%d", p)
		return &Peer{URL: base + "/api/chat", base: base}
	case <-time.After(60 * time.Second):
		t.Fatal("the AI SDK peer did not start within 60 s")
	}
	return nil
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
