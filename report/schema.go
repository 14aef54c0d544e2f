package report

import (
	"fmt"
	"strings"

	"github.com/bulkload/bulkload/lead"
)

// Header is the results file's columns, in order, comma-separated: the CSV
// header line (without its newline) and the JSONL keys. It is the one
// spelling of the columns' names: column.name reads them from it.
const Header = "row,leadId,ref,status,id,resultCode,note,bidValue,attempts,error"

// column is one column of the results file. The constants below, in the
// order of Header, are the results file's schema: both codecs, writing and
// reading, range over them, and cell and setCell bind each to its
// field of Row. A new column is a constant here, its name in Header, its
// kind and its field in cell and setCell.
type column uint8

// The columns, in file order.
const (
	colRow column = iota
	colLeadID
	colRef
	colStatus
	colID
	colResultCode
	colNote
	colBidValue
	colAttempts
	colError
	numColumns // the number of columns, not one of them
)

// kind is how a column's cell is written and read.
type kind uint8

const (
	// kindText is text from the partner or the service: in CSV, escaped
	// against spreadsheet formulas (lead.EscapeCell) and unescaped when read;
	// in JSONL, a string ("" when empty; null reads as "").
	kindText kind = iota
	// kindWord is a bulkload word (the status): written as it is, a string
	// in JSONL.
	kindWord
	// kindNumber is a number that every line has (the row number): CSV
	// digits, a JSONL number; empty, null or missing is an error.
	kindNumber
	// kindCount is a number where 0 means none: an empty CSV cell, JSONL
	// null (a missing key reads as 0 too).
	kindCount
)

// kind returns how c is written and read.
func (c column) kind() kind {
	switch c {
	case colRow:
		return kindNumber
	case colResultCode, colAttempts:
		return kindCount
	case colStatus:
		return kindWord
	}
	return kindText
}

// name returns c's name in Header: its CSV header cell and its JSONL key.
func (c column) name() string {
	rest := Header
	for range c {
		_, rest, _ = strings.Cut(rest, ",")
	}
	name, _, _ := strings.Cut(rest, ",")
	return name
}

// cell returns the value of column c in r: text for a text or word column,
// n for a number column. Text columns hold what the file shows (the note
// with AmbiguousNote and the engine's notes, the error with the rendered
// Invalid).
func cell(r *lead.Row, c column) (text string, n int) {
	switch c {
	case colRow:
		return "", r.Row
	case colLeadID:
		return r.LeadID, 0
	case colRef:
		return r.Ref, 0
	case colStatus:
		return string(r.Status), 0
	case colID:
		return r.ID, 0
	case colResultCode:
		return "", r.ResultCode
	case colNote:
		return noteColumn(r), 0
	case colBidValue:
		return r.BidValue, 0
	case colAttempts:
		return "", r.Attempts
	case colError:
		return r.ErrorText(), 0
	}
	panic(fmt.Sprintf("report: no column %d", c))
}

// setCell sets the field of column c from a cell read back: text for a text
// or word column, n for a number column. It is cell's inverse.
func setCell(r *lead.Row, c column, text string, n int) {
	switch c {
	case colRow:
		r.Row = n
	case colLeadID:
		r.LeadID = text
	case colRef:
		r.Ref = text
	case colStatus:
		r.Status = lead.Status(text)
	case colID:
		r.ID = text
	case colResultCode:
		r.ResultCode = n
	case colNote:
		setNoteColumn(r, text)
	case colBidValue:
		r.BidValue = text
	case colAttempts:
		r.Attempts = n
	case colError:
		r.Error = text
	default:
		panic(fmt.Sprintf("report: no column %d", c))
	}
}
