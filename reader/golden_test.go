package reader

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// goldenOptions are the options each golden input is read with; inputs not
// listed use the zero Options.
func goldenOptions() map[string]Options {
	return map[string]Options{
		"excel_cp1252_semicolon.csv": {Encoding: "windows-1252"},
		"mapped.csv": {Columns: map[string]string{
			"Cust First": "firstName", "cust_last": "lastName", "BIRTH": "dateOfBirth", "Soc": "socialSecurityNumber",
			"Consent Cert": "trustedformCertificateID", "Ext ID": "leadId", "internal notes": "-",
		}},
	}
}

// TestGolden reads each input under testdata/golden and compares the records,
// the unknown columns and the rejects file (every record written to it) with
// the .golden file next to the input. go test ./reader -update rewrites them.
func TestGolden(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join("testdata", "golden", "*"))
	if err != nil {
		t.Fatal(err)
	}
	opts := goldenOptions()
	n := 0
	for _, path := range inputs {
		if strings.HasSuffix(path, ".golden") {
			continue
		}
		n++
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			in, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			got := goldenDump(t, in, name, opts[name])
			want, err := os.ReadFile(path + ".golden")
			if *update {
				if err := os.WriteFile(path+".golden", got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if err != nil {
				t.Fatalf("%v (run go test ./reader -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("read(%s) =\n%s\nwant\n%s", name, got, want)
			}
		})
	}
	if n == 0 {
		t.Fatal("no golden inputs under testdata/golden")
	}
}

func goldenDump(t *testing.T, in []byte, name string, opts Options) []byte {
	t.Helper()
	recs, rejects := rejectAll(t, in, name, opts)
	_, unknown, err := readAll(t, in, name, opts)
	var b bytes.Buffer
	fmt.Fprintf(&b, "# records of %s\n", name)
	for _, rec := range recs {
		fmt.Fprintf(&b, "%s\n    raw: %q\n", describe(rec), rec.Raw)
	}
	fmt.Fprintf(&b, "# unknown columns\n%q\n", unknown)
	fmt.Fprintf(&b, "# run error\n%v\n", err)
	fmt.Fprintf(&b, "# rejects file (every record rejected), quoted\n")
	for _, line := range strings.SplitAfter(string(rejects), "\n") {
		if line != "" {
			fmt.Fprintf(&b, "%q\n", line)
		}
	}
	return b.Bytes()
}
