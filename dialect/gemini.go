package dialect

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/streamprobe/streamprobe/resumeclient"
	"github.com/streamprobe/streamprobe/textgate"
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
	// Google's server may end a failed stream with its error object after
	// the last event, not as one: FramingSSETrailer hands it to Decode.
	return resumeclient.Request{Method: method, URL: u, Header: jsonHeaders(t), Body: body, Framing: resumeclient.FramingSSETrailer}, nil
}

// geminiURL completes a base URL (https://host, https://host/v1beta) to
// /v1beta/models/{model}:streamGenerateContent; a URL that already names
// the method is kept (the model is then the URL's). alt=sse is added
// unless the query sets alt.
func geminiURL(raw, model string) (string, error) {
	base, query, _ := strings.Cut(raw, "?")
	if !strings.HasSuffix(base, ":streamGenerateContent") {
		if model == "" {
			return "", &TargetError{Key: "model", Err: errors.New("gemini: no model: the model is part of the URL (set model, or a URL ending in :streamGenerateContent)")}
		}
		if strings.ContainsAny(model, "/?#:") {
			return "", &TargetError{Key: "model", Err: fmt.Errorf("gemini: model %q holds a character a URL path segment cannot take as is", textgate.Scrub(model, nil, 64))}
		}
		base = strings.TrimSuffix(base, "/")
		if !strings.HasSuffix(base, "/v1beta") && !strings.HasSuffix(base, "/v1") {
			base += "/v1beta"
		}
		base += "/models/" + model + ":streamGenerateContent"
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return "", &TargetError{Key: "url", Err: errors.New("gemini: the URL's query does not parse")}
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

// geminiFilter are the finish reasons of an answer the provider's filter
// stopped (refused): the chunk is the last, as with STOP and MAX_TOKENS.
// Any other is an error: one of geminiFailed, or one the probe does not
// know (its finish reason is other then).
var (
	geminiFilter = []string{"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII",
		"IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION"}
	geminiFailed = []string{"MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS", "MISSING_THOUGHT_SIGNATURE",
		"LANGUAGE", "NO_IMAGE", "IMAGE_OTHER", "OTHER", "FINISH_REASON_UNSPECIFIED"}
)

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
		out.Final, out.Finish = true, FinishContentFilter
		out.Message = boundMessage(t, "promptFeedback.blockReason "+string(c.feedback.blockReason.value()))
		return out, nil
	}
	if c.candidates.n == 0 {
		return out, nil
	}
	cand := c.candidates.at(0)
	if !geminiFinish(t, cand.finishReason, &out) {
		return out, nil
	}
	for i := range cand.parts.n {
		p := cand.parts.at(i)
		switch {
		case !p.text.empty() && !p.thought:
			out.Kind, out.Content, out.Reasoning = Text, content(p.text), false
			return out, nil
		case !p.text.empty():
			out.Kind, out.Reasoning = Effective, true
		case p.functionCall, p.executableCode, p.inlineData:
			out.Kind = Effective
		}
	}
	return out, nil
}

// geminiFinish reads a candidate's finishReason into out: the last chunk
// of an answer that ended (STOP, MAX_TOKENS) or that the filter stopped;
// false when it is an error, out then Failed.
func geminiFinish(t Target, reason jstr, out *Chunk) bool {
	r := reason.value()
	switch {
	case len(r) == 0:
		return true
	case string(r) == "STOP":
		out.Final, out.Finish = true, FinishStop
		return true
	case string(r) == "MAX_TOKENS":
		out.Final, out.Finish = true, FinishLength
		return true
	}
	for _, f := range geminiFilter {
		if string(r) == f {
			out.Final, out.Finish, out.Message = true, FinishContentFilter, boundMessage(t, "finishReason "+f)
			return true
		}
	}
	out.Kind, out.Finish, out.Message = Failed, FinishOther, boundMessage(t, "answer stopped: finishReason "+string(r))
	for _, f := range geminiFailed {
		if string(r) == f {
			out.Finish = FinishError
		}
	}
	return false
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
// "status"}}, a part also "executableCode":{} and "inlineData":{}; a
// codeExecutionResult is the server's, not the model's, and not read.
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
	text                                              jstr
	thought, functionCall, executableCode, inlineData bool
}

var (
	geminiFields    = []string{"candidates", "promptFeedback", "usageMetadata", "error"}
	candidateFields = []string{"content", "finishReason"}
	contentFields   = []string{"parts"}
	partFields      = []string{"text", "thought", "functionCall", "executableCode", "inlineData"}
	feedbackFields  = []string{"blockReason"}
	geminiUsage     = []string{"promptTokenCount", "candidatesTokenCount", "thoughtsTokenCount"}
	geminiErrFields = []string{"message", "status"}
)

func (c *geminiChunk) decode(data []byte) error { return c.s.scan(data, c.chunk, "gemini", "chunk") }

func (c *geminiChunk) chunk() bool {
	s := &c.s
	return s.object("", "", geminiFields, func(k int) bool {
		switch k {
		case 0:
			return array(s, &c.candidates, "", "candidates", func(i int) bool { return c.candidate(c.candidates.elem(i)) })
		case 1:
			return c.feedbackField()
		case 2:
			return c.usageField()
		default:
			return c.errorField()
		}
	})
}

func (c *geminiChunk) candidate(cand *geminiCandidate) bool {
	s := &c.s
	return s.object("", "candidates", candidateFields, func(k int) bool {
		if k == 0 {
			return s.object("candidates", "content", contentFields, func(int) bool { return c.parts(cand) })
		}
		return s.strField(&cand.finishReason, "candidates", "finishReason")
	})
}

func (c *geminiChunk) parts(cand *geminiCandidate) bool {
	return array(&c.s, &cand.parts, "candidates.content", "parts", func(i int) bool { return c.part(cand.parts.elem(i)) })
}

func (c *geminiChunk) part(p *geminiPartSeen) bool {
	s := &c.s
	return s.object("candidates.content", "parts", partFields, func(k int) bool {
		switch k {
		case 0:
			return s.strField(&p.text, "candidates.content.parts", "text")
		case 1:
			return s.boolField(&p.thought, "candidates.content.parts", "thought")
		case 2:
			return s.presentField(&p.functionCall, "candidates.content.parts", "functionCall")
		case 3:
			return s.presentField(&p.executableCode, "candidates.content.parts", "executableCode")
		default:
			return s.presentField(&p.inlineData, "candidates.content.parts", "inlineData")
		}
	})
}

func (c *geminiChunk) feedbackField() bool {
	s, f := &c.s, &c.feedback
	return pointer(s, f, &f.set, "", "promptFeedback", feedbackFields, func(int) bool {
		return s.strField(&f.blockReason, "promptFeedback", "blockReason")
	})
}

func (c *geminiChunk) usageField() bool {
	s, u := &c.s, &c.usage
	return pointer(s, u, &u.set, "", "usageMetadata", geminiUsage, func(k int) bool {
		dst := [...]*int64{&u.prompt, &u.candidates, &u.thoughts}[k]
		_, ok := s.intField(dst, "usageMetadata", geminiUsage[k])
		return ok
	})
}

func (c *geminiChunk) errorField() bool {
	s, e := &c.s, &c.err
	return pointer(s, e, &e.set, "", "error", geminiErrFields, func(k int) bool {
		if k == 0 {
			return s.strField(&e.message, "error", "message")
		}
		return s.strField(&e.status, "error", "status")
	})
}
