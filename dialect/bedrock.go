package dialect

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/streamprobe/streamprobe/resumeclient"
	"github.com/streamprobe/streamprobe/textgate"
)

// bedrock is Amazon Bedrock's runtime streaming APIs: ConverseStream
// (POST /model/{modelId}/converse-stream) and InvokeModelWithResponseStream
// (POST /model/{modelId}/invoke-with-response-stream), both answered in
// the AWS event stream (binary messages: resumeclient.FramingEventStream).
// Requests are signed with SigV4 (the target's Sign, from the standard
// AWS credential sources) unless a Bedrock API key is sent as a bearer
// token. It has no event ids: no resume, no drill.
type bedrock struct{ noResume }

// bedrockConverse is ConverseStream's body for a sample.
type bedrockConverse struct {
	Messages []struct {
		Role    string `json:"role"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	} `json:"messages"`
	InferenceConfig struct {
		MaxTokens int `json:"maxTokens,omitempty"`
	} `json:"inferenceConfig"`
}

// bedrockAnthropic is InvokeModelWithResponseStream's body for a Claude
// model: the Messages API's, with anthropic_version and no model.
type bedrockAnthropic struct {
	AnthropicVersion string        `json:"anthropic_version"`
	MaxTokens        int           `json:"max_tokens"`
	Messages         []chatMessage `json:"messages"`
}

// BedrockAnthropicVersion is the anthropic_version of an Invoke body.
const BedrockAnthropicVersion = "bedrock-2023-05-31"

// The two streaming operations, by the last segment of their path.
const (
	bedrockConverseOp = "/converse-stream"
	bedrockInvokeOp   = "/invoke-with-response-stream"
)

// SigningService names the service SigV4 signs a bedrock request for.
func (bedrock) SigningService() string { return "bedrock" }

func (bedrock) Request(t Target, s Sample, _ bool) (resumeclient.Request, error) {
	u, err := bedrockURL(t.URL, t.Model)
	if err != nil {
		return resumeclient.Request{}, err
	}
	body := t.Body
	if body == nil {
		body, err = bedrockBody(u, s)
		if err != nil {
			return resumeclient.Request{}, err
		}
	}
	method := t.Method
	if method == "" {
		method = http.MethodPost
	}
	return resumeclient.Request{Method: method, URL: u, Header: jsonHeaders(t), Body: body, Framing: resumeclient.FramingEventStream}, nil
}

// bedrockBody is the body of sample s for the operation of URL u:
// Converse's messages, or an Anthropic body for Invoke (other models'
// Invoke bodies differ: give the target's body).
func bedrockBody(u string, s Sample) ([]byte, error) {
	base, _, _ := strings.Cut(u, "?")
	var v any
	if strings.HasSuffix(base, bedrockInvokeOp) {
		v = bedrockAnthropic{AnthropicVersion: BedrockAnthropicVersion, MaxTokens: s.MaxTokens, Messages: []chatMessage{{Role: "user", Content: s.Prompt}}}
	} else {
		var c bedrockConverse
		c.Messages = make([]struct {
			Role    string `json:"role"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		}, 1)
		c.Messages[0].Role = "user"
		c.Messages[0].Content = []struct {
			Text string `json:"text"`
		}{{Text: s.Prompt}}
		c.InferenceConfig.MaxTokens = s.MaxTokens
		v = c
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("bedrock: encoding request: %w", err)
	}
	return b, nil
}

// bedrockURL completes a base URL (https://bedrock-runtime.us-east-1.amazonaws.com)
// to /model/{model}/converse-stream, the model id escaped as a path
// segment (an ARN's '/' too); a URL that already ends in one of the two
// operations is kept (its model is the URL's).
func bedrockURL(raw, model string) (string, error) {
	base, query, _ := strings.Cut(raw, "?")
	if !strings.HasSuffix(base, bedrockConverseOp) && !strings.HasSuffix(base, bedrockInvokeOp) {
		if model == "" {
			return "", &TargetError{Key: "model", Err: errors.New("bedrock: no model: the model id is part of the URL (set model, or a URL ending in /model/{id}/converse-stream or /invoke-with-response-stream)")}
		}
		base = strings.TrimSuffix(base, "/") + "/model/" + url.PathEscape(model) + bedrockConverseOp
	}
	if query != "" {
		return base + "?" + query, nil
	}
	return base, nil
}

