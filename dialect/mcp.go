package dialect

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/streamprobe/streamprobe/internal/version"
	"github.com/streamprobe/streamprobe/resumeclient"
)

// mcpDialect is the Model Context Protocol over Streamable HTTP: a session
// opened with initialize and notifications/initialized, then one
// tools/call whose answer (Server-Sent Events or one JSON body) is the
// stream measured, resumed with GET, Mcp-Session-Id and Last-Event-ID,
// and a DELETE that ends the session. See docs/mcp.md.
//
// A message of the call is a content chunk: each notifications/progress
// for the call's progress token, and the JSON-RPC response with the
// call's id, which is also the end (there is no end marker). A
// progress-less tool answers with one chunk, its result.
type mcpDialect struct{}

// MCPProtocolVersions are the MCP protocol versions streamprobe speaks,
// newest first: it asks for the first, and accepts any of them in the
// server's answer.
var MCPProtocolVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26"}

// MCP headers.
const (
	mcpSessionHeader  = "Mcp-Session-Id"
	mcpProtocolHeader = "MCP-Protocol-Version"
)

// ToolCall is the tool an MCP target calls for a sample, and its
// arguments (a JSON object; nil sends {}). Task asks for the call to be
// made a task (MCP Tasks), where the server makes tasks: the run then
// polls for its result.
type ToolCall struct {
	Name string
	Args json.RawMessage
	Task bool
}

// DefaultMCPTools are the tool calls of the samples when a target names
// none: the reference server's progress tool, which reports progress
// steps times, interval_ms apart, then answers. short answers after 3
// steps (about 0.3 s), long after 40 (about 4 s), cancel is long and is
// cancelled after cancel_after chunks.
var DefaultMCPTools = map[string]ToolCall{
	"short":  {Name: "progress", Args: json.RawMessage(`{"steps":3,"interval_ms":100}`)},
	"long":   {Name: "progress", Args: json.RawMessage(`{"steps":40,"interval_ms":100}`)},
	"cancel": {Name: "progress", Args: json.RawMessage(`{"steps":40,"interval_ms":100}`)},
}

// MCPTool is the tool call target t makes for sample s: its own for the
// sample, else the default.
func MCPTool(t Target, s Sample) ToolCall {
	tc, ok := t.Tools[s.Name]
	if !ok || tc.Name == "" {
		d := DefaultMCPTools[s.Name]
		if !ok {
			return d
		}
		tc.Name = d.Name
		if tc.Args == nil {
			tc.Args = d.Args
		}
	}
	return tc
}

type mcpCall struct {
	JSONRPC string         `json:"jsonrpc"`
	ID      any            `json:"id,omitempty"`
	Method  string         `json:"method"`
	Params  map[string]any `json:"params,omitempty"`
}

func (mcpDialect) Request(t Target, s Sample, _ bool) (resumeclient.Request, error) {
	body := t.Body
	if body == nil {
		tc := MCPTool(t, s)
		args := tc.Args
		if args == nil {
			args = json.RawMessage(`{}`)
		}
		params := map[string]any{"name": tc.Name, "arguments": args, "_meta": map[string]any{"progressToken": mcpCallID(t)}}
		if tc.Task {
			// The 2025-11-25 shape; the session setup keeps it only for a
			// server that makes tasks of tool calls so.
			params["task"] = map[string]any{"ttl": mcpTaskTTL.Milliseconds()}
		}
		var err error
		body, err = json.Marshal(mcpCall{JSONRPC: "2.0", ID: mcpCallID(t), Method: "tools/call", Params: params})
		if err != nil {
			return resumeclient.Request{}, fmt.Errorf("mcp: encoding tools/call: %w", err)
		}
	}
	return resumeclient.Request{Method: cmp.Or(t.Method, http.MethodPost), URL: t.URL, Header: jsonHeaders(t), Body: body,
		Framing: resumeclient.FramingSSEOrJSON}, nil
}

// mcpCallID is the tools/call's JSON-RPC id and progress token: the run's
// id, unique in the session and across sessions.
func mcpCallID(t Target) string { return cmp.Or(t.RunID, "streamprobe") }

func (mcpDialect) EOFIsEnd(Target) bool { return false }

// Resumer is a GET with the session's headers and Last-Event-ID, as
// Streamable HTTP resumes.
func (mcpDialect) Resumer() Resumer { return mcpResume{} }

// mcpResume resumes the call's stream on its own GET; its cursor is the
// SSE last event ID, as for the generic dialect.
type mcpResume struct{ lastEventID }

// OpaqueIDs: 2025-11-25 asks an event id only to be unique in its
// session (a server may count them across every stream: mark3labs/mcp-go
// does), so ids are not checked for continuity unless the target asks.
func (mcpResume) OpaqueIDs() bool { return true }

