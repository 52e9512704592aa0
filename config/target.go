package config

import (
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
)

// intLimit bounds one of a target's integer settings. A key written in a
// file, or its flag given to once, must be within [min, max] (max 0: no
// upper bound); a key left out is 0, which the probe and the transport
// read as their default.
type intLimit struct {
	key      string
	min, max int
	unit     string
	value    func(*Target) int
}

// intLimits are the ranges of a target's integer settings: the only
// place that says them, for a file and for once alike.
var intLimits = []intLimit{
	{"max_event_size", 1, 1 << 30, " bytes", func(t *Target) int { return t.MaxEventSize }},
	{"max_chunks", 1, 10_000_000, "", func(t *Target) int { return t.MaxChunks }},
	{"max_reconnects", 1, 100, "", func(t *Target) int { return t.MaxReconnects }},
	{"cancel_after", 1, 0, "", func(t *Target) int { return t.CancelAfter }},
	{"drop_after", 1, 0, "", func(t *Target) int { return t.DropAfter }},
	{"rewind", 1, 0, "", func(t *Target) int { return t.Rewind }},
}

// validateTarget checks target i, every rule: no problem hides another.
func (c *Config) validateTarget(i int, env Env) []error {
	t := &c.Targets[i]
	key := func(k string) string { return fmt.Sprintf("target[%d].%s", i, k) }
	errs := c.checkIdentity(t, i, key)
	errs = append(errs, c.checkNames(t, key, env.Names)...)
	errs = append(errs, c.checkTiming(t, key)...)
	errs = append(errs, c.checkLimits(t, key)...)
	errs = append(errs, c.checkDrill(t, key)...)
	errs = append(errs, c.checkTools(t, key, env.Names)...)
	errs = append(errs, c.checkNetwork(t, key)...)
	errs = append(errs, c.checkOAuth2(t, key, env.Getenv)...)
	errs = append(errs, c.validateBudgets(key("budget."), t.Budgets, env.Names)...)
	errs = append(errs, c.checkSlowdown(t, key)...)
	errs = append(errs, c.checkLangGraph(t, key, env.Names)...)
	errs = append(errs, c.checkResumable(t, key)...)
	errs = append(errs, c.checkAWS(t, i, key, env.Names)...)
	errs = append(errs, c.checkTokenKinds(t, key)...)
	errs = append(errs, c.checkFiles(t, key, env.Getenv)...)
	return append(errs, c.checkHeaders(t, key, env.Getenv)...)
}

