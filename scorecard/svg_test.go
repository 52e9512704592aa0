package scorecard

import (
	"fmt"
	"slices"
	"testing"
)

// Labels closer than their width go to separate lanes; labels far apart
// share one; a label past the edge is moved back inside.
func TestLayout(t *testing.T) {
	got := layout([]label{{x: 10, text: "reconnect, handshake 90 ms"}, {x: 60, text: "reconnect, handshake 95 ms"}, {x: 400, text: "end"}, {x: 955, text: "TFC 9 ms"}}, 958)
	lanes := []int{got[0].lane, got[1].lane, got[2].lane, got[3].lane}
	if !slices.Equal(lanes, []int{0, 1, 0, 0}) {
		t.Errorf("lanes %v", lanes)
	}
	if got[3].x+labelWidth(got[3].text) > 958 {
		t.Errorf("label past the edge: %+v", got[3])
	}
}

// A cell's plot fits its data: a budget near the values sets the axis
// and is drawn; one far beyond them (a 30 s tail budget over 60 ms tails)
// is named at the edge, and the axis ends just past the largest value.
func TestStripAxisFitsTheData(t *testing.T) {
	tails := Dist{Values: []float64{52, 58, 60, 61, 64}}
	for _, tt := range []struct {
		budget           float64
		spanMin, spanMax float64
		drawn            bool
		edge             string
	}{
		{100, 100, 200, true, ""},
		{180, 180, 300, true, ""},
		{30000, 64, 80, false, "budget 30 s \u2192"},
		{500, 64, 80, false, "budget 500 ms \u2192"},
	} {
		ce := &Cell{Row: "tail", Sample: "cancel", Timing: &TimingCell{P50: ptr(60), P95: ptr(64), Budget: ptr(tt.budget)}}
		v := stripOf(ce, tails)
		span := v.Axis.Ticks[len(v.Axis.Ticks)-1]
		var spanMs float64
		fmt.Sscanf(span.Text, "%g ms", &spanMs)
		if spanMs < tt.spanMin || spanMs > tt.spanMax {
			t.Errorf("budget %g: axis to %s, want %g..%g ms", tt.budget, span.Text, tt.spanMin, tt.spanMax)
		}
		if (v.DataBudget != "") != tt.drawn || (v.DataBudgetOff != "") == tt.drawn {
			t.Errorf("budget %g: drawn %q, off the axis %q", tt.budget, v.DataBudget, v.DataBudgetOff)
		}
		found := tt.edge == ""
		for _, l := range v.Labels {
			found = found || l.Text == tt.edge
			if l.X < 0 || l.X+labelWidth(l.Text) > v.Width {
				t.Errorf("budget %g: label %q at %g leaves the plot", tt.budget, l.Text, l.X)
			}
		}
		if !found {
			t.Errorf("budget %g: no %q label in %+v", tt.budget, tt.edge, v.Labels)
		}
	}
}
