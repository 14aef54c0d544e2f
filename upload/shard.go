package upload

import (
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
)

// Shard is one part of an input split across several runs (machines, or
// the pods of a Kubernetes Indexed Job), each taking the rows of its own
// shard and none of the others'. A row belongs to shard FNV-1a-64(leadId)
// mod N; a row without a leadId to shard (row-1) mod N, its 1-based row
// number. The rule depends only on the row, so every run of a shard, and
// every --resume of it, takes the same rows. The zero Shard (N 0) takes
// every row.
type Shard struct {
	// K is this run's shard, 0 to N-1 (as Kubernetes numbers completion
	// indexes); N is the number of shards.
	K, N int
}

// ErrShard is wrapped by ParseShard's errors.
var ErrShard = errors.New("bad shard")

// ParseShard reads "K/N" (0 <= K < N), or "auto": K from the
// JOB_COMPLETION_INDEX that Kubernetes sets in the pods of an Indexed Job,
// N from JOB_COMPLETIONS (set it in the pod template to the Job's
// completions: the downward API cannot read it), both read through getenv.
func ParseShard(s string, getenv func(string) string) (Shard, error) {
	k, n := s, ""
	if s == "auto" {
		k, n = getenv("JOB_COMPLETION_INDEX"), getenv("JOB_COMPLETIONS")
		if k == "" || n == "" {
			return Shard{}, fmt.Errorf("%w: auto needs JOB_COMPLETION_INDEX (set by a Kubernetes Indexed Job) and JOB_COMPLETIONS (the Job's completions) in the environment", ErrShard)
		}
	} else if before, after, ok := strings.Cut(s, "/"); ok {
		k, n = before, after
	} else {
		return Shard{}, fmt.Errorf("%w: %q: want K/N, e.g. 0/4, or auto", ErrShard, s)
	}
	ki, err1 := strconv.Atoi(strings.TrimSpace(k))
	ni, err2 := strconv.Atoi(strings.TrimSpace(n))
	if err1 != nil || err2 != nil || ni < 1 || ki < 0 || ki >= ni {
		return Shard{}, fmt.Errorf("%w: shard %s of %s: want K from 0 to N-1 and N at least 1", ErrShard, k, n)
	}
	return Shard{K: ki, N: ni}, nil
}

// Takes reports whether the row belongs to this shard.
func (s Shard) Takes(row int, leadID string) bool {
	if s.N <= 1 {
		return true
	}
	if leadID == "" {
		return (row-1)%s.N == s.K
	}
	h := fnv.New64a()
	h.Write([]byte(leadID))
	return h.Sum64()%uint64(s.N) == uint64(s.K)
}

// String is "K/N", or "" for the zero Shard.
func (s Shard) String() string {
	if s.N == 0 {
		return ""
	}
	return strconv.Itoa(s.K) + "/" + strconv.Itoa(s.N)
}
