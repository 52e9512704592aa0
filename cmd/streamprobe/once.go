package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/streamprobe/streamprobe/config"
	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/internal/jobs"
	"github.com/streamprobe/streamprobe/probe"
	"github.com/streamprobe/streamprobe/resumeclient"
)

// headerFlags collects repeated -header 'K: V' flags.
type headerFlags []string

func (h *headerFlags) String() string     { return strings.Join(*h, ", ") }
func (h *headerFlags) Set(v string) error { *h = append(*h, v); return nil }

type onceFlags struct {
	url, dialect, method, body, sample, name, model string
	tool, toolArgs, mcpVersion                      string
	task                                            bool
	bearerEnv, endEvent, endData                    string
	awsRegion, awsProfile                           string
	bearerCommand, googleCredentials                string
	headers, headerEnv                              headerFlags
	host, region                                    string
	labels                                          headerFlags
	cancelAfter, maxEvent, maxChunks                int
	timeout                                         time.Duration
	json, insecure, builtin, http2                  bool

	drill, staleID, ids, errorEvent, resetEvent string
	staleHeaders                                headerFlags
	dropAfter, rewind, maxReconnects            int
	noResume, noInlineThink                     bool
	dropAt, away                                time.Duration

	assistant, input, streamMode, resumeURL string
	streamResumable                         optBool
	resumable                               bool
}

// optBool is a boolean flag that knows whether it was given.
type optBool struct{ v *bool }

func (b *optBool) String() string {
	if b == nil || b.v == nil {
		return ""
	}
	return strconv.FormatBool(*b.v)
}

func (b *optBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return errors.New("want true or false")
	}
	b.v = &v
	return nil
}

func (b *optBool) IsBoolFlag() bool { return true }

// onceKeys maps each config key once's flags set to its flag, so that an
// error names the flag the user gave.
var onceKeys = map[string]string{
	"host": "-host", "region": "-region", "labels": "-label",
	"target[0].name": "-name", "target[0].url": "-url", "target[0].builtin": "-builtin",
	"target[0].dialect": "-dialect", "target[0].method": "-method", "target[0].model": "-model",
	"target[0].headers": "-header", "target[0].header_env": "-header-env", "target[0].bearer_env": "-bearer-env",
	"target[0].samples": "-sample", "target[0].drill_sample": "-sample", "target[0].drills": "-drill",
	"target[0].cancel_after": "-cancel-after", "target[0].max_stream": "-timeout",
	"target[0].max_event_size": "-max-event-size", "target[0].max_chunks": "-max-chunks",
	"target[0].end_event": "-end-event", "target[0].end_data": "-end-data",
	"target[0].insecure_skip_verify": "-insecure-skip-verify", "target[0].http2": "-http2",
	"target[0].drop_after": "-drop-after", "target[0].drop_at": "-drop-at", "target[0].away": "-away", "target[0].rewind": "-rewind",
	"target[0].stale_id": "-stale-id", "target[0].ids": "-ids", "target[0].error_event": "-error-event",
	"target[0].reset_event": "-reset-event", "target[0].stale_headers": "-stale-header",
	"target[0].resume_on_drop": "-no-resume", "target[0].max_reconnects": "-max-reconnects",
	"target[0].tool": "-tool", "target[0].mcp_version": "-mcp-version", "target[0].inline_think": "-no-inline-think",
	"target[0].assistant_id": "-assistant", "target[0].input": "-input", "target[0].stream_mode": "-stream-mode",
	"target[0].stream_resumable": "-stream-resumable", "target[0].resumable": "-resumable", "target[0].resume_url": "-resume-url",
	"target[0].aws_region": "-aws-region", "target[0].aws_profile": "-aws-profile",
	"target[0].bearer_command": "-bearer-command", "target[0].google_credentials_file": "-google-credentials-file",
}

