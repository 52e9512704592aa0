package probe

import (
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

type responsesEvent struct {
	Type           string          `json:"type"`
	SequenceNumber *int64          `json:"sequence_number"`
	Delta          string          `json:"delta"`
	Message        string          `json:"message"`
	Response       *responsesState `json:"response"`
}

type responsesState struct {
	ID    string `json:"id"`
	Usage *struct {
		InputTokens  int `json:"input_tokens"`
		OutputTokens int `json:"output_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

func (openAIResponses) Decode(t Target, ev *resumeclient.Event) (Chunk, error) {
	if len(ev.Data) == 0 {
		return Chunk{Kind: Meta}, nil
	}
	var e responsesEvent
	if err := json.Unmarshal(ev.Data, &e); err != nil {
		return Chunk{}, jsonError("openai-responses", "event", ev.Data, err)
	}
	typ := e.Type
	if typ == "" {
		typ = string(ev.Type)
	}
	c := Chunk{Kind: Meta}
	if e.SequenceNumber != nil {
		c.Cursor, c.HasCursor = strconv.FormatInt(*e.SequenceNumber, 10), true
	}
	if e.Response != nil {
		c.ResponseID = e.Response.ID
		if u := e.Response.Usage; u != nil {
			c.Usage = &Tokens{Prompt: u.InputTokens, Completion: u.OutputTokens}
		}
	}
	switch {
	case typ == "response.output_text.delta":
		if e.Delta != "" {
			c.Kind = Text
		}
	case typ == "response.function_call_arguments.delta", strings.HasPrefix(typ, "response.reasoning") && strings.HasSuffix(typ, ".delta"),
		typ == "response.custom_tool_call_input.delta":
		if e.Delta != "" {
			c.Kind = Effective
		}
	case typ == "response.completed":
		c.Kind = End
	case typ == "response.failed", typ == "response.incomplete":
		c.Kind, c.Message = Failed, typ
		if e.Response != nil && e.Response.Error != nil {
			c.Message = boundMessage(t, e.Response.Error.Message)
		}
	case typ == "error":
		c.Kind, c.Message = Failed, boundMessage(t, e.Message)
	}
	return c, nil
}

func (openAIResponses) EOFIsEnd(Target) bool { return false }

func (openAIResponses) Resumable() bool { return true }

func (openAIResponses) CursorLabel(n string) string { return "starting_after=" + n }

// StaleCursor is far ahead of any stream's sequence numbers.
func (openAIResponses) StaleCursor() string { return DefaultStaleCursor }

func (openAIResponses) Cursor(_ *resumeclient.Event, ch Chunk) (string, bool) {
	return ch.Cursor, ch.HasCursor
}

// Resume asks for the rest of a background response after cursor.
func (openAIResponses) Resume(orig resumeclient.Request, cursor, responseID string) (resumeclient.Request, error) {
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
