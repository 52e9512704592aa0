// Package config is streamprobe's TOML configuration: the schema, strict
// decoding (an unknown key is an error), defaults, and validation whose
// errors name the file, the line and the key. It is pure: no network, no
// goroutines. Secrets are never in the file: it names the environment
// variables or files that hold them.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
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
	// Listen, when set, serves /metrics and /healthz on this address.
	Listen string `toml:"listen"`
	// ResultsLog, when set, appends every record as a JSON line to it.
	ResultsLog string `toml:"results_log"`
	// MaxConcurrent bounds the runs in flight on this host.
	MaxConcurrent int `toml:"max_concurrent"`
	// ShutdownTimeout bounds the wait for runs on SIGTERM.
	ShutdownTimeout Duration  `toml:"shutdown_timeout"`
	Log             Log       `toml:"log"`
	Push            Push      `toml:"push"`
	Targets         []Target  `toml:"target"`
	Budgets         BudgetMap `toml:"budget"`

	file  string
	index keyIndex
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
	// Histograms is "vmrange" (VictoriaMetrics' default) or "prometheus"
	// (le buckets, for Prometheus and Mimir).
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
	// Every is the schedule of each sample; DrillEvery of each drill
	// (default: Every).
	Every      Schedule `toml:"every"`
	DrillEvery Schedule `toml:"drill_every"`
	// Jitter delays each run by a random 0..Jitter so hosts do not fire
	// together.
	Jitter Duration `toml:"jitter"`
	// Timeout is the wait for the first chunk; MaxStream bounds the whole
	// request.
	Timeout      Duration `toml:"timeout"`
	MaxStream    Duration `toml:"max_stream"`
	MaxEventSize int      `toml:"max_event_size"`
	EndEvent     string   `toml:"end_event"`
	EndData      *string  `toml:"end_data"`
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
	Rewind       int      `toml:"rewind"`
	StaleID      string   `toml:"stale_id"`
	IDs          string   `toml:"ids"`
	ErrorEvent   string   `toml:"error_event"`
	ResetEvent   string   `toml:"reset_event"`
	StaleHeaders []string `toml:"stale_headers"`
	// ResumeOnDrop (default true) resumes a stream the server dropped,
	// for dialects that can resume; MaxReconnects bounds the reconnects
	// of one run (default 5).
	ResumeOnDrop  *bool `toml:"resume_on_drop"`
	MaxReconnects int   `toml:"max_reconnects"`
}

// Budget is the budget of one sample class: p95 budgets, and the largest
// share (0 to 1) of runs that may stall over 250 ms (nil: check's default,
// scorecard.DefaultStallShare).
type Budget struct {
	TFC        Duration `toml:"tfc"`
	Gap        Duration `toml:"gap"`
	Tail       Duration `toml:"tail"`
	StallShare *float64 `toml:"stall_share"`
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
	DefaultMaxEventSize    = 16 << 20
)

// Known values, kept here so the package stays free of probe imports; the
// probe package checks it agrees.
var (
	knownDialects = []string{"anthropic-messages", "openai-chat", "openai-responses", "sse"}
	knownSamples  = []string{"short", "long", "cancel"}
	knownDrills   = []string{"drop", "duplicate", "stale"}
	labelName     = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)
	reserved      = []string{"target", "sample", "dialect", "drill", "outcome", "verdict", "resumed", "vmrange", "le", "region", "host", "metric", "reason"}
)

// Load reads, decodes, defaults and validates the file at path. getenv
// looks up environment variables (os.Getenv in the binary).
func Load(path string, getenv func(string) string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return Parse(path, b, getenv)
}

// Parse is Load on bytes already read; name is used in errors.
func Parse(name string, b []byte, getenv func(string) string) (*Config, error) {
	c := &Config{file: name, index: indexKeys(b)}
	dec := toml.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(c); err != nil {
		return nil, c.decodeError(err, b)
	}
	c.setDefaults()
	if err := c.validate(getenv); err != nil {
		return nil, err
	}
	return c, nil
}

// File is the path the config was loaded from.
func (c *Config) File() string { return c.file }

func (c *Config) decodeError(err error, b []byte) error {
	var se *toml.StrictMissingError
	if errors.As(err, &se) && len(se.Errors) > 0 {
		e := se.Errors[0]
		line, _ := e.Position()
		return &Error{File: c.file, Line: line, Key: c.index.keyAt(line, e.Key()), Msg: "unknown key"}
	}
	// A value that does not fit its field, found by the walk that knows
	// the field (the decoder's own message names Go types).
	if ve := c.valueError(b); ve != nil {
		return ve
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		line, _ := de.Position()
		return &Error{File: c.file, Line: line, Key: c.index.keyAt(line, de.Key()), Msg: strings.TrimPrefix(de.Error(), "toml: ")}
	}
	return &Error{File: c.file, Msg: strings.TrimPrefix(err.Error(), "toml: ")}
}

