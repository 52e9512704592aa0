package resumeclient

import "time"

// RawParser makes every read that brought bytes one event: a plain-text
// stream has no framing of its own, so what one read returned is what the
// client had at that moment. The event is the read's bytes in place (no
// copy, no allocation), stamped with the read's arrival (FirstByte and
// Dispatched alike). It has no id, type or comment, and nothing is ever
// pending: a clean end of the body ends the stream. The zero value is
// ready to use; it is not safe for concurrent use.
type RawParser struct {
	buf []byte
	at  time.Time
	ev  Event
}

// Push hands the parser the bytes of one read, which arrived at the time
// at. The parser keeps a reference to b until Next has consumed it.
func (p *RawParser) Push(b []byte, at time.Time) { p.buf, p.at = b, at }

// Next returns the pushed read as one event, then nil until the next
// Push. The event is valid until the next call.
func (p *RawParser) Next() (*Event, error) {
	if len(p.buf) == 0 {
		return nil, nil
	}
	p.ev = Event{Kind: KindEvent, Data: p.buf, FirstByte: p.at, Dispatched: p.at, Size: len(p.buf)}
	p.buf = nil
	return &p.ev, nil
}

// Pending is always false: a read is never cut.
func (p *RawParser) Pending() bool { return false }

// LastEventID is always empty: a raw stream carries no id.
func (p *RawParser) LastEventID() string { return "" }

// Retry is never set.
func (p *RawParser) Retry() (time.Duration, bool) { return 0, false }

// Flush returns nil: every read was an event already.
func (p *RawParser) Flush() *Event { return nil }