// checkNetwork checks the network path: the IP family, the fixed and the
// source address (each an IP of that family), and the proxy.
func (c *Config) checkNetwork(t *Target, key func(string) string) []error {
	var errs []error
	fam := ""
	switch v := t.IPVersion.(type) {
	case nil:
	case int64:
		fam = strconv.FormatInt(v, 10)
	case string:
		fam = v
	default:
		fam = "?"
	}
	switch {
	case t.IPVersion == nil:
	case fam == "4" || fam == "6" || fam == "any":
		t.IPVersion = fam
	default:
		errs = append(errs, c.errValue(key("ip_version"), fmt.Sprint(t.IPVersion), "want 4, 6 or \"any\""))
		fam = ""
	}
	for _, a := range []struct{ k, v string }{{"resolve", t.Resolve}, {"source_address", t.SourceAddress}} {
		if a.v == "" {
			continue
		}
		ip := net.ParseIP(a.v)
		switch {
		case ip == nil:
			errs = append(errs, c.errValue(key(a.k), strconv.Quote(a.v), "want an IP address (\"203.0.113.5\", \"2001:db8::5\")"))
		case fam == "4" && ip.To4() == nil, fam == "6" && ip.To4() != nil:
			errs = append(errs, c.errValue(key(a.k), strconv.Quote(a.v), "is not an IPv%s address, as ip_version = %s asks", fam, fam))
		}
	}
	if r, s := net.ParseIP(t.Resolve), net.ParseIP(t.SourceAddress); r != nil && s != nil && (r.To4() == nil) != (s.To4() == nil) {
		errs = append(errs, c.errAt(key("source_address"), "%s and resolve %s are not of one IP family", t.SourceAddress, t.Resolve))
	}
	if err := c.checkProxy(t, key); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// checkProxy checks the target's proxy: a URL with no credentials, path
// or query, or "none".
func (c *Config) checkProxy(t *Target, key func(string) string) error {
	if t.Proxy == "" || t.Proxy == "none" {
		return nil
	}
	u, err := url.Parse(t.Proxy)
	switch {
	case err != nil || u.Host == "" || !slices.Contains([]string{"http", "https", "socks5"}, u.Scheme):
		return c.errAt(key("proxy"), "want an http://, https:// or socks5:// proxy URL, or \"none\"")
	case u.User != nil:
		return c.errAt(key("proxy"), "credentials may not be inline: give them in HTTPS_PROXY in the environment (the unit's env file) instead")
	case u.Path != "" && u.Path != "/" || u.RawQuery != "":
		return c.errAt(key("proxy"), "a proxy URL is scheme://host:port, with no path or query")
	}
	return nil
}

// checkSlowdown checks the built-in target's slowdown: only there, and a
// factor from 0.1 to 100.
func (c *Config) checkSlowdown(t *Target, key func(string) string) []error {
	if !c.has(key("slowdown")) {
		return nil
	}
	switch {
	case !t.Builtin:
		return []error{c.errAt(key("slowdown"), "slowdown is for the built-in reference target only (builtin = true)")}
	case !(t.Slowdown >= 0.1 && t.Slowdown <= 100):
		return []error{c.errValue(key("slowdown"), strconv.FormatFloat(t.Slowdown, 'g', -1, 64), "want a factor from 0.1 to 100 (1.2 plays the streams 20%% slower)")}
	}
	return nil
}

// checkOAuth2 checks the OAuth2 client-credentials grant: a token URL, a
// client id, the secret from exactly one of an environment variable and
// a file, and no other bearer key beside it.
func (c *Config) checkOAuth2(t *Target, key func(string) string, getenv func(string) string) []error {
	o := t.OAuth2
	if o == nil {
		return nil
	}
	var errs []error
	k := func(s string) string { return key("oauth2." + s) }
	if o.TokenURL.URL == nil {
		errs = append(errs, c.errAt(key("oauth2"), "token_url is required"))
	}
	if o.ClientID == "" {
		errs = append(errs, c.errAt(key("oauth2"), "client_id is required"))
	}
	switch {
	case o.ClientSecretEnv == "" && o.ClientSecretFile == "":
		errs = append(errs, c.errAt(key("oauth2"), "client_secret_env or client_secret_file is required"))
	case o.ClientSecretEnv != "" && o.ClientSecretFile != "":
		errs = append(errs, c.errAt(k("client_secret_file"), "set client_secret_env or client_secret_file, not both"))
	}
	if t.BearerEnv != "" || t.BearerFile != "" {
		errs = append(errs, c.errAt(key("oauth2"), "set oauth2 or bearer_env / bearer_file, not both: the token is the bearer key"))
	}
	if o.TokenURL.URL != nil && o.TokenURL.User != nil {
		errs = append(errs, c.errAt(k("token_url"), "credentials may not be inline: use client_secret_env or client_secret_file"))
	}
	return append(errs, c.checkSecret(k("client_secret_env"), k("client_secret_file"), o.ClientSecretEnv, o.ClientSecretFile, getenv)...)
}

// checkAWS checks a SigV4-signed target's settings: aws_region and
// aws_profile only on a dialect that signs, a region (aws_region, or the
// URL's host) when the target signs, one that reads as a region.
func (c *Config) checkAWS(t *Target, i int, key func(string) string, names Names) []error {
	var errs []error
	if !slices.Contains(names.Signed, t.Dialect) {
		for _, k := range []struct{ name, v string }{{"aws_region", t.AWSRegion}, {"aws_profile", t.AWSProfile}} {
			if k.v != "" {
				errs = append(errs, c.errAt(key(k.name), "is for the dialects whose requests are signed with AWS SigV4 (%s), not %s", strings.Join(names.Signed, ", "), t.Dialect))
			}
		}
		return errs
	}
	switch {
	case t.AWSRegion != "" && !awsRegion(t.AWSRegion):
		errs = append(errs, c.errValue(key("aws_region"), strconv.Quote(t.AWSRegion), "want a region name such as \"us-east-1\""))
	case t.SigV4(names.Signed) && t.SigningRegion() == "":
		errs = append(errs, c.errNamed(fmt.Sprintf("target[%d]", i), "%s is required: the URL's host names no region, and SigV4 signs for one", c.name(key("aws_region"))))
	}
	if t.AWSProfile != "" && !labelValue(t.AWSProfile) {
		errs = append(errs, c.errValue(key("aws_profile"), strconv.Quote(t.AWSProfile), "use letters, digits, '.', '_' and '-'"))
	}
	return errs
}

// checkTokenKinds checks the keys that fetch a token for each run: a
// bearer_command that names a program, a google_credentials_file that
// holds a service account's key, and one source of the key at most.
func (c *Config) checkTokenKinds(t *Target, key func(string) string) []error {
	var errs []error
	if t.BearerCommand != nil && (len(t.BearerCommand) == 0 || t.BearerCommand[0] == "") {
		errs = append(errs, c.errAt(key("bearer_command"), "want the program and its arguments, e.g. [\"gcloud\", \"auth\", \"print-access-token\"]"))
	}
	if t.GoogleCredentialsFile != "" {
		if err := serviceAccountKey(t.GoogleCredentialsFile); err != nil {
			errs = append(errs, c.errAt(key("google_credentials_file"), "%v", err))
		}
	}
	set := []string{}
	for _, k := range []struct {
		name string
		on   bool
	}{{"bearer_env", t.BearerEnv != ""}, {"bearer_file", t.BearerFile != ""}, {"oauth2", t.OAuth2 != nil},
		{"bearer_command", t.BearerCommand != nil}, {"google_credentials_file", t.GoogleCredentialsFile != ""}} {
		if k.on {
			set = append(set, k.name)
		}
	}
	if len(set) > 1 && (t.BearerCommand != nil || t.GoogleCredentialsFile != "") {
		errs = append(errs, c.errAt(key(set[1]), "set one of bearer_env, bearer_file, bearer_command, google_credentials_file and oauth2, not %s and %s", set[0], set[1]))
	}
	return errs
}

// serviceAccountKey reports why the file at path is not a Google service
// account's JSON key; it never quotes the key.
func serviceAccountKey(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("cannot read %s", path)
	}
	var k struct {
		Type        string `json:"type"`
		ClientEmail string `json:"client_email"`
		PrivateKey  string `json:"private_key"`
	}
	switch {
	case json.Unmarshal(b, &k) != nil:
		return fmt.Errorf("%s is not JSON (want a service account's key, as the console or gcloud iam service-accounts keys create writes it)", path)
	case k.Type != "service_account":
		return fmt.Errorf("%s is not a service account key (type %q; want \"service_account\")", path, k.Type)
	case k.ClientEmail == "" || !strings.Contains(k.PrivateKey, "PRIVATE KEY"):
		return fmt.Errorf("%s has no client_email or no private_key", path)
	}
	return nil
}

