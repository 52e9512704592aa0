package probe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/resumeclient"
)

// event takes one event or comment of the stream into the timeline; it
// returns true when the run is over (end marker, error, cancel).
func (r *run) event(ev *resumeclient.Event) bool {
	switch {
	case ev.Kind == resumeclient.KindComment:
		r.rec.Comments++
		return false
	case r.res != nil && r.res.afterEnd != nil:
		r.rec.Events++ // after the end: counted, nothing more
		return false
	case ev.Kind == resumeclient.KindTrailer:
		return r.trailer(ev)
	case r.staleConn:
		return r.staleEvent(ev)
	}
	ch, err := r.d.Decode(r.t, ev)
	if err != nil {
		r.rec.Events++
		r.firstEvent(ev) // it came, whatever it holds
		r.fail(ProtocolError, "%v", err)
		return true
	}
	if ch.Kind == dialect.Liveness {
		r.rec.Comments++
		return false
	}
	if ch.Reply != nil {
		r.reply(ch.Reply)
	}
	r.rec.Events++
	r.firstEvent(ev)
	if ch.Task != nil && r.taskAnswer(ev.Dispatched, &ch) {
		return true
	}
	cursor, hasCursor := r.position(ev, &ch)
	// A message of another stream is judged by mark, and kept out of the
	// id check: its ids are not this stream's.
	again := r.check != nil && !ch.Foreign && r.check.event(cursor, hasCursor, ev.Type, ev.Data)
	if r.replayer() != nil {
		again = r.replayEvent(ev, &ch)
	}
	r.mark(&ch, again, cursor)
	if ch.HasUsage {
		r.usage(ch.Usage)
	}
	r.ending(&ch)
	return r.output(ev, &ch, again)
}

// output takes what a chunk is for the timeline: visible text, other
// effective output, the end, an error.
func (r *run) output(ev *resumeclient.Event, ch *dialect.Chunk, again bool) bool {
	switch ch.Kind {
	case dialect.Text:
		if ch.IsEnd {
			return r.lastChunk(ev, again)
		}
		return r.visible(ev, ch, again)
	case dialect.Effective:
		if !again {
			r.effective(ev.Dispatched, ch.Reasoning, false)
		}
	case dialect.End:
		r.tl.End = ev.Dispatched
		r.succeed()
		return true
	case dialect.Failed:
		if r.cancelled != nil {
			// A session dialect's answer to the call it cancelled (only
			// those set cancelled): an error answer is an answer all the same
			// (the MCP Go SDK sends one: "context canceled").
			r.cancelEnded(ev.Dispatched, nil, true)
			return true
		}
		r.fail(UpstreamError, "error event in the stream: %s", ch.Message)
		if r.conn > 0 && r.check != nil && strings.Contains(strings.ToLower(ch.Message), "cancel") {
			// The call's answer after a drop is that it was cancelled:
			// the server took the drop for the client's cancel.
			r.check.flag(VerdictCancelledOnDrop, fmt.Sprintf("after the resume from %s, the call ended in an error that says it was cancelled (%s): the server cancelled it when the client's connection dropped, which a disconnection SHOULD NOT mean",
				r.rs.Label(r.show(r.rec.LastEventIDSent)), ch.Message))
		}
		return true
	}
	return false
}

// firstEvent stamps the first event with data: it arrived, decoded or not.
func (r *run) firstEvent(ev *resumeclient.Event) {
	if r.tl.FirstEvent.IsZero() && len(ev.Data) > 0 {
		r.tl.FirstEvent = ev.Dispatched
	}
}

// trailer takes what came after the last event and is not an event
// (resumeclient.KindTrailer: Gemini's error object, which Google's SDK
// raises): an error the dialect can name ends the run as an
// upstream_error, anything else as a protocol_error.
func (r *run) trailer(ev *resumeclient.Event) bool {
	if ch, err := r.d.Decode(r.t, ev); err == nil && ch.Kind == dialect.Failed {
		r.fail(UpstreamError, "error object after the last event: %s", ch.Message)
		return true
	}
	r.fail(ProtocolError, "%d bytes after the last event that are not an event", len(ev.Data))
	return true
}

