// Package config is streamprobe's TOML configuration: the schema, strict
// decoding (an unknown key is an error), defaults, and validation whose
// errors name the file, the line and the key. once's flags make a config
// too (FromFlags), checked by the same rules, whose errors name the flags.
// It is pure: no network, no goroutines, no import of the project's other
// packages (the names of dialects, samples and drills come in Env).
// Secrets are never in the file: it names the environment variables or
// files that hold them.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"
)

// Config is the whole file.
type Config struct {
	// Region and Host label every series; Host defaults to the hostname.
	Region string `toml:"region"`
	Host   string `toml:"host"`
	// Labels are extra labels on every series (bounded: config values).
	Labels map[string]string `toml:"labels"`
	// RegionEnv and LabelsEnv (label name -> environment variable) take
	// the region and labels from the host's environment, so one file
	// serves a fleet (a config from a URL).
	RegionEnv string            `toml:"region_env"`
	LabelsEnv map[string]string `toml:"labels_env"`
	// HostEnv and ListenEnv take host and listen from the environment
	// the same way.
	HostEnv   string `toml:"host_env"`
	ListenEnv string `toml:"listen_env"`
	// Listen, when set, serves /metrics and /healthz on this address.
	Listen string `toml:"listen"`
	// RunTokenFile, when set, turns on POST /run on the listen address
	// for requests that carry the token the file holds.
	RunTokenFile string `toml:"run_token_file"`
	// ResultsLog, when set, appends every record as a JSON line to it.
	ResultsLog string `toml:"results_log"`
	// MaxConcurrent bounds the runs in flight on this host.
	MaxConcurrent int `toml:"max_concurrent"`
	// ShutdownTimeout bounds the wait for runs on SIGTERM.
	ShutdownTimeout Duration  `toml:"shutdown_timeout"`
	Log             Log       `toml:"log"`
	Push            Push      `toml:"push"`
	OTLP            OTLP      `toml:"otlp"`
	Targets         []Target  `toml:"target"`
	Budgets         BudgetMap `toml:"budget"`
	// SLOs are the objectives by sample class ([slo.<sample>]), and
	// SLOFleetRegions how many regions must burn an objective's budget at
	// once for the fleet alert (StreamprobeSLOFleetBurn).
	SLOs            map[string]SLO `toml:"slo"`
	SLOFleetRegions int            `toml:"slo_fleet_regions"`
	// Compare holds compare's margins.
	Compare Compare `toml:"compare"`

	file  string
	index keyIndex
	flags map[string]string // key -> flag, for a config given by flags
}

// Log configures the daemon's log.
type Log struct {
	Level  string `toml:"level"`  // debug, info, warn, error
	Format string `toml:"format"` // auto (JSON under systemd, else text), json, text
}

// Push configures the metrics push.
type Push struct {
	// URL is the import endpoint, e.g.
	// http://vm:8428/api/v1/import/prometheus; empty disables the push.
	URL      URL      `toml:"url"`
	Interval Duration `toml:"interval"`
	Timeout  Duration `toml:"timeout"`
	// Headers are sent with every push (not for secrets).
	Headers map[string]string `toml:"headers"`
	// AuthorizationEnv or AuthorizationFile holds the whole Authorization
	// header value ("Bearer ..."); never inline.
	AuthorizationEnv  string `toml:"authorization_env"`
	AuthorizationFile string `toml:"authorization_file"`
	// Histograms is "vmrange" (VictoriaMetrics' buckets) or "prometheus"
	// (le buckets, for Prometheus and Mimir), on /metrics and in the push;
	// by default vmrange with a push URL, prometheus without one.
	Histograms string `toml:"histograms"`
}

// OTLP configures the OpenTelemetry metrics export (OTLP over HTTP,
// protobuf).
type OTLP struct {
	// URL is the OTLP/HTTP metrics endpoint, e.g.
	// http://collector:4318/v1/metrics; empty disables the export.
	URL      URL      `toml:"url"`
	Interval Duration `toml:"interval"`
	Timeout  Duration `toml:"timeout"`
	// Headers are sent with every export (not for secrets).
	Headers map[string]string `toml:"headers"`
	// AuthorizationEnv or AuthorizationFile holds the whole Authorization
	// header value; never inline.
	AuthorizationEnv  string `toml:"authorization_env"`
	AuthorizationFile string `toml:"authorization_file"`
	// Histograms is "explicit" (the conventions' advised buckets) or
	// "exponential" (base-2 exponential histograms).
	Histograms string `toml:"histograms"`
}

