package stats

import "math"

// The exact unconditional test of two shares: is the candidate's share
// (kc of nc) more than delta above the baseline's (kb of nb)? The
// statistic is the difference of the shares seen; under the null the
// difference is delta, the baseline's share pb is a nuisance, and the
// p-value is the largest, over pb, of the chance of a difference at
// least as far out as the one seen (Barnard's construction; the region
// is monotone, so the null's boundary is its worst case). Far more
// powerful than two Clopper-Pearson intervals combined, and exact: it
// errs at most at its level whatever the shares are. The supremum is
// taken on a grid of the nuisance and refined around its peak.

// diffTol is how close ExactDiff finds its ends: a hundredth of a point
// of share.
const diffTol = 1e-4

// nuisanceGrid is the grid of the baseline's share the supremum is
// taken on before it is refined.
const nuisanceGrid = 40

// logChoose is log(n choose k) for k = 0..n.
func logChoose(n int) []float64 {
	out := make([]float64, n+1)
	ln, _ := math.Lgamma(float64(n) + 1)
	for k := range out {
		a, _ := math.Lgamma(float64(k) + 1)
		b, _ := math.Lgamma(float64(n-k) + 1)
		out[k] = ln - a - b
	}
	return out
}

// binom is what pmf needs of Binomial(n, .): log(n choose k), and the
// ratios (n-k)/(k+1) of neighbouring coefficients.
type binom struct {
	lc, up []float64
}

func newBinom(n int) binom {
	b := binom{lc: logChoose(n), up: make([]float64, n+1)}
	for k := range n {
		b.up[k] = float64(n-k) / float64(k+1)
	}
	return b
}

// pmf fills out with the Binomial(n, p) probabilities: the mode's from
// its logarithm, the others by the ratio of neighbours, out from it.
func (b binom) pmf(out []float64, p float64) {
	lc := b.lc
	n := len(out) - 1
	switch {
	case p <= 0:
		clear(out)
		out[0] = 1
		return
	case p >= 1:
		clear(out)
		out[n] = 1
		return
	}
	mode := min(n, int(float64(n+1)*p))
	out[mode] = math.Exp(lc[mode] + float64(mode)*math.Log(p) + float64(n-mode)*math.Log1p(-p))
	r, ir := p/(1-p), (1-p)/p
	for k := mode; k < n; k++ {
		out[k+1] = out[k] * b.up[k] * r
	}
	for k := mode; k > 0; k-- {
		out[k-1] = out[k] * ir / b.up[k-1]
	}
}

// twoShares holds what the test of kb of nb against kc of nc needs.
type twoShares struct {
	kb, nb, kc, nc int
	bb, bc         binom
	pb, pc, tail   []float64
}

func newTwoShares(kb, nb, kc, nc int) *twoShares {
	return &twoShares{kb: kb, nb: nb, kc: kc, nc: nc, bb: newBinom(nb), bc: newBinom(nc),
		pb: make([]float64, nb+1), pc: make([]float64, nc+1), tail: make([]float64, nc+2)}
}

// at is the chance, with shares p and p+delta, of a difference at least
// as far out as the one seen: at or over it (up), or at or under it.
func (s *twoShares) at(p, delta float64, up bool) float64 {
	s.bb.pmf(s.pb, p)
	s.bc.pmf(s.pc, min(1, max(0, p+delta)))
	// tail[j] = P(J >= j) (up) or P(J <= j-1) ... kept as a running sum.
	seen := float64(s.kc)/float64(s.nc) - float64(s.kb)/float64(s.nb)
	const eps = 1e-9
	s.tail[s.nc+1] = 0
	for j := s.nc; j >= 0; j-- {
		s.tail[j] = s.tail[j+1] + s.pc[j]
	}
	total := 0.0
	for i, w := range s.pb {
		if w == 0 {
			continue
		}
		// The candidate counts j with j/nc - i/nb at or over seen (up),
		// or at or under it.
		edge := (seen + float64(i)/float64(s.nb)) * float64(s.nc)
		if up {
			j := int(math.Ceil(edge - eps))
			if j <= s.nc {
				total += w * s.tail[max(0, j)]
			}
		} else {
			j := int(math.Floor(edge + eps))
			if j >= 0 {
				total += w * (1 - s.tail[min(s.nc, j)+1])
			}
		}
	}
	return min(1, total)
}

