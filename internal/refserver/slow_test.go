package refserver

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A /slow/F prefix stretches the stream by F: each step is written no
// sooner than F times its offset from the connection's start (a lower
// bound from the server's own log, whatever the scheduler does), the
// prefix is taken off before routing, and a factor outside 0.1..100 is
// no prefix at all (an unknown path).
func TestSlowPrefixStretchesTheSchedule(t *testing.T) {
	srv := NewUnstarted(Events(Ms(40, 80, 120, 160), 5*time.Millisecond))
	srv.Mount = map[string]http.Handler{"/mounted": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.URL.Path)
	})}
	srv.Start()
	defer srv.Close()
	get := func(path string) string {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	get("/slow/2.5/events")
	c, ok := srv.WaitClosed(0, 10*time.Second)
	if !ok {
		t.Fatal("connection not closed")
	}
	if c.Path != "/events" {
		t.Errorf("path %q, want the prefix taken off: /events", c.Path)
	}
	steps := srv.Schedule
	if len(c.Sent) != len(steps) {
		t.Fatalf("%d steps sent, want %d", len(c.Sent), len(steps))
	}
	for i, s := range c.Sent {
		if due := time.Duration(2.5 * float64(steps[i].At)); s.First.Sub(c.Start) < due {
			t.Errorf("step %d written %v after the start, before its stretched offset %v", i, s.First.Sub(c.Start), due)
		}
	}
	if got := get("/slow/1.5/mounted"); got != "/mounted" {
		t.Errorf("a mounted handler saw %q, want /mounted", got)
	}
	for _, bad := range []string{"/slow/0/mounted", "/slow/x/mounted", "/slow/101/mounted"} {
		if got := get(bad); got == "/mounted" {
			t.Errorf("%s was routed as slowed", bad)
		}
	}
}

// The MCP progress tool's steps stretch too: with /slow/3 a tool of 4
// steps 20 ms apart answers no sooner than 240 ms after the call.
func TestSlowPrefixStretchesMCPProgress(t *testing.T) {
	srv := NewUnstarted(nil)
	srv.Mount = map[string]http.Handler{"/mcp": NewMCP("")}
	srv.Start()
	defer srv.Close()
	post := func(session, body string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, srv.URL+"/slow/3/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b)
	}
	resp, _ := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+MCPVersions[0]+`","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	session := resp.Header.Get("Mcp-Session-Id")
	start := time.Now()
	_, body := post(session, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"progress","arguments":{"steps":4,"interval_ms":20}}}`)
	if took := time.Since(start); took < 240*time.Millisecond {
		t.Errorf("the call answered after %v, want at least 3 x 4 x 20 ms", took)
	}
	if !strings.Contains(body, "done after 4 steps") {
		t.Errorf("no answer in %q", body)
	}
}

// The application servers' answers stretch too (the built-in target's
// LangGraph API and resumable AI SDK app): with /slow/3 an answer whose
// last step is due 60 ms after the start ends no sooner than 180 ms after
// the request (a lower bound, whatever the scheduler does).
func TestSlowPrefixStretchesTheApps(t *testing.T) {
	lg, ra := NewLangGraph(), NewResumable()
	lg.Steps = func([]byte) []Step {
		return []Step{{At: 20 * time.Millisecond, Event: "metadata", Data: `{"run_id":"{run_id}"}`}, {At: 60 * time.Millisecond, Event: "values", Data: `{}`}}
	}
	ra.Steps = (&AISDK{}).Part(20*time.Millisecond, "start", nil).Part(60*time.Millisecond, "finish", nil).Done(60 * time.Millisecond).Steps()
	srv := NewUnstarted(nil)
	srv.Mount = map[string]http.Handler{"/langgraph/": lg, "/resumable/": ra}
	srv.Start()
	defer srv.Close()
	defer lg.Close()
	defer ra.Close()
	post := func(path, body string) (string, time.Duration) {
		t.Helper()
		start := time.Now()
		resp, err := http.Post(srv.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, b)
		}
		return string(b), time.Since(start)
	}
	thread, _ := post("/slow/3/langgraph/threads", `{}`)
	var th struct {
		ThreadID string `json:"thread_id"`
	}
	if err := json.Unmarshal([]byte(thread), &th); err != nil || th.ThreadID == "" {
		t.Fatalf("thread %q: %v", thread, err)
	}
	body, took := post("/slow/3/langgraph/threads/"+th.ThreadID+"/runs/stream", `{"assistant_id":"agent","stream_resumable":true}`)
	if took < 180*time.Millisecond || !strings.Contains(body, "event: values") {
		t.Errorf("the LangGraph run ended %v after its request (want at least 3 x 60 ms): %q", took, body)
	}
	body, took = post("/slow/3/resumable/correct/api/chat", `{"id":"c1"}`)
	if took < 180*time.Millisecond || !strings.Contains(body, "[DONE]") {
		t.Errorf("the resumable app's answer ended %v after its request (want at least 3 x 60 ms): %q", took, body)
	}
}