// Target is one endpoint and what to run against it.
type Target struct {
	Name string `toml:"name"`
	// URL of the endpoint; Builtin instead runs the built-in reference
	// target on loopback.
	URL     URL    `toml:"url"`
	Builtin bool   `toml:"builtin"`
	Dialect string `toml:"dialect"`
	Method  string `toml:"method"`
	Model   string `toml:"model"`
	// Headers are plain headers; secrets come from BearerEnv, BearerFile
	// or HeaderEnv (header name -> environment variable).
	Headers    map[string]string `toml:"headers"`
	BearerEnv  string            `toml:"bearer_env"`
	BearerFile string            `toml:"bearer_file"`
	HeaderEnv  map[string]string `toml:"header_env"`
	// Samples and Drills to run; each is one scheduled job.
	Samples []string `toml:"samples"`
	Drills  []string `toml:"drills"`
	// DrillSample is the sample each drill streams (default long); only
	// once sets it (-sample with -drill).
	DrillSample string `toml:"-"`
	// CancelAfter is how many content chunks the cancel sample reads
	// before it cancels (default 3).
	CancelAfter int `toml:"cancel_after"`
	// Body, when not nil, replaces the body the dialect builds for each
	// sample: body's text or body_file's content, read at load, or once's
	// -body. It is resent as is on every reconnect.
	Body     []byte `toml:"-"`
	BodyText string `toml:"body"`
	BodyFile string `toml:"body_file"`
	// Labels are the target's own labels on its records and series,
	// merged over the config's [labels] (LabelsFor).
	Labels map[string]string `toml:"labels"`
	// CAFile is a PEM bundle the server's certificate must chain to
	// (instead of the system's roots); CertFile and KeyFile a client
	// certificate and its key (both or neither). Read at load into TLS.
	CAFile   string    `toml:"ca_file"`
	CertFile string    `toml:"cert_file"`
	KeyFile  string    `toml:"key_file"`
	TLS      *TLSFiles `toml:"-"`
	// Every is the schedule of each sample; DrillEvery of each drill
	// (default: Every).
	Every      Schedule `toml:"every"`
	DrillEvery Schedule `toml:"drill_every"`
	// Jitter delays each run by a random 0..Jitter so hosts do not fire
	// together.
	Jitter Duration `toml:"jitter"`
	// Timeout is the wait for the first chunk (0, from once: no limit of
	// its own); MaxStream bounds the whole request.
	Timeout   Duration `toml:"timeout"`
	MaxStream Duration `toml:"max_stream"`
	// MaxEventSize bounds one event (default: the transport's, 16 MiB).
	MaxEventSize int     `toml:"max_event_size"`
	EndEvent     string  `toml:"end_event"`
	EndData      *string `toml:"end_data"`
	// InsecureSkipVerify turns TLS verification off for this target
	// (logged loudly at every start).
	InsecureSkipVerify bool `toml:"insecure_skip_verify"`
	// MaxChunks bounds the content chunks of one run (default 100000).
	MaxChunks int `toml:"max_chunks"`
	// KeepAlive lets runs reuse a connection; by default every run opens
	// a fresh one and pays DNS, TCP and TLS.
	KeepAlive bool `toml:"keep_alive"`
	// HTTP2 offers HTTP/2 over TLS; by default runs speak HTTP/1.1.
	HTTP2 bool `toml:"http2"`
	// Drill settings, the same as once's flags.
	DropAfter    int      `toml:"drop_after"`
	DropAt       Duration `toml:"drop_at"`
	Away         Duration `toml:"away"`
	Rewind       int      `toml:"rewind"`
	StaleID      string   `toml:"stale_id"`
	IDs          string   `toml:"ids"`
	ErrorEvent   string   `toml:"error_event"`
	ResetEvent   string   `toml:"reset_event"`
	StaleHeaders []string `toml:"stale_headers"`
	// Tool is the mcp dialect's tool call by sample name
	// ([target.tool.short] name = "...", args = '{...}'); a sample with
	// none calls the reference server's progress tool.
	Tool map[string]ToolCall `toml:"tool"`
	// MCPVersion pins the mcp dialect's protocol version (one of
	// Names.MCPVersions); empty asks the server (server/discover).
	MCPVersion string `toml:"mcp_version"`
	// ResumeOnDrop (default true) resumes a stream the server dropped,
	// for dialects that can resume; MaxReconnects bounds the reconnects
	// of one run (default 5).
	ResumeOnDrop  *bool `toml:"resume_on_drop"`
	MaxReconnects int   `toml:"max_reconnects"`
	// The network path (see Network): IPVersion is 4, 6 (an integer or
	// a string) or "any"; Resolve an IP address dialled for the URL's
	// host instead of DNS; SourceAddress the local IP to connect from;
	// Proxy the target's proxy URL, or "none" for no proxy at all
	// (default: the environment's).
	IPVersion     any    `toml:"ip_version"`
	Resolve       string `toml:"resolve"`
	SourceAddress string `toml:"source_address"`
	Proxy         string `toml:"proxy"`
	// InlineThink (default true) reads a leading <think>...</think> block
	// of the visible text as reasoning, not as the answer (see
	// docs/dialects.md "Definitions").
	InlineThink *bool `toml:"inline_think"`
	// OAuth2, when set, gets the target's bearer token by the OAuth2
	// client-credentials grant, cached and fetched again before it
	// expires.
	OAuth2 *OAuth2 `toml:"oauth2"`
	// Budgets are the target's own budgets by sample
	// ([target.budget.<sample>]): each key one sets takes the place of
	// the global [budget.<sample>]'s (Config.BudgetsFor).
	Budgets BudgetMap `toml:"budget"`
	// Slowdown, for the built-in reference target only, plays its streams
	// this many times slower (1.2: every offset 20% later): a candidate
	// slower by a known amount, for compare's own tests and demos. 0 or 1
	// is the reference target as it is.
	Slowdown float64 `toml:"slowdown"`
	// LangGraph (dialect langgraph): the assistant a run is made on
	// (default "agent"), the run's input (a JSON object; default the
	// sample's prompt as one user message), its stream modes (default
	// messages-tuple and values), and whether it asks for a resumable
	// stream (default true).
	AssistantID     string   `toml:"assistant_id"`
	Input           string   `toml:"input"`
	StreamMode      []string `toml:"stream_mode"`
	StreamResumable *bool    `toml:"stream_resumable"`
	// An AI SDK app that resumes its answers (dialect ai-sdk-ui, the AI
	// SDK's resumable streams): Resumable, and the resume URL (default
	// "{api}/{chatId}/stream").
	Resumable bool   `toml:"resumable"`
	ResumeURL string `toml:"resume_url"`
	// AWSRegion is the region a SigV4-signed target (bedrock) signs for
	// (default: the one its URL's host names); AWSProfile the profile of
	// the shared credentials file (default: AWS_PROFILE, else default).
	AWSRegion  string `toml:"aws_region"`
	AWSProfile string `toml:"aws_profile"`
	// BearerCommand is a command (program and arguments, no shell) run
	// as every run starts: what it prints is the key (gcloud auth
	// print-access-token). GoogleCredentialsFile is a Google service
	// account's JSON key: its OAuth access token is the bearer key.
	BearerCommand         []string `toml:"bearer_command"`
	GoogleCredentialsFile string   `toml:"google_credentials_file"`
}

