package scorecard

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"
)

func TestJUnit(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJUnit(&b, []*Card{fixedCard()}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		XMLName  xml.Name `xml:"testsuites"`
		Tests    int      `xml:"tests,attr"`
		Failures int      `xml:"failures,attr"`
		Suites   []struct {
			Tests    int `xml:"tests,attr"`
			Failures int `xml:"failures,attr"`
			Cases    []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, b.String())
	}
	// 3 classes x 7 rows + 1 drill; failures: short stall share, cancel
	// outcomes, the drill (short gap is inconclusive on 5 runs).
	if doc.Tests != 22 || doc.Failures != 3 || len(doc.Suites) != 1 || len(doc.Suites[0].Cases) != 22 {
		t.Fatalf("tests %d failures %d suites %d", doc.Tests, doc.Failures, len(doc.Suites))
	}
	var msgs []string
	for _, c := range doc.Suites[0].Cases {
		if c.Failure != nil {
			msgs = append(msgs, c.Name+": "+c.Failure.Message)
		}
	}
	want := []string{"short stalled >250ms: 5 of 5 runs stalled over 250 ms (100%, 95% interval 47.8..100%), over the 5% budget", "cancel outcomes: 1 of 5 runs did not end as the cancel sample should; 1 like this one: upstream_error (request_id cancel-04)",
		"drill drop: resume replayed id 3 again: off-by-one replay (sent Last-Event-ID: 3)"}
	if strings.Join(msgs, "|") != strings.Join(want, "|") {
		t.Errorf("failures %q", msgs)
	}
}
