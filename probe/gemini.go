package probe

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/streamprobe/streamprobe/resumeclient"
)

// gemini is Google's Gemini API dialect: POST
// /v1beta/models/{model}:streamGenerateContent?alt=sse with the key in
// x-goog-api-key. Every event is a whole GenerateContentResponse; there is
// no end marker: the stream ends with the body, after a chunk with a
// finishReason. It has no resume.
type gemini struct{ noResume }

type geminiRequest struct {
	Contents         []geminiContent `json:"contents"`
	GenerationConfig struct {
		MaxOutputTokens int `json:"maxOutputTokens,omitempty"`
	} `json:"generationConfig"`
}

type geminiContent struct {
	Role  string       `json:"role"`
	Parts []geminiPart `json:"parts"`
}

type geminiPart struct {
	Text string `json:"text"`
}

func (gemini) Request(t Target, s Sample, _ bool) (resumeclient.Request, error) {
	u, err := geminiURL(t.URL, t.Model)
	if err != nil {
		return resumeclient.Request{}, err
	}
	body := t.Body
	if body == nil {
		r := geminiRequest{Contents: []geminiContent{{Role: "user", Parts: []geminiPart{{Text: s.Prompt}}}}}
		r.GenerationConfig.MaxOutputTokens = s.MaxTokens
		if body, err = json.Marshal(r); err != nil {
			return resumeclient.Request{}, fmt.Errorf("gemini: encoding request: %w", err)
		}
	}
	method := t.Method
	if method == "" {
		method = http.MethodPost
	}
	return resumeclient.Request{Method: method, URL: u, Header: jsonHeaders(t), Body: body}, nil
}

// geminiURL completes a base URL (https://host, https://host/v1beta) to
// /v1beta/models/{model}:streamGenerateContent; a URL that already names
// the method is kept (the model is then the URL's). alt=sse is added
// unless the query sets alt.
func geminiURL(raw, model string) (string, error) {
	base, query, _ := strings.Cut(raw, "?")
	if !strings.HasSuffix(base, ":streamGenerateContent") {
		if model == "" {
			return "", fmt.Errorf("gemini: no model: the model is part of the URL (set model, or a URL ending in :streamGenerateContent)")
		}
		if strings.ContainsAny(model, "/?#:") {
			return "", fmt.Errorf("gemini: model %q holds a character a URL path segment cannot take as is", resumeclient.Scrub(model, nil, 64))
		}
		base = strings.TrimSuffix(base, "/")
		if !strings.HasSuffix(base, "/v1beta") && !strings.HasSuffix(base, "/v1") {
			base += "/v1beta"
		}
		base += "/models/" + model + ":streamGenerateContent"
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return "", fmt.Errorf("gemini: the URL's query does not parse")
	}
	if !q.Has("alt") {
		if query != "" {
			query += "&"
		}
		query += "alt=sse"
	}
	return base + "?" + query, nil
}

// KeyHeader: the Gemini API takes its key as x-goog-api-key.
func (gemini) KeyHeader() string { return "X-Goog-Api-Key" }

func (gemini) EOFIsEnd(Target) bool { return false }

// geminiNormal are the finish reasons of an answer that ended normally;
// any other (SAFETY, RECITATION, BLOCKLIST, PROHIBITED_CONTENT, SPII,
// MALFORMED_FUNCTION_CALL, OTHER, ...) is a provider error.
var geminiNormal = []string{"STOP", "MAX_TOKENS"}

