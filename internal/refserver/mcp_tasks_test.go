package refserver

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// Raw-HTTP tests of the server's tasks: the 2026-07-28 Tasks extension and
// the 2025-11-25 experimental tasks, and each task fault.

var taskIDRE = regexp.MustCompile(`^[0-9a-f]{32}$`)

// taskCall26 calls the tool as a task on 2026-07-28 (the extension
// declared, "task": true) and returns the answer.
func taskCall26(t *testing.T, url string, args map[string]any) answer {
	t.Helper()
	args["task"] = true
	q := call26(args)
	q.tasks = true
	return readAnswer(t, q.do(t, url))
}

// handle26 starts a 2026-07-28 task and returns its handle.
func handle26(t *testing.T, url string, args map[string]any) rpcReply {
	t.Helper()
	a := taskCall26(t, url, args)
	if a.status != 200 || a.ctype != "application/json" {
		t.Fatalf("a task call: HTTP %d %s %q, want one JSON body", a.status, a.ctype, a.body)
	}
	return a.reply(t)
}

// tasks26 sends tasks/get, tasks/cancel or tasks/update for id.
func tasks26(t *testing.T, url, method, id string) answer {
	t.Helper()
	return readAnswer(t, req26{id: 7, method: method, params: map[string]any{"taskId": id}, tasks: true}.do(t, url))
}

// get26 polls the task once and returns tasks/get's result.
func get26(t *testing.T, url, id string) rpcReply {
	t.Helper()
	a := tasks26(t, url, "tasks/get", id)
	r := a.reply(t)
	if a.status != 200 || r.Result == nil {
		t.Fatalf("tasks/get %s: HTTP %d %q", id, a.status, a.body)
	}
	return r
}

// until26 polls the task every 10 ms until its status is want.
func until26(t *testing.T, url, id, want string) rpcReply {
	t.Helper()
	var r rpcReply
	waitFor(t, "task "+id+" "+want, func() bool { r = get26(t, url, id); return r.str("status") == want })
	return r
}

func parseTime(t *testing.T, s string) time.Time {
	t.Helper()
	tm, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("timestamp %q: %v", s, err)
	}
	return tm
}

// A 2026-07-28 task: the handle at once (resultType "task", the task's
// fields at the top, an unguessable id, ttlMs 60000, pollIntervalMs from
// poll_ms), the tool running on after the request ended, tasks/get with
// the result inlined once completed (the same CallToolResult a plain
// call gives), no progress anywhere.
func TestMCPTaskModern(t *testing.T) {
	t.Parallel()
	m, url := startMCP(t, "")
	h := handle26(t, url, map[string]any{"steps": 3, "interval_ms": 20, "poll_ms": 50})
	id := h.str("taskId")
	if h.str("resultType") != "task" || !taskIDRE.MatchString(id) || h.str("status") != "working" || h.num("ttlMs") != 60000 || h.num("pollIntervalMs") != 50 ||
		h.Result["content"] != nil || h.Result["task"] != nil {
		t.Errorf("handle %v: want resultType task, a random hex taskId, status working, ttlMs 60000, pollIntervalMs 50, nothing else", h.Result)
	}
	created := parseTime(t, h.str("createdAt"))
	if !parseTime(t, h.str("lastUpdatedAt")).Equal(created) {
		t.Errorf("handle: lastUpdatedAt %s, createdAt %s", h.str("lastUpdatedAt"), h.str("createdAt"))
	}
	r := until26(t, url, id, "completed")
	if r.str("resultType") != "complete" || r.str("taskId") != id || r.str("createdAt") != h.str("createdAt") || parseTime(t, r.str("lastUpdatedAt")).Before(created) {
		t.Errorf("tasks/get %v", r.Result)
	}
	var res struct {
		ResultType string `json:"resultType"`
	}
	_ = json.Unmarshal(r.Result["result"], &res)
	if text(t, r.Result["result"]) != "done after 3 steps" || res.ResultType != "complete" {
		t.Errorf("result %s: want the plain call's CallToolResult", r.Result["result"])
	}
	if runs := m.Runs(); len(runs) != 1 || runs[0].Task != id || runs[0].Outcome != "completed" {
		t.Errorf("runs %+v: want one completed run for the task", runs)
	}
	if tk := m.Tasks(); len(tk) != 1 || tk[0].ID != id || tk[0].Protocol != MCPModernVersion || tk[0].Status != "completed" || tk[0].Runs != 1 || tk[0].Polls < 1 {
		t.Errorf("tasks %+v", tk)
	}
	if l := m.Requests(); l[0].Task != id || l[len(l)-1].Task != id || l[len(l)-1].MCPName != id || l[len(l)-1].MCPMethod != "tasks/get" {
		t.Errorf("the log names the task on the call and on tasks/get: %+v, %+v", l[0], l[len(l)-1])
	}
}

