// Package source is a run's input, as the engine sees it: one validated
// Item per input row, in input order. Where package reader parses one
// export's bytes into raw records, and knows formats but not runs, source
// runs it: it opens the input file or standard input, drives reader over it
// in batches read ahead of the engine, has mapper validate the batches in
// parallel, checks duplicate leadIds in input order, writes the rejects
// file, and hashes every byte for the input's identity. It parses nothing
// itself (reader does) and judges no value itself (mapper does).
//
// Beside Open and Next, it owns the passes around a run's input: ReadAhead
// (the first rows, read before anything is sent), ScanInput (a whole check
// pass over a file before an upload) and Blocks (that pass's identity of the
// file, against which the send pass verifies what it reads).
//
// The goroutines: a pump reads standard input so that an idle pipe never
// holds off cancellation; one goroutine reads batches; another hashes every
// byte; workers (four by default, fewer on fewer CPUs) decode and map; one
// goroutine checks duplicates and writes rejects. The result is the same for
// any number of workers.
package source

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"hash/maphash"
	"io"
	"log/slog"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/bulkload/bulkload/lead"
	"github.com/bulkload/bulkload/mapper"
	"github.com/bulkload/bulkload/outfile"
	"github.com/bulkload/bulkload/reader"
)

// Config is how a Source reads: the reader's options, the partner's mapping
// (nil for none), the date order, and the rejects file to write (empty for
// none).
type Config struct {
	Reader   reader.Options
	Mapping  *mapper.Mapping
	DayFirst bool
	// Hints name the settings the mapper's rules advise (mapper.Options);
	// the reader's are in Reader.
	Hints mapper.Hints
	// Rejects is the path of the rejects file: the invalid rows in the
	// input's own format plus an error column, mode 0600 (it holds the
	// partner's data). Empty writes none.
	Rejects string
	Log     *slog.Logger
	// Workers is how many goroutines decode and map rows; 0 means
	// DefaultWorkers. Results are the same and in input order for any
	// number.
	Workers int
	// Limit, when above 0, reads at most that many bytes of a file: an
	// upload reads exactly the bytes its check read (Scan), and rows
	// appended while it runs wait for the next run (Grew says how many
	// bytes came).
	Limit int64
	// PrefixAt, when above 0, also hashes the first PrefixAt bytes apart
	// (PrefixSHA256): a resumed run checks that its input begins with the
	// bytes the earlier run read.
	PrefixAt int64
	// Verify, when set, is the check pass's identity of the input file
	// (Scan.Blocks): Open refuses another file or a shorter one, the
	// reader gets no byte that does not hash as the check pass read it,
	// and the input ends where the check pass's did (Limit is ignored).
	// A difference is a read error wrapping ErrInputChanged.
	Verify *Blocks

	// CheckAt and CheckSHA256, when CheckAt is above 0, are what a resumed
	// stream's earlier run read: once the input reaches CheckAt bytes,
	// their SHA-256 (hex) must be CheckSHA256, and an input that ends
	// before is not the same either; otherwise Next fails with an error
	// wrapping ErrNotSameInput from then on. The hash runs behind the
	// reader: a few rows past CheckAt may come first.
	CheckAt     int64
	CheckSHA256 string

	// HoldUnended, for an upload's send pass over a file, holds back the
	// input's last record when its bytes end without a line end (spaces
	// and tabs aside) and the file has grown past the bytes read: the
	// file is still being written, and that record may be cut short
	// (loanAmount 48 of 48500). It is neither checked nor handed out
	// (no rejects line, no row): Next fails with an error wrapping
	// ErrInputIncomplete after the rows before it, and a resumed run reads
	// it once the file is complete. A gzip file is not held: a stream cut
	// short does not read through.
	HoldUnended bool

	// blocks makes the Source hash its input block by block (ScanInput).
	blocks bool
}

// ErrNotSameInput is wrapped by Next's error when a resumed stream turns
// out not to be the earlier run's input (Config.CheckAt).
var ErrNotSameInput = errors.New("not the input of the earlier run")

// ErrInputIncomplete is wrapped by Next's error when the input file's last
// record has no line end and the file grew while it was read: it is still
// being written (Config.HoldUnended).
var ErrInputIncomplete = errors.New("the input is still being written")

