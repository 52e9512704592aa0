package scorecard

import (
	"fmt"
	"strings"
)

// About is what a page of cards (check's or report's, in every output)
// says about itself: its verdict and what it covers. Check fills Host and
// Config; a report fills the window, Sources, Hosts and Regions.
type About struct {
	// Command is "check" or "report".
	Command string `json:"-"`
	Version string `json:"version"`
	// Host is the host check ran on; Config the config file it read;
	// Plan the runs it planned and made (one look, or the looks of -runs
	// auto).
	Host   string `json:"host,omitempty"`
	Config string `json:"config,omitempty"`
	Plan   string `json:"plan,omitempty"`
	// FirstRun and LastRun are the start times (RFC 3339) of the first
	// and the last run a report holds; Window is the window asked for
	// (or queried, from VictoriaMetrics).
	FirstRun string `json:"first_run,omitempty"`
	LastRun  string `json:"last_run,omitempty"`
	Window   string `json:"window,omitempty"`
	// Sources are the files read, or the VictoriaMetrics URL without
	// credentials; Hosts and Regions those seen in the data.
	Sources []string `json:"sources,omitempty"`
	Hosts   []string `json:"hosts,omitempty"`
	Regions []string `json:"regions,omitempty"`
}

// Interruption is how far an interrupted check got: the runs that
// finished (drills included) of those it planned.
type Interruption struct {
	Done    int `json:"runs_done"`
	Planned int `json:"runs_planned"`
}

// Verdict is the page's verdict line: "PASS (2 of 2 target(s) pass)",
// "FAIL (1 of 2 target(s) failed)" or "INCONCLUSIVE (1 of 2 target(s)
// inconclusive, none failed)"; an interrupted page (stop not nil) says
// "INTERRUPTED after 3 of 40 runs (...)" whatever its cards say, with
// how many failed, are inconclusive and pass on the runs that finished.
func Verdict(cards []*Card, stop *Interruption, unit string) string {
	failed, undecided := 0, 0
	for _, c := range cards {
		switch c.Verdict {
		case Fail:
			failed++
		case Inconclusive:
			undecided++
		}
	}
	switch {
	case stop != nil:
		return fmt.Sprintf("INTERRUPTED after %d of %d runs (%d of %d %s(s) failed, %d inconclusive, %d pass on the runs that finished)",
			stop.Done, stop.Planned, failed, len(cards), unit, undecided, len(cards)-failed-undecided)
	case failed > 0:
		return fmt.Sprintf("FAIL (%d of %d %s(s) failed)", failed, len(cards), unit)
	case undecided > 0:
		return fmt.Sprintf("INCONCLUSIVE (%d of %d %s(s) inconclusive, none failed)", undecided, len(cards), unit)
	}
	return fmt.Sprintf("PASS (%d of %d %s(s) pass)", len(cards), len(cards), unit)
}

// Result is the page's verdict in a word: Fail when a card failed or the
// page was interrupted, else Inconclusive when a card is, else Pass.
func Result(cards []*Card, interrupted bool) string {
	r := Pass
	for _, c := range cards {
		switch {
		case c.Verdict == Fail:
			return Fail
		case c.Verdict == Inconclusive:
			r = Inconclusive
		}
	}
	if interrupted {
		return Fail
	}
	return r
}

// Lines are what the page covers, one "name: value" line each, in the
// order every output shows them.
func (a *About) Lines() [][2]string {
	var out [][2]string
	add := func(name, v string) {
		if v != "" {
			out = append(out, [2]string{name, v})
		}
	}
	add("host", a.Host)
	add("config", a.Config)
	add("plan", a.Plan)
	switch {
	case a.FirstRun != "" && a.Window != "":
		add("covers", "first run "+a.FirstRun+", last run "+a.LastRun+" (window: "+a.Window+")")
	case a.FirstRun != "":
		add("covers", "first run "+a.FirstRun+", last run "+a.LastRun)
	default:
		add("covers", a.Window)
	}
	add("sources", strings.Join(a.Sources, ", "))
	if a.Command == "report" {
		add("hosts", listOrNone(a.Hosts, "none recorded"))
		add("regions", listOrNone(a.Regions, "none recorded"))
	}
	add("version", a.Version)
	return out
}

func listOrNone(l []string, none string) string {
	if len(l) == 0 {
		return none
	}
	return strings.Join(l, ", ")
}

// Head is the page's first lines as text: the verdict, then what the
// page covers.
func (a *About) Head(verdict string, color bool) string {
	var b strings.Builder
	word, rest, _ := strings.Cut(verdict, " ")
	fmt.Fprintf(&b, "streamprobe %s: %s\n", a.Command, strings.TrimSpace(paintVerdict(word, color)+" "+rest))
	for _, l := range a.Lines() {
		fmt.Fprintf(&b, "  %-8s %s\n", l[0]+":", shown(l[1]))
	}
	return b.String()
}
