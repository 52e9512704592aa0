package refserver

import (
	"encoding/json"
	"time"
)

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

// InputJSON adds an input_json_delta: a tool's input, the client's or a
// server tool's (web search, code execution).
func (a *Anthropic) InputJSON(at time.Duration, partial string) *Anthropic {
	return a.delta(at, "input_json_delta", "partial_json", partial)
}

// MessageDeltaUsage adds message_delta with a stop_reason (end_turn,
// max_tokens, refusal, ...) and its usage, which is cumulative: the input
// tokens grow with what server tools add to the prompt.
func (a *Anthropic) MessageDeltaUsage(at time.Duration, reason string, input, output int) *Anthropic {
	return a.add(at, "message_delta", map[string]any{"delta": map[string]any{"stop_reason": reason, "stop_sequence": nil},
		"usage": map[string]int{"input_tokens": input, "output_tokens": output}})
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