// Framing: Bedrock streams the AWS event stream.
func (bedrock) Framing() resumeclient.Framing { return resumeclient.FramingEventStream }

// EOFIsEnd: the end is the end of the body after messageStop (Converse)
// or the last chunk (Invoke), which Decode marks Final.
func (bedrock) EOFIsEnd(Target) bool { return false }

// Decode reads one event stream message: an exception or an error
// message fails the run, named by its type and the provider's message;
// an event is read by its type.
func (bedrock) Decode(t Target, ev *resumeclient.Event) (Chunk, error) {
	switch string(ev.MessageType) {
	case "exception":
		return Chunk{Kind: Failed, Message: boundMessage(t, bedrockException(ev))}, nil
	case "error":
		return Chunk{Kind: Failed, Message: boundMessage(t, string(ev.Type)+": "+string(ev.Data))}, nil
	}
	if string(ev.Type) == "chunk" {
		return bedrockChunk(t, ev.Data)
	}
	return bedrockConverseEvent(t, ev)
}

// bedrockException is an exception's text: its type (throttlingException,
// modelStreamErrorException, ...) and the payload's message.
func bedrockException(ev *resumeclient.Event) string {
	var p struct {
		Message string `json:"message"`
		Alt     string `json:"Message"`
	}
	name := string(ev.Type)
	if name == "" {
		name = "exception"
	}
	if json.Unmarshal(ev.Data, &p) == nil && (p.Message != "" || p.Alt != "") {
		return name + ": " + p.Message + p.Alt
	}
	if len(ev.Data) > 0 && ev.Data[0] != '{' {
		return name + ": " + string(ev.Data)
	}
	return name
}

// bedrockEvent is what the probe reads of a ConverseStream event's
// payload.
type bedrockEvent struct {
	Delta *struct {
		Text             *string `json:"text"`
		ReasoningContent *struct {
			Text            string `json:"text"`
			RedactedContent string `json:"redactedContent"`
			Signature       string `json:"signature"`
		} `json:"reasoningContent"`
		ToolUse *struct {
			Input string `json:"input"`
		} `json:"toolUse"`
	} `json:"delta"`
	StopReason string `json:"stopReason"`
	Usage      *struct {
		InputTokens  int `json:"inputTokens"`
		OutputTokens int `json:"outputTokens"`
	} `json:"usage"`
}

// bedrockConverseEvent: a contentBlockDelta's text is a chunk, its
// reasoning reasoning, its tool input effective output; messageStop is the
// last event before the body ends (Final), with its stopReason
// (bedrockFinishes: a guardrail's or the content filter's is a refusal);
// metadata carries the usage; messageStart, contentBlockStart and
// contentBlockStop are metadata.
func bedrockConverseEvent(t Target, ev *resumeclient.Event) (Chunk, error) {
	c := Chunk{Kind: Meta}
	if len(ev.Data) == 0 {
		return c, nil
	}
	var e bedrockEvent
	if err := json.Unmarshal(ev.Data, &e); err != nil {
		return Chunk{}, bedrockJSONError(string(ev.Type), err)
	}
	switch string(ev.Type) {
	case "contentBlockDelta":
		if d := e.Delta; d != nil {
			switch {
			case d.Text != nil && *d.Text != "":
				c.Kind, c.Content = Text, plainContent([]byte(*d.Text))
			case d.ReasoningContent != nil && (d.ReasoningContent.Text != "" || d.ReasoningContent.RedactedContent != ""):
				c.Kind, c.Reasoning = Effective, true
			case d.ToolUse != nil && d.ToolUse.Input != "":
				c.Kind = Effective
			}
		}
	case "messageStop":
		c.Final = true
		c.Finish = finishOf(jstr{raw: []byte(e.StopReason)}, bedrockFinishes)
		if c.Finish == FinishContentFilter {
			c.Message = boundMessage(t, "stopReason "+e.StopReason)
		}
	case "metadata":
		if e.Usage != nil {
			c.Usage, c.HasUsage = Tokens{Prompt: e.Usage.InputTokens, Completion: e.Usage.OutputTokens}, true
		}
	}
	return c, nil
}

