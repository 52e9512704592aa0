package probe

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// checkWindow is how many of the newest ids the resume check remembers:
// a re-delivery of an older id is not recognised, and the check's memory
// stays bounded whatever the stream's length. rewindIDs is how many of
// them it keeps as text, to resume from (an id over maxRewindID bytes is
// not kept).
const (
	checkWindow = 1024
	rewindIDs   = 64
	maxRewindID = 512
)

// seenEvent is what the check knows of an event: its position and a hash
// of its type and data (never the data itself).
type seenEvent struct {
	pos  int
	hash uint32
}

// idEntry is what the window keeps of an event at a position: its id's
// key (idKey) and its data's hash (32 bits: it tells a re-delivery with
// other data from the same one, and needs no more).
type idEntry struct {
	key  uint64
	hash uint32
}

// idKey is what the check knows an id by: an id written as a
// non-negative integer in its shortest form (no sign, no leading zero)
// is its own value, below 1<<63; any other id is its 64-bit hash with the
// top bit set. So the window keeps an integer id's value without a field
// for it (value), and an integer id is known without hashing it. v is
// intID(id).
func idKey(id string, v int64) uint64 {
	if v >= 0 && id[0] != '+' && (id[0] != '0' || len(id) == 1) {
		return uint64(v)
	}
	return fnvAdd(uint64(fnvOffset64), id) | 1<<63
}

// keyOf is id's key.
func keyOf(id string) uint64 { return idKey(id, intID(id)) }

// value is the integer an entry's id is, or -1.
func (e idEntry) value() int64 {
	if e.key >= 1<<63 {
		return -1
	}
	return int64(e.key)
}

// resumeCheck follows the ids of a stream across reconnects and names what
// a resume did wrong. Ids are kept as 64-bit keys (idKey), in a window of
// the newest checkWindow (16 bytes each, with the data's hash).
type resumeCheck struct {
	// window holds the events by position mod checkWindow; it grows as
	// ids come, up to its size (a short stream pays for its own ids
	// only), then is a ring.
	window pages[idEntry]
	// While every id so far is an integer one above the one before
	// (counting), an event's key is base plus its position: the window
	// keeps only the data hashes (hashes, 4 bytes an event, not 16) until
	// an id breaks the count.
	base   uint64
	hashes pages[uint32]
	// seen indexes the window by id hash (the position); nil until an id
	// has to be looked up. A new integer id above every integer id so far
	// (top) cannot have come before, so a stream of rising integer ids
	// needs no index until a resume.
	seen map[uint64]int
	top  int64 // the largest integer id the window took; -1 none
	// texts holds the id texts by position mod rewindIDs, for the
	// duplicate drill's rewound resume only (rewind); nil otherwise.
	texts   []string
	gone    int64     // the largest integer id the window let go; -1 none
	n       int       // positions so far
	firstID string    // the first id of the stream
	first0  seenEvent // the first event, kept whatever the window evicts
	firstK  uint64    // its id's key
	maxInt  int64     // the largest integer id, when hasInt
	// uncounted says why the ids are not counted for continuity (not
	// integers, not consecutive or repeated on the live stream), for the
	// detail; "" while they count up by one.
	uncounted string
	sentPos   int // position of the id sent on the current connection; -1 unknown
	sentID    string
	// goodResumes counts resumes whose first event came right after the
	// sent id.
	goodResumes int

	// prog is what the check knows of the positions the bodies carry
	// (MCP's progress); nil before the first.
	prog *progress

	replayed, duplicates, missed int
	verdict                      Verdict
	detail                       string
	// show is an id as a detail quotes it (scrubbed, bounded); label the
	// sent cursor as a detail names it ("Last-Event-ID 5").
	show, label func(string) string

	// The flags, together (a bool between words costs a word).
	opaque   bool
	counting bool
	rewind   bool
	hasInt   bool
	first    bool // the next event is the first after a reconnect
	resumed  bool // a resume came: events before it are the live stream's
	repeated bool // an id came twice on the live stream
}

// newResumeCheck returns a check of a stream's ids; rewind keeps the
// newest ids as text, for rewound.
func newResumeCheck(opaque, rewind bool, show, label func(string) string) *resumeCheck {
	return &resumeCheck{opaque: opaque, rewind: rewind, sentPos: -1, show: show, label: label, gone: -1, top: -1}
}

