package leadsim

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseWindow(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Window
		ok   bool
	}{
		{"3s:12s", Window{3 * time.Second, 12 * time.Second}, true},
		{"0s:1m", Window{0, time.Minute}, true},
		{" 1m30s:20s ", Window{90 * time.Second, 20 * time.Second}, true},
		{"3s", Window{}, false},
		{"3s:0s", Window{}, false},
		{"-1s:2s", Window{}, false},
		{"3:12s", Window{}, false},
		{"", Window{}, false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseWindow(tc.in)
			if (err == nil) != tc.ok || got != tc.want {
				t.Errorf("ParseWindow(%q) = %v, %v; want %v, ok %v", tc.in, got, err, tc.want, tc.ok)
			}
		})
	}
}

func TestOutageFlags(t *testing.T) {
	var o Options
	fs := flag.NewFlagSet("sim", flag.ContinueOnError)
	o.RegisterFlags(fs)
	if err := fs.Parse([]string{"--token-outage", "3s:12s", "--outage", "30s:20s", "--outage-share", "0.5", "--hang-after", "150", "--hang-mode", "unread"}); err != nil {
		t.Fatal(err)
	}
	if o.TokenOutage != (Window{3 * time.Second, 12 * time.Second}) || o.Outage != (Window{30 * time.Second, 20 * time.Second}) || o.OutageShare != 0.5 || o.HangAfter != 150 || o.HangMode != HangUnread {
		t.Errorf("flags gave TokenOutage %v, Outage %v, OutageShare %v, HangAfter %d, HangMode %q", o.TokenOutage, o.Outage, o.OutageShare, o.HangAfter, o.HangMode)
	}
	for _, bad := range [][]string{{"--outage", "soon"}, {"--hang-mode", "stuck"}} {
		if err := fs.Parse(bad); err == nil {
			t.Errorf("%v was accepted", bad)
		}
	}
	if _, err := New(Options{HangAfter: 1, HangMode: "stuck", SigningKey: testKey(t)}); err == nil {
		t.Error("New accepted HangMode \"stuck\"")
	}
}

// TestTokenOutage: token requests in the window are answered 503
// temporarily_unavailable, before and after it a token is issued.
func TestTokenOutage(t *testing.T) {
	s := newSim(t, Options{TokenOutage: Window{Start: 10 * time.Second, Dur: 5 * time.Second}})
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {DefaultClientID}, "client_secret": {DefaultClientSecret}, "scope": {s.scope()}}
	for _, step := range []struct {
		at   time.Duration // since the start
		want int
	}{{0, 200}, {10 * time.Second, 503}, {14 * time.Second, 503}, {15 * time.Second, 200}} {
		s.Set(s.started.Add(step.at))
		status, body := s.tokenForm(t, form)
		if status != step.want {
			t.Errorf("token at %v: status %d, want %d (%v)", step.at, status, step.want, body)
		}
		if status == 503 && body["error"] != "temporarily_unavailable" {
			t.Errorf("token at %v: error %v, want temporarily_unavailable", step.at, body["error"])
		}
	}
	if n := s.Stats().Rejections[RejectTokenOutage]; n != 2 {
		t.Errorf("%d token outage rejections counted, want 2", n)
	}
}

