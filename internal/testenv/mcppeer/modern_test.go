package mcppeer_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/streamprobe/streamprobe/internal/testenv/mcppeer"
)

// What the 2026-07-28 peers do, pinned on the running servers with the
// source lines that do it (docs/mcp-peers.md says it in prose). Plain
// net/http, nothing of the probe.
//
// TS2 = @modelcontextprotocol/server 2.4.0 and @modelcontextprotocol/node
// 2.1.2 (tsv2/package-lock.json), files under tsv2/node_modules/
// @modelcontextprotocol/. GoSDK = github.com/modelcontextprotocol/go-sdk
// v1.8.0, files under mcp/. McpGo = github.com/mark3labs/mcp-go v1.2.1
// (mcpgo/server/go.mod), files under server/ and mcp/.
const (
	ts2Entry    = "server/dist/index.mjs"            // createMcpHandler
	ts2Core     = "server/dist/src-DdvbAHrR.mjs"     // classification, envelope, Protocol
	ts2PerReq   = "server/dist/mcp-oHn3ureC.mjs"     // PerRequestHTTPServerTransport, Server
	ts2Node     = "node/dist/index.mjs"              // toNodeHandler
	goHeaders   = "mcp/streamable_headers.go"        // go-sdk
	goShared    = "mcp/shared.go"                    // go-sdk
	mgModern    = "server/streamable_http_modern.go" // mcp-go
	mgStreaming = "server/streamable_http.go"        // mcp-go
	mgHeaders   = "mcp/headers.go"                   // mcp-go
)

// A plain tools/call with the envelope and the headers: the progress
// notifications and then the result, on SSE events with no id (streams are
// not resumable in 2026-07-28), and no Mcp-Session-Id. TS2: a request
// exchange answers application/json until a notification upgrades it to
// SSE (mcp-oHn3ureC.mjs:198, 211), frames are "event: message" + data
// (283). GoSDK: always SSE, ids only with an event store and a version
// before 2026-07-28 (streamable.go:1908-1921). McpGo: JSON until a
// notification, no ids for a modern request (streamable_http.go:741), and
// the last progress notification is often lost: the forwarder that took it
// off the session's channel finds the response under way and drops it
// (streamable_http.go:828-836 for a request that is not resumable, and a
// modern one never is: 741). The result carries resultType "complete" and
// the server's identity in _meta on all three.
func TestModernCall(t *testing.T) {
	modernPeers(t, func(t *testing.T, p *mcppeer.Peer) {
		const steps = 4
		a := readAnswer(t, callReq(1, args{Steps: steps, IntervalMS: 20}).do(t, p.URL))
		if a.status != 200 || !strings.HasPrefix(a.ctype, "text/event-stream") {
			t.Fatalf("tools/call: HTTP %d %s %q, want 200 text/event-stream", a.status, a.ctype, a.body)
		}
		if sid := a.header.Get("Mcp-Session-Id"); sid != "" {
			t.Errorf("Mcp-Session-Id %q on a 2026-07-28 answer", sid)
		}
		for _, e := range a.events {
			if e.ID != "" || e.Retry != "" || e.Name != "message" {
				t.Errorf("event %+v: want event: message with no id and no retry", e)
			}
		}
		prog := progressOf(t, a.events, "tok-1")
		want := []float64{1, 2, 3, 4, -1}
		if p.Name == mcpGo && slices.Equal(prog, []float64{1, 2, 3, -1}) {
			t.Logf("mark3labs/mcp-go v1.2.1 lost the last progress notification (%s:828-836, 741)", mgStreaming)
			want = prog
		}
		if !slices.Equal(prog, want) {
			t.Errorf("progress %v, want %v", prog, want)
		}
		r := a.reply(t)
		var rt string
		r.field(t, "resultType", &rt)
		var meta map[string]json.RawMessage
		r.field(t, "_meta", &meta)
		if rt != "complete" || meta["io.modelcontextprotocol/serverInfo"] == nil {
			t.Errorf("result %v: want resultType complete and the serverInfo in _meta", r.Result)
		}

		// The tool ran once, and the peer logged the standard headers.
		log, _ := p.Log()
		ex, ok := exchange(log, "POST", "tools/call", "")
		if !ok || ex.ProtocolVersion != modern || ex.MCPMethod != "tools/call" || ex.MCPName != mcppeer.Tool {
			t.Errorf("the peer's log of the call: %+v", ex)
		}

		// Without a progress token the answer is one JSON body on TS2
		// and mcp-go, SSE on the Go SDK.
		a = readAnswer(t, req2026{id: 2, method: "tools/call", params: map[string]any{"name": mcppeer.Tool, "arguments": args{Steps: 1, IntervalMS: 0}}}.do(t, p.URL))
		wantCT := "application/json"
		if p.Name == goStless {
			wantCT = "text/event-stream"
		}
		if a.status != 200 || !strings.HasPrefix(a.ctype, wantCT) || len(a.msgs) != 1 {
			t.Errorf("tools/call without a progress token: HTTP %d %s, %d message(s); want 200 %s and the result alone", a.status, a.ctype, len(a.msgs), wantCT)
		}
	})
}

