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
	var seen chatSeen
	for i := range c.choices.n {
		seen.add(c.choices.at(i))
	}
	seen.chunk(&out)
	return out, nil
}

// chatSeen is what the choices of one chunk carry, together.
type chatSeen struct {
	text                        Content
	hasText, refusal, reasoning bool
	effective                   bool
	finish                      Finish
}

func (s *chatSeen) add(ch *chatChoice) {
	if f := finishOf(ch.finish, chatFinishes); f != FinishNone {
		s.finish = f
	}
	if ch.content.text && !s.hasText {
		s.text, s.hasText = content(ch.content.value), true
	}
	s.refusal = s.refusal || ch.refusal
	s.reasoning = s.reasoning || ch.reasoningContent || ch.reasoning || ch.content.thinking
	for j := range ch.reasoningDetails.n {
		d := ch.reasoningDetails.at(j)
		s.reasoning = s.reasoning || d.text || d.summary
	}
	for j := range ch.toolCalls.n {
		s.effective = s.effective || *ch.toolCalls.at(j)
	}
}

// chunk classifies the chunk: visible text first, then a refusal (visible
// too), reasoning, other effective output.
func (s *chatSeen) chunk(out *Chunk) {
	out.Finish = s.finish
	switch {
	case s.hasText:
		out.Kind, out.Content = Text, s.text
	case s.refusal:
		out.Kind, out.Refusal, out.Message = Text, true, "delta.refusal"
	case s.reasoning:
		out.Kind, out.Reasoning = Effective, true
	case s.effective:
		out.Kind = Effective
	}
	if s.finish == FinishContentFilter && out.Message == "" {
		out.Message = "finish_reason content_filter"
	}
}

// chatChunk is what the probe reads of a chat.completion.chunk, with
// encoding/json's semantics (see jscan): {"choices":[{"delta":{"content",
// "reasoning_content","reasoning","refusal","reasoning_details":[{"text",
// "summary"}],"tool_calls":[{"function":{"arguments"}}]},"finish_reason"}],
// "usage":{"prompt_tokens","completion_tokens"},"error":{"message"}}; of
// the delta's strings but content only their emptiness is kept. content is
// a string, or (Mistral) an array of parts: {"type":"text","text"} is
// visible text, {"type":"thinking","thinking"} reasoning (see chatContent).
type chatChunk struct {
	s       jscan
	choices jslice[chatChoice]
	usage   tokenCounts
	err     errorObject
}

type chatChoice struct {
	content                              chatContent
	reasoningContent, reasoning, refusal bool
	reasoningDetails                     jslice[chatDetail]
	toolCalls                            jslice[bool] // function.arguments not empty
	finish                               jstr
}

// chatDetail is an element of reasoning_details (OpenRouter, Snowflake
// Cortex): whether its text or summary is not empty.
type chatDetail struct{ text, summary bool }

// chatContent is a delta's content, a string or an array of parts, as a
// type with its own UnmarshalJSON would read it: null leaves it as it
// was, any other value replaces it whole. text reports visible text (a
// string, or a text part, not empty), value the first; thinking reports
// a thinking part whose thinking is a string or an array, not empty.
type chatContent struct {
	text, thinking bool
	value          jstr
}

var (
	chatFields        = []string{"choices", "usage", "error"}
	chatUsage         = []string{"prompt_tokens", "completion_tokens"}
	choiceFields      = []string{"delta", "finish_reason"}
	deltaFields       = []string{"content", "reasoning_content", "reasoning", "tool_calls", "refusal", "reasoning_details"}
	toolCallFields    = []string{"function"}
	functionFields    = []string{"arguments"}
	detailFields      = []string{"text", "summary"}
	contentPartFields = []string{"type", "text", "thinking"}
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
	s := &c.s
	return s.object("", "choices", choiceFields, func(k int) bool {
		if k == 0 {
			return c.delta(ch)
		}
		return s.strField(&ch.finish, "choices", "finish_reason")
	})
}

func (c *chatChunk) delta(ch *chatChoice) bool {
	s := &c.s
	return s.object("choices", "delta", deltaFields, func(k int) bool {
		switch k {
		case 0:
			return c.content(&ch.content)
		case 1:
			return s.nonEmptyField(&ch.reasoningContent, "choices.delta", "reasoning_content")
		case 2:
			return s.nonEmptyField(&ch.reasoning, "choices.delta", "reasoning")
		case 3:
			return array(s, &ch.toolCalls, "choices.delta", "tool_calls", func(i int) bool {
				return c.toolCall(ch.toolCalls.elem(i))
			})
		case 4:
			return s.nonEmptyField(&ch.refusal, "choices.delta", "refusal")
		default:
			return array(s, &ch.reasoningDetails, "choices.delta", "reasoning_details", func(i int) bool {
				return c.detail(ch.reasoningDetails.elem(i))
			})
		}
	})
}

// content reads a delta's content: a string, or an array of parts.
func (c *chatChunk) content(dst *chatContent) bool {
	s := &c.s
	switch s.data[s.i] {
	case 'n':
		return s.lit("null")
	case '"':
		v, ok := s.str()
		if ok {
			*dst = chatContent{text: !v.empty(), value: v}
		}
		return ok
	case '[':
	default:
		return s.hardWrong("choices.delta", "content", "a string or an array")
	}
	*dst = chatContent{}
	if !s.open() {
		return false
	}
	for first := true; ; first = false {
		done, ok := s.elem(first)
		if !ok || done {
			return ok
		}
		if !c.part(dst) {
			return false
		}
	}
}

// part reads one part of a content array into dst, leniently: a part
// that is not an object, or a field of another type, is passed over.
func (c *chatChunk) part(dst *chatContent) bool {
	s := &c.s
	if s.data[s.i] != '{' {
		return s.skip()
	}
	var typ, text jstr
	var thinking bool
	ok := s.open() && s.members(contentPartFields, func(k int) bool {
		switch k {
		case 0:
			return s.looseStr(&typ)
		case 1:
			return s.looseStr(&text)
		default:
			return s.filled(&thinking)
		}
	})
	switch {
	case typ.is("text") && !text.empty() && !dst.text:
		dst.text, dst.value = true, text
	case typ.is("thinking") && thinking:
		dst.thinking = true
	}
	return ok
}

func (c *chatChunk) detail(d *chatDetail) bool {
	s := &c.s
	return s.object("choices.delta", "reasoning_details", detailFields, func(k int) bool {
		if k == 0 {
			return s.nonEmptyField(&d.text, "choices.delta.reasoning_details", "text")
		}
		return s.nonEmptyField(&d.summary, "choices.delta.reasoning_details", "summary")
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
