package probe

import (
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

// The verdicts. Pass, StaleOK, NotStale and NotSupported are not
// failures.
const (
	VerdictPass           Verdict = "pass"
	VerdictDuplicate      Verdict = "duplicate"
	VerdictMissed         Verdict = "missed"
	VerdictRestarted      Verdict = "restarted"
	VerdictMismatch       Verdict = "mismatch"
	VerdictUndefinedStale Verdict = "undefined_stale"
	VerdictStaleOK        Verdict = "stale_ok"
	// VerdictNotStale: the id the stale drill was given is one the server
	// still has: it resumed from it as from any id (the event after it
	// came next). The drill's id was not stale; nothing is known of how
	// the server answers a stale one.
	VerdictNotStale     Verdict = "not_stale"
	VerdictNotSupported Verdict = "not_supported"
	// VerdictNotExercised: the stream ended before the drill could drop
	// it; nothing was resumed, so nothing is known.
	VerdictNotExercised Verdict = "not_exercised"
	// VerdictUnsendableID: the server's event id holds a byte no HTTP
	// header may carry (SSE allows it), so no client can resume from it.
	VerdictUnsendableID Verdict = "unsendable_id"
	// VerdictCrossStream: a resumed stream carried a message of another
	// stream (MCP: progress for another token, the response to another
	// request), which a resume must never replay.
	VerdictCrossStream Verdict = "cross_stream"
	// VerdictReordered: after a resume, the events came out of order,
	// each once (MCP's progress went back to a value not seen before: an
	// event store that sorts its ids wrongly).
	VerdictReordered Verdict = "reordered"
	// VerdictCancelledOnDrop: the call ended in an error after the
	// connection dropped, the server having cancelled it: 2025-11-25 says
	// a disconnection SHOULD NOT be taken as the client cancelling.
	VerdictCancelledOnDrop Verdict = "cancelled_on_drop"
	// VerdictLeftOpen: after the call's response, the resumed stream
	// stayed open (the server SHOULD close it): a client that waits for
	// the close waits forever.
	VerdictLeftOpen Verdict = "left_open"
	// VerdictNone counts, among a drill's runs by verdict, those that
	// ended before any verdict (a 5xx, a timeout before the drop): a
	// failure. No record carries it.
	VerdictNone Verdict = "none"
)

// Failed reports whether the verdict names a resume bug.
func (v Verdict) Failed() bool {
	switch v {
	case VerdictDuplicate, VerdictMissed, VerdictRestarted, VerdictMismatch, VerdictUndefinedStale, VerdictNotExercised, VerdictUnsendableID, VerdictCrossStream,
		VerdictReordered, VerdictCancelledOnDrop, VerdictTaskCancelled, VerdictResultUnreachable, VerdictTaskLost, VerdictNone:
		return true
	}
	return false
}

// Defaults of the drills.
const (
	// DefaultErrorEvent and DefaultResetEvent are the event types of a
	// defined answer to a stale id: an error event, or a reset marker.
	DefaultErrorEvent = "error"
	DefaultResetEvent = "reset"

	DefaultDropAfter = 3
	DefaultRewind    = 3
)

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
	// Away is how long the client stays away after its own drop before it
	// resumes (a client that lost its network for a while, or came back
	// to a call later); 0 resumes at once.
	Away time.Duration
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
	// a stale id (defaults DefaultErrorEvent and DefaultResetEvent).
	ErrorEvent, ResetEvent string
	// StaleHeaders are response headers that name the loss; nil means
	// DefaultStaleHeaders.
	StaleHeaders []HeaderMatch
	// MaxReconnects bounds the reconnects after drops by the server; 0
	// means resumeclient.DefaultMaxReconnects.
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
