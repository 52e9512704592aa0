package daemon

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/streamprobe/streamprobe/config"
	"github.com/streamprobe/streamprobe/internal/jobs"
	"github.com/streamprobe/streamprobe/internal/metricnames"
	"github.com/streamprobe/streamprobe/probe"
	"github.com/streamprobe/streamprobe/textgate"
)

// The OTLP export sends the measurements of every run as OpenTelemetry
// metrics, over OTLP/HTTP (protobuf), with the official SDK: its meter
// provider aggregates (cumulative temporality), its periodic reader
// exports every otlp.interval, and its exporter retries and times out.
// Names follow the OpenTelemetry semantic conventions where they name the
// measurement (metricnames.OTel*): the GenAI client metrics for the API
// dialects, MCP's client operation duration for the mcp dialect; the rest
// are streamprobe's own. The host's own series (pushes, reloads, the
// schedule) stay in the Prometheus set.

// Bucket boundaries, in seconds, as the conventions advise them: the
// GenAI client operation duration's (also for time to first chunk), and
// time per output token's (for time per output chunk).
var (
	genAIDurationBuckets = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}
	genAIChunkBuckets    = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5}
	genAITokenBuckets    = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}
)

// providers are the gen_ai.provider.name of the dialects that speak a
// provider's API.
var providers = map[string]string{"openai-chat": "openai", "openai-responses": "openai", "anthropic-messages": "anthropic", "gemini": "gcp.gemini"}

// otlpSink is the export of the config in force: nil provider when
// [otlp] has no url.
type otlpSink struct {
	mu    sync.Mutex // guards every field
	key   string     // the settings and resource the provider was made with
	mp    *sdkmetric.MeterProvider
	inst  *otlpInstruments
	attrs map[string]jobAttrs // by seriesKey: the job's attributes
}

// jobAttrs are a job's attributes and whether it is an MCP one.
type jobAttrs struct {
	set attribute.Set
	mcp bool
}

type otlpInstruments struct {
	tfc, chunk, duration, tokens, mcpDuration       metric.Float64Histogram
	ownTFC, ownGap, tail, close, handshake, reconn  metric.Float64Histogram
	runs, failed, stalls, stalledRuns, resumeChecks metric.Int64Counter
}

// otlpKey is what, changed, makes the provider anew: the export settings
// and the resource (host, region, labels).
func otlpKey(cfg *config.Config, auth string) string {
	o := cfg.OTLP
	return fmt.Sprintf("%s|%s|%s|%s|%v|%s|%s|%s", o.URL, o.Interval.Duration, o.Timeout.Duration, o.Histograms, o.Headers, auth, baseLabels(cfg), Version())
}

// otlpAuth is cfg's export authorization, read when a config is staged.
func (d *Daemon) otlpAuth(cfg *config.Config) (string, error) {
	auth, err := config.Secret(cfg.OTLP.AuthorizationEnv, cfg.OTLP.AuthorizationFile, d.getenv)
	if err != nil {
		return "", fmt.Errorf("otlp: %w", err)
	}
	return auth, nil
}

// otlpReconfigure takes cfg's export settings (auth: its authorization)
// and jobs as a config is committed: a new provider when the settings or
// the resource changed (the old one exports once more and stops, waited
// for by the retired group), the jobs' attributes always.
func (d *Daemon) otlpReconfigure(cfg *config.Config, js []jobs.Job, auth string) error {
	var err error
	attrs := map[string]jobAttrs{}
	for _, j := range js {
		attrs[seriesKey(j.Target.Name, j.Sample.Name, jobDrill(j))] = otlpJobAttrs(j)
	}
	s := &d.otlp
	s.mu.Lock()
	defer s.mu.Unlock()
	s.attrs = attrs
	key := otlpKey(cfg, auth)
	if key == s.key {
		return nil
	}
	var mp *sdkmetric.MeterProvider
	var inst *otlpInstruments
	if cfg.OTLP.URL.URL != nil {
		if mp, inst, err = newOTLPProvider(cfg, auth); err != nil {
			return err
		}
	}
	old := s.mp
	s.key, s.mp, s.inst = key, mp, inst
	if old != nil {
		d.life.retired.Add(1)
		go func() {
			defer d.life.retired.Done()
			shutdownProvider(old, cfg.OTLP.Timeout.Duration)
		}()
	}
	return nil
}

func shutdownProvider(mp *sdkmetric.MeterProvider, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return mp.Shutdown(ctx)
}

// otlpClose exports once more and stops the export (Run's end).
func (d *Daemon) otlpClose(timeout time.Duration) {
	d.otlp.mu.Lock()
	mp := d.otlp.mp
	d.otlp.mp, d.otlp.inst, d.otlp.key = nil, nil, ""
	d.otlp.mu.Unlock()
	if mp != nil {
		if err := shutdownProvider(mp, timeout); err != nil {
			d.Log.Warn("otlp: the last export failed", "err", otlpError(err))
		}
	}
}

