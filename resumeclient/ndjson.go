package resumeclient

import (
	"bytes"
	"fmt"
	"time"
)

// Framing is how a response body is cut into events.
type Framing uint8

const (
	// FramingSSE is Server-Sent Events (text/event-stream): the default.
	FramingSSE Framing = iota
	// FramingNDJSON is newline-delimited JSON (application/x-ndjson), as
	// Ollama's native API streams: every line is one event, with no type,
	// no id and no comment.
	FramingNDJSON
	// FramingSSEOrJSON takes Server-Sent Events or one JSON document
	// (application/json), as the server chooses: MCP's Streamable HTTP
	// answers a POST either way. A JSON body is one event, dispatched when
	// the body ends cleanly.
	FramingSSEOrJSON
	// FramingSSETrailer is Server-Sent Events whose body may end in text
	// that is no event (Gemini's error object after its last event): the
	// lines of unknown fields after the last event come as a KindTrailer
	// event at the clean end of the body, where plain SSE ignores them.
	FramingSSETrailer
	// FramingRaw makes every read of the body that brings bytes one event
	// (a plain-text stream: the AI SDK's text stream, a route that writes
	// text/plain as it goes), whatever its Content-Type: no type, no id,
	// no comment, stamped when the read returned.
	FramingRaw
	// FramingEventStream is the AWS event stream
	// (application/vnd.amazon.eventstream, Amazon Bedrock's streams):
	// binary messages, each a prelude, headers, a payload and CRCs, read
	// with the AWS SDK's decoder. A message is one event (see
	// EventStreamParser).
	FramingEventStream
)

// MediaType is the Content-Type a response of this framing must have,
// and the Accept a request asks for.
func (f Framing) MediaType() string {
	switch f {
	case FramingNDJSON:
		return "application/x-ndjson"
	case FramingRaw:
		return "text/plain"
	case FramingEventStream:
		return "application/vnd.amazon.eventstream"
	}
	return "text/event-stream"
}

// Accept is the Accept header a request of this framing sends.
func (f Framing) Accept() string {
	switch f {
	case FramingSSEOrJSON:
		return "application/json, text/event-stream"
	case FramingRaw:
		return "text/plain, */*"
	}
	return f.MediaType()
}

// wanted names the media types a response may have, for a message.
func (f Framing) wanted() string {
	if f == FramingSSEOrJSON {
		return "text/event-stream or application/json"
	}
	return f.MediaType()
}

// accepts reports whether a response of media type mt can be read (a raw
// stream reads any, and one with none: responseKind does not ask).
func (f Framing) accepts(mt string) bool {
	return mt == f.MediaType() || f == FramingSSEOrJSON && mt == "application/json"
}

// HasEventIDs reports whether the framing carries event ids, and so a
// Last-Event-ID resume.
func (f Framing) HasEventIDs() bool {
	return f == FramingSSE || f == FramingSSEOrJSON
}

// frames is what a Stream reads its events with: Parser or LineParser.
type frames interface {
	Push(b []byte, at time.Time)
	Next() (*Event, error)
	Pending() bool
	LastEventID() string
	Retry() (time.Duration, bool)
	// Flush returns the event a clean end of the body completes, if any.
	Flush() *Event
}

// LineParser cuts newline-delimited JSON into events, with the same
// guarantees as Parser: each line is timestamped when the bytes that end
// it arrive (FirstByte when its first byte did), a line is bounded by
// MaxEventSize, a line cut off by the end of the body is reported by
// Pending, and a line that lies whole in one read is handed out in place
// (no copy, no allocation). An empty line (or one of a lone CR) is
// skipped. It does not look into the JSON. The zero value is ready to
// use; it is not safe for concurrent use.
type LineParser struct {
	// MaxEventSize bounds one line; 0 means DefaultMaxEventSize.
	MaxEventSize int

	line   []byte // a line begun in an earlier read
	inLine bool
	lineAt time.Time
	buf    []byte
	at     time.Time
	ev     Event
	err    error
}

// Push hands the parser the bytes of one read, which arrived at the time
// at. The parser keeps a reference to b until Next has consumed it.
func (p *LineParser) Push(b []byte, at time.Time) {
	p.buf, p.at = b, at
}

