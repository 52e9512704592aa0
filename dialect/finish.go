package dialect

// Finish is why an answer stopped, as its provider says it, in one
// vocabulary for every dialect (docs/dialects.md "Definitions"): each
// dialect maps its own field (finish_reason, stop_reason, finishReason,
// done_reason, incomplete_details.reason, the AI SDK's finishReason) to
// one of these. The zero value is none: the stream did not say.
type Finish uint8

// The finish reasons.
const (
	FinishNone Finish = iota
	// FinishStop: the model ended its answer (a stop sequence included).
	FinishStop
	// FinishLength: the answer hit its token limit, or the context's: a
	// success, as the stream ended normally.
	FinishLength
	// FinishToolCalls: the model stopped to call a tool.
	FinishToolCalls
	// FinishRefusal: the model declined to answer.
	FinishRefusal
	// FinishContentFilter: the provider's filter stopped the prompt or
	// the answer.
	FinishContentFilter
	// FinishError: the provider ended the answer as failed.
	FinishError
	// FinishOther: a reason of the provider's that is none of the above.
	FinishOther
)

var finishNames = [...]string{"", "stop", "length", "tool_calls", "refusal", "content_filter", "error", "other"}

// String is the reason's name in records ("" for none).
func (f Finish) String() string {
	if int(f) < len(finishNames) {
		return finishNames[f]
	}
	return "other"
}

// Refused reports whether the reason says the answer was refused: by the
// model, or by the provider's filter.
func (f Finish) Refused() bool { return f == FinishRefusal || f == FinishContentFilter }

// MarshalText writes the reason's name.
func (f Finish) MarshalText() ([]byte, error) { return []byte(f.String()), nil }

// UnmarshalText reads a reason's name, as a record read back has it; a
// name it does not know (a newer version's) is other.
func (f *Finish) UnmarshalText(b []byte) error {
	*f = FinishOther
	for i, n := range finishNames {
		if string(b) == n {
			*f = Finish(i)
		}
	}
	return nil
}

// finishName is one of a dialect's finish reasons, and what it is.
type finishName struct {
	name string
	f    Finish
}

// finishOf maps a dialect's finish reason by its table: none when the
// stream sent none, other when the table does not know it.
func finishOf(r jstr, table []finishName) Finish {
	if r.empty() {
		return FinishNone
	}
	for _, n := range table {
		if r.is(n.name) {
			return n.f
		}
	}
	return FinishOther
}

// The dialects' finish reasons (Gemini's are in gemini.go, with the
// messages they need).
var (
	chatFinishes = []finishName{{"stop", FinishStop}, {"length", FinishLength}, {"tool_calls", FinishToolCalls},
		{"function_call", FinishToolCalls}, {"content_filter", FinishContentFilter}, {"refusal", FinishRefusal}}
	anthropicFinishes = []finishName{{"end_turn", FinishStop}, {"stop_sequence", FinishStop}, {"max_tokens", FinishLength},
		{"model_context_window_exceeded", FinishLength}, {"tool_use", FinishToolCalls}, {"refusal", FinishRefusal}}
	ollamaFinishes = []finishName{{"stop", FinishStop}, {"length", FinishLength}}
	aiSDKFinishes  = []finishName{{"stop", FinishStop}, {"length", FinishLength}, {"tool-calls", FinishToolCalls},
		{"content-filter", FinishContentFilter}, {"error", FinishError}}
	cohereFinishes = []finishName{{"COMPLETE", FinishStop}, {"STOP_SEQUENCE", FinishStop}, {"MAX_TOKENS", FinishLength},
		{"TOOL_CALL", FinishToolCalls}, {"ERROR", FinishError}, {"ERROR_TOXIC", FinishError}, {"ERROR_LIMIT", FinishError}}
	bedrockFinishes = []finishName{{"end_turn", FinishStop}, {"stop_sequence", FinishStop}, {"max_tokens", FinishLength},
		{"model_context_window_exceeded", FinishLength}, {"tool_use", FinishToolCalls},
		{"guardrail_intervened", FinishContentFilter}, {"content_filtered", FinishContentFilter}}
)
