package probe

import "fmt"

// NearZeroGapMs is the gap under which two chunks count as released
// together (one read, one flush upstream): no model streams that fast.
const NearZeroGapMs = 2

// OneBurstMinGaps and OneBurstShare make the one-burst rule: a run with at
// least OneBurstMinGaps gaps, at least OneBurstShare of them under
// NearZeroGapMs, came in one burst, whatever its headers did. A proxy that
// holds a whole answer holds its headers too (nginx's defaults do), so
// neither a freeze nor a late first chunk shows; 8 gaps take in the short
// sample's 10 chunks, and leave out the answers of a few chunks that a
// server may well write at once.
const (
	OneBurstMinGaps = 8
	OneBurstShare   = 0.9
)

// Buffering describes how the chunks of one run arrived when they came in
// bursts: the pattern of a proxy that buffers the stream (headers early,
// first chunk late, then near-zero gaps split by long freezes), or of one
// that holds the whole answer and releases it in one burst.
type Buffering struct {
	// Bursts is how many bursts the chunks came in: 1 + the freezes.
	Bursts int
	// Freezes counts the gaps over StallThresholdMs between the bursts;
	// LongestFreezeMs is the longest of them (0 when none).
	Freezes         int
	LongestFreezeMs float64
	// NearZero counts the gaps under NearZeroGapMs, out of Gaps.
	NearZero, Gaps int
	// HeadersToFirstChunkMs is the wait from the response headers to the
	// first content chunk, when both happened.
	HeadersToFirstChunkMs *float64
}

// Buffering reports whether the run looks proxy-buffered, and how: at
// least 3 gaps, at least half of them under NearZeroGapMs, and a freeze
// the user saw (a gap over StallThresholdMs, or a first chunk more than
// StallThresholdMs after the headers); or one burst: at least
// OneBurstMinGaps gaps, OneBurstShare of them under NearZeroGapMs, however
// early the first chunk came after the headers. It needs the gap values
// (gaps.values_ms in the JSON).
func (r Record) Buffering() (Buffering, bool) {
	b := Buffering{Gaps: len(r.Gaps.Values), Bursts: 1}
	for _, g := range r.Gaps.Values {
		switch {
		case g < NearZeroGapMs:
			b.NearZero++
		case g > StallThresholdMs:
			b.Freezes++
			b.LongestFreezeMs = max(b.LongestFreezeMs, g)
		}
	}
	b.Bursts += b.Freezes
	if r.HeadersMs != nil && r.TFCMs != nil {
		b.HeadersToFirstChunkMs = round3(ptr(*r.TFCMs - *r.HeadersMs))
	}
	lateFirst := b.HeadersToFirstChunkMs != nil && *b.HeadersToFirstChunkMs > StallThresholdMs
	bursts := b.Gaps >= 3 && 2*b.NearZero >= b.Gaps && (b.Freezes > 0 || lateFirst)
	together := b.Gaps >= OneBurstMinGaps && float64(b.NearZero) >= OneBurstShare*float64(b.Gaps)
	return b, bursts || together
}

// String is the one-line explanation once and check print.
func (b Buffering) String() string {
	s := fmt.Sprintf("%d burst(s)", b.Bursts)
	if b.Bursts == 1 {
		s = "one burst"
		if b.Gaps > 0 && float64(b.NearZero) >= OneBurstShare*float64(b.Gaps) {
			s += ": the chunks came together"
		}
	}
	if b.Freezes > 0 {
		s += fmt.Sprintf(" split by %d freeze(s) up to %.0f ms", b.Freezes, b.LongestFreezeMs)
	}
	s += fmt.Sprintf("; %d of %d gaps under %d ms", b.NearZero, b.Gaps, NearZeroGapMs)
	if b.HeadersToFirstChunkMs != nil {
		s += fmt.Sprintf("; first chunk %.0f ms after the headers", *b.HeadersToFirstChunkMs)
	}
	return s
}
