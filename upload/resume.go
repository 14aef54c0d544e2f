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

// MatchPrior is the one resume policy for a row: the check before the
// first call (a file read through, standard input's first rows read
// ahead) and the engine apply it alike. prior is the earlier run's
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