// otlpError is an export error as the log shows it: the SDK's text names
// the endpoint and the status, never a header.
func otlpError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return textgate.RedactURL(ue.URL) + ": " + ue.Err.Error()
	}
	return err.Error()
}

// newOTLPProvider makes the meter provider of cfg's export: its resource
// (service, host, region, labels), its periodic reader and exporter, and
// the instruments.
func newOTLPProvider(cfg *config.Config, auth string) (*sdkmetric.MeterProvider, *otlpInstruments, error) {
	o := cfg.OTLP
	headers := map[string]string{}
	for k, v := range o.Headers {
		headers[k] = v
	}
	if auth != "" {
		headers["Authorization"] = auth
	}
	exp, err := otlpmetrichttp.New(context.Background(), otlpmetrichttp.WithEndpointURL(o.URL.String()),
		otlpmetrichttp.WithHeaders(headers), otlpmetrichttp.WithTimeout(o.Timeout.Duration))
	if err != nil {
		return nil, nil, fmt.Errorf("otlp: %w", err)
	}
	kv := []attribute.KeyValue{
		attribute.String("service.name", "streamprobe"), attribute.String("service.version", Version()),
		attribute.String("host.name", cfg.Host), attribute.String("cloud.region", cfg.Region),
	}
	for _, k := range slices.Sorted(maps.Keys(cfg.Labels)) {
		kv = append(kv, attribute.String(k, cfg.Labels[k]))
	}
	opts := []sdkmetric.Option{
		sdkmetric.WithResource(resource.NewSchemaless(kv...)),
		sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp, sdkmetric.WithInterval(o.Interval.Duration), sdkmetric.WithTimeout(o.Timeout.Duration))),
	}
	if o.Histograms == "exponential" {
		opts = append(opts, sdkmetric.WithView(sdkmetric.NewView(sdkmetric.Instrument{Kind: sdkmetric.InstrumentKindHistogram},
			sdkmetric.Stream{Aggregation: sdkmetric.AggregationBase2ExponentialHistogram{MaxSize: 160, MaxScale: 20}})))
	}
	mp := sdkmetric.NewMeterProvider(opts...)
	inst, err := newInstruments(mp.Meter("github.com/streamprobe/streamprobe", metric.WithInstrumentationVersion(Version())))
	if err != nil {
		mp.Shutdown(context.Background())
		return nil, nil, fmt.Errorf("otlp: %w", err)
	}
	return mp, inst, nil
}

func newInstruments(m metric.Meter) (*otlpInstruments, error) {
	var errs []error
	hist := func(name, unit, desc string, bounds []float64) metric.Float64Histogram {
		h, err := m.Float64Histogram(name, metric.WithUnit(unit), metric.WithDescription(desc), metric.WithExplicitBucketBoundaries(bounds...))
		errs = append(errs, err)
		return h
	}
	count := func(name, unit, desc string) metric.Int64Counter {
		c, err := m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return c
	}
	i := &otlpInstruments{
		tfc:          hist(metricnames.OTelTimeToFirstChunk, "s", "Time to receive the first chunk, from when the client issues the request to when the first chunk is received in the response stream.", genAIDurationBuckets),
		chunk:        hist(metricnames.OTelTimePerChunk, "s", "Time per output chunk: the time between two chunks of the stream, for every chunk after the first.", genAIChunkBuckets),
		duration:     hist(metricnames.OTelOperationDuration, "s", "GenAI operation duration, the whole streamed request.", genAIDurationBuckets),
		tokens:       hist(metricnames.OTelTokenUsage, "{token}", "Number of input and output tokens used, as the API reported them.", genAITokenBuckets),
		mcpDuration:  hist(metricnames.OTelMCPDuration, "s", "The duration of the MCP request or notification as observed on the sender from the time it was sent until the response or ack is received.", genAIDurationBuckets),
		ownTFC:       hist(metricnames.OTelTFC, "s", "streamprobe's time to first chunk of a stream that is no GenAI operation (an MCP tool call's first progress message).", genAIDurationBuckets),
		ownGap:       hist(metricnames.OTelGap, "s", "The gaps between the chunks of a stream that is no GenAI operation.", genAIChunkBuckets),
		tail:         hist(metricnames.OTelTail, "s", "First chunk to last chunk.", genAIDurationBuckets),
		close:        hist(metricnames.OTelClose, "s", "Last chunk to the end of the stream.", genAIChunkBuckets),
		handshake:    hist(metricnames.OTelResumeHandshake, "s", "Resume drills: reconnect start to the first new chunk.", genAIChunkBuckets),
		reconn:       hist(metricnames.OTelReconnect, "s", "Resume drills: drop to the reconnect's response headers.", genAIChunkBuckets),
		runs:         count(metricnames.OTelRuns, "{run}", "Runs by outcome."),
		failed:       count(metricnames.OTelRunsFailed, "{run}", "Runs that did not end as their sample intends."),
		stalls:       count(metricnames.OTelStalls, "{gap}", "Gaps over 250 ms."),
		stalledRuns:  count(metricnames.OTelStalledRuns, "{run}", "Runs that ended as intended, not resumed, with a gap over 250 ms."),
		resumeChecks: count(metricnames.OTelResumeChecks, "{check}", "Resume verdicts."),
	}
	return i, errors.Join(errs...)
}

