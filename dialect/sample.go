package dialect

import (
	"fmt"
	"slices"
	"strings"
)

// Sample is one of the fixed requests the probe sends. Samples are constants
// of the binary, identical on every host, so results from different hosts
// compare; Version changes whenever the prompt or limits do.
type Sample struct {
	Name    string
	Version string
	// Prompt is the user message for chat dialects. It never leaves the
	// binary except in the request itself.
	Prompt string
	// MaxTokens caps the answer.
	MaxTokens int
	// Cancel makes the probe cancel the request after CancelAfter content
	// chunks: the cancel sample.
	Cancel bool
}

// DefaultCancelAfter is how many content chunks the cancel sample reads
// before it cancels.
const DefaultCancelAfter = 3

const longPrompt = "Write a detailed, step-by-step explanation of how a TCP connection is " +
	"established, used and torn down: the three-way handshake, sequence and " +
	"acknowledgement numbers, flow control with the receive window, congestion " +
	"control (slow start, congestion avoidance, fast retransmit and recovery), " +
	"and the four-way close including TIME_WAIT. Use numbered sections and " +
	"plain prose, about 600 words."

// Samples are the fixed samples by name: short (a short lookup), long (a long
// generation) and cancel (the long prompt, cancelled early).
var Samples = map[string]Sample{
	"short": {
		Name: "short", Version: "short-v1", MaxTokens: 64,
		Prompt: "What is the capital of France? Answer in one short sentence.",
	},
	"long": {
		Name: "long", Version: "long-v1", MaxTokens: 1024,
		Prompt: longPrompt,
	},
	"cancel": {
		Name: "cancel", Version: "cancel-v1", MaxTokens: 1024, Cancel: true,
		Prompt: longPrompt,
	},
}

// SampleNames lists the samples in their fixed order.
var SampleNames = []string{"short", "long", "cancel"}

// LookupSample returns the sample called name, or an error that lists the
// known ones.
func LookupSample(name string) (Sample, error) {
	s, ok := Samples[name]
	if !ok || !slices.Contains(SampleNames, name) {
		return Sample{}, fmt.Errorf("unknown sample %q (known: %s)", name, strings.Join(SampleNames, ", "))
	}
	return s, nil
}
