package lead

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"testing"
)

func TestFieldNamesRoundTrip(t *testing.T) {
	for f := Field(0); f < NumFields; f++ {
		got, ok := FieldByName(f.String())
		if !ok || got != f {
			t.Errorf("FieldByName(%q) = %v, %v, want %v, true", f.String(), got, ok, f)
		}
	}
	if _, ok := FieldByName("nope"); ok {
		t.Error(`FieldByName("nope") found a field`)
	}
}

func TestInputNeverPrintsSSNOrDOB(t *testing.T) {
	in := Input{DateOfBirth: "1980-02-29", SocialSecurityNumber: "123456789", LeadID: "L-1"}
	var logBuf bytes.Buffer
	slog.New(slog.NewJSONHandler(&logBuf, nil)).Info("lead", "lead", in)
	slog.New(slog.NewTextHandler(&logBuf, nil)).Info("lead", "lead", in)
	outputs := map[string]string{
		"%v":   fmt.Sprintf("%v", in),
		"%+v":  fmt.Sprintf("%+v", in),
		"%#v":  fmt.Sprintf("%#v", in),
		"%s":   fmt.Sprintf("%s", in),
		"ptr":  fmt.Sprintf("%v", &in),
		"slog": logBuf.String(),
	}
	for name, out := range outputs {
		if strings.Contains(out, "123456789") || strings.Contains(out, "1980-02-29") {
			t.Errorf("%s leaks a sensitive value: %s", name, out)
		}
		if !strings.Contains(out, "L-1") {
			t.Errorf("%s lost the leadId: %s", name, out)
		}
	}
	// The wire encoding, and only it, carries the real values.
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "123456789") {
		t.Errorf("json.Marshal lost the SSN: %s", b)
	}
}

func TestInputOmitsAbsentFields(t *testing.T) {
	b, err := json.Marshal(Input{DateOfBirth: "1980-01-01"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"dateOfBirth":"1980-01-01"}`; got != want {
		t.Errorf("json.Marshal(Input) = %s, want %s", got, want)
	}
}

func TestNeedsSubmission(t *testing.T) {
	for code, want := range map[int]bool{1012: false, 1013: true, 1015: true, 1017: true, 1018: false, 1020: false} {
		if got := NeedsSubmission(code); got != want {
			t.Errorf("NeedsSubmission(%d) = %v, want %v", code, got, want)
		}
	}
}

// TestFieldTables checks that lead.Input's JSON keys are the Field names in
// Field order, every field but LeadSourceID (never sent), so the two
// spellings of the LeadInput fields cannot drift apart.
func TestFieldTables(t *testing.T) {
	typ := reflect.TypeFor[Input]()
	if typ.NumField() != int(NumFields)-1 {
		t.Fatalf("Input has %d fields, want %d (every Field but LeadSourceID)", typ.NumField(), NumFields-1)
	}
	if LeadSourceID != NumFields-1 {
		t.Fatalf("LeadSourceID = %d, want the last Field (%d)", LeadSourceID, NumFields-1)
	}
	for i := range typ.NumField() {
		key, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if want := Field(i).String(); key != want {
			t.Errorf("Input field %d (%s) has JSON key %q, want %q", i, typ.Field(i).Name, key, want)
		}
	}
	seen := map[string]bool{}
	for f := Field(0); f < NumFields; f++ {
		if seen[f.String()] || strings.HasPrefix(f.String(), "Field(") {
			t.Errorf("Field %d has name %q: want a name of its own", f, f)
		}
		seen[f.String()] = true
	}
}