// SigV4 reports whether the target's requests are signed with AWS SigV4:
// its dialect signs (names.Signed), it is not the built-in target, and no
// bearer key replaces the signature (a Bedrock API key).
func (t *Target) SigV4(signed []string) bool {
	_, authHeader := t.HeaderEnv["Authorization"]
	return slices.Contains(signed, t.Dialect) && !t.Builtin && t.BearerEnv == "" && t.BearerFile == "" && t.OAuth2 == nil && !authHeader &&
		t.BearerCommand == nil && t.GoogleCredentialsFile == ""
}

// SigningRegion is the region the target signs for: aws_region, else
// the one its URL's host names (bedrock-runtime.REGION.amazonaws.com,
// bedrock-runtime-fips.REGION..., a VPC endpoint's ...REGION.vpce...), ""
// when neither says.
func (t *Target) SigningRegion() string {
	if t.AWSRegion != "" || t.URL.URL == nil {
		return t.AWSRegion
	}
	labels := strings.Split(t.URL.Hostname(), ".")
	for i, l := range labels {
		if i > 0 && (l == "amazonaws" || l == "vpce") && awsRegion(labels[i-1]) {
			return labels[i-1]
		}
	}
	return ""
}

// awsRegion reports whether s reads as a region name (us-east-1,
// eu-central-2, us-gov-west-1, ap-southeast-5).
func awsRegion(s string) bool {
	parts := strings.Split(s, "-")
	if len(parts) < 3 {
		return false
	}
	last := parts[len(parts)-1]
	_, err := strconv.Atoi(last)
	return err == nil && len(parts[0]) == 2
}

// OAuth2 is a target's OAuth2 client-credentials grant: the token
// endpoint, the client id, and the client secret from an environment
// variable or a file (never inline).
type OAuth2 struct {
	TokenURL         URL      `toml:"token_url"`
	ClientID         string   `toml:"client_id"`
	ClientSecretEnv  string   `toml:"client_secret_env"`
	ClientSecretFile string   `toml:"client_secret_file"`
	Scopes           []string `toml:"scopes"`
}

// IPFamily is the target's ip_version as "4", "6" or "any" ("" when not
// set), once the config has loaded.
func (t *Target) IPFamily() string {
	switch v := t.IPVersion.(type) {
	case int64:
		return strconv.FormatInt(v, 10)
	case string:
		return v
	}
	return ""
}

// ToolCall is the tool an mcp target calls for a sample: its name, and
// its arguments as a JSON object (empty: the default's, or {}).
type ToolCall struct {
	Name string `toml:"name"`
	Args string `toml:"args"`
	// Task asks for the call to be made a task (MCP Tasks), where the
	// server makes tasks: the run polls for its result.
	Task bool `toml:"task"`
}

// Budget is the budget of one sample class: p95 budgets, and the largest
// share (0 to 1) of runs that may stall over 250 ms (nil: check's default,
// scorecard.DefaultStallShare).
type Budget struct {
	TFC        Duration `toml:"tfc"`
	Gap        Duration `toml:"gap"`
	Tail       Duration `toml:"tail"`
	StallShare *float64 `toml:"stall_share"`
	// ErrorShare is the largest share (0 to 1) of runs that may fail (nil:
	// 0, no run may fail).
	ErrorShare *float64 `toml:"error_share"`
}

// Compare is compare's settings: the margin of each metric
// ([compare.margin], CompareMetrics) a candidate may be worse by and
// still be the same.
type Compare struct {
	Margin map[string]float64 `toml:"margin"`
}

// CompareMetric is a metric compare compares: a change of a time's
// percentile (Relative: a margin of 0.10 is +10%) or of a share of runs
// (a margin of 0.05 is +5 points).
type CompareMetric struct {
	Name     string
	Relative bool
	Default  float64
}

