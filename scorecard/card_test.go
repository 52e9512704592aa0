package scorecard

import (
	"encoding/json"
	"os"
	"testing"
)

// The card's JSON keeps its shape: each cell one flat object (row, sample,
// n, the fields of its kind, over, why), as testdata/card.json.golden
// holds it from before cells had a type per row kind.
func TestJSONGolden(t *testing.T) {
	got, err := json.MarshalIndent(fixedCard(), "", " ")
	if err != nil {
		t.Fatal(err)
	}
	const golden = "testdata/card.json.golden"
	if *update {
		os.WriteFile(golden, got, 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("card JSON differs from %s (go test ./scorecard -update rewrites it):\n%s", golden, got)
	}
}
