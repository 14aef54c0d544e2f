package ledger

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bulkload/bulkload/internal/pgtest"
	"github.com/bulkload/bulkload/lead"
)

// The PostgreSQL server of this test binary, started by the first test
// that needs it and stopped by TestMain.
var (
	pgOnce   sync.Once
	pgServer *pgtest.Server
	pgErr    error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if pgServer != nil {
		pgServer.Stop()
	}
	os.Exit(code)
}

// postgresURL is a new, empty database of the test binary's server. A
// machine without PostgreSQL fails the test (pgtest says what to install).
func postgresURL(t testing.TB) string {
	t.Helper()
	pgOnce.Do(func() { pgServer, pgErr = pgtest.Start() })
	if pgErr != nil {
		t.Fatal(pgErr)
	}
	u, err := pgServer.NewDatabase()
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// store is one of the two stores, for a test that runs on both.
type store struct {
	name  string
	where func(t testing.TB) string
}

func stores() []store {
	return []store{
		{"sqlite", func(t testing.TB) string { return filepath.Join(t.TempDir(), "ledger.sqlite") }},
		{"postgres", postgresURL},
	}
}

// eachStore runs f on a new ledger of each store.
func eachStore(t *testing.T, f func(t *testing.T, where string)) {
	for _, s := range stores() {
		t.Run(s.name, func(t *testing.T) { f(t, s.where(t)) })
	}
}

func open(t testing.TB, where string) *Ledger {
	t.Helper()
	l, err := Open(context.Background(), Config{Where: where, Poll: time.Millisecond})
	if err != nil {
		t.Fatalf("Open(%s): %v", where, err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

var acct = Account{Endpoint: "https://leads.example.com/graphql", ClientID: "client-1"}

func begin(t testing.TB, l *Ledger, p ClaimPolicy) *Run {
	t.Helper()
	r, err := l.BeginRun(context.Background(), RunInfo{Account: acct, Command: "upload", Input: "leads.csv", Results: "/runs/leads.results.csv", JobName: "acme"}, p)
	if err != nil {
		t.Fatalf("BeginRun: %v", err)
	}
	return r
}

func end(t testing.TB, r *Run) {
	t.Helper()
	if err := r.End(context.Background(), 0, []byte(`{"mode":"upload"}`), "abc"); err != nil {
		t.Fatalf("End: %v", err)
	}
}

func input(first string) lead.Input {
	return lead.Input{FirstName: first, LastName: "Doe", DateOfBirth: "1977-07-07", SocialSecurityNumber: "123456789", ZipCode: "02139"}
}

func claim(t testing.TB, r *Run, k Key, row int) Decision {
	t.Helper()
	d, err := r.Claim(context.Background(), k, row)
	if err != nil {
		t.Fatalf("Claim(%s): %v", k.Lead, err)
	}
	return d
}

func TestDecide(t *testing.T) {
	for _, tc := range []struct {
		name      string
		h         held
		hash      string
		p         ClaimPolicy
		kind      Kind
		ambiguous bool
		take      bool
	}{
		{"claimed by a live run", held{state: StateClaimed, hash: "a", alive: true}, "a", ClaimPolicy{}, Busy, false, false},
		{"claimed by a dead run", held{state: StateClaimed, hash: "a"}, "a", ClaimPolicy{}, Send, true, true},
		{"claimed by a dead run, other content", held{state: StateClaimed, hash: "a"}, "b", ClaimPolicy{}, Send, true, true},
		{"created, its run alive", held{state: StateCreated, hash: "a", alive: true}, "a", ClaimPolicy{}, Busy, false, false},
		{"created, its run dead", held{state: StateCreated, hash: "a"}, "a", ClaimPolicy{}, Submit, false, true},
		{"created, other content", held{state: StateCreated, hash: "a"}, "b", ClaimPolicy{}, Conflict, false, false},
		{"created, other content, --resend-changed", held{state: StateCreated, hash: "a"}, "b", ClaimPolicy{ResendChanged: true}, Send, true, true},
		{"submit_failed, its run alive", held{state: StateSubmitFailed, hash: "a", alive: true}, "a", ClaimPolicy{}, Submit, false, true},
		{"processed", held{state: StateProcessed, hash: "a"}, "a", ClaimPolicy{}, AlreadySent, false, false},
		{"submitted", held{state: StateSubmitted, hash: "a"}, "a", ClaimPolicy{}, AlreadySent, false, false},
		{"submitted, content unknown", held{state: StateSubmitted}, "a", ClaimPolicy{}, AlreadySent, false, false},
		{"submitted, --resend", held{state: StateSubmitted, hash: "a"}, "a", ClaimPolicy{Resend: true}, Send, false, true},
		{"processed, other content", held{state: StateProcessed, hash: "a"}, "b", ClaimPolicy{}, Conflict, false, false},
		{"processed, other content, --resend-changed", held{state: StateProcessed, hash: "a"}, "b", ClaimPolicy{ResendChanged: true}, Send, false, true},
		{"processed, other content, --resend", held{state: StateProcessed, hash: "a"}, "b", ClaimPolicy{Resend: true}, Send, false, true},
		{"failed, refused", held{state: StateFailed, hash: "a"}, "a", ClaimPolicy{}, Send, false, true},
		{"failed, ambiguous", held{state: StateFailed, hash: "a", ambiguous: true}, "b", ClaimPolicy{}, Send, true, true},
		{"unverified", held{state: StateUnverified, hash: "a", alive: true}, "a", ClaimPolicy{}, Send, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kind, amb, take := decide(tc.h, tc.hash, tc.p)
			if kind != tc.kind || amb != tc.ambiguous || take != tc.take {
				t.Errorf("decide(%+v, %q, %+v) = %v, %v, %v; want %v, %v, %v", tc.h, tc.hash, tc.p, kind, amb, take, tc.kind, tc.ambiguous, tc.take)
			}
		})
	}
}

// TestNightAfterNight walks one lead through three runs: sent and created
// (qualified) by the first, which dies before submitting it; submitted by
// the second; left alone by the third, which learns when and by whom it
// was sent.
func TestNightAfterNight(t *testing.T) {
	eachStore(t, func(t *testing.T, where string) {
		l := open(t, where)
		k := l.KeyOf("ACME-1", input("Ann"))

		r1 := begin(t, l, ClaimPolicy{})
		if d := claim(t, r1, k, 1); d.Kind != Send || d.Ambiguous {
			t.Fatalf("first claim = %+v, want Send", d)
		}
		r1.Record(Answer{Key: k, Row: 1, Status: lead.StatusCreated, Created: true, ServiceID: "lead-1", ResultCode: 1013, Bid: "$42.50"})
		end(t, r1) // as if it stopped before submitLead

		r2 := begin(t, l, ClaimPolicy{})
		d := claim(t, r2, k, 7)
		if d.Kind != Submit || d.Earlier == nil || d.Earlier.ServiceID != "lead-1" || d.Earlier.Run != r1.ID {
			t.Fatalf("second claim = %+v (earlier %+v), want Submit of lead-1 from run %d", d, d.Earlier, r1.ID)
		}
		r2.Record(Answer{Key: k, Row: 7, Status: lead.StatusSubmitted, ServiceID: "lead-1", ResultCode: 1013, Bid: "$42.50"})
		end(t, r2)

		r3 := begin(t, l, ClaimPolicy{})
		d = claim(t, r3, k, 3)
		e := d.Earlier
		if d.Kind != AlreadySent || e == nil || e.Run != r1.ID || e.ServiceID != "lead-1" || e.ResultCode != 1013 || e.Bid != "$42.50" || !e.Submitted() || e.At.IsZero() || e.Results != "/runs/leads.results.csv" {
			t.Fatalf("third claim = %+v (earlier %+v), want AlreadySent, sent by run %d as lead-1, submitted", d, e, r1.ID)
		}
		// Changed content under the same leadId: a conflict, unless the
		// run is told to send it.
		k2 := l.KeyOf("ACME-1", input("Anne"))
		if d := claim(t, r3, k2, 3); d.Kind != Conflict || d.Earlier == nil || d.Earlier.ServiceID != "lead-1" {
			t.Fatalf("changed content = %+v, want Conflict with the earlier lead", d)
		}
		end(t, r3)
		r4 := begin(t, l, ClaimPolicy{ResendChanged: true})
		if d := claim(t, r4, k2, 3); d.Kind != Send {
			t.Fatalf("changed content with ResendChanged = %+v, want Send", d)
		}
		end(t, r4)

		runs, err := l.History(context.Background(), Filter{JobName: "acme"})
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) != 4 || runs[0].ID != r1.ID || runs[0].ExitCode == nil || string(runs[0].Summary) != `{"mode":"upload"}` || runs[0].Account != acct {
			t.Fatalf("History = %+v, want the 4 runs, each with its summary", runs)
		}
	})
}

// TestDeadRunsClaim: a lead claimed by a run that died before its answer
// was recorded is sent again with the own-lead check (ambiguous); one
// claimed by a live run is waited for.
func TestDeadRunsClaim(t *testing.T) {
	eachStore(t, func(t *testing.T, where string) {
		l := open(t, where)
		k := l.KeyOf("ACME-2", input("Bo"))
		r1 := begin(t, l, ClaimPolicy{})
		claim(t, r1, k, 2)

		r2 := begin(t, l, ClaimPolicy{})
		got := make(chan Decision, 1)
		go func() {
			d, err := r2.Claim(context.Background(), k, 2)
			if err != nil {
				t.Error(err)
			}
			got <- d
		}()
		// r2 waits while r1 holds the lead; r1's answer settles it.
		select {
		case d := <-got:
			t.Fatalf("claim of a lead a live run holds = %+v, want a wait", d)
		case <-time.After(20 * time.Millisecond):
		}
		r1.Record(Answer{Key: k, Row: 2, Status: lead.StatusProcessed, Created: true, ServiceID: "lead-2", ResultCode: 1001})
		if d := <-got; d.Kind != AlreadySent || d.Earlier.ServiceID != "lead-2" {
			t.Fatalf("claim after the answer = %+v, want AlreadySent", d)
		}
		end(t, r1)
		end(t, r2)

		// A run that dies (its lock released by the OS, no End) while it
		// holds a lead.
		k3 := l.KeyOf("ACME-3", input("Cy"))
		r3 := begin(t, l, ClaimPolicy{})
		claim(t, r3, k3, 3)
		close(r3.stop)
		<-r3.done
		r3.release()
		r4 := begin(t, l, ClaimPolicy{})
		if d := claim(t, r4, k3, 3); d.Kind != Send || !d.Ambiguous {
			t.Fatalf("claim of a dead run's lead = %+v, want Send, ambiguous", d)
		}
		end(t, r4)
		runs, err := l.History(context.Background(), Filter{})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range runs {
			if r.ID == r3.ID && (r.Alive || !r.Ended.IsZero() || r.ExitCode != nil) {
				t.Errorf("the dead run = %+v, want not alive and not ended", r)
			}
		}
	})
}

// TestConcurrentClaims: three runs (shards on three machines) claim the
// same 100 leads at once, 8 goroutines each; every lead is sent by
// exactly one of them, and the others learn it was sent.
func TestConcurrentClaims(t *testing.T) {
	eachStore(t, func(t *testing.T, where string) {
		const leads, runs, workers = 100, 3, 8
		var sends [leads]atomic.Int32
		var already atomic.Int32
		var wg sync.WaitGroup
		for range runs {
			// Each run opens the ledger itself, as a process would.
			l := open(t, where)
			r := begin(t, l, ClaimPolicy{})
			next := atomic.Int32{}
			var rw sync.WaitGroup
			for range workers {
				rw.Go(func() {
					for {
						i := int(next.Add(1)) - 1
						if i >= leads {
							return
						}
						k := l.KeyOf(fmt.Sprintf("L-%d", i), input(fmt.Sprint(i)))
						d, err := r.Claim(context.Background(), k, i+1)
						if err != nil {
							t.Error(err)
							return
						}
						switch d.Kind {
						case Send:
							sends[i].Add(1)
							r.Record(Answer{Key: k, Row: i + 1, Status: lead.StatusProcessed, Created: true, ServiceID: fmt.Sprint("id-", i), ResultCode: 1001})
						case AlreadySent:
							already.Add(1)
						default:
							t.Errorf("lead %d: %+v", i, d)
						}
					}
				})
			}
			wg.Go(func() {
				rw.Wait()
				end(t, r)
			})
		}
		wg.Wait()
		for i := range sends {
			if n := sends[i].Load(); n != 1 {
				t.Errorf("lead %d sent %d times, want once", i, n)
			}
		}
		if n := already.Load(); n != leads*(runs-1) {
			t.Errorf("%d claims answered AlreadySent, want %d", n, leads*(runs-1))
		}
	})
}

// TestNoPII: the ledger keeps no SSN and no date of birth, and its content
// hashes are keyed per ledger: the same lead hashes otherwise in another.
func TestNoPII(t *testing.T) {
	dir := t.TempDir()
	a, b := open(t, filepath.Join(dir, "a.sqlite")), open(t, filepath.Join(dir, "b.sqlite"))
	in := input("Dee")
	if a.ContentHash(in) == b.ContentHash(in) {
		t.Error("two ledgers hash one lead alike: the hash is not keyed per ledger")
	}
	r := begin(t, a, ClaimPolicy{})
	k := a.KeyOf("", in)
	claim(t, r, k, 1)
	r.Record(Answer{Key: k, Row: 1, Status: lead.StatusProcessed, Created: true, ServiceID: "x", ResultCode: 1001})
	end(t, r)
	a.Close()
	files, _ := filepath.Glob(filepath.Join(dir, "a.sqlite*"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []string{"123456789", "123-45-6789", "1977-07-07", "19770707"} {
			if bytes.Contains(data, []byte(v)) {
				t.Errorf("%s holds %q", f, v)
			}
		}
		if st, _ := os.Stat(f); st.Mode().Perm() != 0o600 && !st.IsDir() {
			t.Errorf("%s has mode %04o, want 0600", f, st.Mode().Perm())
		}
	}
}

// TestOpenRefuses: a file that is not a ledger, a locked one, a link and
// a newer schema stop Open with an error that says so, never a fresh
// ledger in its place.
func TestOpenRefuses(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()

	corrupt := filepath.Join(dir, "corrupt.sqlite")
	if err := os.WriteFile(corrupt, bytes.Repeat([]byte("not a database "), 400), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, Config{Where: corrupt}); !errors.Is(err, ErrCorrupt) {
		t.Errorf("Open(a file of text) = %v, want ErrCorrupt", err)
	}

	locked := filepath.Join(dir, "locked.sqlite")
	open(t, locked).Close()
	holder, err := sql.Open("sqlite", locked)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	conn, err := holder.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "BEGIN EXCLUSIVE"); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, Config{Where: locked, BusyTimeout: 10 * time.Millisecond}); !errors.Is(err, ErrLocked) {
		t.Errorf("Open(a locked ledger) = %v, want ErrLocked", err)
	}
	conn.ExecContext(ctx, "ROLLBACK")
	conn.Close()

	link := filepath.Join(dir, "link.sqlite")
	if err := os.Symlink(filepath.Join(dir, "elsewhere"), link); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, Config{Where: link}); err == nil {
		t.Error("Open(a symbolic link) succeeded, want it refused")
	}

	newer := filepath.Join(dir, "newer.sqlite")
	open(t, newer).Close()
	db, _ := sql.Open("sqlite", newer)
	if _, err := db.Exec(`UPDATE ledger_meta SET value = '99' WHERE name = 'schema'`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := Open(ctx, Config{Where: newer}); !errors.Is(err, ErrNewer) {
		t.Errorf("Open(a newer ledger) = %v, want ErrNewer", err)
	}

	if _, err := Open(ctx, Config{Where: "postgres://bulkload:hunter2@127.0.0.1:1/ledger?connect_timeout=1"}); !errors.Is(err, ErrUnreachable) || bytes.Contains([]byte(err.Error()), []byte("hunter2")) {
		t.Errorf("Open(no server) = %v, want ErrUnreachable without the password", err)
	}
}

func TestDefaultPath(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"XDG_STATE_HOME": "/s", "HOME": "/h"}, "/s/bulkload/ledger.sqlite"},
		{map[string]string{"HOME": "/h"}, "/h/.local/state/bulkload/ledger.sqlite"},
		{map[string]string{"XDG_STATE_HOME": "rel", "HOME": "/h"}, "/h/.local/state/bulkload/ledger.sqlite"},
		{map[string]string{}, ""},
	} {
		got, err := DefaultPath(env(tc.env))
		if got != tc.want || (err != nil) != (tc.want == "") {
			t.Errorf("DefaultPath(%v) = %q, %v; want %q", tc.env, got, err, tc.want)
		}
	}
}