// ending keeps what a chunk says of how the answer ends: the finish
// reason it names, and a refusal, whose words stay in the record's error
// until the run ends (refused) or fails (which says why instead).
func (r *run) ending(ch *dialect.Chunk) {
	if ch.Finish != dialect.FinishNone {
		r.finishReason = ch.Finish
	}
	if r.refused || !ch.Refusal && !ch.Finish.Refused() {
		return
	}
	r.refused = true
	if ch.Finish == dialect.FinishContentFilter {
		r.rec.Error = "refused: the provider's filter stopped the answer (" + ch.Message + ")"
	} else {
		r.rec.Error = "refused: the model declined to answer (" + ch.Message + ")"
	}
}

// succeed ends the run at its end marker: a success, or refused when the
// answer was a refusal.
func (r *run) succeed() {
	r.rec.Outcome = Success
	if r.refused {
		r.rec.Outcome = Refused
	}
}

// visible takes a chunk of visible text: the text of an inline reasoning
// block (dialect.Think) is reasoning, the answer's a content chunk. A
// refusal's text is the answer's; a re-delivery is not read again.
func (r *run) visible(ev *resumeclient.Event, ch *dialect.Chunk, again bool) bool {
	if ch.Refusal || again {
		return r.text(ev, again)
	}
	reasoning, text := r.think.Scan(ch.Content)
	if reasoning {
		r.effective(ev.Dispatched, true, true)
	}
	if !text {
		return false
	}
	return r.text(ev, again)
}

// effective takes effective output that is not a chunk: the first
// effective output, and the span of the reasoning.
func (r *run) effective(at time.Time, reasoning, inline bool) {
	if r.tl.FirstEffective.IsZero() {
		r.tl.FirstEffective = at
	}
	if !reasoning {
		return
	}
	sp := r.tl.Reasoning
	if sp == nil {
		sp = &ReasoningSpan{First: at}
		r.tl.Reasoning = sp
	}
	sp.Last, sp.Inline = at, sp.Inline || inline
	sp.Count++
}

// staleEvent takes an event on a connection resumed from a stale id: the
// keep-alives and metadata before the answer are counted, and the first
// event of the answer ends the run with its judgement.
func (r *run) staleEvent(ev *resumeclient.Event) bool {
	if t := string(ev.Type); t != orStr(r.dr.ErrorEvent, DefaultErrorEvent) && t != orStr(r.dr.ResetEvent, DefaultResetEvent) {
		ch, err := r.d.Decode(r.t, ev)
		switch {
		case err == nil && ch.Task != nil:
			// A task for a task id the server cannot have.
			r.rec.Events++
			r.rec.Outcome = Success
			r.undefinedStale(fmt.Sprintf("the server answered with a task (status %s) where it should have said the task is unknown", ch.Task.Status))
			return true
		case err != nil:
		case ch.Kind == dialect.Liveness:
			r.rec.Comments++
			return false
		case ch.Kind == dialect.Meta:
			r.rec.Events++
			return false
		case ch.Kind == dialect.Failed:
			// An error in the stream's own terms (MCP: a JSON-RPC
			// error) is a defined answer.
			r.rec.Events++
			r.staleOK("error_event")
			return true
		}
	}
	r.rec.Events++
	r.staleAnswer(ev)
	return true
}

// position notes the resume position an event carries (its cursor, and
// the response id), dropping the connection when the drill's drop waited
// for a cursor, and whether the chunk was the stream's last; it returns
// the cursor for the resume check.
func (r *run) position(ev *resumeclient.Event, ch *dialect.Chunk) (string, bool) {
	var cursor string
	var hasCursor bool
	if r.rs != nil {
		cursor, hasCursor = r.rs.Cursor(ev, *ch)
	}
	if hasCursor {
		r.cursor, r.cursorCleared = append(r.cursor[:0], cursor...), cursor == ""
		if cursor != "" {
			r.sawCursor()
		}
	}
	if ch.ResponseID != "" {
		r.respID = ch.ResponseID
	}
	if ch.Final {
		r.final = true
	}
	return cursor, hasCursor
}

// sawCursor notes that an event gave a place to resume from, dropping
// the connection when the drill's DropAt came before one.
func (r *run) sawCursor() {
	r.cursorSeen.Store(true)
	if r.dropDue.CompareAndSwap(true, false) {
		r.sess.Drop() // the drill's DropAt came before a cursor: drop now
	}
}