func (f *onceFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.url, "url", "", "target URL (required unless -builtin); for the API dialects a base URL gets its /v1/... path appended")
	fs.BoolVar(&f.builtin, "builtin", false, "probe the built-in reference target on loopback instead of -url (every dialect, resumable)")
	fs.StringVar(&f.dialect, "dialect", "sse", "wire format: "+strings.Join(dialect.Names(), " | "))
	fs.StringVar(&f.method, "method", "", "HTTP method (default: GET for sse without a body, POST otherwise)")
	fs.Var(&f.headers, "header", "extra request header 'Name: value' (repeatable; not for secrets)")
	fs.Var(&f.headerEnv, "header-env", "header whose value is read from an env var, 'Name: ENV_VAR' (repeatable)")
	fs.StringVar(&f.bearerEnv, "bearer-env", "", "env var that holds an API key, sent as 'Authorization: Bearer <key>', or in the header the dialect's API takes: "+strings.Join(dialect.KeyHeaders(), ", "))
	fs.StringVar(&f.bearerCommand, "bearer-command", "", "command run before the request whose output is the key, sent as -bearer-env's is (e.g. 'gcloud auth print-access-token'; split at spaces, no shell)")
	fs.StringVar(&f.googleCredentials, "google-credentials-file", "", "a Google service account's JSON key: its OAuth access token is sent as 'Authorization: Bearer' (Vertex AI)")
	fs.StringVar(&f.awsRegion, "aws-region", "", "bedrock dialect: the region SigV4 signs for (default: the one the URL's host names)")
	fs.StringVar(&f.awsProfile, "aws-profile", "", "bedrock dialect: the shared credentials file's profile (default: AWS_PROFILE, else default)")
	fs.StringVar(&f.body, "body", "", "request body: JSON text, or @file to read it from a file")
	fs.StringVar(&f.sample, "sample", "short", "fixed sample: "+strings.Join(dialect.SampleNames, " | "))
	fs.IntVar(&f.cancelAfter, "cancel-after", dialect.DefaultCancelAfter, "with -sample cancel: content chunks to read before cancelling")
	fs.DurationVar(&f.timeout, "timeout", 60*time.Second, "deadline for the whole request")
	fs.StringVar(&f.model, "model", "", "model name sent by chat dialects")
	fs.StringVar(&f.tool, "tool", "", "mcp dialect: the tool to call (default: the reference server's progress tool)")
	fs.StringVar(&f.toolArgs, "tool-args", "", "mcp dialect: the tool's arguments, a JSON object (default {} for -tool, else the sample's for the reference server)")
	fs.BoolVar(&f.task, "task", false, "mcp dialect: ask for the call to be made a task (MCP Tasks) and poll for its result, where the server makes tasks")
	fs.StringVar(&f.mcpVersion, "mcp-version", "", "mcp dialect: pin the protocol version ("+strings.Join(dialect.MCPVersions(), ", ")+"); default: ask the server (server/discover) and speak the newest both know")
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
	fs.StringVar(&f.drill, "drill", "", "resume drill: "+strings.Join(probe.DrillNames, " | ")+" (on the dialects that resume: "+strings.Join(dialect.Resumable(), ", ")+", and ai-sdk-ui with -resumable; on another the plain request runs and the drill says not_supported; see docs/drills.md)")
	fs.IntVar(&f.dropAfter, "drop-after", probe.DefaultDropAfter, "drill: content chunks a connection reads before the client drops it")
	fs.DurationVar(&f.dropAt, "drop-at", 0, "drill: drop the first connection this long after the start instead (may land mid-event)")
	fs.DurationVar(&f.away, "away", 0, "drill: stay away this long after the drop before resuming (a client that comes back later); default at once")
	fs.IntVar(&f.rewind, "rewind", probe.DefaultRewind, "duplicate drill: how many events back the last resume starts")
	fs.StringVar(&f.staleID, "stale-id", "", "stale drill: the cursor to resume with: an unknown id, or one older than the server retains (default "+dialect.DefaultStaleID+", or "+dialect.DefaultStaleCursor+" for openai-responses and langgraph, or the chat id "+dialect.DefaultStaleChat+" for a resumable ai-sdk-ui app)")
	fs.StringVar(&f.ids, "ids", "", "drill: '"+config.IDsInt+"' checks integer ids for continuity, '"+config.IDsOpaque+"' only for uniqueness and position (default: "+config.IDsOpaque+" for "+strings.Join(dialect.OpaqueIDDialects(), ", ")+", "+config.IDsInt+" for the others)")
	fs.StringVar(&f.errorEvent, "error-event", probe.DefaultErrorEvent, "stale drill: event type of an error answer")
	fs.StringVar(&f.resetEvent, "reset-event", probe.DefaultResetEvent, "stale drill: event type of a reset marker")
	fs.Var(&f.staleHeaders, "stale-header", "stale drill: response header that answers a stale id: 'Name' (names the position the server resumed from; any value but the id sent answers) or 'Name: value' (repeatable; default Last-Event-ID and Mercure-Last-Event-ID)")
	fs.BoolVar(&f.noResume, "no-resume", false, "end the run as upstream_error when the server drops the stream, instead of resuming it (sse with ids, openai-responses)")
	fs.IntVar(&f.maxReconnects, "max-reconnects", resumeclient.DefaultMaxReconnects, "reconnects one run may make after drops by the server")
	fs.BoolVar(&f.noInlineThink, "no-inline-think", false, "measure a leading <think>...</think> block of the visible text as the answer, not as reasoning (the target key inline_think = false)")
	fs.StringVar(&f.assistant, "assistant", "", "langgraph dialect: the assistant (or graph id) the run is made on (default "+dialect.DefaultAssistant+")")
	fs.StringVar(&f.input, "input", "", "langgraph dialect: the run's input, a JSON object (default: the sample's prompt as one user message)")
	fs.StringVar(&f.streamMode, "stream-mode", "", "langgraph dialect: the run's stream modes, comma-separated (default "+strings.Join(dialect.DefaultStreamModes, ",")+")")
	fs.Var(&f.streamResumable, "stream-resumable", "langgraph dialect: ask for a resumable stream (default true; -stream-resumable=false shows what a rejoin loses without it)")
	fs.BoolVar(&f.resumable, "resumable", false, "ai-sdk-ui dialect: the app resumes its answers (the AI SDK's resumable streams): a drop is resumed by a GET on -resume-url")
	fs.StringVar(&f.resumeURL, "resume-url", "", "ai-sdk-ui dialect with -resumable: the resume URL, {api} the chat route's URL, {chatId} the chat's id (default "+dialect.DefaultResumeURL+")")
}