func (gemini) Decode(t Target, ev *resumeclient.Event) (Chunk, error) {
	if len(ev.Data) == 0 {
		return Chunk{Kind: Meta}, nil
	}
	var c geminiChunk
	if err := c.decode(ev.Data); err != nil {
		return Chunk{}, err
	}
	out := Chunk{Kind: Meta}
	if u := &c.usage; u.set {
		out.Usage, out.HasUsage = Tokens{Prompt: int(u.prompt), Completion: int(u.candidates + u.thoughts)}, true
	}
	if e := &c.err; e.set {
		out.Kind, out.Message = Failed, boundMessage(t, geminiErrorText(string(e.status.value()), string(e.message.value())))
		return out, nil
	}
	if c.feedback.set && !c.feedback.blockReason.empty() {
		out.Kind, out.Message = Failed, boundMessage(t, "prompt blocked: blockReason "+string(c.feedback.blockReason.value()))
		return out, nil
	}
	if c.candidates.n == 0 {
		return out, nil
	}
	cand := c.candidates.at(0)
	if reason := cand.finishReason.value(); len(reason) > 0 {
		normal := false
		for _, n := range geminiNormal {
			normal = normal || string(reason) == n
		}
		if !normal {
			out.Kind, out.Message = Failed, boundMessage(t, "answer stopped: finishReason "+string(reason))
			return out, nil
		}
		out.Final = true
	}
	for i := range cand.parts.n {
		p := cand.parts.at(i)
		switch {
		case p.text && !p.thought:
			out.Kind = Text
			return out, nil
		case p.text, p.functionCall:
			out.Kind = Effective
		}
	}
	return out, nil
}

// geminiErrorText is an error object's text: its status and message.
func geminiErrorText(status, message string) string {
	switch {
	case status != "" && message != "":
		return status + ": " + message
	case status != "" || message != "":
		return status + message
	}
	return "error object"
}

// geminiChunk is what the probe reads of a GenerateContentResponse, with
// encoding/json's semantics (see jscan): {"candidates":[{"content":
// {"parts":[{"text","thought","functionCall":{}}]},"finishReason"}],
// "promptFeedback":{"blockReason"},"usageMetadata":{"promptTokenCount",
// "candidatesTokenCount","thoughtsTokenCount"},"error":{"message",
// "status"}}; of a part's text only its emptiness is kept.
type geminiChunk struct {
	s          jscan
	candidates jslice[geminiCandidate]
	feedback   struct {
		set         bool
		blockReason jstr
	}
	usage struct {
		set                          bool
		prompt, candidates, thoughts int64
	}
	err struct {
		set             bool
		message, status jstr
	}
}

type geminiCandidate struct {
	parts        jslice[geminiPartSeen]
	finishReason jstr
}

type geminiPartSeen struct {
	text, thought, functionCall bool
}

var (
	geminiFields    = []string{"candidates", "promptFeedback", "usageMetadata", "error"}
	candidateFields = []string{"content", "finishReason"}
	contentFields   = []string{"parts"}
	partFields      = []string{"text", "thought", "functionCall"}
	feedbackFields  = []string{"blockReason"}
	geminiUsage     = []string{"promptTokenCount", "candidatesTokenCount", "thoughtsTokenCount"}
	geminiErrFields = []string{"message", "status"}
)

func (c *geminiChunk) decode(data []byte) error {
	s := &c.s
	if s.start(data) && c.chunk() {
		s.finish()
	}
	return s.err("gemini", "chunk")
}

func (c *geminiChunk) chunk() bool {
	s := &c.s
	if st, ok := s.begin('{', "", "", "an object"); st != isOpen || !ok {
		return ok
	}
	for first := true; ; first = false {
		key, done, ok := s.member(first)
		if !ok || done {
			return ok
		}
		switch match(key, geminiFields) {
		case 0:
			ok = c.candidatesField()
		case 1:
			ok = c.feedbackField()
		case 2:
			ok = c.usageField()
		case 3:
			ok = c.errorField()
		default:
			ok = s.skip()
		}
		if !ok {
			return false
		}
	}
}

func (c *geminiChunk) candidatesField() bool {
	s := &c.s
	st, ok := s.begin('[', "", "candidates", "an array")
	if st == isNull {
		c.candidates.reset()
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
			c.candidates.end(i)
			return true
		}
		if !c.candidate(c.candidates.elem(i)) {
			return false
		}
	}
}

func (c *geminiChunk) candidate(cand *geminiCandidate) bool {
	s := &c.s
	if st, ok := s.begin('{', "", "candidates", "an object"); st != isOpen || !ok {
		return ok
	}
	for first := true; ; first = false {
		key, done, ok := s.member(first)
		if !ok || done {
			return ok
		}
		switch match(key, candidateFields) {
		case 0:
			ok = c.content(cand)
		case 1:
			ok = s.strField(&cand.finishReason, "candidates", "finishReason")
		default:
			ok = s.skip()
		}
		if !ok {
			return false
		}
	}
}