// lookup returns where the id with hash key was seen in the window,
// indexing the window on first use.
func (c *resumeCheck) lookup(key uint64) (seenEvent, bool) {
	if c.counting {
		if key < c.base || key >= c.base+uint64(c.n) || int(key-c.base) < c.n-checkWindow {
			return seenEvent{}, false
		}
		p := int(key - c.base)
		return seenEvent{pos: p, hash: *c.hashes.at(p % checkWindow)}, true
	}
	if c.seen == nil {
		c.seen = make(map[uint64]int, c.window.len())
		for p := max(0, c.n-checkWindow); p < c.n; p++ {
			c.seen[c.window.at(p%checkWindow).key] = p
		}
	}
	p, ok := c.seen[key]
	if !ok {
		return seenEvent{}, false
	}
	return seenEvent{pos: p, hash: c.window.at(p % checkWindow).hash}, true
}

// intID is id's value when it is a non-negative integer, else -1.
func intID(id string) int64 {
	if n, err := strconv.ParseInt(id, 10, 64); err == nil && n >= 0 {
		return n
	}
	return -1
}

// FNV-1a, 64 bits (hash/fnv's New64a), written out: it runs for every
// event, and through hash.Hash it cost an allocation each time.
const (
	fnvOffset64 = 14695981039346656037
	fnvPrime64  = 1099511628211
)

func fnvAdd[T string | []byte](h uint64, b T) uint64 {
	for i := 0; i < len(b); i++ {
		h = (h ^ uint64(b[i])) * fnvPrime64
	}
	return h
}

// hash32 is hash64 folded to 32 bits.
func hash32(typ, data []byte) uint32 {
	h := hash64(typ, data)
	return uint32(h) ^ uint32(h>>32)
}

// hash64 hashes an event's type and data, with a NUL between them.
func hash64(typ, data []byte) uint64 {
	h := fnvAdd(fnvOffset64, typ)
	h *= fnvPrime64 // the NUL: h ^ 0
	return fnvAdd(h, data)
}

// reconnected tells the check that a new connection resumed from id.
func (c *resumeCheck) reconnected(id string) {
	c.sentID, c.first, c.resumed = id, true, true
	c.sentPos = -1
	if s, ok := c.lookup(keyOf(id)); ok {
		c.sentPos = s.pos
	}
}

// flag records a failing verdict; the first, most specific one is kept
// unless a more severe one comes later.
func (c *resumeCheck) flag(v Verdict, detail string) {
	rank := map[Verdict]int{VerdictReordered: 1, VerdictDuplicate: 2, VerdictMissed: 3, VerdictCancelledOnDrop: 4, VerdictRestarted: 5, VerdictMismatch: 6, VerdictCrossStream: 7}
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
	v := intID(id)
	key, h := idKey(id, v), hash32(typ, data)
	if !c.resumed {
		c.live(id, key, h, v)
		return false
	}
	if c.repeated {
		// The ids cannot say where a resume started: the resume is not
		// judged by them (finishResume says so).
		return false
	}
	var s seenEvent
	ok := false
	if v < 0 || v <= c.top {
		s, ok = c.lookup(key)
	}
	if !ok && c.n > 0 && key == c.firstK {
		s, ok = c.first0, true // a restart from the first event, however long ago
	}
	if ok {
		return c.again(id, s, h, first)
	}
	// An integer id above every one so far is new: not a replay from
	// before the window either.
	if v <= c.top && c.beforeWindow(id, first) {
		return true
	}
	c.fresh(id, idEntry{key: key, hash: h}, v, first)
	return false
}

// live takes an event of the stream before its first resume: kept, for
// the resumes to be judged against, and never judged itself (what the
// live stream's ids do is no resume's doing). An id that comes twice, or
// integer ids that do not count up by one, are noted: the resume is then
// judged without them.
func (c *resumeCheck) live(id string, key uint64, h uint32, v int64) {
	if c.n > 0 && !c.repeated && (v < 0 || v <= c.top) {
		if _, ok := c.lookup(key); ok || key == c.firstK {
			c.repeated = true
			c.uncount(fmt.Sprintf("ids repeat on the live stream (%s came twice)", c.show(id)))
		}
	}
	c.remember(id, idEntry{key: key, hash: h}, v)
	if !c.opaque {
		c.gap(id, false)
	}
}

