package probe

import (
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/resumeclient"
)

// maxServerRetry caps the wait a server's retry field asks for before a
// resume.
const maxServerRetry = 30 * time.Second

// onConnect takes a new connection of the session into the timeline.
func (r *run) onConnect(info resumeclient.ConnInfo, st *resumeclient.Stream) error {
	r.st, r.conn, r.connTexts, r.connRetries = st, int32(info.Index), 0, 0
	r.firstOnConn = info.Index > 0
	r.dropAfter = r.dropAfterFor(r.step)
	if info.Index == 0 {
		r.setup(info.Setup)
		r.tl.Start, r.tl.Headers = info.Start, info.HeadersAt
		r.rec.HTTPStatus = info.Status
		r.rec.HTTPVersion = strings.TrimPrefix(info.Proto, "HTTP/")
		r.rec.RetryAfterMs = retryAfter(info.Header, time.Now())
		r.streamHeader(info.Header)
		if r.drill != DrillNone && r.dr.DropAt > 0 && !r.unresumable {
			// The first drop comes at DropAt, on whichever connection is
			// open then, once an event gave a cursor to resume from (else
			// right after the first one that does). Exactly one of the
			// timer and the reader takes dropDue and drops.
			r.res = new(resumed)
			r.res.dropAt = time.AfterFunc(r.dr.DropAt-r.now().Sub(info.Start), func() {
				r.dropDue.Store(true)
				if r.cursorSeen.Load() && r.dropDue.CompareAndSwap(true, false) {
					r.sess.Restart()
				}
			})
		}
		return nil
	}
	if r.res != nil && r.res.task != nil && r.taskConnect(info) {
		return nil // a poll of the task, not a reconnect
	}
	rc := r.reconnect()
	rc.Start, rc.Headers = info.Start, info.HeadersAt
	if r.staleConn {
		answer, note := staleHeaderAnswer(info.Header, orHeaders(r.dr.StaleHeaders), r.rec.LastEventIDSent, r.show)
		r.res.staleNote = note
		if answer != "" {
			r.staleOK(answer)
			return errStaleAnswered
		}
		// An answer that opens and then says nothing (keep-alives only)
		// gets staleQuietWait, not the whole run's timeout.
		r.res.staleWait = time.AfterFunc(staleQuietWait, func() {
			r.res.staleQuiet.Store(true)
			r.sess.Drop()
		})
	}
	return nil
}

// streamHeader gives a resumer that learns the stream's id from the first
// response's headers (LangGraph's Content-Location) those headers.
func (r *run) streamHeader(h http.Header) {
	if sh, ok := r.rs.(dialect.StreamHeader); ok && h != nil {
		if id := sh.StreamID(h); id != "" {
			r.respID = id
		}
	}
}

// setup notes the first connection's DNS, TCP and TLS times; a phase that
// did not happen (a reused connection) stays absent.
func (r *run) setup(t resumeclient.ConnTimes) {
	opt := func(d time.Duration) *float64 {
		if d <= 0 {
			return nil
		}
		return ptr(ms(d))
	}
	r.rec.DNSMs, r.rec.ConnectMs, r.rec.TLSMs = opt(t.DNS), opt(t.Connect), opt(t.TLS)
	if r.t.Net.Set() {
		// A target that sets its network path records where it went.
		r.rec.RemoteAddr = t.Remote
	}
}

// dropAfterFor is how many text events a connection reads before the
// drill drops it, given how many drops the client has made so far (a drop
// by the server does not advance the drill); 0 means it is not dropped.
func (r *run) dropAfterFor(step int32) int32 {
	n := int32(min(orInt(r.dr.DropAfter, DefaultDropAfter), math.MaxInt32))
	switch {
	case r.unresumable:
		return 0 // nothing to resume it by: the drill does not drop it
	case (r.drill == DrillDrop || r.drill == DrillStale) && step == 0 && r.dr.DropAt == 0:
		return n
	case r.drill == DrillDuplicate && step <= 2 && (step > 0 || r.dr.DropAt == 0):
		return n
	}
	return 0
}