// CompareMetrics are the metrics compare compares per class, in order,
// with their default margins.
var CompareMetrics = []CompareMetric{
	{"tfc_p50", true, 0.10}, {"tfc_p95", true, 0.20},
	{"gap_p50", true, 0.10}, {"gap_p95", true, 0.20},
	{"tail_p50", true, 0.10}, {"tail_p95", true, 0.20},
	{"stall_share", false, 0.05}, {"error_share", false, 0.05}, {"buffering_share", false, 0.05},
}

// Margin is the margin of the compare metric name: the config's, else
// its default.
func (c *Config) Margin(name string) float64 {
	if v, ok := c.Compare.Margin[name]; ok {
		return v
	}
	for _, m := range CompareMetrics {
		if m.Name == name {
			return m.Default
		}
	}
	return 0
}

// LabelsFor is the labels of target i's records and series: the
// config's [labels] with the target's own [target.labels] over them (nil
// when neither sets one). The result is a new map.
func (c *Config) LabelsFor(i int) map[string]string {
	own := c.Targets[i].Labels
	if len(c.Labels) == 0 && len(own) == 0 {
		return nil
	}
	out := make(map[string]string, len(c.Labels)+len(own))
	maps.Copy(out, c.Labels)
	maps.Copy(out, own)
	return out
}

// BudgetsFor is the budgets of target i: the global [budget.<sample>]
// tables, each key the target's [target.budget.<sample>] sets in place
// of the global one.
func (c *Config) BudgetsFor(i int) BudgetMap {
	out := BudgetMap{}
	for s, b := range c.Budgets {
		out[s] = b
	}
	for s, own := range c.Targets[i].Budgets {
		b := out[s]
		set := func(k string) bool { return c.has(fmt.Sprintf("target[%d].budget.%s.%s", i, s, k)) }
		if set("tfc") {
			b.TFC = own.TFC
		}
		if set("gap") {
			b.Gap = own.Gap
		}
		if set("tail") {
			b.Tail = own.Tail
		}
		if set("stall_share") {
			b.StallShare = own.StallShare
		}
		if set("error_share") {
			b.ErrorShare = own.ErrorShare
		}
		out[s] = b
	}
	return out
}

// SLO is a sample class's objectives, each the share (0 to 1, 1
// excluded: a budget of no error cannot burn) of its runs that must be
// good over the objective's window: TFCWithin, runs within the class's
// TFC budget; NoStall, runs without a gap over 250 ms; DrillsPass, the
// drills (which stream this sample) that pass. nil: no objective.
type SLO struct {
	TFCWithin  *float64 `toml:"tfc_within"`
	NoStall    *float64 `toml:"no_stall"`
	DrillsPass *float64 `toml:"drills_pass"`
}

// Objectives are s's objectives by SLI name (tfc_within, no_stall,
// drills_pass), those set only.
func (s SLO) Objectives() map[string]float64 {
	out := map[string]float64{}
	for name, v := range map[string]*float64{"tfc_within": s.TFCWithin, "no_stall": s.NoStall, "drills_pass": s.DrillsPass} {
		if v != nil {
			out[name] = *v
		}
	}
	return out
}

// BudgetMap holds the budgets by sample name.
type BudgetMap map[string]Budget

// Defaults.
const (
	DefaultPushInterval    = 15 * time.Second
	DefaultPushTimeout     = 10 * time.Second
	DefaultMaxConcurrent   = 4
	DefaultShutdownTimeout = 30 * time.Second
	DefaultEvery           = time.Minute
	DefaultJitter          = 5 * time.Second
	DefaultTimeout         = 30 * time.Second
	DefaultMaxStream       = 5 * time.Minute
	DefaultSLOFleetRegions = 2
)

// The kinds of event ids a target's ids key may name: integers, checked
// for continuity (a gap is a lost event), or opaque ids, checked for
// uniqueness and position only.
const (
	IDsInt    = "int"
	IDsOpaque = "opaque"
)

// Names are the dialects, samples and drills a config may name. The
// package imports no other of the project: its caller passes probe's
// registry (internal/jobs.Env does), so that the names have one source.
type Names struct {
	Dialects []string
	// Samples in their fixed order: a target that names no sample and no
	// drill runs them all.
	Samples []string
	Drills  []string
	// NoEventIDs are the dialects whose streams carry no event ids
	// (newline-delimited JSON): no drill can run on them.
	NoEventIDs []string
	// OpaqueIDs are the dialects whose ids are opaque unless the target
	// says ids = "int" (MCP).
	OpaqueIDs []string
	// MCPVersions are the MCP protocol versions a target may pin.
	MCPVersions []string
	// StreamModes are the LangGraph API's stream modes.
	StreamModes []string
	// Signed are the dialects whose requests are signed with AWS SigV4
	// (bedrock): aws_region and aws_profile are theirs.
	Signed []string
}

// Env is what a config is checked against besides its own text.
type Env struct {
	Names Names
	// Getenv looks up the environment variables that hold secrets
	// (os.Getenv in the binary). nil looks up no secret at all, neither
	// variable nor file: for a command that sends no request (report).
	Getenv func(string) string
}