// Source is the reading and validating stage shared by validate and upload:
// it owns the input file, the reader, the mapper and the rejects file. It is
// used by one goroutine (EstimatedRows and IndexMemory excepted); the
// caller closes it.
type Source struct {
	name    string
	file    *os.File // nil for stdin
	sha     *hashWriter
	hashIn  *asyncHash // what the reader reads goes through it to sha
	shaDone bool       // the hash covers the whole input (up to Limit)
	in      io.Reader  // the file, limited to Limit; nil for stdin
	limit   int64
	grew    int64
	size    int64
	info    os.FileInfo // a regular file's, at Open
	r       *reader.Reader
	m       *mapper.Mapper
	log     *slog.Logger

	// rejectsFile is the rejects file, a temporary name until Close
	// renames it into place whole (a process killed before leaves no
	// rejects file cut in a record at its name).
	rejectsFile *outfile.File
	rejects     *reader.Rejects

	sawLeadSource bool
	rows          int
	noLeadID      bool // some row had no leadId
	provided      []lead.Field
	unknown       []string
	// stdinPipe carries standard input, or an input file that is not a
	// regular file (a named pipe, a device), from a pump goroutine. A read
	// of stdin itself (a pipe or a terminal: a blocking descriptor) cannot
	// be interrupted, so the reader reads this pipe instead, and closing it
	// stops the reader at once. The pump stays blocked in its read of stdin
	// until data or EOF arrives or the process exits, which main does right
	// after run returns: the one goroutine that may outlive run, by need.
	// A named pipe's pump ends when Close closes the file.
	stdinPipe *io.PipeReader

	// Reading runs in its own goroutine, which reads each batch of records
	// once, undecoded, and hands it both to work, where one of the workers
	// decodes and maps it (everything but the duplicate check), and to
	// full, in input order, where the checking goroutine waits for it to
	// be done, checks duplicates row by row, writes the rejects and passes
	// it on to checked, where Next yields its rows. Each of the three
	// stages that keep input order (reading, checking, and the caller's
	// use of the rows) has a goroutine of its own, so on many cores the
	// slowest of them, not their sum, bounds the time a row takes.
	// Batches are recycled through free, which holds them all: the reader
	// stays at most len(free) batches ahead.
	full      chan *batch
	work      chan *batch
	checked   chan *batch
	free      chan *batch
	batchSize int // batchSize for files; 1 for standard input, a stream that may trickle
	workers   int
	stop      chan struct{}
	readDone  chan struct{}
	checkDone chan struct{}
	workDone  sync.WaitGroup
	cur       *batch
	pos       int
	closed    bool
	// recordsRead counts the records the reading goroutine has read, for
	// the progress estimate; safe to read from any goroutine.
	recordsRead atomic.Int64
	// checkAt is Config.CheckAt; notSame is set by the hashing goroutine
	// when the input's hash there is not Config.CheckSHA256.
	checkAt     int64
	notSame     atomic.Pointer[error]
	checkPassed atomic.Bool
	// checkedRows and sawNoLeadID are rows and noLeadID for other
	// goroutines (AllLeadIDsSoFar).
	checkedRows atomic.Int64
	sawNoLeadID atomic.Bool
	// indexBytes is the mapper's IndexMemory as the checking goroutine
	// last saw it.
	indexBytes atomic.Int64
	// holdUnended is Config.HoldUnended.
	holdUnended bool
}

// batchSize is how many records travel together from the reading
// goroutine to a worker and on to Next: large enough that channel costs
// vanish per row, small enough that the workers+batchesAhead batches in
// flight keep memory flat (sizes measured: bench/README.md).
const (
	batchSize    = 128
	batchesAhead = 4
)

// batch is a run of records read together, their raw text in the batch's
// arena, so it stays valid after the reader moves on.
type batch struct {
	rb     reader.Batch
	err    error          // io.EOF or the read error, after the records
	mapped []mapped       // per record, once done
	keys   []mapper.IDKey // per record, once done: its leadId's key, or zero
	rows   []lead.Row     // per record, once checked; err follows them
	// done receives one value when a worker has decoded and mapped the
	// batch.
	done chan struct{}
}

