package probe

import (
	"fmt"
)

// replayWindow is how many events of the answer the replay check keeps
// (their hashes, 4 bytes each): a replay is compared with what the
// client had up to there, and counted past it.
const replayWindow = 8192

// replayCheck judges the resumes of a dialect whose resume replays the
// answer from its start (dialect.Replay: the AI SDK's resumable streams).
// The events carry no ids, so an event is known by its position in the
// answer and a hash of its type and data: the answer as the client has it
// (each event once) is kept as hashes, and each resumed connection is
// compared with it from where it started (the start, for a replay). What
// a resume brings back that the client already had is a replay the client
// drops (counted, not a defect); a part skipped is a hole (missed), a part
// sent twice a repeat (duplicate), different text at a part the client
// had a new generation (restarted). Only what a resume brought back is
// judged.
type replayCheck struct {
	// answer holds the hashes of the answer's events by position (the
	// first replayWindow), the low bit set for a content chunk.
	answer pages[uint32]
	n      int // events of the answer so far (past the window too)
	// pos is where the current resumed connection is in the answer: the
	// position its next event should match; -1 before its first event.
	pos int
	// how the current resumed connection started: replayed from the
	// start, continued from the cut, or replayed from a part in the
	// middle; diverged: its text differed from the answer's, and it is
	// no longer compared.
	how      replayStart
	diverged bool

	resumes, fromStart, continued int
	replayed, duplicates, missed  int
	// lastReplayed is how many events the last resumed connection
	// brought back that the client had; lastHad how many it had then.
	lastReplayed, lastHad int
	// done: the dialect's Done part came (the answer was complete).
	done    bool
	verdict Verdict
	detail  string
	show    func(string) string
}

type replayStart uint8

const (
	replayFromStart replayStart = iota + 1
	replayFromCut
	replayFromMiddle
)

func newReplayCheck(show func(string) string) *replayCheck {
	return &replayCheck{pos: -1, show: show}
}

// flag keeps the most severe failing verdict, as resumeCheck.flag.
func (c *replayCheck) flag(v Verdict, detail string) {
	rank := map[Verdict]int{VerdictDuplicate: 1, VerdictMissed: 2, VerdictRestarted: 3, VerdictMismatch: 4}
	if rank[v] > rank[c.verdict] {
		c.verdict, c.detail = v, detail
	}
}

// key is what the check keeps of an event: its hash, the low bit set for
// a content chunk.
func replayKey(typ, data []byte, text bool) uint32 {
	h := hash32(typ, data) &^ 1
	if text {
		h |= 1
	}
	return h
}

// add appends a new event of the answer.
func (c *replayCheck) add(k uint32) {
	if c.n < replayWindow {
		c.answer.append(k)
	}
	c.n++
}

// at is the key of the answer's event at position p, and whether the
// window holds it.
func (c *replayCheck) at(p int) (uint32, bool) {
	if p < 0 || p >= min(c.n, replayWindow) {
		return 0, false
	}
	return *c.answer.at(p), true
}

// find returns the first position in [from, to) whose key is k; -1 none.
func (c *replayCheck) find(k uint32, from, to int) int {
	for p := max(from, 0); p < min(to, c.n, replayWindow); p++ {
		if *c.answer.at(p) == k {
			return p
		}
	}
	return -1
}

// reconnected starts a new resumed connection.
func (c *replayCheck) reconnected() {
	c.resumes++
	c.pos, c.how, c.diverged = -1, 0, false
	c.lastReplayed, c.lastHad = 0, c.n
}

// live takes an event of the stream before its first resume: it is the
// answer, never judged.
func (c *replayCheck) live(k uint32, done bool) {
	c.add(k)
	c.done = c.done || done
}

