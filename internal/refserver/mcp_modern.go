package refserver

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"
)

// The 2026-07-28 revision of MCP (SEP-2575, SEP-2567, SEP-2243): no
// initialize and no session; every request is a POST of its own that
// carries the _meta envelope (io.modelcontextprotocol/protocolVersion,
// clientInfo, clientCapabilities) and the headers MCP-Protocol-Version,
// Mcp-Method and, for the methods that name something, Mcp-Name. SSE
// answers carry no ids (a stream is not resumable) and closing the POST
// cancels the call. The server validates as the TypeScript SDK v2, the Go
// SDK and mark3labs/mcp-go do (docs/mcp-peers.md): a missing or
// mismatched header is 400 / -32020, a missing envelope field 400 /
// -32602, an unsupported version 400 / -32022 with the supported ones.

// MCPModernVersion is the stateless revision the server speaks.
const MCPModernVersion = "2026-07-28"

// tasksVersion is the revision whose sessions have the experimental
// tasks (tasks/get, tasks/result, tasks/cancel, tasks/list).
const tasksVersion = "2025-11-25"

// The 2026-07-28 faults.
const (
	// MCPModernKeepIDs gives a 2026-07-28 call's SSE answer event ids and
	// a priming event, as 2025 streams had, although 2026-07-28 streams
	// are not resumable: a GET with Last-Event-ID is still 405 (a server
	// that half-migrated).
	MCPModernKeepIDs MCPFault = "modern-keep-ids"
)

// The envelope's keys and the Tasks extension's name.
const (
	metaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	tasksExtension         = "io.modelcontextprotocol/tasks"
)

// The 2026-07-28 error codes.
const (
	codeHeaderMismatch      = -32020
	codeMissingCapability   = -32021
	codeUnsupportedProtocol = -32022
)

// legacyVersions are the versions served with an initialize handshake:
// MCPVersions without the stateless one.
func legacyVersions() []string {
	return slices.DeleteFunc(slices.Clone(MCPVersions), func(v string) bool { return v == MCPModernVersion })
}

// supportedVersions are the versions server/discover and -32022 name,
// newest first.
func supportedVersions() []string { return append([]string{MCPModernVersion}, legacyVersions()...) }

// isModern reports whether a request is a 2026-07-28 one: a POST whose
// MCP-Protocol-Version names it, or one with the per-request envelope
// and no legacy version in the header (a version the server does not
// know is answered -32022 on this path).
func isModern(r *http.Request, msg *rpcMessage, e MCPRequest) bool {
	if r.Method != http.MethodPost || e.Status != 0 {
		return false
	}
	return e.Protocol == MCPModernVersion || msg.Params.Meta.Version != nil && !slices.Contains(legacyVersions(), e.Protocol)
}

// serveModern answers a 2026-07-28 request; the Mcp-Session-Id header,
// if any, is ignored and none is minted.
func (m *MCP) serveModern(w http.ResponseWriter, r *http.Request, msg *rpcMessage, e *MCPRequest) int {
	if status := checkModern(w, r, msg, e); status != 0 {
		return status
	}
	if msg.ID == nil {
		// 2026-07-28 defines no client notification on Streamable
		// HTTP; one is accepted and dropped.
		w.WriteHeader(http.StatusAccepted)
		return http.StatusAccepted
	}
	if status := checkEnvelope(w, r, msg, e); status != 0 {
		return status
	}
	switch msg.Method {
	case "server/discover":
		return rpcResult(w, msg.ID, discoverResult())
	case "tools/list":
		return rpcResult(w, msg.ID, map[string]any{"resultType": "complete", "tools": toolList})
	case "ping":
		return rpcResult(w, msg.ID, map[string]any{"resultType": "complete"})
	case "tools/call":
		return m.modernCall(w, r, msg, e)
	case "tasks/get", "tasks/cancel", "tasks/update":
		if !declaresTasks(msg.Params.Meta.Capabilities) {
			return missingTasksCapability(w, msg)
		}
		return m.modernTasks(w, msg)
	case "tasks/result":
		return m.tasksResultRemoved(w, msg)
	}
	return rpcError(w, http.StatusNotFound, msg.ID, -32601, "Method not found")
}

// checkModern checks the Accept header, the protocol version and the
// Mcp-Method and Mcp-Name headers; it answers a bad request and returns
// its status, or returns 0.
func checkModern(w http.ResponseWriter, r *http.Request, msg *rpcMessage, e *MCPRequest) int {
	accept := r.Header.Get("Accept")
	switch {
	case !strings.Contains(accept, "text/event-stream") || !strings.Contains(accept, "application/json"):
		return rpcError(w, http.StatusNotAcceptable, msg.ID, -32000, "Not Acceptable: accept both application/json and text/event-stream")
	case e.Protocol == "":
		return rpcError(w, http.StatusBadRequest, msg.ID, codeHeaderMismatch, "Header mismatch: no MCP-Protocol-Version header")
	case !slices.Contains(supportedVersions(), e.Protocol):
		return rpcErrorData(w, http.StatusBadRequest, msg.ID, codeUnsupportedProtocol, "Unsupported protocol version",
			map[string]any{"supported": supportedVersions(), "requested": e.Protocol})
	case msg.ID == nil:
		return 0 // a notification: 2026-07-28 defines no headers for it
	case e.MCPMethod != msg.Method:
		return rpcError(w, http.StatusBadRequest, msg.ID, codeHeaderMismatch, "Header mismatch: Mcp-Method "+quoteOr(e.MCPMethod)+" is not the body's method "+quoteOr(msg.Method))
	}
	want, named := mcpName(msg)
	if !named {
		return 0
	}
	got, ok := decodeHeader(e.MCPName)
	if e.MCPName == "" || !ok || got != want {
		return rpcError(w, http.StatusBadRequest, msg.ID, codeHeaderMismatch, "Header mismatch: Mcp-Name "+quoteOr(e.MCPName)+" is not the body's "+quoteOr(want))
	}
	return 0
}

