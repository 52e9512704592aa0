package probe

import (
	"math"
	"time"

	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/resumeclient"
	"github.com/streamprobe/streamprobe/textgate"
)

// Outcome is the terminal state of one request. The states are mutually
// exclusive; a cancel or a disconnect is never a success.
type Outcome string

// The outcomes.
const (
	Success         Outcome = "success"
	ClientCancelled Outcome = "client_cancelled"
	UpstreamError   Outcome = "upstream_error"
	Timeout         Outcome = "timeout"
	ProtocolError   Outcome = "protocol_error"
	// Refused is a stream that ended normally with a refusal: the model
	// declined to answer (OpenAI's refusal, Anthropic's stop_reason
	// refusal) or the provider's filter stopped the prompt or the answer
	// (Gemini's SAFETY, finish_reason content_filter). The service
	// worked; the answer is not one.
	Refused Outcome = "refused"
)

// Outcomes are every outcome, in the order outputs list them (the
// metrics make a series of each, the scorecard counts them so).
var Outcomes = []Outcome{Success, ClientCancelled, UpstreamError, Timeout, ProtocolError, Refused}

// Gaps summarises the intervals between consecutive content chunks.
type Gaps struct {
	Count int       `json:"count"`
	P50Ms *float64  `json:"p50_ms,omitempty"`
	P95Ms *float64  `json:"p95_ms,omitempty"`
	MaxMs *float64  `json:"max_ms,omitempty"`
	Last5 []float64 `json:"last5_ms,omitempty"`
	// Values are the gaps in arrival order, the first MaxGapValues of
	// them: what a report over the results log pools across runs (a
	// percentile of per-run percentiles would not be the window's
	// percentile).
	Values []float64 `json:"values_ms,omitempty"`
	// All is every gap, in arrival order (Values is its start), for the
	// sinks of the process that measured the run: the daemon's gap
	// histogram counts every gap. It is not written: a record read back
	// has Values only.
	All []float64 `json:"-"`
}

// Every is every gap the record knows: All, or Values for a record read
// back from JSON.
func (g Gaps) Every() []float64 {
	if g.All != nil {
		return g.All
	}
	return g.Values
}

