package refserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/streamprobe/streamprobe/dialect"
)

// MCPFault is a behaviour of the MCP server: a resume bug, or a way of
// answering, that one of the probe's verdicts names.
type MCPFault string

// The MCP server's faults. The empty one is a correct server.
const (
	// MCPDuplicate replays from the event Last-Event-ID names, itself
	// included (off by one).
	MCPDuplicate MCPFault = "duplicate"
	// MCPGap skips the event after the one Last-Event-ID names.
	MCPGap MCPFault = "gap"
	// MCPRestart runs the tool again on a resume: progress starts over,
	// under new event ids.
	MCPRestart MCPFault = "restart"
	// MCPCrossStream replays, with the stream resumed, the events of
	// another call of the session (its progress and its response).
	MCPCrossStream MCPFault = "cross-stream"
	// MCPStaleLive answers an unknown Last-Event-ID with the live tail of
	// the session's newest stream, saying nothing.
	MCPStaleLive MCPFault = "stale-live"
	// MCPNoIDs sends no event ids (and no priming event): nothing can be
	// resumed.
	MCPNoIDs MCPFault = "no-ids"
	// MCPPoll closes the call's stream on purpose (SEP-1699 polling)
	// after the priming event and every PollEvery messages, with a
	// retry field; a resume gets the rest.
	MCPPoll MCPFault = "poll"
	// MCPJSON answers tools/call with one JSON body once the tool is done.
	MCPJSON MCPFault = "json"
	// MCPReorder replays the first two events after the one Last-Event-ID
	// names in swapped order (as an event store that sorts Date.now() ids
	// as text does when two events share a millisecond).
	MCPReorder MCPFault = "reorder"
	// MCPLeaveOpen keeps a resumed GET's stream open after the call's
	// response (the server SHOULD close it; the TypeScript SDK's does not).
	MCPLeaveOpen MCPFault = "leave-open"
	// MCPCancelOnDrop cancels the tool when the client drops the POST's
	// connection and stores a "context canceled" error as the call's
	// answer, which a resume replays (as mark3labs/mcp-go does).
	MCPCancelOnDrop MCPFault = "cancel-on-drop"
	// MCPStaleQuiet answers an unknown Last-Event-ID with 200 and a
	// stream that carries only keep-alive comments, forever.
	MCPStaleQuiet MCPFault = "stale-quiet"
)

// MCPFaults lists the faults, for the demo and the tests: the 2025 resume
// faults, then the 2026-07-28 and task ones (mcp_modern.go, mcp_tasks.go).
var MCPFaults = []MCPFault{MCPDuplicate, MCPGap, MCPRestart, MCPCrossStream, MCPStaleLive, MCPNoIDs, MCPPoll, MCPJSON,
	MCPReorder, MCPLeaveOpen, MCPCancelOnDrop, MCPStaleQuiet,
	MCPTaskCancelOwn, MCPTaskNoResult, MCPTaskRerun, MCPTaskLost, MCPTaskStaleLive, MCPModernKeepIDs}

// MCPVersions are the protocol versions the server speaks, newest first:
// those the mcp dialect speaks.
var MCPVersions = dialect.MCPProtocolVersions

// MCP is a Model Context Protocol server over Streamable HTTP, as an
// http.Handler: sessions (Mcp-Session-Id), a tool "progress" that reports
// progress steps times interval_ms apart and then answers, an event
// store that gives every event of a call's stream an id and replays,
// after a GET with Last-Event-ID, only that stream's events after it, a
// SEP-1699 priming event (an id and empty data) at the start of each
// stream, notifications/cancelled, and DELETE. A call's arguments may
// name a fault ("fault":"gap") that overrides Fault for that call.
//
// A POST that names 2026-07-28 (its MCP-Protocol-Version header, or its
// _meta envelope) is served statelessly as that revision has it
// (mcp_modern.go), and the tool can run as a task on 2026-07-28 (the
// Tasks extension) and on 2025-11-25 (the experimental tasks;
// mcp_tasks.go).
type MCP struct {
	// Fault is the server-wide behaviour; empty is correct.
	Fault MCPFault
	// Retry is the retry field sent before a SEP-1699 close (default
	// 50 ms); PollEvery how many messages a polled stream carries before
	// each close (default 3).
	Retry     time.Duration
	PollEvery int
	// Version, when set, is the protocol version initialize answers,
	// whatever the client asked for.
	Version string
	// TaskTTL is a task's time to live (default 60 s): a 2026-07-28
	// task's ttlMs, a 2025-11-25 one's when the client asks for none.
	TaskTTL time.Duration

	mu       sync.Mutex
	sessions map[string]*mcpSession
	order    []string // session ids, oldest first
	n        int
	streams  int // 2026-07-28 calls so far (their streams' numbers)
	log      []*MCPRequest
	runs     []*MCPRun
	tasks    map[string]*mcpTask
	taskIDs  []string // task ids, oldest first
	// newestTask is the fault of the newest task call (an unknown task
	// id is answered as it says).
	newestTask MCPFault
	quit       chan struct{}
	once       sync.Once
	wg         sync.WaitGroup
}

