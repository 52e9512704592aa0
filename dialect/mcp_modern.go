package dialect

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/streamprobe/streamprobe/internal/version"
	"github.com/streamprobe/streamprobe/resumeclient"
)

// MCP 2026-07-28: Streamable HTTP without sessions. Every request is a POST
// of its own that carries, in params._meta, the protocol version, the
// client's identity and its capabilities, and mirrors its method and name
// in headers (MCP-Protocol-Version, Mcp-Method, Mcp-Name). There is no
// initialize, no Mcp-Session-Id, no GET: an answer's stream carries no
// event ids and cannot be resumed; a call that must outlive its connection
// is made a task (mcp_tasks.go). server/discover says which versions a
// server speaks; a server of the 2025 era is spoken to as before
// (initialize, a session, Last-Event-ID).

// MCPModernVersion is the newest MCP protocol version streamprobe speaks,
// the one without sessions.
const MCPModernVersion = "2026-07-28"

// MCPVersions lists every MCP protocol version streamprobe speaks, newest
// first: the value a target's mcp_version may pin.
func MCPVersions() []string { return append([]string{MCPModernVersion}, MCPProtocolVersions...) }

// The 2026-07-28 request headers and _meta keys.
const (
	mcpMethodHeader  = "Mcp-Method"
	mcpNameHeader    = "Mcp-Name"
	metaProtocol     = "io.modelcontextprotocol/protocolVersion"
	metaClientInfo   = "io.modelcontextprotocol/clientInfo"
	metaCapabilities = "io.modelcontextprotocol/clientCapabilities"
	// mcpTasksExtension is the Tasks extension's name in capabilities.
	mcpTasksExtension = "io.modelcontextprotocol/tasks"
)

// The JSON-RPC error codes only a 2026-07-28 server answers with: a 400
// that carries one comes from a modern server, which a client must not
// take for one of the 2025 era.
const (
	codeHeaderMismatch     = -32020
	codeMissingCapability  = -32021
	codeUnsupportedVersion = -32022
)

// mcpServer is what the session setup learnt of the server: the version
// spoken, and whether it makes tasks of tool calls (the 2026 extension, or
// the 2025-11-25 capability tasks.requests.tools.call, which mark3labs/
// mcp-go also advertises on 2026-07-28 and honours only for a request
// that carries params.task).
type mcpServer struct {
	version    string
	tasks      bool // the Tasks extension (2026-07-28)
	tasks2025  bool // tasks.requests.tools.call (2025-11-25 shape)
	discovered bool
}

// discover asks the server which versions it speaks (server/discover, in
// the 2026-07-28 shape). modern is false for a server of the 2025 era:
// one that answers with no 2026-07-28 among its versions, with a JSON-RPC
// error, or with an HTTP error that is not one of the modern codes (the
// spec's fallback rule); the caller then opens a 2025 session.
func discover(ctx context.Context, c *resumeclient.Client, t Target, req resumeclient.Request) (srv mcpServer, modern bool, err error) {
	body, _ := json.Marshal(mcpCall{JSONRPC: "2.0", ID: mcpCallID(t) + ":discover", Method: "server/discover",
		Params: map[string]any{"_meta": modernMeta(false)}})
	h := modernHeaders(req.Header, "server/discover", "")
	st, err := c.Open(ctx, resumeclient.Request{Method: http.MethodPost, URL: req.URL, Header: h, Body: body, Framing: resumeclient.FramingSSEOrJSON})
	if err != nil {
		var se *resumeclient.StatusError
		if !errors.As(err, &se) {
			return srv, false, fmt.Errorf("server/discover: %w", err)
		}
		return srv, false, modernRefusal(t, se)
	}
	defer st.Close()
	res, err := readDiscover(ctx, st, t)
	if err != nil || res == nil {
		return srv, false, err
	}
	if !slices.Contains(res.SupportedVersions, MCPModernVersion) {
		return srv, false, nil // a 2025 server that knows the method (the Go SDK's)
	}
	srv = mcpServer{version: MCPModernVersion, discovered: true}
	_, srv.tasks = res.Capabilities.Extensions[mcpTasksExtension]
	srv.tasks2025 = res.Capabilities.Tasks.Requests.Tools.Call != nil
	return srv, true, nil
}

// discoverResult is what the probe reads of server/discover's answer.
type discoverResult struct {
	SupportedVersions []string        `json:"supportedVersions"`
	Capabilities      mcpCapabilities `json:"capabilities"`
}

// mcpCapabilities is what the probe reads of a server's capabilities
// (server/discover's, initialize's): whether it makes tasks of tool calls.
type mcpCapabilities struct {
	Extensions map[string]json.RawMessage `json:"extensions"`
	Tasks      struct {
		Requests struct {
			Tools struct {
				Call json.RawMessage `json:"call"`
			} `json:"tools"`
		} `json:"requests"`
	} `json:"tasks"`
}