// uncount notes why the ids are not counted for continuity: the first
// reason only.
func (c *resumeCheck) uncount(why string) {
	if c.uncounted == "" {
		c.uncounted = why
	}
}

// again checks the re-delivery of an id the window holds (seen as s):
// where a resume that starts with it started, and whether its data is the
// same; it returns true for an identical re-delivery.
func (c *resumeCheck) again(id string, s seenEvent, h uint32, first bool) bool {
	c.replayed++
	if first {
		c.resumedAt(id, s.pos)
	}
	if s.hash != h {
		c.flag(VerdictMismatch, fmt.Sprintf("id %s arrived again with different data (sent %s)", c.show(id), c.label(c.sentID)))
		return false
	}
	c.duplicates++
	return true
}

// resumedAt judges a resume whose first event is the known id at position
// pos: right after the sent id is a good resume, at or before it a replay.
func (c *resumeCheck) resumedAt(id string, pos int) {
	switch {
	case c.sentPos >= 0 && pos <= c.sentPos:
		c.replayedFrom(id, pos)
	case pos == c.sentPos+1:
		c.goodResumes++
	}
}

// replayedFrom names a resume that started at or before the sent id, at
// position pos: a restart from the first event, or a duplicate.
func (c *resumeCheck) replayedFrom(id string, pos int) {
	switch {
	case pos == 0 && c.sentPos > 0 && c.goodResumes > 0:
		c.flag(VerdictRestarted, fmt.Sprintf("server restarted from the first event (id %s) when sent %s, though it had resumed correctly before: only some ids are honoured", c.show(id), c.label(c.sentID)))
	case pos == 0 && c.sentPos > 0:
		c.flag(VerdictRestarted, fmt.Sprintf("server ignored %s and restarted from the first event (id %s)", c.label(c.sentID), c.show(id)))
	case id == c.sentID:
		c.flag(VerdictDuplicate, fmt.Sprintf("resume replayed id %s again: off-by-one replay (sent %s)", c.show(id), c.label(c.sentID)))
	default:
		c.flag(VerdictDuplicate, fmt.Sprintf("resume replayed id %s again, from before the sent %s", c.show(id), c.label(c.sentID)))
	}
}

// beforeWindow reports an integer id the window no longer holds but has
// already passed (a replay from further back than the check remembers),
// counting it as a re-delivery.
func (c *resumeCheck) beforeWindow(id string, first bool) bool {
	if c.opaque || !c.hasInt {
		return false
	}
	if n, err := strconv.ParseInt(id, 10, 64); err != nil || n > c.gone {
		return false
	}
	c.replayed++
	c.duplicates++
	if first {
		c.flag(VerdictDuplicate, fmt.Sprintf("resume replayed id %s again, from before the sent %s (older than the check's window of %d ids)", c.show(id), c.label(c.sentID), checkWindow))
	}
	return true
}

// fresh takes an id not seen before: a resume that starts with it right
// after the newest id is good; it is remembered, and checked for a gap.
func (c *resumeCheck) fresh(id string, e idEntry, v int64, first bool) {
	if first && c.sentPos >= 0 && c.sentPos == c.n-1 {
		c.goodResumes++
	}
	c.remember(id, e, v)
	if !c.opaque {
		c.gap(id, first)
	}
}