// config turns the flags into a config of one target, checked as a file
// is checked (config.FromFlags, against probe's names): one line per
// problem, each naming its flag.
func (f *onceFlags) config(getenv func(string) string) (*config.Config, error) {
	t, err := f.target()
	if err != nil {
		return nil, err
	}
	c := config.Config{Host: f.host, Region: f.region, Targets: []config.Target{t}}
	for _, kv := range f.labels {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("-label %q: want 'name=value'", kv)
		}
		if c.Labels == nil {
			c.Labels = map[string]string{}
		}
		c.Labels[k] = v
	}
	return config.FromFlags(c, onceKeys, jobs.Env(getenv))
}

// target is the config target the flags describe, or the error of a flag
// whose text does not parse.
func (f *onceFlags) target() (config.Target, error) {
	endData, resume, think := f.endData, !f.noResume, !f.noInlineThink
	t := config.Target{Name: f.name, Builtin: f.builtin, Dialect: f.dialect, Method: f.method, Model: f.model,
		BearerEnv: f.bearerEnv, CancelAfter: f.cancelAfter, MaxStream: config.Duration{Duration: f.timeout}, MaxEventSize: f.maxEvent,
		MaxChunks: f.maxChunks, EndEvent: f.endEvent, EndData: &endData, InsecureSkipVerify: f.insecure, HTTP2: f.http2,
		DropAfter: f.dropAfter, DropAt: config.Duration{Duration: f.dropAt}, Away: config.Duration{Duration: f.away}, Rewind: f.rewind, StaleID: f.staleID, IDs: f.ids,
		ErrorEvent: f.errorEvent, ResetEvent: f.resetEvent, StaleHeaders: f.staleHeaders,
		ResumeOnDrop: &resume, MaxReconnects: f.maxReconnects, InlineThink: &think, AWSRegion: f.awsRegion, AWSProfile: f.awsProfile}
	if t.IDs == "" {
		t.IDs = config.IDsInt // the dialect's default, as a file's target takes it
		if slices.Contains(dialect.OpaqueIDDialects(), t.Dialect) {
			t.IDs = config.IDsOpaque
		}
	}
	t.AssistantID, t.Input, t.StreamResumable, t.Resumable, t.ResumeURL = f.assistant, f.input, f.streamResumable.v, f.resumable, f.resumeURL
	if f.streamMode != "" {
		t.StreamMode = strings.Split(f.streamMode, ",")
	}
	t.GoogleCredentialsFile = f.googleCredentials
	if f.bearerCommand != "" {
		t.BearerCommand = strings.Fields(f.bearerCommand)
	}
	t.Samples = []string{f.sample}
	if f.drill != "" {
		t.Samples, t.Drills, t.DrillSample = []string{}, []string{f.drill}, f.sample
	}
	if f.url != "" {
		if err := t.URL.UnmarshalText([]byte(f.url)); err != nil {
			return t, fmt.Errorf("-url: %w", err)
		}
	}
	if t.Name == "" {
		t.Name = "builtin"
		if t.URL.URL != nil {
			t.Name = t.URL.Host
		}
	}
	var err error
	if t.Headers, err = headerValues("-header", f.headers, false); err != nil {
		return t, err
	}
	if t.HeaderEnv, err = headerValues("-header-env", f.headerEnv, true); err != nil {
		return t, err
	}
	t.MCPVersion = f.mcpVersion
	if f.tool != "" || f.toolArgs != "" || f.task {
		if err := config.ToolArgs(f.toolArgs); err != nil {
			return t, fmt.Errorf("-tool-args: %w", err)
		}
		if f.dialect != "mcp" {
			return t, fmt.Errorf("-tool, -tool-args and -task are for -dialect mcp (not %s)", f.dialect)
		}
		args := f.toolArgs
		if args == "" && f.tool != "" {
			args = "{}"
		}
		t.Tool = map[string]config.ToolCall{f.sample: {Name: f.tool, Args: args, Task: f.task}}
	}
	t.Body, err = f.readBody()
	return t, err
}

