package probe

import (
	"fmt"
	"hash/fnv"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Drill names.
const (
	DrillNone      = "none"
	DrillDrop      = "drop"
	DrillDuplicate = "duplicate"
	DrillStale     = "stale"
)

// DrillNames lists the drills in their fixed order.
var DrillNames = []string{DrillDrop, DrillDuplicate, DrillStale}

// Verdict is the result of a resume drill.
type Verdict string

// The verdicts. Pass, StaleOK and NotSupported are not failures.
const (
	VerdictPass           Verdict = "pass"
	VerdictDuplicate      Verdict = "duplicate"
	VerdictMissed         Verdict = "missed"
	VerdictRestarted      Verdict = "restarted"
	VerdictMismatch       Verdict = "mismatch"
	VerdictUndefinedStale Verdict = "undefined_stale"
	VerdictStaleOK        Verdict = "stale_ok"
	VerdictNotSupported   Verdict = "not_supported"
	// VerdictNotExercised: the stream ended before the drill could drop
	// it; nothing was resumed, so nothing is known.
	VerdictNotExercised Verdict = "not_exercised"
)

// Failed reports whether the verdict names a resume bug.
func (v Verdict) Failed() bool {
	switch v {
	case VerdictDuplicate, VerdictMissed, VerdictRestarted, VerdictMismatch, VerdictUndefinedStale, VerdictNotExercised:
		return true
	}
	return false
}

// Defaults of the drills.
const (
	DefaultDropAfter = 3
	DefaultRewind    = 3
	DefaultStaleID   = "streamprobe-stale-id-0"
	// DefaultStaleCursor is the stale drill's cursor for dialects that
	// resume by a sequence number: far ahead of any stream.
	DefaultStaleCursor   = "999999999"
	DefaultMaxReconnects = 5
)

// HeaderMatch is a response header, and its value, that names a loss of
// history in answer to a stale id.
type HeaderMatch struct{ Name, Value string }

// DefaultStaleHeaders are the headers that count as a defined answer to a
// stale id: Mercure's hub answers with "earliest".
var DefaultStaleHeaders = []HeaderMatch{{"Last-Event-ID", "earliest"}, {"Mercure-Last-Event-ID", "earliest"}}

// Drill configures a resume drill. The zero value is no drill.
type Drill struct {
	// Name is drop, duplicate or stale; empty means none.
	Name string
	// DropAfter is how many content chunks a connection reads before the
	// client drops it; 0 means DefaultDropAfter.
	DropAfter int
	// DropAt, when > 0, drops the first connection this long after the
	// request started instead (it may land mid-event).
	DropAt time.Duration
	// Rewind is how many events back the duplicate drill's last resume
	// starts; 0 means DefaultRewind.
	Rewind int
	// StaleID is the id the stale drill resumes with; empty means
	// DefaultStaleID.
	StaleID string
	// OpaqueIDs checks ids for uniqueness and position only, instead of
	// integer continuity.
	OpaqueIDs bool
	// ErrorEvent and ResetEvent are the event types of a defined answer to
	// a stale id (defaults "error" and "reset").
	ErrorEvent, ResetEvent string
	// StaleHeaders are response headers that name the loss; nil means
	// DefaultStaleHeaders.
	StaleHeaders []HeaderMatch
	// MaxReconnects bounds the reconnects after drops by the server; 0
	// means DefaultMaxReconnects.
	MaxReconnects int
}

func (d Drill) name() string {
	if d.Name == "" {
		return DrillNone
	}
	return d.Name
}

func orInt(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

func orStr(v, def string) string {
	if v != "" {
		return v
	}
	return def
}

// Reconnect is the timeline of one reconnect.
type Reconnect struct {
	SentID     string    // the Last-Event-ID sent
	Drop       time.Time // the connection was dropped (by the client or the server)
	Start      time.Time // the new request was started
	Headers    time.Time // its response headers arrived
	FirstChunk time.Time // its first new content chunk arrived
	ByServer   bool      // the server dropped the connection
}

// seenEvent is what the drill keeps of an event: its position and a hash
// of its type and data (never the data itself).
type seenEvent struct {
	pos  int
	hash [16]byte
}

// resumeCheck follows the ids of a stream across reconnects and names what
// a resume did wrong.
type resumeCheck struct {
	opaque  bool
	seen    map[string]seenEvent
	order   []string
	maxInt  int64
	hasInt  bool
	sentPos int // position of the id sent on the current connection; -1 unknown
	sentID  string
	first   bool // the next event is the first after a reconnect

	replayed, duplicates, missed int
	verdict                      Verdict
	detail                       string
	label                        func(string) string
}

func newResumeCheck(opaque bool, label func(string) string) *resumeCheck {
	return &resumeCheck{opaque: opaque, seen: map[string]seenEvent{}, sentPos: -1, label: label}
}

// cursorLabel names a resume cursor as the dialect sends it.
func cursorLabel(dialect string) func(string) string {
	if dialect == "openai-responses" {
		return func(id string) string { return "starting_after=" + id }
	}
	return func(id string) string { return "Last-Event-ID: " + id }
}

func eventHash(typ, data []byte) [16]byte {
	h := fnv.New128a()
	h.Write(typ)
	h.Write([]byte{0})
	h.Write(data)
	var out [16]byte
	h.Sum(out[:0])
	return out
}

// reconnected tells the check that a new connection resumed from id.
func (c *resumeCheck) reconnected(id string) {
	c.sentID, c.first = id, true
	c.sentPos = -1
	if s, ok := c.seen[id]; ok {
		c.sentPos = s.pos
	}
}

// flag records a failing verdict; the first, most specific one is kept
// unless a more severe one comes later.
func (c *resumeCheck) flag(v Verdict, detail string) {
	rank := map[Verdict]int{VerdictDuplicate: 1, VerdictMissed: 2, VerdictRestarted: 3, VerdictMismatch: 4}
	if rank[v] > rank[c.verdict] {
		c.verdict, c.detail = v, detail
	}
}

// event checks one dispatched event; it returns true when the event is an
// identical re-delivery that the user's stream must not show again.
func (c *resumeCheck) event(id string, hasID bool, typ, data []byte) bool {
	if !hasID || id == "" {
		// Only an event with an id can show where the resume started.
		return false
	}
	first := c.first
	c.first = false
	h := eventHash(typ, data)
	if s, ok := c.seen[id]; ok {
		c.replayed++
		if first && c.sentPos >= 0 && s.pos <= c.sentPos {
			switch {
			case s.pos == 0 && c.sentPos > 0:
				c.flag(VerdictRestarted, fmt.Sprintf("server ignored %s and restarted from the first event (id %s)", c.label(c.sentID), id))
			case id == c.sentID:
				c.flag(VerdictDuplicate, fmt.Sprintf("resume replayed id %s again: off-by-one replay (sent %s)", id, c.label(c.sentID)))
			default:
				c.flag(VerdictDuplicate, fmt.Sprintf("resume replayed id %s again, from before the sent %s", id, c.label(c.sentID)))
			}
		}
		if s.hash != h {
			c.flag(VerdictMismatch, fmt.Sprintf("id %s arrived again with different data (sent %s)", id, c.label(c.sentID)))
			return false
		}
		c.duplicates++
		return true
	}
	c.seen[id] = seenEvent{pos: len(c.order), hash: h}
	c.order = append(c.order, id)
	if c.opaque {
		return false
	}
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return false
	}
	if c.hasInt && n > c.maxInt+1 {
		lost := int(n - c.maxInt - 1)
		c.missed += lost
		if first {
			c.flag(VerdictMissed, fmt.Sprintf("resume skipped %d event(s): sent %s, next id was %s", lost, c.label(c.sentID), id))
		} else {
			c.flag(VerdictMissed, fmt.Sprintf("ids skip from %d to %d: %d event(s) missing", c.maxInt, n, lost))
		}
	}
	if !c.hasInt || n > c.maxInt {
		c.maxInt, c.hasInt = n, true
	}
	return false
}

// rewound returns the id k events before id in the order they were first
// seen (the first id when there are fewer).
func (c *resumeCheck) rewound(id string, k int) string {
	s, ok := c.seen[id]
	if !ok || len(c.order) == 0 {
		return id
	}
	return c.order[max(0, s.pos-k)]
}

// staleAnswer classifies the answer to a stale id from the response
// headers; it returns "" when the headers name nothing.
func staleHeaderAnswer(h http.Header, want []HeaderMatch) string {
	for _, m := range want {
		if v := h.Get(m.Name); v != "" && strings.EqualFold(v, m.Value) {
			return "header " + m.Name + ": " + m.Value
		}
	}
	return ""
}

// finishDrill fills the resume fields of the record.
func (r *run) finishDrill(s Scores) {
	rec, tl := &r.rec, &r.tl
	rec.Reconnects = len(tl.Reconnects)
	var excluded time.Duration
	for _, span := range tl.ResumeSpans() {
		excluded += span.End.Sub(span.Drop)
	}
	for _, rc := range tl.Reconnects {
		if !rc.Headers.IsZero() {
			rec.ReconnectMs = maxPtr(rec.ReconnectMs, ms(rc.Headers.Sub(rc.Drop)))
		}
		if !rc.FirstChunk.IsZero() {
			rec.ResumeHandshakeMs = maxPtr(rec.ResumeHandshakeMs, ms(rc.FirstChunk.Sub(rc.Start)))
		}
	}
	if s.Tail != nil && rec.Resumed {
		rec.TailExclReconnectMs = round3(ptr(*s.Tail - ms(excluded)))
	}
	if r.check != nil {
		c := r.check
		rec.Replayed, rec.Duplicates, rec.Missed = c.replayed, c.duplicates, c.missed
		switch {
		case rec.Verdict != "":
		case r.stale != "":
			rec.Verdict, rec.StaleAnswer = VerdictStaleOK, r.stale
			rec.ResumeDetail = fmt.Sprintf("stale %s answered by %s", cursorLabel(r.t.Dialect)(rec.LastEventIDSent), r.stale)
		case c.verdict != "":
			rec.Verdict, rec.ResumeDetail = c.verdict, c.detail
		case !rec.Resumed && rec.Outcome == Success:
			rec.Verdict = VerdictNotExercised
			rec.ResumeDetail = fmt.Sprintf("the stream ended after %d content chunks, before the %s drill could drop it: nothing was resumed", rec.Chunks, r.drill)
		case rec.Resumed && rec.Outcome == Success:
			rec.Verdict = VerdictPass
			rec.ResumeDetail = fmt.Sprintf("resumed %d time(s) from %s; every event once, in order", rec.Reconnects, cursorLabel(r.t.Dialect)(rec.LastEventIDSent))
		}
	}
}

func maxPtr(p *float64, v float64) *float64 {
	if p == nil || v > *p {
		return ptr(v)
	}
	return p
}

// ResumeSpan is the time a user waited on a resume: from the first drop
// after the last new chunk to the first new chunk after it (several
// reconnects that bring only re-deliveries make one span).
type ResumeSpan struct {
	Drop, End time.Time
	Chunk     int // index in Chunks of the first new chunk after it
	Handshake time.Duration
}

// ResumeSpans returns the timeline's resume spans, in order.
func (tl *Timeline) ResumeSpans() []ResumeSpan {
	var out []ResumeSpan
	var pending time.Time
	for i, rc := range tl.Reconnects {
		if pending.IsZero() {
			pending = rc.Drop
		}
		if rc.FirstChunk.IsZero() {
			continue
		}
		out = append(out, ResumeSpan{Drop: pending, End: rc.FirstChunk, Chunk: tl.Breaks[i], Handshake: rc.FirstChunk.Sub(rc.Start)})
		pending = time.Time{}
	}
	return out
}
