package refserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Tasks: the progress tool run in the background, not tied to the
// request that started it, and polled.
//
// On 2026-07-28 (the Tasks extension, io.modelcontextprotocol/tasks): a
// tools/call whose _meta clientCapabilities names the extension and whose
// arguments say "task": true is answered at once with a CreateTaskResult
// (resultType "task" and the task's fields at the top of the result);
// tasks/get answers the DetailedTask (resultType "complete", the tool's
// result inlined once completed, its error once failed), tasks/cancel and
// tasks/update an empty acknowledgement; no progress is sent for a task;
// tasks/result does not exist.
//
// On 2025-11-25 (the experimental tasks of that revision): a tools/call
// with params.task is answered with {task: {...}}; tasks/get answers the
// task's fields, tasks/result waits for the end and answers the tool's
// result (with _meta io.modelcontextprotocol/related-task), sending on its
// stream the call's progress that no stream carried yet; tasks/cancel
// answers the cancelled task; tasks/list the session's tasks.

// The task faults, each what one task verdict names.
const (
	// MCPTaskCancelOwn cancels the task when the request that created it
	// ends, as mark3labs/mcp-go v1.2.1 does (the tool runs under the
	// request's context): tasks/get then says status "cancelled",
	// statusMessage "context canceled".
	MCPTaskCancelOwn MCPFault = "task-cancel-own"
	// MCPTaskNoResult leaves a completed task's result out of tasks/get
	// on 2026-07-28 and refuses tasks/result as removed (404, -32601), as
	// mark3labs/mcp-go v1.2.1 does: the result cannot be read.
	MCPTaskNoResult MCPFault = "task-no-result"
	// MCPTaskRerun runs the tool again when the client comes back after
	// more than 3 poll intervals without a tasks/get: the next tasks/get
	// finds a new createdAt and status "working" (even after
	// "completed"), and the task completes later.
	MCPTaskRerun MCPFault = "task-rerun"
	// MCPTaskLost answers a handle for a task it never stored: every
	// tasks/get of it, the first one too, is "task not found".
	MCPTaskLost MCPFault = "task-lost"
	// MCPTaskStaleLive answers tasks/get of an unknown task id with a
	// "working" task instead of an error.
	MCPTaskStaleLive MCPFault = "task-stale-live"
)

const (
	// maxMCPTasks bounds the tasks kept: the oldest goes first.
	maxMCPTasks = 256
	// taskTTL is a task's time to live from its creation unless
	// MCP.TaskTTL says otherwise; maxTaskTTL the most a 2025-11-25
	// client may ask for.
	taskTTL    = 60 * time.Second
	maxTaskTTL = time.Hour
	// taskPoll is the poll interval a task suggests unless the call's
	// poll_ms says otherwise.
	taskPoll = 100 * time.Millisecond
)

// mcpTask is one task: the tool's run (st) and what tasks/get tells.
type mcpTask struct {
	id      string
	session string // the 2025-11-25 session; "" for a 2026-07-28 task
	modern  bool
	fault   MCPFault
	st      *mcpStream
	// status is "working" until the task is cancelled; completed and
	// failed are read off st (state).
	status  string
	message string
	created time.Time
	updated time.Time
	seen    time.Time // the client's last tasks/* request for it
	ttl     time.Duration
	poll    time.Duration
	cursor  int // the next of st's events a tasks/result stream sends
	runs    int
	polls   int
}

// MCPTask is a task as the server holds it, for the tests.
type MCPTask struct {
	ID       string
	Protocol string // 2026-07-28 or 2025-11-25
	Fault    MCPFault
	Status   string
	Created  time.Time // its createdAt (a rerun sets it anew)
	Runs     int       // times the tool was started for it
	Polls    int       // tasks/get requests that found it
}

// Tasks returns the tasks the server holds, oldest first.
func (m *MCP) Tasks() []MCPTask {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]MCPTask, 0, len(m.taskIDs))
	for _, id := range m.taskIDs {
		t := m.tasks[id]
		status, _, _ := t.state()
		p := tasksVersion
		if t.modern {
			p = MCPModernVersion
		}
		out = append(out, MCPTask{ID: t.id, Protocol: p, Fault: t.fault, Status: status, Created: t.created, Runs: t.runs, Polls: t.polls})
	}
	return out
}