// usage keeps the token counts an event reports, the latest non-zero one
// of each.
func (r *run) usage(u dialect.Tokens) {
	if r.tok == nil {
		r.tok = &dialect.Tokens{}
	}
	if u.Prompt > 0 {
		r.tok.Prompt = u.Prompt
	}
	if u.Completion > 0 {
		r.tok.Completion = u.Completion
	}
}

// text takes a content chunk (again: a re-delivery the check recognised,
// which is not a new chunk) and applies the limits that stop a run after
// so many chunks: max_chunks, the cancel sample, the drill's drop.
func (r *run) text(ev *resumeclient.Event, again bool) bool {
	if r.cancelled != nil {
		return false // after the cancel message: counted as an event only
	}
	r.connTexts++
	if !again {
		if limit := orInt(r.t.MaxChunks, DefaultMaxChunks); r.tl.ChunkCount() >= limit {
			r.fail(ProtocolError, "more than %d content chunks: the run stops to keep its memory bounded (max_chunks)", limit)
			return true
		}
		r.chunk(ev.Dispatched)
	}
	if r.cancelAfter > 0 && r.tl.ChunkCount() >= int(r.cancelAfter) {
		return r.cancelSample()
	}
	if r.dropAfter > 0 && r.connTexts >= r.dropAfter {
		r.sess.Drop() // the drill's drop: Next reports ErrDropped
	}
	return false
}

// mark takes what a chunk says of the stream it came on: a message
// unrelated to the answer, one of another stream, a position in the body.
func (r *run) mark(ch *dialect.Chunk, again bool, cursor string) {
	if ch.Unrelated || ch.Foreign && r.conn == 0 {
		r.rec.Unrelated++
	}
	if r.check == nil || again {
		return
	}
	if ch.Foreign && r.conn > 0 {
		r.check.crossStream(cursor)
	}
	if ch.HasSeq {
		r.check.seq(ch.Seq, r.conn > 0)
	}
}

// lastChunk takes a content chunk that is also the end (MCP's response
// to the call).
func (r *run) lastChunk(ev *resumeclient.Event, again bool) bool {
	if r.cancelled != nil {
		r.cancelEnded(ev.Dispatched, nil, true)
		return true
	}
	if !again {
		r.chunk(ev.Dispatched)
	}
	r.tl.End = ev.Dispatched
	r.succeed()
	if ec, ok := r.rs.(dialect.EndCloser); ok && r.conn > 0 && r.res.task == nil && ec.ServerClosesAfterEnd() {
		// A resumed stream its server should close after the end: read on
		// a while, to see whether it does.
		r.res.afterEnd = time.AfterFunc(afterEndWait, func() {
			r.res.leftOpen.Store(true)
			r.sess.Drop()
		})
		return false
	}
	return true
}

// afterEndWait is how long a resumed stream is read after its end, when
// the server should close it then (dialect.EndCloser).
const afterEndWait = 2 * time.Second

// cancelSample ends the run for the cancel sample: by closing the connection,
// or, for a session dialect, by its cancel message, after which the
// stream is read on for up to cancelWait to see how it ends.
func (r *run) cancelSample() bool {
	sd, ok := r.d.(dialect.Session)
	if cc, closes := r.d.(dialect.CloseCanceller); closes && cc.CancelsByClose(r.req) {
		ok = false // closing the stream is the cancel (MCP 2026-07-28)
	}
	if !ok {
		r.fail(ClientCancelled, "cancelled by the %s sample after %d content chunks", r.rec.Sample, r.tl.ChunkCount())
		return true
	}
	r.cancelled = &cancelled{at: r.now()}
	if err := r.cancelCall(sd); err != nil {
		r.fail(ClientCancelled, "cancelled by the %s sample after %d content chunks; sending the cancel failed: %v", r.rec.Sample, r.tl.ChunkCount(), err)
		return true
	}
	sess := r.sess
	r.cancelled.timer = time.AfterFunc(cancelWait, func() {
		r.cancelled.shut.Store(true)
		sess.Close()
	})
	return false
}

// cancelCall sends the session dialect's cancel: by the stream's id when
// the dialect names the stream it cancels.
func (r *run) cancelCall(sd dialect.Session) error {
	if sc, ok := r.d.(dialect.StreamCanceler); ok {
		return sc.CancelStream(r.ctx, r.c, r.t, r.req, r.respID)
	}
	return sd.CancelCall(r.ctx, r.c, r.t, r.req)
}

