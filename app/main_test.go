package app

import (
	"flag"
	"os"
	"testing"
)

// TestMain runs up to 8 of app's tests at once (-test.parallel 8 unless
// given), as cmd/bulkload's: most of them wait on a simulator, not on the
// CPU (the default, GOMAXPROCS, is 2 on a 2-CPU CI machine). The tests
// whose figures come from the clock stay serial, and serial tests run
// alone, before the parallel ones.
func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", "8")
	}
	os.Exit(m.Run())
}
