// Command collector is the OpenTelemetry Collector's OTLP receiver
// (go.opentelemetry.io/collector/receiver/otlpreceiver, the component a
// collector's `receivers: otlp:` runs) as a test peer: it receives OTLP
// over HTTP (protobuf or JSON) on -otlp and keeps every metric it was
// sent, which GET /received on -api answers as the collector's own OTLP
// JSON (pmetric.JSONMarshaler), one export request per line. It prints
// "ready <otlp addr> <api addr>" once both listen, and runs until its
// stdin closes.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configgrpc"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
)

func main() {
	otlpAddr := flag.String("otlp", "127.0.0.1:0", "OTLP/HTTP listen address")
	apiAddr := flag.String("api", "127.0.0.1:0", "the address of GET /received")
	flag.Parse()
	if err := run(*otlpAddr, *apiAddr); err != nil {
		fmt.Fprintln(os.Stderr, "collector:", err)
		os.Exit(1)
	}
}

func run(otlpAddr, apiAddr string) error {
	// The receiver binds its own listener; pick a free port for it first.
	if otlpAddr == "127.0.0.1:0" {
		ln, err := net.Listen("tcp", otlpAddr)
		if err != nil {
			return err
		}
		otlpAddr = ln.Addr().String()
		ln.Close()
	}
	var mu sync.Mutex
	var lines [][]byte
	var marshal pmetric.JSONMarshaler
	sink, err := consumer.NewMetrics(func(_ context.Context, md pmetric.Metrics) error {
		b, err := marshal.MarshalMetrics(md)
		if err != nil {
			return err
		}
		mu.Lock()
		lines = append(lines, b)
		mu.Unlock()
		return nil
	})
	if err != nil {
		return err
	}
	f := otlpreceiver.NewFactory()
	cfg := f.CreateDefaultConfig().(*otlpreceiver.Config)
	cfg.Protocols.GRPC = configoptional.None[configgrpc.ServerConfig]()
	hc := cfg.Protocols.HTTP.GetOrInsertDefault()
	hc.ServerConfig.NetAddr.Endpoint = otlpAddr
	cfg.Protocols.HTTP = configoptional.Some(*hc)
	ctx := context.Background()
	r, err := f.CreateMetrics(ctx, receivertest.NewNopSettings(f.Type()), cfg, sink)
	if err != nil {
		return err
	}
	if err := r.Start(ctx, componenttest.NewNopHost()); err != nil {
		return err
	}
	defer r.Shutdown(ctx)
	api, err := net.Listen("tcp", apiAddr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /received", func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		w.Header().Set("Content-Type", "application/x-ndjson")
		for _, l := range lines {
			w.Write(l)
			w.Write([]byte("\n"))
		}
	})
	go http.Serve(api, mux)
	fmt.Printf("ready %s %s\n", otlpAddr, api.Addr())
	io.Copy(io.Discard, os.Stdin)
	return nil
}
