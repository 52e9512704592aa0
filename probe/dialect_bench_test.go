package probe

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