// Next returns the next line as an event (Data without its line end), nil
// when the pushed bytes are used up, or an error wrapping
// ErrEventTooLarge when a line outgrew the limit. The event is valid
// until the next call.
func (p *LineParser) Next() (*Event, error) {
	if p.err != nil {
		return nil, p.err
	}
	limit := p.MaxEventSize
	if limit <= 0 {
		limit = DefaultMaxEventSize
	}
	if !p.inLine {
		p.line = p.line[:0] // the last event's bytes, handed out: reuse now
	}
	for len(p.buf) > 0 {
		if !p.inLine {
			p.inLine, p.lineAt = true, p.at
		}
		i := bytes.IndexByte(p.buf, '\n')
		if i < 0 {
			if len(p.line)+len(p.buf) > limit {
				return nil, p.fail(limit)
			}
			p.line = append(p.line, p.buf...)
			p.buf = nil
			return nil, nil
		}
		if len(p.line)+i > limit {
			return nil, p.fail(limit)
		}
		data := p.buf[:i]
		if len(p.line) > 0 {
			p.line = append(p.line, data...)
			data = p.line
		}
		p.buf = p.buf[i+1:]
		p.inLine = false
		size := len(data) + 1
		if n := len(data); n > 0 && data[n-1] == '\r' {
			data = data[:n-1]
		}
		if len(data) == 0 {
			p.line = p.line[:0]
			continue
		}
		p.ev = Event{Kind: KindEvent, Data: data, FirstByte: p.lineAt, Dispatched: p.at, Size: size}
		return &p.ev, nil
	}
	return nil, nil
}

func (p *LineParser) fail(limit int) error {
	p.err = fmt.Errorf("%w: one line held more than %d bytes", ErrEventTooLarge, limit)
	p.buf, p.line = nil, nil
	return p.err
}

// Pending reports whether a line has begun and not ended: had the body
// ended now, it would be cut off. Such a line is never returned.
func (p *LineParser) Pending() bool { return p.inLine && len(p.line) > 0 }

// LastEventID is always empty: lines carry no id.
func (p *LineParser) LastEventID() string { return "" }

// Retry is never set: lines carry no retry field.
func (p *LineParser) Retry() (time.Duration, bool) { return 0, false }

// Flush returns nil: a line cut off by the end of the body is Pending,
// never an event.
func (p *LineParser) Flush() *Event { return nil }

// BodyParser makes a whole body one event (a JSON answer): the bytes are
// kept as they come, bounded by MaxEventSize, and the event is dispatched
// by Flush at the clean end of the body, stamped with the arrival of its
// last byte (FirstByte with its first). It has no id, type or comment.
// The zero value is ready to use; it is not safe for concurrent use.
type BodyParser struct {
	// MaxEventSize bounds the body; 0 means DefaultMaxEventSize.
	MaxEventSize int

	data      []byte
	first, at time.Time
	done      bool
	ev        Event
	err       error
}

// Push hands the parser the bytes of one read, which arrived at the time
// at; they are copied.
func (p *BodyParser) Push(b []byte, at time.Time) {
	if p.err != nil || len(b) == 0 {
		return
	}
	limit := p.MaxEventSize
	if limit <= 0 {
		limit = DefaultMaxEventSize
	}
	if len(p.data)+len(b) > limit {
		p.err = fmt.Errorf("%w: the JSON body held more than %d bytes", ErrEventTooLarge, limit)
		p.data = nil
		return
	}
	if p.first.IsZero() {
		p.first = at
	}
	p.data, p.at = append(p.data, b...), at
}

// Next never returns an event (the body is one, at its end), only the
// error of a body over the limit.
func (p *BodyParser) Next() (*Event, error) { return nil, p.err }

// Pending reports a body begun and not dispatched.
func (p *BodyParser) Pending() bool { return !p.done && len(p.data) > 0 }

// LastEventID is always empty: a JSON body carries no id.
func (p *BodyParser) LastEventID() string { return "" }

// Retry is never set.
func (p *BodyParser) Retry() (time.Duration, bool) { return 0, false }

// Flush dispatches the body as one event, once; an empty body is none.
func (p *BodyParser) Flush() *Event {
	if p.done || p.err != nil || len(p.data) == 0 {
		return nil
	}
	p.done = true
	p.ev = Event{Kind: KindEvent, Data: p.data, FirstByte: p.first, Dispatched: p.at, Size: len(p.data)}
	return &p.ev
}
