package dialect_test

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/probe"
)

// The tests of this package's own files (package dialect) read events;
// the tests of package dialect_test run each dialect end to end, through
// probe.Run, against the reference target or a real peer.

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// runProbe runs sample against tg as the daemon does: a client of its own
// (TLS settings, fresh connections), the timeout named.
func runProbe(t *testing.T, tg dialect.Target, sample string, timeout time.Duration) probe.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	s, err := dialect.LookupSample(sample)
	if err != nil {
		t.Fatal(err)
	}
	c := probe.NewClient(tg)
	t.Cleanup(c.HTTP.CloseIdleConnections)
	return probe.Run(ctx, tg, probe.Options{Sample: s, Client: c, Timeout: timeout})
}
