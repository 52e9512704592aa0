//go:build !race

package scorecard

const raceOn = false
