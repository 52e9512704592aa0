package probe

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/resumeclient"
)

// A call the server makes a task (MCP Tasks) is read by polling: its
// answer is the task's handle, and every later request asks for the
// task's state by its id (dialect.TaskPoller), the poll interval the
// server asks for apart, until a terminal status brings the result. Each
// poll is a connection of the session; none is a reconnect. The drills
// come back to the task by its id: drop (the client goes away `away`,
// DefaultTaskAway when unset, and comes back), stale (an unknown task id);
// the cancel sample cancels the task with tasks/cancel at its handle.

// Task polling bounds and defaults.
const (
	// DefaultTaskPoll is the poll interval when the server asks for none.
	DefaultTaskPoll = 500 * time.Millisecond
	// MinTaskPoll and MaxTaskPoll bound the interval the server asks for.
	MinTaskPoll = 10 * time.Millisecond
	MaxTaskPoll = time.Minute
	// DefaultTaskAway is how long a task drill's client stays away after
	// the handle when the drill's away is unset.
	DefaultTaskAway = time.Second
	// DefaultStaleTaskID is the task id the stale drill asks for.
	DefaultStaleTaskID = "streamprobe-stale-task-0"
	// maxTaskStatuses bounds the statuses a record lists.
	maxTaskStatuses = 32
)

// Task verdicts: the bugs a task's client meets.
const (
	// VerdictTaskCancelled: the task ended cancelled though the client
	// never asked (mark3labs/mcp-go runs a task's tool under the creating
	// request's context: cancelled as soon as the handle is sent).
	VerdictTaskCancelled Verdict = "task_cancelled"
	// VerdictResultUnreachable: the task completed and no request reads
	// its result (tasks/get carries none, tasks/result is refused).
	VerdictResultUnreachable Verdict = "result_unreachable"
	// VerdictTaskLost: the task's id was unknown when the client came
	// back for it (the handle came before the task was durably created,
	// or it was dropped before its ttl).
	VerdictTaskLost Verdict = "task_lost"
)

// TaskRecord is what the record keeps of a call made a task.
type TaskRecord struct {
	// HandleMs is when the handle came, from the request's start.
	HandleMs *float64 `json:"handle_ms,omitempty"`
	// Polls counts the requests after the handle (tasks/get, tasks/result).
	Polls int `json:"polls"`
	// Status is the last status the server gave; Statuses each change of
	// it, with when (the first maxTaskStatuses).
	Status   string       `json:"status"`
	Statuses []TaskStatus `json:"statuses,omitempty"`
	// PollIntervalMs is the interval the server last asked for; absent
	// when it asked for none (DefaultTaskPoll was taken).
	PollIntervalMs *float64 `json:"poll_interval_ms,omitempty"`
}

// TaskStatus is a task's status and when it was first seen.
type TaskStatus struct {
	Status string  `json:"status"`
	Ms     float64 `json:"ms"`
}

// taskRun is a run's task.
type taskRun struct {
	st       dialect.TaskState // the newest answer's
	handleAt time.Time
	created  string // the createdAt first seen
	polls    int
	statuses []TaskStatus
	pollMs   *float64
	// back is the connection that comes back to the task after the
	// drill's time away (or with the stale id); 0 none yet.
	back       int32
	cancelSent bool // the cancel sample's tasks/cancel went
	// cancelRefused is the server's refusal of tasks/cancel (the task had
	// ended, say): the task's status tells the rest.
	cancelRefused string
	verdict       Verdict
	detail        string
}

// taskAnswer takes the task state an answer carried (the handle, or a
// poll's); it returns true when the run is over.
func (r *run) taskAnswer(at time.Time, ch *dialect.Chunk) bool {
	st := ch.Task
	if r.res == nil {
		r.res = new(resumed)
	}
	tk := r.res.task
	handle := tk == nil
	if handle {
		tk = &taskRun{handleAt: at, created: st.Created}
		r.res.task = tk
	}
	prev := tk.st.Status
	if st.Status != prev && len(tk.statuses) < maxTaskStatuses {
		tk.statuses = append(tk.statuses, TaskStatus{Status: st.Status, Ms: round3v(ms(at.Sub(r.tl.Start)))})
	}
	if st.Poll > 0 {
		tk.pollMs = ptr(ms(st.Poll))
	}
	switch {
	case st.Created != "" && tk.created != "" && st.Created != tk.created:
		tk.flag(VerdictRestarted, fmt.Sprintf("the task started over: its createdAt went from %s to %s (the work ran again)", tk.created, st.Created))
		tk.created = st.Created
	case prev == dialect.TaskCompleted && st.Status == dialect.TaskWorking:
		tk.flag(VerdictRestarted, "the task went back from completed to working (the work ran again)")
	}
	tk.st = *st
	if handle && r.cancelAfter > 0 && !dialect.TaskTerminal(st.Status) {
		return r.cancelTask(st.ID)
	}
	switch st.Status {
	case dialect.TaskCancelled:
		return r.taskCancelled(at, tk)
	case dialect.TaskInputRequired:
		r.fail(UpstreamError, "the task needs input (status input_required), which a probe cannot give")
		return true
	}
	if ch.Kind == dialect.Failed {
		r.fail(UpstreamError, "%s", ch.Message)
		return true
	}
	return false
}

