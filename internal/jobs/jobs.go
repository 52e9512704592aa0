// Package jobs turns a config into the jobs a probe host runs: each target's
// samples and drills, with the target's secrets resolved and its client
// (transport) built once, and Job.Run, the one way a job is run, shared by
// the daemon, check and once. Env gives config the names of probe's
// registry, so that every command checks a config against the same ones.
package jobs

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/streamprobe/streamprobe/config"
	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/internal/builtin"
	"github.com/streamprobe/streamprobe/internal/tokensource"
	"github.com/streamprobe/streamprobe/probe"
	"github.com/streamprobe/streamprobe/resumeclient"
)

// Job is one scheduled thing to run: a sample, or a drill, on a target.
type Job struct {
	Name   string // target/sample or target/drill
	Target dialect.Target
	Sample dialect.Sample
	Drill  probe.Drill
	Conf   config.Target
	// Client is the target's client, shared by its jobs (probe.NewClient:
	// a fresh connection per run unless keep_alive).
	Client *resumeclient.Client
	// Origin stamps every record of the job (host, region, labels).
	Origin probe.Origin
	// Token, when set, gives the target's key for each run (bearer_file,
	// read again every run; oauth2, a cached token): sent in the header
	// TokenHeader names, after TokenPrefix.
	Token                    tokensource.Source
	TokenHeader, TokenPrefix string
	// AWS, when set, signs each run's request with SigV4 (a bedrock
	// target without a bearer key), with credentials fetched before the
	// run.
	AWS *tokensource.AWS
}

// Run runs the job once: the whole request bounded by max_stream, the
// first chunk by timeout. The caller's ctx cancels it. c, when not nil,
// replaces the target's client (a test seam).
func (j Job) Run(ctx context.Context, c *resumeclient.Client) probe.Result {
	if c == nil {
		c = j.Client
	}
	ctx, cancel := context.WithTimeout(ctx, j.Conf.MaxStream.Duration)
	defer cancel()
	t, err := j.WithToken(ctx)
	var sign func(method, url string, h http.Header, body []byte) error
	if err == nil && j.AWS != nil {
		sign, err = j.AWS.Signer(ctx)
	}
	if err != nil {
		res := probe.Failed(j.Target, j.Sample, j.Drill, probe.UpstreamError, "credentials: "+err.Error())
		res.Record.Stamp(j.Origin)
		return res
	}
	res := probe.Run(ctx, t, probe.Options{Sample: j.Sample, CancelAfter: j.Conf.CancelAfter, Drill: j.Drill, Client: c, Sign: sign,
		FirstChunkTimeout: j.Conf.Timeout.Duration, Timeout: j.Conf.MaxStream.Duration})
	res.Record.Stamp(j.Origin)
	return res
}

// WithToken is the job's target with the key its Token gives now in its
// header (a copy: the target's header is shared by its jobs), as Run
// sends it.
func (j Job) WithToken(ctx context.Context) (dialect.Target, error) {
	t := j.Target
	if j.Token == nil {
		return t, nil
	}
	v, err := j.Token.Token(ctx)
	if err != nil {
		return t, err
	}
	t.Header = t.Header.Clone()
	if t.Header == nil {
		t.Header = http.Header{}
	}
	t.Header.Set(j.TokenHeader, j.TokenPrefix+v)
	return t, nil
}

// Env is what every command checks a config against: probe's dialects,
// samples and drills, and getenv for the secrets it names (nil: none is
// looked up, for report).
func Env(getenv func(string) string) config.Env {
	return config.Env{
		Names: config.Names{Dialects: dialect.Names(), Samples: dialect.SampleNames, Drills: probe.DrillNames,
			NoEventIDs: dialect.NoEventIDs(), OpaqueIDs: dialect.OpaqueIDDialects(), MCPVersions: dialect.MCPVersions(), StreamModes: dialect.StreamModes,
			Signed: dialect.Signed()},
		Getenv: getenv,
	}
}

// Origin is the config's host, region and labels as a probe.Origin.
func Origin(c *config.Config) probe.Origin {
	return probe.Origin{Host: c.Host, Region: c.Region, Labels: c.Labels}
}

