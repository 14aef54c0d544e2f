// Package pgtest starts a PostgreSQL server for tests: the ledger's
// PostgreSQL store is tested against the real thing, as the submitter is
// against leadsim. The server is Debian's postgresql package (initdb and
// postgres from PATH or /usr/lib/postgresql/*/bin); .ci/run installs it
// when it is missing, and without it the tests that need it fail, never
// skip. It listens only on a unix socket in a private folder, with trust
// authentication and no fsync, and is gone when Stop returns.
//
// PostgreSQL refuses to run as root: as root, the server runs as the user
// nobody (uid 65534), in a folder given to that user.
package pgtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// Server is one PostgreSQL server started for a test binary.
type Server struct {
	dir  string
	sock string
	cmd  *exec.Cmd
	log  string
	n    atomic.Int64
}

// user is the server's superuser.
const user = "bulkload"

// bin finds a PostgreSQL program: on PATH, else in Debian's versioned
// folders (the newest).
func bin(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/" + name)
	sort.Strings(found)
	if len(found) == 0 {
		return "", fmt.Errorf("pgtest: %s not found on PATH or in /usr/lib/postgresql/*/bin: install PostgreSQL (Debian: apt-get install postgresql; .ci/run does)", name)
	}
	return found[len(found)-1], nil
}

// command runs a PostgreSQL program as the server's user: uid (nobody)
// when this process is root (uid -1: this process's user), in a process
// group of its own.
func command(uid int, name string, args ...string) (*exec.Cmd, error) {
	p, err := bin(name)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(p, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if uid >= 0 {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}
	}
	return cmd, nil
}

// Start initialises a database cluster in a new folder and starts its
// server. The caller stops it (Stop).
func Start() (*Server, error) {
	dir, err := os.MkdirTemp("", "bulkload-pgtest-")
	if err != nil {
		return nil, err
	}
	s := &Server{dir: dir, sock: filepath.Join(dir, "sock"), log: filepath.Join(dir, "server.log")}
	uid := -1
	if os.Geteuid() == 0 {
		uid = 65534 // nobody
	}
	for _, d := range []string{dir, s.sock} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			s.remove()
			return nil, err
		}
		if uid >= 0 {
			if err := os.Chown(d, uid, uid); err != nil {
				s.remove()
				return nil, err
			}
		}
	}
	data := filepath.Join(dir, "data")
	initdb, err := command(uid, "initdb", "-D", data, "-U", user, "--auth=trust", "-E", "UTF8", "--no-locale", "-N")
	if err != nil {
		s.remove()
		return nil, err
	}
	if out, err := initdb.CombinedOutput(); err != nil {
		s.remove()
		return nil, fmt.Errorf("pgtest: initdb: %w\n%s", err, out)
	}
	logf, err := os.Create(s.log)
	if err != nil {
		s.remove()
		return nil, err
	}
	defer logf.Close()
	s.cmd, err = command(uid, "postgres", "-D", data, "-k", s.sock, "-c", "listen_addresses=",
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "shared_buffers=16MB", "-c", "max_connections=200")
	if err != nil {
		s.remove()
		return nil, err
	}
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	if err := s.cmd.Start(); err != nil {
		s.remove()
		return nil, fmt.Errorf("pgtest: start postgres: %w", err)
	}
	if err := s.ready(); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// ready waits for the server to take connections (bounded: a server that
// does not start in 60 s has failed).
func (s *Server) ready() error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		db, err := s.open("postgres")
		if err == nil {
			err = db.Ping()
			db.Close()
		}
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(s.log)
			return fmt.Errorf("pgtest: the server did not take connections: %w\n%s", err, log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// URL is the connection URL of database db.
func (s *Server) URL(db string) string {
	return "postgres://" + user + "@/" + db + "?host=" + s.sock + "&sslmode=disable"
}

func (s *Server) open(db string) (*sql.DB, error) {
	cfg, err := pgx.ParseConfig(s.URL(db))
	if err != nil {
		return nil, err
	}
	return stdlib.OpenDB(*cfg), nil
}

// NewDatabase creates an empty database of its own for one test and
// returns its URL.
func (s *Server) NewDatabase() (string, error) {
	name := "t" + strconv.FormatInt(s.n.Add(1), 10)
	db, err := s.open("postgres")
	if err != nil {
		return "", err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		return "", fmt.Errorf("pgtest: create database: %w", err)
	}
	return s.URL(name), nil
}

// Stop stops the server (fast shutdown: its sessions end) and removes its
// folder.
func (s *Server) Stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(syscall.SIGINT)
		done := make(chan error, 1)
		go func() { done <- s.cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}
	s.remove()
}

func (s *Server) remove() { _ = os.RemoveAll(s.dir) }

// ErrNotStarted is returned by a shared server whose start failed.
var ErrNotStarted = errors.New("pgtest: the server did not start")
