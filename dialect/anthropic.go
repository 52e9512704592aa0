package dialect

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

func (anthropicMessages) Decode(t Target, ev *resumeclient.Event) (Chunk, error) {
	if len(ev.Data) == 0 {
		return Chunk{Kind: Meta}, nil
	}
	var e anthropicEvent
	if err := e.decode(ev.Data); err != nil {
		return Chunk{}, err
	}
	typ := e.typ.value()
	if len(typ) == 0 {
		typ = ev.Type
	}
	c := Chunk{Kind: Meta}
	switch string(typ) {
	case "ping":
		c.Kind = Liveness
	case "message_start":
		if e.message.set && e.message.usage.set {
			c.Usage, c.HasUsage = Tokens{Prompt: int(e.message.usage.in), Completion: int(e.message.usage.out)}, true
		}
	case "content_block_delta":
		if d := &e.delta; d.set {
			switch {
			case d.typ.is("text_delta") && d.text:
				c.Kind = Text
			case d.typ.is("input_json_delta") && d.partialJSON, d.typ.is("thinking_delta") && d.thinking:
				c.Kind = Effective
			}
		}
	case "message_delta":
		if e.usage.set {
			c.Usage, c.HasUsage = Tokens{Completion: int(e.usage.out)}, true
		}
	case "message_stop":
		c.Kind = End
	case "error":
		c.Kind, c.Message = Failed, "error event"
		if e.err.set {
			c.Message = boundMessage(t, string(e.err.message.value()))
		}
	}
	return c, nil
}

// anthropicEvent is what the probe reads of a Messages API event, with
// encoding/json's semantics (see jscan): {"type","delta":{"type","text",
// "partial_json","thinking"},"message":{"usage":{"input_tokens",
// "output_tokens"}},"usage":{...},"error":{"message"}}.
type anthropicEvent struct {
	s       jscan
	typ     jstr
	delta   anthropicDelta
	message struct {
		set   bool
		usage tokenCounts
	}
	usage tokenCounts
	err   errorObject
}

// anthropicDelta keeps of text, partial_json and thinking their emptiness.
type anthropicDelta struct {
	set                         bool
	typ                         jstr
	text, partialJSON, thinking bool
}

var (
	anthropicFields = []string{"type", "delta", "message", "usage", "error"}
	deltaTypeFields = []string{"type", "text", "partial_json", "thinking"}
	anthropicUsage  = []string{"input_tokens", "output_tokens"}
	usageFields     = []string{"usage"}
)

func (e *anthropicEvent) decode(data []byte) error {
	return e.s.scan(data, e.event, "anthropic-messages", "event")
}

func (e *anthropicEvent) event() bool {
	s := &e.s
	return s.object("", "", anthropicFields, func(k int) bool {
		switch k {
		case 0:
			return s.strField(&e.typ, "", "type")
		case 1:
			return e.deltaField()
		case 2:
			return e.messageField()
		case 3:
			return s.tokens(&e.usage, "", "usage", anthropicUsage)
		default:
			return s.errorField(&e.err, "", "error")
		}
	})
}

func (e *anthropicEvent) deltaField() bool {
	s, d := &e.s, &e.delta
	return pointer(s, d, &d.set, "", "delta", deltaTypeFields, func(k int) bool {
		switch k {
		case 0:
			return s.strField(&d.typ, "delta", "type")
		case 1:
			return s.nonEmptyField(&d.text, "delta", "text")
		case 2:
			return s.nonEmptyField(&d.partialJSON, "delta", "partial_json")
		default:
			return s.nonEmptyField(&d.thinking, "delta", "thinking")
		}
	})
}

func (e *anthropicEvent) messageField() bool {
	s, m := &e.s, &e.message
	return pointer(s, m, &m.set, "", "message", usageFields, func(int) bool {
		return s.tokens(&m.usage, "message", "usage", anthropicUsage)
	})
}

func (anthropicMessages) EOFIsEnd(Target) bool { return false }

// KeyHeader: Anthropic takes the key as x-api-key, not as a bearer token.
func (anthropicMessages) KeyHeader() string { return "X-Api-Key" }