// ServerClosesAfterEnd: 2025-11-25 asks the server to close a resumed
// GET's stream once it has sent the call's response.
func (mcpResume) ServerClosesAfterEnd() bool { return true }

// EndName: a call ends with its JSON-RPC response, not an end marker.
func (mcpDialect) EndName() string { return "response to the call" }

// Resume asks for the rest of the call's stream: GET on the endpoint with
// the session's headers and Last-Event-ID, as Streamable HTTP resumes.
func (mcpResume) Resume(orig resumeclient.Request, cursor, _ string) (resumeclient.Request, error) {
	h := orig.Header.Clone()
	h.Del("Content-Type")
	return resumeclient.Request{Method: http.MethodGet, URL: orig.URL, Header: h, LastEventID: cursor}, nil
}

func (mcpDialect) Decode(t Target, ev *resumeclient.Event) (Chunk, error) {
	if len(ev.Data) == 0 {
		// SEP-1699's priming event (an id, empty data), or a keep-alive.
		return Chunk{Kind: Meta}, nil
	}
	var m mcpMessage
	if err := m.decode(ev.Data); err != nil {
		return Chunk{}, err
	}
	if m.result.set && !m.err.set && m.ours(mcpCallID(t)) && (m.result.resultType.is("task") || m.result.task || !m.result.taskID.empty()) {
		// A task: the call's handle, or a poll's answer.
		return taskChunk(t, ev.Data)
	}
	return m.chunk(t), nil
}

// ours reports whether the message is a response to a request of the
// run's: the call (its id is the run's) or one that followed it (the
// run's id, a colon, the method and a number).
func (m *mcpMessage) ours(callID string) bool {
	if !m.idStr {
		return false
	}
	v := m.id.value()
	return string(v) == callID || len(v) > len(callID) && string(v[:len(callID)]) == callID && v[len(callID)] == ':'
}

// chunk classifies a decoded message for the call of t.
func (m *mcpMessage) chunk(t Target) Chunk {
	ours := mcpCallID(t)
	switch {
	case !m.method.empty() && m.idSet:
		// A request of the server's (ping, sampling, elicitation): a ping
		// is answered, as the protocol requires; nothing else is.
		c := Chunk{Kind: Meta, Unrelated: true}
		if m.method.is("ping") && len(m.idRaw) <= maxReplyID {
			c.Reply = mcpPong(m.idRaw)
		}
		return c
	case m.method.is("notifications/progress"):
		if !m.params.tokenStr || !m.params.token.is(ours) {
			return Chunk{Kind: Meta, Foreign: true}
		}
		return Chunk{Kind: Text, Seq: m.params.progress, HasSeq: true}
	case !m.method.empty():
		return Chunk{Kind: Meta, Unrelated: true}
	case !m.idSet:
		return Chunk{Kind: Meta}
	case !m.ours(ours) && !(m.idNull && m.err.set):
		// A response to another request. An error with a null id (the
		// server could not tell which request) is taken as the call's.
		return Chunk{Kind: Meta, Foreign: true}
	case m.err.set:
		msg := "JSON-RPC error"
		if !m.err.message.empty() {
			msg += ": " + boundMessage(t, string(m.err.message.value()))
		}
		return Chunk{Kind: Failed, Message: msg}
	case m.result.set && m.result.isError:
		return Chunk{Kind: Failed, Message: "the tool's result has isError: true"}
	case m.result.set && m.result.resultType.is("input_required"):
		return Chunk{Kind: Failed, Message: "the server asked for input (resultType input_required), which a probe cannot give"}
	case m.result.set && !m.result.resultType.empty() && !m.result.resultType.is("complete"):
		return Chunk{Kind: Failed, Message: fmt.Sprintf("a result of an unknown resultType %q", bounded(t, string(m.result.resultType.value()), MaxDetailID))}
	case m.result.set:
		return Chunk{Kind: Text, IsEnd: true}
	}
	return Chunk{Kind: Failed, Message: "a response to the call with neither result nor error"}
}

// mcpMessage is what the probe reads of a JSON-RPC message, with
// encoding/json's semantics (see jscan): {"id","method","params":
// {"progressToken","progress"},"result":{"isError"},"error":{"message"}};
// of id and progressToken (any JSON value) whether each is there, and its
// value when it is a string.
type mcpMessage struct {
	s      jscan
	idSet  bool
	idStr  bool
	idNull bool
	id     jstr
	idRaw  []byte // the id as the message wrote it (for a ping's answer)
	method jstr
	params struct {
		tokenStr bool
		token    jstr
		progress float64
	}
	result struct {
		set, isError bool
		task         bool // a task field (the 2025-11-25 handle)
		resultType   jstr
		taskID       jstr
	}
	err errorObject
}

