package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/probe"
	"github.com/streamprobe/streamprobe/textgate"
)

// printRecord writes r as one JSON line, or as a summary for people. In the
// summary every text, much of which the server sent (ids, errors, details),
// has its control characters escaped: a server cannot drive the terminal.
func printRecord(w io.Writer, r probe.Record, asJSON bool) error {
	if asJSON {
		return json.NewEncoder(w).Encode(r)
	}
	r = shownRecord(r)
	var b strings.Builder
	fmt.Fprintf(&b, "%s  sample=%s (%s)  dialect=%s  drill=%s\n", r.Target, r.Sample, r.SampleVersion, r.Dialect, r.Drill)
	status := ""
	if r.HTTPStatus != 0 {
		status = fmt.Sprintf("  HTTP %d", r.HTTPStatus)
	}
	fmt.Fprintf(&b, "  outcome          %s%s\n", r.Outcome, status)
	if r.Error != "" {
		fmt.Fprintf(&b, "  error            %s\n", r.Error)
	}
	if f := r.FinishReason; f != dialect.FinishNone && f != dialect.FinishStop {
		fmt.Fprintf(&b, "  finish           %s\n", f) // a stop is every answer's: said only in the JSON
	}
	fmt.Fprintf(&b, "  request_id       %s\n", r.RequestID)
	row := func(name string, v *float64) { fmt.Fprintf(&b, "  %-16s %s\n", name, msText(v)) }
	row("headers", r.HeadersMs)
	row("first event", r.FirstEventMs)
	row("first effective", r.FirstEffectiveMs)
	if rs := r.Reasoning; rs != nil {
		inline := ""
		if rs.Inline {
			inline = " (an inline <think> block)"
		}
		fmt.Fprintf(&b, "  %-16s %d event(s), %s to %s%s\n", "reasoning", rs.Chunks, msText(rs.FirstMs), msText(rs.LastMs), inline)
	}
	row("TFC", r.TFCMs)
	fmt.Fprintf(&b, "  %-16s %d (events %d, comments %d, truncated %d, %d bytes)\n", "chunks", r.Chunks, r.Events, r.Comments, r.Truncated, r.Bytes)
	if r.Gaps.Count > 0 {
		last := make([]string, len(r.Gaps.Last5))
		for i, g := range r.Gaps.Last5 {
			last[i] = fmt.Sprintf("%.1f", g)
		}
		fmt.Fprintf(&b, "  %-16s %d: p50 %s, p95 %s, max %s; last 5: %s ms\n", "gaps", r.Gaps.Count,
			msText(r.Gaps.P50Ms), msText(r.Gaps.P95Ms), msText(r.Gaps.MaxMs), strings.Join(last, " "))
	} else {
		fmt.Fprintf(&b, "  %-16s none\n", "gaps")
	}
	row("tail", r.TailMs)
	row("close", r.CloseMs)
	fmt.Fprintf(&b, "  %-16s %d\n", "stalls > 250 ms", r.Stalls)
	sessionLines(&b, r)
	if bf, ok := r.Buffering(); ok {
		fmt.Fprintf(&b, "  %-16s suspected proxy buffering: %s (check proxy_buffering / X-Accel-Buffering)\n", "buffering", bf)
	}
	if r.Tokens != nil {
		tps := ""
		if r.VisibleTPS != nil {
			tps = fmt.Sprintf("; visible %.1f tokens/s", *r.VisibleTPS)
		}
		fmt.Fprintf(&b, "  %-16s prompt %d, completion %d%s\n", "tokens", r.Tokens.Prompt, r.Tokens.Completion, tps)
	}
	if r.Drill != probe.DrillNone || r.Verdict != "" {
		fmt.Fprintf(&b, "  %-16s %s\n", "resume verdict", strings.ToUpper(string(r.Verdict)))
		if r.ResumeDetail != "" {
			fmt.Fprintf(&b, "  %-16s %s\n", "", r.ResumeDetail)
		}
		if r.Resumed && r.Task != nil {
			taskResume(&b, r)
		} else if r.Resumed {
			sent := sentText(r)
			fmt.Fprintf(&b, "  %-16s %s, %d reconnect(s), %d drop(s) by the server\n", "sent", sent, r.Reconnects, r.ServerDrops)
			fmt.Fprintf(&b, "  %-16s replayed %d, duplicates %d (removed), missed %d", "came back", r.Replayed, r.Duplicates, r.Missed)
			if r.StaleAnswer != "" {
				fmt.Fprintf(&b, ", answer %s", r.StaleAnswer)
			}
			b.WriteString("\n")
			row("reconnect", r.ReconnectMs)
			row("resume handshake", r.ResumeHandshakeMs)
			if r.ReplayMs != nil {
				row("replay", r.ReplayMs)
			}
			row("tail w/o reconn.", r.TailExclReconnectMs)
		}
	}
	if r.LastEventID != "" {
		fmt.Fprintf(&b, "  %-16s %s\n", "last event id", r.LastEventID)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// taskResume writes how a drill came back to a task: by its id, polled,
// never a stream resumed (so no replay counts).
func taskResume(b *strings.Builder, r probe.Record) {
	fmt.Fprintf(b, "  %-16s by the task's id (tasks/get), %d time(s)", "came back", r.Reconnects)
	if r.StaleAnswer != "" {
		fmt.Fprintf(b, ", answer %s", r.StaleAnswer)
	}
	b.WriteString("\n")
	row := func(name string, v *float64) { fmt.Fprintf(b, "  %-16s %s\n", name, msText(v)) }
	row("reconnect", r.ReconnectMs)
}

// sessionLines writes what a session dialect (mcp) adds: the session
// setup, the server's unrelated messages, how a cancelled call ended.
func sessionLines(b *strings.Builder, r probe.Record) {
	if r.SessionMs != nil {
		how := dialect.SetupName(r.Dialect)
		if r.ProtocolVersion == dialect.MCPModernVersion {
			how = "server/discover"
		}
		if r.ProtocolVersion != "" {
			how += ": MCP " + r.ProtocolVersion
		}
		fmt.Fprintf(b, "  %-16s %s before the request (%s)\n", "session setup", msText(r.SessionMs), how)
	}
	if t := r.Task; t != nil {
		every := "no poll interval asked"
		if t.PollIntervalMs != nil {
			every = "every " + msText(t.PollIntervalMs) + " as asked"
		}
		fmt.Fprintf(b, "  %-16s handle %s, %d poll(s) (%s), status %s\n", "task", msText(t.HandleMs), t.Polls, every, t.Status)
		if len(t.Statuses) > 0 {
			seen := make([]string, len(t.Statuses))
			for i, s := range t.Statuses {
				seen[i] = fmt.Sprintf("%s %.1f ms", s.Status, s.Ms)
			}
			fmt.Fprintf(b, "  %-16s %s\n", "task statuses", strings.Join(seen, ", "))
		}
	}
	if r.Unrelated > 0 {
		fmt.Fprintf(b, "  %-16s %d server message(s) unrelated to the call (not chunks)\n", "unrelated", r.Unrelated)
	}
	if r.CancelEndMs != nil {
		what := "the stream ended"
		if r.ResultAfterCancel {
			what = "the result still came"
		}
		fmt.Fprintf(b, "  %-16s %s %s after the cancel message\n", "after cancel", what, msText(r.CancelEndMs))
	}
}

// shownRecord returns r with every free text made safe for a terminal.
func shownRecord(r probe.Record) probe.Record {
	for _, p := range []*string{&r.Target, &r.Sample, &r.SampleVersion, &r.Dialect, &r.Drill, &r.Error, &r.RequestID,
		&r.LastEventID, &r.LastEventIDSent, &r.StaleAnswer, &r.ResumeDetail} {
		*p = shown(*p)
	}
	return r
}

// shown is a text of the record as a terminal may print it: the record's
// texts from the network already passed textgate.Scrub, the one gate;
// this pass keeps the rule for every field printed.
func shown(s string) string { return textgate.Scrub(s, nil, 0) }

func msText(v *float64) string {
	if v == nil {
		return "absent"
	}
	return fmt.Sprintf("%.1f ms", *v)
}

// sentText says what the last resume sent: Last-Event-ID and its id, or
// for a dialect whose resume replays the answer from its start, no
// cursor (or the stale drill's chat id).
func sentText(r probe.Record) string {
	d, err := dialect.Lookup(r.Dialect)
	if err == nil {
		if rs := dialect.ResumerOf(d, dialect.Target{App: &dialect.App{Resumable: true}}); rs != nil && dialect.ModeOf(rs) == dialect.Replay {
			if r.LastEventIDSent == "" {
				return "no cursor (the answer is replayed from its start)"
			}
			return rs.Label(r.LastEventIDSent)
		}
	}
	return "Last-Event-ID: " + r.LastEventIDSent
}
