package mapper

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// TestGolden maps testdata/rows.txt with one Mapper, as a run would, and
// compares each row's Input (as JSON) or errors with testdata/rows.golden.
// Regenerate with: go test ./mapper -update
func TestGolden(t *testing.T) {
	in, err := os.ReadFile(filepath.Join("testdata", "rows.txt"))
	if err != nil {
		t.Fatal(err)
	}
	m := New(Options{Now: testNow, Hints: flagHints()})
	var out bytes.Buffer
	row := 0
	sc := bufio.NewScanner(bytes.NewReader(in))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		// \xNN in the file stands for a raw byte, to test Latin-1 input.
		if unq, err := strconv.Unquote(`"` + strings.ReplaceAll(line, `"`, `\"`) + `"`); err == nil {
			line = unq
		}
		row++
		v := rowFromFuzz(line)
		lin, errs := mapRow(m, row, &v)
		checkNoLeak(t, &v, errs)
		if len(errs) != 0 {
			fmt.Fprintf(&out, "row %d: invalid: %s\n", row, errs)
			continue
		}
		b, err := json.Marshal(lin)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&out, "row %d: %s\n", row, b)
	}
	golden := filepath.Join("testdata", "rows.golden")
	if *update {
		if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./mapper -update to create it)", err)
	}
	if got := out.String(); got != string(want) {
		t.Errorf("Map(testdata/rows.txt) =\n%s\nwant (testdata/rows.golden)\n%s", got, want)
	}
}