// TestGraphQLOutage: in the window the lead endpoint answers 502 with an
// HTML page, and nothing is processed; after it, it answers again.
func TestGraphQLOutage(t *testing.T) {
	s := newSim(t, Options{Outage: Window{Start: time.Minute, Dur: 20 * time.Second}})
	tok := s.defaultToken(t)
	s.create(t, tok, applicant("before", "123456789"))
	s.Advance(time.Minute)
	b, _ := json.Marshal(map[string]any{"query": createDoc, "variables": map[string]any{"input": applicant("during", "123456780")}})
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/graphql", strings.NewReader(string(b)))
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(resp.Header.Get("Content-Type"), "text/html") || !strings.HasPrefix(string(body), "<html>") {
		t.Errorf("during the outage: %d %s %q, want 502 with an HTML page", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	s.Advance(20 * time.Second)
	tok = s.defaultToken(t)
	s.create(t, tok, applicant("after", "123456781"))
	st := s.Stats()
	if st.CreateCalls["during"] != 0 || st.Rejections[RejectOutage] != 1 || st.LeadsCreated != 2 {
		t.Errorf("stats: createCalls %v, outage rejections %d, leads %d; want the request in the outage unprocessed", st.CreateCalls, st.Rejections[RejectOutage], st.LeadsCreated)
	}
}

// TestPartialOutage: with OutageShare some requests in the window are
// answered and some get the gateway's 502.
func TestPartialOutage(t *testing.T) {
	s := newSim(t, Options{Outage: Window{Dur: time.Hour}, OutageShare: 0.5, Seed: 3})
	tok := s.defaultToken(t)
	codes := map[int]int{}
	for range 40 {
		req, _ := http.NewRequest(http.MethodPost, s.URL+"/graphql", strings.NewReader(`{"query":"query { __typename }"}`))
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		codes[resp.StatusCode]++
	}
	if codes[200] == 0 || codes[502] == 0 || codes[200]+codes[502] != 40 {
		t.Errorf("answers by status %v: want some 200 and some 502", codes)
	}
}

// TestFirstAnswers: the lead endpoint answers its first GraphQL requests
// with FirstAnswers' statuses and a gateway's HTML page, unprocessed, in
// order, then serves; a status that is not a 5xx is refused, by New and
// by the flag's parse.
func TestFirstAnswers(t *testing.T) {
	s := newSim(t, Options{FirstAnswers: []int{502, 504}})
	tok := s.defaultToken(t)
	var got []int
	for range 3 {
		req, _ := http.NewRequest(http.MethodPost, s.URL+"/graphql", strings.NewReader(`{"query":"query { __typename }"}`))
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got = append(got, resp.StatusCode)
		if resp.StatusCode != 200 && (!strings.Contains(resp.Header.Get("Content-Type"), "text/html") || !strings.HasPrefix(string(body), "<html>")) {
			t.Errorf("answer %d: %s %q, want a gateway's HTML page", resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
	}
	if !slices.Equal(got, []int{502, 504, 200}) {
		t.Errorf("answers %v, want 502, 504, then 200", got)
	}
	if st := s.Stats(); st.Rejections[RejectFirstAnswer] != 2 {
		t.Errorf("first_answer rejections %d, want 2", st.Rejections[RejectFirstAnswer])
	}
	if _, err := New(Options{FirstAnswers: []int{200}, SigningKey: testKey(t)}); err == nil {
		t.Error("New accepted a first answer of 200")
	}
	var o Options
	fs := flag.NewFlagSet("sim", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o.RegisterFlags(fs)
	if err := fs.Parse([]string{"--first-answers", "502, 503,504"}); err != nil || !slices.Equal(o.FirstAnswers, []int{502, 503, 504}) {
		t.Errorf("--first-answers 502, 503,504: %v, %v", o.FirstAnswers, err)
	}
	if err := fs.Parse([]string{"--first-answers", "bad"}); err == nil {
		t.Error("--first-answers bad was accepted")
	}
}

// TestHangUnread: with HangUnread, after N requests the lead endpoint
// holds each request without reading it: nothing is processed, no lead
// created, however long the client waits; Heal closes the held
// connections unanswered, and later requests are answered at once.
func TestHangUnread(t *testing.T) {
	s := newSim(t, Options{HangAfter: 1, HangMode: HangUnread})
	tok := s.defaultToken(t)
	s.create(t, tok, applicant("first", "123456789"))

	b, _ := json.Marshal(map[string]any{"query": createDoc, "variables": map[string]any{"input": applicant("held", "123456780")}})
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/graphql", strings.NewReader(string(b)))
	req.Header.Set("Authorization", "Bearer "+tok)
	held := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			err = errors.New("answered " + resp.Status)
		}
		held <- err
	}()
	for s.Stats().Rejections[RejectHung] == 0 {
		select {
		case err := <-held:
			t.Fatalf("the held request ended before Heal: %v", err)
		case <-time.After(5 * time.Millisecond):
		}
	}
	if st := s.Stats(); st.CreateCalls["held"] != 0 || st.LeadsCreated != 1 {
		t.Errorf("createCalls %v, leads %d: want the held request unread, unprocessed", st.CreateCalls, st.LeadsCreated)
	}
	s.Heal()
	if err := <-held; err == nil || strings.Contains(err.Error(), "answered") {
		t.Errorf("held request after Heal: %v, want its connection closed unanswered", err)
	}
	s.create(t, tok, applicant("after", "123456782"))
	if st := s.Stats(); st.CreateCalls["held"] != 0 || st.LeadsCreated != 2 || st.Rejections[RejectHung] != 1 {
		t.Errorf("createCalls %v, leads %d, hung %d: want the held request never processed, one held", st.CreateCalls, st.LeadsCreated, st.Rejections[RejectHung])
	}
}

// TestHangAfter: after N requests the lead endpoint processes a request
// but holds its answer; a client that gives up gets none (the lead exists
// all the same), one still waiting gets it on Heal, and later requests are
// answered at once.
func TestHangAfter(t *testing.T) {
	// Parallel: a simulator of its own.
	t.Parallel()
	s := newSim(t, Options{HangAfter: 1})
	tok := s.defaultToken(t)
	s.create(t, tok, applicant("first", "123456789"))

	send := func(ctx context.Context, leadID, ssn string) (*http.Response, error) {
		b, _ := json.Marshal(map[string]any{"query": createDoc, "variables": map[string]any{"input": applicant(leadID, ssn)}})
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/graphql", strings.NewReader(string(b)))
		req.Header.Set("Authorization", "Bearer "+tok)
		return http.DefaultClient.Do(req)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	_, err := send(ctx, "abandoned", "123456780")
	cancel()
	if err == nil {
		t.Fatal("a request after HangAfter was answered")
	}
	if st := s.Stats(); st.CreateCalls["abandoned"] != 1 {
		t.Errorf("createCalls %v: want the held request processed", st.CreateCalls)
	}

	type answer struct {
		status int
		err    error
	}
	waiting := make(chan answer, 1)
	go func() {
		resp, err := send(context.Background(), "waiting", "123456781")
		if err != nil {
			waiting <- answer{err: err}
			return
		}
		resp.Body.Close()
		waiting <- answer{status: resp.StatusCode}
	}()
	select {
	case a := <-waiting:
		t.Fatalf("answered before Heal: %+v", a)
	case <-time.After(200 * time.Millisecond):
	}
	resp, err := http.Post(s.URL+"/_sim/heal", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Errorf("POST /_sim/heal: %d, want 204", resp.StatusCode)
	}
	if a := <-waiting; a.err != nil || a.status != http.StatusOK {
		t.Errorf("held request after Heal: %+v, want 200", a)
	}
	s.create(t, tok, applicant("after", "123456782"))
	if n := s.Stats().Rejections[RejectHung]; n != 2 {
		t.Errorf("%d requests held, want 2", n)
	}
}