// Build expands the config's targets into jobs, resolving secrets now (a
// missing one is an error at load time, not at probe time). builtinURL is
// the address of the built-in reference target.
func Build(c *config.Config, builtinURL string, getenv func(string) string) ([]Job, error) {
	var jobs []Job
	for i, ct := range c.Targets {
		origin := Origin(c)
		origin.Labels = c.LabelsFor(i)
		t, err := probeTarget(ct, builtinURL, getenv)
		if err != nil {
			return nil, fmt.Errorf("target %s: %w", ct.Name, err)
		}
		if err := checkRequests(c, i, t, ct); err != nil {
			return nil, err
		}
		client := probe.NewClient(t)
		tok, header, prefix := tokenSource(ct, getenv)
		var aws *tokensource.AWS
		if ct.SigV4(dialect.Signed()) {
			aws = &tokensource.AWS{Region: ct.SigningRegion(), Service: dialect.SigningService(ct.Dialect), Profile: ct.AWSProfile, Getenv: getenv}
		}
		job := func(name string, s dialect.Sample, d probe.Drill) Job {
			return Job{Name: name, Target: t, Sample: s, Drill: d, Conf: ct, Client: client, Origin: origin,
				Token: tok, TokenHeader: header, TokenPrefix: prefix, AWS: aws}
		}
		for _, s := range ct.Samples {
			// A sample runs no drill, but a drop by the server is resumed
			// and checked with the same settings.
			jobs = append(jobs, job(ct.Name+"/"+s, dialect.Samples[s], DrillSettings(ct)))
		}
		drillSample := dialect.Samples["long"]
		if ct.DrillSample != "" {
			drillSample = dialect.Samples[ct.DrillSample]
		}
		for _, d := range ct.Drills {
			dr := DrillSettings(ct)
			dr.Name = d
			jobs = append(jobs, job(ct.Name+"/"+d, drillSample, dr))
		}
	}
	return jobs, nil
}

// checkRequests builds target i's request for each of its samples, as a
// run would: a target its dialect cannot request (a Gemini target with no
// model) is the config's error, at file:line:key, not a protocol_error
// at every run.
func checkRequests(c *config.Config, i int, t dialect.Target, ct config.Target) error {
	d, err := dialect.Lookup(t.Dialect)
	if err != nil {
		return err // config's check named it already
	}
	samples := slices.Clone(ct.Samples)
	if len(ct.Drills) > 0 {
		samples = append(samples, cmp.Or(ct.DrillSample, "long"))
	}
	for _, s := range samples {
		if _, err := d.Request(t, dialect.Samples[s], false); err != nil {
			key := fmt.Sprintf("target[%d]", i)
			var te *dialect.TargetError
			if errors.As(err, &te) && te.Key != "" {
				key += "." + te.Key
			}
			return c.ErrorAt(key, err)
		}
	}
	return nil
}

// DrillSettings are a target's resume settings as a probe.Drill with no
// name: the drills' and those of a drop by the server.
func DrillSettings(ct config.Target) probe.Drill {
	d := probe.Drill{DropAfter: ct.DropAfter, DropAt: ct.DropAt.Duration, Away: ct.Away.Duration, Rewind: ct.Rewind, StaleID: ct.StaleID,
		OpaqueIDs: ct.IDs == config.IDsOpaque, ErrorEvent: ct.ErrorEvent, ResetEvent: ct.ResetEvent, MaxReconnects: ct.MaxReconnects}
	for _, h := range ct.StaleHeaders {
		if m, err := config.ParseHeaderMatch(h); err == nil {
			d.StaleHeaders = append(d.StaleHeaders, probe.HeaderMatch{Name: m[0], Value: m[1]})
		}
	}
	return d
}

func probeTarget(ct config.Target, builtinURL string, getenv func(string) string) (dialect.Target, error) {
	h := http.Header{}
	for k, v := range ct.Headers {
		h.Set(k, v)
	}
	for k, env := range ct.HeaderEnv {
		v, err := config.Secret(env, "", getenv)
		if err != nil {
			return dialect.Target{}, err
		}
		h.Set(k, v)
	}
	// A bearer_file is read again by each run (tokenSource); here it is
	// only checked.
	key, err := config.Secret(ct.BearerEnv, ct.BearerFile, getenv)
	if err != nil {
		return dialect.Target{}, err
	}
	if ct.BearerFile != "" {
		key = ""
	}
	if key != "" {
		// The dialect's header: a bearer token, or one of the API's own
		// (Anthropic's x-api-key, Gemini's x-goog-api-key).
		name, prefix := dialect.KeyHeader(ct.Dialect)
		h.Set(name, prefix+key)
	}
	url := ct.URL.String()
	if ct.Builtin {
		url = builtin.URL(builtinURL, ct.Dialect, ct.Slowdown)
	}
	t := dialect.Target{Name: ct.Name, URL: url, Dialect: ct.Dialect, Method: ct.Method, Header: h, Body: ct.Body,
		Model: ct.Model, EndEvent: ct.EndEvent, EndData: "[DONE]", MaxEventSize: ct.MaxEventSize,
		InsecureSkipVerify: ct.InsecureSkipVerify, NoResume: ct.ResumeOnDrop != nil && !*ct.ResumeOnDrop, KeepAlive: ct.KeepAlive, HTTP2: ct.HTTP2, MaxChunks: ct.MaxChunks,
		NoInlineThink: ct.InlineThink != nil && !*ct.InlineThink}
	if ct.EndData != nil {
		t.EndData = *ct.EndData
	}
	t.Net = network(ct)
	t.MCPVersion = ct.MCPVersion
	if ct.TLS != nil {
		if t.Net == nil {
			t.Net = &dialect.Network{}
		}
		t.Net.RootCAs, t.Net.ClientCert = ct.TLS.RootCAs, ct.TLS.ClientCert
	}
	for s, tc := range ct.Tool {
		if t.Tools == nil {
			t.Tools = map[string]dialect.ToolCall{}
		}
		var args json.RawMessage
		if tc.Args != "" {
			args = json.RawMessage(tc.Args)
		}
		t.Tools[s] = dialect.ToolCall{Name: tc.Name, Args: args, Task: tc.Task}
	}
	t.App = appSettings(ct)
	if ct.Builtin && ct.Resumable {
		t.URL = builtin.ResumableURL(url, "correct") // url: the built-in target, slowed as asked
	}
	if ct.Builtin && t.Model == "" {
		// The built-in target takes any model; a dialect whose URL names
		// one (gemini) needs a name.
		t.Model = BuiltinModel
	}
	return t, nil
}

