package dialect

import (
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/streamprobe/streamprobe/resumeclient"
)

// fuzzKey is the target's key in the fuzz targets: no message may show it.
const fuzzKey = "sk-fuzz-0123456789abcdef"

// fuzzDecode checks dialect on any event: it never panics, classifies the
// event, and its error is one short line that names a field, never a Go
// type, and never repeats the event; a provider message is bounded,
// printable and free of the key.
func fuzzDecode(f *testing.F, dialect string, seeds ...string) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	d := Dialects[dialect]
	tg := Target{Header: http.Header{"Authorization": {"Bearer " + fuzzKey}}}
	f.Fuzz(func(t *testing.T, data []byte) {
		ev := &resumeclient.Event{Kind: resumeclient.KindEvent, Data: data}
		c, err := d.Decode(tg, ev)
		if err != nil {
			msg := err.Error()
			if len(msg) > 200 || strings.ContainsAny(msg, "\n\r\x1b") || !strings.HasPrefix(msg, dialect+": ") {
				t.Fatalf("error %q", msg)
			}
			if strings.Contains(msg, "Go struct") || strings.Contains(msg, "of type") || strings.Contains(msg, "json:") {
				t.Fatalf("the error names a Go type: %q", msg)
			}
			if len(data) > 40 && strings.Contains(msg, string(data)) {
				t.Fatalf("the error repeats the event: %q", msg)
			}
			return
		}
		if c.Kind > Liveness {
			t.Fatalf("kind %d", c.Kind)
		}
		if len(c.Message) > MaxMessage || !utf8.ValidString(c.Message) || strings.ContainsAny(c.Message, "\n\r\x1b") {
			t.Fatalf("message %q", c.Message)
		}
		if strings.Contains(c.Message, fuzzKey) {
			t.Fatalf("message %q shows the key", c.Message)
		}
	})
}

func FuzzDecodeOpenAIChat(f *testing.F) {
	fuzzDecode(f, "openai-chat",
		`{"choices":[{"delta":{"content":"hi"}}]}`, `{"choices":[{"delta":{"role":"assistant","content":""}}]}`,
		`{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4}}`, `{"error":{"message":"overloaded"}}`,
		`{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"{\"a\""}}]}}]}`, `[DONE]`, `{"choices":[{"delta":null}]}`, `not json`,
		`{"error":{"message":"bad key sk-fuzz-0123456789abcdef"}}`, `{"choices":[{"delta":{"content":1}}]}`)
}

func FuzzDecodeAnthropic(f *testing.F) {
	fuzzDecode(f, "anthropic-messages",
		`{"type":"content_block_delta","delta":{"type":"text_delta","text":"hi"}}`, `{"type":"ping"}`,
		`{"type":"message_start","message":{"usage":{"input_tokens":3,"output_tokens":1}}}`, `{"type":"message_stop"}`,
		`{"type":"error","error":{"message":"overloaded sk-fuzz-0123456789abcdef"}}`, `{"type":"message_delta","usage":{"output_tokens":"x"}}`)
}

func FuzzDecodeResponses(f *testing.F) {
	fuzzDecode(f, "openai-responses",
		`{"type":"response.output_text.delta","sequence_number":3,"delta":"hi"}`, `{"type":"response.completed","response":{"id":"r","usage":{"input_tokens":1,"output_tokens":2}}}`,
		`{"type":"response.failed","response":{"error":{"message":"sk-fuzz-0123456789abcdef"}}}`, `{"type":"error","message":"x"}`,
		`{"type":"response.created","sequence_number":"7"}`)
}

func FuzzDecodeGemini(f *testing.F) {
	fuzzDecode(f, "gemini",
		`{"candidates":[{"content":{"parts":[{"text":"hi"}],"role":"model"}}]}`, `{"candidates":[{"content":{"parts":[{"text":"t","thought":true}]}}]}`,
		`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f"}}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":3}}`,
		`{"candidates":[{"finishReason":"SAFETY"}]}`, `{"promptFeedback":{"blockReason":"sk-fuzz-0123456789abcdef"}}`,
		`{"error":{"code":400,"message":"API key sk-fuzz-0123456789abcdef not valid","status":"INVALID_ARGUMENT"}}`, `{"candidates":[{"content":{"parts":[{"thought":1}]}}]}`)
}