// Record is the result of one request. Its JSON field names are a public
// interface. Times are milliseconds from the client's request start, with
// microsecond precision; a milestone that did not happen is omitted, never
// zero. No prompt, response text or secret is ever part of it.
type Record struct {
	RequestID     string `json:"request_id"`
	Target        string `json:"target"`
	Sample        string `json:"sample"`
	SampleVersion string `json:"sample_version"`
	Dialect       string `json:"dialect"`
	// ProtocolVersion is the protocol version the run settled on with the
	// server, for a dialect that settles one (MCP).
	ProtocolVersion string   `json:"protocol_version,omitempty"`
	Drill           string   `json:"drill"`
	Outcome         Outcome  `json:"outcome"`
	Error           string   `json:"error,omitempty"`
	HTTPStatus      int      `json:"http_status,omitempty"`
	HTTPVersion     string   `json:"http_version,omitempty"`
	RetryAfterMs    *float64 `json:"retry_after_ms,omitempty"`
	DNSMs           *float64 `json:"dns_ms,omitempty"`
	ConnectMs       *float64 `json:"connect_ms,omitempty"`
	TLSMs           *float64 `json:"tls_ms,omitempty"`
	// RemoteAddr is the address the first connection was made to
	// ("ip:port", a proxy's through one), for a target that sets its
	// network path (ip_version, resolve, source_address, proxy).
	RemoteAddr       string          `json:"remote_addr,omitempty"`
	HeadersMs        *float64        `json:"headers_ms,omitempty"`
	FirstEventMs     *float64        `json:"first_event_ms,omitempty"`
	FirstEffectiveMs *float64        `json:"first_effective_ms,omitempty"`
	Reasoning        *Reasoning      `json:"reasoning,omitempty"`
	TFCMs            *float64        `json:"tfc_ms,omitempty"`
	EndMs            *float64        `json:"end_ms,omitempty"`
	Chunks           int             `json:"chunks"`
	Events           int             `json:"events"`
	Comments         int             `json:"comments"`
	Truncated        int             `json:"truncated"`
	Bytes            int64           `json:"bytes"`
	WireBytes        *int64          `json:"wire_bytes,omitempty"`
	Gaps             Gaps            `json:"gaps"`
	TailMs           *float64        `json:"tail_ms,omitempty"`
	CloseMs          *float64        `json:"close_ms,omitempty"`
	Stalls           int             `json:"stalls_over_250ms"`
	LastEventID      string          `json:"last_event_id,omitempty"`
	Tokens           *dialect.Tokens `json:"tokens,omitempty"`
	VisibleTPS       *float64        `json:"visible_output_tps,omitempty"`
	DurationMs       float64         `json:"duration_ms"`
	// Session dialects (mcp): the session setup before the stream, the
	// server's messages unrelated to the call, and what followed the
	// cancel sample's cancel message (see docs/mcp.md).
	SessionMs         *float64 `json:"session_ms,omitempty"`
	Unrelated         int      `json:"unrelated,omitempty"`
	CancelEndMs       *float64 `json:"cancel_end_ms,omitempty"`
	ResultAfterCancel bool     `json:"result_after_cancel,omitempty"`
	// FinishReason is why the answer stopped, as the provider said it,
	// in one vocabulary for every dialect (stop, length, tool_calls,
	// refusal, content_filter, error, other): absent when the stream did
	// not say. (Here rather than by the outcome: a byte in the padding
	// after the flag above keeps the run in its size class.)
	FinishReason dialect.Finish `json:"finish_reason,omitempty"`

	// Resume fields (see docs/record.md "Resume fields", docs/drills.md
	// and its "Drops by the server").
	Resumed             bool     `json:"resumed"`
	ServerDrops         int      `json:"server_drops"`
	LastEventIDSent     string   `json:"last_event_id_sent,omitempty"`
	Reconnects          int      `json:"reconnects"`
	ReconnectMs         *float64 `json:"reconnect_ms,omitempty"`
	ResumeHandshakeMs   *float64 `json:"resume_handshake_ms,omitempty"`
	ReplayMs            *float64 `json:"replay_ms,omitempty"`
	Replayed            int      `json:"replayed"`
	Duplicates          int      `json:"duplicates"`
	Missed              int      `json:"missed"`
	TailExclReconnectMs *float64 `json:"tail_excl_reconnect_ms,omitempty"`
	Verdict             Verdict  `json:"resume_verdict,omitempty"`
	StaleAnswer         string   `json:"stale_answer,omitempty"`
	ResumeDetail        string   `json:"resume_detail,omitempty"`
	// Task is what a call the server made a task did (MCP Tasks); absent
	// for a call answered as it ran.
	Task      *TaskRecord `json:"task,omitempty"`
	StartedAt string      `json:"started_at"`

	// Where the run was made (see Origin): set by the daemon and check
	// from the config, by once from the hostname and its flags, so
	// results logs of several hosts can be merged.
	Host   string            `json:"host,omitempty"`
	Region string            `json:"region,omitempty"`
	Labels map[string]string `json:"labels,omitempty"`
}

// Reasoning is what a record shows of the model's reasoning, apart from
// the answer (the chunks and TFC); absent when it sent none: its events
// (a thinking trace, its summary, the text of an inline <think> block),
// the first and the last in ms from the start. Reasoning is effective
// output (first_effective_ms counts it), never a chunk.
type Reasoning struct {
	Chunks  int      `json:"chunks"`
	FirstMs *float64 `json:"first_ms,omitempty"`
	LastMs  *float64 `json:"last_ms,omitempty"`
	// Inline is set when the reasoning came inside the visible text, as
	// a leading <think>...</think> block (see docs/dialects.md).
	Inline bool `json:"inline,omitempty"`
}

