package refserver

import (
	"encoding/json"
	"strconv"
	"time"
)

// Responses builds the steps of an OpenAI Responses API stream: every
// event named by its type, with a sequence_number in its JSON that is also
// the step's resume cursor (no SSE id lines, as the API sends none).
type Responses struct {
	ID    string // the response id; "resp_ssetest" when empty
	steps []Step
	seq   int
}

func (r *Responses) add(at time.Duration, typ string, fields map[string]any) *Responses {
	if fields == nil {
		fields = map[string]any{}
	}
	fields["type"] = typ
	fields["sequence_number"] = r.seq
	b, _ := json.Marshal(fields)
	r.steps = append(r.steps, Step{At: at, Event: typ, Data: string(b), Cursor: strconv.Itoa(r.seq)})
	r.seq++
	return r
}

func (r *Responses) id() string {
	if r.ID == "" {
		return "resp_ssetest"
	}
	return r.ID
}

// Created adds response.created, which carries the response id.
func (r *Responses) Created(at time.Duration) *Responses {
	return r.add(at, "response.created", map[string]any{"response": map[string]any{"id": r.id(), "status": "in_progress"}})
}

// Meta adds an event with no output (response.in_progress,
// response.output_item.added, ...).
func (r *Responses) Meta(at time.Duration, typ string) *Responses { return r.add(at, typ, nil) }

// Text adds a response.output_text.delta.
func (r *Responses) Text(at time.Duration, delta string) *Responses {
	return r.add(at, "response.output_text.delta", map[string]any{"item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": delta})
}

// Reasoning adds a response.reasoning_summary_text.delta.
func (r *Responses) Reasoning(at time.Duration, delta string) *Responses {
	return r.add(at, "response.reasoning_summary_text.delta", map[string]any{"delta": delta})
}

// ToolArgs adds a response.function_call_arguments.delta.
func (r *Responses) ToolArgs(at time.Duration, delta string) *Responses {
	return r.add(at, "response.function_call_arguments.delta", map[string]any{"delta": delta})
}

// Completed adds response.completed with the usage.
func (r *Responses) Completed(at time.Duration, input, output int) *Responses {
	return r.add(at, "response.completed", map[string]any{"response": map[string]any{"id": r.id(), "status": "completed",
		"usage": map[string]int{"input_tokens": input, "output_tokens": output, "total_tokens": input + output}}})
}

// Failed adds response.failed with an error message.
func (r *Responses) Failed(at time.Duration, msg string) *Responses {
	return r.add(at, "response.failed", map[string]any{"response": map[string]any{"id": r.id(), "status": "failed", "error": map[string]string{"message": msg}}})
}

// Steps returns the schedule.
func (r *Responses) Steps() []Step { return append([]Step(nil), r.steps...) }

// Anthropic builds the steps of an Anthropic Messages API stream.
type Anthropic struct{ steps []Step }

func (a *Anthropic) add(at time.Duration, typ string, fields map[string]any) *Anthropic {
	if fields == nil {
		fields = map[string]any{}
	}
	fields["type"] = typ
	b, _ := json.Marshal(fields)
	a.steps = append(a.steps, Step{At: at, Event: typ, Data: string(b)})
	return a
}

// MessageStart adds message_start with the input tokens.
func (a *Anthropic) MessageStart(at time.Duration, input int) *Anthropic {
	return a.add(at, "message_start", map[string]any{"message": map[string]any{"id": "msg_ssetest", "role": "assistant",
		"usage": map[string]int{"input_tokens": input, "output_tokens": 1}}})
}

// BlockStart adds content_block_start.
func (a *Anthropic) BlockStart(at time.Duration, kind string) *Anthropic {
	return a.add(at, "content_block_start", map[string]any{"index": 0, "content_block": map[string]string{"type": kind}})
}

// Ping adds a ping (liveness).
func (a *Anthropic) Ping(at time.Duration) *Anthropic { return a.add(at, "ping", nil) }

func (a *Anthropic) delta(at time.Duration, typ, field, v string) *Anthropic {
	return a.add(at, "content_block_delta", map[string]any{"index": 0, "delta": map[string]string{"type": typ, field: v}})
}

// Text adds a text_delta.
func (a *Anthropic) Text(at time.Duration, s string) *Anthropic {
	return a.delta(at, "text_delta", "text", s)
}

// Thinking adds a thinking_delta.
func (a *Anthropic) Thinking(at time.Duration, s string) *Anthropic {
	return a.delta(at, "thinking_delta", "thinking", s)
}

// InputJSON adds an input_json_delta (tool input).
func (a *Anthropic) InputJSON(at time.Duration, s string) *Anthropic {
	return a.delta(at, "input_json_delta", "partial_json", s)
}

// MessageDelta adds message_delta with the output tokens.
func (a *Anthropic) MessageDelta(at time.Duration, output int) *Anthropic {
	return a.add(at, "message_delta", map[string]any{"delta": map[string]string{"stop_reason": "end_turn"}, "usage": map[string]int{"output_tokens": output}})
}

// Stop adds message_stop, the end marker.
func (a *Anthropic) Stop(at time.Duration) *Anthropic { return a.add(at, "message_stop", nil) }

// Error adds an error event.
func (a *Anthropic) Error(at time.Duration, msg string) *Anthropic {
	return a.add(at, "error", map[string]any{"error": map[string]string{"type": "overloaded_error", "message": msg}})
}

// Steps returns the schedule.
func (a *Anthropic) Steps() []Step { return append([]Step(nil), a.steps...) }
