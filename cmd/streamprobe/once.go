package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/streamprobe/streamprobe/config"
	"github.com/streamprobe/streamprobe/probe"
	"github.com/streamprobe/streamprobe/resumeclient"
)

// headerFlags collects repeated -header 'K: V' flags.
type headerFlags []string

func (h *headerFlags) String() string     { return strings.Join(*h, ", ") }
func (h *headerFlags) Set(v string) error { *h = append(*h, v); return nil }

// secretHeaders may not be given on the command line, where they would show
// in ps and shell history.
var secretHeaders = map[string]bool{"Authorization": true, "Proxy-Authorization": true, "X-Api-Key": true, "Api-Key": true, "Cookie": true}

type onceFlags struct {
	url, dialect, method, body, sample, name, model string
	bearerEnv, endEvent, endData                    string
	headers, headerEnv                              headerFlags
	host, region                                    string
	labels                                          headerFlags
	cancelAfter, maxEvent, maxChunks                int
	timeout                                         time.Duration
	json, insecure, builtin, http2                  bool

	drill, staleID, ids, errorEvent, resetEvent string
	staleHeaders                                headerFlags
	dropAfter, rewind, maxReconnects            int
	noResume                                    bool
	dropAt                                      time.Duration
}

func (f *onceFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.url, "url", "", "target URL (required unless -builtin); for the API dialects a base URL gets its /v1/... path appended")
	fs.BoolVar(&f.builtin, "builtin", false, "probe the built-in reference target on loopback instead of -url (every dialect, resumable)")
	fs.StringVar(&f.dialect, "dialect", "sse", "wire format: "+strings.Join(probe.DialectNames(), " | "))
	fs.StringVar(&f.method, "method", "", "HTTP method (default: GET for sse without a body, POST otherwise)")
	fs.Var(&f.headers, "header", "extra request header 'Name: value' (repeatable; not for secrets)")
	fs.Var(&f.headerEnv, "header-env", "header whose value is read from an env var, 'Name: ENV_VAR' (repeatable)")
	fs.StringVar(&f.bearerEnv, "bearer-env", "", "env var that holds an API key, sent as 'Authorization: Bearer <key>'")
	fs.StringVar(&f.body, "body", "", "request body: JSON text, or @file to read it from a file")
	fs.StringVar(&f.sample, "sample", "short", "fixed sample: "+strings.Join(probe.SampleNames, " | "))
	fs.IntVar(&f.cancelAfter, "cancel-after", probe.DefaultCancelAfter, "with -sample cancel: content chunks to read before cancelling")
	fs.DurationVar(&f.timeout, "timeout", 60*time.Second, "deadline for the whole request")
	fs.StringVar(&f.model, "model", "", "model name sent by chat dialects")
	fs.StringVar(&f.name, "name", "", "target name in the record (default: the URL's host)")
	fs.StringVar(&f.endEvent, "end-event", "", "sse dialect: event type that marks the end")
	fs.StringVar(&f.endData, "end-data", "[DONE]", "sse dialect: data that marks the end; with -end-event also empty, the end of the body is the end")
	fs.IntVar(&f.maxEvent, "max-event-size", resumeclient.DefaultMaxEventSize, "largest event accepted, in bytes")
	fs.IntVar(&f.maxChunks, "max-chunks", probe.DefaultMaxChunks, "content chunks one run may hold; more ends the run as protocol_error (bounds its memory)")
	fs.StringVar(&f.host, "host", "", "host in the record (default: this machine's hostname)")
	fs.StringVar(&f.region, "region", "", "region in the record")
	fs.Var(&f.labels, "label", "extra label in the record, 'name=value' (repeatable; names as in the config's [labels])")
	fs.BoolVar(&f.json, "json", false, "print the record as one JSON object per line")
	fs.BoolVar(&f.http2, "http2", false, "offer HTTP/2 over TLS, as browsers do (default: HTTP/1.1, as the OpenAI and Anthropic SDKs)")
	fs.BoolVar(&f.insecure, "insecure-skip-verify", false, "do not verify the target's TLS certificate (logged loudly; for test hosts only)")
	fs.StringVar(&f.drill, "drill", "", "resume drill: "+strings.Join(probe.DrillNames, " | ")+" (sse dialect; see the README)")
	fs.IntVar(&f.dropAfter, "drop-after", probe.DefaultDropAfter, "drill: content chunks a connection reads before the client drops it")
	fs.DurationVar(&f.dropAt, "drop-at", 0, "drill: drop the first connection this long after the start instead (may land mid-event)")
	fs.IntVar(&f.rewind, "rewind", probe.DefaultRewind, "duplicate drill: how many events back the last resume starts")
	fs.StringVar(&f.staleID, "stale-id", "", "stale drill: the cursor to resume with: an unknown id, or one older than the server retains (default "+probe.DefaultStaleID+", or "+probe.DefaultStaleCursor+" for openai-responses)")
	fs.StringVar(&f.ids, "ids", "int", "drill: 'int' checks integer ids for continuity, 'opaque' only for uniqueness and position")
	fs.StringVar(&f.errorEvent, "error-event", "error", "stale drill: event type of an error answer")
	fs.StringVar(&f.resetEvent, "reset-event", "reset", "stale drill: event type of a reset marker")
	fs.Var(&f.staleHeaders, "stale-header", "stale drill: response header that answers a stale id: 'Name' (names the position the server resumed from; any value but the id sent answers) or 'Name: value' (repeatable; default Last-Event-ID and Mercure-Last-Event-ID)")
	fs.BoolVar(&f.noResume, "no-resume", false, "end the run as upstream_error when the server drops the stream, instead of resuming it (sse with ids, openai-responses)")
	fs.IntVar(&f.maxReconnects, "max-reconnects", probe.DefaultMaxReconnects, "reconnects one run may make after drops by the server")
}

