package refserver

import (
	"encoding/json"
	"strconv"
	"time"
)

// Chat builds the steps of an OpenAI-compatible chat completions stream
// (the shape vLLM, llama.cpp server, Ollama and OpenAI send).
type Chat struct {
	Model string
	steps []Step
}

type chatDelta struct {
	Role             string         `json:"role,omitempty"`
	Content          any            `json:"content,omitempty"`
	ReasoningContent string         `json:"reasoning_content,omitempty"`
	ReasoningDetails []chatDetail   `json:"reasoning_details,omitempty"`
	Refusal          *string        `json:"refusal,omitempty"`
	ToolCalls        []chatToolCall `json:"tool_calls,omitempty"`
}

// chatDetail is an element of reasoning_details (OpenRouter, Snowflake
// Cortex).
type chatDetail struct {
	Type  string `json:"type"`
	Text  string `json:"text"`
	Index int    `json:"index"`
}

type chatToolCall struct {
	Index    int    `json:"index"`
	Function chatFn `json:"function"`
}

type chatFn struct {
	Arguments string `json:"arguments"`
}

func (c *Chat) chunk(at time.Duration, delta *chatDelta, finish string, usage map[string]int) *Chat {
	type choice struct {
		Index        int        `json:"index"`
		Delta        *chatDelta `json:"delta"`
		FinishReason *string    `json:"finish_reason"`
	}
	m := map[string]any{"id": "chatcmpl-refserver", "object": "chat.completion.chunk", "created": 0, "model": c.Model}
	if delta != nil {
		ch := choice{Delta: delta}
		if finish != "" {
			ch.FinishReason = &finish
		}
		m["choices"] = []choice{ch}
	} else {
		m["choices"] = []choice{}
	}
	if usage != nil {
		m["usage"] = usage
	}
	b, _ := json.Marshal(m)
	c.steps = append(c.steps, Step{At: at, Data: string(b)})
	return c
}

// Role adds the role-only first delta (content "").
func (c *Chat) Role(at time.Duration) *Chat {
	return c.chunk(at, &chatDelta{Role: "assistant", Content: ""}, "", nil)
}

// Text adds a visible content delta.
func (c *Chat) Text(at time.Duration, text string) *Chat {
	return c.chunk(at, &chatDelta{Content: text}, "", nil)
}

// Reasoning adds a reasoning_content delta.
func (c *Chat) Reasoning(at time.Duration, text string) *Chat {
	return c.chunk(at, &chatDelta{ReasoningContent: text}, "", nil)
}

// ToolArgs adds a tool call arguments delta.
func (c *Chat) ToolArgs(at time.Duration, args string) *Chat {
	return c.chunk(at, &chatDelta{ToolCalls: []chatToolCall{{Function: chatFn{Arguments: args}}}}, "", nil)
}

// Finish adds the empty delta with finish_reason "stop".
func (c *Chat) Finish(at time.Duration) *Chat {
	return c.chunk(at, &chatDelta{}, "stop", nil)
}

// FinishWith adds the empty delta with another finish_reason (length,
// tool_calls, content_filter).
func (c *Chat) FinishWith(at time.Duration, reason string) *Chat {
	return c.chunk(at, &chatDelta{}, reason, nil)
}

// Refusal adds a refusal delta, as OpenAI streams a refusal: content
// null, the text in refusal.
func (c *Chat) Refusal(at time.Duration, text string) *Chat {
	return c.chunk(at, &chatDelta{Refusal: &text}, "", nil)
}

// ReasoningDetail adds reasoning sent only as reasoning_details[].text,
// with an empty content, as OpenRouter and Snowflake Cortex send it.
func (c *Chat) ReasoningDetail(at time.Duration, text string) *Chat {
	return c.chunk(at, &chatDelta{Content: "", ReasoningDetails: []chatDetail{{Type: "reasoning.text", Text: text}}}, "", nil)
}

// ThinkingPart adds a delta whose content is an array with a thinking
// part, as Mistral's reasoning models (magistral) send their reasoning.
func (c *Chat) ThinkingPart(at time.Duration, text string) *Chat {
	part := map[string]any{"type": "thinking", "thinking": []map[string]string{{"type": "text", "text": text}}}
	return c.chunk(at, &chatDelta{Content: []any{part}}, "", nil)
}

// TextPart adds a delta whose content is an array with a text part
// (Mistral).
func (c *Chat) TextPart(at time.Duration, text string) *Chat {
	return c.chunk(at, &chatDelta{Content: []any{map[string]string{"type": "text", "text": text}}}, "", nil)
}

// Usage adds the usage-only chunk (stream_options.include_usage).
func (c *Chat) Usage(at time.Duration, prompt, completion int) *Chat {
	return c.chunk(at, nil, "", map[string]int{"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion})
}

// Heartbeat adds a comment line.
func (c *Chat) Heartbeat(at time.Duration) *Chat {
	c.steps = append(c.steps, Step{At: at, Comment: " keep-alive"})
	return c
}

// Done adds the data: [DONE] end marker.
func (c *Chat) Done(at time.Duration) *Chat {
	c.steps = append(c.steps, Step{At: at, Data: "[DONE]"})
	return c
}

// Steps returns the schedule, numbering the events with integer ids when
// ids is true.
func (c *Chat) Steps(ids bool) []Step {
	out := append([]Step(nil), c.steps...)
	if ids {
		n := 0
		for i := range out {
			if out[i].Data != "" {
				n++
				out[i].ID = strconv.Itoa(n)
			}
		}
	}
	return out
}
