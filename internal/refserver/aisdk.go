package refserver

import (
	"encoding/json"
	"time"
)

// AISDK builds the steps of an AI SDK UI message stream (what
// streamText(...).toUIMessageStreamResponse() serves): SSE data lines,
// each a JSON part with a type, then data: [DONE].
type AISDK struct{ steps []Step }

// Part adds a part of type typ with the other fields.
func (a *AISDK) Part(at time.Duration, typ string, fields map[string]any) *AISDK {
	m := map[string]any{"type": typ}
	for k, v := range fields {
		m[k] = v
	}
	b, _ := json.Marshal(m)
	a.steps = append(a.steps, Step{At: at, Data: string(b)})
	return a
}

// Text adds a text-delta.
func (a *AISDK) Text(at time.Duration, delta string) *AISDK {
	return a.Part(at, "text-delta", map[string]any{"id": "t1", "delta": delta})
}

// Reasoning adds a reasoning-delta.
func (a *AISDK) Reasoning(at time.Duration, delta string) *AISDK {
	return a.Part(at, "reasoning-delta", map[string]any{"id": "r1", "delta": delta})
}

// Error adds an error part.
func (a *AISDK) Error(at time.Duration, text string) *AISDK {
	return a.Part(at, "error", map[string]any{"errorText": text})
}

// Finish adds the finish part with its finishReason (stop, length,
// content-filter, tool-calls, error, other).
func (a *AISDK) Finish(at time.Duration, reason string) *AISDK {
	return a.Part(at, "finish", map[string]any{"finishReason": reason})
}

// Done adds data: [DONE].
func (a *AISDK) Done(at time.Duration) *AISDK {
	a.steps = append(a.steps, Step{At: at, Data: "[DONE]"})
	return a
}

// Steps returns the schedule.
func (a *AISDK) Steps() []Step { return append([]Step(nil), a.steps...) }
