package dialect

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

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
		body, err = json.Marshal(aiSDKRequest{ID: aiSDKChatID(t, s), Trigger: "submit-message",
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
	case p.typ.is("start"):
		c.Begin = true
	case p.typ.is("finish"):
		c.Done = true
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

// aiSDKChatID is the chat id a request names: the sample's, or for a
// resumable app the run's own (the app keys the chat's active stream by
// it, so two runs never share one).
func aiSDKChatID(t Target, s Sample) string {
	if t.app().Resumable && t.RunID != "" {
		return "streamprobe-" + t.RunID
	}
	return "streamprobe-" + s.Name
}

// DefaultResumeURL is the resume URL of an AI SDK app when the target
// names none: the AI SDK's "chatbot resume streams" pattern, GET
// /api/chat/{id}/stream beside the chat route. {api} is the chat route's
// URL (without its query), {chatId} the chat's id.
const DefaultResumeURL = "{api}/{chatId}/stream"

// DefaultStaleChat is the chat id the stale drill resumes: one no app
// has.
const DefaultStaleChat = "streamprobe-stale-chat-0"

// ResumerFor resumes an app that says it resumes (Resumable) at its
// resume URL; any other has no resume.
func (aiSDKUI) ResumerFor(t Target) Resumer {
	if !t.app().Resumable {
		return nil
	}
	chat := aiSDKChatID(t, Sample{})
	if t.Body != nil {
		var b struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(t.Body, &b) == nil && b.ID != "" {
			chat = b.ID
		}
	}
	api, _, _ := strings.Cut(t.URL, "?")
	return aiSDKResume{pattern: cmp.Or(t.app().ResumeURL, DefaultResumeURL), api: strings.TrimSuffix(api, "/"), chat: chat}
}

// ResumeURL is the resume URL pattern with api and chat filled in.
func ResumeURL(pattern, api, chat string) string {
	return strings.NewReplacer("{api}", api, "{chatId}", url.PathEscape(chat)).Replace(pattern)
}

// aiSDKResume resumes an AI SDK chat's answer as useChat's resume does:
// GET on the resume URL, no cursor; the app's resumable stream replays the
// answer from its start part, then goes on live (useChat resets on the
// start part). 204 says no stream is active.
type aiSDKResume struct{ pattern, api, chat string }

// Mode: the answer is replayed from its start.
func (aiSDKResume) Mode() ResumeMode { return Replay }

// Cursor: the events carry none; the resume sends none.
func (aiSDKResume) Cursor(*resumeclient.Event, Chunk) (string, bool) { return "", false }

// Resume asks for the chat's active stream; a cursor (the stale drill's)
// names another chat.
func (r aiSDKResume) Resume(orig resumeclient.Request, cursor, _ string) (resumeclient.Request, error) {
	h := orig.Header.Clone()
	h.Del("Content-Type")
	return resumeclient.Request{Method: http.MethodGet, URL: ResumeURL(r.pattern, r.api, cmp.Or(cursor, r.chat)), Header: h}, nil
}

func (aiSDKResume) Label(chat string) string {
	if chat == "" {
		return "the resume GET"
	}
	return "chat id " + chat
}

func (aiSDKResume) StaleCursor() string { return DefaultStaleChat }
