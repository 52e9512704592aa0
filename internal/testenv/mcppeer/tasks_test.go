package mcppeer_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/internal/testenv/mcppeer"
	"github.com/streamprobe/streamprobe/internal/testenv/mcppeer/mcpgo"
)

// Tasks on github.com/mark3labs/mcp-go v1.2.1 (the one reachable server
// library with them; mcpgo/server calls the progress tool as a task when
// the call carries params.task: TaskSupportOptional). Files under
// server/server.go, server/request_handler.go, server/streamable_http.go
// and mcp/tasks.go of the module.
const mgServer = "server/server.go"

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// task is the task object mcp-go answers with.
type task struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	TTL           *int64 `json:"ttl"`
	PollInterval  *int64 `json:"pollInterval"`
}

// taskCall is tools/call of the progress tool as a task (ttl 60 s).
func taskCall(id int, a args) req2026 {
	r := callReq(id, a)
	r.params["task"] = map[string]any{"ttl": 60000}
	return r
}

// startTask calls the tool as a task on 2026-07-28 and returns the handle
// (the result's task object).
func startTask(t *testing.T, p *mcppeer.Peer, a args) task {
	t.Helper()
	ans := readAnswer(t, taskCall(1, a).do(t, p.URL))
	if ans.status != 200 {
		t.Fatalf("tools/call as a task: HTTP %d %q", ans.status, ans.body)
	}
	var h task
	ans.reply(t).field(t, "task", &h)
	return h
}

// getTask polls tasks/get once on 2026-07-28.
func getTask(t *testing.T, p *mcppeer.Peer, id string) (reply, answer) {
	t.Helper()
	a := readAnswer(t, req2026{id: 2, method: "tasks/get", params: map[string]any{"taskId": id}}.do(t, p.URL))
	return a.reply(t), a
}

// The task handle on 2026-07-28 has the 2025-11-25 shape: a result of
// resultType "complete" with a task object (CreateTaskResult, mcp/tasks.go;
// server.go:2321-2325), status "working", the client's ttl, and no
// pollInterval (the server sets none: server.go:2295). It comes as one
// application/json answer at once, before the tool has run a step.
func TestTaskHandle(t *testing.T) {
	p := mcpgo.Start(t, mcpgo.V121)
	a := readAnswer(t, taskCall(1, args{Steps: 1, IntervalMS: 0}).do(t, p.URL))
	if a.status != 200 || a.ctype != "application/json" {
		t.Fatalf("HTTP %d %s %q, want 200 application/json", a.status, a.ctype, a.body)
	}
	r := a.reply(t)
	var rt string
	r.field(t, "resultType", &rt)
	var h task
	r.field(t, "task", &h)
	if rt != "complete" || !uuidRE.MatchString(h.TaskID) || h.Status != "working" || h.TTL == nil || *h.TTL != 60000 || h.PollInterval != nil ||
		h.CreatedAt == "" || h.LastUpdatedAt == "" {
		t.Errorf("handle %s: want resultType complete, task {taskId: a UUID, status working, ttl 60000, no pollInterval} (%s:2295, 2321-2325)", a.body, mgServer)
	}
	if r.Result["content"] != nil {
		t.Errorf("the handle carries content: %s", a.body)
	}
}

// A task's tool runs under the creating POST's context and is cancelled as
// soon as the handle is sent: handleTaskAugmentedToolCall starts it with
// the request's ctx (server.go:2318), which executeRegularToolAsTask wraps
// (2446) and the Streamable HTTP handler took from the request
// (streamable_http.go:719): the POST's end cancels it. A tool that honours
// its context ends at once: the task is "cancelled" with statusMessage
// "context canceled" (server.go:2468-2489), before its first step (10 s).
func TestTaskCancelledByItsPOST(t *testing.T) {
	p := mcpgo.Start(t, mcpgo.V121)
	const interval = 10 * time.Second
	h := startTask(t, p, args{Steps: 3, IntervalMS: int(interval / time.Millisecond), Text: "task"})
	log := waitLog(t, p, "the task's tool ended", toolDone("task"))
	call, _ := exchange(log, "POST", "tools/call", "")
	tool, _ := exchange(log, "TOOL", "", "")
	if tool.RPC != "cancelled" || tool.Start-call.Start >= float64(interval/time.Millisecond) {
		t.Errorf("the tool %s %.0f ms after the call; want cancelled before its first step (%s:2318, 2446; %s:719)", tool.RPC, tool.Start-call.Start, mgServer, mgStreaming)
	}
	r, a := getTask(t, p, h.TaskID)
	var got task
	if err := json.Unmarshal(mustJSON(t, r.Result), &got); err != nil {
		t.Fatal(err)
	}
	if got.Status != "cancelled" || got.StatusMessage != "context canceled" {
		t.Errorf("tasks/get %s: want status cancelled, statusMessage \"context canceled\" (%s:2468-2489)", a.body, mgServer)
	}
}

