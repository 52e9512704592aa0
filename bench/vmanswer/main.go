// Command vmanswer is a stand-in for VictoriaMetrics' query API that
// answers every instant query with -series series, streamed, for
// measuring `report -vm` on a large answer: labels over -targets targets
// (chat-a0...) x 3 regions x the three samples, each with one of 200
// vmrange buckets, an outcome, a drill and a verdict, so the report folds
// them into a bounded number of classes. It writes the config naming the
// targets with -config.
//
//	go run ./bench/vmanswer -series 1000000 -config /tmp/vm.toml &
//	/usr/bin/time -v streamprobe report -config /tmp/vm.toml -vm http://127.0.0.1:18428 > /dev/null
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math"
	"net/http"
	"os"
	"strings"
)

func main() {
	series := flag.Int("series", 1_000_000, "series in every answer")
	targets := flag.Int("targets", 20, "targets")
	listen := flag.String("listen", "127.0.0.1:18428", "address to serve on")
	cfgPath := flag.String("config", "", "also write the config naming the targets to this file")
	flag.Parse()
	names := make([]string, max(*targets, 1))
	for i := range names {
		names[i] = fmt.Sprintf("chat-%c%d", 'a'+i%26, i/26)
	}
	if *cfgPath != "" {
		var b strings.Builder
		for _, t := range names {
			fmt.Fprintf(&b, "[[target]]\nname = %q\nurl = \"http://api.example\"\n", t)
		}
		if err := os.WriteFile(*cfgPath, []byte(b.String()), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "vmanswer:", err)
			os.Exit(1)
		}
	}
	ranges := make([]string, 200)
	for i := range ranges {
		lo := 0.001 * math.Pow(10, float64(i)/18)
		ranges[i] = fmt.Sprintf("%.3e...%.3e", lo, lo*math.Pow(10, 1.0/18))
	}
	samples := []string{"short", "long", "cancel"}
	http.HandleFunc("/api/v1/query", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		bw := bufio.NewWriterSize(w, 64<<10)
		defer bw.Flush()
		bw.WriteString(`{"status":"success","data":{"resultType":"vector","result":[`)
		for i := range *series {
			if i > 0 {
				bw.WriteByte(',')
			}
			fmt.Fprintf(bw, `{"metric":{"region":"region-%d","host":"edge-%d","target":%q,"sample":%q,"outcome":"success","vmrange":%q,"drill":"drop","verdict":"pass","failed":"false"},"value":[1700000000,"1"]}`,
				i%3, i%7, names[i%len(names)], samples[i%3], ranges[i%len(ranges)])
		}
		bw.WriteString(`]}}`)
	})
	fmt.Fprintf(os.Stderr, "vmanswer: %d series an answer on http://%s\n", *series, *listen)
	if err := http.ListenAndServe(*listen, nil); err != nil {
		fmt.Fprintln(os.Stderr, "vmanswer:", err)
		os.Exit(1)
	}
}
