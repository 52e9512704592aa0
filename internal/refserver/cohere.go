package refserver

import (
	"encoding/json"
	"time"
)

// Cohere builds the steps of a Cohere v2 chat stream: each event a typed
// JSON object with its type also on the event line, message-start first
// and message-end (the finish reason and the usage) last.
type Cohere struct{ steps []Step }

func (c *Cohere) add(at time.Duration, typ string, m map[string]any) *Cohere {
	m["type"] = typ
	b, _ := json.Marshal(m)
	c.steps = append(c.steps, Step{At: at, Event: typ, Data: string(b)})
	return c
}

func message(m map[string]any) map[string]any { return map[string]any{"message": m} }

// Start adds message-start.
func (c *Cohere) Start(at time.Duration) *Cohere {
	return c.add(at, "message-start", map[string]any{"id": "refserver-1",
		"delta": message(map[string]any{"role": "assistant", "content": []any{}, "tool_plan": "", "tool_calls": []any{}, "citations": []any{}})})
}

// ContentStart adds content-start (an empty text block).
func (c *Cohere) ContentStart(at time.Duration) *Cohere {
	return c.add(at, "content-start", map[string]any{"index": 0, "delta": message(map[string]any{"content": map[string]any{"type": "text", "text": ""}})})
}

// Text adds a content-delta with text.
func (c *Cohere) Text(at time.Duration, s string) *Cohere {
	return c.add(at, "content-delta", map[string]any{"index": 0, "delta": message(map[string]any{"content": map[string]any{"text": s}})})
}

// Thinking adds a content-delta with thinking (a reasoning model's trace).
func (c *Cohere) Thinking(at time.Duration, s string) *Cohere {
	return c.add(at, "content-delta", map[string]any{"index": 0, "delta": message(map[string]any{"content": map[string]any{"thinking": s}})})
}

// ToolPlan adds a tool-plan-delta.
func (c *Cohere) ToolPlan(at time.Duration, s string) *Cohere {
	return c.add(at, "tool-plan-delta", map[string]any{"delta": message(map[string]any{"tool_plan": s})})
}

// ToolCall adds a tool call: its start and one delta of arguments.
func (c *Cohere) ToolCall(at time.Duration, name, args string) *Cohere {
	c.add(at, "tool-call-start", map[string]any{"index": 1, "delta": message(map[string]any{"tool_calls": map[string]any{"id": "call_1", "type": "function",
		"function": map[string]any{"name": name, "arguments": ""}}})})
	return c.add(at, "tool-call-delta", map[string]any{"index": 1, "delta": message(map[string]any{"tool_calls": map[string]any{"function": map[string]any{"arguments": args}}})})
}

// ContentEnd adds content-end.
func (c *Cohere) ContentEnd(at time.Duration) *Cohere {
	return c.add(at, "content-end", map[string]any{"index": 0})
}

// End adds message-end: the finish reason (COMPLETE, MAX_TOKENS, or ERROR
// with errText), the billed and the counted tokens.
func (c *Cohere) End(at time.Duration, reason, errText string, prompt, completion int) *Cohere {
	d := map[string]any{"finish_reason": reason, "usage": map[string]any{
		"billed_units": map[string]any{"input_tokens": prompt, "output_tokens": completion},
		"tokens":       map[string]any{"input_tokens": prompt + 60, "output_tokens": completion + 1}}}
	if errText != "" {
		d["error"] = errText
	}
	return c.add(at, "message-end", map[string]any{"delta": d})
}

// Steps returns the schedule.
func (c *Cohere) Steps() []Step { return append([]Step(nil), c.steps...) }

// CohereError is the body of a Cohere error answer (HTTP 4xx/5xx).
func CohereError(msg string) string {
	b, _ := json.Marshal(map[string]string{"message": msg})
	return string(b)
}