// A task is made only for a client that declared the extension and a call
// that asks for one: otherwise the call is a plain one.
func TestMCPTaskOnlyWhenDeclared(t *testing.T) {
	t.Parallel()
	m, url := startMCP(t, "")
	q := call26(map[string]any{"steps": 1, "interval_ms": 0, "task": true})
	a := readAnswer(t, q.do(t, url))
	if r := a.reply(t); a.ctype != "text/event-stream" || r.str("resultType") != "complete" || r.Result["taskId"] != nil {
		t.Errorf("task:true without the extension: %q, want a plain call", a.body)
	}
	q = call26(map[string]any{"steps": 1, "interval_ms": 0})
	q.tasks = true
	a = readAnswer(t, q.do(t, url))
	if r := a.reply(t); a.ctype != "text/event-stream" || r.str("resultType") != "complete" {
		t.Errorf("the extension without task:true: %q, want a plain call", a.body)
	}
	if n := len(m.Tasks()); n != 0 {
		t.Errorf("%d tasks made", n)
	}
}

// tasks/cancel: an acknowledgement; the task goes to cancelled and its
// tool stops. An unknown id: 400 -32602 "task not found" on tasks/get and
// tasks/cancel. tasks/update of a known task: an acknowledgement.
func TestMCPTaskModernCancel(t *testing.T) {
	t.Parallel()
	m, url := startMCP(t, "")
	id := handle26(t, url, map[string]any{"steps": 400, "interval_ms": 50}).str("taskId") // 20 s
	if r := get26(t, url, id); r.str("status") != "working" || r.Result["result"] != nil {
		t.Errorf("a running task: %v", r.Result)
	}
	for _, method := range []string{"tasks/update", "tasks/cancel"} {
		a := tasks26(t, url, method, id)
		if a.status != 200 || a.body != `{"id":7,"jsonrpc":"2.0","result":{"resultType":"complete"}}` {
			t.Errorf("%s: HTTP %d %q, want the empty acknowledgement", method, a.status, a.body)
		}
	}
	if r := get26(t, url, id); r.str("status") != "cancelled" || r.str("statusMessage") != "cancelled by tasks/cancel" {
		t.Errorf("after tasks/cancel: %v", r.Result)
	}
	waitFor(t, "the tool stopped", func() bool { r := m.Runs(); return len(r) == 1 && r[0].Outcome != "" })
	if r := m.Runs()[0]; r.Outcome != "cancelled" {
		t.Errorf("run %+v, want cancelled", r)
	}
	for _, method := range []string{"tasks/get", "tasks/cancel", "tasks/update"} {
		a := tasks26(t, url, method, "0123456789abcdef0123456789abcdef")
		if r := a.reply(t); a.status != 400 || r.Error == nil || r.Error.Code != -32602 || r.Error.Message != "task not found" {
			t.Errorf("%s of an unknown id: HTTP %d %q, want 400 -32602 task not found", method, a.status, a.body)
		}
	}
}

// A tool that fails: the task is failed, with the JSON-RPC error.
func TestMCPTaskModernFailed(t *testing.T) {
	t.Parallel()
	_, url := startMCP(t, "")
	id := handle26(t, url, map[string]any{"steps": 1, "interval_ms": 0, "fail": true}).str("taskId")
	r := until26(t, url, id, "failed")
	if string(r.Result["error"]) != `{"code":-32603,"message":"the tool failed after 1 steps"}` || r.Result["result"] != nil || r.str("statusMessage") == "" {
		t.Errorf("a failed task: %v", r.Result)
	}
}

