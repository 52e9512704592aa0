package scorecard

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"
	"time"
)

// A report's page says what it covers (window, sources, hosts, regions,
// version) and its verdict, in the text head, the JUnit properties and
// the HTML.
func TestAboutInEveryOutput(t *testing.T) {
	cards := []*Card{fixedCard()}
	about := &About{Command: "report", Version: "v1.2.3", FirstRun: "2026-12-03T10:00:00Z", LastRun: "2026-12-03T10:09:00Z",
		Window: "every run in the data", Sources: []string{"eu=/srv/eu.jsonl", "us=/srv/us.jsonl"}, Hosts: []string{"probe-1", "probe-2"}, Regions: []string{"eu", "us"}}
	p := Page{Title: "streamprobe report", Generated: time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC), Verdict: Verdict(cards, nil, "card"), About: about}
	var text, junit, html bytes.Buffer
	if err := WritePageText(&text, p, cards, false); err != nil {
		t.Fatal(err)
	}
	wantHead := `streamprobe report: FAIL (1 of 1 card(s) failed)
  covers:  first run 2026-12-03T10:00:00Z, last run 2026-12-03T10:09:00Z (window: every run in the data)
  sources: eu=/srv/eu.jsonl, us=/srv/us.jsonl
  hosts:   probe-1, probe-2
  regions: eu, us
  version: v1.2.3

target api
`
	if !strings.HasPrefix(text.String(), wantHead) {
		t.Errorf("text head:\n%s\nwant:\n%s", text.String()[:min(600, text.Len())], wantHead)
	}
	if err := WriteJUnitPage(&junit, p, cards); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Suites []struct {
			Props []struct {
				Name  string `xml:"name,attr"`
				Value string `xml:"value,attr"`
			} `xml:"properties>property"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(junit.Bytes(), &doc); err != nil || len(doc.Suites) != 1 {
		t.Fatalf("junit: %v\n%s", err, junit.String())
	}
	props := map[string]string{}
	for _, pr := range doc.Suites[0].Props {
		props[pr.Name] = pr.Value
	}
	for k, v := range map[string]string{"verdict": "FAIL (1 of 1 card(s) failed)", "covers": "first run 2026-12-03T10:00:00Z, last run 2026-12-03T10:09:00Z (window: every run in the data)",
		"sources": "eu=/srv/eu.jsonl, us=/srv/us.jsonl", "hosts": "probe-1, probe-2", "regions": "eu, us", "version": "v1.2.3"} {
		if props[k] != v {
			t.Errorf("junit property %s = %q, want %q", k, props[k], v)
		}
	}
	if err := WritePage(&html, p, cards); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<b class="fail">FAIL (1 of 1 card(s) failed)</b>`, "<th>covers</th><td>first run 2026-12-03T10:00:00Z, last run 2026-12-03T10:09:00Z (window: every run in the data)</td>",
		"<th>sources</th><td>eu=/srv/eu.jsonl, us=/srv/us.jsonl</td>", "<th>hosts</th><td>probe-1, probe-2</td>", "<th>regions</th><td>eu, us</td>", "<th>version</th><td>v1.2.3</td>"} {
		if !strings.Contains(html.String(), want) {
			t.Errorf("html lacks %q", want)
		}
	}
}

// The page verdict: PASS, FAIL naming the failed cards (whatever else
// is inconclusive), INCONCLUSIVE when a card is and none failed, and for
// an interrupted page INTERRUPTED with the runs done of those planned,
// whatever its cards say; Result says it in a word (FAIL when
// interrupted: exit 1).
func TestVerdict(t *testing.T) {
	pass, fail, undecided := &Card{Pass: true, Verdict: Pass}, &Card{Verdict: Fail}, &Card{Verdict: Inconclusive}
	for _, tt := range []struct {
		cards      []*Card
		stop       *Interruption
		want, word string
	}{
		{[]*Card{pass, pass}, nil, "PASS (2 of 2 target(s) pass)", Pass},
		{[]*Card{pass, fail}, nil, "FAIL (1 of 2 target(s) failed)", Fail},
		{[]*Card{undecided, fail}, nil, "FAIL (1 of 2 target(s) failed)", Fail},
		{[]*Card{pass, undecided}, nil, "INCONCLUSIVE (1 of 2 target(s) inconclusive, none failed)", Inconclusive},
		{[]*Card{pass}, &Interruption{Done: 3, Planned: 40}, "INTERRUPTED after 3 of 40 runs (0 of 1 target(s) failed, 0 inconclusive, 1 pass on the runs that finished)", Fail},
		{[]*Card{undecided, fail, pass}, &Interruption{Done: 0, Planned: 125}, "INTERRUPTED after 0 of 125 runs (1 of 3 target(s) failed, 1 inconclusive, 1 pass on the runs that finished)", Fail},
	} {
		if got := Verdict(tt.cards, tt.stop, "target"); got != tt.want {
			t.Errorf("Verdict = %q, want %q", got, tt.want)
		}
		if got := Result(tt.cards, tt.stop != nil); got != tt.word {
			t.Errorf("Result = %q, want %q", got, tt.word)
		}
	}
}

// A card with no runs is never PASS, whether it has classes (every one
// without a run) or only drills (none of them run): it is INCONCLUSIVE,
// says that no run finished in every output, and JUnit has a skipped
// testcase for it rather than no testcase at all.
func TestCardWithNoRunsIsNeverPass(t *testing.T) {
	budgets := Budgets{"short": {TFC: 600}}
	for name, c := range map[string]*Card{
		"drills only": Build("drills-only", nil, nil, nil, budgets),
		"samples":     Build("samples", []string{"short", "long"}, nil, nil, budgets),
	} {
		if c.Pass || c.Verdict != Inconclusive || !c.NoRun {
			t.Errorf("%s: pass %v, verdict %s, no_run %v", name, c.Pass, c.Verdict, c.NoRun)
		}
		if text := c.Text(false, 0); !strings.Contains(text, NoRunNote) || strings.Contains(text, "verdict: PASS") {
			t.Errorf("%s: text:\n%s", name, text)
		}
		var junit, html strings.Builder
		if err := WriteJUnit(&junit, []*Card{c}); err != nil || !strings.Contains(junit.String(), `<skipped message="`+NoRunNote) {
			t.Errorf("%s: JUnit %v:\n%s", name, err, junit.String())
		}
		if err := WritePage(&html, Page{Title: "t"}, []*Card{c}); err != nil || !strings.Contains(html.String(), NoRunNote) {
			t.Errorf("%s: HTML %v lacks the note", name, err)
		}
	}
}
