package dialect

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/streamprobe/streamprobe/resumeclient"
)

// aiSDKUI is the AI SDK's UI message stream (the npm package ai:
// streamText(...).toUIMessageStreamResponse()), as a web app's own chat
// route serves it to its frontend: SSE data lines, each a JSON part with a
// type, then data: [DONE]. The URL is the route itself. It has no resume.
type aiSDKUI struct{ noResume }

type aiSDKRequest struct {
	ID       string         `json:"id"`
	Messages []aiSDKMessage `json:"messages"`
	Trigger  string         `json:"trigger"`
}

type aiSDKMessage struct {
	ID    string      `json:"id"`
	Role  string      `json:"role"`
	Parts []aiSDKPart `json:"parts"`
}

type aiSDKPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// Request posts the sample as useChat's default transport does: the chat
// id, one user message with one text part, trigger submit-message.
func (aiSDKUI) Request(t Target, s Sample, _ bool) (resumeclient.Request, error) {
	body := t.Body
	if body == nil {
		var err error
		body, err = json.Marshal(aiSDKRequest{ID: "streamprobe-" + s.Name, Trigger: "submit-message",
			Messages: []aiSDKMessage{{ID: "streamprobe-" + s.Version, Role: "user", Parts: []aiSDKPart{{Type: "text", Text: s.Prompt}}}}})
		if err != nil {
			return resumeclient.Request{}, fmt.Errorf("ai-sdk-ui: encoding request: %w", err)
		}
	}
	method := t.Method
	if method == "" {
		method = http.MethodPost
	}
	return resumeclient.Request{Method: method, URL: t.URL, Header: jsonHeaders(t), Body: body}, nil
}

func (aiSDKUI) EOFIsEnd(Target) bool { return false }

func (aiSDKUI) Decode(t Target, ev *resumeclient.Event) (Chunk, error) {
	if bytes.Equal(ev.Data, doneMarker) {
		return Chunk{Kind: End}, nil
	}
	if len(ev.Data) == 0 {
		return Chunk{Kind: Meta}, nil
	}
	var p aiSDKChunk
	if err := p.decode(ev.Data); err != nil {
		return Chunk{}, err
	}
	c := Chunk{Kind: Meta}
	switch {
	case p.typ.is("text-delta"):
		if !p.delta.empty() {
			c.Kind, c.Content = Text, content(p.delta)
		}
	case p.typ.is("reasoning-delta"):
		if !p.delta.empty() {
			c.Kind, c.Reasoning = Effective, true
		}
	case p.typ.is("tool-input-delta"):
		if p.inputTextDelta {
			c.Kind = Effective
		}
	case p.typ.is("tool-input-available"), p.typ.is("file"):
		c.Kind = Effective
	case p.typ.is("finish"):
		c.Finish = finishOf(p.finishReason, aiSDKFinishes)
		if c.Finish == FinishContentFilter {
			c.Message = "finishReason content-filter"
		}
	case p.typ.is("error"):
		c.Kind, c.Message = Failed, "error part"
		if !p.errorText.empty() {
			c.Message = boundMessage(t, string(p.errorText.value()))
		}
	case p.typ.is("abort"):
		c.Kind, c.Message = Failed, "abort part: the server aborted the answer"
	}
	return c, nil
}

// aiSDKChunk is what the probe reads of a UI message stream part, with
// encoding/json's semantics (see jscan): {"type","delta",
// "inputTextDelta","errorText","finishReason"}; of inputTextDelta only
// its emptiness is kept.
type aiSDKChunk struct {
	s                                   jscan
	typ, errorText, delta, finishReason jstr
	inputTextDelta                      bool
}

var aiSDKFields = []string{"type", "delta", "inputTextDelta", "errorText", "finishReason"}

func (p *aiSDKChunk) decode(data []byte) error { return p.s.scan(data, p.part, "ai-sdk-ui", "part") }

func (p *aiSDKChunk) part() bool {
	s := &p.s
	return s.object("", "", aiSDKFields, func(k int) bool {
		switch k {
		case 0:
			return s.strField(&p.typ, "", "type")
		case 1:
			return s.strField(&p.delta, "", "delta")
		case 2:
			return s.nonEmptyField(&p.inputTextDelta, "", "inputTextDelta")
		case 3:
			return s.strField(&p.errorText, "", "errorText")
		default:
			return s.strField(&p.finishReason, "", "finishReason")
		}
	})
}
