package simproc

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
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

// TestWatchUntilTheUploadEnds: the upload ends at the simulator's second
// read; Watch hands on every read, reports the end and puts the upload's
// error back.
func TestWatchUntilTheUploadEnds(t *testing.T) {
	upDone := make(chan error, 1)
	exit3 := errors.New("exit status 3")
	var reads atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := reads.Add(1)
		if n == 2 {
			upDone <- exit3
		}
		fmt.Fprintf(w, `{"requests": {"createLead": {"200": %d}}}`, 10*n)
	}))
	defer srv.Close()
	var got []int
	var last time.Duration
	up := &Upload{Started: time.Now(), Done: upDone}
	ended := (&Sim{Base: srv.URL}).Watch(srv.Client(), up, time.Hour, func(st Stats, at time.Duration) {
		if at < last {
			t.Errorf("read at %v after one at %v", at, last)
		}
		last = at
		got = append(got, st.Answers().OK)
	})
	if !ended {
		t.Error("Watch: the upload did not end first, want it did")
	}
	if len(got) < 2 || got[0] != 10 || got[1] != 20 {
		t.Errorf("Watch handed on %v, want 10, 20 and maybe more", got)
	}
	select {
	case err := <-upDone:
		if err != exit3 {
			t.Errorf("upDone holds %v, want %v", err, exit3)
		}
	default:
		t.Error("Watch did not put the upload's error back")
	}
}

// TestWatchUntilItsTime: an upload that does not end, a simulator that
// does not answer: Watch returns at its time, having handed nothing on.
func TestWatchUntilItsTime(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	ended := (&Sim{Base: srv.URL}).Watch(srv.Client(), &Upload{Started: time.Now(), Done: make(chan error, 1)}, 600*time.Millisecond, func(Stats, time.Duration) {
		t.Error("Watch handed on a read that failed")
	})
	if ended {
		t.Error("Watch: the upload ended first, want its time ran out")
	}
}