// server/discover: the versions and capabilities, without initialize.
// TS2 lists only the modern versions it serves (mcp-oHn3ureC.mjs:1187-1193)
// although its stateless fallback serves 2025 clients too (index.mjs:1133)
// and answers application/json; GoSDK (server.go:921-940) and McpGo
// (discover.go:74) list 2026-07-28 and every 2025 version; mcp-go
// advertises tasks (list, cancel, tools/call).
func TestModernDiscover(t *testing.T) {
	modernPeers(t, func(t *testing.T, p *mcppeer.Peer) {
		a := readAnswer(t, req2026{id: 1, method: "server/discover"}.do(t, p.URL))
		if a.status != 200 {
			t.Fatalf("server/discover: HTTP %d %q", a.status, a.body)
		}
		r := a.reply(t)
		var versions []string
		r.field(t, "supportedVersions", &versions)
		var caps map[string]json.RawMessage
		r.field(t, "capabilities", &caps)
		want := []string{modern, "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}
		if p.Name == ts2 {
			want = []string{modern}
		}
		if !slices.Equal(versions, want) {
			t.Errorf("supportedVersions %v, want %v", versions, want)
		}
		if caps["tools"] == nil {
			t.Errorf("capabilities %v: no tools", caps)
		}
		if tasks := string(caps["tasks"]); (p.Name == mcpGo) != (tasks != "") {
			t.Errorf("capabilities.tasks %q: want tasks on mcp-go only", tasks)
		} else if p.Name == mcpGo && !strings.Contains(tasks, `"call"`) {
			t.Errorf("capabilities.tasks %s: want tools/call tasks", tasks)
		}
	})
}

// What each peer answers a request that lacks a header or an envelope
// field. All three: a missing MCP-Protocol-Version, Mcp-Method or Mcp-Name
// header, or an Mcp-Name that is not the body's, is 400 with -32020
// (HeaderMismatch); a missing _meta (the header naming 2026-07-28), or one
// without protocolVersion or clientCapabilities, is 400 with -32602; a
// _meta without clientInfo is served (clientInfo is optional in all
// three). TS2: src-DdvbAHrR.mjs:4875 (-32020), 5131-5148 (headers),
// 5205-5226 (envelope), 4013 (the required keys: protocolVersion,
// clientCapabilities). GoSDK: streamable.go:1555-1571 (version header,
// _meta version), streamable_headers.go:369-387 (Mcp-Method, Mcp-Name),
// shared.go:592-597 (clientCapabilities). McpGo:
// streamable_http_modern.go:114-126, mcp/headers.go:596-636,
// server/protocol.go:134.
func TestModernRejections(t *testing.T) {
	call := callReq(1, args{Steps: 0})
	without := func(key string) req2026 {
		r := call
		r.meta = map[string]any{}
		r.params = map[string]any{"name": mcppeer.Tool, "arguments": args{Steps: 0}}
		r.noMeta = true
		meta := envelope()
		delete(meta, key)
		r.params["_meta"] = meta
		return r
	}
	cases := []struct {
		name string
		req  req2026
		code int // 0: served
	}{
		{"no MCP-Protocol-Version", req2026{id: 1, method: call.method, params: call.params, drop: []string{"MCP-Protocol-Version"}}, -32020},
		{"no Mcp-Method", req2026{id: 1, method: call.method, params: call.params, drop: []string{"Mcp-Method"}}, -32020},
		{"no Mcp-Name", req2026{id: 1, method: call.method, params: call.params, drop: []string{"Mcp-Name"}}, -32020},
		{"Mcp-Name not the body's", req2026{id: 1, method: call.method, params: call.params, set: map[string]string{"Mcp-Name": "other"}}, -32020},
		{"no _meta", req2026{id: 1, method: call.method, params: call.params, noMeta: true}, -32602},
		{"_meta without protocolVersion", without(metaVersion), -32602},
		{"_meta without clientCapabilities", without(metaCapabilities), -32602},
		{"_meta without clientInfo", without(metaClientInfo), 0},
	}
	modernPeers(t, func(t *testing.T, p *mcppeer.Peer) {
		for _, c := range cases {
			a := readAnswer(t, c.req.do(t, p.URL))
			if c.code == 0 {
				if a.status != 200 || a.reply(t).Result == nil {
					t.Errorf("%s: HTTP %d %q, want the call served", c.name, a.status, a.body)
				}
				continue
			}
			if a.status != http.StatusBadRequest || !strings.HasPrefix(a.ctype, "application/json") {
				t.Errorf("%s: HTTP %d %s %q, want 400 application/json", c.name, a.status, a.ctype, a.body)
				continue
			}
			r := a.reply(t)
			if r.Error == nil || r.Error.Code != c.code || string(r.ID) != "1" {
				t.Errorf("%s: %s, want error %d for id 1", c.name, a.body, c.code)
			}
		}
	})
}

// A version no peer serves (2026-01-01, envelope and header agreeing): 400
// on all three, in three shapes. TS2: -32022 UnsupportedProtocolVersion
// with the supported versions (index.mjs:1135-1141). GoSDK: a text/plain
// "Bad Request: Unsupported protocol version" (streamable.go:354-355).
// McpGo: a text/plain "Unsupported protocol version"
// (streamable_http_modern.go:226-229: the version is not a modern one, so
// the request is taken as a 2025-era one).
func TestModernUnsupportedVersion(t *testing.T) {
	modernPeers(t, func(t *testing.T, p *mcppeer.Peer) {
		r := callReq(1, args{Steps: 0})
		r.meta = map[string]any{metaVersion: "2026-01-01"}
		r.set = map[string]string{"MCP-Protocol-Version": "2026-01-01"}
		a := readAnswer(t, r.do(t, p.URL))
		if a.status != http.StatusBadRequest {
			t.Fatalf("HTTP %d %q, want 400", a.status, a.body)
		}
		if p.Name == ts2 {
			if e := a.reply(t).Error; e == nil || e.Code != -32022 || !strings.Contains(string(e.Data), modern) {
				t.Errorf("%s: want -32022 naming %s (%s:1135-1141)", a.body, modern, ts2Entry)
			}
			return
		}
		if !strings.HasPrefix(a.ctype, "text/plain") || !strings.Contains(a.body, "nsupported protocol version") {
			t.Errorf("%s %q: want text/plain naming the unsupported version", a.ctype, a.body)
		}
	})
}

// GET and DELETE on the endpoint: 405 with Allow: POST on all three (a
// 2026-07-28 client has no stream to resume and no session to end). TS2:
// the stateless fallback's JSON -32000 "Method not allowed."
// (index.mjs:817, 854). GoSDK: text/plain (streamable.go:383-384). McpGo:
// text/plain naming subscriptions/listen (streamable_http_modern.go:
// 201-209, streamable_http.go:1048, 1258).
func TestModernGETIs405(t *testing.T) {
	modernPeers(t, func(t *testing.T, p *mcppeer.Peer) {
		for _, method := range []string{http.MethodGet, http.MethodDelete} {
			req, _ := http.NewRequest(method, p.URL, nil)
			req.Header.Set("Accept", "text/event-stream")
			req.Header.Set("MCP-Protocol-Version", modern)
			req.Header.Set("Last-Event-ID", "0")
			resp, err := newClient(t).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b := body(resp)
			if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST" {
				t.Errorf("%s: HTTP %d Allow %q %q, want 405 Allow: POST", method, resp.StatusCode, resp.Header.Get("Allow"), b)
			}
		}
	})
}

