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
	"sync"
	"time"

	"clients/internal/lag"

	"github.com/streamprobe/streamprobe/probe"
	"github.com/streamprobe/streamprobe/resumeclient"
)

// streams maps a stream's URL to its lag recorder.
var streams sync.Map

type lagDialect struct{ probe.Dialect }

func (d lagDialect) Decode(t probe.Target, ev *resumeclient.Event) (probe.Chunk, error) {
	if s, ok := streams.Load(t.URL); ok && ev.Kind == resumeclient.KindEvent {
		lag.Event(s.(*lag.Stream), ev.Dispatched.UnixNano(), ev.Data)
	}
	return d.Dialect.Decode(t, ev)
}

func main() {
	probe.Dialects["bench-lag"] = lagDialect{probe.Dialects["sse"]}
	tg := probe.Target{Name: "bench", Dialect: "bench-lag", EndData: "[DONE]"}
	client := probe.NewClient(tg)
	lag.Main("probe", func(url string, s *lag.Stream) error {
		streams.Store(url, s)
		defer streams.Delete(url)
		t := tg
		t.URL = url
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		res := probe.Run(ctx, t, probe.Options{Sample: probe.Samples["long"], Client: client, RequestID: url})
		if !res.Record.Passed() {
			return fmt.Errorf("%s: %s", res.Record.Outcome, res.Record.Error)
		}
		return nil
	})
}