func FuzzDecodeOllama(f *testing.F) {
	fuzzDecode(f, "ollama",
		`{"model":"m","message":{"role":"assistant","content":"hi"},"done":false}`, `{"message":{"thinking":"t"},"done":false}`,
		`{"message":{"tool_calls":[{"function":{"name":"f"}}]}}`, `{"done":true,"done_reason":"stop","prompt_eval_count":3,"eval_count":9}`,
		`{"error":"unauthorized sk-fuzz-0123456789abcdef"}`, `{"done":"yes"}`)
}

func FuzzDecodeAISDK(f *testing.F) {
	fuzzDecode(f, "ai-sdk-ui",
		`{"type":"text-delta","id":"t1","delta":"hi"}`, `{"type":"reasoning-delta","id":"r1","delta":"x"}`,
		`{"type":"tool-input-delta","toolCallId":"c","inputTextDelta":"{"}`, `{"type":"finish"}`, `[DONE]`,
		`{"type":"error","errorText":"bad key sk-fuzz-0123456789abcdef"}`, `{"type":"text-delta","delta":1}`)
}

func FuzzDecodeMCP(f *testing.F) {
	fuzzDecode(f, "mcp",
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"streamprobe","progress":1}}`,
		`{"jsonrpc":"2.0","id":"streamprobe","result":{"content":[]}}`, `{"id":"streamprobe","error":{"message":"bad key sk-fuzz-0123456789abcdef"}}`,
		`{"id":3,"method":"sampling/createMessage","params":{}}`, `{"method":"notifications/progress","params":{"progress":"x"}}`, ``)
}

// FuzzDecodeSSE: the generic dialect never panics and marks the end only on
// its markers.
func FuzzDecodeSSE(f *testing.F) {
	f.Add([]byte("done"), []byte("[DONE]"))
	f.Add([]byte(""), []byte("x"))
	d := Dialects["sse"]
	f.Fuzz(func(t *testing.T, typ, data []byte) {
		tg := Target{EndEvent: "done", EndData: "[DONE]"}
		c, err := d.Decode(tg, &resumeclient.Event{Kind: resumeclient.KindEvent, Type: typ, Data: data})
		if err != nil {
			t.Fatal(err)
		}
		if (c.Kind == End) != (string(typ) == "done" || string(data) == "[DONE]") {
			t.Fatalf("kind %d for %q %q", c.Kind, typ, data)
		}
	})
}

// FuzzDecodeLangGraph: the langgraph dialect on any event of each type it
// reads (the first byte picks it), as fuzzDecode checks the others.
func FuzzDecodeLangGraph(f *testing.F) {
	for i, s := range []string{
		`[{"content":"hi","type":"AIMessageChunk"},{"langgraph_node":"agent"}]`,
		`[{"content":[{"type":"reasoning","reasoning":"x"}]},{}]`, `[{"content":"","tool_call_chunks":[{"args":"{"}]},{}]`,
		`[{"content":"","usage_metadata":{"input_tokens":3,"output_tokens":4}},{}]`, `{"run_id":"r","attempt":1}`,
		`{"error":"Error","message":"bad key sk-fuzz-0123456789abcdef"}`, `"Run not found"`, `[{"content":1}]`, `{"messages":[]}`,
	} {
		f.Add(byte(i), []byte(s))
	}
	types := []string{"messages", "messages/partial", "metadata", "error", "values", "end"}
	d := Dialects["langgraph"]
	tg := Target{Header: http.Header{"Authorization": {"Bearer " + fuzzKey}}}
	f.Fuzz(func(t *testing.T, which byte, data []byte) {
		ev := &resumeclient.Event{Kind: resumeclient.KindEvent, Type: []byte(types[int(which)%len(types)]), Data: data}
		c, err := d.Decode(tg, ev)
		if err != nil {
			if msg := err.Error(); len(msg) > 200 || strings.ContainsAny(msg, "\n\r\x1b") || !strings.HasPrefix(msg, "langgraph: ") || len(data) > 40 && strings.Contains(msg, string(data)) {
				t.Fatalf("error %q", msg)
			}
			return
		}
		if c.Kind > Liveness || len(c.Message) > MaxMessage+len("error event: ") || !utf8.ValidString(c.Message) || strings.ContainsAny(c.Message, "\n\r\x1b") || strings.Contains(c.Message, fuzzKey) {
			t.Fatalf("chunk %+v", c)
		}
	})
}

// FuzzDecodeText: a read of any bytes is a chunk, never an error.
func FuzzDecodeText(f *testing.F) {
	fuzzDecode(f, "text", "Paris", " is", "\x00\xff", "data: x\n\n")
}

func FuzzDecodeCohere(f *testing.F) {
	fuzzDecode(f, "cohere",
		`{"type":"content-delta","index":0,"delta":{"message":{"content":{"text":"hi"}}}}`, `{"type":"message-start","delta":{"message":{"content":[]}}}`,
		`{"type":"tool-plan-delta","delta":{"message":{"tool_plan":"x"}}}`, `{"type":"message-end","delta":{"finish_reason":"COMPLETE","usage":{"tokens":{"input_tokens":3}}}}`,
		`{"type":"message-end","delta":{"finish_reason":"ERROR","error":"bad key sk-fuzz-0123456789abcdef"}}`, `{"type":"content-delta","delta":{"message":{"content":{"text":1}}}}`)
}

// FuzzDecodeBedrock: any message (its :message-type, type and payload)
// is classified or named as an error of the bedrock dialect, one short
// line that never repeats the payload; a provider's message is bounded,
// printable and free of the key.
func FuzzDecodeBedrock(f *testing.F) {
	for _, s := range [][3]string{
		{"event", "contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"hi"}}`},
		{"event", "contentBlockDelta", `{"delta":{"reasoningContent":{"text":"r"}}}`},
		{"event", "contentBlockDelta", `{"delta":{"toolUse":{"input":"{"}}}`},
		{"event", "messageStop", `{"stopReason":"end_turn"}`},
		{"event", "metadata", `{"usage":{"inputTokens":3,"outputTokens":4},"metrics":{"latencyMs":9}}`},
		{"event", "chunk", `{"bytes":"eyJ0eXBlIjoibWVzc2FnZV9zdG9wIn0="}`},
		{"event", "chunk", `{"bytes":"eyJnZW5lcmF0aW9uIjoiaGkifQ=="}`},
		{"exception", "throttlingException", `{"message":"slow down sk-fuzz-0123456789abcdef"}`},
		{"error", "InternalFailure", "sk-fuzz-0123456789abcdef"},
		{"event", "contentBlockDelta", `{"delta":{"text":1}}`},
		{"event", "chunk", `{"bytes":"!!"}`},
		{"event", "chunk", `{"bytes":"eyJ0eXBlIjoieCIsImRlbHRhIjo1fQ=="}`},
	} {
		f.Add([]byte(s[0]), []byte(s[1]), []byte(s[2]))
	}
	d := Dialects["bedrock"]
	tg := Target{Header: http.Header{"Authorization": {"Bearer " + fuzzKey}}}
	f.Fuzz(func(t *testing.T, mt, typ, data []byte) {
		c, err := d.Decode(tg, &resumeclient.Event{Kind: resumeclient.KindEvent, MessageType: mt, Type: typ, Data: data})
		if err != nil {
			msg := err.Error()
			if len(msg) > 200 || strings.ContainsAny(msg, "\n\r\x1b") || !strings.HasPrefix(msg, "bedrock: ") || strings.Contains(msg, fuzzKey) {
				t.Fatalf("error %q", msg)
			}
			if len(data) > 40 && strings.Contains(msg, string(data)) {
				t.Fatalf("the error repeats the payload: %q", msg)
			}
			return
		}
		if c.Kind > Liveness || len(c.Message) > MaxMessage || !utf8.ValidString(c.Message) || strings.ContainsAny(c.Message, "\n\r\x1b") || strings.Contains(c.Message, fuzzKey) {
			t.Fatalf("chunk %+v", c)
		}
		if (string(mt) == "exception" || string(mt) == "error") != (c.Kind == Failed) && string(typ) != "chunk" {
			t.Fatalf("message type %q gave kind %d", mt, c.Kind)
		}
	})
}
