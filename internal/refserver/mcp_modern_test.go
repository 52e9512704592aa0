package refserver

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

// Raw-HTTP tests of the server's 2026-07-28 side: plain net/http, one
// POST per request with the _meta envelope and the standard headers, as
// internal/testenv/mcppeer pins the real libraries.

// wait bounds every wait of these tests; it is never slept, only waited
// on.
const wait = 20 * time.Second

func startMCP(t *testing.T, f MCPFault) (*MCP, string) {
	t.Helper()
	m := NewMCP(f)
	hs := httptest.NewServer(m)
	t.Cleanup(func() { hs.Close(); m.Close() })
	return m, hs.URL + "/mcp"
}

// req26 is one 2026-07-28 request: params get the envelope (with meta
// merged into it) unless noMeta; the headers are the standard ones, drop
// removing some, set overriding some.
type req26 struct {
	id      any
	method  string
	params  map[string]any
	meta    map[string]any
	tasks   bool // clientCapabilities declares the Tasks extension
	noMeta  bool
	drop    []string
	set     map[string]string
	session string
}

func envelope26(tasks bool) map[string]any {
	caps := map[string]any{}
	if tasks {
		caps["extensions"] = map[string]any{tasksExtension: map[string]any{}}
	}
	return map[string]any{metaProtocolVersion: MCPModernVersion, "io.modelcontextprotocol/clientInfo": map[string]any{"name": "refserver-test", "version": "1"},
		metaClientCapabilities: caps}
}

func (q req26) do(t *testing.T, url string) *http.Response {
	t.Helper()
	params := maps.Clone(q.params)
	if params == nil {
		params = map[string]any{}
	}
	if !q.noMeta {
		meta := envelope26(q.tasks)
		maps.Copy(meta, q.meta)
		params["_meta"] = meta
	}
	msg := map[string]any{"jsonrpc": "2.0", "method": q.method, "params": params}
	if q.id != nil {
		msg["id"] = q.id
	}
	b, _ := json.Marshal(msg)
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", MCPModernVersion)
	req.Header.Set("Mcp-Method", q.method)
	var name string
	switch q.method {
	case "tools/call":
		name, _ = params["name"].(string)
	case "tasks/get", "tasks/cancel", "tasks/update", "tasks/result":
		name, _ = params["taskId"].(string)
	}
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	if q.session != "" {
		req.Header.Set("Mcp-Session-Id", q.session)
	}
	for _, h := range q.drop {
		req.Header.Del(h)
	}
	for k, v := range q.set {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", q.method, err)
	}
	return resp
}

// call26 is tools/call of the progress tool with args, progress token
// "tok".
func call26(args map[string]any) req26 {
	return req26{id: 1, method: "tools/call", params: map[string]any{"name": "progress", "arguments": args}, meta: map[string]any{"progressToken": "tok"}}
}

// sseEvent is one SSE event as written.
type sseEvent struct {
	ID, Data, Retry string
	HasID           bool
}

// answer is a response read whole.
type answer struct {
	status int
	ctype  string
	header http.Header
	body   string
	events []sseEvent
}

func readAnswer(t *testing.T, resp *http.Response) answer {
	t.Helper()
	defer resp.Body.Close()
	a := answer{status: resp.StatusCode, ctype: resp.Header.Get("Content-Type"), header: resp.Header}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	a.body = string(b)
	if strings.HasPrefix(a.ctype, "text/event-stream") {
		a.events = parseSSE(a.body)
	}
	return a
}

func parseSSE(s string) []sseEvent {
	var out []sseEvent
	var ev sseEvent
	fields := 0
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			if fields > 0 {
				out = append(out, ev)
			}
			ev, fields = sseEvent{}, 0
			continue
		}
		k, v, _ := strings.Cut(line, ":")
		v = strings.TrimPrefix(v, " ")
		fields++
		switch k {
		case "id":
			ev.ID, ev.HasID = v, true
		case "data":
			ev.Data = v
		case "retry":
			ev.Retry = v
		default:
			fields--
		}
	}
	return out
}

// rpcReply is a JSON-RPC response.
type rpcReply struct {
	ID     json.RawMessage            `json:"id"`
	Result map[string]json.RawMessage `json:"result"`
	Error  *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// reply is the answer's JSON-RPC response: the body, or the stream's last
// event.
func (a answer) reply(t *testing.T) rpcReply {
	t.Helper()
	raw := a.body
	if a.events != nil {
		raw = a.events[len(a.events)-1].Data
	}
	var r rpcReply
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		t.Fatalf("HTTP %d %s %q: not a JSON-RPC response: %v", a.status, a.ctype, a.body, err)
	}
	return r
}