// mapped is what a worker made of one record: MapFields' answer, before
// the duplicate check.
type mapped struct {
	in      lead.Input
	errs    mapper.Errors
	idShown string
}

// maxWorkers bounds the default number of workers. A worker decodes and
// maps a row in about the time the reading goroutine takes to read it, so
// beyond a few workers the reading goroutine bounds the pace and more
// workers only hold more batches in memory (figures: bench/README.md,
// "Figures that used to be in code comments"). Four leave the workers a
// fourfold margin for mappings that cost more than the samples'.
const maxWorkers = 4

// DefaultWorkers is the number of workers a Config with Workers 0 gets:
// GOMAXPROCS, at most maxWorkers.
func DefaultWorkers() int { return min(runtime.GOMAXPROCS(0), maxWorkers) }

// Item is one row of the input after validation.
type Item struct {
	Row   lead.Row   // Row, LeadID, Ref, and Status valid or invalid with Invalid
	Input lead.Input // meaningful only when Row.Status is valid
}

// Open opens the input name ("-" reads stdin) and starts reading it. Its
// errors name the input; ctx's error is returned when ctx ends while the
// header of an idle standard input is awaited.
func Open(ctx context.Context, name string, stdin io.Reader, cfg Config) (*Source, error) {
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ropts, mapping := cfg.Reader, cfg.Mapping
	s := &Source{name: name, sha: &hashWriter{h: sha256.New(), at: cfg.PrefixAt}, limit: cfg.Limit, size: -1, log: log, batchSize: batchSize,
		workers: cfg.Workers, holdUnended: cfg.HoldUnended}
	if s.workers <= 0 {
		s.workers = DefaultWorkers()
	}
	var in io.Reader
	// pump reads a stream (standard input, a named pipe, a device) through
	// a goroutine and a closable pipe: a read of the stream itself may wait
	// for data indefinitely, and closing the pipe stops the reader at once.
	pump := func(from io.Reader) {
		pr, pw := io.Pipe()
		go func() {
			_, err := io.Copy(pw, from)
			pw.CloseWithError(err)
		}()
		in, s.stdinPipe = pr, pr
		s.batchSize = 1 // a row must not wait for 255 more to arrive
	}
	if name == "-" {
		pump(stdin)
	} else {
		// A named pipe waits in open for a writer: OpenFile lets ctx
		// stop that wait.
		f, err := reader.OpenFile(ctx, name)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("input: %w", err)
		}
		s.file = f
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			s.size = st.Size()
			s.info = st
			in = f
			if s.limit > 0 {
				in = io.LimitReader(f, s.limit)
			}
			if v := cfg.Verify; v != nil {
				if err := v.sameFile(name, st); err != nil {
					f.Close()
					return nil, err
				}
				s.limit = v.size
				in = newVerifyReader(f, name, v)
			}
			s.in = in
		} else {
			// Close closes f after the pipe, which ends the pump's read
			// (a pipe's reads go through the runtime's poller).
			pump(f)
		}
	}
	if cfg.blocks {
		s.sha.blocks = newBlockHasher(maphash.MakeSeed())
	}
	if cfg.CheckAt > 0 {
		s.checkAt = cfg.CheckAt
		s.sha.checkAt = cfg.CheckAt
		s.sha.onCheck = func(sum []byte) {
			if hex.EncodeToString(sum) == cfg.CheckSHA256 {
				s.checkPassed.Store(true)
			} else {
				err := fmt.Errorf("%w: %s: its first %d bytes hash otherwise than those the earlier run read (sha256 %s); the rows before were matched to the earlier run's results by number and leadId", ErrNotSameInput, name, cfg.CheckAt, shortHash(cfg.CheckSHA256))
				s.notSame.Store(&err)
			}
		}
	}
	s.hashIn = newAsyncHash(s.sha)
	r, err := newReader(ctx, io.TeeReader(in, s.hashIn), s.stdinPipe, name, ropts)
	if err != nil {
		s.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("input %s: %w", name, err)
	}
	s.r = r
	s.provided = r.Provided() // a CSV header's; JSONL's grow as keys are seen
	s.unknown = r.Unknown()
	s.m = mapper.New(mapper.Options{Mapping: mapping, DayFirst: cfg.DayFirst, Hints: cfg.Hints})

	if cfg.Rejects != "" {
		// A new file of mode 0600, never a planted link's target or
		// another user's pre-created file: it holds SSNs. It is written
		// under a temporary name and renamed at Close, complete.
		f, err := outfile.Create(cfg.Rejects, 0o600)
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("rejects file: %w", err)
		}
		s.rejectsFile = f
		// The rejects file's own extension chooses its format, as the
		// results file's does (the caller checked it: RejectsFormat).
		format, comma, err := reader.RejectsFormat(cfg.Rejects)
		if err != nil {
			format, comma = reader.FormatAuto, 0
		}
		s.rejects = reader.NewRejects(f, r, format, comma)
	}
	s.startReading()
	return s, nil
}

