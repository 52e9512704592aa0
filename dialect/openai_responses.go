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
	e.classify(t, typ, &c)
	return c, nil
}

// classify sets what an event of type typ is: the text (and refusal)
// deltas, every other delta of the model's output (reasoning, a tool's
// input, hosted tools' included), a partial image, the end (completed,
// or incomplete for a length stop or a filter), an error.
func (e *responsesEvent) classify(t Target, typ []byte, c *Chunk) {
	switch {
	case string(typ) == "response.output_text.delta":
		if !e.delta.empty() {
			c.Kind, c.Content = Text, content(e.delta)
		}
	case string(typ) == "response.refusal.delta":
		if !e.delta.empty() {
			c.Kind, c.Refusal, c.Message = Text, true, "response.refusal.delta"
		}
	case bytes.HasPrefix(typ, responsePrefix) && bytes.HasSuffix(typ, deltaSuffix):
		if !e.delta.empty() {
			c.Kind, c.Reasoning = Effective, bytes.HasPrefix(typ, reasoningPrefix)
		}
	case string(typ) == "response.image_generation_call.partial_image":
		c.Kind = Effective
	case string(typ) == "response.completed":
		c.Kind, c.Finish = End, FinishStop
	case string(typ) == "response.incomplete":
		e.incomplete(t, c)
	case string(typ) == "response.failed":
		c.Kind, c.Finish, c.Message = Failed, FinishError, "response.failed"
		if e.response.set && e.response.err.set {
			c.Message = boundMessage(t, e.response.err.text("response.failed"))
		}
	case string(typ) == "error":
		c.Kind, c.Message = Failed, boundMessage(t, e.errorText())
	}
}

// incomplete is response.incomplete: the end of a response cut short by
// its token limit (a length stop) or by the content filter (refused);
// any other reason is an error that names it.
func (e *responsesEvent) incomplete(t Target, c *Chunk) {
	var reason jstr
	if e.response.set && e.response.incomplete.set {
		reason = e.response.incomplete.reason
	}
	switch {
	case reason.is("max_output_tokens"):
		c.Kind, c.Finish = End, FinishLength
	case reason.is("content_filter"):
		c.Kind, c.Finish, c.Message = End, FinishContentFilter, "incomplete_details.reason content_filter"
	case reason.empty():
		c.Kind, c.Finish, c.Message = Failed, FinishOther, "response.incomplete"
	default:
		c.Kind, c.Finish, c.Message = Failed, FinishOther, boundMessage(t, "response.incomplete: reason "+string(reason.value()))
	}
}

// errorText is an error event's text: its error object's code and
// message (as the API sends it), else the top-level ones (as it once
// did), else "error event".
func (e *responsesEvent) errorText() string {
	if e.err.set {
		return e.err.text("error event")
	}
	return codedText(e.code, e.codeStr, e.message, "error event")
}

var (
	responsePrefix  = []byte("response.")
	reasoningPrefix = []byte("response.reasoning")
	deltaSuffix     = []byte(".delta")
)

// responsesEvent is what the probe reads of a Responses API event, with
// encoding/json's semantics (see jscan): {"type","sequence_number","delta",
// "message","code","error":{"code","message"},"response":{"id","usage":
// {"input_tokens","output_tokens"},"error":{"code","message"},
// "incomplete_details":{"reason"}}}; a code is kept only when it is a
// string (any other value is passed over).
type responsesEvent struct {
	s        jscan
	typ      jstr
	seqSet   bool
	seq      int64
	delta    jstr
	message  jstr
	code     jstr
	codeStr  bool
	err      codedError
	response struct {
		set        bool
		id         jstr
		usage      tokenCounts
		err        codedError
		incomplete struct {
			set    bool
			reason jstr
		}
	}
}

// codedError is an error object with a code: {"code","message"}.
type codedError struct {
	set           bool
	message, code jstr
	codeStr       bool
}

// text is the error's code and message, or none when it has neither.
func (c *codedError) text(none string) string { return codedText(c.code, c.codeStr, c.message, none) }

// codedText joins a code and a message: "code: message", either alone,
// or none.
func codedText(code jstr, codeStr bool, message jstr, none string) string {
	cd, msg := "", string(message.value())
	if codeStr {
		cd = string(code.value())
	}
	switch {
	case cd != "" && msg != "":
		return cd + ": " + msg
	case cd != "" || msg != "":
		return cd + msg
	}
	return none
}

var (
	responsesFields = []string{"type", "sequence_number", "delta", "message", "response", "code", "error"}
	responseFields  = []string{"id", "usage", "error", "incomplete_details"}
	responsesUsage  = []string{"input_tokens", "output_tokens"}
	codedFields     = []string{"code", "message"}
	reasonFields    = []string{"reason"}
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
			return s.strField(&e.delta, "", "delta")
		case 3:
			return s.strField(&e.message, "", "message")
		case 4:
			return e.responseField()
		case 5:
			return s.anyStr(&e.code, &e.codeStr)
		default:
			return s.codedError(&e.err, "", "error")
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
		case 2:
			return s.codedError(&r.err, "response", "error")
		default:
			in := &r.incomplete
			return pointer(s, in, &in.set, "response", "incomplete_details", reasonFields, func(int) bool {
				return s.strField(&in.reason, "response.incomplete_details", "reason")
			})
		}
	})
}

// codedError reads the error object field parent.name (a pointer).
func (s *jscan) codedError(e *codedError, parent, name string) bool {
	p := path(parent, name)
	return pointer(s, e, &e.set, parent, name, codedFields, func(k int) bool {
		if k == 0 {
			return s.anyStr(&e.code, &e.codeStr)
		}
		return s.strField(&e.message, p, "message")
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
