package dialect

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
		out.Kind, out.Finish = End, finishOf(l.doneReason, ollamaFinishes)
		out.Usage, out.HasUsage = Tokens{Prompt: int(l.prompt), Completion: int(l.eval)}, true
	case !m.content.empty():
		out.Kind, out.Content = Text, content(m.content)
	case !l.response.empty(): // /api/generate's text is response
		out.Kind, out.Content = Text, content(l.response)
	case m.thinking, l.thinking:
		out.Kind, out.Reasoning = Effective, true
	case m.toolCalls.n > 0:
		out.Kind = Effective
	}
	return out, nil
}

// ollamaLine is what the probe reads of one line of /api/chat (or
// /api/generate), with encoding/json's semantics (see jscan):
// {"message":{"content","thinking","tool_calls":[{}]},"response",
// "thinking","done","done_reason","prompt_eval_count","eval_count",
// "error"}; of the thinking texts only their emptiness is kept.
type ollamaLine struct {
	s       jscan
	message struct {
		content   jstr
		thinking  bool
		toolCalls jslice[struct{}] // only the length is read
	}
	response     jstr
	thinking     bool
	done         bool
	doneReason   jstr
	prompt, eval int64
	err          jstr
}

var (
	ollamaFields  = []string{"message", "response", "thinking", "done", "prompt_eval_count", "eval_count", "error", "done_reason"}
	ollamaMessage = []string{"content", "thinking", "tool_calls"}
)

func (l *ollamaLine) decode(data []byte) error { return l.s.scan(data, l.line, "ollama", "line") }

func (l *ollamaLine) line() bool {
	s := &l.s
	return s.object("", "", ollamaFields, func(k int) bool {
		switch k {
		case 0:
			return l.messageField()
		case 1:
			return s.strField(&l.response, "", "response")
		case 2:
			return s.nonEmptyField(&l.thinking, "", "thinking")
		case 3:
			return s.boolField(&l.done, "", "done")
		case 4:
			_, ok := s.intField(&l.prompt, "", "prompt_eval_count")
			return ok
		case 5:
			_, ok := s.intField(&l.eval, "", "eval_count")
			return ok
		case 6:
			return s.strField(&l.err, "", "error")
		default:
			return s.strField(&l.doneReason, "", "done_reason")
		}
	})
}

func (l *ollamaLine) messageField() bool {
	s, m := &l.s, &l.message
	return s.object("", "message", ollamaMessage, func(k int) bool {
		switch k {
		case 0:
			return s.strField(&m.content, "message", "content")
		case 1:
			return s.nonEmptyField(&m.thinking, "message", "thinking")
		default:
			return array(s, &m.toolCalls, "message", "tool_calls", func(int) bool {
				var seen bool
				return s.presentField(&seen, "message", "tool_calls")
			})
		}
	})
}
