package probe

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/streamprobe/streamprobe/resumeclient"
)

// anthropicMessages is Anthropic's Messages API dialect. It has no resume:
// drills report not_supported.
type anthropicMessages struct{ noResume }

// AnthropicVersion is sent as anthropic-version unless the target sets it.
const AnthropicVersion = "2023-06-01"

type anthropicRequest struct {
	Model     string        `json:"model,omitempty"`
	MaxTokens int           `json:"max_tokens"`
	Messages  []chatMessage `json:"messages"`
	Stream    bool          `json:"stream"`
}

func (anthropicMessages) Request(t Target, s Sample, _ bool) (resumeclient.Request, error) {
	body := t.Body
	if body == nil {
		var err error
		body, err = json.Marshal(anthropicRequest{Model: t.Model, MaxTokens: s.MaxTokens, Stream: true,
			Messages: []chatMessage{{Role: "user", Content: s.Prompt}}})
		if err != nil {
			return resumeclient.Request{}, fmt.Errorf("anthropic-messages: encoding request: %w", err)
		}
	}
	method := t.Method
	if method == "" {
		method = http.MethodPost
	}
	h := jsonHeaders(t)
	if h.Get("anthropic-version") == "" {
		h.Set("anthropic-version", AnthropicVersion)
	}
	return resumeclient.Request{Method: method, URL: apiURL(t.URL, "/messages"), Header: h, Body: body}, nil
}

type anthropicEvent struct {
	Type  string `json:"type"`
	Delta *struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
		Thinking    string `json:"thinking"`
	} `json:"delta"`
	Message *struct {
		Usage *anthropicUsage `json:"usage"`
	} `json:"message"`
	Usage *anthropicUsage `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

type anthropicUsage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

func (anthropicMessages) Decode(t Target, ev *resumeclient.Event) (Chunk, error) {
	if len(ev.Data) == 0 {
		return Chunk{Kind: Meta}, nil
	}
	var e anthropicEvent
	if err := json.Unmarshal(ev.Data, &e); err != nil {
		return Chunk{}, jsonError("anthropic-messages", "event", ev.Data, err)
	}
	typ := e.Type
	if typ == "" {
		typ = string(ev.Type)
	}
	c := Chunk{Kind: Meta}
	switch typ {
	case "ping":
		c.Kind = Liveness
	case "message_start":
		if e.Message != nil && e.Message.Usage != nil {
			c.Usage = &Tokens{Prompt: e.Message.Usage.InputTokens, Completion: e.Message.Usage.OutputTokens}
		}
	case "content_block_delta":
		if d := e.Delta; d != nil {
			switch {
			case d.Type == "text_delta" && d.Text != "":
				c.Kind = Text
			case d.Type == "input_json_delta" && d.PartialJSON != "", d.Type == "thinking_delta" && d.Thinking != "":
				c.Kind = Effective
			}
		}
	case "message_delta":
		if e.Usage != nil {
			c.Usage = &Tokens{Completion: e.Usage.OutputTokens}
		}
	case "message_stop":
		c.Kind = End
	case "error":
		c.Kind, c.Message = Failed, "error event"
		if e.Error != nil {
			c.Message = boundMessage(t, e.Error.Message)
		}
	}
	return c, nil
}

func (anthropicMessages) EOFIsEnd(Target) bool { return false }
