// Command floor is the parse-only floor of bulkload validate: it reads a
// CSV file with encoding/csv (ReuseRecord, no mapping, no output) and counts
// its data rows. What validate costs beyond this is the price of mapping,
// validation and the results file.
//
//	go run ./bench/floor bench/out/leads-1000000.csv
//
// It prints one line of key=value: file, rows, elapsed_s, rows_per_s.
package main

import (
	"bufio"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("floor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	comma := fs.String("comma", ",", "field delimiter (one character)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 || len([]rune(*comma)) != 1 {
		fmt.Fprintln(stderr, "usage: floor [-comma C] FILE.csv")
		return 2
	}
	name := fs.Arg(0)
	f, err := os.Open(name)
	if err != nil {
		fmt.Fprintf(stderr, "floor: %v\n", err)
		return 1
	}
	defer f.Close()
	start := time.Now()
	rows, err := count(f, []rune(*comma)[0])
	elapsed := time.Since(start)
	if err != nil {
		fmt.Fprintf(stderr, "floor: %s: %v\n", name, err)
		return 1
	}
	fmt.Fprintf(stdout, "file=%s rows=%d elapsed_s=%.3f rows_per_s=%.0f\n",
		name, rows, elapsed.Seconds(), float64(rows)/max(elapsed.Seconds(), 1e-9))
	return 0
}

// count returns the number of data rows (header excluded). Malformed rows
// are counted and skipped, as the real reader would.
func count(r io.Reader, comma rune) (int, error) {
	cr := csv.NewReader(bufio.NewReaderSize(r, 1<<20))
	cr.Comma = comma
	cr.ReuseRecord = true
	cr.FieldsPerRecord = -1
	rows := -1 // the header
	for {
		_, err := cr.Read()
		if err == io.EOF {
			return max(rows, 0), nil
		}
		var pe *csv.ParseError
		if err != nil && !errors.As(err, &pe) {
			return rows, err
		}
		rows++
	}
}
