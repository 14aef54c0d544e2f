package source

import (
	"context"
	"errors"
	"io"
	"slices"

	"github.com/bulkload/bulkload/lead"
)

// Scan is what a whole pass over an input found, before anything is sent:
// its identity (hash, bytes, rows), how many rows are invalid and why, and
// its columns.
type Scan struct {
	SHA256 string
	Bytes  int64
	// PrefixSHA256 is the hash of the first Config.PrefixAt bytes, "" when
	// the input is shorter (see Source.PrefixSHA256).
	PrefixSHA256 string
	Rows         int
	Invalid      int
	Reasons      lead.Reasons
	// AllLeadIDs is true when every row has a leadId, so that rows can be
	// matched by it rather than by number.
	AllLeadIDs bool
	Unknown    []string
	Provided   []lead.Field
	// Blocks is the file's identity as this pass read it, for the send
	// pass to prove it reads the same bytes (Config.Verify).
	Blocks *Blocks
}

// ScanInput reads the whole input file name once, validating every row,
// before an upload sends any: a systematic break (a renamed column, a wrong
// mapping) is then caught while nothing is sent, and a compressed file's
// checksum is verified, since gzip checks it only at the end of the stream.
// visit, when set, sees every row in order (a resumed run matches rows
// against its journal); its error stops the scan and is returned. A read
// error that stops the input (I/O, a corrupt gzip stream) is returned as
// it is. It writes no rejects file. Standard input cannot be read twice:
// ScanInput is for files.
func ScanInput(ctx context.Context, name string, cfg Config, visit func(Item) error) (*Scan, error) {
	cfg.Rejects = ""
	cfg.Limit = 0
	cfg.Verify = nil
	cfg.blocks = true
	s, err := Open(ctx, name, nil, cfg)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	sc := &Scan{AllLeadIDs: true}
	for {
		it, err := s.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		sc.Rows++
		if it.Row.LeadID == "" {
			sc.AllLeadIDs = false
		}
		if it.Row.Status == lead.StatusInvalid {
			sc.Invalid++
			sc.Reasons.AddRow(&it.Row)
		}
		if visit != nil {
			if err := visit(it); err != nil {
				return nil, err
			}
		}
	}
	if err := s.Close(); err != nil {
		return nil, err
	}
	if s.sha.blocks != nil {
		sc.Blocks = &Blocks{file: s.info, seed: s.sha.blocks.h.Seed(), sums: s.sha.blocks.finish(), size: s.InputBytes()}
	}
	sc.SHA256, sc.Bytes, sc.PrefixSHA256 = s.InputSHA256(), s.InputBytes(), s.PrefixSHA256()
	sc.Unknown, sc.Provided = s.Unknown(), slices.Clone(s.Provided())
	if sc.Rows == 0 {
		sc.AllLeadIDs = false
	}
	return sc, nil
}
