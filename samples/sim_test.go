package samples

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bulkload/bulkload/lead"
	"github.com/bulkload/bulkload/leadsim"
	"github.com/bulkload/bulkload/leadsim/simtest"
	"github.com/bulkload/bulkload/mapper"
	"github.com/bulkload/bulkload/reader"
)

// TestExpectedMatchesSimulator sends every lead of leads.csv, read and
// mapped as bulkload does, to the simulator with createLead and checks the
// answers against leads.expected.csv, which bench/expect computed from the
// documented rules. A failure means the rules and the simulator disagree.
func TestExpectedMatchesSimulator(t *testing.T) {
	ts := simtest.Start(t, leadsim.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	form := url.Values{
		"grant_type": {"client_credentials"}, "client_id": {ts.ClientID}, "client_secret": {ts.ClientSecret},
		"scope": {ts.Scope()},
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	post(ctx, t, ts.TokenURL(), "application/x-www-form-urlencoded", "", []byte(form.Encode()), &tok)

	want := readExpected(t, "leads.expected.csv")
	recs := readRecords(t, "leads.csv", reader.Options{})
	if len(recs) != len(want) {
		t.Fatalf("leads.csv has %d rows, leads.expected.csv %d", len(recs), len(want))
	}
	m := mapper.New(mapper.Options{})
	const doc = `mutation CreateLead($input: LeadInput!) { createLead(input: $input) { id resultCode note partnerLeadId bidValue } }`
	for i, rec := range recs {
		if rec.Err != nil {
			t.Fatalf("leads.csv row %d: %v", i+1, rec.Err)
		}
		in, errs := mapRow(m, rec.Row, &rec.Values)
		if len(errs) > 0 {
			t.Fatalf("leads.csv row %d invalid: %v", rec.Row, errs)
		}
		body, _ := json.Marshal(map[string]any{"query": doc, "variables": map[string]any{"input": in}})
		var resp struct {
			Data struct {
				CreateLead lead.Result `json:"createLead"`
			} `json:"data"`
			Errors []struct{ Message string } `json:"errors"`
		}
		post(ctx, t, ts.URL+"/graphql", "application/json", tok.AccessToken, body, &resp)
		got := resp.Data.CreateLead
		bid := ""
		if got.BidValue != nil {
			bid = *got.BidValue
		}
		w := want[i]
		if len(resp.Errors) > 0 || w[1] != got.PartnerLeadID || w[2] != strconv.Itoa(got.ResultCode) || w[3] != bid ||
			w[4] != strconv.FormatBool(lead.NeedsSubmission(got.ResultCode)) {
			t.Errorf("row %s: simulator answered %s code %d bid %q (errors %v), leads.expected.csv says %s",
				w[0], got.PartnerLeadID, got.ResultCode, bid, resp.Errors, strings.Join(w, ","))
		}
	}
}

func post(ctx context.Context, t *testing.T, url, ctype, token string, body []byte, out any) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", ctype)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		t.Fatalf("POST %s: HTTP %d: %s", url, resp.StatusCode, b)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatalf("POST %s: decode: %v", url, err)
	}
}
