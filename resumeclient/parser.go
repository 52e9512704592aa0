package resumeclient

import (
	"bytes"
	"fmt"
	"time"
)

// DefaultMaxEventSize bounds the memory one event may take (data buffer plus
// the line being read) when Parser.MaxEventSize is zero.
const DefaultMaxEventSize = 16 << 20

// Kind tells a dispatched event from a comment.
type Kind uint8

const (
	// KindEvent is an event dispatched by a blank line with a non-empty
	// data buffer.
	KindEvent Kind = iota + 1
	// KindComment is a comment line (":..."): a sign that the stream is
	// alive. Its Data is the text after the colon (one leading space
	// removed); it never changes the event being built.
	KindComment
	// KindTrailer is what followed the stream's last event and is no
	// event, handed out once at the clean end of the body when the
	// request asked for it (FramingSSETrailer): the lines of a field the
	// rules do not know, which they ignore, LF-joined. Gemini's server
	// ends a failed stream with its error object so, as bare JSON.
	KindTrailer
)

// Event is one dispatched event or one comment line. Its byte slices are
// owned by the parser and valid only until the next call that parses more
// input; copy what must outlive that.
type Event struct {
	Kind Kind
	// Type is the event type; empty means "message".
	Type []byte
	// Data is the data buffer with the trailing LF removed.
	Data []byte
	// ID is the last event ID after this event was dispatched (the field
	// persists across events, as the WHATWG rules say).
	ID []byte
	// HasID reports whether this very event carried an id field.
	HasID bool
	// MessageType is an AWS event stream message's :message-type header
	// ("event", "exception" or "error"); empty in the other framings.
	MessageType []byte
	// FirstByte is when the first byte of the event's first line arrived.
	FirstByte time.Time
	// Dispatched is when the blank line that ended it arrived. Both are
	// taken by the reader before any decoding.
	Dispatched time.Time
	// Size is the number of bytes of the wire form of the event.
	Size int
	// Conn is the index of the connection (0 for the first) it came on
	// within a Session.
	Conn int
}

// Parser is an incremental WHATWG "server-sent events" parser. Feed it bytes
// in any split; it returns events one at a time. The zero value is ready to
// use. It is not safe for concurrent use.
type Parser struct {
	// MaxEventSize bounds one event; 0 means DefaultMaxEventSize.
	MaxEventSize int
	// KeepTrailer keeps the lines of unknown fields that follow the last
	// event (up to MaxTrailer bytes), for Flush to hand out as a
	// KindTrailer event at the clean end of the body.
	KeepTrailer bool

	started bool // the BOM check has been done
	sawCR   bool // the previous line ended with CR: a following LF is part of it
	line    []byte
	lineAt  time.Time // arrival of the first byte of the current line
	inLine  bool
	data    []byte
	hasData bool
	evType  []byte
	idBuf   []byte
	lastID  []byte
	gotID   bool
	pending bool // a field line has been seen since the last dispatch
	// justDispatched: the last line end was a CR that dispatched; an LF
	// that follows in the next read is not part of the next event.
	justDispatched bool
	evStart        time.Time
	evBytes        int
	retry          time.Duration
	hasRetry       bool

	// dataRef is the event's only data line so far, read in place in the
	// pushed bytes (inPlace); it moves to data when a second data line
	// comes or the pushed bytes are used up.
	dataRef []byte
	inPlace bool

	buf []byte // unread input
	at  time.Time
	ev  Event
	err error

	trailer []byte // KeepTrailer's lines since the last event
}

// SetLastEventID seeds the last event ID buffer, as for a new connection
// that resumes a stream.
func (p *Parser) SetLastEventID(id string) {
	p.idBuf = append(p.idBuf[:0], id...)
	p.lastID = append(p.lastID[:0], id...)
}

// LastEventID is the last event ID string: the id buffer as of the most
// recent dispatch. An id that came with an event cut off before its blank
// line is not part of it.
func (p *Parser) LastEventID() string { return string(p.lastID) }

// MaxTrailer bounds the text a KindTrailer event keeps, in bytes.
const MaxTrailer = 16 << 10