// MCPRequest logs one request the server got.
type MCPRequest struct {
	At          time.Time
	Method      string // HTTP method
	RPC         string // the JSON-RPC method, "" for a response or none
	Session     string // Mcp-Session-Id
	Protocol    string // MCP-Protocol-Version
	LastEventID string
	Accept      string
	// MCPMethod and MCPName are the 2026-07-28 headers Mcp-Method and
	// Mcp-Name as sent; MetaProtocol the body's
	// _meta["io.modelcontextprotocol/protocolVersion"].
	MCPMethod    string
	MCPName      string
	MetaProtocol string
	// Task is the task a tasks/* request names (params.taskId), or the
	// task a tools/call created.
	Task   string
	Status int
	// Closed is when the server ended the answer's stream on purpose
	// (a SEP-1699 close), zero otherwise.
	Closed time.Time
}

// maxMCPSessions bounds the sessions kept: the oldest goes first.
const maxMCPSessions = 64

type mcpSession struct {
	id      string
	version string // the protocol version initialize answered
	streams map[int]*mcpStream
	newest  *mcpStream
}

// mcpStream is the event log of one call: event i has the id
// num*1_000_000+i (ids unique in the session, and a stream known from
// any of its ids); event 0 is the priming event.
type mcpStream struct {
	num     int
	events  []string // data; "" for the priming event
	done    bool
	changed chan struct{}
	reqID   json.RawMessage
	token   json.RawMessage
	fault   MCPFault
	gen     int           // bumped by a restart: an older run stops
	cancel  chan struct{} // closed by notifications/cancelled
	other   *mcpStream    // another call of the session (cross-stream)
	// reorderAt is where MCPReorder's swapped pair starts (-1 none): the
	// replay writes the pair first, with its own ids, then goes on after it.
	reorderAt int
	steps     int
	every     time.Duration
	// modern is a 2026-07-28 call: no ids (unless MCPModernKeepIDs), its
	// result carries resultType, and closing its POST cancels it.
	modern bool
	// silent sends no progress (a 2026-07-28 call without a progress
	// token, a task with none); fail ends the tool with a JSON-RPC error
	// instead of its result.
	silent bool
	fail   bool
	task   string    // the task the tool runs for
	doneAt time.Time // when done was set
}

func (st *mcpStream) id(i int) string { return strconv.Itoa(st.num*1_000_000 + i) }

// NewMCP returns an MCP server with fault f.
func NewMCP(f MCPFault) *MCP { return &MCP{Fault: f} }

// Requests returns a copy of the request log.
func (m *MCP) Requests() []MCPRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return values(m.log)
}

// values copies what ps point to.
func values[T any](ps []*T) []T {
	out := make([]T, len(ps))
	for i, p := range ps {
		out[i] = *p
	}
	return out
}

// Close stops the tools that still run and waits for them.
func (m *MCP) Close() error {
	m.mu.Lock()
	q := m.quitC()
	m.mu.Unlock()
	m.once.Do(func() { close(q) })
	m.wg.Wait()
	return nil
}

func (m *MCP) quitC() chan struct{} {
	if m.quit == nil {
		m.quit = make(chan struct{})
	}
	return m.quit
}

type rpcMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		ProtocolVersion string          `json:"protocolVersion"`
		Name            string          `json:"name"`
		URI             string          `json:"uri"`
		TaskID          string          `json:"taskId"`
		Arguments       json.RawMessage `json:"arguments"`
		RequestID       json.RawMessage `json:"requestId"`
		// Task asks a 2025-11-25 tools/call to run as a task.
		Task *struct {
			TTL int64 `json:"ttl"`
		} `json:"task"`
		Meta struct {
			ProgressToken json.RawMessage `json:"progressToken"`
			// The 2026-07-28 envelope.
			Version      *string         `json:"io.modelcontextprotocol/protocolVersion"`
			Capabilities json.RawMessage `json:"io.modelcontextprotocol/clientCapabilities"`
		} `json:"_meta"`
	} `json:"params"`
}

func (m *MCP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	m.quitC()
	m.wg.Add(1)
	m.mu.Unlock()
	defer m.wg.Done()
	entry := MCPRequest{At: time.Now(), Method: r.Method, Session: r.Header.Get("Mcp-Session-Id"), Protocol: r.Header.Get("MCP-Protocol-Version"),
		LastEventID: r.Header.Get("Last-Event-ID"), Accept: r.Header.Get("Accept"), MCPMethod: r.Header.Get("Mcp-Method"), MCPName: r.Header.Get("Mcp-Name")}
	var msg rpcMessage
	if r.Method == http.MethodPost {
		var body []byte
		body, entry.Status = readBody(r)
		if entry.Status == 0 && json.Unmarshal(body, &msg) != nil {
			entry.Status = http.StatusBadRequest
		}
		entry.RPC, entry.Task = msg.Method, msg.Params.TaskID
		if v := msg.Params.Meta.Version; v != nil {
			entry.MetaProtocol = *v
		}
	}
	logged := m.logRequest(entry)
	var status int
	var closed time.Time
	if isModern(r, &msg, entry) {
		status = m.serveModern(w, r, &msg, logged)
	} else {
		status, closed = m.serve(w, r, &msg, logged)
	}
	m.mu.Lock()
	logged.Status, logged.Closed = status, closed
	m.mu.Unlock()
}

func readBody(r *http.Request) ([]byte, int) {
	b, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return nil, http.StatusBadRequest
	}
	return b, 0
}

// logRequest logs a request, keeping the last 1024 (a long-running
// built-in target).
func (m *MCP) logRequest(e MCPRequest) *MCPRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := &e
	m.log = append(m.log, p)
	if len(m.log) > 1024 {
		m.log = slices.Delete(m.log, 0, 512)
	}
	return p
}

// serve answers one request of the 2025 protocol; it returns the status
// and the time of a SEP-1699 close. A GET or DELETE without a session is
// a 2026-07-28 client's: 405, as that revision has neither.
func (m *MCP) serve(w http.ResponseWriter, r *http.Request, msg *rpcMessage, e *MCPRequest) (int, time.Time) {
	switch {
	case e.Status != 0:
		return rpcError(w, e.Status, nil, -32700, "parse error"), time.Time{}
	case e.Session == "" && (r.Method == http.MethodGet || r.Method == http.MethodDelete):
		return methodNotAllowed(w), time.Time{}
	case e.Protocol != "" && !slices.Contains(MCPVersions, e.Protocol):
		return rpcError(w, http.StatusBadRequest, nil, -32600, "unsupported MCP-Protocol-Version"), time.Time{}
	case r.Method == http.MethodPost && msg.Method == "initialize":
		return m.initialize(w, msg), time.Time{}
	}
	sess := m.session(e.Session)
	switch {
	case e.Session == "":
		return rpcError(w, http.StatusBadRequest, nil, -32000, "Bad Request: no Mcp-Session-Id"), time.Time{}
	case sess == nil:
		return rpcError(w, http.StatusNotFound, nil, -32001, "Session not found"), time.Time{}
	}
	switch r.Method {
	case http.MethodGet:
		return m.resume(w, r, sess, e.LastEventID)
	case http.MethodDelete:
		m.mu.Lock()
		delete(m.sessions, sess.id)
		m.mu.Unlock()
		w.WriteHeader(http.StatusOK)
		return http.StatusOK, time.Time{}
	case http.MethodPost:
		if !strings.Contains(e.Accept, "text/event-stream") || !strings.Contains(e.Accept, "application/json") {
			return rpcError(w, http.StatusNotAcceptable, nil, -32000, "Not Acceptable: accept both application/json and text/event-stream"), time.Time{}
		}
		return m.post(w, r, sess, msg, e)
	}
	w.WriteHeader(http.StatusMethodNotAllowed)
	return http.StatusMethodNotAllowed, time.Time{}
}