// checkIdentity checks the target's name and where it is: a URL, or the
// built-in reference target.
func (c *Config) checkIdentity(t *Target, i int, key func(string) string) []error {
	var errs []error
	if c.fromFile() && t.Name == "" {
		errs = append(errs, c.errAt(fmt.Sprintf("target[%d]", i), "name is required"))
	}
	if c.fromFile() && !labelValue(t.Name) {
		errs = append(errs, c.errValue(key("name"), strconv.Quote(t.Name), "use letters, digits, '.', '_' and '-' (it becomes a label value)"))
	}
	switch {
	case t.Builtin && t.URL.URL != nil:
		errs = append(errs, c.errNamed(key("url"), "set %s or %s, not both", c.name(key("url")), c.setting(key("builtin"))))
	case !t.Builtin && t.URL.URL == nil:
		errs = append(errs, c.errNamed(fmt.Sprintf("target[%d]", i), "%s is required (or %s for the built-in reference target)", c.name(key("url")), c.setting(key("builtin"))))
	}
	return errs
}

// checkNames checks the dialect, sample and drill names against names.
func (c *Config) checkNames(t *Target, key func(string) string, names Names) []error {
	var errs []error
	if !slices.Contains(names.Dialects, t.Dialect) {
		errs = append(errs, c.errAt(key("dialect"), "unknown dialect %q (known: %s)", t.Dialect, strings.Join(names.Dialects, ", ")))
	}
	unknown := func(path, what, name string, known []string, prefix string) {
		if !slices.Contains(known, name) {
			errs = append(errs, c.errAt(path, "%sunknown %s %q (known: %s)", prefix, what, name, strings.Join(known, ", ")))
		}
	}
	for j, s := range t.Samples {
		unknown(key("samples"), "sample", s, names.Samples, c.elem(key("samples"), j))
	}
	if t.DrillSample != "" {
		unknown(key("drill_sample"), "sample", t.DrillSample, names.Samples, "")
	}
	for j, d := range t.Drills {
		unknown(key("drills"), "drill", d, names.Drills, c.elem(key("drills"), j))
	}
	if len(t.Drills) > 0 && slices.Contains(names.NoEventIDs, t.Dialect) {
		errs = append(errs, c.errAt(key("drills"), "the %s dialect's stream carries no event ids (it is not Server-Sent Events): no drill can run on it", t.Dialect))
	}
	if len(t.Samples)+len(t.Drills) == 0 {
		errs = append(errs, c.errAt(key("samples"), "no samples and no drills: nothing to run"))
	}
	return errs
}

