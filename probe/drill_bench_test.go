package probe

import (
	"strconv"
	"testing"
)

// BenchmarkResumeCheck is the resume check's cost on one replayed stream:
// 1500 events with integer ids (past the check's window of 1024, so its
// ring evicts), a drop after id 1200 and a resume from id 1196 that
// re-delivers 1197..1200 before the new events. One op is the whole
// stream; the check's map and rings are reused between ops, as one run
// reuses them between events.
func BenchmarkResumeCheck(b *testing.B) {
	const n, drop, from = 1500, 1200, 1196
	ids := make([]string, n+1)
	data := make([][]byte, n+1)
	for i := 1; i <= n; i++ {
		ids[i] = strconv.Itoa(i)
		data[i] = []byte(`{"choices":[{"delta":{"content":" word ` + ids[i] + `"}}]}`)
	}
	typ := []byte("message")
	show := func(s string) string { return s }
	c := newResumeCheck(false, false, show, show)
	b.ReportAllocs()
	for b.Loop() {
		seen, window, hashes := c.seen, c.window, c.hashes
		window.n, hashes.n = 0, 0
		clear(seen)
		*c = resumeCheck{seen: seen, window: window, hashes: hashes, sentPos: -1, gone: -1, top: -1, show: show, label: show}
		for i := 1; i <= drop; i++ {
			if c.event(ids[i], true, typ, data[i]) {
				b.Fatalf("id %d taken as a re-delivery", i)
			}
		}
		c.reconnected(ids[from])
		for i := from + 1; i <= n; i++ {
			if again := c.event(ids[i], true, typ, data[i]); again != (i <= drop) {
				b.Fatalf("id %d: re-delivery %v", i, again)
			}
		}
		if c.verdict != "" || c.duplicates != drop-from || c.goodResumes != 1 {
			b.Fatalf("verdict %q %s, duplicates %d, good resumes %d", c.verdict, c.detail, c.duplicates, c.goodResumes)
		}
	}
}