// gap checks a new integer id against the largest one so far. On the
// live stream it notes ids that do not count up by one; after a resume,
// while the live stream's ids counted, ids that skip mean lost events (a
// resume that skipped them). It notes the first id that is not an
// integer.
func (c *resumeCheck) gap(id string, first bool) {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		c.uncount(fmt.Sprintf("ids are not integers, e.g. \"%s\"", c.show(id)))
		return
	}
	if !c.resumed && c.hasInt && n != c.maxInt+1 {
		c.uncount(fmt.Sprintf("ids are not consecutive on the live stream (%d after %d)", n, c.maxInt))
	}
	if c.resumed && c.uncounted == "" && c.hasInt && n < c.maxInt {
		// A new id below the largest: one counted missing came late.
		c.late(fmt.Sprintf("after the resume from %s, id %s came after %d: the events came out of order (each once)", c.label(c.sentID), c.show(id), c.maxInt))
	}
	if c.resumed && c.uncounted == "" && c.hasInt && n > c.maxInt+1 {
		lost := int(n - c.maxInt - 1)
		c.missed += lost
		if first {
			c.flag(VerdictMissed, fmt.Sprintf("resume skipped %d event(s): sent %s, next id was %s", lost, c.label(c.sentID), c.show(id)))
		} else {
			c.flag(VerdictMissed, fmt.Sprintf("ids skip from %d to %d: %d event(s) missing", c.maxInt, n, lost))
		}
	}
	if !c.hasInt || n > c.maxInt {
		c.maxInt, c.hasInt = n, true
	}
}

// remember adds a new id at the next position, forgetting the oldest one
// once the window is full.
func (c *resumeCheck) remember(id string, e idEntry, v int64) {
	if c.n == 0 {
		c.firstID, c.firstK, c.first0 = strings.Clone(id), e.key, seenEvent{pos: 0, hash: e.hash}
		c.counting, c.base = e.key < 1<<63, e.key
		if c.counting {
			// An index a resume before the first id made is empty: while
			// counting, lookups need none (and it would only grow).
			c.seen = nil
		}
	}
	if c.counting && e.key != c.base+uint64(c.n) {
		c.unseq()
	}
	switch {
	case c.counting && c.n < checkWindow:
		c.hashes.append(e.hash)
	case c.counting:
		c.gone = max(c.gone, int64(c.base)+int64(c.n-checkWindow))
		*c.hashes.at(c.n % checkWindow) = e.hash
	case c.n < checkWindow:
		c.window.append(e)
	default:
		old := c.window.at(c.n % checkWindow)
		if p, ok := c.seen[old.key]; ok && p == c.n-checkWindow {
			delete(c.seen, old.key)
		}
		c.gone = max(c.gone, old.value())
		*old = e
	}
	c.top = max(c.top, v)
	if c.seen != nil && !c.counting {
		c.seen[e.key] = c.n
	}
	if c.rewind {
		if len(id) > maxRewindID {
			id = ""
		}
		id = strings.Clone(id) // the event's memory, maybe
		if c.n < rewindIDs {
			c.texts = append(c.texts, id)
		} else {
			c.texts[c.n%rewindIDs] = id
		}
	}
	c.n++
}

// unseq ends the counting mode: the window gets every entry's key.
func (c *resumeCheck) unseq() {
	lo := max(0, c.n-checkWindow)
	for i := range min(c.n, checkWindow) {
		p := lo + (i-lo%checkWindow+checkWindow)%checkWindow // the position in slot i
		c.window.append(idEntry{key: c.base + uint64(p), hash: *c.hashes.at(i)})
	}
	c.counting, c.hashes = false, pages[uint32]{}
}

// follows reports whether cursor is the id that comes right after sent:
// the next one on the stream so far, or, for integer ids, sent+1.
func (c *resumeCheck) follows(sent, cursor string) bool {
	s, okS := c.lookup(keyOf(sent))
	n, okN := c.lookup(keyOf(cursor))
	if okS && okN {
		return n.pos == s.pos+1
	}
	if c.opaque {
		return false
	}
	a, errA := strconv.ParseInt(sent, 10, 64)
	b, errB := strconv.ParseInt(cursor, 10, 64)
	return errA == nil && errB == nil && a < b && b-a == 1
}

// idAt returns the id at position pos, if it is still known as text.
func (c *resumeCheck) idAt(pos int) (string, bool) {
	if !c.rewind || pos < 0 || pos >= c.n || pos < c.n-rewindIDs {
		return "", false
	}
	id := c.texts[pos%rewindIDs]
	return id, id != ""
}

