package dialect

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/streamprobe/streamprobe/resumeclient"
)

// cohere is Cohere's v2 Chat API: POST /v2/chat with stream: true,
// answered in Server-Sent Events whose data is a typed JSON event
// (message-start, content-start, content-delta, content-end,
// tool-plan-delta, tool-call-start / -delta / -end, citation-start /
// -end, message-end). The key is a bearer token. It has no resume.
type cohere struct{ noResume }

type cohereRequest struct {
	Model     string        `json:"model,omitempty"`
	Messages  []chatMessage `json:"messages"`
	Stream    bool          `json:"stream"`
	MaxTokens int           `json:"max_tokens,omitempty"`
}

func (cohere) Request(t Target, s Sample, _ bool) (resumeclient.Request, error) {
	body := t.Body
	if body == nil {
		var err error
		body, err = json.Marshal(cohereRequest{Model: t.Model, Stream: true, MaxTokens: s.MaxTokens,
			Messages: []chatMessage{{Role: "user", Content: s.Prompt}}})
		if err != nil {
			return resumeclient.Request{}, fmt.Errorf("cohere: encoding request: %w", err)
		}
	}
	method := t.Method
	if method == "" {
		method = http.MethodPost
	}
	return resumeclient.Request{Method: method, URL: cohereURL(t.URL), Header: jsonHeaders(t), Body: body}, nil
}

// cohereURL completes a base URL (https://api.cohere.com, or one ending
// in /v2) to /v2/chat; a URL that already ends in /chat is kept.
func cohereURL(u string) string {
	base, query, _ := strings.Cut(u, "?")
	if !strings.HasSuffix(base, "/chat") {
		base = strings.TrimSuffix(strings.TrimSuffix(base, "/"), "/v2") + "/v2/chat"
	}
	if query != "" {
		return base + "?" + query
	}
	return base
}

func (cohere) EOFIsEnd(Target) bool { return false }

// Decode: a content-delta with text is a chunk, one with thinking (a
// reasoning model's trace) reasoning, tool-plan-delta and tool-call-delta
// effective output; message-end is the end, with the usage and its
// finish_reason (cohereFinishes), unless that is an error (ERROR,
// ERROR_TOXIC, ERROR_LIMIT): then the run failed, named by its error.
func (cohere) Decode(t Target, ev *resumeclient.Event) (Chunk, error) {
	if len(ev.Data) == 0 {
		return Chunk{Kind: Meta}, nil
	}
	var e cohereEvent
	if err := e.decode(ev.Data); err != nil {
		return Chunk{}, err
	}
	typ := e.typ.value()
	if len(typ) == 0 {
		typ = ev.Type
	}
	c := Chunk{Kind: Meta}
	d := &e.delta
	switch string(typ) {
	case "content-delta":
		if err := e.content(); err != nil {
			return Chunk{}, err
		}
		switch {
		case !e.text.empty():
			c.Kind, c.Content = Text, content(e.text)
		case e.thinking:
			c.Kind, c.Reasoning = Effective, true
		}
	case "tool-plan-delta":
		if d.message.toolPlan {
			c.Kind = Effective
		}
	case "tool-call-delta":
		c.Kind = Effective
	case "message-end":
		c.Kind = End
		if u := &d.usage; u.set {
			c.Usage, c.HasUsage = Tokens{Prompt: int(u.billed.in), Completion: int(u.billed.out)}, true
			if u.tokens.set {
				c.Usage = Tokens{Prompt: int(u.tokens.in), Completion: int(u.tokens.out)}
			}
		}
		c.Finish = finishOf(d.finishReason, cohereFinishes)
		if r := d.finishReason.value(); strings.HasPrefix(string(r), "ERROR") {
			c.Kind = Failed
			c.Message = boundMessage(t, cohereErrorText(string(r), string(d.err.value())))
		}
	}
	return c, nil
}