// checkTiming checks the schedule, the timeouts and the drop time against
// each other.
func (c *Config) checkTiming(t *Target, key func(string) string) []error {
	var errs []error
	every := t.Every.Every
	if every > 0 && t.Timeout.Duration >= every && c.has(key("timeout")) {
		errs = append(errs, c.errNamed(key("timeout"), "%s (%s) must be shorter than %s (%s)", c.name(key("timeout")), t.Timeout.Duration, c.name(key("every")), every))
	}
	if t.Jitter.Duration > 0 && every > 0 && t.Jitter.Duration >= every {
		if c.has(key("jitter")) {
			errs = append(errs, c.errNamed(key("jitter"), "%s (%s) must be shorter than %s (%s)", c.name(key("jitter")), t.Jitter.Duration, c.name(key("every")), every))
		}
		t.Jitter.Duration = every / 2
	}
	maxStream := t.MaxStream.Duration
	switch {
	case maxStream <= 0:
		errs = append(errs, c.errValue(key("max_stream"), maxStream.String(), "want a positive duration"))
	case t.Timeout.Duration > maxStream:
		errs = append(errs, c.errNamed(key("timeout"), "%s (%s) must not be longer than %s (%s)", c.name(key("timeout")), t.Timeout.Duration, c.name(key("max_stream")), maxStream))
	}
	switch away := t.Away.Duration; {
	case away < 0:
		errs = append(errs, c.errValue(key("away"), away.String(), "want a positive duration"))
	case away > 0 && maxStream > 0 && away >= maxStream:
		errs = append(errs, c.errNamed(key("away"), "%s (%s) must be shorter than %s (%s)", c.name(key("away")), t.Away.Duration, c.name(key("max_stream")), maxStream))
	}
	switch dropAt := t.DropAt.Duration; {
	case dropAt < 0:
		errs = append(errs, c.errValue(key("drop_at"), dropAt.String(), "want a positive duration"))
	case dropAt > 0 && maxStream > 0 && dropAt >= maxStream:
		errs = append(errs, c.errNamed(key("drop_at"), "%s (%s) must be shorter than %s (%s)", c.name(key("drop_at")), t.DropAt.Duration, c.name(key("max_stream")), maxStream))
	}
	return errs
}

