package metricnames

// LastSuccess is 1 when a job's last run passed (it ended as its sample
// intends and, for a drill, with no failing verdict), 0 when it did not:
// blackbox_exporter's probe_success, per job; absent before its first run.
const LastSuccess = "streamprobe_last_success"

// Family is what the exposition on /metrics says of a metric family
// before its samples: its # TYPE and its # HELP.
type Family struct {
	Type string // counter, gauge or histogram
	Help string
}

// Families are the metric families the daemon writes, by name, each with
// its type and one line of help (docs/metrics-and-alerts.md says more).
var Families = map[string]Family{
	TFC:             {"histogram", "Time to first chunk of the runs that ended as their sample intends, in seconds (resumed=\"true\": after a resume)."},
	Headers:         {"histogram", "Time from the request to the response headers, in seconds."},
	FirstEvent:      {"histogram", "Time from the request to the first non-empty event, in seconds."},
	Gap:             {"histogram", "Every gap between two chunks of every run, in seconds."},
	Tail:            {"histogram", "Tail of a run (first chunk to the last), in seconds."},
	Close:           {"histogram", "Closing delay (the last chunk to the end marker), in seconds."},
	ResumeHandshake: {"histogram", "Drills: from the reconnect's start to the first new chunk, in seconds."},
	Reconnect:       {"histogram", "Drills: from the drop to the reconnect's response headers, in seconds."},

	Runs:             {"counter", "Runs made, by outcome."},
	RunsFailed:       {"counter", "Runs that did not end as their sample intends."},
	RunsSkipped:      {"counter", "Due runs not made, by reason (retry_after, overlap, no_slot)."},
	Stalls:           {"counter", "Gaps over 250 ms."},
	StalledRuns:      {"counter", "Unresumed runs that ended as intended with a gap over 250 ms."},
	ResumeDuplicates: {"counter", "Drills: events delivered again after a resume."},
	ResumeMissed:     {"counter", "Drills: events proven missing after a resume."},
	ResumeChecks:     {"counter", "Drills: resume verdicts, by verdict and whether it is a failure."},
	ResumeLastFailed: {"gauge", "Drills: 1 when the last run's verdict failed or it failed before it could judge, else 0."},
	OverBudget:       {"counter", "Runs (tfc, tail) or gaps (gap) over the class's p95 budget."},
	LastSuccess:      {"gauge", "1 when the job's last run passed (ended as its sample intends, no failing verdict), else 0."},
	LastRun:          {"gauge", "When the job's last run finished, in Unix seconds."},
	RunDeadline:      {"gauge", "When the job's next run must have happened, in Unix seconds."},
	Budget:           {"gauge", "The configured p95 budget of a sample's metric, in seconds."},
	SLOObjective:     {"gauge", "The objective of a sample's SLO, a ratio."},
	SLOFleetRegions:  {"gauge", "The regions that must burn an SLO fast for the fleet alert to fire."},

	PushErrors:            {"counter", "Failed pushes."},
	ResultsLogErrors:      {"counter", "Failed results log writes."},
	ResultsLogDropped:     {"counter", "Records not written to the results log: its queue was full."},
	CancelledByShutdown:   {"counter", "Runs cut by the shutdown."},
	RunsDue:               {"counter", "Runs that came due on the schedule, made or skipped."},
	RunsDelayed:           {"counter", "Runs that found every concurrency slot busy and waited for one."},
	ScheduleLag:           {"histogram", "From when a run came due to when it got its slot, in seconds."},
	ReloadSuccessful:      {"gauge", "1 when the last reload (or the start) applied its config, 0 when it was refused."},
	ReloadTimestamp:       {"gauge", "When a config was last applied, in Unix seconds."},
	BuildInfo:             {"gauge", "Always 1; the version and Go version as labels."},
	ConfigFetchSuccessful: {"gauge", "A config from a URL: 1 when the last fetch worked, else 0."},
	ConfigFetchTimestamp:  {"gauge", "A config from a URL: when a fetch last worked, in Unix seconds."},
	ConfigFetchErrors:     {"counter", "A config from a URL: fetches that failed."},
}
