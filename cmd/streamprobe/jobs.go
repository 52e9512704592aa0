package main

import (
	"os"

	"github.com/streamprobe/streamprobe/config"
	"github.com/streamprobe/streamprobe/internal/builtin"
	"github.com/streamprobe/streamprobe/internal/jobs"
)

// startJobs builds cfg's jobs for a command that runs them now (once,
// check), starting the built-in reference target first when a target
// runs against it; stop closes the jobs' connections, then the target.
func startJobs(cfg *config.Config) (all []jobs.Job, stop func(), err error) {
	builtinURL, closeBuiltin := "", func() {}
	if builtin.Needed(cfg) {
		srv := builtin.New()
		srv.Start()
		builtinURL, closeBuiltin = srv.URL, srv.Close
	}
	all, err = jobs.Build(cfg, builtinURL, os.Getenv)
	if err != nil {
		closeBuiltin()
		return nil, nil, err
	}
	return all, func() {
		for _, j := range all {
			j.Client.HTTP.CloseIdleConnections()
		}
		closeBuiltin()
	}, nil
}