// The call's connection dropped after the first progress notification:
// the call is lost (no id to resume from, GET is 405). What happens to the
// tool: TS2 cancels it: the Node adapter aborts the request when the
// response closes (node/dist/index.mjs:301, 307), the per-request transport
// closes on that abort (mcp-oHn3ureC.mjs:160) and the protocol aborts every
// handler of a closed transport (src-DdvbAHrR.mjs:6420-6436). McpGo
// cancels it: the tool's context is the request's (streamable_http.go:719).
// GoSDK does NOT by default: a stateless 2026-07-28 call's handler context
// is tied to the HTTP request only with PropagateRequestCancellation
// (streamable.go:210-219, 431), so the tool runs on to its end and its
// result goes nowhere; with ?cancel=1 (that option) it is cancelled.
func TestModernDropCancels(t *testing.T) {
	modernPeers(t, func(t *testing.T, p *mcppeer.Peer) {
		urls := []string{p.URL}
		if p.Name == goStless {
			urls = append(urls, p.URL+"?cancel=1")
		}
		for i, url := range urls {
			text := []string{"drop", "drop-propagated"}[i]
			const steps, interval = 6, 200
			resp := callReq(1, args{Steps: steps, IntervalMS: interval, Text: text}).do(t, url)
			st := newStream(resp)
			st.next(t) // progress 1
			st.drop()
			log := waitLog(t, p, "the tool ended", toolDone(text))
			var tool, call mcppeer.Exchange
			for _, ex := range log {
				if ex.Method == "TOOL" && ex.Writes[0].Data == text {
					tool = ex
				}
			}
			for _, ex := range log {
				if ex.Method == "POST" && ex.RPC == "tools/call" && ex.Seq < tool.Seq {
					call = ex // the last call before the tool's end: this one
				}
			}
			wantCancelled := p.Name != goStless || strings.HasSuffix(url, "?cancel=1")
			if got := tool.RPC == "cancelled"; got != wantCancelled {
				t.Errorf("%s: the tool %s after its call's connection dropped; want cancelled %v", url, tool.RPC, wantCancelled)
			}
			// Cancelled: before its last step was due. Run on: not before.
			ran := tool.Start - call.Start
			if wantCancelled && ran >= steps*interval {
				t.Errorf("%s: the tool ended %.0f ms after the call, cancelled only after its %d steps", url, ran, steps)
			}
			if !wantCancelled && ran < steps*interval {
				t.Errorf("%s: the tool ended %.0f ms after the call, before its %d steps of %d ms", url, ran, steps, interval)
			}
		}
	})
}

// A 2025-era client on the same endpoint: initialize still answers. TS2's
// fallback and the stateless Go SDK serve it without a session
// (index.mjs:852-920; streamable.go:373-443); mcp-go with one (the era is
// decided per request, streamable_http_modern.go:78-91). A probe falling
// back from server/discover to initialize therefore finds all three.
func TestModernServesLegacyInitialize(t *testing.T) {
	modernPeers(t, func(t *testing.T, p *mcppeer.Peer) {
		s := &session{t: t, url: p.URL, version: latest, http: newClient(t)}
		resp := s.post(map[string]any{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": map[string]any{
			"protocolVersion": latest, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "mcppeer-test", "version": "1"}}})
		sid := resp.Header.Get("Mcp-Session-Id")
		a := readAnswer(t, resp)
		var v string
		a.reply(t).field(t, "protocolVersion", &v)
		if a.status != 200 || v != latest {
			t.Errorf("initialize %s: HTTP %d protocolVersion %q", latest, a.status, v)
		}
		if (sid != "") != (p.Name == mcpGo) {
			t.Errorf("Mcp-Session-Id %q: want one from mcp-go only", sid)
		}
	})
}