func (c *Config) setDefaults() {
	if c.Host == "" {
		c.Host, _ = os.Hostname()
	}
	if c.MaxConcurrent == 0 {
		c.MaxConcurrent = DefaultMaxConcurrent
	}
	if c.ShutdownTimeout.Duration == 0 {
		c.ShutdownTimeout.Duration = DefaultShutdownTimeout
	}
	if c.Log.Level == "" {
		c.Log.Level = "info"
	}
	if c.Log.Format == "" {
		c.Log.Format = "auto"
	}
	if c.Push.Interval.Duration == 0 {
		c.Push.Interval.Duration = DefaultPushInterval
	}
	if c.Push.Timeout.Duration == 0 {
		c.Push.Timeout.Duration = DefaultPushTimeout
	}
	if c.Push.Histograms == "" {
		c.Push.Histograms = "vmrange"
	}
	for i := range c.Targets {
		t := &c.Targets[i]
		if t.Dialect == "" {
			t.Dialect = "sse"
		}
		if t.Samples == nil && t.Drills == nil {
			t.Samples = slices.Clone(knownSamples)
		}
		if t.Every.IsZero() {
			t.Every = Schedule{Every: DefaultEvery}
		}
		if t.DrillEvery.IsZero() {
			t.DrillEvery = t.Every
		}
		if !c.has(fmt.Sprintf("target[%d].jitter", i)) {
			t.Jitter.Duration = DefaultJitter
		}
		if t.Timeout.Duration == 0 {
			t.Timeout.Duration = DefaultTimeout
		}
		if t.MaxStream.Duration == 0 {
			t.MaxStream.Duration = DefaultMaxStream
		}
		if t.MaxEventSize == 0 {
			t.MaxEventSize = DefaultMaxEventSize
		}
		if t.IDs == "" {
			t.IDs = "int"
		}
	}
}

// has reports whether the file set the key.
func (c *Config) has(key string) bool {
	_, ok := c.index[key]
	return ok
}

// errAt returns an error located at key.
func (c *Config) errAt(key, format string, args ...any) error {
	return &Error{File: c.file, Line: c.index.line(key), Key: key, Msg: fmt.Sprintf(format, args...)}
}

