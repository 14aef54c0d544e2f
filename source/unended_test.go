package source

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/bulkload/bulkload/lead"
)

// unendedInput writes an input of n rows in format ("csv" or "jsonl")
// whose last row is cut inside its last field (loanAmount 48 of 48500),
// as a partner's upload in progress leaves it, and returns its path, its
// bytes and the rest of the last row.
func unendedInput(t *testing.T, format string, n int) (path string, body []byte, rest string) {
	t.Helper()
	var b strings.Builder
	if format == "csv" {
		b.WriteString("leadId,dateOfBirth,termsConsent,loanAmount\n")
	}
	for i := 1; i <= n; i++ {
		switch format {
		case "csv":
			fmt.Fprintf(&b, "L%d,1980-01-02,true,48500\n", i)
		default:
			fmt.Fprintf(&b, `{"leadId":"L%d","dateOfBirth":"1980-01-02","termsConsent":true,"loanAmount":48500}`+"\n", i)
		}
	}
	full := strings.TrimSuffix(b.String(), "\n")
	cut := strings.LastIndex(full, "48500") + 2
	path = filepath.Join(t.TempDir(), "export."+format)
	if err := os.WriteFile(path, []byte(full[:cut]), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, []byte(full[:cut]), full[cut:] + "\n"
}

// appendTo appends s to the file at path: the partner's upload goes on.
func appendTo(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// readAll reads every item of a Source opened on path with cfg, and the
// error that ended it.
func readAll(t *testing.T, path string, cfg Config) ([]Item, error) {
	t.Helper()
	s, err := Open(context.Background(), path, nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var items []Item
	for {
		it, err := s.Next(context.Background())
		if err != nil {
			return items, err
		}
		items = append(items, it)
	}
}

// TestHoldUnended is issue 28 item 5 at the stage that owns it: the last
// record of a file whose bytes end inside it (no line end) while the file
// grows is never handed out, nor written to the rejects file (a cut JSONL
// line is malformed): Next ends with ErrInputIncomplete after the rows
// before it, naming the input and the row. A file that ends without a
// line end but does not grow, one that ends with its line end and grows
// (rows appended), a gzip file, and a Source without HoldUnended give
// every row. The input's last record may be the last of a full batch.
func TestHoldUnended(t *testing.T) {
	for _, format := range []string{"csv", "jsonl"} {
		for _, n := range []int{3, batchSize, batchSize + 1} {
			t.Run(fmt.Sprintf("%s/%d rows", format, n), func(t *testing.T) {
				path, body, rest := unendedInput(t, format, n)
				rejects := filepath.Join(t.TempDir(), "rejects."+format)
				cfg := Config{HoldUnended: true, Limit: int64(len(body)), Rejects: rejects}

				items, err := readAll(t, path, cfg)
				if !errors.Is(err, io.EOF) || len(items) != n || items[n-1].Row.Status != lead.StatusValid && format == "csv" {
					t.Fatalf("a file that does not grow: %d items, %v; want all %d and io.EOF (a last line without its end is a last line)", len(items), err, n)
				}

				appendTo(t, path, rest)
				items, err = readAll(t, path, cfg)
				if !errors.Is(err, ErrInputIncomplete) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), fmt.Sprintf("row %d", n)) {
					t.Errorf("a file that grew: err %v, want ErrInputIncomplete naming %s and row %d", err, path, n)
				}
				if len(items) != n-1 {
					t.Errorf("a file that grew: %d items, want the %d before the cut one", len(items), n-1)
				}
				for _, it := range items {
					if it.Row.Status != lead.StatusValid || it.Input.LoanAmount == nil || *it.Input.LoanAmount != 48500 {
						t.Errorf("row %d = %v %+v, want valid with loanAmount 48500", it.Row.Row, it.Row.Status, it.Input.LoanAmount)
					}
				}
				if b, err := os.ReadFile(rejects); err != nil || bytes.Contains(b, []byte(`48`+"\n")) || bytes.Count(b, []byte("\n")) > 1 {
					t.Errorf("rejects file %q (%v): want no row (the cut one is held, not rejected)", b, err)
				}

				cfg.HoldUnended = false
				if items, err := readAll(t, path, cfg); !errors.Is(err, io.EOF) || len(items) != n {
					t.Errorf("without HoldUnended: %d items, %v; want all %d", len(items), err, n)
				}
			})
		}
	}
}

// TestHoldUnendedNotForEndedOrGzip: rows appended after a last line with
// its line end, and a gzip file, are read as they are.
func TestHoldUnendedNotForEndedOrGzip(t *testing.T) {
	path, body, rest := unendedInput(t, "csv", 3)
	ended := append(bytes.Clone(body), rest...)
	if err := os.WriteFile(path, ended, 0o600); err != nil {
		t.Fatal(err)
	}
	appendTo(t, path, "L9,1980-01-02,true,100\n")
	if items, err := readAll(t, path, Config{HoldUnended: true, Limit: int64(len(ended))}); !errors.Is(err, io.EOF) || len(items) != 3 {
		t.Errorf("rows appended after a line end: %d items, %v; want 3 and io.EOF", len(items), err)
	}

	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(body)
	zw.Close()
	gzPath := filepath.Join(t.TempDir(), "export.csv.gz")
	if err := os.WriteFile(gzPath, gz.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	size := int64(gz.Len())
	appendTo(t, gzPath, "more")
	if items, err := readAll(t, gzPath, Config{HoldUnended: true, Limit: size}); !errors.Is(err, io.EOF) || len(items) != 3 {
		t.Errorf("a gzip file: %d items, %v; want 3 and io.EOF", len(items), err)
	}
}

// FuzzHoldUnended cuts any CSV or JSONL input at any byte and lets the
// file grow past the cut: a Source with HoldUnended reads, up to the cut,
// exactly the rows a Source without it reads, except the last when the
// cut bytes end without a line end (spaces and tabs aside) and something
// was appended: that one is never handed out, and Next ends with
// ErrInputIncomplete instead of io.EOF.
func FuzzHoldUnended(f *testing.F) {
	for _, seed := range []struct {
		jsonl bool
		body  string
		cut   uint
	}{
		{false, "leadId,dateOfBirth,termsConsent,loanAmount\nL1,1980-01-02,true,48500\nL2,1981-02-03,true,48500\n", 75},
		{false, "leadId,dateOfBirth,termsConsent,loanAmount\nL1,1980-01-02,true,48500\nL2,1981-02-03,true,48500\n", 68},
		{false, "leadId,dateOfBirth,note\nL1,1980-01-02,\"two\nlines\"\n", 45},
		{false, "leadId,dateOfBirth\r\nL1,1980-01-02\r\nL2,1980-01-02\r\n", 34},
		{false, "leadId,dateOfBirth\nL1,1980-01-02\n  \t", 36},
		{true, `{"leadId":"L1","dateOfBirth":"1980-01-02","termsConsent":true,"loanAmount":48500}` + "\n" + `{"leadId":"L2","dateOfBirth":"1980-01-02","termsConsent":true,"loanAmount":48500}` + "\n", 160},
		{true, `{"leadId":"L1","dateOfBirth":"1980-01-02"}` + "\n\n", 43},
	} {
		f.Add(seed.jsonl, []byte(seed.body), seed.cut)
	}
	f.Fuzz(func(t *testing.T, jsonl bool, body []byte, cut uint) {
		if len(body) == 0 || len(body) > 1<<16 {
			return
		}
		cut = cut % uint(len(body)+1)
		if cut == 0 {
			return // an empty input; and Limit 0 is no limit
		}
		name := "in.csv"
		if jsonl {
			name = "in.jsonl"
		}
		dir := t.TempDir()
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, body[:cut], 0o600); err != nil {
			t.Fatal(err)
		}
		cfg := Config{Limit: int64(cut), Workers: 1}
		s, err := Open(context.Background(), path, nil, cfg)
		if err != nil {
			return // no header, not this format: nothing to hold
		}
		var want []Item
		for {
			it, err := s.Next(context.Background())
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				s.Close()
				return // the input cannot be read on: not this test's
			}
			want = append(want, it)
		}
		s.Close()

		appended := len(body) > int(cut)
		if appended {
			appendTo(t, path, string(body[cut:]))
		}
		got, err := readAll(t, path, Config{Limit: int64(cut), Workers: 1, HoldUnended: true})
		tail := bytes.TrimRight(body[:cut], " \t")
		held := appended && len(want) > 0 && len(tail) > 0 && tail[len(tail)-1] != '\n' && tail[len(tail)-1] != '\r'
		switch {
		case held && !errors.Is(err, ErrInputIncomplete):
			t.Fatalf("cut at %d of %q: err %v, want ErrInputIncomplete", cut, body, err)
		case held:
			want = want[:len(want)-1]
		case !errors.Is(err, io.EOF):
			t.Fatalf("cut at %d of %q: err %v, want io.EOF (nothing held)", cut, body, err)
		}
		if len(got) != len(want) {
			t.Fatalf("cut at %d of %q: %d rows, want %d", cut, body, len(got), len(want))
		}
		for i := range got {
			if got[i].Row.Row != want[i].Row.Row || got[i].Row.Status != want[i].Row.Status || !reflect.DeepEqual(got[i].Input, want[i].Input) {
				t.Fatalf("cut at %d of %q: row %d = %+v, want %+v", cut, body, i+1, got[i], want[i])
			}
		}
	})
}
