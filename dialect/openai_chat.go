package dialect

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/streamprobe/streamprobe/resumeclient"
)

// openAIChat is the OpenAI-compatible chat completions dialect.
type openAIChat struct{ noResume }

type chatRequest struct {
	Model         string        `json:"model,omitempty"`
	Messages      []chatMessage `json:"messages"`
	Stream        bool          `json:"stream"`
	StreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	MaxTokens   int     `json:"max_tokens,omitempty"`
	Temperature float64 `json:"temperature"`
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

func (openAIChat) Request(t Target, s Sample, _ bool) (resumeclient.Request, error) {
	body := t.Body
	if body == nil {
		r := chatRequest{Model: t.Model, Stream: true, MaxTokens: s.MaxTokens,
			Messages: []chatMessage{{Role: "user", Content: s.Prompt}}}
		r.StreamOptions.IncludeUsage = true
		var err error
		if body, err = json.Marshal(r); err != nil {
			return resumeclient.Request{}, fmt.Errorf("openai-chat: encoding request: %w", err)
		}
	}
	method := t.Method
	if method == "" {
		method = http.MethodPost
	}
	return resumeclient.Request{Method: method, URL: apiURL(t.URL, "/chat/completions"), Header: jsonHeaders(t), Body: body}, nil
}

var doneMarker = []byte("[DONE]")

func (openAIChat) Decode(t Target, ev *resumeclient.Event) (Chunk, error) {
	if bytes.Equal(ev.Data, doneMarker) {
		return Chunk{Kind: End}, nil
	}
	if len(ev.Data) == 0 {
		return Chunk{Kind: Meta}, nil
	}
	var c chatChunk
	if err := c.decode(ev.Data); err != nil {
		return Chunk{}, err
	}
	out := Chunk{Kind: Meta}
	if c.usage.set {
		out.Usage, out.HasUsage = Tokens{Prompt: int(c.usage.in), Completion: int(c.usage.out)}, true
	}
	if c.err.set {
		out.Kind, out.Message = Failed, boundMessage(t, string(c.err.message.value()))
		return out, nil
	}
	for i := range c.choices.n {
		ch := c.choices.at(i)
		if ch.content {
			out.Kind = Text
			break
		}
		if ch.reasoningContent || ch.reasoning {
			out.Kind = Effective
		}
		for j := range ch.toolCalls.n {
			if *ch.toolCalls.at(j) {
				out.Kind = Effective
			}
		}
	}
	return out, nil
}

// chatChunk is what the probe reads of a chat.completion.chunk, with
// encoding/json's semantics (see jscan):
// {"choices":[{"delta":{"content","reasoning_content","reasoning",
// "tool_calls":[{"function":{"arguments"}}]}}],"usage":{"prompt_tokens",
// "completion_tokens"},"error":{"message"}}; of a delta's strings only
// their emptiness is kept.
type chatChunk struct {
	s       jscan
	choices jslice[chatChoice]
	usage   tokenCounts
	err     errorObject
}

type chatChoice struct {
	content, reasoningContent, reasoning bool
	toolCalls                            jslice[bool] // function.arguments not empty
}

var (
	chatFields     = []string{"choices", "usage", "error"}
	chatUsage      = []string{"prompt_tokens", "completion_tokens"}
	choiceFields   = []string{"delta"}
	deltaFields    = []string{"content", "reasoning_content", "reasoning", "tool_calls"}
	toolCallFields = []string{"function"}
	functionFields = []string{"arguments"}
)

func (c *chatChunk) decode(data []byte) error { return c.s.scan(data, c.chunk, "openai-chat", "chunk") }

func (c *chatChunk) chunk() bool {
	s := &c.s
	return s.object("", "", chatFields, func(k int) bool {
		switch k {
		case 0:
			return array(s, &c.choices, "", "choices", func(i int) bool { return c.choice(c.choices.elem(i)) })
		case 1:
			return s.tokens(&c.usage, "", "usage", chatUsage)
		default:
			return s.errorField(&c.err, "", "error")
		}
	})
}

func (c *chatChunk) choice(ch *chatChoice) bool {
	return c.s.object("", "choices", choiceFields, func(int) bool { return c.delta(ch) })
}

func (c *chatChunk) delta(ch *chatChoice) bool {
	s := &c.s
	return s.object("choices", "delta", deltaFields, func(k int) bool {
		switch k {
		case 0:
			return s.nonEmptyField(&ch.content, "choices.delta", "content")
		case 1:
			return s.nonEmptyField(&ch.reasoningContent, "choices.delta", "reasoning_content")
		case 2:
			return s.nonEmptyField(&ch.reasoning, "choices.delta", "reasoning")
		default:
			return array(s, &ch.toolCalls, "choices.delta", "tool_calls", func(i int) bool {
				return c.toolCall(ch.toolCalls.elem(i))
			})
		}
	})
}

func (c *chatChunk) toolCall(args *bool) bool {
	return c.s.object("choices.delta", "tool_calls", toolCallFields, func(int) bool { return c.function(args) })
}

func (c *chatChunk) function(args *bool) bool {
	s := &c.s
	return s.object("choices.delta.tool_calls", "function", functionFields, func(int) bool {
		return s.nonEmptyField(args, "choices.delta.tool_calls.function", "arguments")
	})
}

func (openAIChat) EOFIsEnd(Target) bool { return false }
