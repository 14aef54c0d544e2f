// Package samples holds bulkload's sample input files (see README.md here)
// and the test that generates them: `go test ./samples -update` rewrites
// every file from the Go source in this directory, and `go test ./samples`
// fails when a file on disk no longer matches, so no sample, and above all
// no expected-outcome file, is ever typed by hand.
//
// leads.expected.csv is computed by bench/expect from the simulator's
// documented rules, not by leadsim's code, so an end-to-end test that
// compares bulkload upload's results with it checks two implementations
// against each other.
package samples