// The tasks kept are bounded (the oldest goes first) and a task is let go
// after its ttl.
func TestMCPTaskBounds(t *testing.T) {
	t.Parallel()
	m, url := startMCP(t, "")
	first := handle26(t, url, map[string]any{"steps": 0}).str("taskId")
	for range maxMCPTasks {
		handle26(t, url, map[string]any{"steps": 0})
	}
	if n := len(m.Tasks()); n != maxMCPTasks {
		t.Errorf("%d tasks kept, want %d", n, maxMCPTasks)
	}
	if a := tasks26(t, url, "tasks/get", first); a.status != 400 {
		t.Errorf("the first of %d tasks: HTTP %d, want 400 (let go)", maxMCPTasks+1, a.status)
	}

	m = &MCP{TaskTTL: 200 * time.Millisecond}
	hs := httptest.NewServer(m)
	t.Cleanup(func() { hs.Close(); m.Close() })
	url = hs.URL
	h := handle26(t, url, map[string]any{"steps": 0})
	if h.num("ttlMs") != 200 {
		t.Errorf("ttlMs %d, want 200", h.num("ttlMs"))
	}
	time.Sleep(300 * time.Millisecond) // past the ttl: a lower bound, not a race
	if a := tasks26(t, url, "tasks/get", h.str("taskId")); a.status != 400 {
		t.Errorf("a task past its ttl: HTTP %d %q, want 400 task not found", a.status, a.body)
	}
}

// task-cancel-own: the task is cancelled by the end of the request that
// made it (mark3labs/mcp-go v1.2.1): tasks/get says cancelled, "context
// canceled", and the tool stopped before its first step.
func TestMCPTaskCancelOwn(t *testing.T) {
	t.Parallel()
	m, url := startMCP(t, "")
	h := handle26(t, url, map[string]any{"steps": 3, "interval_ms": 10000, "fault": "task-cancel-own"})
	if h.str("status") != "working" {
		t.Errorf("handle %v: want working", h.Result)
	}
	if r := get26(t, url, h.str("taskId")); r.str("status") != "cancelled" || r.str("statusMessage") != "context canceled" {
		t.Errorf("tasks/get %v: want cancelled, context canceled", r.Result)
	}
	waitFor(t, "the tool stopped", func() bool { r := m.Runs(); return len(r) == 1 && r[0].Outcome != "" })
	if r := m.Runs()[0]; r.Outcome != "cancelled" || r.Steps != 0 {
		t.Errorf("run %+v: want cancelled before its first step", r)
	}
}

// task-no-result: a completed task's tasks/get carries no result and
// tasks/result is refused as removed (mark3labs/mcp-go v1.2.1 on
// 2026-07-28).
func TestMCPTaskNoResult(t *testing.T) {
	t.Parallel()
	_, url := startMCP(t, "")
	id := handle26(t, url, map[string]any{"steps": 0, "fault": "task-no-result"}).str("taskId")
	if r := until26(t, url, id, "completed"); r.Result["result"] != nil {
		t.Errorf("tasks/get of a completed task: %v, want no result", r.Result)
	}
	a := tasks26(t, url, "tasks/result", id)
	if r := a.reply(t); a.status != 404 || r.Error == nil || r.Error.Code != -32601 || r.Error.Message != "tasks/result was removed in 2026-07-28" {
		t.Errorf("tasks/result: HTTP %d %q", a.status, a.body)
	}
}

// task-rerun: a client away for more than 3 poll intervals finds the tool
// started over (a new createdAt, working again) and completing later; the
// correct server keeps the task as it was.
func TestMCPTaskRerun(t *testing.T) {
	t.Parallel()
	for _, f := range []MCPFault{"", MCPTaskRerun} {
		m, url := startMCP(t, "")
		const poll = 100 * time.Millisecond
		id := handle26(t, url, map[string]any{"steps": 3, "interval_ms": 10, "poll_ms": poll.Milliseconds(), "fault": string(f)}).str("taskId")
		done := until26(t, url, id, "completed") // a stall here may rerun it too: until26 waits on
		runs := m.Tasks()[0].Runs
		time.Sleep(4 * poll) // away for longer than 3 poll intervals
		r := get26(t, url, id)
		if f == "" {
			if r.str("status") != "completed" || r.str("createdAt") != done.str("createdAt") || m.Tasks()[0].Runs != 1 {
				t.Errorf("the correct server after the client was away: %v, %d runs", r.Result, m.Tasks()[0].Runs)
			}
			continue
		}
		if r.str("status") != "working" || !parseTime(t, r.str("createdAt")).After(parseTime(t, done.str("createdAt"))) || r.Result["result"] != nil ||
			m.Tasks()[0].Runs != runs+1 {
			t.Errorf("task-rerun after the client was away: %v (was %v), %d runs (was %d): want working, a later createdAt, one run more", r.Result, done.Result, m.Tasks()[0].Runs, runs)
		}
		if r := until26(t, url, id, "completed"); text(t, r.Result["result"]) != "done after 3 steps" {
			t.Errorf("the rerun's result: %v", r.Result)
		}
	}
}

