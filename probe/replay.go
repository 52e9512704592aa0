package probe

import (
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/resumeclient"
)

// The engine's side of a resumer that replays the answer from its start
// (dialect.Replay): its events carry no cursor, the resume sends none, and
// what a resume brings back is judged by position and hash (replayCheck).
// Each function here is called where the cursor resumes take their own
// path.

// replayEvent takes an event into the replay check; it returns true for
// one the client already had (a replay it drops).
func (r *run) replayEvent(ev *resumeclient.Event, ch *dialect.Chunk) bool {
	if ch.Kind == dialect.Liveness || ch.Unrelated {
		return false
	}
	k := replayKey(ev.Type, ev.Data, ch.Kind == dialect.Text)
	if r.conn == 0 {
		r.replayer().live(k, ch.Done)
		if !r.cursorSeen.Load() {
			r.sawCursor() // any event is a place to resume from
		}
		return false
	}
	rc := r.reconnect()
	if rc.FirstEvent.IsZero() {
		rc.FirstEvent = ev.Dispatched
	}
	again := r.replayer().event(k, ch.Begin, ch.Done)
	if again {
		rc.Replayed = ev.Dispatched
	}
	return again
}

// replayResumeID is what a Replay resume sends: nothing of the stream's,
// or the stale drill's cursor (another chat).
func (r *run) replayResumeID() string {
	if r.drill == DrillStale && r.step == 1 {
		r.staleConn = true
		return orStr(r.dr.StaleID, r.rs.StaleCursor())
	}
	return ""
}

// replayDropped judges the end of a resumed connection of a Replay
// resumer before onDrop's other cases: an empty answer (200 with no
// event) is no resume at all. It reports whether it judged the drop.
func (r *run) replayDropped(d *resumeclient.Drop) bool {
	if r.replayer() == nil || d.Conn == 0 || r.staleConn || d.Events > 0 || !errors.Is(d.Err, io.EOF) {
		return false
	}
	r.replayLost(fmt.Sprintf("the resume was answered HTTP %d with no event: an empty answer where no stream is active (the answer to that is 204 No Content)", d.Info.Status))
	return true
}

// replayStatus judges a resume of a Replay resumer answered with a status
// and no stream: 204 (no active stream) is right once the answer was
// complete and loses the rest while it was not; a 200 that is not an
// event stream is an empty answer. It reports whether it judged err.
func (r *run) replayStatus(err error) bool {
	var se *resumeclient.StatusError
	if r.replayer() == nil || len(r.tl.Reconnects) == 0 || r.staleConn || !errors.As(err, &se) {
		return false
	}
	switch {
	case se.Status == http.StatusNoContent && r.replayer().done:
		r.rec.Outcome = Success
		r.rec.Verdict = VerdictPass
		r.rec.ResumeDetail = "the resume was answered 204 No Content (no active stream) after the answer had finished (its last part had come): nothing was lost"
	case se.Status == http.StatusNoContent:
		r.replayLost("the resume was answered 204 No Content (no active stream) while the answer was still streaming: the server had not yet recorded, or had already dropped, the stream it was sending")
	case se.Status == http.StatusOK:
		r.replayLost("the resume was answered HTTP 200 with no event stream: an empty answer where no stream is active (the answer to that is 204 No Content)")
	default:
		return false
	}
	return true
}

// replayLost ends a run whose resume brought nothing back: the rest of
// the answer is lost, unless it had finished (then only the answer's form
// was wrong).
func (r *run) replayLost(why string) {
	c := r.replayer()
	if c.done {
		c.flag(VerdictMissed, why+"; the answer had finished, so no part was lost, but the client cannot tell this answer from a lost stream")
		r.rec.Outcome = Success
		return
	}
	// The exchange ended as the server defined it (a status, an empty
	// answer): the outcome is the transport's success, and the verdict
	// names the loss, as for a stale id's answer.
	c.flag(VerdictMissed, why+fmt.Sprintf("; the client had %d part(s) of an answer that was not finished, and the rest is lost", c.n))
	r.rec.Outcome = Success
}

// finishReplay fills the resume fields of a Replay resumer's record: the
// counts, the handshake and the replay apart, the verdict.
func (r *run) finishReplay() {
	c, rec := r.replayer(), &r.rec
	for _, rc := range r.tl.Reconnects {
		if !rc.Replayed.IsZero() {
			rec.ReplayMs = maxPtr(rec.ReplayMs, ms(rc.Replayed.Sub(rc.FirstEvent)))
		}
	}
	if rec.Outcome == Success && rec.Verdict == "" {
		c.ended()
	}
	rec.Replayed, rec.Duplicates, rec.Missed = c.replayed, c.duplicates, c.missed
	switch {
	case rec.Verdict != "":
	case r.res != nil && r.res.stale != "":
		rec.Verdict, rec.StaleAnswer = VerdictStaleOK, r.res.stale
		rec.ResumeDetail = fmt.Sprintf("stale %s answered by %s", r.rs.Label(r.show(rec.LastEventIDSent)), r.res.stale)
	case c.verdict != "":
		rec.Verdict, rec.ResumeDetail = c.verdict, c.detail
	case r.drill != DrillNone && !rec.Resumed && rec.Outcome == Success:
		rec.Verdict = VerdictNotExercised
		rec.ResumeDetail = fmt.Sprintf("the stream ended after %d content chunks, before the %s drill could drop it: nothing was resumed", rec.Chunks, r.drill)
	case rec.Resumed && rec.Outcome == Success:
		rec.Verdict, rec.ResumeDetail = VerdictPass, c.passDetail(rec.ServerDrops)
	}
}

// replayHandshake is a Replay resume's handshake: from its request to its
// first event (a replayed one included); the replay after it, to its last
// event the client already had, is replay_ms.
func replayHandshake(rc Reconnect) (float64, bool) {
	if rc.FirstEvent.IsZero() {
		return 0, false
	}
	return ms(rc.FirstEvent.Sub(rc.Start)), true
}