// onDrop decides what follows the end of a connection: the end of the
// run, or a resume (the drill's, or after a drop by the server).
func (r *run) onDrop(d *resumeclient.Drop) bool {
	r.connDone()
	if d.At.After(r.tl.Closed) && !r.tl.Start.IsZero() {
		// A request that failed before its stream (a resume refused): the
		// run lasted until it failed.
		r.tl.Closed = d.At
	}
	r.ended = true
	if again, decided := r.dropDecided(d); decided {
		return again
	}
	byServer := false
	switch {
	case r.staleConn && r.res.staleQuiet.Load():
		// The client's own drop, staleQuietWait after the stale resume.
		r.staleEnded(d.Err)
		return false
	case errors.Is(d.Err, resumeclient.ErrDropped):
		if r.drill == DrillNone {
			r.classify(d.Err)
			return false
		}
		r.step++
	case r.staleConn && conflict(d.Err):
		// A stale id answered 409: judged as any status answer to it.
		r.ended = false
		return false
	case r.staleConn:
		r.staleEnded(d.Err)
		return false
	case errors.Is(d.Err, io.EOF) && (r.final || r.d.EOFIsEnd(r.t)):
		r.tl.End = d.At
		r.succeed()
		return false
	case r.resumeRefused(d.Err):
		return r.retryResume(d)
	case r.replayDropped(d):
		return false
	case r.resumes() && serverDrop(d.Err):
		// A drop by the server (clean end before the end marker, broken
		// connection, read timeout): resume as a client must, within the
		// bound (the drill's own reconnects do not count against it).
		r.rec.ServerDrops++
		if n := orInt(r.dr.MaxReconnects, resumeclient.DefaultMaxReconnects); r.rec.ServerDrops > n {
			r.classify(d.Err)
			r.rec.Error += fmt.Sprintf(" (gave up after %d reconnects)", n)
			return false
		}
		byServer = true
	case errors.Is(d.Err, io.EOF):
		r.fail(UpstreamError, "stream closed by the server before the end marker")
		return false
	default:
		r.classify(d.Err)
		return false
	}
	return r.resume(d, byServer)
}

// dropDecided decides the drops that need no look at the error: a task's
// (polled, not resumed), after the end, a cancel sample's, and the very
// first request's.
func (r *run) dropDecided(d *resumeclient.Drop) (again, decided bool) {
	switch {
	case r.res != nil && r.res.task != nil && !r.staleConn:
		return r.taskDrop(d), true
	case r.res != nil && r.res.afterEnd != nil:
		// The end came: what followed was the stream closing (or the
		// client closing it, afterEndWait later).
		return false, true
	case r.cancelled != nil:
		r.cancelEnded(d.At, d.Err, false)
		return false, true
	case r.step == 0 && r.tl.Start.IsZero():
		// The very first request failed: nothing to resume.
		r.tl.Start = d.Info.Start
		r.setup(d.Info.Setup)
		r.classify(d.Err)
		return false, true
	}
	return false, false
}

// retryResume sends a resume request that itself failed (refused, closed
// before its headers, or 409 Conflict: the server still holds the
// connection the client dropped, as the MCP Go SDK does when a resume
// comes before it saw the drop) again, within the bound and a little later
// each time; the drop it resumes from keeps its time.
func (r *run) retryResume(d *resumeclient.Drop) bool {
	r.connRetries++
	if n := orInt(r.dr.MaxReconnects, resumeclient.DefaultMaxReconnects); int(r.connRetries) > n {
		r.classify(d.Err)
		r.rec.Error += fmt.Sprintf(" (gave up after %d attempts to reconnect)", n)
		return false
	}
	r.res.retries++
	d.Next, d.Wait = r.res.req, time.Duration(r.connRetries)*100*time.Millisecond
	r.ended = false
	return true
}