// event checks an event of a resumed connection (begin: the dialect's
// start of an answer); it returns true when it is one the client already
// had, which the user's stream does not show again.
func (c *replayCheck) event(k uint32, begin, done bool) bool {
	if c.pos < 0 {
		c.start(k, begin)
	}
	if c.diverged || c.pos >= c.n {
		c.add(k)
		c.pos++
		c.done = c.done || done
		return false
	}
	want, ok := c.at(c.pos)
	switch {
	case !ok:
		// Past the window: counted as the replay it should be, not
		// compared.
	case want != k:
		return c.differs(k)
	}
	c.pos++
	c.replayed++
	c.duplicates++
	c.lastReplayed++
	return true
}

// start places the first event of a resumed connection: a replay from the
// start (the dialect's begin part), a replay from a part in the middle (it
// matches one the client had), or the part after the cut.
func (c *replayCheck) start(k uint32, begin bool) {
	switch q := c.find(k, 0, c.n); {
	case begin:
		c.pos, c.how = 0, replayFromStart
		c.fromStart++
	case q > 0:
		c.pos, c.how = q, replayFromMiddle
		c.flag(VerdictDuplicate, fmt.Sprintf("the resume replayed the answer from its part %d, neither from the start nor after the %d parts the client had: the client cannot tell which parts are new", q+1, c.n))
	default:
		c.pos, c.how = c.n, replayFromCut
		c.continued++
	}
}

// differs judges an event of a replay that is not the part the client had
// at its position: a part skipped (a hole: the next matches further on), a
// part sent again (it matches an earlier one), or other content (a new
// generation when it is text, or a part the client had with other text).
func (c *replayCheck) differs(k uint32) bool {
	if q := c.find(k, c.pos+1, c.n); q > 0 {
		lost := q - c.pos
		c.missed += lost
		c.flag(VerdictMissed, fmt.Sprintf("the replay skipped %d part(s) the client had (parts %d to %d of %d): a hole in the replayed answer", lost, c.pos+1, q, c.n))
		c.pos = q + 1
		c.replayed++
		c.duplicates++
		c.lastReplayed++
		return true
	}
	if q := c.find(k, 0, c.pos); q >= 0 {
		c.flag(VerdictDuplicate, fmt.Sprintf("the replay sent part %d again at part %d: a repeat in the replayed answer", q+1, c.pos+1))
		c.replayed++
		c.duplicates++
		return true
	}
	want, _ := c.at(c.pos)
	if k&1 == 1 || want&1 == 1 {
		c.flag(VerdictRestarted, fmt.Sprintf("the replay's part %d differs from the one the client had (%d parts): the answer was generated again, not replayed (different text for the same parts)", c.pos+1, c.n))
		c.diverged = true
		c.add(k)
		return false
	}
	// Metadata that differs (a new message id): counted with the
	// replay, compared no further than its place.
	c.pos++
	c.replayed++
	c.lastReplayed++
	return false
}

// ended judges the end of a resumed connection that ended as the answer
// ends: a replay that stopped before it reached what the client had is a
// hole.
func (c *replayCheck) ended() {
	if c.pos < 0 || c.diverged || c.pos >= c.lastHad || c.how == replayFromCut {
		return
	}
	lost := c.lastHad - c.pos
	c.missed += lost
	c.flag(VerdictMissed, fmt.Sprintf("the replay ended after %d of the %d parts the client had: the rest of the answer never came", c.pos, c.lastHad))
}

// passDetail says how the resumes brought the answer back when every
// part came once and in order.
func (c *replayCheck) passDetail(byServer int) string {
	why := fmt.Sprintf("resumed %d time(s)", c.resumes)
	if byServer > 0 {
		why = fmt.Sprintf("the server dropped the stream %d time(s); resumed %d time(s)", byServer, c.resumes)
	}
	switch {
	case c.fromStart == c.resumes:
		return fmt.Sprintf("%s; each replayed the answer from its start (%d part(s) the client had, which it drops), then the rest, every part once, in order", why, c.replayed)
	case c.continued == c.resumes:
		return fmt.Sprintf("%s; each continued from the cut (no part the client had came again): a hole there cannot be seen without ids", why)
	}
	return fmt.Sprintf("%s: %d replayed the answer from its start, %d continued from the cut; every part once, in order", why, c.fromStart, c.continued)
}
