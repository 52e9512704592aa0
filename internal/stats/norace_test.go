//go:build !race

package stats

const raceOn = false
