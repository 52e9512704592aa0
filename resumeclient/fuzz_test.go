package resumeclient

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"
)

type fuzzEvent struct {
	kind           Kind
	typ, data, id  string
	hasID          bool
	firstOK, dispO bool
}

// parseSplit feeds in to a parser in pieces of size step and returns what
// it dispatched, its last event id, whether an event was pending and the
// error, if any. Like a Stream, it reads every piece into one buffer, which
// it scribbles over once the parser has used it up: an event that still
// pointed into it would show.
func parseSplit(in []byte, step, limit int) ([]fuzzEvent, string, bool, error) {
	p := &Parser{MaxEventSize: limit}
	var out []fuzzEvent
	err := feedSplit(p, in, step, func(ev *Event, at time.Time) error {
		out = append(out, fuzzEvent{ev.Kind, string(ev.Type), string(ev.Data), string(ev.ID), ev.HasID,
			!ev.FirstByte.After(ev.Dispatched), !ev.Dispatched.After(at)})
		return nil
	})
	return out, p.LastEventID(), p.Pending(), err
}

// feedSplit pushes in to p in pieces of size step, each stamped 1 ms after
// the one before, through one buffer it scribbles over once p used it up
// (as a Stream does: an event still pointing into it would show), and
// hands every event to each with its piece's time; it stops at the first
// error, p's or each's.
func feedSplit(p frames, in []byte, step int, each func(ev *Event, at time.Time) error) error {
	t0 := time.Unix(0, 0)
	buf := make([]byte, step)
	for off, i := 0, 0; off < len(in); off, i = off+step, i+1 {
		at := t0.Add(time.Duration(i) * time.Millisecond)
		for k := range buf {
			buf[k] = '#'
		}
		n := copy(buf, in[off:min(off+step, len(in))])
		p.Push(buf[:n], at)
		for {
			ev, err := p.Next()
			if err != nil {
				return err
			}
			if ev == nil {
				break
			}
			if err := each(ev, at); err != nil {
				return err
			}
		}
	}
	return nil
}

// FuzzParser checks that the parser never panics, never holds more than
// its limit, and dispatches the same events however the input is split.
func FuzzParser(f *testing.F) {
	for _, s := range []string{
		"data: a\n\n", "\xEF\xBB\xBFdata: a\r\n\r\n", "id: 1\ndata: x\ndata: y\n\nid\ndata\n\n",
		": c\nevent: e\ndata:z\r\rretry: 10\n\n", "data: a\n\rdata: b", "id: a\x00b\ndata: x\n\n",
	} {
		f.Add([]byte(s), uint8(1))
		f.Add([]byte(s), uint8(3))
	}
	f.Fuzz(func(t *testing.T, in []byte, step uint8) {
		const limit = 256
		whole, wid, wpend, werr := parseSplit(in, max(1, len(in)), limit)
		split, sid, spend, serr := parseSplit(in, int(step%16)+1, limit)
		if (werr == nil) != (serr == nil) {
			// The limit may trip at a different read, but it trips or not
			// for the same input.
			t.Fatalf("whole err %v, split err %v", werr, serr)
		}
		if werr != nil {
			if !errors.Is(werr, ErrEventTooLarge) {
				t.Fatalf("unexpected error %v", werr)
			}
			return
		}
		if fmt.Sprint(strip(whole)) != fmt.Sprint(strip(split)) || wid != sid || wpend != spend {
			t.Fatalf("split %d changed the result:\nwhole %+v %q %v\nsplit %+v %q %v", step%16+1, whole, wid, wpend, split, sid, spend)
		}
		for _, e := range split {
			if len(e.data)+len(e.typ)+len(e.id) > 3*limit || !e.firstOK || !e.dispO {
				t.Fatalf("event %+v", e)
			}
			if bytes.IndexByte([]byte(e.id), 0) >= 0 {
				t.Fatalf("an id with NUL was taken: %q", e.id)
			}
		}
	})
}

// strip drops the timestamp checks, which differ between splits by design.
func strip(evs []fuzzEvent) []fuzzEvent {
	out := make([]fuzzEvent, len(evs))
	for i, e := range evs {
		e.firstOK, e.dispO = false, false
		out[i] = e
	}
	return out
}