// headerValues parses repeated 'Name: value' flags ('Name: ENV_VAR' for
// -header-env, whose value is required). A name given twice is sent once
// with its values joined by ", ", as HTTP reads a repeated header;
// -header-env keeps the last.
func headerValues(flag string, kvs []string, env bool) (map[string]string, error) {
	m := map[string]string{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, ":")
		k, v = http.CanonicalHeaderKey(strings.TrimSpace(k)), strings.TrimSpace(v)
		switch {
		case env && (!ok || k == "" || v == ""):
			return nil, fmt.Errorf("%s %q: want 'Name: ENV_VAR'", flag, kv)
		case !ok || k == "":
			return nil, fmt.Errorf("%s %q: want 'Name: value'", flag, kv)
		}
		if old, dup := m[k]; dup && !env {
			v = old + ", " + v
		}
		m[k] = v
	}
	return m, nil
}

// readBody is -body: the text itself, or the content of @file.
func (f *onceFlags) readBody() ([]byte, error) {
	path, ok := strings.CutPrefix(f.body, "@")
	switch {
	case f.body == "":
		return nil, nil
	case !ok:
		return []byte(f.body), nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("-body: %w", err)
	}
	return b, nil
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
	cfg, err := f.config(os.Getenv)
	if err != nil {
		printErr(stderr, "once", err)
		return exitUsage
	}
	if f.insecure {
		fmt.Fprintln(stderr, "streamprobe once: WARNING: TLS certificate verification is off (-insecure-skip-verify)")
	}
	all, stop, err := startJobs(cfg)
	if err != nil {
		printErr(stderr, "once", err)
		return exitUsage
	}
	defer stop()
	job := all[0]
	res := job.Run(ctx, nil)
	if err := printRecord(stdout, res.Record, f.json); err != nil {
		fmt.Fprintf(stderr, "streamprobe once: writing output: %v\n", err)
		return exitFail
	}
	if res.Record.Passed() {
		return exitOK
	}
	return exitFail
}
