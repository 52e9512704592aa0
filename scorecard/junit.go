package scorecard

import (
	"encoding/xml"
	"io"
	"slices"
	"strings"
)

// JUnit XML, one testsuite per target, one testcase per cell and drill.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
}

// junitProperty is one property of a testsuite: what the page covers,
// and the small-sample notes of its classes.
type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

// junitSkipped marks an inconclusive cell: neither passed nor failed.
type junitSkipped struct {
	Message string `xml:"message,attr"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes check's cards as JUnit XML.
func WriteJUnit(w io.Writer, cards []*Card) error {
	return WriteJUnitNamed(w, "streamprobe check", cards)
}

// WriteJUnitNamed writes the cards as JUnit XML under name, one testsuite
// per card (a report's region cards and fleet card apart).
func WriteJUnitNamed(w io.Writer, name string, cards []*Card) error {
	return WriteJUnitPage(w, Page{Title: name}, cards)
}

// WriteJUnitPage writes the cards as JUnit XML named by the page's
// title, each testsuite with the page's About and its verdict as
// properties.
func WriteJUnitPage(w io.Writer, p Page, cards []*Card) error {
	name := p.Title
	all := junitSuites{Name: name}
	var props []junitProperty
	if p.Verdict != "" {
		props = append(props, junitProperty{"verdict", p.Verdict})
	}
	if p.About != nil {
		for _, l := range p.About.Lines() {
			props = append(props, junitProperty{l[0], l[1]})
		}
	}
	for _, c := range cards {
		s := junitSuiteOf(name, c)
		s.Properties = slices.Concat(props, s.Properties)
		all.Tests += s.Tests
		all.Failures += s.Failures
		all.Suites = append(all.Suites, s)
	}
	return writeJUnit(w, all)
}

// writeJUnit writes the suites as an indented XML document.
func writeJUnit(w io.Writer, all junitSuites) error {
	io.WriteString(w, xml.Header)
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(all); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// junitSuiteOf is the testsuite of one card: a testcase per cell, failed
// when red, and per drill, failed when the drill failed.
func junitSuiteOf(name string, c *Card) junitSuite {
	scope, class := c.Target, "streamprobe."+c.Target
	switch {
	case c.Fleet:
		scope, class = c.Target+" fleet", "streamprobe.fleet."+c.Target
	case c.Region != "":
		scope, class = c.Target+" region "+c.Region, "streamprobe."+c.Region+"."+c.Target
	}
	s := junitSuite{Name: name + " " + scope, Properties: []junitProperty{{"card_verdict", c.Verdict}}}
	for _, n := range c.smallSamples() {
		sample, note, _ := strings.Cut(n, ": ")
		s.Properties = append(s.Properties, junitProperty{"small_sample." + sample, note + " (" + SmallSampleNote + ")"})
	}
	for _, ce := range c.Cells {
		text, _ := ce.text()
		if ce.SmallSample != "" {
			text += "; small sample: " + ce.SmallSample
		}
		tc := junitCase{Name: ce.Sample + " " + rowNames[ce.Row], Classname: class + "." + ce.Sample, SystemOut: text}
		switch {
		case ce.Over:
			tc.Failure = &junitFailure{Message: ce.Why, Type: "over_budget", Text: ce.Sample + " " + rowNames[ce.Row] + ": " + ce.Why}
		case ce.Verdict == Inconclusive:
			tc.Skipped = &junitSkipped{Message: "inconclusive: " + ce.Why}
		}
		s.Cases = append(s.Cases, tc)
	}
	for _, d := range c.Drills {
		tc := junitCase{Name: "drill " + d.Drill, Classname: class + ".drills", SystemOut: d.Verdict + ": " + d.Detail}
		if d.Failed {
			tc.Failure = &junitFailure{Message: drillWhy(d), Type: "resume_" + d.Verdict, Text: drillWhy(d)}
		}
		s.Cases = append(s.Cases, tc)
	}
	if c.NoRun {
		s.Cases = append(s.Cases, junitCase{Name: "runs", Classname: class, Skipped: &junitSkipped{Message: NoRunNote}})
	}
	for _, tc := range s.Cases {
		s.Tests++
		if tc.Failure != nil {
			s.Failures++
		}
	}
	return s
}