// rewound returns an id k events before the newest one, for the duplicate
// drill's last resume: always behind the newest, and never the id the
// drill already resumed from twice (avoid), where the stream allows.
func (c *resumeCheck) rewound(newest, avoid string, k int) string {
	s, ok := c.lookup(keyOf(newest))
	if !ok {
		return newest
	}
	lo := max(0, c.n-rewindIDs)
	pos := min(max(lo, s.pos-k), max(lo, s.pos-1))
	if id, ok := c.idAt(pos); ok && id == avoid {
		switch {
		case pos-1 >= lo:
			pos--
		case pos+1 < s.pos:
			pos++
		}
	}
	if id, ok := c.idAt(pos); ok {
		return id
	}
	return newest
}

// crossStream flags a message of another stream on a resumed connection
// (its event id, when it had one).
func (c *resumeCheck) crossStream(id string) {
	what := "a message"
	if id != "" {
		what = "the event " + c.show(id)
	}
	c.flag(VerdictCrossStream, fmt.Sprintf("after the resume from %s, %s belonged to another stream (progress for another token, or the response to another request): a resume must replay only the stream it resumes", c.label(c.sentID), what))
}

// progress is what the check knows of the positions the bodies carry
// (MCP's progress, which must grow along a call): the first, the largest
// and the last one, the step between two on the live stream while it
// stays the same, and the values seen (a bounded set).
type progress struct {
	first, max, last, step float64
	n                      int
	steady                 bool
	seen                   map[float64]struct{}
}

// maxSeenProgress bounds the progress values a check remembers.
const maxSeenProgress = checkWindow

// seq checks the position a new event's body carries (MCP's progress).
// The live stream's positions are kept, never judged; after a resume, a
// position back at or before the first one means the server started the
// work over (restarted); one seen before, that it sent part of the work
// again under new ids (duplicate); one behind the largest but new, that
// the events came out of order (reordered: a store that sorts its ids
// wrongly); and, while the live stream counted by one step, a jump past
// the next step, that events were lost (missed).
func (c *resumeCheck) seq(v float64, resumed bool) {
	p := c.prog
	if p == nil {
		c.prog = &progress{first: v, max: v, last: v, n: 1, steady: true, seen: map[float64]struct{}{v: {}}}
		return
	}
	_, seen := p.seen[v]
	num := func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
	switch {
	case !resumed:
		if d := v - p.last; p.n == 1 && d > 0 {
			p.step = d
		} else if d != p.step || d <= 0 {
			p.steady = false
		}
	case v <= p.first:
		c.flag(VerdictRestarted, fmt.Sprintf("after the resume from %s, progress started over at %s (it had reached %s): the server ran the work again",
			c.label(c.sentID), num(v), num(p.max)))
	case seen:
		c.flag(VerdictDuplicate, fmt.Sprintf("after the resume from %s, progress went back from %s to %s under new event ids: part of the work was sent again",
			c.label(c.sentID), num(p.max), num(v)))
	case v < p.max:
		detail := fmt.Sprintf("after the resume from %s, progress %s came after %s: the events came out of order (each once)", c.label(c.sentID), num(v), num(p.max))
		if c.idsCount() {
			c.flag(VerdictReordered, detail) // the ids' check counts what was missed
		} else {
			c.late(detail)
		}
	case p.steady && p.step > 0 && v > p.max+1.5*p.step && !c.idsCount():
		// (While the ids count up by one, their check names the gap.)
		lost := int(math.Round((v-p.max)/p.step)) - 1
		c.missed += lost
		c.flag(VerdictMissed, fmt.Sprintf("after the resume from %s, progress jumped from %s to %s: %d event(s) missing", c.label(c.sentID), num(p.max), num(v), lost))
	}
	p.n++
	p.last = v
	p.max = max(p.max, v)
	if len(p.seen) < maxSeenProgress {
		p.seen[v] = struct{}{}
	}
}

// idsCount reports whether the ids themselves are checked for
// continuity (integers counting up by one, not checked as opaque).
func (c *resumeCheck) idsCount() bool { return !c.opaque && c.uncounted == "" && c.hasInt }

// late takes an event counted missing that came after all, out of order:
// one fewer missed, and once none is, the run's events were all there,
// reordered.
func (c *resumeCheck) late(detail string) {
	if c.missed > 0 {
		c.missed--
	}
	if c.missed == 0 && c.verdict == VerdictMissed {
		c.verdict, c.detail = "", ""
	}
	c.flag(VerdictReordered, detail)
}