// resume sets the request that resumes the stream after drop d (the
// drill's, or the server's when byServer), or ends the run when there is
// nothing to resume from or the request cannot be sent.
func (r *run) resume(d *resumeclient.Drop, byServer bool) bool {
	if r.res == nil {
		r.res = new(resumed)
	}
	id, ok := r.resumeID(d.Err, byServer)
	if !ok {
		return false
	}
	next, err := r.rs.Resume(r.req, id, r.respID)
	if err != nil {
		r.fail(UpstreamError, "cannot resume: %v", err)
		return false
	}
	if err := next.Check(); err != nil {
		r.unsendable(id, err)
		return false
	}
	d.Next, d.Wait, r.res.req = next, 0, next
	r.res.retryWait = 0
	if !byServer {
		d.Wait = r.dr.Away // the drill's client comes back this much later
	}
	if byServer && d.HasRetry {
		if !r.serverWait(d.Retry) {
			return false
		}
		d.Wait = r.res.retryWait
	}
	r.ended = false
	r.rec.LastEventIDSent = id
	r.rec.Resumed = true
	if r.replayer() != nil {
		r.replayer().reconnected()
	} else {
		r.check.reconnected(id)
	}
	r.tl.Reconnects = append(r.tl.Reconnects, Reconnect{SentID: id, Drop: d.At, ByServer: byServer})
	r.tl.Breaks = append(r.tl.Breaks, r.tl.ChunkCount())
	return true
}

// resumeRefused reports whether err ended a resume request before any
// event: refused, closed before its headers, or answered 409 Conflict.
func (r *run) resumeRefused(err error) bool {
	return len(r.tl.Reconnects) > 0 && (errors.Is(err, resumeclient.ErrConnect) || conflict(err))
}

// conflict reports whether err is a 409 Conflict answer.
func conflict(err error) bool {
	var se *resumeclient.StatusError
	return errors.As(err, &se) && se.Status == http.StatusConflict
}

// unsendable ends a run whose resume cannot be sent: a cursor with a byte
// no HTTP header may carry. SSE lets a server put such a byte in an id, so
// no client can ever resume from it: the server's resume defect, named at
// once (a retry cannot help). A configured stale id is checked at load
// time and never gets here.
func (r *run) unsendable(id string, err error) {
	i := resumeclient.InvalidHeaderByte(id)
	if i < 0 {
		r.fail(ProtocolError, "cannot resume: %v", err)
		return
	}
	r.rec.Verdict = VerdictUnsendableID
	r.rec.ResumeDetail = fmt.Sprintf("the server's event id %s holds the byte 0x%02x, which no HTTP header may carry: no client can send it back as Last-Event-ID, so the stream cannot be resumed", r.show(id), id[i])
	r.fail(UpstreamError, "cannot resume: the last event id holds the byte 0x%02x, which no HTTP header may carry", id[i])
}

// serverWait takes the wait the server's retry field asks for before a
// resume, capped at maxServerRetry. A retry longer than what is left of the
// run's deadline ends the run at once, named as the server's: a client
// that honours it cannot finish in time, and sleeping into the timeout
// would report the probe's own wait as a target that went silent.
func (r *run) serverWait(retry time.Duration) bool {
	wait := min(retry, maxServerRetry)
	if dl, ok := r.ctx.Deadline(); ok && wait > 0 {
		if left := time.Until(dl); retry > left {
			r.fail(UpstreamError, "the server asked (%s) for a %s wait before reconnecting, longer than the %s left of the run's timeout",
				retryField(retry), retry, max(left, 0).Round(100*time.Millisecond))
			return false
		}
	}
	r.res.retryAsked, r.res.retryWait, r.res.retryUntil = retry, wait, time.Now().Add(wait)
	return true
}

// waitNote names the server's retry wait when the run ended during it,
// for a timeout's message; it is empty otherwise.
func (r *run) waitNote() string {
	if r.res == nil || r.res.retryWait <= 0 || time.Now().After(r.res.retryUntil) {
		return ""
	}
	return fmt.Sprintf(", while waiting %s before reconnecting, as the server asked (%s)", r.res.retryWait, retryField(r.res.retryAsked))
}

// retryField quotes the retry field a wait came from: as the server wrote
// it, or, at the parser's cap, as the cap it is (the server wrote more).
func retryField(retry time.Duration) string {
	if retry >= resumeclient.MaxRetry {
		return fmt.Sprintf("retry: %d or more: a day at least, the client's cap", resumeclient.MaxRetry.Milliseconds())
	}
	return fmt.Sprintf("retry: %d", retry.Milliseconds())
}

