// Package resumablepeer runs an AI SDK chat route with resumable streams
// as a real peer over loopback (server.mjs: the AI SDK's "chatbot resume
// streams" pattern over the npm packages ai and resumable-stream,
// installed here from package-lock.json with npm ci), on two real Redis
// servers (Debian's redis-server, started by redistest): one the chats'
// store, one resumable-stream's. Tests of the ai-sdk-ui dialect's resume
// start it with Start.
//
// What the route does on a resume is pinned, with the libraries' source
// lines, by the tests in this folder (peer_test.go); docs/drills.md says
// it in prose.
package resumablepeer

import (
	"net/http"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/internal/testenv/nodepeer"
	"github.com/streamprobe/streamprobe/internal/testenv/redistest"
)

// The pacing server.mjs gives the mock model's stream, and the text
// deltas of each answer.
const (
	InitialDelay = 150 * time.Millisecond
	ChunkDelay   = 40 * time.Millisecond
	LongDeltas   = 30
	ShortDeltas  = 6
)

// Peer is a running server.mjs.
type Peer struct {
	// URL is the chat route, http://127.0.0.1:PORT/api/chat.
	URL  string
	base string
	// Stop ends this instance now (a deployment's instance that dies).
	Stop func()
}

// Store is the two Redis servers an app's instances share: the chats
// and the resumable streams.
type Store struct{ Chats, Streams *redistest.Redis }

// NewStore starts the two Redis servers.
func NewStore(t testing.TB) *Store {
	t.Helper()
	return &Store{Chats: redistest.Start(t), Streams: redistest.Start(t)}
}

// Exchange is one request the route answered, as server.mjs logged it.
type Exchange struct {
	// Start is when the request came, in ms on the peer's clock.
	Start  float64 `json:"start"`
	Method string  `json:"method"`
	Path   string  `json:"path"`
	Chat   string  `json:"chat"`
	Status int     `json:"status"`
	Writes []Sent  `json:"writes"`
	EndAt  float64 `json:"end_at"`
	// SavedAt and ClearedAt (POST): when the chat's active stream id was
	// saved (consumeSseStream) and cleared (onFinish), ms since the
	// request came; 0 not yet.
	SavedAt   float64 `json:"saved_at"`
	ClearedAt float64 `json:"cleared_at"`
	StreamID  string  `json:"stream_id"`
	// Active (GET): the chat named an active stream.
	Active bool   `json:"active"`
	Error  string `json:"error"`
}

// Sent is one write: At in ms since the request came, and the bytes.
type Sent struct {
	At   float64 `json:"at"`
	Data string  `json:"data"`
}

// Dir is the folder of server.mjs and its node_modules.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// Start runs an instance of the route on store for the test and stops it
// at cleanup. Without node or the installed packages (npm ci in this
// folder), or redis-server, the test is skipped, but under CI (CI=true),
// where .ci/run installs them, it fails.
func Start(t testing.TB, store *Store) *Peer {
	t.Helper()
	p := nodepeer.StartProc(t, "AI SDK resumable route", Dir(), "server.mjs", "resumable-stream",
		[]string{"CHAT_REDIS_URL=" + store.Chats.URL, "REDIS_URL=" + store.Streams.URL})
	return &Peer{URL: p.URL + "/api/chat", base: p.URL, Stop: p.Stop}
}

// Log returns the requests so far (the newest 500), oldest first.
func (p *Peer) Log() ([]Exchange, error) {
	var out []Exchange
	err := nodepeer.GetJSON(p.base+"/log", &out)
	return out, err
}

// Wait polls the log (up to a minute) until ok holds, and returns it.
func (p *Peer) Wait(t testing.TB, what string, ok func([]Exchange) bool) []Exchange {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		log, err := p.Log()
		if err != nil {
			t.Fatal(err)
		}
		if ok(log) {
			return log
		}
		if time.Now().After(deadline) {
			t.Fatalf("the peer's log never showed %s: %+v", what, log)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Post returns the POST of chat in log.
func Post(log []Exchange, chat string) (Exchange, bool) {
	for _, e := range log {
		if e.Method == http.MethodPost && e.Chat == chat {
			return e, true
		}
	}
	return Exchange{}, false
}
