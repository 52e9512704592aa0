package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/internal/builtin"
	"github.com/streamprobe/streamprobe/internal/refserver"
	"github.com/streamprobe/streamprobe/probe"
	"github.com/streamprobe/streamprobe/resumeclient"
)

func cmdDemo(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print the records as JSON lines")
	drills := fs.Bool("drills", false, "run the resume drills instead, against the reference target with each resume bug switched on in turn")
	if code, ok := parseFlags(fs, args, stdout, stderr, `Usage: streamprobe demo [-json] [-drills]

Starts the built-in reference target (an openai-chat stream on loopback,
no API key, no network) and runs the short, long and cancel samples
against it, printing the three records. Short replays the scorecard
article's worked example: TFC 412 ms, gap p50 46 ms / p95 259 ms,
tail 632 ms, close 7 ms, one stall.

With -drills it runs the resume drills instead (generic sse dialect, ids 1
to 12): drop, duplicate and stale against a correct server, then drop and
stale against a server with each resume bug in turn; then the same over
the reference MCP server's Last-Event-ID resume (mcp dialect), with each
of its event-store faults. Each bug's record
names it; each drill prints the verdict expected from its server, and the
exit code is 1 when any verdict differs from the expected one.

Flags:
`); !ok {
		return code
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	client := &resumeclient.Client{HTTP: &http.Client{Transport: tr}}
	if *drills {
		return demoDrills(ctx, client, builtin.Drills(), *asJSON, stdout, stderr)
	}
	srv := builtin.New()
	srv.Start()
	defer srv.Close()
	var origin probe.Origin
	origin.Host, _ = os.Hostname()
	code := exitOK
	for i, name := range dialect.SampleNames {
		s := dialect.Samples[name]
		t := dialect.Target{Name: "demo", URL: builtin.URL(srv.URL, "openai-chat", 0), Dialect: "openai-chat", Model: "refserver"}
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		res := probe.Run(rctx, t, probe.Options{Sample: s, Client: client})
		cancel()
		res.Record.Stamp(origin)
		if i > 0 && !*asJSON {
			fmt.Fprintln(stdout)
		}
		if err := printRecord(stdout, res.Record, *asJSON); err != nil {
			fmt.Fprintf(stderr, "streamprobe demo: writing output: %v\n", err)
			return exitFail
		}
		if !res.Record.Passed() {
			code = exitFail
		}
		if ctx.Err() != nil {
			return exitFail
		}
	}
	return code
}

// demoDrills runs each drill against its server and prints the records;
// exit 1 when a verdict differs from the expected one.
func demoDrills(ctx context.Context, client *resumeclient.Client, drills []builtin.DrillCase, asJSON bool, stdout, stderr io.Writer) int {
	code := exitOK
	for i, dd := range drills {
		srv := refserver.NewUnstarted(refserver.DrillEvents())
		if dd.Setup != nil {
			dd.Setup(srv)
		}
		srv.Start()
		t := dd.Target(srv.URL)
		timeout := dd.Timeout
		if timeout == 0 {
			timeout = 10 * time.Second
		}
		rctx, cancel := context.WithTimeout(ctx, timeout)
		res := probe.Run(rctx, t, probe.Options{Sample: dialect.Samples["long"], Client: client, Drill: dd.ProbeDrill()})
		cancel()
		srv.Close()
		if !asJSON {
			if i > 0 {
				fmt.Fprintln(stdout)
			}
			fmt.Fprintf(stdout, "# server: %s; %s\n", dd.Server, expectedText(dd))
		}
		if err := printRecord(stdout, res.Record, asJSON); err != nil {
			fmt.Fprintf(stderr, "streamprobe demo: writing output: %v\n", err)
			return exitFail
		}
		// Each server must get its own verdict: a bug switched on named
		// as that bug, a correct server a pass.
		if !demoAgrees(dd, res.Record) {
			fmt.Fprintf(stderr, "streamprobe demo: server %q: verdict %s, expected %s\n", dd.Server, res.Record.Verdict, dd.Want)
			code = exitFail
		}
		if ctx.Err() != nil {
			return exitFail
		}
	}
	return code
}

// expectedText says what a demo drill's server must give.
func expectedText(dd builtin.DrillCase) string {
	if dd.WantOutcome != "" {
		return "expected outcome: " + strings.ToUpper(string(dd.WantOutcome))
	}
	return "expected verdict: " + strings.ToUpper(string(dd.Want))
}

// demoAgrees reports whether a drill's record is what its server must
// give: its verdict, on a run that ended as its sample intends (or with
// the outcome the drill names).
func demoAgrees(dd builtin.DrillCase, rec probe.Record) bool {
	if dd.WantOutcome != "" {
		return rec.Outcome == dd.WantOutcome && rec.Verdict == dd.Want
	}
	return rec.Verdict == dd.Want && (rec.Intended() || dd.EndsInError())
}
