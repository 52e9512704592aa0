// Package metricnames names streamprobe's metrics: the daemon writes them
// (pushed and on /metrics), report reads them back from VictoriaMetrics,
// and the alert rules and dashboards in deploy/ query them. A name is
// written here once; deploy's tests check the rules and dashboards against
// these names.
package metricnames

// The histograms of one job's runs (labels target, sample, dialect,
// drill; tfc also resumed), in seconds.
const (
	TFC             = "streamprobe_tfc_seconds"
	Headers         = "streamprobe_headers_seconds"
	FirstEvent      = "streamprobe_first_event_seconds"
	Gap             = "streamprobe_gap_seconds"
	Tail            = "streamprobe_tail_seconds"
	Close           = "streamprobe_close_seconds"
	ResumeHandshake = "streamprobe_resume_handshake_seconds"
	Reconnect       = "streamprobe_reconnect_seconds"
)

// The counters and gauges of one job.
const (
	Runs             = "streamprobe_runs_total"
	RunsFailed       = "streamprobe_runs_failed_total"
	RunsSkipped      = "streamprobe_runs_skipped_total"
	Stalls           = "streamprobe_stalls_total"
	StalledRuns      = "streamprobe_stalled_runs_total"
	ResumeDuplicates = "streamprobe_resume_duplicates_total"
	ResumeMissed     = "streamprobe_resume_missed_total"
	ResumeChecks     = "streamprobe_resume_checks_total"
	ResumeLastFailed = "streamprobe_resume_last_verdict_failed"
	OverBudget       = "streamprobe_over_budget_total"
	LastRun          = "streamprobe_last_run_timestamp_seconds"
	RunDeadline      = "streamprobe_run_deadline_timestamp_seconds"
	Budget           = "streamprobe_budget_seconds"
	// The SLO objectives by sample and slo (tfc_within, no_stall,
	// drills_pass), and the regions the fleet alert needs (base labels).
	SLOObjective    = "streamprobe_slo_objective"
	SLOFleetRegions = "streamprobe_slo_fleet_regions"
)

// The SLO recording rules of deploy/slo.yml: the error ratio of each SLI
// over a window (labels target, sample, region, slo), the objective by
// region, sample and slo, and whether a class burns its budget fast in a
// region (the fleet alert counts the regions).
const (
	SLOErrorRatio5m  = "streamprobe:slo_error_ratio:rate5m"
	SLOErrorRatio30m = "streamprobe:slo_error_ratio:rate30m"
	SLOErrorRatio1h  = "streamprobe:slo_error_ratio:rate1h"
	SLOErrorRatio6h  = "streamprobe:slo_error_ratio:rate6h"
	SLOObjectiveRule = "streamprobe:slo_objective"
	SLOBurningFast   = "streamprobe:slo_burning:fast"
)

// The daemon's own series.
const (
	PushErrors          = "streamprobe_push_errors_total"
	ResultsLogErrors    = "streamprobe_results_log_errors_total"
	ResultsLogDropped   = "streamprobe_results_log_dropped_total"
	CancelledByShutdown = "streamprobe_runs_cancelled_by_shutdown_total"
	RunsDue             = "streamprobe_runs_due_total"
	RunsDelayed         = "streamprobe_runs_delayed_total"
	ScheduleLag         = "streamprobe_schedule_lag_seconds"
	ReloadSuccessful    = "streamprobe_config_last_reload_successful"
	ReloadTimestamp     = "streamprobe_config_last_reload_success_timestamp_seconds"
	BuildInfo           = "streamprobe_build_info"
	// A config from a URL only: its fetches.
	ConfigFetchSuccessful = "streamprobe_config_last_fetch_successful"
	ConfigFetchTimestamp  = "streamprobe_config_last_fetch_success_timestamp_seconds"
	ConfigFetchErrors     = "streamprobe_config_fetch_errors_total"
)

// Timing names the histogram of a card's timing row (tfc, gap, tail,
// close: streamprobe_<row>_seconds).
func Timing(row string) string { return "streamprobe_" + row + "_seconds" }

// The OTLP export's names (daemon/otlp.go). Where the OpenTelemetry
// semantic conventions name a measurement, their name: the GenAI client
// metrics for the API dialects' streams (time to first chunk, time per
// output chunk: in development in the conventions, absent from the Go
// semconv package of this SDK), the operation duration and token usage,
// and MCP's client operation duration for the mcp dialect. The rest are
// streamprobe's own, dotted as OpenTelemetry names are.
const (
	OTelTimeToFirstChunk  = "gen_ai.client.operation.time_to_first_chunk"
	OTelTimePerChunk      = "gen_ai.client.operation.time_per_output_chunk"
	OTelOperationDuration = "gen_ai.client.operation.duration"
	OTelTokenUsage        = "gen_ai.client.token.usage"
	OTelMCPDuration       = "mcp.client.operation.duration"
	OTelTFC               = "streamprobe.tfc"
	OTelGap               = "streamprobe.gap"
	OTelTail              = "streamprobe.tail"
	OTelClose             = "streamprobe.close"
	OTelRuns              = "streamprobe.runs"
	OTelRunsFailed        = "streamprobe.runs.failed"
	OTelStalls            = "streamprobe.stalls"
	OTelStalledRuns       = "streamprobe.stalled_runs"
	OTelResumeChecks      = "streamprobe.resume.checks"
	OTelResumeHandshake   = "streamprobe.resume.handshake"
	OTelReconnect         = "streamprobe.reconnect"
)
