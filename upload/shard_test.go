package upload

import (
	"errors"
	"fmt"
	"testing"
)

func TestParseShard(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, tc := range []struct {
		name, in string
		env      map[string]string
		want     Shard
		ok       bool
	}{
		{"first of four", "0/4", nil, Shard{0, 4}, true},
		{"last of four", "3/4", nil, Shard{3, 4}, true},
		{"one shard", "0/1", nil, Shard{0, 1}, true},
		{"K equals N", "4/4", nil, Shard{}, false},
		{"negative", "-1/4", nil, Shard{}, false},
		{"zero shards", "0/0", nil, Shard{}, false},
		{"no slash", "2", nil, Shard{}, false},
		{"words", "a/b", nil, Shard{}, false},
		{"auto", "auto", map[string]string{"JOB_COMPLETION_INDEX": "2", "JOB_COMPLETIONS": "3"}, Shard{2, 3}, true},
		{"auto without completions", "auto", map[string]string{"JOB_COMPLETION_INDEX": "2"}, Shard{}, false},
		{"auto index out of range", "auto", map[string]string{"JOB_COMPLETION_INDEX": "3", "JOB_COMPLETIONS": "3"}, Shard{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseShard(tc.in, env(tc.env))
			if tc.ok != (err == nil) || got != tc.want {
				t.Errorf("ParseShard(%q) = %v, %v; want %v, ok %v", tc.in, got, err, tc.want, tc.ok)
			}
			if err != nil && !errors.Is(err, ErrShard) {
				t.Errorf("ParseShard(%q) error %v does not wrap ErrShard", tc.in, err)
			}
		})
	}
}

// Every row belongs to exactly one shard, with and without a leadId, and
// the rows spread over the shards.
func TestShardPartition(t *testing.T) {
	const n, rows = 3, 3000
	per := make([]int, n)
	for row := 1; row <= rows; row++ {
		id := ""
		if row%5 != 0 {
			id = fmt.Sprintf("L%06d", row)
		}
		takers := 0
		for k := range n {
			if (Shard{K: k, N: n}).Takes(row, id) {
				takers++
				per[k]++
			}
		}
		if takers != 1 {
			t.Fatalf("row %d (leadId %q) taken by %d shards, want 1", row, id, takers)
		}
	}
	for k, c := range per {
		if c < rows/n*8/10 {
			t.Errorf("shard %d took %d of %d rows: the hash does not spread them", k, c, rows)
		}
	}
	if !(Shard{}).Takes(7, "x") {
		t.Error("the zero Shard does not take every row")
	}
}

// The rule is documented (FNV-1a 64 of the leadId mod N), so other tools
// can compute it: pin a few values.
func TestShardRuleIsStable(t *testing.T) {
	for _, tc := range []struct {
		id   string
		n, k int
	}{
		{"L000001", 4, int(fnv64a("L000001") % 4)},
		{"abc", 7, int(fnv64a("abc") % 7)},
	} {
		if !(Shard{K: tc.k, N: tc.n}).Takes(1, tc.id) {
			t.Errorf("leadId %q not in shard %d/%d", tc.id, tc.k, tc.n)
		}
	}
	// FNV-1a 64 of "a" is af63dc4c8601ec8c (the published test vector).
	if got := fnv64a("a"); got != 0xaf63dc4c8601ec8c {
		t.Errorf("fnv64a(a) = %x", got)
	}
}

// fnv64a is FNV-1a 64 written out from its definition, to check the rule.
func fnv64a(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}