// createTask starts the tool as a task and answers its handle: for a
// 2026-07-28 call (session "") a CreateTaskResult, for a 2025-11-25 one
// {task: {...}}.
func (m *MCP) createTask(ctx context.Context, w http.ResponseWriter, msg *rpcMessage, args toolArgs, session string, e *MCPRequest) int {
	now := time.Now()
	t := &mcpTask{id: newTaskID(), session: session, modern: session == "", fault: cmpOr(args.Fault, m.Fault), status: "working",
		created: now, updated: now, seen: now, ttl: cmpOr(m.TaskTTL, taskTTL), poll: pollOf(args.PollMs), runs: 1}
	if !t.modern && msg.Params.Task.TTL > 0 {
		t.ttl = min(time.Duration(msg.Params.Task.TTL)*time.Millisecond, maxTaskTTL)
	}
	st := newToolStream(ctx, msg, args, t.fault)
	st.modern, st.task, st.silent = t.modern, t.id, t.modern || len(st.token) == 0
	t.st = st
	var handle map[string]any
	if t.modern {
		handle = m.taskView(t)
		handle["resultType"] = "task"
	} else {
		handle = map[string]any{"task": m.taskView(t)}
	}
	m.mu.Lock()
	e.Task, m.newestTask = t.id, t.fault
	if t.fault != MCPTaskLost {
		m.addTask(t)
		m.wg.Add(1)
		go m.run(st, 0)
	}
	if t.fault == MCPTaskCancelOwn {
		// mark3labs/mcp-go v1.2.1 runs a task's tool under the creating
		// request's context (server/server.go:2318, 2446;
		// server/streamable_http.go:719): the request's end cancels it.
		// Cancelled here, before the handle is written, so that no
		// tasks/get can come first.
		m.cancelTask(t, "context canceled")
	}
	m.mu.Unlock()
	return rpcResult(w, msg.ID, handle)
}

// modernTasks answers tasks/get, tasks/cancel and tasks/update on
// 2026-07-28.
func (m *MCP) modernTasks(w http.ResponseWriter, msg *rpcMessage) int {
	ack := map[string]any{"resultType": "complete"}
	m.mu.Lock()
	t := m.lookupTask(msg.Params.TaskID, "")
	var v map[string]any
	switch {
	case t == nil && msg.Method == "tasks/get" && m.staleLive():
		v = m.taskView(madeUpTask(msg.Params.TaskID, true))
	case t == nil:
	case msg.Method == "tasks/get":
		v = m.pollTask(t)
	case msg.Method == "tasks/cancel":
		// Acknowledged whatever the status: a task that ended first
		// stays as it ended (the extension: cancellation is
		// cooperative).
		m.cancelTask(t, "cancelled by tasks/cancel")
		v = ack
	default:
		v = ack // tasks/update: this tool never asks for input
	}
	m.mu.Unlock()
	if v == nil {
		// 400 with -32602 "task not found", as mark3labs/mcp-go v1.2.1
		// answers on 2026-07-28 (server/server.go:2910-2917, pinned by
		// internal/testenv/mcppeer/tasks_test.go).
		return rpcError(w, http.StatusBadRequest, msg.ID, -32602, "task not found")
	}
	return rpcResult(w, msg.ID, v)
}

// tasksResultRemoved answers tasks/result on 2026-07-28, where it does
// not exist: 404 with -32601 (a method the server does not implement);
// under MCPTaskNoResult with mark3labs/mcp-go v1.2.1's message
// (server/request_handler.go:587-594).
func (m *MCP) tasksResultRemoved(w http.ResponseWriter, msg *rpcMessage) int {
	m.mu.Lock()
	f := m.Fault
	if t := m.lookupTask(msg.Params.TaskID, ""); t != nil {
		f = t.fault
	}
	m.mu.Unlock()
	if f == MCPTaskNoResult {
		return rpcError(w, http.StatusNotFound, msg.ID, -32601, "tasks/result was removed in 2026-07-28")
	}
	return rpcError(w, http.StatusNotFound, msg.ID, -32601, "Method not found")
}

