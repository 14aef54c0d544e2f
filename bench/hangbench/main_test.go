package main

import (
	"strings"
	"testing"
	"time"
)

func TestCountStatuses(t *testing.T) {
	in := "row,leadId,status,resultCode,note\n1,A,processed,1002,\n2,B,submitted,1013,\"a, b\"\n3,C,created,1014,\n4,D,submitted,1015,\n"
	got, err := countStatuses(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if got["processed"] != 1 || got["submitted"] != 2 || got["created"] != 1 || got["duplicate"] != 1 || len(got) != 4 {
		t.Errorf("countStatuses = %v, want processed 1, submitted 2, created 1, duplicate 1", got)
	}
	if _, err := countStatuses(strings.NewReader("row,leadId\n1,A\n")); err == nil {
		t.Error("a results file without a status column was read")
	}
}

func TestResultOK(t *testing.T) {
	c := config{timeout: 5 * time.Second, wait: 30 * time.Second}
	good := result{exit: 4, toEnd: 40 * time.Second, first: map[string]int{"processed": 90}, resumeExit: 0,
		final: map[string]int{"processed": 500, "submitted": 500}, rows: 1000, leadsCreated: 1000, submissions: 500}
	if !good.ok(c) {
		t.Errorf("%+v is not ok", good)
	}
	for name, mod := range map[string]func(*result){
		"late":              func(r *result) { r.toEnd = 51 * time.Second },
		"exit 130":          func(r *result) { r.exit = 130 },
		"a failed row":      func(r *result) { r.first = map[string]int{"failed": 1} },
		"a lead twice":      func(r *result) { r.leadsCreated = 1001 },
		"submitted twice":   func(r *result) { r.submissions = 501 },
		"resume unfinished": func(r *result) { r.final = map[string]int{"processed": 500, "submitted": 499} },
	} {
		r := good
		mod(&r)
		if r.ok(c) {
			t.Errorf("%s: %+v is ok", name, r)
		}
	}
}
