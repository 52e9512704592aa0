package probe

import (
	"strconv"
	"strings"
	"testing"
)

// A replay check fed an answer of n parts (part 0 the begin part, the
// others content) and then one resumed connection's parts, by index into
// the answer (-1: other text), as a Replay resume would bring them.
func replayOf(t *testing.T, n int, resumed []int, begin bool) *replayCheck {
	t.Helper()
	key := func(i int) uint32 {
		if i < 0 {
			return replayKey([]byte("message"), []byte("other text "+strconv.Itoa(-i)), true)
		}
		return replayKey([]byte("message"), []byte("part "+strconv.Itoa(i)), i > 0)
	}
	c := newReplayCheck(func(s string) string { return s })
	for i := range n {
		c.live(key(i), false)
	}
	c.reconnected()
	for j, i := range resumed {
		c.event(key(i), begin && j == 0, false)
	}
	c.ended()
	return c
}

func TestReplayCheck(t *testing.T) {
	for _, tc := range []struct {
		name     string
		resumed  []int
		begin    bool
		want     Verdict
		detail   string
		replayed int
		missed   int
	}{
		{"replay from the start, then the rest", []int{0, 1, 2, 3, 4, 5, 6, 7}, true, "", "", 5, 0},
		{"continued from the cut", []int{5, 6, 7}, false, "", "", 0, 0},
		{"a hole in the replay", []int{0, 1, 3, 4, 5}, true, VerdictMissed, "skipped 1 part(s) the client had (parts 3 to 3 of 5)", 4, 1},
		{"a repeat in the replay", []int{0, 1, 2, 2, 3, 4, 5}, true, VerdictDuplicate, "sent part 3 again at part 4", 6, 0},
		{"a new generation", []int{0, -1, -2, -3}, true, VerdictRestarted, "part 2 differs from the one the client had", 1, 0},
		{"a replay from the middle", []int{2, 3, 4, 5}, false, VerdictDuplicate, "from its part 3", 3, 0},
		{"a replay that ends short", []int{0, 1, 2}, true, VerdictMissed, "ended after 3 of the 5 parts", 3, 2},
	} {
		c := replayOf(t, 5, tc.resumed, tc.begin)
		if c.verdict != tc.want || !strings.Contains(c.detail, tc.detail) || c.replayed != tc.replayed || c.missed != tc.missed {
			t.Errorf("%s: verdict %q %q, replayed %d missed %d; want %q %q, %d, %d", tc.name, c.verdict, c.detail, c.replayed, c.missed, tc.want, tc.detail, tc.replayed, tc.missed)
		}
	}
}

// The check's memory is bounded: past its window a replay is counted,
// not compared, and the answer's later parts still count.
func TestReplayCheckWindow(t *testing.T) {
	n := replayWindow + 100
	resumed := make([]int, 0, n+1)
	for i := range n + 1 {
		resumed = append(resumed, i)
	}
	c := replayOf(t, n, resumed, true)
	if c.verdict != "" || c.replayed != n || c.answer.len() != replayWindow || c.n != n+1 {
		t.Errorf("verdict %q %q, replayed %d, kept %d of %d", c.verdict, c.detail, c.replayed, c.answer.len(), c.n)
	}
}