// legacyTasks answers tasks/* in a 2025-11-25 session; errors are HTTP
// 200 with a JSON-RPC error, as every error of that path.
func (m *MCP) legacyTasks(w http.ResponseWriter, r *http.Request, sess *mcpSession, msg *rpcMessage) int {
	id := msg.Params.TaskID
	m.mu.Lock()
	t := m.lookupTask(id, sess.id)
	var v map[string]any
	bad := "task not found"
	switch {
	case msg.Method == "tasks/list":
		v = map[string]any{"tasks": m.sessionTasks(sess.id)}
	case msg.Method != "tasks/get" && msg.Method != "tasks/cancel" && msg.Method != "tasks/result":
		m.mu.Unlock()
		return rpcError(w, http.StatusOK, msg.ID, -32601, "Method not found")
	case t == nil && msg.Method == "tasks/get" && m.staleLive():
		v = m.taskView(madeUpTask(id, false))
	case t == nil:
	case msg.Method == "tasks/get":
		v = m.pollTask(t)
	case msg.Method == "tasks/cancel":
		if m.cancelTask(t, "cancelled by tasks/cancel") {
			v = m.taskView(t)
		} else {
			// 2025-11-25: a task in a terminal status is not cancelled.
			s, _, _ := t.state()
			bad = "task is already " + s
		}
	}
	m.mu.Unlock()
	switch {
	case msg.Method == "tasks/result" && t != nil:
		return m.taskResult(w, r, t, msg.ID)
	case v == nil:
		return rpcError(w, http.StatusOK, msg.ID, -32602, bad)
	}
	return rpcResult(w, msg.ID, v)
}

// taskResult is 2025-11-25's tasks/result: an SSE stream that carries the
// call's progress no stream carried yet, as it comes, then, once the task
// has ended, the tool's result (or a JSON-RPC error for a failed or
// cancelled task), and ends.
func (m *MCP) taskResult(w http.ResponseWriter, r *http.Request, t *mcpTask, id json.RawMessage) int {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	for {
		m.mu.Lock()
		evs, ch := t.st.events, t.st.changed
		from := min(max(t.cursor, 1), len(evs))
		t.cursor, t.seen = len(evs), time.Now()
		final := ""
		if status, _, _ := t.state(); status != "working" {
			final = t.response(status, id)
		}
		m.mu.Unlock()
		for _, ev := range evs[from:] {
			if strings.Contains(ev, `"method":"notifications/progress"`) {
				fmt.Fprintf(w, "data: %s\n\n", ev)
			}
		}
		if final != "" {
			fmt.Fprintf(w, "data: %s\n\n", final)
			_ = rc.Flush()
			return http.StatusOK
		}
		if rc.Flush() != nil {
			return http.StatusOK
		}
		select {
		case <-ch:
		case <-r.Context().Done():
			return http.StatusOK
		case <-m.quit:
			return http.StatusOK
		}
	}
}

// response is tasks/result's answer for a task that has ended: what the
// call would have answered, the result marked with the task.
func (t *mcpTask) response(status string, id json.RawMessage) string {
	var msg map[string]any
	switch status {
	case "completed":
		var res map[string]any
		_ = json.Unmarshal([]byte(t.st.result()), &res)
		res["_meta"] = map[string]any{"io.modelcontextprotocol/related-task": map[string]any{"taskId": t.id}}
		msg = map[string]any{"jsonrpc": "2.0", "id": id, "result": res}
	case "failed":
		msg = map[string]any{"jsonrpc": "2.0", "id": id, "error": json.RawMessage(t.st.toolError())}
	default:
		msg = map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": -32603, "message": cmpOr(t.message, "task cancelled")}}
	}
	b, _ := json.Marshal(msg)
	return string(b)
}

// state is the task's status, statusMessage and lastUpdatedAt (under
// m.mu).
func (t *mcpTask) state() (string, string, time.Time) {
	switch {
	case t.status != "working":
		return t.status, t.message, t.updated
	case !t.st.done:
		return "working", "", t.updated
	case t.st.fail:
		return "failed", "the tool failed", t.st.doneAt
	}
	return "completed", "", t.st.doneAt
}

// taskView is the task as tasks/get answers it (under m.mu): on
// 2026-07-28 the DetailedTask with resultType "complete" and the result
// or error inlined; on 2025-11-25 the task's fields.
func (m *MCP) taskView(t *mcpTask) map[string]any {
	status, message, updated := t.state()
	v := map[string]any{"taskId": t.id, "status": status, "createdAt": timestamp(t.created), "lastUpdatedAt": timestamp(updated)}
	if message != "" {
		v["statusMessage"] = message
	}
	if !t.modern {
		v["ttl"], v["pollInterval"] = t.ttl.Milliseconds(), t.poll.Milliseconds()
		return v
	}
	v["ttlMs"], v["pollIntervalMs"], v["resultType"] = t.ttl.Milliseconds(), t.poll.Milliseconds(), "complete"
	switch {
	case status == "completed" && t.fault != MCPTaskNoResult:
		v["result"] = json.RawMessage(t.st.result())
	case status == "failed":
		v["error"] = json.RawMessage(t.st.toolError())
	}
	return v
}