// otlpJobAttrs are a job's attributes: streamprobe's target, sample,
// drill and dialect; the GenAI operation, provider and model for an API
// dialect; the server's address.
func otlpJobAttrs(j jobs.Job) jobAttrs {
	kv := []attribute.KeyValue{
		attribute.String("streamprobe.target", j.Target.Name), attribute.String("streamprobe.sample", j.Sample.Name),
		attribute.String("streamprobe.drill", jobDrill(j)), attribute.String("streamprobe.dialect", j.Target.Dialect),
	}
	mcp := j.Target.Dialect == "mcp"
	if mcp {
		kv = append(kv, attribute.String("mcp.method.name", "tools/call"))
	} else if p, ok := providers[j.Target.Dialect]; ok {
		kv = append(kv, attribute.String("gen_ai.operation.name", "chat"), attribute.String("gen_ai.provider.name", p))
		if j.Target.Model != "" {
			kv = append(kv, attribute.String("gen_ai.request.model", j.Target.Model))
		}
	}
	if u, err := url.Parse(j.Target.URL); err == nil && u.Hostname() != "" {
		kv = append(kv, attribute.String("server.address", u.Hostname()))
		if p, err := strconv.Atoi(u.Port()); err == nil {
			kv = append(kv, attribute.Int("server.port", p))
		}
	}
	return jobAttrs{set: attribute.NewSet(kv...), mcp: mcp}
}

// otlpObserve adds one record to the export, as Metrics.Observe adds it
// to the Prometheus set: timings of runs that ended as intended, every
// run counted by outcome, every verdict counted.
func (d *Daemon) otlpObserve(r probe.Record) {
	s := &d.otlp
	s.mu.Lock()
	inst, ja, ok := s.inst, s.attrs[seriesKey(r.Target, r.Sample, r.Drill)], s.attrs != nil
	s.mu.Unlock()
	if inst == nil || !ok || ja.set.Len() == 0 {
		return
	}
	ctx := context.Background()
	base := metric.WithAttributeSet(ja.set)
	inst.runs.Add(ctx, 1, base, metric.WithAttributes(attribute.String("streamprobe.outcome", string(r.Outcome))))
	if r.Verdict != "" {
		inst.resumeChecks.Add(ctx, 1, base, metric.WithAttributes(attribute.String("streamprobe.resume.verdict", string(r.Verdict)),
			attribute.Bool("streamprobe.resume.failed", r.Verdict.Failed())))
	}
	dur := inst.duration
	if ja.mcp {
		dur = inst.mcpDuration
	}
	if !r.Intended() {
		inst.failed.Add(ctx, 1, base)
		dur.Record(ctx, r.DurationMs/1000, base, metric.WithAttributes(attribute.String("error.type", string(r.Outcome))))
		return
	}
	dur.Record(ctx, r.DurationMs/1000, base)
	d.otlpTimings(ctx, inst, ja, r)
}

// otlpTimings records the timings of a run that ended as intended.
func (d *Daemon) otlpTimings(ctx context.Context, inst *otlpInstruments, ja jobAttrs, r probe.Record) {
	base := metric.WithAttributeSet(ja.set)
	tfc, gap := inst.tfc, inst.chunk
	if ja.mcp {
		tfc, gap = inst.ownTFC, inst.ownGap
	}
	if v, ok := sec(r.TFCMs); ok && !r.Resumed {
		tfc.Record(ctx, v, base)
	}
	for _, g := range r.Gaps.Every() {
		gap.Record(ctx, g/1000, base)
	}
	for _, h := range []struct {
		in metric.Float64Histogram
		ms *float64
	}{{inst.tail, r.TailMs}, {inst.close, r.CloseMs}, {inst.handshake, r.ResumeHandshakeMs}, {inst.reconn, r.ReconnectMs}} {
		if v, ok := sec(h.ms); ok {
			h.in.Record(ctx, v, base)
		}
	}
	if r.Stalls > 0 {
		inst.stalls.Add(ctx, int64(r.Stalls), base)
		if !r.Resumed {
			inst.stalledRuns.Add(ctx, 1, base)
		}
	}
	if t := r.Tokens; t != nil && !ja.mcp {
		inst.tokens.Record(ctx, float64(t.Prompt), base, metric.WithAttributes(attribute.String("gen_ai.token.type", "input")))
		inst.tokens.Record(ctx, float64(t.Completion), base, metric.WithAttributes(attribute.String("gen_ai.token.type", "output")))
	}
}