var (
	labelName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)
	// reserved are the label names the daemon writes itself, on any of
	// its series (daemon's TestLabelNamesAreReserved reads them off its
	// /metrics): a [labels] key of the same name would make a series
	// carry the label twice.
	reserved = []string{"target", "sample", "dialect", "drill", "outcome", "verdict", "failed", "resumed", "vmrange", "le", "region", "host", "metric", "reason", "version", "goversion", "slo"}
)

// Load reads, decodes, defaults and validates the file at path.
func Load(path string, env Env) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return Parse(path, b, env)
}

// Parse is Load on bytes already read; name is used in errors.
func Parse(name string, b []byte, env Env) (*Config, error) {
	ix, syntax := indexKeys(b)
	c := &Config{file: name, index: ix}
	dec := toml.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(c); err != nil {
		return nil, c.decodeError(err, b, syntax)
	}
	c.setDefaults(env.Names)
	if err := c.validate(env); err != nil {
		return nil, err
	}
	return c, nil
}

// File is the path the config was loaded from ("" when given by flags).
func (c *Config) File() string { return c.file }

// decodeError turns the decoder's error into an *Error, from the
// library's types, never from its message text: an unknown key
// (*toml.StrictMissingError), a value that does not fit its field (found
// by a walk that knows the field), a syntax error (the parser's
// *unstable.ParserError, syntax), else the *toml.DecodeError's position
// and key with its own words.
func (c *Config) decodeError(err error, b []byte, syntax *syntaxError) error {
	var se *toml.StrictMissingError
	if errors.As(err, &se) && len(se.Errors) > 0 {
		e := se.Errors[0]
		line, _ := e.Position()
		return &Error{File: c.file, Line: line, Key: c.index.keyAt(line, e.Key()), Msg: "unknown key"}
	}
	if ve := c.valueError(b); ve != nil {
		return ve
	}
	var de *toml.DecodeError
	if !errors.As(err, &de) {
		return &Error{File: c.file, Msg: err.Error(), Err: err}
	}
	line, _ := de.Position()
	e := &Error{File: c.file, Line: line, Key: c.index.keyAt(line, de.Key()), Msg: de.Error(), Err: err}
	if syntax != nil && syntax.line == line {
		e.Msg = syntax.msg
	}
	return e
}

// setHostDefaults sets the defaults of the host's own settings (push,
// log, limits): every config's, a file's or once's. As for a target, a
// key left out takes its default; one written keeps its value, which
// validation then checks (max_concurrent = 0 is an error, not the
// default).
func (c *Config) setHostDefaults() {
	if c.Host == "" {
		c.Host, _ = os.Hostname()
	}
	if !c.has("max_concurrent") {
		c.MaxConcurrent = DefaultMaxConcurrent
	}
	if !c.has("shutdown_timeout") {
		c.ShutdownTimeout.Duration = DefaultShutdownTimeout
	}
	if !c.has("log.level") {
		c.Log.Level = "info"
	}
	if !c.has("log.format") {
		c.Log.Format = "auto"
	}
	if !c.has("push.interval") {
		c.Push.Interval.Duration = DefaultPushInterval
	}
	if !c.has("push.timeout") {
		c.Push.Timeout.Duration = DefaultPushTimeout
	}
	if !c.has("push.histograms") {
		// What is pushed goes to VictoriaMetrics or vmagent by default;
		// with nothing pushed /metrics is scraped, by Prometheus first.
		c.Push.Histograms = "prometheus"
		if c.Push.URL.URL != nil {
			c.Push.Histograms = "vmrange"
		}
	}
	if !c.has("slo_fleet_regions") {
		c.SLOFleetRegions = DefaultSLOFleetRegions
	}
	if !c.has("otlp.interval") {
		c.OTLP.Interval.Duration = DefaultPushInterval
	}
	if !c.has("otlp.timeout") {
		c.OTLP.Timeout.Duration = DefaultPushTimeout
	}
	if !c.has("otlp.histograms") {
		c.OTLP.Histograms = "explicit"
	}
}

// setDefaults sets every default of a file. A target's key left out
// takes its default; one written keeps its value, which validation then
// checks (max_stream = "0s" is an error, not the default).
func (c *Config) setDefaults(names Names) {
	c.setHostDefaults()
	for i := range c.Targets {
		t := &c.Targets[i]
		key := func(k string) string { return fmt.Sprintf("target[%d].%s", i, k) }
		if t.Dialect == "" {
			t.Dialect = "sse"
		}
		if t.Samples == nil && t.Drills == nil {
			t.Samples = slices.Clone(names.Samples)
		}
		if t.Every.IsZero() {
			t.Every = Schedule{Every: DefaultEvery}
		}
		if t.DrillEvery.IsZero() {
			t.DrillEvery = t.Every
		}
		if !c.has(key("jitter")) {
			t.Jitter.Duration = DefaultJitter
		}
		if !c.has(key("timeout")) {
			// A written 0s stays: no first-chunk limit of its own.
			t.Timeout.Duration = DefaultTimeout
		}
		if !c.has(key("max_stream")) {
			t.MaxStream.Duration = DefaultMaxStream
		}
		if t.IDs == "" {
			t.IDs = IDsInt
			if slices.Contains(names.OpaqueIDs, t.Dialect) {
				t.IDs = IDsOpaque
			}
		}
	}
}