var (
	mcpFields  = []string{"id", "method", "params", "result", "error"}
	mcpParams  = []string{"progressToken", "progress"}
	mcpResults = []string{"isError", "resultType", "task", "taskId"}
)

func (m *mcpMessage) decode(data []byte) error { return m.s.scan(data, m.message, "mcp", "message") }

func (m *mcpMessage) message() bool {
	s := &m.s
	return s.object("", "", mcpFields, func(k int) bool {
		switch k {
		case 0:
			m.idSet, m.idNull = true, s.data[s.i] == 'n'
			at := s.i
			ok := s.anyStr(&m.id, &m.idStr)
			m.idRaw = s.data[at:s.i]
			return ok
		case 1:
			return s.strField(&m.method, "", "method")
		case 2:
			p := &m.params
			return s.object("", "params", mcpParams, func(k int) bool {
				if k == 0 {
					return s.anyStr(&p.token, &p.tokenStr)
				}
				return s.floatField(&p.progress, "params", "progress")
			})
		case 3:
			r := &m.result
			return pointer(s, r, &r.set, "", "result", mcpResults, func(k int) bool {
				switch k {
				case 0:
					return s.boolField(&r.isError, "result", "isError")
				case 1:
					return s.strField(&r.resultType, "result", "resultType")
				case 2:
					return s.presentField(&r.task, "result", "task")
				}
				var isStr bool
				return s.anyStr(&r.taskID, &isStr)
			})
		default:
			return s.errorField(&m.err, "", "error")
		}
	})
}

// errSetup marks the MCP server's wrong answers to the session setup: an
// ErrSetup, named "mcp: ...".
var errSetup error = setupError("mcp")

// OpenSession settles the protocol version: the target's mcp_version if
// it pins one, else what server/discover says. On 2026-07-28 there is no
// session: the call gets its _meta and headers (mcp_modern.go). Otherwise
// it opens a 2025 session: initialize, the protocol version the server
// answers, its Mcp-Session-Id, notifications/initialized.
func (mcpDialect) OpenSession(ctx context.Context, c *resumeclient.Client, t Target, req *resumeclient.Request) error {
	switch t.MCPVersion {
	case MCPModernVersion:
		return useModern(req, t, mcpServer{version: MCPModernVersion, tasks: true, tasks2025: true})
	case "":
		srv, modern, err := discover(ctx, c, t, *req)
		if err != nil {
			return err
		}
		if modern {
			return useModern(req, t, srv)
		}
	}
	return openSession(ctx, c, t, req)
}

// openSession opens a 2025 session: initialize asking for the pinned
// version (or the newest of the era), then notifications/initialized.
func openSession(ctx context.Context, c *resumeclient.Client, t Target, req *resumeclient.Request) error {
	body, _ := json.Marshal(mcpCall{JSONRPC: "2.0", ID: 1, Method: "initialize", Params: map[string]any{
		"protocolVersion": cmp.Or(t.MCPVersion, MCPProtocolVersions[0]), "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "streamprobe", "version": version.String()},
	}})
	h := req.Header.Clone()
	st, err := c.Open(ctx, resumeclient.Request{Method: http.MethodPost, URL: req.URL, Header: h, Body: body, Framing: resumeclient.FramingSSEOrJSON})
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	session := st.Header.Get(mcpSessionHeader)
	ver, tasks, err := initializeResult(ctx, st, t)
	st.Close()
	if err != nil {
		return err
	}
	if !tasks || ver != MCPProtocolVersions[0] {
		// Tasks came with 2025-11-25, for a server that says it makes
		// tasks of tool calls: to any other, a plain call.
		if err := dropTaskParam(req); err != nil {
			return err
		}
	}
	if session != "" {
		if i := resumeclient.InvalidHeaderByte(session); i >= 0 {
			return fmt.Errorf("%w: initialize: the server's Mcp-Session-Id holds the byte 0x%02x, which no header may carry", errSetup, session[i])
		}
		req.Header.Set(mcpSessionHeader, session)
	}
	req.Header.Set(mcpProtocolHeader, ver)
	if err := mcpNotify(ctx, c, *req, "notifications/initialized", nil); err != nil {
		return fmt.Errorf("notifications/initialized: %w", err)
	}
	return nil
}

