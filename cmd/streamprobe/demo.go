package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/streamprobe/streamprobe/probe"
	"github.com/streamprobe/streamprobe/resumeclient"
)

func cmdDemo(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the records as JSON lines")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: streamprobe demo [-json]

Starts the built-in reference target (an openai-chat stream on loopback,
no API key, no network) and runs the short, long and cancel samples
against it, printing the three records. Short replays the scorecard
article's worked example: TFC 412 ms, gap p50 46 ms / p95 259 ms,
tail 632 ms, close 7 ms, one stall.

Flags:
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	srv := probe.NewDemoServer()
	srv.Start()
	defer srv.Close()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	client := &resumeclient.Client{HTTP: &http.Client{Transport: tr}}
	code := exitOK
	for i, name := range probe.SampleNames {
		s := probe.Samples[name]
		t := probe.Target{Name: "demo", URL: srv.URL, Dialect: "openai-chat", Model: "ssetest"}
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		res := probe.Run(rctx, t, probe.Options{Sample: s, Client: client})
		cancel()
		if i > 0 && !*asJSON {
			fmt.Fprintln(stdout)
		}
		if err := printRecord(stdout, res.Record, *asJSON); err != nil {
			fmt.Fprintf(stderr, "streamprobe demo: writing output: %v\n", err)
			return exitFail
		}
		if !passed(res.Record, s) {
			code = exitFail
		}
		if ctx.Err() != nil {
			return exitFail
		}
	}
	return code
}
