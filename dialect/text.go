package dialect

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/streamprobe/streamprobe/resumeclient"
)

// text is a plain-text stream: the AI SDK's text stream protocol
// (toTextStreamResponse, createTextStreamResponse; useChat with
// streamProtocol "text") and the routes that write text/plain as the
// model answers (a Next.js route, FastAPI's StreamingResponse, Express).
// The body has no framing, so every read that brought bytes is a chunk,
// stamped when it arrived (resumeclient.FramingRaw), and the clean end of
// the body is the end. It has no event ids: no resume, no drill.
type text struct{ noResume }

// textRequest is the body posted when the target gives none: the prompt
// as useCompletion posts it (prompt) and as useChat's text transport
// does (a UI message), so a route written for either reads it.
type textRequest struct {
	Prompt   string         `json:"prompt"`
	ID       string         `json:"id"`
	Messages []aiSDKMessage `json:"messages"`
	Trigger  string         `json:"trigger"`
}

func (text) Request(t Target, s Sample, _ bool) (resumeclient.Request, error) {
	body := t.Body
	if body == nil {
		var err error
		body, err = json.Marshal(textRequest{Prompt: s.Prompt, ID: "streamprobe-" + s.Name, Trigger: "submit-message",
			Messages: []aiSDKMessage{{ID: "streamprobe-" + s.Version, Role: "user", Parts: []aiSDKPart{{Type: "text", Text: s.Prompt}}}}})
		if err != nil {
			return resumeclient.Request{}, fmt.Errorf("text: encoding request: %w", err)
		}
	}
	method := t.Method
	if method == "" {
		method = http.MethodPost
	}
	return resumeclient.Request{Method: method, URL: t.URL, Header: jsonHeaders(t), Body: body, Framing: resumeclient.FramingRaw}, nil
}

// Framing: the body is read as it comes, one event per read.
func (text) Framing() resumeclient.Framing { return resumeclient.FramingRaw }

// EOFIsEnd: a plain-text stream has no end marker.
func (text) EOFIsEnd(Target) bool { return true }

// Decode: a read with bytes is visible text (its bytes the Content, for
// an inline reasoning block: see Think).
func (text) Decode(_ Target, ev *resumeclient.Event) (Chunk, error) {
	if len(ev.Data) == 0 {
		return Chunk{Kind: Meta}, nil
	}
	return Chunk{Kind: Text, Content: plainContent(ev.Data)}, nil
}
