package probe

import (
	"crypto/tls"
	"net/http"

	"github.com/streamprobe/streamprobe/resumeclient"
)

// NewClient returns the client for target t: one transport of its own
// (proxies from the environment, as net/http's default), a fresh
// connection for every request unless t.KeepAlive, TLS verification off
// only for t.InsecureSkipVerify, and t's event size limit. Build it once
// per target, not per run; CloseIdleConnections on its transport when the
// target goes away.
func NewClient(t Target) *resumeclient.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	// Every run pays DNS, TCP and TLS as a user's first request does, and
	// one run's connection never decides what the next one measures.
	tr.DisableKeepAlives = !t.KeepAlive
	if t.InsecureSkipVerify {
		if tr.TLSClientConfig == nil {
			tr.TLSClientConfig = &tls.Config{}
		}
		tr.TLSClientConfig.InsecureSkipVerify = true
	}
	return &resumeclient.Client{HTTP: &http.Client{Transport: tr}, MaxEventSize: t.MaxEventSize}
}
