package leadsim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
)

// TestConcurrentDuplicates sends the same applicant from many goroutines:
// deduplication and registration are one step, so exactly one is processed.
func TestConcurrentDuplicates(t *testing.T) {
	s := newSim(t, Options{Clients: []Client{func() Client { c := DefaultClient(); c.AutoSubmit = true; return c }()}})
	tok := s.defaultToken(t)
	const workers, perWorker = 8, 5
	var wg sync.WaitGroup
	codes := make(chan int, workers*perWorker)
	errs := make(chan error, workers*perWorker)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWorker {
				in := applicant(fmt.Sprintf("cc-%d-%d", w, i), "135790450")
				in["email"] = "same@example.com"
				code, err := createCode(s.URL, tok, in)
				if err != nil {
					errs <- err // t.Fatal belongs to the test goroutine
					continue
				}
				codes <- code
			}
		}()
	}
	wg.Wait()
	close(codes)
	close(errs)
	for err := range errs {
		t.Fatalf("concurrent createLead: %v", err)
	}
	got := map[int]int{}
	for c := range codes {
		got[c]++
	}
	if got[1016] != 1 || got[CodeDuplicate] != workers*perWorker-1 {
		t.Errorf("result codes of %d identical applicants = %v, want one 1016 and the rest 1002", workers*perWorker, got)
	}
	st := s.Stats()
	if st.Submissions != 1 || st.LeadsCreated != workers*perWorker || len(st.CreateCalls) != workers*perWorker {
		t.Errorf("Stats: submissions %d, created %d, distinct leadIds %d; want 1, %d, %d", st.Submissions, st.LeadsCreated, len(st.CreateCalls), workers*perWorker, workers*perWorker)
	}
}

// createCode runs createLead and returns its resultCode; it does not touch
// testing.T, so goroutines may call it.
func createCode(base, token string, input map[string]any) (int, error) {
	b, err := json.Marshal(map[string]any{"query": createDoc, "variables": map[string]any{"input": input}})
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequest(http.MethodPost, base+"/graphql", bytes.NewReader(b))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var out struct {
		Data struct{ CreateLead *wireLead } `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.Data.CreateLead == nil {
		return 0, fmt.Errorf("createLead answered %d without a lead (decode error %v)", resp.StatusCode, err)
	}
	return out.Data.CreateLead.ResultCode, nil
}