// Flush returns the trailer (KeepTrailer): the lines of unknown fields
// that followed the last event, once, as a KindTrailer event; nil when
// there are none. An event cut off by the end of the body is never
// dispatched (WHATWG), Pending reports it.
func (p *Parser) Flush() *Event {
	if len(p.trailer) == 0 {
		return nil
	}
	data := bytes.TrimSuffix(p.trailer, []byte("\n"))
	p.trailer = p.trailer[:0]
	p.ev = Event{Kind: KindTrailer, Data: data, ID: p.lastID, Dispatched: p.at, Size: len(data)}
	return &p.ev
}

// Retry returns the reconnection time set by the last valid retry field.
func (p *Parser) Retry() (time.Duration, bool) { return p.retry, p.hasRetry }

// Pending reports whether an event has started but not been dispatched:
// had the stream ended now, that event would be truncated. An event has
// started once it has data or an id, or a line that is not a comment has
// begun.
func (p *Parser) Pending() bool {
	if p.hasData || p.gotID {
		return true
	}
	return p.inLine && len(p.line) > 0 && p.line[0] != ':'
}

// Push hands the parser the bytes of one read, which arrived at the time at.
// The parser keeps a reference to b until Next has consumed it.
func (p *Parser) Push(b []byte, at time.Time) {
	p.buf = b
	p.at = at
}

// Next parses the pushed bytes up to the next event or comment. It returns
// nil when the pushed bytes are used up, or an error (wrapping
// ErrEventTooLarge) when an event outgrew the limit.
func (p *Parser) Next() (*Event, error) {
	// The hot read path: one pass over the pushed bytes.
	if p.err != nil {
		return nil, p.err
	}
	if !p.started && len(p.buf) > 0 {
		// Strip one leading U+FEFF, which may itself arrive split.
		bom := []byte{0xEF, 0xBB, 0xBF}
		n := len(p.line)
		need := bom[n:]
		k := min(len(need), len(p.buf))
		if bytes.Equal(p.buf[:k], need[:k]) {
			if k == len(need) {
				p.line = p.line[:0]
				p.buf = p.buf[k:]
				p.started = true
			} else {
				if n == 0 {
					p.lineAt = p.at
				}
				p.line = append(p.line, p.buf[:k]...)
				p.buf = p.buf[k:]
				return nil, nil
			}
		} else {
			p.started = true
			if n > 0 {
				// A partial BOM turned out to be data: keep it as the
				// start of the first line, which began when it came.
				p.inLine = true
				p.evBytes += n
			}
		}
	}
	limit := p.MaxEventSize
	if limit <= 0 {
		limit = DefaultMaxEventSize
	}
	for len(p.buf) > 0 {
		if p.sawCR {
			p.sawCR = false
			if p.buf[0] == '\n' {
				// The LF of a CRLF split across reads: it belongs to the
				// line before, which may have dispatched already.
				p.buf = p.buf[1:]
				if !p.justDispatched {
					p.evBytes++
				}
				continue
			}
		}
		p.justDispatched = false
		i := indexEOL(p.buf)
		if !p.inLine {
			p.inLine, p.lineAt = true, p.at
		}
		seg := p.buf
		if i >= 0 {
			seg = p.buf[:i]
		}
		if p.held()+len(seg) > limit {
			return nil, p.fail(limit)
		}
		p.evBytes += len(seg)
		if i < 0 {
			p.line = append(p.line, seg...)
			p.buf = nil
			p.keepData()
			return nil, nil
		}
		// A line that lies whole in the pushed bytes is read in place; one
		// begun in an earlier read is put together in p.line.
		line, direct := seg, len(p.line) == 0
		if !direct {
			p.line = append(p.line, seg...)
			line = p.line
		}
		end := 1
		if p.buf[i] == '\r' {
			if i+1 < len(p.buf) {
				if p.buf[i+1] == '\n' {
					end = 2
				}
			} else {
				p.sawCR = true
			}
		}
		p.buf = p.buf[i+end:]
		p.evBytes += end
		lineAt := p.lineAt
		p.inLine = false
		ev := p.processLine(line, direct, lineAt, end)
		p.line = p.line[:0]
		if ev != nil {
			return ev, nil
		}
	}
	p.keepData()
	return nil, nil
}

// indexEOL returns the index of the first CR or LF in b, or -1.
func indexEOL(b []byte) int {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return bytes.IndexByte(b, '\r')
	}
	if j := bytes.IndexByte(b[:i], '\r'); j >= 0 {
		return j
	}
	return i
}