func (m *MCP) session(id string) *mcpSession {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.sessions[id]
}

// initialize opens a session at the version the client asked for, or the
// newest the server speaks with a handshake; a 2025-11-25 session has
// tasks (the experimental ones of that revision).
func (m *MCP) initialize(w http.ResponseWriter, msg *rpcMessage) int {
	ver := m.Version
	if ver == "" {
		legacy := legacyVersions()
		ver = legacy[0]
		if slices.Contains(legacy, msg.Params.ProtocolVersion) {
			ver = msg.Params.ProtocolVersion
		}
	}
	m.mu.Lock()
	if m.sessions == nil {
		m.sessions = map[string]*mcpSession{}
	}
	m.n++
	s := &mcpSession{id: fmt.Sprintf("refserver-session-%d", m.n), version: ver, streams: map[int]*mcpStream{}}
	m.sessions[s.id] = s
	m.order = append(m.order, s.id)
	if len(m.order) > maxMCPSessions {
		delete(m.sessions, m.order[0])
		m.order = m.order[1:]
	}
	m.mu.Unlock()
	w.Header().Set("Mcp-Session-Id", s.id)
	caps := map[string]any{"tools": map[string]any{}}
	if ver == tasksVersion {
		caps["tasks"] = map[string]any{"list": map[string]any{}, "cancel": map[string]any{}, "requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}
	}
	return rpcResult(w, msg.ID, map[string]any{"protocolVersion": ver, "capabilities": caps, "serverInfo": serverInfo})
}

// serverInfo is the server's name and version.
var serverInfo = map[string]any{"name": "refserver", "version": "1"}

// methodNotAllowed answers a GET or DELETE that has no session: 405 with
// Allow: POST and a JSON-RPC error.
func methodNotAllowed(w http.ResponseWriter) int {
	w.Header().Set("Allow", http.MethodPost)
	return rpcError(w, http.StatusMethodNotAllowed, nil, -32000, "Method Not Allowed: no session (2026-07-28 has no GET or DELETE; POST each request)")
}

// post answers a message on POST: a notification (202), a tools/call (a
// stream, or one JSON body), tools/list, ping, and in a 2025-11-25
// session tasks/get, tasks/result, tasks/cancel and tasks/list.
func (m *MCP) post(w http.ResponseWriter, r *http.Request, sess *mcpSession, msg *rpcMessage, e *MCPRequest) (int, time.Time) {
	switch {
	case msg.ID == nil:
		if msg.Method == "notifications/cancelled" {
			m.cancel(sess, msg.Params.RequestID)
		}
		w.WriteHeader(http.StatusAccepted)
		return http.StatusAccepted, time.Time{}
	case msg.Method == "tools/call":
		return m.call(w, r, sess, msg, e)
	case msg.Method == "tools/list":
		return rpcResult(w, msg.ID, map[string]any{"tools": toolList}), time.Time{}
	case msg.Method == "ping":
		return rpcResult(w, msg.ID, map[string]any{}), time.Time{}
	case strings.HasPrefix(msg.Method, "tasks/") && sess.version == tasksVersion:
		return m.legacyTasks(w, r, sess, msg), time.Time{}
	}
	return rpcError(w, http.StatusOK, msg.ID, -32601, "Method not found"), time.Time{}
}

// toolList is the server's one tool, as tools/list lists it: it may run
// as a task (2025-11-25's execution.taskSupport).
var toolList = []any{map[string]any{"name": "progress",
	"description": "reports progress steps times, interval_ms apart, then answers",
	"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"steps": map[string]any{"type": "integer"},
		"interval_ms": map[string]any{"type": "integer"}, "fault": map[string]any{"type": "string"}}},
	"execution": map[string]any{"taskSupport": "optional"}}}

func (m *MCP) cancel(sess *mcpSession, reqID json.RawMessage) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, st := range sess.streams {
		if string(st.reqID) == string(reqID) && !st.done {
			closeCancel(st)
		}
	}
}

