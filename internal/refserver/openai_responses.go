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

// Completed adds response.completed with the usage.
func (r *Responses) Completed(at time.Duration, input, output int) *Responses {
	return r.add(at, "response.completed", map[string]any{"response": map[string]any{"id": r.id(), "status": "completed",
		"usage": map[string]int{"input_tokens": input, "output_tokens": output, "total_tokens": input + output}}})
}

// Failed adds response.failed with an error message.
func (r *Responses) Failed(at time.Duration, msg string) *Responses {
	return r.add(at, "response.failed", map[string]any{"response": map[string]any{"id": r.id(), "status": "failed", "error": map[string]string{"message": msg}}})
}

// Delta adds an event of type typ with a delta: a refusal
// (response.refusal.delta), a hosted tool's input
// (response.mcp_call_arguments.delta,
// response.code_interpreter_call_code.delta, ...), reasoning text.
func (r *Responses) Delta(at time.Duration, typ, delta string) *Responses {
	return r.add(at, typ, map[string]any{"item_id": "item_1", "output_index": 0, "delta": delta})
}

// PartialImage adds response.image_generation_call.partial_image.
func (r *Responses) PartialImage(at time.Duration) *Responses {
	return r.add(at, "response.image_generation_call.partial_image", map[string]any{"item_id": "ig_1", "output_index": 0,
		"partial_image_index": 0, "partial_image_b64": "UklGRuIWGQBXRUJQ"})
}

// Incomplete adds response.incomplete with its reason
// (max_output_tokens, content_filter) and the usage.
func (r *Responses) Incomplete(at time.Duration, reason string, input, output int) *Responses {
	return r.add(at, "response.incomplete", map[string]any{"response": map[string]any{"id": r.id(), "status": "incomplete",
		"incomplete_details": map[string]string{"reason": reason},
		"usage":              map[string]int{"input_tokens": input, "output_tokens": output, "total_tokens": input + output}}})
}

// Error adds an error event as the API sends it: the code and the
// message nested in an error object.
func (r *Responses) Error(at time.Duration, code, msg string) *Responses {
	return r.add(at, "error", map[string]any{"error": map[string]any{"type": code, "code": code, "message": msg, "param": nil}})
}

// FailedCode adds response.failed whose error has a code.
func (r *Responses) FailedCode(at time.Duration, code, msg string) *Responses {
	return r.add(at, "response.failed", map[string]any{"response": map[string]any{"id": r.id(), "status": "failed",
		"error": map[string]string{"code": code, "message": msg}}})
}

// Steps returns the schedule.
func (r *Responses) Steps() []Step { return append([]Step(nil), r.steps...) }
