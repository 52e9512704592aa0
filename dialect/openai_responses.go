package dialect

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/streamprobe/streamprobe/resumeclient"
)

// openAIResponses is the OpenAI Responses API dialect. Its resume protocol
// does not use Last-Event-ID: the cursor is the sequence_number in each
// event's JSON, and a background response is resumed with
// GET /v1/responses/{id}?stream=true&starting_after=N.
type openAIResponses struct{}

type responsesRequest struct {
	Model           string `json:"model,omitempty"`
	Input           string `json:"input"`
	Stream          bool   `json:"stream"`
	Background      bool   `json:"background,omitempty"`
	MaxOutputTokens int    `json:"max_output_tokens,omitempty"`
}

func (openAIResponses) Request(t Target, s Sample, resumable bool) (resumeclient.Request, error) {
	body := t.Body
	if body == nil {
		var err error
		body, err = json.Marshal(responsesRequest{Model: t.Model, Input: s.Prompt, Stream: true, Background: resumable, MaxOutputTokens: s.MaxTokens})
		if err != nil {
			return resumeclient.Request{}, fmt.Errorf("openai-responses: encoding request: %w", err)
		}
	}
	method := t.Method
	if method == "" {
		method = http.MethodPost
	}
	return resumeclient.Request{Method: method, URL: apiURL(t.URL, "/responses"), Header: jsonHeaders(t), Body: body}, nil
}

func (openAIResponses) Decode(t Target, ev *resumeclient.Event) (Chunk, error) {
	if len(ev.Data) == 0 {
		return Chunk{Kind: Meta}, nil
	}
	var e responsesEvent
	if err := e.decode(ev.Data); err != nil {
		return Chunk{}, err
	}
	typ := e.typ.value()
	if len(typ) == 0 {
		typ = ev.Type
	}
	c := Chunk{Kind: Meta}
	if e.seqSet {
		c.Cursor, c.HasCursor = strconv.FormatInt(e.seq, 10), true
	}
	if r := &e.response; r.set {
		c.ResponseID = string(r.id.value())
		if r.usage.set {
			c.Usage, c.HasUsage = Tokens{Prompt: int(r.usage.in), Completion: int(r.usage.out)}, true
		}
	}
	switch {
	case string(typ) == "response.output_text.delta":
		if e.delta {
			c.Kind = Text
		}
	case string(typ) == "response.function_call_arguments.delta",
		bytes.HasPrefix(typ, reasoningPrefix) && bytes.HasSuffix(typ, deltaSuffix),
		string(typ) == "response.custom_tool_call_input.delta":
		if e.delta {
			c.Kind = Effective
		}
	case string(typ) == "response.completed":
		c.Kind = End
	case string(typ) == "response.failed", string(typ) == "response.incomplete":
		c.Kind, c.Message = Failed, string(typ)
		if e.response.set && e.response.err.set {
			c.Message = boundMessage(t, string(e.response.err.message.value()))
		}
	case string(typ) == "error":
		c.Kind, c.Message = Failed, boundMessage(t, string(e.message.value()))
	}
	return c, nil
}

var (
	reasoningPrefix = []byte("response.reasoning")
	deltaSuffix     = []byte(".delta")
)

// responsesEvent is what the probe reads of a Responses API event, with
// encoding/json's semantics (see jscan): {"type","sequence_number","delta",
// "message","response":{"id","usage":{"input_tokens","output_tokens"},
// "error":{"message"}}}; of delta only its emptiness is kept.
type responsesEvent struct {
	s        jscan
	typ      jstr
	seqSet   bool
	seq      int64
	delta    bool
	message  jstr
	response struct {
		set   bool
		id    jstr
		usage tokenCounts
		err   errorObject
	}
}

var (
	responsesFields = []string{"type", "sequence_number", "delta", "message", "response"}
	responseFields  = []string{"id", "usage", "error"}
	responsesUsage  = []string{"input_tokens", "output_tokens"}
)

func (e *responsesEvent) decode(data []byte) error {
	return e.s.scan(data, e.event, "openai-responses", "event")
}

func (e *responsesEvent) event() bool {
	s := &e.s
	return s.object("", "", responsesFields, func(k int) bool {
		switch k {
		case 0:
			return s.strField(&e.typ, "", "type")
		case 1:
			isNull, ok := s.intField(&e.seq, "", "sequence_number")
			e.seqSet = !isNull // a pointer: null makes it nil
			return ok
		case 2:
			return s.nonEmptyField(&e.delta, "", "delta")
		case 3:
			return s.strField(&e.message, "", "message")
		default:
			return e.responseField()
		}
	})
}

func (e *responsesEvent) responseField() bool {
	s, r := &e.s, &e.response
	return pointer(s, r, &r.set, "", "response", responseFields, func(k int) bool {
		switch k {
		case 0:
			return s.strField(&r.id, "response", "id")
		case 1:
			return s.tokens(&r.usage, "response", "usage", responsesUsage)
		default:
			return s.errorField(&r.err, "response", "error")
		}
	})
}

func (openAIResponses) EOFIsEnd(Target) bool { return false }

// Resumer is starting_after on the response's own URL.
func (openAIResponses) Resumer() Resumer { return startingAfter{} }

// startingAfter resumes a background response from the sequence_number
// of its last event: GET /v1/responses/{id}?stream=true&starting_after=N.
type startingAfter struct{}

func (startingAfter) Label(n string) string { return "starting_after=" + n }

// StaleCursor is far ahead of any stream's sequence numbers.
func (startingAfter) StaleCursor() string { return DefaultStaleCursor }

func (startingAfter) Cursor(_ *resumeclient.Event, ch Chunk) (string, bool) {
	return ch.Cursor, ch.HasCursor
}

// Resume asks for the rest of a background response after cursor.
func (startingAfter) Resume(orig resumeclient.Request, cursor, responseID string) (resumeclient.Request, error) {
	if responseID == "" {
		return resumeclient.Request{}, fmt.Errorf("openai-responses: no response id seen before the drop")
	}
	u, err := url.Parse(orig.URL)
	if err != nil {
		return resumeclient.Request{}, fmt.Errorf("openai-responses: %w", err)
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/" + responseID
	u.RawPath = ""
	q := u.Query() // kept: api-version and the like
	q.Set("stream", "true")
	q.Set("starting_after", cursor)
	u.RawQuery = q.Encode()
	h := orig.Header.Clone()
	h.Del("Content-Type")
	return resumeclient.Request{Method: http.MethodGet, URL: u.String(), Header: h}, nil
}