// drillOptions turns the drill flags into a probe.Drill. The id check and
// the stale answers also serve a resume after a drop by the server.
func (f *onceFlags) drillOptions() (probe.Drill, error) {
	d := probe.Drill{Name: f.drill, DropAfter: f.dropAfter, DropAt: f.dropAt, Rewind: f.rewind,
		StaleID: f.staleID, ErrorEvent: f.errorEvent, ResetEvent: f.resetEvent, MaxReconnects: f.maxReconnects}
	switch f.ids {
	case "int":
	case "opaque":
		d.OpaqueIDs = true
	default:
		return d, fmt.Errorf("-ids %q: want int or opaque", f.ids)
	}
	if f.maxReconnects < 1 || f.maxReconnects > 100 {
		return d, fmt.Errorf("-max-reconnects %d: want 1 to 100", f.maxReconnects)
	}
	for _, kv := range f.staleHeaders {
		m, err := config.ParseHeaderMatch(kv)
		if err != nil {
			return d, fmt.Errorf("-stale-header %w", err)
		}
		d.StaleHeaders = append(d.StaleHeaders, probe.HeaderMatch{Name: m[0], Value: m[1]})
	}
	if i := resumeclient.InvalidHeaderByte(f.staleID); i >= 0 {
		return d, fmt.Errorf("-stale-id %q holds the byte 0x%02x at offset %d, which no HTTP header may carry: it is sent as Last-Event-ID", f.staleID, f.staleID[i], i)
	}
	if f.drill == "" {
		return d, nil
	}
	if !slices.Contains(probe.DrillNames, f.drill) {
		return d, fmt.Errorf("-drill: unknown drill %q (known: %s)", f.drill, strings.Join(probe.DrillNames, ", "))
	}
	if f.dropAfter < 1 {
		return d, fmt.Errorf("-drop-after %d: want 1 or more", f.dropAfter)
	}
	if f.dropAt < 0 {
		return d, fmt.Errorf("-drop-at %s: want a positive duration", f.dropAt)
	}
	if f.dropAt >= f.timeout {
		return d, fmt.Errorf("-drop-at %s must be shorter than -timeout %s", f.dropAt, f.timeout)
	}
	if f.rewind < 1 {
		return d, fmt.Errorf("-rewind %d: want 1 or more", f.rewind)
	}
	return d, nil
}

// origin is the record's host, region and labels from the flags.
func (f *onceFlags) origin() (probe.Origin, error) {
	o := probe.Origin{Host: f.host, Region: f.region}
	if o.Host == "" {
		o.Host, _ = os.Hostname()
	}
	for _, kv := range f.labels {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return o, fmt.Errorf("-label %q: want 'name=value'", kv)
		}
		if err := config.CheckLabelName(k); err != nil {
			return o, fmt.Errorf("-label %w", err)
		}
		if o.Labels == nil {
			o.Labels = map[string]string{}
		}
		o.Labels[k] = v
	}
	return o, nil
}