func (c *geminiChunk) content(cand *geminiCandidate) bool {
	s := &c.s
	if st, ok := s.begin('{', "candidates", "content", "an object"); st != isOpen || !ok {
		return ok
	}
	for first := true; ; first = false {
		key, done, ok := s.member(first)
		if !ok || done {
			return ok
		}
		if match(key, contentFields) == 0 {
			ok = c.parts(cand)
		} else {
			ok = s.skip()
		}
		if !ok {
			return false
		}
	}
}

func (c *geminiChunk) parts(cand *geminiCandidate) bool {
	s := &c.s
	st, ok := s.begin('[', "candidates.content", "parts", "an array")
	if st == isNull {
		cand.parts.reset()
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
			cand.parts.end(i)
			return true
		}
		if !c.part(cand.parts.elem(i)) {
			return false
		}
	}
}

func (c *geminiChunk) part(p *geminiPartSeen) bool {
	s := &c.s
	if st, ok := s.begin('{', "candidates.content", "parts", "an object"); st != isOpen || !ok {
		return ok
	}
	for first := true; ; first = false {
		key, done, ok := s.member(first)
		if !ok || done {
			return ok
		}
		switch match(key, partFields) {
		case 0:
			ok = s.nonEmptyField(&p.text, "candidates.content.parts", "text")
		case 1:
			ok = s.boolField(&p.thought, "candidates.content.parts", "thought")
		case 2:
			ok = s.presentField(&p.functionCall, "candidates.content.parts", "functionCall")
		default:
			ok = s.skip()
		}
		if !ok {
			return false
		}
	}
}

func (c *geminiChunk) feedbackField() bool {
	s, f := &c.s, &c.feedback
	st, ok := s.begin('{', "", "promptFeedback", "an object")
	if st == isNull {
		f.set, f.blockReason = false, jstr{}
	}
	if st != isOpen || !ok {
		return ok
	}
	f.set = true
	for first := true; ; first = false {
		key, done, ok := s.member(first)
		if !ok || done {
			return ok
		}
		if match(key, feedbackFields) == 0 {
			ok = s.strField(&f.blockReason, "promptFeedback", "blockReason")
		} else {
			ok = s.skip()
		}
		if !ok {
			return false
		}
	}
}

func (c *geminiChunk) usageField() bool {
	s, u := &c.s, &c.usage
	st, ok := s.begin('{', "", "usageMetadata", "an object")
	if st == isNull {
		u.set, u.prompt, u.candidates, u.thoughts = false, 0, 0, 0
	}
	if st != isOpen || !ok {
		return ok
	}
	u.set = true
	for first := true; ; first = false {
		key, done, ok := s.member(first)
		if !ok || done {
			return ok
		}
		switch match(key, geminiUsage) {
		case 0:
			_, ok = s.intField(&u.prompt, "usageMetadata", geminiUsage[0])
		case 1:
			_, ok = s.intField(&u.candidates, "usageMetadata", geminiUsage[1])
		case 2:
			_, ok = s.intField(&u.thoughts, "usageMetadata", geminiUsage[2])
		default:
			ok = s.skip()
		}
		if !ok {
			return false
		}
	}
}

func (c *geminiChunk) errorField() bool {
	s, e := &c.s, &c.err
	st, ok := s.begin('{', "", "error", "an object")
	if st == isNull {
		e.set, e.message, e.status = false, jstr{}, jstr{}
	}
	if st != isOpen || !ok {
		return ok
	}
	e.set = true
	for first := true; ; first = false {
		key, done, ok := s.member(first)
		if !ok || done {
			return ok
		}
		switch match(key, geminiErrFields) {
		case 0:
			ok = s.strField(&e.message, "error", "message")
		case 1:
			ok = s.strField(&e.status, "error", "status")
		default:
			ok = s.skip()
		}
		if !ok {
			return false
		}
	}
}
