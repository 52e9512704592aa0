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

// Vertex AI serves Google's and Anthropic's models behind Google Cloud's
// own URLs and OAuth access tokens (Authorization: Bearer, a token that
// lasts an hour, never an API key header): vertexGemini is Gemini's
// streamGenerateContent (the gemini dialect's stream), vertexAnthropic
// Claude's streamRawPredict (the anthropic-messages dialect's stream).
// Neither is a KeyHeaderer: a target's key (bearer_file, bearer_command,
// google_credentials_file) goes as a bearer token. They have no resume.

// vertexGemini is Gemini on Vertex AI: POST
// .../projects/{project}/locations/{location}/publishers/google/models/{model}:streamGenerateContent?alt=sse.
type vertexGemini struct{ noResume }

// vertexAnthropic is Claude on Vertex AI: POST
// .../publishers/anthropic/models/{model}:streamRawPredict with the
// Messages API's body, anthropic_version in the body and no model.
type vertexAnthropic struct{ noResume }

// VertexAnthropicVersion is the anthropic_version of a Claude on Vertex
// body.
const VertexAnthropicVersion = "vertex-2023-10-16"

type vertexAnthropicRequest struct {
	AnthropicVersion string        `json:"anthropic_version"`
	MaxTokens        int           `json:"max_tokens"`
	Messages         []chatMessage `json:"messages"`
	Stream           bool          `json:"stream"`
}

// vertexURL completes a Vertex AI URL to the publisher's model method:
// a URL that ends in :method is kept; one that ends in
// /publishers/{publisher}/models, or a location's
// (.../projects/{p}/locations/{l}), gets the rest. The model is a path
// segment.
func vertexURL(dialect, raw, publisher, model, method string) (string, error) {
	base, query, _ := strings.Cut(raw, "?")
	if !strings.HasSuffix(base, ":"+method) {
		if model == "" {
			return "", &TargetError{Key: "model", Err: fmt.Errorf("%s: no model: the model is part of the URL (set model, or a URL ending in :%s)", dialect, method)}
		}
		if strings.ContainsAny(model, "/?#:") {
			return "", &TargetError{Key: "model", Err: fmt.Errorf("%s: model %q holds a character a URL path segment cannot take as is", dialect, textgate.Scrub(model, nil, 64))}
		}
		base = strings.TrimSuffix(base, "/")
		if !strings.HasSuffix(base, "/publishers/"+publisher+"/models") {
			if !strings.Contains(base, "/locations/") {
				return "", &TargetError{Key: "url", Err: fmt.Errorf("%s: the URL names no location: want https://{location}-aiplatform.googleapis.com/v1/projects/{project}/locations/{location}", dialect)}
			}
			base += "/publishers/" + publisher + "/models"
		}
		base += "/" + model + ":" + method
	}
	if query == "" {
		return base, nil
	}
	if _, err := url.ParseQuery(query); err != nil {
		return "", &TargetError{Key: "url", Err: errors.New(dialect + ": the URL's query does not parse")}
	}
	return base + "?" + query, nil
}

func (vertexGemini) Request(t Target, s Sample, resumable bool) (resumeclient.Request, error) {
	u, err := vertexURL("vertex-gemini", t.URL, "google", t.Model, "streamGenerateContent")
	if err != nil {
		return resumeclient.Request{}, err
	}
	// The rest is the Gemini API's request: its body, alt=sse.
	t.URL = u
	return gemini{}.Request(t, s, resumable)
}

func (vertexGemini) Decode(t Target, ev *resumeclient.Event) (Chunk, error) {
	c, err := gemini{}.Decode(t, ev)
	if err != nil {
		return Chunk{}, fmt.Errorf("vertex-%w", err)
	}
	return c, nil
}

func (vertexGemini) EOFIsEnd(Target) bool { return false }

func (vertexAnthropic) Request(t Target, s Sample, _ bool) (resumeclient.Request, error) {
	u, err := vertexURL("vertex-anthropic", t.URL, "anthropic", t.Model, "streamRawPredict")
	if err != nil {
		return resumeclient.Request{}, err
	}
	body := t.Body
	if body == nil {
		body, err = json.Marshal(vertexAnthropicRequest{AnthropicVersion: VertexAnthropicVersion, MaxTokens: s.MaxTokens, Stream: true,
			Messages: []chatMessage{{Role: "user", Content: s.Prompt}}})
		if err != nil {
			return resumeclient.Request{}, fmt.Errorf("vertex-anthropic: encoding request: %w", err)
		}
	}
	method := t.Method
	if method == "" {
		method = http.MethodPost
	}
	return resumeclient.Request{Method: method, URL: u, Header: jsonHeaders(t), Body: body}, nil
}

func (vertexAnthropic) Decode(t Target, ev *resumeclient.Event) (Chunk, error) {
	c, err := anthropicMessages{}.Decode(t, ev)
	if err != nil {
		return Chunk{}, errors.New("vertex-anthropic: " + strings.TrimPrefix(err.Error(), "anthropic-messages: "))
	}
	return c, nil
}

func (vertexAnthropic) EOFIsEnd(Target) bool { return false }