// toolArgs are the progress tool's arguments. Task and PollMs ask a
// 2026-07-28 call to run as a task, polled every PollMs; Fail ends the
// tool with a JSON-RPC error instead of its result.
type toolArgs struct {
	Steps      int      `json:"steps"`
	IntervalMs int      `json:"interval_ms"`
	Fault      MCPFault `json:"fault"`
	Task       bool     `json:"task"`
	PollMs     int      `json:"poll_ms"`
	Fail       bool     `json:"fail"`
}

// toolCall reads a tools/call's tool and arguments; the message is the
// error to answer ("" when the call is good).
func toolCall(msg *rpcMessage) (toolArgs, string) {
	var args toolArgs
	if msg.Params.Name != "progress" {
		return args, "Unknown tool: " + strconv.Quote(msg.Params.Name)
	}
	if len(msg.Params.Arguments) > 0 && json.Unmarshal(msg.Params.Arguments, &args) != nil {
		return args, "Invalid arguments"
	}
	return args, ""
}

// newToolStream is the event log of one run of the tool, with fault f;
// its steps as far apart as the request's slowdown asks (SlowPrefix).
func newToolStream(ctx context.Context, msg *rpcMessage, args toolArgs, f MCPFault) *mcpStream {
	return &mcpStream{reqID: msg.ID, token: msg.Params.Meta.ProgressToken, fault: f, steps: min(max(args.Steps, 0), 10_000), reorderAt: -1,
		every: Stretch(ctx, time.Duration(min(max(args.IntervalMs, 0), 60_000))*time.Millisecond), changed: make(chan struct{}), cancel: make(chan struct{}),
		fail: args.Fail, events: []string{""}}
}

// call starts the progress tool and answers with its stream (or, with
// params.task in a 2025-11-25 session, with a task).
func (m *MCP) call(w http.ResponseWriter, r *http.Request, sess *mcpSession, msg *rpcMessage, e *MCPRequest) (int, time.Time) {
	args, bad := toolCall(msg)
	if bad != "" {
		return rpcError(w, http.StatusOK, msg.ID, -32602, bad), time.Time{}
	}
	if msg.Params.Task != nil && sess.version == tasksVersion {
		return m.createTask(r.Context(), w, msg, args, sess.id, e), time.Time{}
	}
	st := newToolStream(r.Context(), msg, args, cmpOr(args.Fault, m.Fault))
	m.mu.Lock()
	st.num = len(sess.streams) + 1
	sess.streams[st.num] = st
	sess.newest = st
	if st.fault == MCPCrossStream {
		// Another call of the session, running beside this one: its
		// events are what the buggy resume replays.
		o := &mcpStream{num: st.num + 500, reqID: json.RawMessage(`"refserver-other"`), token: json.RawMessage(`"refserver-other"`), events: []string{""}, changed: make(chan struct{}), cancel: make(chan struct{})}
		sess.streams[o.num], st.other = o, o
	}
	m.wg.Add(1)
	m.mu.Unlock()
	go m.run(st, 0)
	if st.fault == MCPJSON {
		return m.answerJSON(w, r, st), time.Time{}
	}
	return m.play(w, r, st, 0, st.fault == MCPPoll)
}

func cmpOr[T comparable](a, b T) T {
	var zero T
	if a != zero {
		return a
	}
	return b
}

// run is the progress tool: steps progress notifications, then the
// response; a cancel ends it with neither, a restart (gen bumped) ends
// the older run. The run is logged (Runs).
func (m *MCP) run(st *mcpStream, gen int) {
	defer m.wg.Done()
	rec := m.startRun(st)
	outcome := m.steps(st, gen, rec)
	m.mu.Lock()
	if rec.Outcome == "" {
		rec.Ended, rec.Outcome = time.Now(), outcome
	}
	m.mu.Unlock()
}

