package refserver

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
)

// EventStream is the Content-Type of Amazon Bedrock's streams.
const EventStream = "application/vnd.amazon.eventstream"

// Bedrock builds the steps of an Amazon Bedrock stream: each step one AWS
// event stream message written by the AWS SDK's own encoder
// (aws/protocol/eventstream: prelude, headers, CRCs). Converse events
// (messageStart, contentBlockDelta, messageStop, metadata), Invoke chunks
// (the model's event base64 in {"bytes"}), and the exceptions. Serve it
// as EventStream: set the Server's ContentType.
type Bedrock struct{ steps []Step }

// Frame is one event stream message with these headers and payload, as
// the SDK encodes it.
func Frame(msgType, typ string, payload []byte) string {
	var hs eventstream.Headers
	hs.Set(":message-type", eventstream.StringValue(msgType))
	switch msgType {
	case "exception":
		hs.Set(":exception-type", eventstream.StringValue(typ))
	case "error":
		hs.Set(":error-code", eventstream.StringValue(typ))
		hs.Set(":error-message", eventstream.StringValue(payload))
		payload = nil
	default:
		hs.Set(":event-type", eventstream.StringValue(typ))
	}
	hs.Set(":content-type", eventstream.StringValue("application/json"))
	var b bytes.Buffer
	if err := eventstream.NewEncoder().Encode(&b, eventstream.Message{Headers: hs, Payload: payload}); err != nil {
		panic("refserver: encoding an event stream message: " + err.Error())
	}
	return b.String()
}

func (b *Bedrock) event(at time.Duration, typ string, v any) *Bedrock {
	p, _ := json.Marshal(v)
	b.steps = append(b.steps, Step{At: at, Raw: Frame("event", typ, p)})
	return b
}

// Start adds messageStart.
func (b *Bedrock) Start(at time.Duration) *Bedrock {
	return b.event(at, "messageStart", map[string]any{"role": "assistant", "p": "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"})
}

func (b *Bedrock) delta(at time.Duration, d map[string]any) *Bedrock {
	return b.event(at, "contentBlockDelta", map[string]any{"contentBlockIndex": 0, "delta": d, "p": "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"})
}

// Text adds a contentBlockDelta with text.
func (b *Bedrock) Text(at time.Duration, s string) *Bedrock {
	return b.delta(at, map[string]any{"text": s})
}

// Reasoning adds a contentBlockDelta with reasoning text.
func (b *Bedrock) Reasoning(at time.Duration, s string) *Bedrock {
	return b.delta(at, map[string]any{"reasoningContent": map[string]any{"text": s}})
}

// ToolUse adds a contentBlockDelta with tool input.
func (b *Bedrock) ToolUse(at time.Duration, input string) *Bedrock {
	return b.delta(at, map[string]any{"toolUse": map[string]any{"input": input}})
}

// Stop adds contentBlockStop and messageStop with the stop reason.
func (b *Bedrock) Stop(at time.Duration, reason string) *Bedrock {
	b.event(at, "contentBlockStop", map[string]any{"contentBlockIndex": 0})
	return b.event(at, "messageStop", map[string]any{"stopReason": reason})
}

// Metadata adds metadata: the usage and the latency.
func (b *Bedrock) Metadata(at time.Duration, in, out int, latency time.Duration) *Bedrock {
	return b.event(at, "metadata", map[string]any{"usage": map[string]any{"inputTokens": in, "outputTokens": out, "totalTokens": in + out},
		"metrics": map[string]any{"latencyMs": latency.Milliseconds()}})
}

// Chunk adds an InvokeModelWithResponseStream chunk: the model's event,
// base64 in {"bytes"}.
func (b *Bedrock) Chunk(at time.Duration, event any) *Bedrock {
	raw, _ := json.Marshal(event)
	return b.event(at, "chunk", map[string]any{"bytes": base64.StdEncoding.EncodeToString(raw)})
}

// Exception adds an exception message (throttlingException,
// modelStreamErrorException, ...) with its message.
func (b *Bedrock) Exception(at time.Duration, typ, msg string) *Bedrock {
	p, _ := json.Marshal(map[string]string{"message": msg})
	b.steps = append(b.steps, Step{At: at, Raw: Frame("exception", typ, p)})
	return b
}

// Steps returns the schedule.
func (b *Bedrock) Steps() []Step { return append([]Step(nil), b.steps...) }

// BedrockError is the body of a Bedrock error answer (HTTP 4xx/5xx).
func BedrockError(msg string) string {
	p, _ := json.Marshal(map[string]string{"message": msg})
	return string(p)
}