// has reports whether the config set the key (a file wrote it, or a flag
// gave it).
func (c *Config) has(key string) bool {
	_, ok := c.index[key]
	return ok
}

func (c *Config) validate(env Env) error {
	var errs []error
	if c.MaxConcurrent < 1 {
		errs = append(errs, c.errValue("max_concurrent", strconv.Itoa(c.MaxConcurrent), "want 1 or more"))
	}
	if c.ShutdownTimeout.Duration <= 0 {
		errs = append(errs, c.errValue("shutdown_timeout", c.ShutdownTimeout.Duration.String(), "want a positive duration"))
	}
	if !slices.Contains([]string{"debug", "info", "warn", "error"}, c.Log.Level) {
		errs = append(errs, c.errValue("log.level", strconv.Quote(c.Log.Level), "want debug, info, warn or error"))
	}
	if !slices.Contains([]string{"auto", "json", "text"}, c.Log.Format) {
		errs = append(errs, c.errValue("log.format", strconv.Quote(c.Log.Format), "want auto, json or text"))
	}
	errs = append(errs, c.hostValues(env.Getenv)...)
	for _, k := range sortedKeys(c.Labels) {
		if err := CheckLabelName(k); err != nil {
			errs = append(errs, c.errAt("labels."+k, "%v", err))
		}
	}
	errs = append(errs, c.validatePush(env.Getenv)...)
	errs = append(errs, c.validateOTLP(env.Getenv)...)
	if c.RunTokenFile != "" && c.Listen == "" {
		errs = append(errs, c.errAt("run_token_file", "on-demand runs are served on the listen address: set listen too"))
	}
	errs = append(errs, c.checkSecret("", "run_token_file", "", c.RunTokenFile, env.Getenv)...)
	if len(c.Targets) == 0 {
		errs = append(errs, &Error{File: c.file, Key: "target", Msg: "no [[target]]: nothing to probe"})
	}
	names := map[string]int{}
	for i := range c.Targets {
		errs = append(errs, c.validateTarget(i, env)...)
		n := c.Targets[i].Name
		if j, dup := names[n]; dup {
			errs = append(errs, c.errAt(fmt.Sprintf("target[%d].name", i), "duplicate target name %q (also target[%d], line %d)", n, j, c.index.line(fmt.Sprintf("target[%d].name", j))))
		}
		names[n] = i
	}
	errs = append(errs, c.validateSLOs(env.Names)...)
	errs = append(errs, c.validateBudgets("budget.", c.Budgets, env.Names)...)
	errs = append(errs, c.validateCompare()...)
	if err := c.validateHost(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// hostValues takes the region and the labels that the file names by an
// environment variable from the host's environment (none is looked up
// without getenv, for report).
func (c *Config) hostValues(getenv func(string) string) []error {
	var errs []error
	both := []struct{ key, env string }{{"region", c.RegionEnv}, {"host", c.HostEnv}, {"listen", c.ListenEnv}}
	for _, b := range both {
		if b.env != "" && c.has(b.key) {
			errs = append(errs, c.errAt(b.key+"_env", "set %s or %s_env, not both", b.key, b.key))
		}
	}
	for _, k := range sortedKeys(c.LabelsEnv) {
		if _, ok := c.Labels[k]; ok {
			errs = append(errs, c.errAt("labels_env."+k, "label %s is in [labels] too", k))
		}
		if err := CheckLabelName(k); err != nil {
			errs = append(errs, c.errAt("labels_env."+k, "%v", err))
		}
	}
	if getenv == nil || len(errs) > 0 {
		return errs
	}
	for _, v := range []struct {
		key string
		env string
		to  *string
	}{{"region_env", c.RegionEnv, &c.Region}, {"host_env", c.HostEnv, &c.Host}, {"listen_env", c.ListenEnv, &c.Listen}} {
		if v.env == "" {
			continue
		}
		if *v.to = getenv(v.env); *v.to == "" {
			errs = append(errs, c.errAt(v.key, "environment variable %s is not set", v.env))
		}
	}
	for _, k := range sortedKeys(c.LabelsEnv) {
		v := getenv(c.LabelsEnv[k])
		if v == "" {
			errs = append(errs, c.errAt("labels_env."+k, "environment variable %s is not set", c.LabelsEnv[k]))
			continue
		}
		if c.Labels == nil {
			c.Labels = map[string]string{}
		}
		c.Labels[k] = v
	}
	return errs
}

// validateSLOs checks [slo.<sample>]: a known sample, each objective a
// share above 0 and below 1, tfc_within with a TFC budget to be within;
// and slo_fleet_regions, 1 or more when written.
func (c *Config) validateSLOs(names Names) []error {
	var errs []error
	for _, s := range sortedKeys(c.SLOs) {
		if !slices.Contains(names.Samples, s) {
			errs = append(errs, c.errAt("slo."+s, "unknown sample %q (known: %s)", s, strings.Join(names.Samples, ", ")))
		}
		o := c.SLOs[s].Objectives()
		for _, k := range sortedKeys(o) {
			if v := o[k]; v <= 0 || v >= 1 {
				errs = append(errs, c.errValue("slo."+s+"."+k, strconv.FormatFloat(v, 'g', -1, 64), "want a share above 0 and below 1 (0.99 is 99%% of runs good)"))
			}
		}
		if _, ok := o["tfc_within"]; ok && c.Budgets[s].TFC.Duration <= 0 {
			errs = append(errs, c.errAt("slo."+s+".tfc_within", "needs a TFC budget to be within: set [budget.%s] tfc", s))
		}
	}
	if c.has("slo_fleet_regions") && c.SLOFleetRegions < 1 {
		errs = append(errs, c.errValue("slo_fleet_regions", strconv.Itoa(c.SLOFleetRegions), "want 1 or more"))
	}
	return errs
}

// validateBudgets checks the budget tables of m (the global ones, or a
// target's), their keys under prefix ("budget." or "target[1].budget.").
func (c *Config) validateBudgets(prefix string, m BudgetMap, names Names) []error {
	var errs []error
	for _, s := range sortedKeys(m) {
		if !slices.Contains(names.Samples, s) {
			errs = append(errs, c.errAt(prefix+s, "unknown sample %q (known: %s)", s, strings.Join(names.Samples, ", ")))
		}
		b := m[s]
		for _, d := range []struct {
			key string
			v   Duration
		}{{"tfc", b.TFC}, {"gap", b.Gap}, {"tail", b.Tail}} {
			if d.v.Duration < 0 {
				errs = append(errs, c.errValue(prefix+s+"."+d.key, d.v.Duration.String(), "want a positive duration (or 0s: no budget)"))
			}
		}
		for _, sh := range []struct {
			key string
			v   *float64
		}{{"stall_share", b.StallShare}, {"error_share", b.ErrorShare}} {
			if sh.v != nil && (*sh.v < 0 || *sh.v > 1) {
				errs = append(errs, c.errValue(prefix+s+"."+sh.key, strconv.FormatFloat(*sh.v, 'g', -1, 64), "want a share from 0 to 1 (0.05 is 5%% of runs)"))
			}
		}
	}
	return errs
}

// validateCompare checks [compare.margin]: known metrics, margins from 0
// (a relative margin up to 10, +1000%; a share's up to 1).
func (c *Config) validateCompare() []error {
	var errs []error
	for _, k := range sortedKeys(c.Compare.Margin) {
		i := slices.IndexFunc(CompareMetrics, func(m CompareMetric) bool { return m.Name == k })
		if i < 0 {
			var known []string
			for _, m := range CompareMetrics {
				known = append(known, m.Name)
			}
			errs = append(errs, c.errAt("compare.margin."+k, "unknown metric %q (known: %s)", k, strings.Join(known, ", ")))
			continue
		}
		v, top, want := c.Compare.Margin[k], 10.0, "want a relative margin from 0 to 10 (0.10 is +10%)"
		if !CompareMetrics[i].Relative {
			top, want = 1, "want a margin in points of share from 0 to 1 (0.05 is +5 points)"
		}
		if v < 0 || v > top || math.IsNaN(v) {
			errs = append(errs, c.errValue("compare.margin."+k, strconv.FormatFloat(v, 'g', -1, 64), "%s", want))
		}
	}
	return errs
}

// CheckLabelName reports why k cannot be an extra label's name (the
// config's [labels], once's -label): it must be a Prometheus label name
// and not one streamprobe sets itself.
func CheckLabelName(k string) error {
	if !labelName.MatchString(k) || slices.Contains(reserved, k) {
		return fmt.Errorf("%q is not a usable label name (letters, digits, _; not one of %s)", k, strings.Join(reserved, ", "))
	}
	return nil
}

func (c *Config) validatePush(getenv func(string) string) []error {
	p := &c.Push
	errs := c.checkSendTiming("push", p.Interval.Duration, p.Timeout.Duration)
	if p.URL.URL != nil && p.URL.RawQuery != "" {
		errs = append(errs, c.errAt("push.url", "a query string is not allowed (it would show in logs and /healthz); put credentials in authorization_env or authorization_file"))
	}
	if p.Histograms != "vmrange" && p.Histograms != "prometheus" {
		errs = append(errs, c.errValue("push.histograms", strconv.Quote(p.Histograms), "want vmrange or prometheus"))
	}
	return append(errs, c.checkAuthHeaders("push", p.Headers, p.AuthorizationEnv, p.AuthorizationFile, getenv)...)
}

// validateOTLP checks [otlp] as [push] is checked: the period, the
// timeout, no query string or user info, no secret header inline, the
// authorization from a variable or a file.
func (c *Config) validateOTLP(getenv func(string) string) []error {
	o := &c.OTLP
	errs := c.checkSendTiming("otlp", o.Interval.Duration, o.Timeout.Duration)
	if o.URL.URL != nil && (o.URL.RawQuery != "" || o.URL.User != nil) {
		errs = append(errs, c.errAt("otlp.url", "a query string or user info is not allowed (it would show in logs and /healthz); put credentials in authorization_env or authorization_file"))
	}
	if o.Histograms != "explicit" && o.Histograms != "exponential" {
		errs = append(errs, c.errValue("otlp.histograms", strconv.Quote(o.Histograms), "want explicit or exponential"))
	}
	return append(errs, c.checkAuthHeaders("otlp", o.Headers, o.AuthorizationEnv, o.AuthorizationFile, getenv)...)
}

// checkSendTiming checks the period and the timeout of table's sends
// (push, otlp): a period of 1 s or more, a positive timeout no longer
// than it.
func (c *Config) checkSendTiming(table string, interval, timeout time.Duration) []error {
	switch {
	case interval < time.Second:
		return []error{c.errValue(table+".interval", interval.String(), "want 1s or more")}
	case timeout <= 0:
		return []error{c.errValue(table+".timeout", timeout.String(), "want a positive duration")}
	case timeout > interval:
		return []error{c.errAt(table+".timeout", "timeout (%s) must not be longer than interval (%s)", timeout, interval)}
	}
	return nil
}

// checkAuthHeaders checks table's headers (none of them secret, each a
// value HTTP can carry) and its authorization (from a variable or a file,
// not both, set).
func (c *Config) checkAuthHeaders(table string, headers map[string]string, authEnv, authFile string, getenv func(string) string) []error {
	var errs []error
	for _, k := range sortedKeys(headers) {
		if isSecretHeader(k) {
			errs = append(errs, c.errAt(table+".headers."+k, "secrets may not be inline: use authorization_env or authorization_file"))
		}
	}
	if authEnv != "" && authFile != "" {
		errs = append(errs, c.errAt(table+".authorization_file", "set authorization_env or authorization_file, not both"))
	}
	errs = append(errs, c.checkSecret(table+".authorization_env", table+".authorization_file", authEnv, authFile, getenv)...)
	for _, k := range sortedKeys(headers) {
		if err := headerValue(headers[k]); err != nil {
			errs = append(errs, c.errAt(table+".headers."+k, "the value %v", err))
		}
	}
	return errs
}

// checkSecret looks up the secret named by the environment variable env
// (key envKey) and the file (key fileKey), whichever are set, and reports
// each that is missing or that no HTTP header may carry. With no getenv
// it looks up nothing.
func (c *Config) checkSecret(envKey, fileKey, env, file string, getenv func(string) string) []error {
	if getenv == nil {
		return nil
	}
	var errs []error
	if env != "" {
		if v := getenv(env); v == "" {
			errs = append(errs, c.errAt(envKey, "environment variable %s is not set", env))
		} else if err := headerValue(v); err != nil {
			errs = append(errs, c.errAt(envKey, "the value of %s %v", env, err))
		}
	}
	if file != "" {
		if v, err := readSecretFile(file); err != nil {
			errs = append(errs, c.errAt(fileKey, "%v", err))
		} else if err := headerValue(v); err != nil {
			errs = append(errs, c.errAt(fileKey, "the content of %s %v", file, err))
		}
	}
	return errs
}

// headerValue reports why v cannot be sent as an HTTP header value: a
// control character other than tab (CR, LF, NUL...). The value is not
// quoted: it may be secret.
func headerValue(v string) error {
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return fmt.Errorf("holds the byte 0x%02x at offset %d, which no HTTP header may carry", c, i)
		}
	}
	return nil
}

