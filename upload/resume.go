package upload

import (
	"fmt"

	"github.com/bulkload/bulkload/lead"
)

// Resumed is how a row of the input stands against the earlier run's line
// for it (MatchPrior).
type Resumed struct {
	// Prior is the earlier run's last line for the row, when Has.
	Prior lead.Row
	Has   bool
	// Kept is set for a row that is invalid now although an earlier run
	// created its lead, or may have (lead.Row.MayHaveLead: an ambiguous
	// failed line, an unverified one): its cells were edited since. The
	// lead keeps its id and its obligations (submitted when qualified,
	// checked again when unverified); a lead that may exist without an id
	// is unverified, for a person to reconcile, since its cells cannot be
	// sent again to check it. The edit is not sent, and the row is no
	// invalid row of this run (it does not count against a limit on
	// invalid rows).
	Kept bool
}

// ForeignRowError says the earlier run's results are another input's: the
// row has another leadId there. It wraps ErrForeignJournal.
type ForeignRowError struct {
	Row         int
	There, Here string // the leadIds in the results and in the input
}

func (e *ForeignRowError) Error() string {
	return fmt.Sprintf("%v: %s", ErrForeignJournal, e.Detail())
}

// Detail is the error without ErrForeignJournal's text: which row differs.
func (e *ForeignRowError) Detail() string {
	return fmt.Sprintf("row %d has leadId %q there but %q here", e.Row, e.There, e.Here)
}

func (e *ForeignRowError) Unwrap() error { return ErrForeignJournal }

// MatchPrior is the one resume policy for a row, applied once a row: by
// the check before the first call (Check) to the rows it reads (a file
// read through, standard input's first rows read ahead), and by the
// engine to the rows after those (Config.Decided). prior is the earlier run's
// results (nil: not resuming). A row whose leadId differs from its line's
// is a *ForeignRowError: the results file belongs to another input.
func MatchPrior(prior Prior, row lead.Row) (Resumed, error) {
	if prior == nil {
		return Resumed{}, nil
	}
	p, ok := prior.Get(row.Row)
	if !ok {
		return Resumed{}, nil
	}
	if p.LeadID != row.LeadID {
		return Resumed{}, &ForeignRowError{Row: row.Row, There: p.LeadID, Here: row.LeadID}
	}
	return Resumed{Prior: p, Has: true, Kept: row.Status == lead.StatusInvalid && p.MayHaveLead()}, nil
}

// Decided is what the check before the first call decided (MatchPrior
// over the rows it read: a file read through, a stream's first rows),
// handed to the engine so that no row is decided twice. The rows up to
// Through were decided there, none another input's, and of them the rows
// in Kept were Kept. The engine decides the rows after Through (a stream's
// past its first rows) as they come.
type Decided struct {
	Through int
	Kept    map[int]bool
}

// Check is the resume decision of the check before the first call: Match
// decides each row it reads, once, and Decided hands those decisions to
// the engine (Config.Decided). Not safe for concurrent use.
type Check struct {
	prior   Prior
	decided Decided
	kept    int
	foreign bool
}

// NewCheck returns the check's decider against prior, the earlier run's
// results (nil: not resuming, and every row is decided fresh).
func NewCheck(prior Prior) *Check {
	return &Check{prior: prior, decided: Decided{Kept: map[int]bool{}}}
}

// Match is MatchPrior for row, recorded for the engine.
func (c *Check) Match(row lead.Row) (Resumed, error) {
	r, err := MatchPrior(c.prior, row)
	if err != nil {
		c.foreign = true
		return r, err
	}
	c.decided.Through = max(c.decided.Through, row.Row)
	if r.Kept {
		c.kept++
		c.decided.Kept[row.Row] = true
	}
	return r, nil
}

// Kept is how many rows Match decided Kept: they are invalid now, but not
// this run's invalid rows.
func (c *Check) Kept() int { return c.kept }

// Decided is what Match decided, for Config.Decided; nil when it found a
// row of another input (the engine then decides every row itself, and
// stops at the first such row) or when not resuming.
func (c *Check) Decided() *Decided {
	if c == nil || c.foreign || c.prior == nil {
		return nil
	}
	return &c.decided
}

// resumed is the engine's decision for row: the check's when it made one
// (Config.Decided), else MatchPrior's.
func (e *engine) resumed(row lead.Row) (Resumed, error) {
	d := e.cfg.Decided
	if d == nil || e.cfg.Prior == nil || row.Row > d.Through {
		return MatchPrior(e.cfg.Prior, row)
	}
	p, ok := e.cfg.Prior.Get(row.Row)
	return Resumed{Prior: p, Has: ok, Kept: d.Kept[row.Row]}, nil
}
