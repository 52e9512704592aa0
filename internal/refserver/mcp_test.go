package refserver

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The MCP server's memory stays bounded on a long-running built-in
// target: the request log keeps the last 1024 (the oldest half let go),
// the sessions the last 64.
func TestMCPBounded(t *testing.T) {
	t.Parallel()
	m := NewMCP("")
	hs := httptest.NewServer(m)
	defer func() { hs.Close(); m.Close() }()
	post := func(session, body string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, hs.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	first := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`).Header.Get("Mcp-Session-Id")
	if resp := post(first, `{"jsonrpc":"2.0","id":2,"method":"ping"}`); resp.StatusCode != http.StatusOK {
		t.Fatalf("ping: %d", resp.StatusCode)
	}
	for range 1100 {
		post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
	}
	if n := len(m.Requests()); n > 1024 || n < 512 {
		t.Errorf("%d requests logged", n)
	}
	if resp := post(first, `{"jsonrpc":"2.0","id":2,"method":"ping"}`); resp.StatusCode != http.StatusNotFound {
		t.Errorf("the first of 1101 sessions: %d, want 404 (only the last %d are kept)", resp.StatusCode, maxMCPSessions)
	}
	if l := m.Requests(); l[len(l)-1].Status != http.StatusNotFound {
		t.Errorf("last logged status %d", l[len(l)-1].Status)
	}
}