// cancelWait is how long a stream is read after a session dialect's
// cancel message before the client closes it.
const cancelWait = 2 * time.Second

// cancelEnded names how the stream ended after the cancel message: with
// the result anyway (result), by the server, or closed by the client
// after cancelWait.
func (r *run) cancelEnded(at time.Time, err error, result bool) {
	r.ended = true
	after := at.Sub(r.cancelled.at)
	msg := fmt.Sprintf("cancelled by the %s sample after %d content chunks with a cancel message", r.rec.Sample, r.tl.ChunkCount())
	task := r.res != nil && r.res.task != nil
	if task {
		msg = fmt.Sprintf("cancelled by the %s sample with tasks/cancel at the task's handle", r.rec.Sample)
	}
	switch {
	case result:
		r.rec.ResultAfterCancel, r.rec.CancelEndMs = true, ptr(ms(after))
		msg += fmt.Sprintf("; the result still came %.1f ms later", ms(after))
	case task && r.cancelled.shut.Load():
		msg += fmt.Sprintf("; the task was still %s %s later, and the client stopped polling", r.res.task.st.Status, cancelWait)
	case r.cancelled.shut.Load():
		msg += fmt.Sprintf("; the stream was still open %s later, and the client closed it", cancelWait)
	case errors.Is(err, io.EOF):
		r.rec.CancelEndMs = ptr(ms(after))
		msg += fmt.Sprintf("; the server ended the stream %.1f ms later, with no result", ms(after))
	case r.ctx.Err() != nil:
		msg += "; the stream was still open when the run's timeout came"
	default:
		msg += fmt.Sprintf("; the stream then broke: %v", err)
	}
	r.fail(ClientCancelled, "%s", msg)
}

// chunk adds a new content chunk.
func (r *run) chunk(at time.Time) {
	if r.firstOnConn && len(r.tl.Reconnects) > 0 {
		r.reconnect().FirstChunk = at
	}
	r.firstOnConn = false
	r.tl.chunks.append(at.Sub(r.tl.Start))
	if r.tl.ChunkCount() == 1 && r.firstTimer != nil {
		r.firstTimer.Stop()
	}
	if r.tl.FirstEffective.IsZero() {
		r.tl.FirstEffective = at
	}
}

func (r *run) reconnect() *Reconnect { return &r.tl.Reconnects[len(r.tl.Reconnects)-1] }

// connDone notes what a connection that is over leaves in the record.
func (r *run) connDone() {
	st := r.st
	if st == nil {
		return
	}
	r.st = nil
	st.Close()
	r.tl.Closed = r.now()
	r.rec.Bytes += st.Bytes()
	if n, ok := st.WireBytes(); ok {
		total := n + deref64(r.rec.WireBytes)
		r.rec.WireBytes = &total
	}
	if id := st.LastEventID(); id != "" || r.conn == 0 {
		r.rec.LastEventID = id
	}
	if st.Truncated() {
		r.rec.Truncated++
	}
}

func deref64(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// DefaultMaxChunks bounds the content chunks of one run: the timeline
// keeps a time per chunk and the reduction a gap, so a run's memory is
// bounded (about 5 MB at this cap) whatever a server sends. A real answer
// has a few thousand.
const DefaultMaxChunks = 100_000

// replies are the answers a run sends to requests of the server's (MCP's
// ping), each from a goroutine of its own so the stream's reads go on;
// release waits for them.
type replies struct {
	wg sync.WaitGroup
	n  int
}

// Bounds of the replies: how many a run sends at the most (a server that
// pings a thousand times gets the first few answered), and how long each
// may take.
const (
	maxReplies = 16
	replyWait  = 2 * time.Second
)

// reply sends body, the answer to a request of the server's, through the
// dialect's Replier.
func (r *run) reply(body []byte) {
	rp, ok := r.d.(dialect.Replier)
	if !ok {
		return
	}
	if r.replies == nil {
		r.replies = new(replies)
	}
	if r.replies.n >= maxReplies {
		return
	}
	r.replies.n++
	ctx, c, t, req := r.ctx, r.c, r.t, r.req
	r.replies.wg.Add(1)
	go func() {
		defer r.replies.wg.Done()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), replyWait)
		defer cancel()
		rp.Reply(ctx, c, t, req, body) // its answer is not judged
	}()
}
