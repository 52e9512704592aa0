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

type chatChunk struct {
	Choices []struct {
		Delta struct {
			Content          string `json:"content"`
			ReasoningContent string `json:"reasoning_content"`
			Reasoning        string `json:"reasoning"`
			ToolCalls        []struct {
				Function struct {
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
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
	if err := json.Unmarshal(ev.Data, &c); err != nil {
		return Chunk{}, jsonError("openai-chat", "chunk", ev.Data, err)
	}
	out := Chunk{Kind: Meta}
	if c.Usage != nil {
		out.Usage = &Tokens{Prompt: c.Usage.PromptTokens, Completion: c.Usage.CompletionTokens}
	}
	if c.Error != nil {
		out.Kind, out.Message = Failed, boundMessage(t, c.Error.Message)
		return out, nil
	}
	for _, ch := range c.Choices {
		d := ch.Delta
		if d.Content != "" {
			out.Kind = Text
			break
		}
		if d.ReasoningContent != "" || d.Reasoning != "" {
			out.Kind = Effective
		}
		for _, tc := range d.ToolCalls {
			if tc.Function.Arguments != "" {
				out.Kind = Effective
			}
		}
	}
	return out, nil
}

func (openAIChat) EOFIsEnd(Target) bool { return false }