// network is the target's network path as the client takes it.
func network(ct config.Target) *dialect.Network {
	n := &dialect.Network{IPVersion: ct.IPFamily(), Resolve: ct.Resolve, SourceAddr: ct.SourceAddress}
	switch ct.Proxy {
	case "":
	case "none":
		n.NoProxy = true
	default:
		n.Proxy, _ = url.Parse(ct.Proxy) // checked by config
	}
	if !n.Set() {
		return nil
	}
	return n
}

// tokenSource is the target's key fetched for each run, and the header
// it goes in: oauth2's token as a bearer token, a bearer_file's key read
// again each run in the dialect's key header; nil for a key that is
// known at load time (bearer_env, header_env), set in the header then.
// The OAuth2 client secret is read here, once per load.
func tokenSource(ct config.Target, getenv func(string) string) (tokensource.Source, string, string) {
	switch {
	case ct.OAuth2 != nil:
		o := ct.OAuth2
		if getenv == nil {
			getenv = func(string) string { return "" }
		}
		secret, _ := config.Secret(o.ClientSecretEnv, o.ClientSecretFile, getenv) // checked by config
		return tokensource.NewOAuth2(tokensource.ClientCredentials{TokenURL: o.TokenURL.String(), ClientID: o.ClientID,
			ClientSecret: secret, Scopes: o.Scopes}), "Authorization", "Bearer "
	case ct.BearerFile != "":
		name, prefix := dialect.KeyHeader(ct.Dialect)
		return tokensource.File(ct.BearerFile), name, prefix
	case ct.BearerCommand != nil:
		name, prefix := dialect.KeyHeader(ct.Dialect)
		return tokensource.Command{Args: ct.BearerCommand}, name, prefix
	case ct.GoogleCredentialsFile != "":
		return googleSource(ct.GoogleCredentialsFile), "Authorization", "Bearer "
	}
	return nil, "", ""
}

// appSettings are the target's settings of an application's API
// (langgraph, a resumable ai-sdk-ui route); nil when it sets none.
func appSettings(ct config.Target) *dialect.App {
	if ct.AssistantID == "" && ct.Input == "" && ct.StreamMode == nil && ct.StreamResumable == nil && !ct.Resumable && ct.ResumeURL == "" {
		return nil
	}
	app := &dialect.App{AssistantID: ct.AssistantID, StreamModes: ct.StreamMode, StreamResumable: ct.StreamResumable, Resumable: ct.Resumable, ResumeURL: ct.ResumeURL}
	if ct.Input != "" {
		app.Input = []byte(ct.Input)
	}
	return app
}

// googleSource is the token source of a service account key file, read
// now (at load); a key that does not load is a source that fails every
// run with the reason (config checked the file already).
func googleSource(path string) tokensource.Source {
	b, err := os.ReadFile(path)
	if err != nil {
		return failing{fmt.Errorf("cannot read %s", path)}
	}
	g, err := tokensource.NewGoogle(b, path, nil)
	if err != nil {
		return failing{err}
	}
	return g
}

// failing is a Source that cannot give a token.
type failing struct{ err error }

func (f failing) Token(context.Context) (string, error) { return "", f.err }

// BuiltinModel is the model a target on the built-in reference target
// names when its config names none.
const BuiltinModel = "refserver"

// DeadlineGrace is added to a job's schedule, its jitter and its
// max_stream to give the time by which its next run must have happened
// (see Job.Deadline).
const DeadlineGrace = time.Minute

// Deadline is the time by which the job, last run (or scheduled) at t,
// must have run again: its next due time (t plus its interval, or the
// cron expression's next activation after t), plus its jitter, its
// max_stream (a run in flight may last that long) and DeadlineGrace. A
// job past its deadline is not running as scheduled: /healthz says so and
// the StreamprobeNotReporting alert fires on the exported deadline.
func (j Job) Deadline(t time.Time) time.Time {
	every := j.Conf.Every
	if j.Drill.Name != "" {
		every = j.Conf.DrillEvery
	}
	next := t.Add(every.Every)
	if every.Cron != "" {
		if s, err := cron.ParseStandard(every.Cron); err == nil {
			next = s.Next(t)
		}
	}
	return next.Add(j.Conf.Jitter.Duration + j.Conf.MaxStream.Duration + DeadlineGrace)
}
