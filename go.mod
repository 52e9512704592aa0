module github.com/streamprobe/streamprobe

go 1.26.8

require (
	github.com/r3labs/sse/v2 v2.10.0
	go.uber.org/goleak v1.3.0
)

require (
	github.com/pelletier/go-toml/v2 v2.4.3 // indirect
	github.com/robfig/cron/v3 v3.0.1 // indirect
	golang.org/x/net v0.0.0-20191116160921-f9c825593386 // indirect
	gopkg.in/cenkalti/backoff.v1 v1.1.0 // indirect
)