// p is the test's p-value against the null that the candidate's share is
// delta above the baseline's (or less, for up; or more, for !up): the
// supremum over the baseline's share.
func (s *twoShares) p(delta float64, up bool) float64 {
	lo, hi := max(0, -delta), min(1, 1-delta)
	if lo > hi {
		return 0
	}
	best, bestP := lo, -1.0
	for g := 0; g <= nuisanceGrid; g++ {
		p := lo + (hi-lo)*float64(g)/nuisanceGrid
		if v := s.at(p, delta, up); v > bestP {
			best, bestP = p, v
		}
	}
	// Refine around the peak: golden section over the grid cell on each
	// side, to a 10,000th of a cell.
	step := (hi - lo) / nuisanceGrid
	a, b := max(lo, best-step), min(hi, best+step)
	const phi = 0.6180339887498949
	x1, x2 := b-phi*(b-a), a+phi*(b-a)
	v1, v2 := s.at(x1, delta, up), s.at(x2, delta, up)
	for range 18 {
		if v1 < v2 {
			a, x1, v1 = x1, x2, v2
			x2 = a + phi*(b-a)
			v2 = s.at(x2, delta, up)
		} else {
			b, x2, v2 = x2, x1, v1
			x1 = b - phi*(b-a)
			v1 = s.at(x1, delta, up)
		}
		bestP = max(bestP, v1, v2)
	}
	return bestP
}

// ExactDiff is the exact unconditional interval of pc-pb, the candidate's
// share (kc of nc) less the baseline's (kb of nb), at confidence 1-alpha
// (alpha/2 each side): the differences delta that neither one-sided
// test rejects at alpha/2. A difference over its upper end is rejected
// by the test of "at most delta" at alpha/2, so a verdict that the whole
// interval lies over a margin errs at most alpha/2 of the time.
func ExactDiff(kb, nb, kc, nc int, alpha float64) (lo, hi float64) {
	s := newTwoShares(kb, nb, kc, nc)
	side := alpha / 2
	// Two Clopper-Pearson intervals combined bracket the ends: the
	// exact interval lies within theirs.
	clo, chi := DiffInterval(kb, nb, kc, nc, alpha)
	seen := float64(kc)/float64(nc) - float64(kb)/float64(nb)
	// p(delta, up) rises with delta: lo is where it reaches side.
	up := func(d float64) bool { return s.p(d, true) > side }
	if up(clo) {
		clo = -1 // the bracket was not one: search all of it
	}
	lo = bisectOn(clo, seen, diffTol, up)
	// p(delta, !up) falls with delta: hi is where it drops to side.
	down := func(d float64) bool { return s.p(d, false) <= side }
	if !down(chi) {
		chi = 1
	}
	hi = bisectOn(seen, chi, diffTol, down)
	return lo, hi
}

// ExactDiffP is the p-value of the exact unconditional test that the
// candidate's share (kc of nc) is more than delta above the baseline's
// (kb of nb) (greater), or less than delta above it (!greater): small
// when the data say so. At alpha/2 it rejects exactly where ExactDiff's
// interval at alpha lies wholly beyond delta (to within its 1e-4).
func ExactDiffP(kb, nb, kc, nc int, delta float64, greater bool) float64 {
	return newTwoShares(kb, nb, kc, nc).p(delta, greater)
}

// ShareDiff is the interval of pc-pb compare takes, at confidence at
// least 1-alpha: where both of two exact intervals at 1-alpha/2 hold, the
// two Clopper-Pearson intervals combined (DiffInterval: narrow where a
// share sits at 0 or 1, as a healthy target's error share does) and the
// exact unconditional one (ExactDiff: far narrower for shares in
// between). Each misses at most alpha/2 of the time, so both hold
// together at least 1-alpha of the time (Bonferroni), and so does their
// intersection: exact, whichever of the two is narrower on the data.
func ShareDiff(kb, nb, kc, nc int, alpha float64) (lo, hi float64) {
	clo, chi := DiffInterval(kb, nb, kc, nc, alpha/2)
	elo, ehi := ExactDiff(kb, nb, kc, nc, alpha/2)
	return max(clo, elo), min(chi, ehi)
}

// ShareWorse reports whether ShareDiff's interval at 1-alpha lies wholly
// over margin, without working out the interval: the Clopper-Pearson
// pair's bottom over it, or the unconditional test rejecting "at most
// margin" at alpha/4.
func ShareWorse(kb, nb, kc, nc int, margin, alpha float64) bool {
	if lo, _ := DiffInterval(kb, nb, kc, nc, alpha/2); lo > margin {
		return true
	}
	return ExactDiffP(kb, nb, kc, nc, margin, true) <= alpha/4
}
