// Package langgraphpeer runs the LangGraph JS API server
// (@langchain/langgraph-api, installed here from package-lock.json with
// npm ci) as a real peer over loopback: startServer, the function
// `langgraph-cli dev` runs, in memory, with one graph (graph.mjs, assistant
// "agent") over a fake streaming chat model from @langchain/core. Tests of
// the langgraph dialect start it with Start.
//
// What the server does on a rejoin is pinned, with the library's source
// lines, by the tests in this folder (peer_test.go); docs/dialects.md says
// it in prose.
package langgraphpeer

import (
	"encoding/json"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/internal/testenv/nodepeer"
)

// The graph's pacing and answers (graph.mjs): the fake model streams its
// answer one character at a time, Sleep apart.
const (
	Sleep       = 30 * time.Millisecond
	ShortAnswer = "Paris."
	LongAnswer  = "TCP opens with SYN, SYN-ACK, ACK; then data."
)

// Peer is a running server.mjs.
type Peer struct {
	// URL is the server's base, http://127.0.0.1:PORT.
	URL string
}

// Exchange is one HTTP request the server answered, as server.mjs logged
// it: Start on the peer's clock (ms), each write with its time in ms
// since the request arrived, and when the response ended (0 while open).
type Exchange struct {
	Start       float64 `json:"start"`
	Method      string  `json:"method"`
	Path        string  `json:"path"`
	LastEventID string  `json:"last_event_id"`
	Status      int     `json:"status"`
	Writes      []Sent  `json:"writes"`
	EndAt       float64 `json:"end_at"`
}

// Sent is one write of an exchange.
type Sent struct {
	At   float64 `json:"at"`
	Data string  `json:"data"`
}

// Event is one SSE event of an exchange, with the time of its write.
type Event struct {
	At          float64
	Name, ID    string
	Data        string
	HasID       bool
	MessageText string // messages events: the chunk's content
}

// Events parses the exchange's writes as SSE events.
func (e Exchange) Events() []Event {
	var out []Event
	var cur Event
	fields, hasData := 0, false
	for _, w := range e.Writes {
		for _, line := range strings.SplitAfter(w.Data, "\n") {
			line = strings.TrimSuffix(line, "\n")
			k, v, _ := strings.Cut(line, ":")
			v = strings.TrimPrefix(v, " ")
			switch {
			case line == "" && fields > 0:
				cur.At = w.At
				if cur.Name == "messages" {
					var tuple []struct {
						Content any `json:"content"`
					}
					if json.Unmarshal([]byte(cur.Data), &tuple) == nil && len(tuple) > 0 {
						cur.MessageText, _ = tuple[0].Content.(string)
					}
				}
				out = append(out, cur)
				cur, fields, hasData = Event{}, 0, false
			case k == "event":
				cur.Name, fields = v, fields+1
			case k == "id":
				cur.ID, cur.HasID, fields = v, true, fields+1
			case k == "data":
				if hasData {
					cur.Data += "\n"
				}
				cur.Data += v
				hasData, fields = true, fields+1
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

// Start runs the peer for the test and stops it at cleanup. Without node
// or the installed server (npm ci in this folder) the test is skipped, but
// under CI (CI=true), where .ci/run installs both, it fails.
func Start(t testing.TB) *Peer {
	t.Helper()
	return &Peer{URL: nodepeer.Start(t, "LangGraph API", Dir(), "server.mjs", "@langchain/langgraph-api")}
}

// Log returns every exchange so far (the newest 500), oldest first.
func (p *Peer) Log() ([]Exchange, error) {
	var out []Exchange
	err := nodepeer.GetJSON(p.URL+"/_log", &out)
	return out, err
}