// newReader opens the reader, which reads the header (and sniffs the
// delimiter) before it returns, without letting an idle standard input hold
// off cancellation: on ctx's end the stdin pipe is closed, which unblocks it.
func newReader(ctx context.Context, in io.Reader, stdinPipe *io.PipeReader, name string, opts reader.Options) (*reader.Reader, error) {
	if stdinPipe == nil {
		return reader.NewReader(in, name, opts)
	}
	type opened struct {
		r   *reader.Reader
		err error
	}
	done := make(chan opened, 1)
	go func() {
		r, err := reader.NewReader(in, name, opts)
		done <- opened{r, err}
	}()
	select {
	case o := <-done:
		return o.r, o.err
	case <-ctx.Done():
		stdinPipe.CloseWithError(ctx.Err())
		o := <-done
		if o.r != nil {
			o.r.Close()
		}
		return nil, ctx.Err()
	}
}

// Next returns the next row, validated. io.EOF ends the input; any other
// error means the input cannot be read on and the run stops.
func (s *Source) Next(ctx context.Context) (Item, error) {
	if p := s.notSame.Load(); p != nil {
		return Item{}, *p
	}
	for s.cur == nil || s.pos >= len(s.cur.rows) {
		if s.cur != nil {
			if err := s.cur.err; err != nil {
				if errors.Is(err, io.EOF) {
					return Item{}, s.endCheck()
				}
				return Item{}, err // the reader's errors name the file and row
			}
			s.free <- s.cur // never blocks: free holds every batch
			s.cur = nil
		}
		var b *batch
		var ok bool
		select {
		case b, ok = <-s.checked:
		case <-ctx.Done():
			// The reader may be blocked on a slow pipe: stop waiting.
			return Item{}, ctx.Err()
		}
		if !ok {
			return Item{}, s.endCheck()
		}
		s.cur, s.pos = b, 0
	}
	it := Item{Row: s.cur.rows[s.pos]}
	if it.Row.Status == lead.StatusValid {
		it.Input = s.cur.mapped[s.pos].in
	}
	s.cur.rows[s.pos] = lead.Row{}
	s.pos++
	return it, nil
}

// endCheck is Next's answer at the end of the input: io.EOF, or the
// error of an input that is not the earlier run's (Config.CheckAt): its
// hash there differs, or it ended before.
func (s *Source) endCheck() error {
	if s.checkAt <= 0 {
		return io.EOF
	}
	snap := s.hashIn.snapshot() // everything read is hashed: onCheck ran if it was to
	if p := s.notSame.Load(); p != nil {
		return *p
	}
	if snap.n < s.checkAt {
		return fmt.Errorf("%w: %s: it ends at byte %d, but the earlier run read %d", ErrNotSameInput, s.name, snap.n, s.checkAt)
	}
	return io.EOF
}

