package mcppeer_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strings"
	"testing"

	"github.com/streamprobe/streamprobe/internal/testenv/mcppeer"
	"github.com/streamprobe/streamprobe/internal/testenv/mcppeer/gosdk"
	"github.com/streamprobe/streamprobe/internal/testenv/mcppeer/mcpgo"
)

// A raw 2026-07-28 client (net/http only): no session; each request one
// POST carrying the per-request _meta envelope (SEP-2575) and the standard
// headers MCP-Protocol-Version, Mcp-Method and, for tools/call and tasks/*,
// Mcp-Name (SEP-2243).

const modern = "2026-07-28"

// The envelope's keys.
const (
	metaVersion      = "io.modelcontextprotocol/protocolVersion"
	metaClientInfo   = "io.modelcontextprotocol/clientInfo"
	metaCapabilities = "io.modelcontextprotocol/clientCapabilities"
)

// The 2026-07-28 peers, in the order the tests name them.
const (
	ts2      = "typescript-sdk-v2"
	goStless = "go-sdk-stateless"
	mcpGo    = "mcp-go-v1.2.1"
)

// modernPeers runs f against each 2026-07-28 peer.
func modernPeers(t *testing.T, f func(t *testing.T, p *mcppeer.Peer)) {
	t.Run(ts2, func(t *testing.T) { t.Parallel(); f(t, mcppeer.StartTS2(t)) })
	t.Run(goStless, func(t *testing.T) { t.Parallel(); f(t, gosdk.StartStateless(t)) })
	t.Run(mcpGo, func(t *testing.T) { t.Parallel(); f(t, mcpgo.Start(t, mcpgo.V121)) })
}

// envelope is a complete 2026-07-28 _meta envelope.
func envelope() map[string]any {
	return map[string]any{
		metaVersion:      modern,
		metaClientInfo:   map[string]any{"name": "mcppeer-test", "version": "1"},
		metaCapabilities: map[string]any{},
	}
}

// req2026 is one 2026-07-28 request: params gets the envelope (plus
// extra _meta keys such as progressToken) unless noMeta; headers are the
// standard ones, with drop removing some and set overriding some.
type req2026 struct {
	id     any
	method string
	params map[string]any
	meta   map[string]any // merged into the envelope (nil: the envelope alone)
	noMeta bool
	drop   []string
	set    map[string]string
}

// mcpName is the Mcp-Name header a method requires (SEP-2243, SEP-2663).
func mcpName(method string, params map[string]any) string {
	switch method {
	case "tools/call", "prompts/get":
		s, _ := params["name"].(string)
		return s
	case "tasks/get", "tasks/update", "tasks/cancel", "tasks/result":
		s, _ := params["taskId"].(string)
		return s
	}
	return ""
}

func (r req2026) do(t *testing.T, url string) *http.Response {
	t.Helper()
	params := maps.Clone(r.params)
	if params == nil {
		params = map[string]any{}
	}
	if !r.noMeta {
		meta := envelope()
		maps.Copy(meta, r.meta)
		params["_meta"] = meta
	}
	msg := map[string]any{"jsonrpc": "2.0", "method": r.method, "params": params}
	if r.id != nil {
		msg["id"] = r.id
	}
	b, err := json.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", modern)
	req.Header.Set("Mcp-Method", r.method)
	if name := mcpName(r.method, params); name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	for _, h := range r.drop {
		req.Header.Del(h)
	}
	for k, v := range r.set {
		req.Header.Set(k, v)
	}
	resp, err := newClient(t).Do(req)
	if err != nil {
		t.Fatalf("POST %s %s: %v", r.method, url, err)
	}
	return resp
}

// callReq is tools/call of the progress tool with request id id and
// progress token "tok-<id>".
func callReq(id int, a args) req2026 {
	return req2026{id: id, method: "tools/call", params: map[string]any{"name": mcppeer.Tool, "arguments": a},
		meta: map[string]any{"progressToken": fmt.Sprintf("tok-%d", id)}}
}

// answer is a response read whole: its JSON-RPC messages in order, from
// an application/json body or an SSE stream.
type answer struct {
	status int
	ctype  string
	header http.Header
	body   string
	events []sseEvent // SSE only
	msgs   []json.RawMessage
}

func readAnswer(t *testing.T, resp *http.Response) answer {
	t.Helper()
	a := answer{status: resp.StatusCode, ctype: resp.Header.Get("Content-Type"), header: resp.Header}
	if strings.HasPrefix(a.ctype, "text/event-stream") {
		a.events = newStream(resp).rest(t)
		for _, e := range a.events {
			if e.Data != "" {
				a.msgs = append(a.msgs, json.RawMessage(e.Data))
			}
		}
		return a
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	a.body = strings.TrimSpace(string(b))
	if strings.HasPrefix(a.ctype, "application/json") {
		a.msgs = []json.RawMessage{json.RawMessage(a.body)}
	}
	return a
}

// reply is the JSON-RPC response of an answer: its last message.
type reply struct {
	ID     json.RawMessage            `json:"id"`
	Result map[string]json.RawMessage `json:"result"`
	Error  *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

func (a answer) reply(t *testing.T) reply {
	t.Helper()
	if len(a.msgs) == 0 {
		t.Fatalf("HTTP %d %s %q: no JSON-RPC message", a.status, a.ctype, a.body)
	}
	var r reply
	if err := json.Unmarshal(a.msgs[len(a.msgs)-1], &r); err != nil {
		t.Fatalf("the answer's last message %s: %v", a.msgs[len(a.msgs)-1], err)
	}
	return r
}

// field decodes one result field into v.
func (r reply) field(t *testing.T, name string, v any) {
	t.Helper()
	raw, ok := r.Result[name]
	if !ok {
		t.Fatalf("result has no %q: %v", name, r.Result)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("result.%s %s: %v", name, raw, err)
	}
}