// steps runs the tool's steps and appends its response; it returns how
// the run ended (MCPRun.Outcome).
func (m *MCP) steps(st *mcpStream, gen int, rec *MCPRun) string {
	next := time.Now()
	for i := 1; i <= st.steps; i++ {
		next = next.Add(st.every)
		if !m.sleep(st, next) {
			return stopped(st)
		}
		if !m.current(st, gen) {
			return "superseded"
		}
		if !st.silent {
			m.append(st, gen, fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":%d,"total":%d,"message":"step %d"}}`, tokenOr(st.token), i, st.steps, i))
		}
		if o := st.other; o != nil {
			m.append(o, 0, fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"refserver-other","progress":%d}}`, i))
		}
		m.mu.Lock()
		rec.Steps = i
		m.mu.Unlock()
	}
	if o := st.other; o != nil {
		m.append(o, 0, `{"jsonrpc":"2.0","id":"refserver-other","result":{"content":[{"type":"text","text":"other call"}]}}`)
	}
	m.append(st, gen, st.response())
	m.mu.Lock()
	defer m.mu.Unlock()
	if st.gen != gen {
		return "superseded"
	}
	st.done, st.doneAt = true, time.Now()
	m.notify(st)
	// Logged with the call's end, so that a client that has the answer
	// finds the run ended.
	rec.Ended, rec.Outcome = st.doneAt, "completed"
	if st.fail {
		rec.Outcome = "failed"
	}
	return rec.Outcome
}

// stopped says why a run's sleep ended early: the call was cancelled, or
// the server closes.
func stopped(st *mcpStream) string {
	select {
	case <-st.cancel:
		return "cancelled"
	default:
		return "stopped"
	}
}

// response is the call's JSON-RPC response: its result, or with fail the
// tool's error.
func (st *mcpStream) response() string {
	if st.fail {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":%s}`, st.reqID, st.toolError())
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, st.reqID, st.result())
}

// result is the tool's CallToolResult; a 2026-07-28 one says resultType
// and the server's identity.
func (st *mcpStream) result() string {
	if st.modern {
		return fmt.Sprintf(`{"content":[{"type":"text","text":"done after %d steps"}],"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"refserver","version":"1"}}}`, st.steps)
	}
	return fmt.Sprintf(`{"content":[{"type":"text","text":"done after %d steps"}]}`, st.steps)
}

// toolError is the JSON-RPC error the tool ends in with fail.
func (st *mcpStream) toolError() string {
	return fmt.Sprintf(`{"code":-32603,"message":"the tool failed after %d steps"}`, st.steps)
}

// MCPRun logs one run of the progress tool.
type MCPRun struct {
	Task    string // the task it ran for, "" for a plain call
	Started time.Time
	Ended   time.Time // zero while it runs
	Steps   int       // progress steps done
	// Outcome: "completed", "failed" (the fail argument), "cancelled",
	// "superseded" (a newer run of the same call or task took over),
	// "stopped" (the server closed); "" while it runs.
	Outcome string
}

func (m *MCP) startRun(st *mcpStream) *MCPRun {
	m.mu.Lock()
	defer m.mu.Unlock()
	rec := &MCPRun{Task: st.task, Started: time.Now()}
	m.runs = append(m.runs, rec)
	if len(m.runs) > 1024 {
		m.runs = slices.Delete(m.runs, 0, 512)
	}
	return rec
}

// Runs returns a copy of the log of the tool's runs (the last 1024 at
// least), oldest first.
func (m *MCP) Runs() []MCPRun {
	m.mu.Lock()
	defer m.mu.Unlock()
	return values(m.runs)
}

// closeCancel cancels the tool's run (under m.mu).
func closeCancel(st *mcpStream) {
	select {
	case <-st.cancel:
	default:
		close(st.cancel)
	}
}

func tokenOr(t json.RawMessage) string {
	if len(t) == 0 {
		return `"none"`
	}
	return string(t)
}

// sleep waits until t; false when the call was cancelled (the stream is
// then done, with no response) or the server closes.
func (m *MCP) sleep(st *mcpStream, t time.Time) bool {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-st.cancel:
		m.mu.Lock()
		if !st.done {
			st.done, st.doneAt = true, time.Now()
		}
		m.notify(st)
		m.mu.Unlock()
	case <-m.quit:
	}
	return false
}

func (m *MCP) current(st *mcpStream, gen int) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return st.gen == gen
}

func (m *MCP) append(st *mcpStream, gen int, data string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if st.gen != gen {
		return
	}
	st.events = append(st.events, data)
	m.notify(st)
}

// notify wakes the connections that wait on st (under m.mu).
func (m *MCP) notify(st *mcpStream) {
	close(st.changed)
	st.changed = make(chan struct{})
}