// task-lost: the handle names a task the server never stored: the first
// tasks/get is already "task not found", and no tool ran.
func TestMCPTaskLost(t *testing.T) {
	t.Parallel()
	m, url := startMCP(t, "")
	h := handle26(t, url, map[string]any{"steps": 1, "interval_ms": 0, "fault": "task-lost"})
	if h.str("status") != "working" || !taskIDRE.MatchString(h.str("taskId")) {
		t.Errorf("handle %v", h.Result)
	}
	for range 2 {
		a := tasks26(t, url, "tasks/get", h.str("taskId"))
		if r := a.reply(t); a.status != 400 || r.Error == nil || r.Error.Message != "task not found" {
			t.Errorf("tasks/get: HTTP %d %q, want 400 task not found", a.status, a.body)
		}
	}
	if len(m.Tasks()) != 0 || len(m.Runs()) != 0 {
		t.Errorf("tasks %+v runs %+v: want none", m.Tasks(), m.Runs())
	}
}

// task-stale-live: an unknown task id gets a working task, not an error;
// without the fault it is "task not found".
func TestMCPTaskStaleLive(t *testing.T) {
	t.Parallel()
	for _, f := range []MCPFault{"", MCPTaskStaleLive} {
		_, url := startMCP(t, "")
		handle26(t, url, map[string]any{"steps": 0, "fault": string(f)})
		const stale = "streamprobe-stale-task-0"
		a := tasks26(t, url, "tasks/get", stale)
		r := a.reply(t)
		switch {
		case f == "" && (a.status != 400 || r.Error == nil || r.Error.Code != -32602):
			t.Errorf("correct: HTTP %d %q, want 400 -32602", a.status, a.body)
		case f != "" && (a.status != 200 || r.str("status") != "working" || r.str("taskId") != stale || r.str("resultType") != "complete"):
			t.Errorf("task-stale-live: HTTP %d %q, want 200 a working task %s", a.status, a.body, stale)
		}
	}
}

// session25 is a 2025-11-25 session on url.
type session25 struct {
	t   *testing.T
	url string
	id  string
}

func open25(t *testing.T, url string) session25 {
	return session25{t: t, url: url, id: initialize25(t, url, tasksVersion)}
}