// str is a string field of the result ("" when absent).
func (r rpcReply) str(name string) string {
	var s string
	_ = json.Unmarshal(r.Result[name], &s)
	return s
}

// num is a number field of the result (-1 when absent).
func (r rpcReply) num(name string) int64 {
	n := int64(-1)
	_ = json.Unmarshal(r.Result[name], &n)
	return n
}

// text is the tool result's text.
func text(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var res struct {
		Content []struct{ Text string } `json:"content"`
	}
	if err := json.Unmarshal(raw, &res); err != nil || len(res.Content) != 1 {
		t.Fatalf("result %s: want one content item", raw)
	}
	return res.Content[0].Text
}

// progressOf lists the progress values of the events' notifications for
// token.
func progressOf(t *testing.T, evs []sseEvent, token string) []int {
	t.Helper()
	var out []int
	for _, e := range evs {
		var n struct {
			Method string `json:"method"`
			Params struct {
				ProgressToken string `json:"progressToken"`
				Progress      int    `json:"progress"`
			} `json:"params"`
		}
		if json.Unmarshal([]byte(e.Data), &n) == nil && n.Method == "notifications/progress" {
			if n.Params.ProgressToken != token {
				t.Errorf("progress for token %q, want %q", n.Params.ProgressToken, token)
			}
			out = append(out, n.Params.Progress)
		}
	}
	return out
}

// waitFor waits until cond holds, failing the test after wait.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(wait); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, wait)
		}
	}
}

// A plain 2026-07-28 call: an SSE answer with no ids, no priming event and
// no retry, the progress for the request's token, then the result with
// resultType "complete" and the server's identity; no session minted (one
// sent is ignored). Without a progress token: the result alone. The log
// records the headers and the envelope's version.
func TestMCPModernCall(t *testing.T) {
	t.Parallel()
	m, url := startMCP(t, "")
	q := call26(map[string]any{"steps": 4, "interval_ms": 10})
	q.session = "refserver-session-999" // ignored: 2026-07-28 has none
	a := readAnswer(t, q.do(t, url))
	if a.status != 200 || a.ctype != "text/event-stream" || a.header.Get("Mcp-Session-Id") != "" {
		t.Fatalf("HTTP %d %s session %q %q: want 200 text/event-stream and no Mcp-Session-Id", a.status, a.ctype, a.header.Get("Mcp-Session-Id"), a.body)
	}
	for _, e := range a.events {
		if e.HasID || e.Retry != "" || e.Data == "" {
			t.Errorf("event %+v: want data only (no id, no retry, no priming event)", e)
		}
	}
	if p := progressOf(t, a.events, "tok"); !slices.Equal(p, []int{1, 2, 3, 4}) {
		t.Errorf("progress %v, want 1..4", p)
	}
	r := a.reply(t)
	if string(r.ID) != "1" || r.str("resultType") != "complete" || !strings.Contains(string(r.Result["_meta"]), `"io.modelcontextprotocol/serverInfo":{"name":"refserver"`) {
		t.Errorf("result %s: want id 1, resultType complete, serverInfo in _meta", a.events[len(a.events)-1].Data)
	}
	if got := text(t, mustMarshal(t, r.Result)); got != "done after 4 steps" {
		t.Errorf("text %q", got)
	}

	q = call26(map[string]any{"steps": 2, "interval_ms": 0})
	q.meta = nil
	a = readAnswer(t, q.do(t, url))
	if len(a.events) != 1 || a.reply(t).str("resultType") != "complete" {
		t.Errorf("a call without a progress token: %q, want the result alone", a.body)
	}

	log := m.Requests()
	want := MCPRequest{Method: "POST", RPC: "tools/call", Protocol: MCPModernVersion, MCPMethod: "tools/call", MCPName: "progress", MetaProtocol: MCPModernVersion,
		Session: "refserver-session-999", Status: 200}
	if got := log[0]; got.Method != want.Method || got.RPC != want.RPC || got.Protocol != want.Protocol || got.MCPMethod != want.MCPMethod ||
		got.MCPName != want.MCPName || got.MetaProtocol != want.MetaProtocol || got.Session != want.Session || got.Status != want.Status {
		t.Errorf("logged %+v, want %+v", got, want)
	}
	if runs := m.Runs(); len(runs) != 2 || runs[0].Outcome != "completed" || runs[0].Steps != 4 {
		t.Errorf("runs %+v: want two, the first completed after 4 steps", runs)
	}
}

