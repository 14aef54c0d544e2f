package simproc

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestStatsAndAnswers(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/_sim/stats" || r.URL.RawQuery != "requests" {
			http.Error(w, "want GET /_sim/stats?requests, got "+r.URL.String(), http.StatusNotFound)
			return
		}
		w.Write([]byte(`{"requests": {
			"token": {"200": 7, "429": 5, "503": 3},
			"createLead": {"200": 40, "429": 6, "503": 2, "500": 1},
			"submitLead": {"200": 30, "204": 1, "400": 4}},
			"capacity": {"admitted": 70, "queueWaitSeconds": 1.5, "inFlight": 9}}`))
	}))
	defer srv.Close()
	st, err := (&Sim{Base: srv.URL}).Stats(srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	if c := st.Capacity; c.Admitted != 70 || c.QueueWaitSeconds != 1.5 || c.InFlight != 9 {
		t.Errorf("Capacity = %+v, want admitted 70, queue wait 1.5 s, 9 in flight", c)
	}
	// The token endpoint's answers are not the service's.
	if got, want := st.Answers(), (Answers{OK: 71, Throttled: 6, Shed: 2, Other: 5}); got != want {
		t.Errorf("Answers() = %+v, want %+v", got, want)
	}
}

func TestStatsRefusesWhatIsNotJSON(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("<html>busy</html>"))
	}))
	defer srv.Close()
	if _, err := (&Sim{Base: srv.URL}).Stats(srv.Client()); err == nil {
		t.Error("Stats of an HTML page: no error")
	}
}