// flag keeps the first task bug named.
func (tk *taskRun) flag(v Verdict, detail string) {
	if tk.verdict == "" {
		tk.verdict, tk.detail = v, detail
	}
}

// taskCancelled ends a run whose task said cancelled: the cancel sample's
// doing, or the server's own (a bug: the client never asked).
func (r *run) taskCancelled(at time.Time, tk *taskRun) bool {
	if tk.cancelSent {
		after := at.Sub(r.cancelled.at)
		r.rec.CancelEndMs = ptr(ms(after))
		r.ended = true
		refused := ""
		if tk.cancelRefused != "" {
			refused = ", which the server refused (" + tk.cancelRefused + ")"
		}
		r.fail(ClientCancelled, "cancelled by the %s sample with tasks/cancel at the task's handle%s; the task said cancelled %.1f ms later", r.rec.Sample, refused, ms(after))
		return true
	}
	why := ""
	if tk.st.Message != "" {
		why = ": " + tk.st.Message
	}
	tk.flag(VerdictTaskCancelled, fmt.Sprintf("the task ended cancelled%s, %.1f ms after its handle, though the client never asked: the server cancelled the work itself (a task's work must outlive the request that made it)",
		why, ms(at.Sub(tk.handleAt))))
	r.fail(UpstreamError, "the server cancelled the task (status cancelled%s); the client never asked", why)
	return true
}

// cancelTask is the cancel sample on a task: tasks/cancel at the handle,
// then the polls go on until a terminal status, for cancelWait.
func (r *run) cancelTask(id string) bool {
	tp, ok := r.d.(dialect.TaskPoller)
	if !ok {
		return false
	}
	r.cancelled = &cancelled{at: r.now()}
	r.res.task.cancelSent = true
	var se *resumeclient.StatusError
	switch err := tp.CancelTask(r.ctx, r.c, r.t, r.req, id); {
	case errors.As(err, &se):
		r.res.task.cancelRefused = statusText(se)
	case err != nil:
		r.fail(ClientCancelled, "cancelled by the %s sample at the task's handle; sending tasks/cancel failed: %v", r.rec.Sample, err)
		return true
	}
	sess := r.sess
	c := r.cancelled
	c.timer = time.AfterFunc(cancelWait, func() {
		c.shut.Store(true)
		sess.Close()
	})
	return false
}

// taskDrop decides what follows the end of a connection of a task's run:
// the next poll (at the interval the server asked for; after the drill's
// time away for the first), or the end, with what the end of the answer
// said: tasks/result refused for a completed task whose result no
// tasks/get carried (result_unreachable), the task's id unknown when the
// client came back for it (task_lost).
func (r *run) taskDrop(d *resumeclient.Drop) bool {
	tk := r.res.task
	if r.cancelled != nil && r.cancelled.shut.Load() {
		r.cancelEnded(d.At, d.Err, false)
		return false
	}
	if !errors.Is(d.Err, io.EOF) {
		r.taskError(d.At, d.Err)
		return false
	}
	tp, ok := r.d.(dialect.TaskPoller)
	if !ok {
		r.fail(ProtocolError, "the server made a task of the call, and the %s dialect cannot poll one", r.t.Dialect)
		return false
	}
	st := tk.st
	wait := pollInterval(st.Poll)
	back := tk.back == 0 && (r.drill == DrillDrop || r.drill == DrillDuplicate || r.drill == DrillStale)
	if back {
		wait = r.dr.Away
		if wait == 0 {
			wait = DefaultTaskAway
		}
		if r.drill == DrillStale {
			st.ID, st.NoResult = orStr(r.dr.StaleID, DefaultStaleTaskID), false
			r.staleConn = true
		}
	}
	tk.polls++
	next, err := tp.PollTask(r.t, r.req, st, tk.polls)
	if err != nil {
		r.fail(ProtocolError, "cannot poll the task: %v", err)
		return false
	}
	d.Next, d.Wait = next, wait
	r.ended = false
	if back {
		// The drill's client comes back to the task: a resume, by the
		// task's id.
		tk.back = int32(d.Conn) + 1
		r.rec.Resumed = true
		r.res.req = next
		r.tl.Reconnects = append(r.tl.Reconnects, Reconnect{SentID: st.ID, Drop: d.At})
		r.tl.Breaks = append(r.tl.Breaks, r.tl.ChunkCount())
	}
	return true
}

