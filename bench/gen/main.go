// Command gen writes a realistic partner lead file of N rows (CSV or JSONL)
// for the benchmarks: what bulkload validate and upload are measured on.
//
// It streams: memory stays constant whatever N is. Rows are a function of
// -seed and the row index (see package synth), so a file is reproducible;
// leadIds, SSNs (up to synth.MaxRows rows), e-mails and phones never
// repeat within a file.
//
//	go run ./bench/gen -n 1000000 -o bench/out/leads-1000000.csv
//	go run ./bench/gen -n 10000 -invalid 0 -format jsonl > leads.jsonl
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/bulkload/bulkload/bench/synth"
	"github.com/bulkload/bulkload/lead"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// config is the parsed command line.
type config struct {
	n       int
	format  string
	out     string
	quiet   bool
	options synth.Options
}

func parse(args []string, stderr io.Writer) (config, error) {
	c := config{options: synth.Defaults()}
	var style string
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&c.n, "n", 1_000_000, "number of data rows")
	fs.StringVar(&c.format, "format", "csv", "output format: csv or jsonl")
	fs.StringVar(&c.out, "o", "-", "output file; - is standard output")
	fs.Int64Var(&c.options.Seed, "seed", c.options.Seed, "seed: the same seed and -n give the same file")
	fs.Float64Var(&c.options.Invalid, "invalid", c.options.Invalid, "fraction of rows with one realistic error")
	fs.Float64Var(&c.options.Qualified, "qualified", c.options.Qualified, "fraction of rows whose SSN qualifies (score 600-850, spread over codes 1013-1017)")
	fs.Float64Var(&c.options.NoSSN, "nossn", c.options.NoSSN, "fraction of rows without an SSN (the rest score below 600)")
	fs.StringVar(&style, "style", "mixed", "value formats: mixed (as real exports) or clean (the interface's own)")
	fs.StringVar(&c.options.LeadIDPrefix, "prefix", "GEN-", "leadId prefix; the row number follows")
	fs.BoolVar(&c.quiet, "q", false, "do not print the summary line on stderr")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q: gen takes flags only", fs.Arg(0))
	}
	switch style {
	case "mixed":
		c.options.Style = synth.Mixed
	case "clean":
		c.options.Style = synth.Clean
	default:
		return c, fmt.Errorf("-style %q: use mixed or clean", style)
	}
	if c.format != "csv" && c.format != "jsonl" {
		return c, fmt.Errorf("-format %q: use csv or jsonl", c.format)
	}
	if c.n < 0 {
		return c, errors.New("-n must not be negative")
	}
	if c.n > synth.MaxRows {
		return c, fmt.Errorf("-n %d: SSNs are unique only up to %d rows; split the file", c.n, synth.MaxRows)
	}
	return c, nil
}

func run(args []string, stdout, stderr io.Writer) int {
	c, err := parse(args, stderr)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, "gen:", err)
		}
		return 2
	}
	out := stdout
	var f *os.File
	if c.out != "-" {
		f, err = os.Create(c.out)
		if err != nil {
			fmt.Fprintf(stderr, "gen: create output: %v\n", err)
			return 1
		}
		out = f
	}
	start := time.Now()
	invalid, err := generate(out, c)
	if f != nil {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("close %s: %w", c.out, cerr)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "gen: %v\n", err)
		return 1
	}
	if !c.quiet {
		fmt.Fprintf(stderr, "gen: rows=%d invalid=%d format=%s seed=%d elapsed_s=%.2f\n",
			c.n, invalid, c.format, c.options.Seed, time.Since(start).Seconds())
	}
	return 0
}

// rowWriter is what both synth writers offer.
type rowWriter interface {
	Write(*lead.Values) error
	Flush() error
}

// generate writes c.n rows to w and returns how many carry a flaw.
func generate(w io.Writer, c config) (int, error) {
	g, err := synth.New(c.options)
	if err != nil {
		return 0, err
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	var rw rowWriter
	if c.format == "jsonl" {
		rw = synth.NewJSONLWriter(bw)
	} else {
		cw := synth.NewCSVWriter(bw)
		if err := cw.WriteHeader(); err != nil {
			return 0, fmt.Errorf("write header: %w", err)
		}
		rw = cw
	}
	var v lead.Values
	invalid := 0
	for i := range c.n {
		if g.Row(i, &v) != synth.NoFlaw {
			invalid++
		}
		if err := rw.Write(&v); err != nil {
			return invalid, fmt.Errorf("write row %d: %w", i+1, err)
		}
	}
	if err := rw.Flush(); err != nil {
		return invalid, fmt.Errorf("flush: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return invalid, fmt.Errorf("flush: %w", err)
	}
	return invalid, nil
}
