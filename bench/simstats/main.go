// Command simstats fetches a running simulator's counters (GET
// BASE/_sim/stats) and prints the figures the upload benchmark reports, as
// one line of key=value: GraphQL calls by operation, 429 answers, tokens
// issued, leads created, submissions, and the most createLead calls any one
// leadId received (1 means no lead was sent twice).
//
//	simstats -url http://127.0.0.1:18787
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// stats is the part of leadsim's /_sim/stats JSON read here.
type stats struct {
	Requests     map[string]map[string]int `json:"requests"`
	TokensIssued int                       `json:"tokensIssued"`
	CreateCalls  map[string]int            `json:"createCalls"`
	LeadsCreated int                       `json:"leadsCreated"`
	Submissions  int                       `json:"submissions"`
	Rejections   map[string]int            `json:"rejections"`
}

// Summary is the figures printed.
type Summary struct {
	GraphQLCalls, CreateCalls, SubmitCalls, Status429 int
	TokensIssued, LeadsCreated, Submissions           int
	MaxCreatePerLead                                  int
}

// Line formats s as key=value.
func (s Summary) Line() string {
	return fmt.Sprintf("graphql_calls=%d create_calls=%d submit_calls=%d status_429=%d tokens_issued=%d leads_created=%d submissions=%d max_create_per_lead=%d",
		s.GraphQLCalls, s.CreateCalls, s.SubmitCalls, s.Status429, s.TokensIssued, s.LeadsCreated, s.Submissions, s.MaxCreatePerLead)
}

func summarize(st stats) Summary {
	var s Summary
	for op, byStatus := range st.Requests {
		for status, n := range byStatus {
			if status == "429" {
				s.Status429 += n
			}
			switch op {
			case "token":
				continue
			case "createLead":
				s.CreateCalls += n
			case "submitLead":
				s.SubmitCalls += n
			}
			s.GraphQLCalls += n
		}
	}
	s.TokensIssued, s.LeadsCreated, s.Submissions = st.TokensIssued, st.LeadsCreated, st.Submissions
	for _, n := range st.CreateCalls {
		s.MaxCreatePerLead = max(s.MaxCreatePerLead, n)
	}
	return s
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("simstats", flag.ContinueOnError)
	fs.SetOutput(stderr)
	base := fs.String("url", "http://127.0.0.1:8787", "simulator base URL")
	timeout := fs.Duration("timeout", 10*time.Second, "time limit of the request")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	st, err := fetch(ctx, *base+"/_sim/stats")
	if err != nil {
		fmt.Fprintf(stderr, "simstats: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, summarize(st).Line())
	return 0
}

func fetch(ctx context.Context, url string) (stats, error) {
	var st stats
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return st, fmt.Errorf("build request for %s: %w", url, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return st, fmt.Errorf("get %s: %w (is the simulator running?)", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("get %s: HTTP %d", url, resp.StatusCode)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(&st); err != nil {
		return st, fmt.Errorf("decode %s: %w", url, err)
	}
	return st, nil
}