// cohereErrorText is a failed message-end's text: its finish reason and
// its error.
func cohereErrorText(reason, msg string) string {
	if msg == "" {
		return "finish_reason " + reason
	}
	return "finish_reason " + reason + ": " + msg
}

// cohereEvent is what the probe reads of a v2 chat stream event, with
// encoding/json's semantics (see jscan): {"type","delta":{"message":
// {"content":RAW,"tool_plan"},"finish_reason","error","usage":
// {"tokens":{"input_tokens","output_tokens"},"billed_units":{...}}}}.
// content is an array in message-start and an object in content-delta,
// so it is kept raw and read as {"text","thinking"} only for a
// content-delta (json.RawMessage, then a second Unmarshal).
type cohereEvent struct {
	s     jscan
	typ   jstr
	delta struct {
		message struct {
			content  []byte
			toolPlan bool
		}
		finishReason, err jstr
		usage             struct {
			set            bool
			tokens, billed cohereCounts
		}
	}
	text     jstr
	thinking bool
}

var (
	cohereFields   = []string{"type", "delta"}
	cohereDelta    = []string{"message", "finish_reason", "error", "usage"}
	cohereMessage  = []string{"content", "tool_plan"}
	cohereUsage    = []string{"tokens", "billed_units"}
	cohereTokens   = []string{"input_tokens", "output_tokens"}
	cohereContent  = []string{"text", "thinking"}
	cohereContentP = "delta.message.content"
)

func (e *cohereEvent) decode(data []byte) error { return e.s.scan(data, e.event, "cohere", "event") }

func (e *cohereEvent) event() bool {
	s := &e.s
	return s.object("", "", cohereFields, func(k int) bool {
		if k == 0 {
			return s.strField(&e.typ, "", "type")
		}
		return e.deltaField()
	})
}

func (e *cohereEvent) deltaField() bool {
	s, d := &e.s, &e.delta
	return s.object("", "delta", cohereDelta, func(k int) bool {
		switch k {
		case 0:
			return s.object("delta", "message", cohereMessage, func(k int) bool {
				if k == 0 {
					start := s.i
					ok := s.skip()
					d.message.content = s.data[start:s.i]
					return ok
				}
				return s.nonEmptyField(&d.message.toolPlan, "delta.message", "tool_plan")
			})
		case 1:
			return s.strField(&d.finishReason, "delta", "finish_reason")
		case 2:
			return s.strField(&d.err, "delta", "error")
		default:
			return e.usageField()
		}
	})
}

// cohereCounts is a token count object (a pointer field): Cohere's SDKs
// type the counts as numbers, not integers, so 5.0 is read as 5.
type cohereCounts struct {
	set     bool
	in, out float64
}

func (e *cohereEvent) usageField() bool {
	s, u := &e.s, &e.delta.usage
	return pointer(s, u, &u.set, "delta", "usage", cohereUsage, func(k int) bool {
		c, name := &u.tokens, "tokens"
		if k == 1 {
			c, name = &u.billed, "billed_units"
		}
		p := "delta.usage." + name
		return pointer(s, c, &c.set, "delta.usage", name, cohereTokens, func(k int) bool {
			if k == 0 {
				return s.floatField(&c.in, p, "input_tokens")
			}
			return s.floatField(&c.out, p, "output_tokens")
		})
	})
}

// content reads the content-delta's content, kept raw by the first scan:
// {"text","thinking"}, of which only emptiness matters.
func (e *cohereEvent) content() error {
	raw := e.delta.message.content
	if len(raw) == 0 {
		return nil
	}
	var s jscan
	read := func() bool {
		return s.object("delta.message", "content", cohereContent, func(k int) bool {
			if k == 0 {
				return s.strField(&e.text, cohereContentP, "text")
			}
			return s.nonEmptyField(&e.thinking, cohereContentP, "thinking")
		})
	}
	return s.scan(raw, read, "cohere", "event")
}