// Caps of a record's fields that may hold text from the network, in bytes:
// each passes textgate.Scrub (secrets redacted in every form, control
// characters made visible) and is cut to its cap. Gaps.Values holds at
// most MaxGapValues gaps. So a record's JSON line stays under MaxRecordLine
// whatever a server sends.
const (
	MaxRecordError  = resumeclient.MaxErrorText // error
	MaxRecordID     = 256                       // last_event_id, last_event_id_sent
	MaxRecordAnswer = 256                       // stale_answer
	MaxRecordDetail = 1024                      // resume_detail
	MaxRecordProto  = 16                        // http_version
	// MaxGapValues bounds gaps.values_ms: the first gaps of a run, for the
	// reports that pool them; gaps.count and the run's own p50, p95, max
	// and last 5 are over every gap.
	MaxGapValues = 10_000
	// MaxRecordLine bounds one record as a JSON line, labels excepted
	// (those come from the config).
	MaxRecordLine = 256 << 10
)

// gate passes every field of the record that may hold text from the
// network through textgate.Scrub, with secrets and the field's cap.
func (r *Record) gate(secrets []string) {
	for _, f := range []struct {
		p   *string
		cap int
	}{
		{&r.Error, MaxRecordError}, {&r.LastEventID, MaxRecordID}, {&r.LastEventIDSent, MaxRecordID},
		{&r.StaleAnswer, MaxRecordAnswer}, {&r.ResumeDetail, MaxRecordDetail}, {&r.HTTPVersion, MaxRecordProto}, {&r.ProtocolVersion, MaxRecordProto},
	} {
		if *f.p != "" {
			*f.p = textgate.Scrub(*f.p, secrets, f.cap)
		}
	}
}

// Origin is where runs are made: the host, its region and the config's
// extra labels, the same values that label the host's series.
type Origin struct {
	Host   string
	Region string
	Labels map[string]string
}

// Stamp sets the record's host, region and labels from o. The labels map
// is shared, never written.
func (r *Record) Stamp(o Origin) {
	r.Host, r.Region = o.Host, o.Region
	if len(o.Labels) > 0 {
		r.Labels = o.Labels
	}
}

// ms converts a duration to milliseconds rounded to the microsecond.
func ms(d time.Duration) float64 {
	return math.Round(float64(d)/1e3) / 1e3
}

// since returns t - start in ms, or nil when t is zero (absent).
func since(start, t time.Time) *float64 {
	if t.IsZero() {
		return nil
	}
	return ptr(ms(t.Sub(start)))
}

// round3 rounds a millisecond value to the microsecond, so derived values
// (gaps, tail) carry no float noise.
func round3(p *float64) *float64 {
	if p == nil {
		return nil
	}
	return ptr(roundMs(*p))
}

// roundMs is round3 of a value.
func roundMs(v float64) float64 { return math.Round(v*1e3) / 1e3 }

// Intended reports whether the run ended as its sample intends: the
// client's cancel after at least one content chunk for a sample that
// cancels (cancel; a success there means the cancel was never exercised),
// a success for every other sample. It judges the outcome only: a resume
// verdict is judged apart by Verdict.Failed, so a drill that found a bug
// still measured a whole stream. Timings of a run enter the metrics and
// the scorecard's cells only when it is Intended.
func (r Record) Intended() bool {
	if dialect.Samples[r.Sample].Cancel {
		// A task is cancelled at its handle (MCP Tasks): no chunk before.
		return r.Outcome == ClientCancelled && (r.Chunks > 0 || r.Task != nil)
	}
	return r.Outcome == Success
}

// Passed reports whether the run found nothing wrong: it is Intended and
// carries no resume verdict that names a bug. The daemon's log level,
// check's failures and once's exit code all decide with it.
func (r Record) Passed() bool {
	return r.Intended() && !r.Verdict.Failed()
}

// Failed is the result of a run that could not start its request (its
// credentials could not be had): outcome o and the error msg, which is
// scrubbed of the target's secrets and cut as a record's error is.
func Failed(t dialect.Target, s dialect.Sample, d Drill, o Outcome, msg string) Result {
	r := Record{RequestID: NewRequestID(), Target: t.Name, Sample: s.Name, SampleVersion: s.Version, Dialect: t.Dialect,
		Drill: d.name(), Outcome: o, Error: msg, StartedAt: time.Now().UTC().Format(time.RFC3339Nano)}
	r.gate(textgate.Secrets(t.Header, textgate.URLSecrets(t.URL)...))
	return Result{Record: r}
}
