package ledger

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/bulkload/bulkload/lead"
)

// fill sets every field of in from the values given, in turn (each
// string field takes the next of strs, each *int the next of ints, each
// *bool the next of bools), leaving a field empty where its value is
// the zero one and omit is true. A field of another kind fails the test:
// appendInput must learn it.
func fill(t testing.TB, strs []string, ints []int, bools []bool, omit bool) lead.Input {
	t.Helper()
	var in lead.Input
	v := reflect.ValueOf(&in).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch {
		case f.Kind() == reflect.String:
			f.SetString(strs[i%len(strs)])
		case f.Kind() == reflect.Pointer && f.Type().Elem().Kind() == reflect.Int:
			n := ints[i%len(ints)]
			if omit && n == 0 {
				continue
			}
			f.Set(reflect.ValueOf(&n))
		case f.Kind() == reflect.Pointer && f.Type().Elem().Kind() == reflect.Bool:
			b := bools[i%len(bools)]
			if omit && !b {
				continue
			}
			f.Set(reflect.ValueOf(&b))
		default:
			t.Fatalf("lead.Input.%s is a %s: appendInput does not know it", v.Type().Field(i).Name, f.Type())
		}
	}
	return in
}

func checkAppendInput(t testing.TB, in lead.Input) {
	t.Helper()
	want, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if got := appendInput(nil, &in); !bytes.Equal(got, want) {
		t.Errorf("appendInput(%q) =\n%s\nwant (json.Marshal)\n%s", in.FirstName, got, want)
	}
}

// TestAppendInputIsJSONMarshal: the bytes a content hash is of are
// json.Marshal's, every field of lead.Input set (a field appendInput
// left out would change the hash of every lead that has it), each alone,
// none, and strings that encoding/json escapes.
func TestAppendInputIsJSONMarshal(t *testing.T) {
	odd := []string{
		"", "Ann", `O"Brien\`, "<b>Zoë</b> & co", "line\nbreak\ttab\rcr\bbs\fff", "\x00\x01\x1f\x7f",
		"\u2028\u2029", "bad \xff\xfe utf8 \xc3", "日本語 ☃ 🎉", "\xed\xa0\x80 surrogate", "'single' `back`",
	}
	checkAppendInput(t, lead.Input{})
	checkAppendInput(t, input("Ann"))
	for _, s := range odd {
		checkAppendInput(t, fill(t, []string{s}, []int{-7, 0, 1 << 40}, []bool{true, false}, false))
		checkAppendInput(t, fill(t, []string{s, "", "x"}, []int{0, 42}, []bool{false, true}, true))
	}
	// Each field alone.
	all := fill(t, []string{"v"}, []int{5}, []bool{true}, false)
	v := reflect.ValueOf(all)
	for i := range v.NumField() {
		var in lead.Input
		reflect.ValueOf(&in).Elem().Field(i).Set(v.Field(i))
		checkAppendInput(t, in)
	}
}

// FuzzAppendInput: whatever the strings, numbers and flags, appendInput
// writes json.Marshal's bytes.
func FuzzAppendInput(f *testing.F) {
	f.Add("Ann", "<&>\u2028", "\xff", 0, 42, true, false)
	f.Add("", "", "", -1, 1<<31, false, true)
	f.Fuzz(func(t *testing.T, a, b, c string, n, m int, x, y bool) {
		checkAppendInput(t, fill(t, []string{a, b, c}, []int{n, m}, []bool{x, y}, false))
		checkAppendInput(t, fill(t, []string{c, a, "", b}, []int{m, 0, n}, []bool{y, x}, true))
	})
}
