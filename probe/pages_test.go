package probe

import (
	"strconv"
	"testing"
	"time"
)

func TestPagesKeepEveryValueInOrder(t *testing.T) {
	var l pages[int]
	const n = 3*pageLen + 5
	for i := range n {
		l.append(i * 7)
		if l.len() != i+1 {
			t.Fatalf("after %d appends len is %d", i+1, l.len())
		}
	}
	for i := range n {
		if got := *l.at(i); got != i*7 {
			t.Fatalf("value %d is %d, want %d", i, got, i*7)
		}
	}
	if len(l.p) != 4 {
		t.Errorf("%d values took %d pages, want 4", n, len(l.p))
	}
	*l.at(pageLen) = -1
	if *l.at(pageLen) != -1 || *l.at(pageLen - 1) != (pageLen-1)*7 {
		t.Error("a write through at changed the wrong value")
	}
}

func TestTimelineChunksFromOffsets(t *testing.T) {
	start := time.Now()
	tl := Timeline{Start: start}
	for i := range pageLen + 2 {
		tl.chunks.append(time.Duration(i) * 1500 * time.Microsecond)
	}
	got := tl.Chunks()
	if len(got) != tl.ChunkCount() || len(got) != pageLen+2 {
		t.Fatalf("Chunks has %d values, ChunkCount %d, want %d", len(got), tl.ChunkCount(), pageLen+2)
	}
	for i, c := range got {
		if d := c.Sub(start); d != time.Duration(i)*1500*time.Microsecond || !tl.Chunk(i).Equal(c) {
			t.Fatalf("chunk %d is %v after the start (Chunk: %v)", i, d, tl.Chunk(i).Sub(start))
		}
	}
	ms, _ := tl.Millis()
	if ms[pageLen+1] != float64(pageLen+1)*1.5 {
		t.Errorf("Millis of the last chunk is %v, want %v", ms[pageLen+1], float64(pageLen+1)*1.5)
	}
}

func TestIDKeys(t *testing.T) {
	for _, id := range []string{"0", "5", "1200", "9223372036854775807"} {
		if k := keyOf(id); k >= 1<<63 || (idEntry{key: k}).value() != intID(id) {
			t.Errorf("id %q: key %#x, value %d; want the integer itself", id, k, (idEntry{key: k}).value())
		}
	}
	for _, id := range []string{"05", "+5", "00", "-1", "abc", "5a", "1e3", "9223372036854775808"} {
		if k := keyOf(id); k < 1<<63 || (idEntry{key: k}).value() != -1 {
			t.Errorf("id %q: key %#x; want a hash with the top bit set", id, k)
		}
	}
	if keyOf("05") == keyOf("5") || keyOf("+5") == keyOf("5") {
		t.Error("ids that read as the same integer share a key")
	}
}

// The check of a stream of rising integer ids builds no index until a
// resume needs one; ids written in other forms are still told apart and
// re-deliveries of either kind are found.
func TestResumeCheckIndexesOnlyWhenNeeded(t *testing.T) {
	show := func(s string) string { return s }
	c := newResumeCheck(false, false, show, show)
	typ := []byte("message")
	for i := 1; i <= 100; i++ {
		if c.event(strconv.Itoa(i), true, typ, []byte("d"+strconv.Itoa(i))) {
			t.Fatalf("id %d taken as a re-delivery", i)
		}
	}
	if c.seen != nil || c.texts != nil {
		t.Fatalf("100 rising ids built an index (%d) or kept texts (%d)", len(c.seen), len(c.texts))
	}
	c.event("007", true, typ, []byte("x"))
	if c.seen == nil {
		t.Fatal("an id below the top was not looked up")
	}
	c.reconnected("98")
	if !c.event("99", true, typ, []byte("d99")) || !c.event("007", true, typ, []byte("x")) {
		t.Error("re-deliveries of 99 and 007 were not recognised")
	}
	if c.event("101", true, typ, []byte("d101")) || c.duplicates != 2 || c.verdict != "" || c.goodResumes != 1 {
		t.Errorf("duplicates %d, good resumes %d, verdict %q %s", c.duplicates, c.goodResumes, c.verdict, c.detail)
	}
}
