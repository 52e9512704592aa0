package resumeclient

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"time"
	"unsafe"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
)

// EventStreamParser cuts an AWS event stream (application/
// vnd.amazon.eventstream) into events, one per message: the prelude's
// total length says where a message ends, and the AWS SDK's own decoder
// (aws/protocol/eventstream) checks its prelude and message CRCs and reads
// its headers and payload. An event's MessageType is the :message-type
// header; its Type the :event-type of an event, the :exception-type of an
// exception, the :error-code of an error; its Data the payload (an
// error's :error-message, which has none). It keeps Parser's guarantees:
// a message is stamped when the read that ends it arrives (FirstByte when
// its first byte did), bounded by MaxEventSize, reported by Pending when
// the body ends inside it, and a message that lies whole in one read is
// decoded in place. The zero value is ready to use; it is not safe for
// concurrent use.
type EventStreamParser struct {
	// MaxEventSize bounds one message; 0 means DefaultMaxEventSize.
	MaxEventSize int

	msg     []byte // a message begun in an earlier read
	inMsg   bool
	msgAt   time.Time
	buf     []byte
	at      time.Time
	payload []byte // the decoder's payload buffer, reused
	rd      bytes.Reader
	ev      Event
	err     error
}

// The AWS event stream's fixed sizes: the prelude (total length, headers
// length, prelude CRC) and the message CRC.
const (
	esPrelude = 12
	esMinSize = esPrelude + 4
)

var esDecoder = eventstream.NewDecoder()

// Push hands the parser the bytes of one read, which arrived at the time
// at. The parser keeps a reference to b until Next has consumed it.
func (p *EventStreamParser) Push(b []byte, at time.Time) { p.buf, p.at = b, at }

// Next returns the next message as an event, nil when the pushed bytes are
// used up, or an error wrapping ErrBadFrame (a message that does not
// decode) or ErrEventTooLarge. The event is valid until the next call.
func (p *EventStreamParser) Next() (*Event, error) {
	if p.err != nil {
		return nil, p.err
	}
	if !p.inMsg {
		p.msg = p.msg[:0] // the last event's bytes, handed out: reuse now
	}
	for len(p.buf) > 0 {
		if !p.inMsg {
			p.inMsg, p.msgAt = true, p.at
			if n, ok := p.total(p.buf); ok && n <= len(p.buf) {
				// The whole message lies in this read: decode it in place.
				msg := p.buf[:n]
				p.buf = p.buf[n:]
				return p.decode(msg)
			}
			if p.err != nil {
				return nil, p.err
			}
		}
		// Take the 4 bytes that say the length, then the rest of it.
		need := 4
		if n, ok := p.total(p.msg); ok {
			need = n
		}
		k := min(need-len(p.msg), len(p.buf))
		p.msg, p.buf = append(p.msg, p.buf[:k]...), p.buf[k:]
		n, ok := p.total(p.msg)
		switch {
		case p.err != nil:
			return nil, p.err
		case ok && len(p.msg) == n:
			return p.decode(p.msg)
		}
	}
	return nil, nil
}

// total reads a message's total length from its prelude's first 4 bytes;
// false when fewer have come, or the length is impossible (p.err is set
// then).
func (p *EventStreamParser) total(b []byte) (int, bool) {
	if len(b) < 4 {
		return 0, false
	}
	n := int(binary.BigEndian.Uint32(b))
	limit := p.MaxEventSize
	if limit <= 0 {
		limit = DefaultMaxEventSize
	}
	switch {
	case n < esMinSize:
		p.fail(fmt.Errorf("%w: a message of %d bytes (the prelude and its CRCs alone take %d)", ErrBadFrame, n, esMinSize))
		return 0, false
	case n > limit:
		p.fail(fmt.Errorf("%w: one message held %d bytes, more than %d", ErrEventTooLarge, n, limit))
		return 0, false
	}
	return n, true
}

func (p *EventStreamParser) fail(err error) {
	p.err, p.buf, p.msg, p.inMsg = err, nil, nil, false
}

// decode reads one whole message with the SDK's decoder.
func (p *EventStreamParser) decode(msg []byte) (*Event, error) {
	size := len(msg)
	p.rd.Reset(msg)
	m, err := esDecoder.Decode(&p.rd, p.payload[:0])
	if err == nil && p.rd.Len() != 0 {
		err = fmt.Errorf("%d bytes left after the message CRC", p.rd.Len())
	}
	if err != nil {
		p.fail(fmt.Errorf("%w: %v", ErrBadFrame, err))
		return nil, p.err
	}
	if cap(m.Payload) > cap(p.payload) {
		p.payload = m.Payload[:0]
	}
	p.inMsg = false
	p.ev = Event{Kind: KindEvent, Data: m.Payload, FirstByte: p.msgAt, Dispatched: p.at, Size: size}
	mt := header(m.Headers, ":message-type")
	p.ev.MessageType = mt
	switch string(mt) {
	case "exception":
		p.ev.Type = header(m.Headers, ":exception-type")
	case "error":
		p.ev.Type = header(m.Headers, ":error-code")
		p.ev.Data = header(m.Headers, ":error-message")
	default:
		p.ev.Type = header(m.Headers, ":event-type")
	}
	return &p.ev, nil
}

// header is the string header name of hs, as bytes (the decoder's own
// string, not a copy), nil when absent or not a string.
func header(hs eventstream.Headers, name string) []byte {
	for _, h := range hs {
		if h.Name != name {
			continue
		}
		if v, ok := h.Value.(eventstream.StringValue); ok {
			return unsafe.Slice(unsafe.StringData(string(v)), len(v))
		}
	}
	return nil
}

// Pending reports whether a message has begun and not ended: had the
// body ended now, it would be cut off. Such a message is never returned.
func (p *EventStreamParser) Pending() bool { return p.inMsg && len(p.msg) > 0 }

// LastEventID is always empty: messages carry no id.
func (p *EventStreamParser) LastEventID() string { return "" }

// Retry is never set.
func (p *EventStreamParser) Retry() (time.Duration, bool) { return 0, false }

// Flush returns nil: a message cut off by the end of the body is Pending,
// never an event.
func (p *EventStreamParser) Flush() *Event { return nil }