func (s session25) post(id int, method string, params map[string]any) answer {
	s.t.Helper()
	return post25(s.t, s.url, s.id, tasksVersion, map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

// task25 is the task object of a 2025-11-25 handle.
type task25 struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	TTL           *int64 `json:"ttl"`
	PollInterval  *int64 `json:"pollInterval"`
}

// start calls the tool as a task (params.task) with progress token "tok".
func (s session25) start(args map[string]any) task25 {
	s.t.Helper()
	a := s.post(1, "tools/call", map[string]any{"name": "progress", "arguments": args, "task": map[string]any{"ttl": 30000}, "_meta": map[string]any{"progressToken": "tok"}})
	var h task25
	if err := json.Unmarshal(a.reply(s.t).Result["task"], &h); err != nil || a.ctype != "application/json" {
		s.t.Fatalf("a task call: %s %q (%v)", a.ctype, a.body, err)
	}
	return h
}

func (s session25) get(id string) task25 {
	s.t.Helper()
	var tk task25
	if err := json.Unmarshal(mustMarshal(s.t, s.post(3, "tasks/get", map[string]any{"taskId": id}).reply(s.t).Result), &tk); err != nil {
		s.t.Fatal(err)
	}
	return tk
}

// 2025-11-25 tasks: the handle {task: {...}} with the client's ttl and a
// pollInterval; tasks/result waits for the end, carrying the call's
// progress, then the result with the related-task _meta; a second
// tasks/result has no progress left to send; tasks/get and tasks/list
// tell the task; tasks/cancel of a completed task is refused, of a
// working one answers it cancelled, and tasks/result then answers an
// error.
func TestMCPTask2025(t *testing.T) {
	t.Parallel()
	m, url := startMCP(t, "")
	s := open25(t, url)
	h := s.start(map[string]any{"steps": 4, "interval_ms": 20})
	if !taskIDRE.MatchString(h.TaskID) || h.Status != "working" || h.TTL == nil || *h.TTL != 30000 || h.PollInterval == nil || *h.PollInterval != 100 || h.CreatedAt == "" || h.LastUpdatedAt == "" {
		t.Errorf("handle %+v", h)
	}
	a := s.post(4, "tasks/result", map[string]any{"taskId": h.TaskID})
	if p := progressOf(t, a.events, "tok"); a.ctype != "text/event-stream" || !slices.Equal(p, []int{1, 2, 3, 4}) {
		t.Errorf("tasks/result: %s, progress %v, want an SSE stream with progress 1..4", a.ctype, p)
	}
	r := a.reply(t)
	if string(r.ID) != "4" || text(t, mustMarshal(t, r.Result)) != "done after 4 steps" ||
		string(r.Result["_meta"]) != `{"io.modelcontextprotocol/related-task":{"taskId":"`+h.TaskID+`"}}` {
		t.Errorf("tasks/result's result: %s", a.events[len(a.events)-1].Data)
	}
	if a := s.post(5, "tasks/result", map[string]any{"taskId": h.TaskID}); len(a.events) != 1 {
		t.Errorf("a second tasks/result: %d events, want the result alone", len(a.events))
	}
	if got := s.get(h.TaskID); got.Status != "completed" || got.TaskID != h.TaskID || got.CreatedAt != h.CreatedAt || got.TTL == nil || got.PollInterval == nil {
		t.Errorf("tasks/get: %+v", got)
	}
	if a := s.post(6, "tasks/cancel", map[string]any{"taskId": h.TaskID}); a.reply(t).Error == nil || a.reply(t).Error.Code != -32602 {
		t.Errorf("tasks/cancel of a completed task: %q, want -32602", a.body)
	}

	long := s.start(map[string]any{"steps": 400, "interval_ms": 50})
	a = s.post(7, "tasks/cancel", map[string]any{"taskId": long.TaskID})
	var c task25
	_ = json.Unmarshal(mustMarshal(t, a.reply(t).Result), &c)
	if c.Status != "cancelled" || c.TaskID != long.TaskID || s.get(long.TaskID).Status != "cancelled" {
		t.Errorf("tasks/cancel: %q, want the task cancelled", a.body)
	}
	if r := s.post(8, "tasks/result", map[string]any{"taskId": long.TaskID}).reply(t); r.Error == nil || r.Error.Code != -32603 {
		t.Errorf("tasks/result of a cancelled task: %+v, want an error", r)
	}
	var list struct {
		Tasks []task25 `json:"tasks"`
	}
	_ = json.Unmarshal(mustMarshal(t, s.post(9, "tasks/list", nil).reply(t).Result), &list)
	if len(list.Tasks) != 2 || list.Tasks[0].TaskID != h.TaskID || list.Tasks[1].TaskID != long.TaskID {
		t.Errorf("tasks/list: %+v", list)
	}
	if other := open25(t, url); other.post(10, "tasks/get", map[string]any{"taskId": h.TaskID}).reply(t).Error == nil {
		t.Errorf("another session found the task")
	}
	if a := tasks26(t, url, "tasks/get", h.TaskID); a.status != 400 {
		t.Errorf("a 2026-07-28 tasks/get found a 2025-11-25 task: HTTP %d", a.status)
	}
	if tk := m.Tasks(); len(tk) != 2 || tk[0].Protocol != tasksVersion {
		t.Errorf("tasks %+v", tk)
	}
}

// A session before 2025-11-25 has no tasks: params.task is ignored (a
// plain call) and tasks/get is not a method.
func TestMCPTask2025OnlyOn20251125(t *testing.T) {
	t.Parallel()
	m, url := startMCP(t, "")
	sid := initialize25(t, url, "2025-06-18")
	a := post25(t, url, sid, "2025-06-18", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{
		"name": "progress", "arguments": map[string]any{"steps": 1, "interval_ms": 0}, "task": map[string]any{"ttl": 30000}}})
	if a.ctype != "text/event-stream" || a.reply(t).Result["task"] != nil || len(m.Tasks()) != 0 {
		t.Errorf("params.task on 2025-06-18: %q, want a plain call", a.body)
	}
	a = post25(t, url, sid, "2025-06-18", map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": map[string]any{"taskId": "x"}})
	if r := a.reply(t); r.Error == nil || r.Error.Code != -32601 {
		t.Errorf("tasks/get on 2025-06-18: %q, want -32601", a.body)
	}
}

// The task faults on 2025-11-25: cancel-own, rerun (progress starts over
// on tasks/result), lost, stale-live; no-result changes nothing there
// (mark3labs/mcp-go answers tasks/result on 2025-11-25).
func TestMCPTask2025Faults(t *testing.T) {
	t.Parallel()
	t.Run("task-cancel-own", func(t *testing.T) {
		t.Parallel()
		_, url := startMCP(t, "")
		s := open25(t, url)
		h := s.start(map[string]any{"steps": 3, "interval_ms": 10000, "fault": "task-cancel-own"})
		if got := s.get(h.TaskID); h.Status != "working" || got.Status != "cancelled" || got.StatusMessage != "context canceled" {
			t.Errorf("handle %+v, tasks/get %+v", h, got)
		}
		if r := s.post(4, "tasks/result", map[string]any{"taskId": h.TaskID}).reply(t); r.Error == nil || r.Error.Message != "context canceled" {
			t.Errorf("tasks/result: %+v, want the error context canceled", r)
		}
	})
	t.Run("task-no-result", func(t *testing.T) {
		t.Parallel()
		_, url := startMCP(t, "")
		s := open25(t, url)
		h := s.start(map[string]any{"steps": 1, "interval_ms": 0, "fault": "task-no-result"})
		if r := s.post(4, "tasks/result", map[string]any{"taskId": h.TaskID}).reply(t); text(t, mustMarshal(t, r.Result)) != "done after 1 steps" {
			t.Errorf("tasks/result: %+v", r)
		}
	})
	t.Run("task-rerun", func(t *testing.T) {
		t.Parallel()
		_, url := startMCP(t, "")
		s := open25(t, url)
		h := s.start(map[string]any{"steps": 2, "interval_ms": 10, "poll_ms": 50, "fault": "task-rerun"})
		var first task25
		waitFor(t, "completed", func() bool { first = s.get(h.TaskID); return first.Status == "completed" })
		time.Sleep(200 * time.Millisecond) // away for more than 3 poll intervals
		if got := s.get(h.TaskID); got.Status != "working" || got.CreatedAt == first.CreatedAt {
			t.Errorf("after the client was away: %+v (was %+v)", got, first)
		}
		a := s.post(4, "tasks/result", map[string]any{"taskId": h.TaskID})
		if p := progressOf(t, a.events, "tok"); len(p) == 0 || p[0] != 1 || text(t, mustMarshal(t, a.reply(t).Result)) != "done after 2 steps" {
			t.Errorf("tasks/result after the rerun: progress %v %q, want it from 1 again, then the result", p, a.body)
		}
	})
	t.Run("task-lost", func(t *testing.T) {
		t.Parallel()
		_, url := startMCP(t, "")
		s := open25(t, url)
		h := s.start(map[string]any{"steps": 1, "fault": "task-lost"})
		if r := s.post(3, "tasks/get", map[string]any{"taskId": h.TaskID}).reply(t); r.Error == nil || r.Error.Message != "task not found" {
			t.Errorf("tasks/get: %+v", r)
		}
	})
	t.Run("task-stale-live", func(t *testing.T) {
		t.Parallel()
		_, url := startMCP(t, "")
		s := open25(t, url)
		s.start(map[string]any{"steps": 0, "fault": "task-stale-live"})
		if got := s.get("streamprobe-stale-task-0"); got.Status != "working" || got.TaskID != "streamprobe-stale-task-0" || got.TTL == nil {
			t.Errorf("tasks/get of an unknown id: %+v, want a working task", got)
		}
	})
}

// Every fault is listed once, and each has its row in docs/mcp.md's
// table of the reference server.
func TestMCPFaultsListed(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/mcp.md")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[MCPFault]bool{}
	for _, f := range MCPFaults {
		if seen[f] || f == "" {
			t.Errorf("fault %q listed twice or empty", f)
		}
		seen[f] = true
		if !strings.Contains(string(doc), "\n| `"+string(f)+"` |") {
			t.Errorf("docs/mcp.md has no row for the fault %q", f)
		}
	}
	for _, f := range []MCPFault{"task-cancel-own", "task-no-result", "task-rerun", "task-lost", "task-stale-live", "modern-keep-ids"} {
		if !seen[f] {
			t.Errorf("fault %q not in MCPFaults", f)
		}
	}
}