// checkEnvelope checks the request's _meta: its protocolVersion and
// clientCapabilities are required (clientInfo is optional, as on the
// three libraries), and the version must be the header's.
func checkEnvelope(w http.ResponseWriter, r *http.Request, msg *rpcMessage, e *MCPRequest) int {
	meta := msg.Params.Meta
	switch {
	case meta.Version == nil:
		return rpcError(w, http.StatusBadRequest, msg.ID, -32602, "Invalid params: _meta has no "+metaProtocolVersion)
	case !isObject(meta.Capabilities):
		return rpcError(w, http.StatusBadRequest, msg.ID, -32602, "Invalid params: _meta has no "+metaClientCapabilities+" object")
	case *meta.Version != e.Protocol:
		return rpcError(w, http.StatusBadRequest, msg.ID, codeHeaderMismatch, "Header mismatch: MCP-Protocol-Version "+quoteOr(e.Protocol)+" is not _meta's "+quoteOr(*meta.Version))
	}
	return 0
}

// mcpName is the body value a request's Mcp-Name header must carry, and
// whether the method requires one (SEP-2243; tasks/* name the task, as
// the Tasks extension has it).
func mcpName(msg *rpcMessage) (string, bool) {
	switch msg.Method {
	case "tools/call", "prompts/get":
		return msg.Params.Name, true
	case "resources/read":
		return msg.Params.URI, true
	case "tasks/get", "tasks/update", "tasks/cancel", "tasks/result":
		return msg.Params.TaskID, true
	}
	return "", false
}

// decodeHeader decodes a header value that may carry the Base64 sentinel
// (=?base64?...?=); false when the sentinel's content is not Base64.
func decodeHeader(v string) (string, bool) {
	const pre, suf = "=?base64?", "?="
	if len(v) < len(pre)+len(suf) || !strings.HasPrefix(v, pre) || !strings.HasSuffix(v, suf) {
		return v, true
	}
	b, err := base64.StdEncoding.DecodeString(v[len(pre) : len(v)-len(suf)])
	return string(b), err == nil
}

func quoteOr(s string) string {
	if s == "" {
		return "(none)"
	}
	return "'" + s + "'"
}

func isObject(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	return strings.HasPrefix(s, "{")
}

// declaresTasks reports whether clientCapabilities names the Tasks
// extension.
func declaresTasks(caps json.RawMessage) bool {
	var c struct {
		Extensions map[string]json.RawMessage `json:"extensions"`
	}
	return json.Unmarshal(caps, &c) == nil && c.Extensions[tasksExtension] != nil
}

// missingTasksCapability refuses a tasks/* request of a client that did
// not declare the extension (the Tasks extension: -32021, 400).
func missingTasksCapability(w http.ResponseWriter, msg *rpcMessage) int {
	return rpcErrorData(w, http.StatusBadRequest, msg.ID, codeMissingCapability, "Missing required client capability",
		map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{tasksExtension: map[string]any{}}}})
}

// discoverResult is server/discover's answer.
func discoverResult() map[string]any {
	return map[string]any{"resultType": "complete", "supportedVersions": supportedVersions(),
		"capabilities": map[string]any{"tools": map[string]any{}, "extensions": map[string]any{tasksExtension: map[string]any{}}},
		"_meta":        map[string]any{"io.modelcontextprotocol/serverInfo": serverInfo}}
}

// modernCall runs the progress tool for a 2026-07-28 tools/call: as a
// task when the client declared the Tasks extension and the arguments
// ask for one ("task": true), else answering with an SSE stream of the
// call's progress (none without a progress token) and its result, no ids
// and no priming event; the json fault answers one JSON body. Closing the
// POST cancels the tool.
func (m *MCP) modernCall(w http.ResponseWriter, r *http.Request, msg *rpcMessage, e *MCPRequest) int {
	args, bad := toolCall(msg)
	if bad != "" {
		return rpcError(w, http.StatusOK, msg.ID, -32602, bad)
	}
	if args.Task && declaresTasks(msg.Params.Meta.Capabilities) {
		return m.createTask(r.Context(), w, msg, args, "", e)
	}
	st := newToolStream(r.Context(), msg, args, cmpOr(args.Fault, m.Fault))
	st.modern, st.silent = true, len(msg.Params.Meta.ProgressToken) == 0
	m.mu.Lock()
	m.streams++
	st.num = m.streams
	m.wg.Add(1)
	m.mu.Unlock()
	go m.run(st, 0)
	if st.fault == MCPJSON {
		return m.answerJSON(w, r, st)
	}
	status, _ := m.play(w, r, st, 0, false)
	return status
}

// timestamp is an ISO 8601 time as tasks carry it.
func timestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }
