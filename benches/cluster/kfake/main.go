// A franz-go kfake cluster of one broker with kfake's default settings, for the cluster
// benchmark (benches/cluster/run.sh). kfake's own main (main.go in its module, build tag
// `none`) starts three brokers and switches on Go's block and mutex profiling, which costs
// CPU on every lock; this one starts what the benchmark compares and nothing else.
//
//	kfake-bench -port 9092   # prints "kfake-bench: bootstrap 127.0.0.1:9092" on stderr
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/twmb/franz-go/pkg/kfake"
)

func main() {
	port := flag.Int("port", 9092, "the broker's port on 127.0.0.1")
	flag.Parse()

	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(*port))
	if err != nil {
		fmt.Fprintf(os.Stderr, "kfake-bench: %v\n", err)
		os.Exit(1)
	}
	defer cluster.Close()
	fmt.Fprintf(os.Stderr, "kfake-bench: bootstrap %s\n", cluster.ListenAddrs()[0])

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	<-signals
}
