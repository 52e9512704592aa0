package daemon

import (
	"context"
	"sync"
)

// slots is the host's one concurrency limit. It lives as long as the
// daemon: a reload resizes it, and the runs of every config share it, so
// no number of reloads can let more than max_concurrent runs start.
type slots struct {
	mu    sync.Mutex
	limit int
	used  int
	wake  chan struct{} // closed when a slot may have come free
}

func newSlots(n int) *slots { return &slots{limit: n, wake: make(chan struct{})} }

// tryAcquire takes a slot if one is free now.
func (s *slots) tryAcquire() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.used >= s.limit {
		return false
	}
	s.used++
	return true
}

// acquire waits for a slot; it reports false when ctx ended first.
func (s *slots) acquire(ctx context.Context) bool {
	for {
		if s.tryAcquire() {
			return true
		}
		s.mu.Lock()
		wake := s.wake
		free := s.used < s.limit
		s.mu.Unlock()
		if free {
			continue
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return false
		}
	}
}

// release gives a slot back.
func (s *slots) release() {
	s.mu.Lock()
	s.used--
	s.broadcastLocked()
	s.mu.Unlock()
}

// resize sets the limit. Runs holding a slot keep it: after a shrink, no
// new run starts until the runs in flight are under the new limit.
func (s *slots) resize(n int) {
	s.mu.Lock()
	s.limit = n
	s.broadcastLocked()
	s.mu.Unlock()
}

func (s *slots) broadcastLocked() {
	close(s.wake)
	s.wake = make(chan struct{})
}

// jobState is where a job's current run is.
type jobState int

const (
	jobIdle    jobState = iota
	jobWaiting          // due, waiting for a free slot
	jobRunning          // holding a slot
)

// busyJobs is the "a job never overlaps itself" guarantee, keyed by the
// job's name (target/sample or target/drill), not by scheduler: a run of
// the config before a reload still blocks the same job of the new one.
type busyJobs struct {
	mu sync.Mutex
	m  map[string]jobState
}

// claim marks job as running; it fails, with the state of the run in
// the way, when a run of job is already waiting or running.
func (b *busyJobs) claim(job string) (jobState, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if st := b.m[job]; st != jobIdle {
		return st, false
	}
	if b.m == nil {
		b.m = map[string]jobState{}
	}
	b.m[job] = jobRunning
	return jobRunning, true
}

func (b *busyJobs) set(job string, st jobState) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if st == jobIdle {
		delete(b.m, job)
		return
	}
	b.m[job] = st
}
