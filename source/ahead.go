package source

import (
	"context"
	"errors"
	"io"

	"github.com/bulkload/bulkload/lead"
)

// Ahead reads the first rows of a Source before any is used, so that they
// can be judged together (the share of invalid rows of standard input,
// which cannot be read twice) before the first is sent; then it yields them,
// and the rest of the Source, in order. It is used by one goroutine.
type Ahead struct {
	src     *Source
	buf     []Item
	pos     int
	err     error // what the Source returned after buf: io.EOF, or a read error
	invalid int
	reasons lead.Reasons
}

// ReadAhead reads up to n rows of src. It returns ctx's error if ctx ends
// first; a read error of src is kept and returned by Next after the rows
// before it.
func ReadAhead(ctx context.Context, src *Source, n int) (*Ahead, error) {
	a := &Ahead{src: src}
	// A resumed stream reads on until it has taken the bytes whose hash
	// proves it is the earlier run's input (Config.PrefixAt).
	for len(a.buf) < n || src.TakenBytes() < src.PrefixAt() {
		it, err := src.Next(ctx)
		if err != nil {
			if ctx.Err() != nil && !errors.Is(err, io.EOF) {
				return nil, ctx.Err()
			}
			a.err = err
			break
		}
		if it.Row.Status == lead.StatusInvalid {
			a.invalid++
			a.reasons.AddRow(&it.Row)
		}
		a.buf = append(a.buf, it)
	}
	return a, nil
}

// Rows is how many rows were read ahead; Invalid how many of them are
// invalid, and Reasons why.
func (a *Ahead) Rows() int             { return len(a.buf) }
func (a *Ahead) Invalid() int          { return a.invalid }
func (a *Ahead) Reasons() lead.Reasons { return a.reasons }

// Items returns the rows read ahead, not yet yielded by Next; the caller
// must not change them.
func (a *Ahead) Items() []Item { return a.buf[a.pos:] }

// Err is the read error that stopped reading ahead: nil when n rows were
// read or the input ended (io.EOF is not an error here).
func (a *Ahead) Err() error {
	if errors.Is(a.err, io.EOF) {
		return nil
	}
	return a.err
}

// Next yields the rows read ahead, then the Source's.
func (a *Ahead) Next(ctx context.Context) (Item, error) {
	if a.pos < len(a.buf) {
		it := a.buf[a.pos]
		a.buf[a.pos] = Item{}
		a.pos++
		return it, nil
	}
	if a.err != nil {
		return Item{}, a.err
	}
	return a.src.Next(ctx)
}
