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
		if t == reflect.TypeFor[refChatContent]() {
			return "a string or an array"
		}
		return "an object"
	}
	return "another type"
}

type refChatChunk struct {
	Choices []struct {
		Delta struct {
			Content          refChatContent `json:"content"`
			ReasoningContent string         `json:"reasoning_content"`
			Reasoning        string         `json:"reasoning"`
			Refusal          string         `json:"refusal"`
			ReasoningDetails []struct {
				Text    string `json:"text"`
				Summary string `json:"summary"`
			} `json:"reasoning_details"`
			ToolCalls []struct {
				Function struct {
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// refChatContent is a delta's content: a string, or (Mistral) an array of
// parts. null leaves it as it was; any other value replaces it; a value
// of another kind is an error (UnmarshalJSON returns it, so decoding
// stops there); a part that is not an object, or a part's field of
// another type, is passed over.
type refChatContent struct {
	text, thinking bool
	value          string
}

func (c *refChatContent) UnmarshalJSON(b []byte) error {
	switch b[0] {
	case 'n':
		return nil
	case '"':
		var s string
		err := json.Unmarshal(b, &s)
		*c = refChatContent{text: s != "", value: s}
		return err
	case '[':
		var parts []json.RawMessage
		*c = refChatContent{}
		if err := json.Unmarshal(b, &parts); err != nil {
			return err
		}
		for _, raw := range parts {
			var p struct {
				Type     string          `json:"type"`
				Text     string          `json:"text"`
				Thinking json.RawMessage `json:"thinking"`
			}
			_ = json.Unmarshal(raw, &p) // a part or a field of another kind is passed over
			switch {
			case p.Type == "text" && p.Text != "" && !c.text:
				c.text, c.value = true, p.Text
			case p.Type == "thinking" && refFilled(p.Thinking):
				c.thinking = true
			}
		}
		return nil
	}
	got := "number"
	switch b[0] {
	case '{':
		got = "object"
	case 't', 'f':
		got = "bool"
	}
	return &json.UnmarshalTypeError{Value: got, Type: reflect.TypeFor[refChatContent]()}
}

// refFilled reports whether raw is a string or an array that is not
// empty.
func refFilled(raw json.RawMessage) bool {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	switch v := v.(type) {
	case string:
		return v != ""
	case []any:
		return len(v) > 0
	}
	return false
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
	var text, refusal, reasoning, effective bool
	var value string
	for _, ch := range c.Choices {
		switch ch.FinishReason {
		case "":
		case "stop":
			out.Finish = FinishStop
		case "length":
			out.Finish = FinishLength
		case "tool_calls", "function_call":
			out.Finish = FinishToolCalls
		case "content_filter":
			out.Finish = FinishContentFilter
		case "refusal":
			out.Finish = FinishRefusal
		default:
			out.Finish = FinishOther
		}
		d := ch.Delta
		if d.Content.text && !text {
			text, value = true, d.Content.value
		}
		refusal = refusal || d.Refusal != ""
		reasoning = reasoning || d.ReasoningContent != "" || d.Reasoning != "" || d.Content.thinking
		for _, rd := range d.ReasoningDetails {
			reasoning = reasoning || rd.Text != "" || rd.Summary != ""
		}
		for _, tc := range d.ToolCalls {
			effective = effective || tc.Function.Arguments != ""
		}
	}
	switch {
	case text:
		out.Kind, out.Content = Text, refContent(value)
	case refusal:
		out.Kind, out.Refusal, out.Message = Text, true, "delta.refusal"
	case reasoning:
		out.Kind, out.Reasoning = Effective, true
	case effective:
		out.Kind = Effective
	}
	if out.Finish == FinishContentFilter && out.Message == "" {
		out.Message = "finish_reason content_filter"
	}
	return out, nil
}

// refContent is a Content whose value is s (compared by value).
func refContent(s string) Content { return Content{raw: []byte(s)} }

type refAnthropicEvent struct {
	Type  string `json:"type"`
	Delta *struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
		Thinking    string `json:"thinking"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	ContentBlock *struct {
		Type string `json:"type"`
	} `json:"content_block"`
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
	case "content_block_start":
		if e.ContentBlock != nil && e.ContentBlock.Type == "redacted_thinking" {
			c.Kind, c.Reasoning = Effective, true
		}
	case "content_block_delta":
		if d := e.Delta; d != nil {
			switch {
			case d.Type == "text_delta" && d.Text != "":
				c.Kind, c.Content = Text, refContent(d.Text)
			case d.Type == "thinking_delta" && d.Thinking != "":
				c.Kind, c.Reasoning = Effective, true
			case d.Type == "input_json_delta" && d.PartialJSON != "":
				c.Kind = Effective
			}
		}
	case "message_delta":
		if e.Usage != nil {
			c.Usage, c.HasUsage = Tokens{Prompt: e.Usage.InputTokens, Completion: e.Usage.OutputTokens}, true
		}
		if e.Delta != nil {
			switch e.Delta.StopReason {
			case "":
			case "end_turn", "stop_sequence":
				c.Finish = FinishStop
			case "max_tokens", "model_context_window_exceeded":
				c.Finish = FinishLength
			case "tool_use":
				c.Finish = FinishToolCalls
			case "refusal":
				c.Finish, c.Message = FinishRefusal, "stop_reason refusal"
			default:
				c.Finish = FinishOther
			}
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
	Code           json.RawMessage    `json:"code"`
	Error          *refCodedError     `json:"error"`
	Response       *refResponsesState `json:"response"`
}

type refCodedError struct {
	Code    json.RawMessage `json:"code"`
	Message string          `json:"message"`
}

// text is "code: message", either alone, or none.
func (e *refCodedError) text(none string) string {
	code, _ := refString(e.Code)
	switch {
	case code != "" && e.Message != "":
		return code + ": " + e.Message
	case code != "" || e.Message != "":
		return code + e.Message
	}
	return none
}

type refResponsesState struct {
	ID    string `json:"id"`
	Usage *struct {
		InputTokens  int `json:"input_tokens"`
		OutputTokens int `json:"output_tokens"`
	} `json:"usage"`
	Error             *refCodedError `json:"error"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
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
			c.Kind, c.Content = Text, refContent(e.Delta)
		}
	case typ == "response.refusal.delta":
		if e.Delta != "" {
			c.Kind, c.Refusal, c.Message = Text, true, "response.refusal.delta"
		}
	case strings.HasPrefix(typ, "response.") && strings.HasSuffix(typ, ".delta"):
		if e.Delta != "" {
			c.Kind, c.Reasoning = Effective, strings.HasPrefix(typ, "response.reasoning")
		}
	case typ == "response.image_generation_call.partial_image":
		c.Kind = Effective
	case typ == "response.completed":
		c.Kind, c.Finish = End, FinishStop
	case typ == "response.incomplete":
		var reason string
		if e.Response != nil && e.Response.IncompleteDetails != nil {
			reason = e.Response.IncompleteDetails.Reason
		}
		switch reason {
		case "max_output_tokens":
			c.Kind, c.Finish = End, FinishLength
		case "content_filter":
			c.Kind, c.Finish, c.Message = End, FinishContentFilter, "incomplete_details.reason content_filter"
		case "":
			c.Kind, c.Finish, c.Message = Failed, FinishOther, "response.incomplete"
		default:
			c.Kind, c.Finish, c.Message = Failed, FinishOther, boundMessage(t, "response.incomplete: reason "+reason)
		}
	case typ == "response.failed":
		c.Kind, c.Finish, c.Message = Failed, FinishError, "response.failed"
		if e.Response != nil && e.Response.Error != nil {
			c.Message = boundMessage(t, e.Response.Error.text("response.failed"))
		}
	case typ == "error":
		top := refCodedError{Code: e.Code, Message: e.Message}
		if e.Error != nil {
			top = *e.Error
		}
		c.Kind, c.Message = Failed, boundMessage(t, top.text("error event"))
	}
	return c, nil
}

type refGeminiChunk struct {
	Candidates []struct {
		Content struct {
			Parts []struct {
				Text           string    `json:"text"`
				Thought        bool      `json:"thought"`
				FunctionCall   *struct{} `json:"functionCall"`
				ExecutableCode *struct{} `json:"executableCode"`
				InlineData     *struct{} `json:"inlineData"`
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
		out.Final, out.Finish, out.Message = true, FinishContentFilter, boundMessage(t, "promptFeedback.blockReason "+f.BlockReason)
		return out, nil
	}
	if len(c.Candidates) == 0 {
		return out, nil
	}
	cand := c.Candidates[0]
	switch cand.FinishReason {
	case "":
	case "STOP":
		out.Final, out.Finish = true, FinishStop
	case "MAX_TOKENS":
		out.Final, out.Finish = true, FinishLength
	case "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION":
		out.Final, out.Finish, out.Message = true, FinishContentFilter, boundMessage(t, "finishReason "+cand.FinishReason)
	case "MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS", "MISSING_THOUGHT_SIGNATURE",
		"LANGUAGE", "NO_IMAGE", "IMAGE_OTHER", "OTHER", "FINISH_REASON_UNSPECIFIED":
		out.Kind, out.Finish, out.Message = Failed, FinishError, boundMessage(t, "answer stopped: finishReason "+cand.FinishReason)
		return out, nil
	default:
		out.Kind, out.Finish, out.Message = Failed, FinishOther, boundMessage(t, "answer stopped: finishReason "+cand.FinishReason)
		return out, nil
	}
	for _, p := range cand.Content.Parts {
		switch {
		case p.Text != "" && !p.Thought:
			out.Kind, out.Content, out.Reasoning = Text, refContent(p.Text), false
			return out, nil
		case p.Text != "":
			out.Kind, out.Reasoning = Effective, true
		case p.FunctionCall != nil, p.ExecutableCode != nil, p.InlineData != nil:
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
	DoneReason      string `json:"done_reason"`
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
		switch l.DoneReason {
		case "":
		case "stop":
			out.Finish = FinishStop
		case "length":
			out.Finish = FinishLength
		default:
			out.Finish = FinishOther
		}
		out.Usage, out.HasUsage = Tokens{Prompt: l.PromptEvalCount, Completion: l.EvalCount}, true
	case m.Content != "":
		out.Kind, out.Content = Text, refContent(m.Content)
	case l.Response != "":
		out.Kind, out.Content = Text, refContent(l.Response)
	case m.Thinking != "", l.Thinking != "":
		out.Kind, out.Reasoning = Effective, true
	case len(m.ToolCalls) > 0:
		out.Kind = Effective
	}
	return out, nil
}

type refAISDKChunk struct {
	Type           string `json:"type"`
	Delta          string `json:"delta"`
	InputTextDelta string `json:"inputTextDelta"`
	ErrorText      string `json:"errorText"`
	FinishReason   string `json:"finishReason"`
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
			c.Kind, c.Content = Text, refContent(p.Delta)
		}
	case "reasoning-delta":
		if p.Delta != "" {
			c.Kind, c.Reasoning = Effective, true
		}
	case "tool-input-delta":
		if p.InputTextDelta != "" {
			c.Kind = Effective
		}
	case "tool-input-available", "file":
		c.Kind = Effective
	case "start":
		c.Begin = true
	case "finish":
		c.Done = true
		switch p.FinishReason {
		case "":
		case "stop":
			c.Finish = FinishStop
		case "length":
			c.Finish = FinishLength
		case "tool-calls":
			c.Finish = FinishToolCalls
		case "content-filter":
			c.Finish, c.Message = FinishContentFilter, "finishReason content-filter"
		case "error":
			c.Finish = FinishError
		default:
			c.Finish = FinishOther
		}
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

type refCohereCounts struct {
	InputTokens  float64 `json:"input_tokens"`
	OutputTokens float64 `json:"output_tokens"`
}

type refCohereEvent struct {
	Type  string `json:"type"`
	Delta struct {
		Message struct {
			Content  json.RawMessage `json:"content"`
			ToolPlan string          `json:"tool_plan"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
		Error        string `json:"error"`
		Usage        *struct {
			Tokens      *refCohereCounts `json:"tokens"`
			BilledUnits *refCohereCounts `json:"billed_units"`
		} `json:"usage"`
	} `json:"delta"`
}

func refDecodeCohere(t Target, ev *resumeclient.Event) (Chunk, error) {
	if len(ev.Data) == 0 {
		return Chunk{Kind: Meta}, nil
	}
	var e refCohereEvent
	if err := json.Unmarshal(ev.Data, &e); err != nil {
		return Chunk{}, refJSONError("cohere", "event", ev.Data, err)
	}
	typ := e.Type
	if typ == "" {
		typ = string(ev.Type)
	}
	c := Chunk{Kind: Meta}
	d := e.Delta
	switch typ {
	case "content-delta":
		var content struct {
			Text     string `json:"text"`
			Thinking string `json:"thinking"`
		}
		if len(d.Message.Content) > 0 {
			if err := json.Unmarshal(d.Message.Content, &content); err != nil {
				var te *json.UnmarshalTypeError
				if errors.As(err, &te) && te.Field != "" {
					te.Field = "delta.message.content." + te.Field
				}
				return Chunk{}, refJSONError("cohere", "delta.message.content", ev.Data, err)
			}
		}
		switch {
		case content.Text != "":
			c.Kind, c.Content = Text, refContent(content.Text)
		case content.Thinking != "":
			c.Kind, c.Reasoning = Effective, true
		}
	case "tool-plan-delta":
		if d.Message.ToolPlan != "" {
			c.Kind = Effective
		}
	case "tool-call-delta":
		c.Kind = Effective
	case "message-end":
		c.Kind = End
		if u := d.Usage; u != nil {
			c.HasUsage = true
			if u.BilledUnits != nil {
				c.Usage = Tokens{Prompt: int(u.BilledUnits.InputTokens), Completion: int(u.BilledUnits.OutputTokens)}
			}
			if u.Tokens != nil {
				c.Usage = Tokens{Prompt: int(u.Tokens.InputTokens), Completion: int(u.Tokens.OutputTokens)}
			}
		}
		switch d.FinishReason {
		case "":
		case "COMPLETE", "STOP_SEQUENCE":
			c.Finish = FinishStop
		case "MAX_TOKENS":
			c.Finish = FinishLength
		case "TOOL_CALL":
			c.Finish = FinishToolCalls
		case "ERROR", "ERROR_TOXIC", "ERROR_LIMIT":
			c.Finish = FinishError
		default:
			c.Finish = FinishOther
		}
		if strings.HasPrefix(d.FinishReason, "ERROR") {
			c.Kind = Failed
			c.Message = boundMessage(t, cohereErrorText(d.FinishReason, d.Error))
		}
	}
	return c, nil
}
