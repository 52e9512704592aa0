package probe

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/streamprobe/streamprobe/resumeclient"
)

// ollama is Ollama's native chat API: POST /api/chat, answered in
// newline-delimited JSON (one object per line, "done": true last). It has
// no event ids and no resume.
type ollama struct{ noResume }

type ollamaRequest struct {
	Model    string        `json:"model,omitempty"`
	Messages []chatMessage `json:"messages"`
	Stream   bool          `json:"stream"`
	Options  struct {
		NumPredict int `json:"num_predict,omitempty"`
	} `json:"options"`
}

func (ollama) Request(t Target, s Sample, _ bool) (resumeclient.Request, error) {
	body := t.Body
	if body == nil {
		r := ollamaRequest{Model: t.Model, Stream: true, Messages: []chatMessage{{Role: "user", Content: s.Prompt}}}
		r.Options.NumPredict = s.MaxTokens
		var err error
		if body, err = json.Marshal(r); err != nil {
			return resumeclient.Request{}, fmt.Errorf("ollama: encoding request: %w", err)
		}
	}
	method := t.Method
	if method == "" {
		method = http.MethodPost
	}
	return resumeclient.Request{Method: method, URL: ollamaURL(t.URL), Header: jsonHeaders(t), Body: body,
		Framing: resumeclient.FramingNDJSON}, nil
}

// ollamaURL completes a base URL (http://host:11434) to /api/chat; a URL
// that already ends in /api/chat (or /api/generate) is kept.
func ollamaURL(u string) string {
	base, query, _ := strings.Cut(u, "?")
	if !strings.HasSuffix(base, "/api/chat") && !strings.HasSuffix(base, "/api/generate") {
		base = strings.TrimSuffix(strings.TrimSuffix(base, "/"), "/api") + "/api/chat"
	}
	if query != "" {
		return base + "?" + query
	}
	return base
}

// Framing: Ollama streams NDJSON, which has no event ids, so no drill
// can run on it.
func (ollama) Framing() resumeclient.Framing { return resumeclient.FramingNDJSON }

func (ollama) EOFIsEnd(Target) bool { return false }

func (ollama) Decode(t Target, ev *resumeclient.Event) (Chunk, error) {
	if len(ev.Data) == 0 {
		return Chunk{Kind: Meta}, nil
	}
	var l ollamaLine
	if err := l.decode(ev.Data); err != nil {
		return Chunk{}, err
	}
	out := Chunk{Kind: Meta}
	switch m := &l.message; {
	case !l.err.empty():
		out.Kind, out.Message = Failed, boundMessage(t, string(l.err.value()))
	case l.done:
		out.Kind = End
		out.Usage, out.HasUsage = Tokens{Prompt: int(l.prompt), Completion: int(l.eval)}, true
	case m.content, l.response: // /api/generate's text is response
		out.Kind = Text
	case m.thinking, l.thinking, m.toolCalls > 0:
		out.Kind = Effective
	}
	return out, nil
}

// ollamaLine is what the probe reads of one line of /api/chat (or
// /api/generate), with encoding/json's semantics (see jscan):
// {"message":{"content","thinking","tool_calls":[{}]},"response",
// "thinking","done","prompt_eval_count","eval_count","error"}; of the
// texts only their emptiness is kept.
type ollamaLine struct {
	s       jscan
	message struct {
		content, thinking bool
		toolCalls         int
	}
	response, thinking bool
	done               bool
	prompt, eval       int64
	err                jstr
}

var (
	ollamaFields  = []string{"message", "response", "thinking", "done", "prompt_eval_count", "eval_count", "error"}
	ollamaMessage = []string{"content", "thinking", "tool_calls"}
)

func (l *ollamaLine) decode(data []byte) error {
	s := &l.s
	if s.start(data) && l.line() {
		s.finish()
	}
	return s.err("ollama", "line")
}

func (l *ollamaLine) line() bool {
	s := &l.s
	if st, ok := s.begin('{', "", "", "an object"); st != isOpen || !ok {
		return ok
	}
	for first := true; ; first = false {
		key, done, ok := s.member(first)
		if !ok || done {
			return ok
		}
		switch match(key, ollamaFields) {
		case 0:
			ok = l.messageField()
		case 1:
			ok = s.nonEmptyField(&l.response, "", "response")
		case 2:
			ok = s.nonEmptyField(&l.thinking, "", "thinking")
		case 3:
			ok = s.boolField(&l.done, "", "done")
		case 4:
			_, ok = s.intField(&l.prompt, "", "prompt_eval_count")
		case 5:
			_, ok = s.intField(&l.eval, "", "eval_count")
		case 6:
			ok = s.strField(&l.err, "", "error")
		default:
			ok = s.skip()
		}
		if !ok {
			return false
		}
	}
}

func (l *ollamaLine) messageField() bool {
	s, m := &l.s, &l.message
	if st, ok := s.begin('{', "", "message", "an object"); st != isOpen || !ok {
		return ok
	}
	for first := true; ; first = false {
		key, done, ok := s.member(first)
		if !ok || done {
			return ok
		}
		switch match(key, ollamaMessage) {
		case 0:
			ok = s.nonEmptyField(&m.content, "message", "content")
		case 1:
			ok = s.nonEmptyField(&m.thinking, "message", "thinking")
		case 2:
			ok = l.toolCalls()
		default:
			ok = s.skip()
		}
		if !ok {
			return false
		}
	}
}

// toolCalls reads message.tool_calls, an array of objects, keeping its
// length.
func (l *ollamaLine) toolCalls() bool {
	s, m := &l.s, &l.message
	st, ok := s.begin('[', "message", "tool_calls", "an array")
	if st == isNull {
		m.toolCalls = 0
	}
	if st != isOpen || !ok {
		return ok
	}
	for i, first := 0, true; ; i, first = i+1, false {
		done, ok := s.elem(first)
		if !ok {
			return false
		}
		if done {
			m.toolCalls = i
			return true
		}
		var seen bool
		if !s.presentField(&seen, "message", "tool_calls") {
			return false
		}
	}
}
