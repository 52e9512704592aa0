package probe

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/resumeclient"
)

// HeaderMatch is a response header that answers a stale id. With a Value,
// the header must carry it ("earliest"); without one, the header names the
// position the server really resumed from, and any value other than the
// id sent is the answer (Mercure 0.24 sends back Last-Event-ID so).
type HeaderMatch struct{ Name, Value string }

// DefaultStaleHeaders are the headers that count as a defined answer to a
// stale id: Mercure's Last-Event-ID (and its older Mercure-Last-Event-ID),
// naming where the hub resumed, "earliest" included.
var DefaultStaleHeaders = []HeaderMatch{{Name: "Last-Event-ID"}, {Name: "Mercure-Last-Event-ID"}}

func orHeaders(h []HeaderMatch) []HeaderMatch {
	if h == nil {
		return DefaultStaleHeaders
	}
	return h
}

// staleHeaderAnswer reads the answer to the stale cursor sent from the
// response headers. It returns the answer ("header Last-Event-ID: 5"),
// or "" with a note of a header that came back but answers nothing.
func staleHeaderAnswer(h http.Header, want []HeaderMatch, sent string, show func(string) string) (answer, note string) {
	for _, m := range want {
		v := h.Get(m.Name)
		if v == "" {
			continue
		}
		if m.Value != "" && strings.EqualFold(v, m.Value) || m.Value == "" && v != sent {
			return fmt.Sprintf("header %s: %s", m.Name, show(v)), ""
		}
		note = fmt.Sprintf("; the response header %s: %s came back", m.Name, show(v))
	}
	return "", note
}

func (r *run) staleOK(answer string) {
	r.res.stale = answer
	r.rec.Outcome = Success
}

// errStaleAnswered ends a session whose stale resume was answered by the
// response headers.
var errStaleAnswered = errors.New("stale cursor answered by a response header")

// staleOpen judges a stale resume that got no stream.
func (r *run) staleOpen(err error) {
	var se *resumeclient.StatusError
	errors.As(err, &se)
	switch {
	case se != nil && se.Status == http.StatusNoContent:
		r.staleOK("http_204")
	case se != nil && se.Status >= 400 && se.Status < 500:
		r.staleOK("http_" + strconv.Itoa(se.Status))
	default:
		r.classify(err)
		r.undefinedStale(fmt.Sprintf("got %s", r.rec.Error))
	}
}

// staleAnswer judges the first event after a stale resume.
func (r *run) staleAnswer(ev *resumeclient.Event) {
	switch string(ev.Type) {
	case orStr(r.dr.ErrorEvent, DefaultErrorEvent):
		r.staleOK("error_event")
		return
	case orStr(r.dr.ResetEvent, DefaultResetEvent):
		r.staleOK("reset_event")
		return
	}
	r.rec.Outcome = Success
	cursor, has := r.rs.Cursor(ev, r.decodeQuiet(ev))
	switch {
	case has && cursor != "" && r.check != nil && r.check.follows(r.rec.LastEventIDSent, cursor):
		r.rec.Verdict = VerdictNotStale
		r.rec.ResumeDetail = fmt.Sprintf("%s is not stale on this server: it resumed from it as from any id, with id %s next; a stale id is one the server cannot have (the default one, or one older than its retention)",
			r.rs.Label(r.show(r.rec.LastEventIDSent)), r.show(cursor))
	case has && cursor != "" && r.check != nil && cursor == r.check.firstID:
		r.undefinedStale(fmt.Sprintf("the server replayed the whole stream from the first event (id %s) with no reset marker (full replay)", r.show(cursor)))
	case has && cursor != "":
		r.undefinedStale(fmt.Sprintf("the stream carried on from id %s with no reset marker (live tail)", r.show(cursor)))
	default:
		r.undefinedStale("the stream carried on from an event with no id and no reset marker (live tail)")
	}
}

// decodeQuiet decodes an event for its cursor only.
func (r *run) decodeQuiet(ev *resumeclient.Event) dialect.Chunk {
	ch, _ := r.d.Decode(r.t, ev)
	return ch
}

// staleQuietWait is how long a stale resume's open stream may stay
// without an event (keep-alives only) before it is judged as no answer.
const staleQuietWait = 3 * time.Second

// staleEnded judges a stale resume whose stream ended before any event.
func (r *run) staleEnded(err error) {
	if r.res.staleQuiet.Load() {
		r.rec.Outcome = Success
		r.undefinedStale(fmt.Sprintf("the stream stayed open %s with no event (keep-alives only)", staleQuietWait))
		return
	}
	if errors.Is(err, io.EOF) {
		r.rec.Outcome = Success
		r.undefinedStale("the stream closed with no event and no defined answer")
		return
	}
	r.classify(err)
	r.undefinedStale("no answer: " + r.rec.Error)
}

func (r *run) undefinedStale(why string) {
	r.rec.Verdict = VerdictUndefinedStale
	r.rec.ResumeDetail = fmt.Sprintf("stale %s got no defined answer: %s%s", r.sentLabel(), why, r.res.staleNote)
}