// answerJSON waits for the tool and answers its response as one JSON
// body (the server's choice Streamable HTTP allows).
func (m *MCP) answerJSON(w http.ResponseWriter, r *http.Request, st *mcpStream) int {
	for {
		m.mu.Lock()
		done, ch, evs := st.done, st.changed, st.events
		m.mu.Unlock()
		if done {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			if last := evs[len(evs)-1]; strings.HasPrefix(last, `{"jsonrpc":"2.0","id":`) {
				_, _ = w.Write([]byte(last))
			}
			return http.StatusOK
		}
		select {
		case <-ch:
		case <-r.Context().Done():
			m.dropped(r, st)
			return http.StatusOK
		case <-m.quit:
			return http.StatusOK
		}
	}
}

// resume answers a GET: with Last-Event-ID, the rest of the stream it
// names (as the fault has it); without, 405 (no standalone stream).
func (m *MCP) resume(w http.ResponseWriter, r *http.Request, sess *mcpSession, last string) (int, time.Time) {
	if last == "" {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return http.StatusMethodNotAllowed, time.Time{}
	}
	n, err := strconv.Atoi(last)
	m.mu.Lock()
	st := sess.streams[n/1_000_000]
	known := err == nil && n >= 0 && st != nil && n%1_000_000 < len(st.events)
	newest := sess.newest
	m.mu.Unlock()
	if !known {
		if newest != nil && newest.fault == MCPStaleQuiet || m.Fault == MCPStaleQuiet {
			return m.quiet(w, r), time.Time{}
		}
		if newest != nil && newest.fault == MCPStaleLive || m.Fault == MCPStaleLive {
			if newest == nil {
				return rpcError(w, http.StatusNotFound, nil, -32000, "no stream"), time.Time{}
			}
			m.mu.Lock()
			from := len(newest.events)
			m.mu.Unlock()
			return m.play(w, r, newest, from, false)
		}
		return rpcError(w, http.StatusNotFound, nil, -32000, "Unknown Last-Event-ID: nothing to replay"), time.Time{}
	}
	from := n%1_000_000 + 1
	switch st.fault {
	case MCPDuplicate:
		from--
	case MCPGap:
		from++
	case MCPReorder:
		m.mu.Lock()
		st.reorderAt = from
		m.mu.Unlock()
	case MCPRestart:
		m.mu.Lock()
		st.gen++
		gen := st.gen
		from = len(st.events)
		m.wg.Add(1)
		m.mu.Unlock()
		go m.run(st, gen)
	case MCPCrossStream:
		if o := st.other; o != nil {
			m.mu.Lock()
			extra := slices.Clone(o.events[1:])
			m.mu.Unlock()
			return m.play(w, r, st, from, false, extra...)
		}
	}
	return m.play(w, r, st, from, st.fault == MCPPoll)
}

// quiet answers with a stream of keep-alive comments only, until the
// client goes.
func (m *MCP) quiet(w http.ResponseWriter, r *http.Request) int {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		if _, err := io.WriteString(w, ": keep-alive\n\n"); err != nil || rc.Flush() != nil {
			return http.StatusOK
		}
		select {
		case <-tick.C:
		case <-r.Context().Done():
			return http.StatusOK
		case <-m.quit:
			return http.StatusOK
		}
	}
}

// play writes the stream st from event from on (extra first: another
// stream's events, replayed by the cross-stream bug), waits for more
// until the call is done, then ends the answer. poll closes it on purpose
// after the priming event and every PollEvery messages, with a retry
// field (SEP-1699); it returns the status and the time of such a close.
func (m *MCP) play(w http.ResponseWriter, r *http.Request, st *mcpStream, from int, poll bool, extra ...string) (int, time.Time) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	if st.modern {
		w.Header().Set("X-Accel-Buffering", "no")
	}
	w.WriteHeader(http.StatusOK)
	// However the answer ends before the call is done (a write that
	// failed, the client gone), what a dropped POST does is done; a call
	// done is left as it is.
	defer m.dropped(r, st)
	rc := http.NewResponseController(w)
	every := cmpOr(m.PollEvery, 3)
	retry := cmpOr(m.Retry, 50*time.Millisecond)
	for i, data := range extra {
		fmt.Fprintf(w, "id: %d\ndata: %s\n\n", st.other.num*1_000_000+i+1, data)
	}
	sent := 0
	for pos := from; ; {
		m.mu.Lock()
		evs, done, ch, swap := st.events, st.done, st.changed, st.reorderAt
		m.mu.Unlock()
		for ; pos < len(evs); pos++ {
			if pos == swap && pos+1 >= len(evs) && !done {
				break // MCPReorder: wait for the pair's second event
			}
			if pos == swap && pos+1 < len(evs) {
				// MCPReorder: this pair goes out swapped, each with its id.
				if m.writeEvent(w, st, pos+1, evs[pos+1], false, retry) != nil || m.writeEvent(w, st, pos, evs[pos], false, retry) != nil {
					return http.StatusOK, time.Time{}
				}
				pos++
				sent += 2
				continue
			}
			if err := m.writeEvent(w, st, pos, evs[pos], poll && pos == 0, retry); err != nil {
				return http.StatusOK, time.Time{}
			}
			if evs[pos] != "" {
				sent++
			}
			if poll && (pos == 0 && from == 0 || sent >= every) && !(done && pos == len(evs)-1) {
				fmt.Fprintf(w, "retry: %d\n\n", retry.Milliseconds())
				_ = rc.Flush()
				return http.StatusOK, time.Now()
			}
		}
		if rc.Flush() != nil || m.ended(r, st, done, ch) {
			return http.StatusOK, time.Time{}
		}
	}
}

