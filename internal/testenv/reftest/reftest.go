// Package reftest runs the reference target (internal/refserver) inside a
// test and checks a client's readings against what the server logged.
//
// A read never returns bytes before the server wrote them, and refserver
// writes no step before it is due (its clock starts when the request
// arrives, after the client's start), so a client reading of a step is
// never earlier than the step's due time: a lower bound that holds
// whatever the scheduler does. There is no upper bound of that kind: a
// busy machine delays a read by any amount (a clean-clone run with a load
// of 13 on 2 cores measured a close_ms 10 ms shorter than the server's
// interval, its read of the last chunk late). Where a test must catch a
// value that is too large, it compares it with the client's own readings,
// exactly, or with a bound derived from them and the schedule. How close
// the readings come to the server's writes on a quiet machine is
// bench/accuracy's to measure.
package reftest

import (
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/internal/refserver"
	"github.com/streamprobe/streamprobe/resumeclient"
)

// RunDeadline bounds a run that is to end on its own: long, since a busy
// machine slows a run down by any amount, and a run returns as soon as it
// ends. (A run that is to time out has its own, short, deadline.)
const RunDeadline = 30 * time.Second

// Rounding is the record's: milliseconds rounded to the microsecond.
const Rounding = time.Microsecond

// Serve starts srv unless it runs already, and closes it when the test
// ends.
func Serve(t testing.TB, srv *refserver.Server) *refserver.Server {
	t.Helper()
	if srv.URL == "" {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv
}

// ClosedConn waits for the server to finish connection i and returns its
// log, so that every step it wrote is in it.
func ClosedConn(t testing.TB, srv *refserver.Server, i int) refserver.Conn {
	t.Helper()
	c, ok := srv.WaitClosed(i, 10*time.Second)
	if !ok {
		t.Fatalf("connection %d not closed on the server", i)
	}
	return c
}

// NewClient is a client with its own transport, closed when the test
// ends.
func NewClient(t testing.TB) *resumeclient.Client {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &resumeclient.Client{HTTP: &http.Client{Transport: tr}}
}

// Due is when step k that connection c sent was due: the connection's
// start plus the step's offset (on a first connection; a resumed one
// starts later on its schedule).
func Due(srv *refserver.Server, c refserver.Conn, k int) time.Time {
	return c.Start.Add(srv.Schedule[c.Sent[k].Index].At)
}

// NotBefore checks that a client reading is not earlier than the earliest
// time the server can have sent what it stamps.
func NotBefore(t testing.TB, what string, got, earliest time.Time) {
	t.Helper()
	if got.Before(earliest.Add(-Rounding)) {
		t.Errorf("%s: client reading %v before the server could send it at %v (%v early)", what,
			got.Format("15:04:05.000000"), earliest.Format("15:04:05.000000"), earliest.Sub(got))
	}
}

// MsNotBefore is NotBefore for a record milestone in ms from the client's
// start.
func MsNotBefore(t testing.TB, what string, got *float64, start, earliest time.Time) {
	t.Helper()
	if got == nil {
		t.Errorf("%s absent, want a reading after %v", what, earliest.Sub(start))
		return
	}
	NotBefore(t, what, start.Add(time.Duration(*got*float64(time.Millisecond))), earliest)
}

// Milestone checks a record milestone that stamps step k of connection c,
// for a run that started at start: not before the step was due, and the
// client's reading of it.
func Milestone(t testing.TB, what string, got *float64, start time.Time, srv *refserver.Server, c refserver.Conn, k int, reading time.Time) {
	t.Helper()
	MsNotBefore(t, what, got, start, Due(srv, c, k))
	MsIs(t, what, got, MsSince(start, reading))
}

// MsIs checks a record value against the one the client's own readings
// give, which scheduling cannot make differ (but for the rounding).
func MsIs(t testing.TB, what string, got *float64, want float64) {
	t.Helper()
	if got == nil || math.Abs(*got-want) > 2*float64(Rounding)/1e6 {
		t.Errorf("%s = %v, the client's readings give %.3f", what, Shown(got), want)
	}
}

// MsSince is t - start in ms.
func MsSince(start, t time.Time) float64 { return float64(t.Sub(start)) / 1e6 }

// Val is *p, 0 when nil.
func Val(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// Shown is *p as a message shows it: "absent" when nil.
func Shown(p *float64) any {
	if p == nil {
		return "absent"
	}
	return *p
}

// StallWatch measures how late this process wakes while a run goes: a
// goroutine asks to wake every 5 ms and keeps its longest lateness, which
// the returned func stops and reports.
func StallWatch() (stop func() time.Duration) {
	done, worst := make(chan struct{}), make(chan time.Duration)
	go func() {
		var w time.Duration
		for {
			at := time.Now()
			select {
			case <-done:
				worst <- w
				return
			case <-time.After(5 * time.Millisecond):
				w = max(w, time.Since(at)-5*time.Millisecond)
			}
		}
	}()
	return func() time.Duration { close(done); return <-worst }
}