// target turns the flags into a probe target, or a one-line usage error.
func (f *onceFlags) target(getenv func(string) string) (probe.Target, probe.Sample, error) {
	var t probe.Target
	if f.url == "" {
		return t, probe.Sample{}, errors.New("-url is required (or -builtin for the built-in reference target)")
	}
	u, err := url.Parse(f.url)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return t, probe.Sample{}, fmt.Errorf("-url %q: want an absolute http or https URL", redact(f.url))
	}
	if _, err := probe.LookupDialect(f.dialect); err != nil {
		return t, probe.Sample{}, fmt.Errorf("-dialect: %w", err)
	}
	s, err := probe.LookupSample(f.sample)
	if err != nil {
		return t, probe.Sample{}, fmt.Errorf("-sample: %w", err)
	}
	if f.cancelAfter < 1 {
		return t, s, fmt.Errorf("-cancel-after %d: want 1 or more", f.cancelAfter)
	}
	if f.timeout <= 0 {
		return t, s, fmt.Errorf("-timeout %s: want a positive duration", f.timeout)
	}
	if f.maxChunks < 1 {
		return t, s, fmt.Errorf("-max-chunks %d: want 1 or more", f.maxChunks)
	}
	if f.maxEvent < 1 {
		return t, s, fmt.Errorf("-max-event-size %d: want 1 or more", f.maxEvent)
	}
	h := http.Header{}
	for _, kv := range f.headers {
		k, v, ok := strings.Cut(kv, ":")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return t, s, fmt.Errorf("-header %q: want 'Name: value'", kv)
		}
		if secretHeaders[http.CanonicalHeaderKey(k)] {
			return t, s, fmt.Errorf("-header %s: secrets may not be given on the command line; use -bearer-env or -header-env", k)
		}
		h.Add(k, strings.TrimSpace(v))
	}
	for _, kv := range f.headerEnv {
		k, env, ok := strings.Cut(kv, ":")
		k, env = strings.TrimSpace(k), strings.TrimSpace(env)
		if !ok || k == "" || env == "" {
			return t, s, fmt.Errorf("-header-env %q: want 'Name: ENV_VAR'", kv)
		}
		v := getenv(env)
		if v == "" {
			return t, s, fmt.Errorf("-header-env %s: environment variable %s is not set", k, env)
		}
		h.Set(k, v)
	}
	if f.bearerEnv != "" {
		v := getenv(f.bearerEnv)
		if v == "" {
			return t, s, fmt.Errorf("-bearer-env: environment variable %s is not set", f.bearerEnv)
		}
		h.Set("Authorization", "Bearer "+v)
	}
	for k, vs := range h {
		if i := resumeclient.InvalidHeaderByte(vs[0]); i >= 0 {
			return t, s, fmt.Errorf("header %s: its value holds the byte 0x%02x at offset %d, which no HTTP header may carry", k, vs[0][i], i)
		}
	}
	var body []byte
	if f.body != "" {
		if path, ok := strings.CutPrefix(f.body, "@"); ok {
			if body, err = os.ReadFile(path); err != nil {
				return t, s, fmt.Errorf("-body: %w", err)
			}
		} else {
			body = []byte(f.body)
		}
	}
	name := f.name
	if name == "" {
		name = u.Host
	}
	t = probe.Target{Name: name, URL: f.url, Dialect: f.dialect, Method: f.method, Header: h, Body: body,
		Model: f.model, EndEvent: f.endEvent, EndData: f.endData, MaxEventSize: f.maxEvent, InsecureSkipVerify: f.insecure, HTTP2: f.http2, NoResume: f.noResume, MaxChunks: f.maxChunks}
	return t, s, nil
}

func redact(u string) string {
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		return u[:i] + "?..."
	}
	return u
}

func cmdOnce(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("once", flag.ContinueOnError)
	var f onceFlags
	f.register(fs)
	if code, ok := parseFlags(fs, args, stdout, stderr, `Usage: streamprobe once -url URL [flags]

Runs one streaming request and prints its record: a summary, or one JSON
object per line with -json. Exit 0 on success (or the intended cancel of
-sample cancel), 1 when the probe failed, 2 on bad usage.

Flags:
`); !ok {
		return code
	}
	if f.builtin && f.url != "" {
		fmt.Fprintln(stderr, "streamprobe once: -builtin and -url exclude each other")
		return exitUsage
	}
	if f.builtin {
		srv := probe.NewDemoServer()
		srv.Start()
		defer srv.Close()
		f.url = srv.URL
		if f.dialect == "sse" {
			f.url += "/events"
		}
		f.builtin = false
		if f.name == "" {
			f.name = "builtin"
		}
	}
	t, s, err := f.target(os.Getenv)
	if err != nil {
		fmt.Fprintf(stderr, "streamprobe once: %v\n", err)
		return exitUsage
	}
	if f.insecure {
		fmt.Fprintln(stderr, "streamprobe once: WARNING: TLS certificate verification is off (-insecure-skip-verify)")
	}
	drill, err := f.drillOptions()
	if err != nil {
		fmt.Fprintf(stderr, "streamprobe once: %v\n", err)
		return exitUsage
	}
	origin, err := f.origin()
	if err != nil {
		fmt.Fprintf(stderr, "streamprobe once: %v\n", err)
		return exitUsage
	}
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	res := probe.Run(ctx, t, probe.Options{Sample: s, CancelAfter: f.cancelAfter, Drill: drill, Timeout: f.timeout})
	res.Record.Stamp(origin)
	if err := printRecord(stdout, res.Record, f.json); err != nil {
		fmt.Fprintf(stderr, "streamprobe once: writing output: %v\n", err)
		return exitFail
	}
	if res.Record.Passed() {
		return exitOK
	}
	return exitFail
}