// ended waits, once the events so far are out, for more of them (false)
// or for the answer's end (true): the call is done, the client went or
// the server closes (what a dropped POST does is play's: dropped). A
// resumed GET under MCPLeaveOpen stays open after the call's response,
// until the client goes.
func (m *MCP) ended(r *http.Request, st *mcpStream, done bool, more <-chan struct{}) bool {
	if done {
		if st.fault == MCPLeaveOpen && r.Method == http.MethodGet {
			select {
			case <-r.Context().Done():
			case <-m.quit:
			}
		}
		return true
	}
	select {
	case <-more:
		return false
	case <-r.Context().Done():
	case <-m.quit:
	}
	return true
}

// dropped is what the end of a call's POST answer before the call is
// done does: on 2026-07-28 it cancels the call (the spec: closing the
// stream is the cancellation); on 2025 nothing, but under
// MCPCancelOnDrop the tool is cancelled.
func (m *MCP) dropped(r *http.Request, st *mcpStream) {
	switch {
	case r.Method != http.MethodPost:
	case st.modern:
		m.mu.Lock()
		if !st.done {
			closeCancel(st)
		}
		m.mu.Unlock()
	case st.fault == MCPCancelOnDrop:
		m.cancelOnDrop(st)
	}
}

// cancelOnDrop is MCPCancelOnDrop's answer to the client's dropping the
// call's POST: the tool stops (its context was the request's) and the
// call's answer, stored for a resume to replay, is the error it ended in.
func (m *MCP) cancelOnDrop(st *mcpStream) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if st.done {
		return
	}
	st.gen++ // the running tool's next event is dropped
	st.events = append(st.events, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"context canceled"}}`, st.reqID))
	st.done, st.doneAt = true, time.Now()
	closeCancel(st) // the tool's context ends
	m.notify(st)
}

func (m *MCP) writeEvent(w http.ResponseWriter, st *mcpStream, pos int, data string, withRetry bool, retry time.Duration) error {
	var b strings.Builder
	if st.fault == MCPNoIDs || st.modern && st.fault != MCPModernKeepIDs {
		if data == "" {
			return nil // no priming event without an id
		}
	} else {
		b.WriteString("id: " + st.id(pos) + "\n")
	}
	if withRetry {
		fmt.Fprintf(&b, "retry: %d\n", retry.Milliseconds())
	}
	b.WriteString("data: " + data + "\n\n")
	_, err := w.Write([]byte(b.String()))
	return err
}

func rpcResult(w http.ResponseWriter, id json.RawMessage, result any) int {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
	return http.StatusOK
}

func rpcError(w http.ResponseWriter, status int, id json.RawMessage, code int, message string) int {
	return rpcErrorData(w, status, id, code, message, nil)
}

// rpcErrorData answers a JSON-RPC error, with data when it is not nil.
func rpcErrorData(w http.ResponseWriter, status int, id json.RawMessage, code int, message string, data any) int {
	if id == nil {
		id = json.RawMessage("null")
	}
	e := map[string]any{"code": code, "message": message}
	if data != nil {
		e["data"] = data
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": e})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
	return status
}