// checkLimits checks the integer settings written against intLimits, and
// the id kind.
func (c *Config) checkLimits(t *Target, key func(string) string) []error {
	var errs []error
	for _, l := range intLimits {
		v := l.value(t)
		if !c.has(key(l.key)) || v >= l.min && (l.max == 0 || v <= l.max) {
			continue
		}
		want := fmt.Sprintf("want %d or more", l.min)
		if l.max > 0 {
			want = fmt.Sprintf("want %d to %d%s", l.min, l.max, l.unit)
		}
		errs = append(errs, c.errValue(key(l.key), strconv.Itoa(v), "%s", want))
	}
	if t.IDs != IDsInt && t.IDs != IDsOpaque {
		errs = append(errs, c.errValue(key("ids"), strconv.Quote(t.IDs), "want int or opaque"))
	}
	return errs
}

// checkDrill checks what a drill sends and reads: the stale id and the
// stale-answer headers.
func (c *Config) checkDrill(t *Target, key func(string) string) []error {
	var errs []error
	for j, h := range t.StaleHeaders {
		if _, err := ParseHeaderMatch(h); err != nil {
			errs = append(errs, c.errAt(key("stale_headers"), "%s%v", c.elem(key("stale_headers"), j), err))
		}
	}
	if err := headerValue(t.StaleID); err != nil {
		errs = append(errs, c.errAt(key("stale_id"), "%q %v: it is sent as Last-Event-ID", t.StaleID, err))
	}
	return errs
}

// checkTools checks the mcp dialect's tool calls: only on an mcp target,
// by a known sample's name, with arguments that are a JSON object.
func (c *Config) checkTools(t *Target, key func(string) string, names Names) []error {
	var errs []error
	for _, s := range sortedKeys(t.Tool) {
		k := key("tool." + s)
		switch {
		case t.Dialect != "mcp":
			errs = append(errs, c.errAt(k, "tool calls are for the mcp dialect (this target's is %s)", t.Dialect))
		case !slices.Contains(names.Samples, s):
			errs = append(errs, c.errAt(k, "unknown sample %q (known: %s)", s, strings.Join(names.Samples, ", ")))
		}
		if err := ToolArgs(t.Tool[s].Args); err != nil {
			errs = append(errs, c.errAt(k+".args", "%v", err))
		}
	}
	switch v := t.MCPVersion; {
	case v == "":
	case t.Dialect != "mcp":
		errs = append(errs, c.errAt(key("mcp_version"), "mcp_version is for the mcp dialect (this target's is %s)", t.Dialect))
	case !slices.Contains(names.MCPVersions, v):
		errs = append(errs, c.errValue(key("mcp_version"), strconv.Quote(v), "want one of %s", strings.Join(names.MCPVersions, ", ")))
	}
	return errs
}

// checkLangGraph checks the langgraph dialect's keys: only on a langgraph
// target; the input a JSON object; known stream modes, one of them a
// message mode (the answer's text comes in message chunks).
func (c *Config) checkLangGraph(t *Target, key func(string) string, names Names) []error {
	var errs []error
	set := map[string]bool{"assistant_id": t.AssistantID != "", "input": t.Input != "", "stream_mode": t.StreamMode != nil, "stream_resumable": t.StreamResumable != nil}
	for _, k := range []string{"assistant_id", "input", "stream_mode", "stream_resumable"} {
		if set[k] && t.Dialect != "langgraph" {
			errs = append(errs, c.errAt(key(k), "%s is for the langgraph dialect (this target's is %s)", c.name(key(k)), t.Dialect))
		}
	}
	if t.AssistantID != "" && strings.ContainsAny(t.AssistantID, "\"\\\x00\n\r") {
		errs = append(errs, c.errValue(key("assistant_id"), strconv.Quote(t.AssistantID), "want an assistant id or a graph id"))
	}
	if err := JSONObject(t.Input, "the run's input"); err != nil {
		errs = append(errs, c.errAt(key("input"), "%v", err))
	}
	message := false
	for j, m := range t.StreamMode {
		if !slices.Contains(names.StreamModes, m) {
			errs = append(errs, c.errAt(key("stream_mode"), "%sunknown stream mode %q (known: %s)", c.elem(key("stream_mode"), j), m, strings.Join(names.StreamModes, ", ")))
		}
		message = message || m == "messages-tuple" || m == "messages"
	}
	if t.StreamMode != nil && !message {
		errs = append(errs, c.errAt(key("stream_mode"), "neither messages-tuple nor messages: the run's stream would carry no message chunk, so no text to measure"))
	}
	return errs
}

