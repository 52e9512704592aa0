package probe

import (
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/streamprobe/streamprobe/resumeclient"
)

// ChunkKind is what a dialect makes of one event.
type ChunkKind uint8

const (
	// Meta is an event that carries no output: metadata, a role-only or
	// empty delta, usage.
	Meta ChunkKind = iota
	// Effective is useful output that is not visible text: tool call
	// arguments, reasoning.
	Effective
	// Text is visible text: a content chunk.
	Text
	// End is the end marker.
	End
	// Failed is an error reported inside the stream.
	Failed
)

// Chunk is the meaning of one event.
type Chunk struct {
	Kind ChunkKind
	// Usage, when not nil, carries token counts found in the event.
	Usage *Tokens
	// Message is the provider's error message for Failed (bounded, no
	// content).
	Message string
}

// Dialect turns a target and a sample into a request, and events into
// chunks. A dialect knows the wire format of one kind of API and nothing of
// the transport.
type Dialect interface {
	// Request builds the streaming request for sample s.
	Request(t Target, s Sample) (resumeclient.Request, error)
	// Decode classifies one dispatched event. An error means the event
	// could not be understood: a protocol error.
	Decode(t Target, ev *resumeclient.Event) (Chunk, error)
	// EOFIsEnd reports whether a clean end of the body is the end marker.
	EOFIsEnd(t Target) bool
	// Resumable reports whether the dialect resumes by Last-Event-ID.
	Resumable() bool
}

// Dialects are the known dialects by name.
var Dialects = map[string]Dialect{
	"sse":         sseDialect{},
	"openai-chat": openAIChat{},
}

// DialectNames lists the known dialects, sorted.
func DialectNames() []string {
	names := make([]string, 0, len(Dialects))
	for n := range Dialects {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Target is one endpoint to probe.
type Target struct {
	Name    string
	URL     string
	Dialect string
	// Method overrides the dialect's method.
	Method string
	// Header is sent with every request (secrets included: it never goes
	// into a record or a log line).
	Header http.Header
	// Body, when not nil, replaces the body the dialect would build.
	Body []byte
	// Model is sent by chat dialects.
	Model string
	// EndEvent and EndData are the generic dialect's end markers: an event
	// with this type, or with exactly this data. Both empty: a clean end of
	// the body is the end.
	EndEvent string
	EndData  string
	// MaxEventSize bounds one event; 0 means the transport's default.
	MaxEventSize int
	// InsecureSkipVerify turns off TLS certificate verification for this
	// target only. Callers log it loudly; it is never the default.
	InsecureSkipVerify bool
}

// sseDialect is the generic dialect: every event with non-empty data is a
// chunk.
type sseDialect struct{}

func (sseDialect) Request(t Target, s Sample) (resumeclient.Request, error) {
	method := t.Method
	if method == "" {
		method = http.MethodGet
		if t.Body != nil {
			method = http.MethodPost
		}
	}
	h := t.Header.Clone()
	if t.Body != nil && h.Get("Content-Type") == "" {
		if h == nil {
			h = http.Header{}
		}
		h.Set("Content-Type", "application/json")
	}
	return resumeclient.Request{Method: method, URL: t.URL, Header: h, Body: t.Body}, nil
}

func (sseDialect) Decode(t Target, ev *resumeclient.Event) (Chunk, error) {
	if t.EndEvent != "" && string(ev.Type) == t.EndEvent {
		return Chunk{Kind: End}, nil
	}
	if t.EndData != "" && string(ev.Data) == t.EndData {
		return Chunk{Kind: End}, nil
	}
	if len(ev.Data) > 0 {
		return Chunk{Kind: Text}, nil
	}
	return Chunk{Kind: Meta}, nil
}

func (sseDialect) EOFIsEnd(t Target) bool { return t.EndEvent == "" && t.EndData == "" }

func (sseDialect) Resumable() bool { return true }

// chatURL completes a base URL to the chat completions path.
func chatURL(u string) string {
	base, query, _ := strings.Cut(u, "?")
	switch {
	case strings.HasSuffix(base, "/chat/completions"):
	case strings.HasSuffix(base, "/v1"), strings.HasSuffix(base, "/v1/"):
		base = strings.TrimSuffix(base, "/") + "/chat/completions"
	default:
		base = strings.TrimSuffix(base, "/") + "/v1/chat/completions"
	}
	if query != "" {
		return base + "?" + query
	}
	return base
}

// LookupDialect returns the dialect called name, or an error that lists the
// known ones.
func LookupDialect(name string) (Dialect, error) {
	d, ok := Dialects[name]
	if !ok {
		return nil, fmt.Errorf("unknown dialect %q (known: %s)", name, strings.Join(DialectNames(), ", "))
	}
	return d, nil
}

// LookupSample returns the sample called name, or an error that lists the
// known ones.
func LookupSample(name string) (Sample, error) {
	s, ok := Samples[name]
	if !ok || !slices.Contains(SampleNames, name) {
		return Sample{}, fmt.Errorf("unknown sample %q (known: %s)", name, strings.Join(SampleNames, ", "))
	}
	return s, nil
}
