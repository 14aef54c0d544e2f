package app

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/bulkload/bulkload/outfile"
	"github.com/bulkload/bulkload/reader"
)

// refusalsBatch is how many records writeRefusals reads at a time.
const refusalsBatch = 128

// writeRefusals writes --refusals: the rows of the input the service
// refused outright (lead.Row.Refused), in the input's own columns with
// the service's reason, the way --rejects holds the invalid rows, so that
// the partner can fix them and send them again. Rows that failed for the
// moment (retries run out, an outage, an ambiguous answer) are not in it:
// --resume sends those. The input file is read again for the rows' text,
// the way the upload read it (ReadBatch, then Decode).
func (u *uploader) writeRefusals(ctx context.Context) error {
	if u.in.Refusals == "" {
		return nil
	}
	cfg, err := u.in.sourceConfig(u.log)
	if err != nil {
		return err
	}
	format, comma, err := reader.RejectsFormat(u.in.Refusals)
	if err != nil {
		return UsageErrorf("--refusals %v", err)
	}
	in, err := reader.OpenFile(ctx, u.input)
	if err != nil {
		return fmt.Errorf("--refusals: read %s again: %w", u.input, err)
	}
	defer in.Close()
	r, err := reader.NewReader(in, u.input, cfg.Reader)
	if err != nil {
		return fmt.Errorf("--refusals: read %s again: %w", u.input, err)
	}
	defer r.Close()
	f, err := outfile.Create(u.in.Refusals, 0o600)
	if err != nil {
		return fmt.Errorf("--refusals: %w", err)
	}
	defer f.Abort()
	x := reader.NewRejects(f, r, format, comma)
	u.refusedMu.Lock()
	refused := u.refusedRows
	u.refusedMu.Unlock()
	n := 0
	var b reader.Batch
	for n < len(refused) {
		rerr := r.ReadBatch(&b, refusalsBatch)
		b.Decode()
		for i := range b.Records {
			rec := &b.Records[i]
			if reason, ok := refused[rec.Row]; ok {
				if err := x.Write(rec, reason); err != nil {
					return fmt.Errorf("--refusals: %w", err)
				}
				n++
			}
		}
		if errors.Is(rerr, io.EOF) {
			break
		}
		if rerr != nil {
			return fmt.Errorf("--refusals: read %s again: %w", u.input, rerr)
		}
	}
	if err := x.Flush(); err != nil {
		return fmt.Errorf("--refusals: %w", err)
	}
	if err := f.Commit(); err != nil {
		return fmt.Errorf("--refusals: %w", err)
	}
	if n > 0 {
		u.log.Info("rows the service refused written for the partner to fix", "rows", n, "path", u.in.Refusals)
	}
	return nil
}