func mustMarshal(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// server/discover: the versions (2026-07-28 and the handshake ones), the
// tools and the Tasks extension, the server's identity.
func TestMCPModernDiscover(t *testing.T) {
	t.Parallel()
	_, url := startMCP(t, "")
	a := readAnswer(t, req26{id: "d", method: "server/discover"}.do(t, url))
	if a.status != 200 || a.ctype != "application/json" {
		t.Fatalf("HTTP %d %s %q", a.status, a.ctype, a.body)
	}
	r := a.reply(t)
	var versions []string
	_ = json.Unmarshal(r.Result["supportedVersions"], &versions)
	if want := []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"}; !slices.Equal(versions, want) {
		t.Errorf("supportedVersions %v, want %v", versions, want)
	}
	if got, want := string(r.Result["capabilities"]), `{"extensions":{"io.modelcontextprotocol/tasks":{}},"tools":{}}`; got != want {
		t.Errorf("capabilities %s, want %s", got, want)
	}
	if got, want := string(r.Result["_meta"]), `{"io.modelcontextprotocol/serverInfo":{"name":"refserver","version":"1"}}`; r.str("resultType") != "complete" || got != want {
		t.Errorf("resultType %q _meta %s", r.str("resultType"), got)
	}
}

// What a request that breaks the 2026-07-28 rules gets, each as the real
// libraries answer it (internal/testenv/mcppeer/modern_test.go).
func TestMCPModernRejections(t *testing.T) {
	t.Parallel()
	call := call26(map[string]any{"steps": 0})
	without := func(key string) req26 {
		q := call
		q.noMeta = true
		q.params = maps.Clone(call.params)
		meta := envelope26(false)
		delete(meta, key)
		q.params["_meta"] = meta
		return q
	}
	with := func(f func(*req26)) req26 { q := call; f(&q); return q }
	b64 := func(s string) string { return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?=" }
	cases := []struct {
		name   string
		req    req26
		status int
		code   int // 0: served
		msg    string
	}{
		{"no MCP-Protocol-Version", with(func(q *req26) { q.drop = []string{"MCP-Protocol-Version"} }), 400, -32020, "no MCP-Protocol-Version"},
		{"no Mcp-Method", with(func(q *req26) { q.drop = []string{"Mcp-Method"} }), 400, -32020, "Mcp-Method (none)"},
		{"Mcp-Method not the body's", with(func(q *req26) { q.set = map[string]string{"Mcp-Method": "tools/list"} }), 400, -32020, "Mcp-Method 'tools/list'"},
		{"no Mcp-Name", with(func(q *req26) { q.drop = []string{"Mcp-Name"} }), 400, -32020, "Mcp-Name (none)"},
		{"Mcp-Name not the body's", with(func(q *req26) { q.set = map[string]string{"Mcp-Name": "other"} }), 400, -32020, "Mcp-Name 'other'"},
		{"Mcp-Name Base64", with(func(q *req26) { q.set = map[string]string{"Mcp-Name": b64("progress")} }), 200, 0, ""},
		{"Mcp-Name Base64 of another name", with(func(q *req26) { q.set = map[string]string{"Mcp-Name": b64("other")} }), 400, -32020, "is not the body's 'progress'"},
		{"Mcp-Name Base64 broken", with(func(q *req26) { q.set = map[string]string{"Mcp-Name": "=?base64?***?="} }), 400, -32020, "Mcp-Name"},
		{"no _meta", with(func(q *req26) { q.noMeta = true }), 400, -32602, "no io.modelcontextprotocol/protocolVersion"},
		{"_meta without protocolVersion", without(metaProtocolVersion), 400, -32602, "no io.modelcontextprotocol/protocolVersion"},
		{"_meta without clientCapabilities", without(metaClientCapabilities), 400, -32602, "no io.modelcontextprotocol/clientCapabilities"},
		{"_meta without clientInfo", without("io.modelcontextprotocol/clientInfo"), 200, 0, ""},
		{"_meta naming another version", with(func(q *req26) { q.meta = map[string]any{metaProtocolVersion: "2025-11-25"} }), 400, -32020, "is not _meta's '2025-11-25'"},
		{"an unknown method", req26{id: 1, method: "resources/list"}, 404, -32601, "Method not found"},
		{"tasks/result", req26{id: 1, method: "tasks/result", params: map[string]any{"taskId": "x"}}, 404, -32601, "Method not found"},
		{"tasks/get without the Tasks extension", req26{id: 1, method: "tasks/get", params: map[string]any{"taskId": "x"}}, 400, -32021, "Missing required client capability"},
		{"Accept without text/event-stream", with(func(q *req26) { q.set = map[string]string{"Accept": "application/json"} }), 406, -32000, "Not Acceptable"},
	}
	_, url := startMCP(t, "")
	for _, c := range cases {
		a := readAnswer(t, c.req.do(t, url))
		if a.status != c.status {
			t.Errorf("%s: HTTP %d %q, want %d", c.name, a.status, a.body, c.status)
			continue
		}
		r := a.reply(t)
		switch {
		case c.code == 0 && r.Result == nil:
			t.Errorf("%s: %q, want the call served", c.name, a.body)
		case c.code != 0 && (r.Error == nil || r.Error.Code != c.code || !strings.Contains(r.Error.Message, c.msg) || string(r.ID) != "1"):
			t.Errorf("%s: %q, want error %d for id 1 saying %q", c.name, a.body, c.code, c.msg)
		}
	}

	// An unsupported version, header and envelope agreeing: -32022 with
	// the supported versions and the one asked for.
	q := call
	q.meta = map[string]any{metaProtocolVersion: "2026-01-01"}
	q.set = map[string]string{"MCP-Protocol-Version": "2026-01-01"}
	a := readAnswer(t, q.do(t, url))
	r := a.reply(t)
	if a.status != 400 || r.Error == nil || r.Error.Code != -32022 ||
		string(r.Error.Data) != `{"requested":"2026-01-01","supported":["2026-07-28","2025-11-25","2025-06-18","2025-03-26"]}` {
		t.Errorf("an unsupported version: HTTP %d %q, want 400 -32022 with data.supported and data.requested", a.status, a.body)
	}
}

// A notification on 2026-07-28 is accepted (202) and does nothing.
func TestMCPModernNotification(t *testing.T) {
	t.Parallel()
	_, url := startMCP(t, "")
	a := readAnswer(t, req26{method: "notifications/cancelled", params: map[string]any{"requestId": 1}}.do(t, url))
	if a.status != http.StatusAccepted || a.body != "" {
		t.Errorf("HTTP %d %q, want 202 and no body", a.status, a.body)
	}
}

// GET and DELETE without a session: 405 with Allow: POST (2026-07-28 has
// neither; a Last-Event-ID changes nothing). With a 2025 session they go
// on as before.
func TestMCPModernGETIs405(t *testing.T) {
	t.Parallel()
	_, url := startMCP(t, "")
	do := func(method, session, last string) *http.Response {
		req, _ := http.NewRequest(method, url, nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("MCP-Protocol-Version", MCPModernVersion)
		if last != "" {
			req.Header.Set("Last-Event-ID", last)
		}
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	for _, c := range []struct{ method, last string }{{"GET", ""}, {"GET", "1000001"}, {"DELETE", ""}} {
		a := readAnswer(t, do(c.method, "", c.last))
		if a.status != 405 || a.header.Get("Allow") != "POST" || a.reply(t).Error == nil {
			t.Errorf("%s (Last-Event-ID %q): HTTP %d Allow %q %q, want 405 Allow: POST and a JSON-RPC error", c.method, c.last, a.status, a.header.Get("Allow"), a.body)
		}
	}
	sid := initialize25(t, url, "2025-11-25")
	if a := readAnswer(t, do("GET", sid, "7")); a.status != 404 {
		t.Errorf("a 2025 resume of an unknown id: HTTP %d, want 404 as before", a.status)
	}
	if a := readAnswer(t, do("DELETE", sid, "")); a.status != 200 {
		t.Errorf("a 2025 DELETE: HTTP %d, want 200 as before", a.status)
	}
}

// Closing a 2026-07-28 call's POST cancels its tool (the spec: closing
// the stream is the cancellation).
func TestMCPModernDropCancels(t *testing.T) {
	t.Parallel()
	m, url := startMCP(t, "")
	const steps = 400 // 20 s at 50 ms
	resp := call26(map[string]any{"steps": steps, "interval_ms": 50}).do(t, url)
	br := bufio.NewReader(resp.Body)
	if line, err := br.ReadString('\n'); err != nil || !strings.Contains(line, `"progress":1`) {
		t.Fatalf("first line %q %v, want the first progress", line, err)
	}
	resp.Body.Close()
	waitFor(t, "the tool ended", func() bool { r := m.Runs(); return len(r) == 1 && r[0].Outcome != "" })
	if r := m.Runs()[0]; r.Outcome != "cancelled" || r.Steps >= steps {
		t.Errorf("run %+v: want cancelled before its last step", r)
	}
}

// The json fault on 2026-07-28: one application/json body with the result.
func TestMCPModernJSON(t *testing.T) {
	t.Parallel()
	_, url := startMCP(t, "")
	a := readAnswer(t, call26(map[string]any{"steps": 3, "interval_ms": 5, "fault": "json"}).do(t, url))
	if r := a.reply(t); a.status != 200 || a.ctype != "application/json" || r.str("resultType") != "complete" || text(t, mustMarshal(t, r.Result)) != "done after 3 steps" {
		t.Errorf("HTTP %d %s %q, want one JSON body with the result", a.status, a.ctype, a.body)
	}
}

// The modern-keep-ids fault: the 2026-07-28 SSE answer carries a priming
// event and an id on every event, as a 2025 stream; a resume with one of
// those ids is 405 all the same.
func TestMCPModernKeepIDs(t *testing.T) {
	t.Parallel()
	_, url := startMCP(t, "")
	a := readAnswer(t, call26(map[string]any{"steps": 3, "interval_ms": 5, "fault": "modern-keep-ids"}).do(t, url))
	if len(a.events) != 5 || a.events[0].Data != "" || !a.events[0].HasID {
		t.Fatalf("events %+v: want a priming event (an id, empty data), 3 progress, the result", a.events)
	}
	for _, e := range a.events {
		if !e.HasID || e.ID == "" {
			t.Errorf("event %+v without an id", e)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Last-Event-ID", a.events[2].ID)
	req.Header.Set("MCP-Protocol-Version", MCPModernVersion)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 405 || resp.Header.Get("Allow") != "POST" {
		t.Errorf("a resume from %s: HTTP %d, want 405 Allow: POST", a.events[2].ID, resp.StatusCode)
	}
}

// initialize25 opens a 2025 session at version and returns its id.
func initialize25(t *testing.T, url, version string) string {
	t.Helper()
	a := post25(t, url, "", version, map[string]any{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": map[string]any{"protocolVersion": version, "capabilities": map[string]any{}}})
	sid := a.header.Get("Mcp-Session-Id")
	if a.status != 200 || sid == "" {
		t.Fatalf("initialize %s: HTTP %d %q", version, a.status, a.body)
	}
	return sid
}

// post25 posts one message in a 2025 session and reads the answer whole.
func post25(t *testing.T, url, session, version string, msg any) answer {
	t.Helper()
	b, _ := json.Marshal(msg)
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("MCP-Protocol-Version", version)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return readAnswer(t, resp)
}

// initialize's capabilities: tasks on 2025-11-25 (list, cancel, tools/call)
// and not before.
func TestMCPInitializeTasksCapability(t *testing.T) {
	t.Parallel()
	_, url := startMCP(t, "")
	for version, want := range map[string]string{
		"2025-11-25": `{"tasks":{"cancel":{},"list":{},"requests":{"tools":{"call":{}}}},"tools":{}}`,
		"2025-06-18": `{"tools":{}}`,
	} {
		a := post25(t, url, "", version, map[string]any{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": map[string]any{"protocolVersion": version}})
		if got := string(a.reply(t).Result["capabilities"]); got != want {
			t.Errorf("%s: capabilities %s, want %s", version, got, want)
		}
	}
}

func ExampleMCP_modern() {
	m := NewMCP("")
	hs := httptest.NewServer(m)
	defer func() { hs.Close(); m.Close() }()
	body := `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(body))
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "server/discover")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.StatusCode, string(b))
	// Output: 200 {"id":1,"jsonrpc":"2.0","result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"refserver","version":"1"}},"capabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}},"tools":{}},"resultType":"complete","supportedVersions":["2026-07-28","2025-11-25","2025-06-18","2025-03-26"]}}
}
