package dialect

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/streamprobe/streamprobe/resumeclient"
)

// MCP Tasks: a tool call the server answers with a task handle instead of
// its result; the client polls tasks/get for the task's state, with the
// poll interval the server asks for, until a terminal status.
//
// Two shapes are spoken. The 2026-07-28 Tasks extension
// (io.modelcontextprotocol/tasks): the handle is a result with resultType
// "task" and the task's fields (taskId, status, pollIntervalMs, ttlMs,
// createdAt); tasks/get answers the task with its result inlined once
// completed (its error once failed); tasks/cancel. The 2025-11-25
// experimental tasks: a tools/call with params.task {ttl}; the handle is
// a result {task: {taskId, status, pollInterval, ttl, createdAt}};
// tasks/get answers the task's fields; tasks/result answers the call's
// result once the task is terminal. mark3labs/mcp-go v1.2.1 answers the
// 2025 shape on 2026-07-28 too (and carries no result in tasks/get there):
// both shapes are read whatever the version.

// mcpTaskTTL is the task lifetime a 2025-11-25 call asks for.
const mcpTaskTTL = time.Minute

// Task statuses.
const (
	TaskWorking       = "working"
	TaskInputRequired = "input_required"
	TaskCompleted     = "completed"
	TaskFailed        = "failed"
	TaskCancelled     = "cancelled"
)

// TaskTerminal reports whether a task in status s is done.
func TaskTerminal(s string) bool {
	return s == TaskCompleted || s == TaskFailed || s == TaskCancelled
}

// dropTaskParam takes params.task out of the call req carries, for a
// server that makes no tasks of tool calls.
func dropTaskParam(req *resumeclient.Request) error {
	var call map[string]any
	if json.Unmarshal(req.Body, &call) != nil {
		return nil // a target's own body: left as it is
	}
	params, _ := call["params"].(map[string]any)
	if _, ok := params["task"]; !ok {
		return nil
	}
	delete(params, "task")
	body, err := json.Marshal(call)
	if err != nil {
		return fmt.Errorf("mcp: encoding tools/call: %w", err)
	}
	req.Body = body
	return nil
}

// mcpTask is a task as an answer carries it, in either shape.
type mcpTask struct {
	TaskID         string          `json:"taskId"`
	Status         string          `json:"status"`
	StatusMessage  string          `json:"statusMessage"`
	CreatedAt      string          `json:"createdAt"`
	PollIntervalMs *float64        `json:"pollIntervalMs"`
	PollInterval   *float64        `json:"pollInterval"`
	Result         json.RawMessage `json:"result"`
	Error          *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// taskChunk reads a response of the call's that carries a task: the
// handle (resultType "task", or a result whose task field holds it), or
// a poll's answer (the task's fields at the top of the result). A
// completed task with its result inlined is the call's last chunk; a
// failed one an error; one with no result asks for tasks/result next.
func taskChunk(t Target, data []byte) (Chunk, error) {
	var m struct {
		Result struct {
			ResultType string `json:"resultType"`
			mcpTask
			Task *mcpTask `json:"task"`
		} `json:"result"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return Chunk{}, fmt.Errorf("mcp: a task in the answer that cannot be read: %w", err)
	}
	handle := m.Result.ResultType == "task" || m.Result.Task != nil
	task := m.Result.mcpTask
	if m.Result.Task != nil {
		task = *m.Result.Task
	}
	if task.TaskID == "" {
		return Chunk{}, fmt.Errorf("mcp: a task with no taskId")
	}
	st := &TaskState{ID: task.TaskID, Status: bounded(t, task.Status, MaxDetailID), Message: boundMessage(t, task.StatusMessage),
		Created: bounded(t, task.CreatedAt, MaxDetailID), Handle: handle}
	switch p := task.PollIntervalMs; {
	case p != nil && *p >= 0:
		st.Poll = time.Duration(*p * float64(time.Millisecond))
	case task.PollInterval != nil && *task.PollInterval >= 0:
		st.Poll = time.Duration(*task.PollInterval * float64(time.Millisecond))
	}
	c := Chunk{Kind: Meta, Task: st}
	switch {
	case task.Status == TaskCompleted && len(task.Result) > 0 && string(task.Result) != "null":
		c.Kind, c.IsEnd = Text, true
		var r struct {
			IsError bool `json:"isError"`
		}
		if json.Unmarshal(task.Result, &r) == nil && r.IsError {
			c.Kind, c.IsEnd, c.Message = Failed, false, "the task's result has isError: true"
		}
	case task.Status == TaskCompleted:
		st.NoResult = true
	case task.Status == TaskFailed:
		msg := "the task failed"
		if task.Error != nil {
			msg += fmt.Sprintf(" (JSON-RPC error %d: %s)", task.Error.Code, boundMessage(t, task.Error.Message))
		} else if task.StatusMessage != "" {
			msg += ": " + st.Message
		}
		c.Kind, c.Message = Failed, msg
	}
	return c, nil
}

// PollTask is the request that asks for task st's state after its last
// answer: tasks/result once the task completed and the answer carried no
// result (the 2025-11-25 way), else tasks/get. n numbers the poll: each
// request has an id of its own.
func (mcpDialect) PollTask(t Target, req resumeclient.Request, st TaskState, n int) (resumeclient.Request, error) {
	method := "tasks/get"
	if st.NoResult {
		method = "tasks/result"
	}
	return taskRequest(t, req, method, st.ID, n)
}

// CancelTask asks the server to cancel the task (tasks/cancel); the
// answer is an acknowledgement, and the task's status says the rest.
func (mcpDialect) CancelTask(ctx context.Context, c *resumeclient.Client, t Target, req resumeclient.Request, id string) error {
	r, err := taskRequest(t, req, "tasks/cancel", id, 0)
	if err != nil {
		return err
	}
	return mcpPost(ctx, c, r, r.Body)
}

// taskRequest is a request of method about task id, on req's endpoint
// and with its headers (a session's, or the 2026-07-28 ones, whose
// Mcp-Name is the task's id).
func taskRequest(t Target, req resumeclient.Request, method, id string, n int) (resumeclient.Request, error) {
	params := map[string]any{"taskId": id}
	h := req.Header.Clone()
	if req.Header.Get(mcpProtocolHeader) == MCPModernVersion {
		params["_meta"] = modernMeta(true)
		h = modernHeaders(h, method, id)
	}
	body, err := json.Marshal(mcpCall{JSONRPC: "2.0", ID: mcpCallID(t) + ":" + method + ":" + strconv.Itoa(n), Method: method, Params: params})
	if err != nil {
		return resumeclient.Request{}, fmt.Errorf("mcp: encoding %s: %w", method, err)
	}
	return resumeclient.Request{Method: http.MethodPost, URL: req.URL, Header: h, Body: body, Framing: resumeclient.FramingSSEOrJSON}, nil
}
