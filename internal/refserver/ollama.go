package refserver

import (
	"encoding/json"
	"time"
)

// NDJSON is the Content-Type of Ollama's native stream.
const NDJSON = "application/x-ndjson"

// Ollama builds the steps of an Ollama /api/chat stream: one JSON object
// per line (newline-delimited JSON, served as application/x-ndjson: set
// the Server's ContentType), "done": true last.
type Ollama struct {
	Model string // "refserver" when empty
	steps []Step
}

func (o *Ollama) line(at time.Duration, m map[string]any) *Ollama {
	b, _ := json.Marshal(m)
	o.steps = append(o.steps, Step{At: at, Raw: string(b) + "\n"})
	return o
}

func (o *Ollama) message(at time.Duration, msg map[string]any) *Ollama {
	msg["role"] = "assistant"
	if _, ok := msg["content"]; !ok {
		msg["content"] = ""
	}
	return o.line(at, map[string]any{"model": or(o.Model, "refserver"), "created_at": "2026-12-05T12:00:00.000000Z", "message": msg, "done": false})
}

// Text adds a line with message content.
func (o *Ollama) Text(at time.Duration, s string) *Ollama {
	return o.message(at, map[string]any{"content": s})
}

// Thinking adds a line with message thinking (a thinking model's trace).
func (o *Ollama) Thinking(at time.Duration, s string) *Ollama {
	return o.message(at, map[string]any{"thinking": s})
}

// ToolCall adds a line with a tool call.
func (o *Ollama) ToolCall(at time.Duration, name string) *Ollama {
	return o.message(at, map[string]any{"tool_calls": []any{map[string]any{"function": map[string]any{"name": name, "arguments": map[string]any{}}}}})
}

// Generate adds a line of /api/generate: the text in response (Ollama's
// encoder escapes <, > and & as \u003c, \u003e, \u0026, as Go's does).
func (o *Ollama) Generate(at time.Duration, s string) *Ollama {
	return o.line(at, map[string]any{"model": or(o.Model, "refserver"), "created_at": "2026-12-05T12:00:00.000000Z", "response": s, "done": false})
}

// Done adds the last line: done, its reason (stop, length) and the
// counts and durations.
func (o *Ollama) Done(at time.Duration, reason string, prompt, eval int) *Ollama {
	return o.line(at, map[string]any{"model": or(o.Model, "refserver"), "created_at": "2026-12-05T12:00:01.000000Z",
		"message": map[string]any{"role": "assistant", "content": ""}, "done": true, "done_reason": reason,
		"total_duration": at.Nanoseconds(), "load_duration": 1000000, "prompt_eval_count": prompt, "prompt_eval_duration": 2000000,
		"eval_count": eval, "eval_duration": at.Nanoseconds() - 3000000})
}

// Error adds an error line, as Ollama sends one mid-stream.
func (o *Ollama) Error(at time.Duration, msg string) *Ollama {
	return o.line(at, map[string]any{"error": msg})
}

// Cut adds the start of a line that never ends: the body ends after it.
func (o *Ollama) Cut(at time.Duration) *Ollama {
	o.steps = append(o.steps, Step{At: at, Raw: `{"model":"refserver","message":{"role":"assi`})
	return o
}

// Steps returns the schedule.
func (o *Ollama) Steps() []Step { return append([]Step(nil), o.steps...) }

// OllamaError is the body of an Ollama error answer (HTTP 4xx/5xx).
func OllamaError(msg string) string {
	b, _ := json.Marshal(map[string]string{"error": msg})
	return string(b)
}