// secretHeaders are the headers that carry credentials: never written in
// a config or given on once's command line (where ps and the shell's
// history would show them), only named by an environment variable or a
// file.
var secretHeaders = []string{"authorization", "proxy-authorization", "x-api-key", "x-goog-api-key", "api-key", "cookie"}

func isSecretHeader(h string) bool { return slices.Contains(secretHeaders, strings.ToLower(h)) }

func labelValue(s string) bool {
	for _, r := range s {
		if !(r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return len(s) <= 64
}

// readSecretFile reads a secret from a file, trimmed; its content never
// goes into an error.
func readSecretFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return "", fmt.Errorf("cannot read %s: %v", path, pe.Err)
		}
		return "", fmt.Errorf("cannot read %s", path)
	}
	v := strings.TrimSpace(string(b))
	if v == "" {
		return "", fmt.Errorf("%s is empty", path)
	}
	return v, nil
}

// Secret resolves a secret from an environment variable or a file.
func Secret(env, file string, getenv func(string) string) (string, error) {
	switch {
	case env != "":
		v := getenv(env)
		if v == "" {
			return "", fmt.Errorf("environment variable %s is not set", env)
		}
		return v, nil
	case file != "":
		return readSecretFile(file)
	}
	return "", nil
}

// ParseHeaderMatch checks a stale-answer header: "Name" (a header naming
// the position the server resumed from: any value other than the id sent
// answers) or "Name: value" (the header must carry that value). It returns
// the name and the value.
func ParseHeaderMatch(s string) ([2]string, error) {
	name, value, _ := strings.Cut(s, ":")
	name, value = strings.TrimSpace(name), strings.TrimSpace(value)
	if name == "" || strings.ContainsAny(name, " \t\"(),/;<=>?@[\\]{}") {
		return [2]string{}, fmt.Errorf("%q: want 'Name' or 'Name: value'", s)
	}
	return [2]string{name, value}, nil
}
