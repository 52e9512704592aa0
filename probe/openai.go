package probe

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

func (c *chatChunk) decode(data []byte) error {
	s := &c.s
	if s.start(data) && c.chunk() {
		s.finish()
	}
	return s.err("openai-chat", "chunk")
}

func (c *chatChunk) chunk() bool {
	s := &c.s
	if st, ok := s.begin('{', "", "", "an object"); st != isOpen || !ok {
		return ok
	}
	for first := true; ; first = false {
		key, done, ok := s.member(first)
		if !ok || done {
			return ok
		}
		switch match(key, chatFields) {
		case 0:
			ok = c.choicesField()
		case 1:
			ok = s.tokens(&c.usage, "", "usage", chatUsage)
		case 2:
			ok = s.errorField(&c.err, "", "error")
		default:
			ok = s.skip()
		}
		if !ok {
			return false
		}
	}
}

func (c *chatChunk) choicesField() bool {
	s := &c.s
	st, ok := s.begin('[', "", "choices", "an array")
	if st == isNull {
		c.choices.reset()
	}
	if st != isOpen || !ok {
		return ok
	}
	for i, first := 0, true; ; i, first = i+1, false {
		done, ok := s.elem(first)
		if !ok {
			return false
		}
		if done {
			c.choices.end(i)
			return true
		}
		if !c.choice(c.choices.elem(i)) {
			return false
		}
	}
}

func (c *chatChunk) choice(ch *chatChoice) bool {
	s := &c.s
	if st, ok := s.begin('{', "", "choices", "an object"); st != isOpen || !ok {
		return ok
	}
	for first := true; ; first = false {
		key, done, ok := s.member(first)
		if !ok || done {
			return ok
		}
		if match(key, choiceFields) == 0 {
			ok = c.delta(ch)
		} else {
			ok = s.skip()
		}
		if !ok {
			return false
		}
	}
}

func (c *chatChunk) delta(ch *chatChoice) bool {
	s := &c.s
	if st, ok := s.begin('{', "choices", "delta", "an object"); st != isOpen || !ok {
		return ok
	}
	for first := true; ; first = false {
		key, done, ok := s.member(first)
		if !ok || done {
			return ok
		}
		switch match(key, deltaFields) {
		case 0:
			ok = s.nonEmptyField(&ch.content, "choices.delta", "content")
		case 1:
			ok = s.nonEmptyField(&ch.reasoningContent, "choices.delta", "reasoning_content")
		case 2:
			ok = s.nonEmptyField(&ch.reasoning, "choices.delta", "reasoning")
		case 3:
			ok = c.toolCalls(ch)
		default:
			ok = s.skip()
		}
		if !ok {
			return false
		}
	}
}

func (c *chatChunk) toolCalls(ch *chatChoice) bool {
	s := &c.s
	st, ok := s.begin('[', "choices.delta", "tool_calls", "an array")
	if st == isNull {
		ch.toolCalls.reset()
	}
	if st != isOpen || !ok {
		return ok
	}
	for i, first := 0, true; ; i, first = i+1, false {
		done, ok := s.elem(first)
		if !ok {
			return false
		}
		if done {
			ch.toolCalls.end(i)
			return true
		}
		if !c.toolCall(ch.toolCalls.elem(i)) {
			return false
		}
	}
}

func (c *chatChunk) toolCall(args *bool) bool {
	s := &c.s
	if st, ok := s.begin('{', "choices.delta", "tool_calls", "an object"); st != isOpen || !ok {
		return ok
	}
	for first := true; ; first = false {
		key, done, ok := s.member(first)
		if !ok || done {
			return ok
		}
		if match(key, toolCallFields) == 0 {
			ok = c.function(args)
		} else {
			ok = s.skip()
		}
		if !ok {
			return false
		}
	}
}

func (c *chatChunk) function(args *bool) bool {
	s := &c.s
	if st, ok := s.begin('{', "choices.delta.tool_calls", "function", "an object"); st != isOpen || !ok {
		return ok
	}
	for first := true; ; first = false {
		key, done, ok := s.member(first)
		if !ok || done {
			return ok
		}
		if match(key, functionFields) == 0 {
			ok = s.nonEmptyField(args, "choices.delta.tool_calls.function", "arguments")
		} else {
			ok = s.skip()
		}
		if !ok {
			return false
		}
	}
}

func (openAIChat) EOFIsEnd(Target) bool { return false }