// keepData copies a data line read in place into the data buffer: the
// pushed bytes are used up, and the caller may reuse them.
func (p *Parser) keepData() {
	if p.inPlace {
		p.data = append(append(p.data, p.dataRef...), '\n')
		p.inPlace, p.dataRef = false, nil
	}
}

// held is what the pending event holds in memory: every buffer that grows
// with the input counts against the limit.
func (p *Parser) held() int {
	n := len(p.line) + len(p.data) + len(p.evType) + len(p.idBuf)
	if p.inPlace {
		n += len(p.dataRef) + 1 // as it will be held, with its LF
	}
	return n
}

func (p *Parser) fail(limit int) error {
	p.err = fmt.Errorf("%w: one event held more than %d bytes", ErrEventTooLarge, limit)
	p.buf, p.line, p.data, p.evType, p.dataRef, p.inPlace = nil, nil, nil, nil, nil, false
	return p.err
}

// processLine interprets one complete line and returns an event to hand to
// the caller, if the line produced one.
// direct says that line lies in the pushed bytes rather than in p.line.
func (p *Parser) processLine(line []byte, direct bool, at time.Time, eol int) *Event {
	if len(line) == 0 {
		ev := p.dispatch()
		p.justDispatched = p.sawCR
		return ev
	}
	if line[0] == ':' {
		text := line[1:]
		if len(text) > 0 && text[0] == ' ' {
			text = text[1:]
		}
		p.ev = Event{Kind: KindComment, Data: text, FirstByte: at, Dispatched: p.at, Size: len(line) + eol}
		if !p.pending {
			p.evBytes = 0
		}
		return &p.ev
	}
	if !p.pending {
		p.pending = true
		p.evStart = at
	}
	field, value := line, line[:0]
	if c := bytes.IndexByte(line, ':'); c >= 0 {
		field, value = line[:c], line[c+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(field) {
	case "event":
		p.evType = append(p.evType[:0], value...)
	case "data":
		switch {
		case !p.hasData && direct:
			// The event's first data line, in place: an event of one
			// data line (most are) is handed out without a copy.
			p.dataRef, p.inPlace = value, true
		default:
			p.keepData()
			p.data = append(p.data, value...)
			p.data = append(p.data, '\n')
		}
		p.hasData = true
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			p.idBuf = append(p.idBuf[:0], value...)
			p.gotID = true
		}
	case "retry":
		if n, ok := digits(value); ok {
			p.retry, p.hasRetry = time.Duration(n)*time.Millisecond, true
		}
	default:
		if p.KeepTrailer && len(p.trailer)+len(line) < MaxTrailer {
			p.trailer = append(append(p.trailer, line...), '\n')
		}
	}
	return nil
}

// MaxRetry caps the reconnection time a retry field sets: a day. A larger
// value reads as MaxRetry.
const MaxRetry = 24 * time.Hour

// maxRetry is MaxRetry in ms.
const maxRetry = int64(MaxRetry / time.Millisecond)

// digits parses a retry value: ASCII digits only, any length, capped.
func digits(b []byte) (int64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		if n < maxRetry {
			n = n*10 + int64(c-'0')
		}
	}
	return min(n, maxRetry), true
}

// dispatch applies the WHATWG dispatch steps for a blank line.
func (p *Parser) dispatch() *Event {
	size := p.evBytes
	p.evBytes = 0
	if !p.pending {
		return nil
	}
	p.pending = false
	p.lastID = append(p.lastID[:0], p.idBuf...)
	gotID := p.gotID
	p.gotID = false
	if !p.hasData {
		p.evType = p.evType[:0]
		return nil
	}
	data := p.data
	if p.inPlace {
		data = p.dataRef
		p.inPlace, p.dataRef = false, nil
	} else if n := len(data); n > 0 && data[n-1] == '\n' {
		data = data[:n-1]
	}
	p.ev = Event{
		Kind:       KindEvent,
		Type:       p.evType,
		Data:       data,
		ID:         p.lastID,
		HasID:      gotID,
		FirstByte:  p.evStart,
		Dispatched: p.at,
		Size:       size,
	}
	// The slices handed out stay valid until the next Next: reuse starts
	// by truncation, and append only overwrites once the caller returns.
	p.trailer = p.trailer[:0]
	p.data = p.data[:0]
	p.hasData = false
	p.evType = p.evType[:0]
	return &p.ev
}