// pollTask is a tasks/get that found t (under m.mu); under MCPTaskRerun a
// client away for more than 3 poll intervals finds the tool started
// over.
func (m *MCP) pollTask(t *mcpTask) map[string]any {
	now := time.Now()
	t.polls++
	if status, _, _ := t.state(); t.fault == MCPTaskRerun && status != "cancelled" && now.Sub(t.seen) > 3*t.poll {
		m.rerun(t, now)
	}
	t.seen = now
	return m.taskView(t)
}

// rerun starts the task's tool over (MCPTaskRerun; under m.mu): the run
// under way stops at its next step, the events and the result so far are
// gone, and the task is created anew.
func (m *MCP) rerun(t *mcpTask, now time.Time) {
	st := t.st
	st.gen++
	st.events, st.done, st.doneAt = []string{""}, false, time.Time{}
	t.created, t.updated, t.cursor = now, now, 0
	t.runs++
	m.notify(st)
	m.wg.Add(1)
	go m.run(st, st.gen)
}

// cancelTask cancels a task that is still working (under m.mu); false
// when it had ended.
func (m *MCP) cancelTask(t *mcpTask, message string) bool {
	if status, _, _ := t.state(); status != "working" {
		return false
	}
	t.status, t.message, t.updated = "cancelled", message, time.Now()
	closeCancel(t.st)
	m.notify(t.st)
	return true
}

// staleLive reports whether an unknown task id is answered as a working
// task (under m.mu).
func (m *MCP) staleLive() bool {
	return m.Fault == MCPTaskStaleLive || m.newestTask == MCPTaskStaleLive
}

// madeUpTask is MCPTaskStaleLive's answer to an unknown id: a task that
// works, made up on the spot.
func madeUpTask(id string, modern bool) *mcpTask {
	now := time.Now()
	return &mcpTask{id: id, modern: modern, status: "working", created: now, updated: now, ttl: taskTTL, poll: taskPoll, st: &mcpStream{}}
}

// addTask keeps a new task (under m.mu), letting the expired ones go and
// then the oldest beyond maxMCPTasks.
func (m *MCP) addTask(t *mcpTask) {
	if m.tasks == nil {
		m.tasks = map[string]*mcpTask{}
	}
	for _, id := range slices.Clone(m.taskIDs) {
		if old := m.tasks[id]; time.Since(old.created) > old.ttl {
			m.dropTask(old)
		}
	}
	m.tasks[t.id] = t
	m.taskIDs = append(m.taskIDs, t.id)
	for len(m.taskIDs) > maxMCPTasks {
		m.dropTask(m.tasks[m.taskIDs[0]])
	}
}

// lookupTask finds a task of the session ("" on 2026-07-28) by id (under
// m.mu); an expired one is let go and not found.
func (m *MCP) lookupTask(id, session string) *mcpTask {
	t := m.tasks[id]
	switch {
	case t == nil || t.session != session:
		return nil
	case time.Since(t.created) > t.ttl:
		m.dropTask(t)
		return nil
	}
	return t
}

// dropTask forgets a task (under m.mu); a tool still running for it is
// cancelled.
func (m *MCP) dropTask(t *mcpTask) {
	m.cancelTask(t, "the task expired")
	delete(m.tasks, t.id)
	m.taskIDs = slices.DeleteFunc(m.taskIDs, func(id string) bool { return id == t.id })
}

// sessionTasks are a 2025-11-25 session's tasks as tasks/list lists them
// (under m.mu).
func (m *MCP) sessionTasks(session string) []any {
	out := []any{}
	for _, id := range m.taskIDs {
		if t := m.tasks[id]; t.session == session && time.Since(t.created) <= t.ttl {
			out = append(out, m.taskView(t))
		}
	}
	return out
}

// newTaskID is an unguessable task id: 128 random bits in hex.
func newTaskID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// pollOf is the poll interval a call's poll_ms asks for: 10 ms to 60 s,
// taskPoll when it names none.
func pollOf(ms int) time.Duration {
	if ms <= 0 {
		return taskPoll
	}
	return time.Duration(min(max(ms, 10), 60_000)) * time.Millisecond
}
