//go:build streamprobe

// Command probe is the whole probe path as a client of the shared live-stream
// benchmark (../shared/bench/clients): one probe.Run per stream, with the
// client probe.NewClient builds for the target, as the daemon runs it. The
// lag of an event is its arrival time as the probe records it (the
// timeline's chunk time, Event.Dispatched) minus the server's send time.
// The probe keeps no content, so the bench's dialect reads sent_ns as it
// decodes each event, then hands the event to the sse dialect.
//
// It is built inside a copy of the shared bench by ../run.sh; it does not
// build in this module (the lag package is the bench's).
package main

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"clients/internal/lag"

	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/probe"
	"github.com/streamprobe/streamprobe/resumeclient"
)

// slots holds each stream's lag recorder at the index its run's request id
// names (the target's RunID). The bare client reads its recorder from a
// local variable; a lookup by URL in a sync.Map, as this harness did until
// 2026-12-06, hashed the URL for every event and put 4% of the probe's CPU
// on the harness. An untouched slot is not resident.
var (
	slots [1 << 14]atomic.Pointer[lag.Stream]
	next  atomic.Int64
)

type lagDialect struct{ dialect.Dialect }

func (d lagDialect) Decode(t dialect.Target, ev *resumeclient.Event) (dialect.Chunk, error) {
	if ev.Kind == resumeclient.KindEvent {
		if i, err := strconv.Atoi(t.RunID); err == nil && uint(i) < uint(len(slots)) {
			if s := slots[i].Load(); s != nil {
				lag.Event(s, ev.Dispatched.UnixNano(), ev.Data)
			}
		}
	}
	return d.Dialect.Decode(t, ev)
}

func main() {
	dialect.Dialects["bench-lag"] = lagDialect{dialect.Dialects["sse"]}
	tg := dialect.Target{Name: "bench", Dialect: "bench-lag", EndData: "[DONE]"}
	client := probe.NewClient(tg)
	lag.Main("probe", func(url string, s *lag.Stream) error {
		i := int(next.Add(1))
		if i >= len(slots) {
			return fmt.Errorf("more than %d streams", len(slots)-1)
		}
		slots[i].Store(s)
		defer slots[i].Store(nil)
		t := tg
		t.URL = url
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		res := probe.Run(ctx, t, probe.Options{Sample: dialect.Samples["long"], Client: client, RequestID: strconv.Itoa(i)})
		if !res.Record.Passed() {
			return fmt.Errorf("%s: %s", res.Record.Outcome, res.Record.Error)
		}
		return nil
	})
}