// serverDrop reports whether a connection ended in a way a client
// resumes from.
func serverDrop(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, resumeclient.ErrReset) || errors.Is(err, resumeclient.ErrIdle)
}

// resumeID picks the cursor the next connection resumes from: the last
// dispatched one, or what the drill's step asks for. With none, the run
// ends on the drop's own cause (dropErr), and why it was not resumed.
func (r *run) resumeID(dropErr error, byServer bool) (string, bool) {
	if r.replayer() != nil {
		return r.replayResumeID(), true
	}
	last := string(r.cursor)
	if last == "" {
		why := "no event id to resume from"
		if r.unresumable {
			why = "a stream of this protocol version cannot be resumed"
		}
		if r.cursorCleared {
			why = "no event id to resume from (the last id field was empty: it cleared the id)"
		}
		if r.drill != DrillNone {
			r.rec.Verdict = VerdictNotSupported
			r.rec.ResumeDetail = "the target sent no event ids before the drop: there is nothing to resume from"
		}
		switch {
		case !byServer:
			r.fail(UpstreamError, "dropped for the %s drill, and %s", r.drill, why)
		case errors.Is(dropErr, io.EOF):
			r.fail(UpstreamError, "stream closed by the server before the end marker, with %s", why)
		default:
			// A broken connection or a read timeout: the transport's
			// error is the cause.
			r.classify(dropErr)
			r.rec.Error += "; not resumed: " + why
		}
		return "", false
	}
	switch {
	case byServer:
	case r.drill == DrillStale && r.step == 1:
		r.staleConn = true
		return orStr(r.dr.StaleID, r.rs.StaleCursor()), true
	case r.drill == DrillDuplicate && r.step == 1:
		r.res.dupID = last
	case r.drill == DrillDuplicate && r.step == 2:
		return r.res.dupID, true // the same id again
	case r.drill == DrillDuplicate && r.step == 3:
		return r.check.rewound(last, r.res.dupID, orInt(r.dr.Rewind, DefaultRewind)), true
	}
	return last, true
}

// sessionEnded takes the error that ended the session into the record,
// unless onDrop already judged it.
func (r *run) sessionEnded(err error) {
	r.connDone()
	if r.ended {
		return
	}
	if r.cancelled != nil {
		r.cancelEnded(r.now(), err, false)
		return
	}
	if r.res != nil && r.res.task != nil && !r.staleConn {
		r.taskError(r.now(), err)
		return
	}
	if errors.Is(err, errStaleAnswered) {
		return
	}
	var se *resumeclient.StatusError
	if errors.As(err, &se) {
		if len(r.tl.Reconnects) > 0 {
			rc := r.reconnect()
			rc.Start, rc.Headers = se.Start, se.HeadersAt
		}
		if r.replayStatus(err) {
			return
		}
		if len(r.tl.Reconnects) == 0 {
			r.tl.Start, r.tl.Headers = se.Start, se.HeadersAt
			r.rec.HTTPStatus = se.Status
			r.rec.RetryAfterMs = retryAfter(se.Header, time.Now())
		} else {
			if r.staleConn {
				r.staleOpen(err)
				return
			}
		}
	}
	if r.staleConn {
		r.staleEnded(err)
		return
	}
	r.classify(err)
	if r.rec.Outcome == Timeout {
		r.rec.Error += r.waitNote()
	}
}