// bedrockJSONError names a payload that does not decode, never quoting it.
func bedrockJSONError(what string, err error) error {
	var te *json.UnmarshalTypeError
	var be base64.CorruptInputError
	if errors.As(err, &be) {
		return fmt.Errorf("bedrock: %s: bytes is not base64", textgate.Scrub(what, nil, 40))
	}
	if errors.As(err, &te) {
		return fmt.Errorf("bedrock: %s: %s: want %s, got %s", textgate.Scrub(what, nil, 40), textgate.Scrub(te.Field, nil, 60), kindName(te.Type.Kind().String()), textgate.Scrub(te.Value, nil, 16))
	}
	return fmt.Errorf("bedrock: %s: the payload is not valid JSON", textgate.Scrub(what, nil, 40))
}

// kindName names a Go kind in JSON terms.
func kindName(k string) string {
	switch k {
	case "string":
		return "a string"
	case "int", "int64", "float64":
		return "a number"
	case "struct", "ptr", "map":
		return "an object"
	}
	return "another type"
}

// bedrockInvoke is what the probe reads of an Invoke chunk's decoded
// bytes: the model's own stream format (Anthropic's events, Llama's
// generation, Titan's outputText, Mistral's outputs, Claude 2's
// completion) and Bedrock's invocation metrics on the last chunk.
type bedrockInvoke struct {
	Type       string `json:"type"`
	Generation string `json:"generation"`
	OutputText string `json:"outputText"`
	Completion string `json:"completion"`
	Outputs    []struct {
		Text string `json:"text"`
	} `json:"outputs"`
	Metrics *struct {
		InputTokenCount  int `json:"inputTokenCount"`
		OutputTokenCount int `json:"outputTokenCount"`
	} `json:"amazon-bedrock-invocationMetrics"`
}

// text is the chunk's text, in the field of its model's format ("" for
// none).
func (m *bedrockInvoke) text() string {
	for _, s := range []string{m.Generation, m.OutputText, m.Completion} {
		if s != "" {
			return s
		}
	}
	for _, o := range m.Outputs {
		if o.Text != "" {
			return o.Text
		}
	}
	return ""
}

// bedrockChunk reads an InvokeModelWithResponseStream chunk: its bytes,
// base64 in the payload's JSON, are one event of the model's own format.
// A Claude model's are the Messages API's events (read as the
// anthropic-messages dialect reads them, message_stop the last); the
// others' are text fields. The chunk with the invocation metrics is the
// last (Final) and carries the usage.
func bedrockChunk(t Target, data []byte) (Chunk, error) {
	var p struct {
		Bytes []byte `json:"bytes"`
	}
	if err := json.Unmarshal(data, &p); err != nil {
		return Chunk{}, bedrockJSONError("chunk", err)
	}
	var m bedrockInvoke
	if err := json.Unmarshal(p.Bytes, &m); err != nil {
		return Chunk{}, bedrockJSONError("chunk.bytes", err)
	}
	c := Chunk{Kind: Meta}
	if m.Type != "" {
		a, err := anthropicMessages{}.Decode(t, &resumeclient.Event{Kind: resumeclient.KindEvent, Data: p.Bytes})
		if err != nil {
			return Chunk{}, fmt.Errorf("bedrock: chunk.bytes: %s", strings.TrimPrefix(err.Error(), "anthropic-messages: "))
		}
		c = a
		if c.Kind == End {
			c.Kind, c.Final = Meta, true
		}
	}
	if text := m.text(); text != "" {
		c.Kind, c.Content = Text, plainContent([]byte(text))
	}
	if m.Metrics != nil {
		c.Final = true
		c.Usage, c.HasUsage = Tokens{Prompt: m.Metrics.InputTokenCount, Completion: m.Metrics.OutputTokenCount}, true
	}
	return c, nil
}
