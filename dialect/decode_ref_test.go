package dialect

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/streamprobe/streamprobe/resumeclient"
	"github.com/streamprobe/streamprobe/textgate"
)

// The dialect decoders as they were with encoding/json: the reference the
// hand-written ones are held to by the differential fuzz targets
// (decode_diff_test.go). Each is the old Decode, unchanged but for its name.

// refJSONError turns an encoding/json error about an event of dialect into a
// short message that names the field, never a Go type, and never repeats
// the event.
func refJSONError(dialect, what string, data []byte, err error) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			field = what
		}
		got, _, _ := strings.Cut(te.Value, " ")
		return fmt.Errorf("%s: %s: want %s, got %s", dialect, textgate.Scrub(field, nil, 60), refKindName(te.Type), textgate.Scrub(got, nil, 16))
	case errors.As(err, &se):
		return fmt.Errorf("%s: %s is not valid JSON (%d bytes, error at byte %d)", dialect, what, len(data), se.Offset)
	}
	return fmt.Errorf("%s: %s is not valid JSON (%d bytes)", dialect, what, len(data))
}

// refKindName names what a Go type accepts in JSON terms.
func refKindName(t reflect.Type) string {
	if t == nil {
		return "another type"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return "another type"
}

type refChatChunk struct {
	Choices []struct {
		Delta struct {
			Content          string `json:"content"`
			ReasoningContent string `json:"reasoning_content"`
			Reasoning        string `json:"reasoning"`
			ToolCalls        []struct {
				Function struct {
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

func refDecodeOpenAIChat(t Target, ev *resumeclient.Event) (Chunk, error) {
	if bytes.Equal(ev.Data, doneMarker) {
		return Chunk{Kind: End}, nil
	}
	if len(ev.Data) == 0 {
		return Chunk{Kind: Meta}, nil
	}
	var c refChatChunk
	if err := json.Unmarshal(ev.Data, &c); err != nil {
		return Chunk{}, refJSONError("openai-chat", "chunk", ev.Data, err)
	}
	out := Chunk{Kind: Meta}
	if c.Usage != nil {
		out.Usage, out.HasUsage = Tokens{Prompt: c.Usage.PromptTokens, Completion: c.Usage.CompletionTokens}, true
	}
	if c.Error != nil {
		out.Kind, out.Message = Failed, boundMessage(t, c.Error.Message)
		return out, nil
	}
	for _, ch := range c.Choices {
		d := ch.Delta
		if d.Content != "" {
			out.Kind = Text
			break
		}
		if d.ReasoningContent != "" || d.Reasoning != "" {
			out.Kind = Effective
		}
		for _, tc := range d.ToolCalls {
			if tc.Function.Arguments != "" {
				out.Kind = Effective
			}
		}
	}
	return out, nil
}

type refAnthropicEvent struct {
	Type  string `json:"type"`
	Delta *struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
		Thinking    string `json:"thinking"`
	} `json:"delta"`
	Message *struct {
		Usage *refAnthropicUsage `json:"usage"`
	} `json:"message"`
	Usage *refAnthropicUsage `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

type refAnthropicUsage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

func refDecodeAnthropic(t Target, ev *resumeclient.Event) (Chunk, error) {
	if len(ev.Data) == 0 {
		return Chunk{Kind: Meta}, nil
	}
	var e refAnthropicEvent
	if err := json.Unmarshal(ev.Data, &e); err != nil {
		return Chunk{}, refJSONError("anthropic-messages", "event", ev.Data, err)
	}
	typ := e.Type
	if typ == "" {
		typ = string(ev.Type)
	}
	c := Chunk{Kind: Meta}
	switch typ {
	case "ping":
		c.Kind = Liveness
	case "message_start":
		if e.Message != nil && e.Message.Usage != nil {
			c.Usage, c.HasUsage = Tokens{Prompt: e.Message.Usage.InputTokens, Completion: e.Message.Usage.OutputTokens}, true
		}
	case "content_block_delta":
		if d := e.Delta; d != nil {
			switch {
			case d.Type == "text_delta" && d.Text != "":
				c.Kind = Text
			case d.Type == "input_json_delta" && d.PartialJSON != "", d.Type == "thinking_delta" && d.Thinking != "":
				c.Kind = Effective
			}
		}
	case "message_delta":
		if e.Usage != nil {
			c.Usage, c.HasUsage = Tokens{Completion: e.Usage.OutputTokens}, true
		}
	case "message_stop":
		c.Kind = End
	case "error":
		c.Kind, c.Message = Failed, "error event"
		if e.Error != nil {
			c.Message = boundMessage(t, e.Error.Message)
		}
	}
	return c, nil
}

type refResponsesEvent struct {
	Type           string             `json:"type"`
	SequenceNumber *int64             `json:"sequence_number"`
	Delta          string             `json:"delta"`
	Message        string             `json:"message"`
	Response       *refResponsesState `json:"response"`
}

type refResponsesState struct {
	ID    string `json:"id"`
	Usage *struct {
		InputTokens  int `json:"input_tokens"`
		OutputTokens int `json:"output_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

func refDecodeResponses(t Target, ev *resumeclient.Event) (Chunk, error) {
	if len(ev.Data) == 0 {
		return Chunk{Kind: Meta}, nil
	}
	var e refResponsesEvent
	if err := json.Unmarshal(ev.Data, &e); err != nil {
		return Chunk{}, refJSONError("openai-responses", "event", ev.Data, err)
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
			c.Usage, c.HasUsage = Tokens{Prompt: u.InputTokens, Completion: u.OutputTokens}, true
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

type refGeminiChunk struct {
	Candidates []struct {
		Content struct {
			Parts []struct {
				Text         string    `json:"text"`
				Thought      bool      `json:"thought"`
				FunctionCall *struct{} `json:"functionCall"`
			} `json:"parts"`
		} `json:"content"`
		FinishReason string `json:"finishReason"`
	} `json:"candidates"`
	PromptFeedback *struct {
		BlockReason string `json:"blockReason"`
	} `json:"promptFeedback"`
	UsageMetadata *struct {
		PromptTokenCount     int `json:"promptTokenCount"`
		CandidatesTokenCount int `json:"candidatesTokenCount"`
		ThoughtsTokenCount   int `json:"thoughtsTokenCount"`
	} `json:"usageMetadata"`
	Error *struct {
		Message string `json:"message"`
		Status  string `json:"status"`
	} `json:"error"`
}

func refDecodeGemini(t Target, ev *resumeclient.Event) (Chunk, error) {
	if len(ev.Data) == 0 {
		return Chunk{Kind: Meta}, nil
	}
	var c refGeminiChunk
	if err := json.Unmarshal(ev.Data, &c); err != nil {
		return Chunk{}, refJSONError("gemini", "chunk", ev.Data, err)
	}
	out := Chunk{Kind: Meta}
	if u := c.UsageMetadata; u != nil {
		out.Usage, out.HasUsage = Tokens{Prompt: u.PromptTokenCount, Completion: u.CandidatesTokenCount + u.ThoughtsTokenCount}, true
	}
	if e := c.Error; e != nil {
		out.Kind, out.Message = Failed, boundMessage(t, geminiErrorText(e.Status, e.Message))
		return out, nil
	}
	if f := c.PromptFeedback; f != nil && f.BlockReason != "" {
		out.Kind, out.Message = Failed, boundMessage(t, "prompt blocked: blockReason "+f.BlockReason)
		return out, nil
	}
	if len(c.Candidates) == 0 {
		return out, nil
	}
	cand := c.Candidates[0]
	switch cand.FinishReason {
	case "":
	case "STOP", "MAX_TOKENS":
		out.Final = true
	default:
		out.Kind, out.Message = Failed, boundMessage(t, "answer stopped: finishReason "+cand.FinishReason)
		return out, nil
	}
	for _, p := range cand.Content.Parts {
		switch {
		case p.Text != "" && !p.Thought:
			out.Kind = Text
			return out, nil
		case p.Text != "", p.FunctionCall != nil:
			out.Kind = Effective
		}
	}
	return out, nil
}

type refOllamaLine struct {
	Message struct {
		Content   string     `json:"content"`
		Thinking  string     `json:"thinking"`
		ToolCalls []struct{} `json:"tool_calls"`
	} `json:"message"`
	Response        string `json:"response"`
	Thinking        string `json:"thinking"`
	Done            bool   `json:"done"`
	PromptEvalCount int    `json:"prompt_eval_count"`
	EvalCount       int    `json:"eval_count"`
	Error           string `json:"error"`
}

func refDecodeOllama(t Target, ev *resumeclient.Event) (Chunk, error) {
	if len(ev.Data) == 0 {
		return Chunk{Kind: Meta}, nil
	}
	var l refOllamaLine
	if err := json.Unmarshal(ev.Data, &l); err != nil {
		return Chunk{}, refJSONError("ollama", "line", ev.Data, err)
	}
	out := Chunk{Kind: Meta}
	switch m := l.Message; {
	case l.Error != "":
		out.Kind, out.Message = Failed, boundMessage(t, l.Error)
	case l.Done:
		out.Kind = End
		out.Usage, out.HasUsage = Tokens{Prompt: l.PromptEvalCount, Completion: l.EvalCount}, true
	case m.Content != "", l.Response != "":
		out.Kind = Text
	case m.Thinking != "", l.Thinking != "", len(m.ToolCalls) > 0:
		out.Kind = Effective
	}
	return out, nil
}

type refAISDKChunk struct {
	Type           string `json:"type"`
	Delta          string `json:"delta"`
	InputTextDelta string `json:"inputTextDelta"`
	ErrorText      string `json:"errorText"`
}

func refDecodeAISDK(t Target, ev *resumeclient.Event) (Chunk, error) {
	if bytes.Equal(ev.Data, doneMarker) {
		return Chunk{Kind: End}, nil
	}
	if len(ev.Data) == 0 {
		return Chunk{Kind: Meta}, nil
	}
	var p refAISDKChunk
	if err := json.Unmarshal(ev.Data, &p); err != nil {
		return Chunk{}, refJSONError("ai-sdk-ui", "part", ev.Data, err)
	}
	c := Chunk{Kind: Meta}
	switch p.Type {
	case "text-delta":
		if p.Delta != "" {
			c.Kind = Text
		}
	case "reasoning-delta":
		if p.Delta != "" {
			c.Kind = Effective
		}
	case "tool-input-delta":
		if p.InputTextDelta != "" {
			c.Kind = Effective
		}
	case "tool-input-available":
		c.Kind = Effective
	case "error":
		c.Kind, c.Message = Failed, "error part"
		if p.ErrorText != "" {
			c.Message = boundMessage(t, p.ErrorText)
		}
	case "abort":
		c.Kind, c.Message = Failed, "abort part: the server aborted the answer"
	}
	return c, nil
}

type refMCPMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		ProgressToken json.RawMessage `json:"progressToken"`
		Progress      float64         `json:"progress"`
	} `json:"params"`
	Result *struct {
		IsError bool `json:"isError"`
	} `json:"result"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// refString is a json.RawMessage's string value, when it is a string.
func refString(raw json.RawMessage) (string, bool) {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

func refDecodeMCP(t Target, ev *resumeclient.Event) (Chunk, error) {
	if len(ev.Data) == 0 {
		return Chunk{Kind: Meta}, nil
	}
	var m refMCPMessage
	if err := json.Unmarshal(ev.Data, &m); err != nil {
		return Chunk{}, refJSONError("mcp", "message", ev.Data, err)
	}
	ours := mcpCallID(t)
	token, tokenStr := refString(m.Params.ProgressToken)
	id, idStr := refString(m.ID)
	switch {
	case m.Method != "" && m.ID != nil:
		c := Chunk{Kind: Meta, Unrelated: true}
		if m.Method == "ping" && len(m.ID) <= maxReplyID {
			c.Reply = []byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{}}`)
		}
		return c, nil
	case m.Method == "notifications/progress":
		if !tokenStr || token != ours {
			return Chunk{Kind: Meta, Foreign: true}, nil
		}
		return Chunk{Kind: Text, Seq: m.Params.Progress, HasSeq: true}, nil
	case m.Method != "":
		return Chunk{Kind: Meta, Unrelated: true}, nil
	case m.ID == nil:
		return Chunk{Kind: Meta}, nil
	case (!idStr || id != ours) && !(string(m.ID) == "null" && m.Error != nil):
		return Chunk{Kind: Meta, Foreign: true}, nil
	case m.Error != nil:
		msg := "JSON-RPC error"
		if m.Error.Message != "" {
			msg += ": " + boundMessage(t, m.Error.Message)
		}
		return Chunk{Kind: Failed, Message: msg}, nil
	case m.Result != nil && m.Result.IsError:
		return Chunk{Kind: Failed, Message: "the tool's result has isError: true"}, nil
	case m.Result != nil:
		return Chunk{Kind: Text, IsEnd: true}, nil
	}
	return Chunk{Kind: Failed, Message: "a response to the call with neither result nor error"}, nil
}
