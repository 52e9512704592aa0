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
	case "content_block_start":
		if e.block.set && e.block.typ.is("redacted_thinking") {
			c.Kind, c.Reasoning = Effective, true // a thinking block sent whole, encrypted
		}
	case "content_block_delta":
		e.delta.classify(&c)
	case "message_delta":
		// Its usage is cumulative: input_tokens, where it is sent, counts
		// what the server's tools added to the prompt.
		if e.usage.set {
			c.Usage, c.HasUsage = Tokens{Prompt: int(e.usage.in), Completion: int(e.usage.out)}, true
		}
		if e.delta.set {
			c.Finish = finishOf(e.delta.stopReason, anthropicFinishes)
		}
		if c.Finish == FinishRefusal {
			c.Message = "stop_reason refusal"
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

// classify sets what a content_block_delta carries: text, reasoning
// (thinking_delta), a tool's input (input_json_delta: the client's tools
// and the server's, web search and code execution); a signature or
// citations are none.
func (d *anthropicDelta) classify(c *Chunk) {
	if !d.set {
		return
	}
	switch {
	case d.typ.is("text_delta") && !d.text.empty():
		c.Kind, c.Content = Text, content(d.text)
	case d.typ.is("thinking_delta") && d.thinking:
		c.Kind, c.Reasoning = Effective, true
	case d.typ.is("input_json_delta") && d.partialJSON:
		c.Kind = Effective
	}
}

// anthropicEvent is what the probe reads of a Messages API event, with
// encoding/json's semantics (see jscan): {"type","delta":{"type","text",
// "partial_json","thinking","stop_reason"},"content_block":{"type"},
// "message":{"usage":{"input_tokens","output_tokens"}},"usage":{...},
// "error":{"message"}}.
type anthropicEvent struct {
	s     jscan
	typ   jstr
	delta anthropicDelta
	block struct {
		set bool
		typ jstr
	}
	message struct {
		set   bool
		usage tokenCounts
	}
	usage tokenCounts
	err   errorObject
}

// anthropicDelta keeps of partial_json and thinking their emptiness.
type anthropicDelta struct {
	set                   bool
	typ, text, stopReason jstr
	partialJSON, thinking bool
}

var (
	anthropicFields = []string{"type", "delta", "message", "usage", "error", "content_block"}
	deltaTypeFields = []string{"type", "text", "partial_json", "thinking", "stop_reason"}
	anthropicUsage  = []string{"input_tokens", "output_tokens"}
	usageFields     = []string{"usage"}
	typeFields      = []string{"type"}
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
		case 4:
			return s.errorField(&e.err, "", "error")
		default:
			b := &e.block
			return pointer(s, b, &b.set, "", "content_block", typeFields, func(int) bool {
				return s.strField(&b.typ, "content_block", "type")
			})
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
			return s.strField(&d.text, "delta", "text")
		case 2:
			return s.nonEmptyField(&d.partialJSON, "delta", "partial_json")
		case 3:
			return s.nonEmptyField(&d.thinking, "delta", "thinking")
		default:
			return s.strField(&d.stopReason, "delta", "stop_reason")
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