func TestRedactURL(t *testing.T) {
	got := RedactURL("postgres://ledger:s3cret@db.example.com:5432/bulkload?sslmode=require&password=x")
	if want := "postgres://ledger:REDACTED@db.example.com:5432/bulkload?password=REDACTED&sslmode=require"; got != want {
		t.Errorf("RedactURL = %q, want %q", got, want)
	}
}

// TestConcurrentOpen: runs that start at once on a new SQLite ledger (two
// cron jobs, shards on one host) all open it: the first creates it, the
// others wait for its migration, none fails as locked.
func TestConcurrentOpen(t *testing.T) {
	where := filepath.Join(t.TempDir(), "ledger.sqlite")
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			l, err := Open(context.Background(), Config{Where: where})
			if err != nil {
				t.Error(err)
				return
			}
			r, err := l.BeginRun(context.Background(), RunInfo{Account: acct, Command: "upload"}, ClaimPolicy{})
			if err != nil {
				t.Error(err)
			} else {
				r.End(context.Background(), 0, nil, "")
			}
			l.Close()
		})
	}
	wg.Wait()
}

// TestContentHashStable: a lead's content hash is the HMAC-SHA256, under
// the ledger's key, of json.Marshal of its LeadInput, whichever hasher
// (reused or new) computes it and from however many goroutines at once:
// the ledgers written before hold hashes of that form, and a lead whose
// hash changed would be a conflict with itself.
func TestContentHashStable(t *testing.T) {
	l := open(t, filepath.Join(t.TempDir(), "ledger.sqlite"))
	ten := 10
	ins := []lead.Input{
		input("Ann"),
		{FirstName: "<b>Zoë</b> & \u2028co", LastName: `O"Brien\`, ZipCode: "02139", LoanAmount: &ten},
		{},
	}
	want := func(in lead.Input) string {
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		m := hmac.New(sha256.New, l.key)
		m.Write(b)
		return hex.EncodeToString(m.Sum(nil))
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 50 {
				for _, in := range ins {
					if got, w := l.ContentHash(in), want(in); got != w {
						t.Errorf("ContentHash(%+v) = %s, want %s", in, got, w)
						return
					}
				}
			}
		})
	}
	wg.Wait()
}

// TestClaimBatchMixed: one batch (one many-row statement) of leads the
// ledger holds, new leads and a lead twice: the new ones are Send, the
// held ones decided from what the ledger holds, the second row of a lead
// Busy (this run holds it for its first row), and the ledger records each
// new lead's first row. A cumulative export's batches look like this.
func TestClaimBatchMixed(t *testing.T) {
	eachStore(t, func(t *testing.T, where string) {
		l := open(t, where)
		ctx := context.Background()
		key := func(id string) Key { return l.KeyOf(id, input(id)) }
		r1 := begin(t, l, ClaimPolicy{})
		for i, id := range []string{"A", "B"} {
			claim(t, r1, key(id), i+1)
			r1.Record(Answer{Key: key(id), Row: i + 1, Status: lead.StatusProcessed, Created: true, ServiceID: "lead-" + id, ResultCode: 1001})
		}
		end(t, r1)

		r2 := begin(t, l, ClaimPolicy{})
		ids := []string{"A", "C", "B", "C", "D", "E", "F", "G"}
		items := make([]ClaimItem, len(ids))
		for i, id := range ids {
			items[i] = ClaimItem{Key: key(id), Row: 10 + i}
		}
		ds, err := r2.ClaimBatch(ctx, items)
		if err != nil {
			t.Fatal(err)
		}
		want := []Kind{AlreadySent, Send, AlreadySent, Busy, Send, Send, Send, Send}
		for i, d := range ds {
			if d.Kind != want[i] || d.Ambiguous || d.Key != items[i].Key {
				t.Errorf("ClaimBatch item %d (%s, row %d) = %+v, want kind %d, not ambiguous", i, ids[i], items[i].Row, d, want[i])
			}
		}
		if e := ds[0].Earlier; e == nil || e.ServiceID != "lead-A" || e.Run != r1.ID {
			t.Errorf("A's earlier = %+v, want lead-A of run %d", e, r1.ID)
		}
		var row, run int64
		var state string
		if err := l.db.QueryRowContext(ctx, l.d.rebind(`SELECT row_no, run_id, state FROM leads WHERE lead_key = ?`), key("C").Lead).Scan(&row, &run, &state); err != nil {
			t.Fatal(err)
		}
		if row != 11 || run != r2.ID || state != string(StateClaimed) {
			t.Errorf("C in the ledger: row %d, run %d, %s; want row 11 (its first), run %d, claimed", row, run, state, r2.ID)
		}
		end(t, r2)
	})
}

// TestBatchWrites: a batch of claims larger than one statement and not a
// multiple of one (SQLite's 64, 8 and 1 rows; PostgreSQL's chunks of
// 64), then their answers in one transaction, a lead's created and
// submitted answers merged, an answer that knows no content hash (the
// lead's stays), and one for a lead no claim inserted (an upsert's
// insert): every value of every lead lands in its own column.
func TestBatchWrites(t *testing.T) {
	eachStore(t, func(t *testing.T, where string) {
		l := open(t, where)
		ctx := context.Background()
		const n = 75
		r := begin(t, l, ClaimPolicy{})
		keys := make([]Key, n)
		items := make([]ClaimItem, n)
		for i := range n {
			keys[i] = l.KeyOf(fmt.Sprintf("W-%d", i), input(fmt.Sprint("W", i)))
			items[i] = ClaimItem{Key: keys[i], Row: 100 + i}
		}
		ds, err := r.ClaimBatch(ctx, items)
		if err != nil {
			t.Fatal(err)
		}
		for i, d := range ds {
			if d.Kind != Send || d.Key != keys[i] {
				t.Fatalf("claim %d = %+v, want Send of its key", i, d)
			}
		}
		for i, k := range keys {
			switch i % 3 {
			case 0:
				r.Record(Answer{Key: k, Row: 100 + i, Status: lead.StatusProcessed, Created: true, ServiceID: fmt.Sprint("s-", i), ResultCode: 1001})
			case 1:
				r.Record(Answer{Key: k, Row: 100 + i, Status: lead.StatusCreated, Created: true, ServiceID: fmt.Sprint("s-", i), ResultCode: 1014, Bid: fmt.Sprintf("$%d.50", i)})
				r.Record(Answer{Key: k, Row: 100 + i, Status: lead.StatusSubmitted})
			default:
				noHash := k
				noHash.Hash = ""
				r.Record(Answer{Key: noHash, Row: 100 + i, Status: lead.StatusFailed, Ambiguous: true, ResultCode: 503})
			}
		}
		other := KeyOfID("W-other")
		r.Record(Answer{Key: other, Row: 7, Status: lead.StatusSubmitted, ServiceID: "s-other", ResultCode: 1013, Bid: "$1.00"})
		if err := r.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		type row struct {
			leadID, hash, state, sid, bid string
			amb, code                     int
			run, rowNo, sentRun           int64
			sent, answered                bool
		}
		read := func(k Key) row {
			var w row
			var sentAt, answeredAt int64
			if err := l.db.QueryRowContext(ctx, l.d.rebind(`SELECT lead_id, content_hash, state, service_id, bid, ambiguous, result_code, run_id, row_no, sent_run_id, sent_at, answered_at FROM leads WHERE lead_key = ?`), k.Lead).
				Scan(&w.leadID, &w.hash, &w.state, &w.sid, &w.bid, &w.amb, &w.code, &w.run, &w.rowNo, &w.sentRun, &sentAt, &answeredAt); err != nil {
				t.Fatalf("%s: %v", k.Lead, err)
			}
			w.sent, w.answered = sentAt != 0, answeredAt != 0
			return w
		}
		for i, k := range keys {
			want := row{leadID: k.LeadID, hash: k.Hash, run: r.ID, rowNo: int64(100 + i), answered: true}
			switch i % 3 {
			case 0:
				want.state, want.sid, want.code, want.sentRun, want.sent = "processed", fmt.Sprint("s-", i), 1001, r.ID, true
			case 1:
				want.state, want.sid, want.code, want.bid, want.sentRun, want.sent = "submitted", fmt.Sprint("s-", i), 1014, fmt.Sprintf("$%d.50", i), r.ID, true
			default:
				want.state, want.amb, want.code = "failed", 1, 503
			}
			if got := read(k); got != want {
				t.Errorf("lead %d = %+v, want %+v", i, got, want)
			}
		}
		want := row{leadID: "W-other", state: "submitted", sid: "s-other", bid: "$1.00", code: 1013, run: r.ID, rowNo: 7, answered: true}
		if got := read(other); got != want {
			t.Errorf("the lead no claim inserted = %+v, want %+v", got, want)
		}
		end(t, r)
	})
}
