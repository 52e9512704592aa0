package dialect

// What the end-to-end tests (package dialect_test) read of a dialect's
// own request: the bodies the reference target logged, decoded as the
// dialect wrote them, and the URLs it builds.
type (
	AISDKRequest           = aiSDKRequest
	AISDKMessage           = aiSDKMessage
	AISDKPart              = aiSDKPart
	GeminiRequest          = geminiRequest
	OllamaRequest          = ollamaRequest
	TextRequest            = textRequest
	CohereRequest          = cohereRequest
	BedrockAnthropic       = bedrockAnthropic
	VertexAnthropicRequest = vertexAnthropicRequest
)

var (
	GeminiURL = geminiURL
	OllamaURL = ollamaURL
	CohereURL = cohereURL
	VertexURL = vertexURL
)