// On 2026-07-28 a task's result cannot be read: tasks/get answers the task
// alone (NewGetTaskResult, mcp/tasks.go:89-94; server.go:2605-2621), even
// completed (a tool of no steps finishes before its context is looked at),
// and tasks/result is refused as removed, 404 with -32601
// (request_handler.go:587-594). An unknown task id: 400 with -32602 "task
// not found" (server.go:2910-2917).
func TestTaskResultUnreachable(t *testing.T) {
	p := mcpgo.Start(t, mcpgo.V121)
	h := startTask(t, p, args{Steps: 0, Text: "instant"})
	waitLog(t, p, "the task's tool ended", toolDone("instant"))
	r, a := getTask(t, p, h.TaskID)
	var got task
	if err := json.Unmarshal(mustJSON(t, r.Result), &got); err != nil {
		t.Fatal(err)
	}
	if got.Status != "completed" || r.Result["content"] != nil || r.Result["result"] != nil {
		t.Errorf("tasks/get of a completed task: %s; want status completed and no result (mcp/tasks.go:89-94)", a.body)
	}
	a = readAnswer(t, req2026{id: 3, method: "tasks/result", params: map[string]any{"taskId": h.TaskID}}.do(t, p.URL))
	if e := a.reply(t).Error; a.status != http.StatusNotFound || e == nil || e.Code != -32601 {
		t.Errorf("tasks/result: HTTP %d %q, want 404 -32601 removed in 2026-07-28 (request_handler.go:587-594)", a.status, a.body)
	}
	_, a = getTask(t, p, "00000000-0000-4000-8000-000000000000")
	if e := a.reply(t).Error; a.status != http.StatusBadRequest || e == nil || e.Code != -32602 || e.Message != "task not found" {
		t.Errorf("tasks/get of an unknown id: HTTP %d %q, want 400 -32602 task not found (%s:2910-2917)", a.status, a.body, mgServer)
	}
}

// On 2025-11-25 (a session) the same library: the same handle, the tool
// cancelled by its POST all the same, and tasks/result answers a completed
// task's result (the 2025 shape the probe must read).
func TestTask2025(t *testing.T) {
	p := mcpgo.Start(t, mcpgo.V121)
	s := open(t, p.URL, latest)
	start := func(id int, a args) task {
		resp := s.post(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": map[string]any{
			"name": mcppeer.Tool, "arguments": a, "task": map[string]any{"ttl": 60000}}})
		var h task
		readAnswer(t, resp).reply(t).field(t, "task", &h)
		return h
	}
	long := start(1, args{Steps: 3, IntervalMS: 10000, Text: "task-2025"})
	waitLog(t, p, "the task's tool ended", toolDone("task-2025"))
	if l, _ := p.Log(); func() string { ex, _ := exchange(l, "TOOL", "", ""); return ex.RPC }() != "cancelled" {
		t.Errorf("2025-11-25: the task's tool was not cancelled by its POST")
	}
	short := start(2, args{Steps: 0, Text: "task-2025-instant"})
	waitLog(t, p, "the task's tool ended", toolDone("task-2025-instant"))
	for _, c := range []struct {
		h      task
		status string
	}{{long, "cancelled"}, {short, "completed"}} {
		r := readAnswer(t, s.post(map[string]any{"jsonrpc": "2.0", "id": 3, "method": "tasks/get", "params": map[string]any{"taskId": c.h.TaskID}})).reply(t)
		var got task
		json.Unmarshal(mustJSON(t, r.Result), &got)
		if got.Status != c.status {
			t.Errorf("2025-11-25 tasks/get %s: status %q, want %q", c.h.TaskID, got.Status, c.status)
		}
	}
	a := readAnswer(t, s.post(map[string]any{"jsonrpc": "2.0", "id": 4, "method": "tasks/result", "params": map[string]any{"taskId": short.TaskID}}))
	var content []struct{ Text string }
	a.reply(t).field(t, "content", &content)
	if len(content) != 1 || content[0].Text != "task-2025-instant: 0 steps" {
		t.Errorf("2025-11-25 tasks/result: %q, want the tool's result", a.body)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