// initializeResult reads the answer to initialize (id 1) and returns the
// protocol version the server chose, and whether it makes tasks of tool
// calls (capabilities.tasks.requests.tools.call, 2025-11-25).
func initializeResult(ctx context.Context, st *resumeclient.Stream, t Target) (ver string, tasks bool, err error) {
	events := 0
	for {
		ev, err := st.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return "", false, fmt.Errorf("%w: initialize: the answer ended with no response", errSetup)
			}
			if ctx.Err() != nil {
				return "", false, &WaitError{What: answeredWith(st, t, "initialize", events), Err: fmt.Errorf("initialize: %w", err)}
			}
			return "", false, fmt.Errorf("initialize: %w", err)
		}
		if ev.Kind != resumeclient.KindEvent || len(ev.Data) == 0 {
			continue
		}
		events++
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result *struct {
				ProtocolVersion string          `json:"protocolVersion"`
				Capabilities    mcpCapabilities `json:"capabilities"`
			} `json:"result"`
			Error *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(ev.Data, &m); err != nil || string(bytes.TrimSpace(m.ID)) != "1" {
			continue // not the answer (a notification, a log message)
		}
		switch {
		case m.Error != nil:
			return "", false, fmt.Errorf("%w: initialize: JSON-RPC error: %s", errSetup, boundMessage(t, m.Error.Message))
		case m.Result == nil:
			return "", false, fmt.Errorf("%w: initialize: a response with no result", errSetup)
		case !slices.Contains(MCPProtocolVersions, m.Result.ProtocolVersion):
			return "", false, fmt.Errorf("%w: initialize: the server answered protocol version %q; streamprobe speaks %s", errSetup,
				bounded(t, m.Result.ProtocolVersion, MaxDetailID), strings.Join(MCPProtocolVersions, ", "))
		}
		return m.Result.ProtocolVersion, m.Result.Capabilities.Tasks.Requests.Tools.Call != nil, nil
	}
}

// maxReplyID bounds the id of a ping the probe answers: a longer one (a
// hostile server's) is left unanswered.
const maxReplyID = 256

// mcpPong is the answer to a ping whose id is raw (as the ping wrote it).
func mcpPong(raw []byte) []byte {
	return append(append([]byte(`{"jsonrpc":"2.0","id":`), raw...), `,"result":{}}`...)
}

// Reply posts the answer to a request of the server's, with the session's
// headers; any 2xx is fine.
func (mcpDialect) Reply(ctx context.Context, c *resumeclient.Client, _ Target, req resumeclient.Request, body []byte) error {
	return mcpPost(ctx, c, req, body)
}

// answeredWith says what the answer to a setup request (initialize,
// server/discover) had brought when the wait for its response ended: its
// content type, and its events (a stream) or the bytes of its body (JSON).
func answeredWith(st *resumeclient.Stream, t Target, method string, events int) string {
	ctype, _, _ := strings.Cut(st.Header.Get("Content-Type"), ";")
	what := fmt.Sprintf("%s was answered (HTTP 200, %s)", method, bounded(t, strings.TrimSpace(ctype), MaxDetailID))
	if strings.Contains(ctype, "json") {
		return what + fmt.Sprintf(" with %d bytes of its body", st.Bytes())
	}
	return what + fmt.Sprintf(" with %d events and no response to it", events)
}

// mcpNotify posts a notification with req's headers; any 2xx answer
// (202 Accepted, as the transport says) is fine.
func mcpNotify(ctx context.Context, c *resumeclient.Client, req resumeclient.Request, method string, params map[string]any) error {
	body, _ := json.Marshal(mcpCall{JSONRPC: "2.0", Method: method, Params: params})
	return mcpPost(ctx, c, req, body)
}

// mcpPost posts a message that expects no answer (a notification, a
// response) with req's headers; any 2xx answer (202 Accepted, as the
// transport says) is fine.
func mcpPost(ctx context.Context, c *resumeclient.Client, req resumeclient.Request, body []byte) error {
	st, err := c.Open(ctx, resumeclient.Request{Method: http.MethodPost, URL: req.URL, Header: req.Header.Clone(), Body: body, Framing: resumeclient.FramingSSEOrJSON})
	if err == nil {
		st.Close()
		return nil
	}
	var se *resumeclient.StatusError
	if errors.As(err, &se) && se.Status/100 == 2 {
		return nil
	}
	return err
}

// CloseSession sends DELETE with the session's id; a 405 (the server
// does not let clients end sessions) or any other answer is fine.
func (mcpDialect) CloseSession(ctx context.Context, c *resumeclient.Client, _ Target, req resumeclient.Request) {
	if req.Header.Get(mcpSessionHeader) == "" {
		return
	}
	h := req.Header.Clone()
	h.Del("Content-Type")
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), mcpCloseWait)
	defer cancel()
	if st, err := c.Open(ctx, resumeclient.Request{Method: http.MethodDelete, URL: req.URL, Header: h}); err == nil {
		st.Close()
	}
}

// mcpCloseWait bounds the DELETE that ends a session.
const mcpCloseWait = 2 * time.Second

// CancelCall posts notifications/cancelled for the call.
func (mcpDialect) CancelCall(ctx context.Context, c *resumeclient.Client, t Target, req resumeclient.Request) error {
	return mcpNotify(ctx, c, req, "notifications/cancelled", map[string]any{
		"requestId": mcpCallID(t), "reason": "streamprobe cancel sample",
	})
}
