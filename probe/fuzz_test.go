package probe

import (
	"strings"
	"testing"

	"github.com/streamprobe/streamprobe/resumeclient"
)

// FuzzDecodeOpenAIChat: the decoder never panics, classifies every event,
// and its errors are one bounded line that never repeats the event.
func FuzzDecodeOpenAIChat(f *testing.F) {
	for _, s := range []string{
		`{"choices":[{"delta":{"content":"hi"}}]}`, `{"choices":[{"delta":{"role":"assistant","content":""}}]}`,
		`{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4}}`, `{"error":{"message":"overloaded"}}`,
		`{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"{\"a\""}}]}}]}`, `[DONE]`, `{"choices":[{"delta":null}]}`, `not json`,
	} {
		f.Add([]byte(s))
	}
	d := Dialects["openai-chat"]
	f.Fuzz(func(t *testing.T, data []byte) {
		ev := &resumeclient.Event{Kind: resumeclient.KindEvent, Data: data}
		c, err := d.Decode(Target{}, ev)
		if err != nil {
			msg := err.Error()
			if len(msg) > 300 || strings.ContainsAny(msg, "\n") {
				t.Fatalf("error %q", msg)
			}
			if len(data) > 40 && strings.Contains(msg, string(data)) {
				t.Fatalf("the error repeats the event: %q", msg)
			}
			return
		}
		if c.Kind > Failed {
			t.Fatalf("kind %d", c.Kind)
		}
		if len(c.Message) > 203 {
			t.Fatalf("message %d bytes", len(c.Message))
		}
	})
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
