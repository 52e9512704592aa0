//go:build race

package scorecard

// raceOn: the race detector slows the simulations' arithmetic about
// tenfold; they run a quarter of their draws under it (sized so that CI's
// go test -race stays in seconds), their full size otherwise.
const raceOn = true
