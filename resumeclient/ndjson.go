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
)

// MediaType is the Content-Type a response of this framing must have,
// and the Accept a request asks for.
func (f Framing) MediaType() string {
	if f == FramingNDJSON {
		return "application/x-ndjson"
	}
	return "text/event-stream"
}

// HasEventIDs reports whether the framing carries event ids, and so a
// Last-Event-ID resume.
func (f Framing) HasEventIDs() bool { return f == FramingSSE }

// frames is what a Stream reads its events with: Parser or LineParser.
type frames interface {
	Push(b []byte, at time.Time)
	Next() (*Event, error)
	Pending() bool
	LastEventID() string
	Retry() (time.Duration, bool)
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
