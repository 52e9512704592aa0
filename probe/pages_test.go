package probe

import (
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