// taskError ends a task's run on err: an HTTP error answer to a poll
// (tasks/result refused for a completed task whose result no tasks/get
// carried: result_unreachable; the task's id unknown when the client came
// back for it: task_lost), or the transport's.
func (r *run) taskError(at time.Time, err error) {
	tk := r.res.task
	var se *resumeclient.StatusError
	switch {
	case errors.As(err, &se) && tk.st.NoResult:
		tk.flag(VerdictResultUnreachable, fmt.Sprintf("the task completed, and its result is unreachable: tasks/get carried none, and tasks/result was refused (%s)", statusText(se)))
		r.fail(UpstreamError, "the task completed, and its result is unreachable: tasks/get carried none and tasks/result was refused (%s)", statusText(se))
	case errors.As(err, &se) && se.Status >= 400 && se.Status < 500:
		tk.flag(VerdictTaskLost, fmt.Sprintf("the task was unknown %.1f ms after its handle, when the client came back for it (%s): the server lost the task, or sent the handle before the task existed",
			ms(at.Sub(tk.handleAt)), statusText(se)))
		r.fail(UpstreamError, "the task was not found when the client asked for it (%s)", statusText(se))
	default:
		r.classify(err)
	}
	r.ended = true
}

// taskConnect takes a new connection of a task's run: a poll (true: no
// reconnect), or the drill's coming back (false: a reconnect as any).
func (r *run) taskConnect(info resumeclient.ConnInfo) bool {
	return r.res == nil || r.res.task == nil || int32(info.Index) != r.res.task.back
}

// pollInterval is the wait before the next poll: the server's, bounded,
// or DefaultTaskPoll.
func pollInterval(asked time.Duration) time.Duration {
	if asked <= 0 {
		return DefaultTaskPoll
	}
	return min(max(asked, MinTaskPoll), MaxTaskPoll)
}

// statusText names an HTTP error answer: its status and what its body
// says (scrubbed by the client).
func statusText(se *resumeclient.StatusError) string {
	s := fmt.Sprintf("HTTP %d %s", se.Status, http.StatusText(se.Status))
	if se.Snippet != "" {
		s += ": " + se.Snippet
	}
	return s
}

// finishTask fills the record's task, and the verdict of a run whose
// client came back to its task (or that met a task bug).
func (r *run) finishTask() {
	if r.res == nil || r.res.task == nil {
		return
	}
	tk, rec := r.res.task, &r.rec
	rec.Task = &TaskRecord{HandleMs: since(r.tl.Start, tk.handleAt), Polls: tk.polls, Status: tk.st.Status, Statuses: tk.statuses, PollIntervalMs: tk.pollMs}
	switch {
	case rec.Verdict != "":
	case tk.verdict != "":
		rec.Verdict, rec.ResumeDetail = tk.verdict, tk.detail
	case tk.back != 0 && rec.Outcome == Success && r.drill != DrillStale:
		rec.Verdict = VerdictPass
		rec.ResumeDetail = fmt.Sprintf("the client came back to the task by its id after %.1f ms away; the task completed and its result came (%d poll(s))", ms(r.tl.Reconnects[0].Start.Sub(r.tl.Reconnects[0].Drop)), tk.polls)
	}
}

func round3v(v float64) float64 { return *round3(&v) }

// sentLabel names the cursor the last resume sent, as a detail quotes it
// ("Last-Event-ID: 5"; for a task, "task id ...").
func (r *run) sentLabel() string {
	if r.res != nil && r.res.task != nil && len(r.tl.Reconnects) > 0 {
		if r.drill == DrillStale {
			return "task id " + r.show(r.tl.Reconnects[len(r.tl.Reconnects)-1].SentID) // ours
		}
		return "the task's id" // the server's: a handle to its result, not shown
	}
	return r.rs.Label(r.show(r.rec.LastEventIDSent))
}