// finishResume fills the resume fields of the record.
func (r *run) finishResume(s Scores) {
	rec, tl := &r.rec, &r.tl
	rec.Reconnects = len(tl.Reconnects)
	if r.res != nil {
		rec.Reconnects += r.res.retries // every request counts, the refused ones too
	}
	// The tail runs from the first chunk: only the part of a resume's
	// wait after it comes off the tail (a resume before the first chunk
	// waited before the tail began).
	var excluded time.Duration
	if tl.ChunkCount() > 0 {
		first := tl.Chunk(0)
		for _, span := range tl.ResumeSpans() {
			from := span.Drop
			if from.Before(first) {
				from = first
			}
			if span.End.After(from) {
				excluded += span.End.Sub(from)
			}
		}
	}
	for _, rc := range tl.Reconnects {
		if !rc.Headers.IsZero() {
			rec.ReconnectMs = maxPtr(rec.ReconnectMs, ms(rc.Headers.Sub(rc.Drop)))
		}
		if hs, ok := replayHandshake(rc); ok && r.replayer() != nil {
			rec.ResumeHandshakeMs = maxPtr(rec.ResumeHandshakeMs, hs)
		} else if !rc.FirstChunk.IsZero() {
			rec.ResumeHandshakeMs = maxPtr(rec.ResumeHandshakeMs, ms(rc.FirstChunk.Sub(rc.Start)))
		}
	}
	if s.Tail != nil && rec.Resumed {
		rec.TailExclReconnectMs = round3(ptr(*s.Tail - ms(excluded)))
	}
	r.finishTask()
	if r.replayer() != nil {
		r.finishReplay()
		return
	}
	c := r.check
	if c == nil {
		return
	}
	rec.Replayed, rec.Duplicates, rec.Missed = c.replayed, c.duplicates, c.missed
	r.verdict(c)
	if rec.Verdict != "" && c.uncounted != "" && !c.opaque && !c.repeated {
		rec.ResumeDetail += " (" + c.uncounted + ": checked as opaque ids, for uniqueness and order only)"
	}
}

// verdict sets the record's resume verdict, unless one is set already.
func (r *run) verdict(c *resumeCheck) {
	rec := &r.rec
	label := r.sentLabel()
	switch {
	case rec.Verdict != "":
	case r.res != nil && r.res.leftOpen.Load() && c.verdict == "":
		rec.Verdict = VerdictLeftOpen
		rec.ResumeDetail = fmt.Sprintf("after the call's response, the resumed stream (from %s) was still open %s later: the server SHOULD close it, and a client that waits for the close waits forever", label, afterEndWait)
	case r.res != nil && r.res.stale != "":
		rec.Verdict, rec.StaleAnswer = VerdictStaleOK, r.res.stale
		rec.ResumeDetail = fmt.Sprintf("stale %s answered by %s", label, r.res.stale)
	case c.verdict != "":
		rec.Verdict, rec.ResumeDetail = c.verdict, c.detail
	case c.repeated && rec.Resumed:
		rec.Verdict = VerdictNotSupported
		rec.ResumeDetail = fmt.Sprintf("the server's %s: a resume from one cannot say where the stream was, so it was not judged by them", c.uncounted)
	case r.drill != DrillNone && !rec.Resumed && rec.Outcome == Success:
		r.notResumed()
	case rec.Resumed && rec.Outcome == Success && r.drill == DrillNone:
		rec.Verdict = VerdictPass
		rec.ResumeDetail = fmt.Sprintf("the server dropped the stream %d time(s); resumed from %s, every event once, in order", rec.ServerDrops, label)
	case rec.Resumed && rec.Outcome == Success:
		rec.Verdict = VerdictPass
		rec.ResumeDetail = fmt.Sprintf("resumed %d time(s) from %s; every event once, in order", len(r.tl.Reconnects), label)
	}
}

// notResumed is the verdict of a drill whose run succeeded without a
// resume: the protocol has none, no event carried a position, or the
// stream ended before the drop.
func (r *run) notResumed() {
	rec := &r.rec
	switch {
	case r.unresumable:
		rec.Verdict = VerdictNotSupported
		if u, ok := r.d.(dialect.Unresumable); ok {
			rec.ResumeDetail = u.Unresumable(r.req)
		}
	case !r.cursorSeen.Load():
		// No event carried a resume position (an MCP server's JSON
		// answer, a stream without ids): however long it had been,
		// nothing could have been resumed.
		rec.Verdict = VerdictNotSupported
		rec.ResumeDetail = fmt.Sprintf("the stream ended after %d content chunks and no event carried an id: there is nothing to resume from", rec.Chunks)
	default:
		rec.Verdict = VerdictNotExercised
		rec.ResumeDetail = fmt.Sprintf("the stream ended after %d content chunks, before the %s drill could drop it: nothing was resumed", rec.Chunks, r.drill)
	}
}

func maxPtr(p *float64, v float64) *float64 {
	if p == nil || v > *p {
		return ptr(v)
	}
	return p
}
