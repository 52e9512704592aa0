package scorecard

import (
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
