package daemon

import (
	"fmt"

	"github.com/go-co-op/gocron/v2"

	"github.com/streamprobe/streamprobe/config"
	"github.com/streamprobe/streamprobe/internal/jobs"
)

// Check builds what Run builds from cfg before anything starts: the jobs,
// their secrets resolved, and each job's schedule, on a scheduler that is
// never started. validate and run both call it after config.Load (which
// checks the listen address, the results log and the schedules), so a
// config that validate accepts is one that run starts; only a listen port
// already taken is left to run.
func Check(cfg *config.Config, getenv func(string) string) ([]jobs.Job, error) {
	jobs, err := jobs.Build(cfg, "http://127.0.0.1:0", getenv)
	if err != nil {
		return nil, err
	}
	s, err := gocron.NewScheduler()
	if err != nil {
		return nil, fmt.Errorf("scheduler: %w", err)
	}
	defer s.Shutdown()
	d := &Daemon{}
	now := d.clock().Now()
	for _, j := range jobs {
		if _, err := d.schedule(s, j, 1, nil, fired{}, false, now); err != nil {
			return nil, fmt.Errorf("job %s: %w", j.Name, err)
		}
	}
	return jobs, nil
}