func (c *Config) validate(getenv func(string) string) error {
	var errs []error
	if c.MaxConcurrent < 1 {
		errs = append(errs, c.errAt("max_concurrent", "%d: want 1 or more", c.MaxConcurrent))
	}
	if !slices.Contains([]string{"debug", "info", "warn", "error"}, c.Log.Level) {
		errs = append(errs, c.errAt("log.level", "%q: want debug, info, warn or error", c.Log.Level))
	}
	if !slices.Contains([]string{"auto", "json", "text"}, c.Log.Format) {
		errs = append(errs, c.errAt("log.format", "%q: want auto, json or text", c.Log.Format))
	}
	for _, k := range sortedKeys(c.Labels) {
		if err := CheckLabelName(k); err != nil {
			errs = append(errs, c.errAt("labels."+k, "%v", err))
		}
	}
	if err := c.validatePush(getenv); err != nil {
		errs = append(errs, err)
	}
	if len(c.Targets) == 0 {
		errs = append(errs, &Error{File: c.file, Key: "target", Msg: "no [[target]]: nothing to probe"})
	}
	names := map[string]int{}
	for i := range c.Targets {
		if err := c.validateTarget(i, getenv); err != nil {
			errs = append(errs, err)
		}
		n := c.Targets[i].Name
		if j, dup := names[n]; dup {
			errs = append(errs, c.errAt(fmt.Sprintf("target[%d].name", i), "duplicate target name %q (also target[%d], line %d)", n, j, c.index.line(fmt.Sprintf("target[%d].name", j))))
		}
		names[n] = i
	}
	for _, s := range sortedKeys(c.Budgets) {
		if !slices.Contains(knownSamples, s) {
			errs = append(errs, c.errAt("budget."+s, "unknown sample %q (known: %s)", s, strings.Join(knownSamples, ", ")))
		}
		if v := c.Budgets[s].StallShare; v != nil && (*v < 0 || *v > 1) {
			errs = append(errs, c.errAt("budget."+s+".stall_share", "%g: want a share from 0 to 1 (0.05 is 5%% of runs)", *v))
		}
	}
	if err := c.validateHost(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
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

func (c *Config) validatePush(getenv func(string) string) error {
	var errs []error
	p := &c.Push
	if p.Interval.Duration < time.Second {
		errs = append(errs, c.errAt("push.interval", "%s: want 1s or more", p.Interval.Duration))
	}
	if p.Timeout.Duration > p.Interval.Duration {
		errs = append(errs, c.errAt("push.timeout", "timeout (%s) must not be longer than interval (%s)", p.Timeout.Duration, p.Interval.Duration))
	}
	if p.URL.URL != nil && p.URL.RawQuery != "" {
		errs = append(errs, c.errAt("push.url", "a query string is not allowed (it would show in logs and /healthz); put credentials in authorization_env or authorization_file"))
	}
	if p.Histograms != "vmrange" && p.Histograms != "prometheus" {
		errs = append(errs, c.errAt("push.histograms", "%q: want vmrange or prometheus", p.Histograms))
	}
	for _, k := range sortedKeys(p.Headers) {
		if isSecretHeader(k) {
			errs = append(errs, c.errAt("push.headers."+k, "secrets may not be inline: use authorization_env or authorization_file"))
		}
	}
	if p.AuthorizationEnv != "" && p.AuthorizationFile != "" {
		errs = append(errs, c.errAt("push.authorization_file", "set authorization_env or authorization_file, not both"))
	}
	if p.AuthorizationEnv != "" {
		if v := getenv(p.AuthorizationEnv); v == "" {
			errs = append(errs, c.errAt("push.authorization_env", "environment variable %s is not set", p.AuthorizationEnv))
		} else if err := headerValue(v); err != nil {
			errs = append(errs, c.errAt("push.authorization_env", "the value of %s %v", p.AuthorizationEnv, err))
		}
	}
	if p.AuthorizationFile != "" {
		if v, err := readSecretFile(p.AuthorizationFile); err != nil {
			errs = append(errs, c.errAt("push.authorization_file", "%v", err))
		} else if err := headerValue(v); err != nil {
			errs = append(errs, c.errAt("push.authorization_file", "the content of %s %v", p.AuthorizationFile, err))
		}
	}
	for _, k := range sortedKeys(p.Headers) {
		if err := headerValue(p.Headers[k]); err != nil {
			errs = append(errs, c.errAt("push.headers."+k, "the value %v", err))
		}
	}
	return errors.Join(errs...)
}

func (c *Config) validateTarget(i int, getenv func(string) string) error {
	var errs []error
	t := &c.Targets[i]
	key := func(k string) string { return fmt.Sprintf("target[%d].%s", i, k) }
	if t.Name == "" {
		errs = append(errs, c.errAt(fmt.Sprintf("target[%d]", i), "name is required"))
	}
	if !labelValue(t.Name) {
		errs = append(errs, c.errAt(key("name"), "%q: use letters, digits, '.', '_' and '-' (it becomes a label value)", t.Name))
	}
	switch {
	case t.Builtin && t.URL.URL != nil:
		errs = append(errs, c.errAt(key("url"), "set url or builtin = true, not both"))
	case !t.Builtin && t.URL.URL == nil:
		errs = append(errs, c.errAt(fmt.Sprintf("target[%d]", i), "url is required (or builtin = true for the built-in reference target)"))
	}
	if !slices.Contains(knownDialects, t.Dialect) {
		errs = append(errs, c.errAt(key("dialect"), "unknown dialect %q (known: %s)", t.Dialect, strings.Join(knownDialects, ", ")))
	}
	for j, s := range t.Samples {
		if !slices.Contains(knownSamples, s) {
			errs = append(errs, c.errAt(key("samples"), "samples[%d]: unknown sample %q (known: %s)", j, s, strings.Join(knownSamples, ", ")))
		}
	}
	for j, d := range t.Drills {
		if !slices.Contains(knownDrills, d) {
			errs = append(errs, c.errAt(key("drills"), "drills[%d]: unknown drill %q (known: %s)", j, d, strings.Join(knownDrills, ", ")))
		}
	}
	if len(t.Samples)+len(t.Drills) == 0 {
		errs = append(errs, c.errAt(key("samples"), "no samples and no drills: nothing to run"))
	}
	if t.Every.Every > 0 && t.Timeout.Duration >= t.Every.Every && c.has(key("timeout")) {
		errs = append(errs, c.errAt(key("timeout"), "timeout (%s) must be shorter than every (%s)", t.Timeout.Duration, t.Every.Every))
	}
	if t.Jitter.Duration > 0 && t.Every.Every > 0 && t.Jitter.Duration >= t.Every.Every {
		if c.has(key("jitter")) {
			errs = append(errs, c.errAt(key("jitter"), "jitter (%s) must be shorter than every (%s)", t.Jitter.Duration, t.Every.Every))
		}
		t.Jitter.Duration = t.Every.Every / 2
	}
	if t.Timeout.Duration > t.MaxStream.Duration {
		errs = append(errs, c.errAt(key("timeout"), "timeout (%s) must not be longer than max_stream (%s)", t.Timeout.Duration, t.MaxStream.Duration))
	}
	if t.MaxEventSize < 1 || t.MaxEventSize > 1<<30 {
		errs = append(errs, c.errAt(key("max_event_size"), "%d: want 1 to 1073741824 bytes", t.MaxEventSize))
	}
	if t.IDs != "int" && t.IDs != "opaque" {
		errs = append(errs, c.errAt(key("ids"), "%q: want int or opaque", t.IDs))
	}
	if t.DropAfter < 0 || t.Rewind < 0 {
		errs = append(errs, c.errAt(key("drop_after"), "drop_after and rewind must not be negative"))
	}
	if t.DropAt.Duration > 0 && t.DropAt.Duration >= t.MaxStream.Duration {
		errs = append(errs, c.errAt(key("drop_at"), "drop_at (%s) must be shorter than max_stream (%s)", t.DropAt.Duration, t.MaxStream.Duration))
	}
	if t.MaxChunks < 0 || t.MaxChunks > 10_000_000 {
		errs = append(errs, c.errAt(key("max_chunks"), "%d: want 0 (the default, 100000) to 10000000", t.MaxChunks))
	}
	if t.MaxReconnects < 0 || t.MaxReconnects > 100 {
		errs = append(errs, c.errAt(key("max_reconnects"), "%d: want 0 (the default, 5) to 100", t.MaxReconnects))
	}
	for j, h := range t.StaleHeaders {
		if _, err := ParseHeaderMatch(h); err != nil {
			errs = append(errs, c.errAt(key("stale_headers"), "stale_headers[%d]: %v", j, err))
		}
	}
	for _, h := range sortedKeys(t.Headers) {
		if isSecretHeader(h) {
			errs = append(errs, c.errAt(key("headers."+h), "secrets may not be inline: use bearer_env, bearer_file or header_env"))
		}
	}
	if t.BearerEnv != "" && t.BearerFile != "" {
		errs = append(errs, c.errAt(key("bearer_file"), "set bearer_env or bearer_file, not both"))
	}
	if t.BearerEnv != "" {
		if v := getenv(t.BearerEnv); v == "" {
			errs = append(errs, c.errAt(key("bearer_env"), "environment variable %s is not set", t.BearerEnv))
		} else if err := headerValue(v); err != nil {
			errs = append(errs, c.errAt(key("bearer_env"), "the value of %s %v", t.BearerEnv, err))
		}
	}
	if t.BearerFile != "" {
		if v, err := readSecretFile(t.BearerFile); err != nil {
			errs = append(errs, c.errAt(key("bearer_file"), "%v", err))
		} else if err := headerValue(v); err != nil {
			errs = append(errs, c.errAt(key("bearer_file"), "the content of %s %v", t.BearerFile, err))
		}
	}
	for _, h := range sortedKeys(t.HeaderEnv) {
		if v := getenv(t.HeaderEnv[h]); v == "" {
			errs = append(errs, c.errAt(key("header_env."+h), "environment variable %s is not set", t.HeaderEnv[h]))
		} else if err := headerValue(v); err != nil {
			errs = append(errs, c.errAt(key("header_env."+h), "the value of %s %v", t.HeaderEnv[h], err))
		}
	}
	for _, h := range sortedKeys(t.Headers) {
		if err := headerValue(t.Headers[h]); err != nil {
			errs = append(errs, c.errAt(key("headers."+h), "the value %v", err))
		}
	}
	if err := headerValue(t.StaleID); err != nil {
		errs = append(errs, c.errAt(key("stale_id"), "%q %v: it is sent as Last-Event-ID", t.StaleID, err))
	}
	return errors.Join(errs...)
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

var secretNames = []string{"authorization", "proxy-authorization", "x-api-key", "api-key", "cookie"}

func isSecretHeader(h string) bool { return slices.Contains(secretNames, strings.ToLower(h)) }

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

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
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
