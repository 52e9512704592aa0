package dialect

import (
	"testing"

	"github.com/streamprobe/streamprobe/resumeclient"
)

// BenchmarkDecodeOpenAIChat is the per-event cost of the openai-chat
// dialect on a typical content chunk.
func BenchmarkDecodeOpenAIChat(b *testing.B) {
	ev := &resumeclient.Event{Kind: resumeclient.KindEvent,
		Data: []byte(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":0,"model":"m","choices":[{"index":0,"delta":{"content":" word"},"finish_reason":null}]}`)}
	d := Dialects["openai-chat"]
	b.ReportAllocs()
	for b.Loop() {
		c, err := d.Decode(Target{}, ev)
		if err != nil || c.Kind != Text {
			b.Fatalf("%v %v", c.Kind, err)
		}
	}
}

// BenchmarkDecodeSSE is the same for the generic dialect.
func BenchmarkDecodeSSE(b *testing.B) {
	ev := &resumeclient.Event{Kind: resumeclient.KindEvent, Data: []byte("chunk 1")}
	d := Dialects["sse"]
	t := Target{EndData: "[DONE]"}
	b.ReportAllocs()
	for b.Loop() {
		if c, _ := d.Decode(t, ev); c.Kind != Text {
			b.Fatal(c.Kind)
		}
	}
}

// BenchmarkDecodeAnthropic is the per-event cost of the anthropic-messages
// dialect on a typical text delta.
func BenchmarkDecodeAnthropic(b *testing.B) {
	ev := &resumeclient.Event{Kind: resumeclient.KindEvent, Type: []byte("content_block_delta"),
		Data: []byte(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" word"}}`)}
	benchDecode(b, "anthropic-messages", ev)
}

// BenchmarkDecodeResponses is the same for openai-responses on an
// output_text delta (its cursor is one allocation past sequence number 99).
func BenchmarkDecodeResponses(b *testing.B) {
	ev := &resumeclient.Event{Kind: resumeclient.KindEvent, Type: []byte("response.output_text.delta"),
		Data: []byte(`{"type":"response.output_text.delta","sequence_number":42,"item_id":"msg_1","output_index":0,"content_index":0,"delta":" word","logprobs":[]}`)}
	benchDecode(b, "openai-responses", ev)
}

// BenchmarkDecodeGemini is the same for gemini on a text chunk as the API
// sends it (a whole GenerateContentResponse).
func BenchmarkDecodeGemini(b *testing.B) {
	ev := &resumeclient.Event{Kind: resumeclient.KindEvent,
		Data: []byte(`{"candidates": [{"content": {"parts": [{"text": " word"}],"role": "model"},"index": 0}],"usageMetadata": {"promptTokenCount": 14,"totalTokenCount": 14},"modelVersion": "gemini-2.5-flash","responseId": "abc123"}`)}
	benchDecode(b, "gemini", ev)
}

// BenchmarkDecodeOllama is the same for ollama on a line of /api/chat.
func BenchmarkDecodeOllama(b *testing.B) {
	ev := &resumeclient.Event{Kind: resumeclient.KindEvent,
		Data: []byte(`{"model":"llama3.2","created_at":"2026-12-05T13:00:00.000000Z","message":{"role":"assistant","content":" word"},"done":false}`)}
	benchDecode(b, "ollama", ev)
}

// BenchmarkDecodeAISDK is the same for ai-sdk-ui on a text-delta part.
func BenchmarkDecodeAISDK(b *testing.B) {
	ev := &resumeclient.Event{Kind: resumeclient.KindEvent, Data: []byte(`{"type":"text-delta","id":"t1","delta":" word"}`)}
	benchDecode(b, "ai-sdk-ui", ev)
}

// BenchmarkDecodeMCP is the same for mcp on a progress notification of
// the call (as the TypeScript SDK writes one).
func BenchmarkDecodeMCP(b *testing.B) {
	ev := &resumeclient.Event{Kind: resumeclient.KindEvent, HasID: true, ID: []byte("1000007"),
		Data: []byte(`{"method":"notifications/progress","params":{"progressToken":"streamprobe","progress":7,"total":40,"message":"step 7"},"jsonrpc":"2.0"}`)}
	benchDecode(b, "mcp", ev)
}

func benchDecode(b *testing.B, dialect string, ev *resumeclient.Event) {
	d := Dialects[dialect]
	b.ReportAllocs()
	for b.Loop() {
		c, err := d.Decode(Target{}, ev)
		if err != nil || c.Kind != Text {
			b.Fatalf("%v %v", c.Kind, err)
		}
	}
}

// BenchmarkDecodeCohere is the same for cohere on a content-delta as the
// API sends it.
func BenchmarkDecodeCohere(b *testing.B) {
	ev := &resumeclient.Event{Kind: resumeclient.KindEvent, Type: []byte("content-delta"),
		Data: []byte(`{"type":"content-delta","index":0,"delta":{"message":{"content":{"text":" word"}}}}`)}
	benchDecode(b, "cohere", ev)
}