// shortHash cuts a SHA-256 to 12 hex digits for a message.
func shortHash(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// check is the last of a row's validation, in input order: the duplicate
// check of key, the row's leadId as the worker hashed it (mapper.IDKey),
// and the rejects file for an invalid row. Next takes the Input of a valid
// row from m.
func (s *Source) check(rec *reader.Record, m *mapped, key mapper.IDKey) (lead.Row, error) {
	row := lead.Row{
		Row:    rec.Row,
		LeadID: strings.TrimSpace(rec.Values[lead.LeadID]),
		Ref:    strings.TrimSpace(rec.Values[lead.Ref]),
		Status: lead.StatusValid,
	}
	if rec.Values[lead.LeadSourceID] != "" {
		s.sawLeadSource = true
	}
	s.rows++
	s.checkedRows.Add(1)
	if row.LeadID == "" {
		s.noLeadID = true
		s.sawNoLeadID.Store(true)
	}
	if rec.Err != nil {
		row.Status = lead.StatusInvalid
		row.Invalid = lead.RowErrors{*rec.Err}
	} else if errs := s.m.CheckDuplicate(rec.Row, key, m.idShown, m.errs); len(errs) > 0 {
		// Name each field as the partner's file does, so that a person
		// finds the column.
		for i := range errs {
			errs[i].StartLine = rec.Line
			errs[i].Header = s.r.Header(errs[i].Field)
		}
		row.Status = lead.StatusInvalid
		row.Invalid = errs
	}
	if row.Status == lead.StatusInvalid && s.rejects != nil {
		if err := s.rejects.Write(rec, row.ErrorText()); err != nil {
			return lead.Row{}, fmt.Errorf("write the rejects file: %w", err)
		}
	}
	return row, nil
}

// startReading starts the reading goroutine and the workers; Close stops
// them.
func (s *Source) startReading() {
	n := s.workers + batchesAhead
	s.full = make(chan *batch, n)
	s.work = make(chan *batch, n)
	s.checked = make(chan *batch, n)
	s.free = make(chan *batch, n)
	s.stop = make(chan struct{})
	s.readDone = make(chan struct{})
	s.checkDone = make(chan struct{})
	for range n {
		s.free <- &batch{done: make(chan struct{}, 1)}
	}
	for range s.workers {
		s.workDone.Go(s.workLoop)
	}
	go s.readLoop()
	go s.checkLoop()
}

// readLoop is the only caller of the reader until it returns. It closes
// work and full, which it alone sends on.
func (s *Source) readLoop() {
	defer close(s.readDone)
	defer close(s.full)
	defer close(s.work)
	for {
		var b *batch
		select {
		case b = <-s.free:
		case <-s.stop:
			return
		}
		err := s.r.ReadBatch(&b.rb, s.batchSize)
		b.err = err
		s.recordsRead.Add(int64(b.rb.Len()))
		// work has room for every batch: this never blocks.
		s.work <- b
		select {
		case s.full <- b: // b is the other stages' from here
		case <-s.stop:
			return
		}
		if err != nil {
			return
		}
	}
}

// workLoop decodes and maps batches until work is closed. Mapping without
// the duplicate check reads only the mapper's settings, so workers share
// the Mapper.
func (s *Source) workLoop() {
	for b := range s.work {
		b.rb.Decode()
		b.mapped = slices.Grow(b.mapped[:0], b.rb.Len())[:b.rb.Len()]
		b.keys = slices.Grow(b.keys[:0], b.rb.Len())[:b.rb.Len()]
		for i := range b.rb.Records {
			rec := &b.rb.Records[i]
			if rec.Err == nil {
				in, errs, idShown := s.m.MapFields(rec.Row, &rec.Values)
				b.mapped[i] = mapped{in, errs, idShown}
				b.keys[i] = s.m.IDKey(in.LeadID)
			} else {
				b.mapped[i], b.keys[i] = mapped{}, 0
			}
		}
		b.done <- struct{}{} // room for one: never blocks
	}
}

// checkLoop takes the batches in input order as the workers finish them,
// checks each row (check) and passes the batch on to checked, which it
// alone sends on and closes. It stops after a batch that ends the input or
// fails, and on stop. With holdUnended it reads one batch ahead, to know
// which record is the input's last (held when the file is still being
// written: heldLast).
func (s *Source) checkLoop() {
	defer close(s.checkDone)
	defer close(s.checked)
	var ahead *batch
	for {
		b := ahead
		ahead = nil
		if b == nil {
			var ok bool
			if b, ok = <-s.full; !ok {
				return
			}
		}
		<-b.done // a worker has it: it never blocks for long
		end := errors.Is(b.err, io.EOF)
		if s.holdUnended && b.err == nil && b.rb.Len() > 0 {
			// The input may end right after b: the next batch says so.
			if next, ok := <-s.full; ok {
				ahead = next
				end = next.rb.Len() == 0 && errors.Is(next.err, io.EOF)
			}
		}
		n := b.rb.Len()
		var held error
		if end && n > 0 {
			if held = s.heldLast(&b.rb.Records[n-1]); held != nil {
				n--
			}
		}
		s.m.PrefetchIDs(b.keys[:n])
		b.rows = slices.Grow(b.rows[:0], n)
		for i := range b.rb.Records[:n] {
			row, err := s.check(&b.rb.Records[i], &b.mapped[i], b.keys[i])
			if err != nil {
				b.err = err
				break
			}
			b.rows = append(b.rows, row)
		}
		if held != nil && (b.err == nil || errors.Is(b.err, io.EOF)) {
			b.err = held
		}
		s.indexBytes.Store(int64(s.m.IndexMemory()))
		err := b.err
		select {
		case s.checked <- b: // b is Next's from here
		case <-s.stop:
			return
		}
		if err != nil {
			return
		}
	}
}

// heldLast reports whether rec, the input's last record, is held back
// (Config.HoldUnended): the file's bytes read end without a line end and
// the file has grown past them. It returns the error that says so, or nil.
// The checking goroutine calls it once the reader has read to the end.
func (s *Source) heldLast(rec *reader.Record) error {
	if !s.holdUnended || s.file == nil || s.info == nil || s.r.Compressed() {
		return nil
	}
	read, last := s.hashIn.n.Load(), s.hashIn.lastByte()
	if read == 0 || last == '\n' || last == '\r' {
		return nil
	}
	st, err := s.file.Stat()
	if err != nil || st.Size() <= read {
		return nil
	}
	return fmt.Errorf("%w: %s: its last row (row %d, line %d) has no line end, and the file grew from %d to %d bytes while it was read: the row may be cut short and was not sent; a resumed run sends it once the file is complete", ErrInputIncomplete, s.name, rec.Row, rec.Line, read, st.Size())
}

// IndexMemory returns the bytes the duplicate-leadId index holds outside
// the Go heap (see mapper.Mapper.IndexMemory), as of the last batch
// checked. Safe to call from any goroutine.
func (s *Source) IndexMemory() int { return int(s.indexBytes.Load()) }

// EstimatedRows estimates the input's row count from the bytes per row
// read so far and the file's size; -1 when the size is unknown (stdin) or
// nothing is read yet. Safe to call from the progress goroutine.
func (s *Source) EstimatedRows() int64 {
	n, read := s.recordsRead.Load(), s.r.BytesRead()
	if s.size <= 0 || n == 0 || read == 0 {
		return -1
	}
	if read >= s.size {
		return n
	}
	return int64(float64(n) * float64(s.size) / float64(read))
}

// InputSHA256 is the SHA-256 of the bytes of the input read (a file's up to
// Config.Limit), for the summary. It is final after Close. When a run
// stopped early on standard input, the rest cannot be read, and the hash is
// marked as covering only the part read.
func (s *Source) InputSHA256() string {
	sum := hex.EncodeToString(s.sha.h.Sum(nil))
	if !s.shaDone {
		return "partial:" + sum
	}
	return sum
}

// InputBytes is how many bytes of the input InputSHA256 covers. Final after
// Close.
func (s *Source) InputBytes() int64 { return s.sha.n }

// PrefixSHA256 is the SHA-256 of the input's first Config.PrefixAt bytes;
// "" when the input is shorter or PrefixAt is 0. Final after Close.
func (s *Source) PrefixSHA256() string {
	if s.sha.prefix == nil {
		return ""
	}
	return hex.EncodeToString(s.sha.prefix)
}

// Identity is the input's identity so far, while it is read: how many
// bytes the reader has taken, their SHA-256, and the SHA-256 of the first
// Config.PrefixAt bytes ("" until that many are taken). A stream's run
// records it before its first call and keeps it current, so that --resume
// can prove it reads the same input. Safe to call from any goroutine
// until Close; not after.
func (s *Source) Identity() (bytes int64, sha, prefix string) {
	snap := s.hashIn.snapshot()
	if snap.prefix != nil {
		prefix = hex.EncodeToString(snap.prefix)
	}
	return snap.n, hex.EncodeToString(snap.sum), prefix
}

// TakenBytes is how many bytes of the input the reader has taken so far.
// Safe to call from any goroutine.
func (s *Source) TakenBytes() int64 { return s.hashIn.n.Load() }

// RecordsTaken is how many records the reader has read so far. Safe to
// call from any goroutine.
func (s *Source) RecordsTaken() int64 { return s.recordsRead.Load() }

// AllLeadIDsSoFar reports whether every row checked so far had a leadId
// (false before the first). Safe to call from any goroutine.
func (s *Source) AllLeadIDsSoFar() bool { return s.checkedRows.Load() > 0 && !s.sawNoLeadID.Load() }

// CheckPassed reports whether the input has reached Config.CheckAt and
// hashes there as it should (true without a CheckAt). Safe to call from
// any goroutine.
func (s *Source) CheckPassed() bool { return s.checkAt <= 0 || s.checkPassed.Load() }

// PrefixAt is Config.PrefixAt.
func (s *Source) PrefixAt() int64 { return s.sha.at }

// AllLeadIDs reports whether every row read had a leadId (false before the
// first row). Final after Close; not to be called before.
func (s *Source) AllLeadIDs() bool { return s.rows > 0 && !s.noLeadID }

// Grew is how many bytes the file had beyond the bytes read, when Close
// looked: rows appended while the run read it (0 for standard input).
func (s *Source) Grew() int64 { return s.grew }

// Unknown is the input's unknown columns, each once: a CSV header's from
// Open, JSONL keys seen so far; final after Close.
func (s *Source) Unknown() []string { return s.unknown }

// Provided is the fields some column provides: a CSV header's from Open,
// JSONL keys seen so far; final after Close.
func (s *Source) Provided() []lead.Field { return s.provided }

// asyncHash hashes what is written to it in a goroutine of its own, in
// order: SHA-256 (its cost per row: bench/README.md) leaves the reading
// goroutine, the one stage that bounds the pipeline on many cores. Write copies p and hands it
// over; wait returns once everything written is hashed. Writes come from
// one goroutine at a time; snapshot and written are safe from any
// goroutine until wait.
type asyncHash struct {
	full   chan hashItem
	free   chan []byte
	done   chan struct{}
	waited bool
	// n counts the bytes handed over, after they are in full.
	n atomic.Int64
	// last is the last byte handed over that is not a space or a tab
	// (0 before one): whether the input ends with a line end. Written
	// by the writing goroutine; see lastByte.
	last byte
}

// hashItem is bytes to hash, or a request for a snapshot of the hash once
// everything handed over before it is hashed.
type hashItem struct {
	b    []byte
	snap chan<- hashSnapshot
}

// hashSnapshot is the hash of the first n bytes of the input, and of its
// first PrefixAt bytes once that many are hashed (nil before).
type hashSnapshot struct {
	n      int64
	sum    []byte
	prefix []byte
}

func newAsyncHash(to *hashWriter) *asyncHash {
	a := &asyncHash{full: make(chan hashItem, 2), free: make(chan []byte, 3), done: make(chan struct{})}
	go func() {
		defer close(a.done)
		for it := range a.full {
			if it.snap != nil {
				it.snap <- hashSnapshot{n: to.n, sum: to.h.Sum(nil), prefix: to.prefix}
				continue
			}
			to.Write(it.b) // never fails
			select {
			case a.free <- it.b[:0]:
			default:
			}
		}
	}()
	return a
}

func (a *asyncHash) Write(p []byte) (int, error) {
	for i := len(p) - 1; i >= 0; i-- {
		if c := p[i]; c != ' ' && c != '\t' {
			a.last = c
			break
		}
	}
	var b []byte
	select {
	case b = <-a.free:
	default:
	}
	a.full <- hashItem{b: append(b, p...)}
	a.n.Add(int64(len(p)))
	return len(p), nil
}

// lastByte is the last byte written that is not a space or a tab. The
// caller must have seen every Write it asks about happen before (the
// reader's batch that ended the input, through a channel).
func (a *asyncHash) lastByte() byte { return a.last }

// snapshot returns the hash of everything handed over so far.
func (a *asyncHash) snapshot() hashSnapshot {
	c := make(chan hashSnapshot, 1)
	a.full <- hashItem{snap: c}
	return <-c
}

// wait ends the hashing goroutine after it has hashed everything written;
// a Write after it panics. A second call does nothing.
func (a *asyncHash) wait() {
	if !a.waited {
		a.waited = true
		close(a.full)
		<-a.done
	}
}

// hashWriter hashes what is written to it and counts it, keeping the hash of
// the first at bytes apart.
type hashWriter struct {
	h      hash.Hash
	n      int64
	at     int64
	prefix []byte
	blocks *blockHasher // nil unless the Source keeps block hashes
	// checkAt, when above 0, is a byte count whose hash is handed to
	// onCheck once the input reaches it (Config.CheckAt).
	checkAt int64
	onCheck func(sum []byte)
}

func (w *hashWriter) Write(p []byte) (int, error) {
	if w.blocks != nil {
		w.blocks.write(p)
	}
	total := len(p)
	for len(p) > 0 {
		// The next byte count to take a hash at, within p.
		next := int64(-1)
		for _, at := range [2]int64{w.at, w.checkAt} {
			if at > w.n && at <= w.n+int64(len(p)) && (next < 0 || at < next) {
				next = at
			}
		}
		if next < 0 {
			w.h.Write(p)
			w.n += int64(len(p))
			break
		}
		k := next - w.n
		w.h.Write(p[:k])
		w.n, p = next, p[k:]
		sum := w.h.Sum(nil)
		if next == w.at {
			w.prefix = sum
		}
		if next == w.checkAt && w.onCheck != nil {
			w.onCheck(sum)
		}
	}
	return total, nil
}

// warnColumns logs what the user should know about the columns; Close
// calls it once, after the reader has stopped.
func (s *Source) warnColumns() {
	if u := s.unknown; len(u) > 0 {
		s.log.Warn("columns not recognised, ignored (add them to the mapping file if they carry lead data)", "columns", strings.Join(u, ", "))
	}
	if s.sawLeadSource {
		s.log.Warn("leadSourceId column ignored: the service derives the lead source from the credentials")
	}
}

// Close stops the reading goroutine, reports the columns once, and closes
// the files. It may be called more than once.
func (s *Source) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	var errs []error
	if s.stop != nil {
		close(s.stop)
		// The reader may wait on an idle standard input: closing the pipe
		// it reads unblocks it.
		if s.stdinPipe != nil {
			s.stdinPipe.CloseWithError(io.ErrClosedPipe)
		}
		<-s.readDone
		s.workDone.Wait() // work is closed: the workers finish what is queued
		<-s.checkDone     // full is closed, or stop: it ends
		s.provided = s.r.Provided()
		s.unknown = s.r.Unknown()
		s.warnColumns()
	}
	// Every byte the reader pulled went through the hash; when the run
	// stopped early, hash the rest of a file (up to Limit: the bytes a run
	// reads) so the summary still names the whole input.
	if s.hashIn != nil {
		s.hashIn.wait() // the reader is done: what it read is hashed
	}
	if s.file != nil && s.size >= 0 {
		_, err := io.Copy(s.sha, s.in)
		errs = append(errs, err)
		s.shaDone = err == nil
		if st, err := s.file.Stat(); err == nil && st.Size() > s.sha.n {
			s.grew = st.Size() - s.sha.n
		}
	} else if s.cur != nil && errors.Is(s.cur.err, io.EOF) && s.pos >= len(s.cur.rows) {
		s.shaDone = true
	}
	if s.rejectsFile != nil {
		// Every record written so far is whole once flushed: the rows
		// read (all of them, or those before a stop) are in it.
		if err := s.rejects.Flush(); err != nil {
			s.rejectsFile.Abort()
			errs = append(errs, fmt.Errorf("write the rejects file: %w", err))
		} else if err := s.rejectsFile.Commit(); err != nil {
			errs = append(errs, fmt.Errorf("write the rejects file: %w", err))
		}
	}
	if s.r != nil {
		errs = append(errs, s.r.Close())
	}
	if s.file != nil {
		errs = append(errs, s.file.Close())
	}
	return errors.Join(errs...)
}