// checkResumable checks the keys of an AI SDK app that resumes: only on
// an ai-sdk-ui target; a resume URL only with resumable, naming the chat,
// and an http(s) URL once filled in.
func (c *Config) checkResumable(t *Target, key func(string) string) []error {
	var errs []error
	if t.Resumable && t.Dialect != "ai-sdk-ui" {
		errs = append(errs, c.errAt(key("resumable"), "%s is for the ai-sdk-ui dialect (this target's is %s)", c.name(key("resumable")), t.Dialect))
	}
	if t.ResumeURL == "" {
		return errs
	}
	switch {
	case t.Dialect != "ai-sdk-ui":
		errs = append(errs, c.errAt(key("resume_url"), "%s is for the ai-sdk-ui dialect (this target's is %s)", c.name(key("resume_url")), t.Dialect))
	case !t.Resumable:
		errs = append(errs, c.errNamed(key("resume_url"), "%s needs %s: the app resumes only when it says so", c.name(key("resume_url")), c.setting(key("resumable"))))
	case !strings.Contains(t.ResumeURL, "{chatId}"):
		errs = append(errs, c.errValue(key("resume_url"), strconv.Quote(t.ResumeURL), "want a URL that names the chat with {chatId} (the default: {api}/{chatId}/stream)"))
	default:
		u, err := url.Parse(strings.NewReplacer("{api}", "http://host/api/chat", "{chatId}", "chat").Replace(t.ResumeURL))
		if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
			errs = append(errs, c.errValue(key("resume_url"), strconv.Quote(t.ResumeURL), "want an http(s) URL, or one that starts with {api} (the chat route's URL)"))
		}
	}
	return errs
}

// JSONObject checks a setting that takes a JSON object (what names it):
// empty, or a JSON object.
func JSONObject(s, what string) error {
	if s == "" {
		return nil
	}
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	if _, ok := v.(map[string]any); !ok {
		return fmt.Errorf("want a JSON object ({\"name\": value, ...}), %s", what)
	}
	return nil
}

// ToolArgs checks a tool call's arguments: empty, or a JSON object.
func ToolArgs(args string) error {
	return JSONObject(args, "the tool's arguments") // a *json.SyntaxError's message has no "json: " prefix
}

// checkHeaders checks the headers and the secrets: none inline, each
// named one set (unless getenv is nil), every value one HTTP can carry.
func (c *Config) checkHeaders(t *Target, key func(string) string, getenv func(string) string) []error {
	var errs []error
	for _, h := range sortedKeys(t.Headers) {
		if isSecretHeader(h) {
			errs = append(errs, c.errAt(key("headers."+h), "secrets may not be %s: use %s", c.inline(), c.oneOf(key("bearer_env"), key("bearer_file"), key("header_env"))))
		}
	}
	if t.BearerEnv != "" && t.BearerFile != "" {
		errs = append(errs, c.errAt(key("bearer_file"), "set bearer_env or bearer_file, not both"))
	}
	errs = append(errs, c.checkSecret(key("bearer_env"), key("bearer_file"), t.BearerEnv, t.BearerFile, getenv)...)
	for _, h := range sortedKeys(t.HeaderEnv) {
		errs = append(errs, c.checkSecret(key("header_env."+h), "", t.HeaderEnv[h], "", getenv)...)
	}
	for _, h := range sortedKeys(t.Headers) {
		if err := headerValue(t.Headers[h]); err != nil {
			errs = append(errs, c.errAt(key("headers."+h), "the value %v", err))
		}
	}
	return errs
}
