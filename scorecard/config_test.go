package scorecard

import (
	"slices"
	"strings"
	"testing"

	"github.com/streamprobe/streamprobe/config"
	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/probe"
)

// Cards judges a config's targets with its budgets: the worked example's
// short class (one 259 ms stall per run) is red on gap against a 100 ms
// budget and on stalls, long is green, a target not selected has no card;
// ClassCells, Cell.Text and RowName give a class's column as the text
// card prints it.
func TestCardsFromAConfig(t *testing.T) {
	cfg, err := config.Parse("c.toml", []byte(`[[target]]
name = "api"
url = "http://127.0.0.1:1/v1"
dialect = "openai-chat"
samples = ["long", "short"]
[[target]]
name = "other"
url = "http://127.0.0.1:1/v1"
dialect = "openai-chat"
samples = ["short"]
[budget.short]
gap = "100ms"
[budget.long]
gap = "100ms"
stall_share = 0.5
`), config.Env{Names: config.Names{Dialects: dialect.Names(), Samples: dialect.SampleNames, Drills: probe.DrillNames}})
	if err != nil {
		t.Fatal(err)
	}
	if b := BudgetsOf(cfg); b["short"].Gap != 100 || b["long"].StallShare == nil || *b["long"].StallShare != 0.5 || b["short"].StallShare != nil {
		t.Fatalf("budgets %+v", b)
	}
	worked := []float64{412, 452, 497, 541, 588, 634, 691, 950, 998, 1044}
	var runs []Run
	for i := range 3 {
		runs = append(runs, run("short", i, probe.Success, worked, ptr(1051), 10))
		var long []float64
		for k := range 20 {
			long = append(long, 900+float64(k*30))
		}
		runs = append(runs, run("long", i, probe.Success, long, ptr(long[19]+5), 20))
	}
	cards := Cards(cfg, []string{"api"}, map[string][]Run{"api": runs})
	if len(cards) != 1 || cards[0].Target != "api" || !slices.Equal(cards[0].Samples, []string{"short", "long"}) || cards[0].Pass {
		t.Fatalf("cards %+v", cards)
	}
	var red []string
	for _, ce := range cards[0].ClassCells("short") {
		if text, mark := ce.Text(); ce.Over {
			red = append(red, RowName(ce.Row)+" "+text+" "+mark)
		}
	}
	// 3 runs: the stall share (3 of 3, 29.2..100%) is over its 5%; the
	// gap p95's interval has no top yet (inconclusive).
	if len(red) != 1 || !strings.HasPrefix(red[0], "stalled >250ms 100% of 3 runs [29.2..100%] (<= 5%) OVER") {
		t.Errorf("short's red cells: %q", red)
	}
	if g := cards[0].ClassCells("short")[1]; g.Row != RowGap || g.Verdict != Inconclusive {
		t.Errorf("short gap %+v", g)
	}
	long := cards[0].ClassCells("long")
	if len(long) != len(Rows) || slices.ContainsFunc(long, func(ce Cell) bool { return ce.Over }) {
		t.Errorf("long's cells: %+v", long)
	}
	if cards[0].ClassCells("cancel") != nil {
		t.Error("cells of a class the card does not have")
	}
}
