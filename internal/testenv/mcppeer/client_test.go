package mcppeer_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/internal/testenv/mcppeer"
)

// A raw Streamable HTTP client (net/http only, nothing of the probe): the
// tests pin what the SDK servers do on the wire.

const (
	latest = "2025-11-25"
	// wait bounds every read the tests expect to complete; it is never
	// slept, only waited on.
	wait = 20 * time.Second
)

type session struct {
	t       *testing.T
	url     string
	id      string
	version string
	http    *http.Client
}

// sseEvent is one dispatched SSE event (or an event with fields and no
// data line, which SSE does not dispatch: kept so tests see it).
type sseEvent = mcppeer.Event

// rpc is the JSON-RPC message an event carries.
type rpc struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		ProgressToken any     `json:"progressToken"`
		Progress      float64 `json:"progress"`
	} `json:"params"`
	Result *struct {
		Content []struct{ Text string } `json:"content"`
		IsError bool                    `json:"isError"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// msgOf is the JSON-RPC message e carries.
func msgOf(t *testing.T, e sseEvent) rpc {
	t.Helper()
	var m rpc
	if err := json.Unmarshal([]byte(e.Data), &m); err != nil {
		t.Fatalf("event %q: data is not JSON-RPC: %v", e.ID, err)
	}
	return m
}

// stream reads an SSE body in the background.
type stream struct {
	resp   *http.Response
	events chan sseEvent
	done   chan struct{} // closed when the body ended or failed
	err    error
	once   sync.Once
}

func newStream(resp *http.Response) *stream {
	s := &stream{resp: resp, events: make(chan sseEvent, 1000), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		r := bufio.NewReader(resp.Body)
		var ev sseEvent
		fields := 0
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				if err != io.EOF {
					s.err = err
				}
				return
			}
			line = strings.TrimRight(line, "\r\n")
			if line == "" {
				if fields > 0 {
					s.events <- ev
				}
				ev, fields = sseEvent{}, 0
				continue
			}
			if ev.Field(line) {
				fields++
			}
		}
	}()
	return s
}

// next is the next event; it fails the test when the stream ends first or
// none comes within wait.
func (s *stream) next(t *testing.T) sseEvent {
	t.Helper()
	select {
	case ev := <-s.events:
		return ev
	case <-s.done:
		select {
		case ev := <-s.events:
			return ev
		default:
		}
		t.Fatalf("the stream ended (%v) where an event was expected", s.err)
	case <-time.After(wait):
		t.Fatalf("no event within %v", wait)
	}
	return sseEvent{}
}

// rest reads every event up to the end of the stream.
func (s *stream) rest(t *testing.T) []sseEvent {
	t.Helper()
	var out []sseEvent
	for {
		select {
		case ev := <-s.events:
			out = append(out, ev)
			continue
		case <-s.done:
		case <-time.After(wait):
			t.Fatalf("the stream did not end within %v (events so far: %d)", wait, len(out))
		}
		break
	}
	for {
		select {
		case ev := <-s.events:
			out = append(out, ev)
			continue
		default:
		}
		return out
	}
}

// untilResponse reads events up to and including the JSON-RPC response.
func (s *stream) untilResponse(t *testing.T) []sseEvent {
	t.Helper()
	var out []sseEvent
	for {
		ev := s.next(t)
		out = append(out, ev)
		if ev.HasData && ev.Data != "" {
			if m := msgOf(t, ev); m.Result != nil || m.Error != nil {
				return out
			}
		}
	}
}

// drop closes the connection abruptly, as a client that lost it.
func (s *stream) drop() {
	s.once.Do(func() { s.resp.Body.Close() })
	<-s.done
}

// ended reports whether the body ended by itself (without drop).
func (s *stream) endedWithin(d time.Duration) bool {
	select {
	case <-s.done:
		return true
	case <-time.After(d):
		return false
	}
}

func newClient(t *testing.T) *http.Client {
	tr := &http.Transport{DisableKeepAlives: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// open initializes a session with the protocol version and sends
// notifications/initialized.
func open(t *testing.T, url, version string) *session {
	t.Helper()
	s := &session{t: t, url: url, version: version, http: newClient(t)}
	resp := s.post(map[string]any{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": map[string]any{
		"protocolVersion": version, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "mcppeer-test", "version": "1"}}})
	if resp.StatusCode != 200 {
		t.Fatalf("initialize: HTTP %d: %s", resp.StatusCode, body(resp))
	}
	s.id = resp.Header.Get("Mcp-Session-Id")
	if s.id == "" {
		t.Fatal("initialize: no Mcp-Session-Id")
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		newStream(resp).untilResponse(t)
		resp.Body.Close()
	} else {
		resp.Body.Close()
	}
	resp = s.post(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("notifications/initialized: HTTP %d, want 202", resp.StatusCode)
	}
	t.Cleanup(func() { s.do(http.MethodDelete, nil, nil).Body.Close() })
	return s
}

func (s *session) do(method string, payload any, hdr map[string]string) *http.Response {
	s.t.Helper()
	var rd io.Reader
	if payload != nil {
		b, err := json.Marshal(payload)
		if err != nil {
			s.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.url, rd)
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	if method == http.MethodGet {
		req.Header.Set("Accept", "text/event-stream")
	}
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if s.id != "" {
		req.Header.Set("Mcp-Session-Id", s.id)
		req.Header.Set("MCP-Protocol-Version", s.version)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := s.http.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, s.url, err)
	}
	return resp
}

func (s *session) post(payload any) *http.Response {
	s.t.Helper()
	return s.do(http.MethodPost, payload, nil)
}

// args are the progress tool's arguments.
type args struct {
	Steps      int    `json:"steps"`
	IntervalMS int    `json:"interval_ms"`
	CloseAfter int    `json:"close_after,omitempty"`
	RetryMS    int    `json:"retry_ms,omitempty"`
	Text       string `json:"text,omitempty"`
}

// call POSTs tools/call of the progress tool with request id id and
// progress token "tok-<id>", and returns its SSE stream.
func (s *session) call(id int, a args) *stream {
	s.t.Helper()
	resp := s.callResp(id, a)
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || !strings.HasPrefix(ct, "text/event-stream") {
		s.t.Fatalf("tools/call: HTTP %d %s: %s", resp.StatusCode, ct, body(resp))
	}
	st := newStream(resp)
	s.t.Cleanup(st.drop)
	return st
}

func (s *session) callResp(id int, a args) *http.Response {
	s.t.Helper()
	return s.post(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": map[string]any{
		"name": mcppeer.Tool, "arguments": a, "_meta": map[string]any{"progressToken": fmt.Sprintf("tok-%d", id)}}})
}

// resume GETs with Last-Event-ID.
func (s *session) resume(lastEventID string) *http.Response {
	s.t.Helper()
	return s.do(http.MethodGet, nil, map[string]string{"Last-Event-ID": lastEventID})
}

// resumeStream is resume expecting a 200 SSE answer.
func (s *session) resumeStream(lastEventID string) *stream {
	s.t.Helper()
	resp := s.resume(lastEventID)
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || !strings.HasPrefix(ct, "text/event-stream") {
		s.t.Fatalf("GET Last-Event-ID %q: HTTP %d %s: %s", lastEventID, resp.StatusCode, ct, body(resp))
	}
	st := newStream(resp)
	s.t.Cleanup(st.drop)
	return st
}

func body(resp *http.Response) string {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	return strings.TrimSpace(string(b))
}

// messages keeps the events with data, as JSON-RPC.
func messages(t *testing.T, evs []sseEvent) []rpc {
	t.Helper()
	var out []rpc
	for _, e := range evs {
		if e.Data != "" {
			out = append(out, msgOf(t, e))
		}
	}
	return out
}

// progressOf lists the progress values of the events' progress
// notifications for token, -1 for the response (result or error), and
// fails on any other message.
func progressOf(t *testing.T, evs []sseEvent, token string) []float64 {
	t.Helper()
	var out []float64
	for _, m := range messages(t, evs) {
		switch {
		case m.Method == "notifications/progress" && m.Params.ProgressToken == token:
			out = append(out, m.Params.Progress)
		case m.Result != nil || m.Error != nil:
			out = append(out, -1)
		default:
			t.Errorf("unexpected message %+v (want progress of %s or the response)", m, token)
		}
	}
	return out
}

// waitLog polls the peer's log until cond holds (a condition the server
// reaches by itself: a tool finishing, a response ending), failing after
// wait.
func waitLog(t *testing.T, p *mcppeer.Peer, what string, cond func([]mcppeer.Exchange) bool) []mcppeer.Exchange {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		log, err := p.Log()
		if err != nil {
			t.Fatal(err)
		}
		if cond(log) {
			return log
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, wait)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// toolDone is a waitLog condition: the tool call with this text ended.
func toolDone(text string) func([]mcppeer.Exchange) bool {
	return func(log []mcppeer.Exchange) bool {
		for _, ex := range log {
			if ex.Method == "TOOL" && len(ex.Writes) == 1 && ex.Writes[0].Data == text {
				return true
			}
		}
		return false
	}
}

// exchange finds the last exchange of method/rpc (and Last-Event-ID for a
// GET, when given).
func exchange(log []mcppeer.Exchange, method, rpc, lastEventID string) (mcppeer.Exchange, bool) {
	for i := len(log) - 1; i >= 0; i-- {
		ex := log[i]
		if ex.Method == method && (rpc == "" || ex.RPC == rpc) && (lastEventID == "" || ex.LastEventID == lastEventID) {
			return ex, true
		}
	}
	return mcppeer.Exchange{}, false
}
