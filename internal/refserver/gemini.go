package refserver

import (
	"encoding/json"
	"time"
)

// Gemini builds the steps of a Gemini API stream
// (streamGenerateContent?alt=sse): every event a whole
// GenerateContentResponse in one data line, no event type, no id, and no
// end marker: the body ends after the chunk with a finishReason.
type Gemini struct {
	Model string // modelVersion; "refserver" when empty
	steps []Step
}

func (g *Gemini) add(at time.Duration, parts []map[string]any, finish string, usage map[string]int) *Gemini {
	cand := map[string]any{"index": 0}
	if parts != nil {
		cand["content"] = map[string]any{"role": "model", "parts": parts}
	}
	if finish != "" {
		cand["finishReason"] = finish
	}
	m := map[string]any{"candidates": []any{cand}, "modelVersion": or(g.Model, "refserver"), "responseId": "refserver-1"}
	if usage != nil {
		m["usageMetadata"] = usage
	}
	b, _ := json.Marshal(m)
	g.steps = append(g.steps, Step{At: at, Data: string(b)})
	return g
}

// Text adds a chunk with a text part.
func (g *Gemini) Text(at time.Duration, s string) *Gemini {
	return g.add(at, []map[string]any{{"text": s}}, "", nil)
}

// Thought adds a chunk with a thought part (reasoning summary).
func (g *Gemini) Thought(at time.Duration, s string) *Gemini {
	return g.add(at, []map[string]any{{"text": s, "thought": true}}, "", nil)
}

// Finish adds the last chunk: its text (none when empty), the finish
// reason (STOP, MAX_TOKENS, or a blocked one such as SAFETY) and the
// usage.
func (g *Gemini) Finish(at time.Duration, text, reason string, prompt, candidates, thoughts int) *Gemini {
	var parts []map[string]any
	if text != "" {
		parts = []map[string]any{{"text": text}}
	}
	usage := map[string]int{"promptTokenCount": prompt, "candidatesTokenCount": candidates, "totalTokenCount": prompt + candidates + thoughts}
	if thoughts > 0 {
		usage["thoughtsTokenCount"] = thoughts
	}
	return g.add(at, parts, reason, usage)
}

// Code adds a chunk with an executableCode part: code the model wrote
// for the code execution tool.
func (g *Gemini) Code(at time.Duration, code string) *Gemini {
	return g.add(at, []map[string]any{{"executableCode": map[string]string{"language": "PYTHON", "code": code}}}, "", nil)
}

// CodeResult adds a chunk with a codeExecutionResult part: the tool's
// output, the server's.
func (g *Gemini) CodeResult(at time.Duration, output string) *Gemini {
	return g.add(at, []map[string]any{{"codeExecutionResult": map[string]string{"outcome": "OUTCOME_OK", "output": output}}}, "", nil)
}

// Image adds a chunk with an inlineData part (an image model's image).
func (g *Gemini) Image(at time.Duration) *Gemini {
	return g.add(at, []map[string]any{{"inlineData": map[string]string{"mimeType": "image/png", "data": "iVBORw0KGgo="}}}, "", nil)
}

// ErrorAfter adds Google's error object after the last event, not as an
// event: bare JSON, pretty-printed over lines, then a blank line, as
// Vertex AI ends a stream that failed after it started.
func (g *Gemini) ErrorAfter(at time.Duration, code int, status, message string) *Gemini {
	b, _ := json.MarshalIndent(map[string]any{"error": map[string]any{"code": code, "message": message, "status": status}}, "", "  ")
	g.steps = append(g.steps, Step{At: at, Raw: string(b) + "\n\n"})
	return g
}

// PromptBlocked adds the answer to a blocked prompt: promptFeedback with
// a blockReason and no candidate.
func (g *Gemini) PromptBlocked(at time.Duration, reason string) *Gemini {
	b, _ := json.Marshal(map[string]any{"promptFeedback": map[string]any{"blockReason": reason},
		"usageMetadata": map[string]int{"promptTokenCount": 8, "totalTokenCount": 8}, "modelVersion": or(g.Model, "refserver")})
	g.steps = append(g.steps, Step{At: at, Data: string(b)})
	return g
}

// Steps returns the schedule.
func (g *Gemini) Steps() []Step { return append([]Step(nil), g.steps...) }

// GeminiError is the body of a Gemini API error answer (HTTP 4xx/5xx).
func GeminiError(code int, status, message string) string {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"code": code, "message": message, "status": status}})
	return string(b)
}
