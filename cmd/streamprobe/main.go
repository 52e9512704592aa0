// Command streamprobe is a client-side synthetic probe for streamed answers
// (Server-Sent Events: OpenAI-compatible chat completions or any SSE
// endpoint). It measures what a user feels: time to first chunk, the gaps
// between chunks, the tail, the closing delay and stalls.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/streamprobe/streamprobe/internal/version"
)

// Exit codes.
const (
	exitOK    = 0
	exitFail  = 1 // the probe ran and found a failure
	exitUsage = 2 // bad usage or bad input
	// exitInconclusive: check, report or compare could not decide (an
	// interval straddles its budget or margin) and found no failure.
	exitInconclusive = 3
)

const usage = `streamprobe: a client-side synthetic probe for streamed answers (SSE).

Usage:
  streamprobe demo [-json] [-drills]  run short, long and cancel (or the resume drills) against the built-in reference target
  streamprobe once -url URL [flags]   run one streaming request (or a resume drill with -drill) and print its record
  streamprobe run [-config FILE]      run the scheduled daemon (metrics push, /metrics)
  streamprobe validate [-config FILE] check a config file
                                      (run and validate read /etc/streamprobe/probe.toml without -config)
  streamprobe check -config FILE      the acceptance check before a rollout: scorecard, exit 0, 1 or 3 (inconclusive)
  streamprobe report -config FILE -log FILE | -vm URL
                                      the scorecard over a window of results logs or VictoriaMetrics, by region
  streamprobe compare -config FILE -baseline A -candidate B
                                      is the candidate worse than its baseline? exit 0, 1 or 3 (inconclusive)
  streamprobe help [command]          show help for a command
  streamprobe version                 print the version (also -v, --version)

Run 'streamprobe COMMAND -h' for the flags of a command; 'streamprobe' alone
prints this text (exit 0).
Exit codes: 0 success, 1 the probe found a failure, 2 bad usage, 3 inconclusive
(check, report, compare: more runs would decide).
`

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if len(args) == 0 {
		// Bare streamprobe: what it can do, asked for as much as -h.
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	switch args[0] {
	case "once":
		return cmdOnce(ctx, args[1:], stdout, stderr)
	case "demo":
		return cmdDemo(ctx, args[1:], stdout, stderr)
	case "run":
		return cmdRun(ctx, args[1:], stdout, stderr)
	case "validate":
		return cmdValidate(args[1:], stdout, stderr)
	case "check":
		return cmdCheck(ctx, args[1:], stdout, stderr)
	case "report":
		return cmdReport(ctx, args[1:], stdout, stderr)
	case "compare":
		return cmdCompare(ctx, args[1:], stdout, stderr)
	case "version", "-version", "--version", "-v":
		fmt.Fprintf(stdout, "streamprobe %s\n", version.String())
		return exitOK
	case "help", "-h", "-help", "--help":
		if len(args) > 1 {
			switch args[1] {
			case "help", "-h", "-help", "--help":
				// help -h, help help: the usage below, not help again.
			default:
				return run([]string{args[1], "-h"}, stdout, stderr)
			}
		}
		fmt.Fprint(stdout, usage)
		return exitOK
	default:
		fmt.Fprintf(stderr, "streamprobe: unknown command %q (want demo, once, run, validate, check, report or compare; see 'streamprobe help')\n", args[0])
		return exitUsage
	}
}