// readDiscover reads the answer to server/discover (JSON, or a stream
// with the response in it). A JSON-RPC error (a 2025 server that does not
// know the method) is no result and no error: the caller falls back.
func readDiscover(ctx context.Context, st *resumeclient.Stream, t Target) (*discoverResult, error) {
	events := 0
	for {
		ev, err := st.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil, nil // no answer: taken for a 2025 server
			}
			if ctx.Err() != nil {
				return nil, &WaitError{What: answeredWith(st, t, "server/discover", events), Err: fmt.Errorf("server/discover: %w", err)}
			}
			return nil, fmt.Errorf("server/discover: %w", err)
		}
		if ev.Kind != resumeclient.KindEvent || len(ev.Data) == 0 {
			continue
		}
		events++
		var m struct {
			Result *discoverResult `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(ev.Data, &m) != nil || (m.Result == nil && m.Error == nil) {
			continue // a notification, a log message
		}
		if m.Error != nil {
			return nil, nil
		}
		return m.Result, nil
	}
}

// modernRefusal reads an HTTP error answer to server/discover: one that
// carries a modern error code comes from a 2026-07-28 server, which says
// what it refused (an unsupported version: the versions it speaks, for a
// 2025 session if one of ours is among them); any other is the 2025 era's
// answer, and nil lets the caller fall back to initialize.
func modernRefusal(t Target, se *resumeclient.StatusError) error {
	var m struct {
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Data    struct {
				Supported []string `json:"supported"`
			} `json:"data"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(se.Snippet), &m) != nil || m.Error == nil {
		return nil
	}
	switch m.Error.Code {
	case codeUnsupportedVersion:
		for _, v := range m.Error.Data.Supported {
			if slices.Contains(MCPProtocolVersions, v) {
				return nil // it speaks a 2025 version too: a session then
			}
		}
		return fmt.Errorf("%w: server/discover: HTTP %d: the server does not speak %s and names no version streamprobe speaks (it said: %s)",
			errSetup, se.Status, MCPModernVersion, bounded(t, strings.Join(m.Error.Data.Supported, ", "), MaxMessage))
	case codeHeaderMismatch, codeMissingCapability:
		return fmt.Errorf("%w: server/discover: HTTP %d: JSON-RPC error %d: %s", errSetup, se.Status, m.Error.Code, boundMessage(t, m.Error.Message))
	}
	return nil
}

// modernMeta is the _meta every 2026-07-28 request carries: the protocol
// version, the client, its capabilities (the Tasks extension when the
// call may be made a task).
func modernMeta(tasks bool) map[string]any {
	caps := map[string]any{}
	if tasks {
		caps["extensions"] = map[string]any{mcpTasksExtension: map[string]any{}}
	}
	return map[string]any{
		metaProtocol:     MCPModernVersion,
		metaClientInfo:   map[string]any{"name": "streamprobe", "version": version.String()},
		metaCapabilities: caps,
	}
}

// modernHeaders are h with the headers a 2026-07-28 request mirrors from
// its body: the version, the method, and the name (a tool's, a task's id)
// where the method has one.
func modernHeaders(h http.Header, method, name string) http.Header {
	h = h.Clone()
	if h == nil {
		h = http.Header{}
	}
	h.Del(mcpSessionHeader)
	h.Set(mcpProtocolHeader, MCPModernVersion)
	h.Set(mcpMethodHeader, method)
	if name != "" {
		h.Set(mcpNameHeader, mcpHeaderValue(name))
	} else {
		h.Del(mcpNameHeader)
	}
	return h
}

// mcpHeaderValue is s as a 2026-07-28 header carries a name: as it is
// when it is plain ASCII with no white space at either end, else in the
// Base64 sentinel form =?base64?...?= (which a value that looks like one
// takes too).
func mcpHeaderValue(s string) string {
	plain := !strings.HasPrefix(s, "=?base64?") && strings.TrimSpace(s) == s
	for i := 0; plain && i < len(s); i++ {
		plain = s[i] >= 0x20 && s[i] < 0x7f
	}
	if plain {
		return s
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?="
}

// useModern turns the call built for a session (Request's) into a
// 2026-07-28 one: the _meta envelope in its body, the mirrored headers, no
// session; a task is asked for when the sample's tool call says so and the
// server makes tasks.
func useModern(req *resumeclient.Request, t Target, srv mcpServer) error {
	var call struct {
		JSONRPC string         `json:"jsonrpc"`
		ID      any            `json:"id"`
		Method  string         `json:"method"`
		Params  map[string]any `json:"params"`
	}
	if err := json.Unmarshal(req.Body, &call); err != nil || call.Params == nil {
		return fmt.Errorf("%w: the request body is not a JSON-RPC request with params, so no 2026-07-28 _meta can go in it (pin mcp_version to a 2025 version for a body of your own)", errSetup)
	}
	_, askTask := call.Params["task"]
	meta, _ := call.Params["_meta"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
	}
	for k, v := range modernMeta(askTask && srv.tasks) {
		meta[k] = v
	}
	call.Params["_meta"] = meta
	if askTask && !srv.tasks2025 {
		// The extension asks for no params.task: the server decides.
		delete(call.Params, "task")
	}
	body, err := json.Marshal(call)
	if err != nil {
		return fmt.Errorf("mcp: encoding %s: %w", call.Method, err)
	}
	name, _ := call.Params["name"].(string)
	req.Body = body
	req.Header = modernHeaders(req.Header, call.Method, name)
	return nil
}

// Unresumable says why a call's stream cannot be resumed by design (a
// 2026-07-28 stream: no event ids, no GET), or "" when it can be: a drill
// then does not drop it, and the run says not_supported with the reason.
// A call the server makes a task is resumed by its task id all the same.
func (mcpDialect) Unresumable(req resumeclient.Request) string {
	if req.Header.Get(mcpProtocolHeader) != MCPModernVersion {
		return ""
	}
	return "the server speaks MCP " + MCPModernVersion + ", whose streams cannot be resumed (no Last-Event-ID, no GET), and it made no task of the call: a call whose connection drops is lost, by design; only a task outlives its connection"
}

// ProtocolVersion is the MCP protocol version the session setup settled
// on, for the record.
func (mcpDialect) ProtocolVersion(req resumeclient.Request) string {
	return req.Header.Get(mcpProtocolHeader)
}

// CancelsByClose: on 2026-07-28 closing the call's stream is its cancel
// (no notifications/cancelled is sent).
func (mcpDialect) CancelsByClose(req resumeclient.Request) bool {
	return req.Header.Get(mcpProtocolHeader) == MCPModernVersion
}
