package outfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
)

// Meta is the identity of the input a results file belongs to, kept in a
// file of its own beside it, MetaPath(results), so that the results file
// stays a plain CSV (or JSONL) that a spreadsheet opens. Compaction renames
// only the results file, so the meta file survives it, and --resume reads
// it to refuse a journal of another input.
type Meta struct {
	// Input is the input's path as given (for messages only).
	Input string `json:"input"`
	// InputSHA256 is the SHA-256 of the InputBytes bytes read, "partial:..."
	// when a stream was not read to its end.
	InputSHA256 string `json:"inputSha256"`
	InputBytes  int64  `json:"inputBytes"`
	Rows        int    `json:"rows"`
	// AllLeadIDs is true when every row had a leadId: an edited input can
	// then be matched row by row by leadId.
	AllLeadIDs bool      `json:"allLeadIds"`
	Written    time.Time `json:"written"`
	Version    string    `json:"version"`
	// Streamed marks an input read once (standard input, a pipe): its
	// identity is written before the first call and kept current while the
	// run reads (InputSHA256 "partial:..." over the InputBytes read so far,
	// Rows so far) and whole at the end. FirstBytes and FirstSHA256 are
	// the bytes taken before the first call and their hash: a resumed run
	// reads that many before its own first call and refuses an input whose
	// first bytes hash otherwise.
	Streamed    bool   `json:"streamed,omitempty"`
	FirstBytes  int64  `json:"firstBytes,omitempty"`
	FirstSHA256 string `json:"firstSha256,omitempty"`
	// Shard is the share of the input the run took, "K/N" (upload --shard),
	// "" for all of it: a run of another shard count owns other rows.
	Shard string `json:"shard,omitempty"`
	// Endpoint is the lead endpoint the run sent to, its credentials cut
	// (a sandbox run's results are not production's); "" when written
	// before bulkload recorded it.
	Endpoint string `json:"endpoint,omitempty"`
}

// MetaPath is the meta file of the results file at path: path + ".meta".
func MetaPath(path string) string { return path + ".meta" }

// ReadMeta reads the meta file of the results file at path (DecodeMeta). A
// missing meta file (a results file from before meta files, or from a run
// that stopped before sending) is an error wrapping fs.ErrNotExist.
func ReadMeta(path string) (*Meta, error) {
	b, err := os.ReadFile(MetaPath(path))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", MetaPath(path), err)
	}
	m, err := DecodeMeta(b)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w (delete it to resume without the input check)", MetaPath(path), err)
	}
	return m, nil
}

// ErrBadMeta is wrapped by DecodeMeta's error for a meta file that holds
// what no run writes: a negative count, first bytes past the bytes read, a
// hash that is not hexadecimal.
var ErrBadMeta = errors.New("not a meta file bulkload writes")

// DecodeMeta reads a meta file's JSON and checks it: counts not negative,
// FirstBytes within InputBytes, hashes hexadecimal (InputSHA256 with an
// optional "partial:"). The error wraps ErrBadMeta for one that decodes but
// holds what no run writes.
func DecodeMeta(b []byte) (*Meta, error) {
	var m Meta
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	switch {
	case m.Rows < 0 || m.InputBytes < 0 || m.FirstBytes < 0:
		return nil, fmt.Errorf("%w: rows %d, inputBytes %d, firstBytes %d (want none negative)", ErrBadMeta, m.Rows, m.InputBytes, m.FirstBytes)
	case m.FirstBytes > m.InputBytes:
		return nil, fmt.Errorf("%w: firstBytes %d past inputBytes %d", ErrBadMeta, m.FirstBytes, m.InputBytes)
	case !isHash(strings.TrimPrefix(m.InputSHA256, "partial:")) || !isHash(m.FirstSHA256):
		return nil, fmt.Errorf("%w: inputSha256 %q, firstSha256 %q (want hexadecimal)", ErrBadMeta, m.InputSHA256, m.FirstSHA256)
	}
	return &m, nil
}

// isHash reports whether s is at most 64 hexadecimal digits ("" for none).
func isHash(s string) bool {
	if len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// WriteMeta writes the meta file of the results file at path, mode 0600,
// through a temporary file renamed over it, so that a crash leaves the old
// one or the new one whole.
func WriteMeta(path string, m *Meta) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", MetaPath(path), err)
	}
	return Write(MetaPath(path), 0o600, append(b, '\n'))
}
