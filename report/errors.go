package report

import "errors"

// Sentinel errors; errors.Is works through the wrapping.
var (
	// ErrLog: a results log could not be read.
	ErrLog = errors.New("results log")
	// ErrQuery: VictoriaMetrics did not answer a query.
	ErrQuery = errors.New("victoriametrics query")
)
