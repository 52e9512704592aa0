package scorecard

import (
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/streamprobe/streamprobe/probe"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func TestTextGolden(t *testing.T) {
	got := fixedCard().Text(false, 5)
	const golden = "testdata/card.golden"
	if *update {
		os.WriteFile(golden, []byte(got), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("scorecard text differs from %s (go test ./scorecard -update rewrites it):\n%s", golden, got)
	}
}

// A record read back from a file may hold anything: the text card shows
// its drill details, errors and names with control characters made
// visible, never as bytes a terminal acts on.
func TestTextShowsNoControlCharacters(t *testing.T) {
	evil := "id 7\x1b]0;pwned\x07\x1b[2J\u202e"
	drill := Run{Record: probe.Record{Target: "t\x1b[2J", Sample: "long", Drill: probe.DrillDuplicate, Outcome: probe.UpstreamError,
		Error: "boom " + evil, Verdict: probe.Verdict("dup\x1b[31m"), ResumeDetail: "resume replayed " + evil, RequestID: "r1"}}
	short := Run{Record: probe.Record{Target: "t\x1b[2J", Sample: "short", Outcome: probe.UpstreamError, Error: "bad " + evil, RequestID: "r2"}}
	c := Build("t\x1b[2J", []string{"short"}, map[string][]Run{"short": {short}}, []Run{drill}, nil)
	out := c.Text(false, 1)
	if strings.ContainsAny(out, "\x1b\x07\u202e") {
		t.Errorf("the card holds control characters:\n%q", out)
	}
	if !strings.Contains(out, `\x1b]0;pwned\x07`) {
		t.Errorf("the sequence is not shown visibly:\n%s", out)
	}
}
