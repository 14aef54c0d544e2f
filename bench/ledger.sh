#!/usr/bin/env bash
# bench/ledger.sh: what the ledger costs an upload. bulkload upload against
# the simulator (a separate process, so the client's CPU is measured apart),
# with --ledger off, a SQLite ledger and a PostgreSQL ledger, interleaved
# and repeated, each run on a fresh ledger and a fresh simulator:
#   fast) no latency, --concurrency 16 --rate 0, 10,000 leads: the client's
#         CPU and wall per 10,000 leads (the ledger's worst case: nothing
#         else takes time)
#   slow) createLead latency 200ms, --concurrency 32 --rate 0, 2,000
#         leads: wall (the ledger should not show)
#
#   bench/ledger.sh                       # both, 3 rounds, all stores
#   ROUNDS=5 STORES="off sqlite" SCENARIOS=fast bench/ledger.sh
#   N_FAST=1000 N_SLOW=200 ROUNDS=1 bench/ledger.sh   # a quick check of the script
#   PORT=18899 bench/ledger.sh            # another loopback port (default 18788)
#   BASE_BULKLOAD=/tmp/base/bulkload bench/ledger.sh   # base vs change
#
# BASE_BULKLOAD: a bulkload built from another commit (the base), run
# beside this checkout's (the change) in every round, each store one after
# the other (base, then change), so that the two meet the same load; the
# table shows each against its own --ledger off.
#
# PostgreSQL: initdb and postgres from PATH or /usr/lib/postgresql/*/bin
# (Debian's postgresql package), started here on a unix socket in bench/out
# (as nobody when run as root) and stopped on exit; fsync stays on, as a
# production server's would. Output in bench/out/ (gitignored). Prints a
# table of medians.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

OUT=${BENCH_OUT:-bench/out} # not $OUT: a device runner may set that
PORT=${PORT:-18788}
ROUNDS=${ROUNDS:-3}
STORES=${STORES:-"off sqlite postgres"}
SCENARIOS=${SCENARIOS:-"fast slow"}
TIMEOUT=${TIMEOUT:-5m}
N_FAST=${N_FAST:-10000} # rows of the fast scenario
N_SLOW=${N_SLOW:-2000}  # rows of the slow one
BASE="http://127.0.0.1:$PORT"
mkdir -p "$OUT"

if [[ -z "${NOBUILD:-}" ]]; then
  echo "== build (bench/out)" >&2
  go build -o "$OUT/bulkload" ./cmd/bulkload
  for tool in gen measure; do go build -o "$OUT/$tool" "./bench/$tool"; done
fi

kv() { tr ' ' '\n' <"$1" | sed -n "s/^$2=//p" | head -n 1; }
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; }

SIM_PID="" PG_PID="" PG_DIR=""
stop_sim() {
  if [[ -n "$SIM_PID" ]]; then
    kill "$SIM_PID" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$SIM_PID" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$SIM_PID" 2>/dev/null || true
    wait "$SIM_PID" 2>/dev/null || true
    SIM_PID=""
  fi
}
stop_pg() {
  if [[ -n "$PG_PID" ]]; then
    kill -INT "$PG_PID" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$PG_PID" 2>/dev/null || break; sleep 0.1; done
    PG_PID=""
  fi
  [[ -n "$PG_DIR" ]] && rm -rf "$PG_DIR"
  return 0
}
trap 'stop_sim; stop_pg' EXIT
trap 'exit 130' INT TERM

start_sim() {
  local name=$1; shift
  if port_open; then echo "port $PORT is already in use: set PORT" >&2; exit 1; fi
  "$OUT/bulkload" sim --addr "127.0.0.1:$PORT" --log-level warn "$@" >"$OUT/ledger-sim-$name.log" 2>&1 &
  SIM_PID=$!
  for _ in $(seq 1 100); do
    if port_open; then return 0; fi
    kill -0 "$SIM_PID" 2>/dev/null || { echo "simulator exited; see $OUT/ledger-sim-$name.log" >&2; exit 1; }
    sleep 0.1
  done
  echo "simulator did not listen within 10 s" >&2; exit 1
}

pgbin() {
  command -v "$1" 2>/dev/null && return 0
  ls /usr/lib/postgresql/*/bin/"$1" 2>/dev/null | sort | tail -n 1 | grep . || { echo "no $1: install postgresql, or STORES=\"off sqlite\"" >&2; exit 1; }
}
PGURL=""
start_pg() {
  PG_DIR=$(mktemp -d /tmp/bulkload-bench-pg.XXXXXX)
  local as=()
  if [[ $(id -u) -eq 0 ]]; then chown nobody "$PG_DIR"; as=(setpriv --reuid=nobody --regid=nogroup --clear-groups); fi
  "${as[@]}" "$(pgbin initdb)" -D "$PG_DIR/data" -U bulkload --auth=trust -E UTF8 --no-locale >"$OUT/ledger-pg-init.log" 2>&1
  "${as[@]}" "$(pgbin postgres)" -D "$PG_DIR/data" -k "$PG_DIR" -c listen_addresses= -c shared_buffers=128MB >"$OUT/ledger-pg.log" 2>&1 &
  PG_PID=$!
  for _ in $(seq 1 100); do [[ -S "$PG_DIR/.s.PGSQL.5432" ]] && break; sleep 0.1; done
  sleep 0.5
  PGURL="postgres://bulkload@/DB?host=$PG_DIR&sslmode=disable"
}
createdb_() { "$(pgbin psql)" -h "$PG_DIR" -U bulkload -d postgres -qc "CREATE DATABASE $1" >/dev/null; }

gen_file() {
  f="$OUT/ledger-$1-s$2.csv"
  [[ -s "$f" ]] || "$OUT/gen" -q -n "$1" -seed "$2" -invalid 0 -prefix "LG$2-" -o "$f"
}

# one SCENARIO STORE ROUND FILE CONC [SIM FLAGS...], with $BIN (and $TAG
# after the store's name in the rows: "@base" for the base)
n_db=0
BIN="$OUT/bulkload" TAG=""
one() {
  local sc=$1 st=$2 r=$3 file=$4 conc=$5; shift 5
  local name="$sc-$st$TAG-$r" ledger
  case $st in
  off) ledger=off ;;
  sqlite) ledger="$OUT/ledger-$name.sqlite"; rm -f "$ledger"* ;;
  postgres) n_db=$((n_db + 1)); createdb_ "b$n_db"; ledger=${PGURL/DB/b$n_db} ;;
  esac
  start_sim "$name" "$@"
  # Each run's results in a folder of its own: a results file of the same
  # input beside it would be an earlier run to resume (README, "A results
  # path that moved").
  local dir="$OUT/ledger-runs/$name"
  rm -rf "$dir"; mkdir -p "$dir"
  rm -f "$OUT/ledger-$name.kv" # measure appends
  set +e
  BULKLOAD_CLIENT_SECRET=bulkload-sim-secret BULKLOAD_LEDGER="$ledger" "$OUT/measure" -label "$name" -o "$OUT/ledger-$name.kv" -timeout "$TIMEOUT" -- \
    "$BIN" upload --endpoint "$BASE/graphql" --auth-url "$BASE" --tenant-id sim-tenant \
    --client-id bulkload-sim-client --app-id sim-debt-core --concurrency "$conc" --rate 0 --progress off \
    --results "$dir/results.csv" "$file" 2>"$OUT/ledger-$name.log"
  local rc=$?
  set -e
  stop_sim
  [[ $rc -eq 0 ]] || { echo "$name: exit $rc; see $OUT/ledger-$name.log" >&2; tail -n 5 "$OUT/ledger-$name.log" >&2; }
  echo "$sc $st$TAG $(kv "$OUT/ledger-$name.kv" cpu_s) $(kv "$OUT/ledger-$name.kv" wall_s) $rc" >>"$OUT/ledger-rows.txt"
}

[[ " $STORES " == *" postgres "* ]] && start_pg
: >"$OUT/ledger-rows.txt"
for sc in $SCENARIOS; do
  case $sc in
  fast) gen_file "$N_FAST" 201 ;;
  slow) gen_file "$N_SLOW" 202 ;;
  *) echo "unknown scenario $sc" >&2; exit 2 ;;
  esac
  for r in $(seq 1 "$ROUNDS"); do
    for st in $STORES; do
      for which in ${BASE_BULKLOAD:+base} change; do
        if [[ $which == base ]]; then BIN=$BASE_BULKLOAD TAG=@base; else BIN="$OUT/bulkload" TAG=""; fi
        echo "== $sc, $st$TAG, round $r" >&2
        case $sc in
        fast) one fast "$st" "$r" "$f" 16 ;;
        slow) one slow "$st" "$r" "$f" 32 --create-latency 200ms ;;
        esac
      done
    done
  done
done

echo
echo "bulkload upload, --ledger off vs SQLite vs PostgreSQL, against bulkload sim ($(nproc) CPUs shared by client, server and PostgreSQL; load $(cut -d' ' -f1-3 /proc/loadavg); $(date -u +%FT%TZ)); medians of $ROUNDS interleaved rounds"
all=""
for st in $STORES; do all="$all ${BASE_BULKLOAD:+$st@base} $st"; done
awk -v stores="$all" -v nfast="$N_FAST" -v nslow="$N_SLOW" '
  { cpu[$1" "$2] = cpu[$1" "$2] " " $3; wall[$1" "$2] = wall[$1" "$2] " " $4; if ($5 != 0) bad[$1" "$2]++ }
  function median(s,   a, n, i, j, t) { n = split(s, a, " "); for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }; return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
  END {
    ns = split(stores, st, " ")
    printf "%-5s %-14s %14s %10s %12s %10s\n", "scen.", "ledger", "client CPU s", "vs off", "wall s", "vs off"
    for (sc in seen) {}
    split("fast slow", scs, " ")
    for (k = 1; k <= 2; k++) {
      s = scs[k]; if (!((s" off") in cpu) && !((s" sqlite") in cpu)) continue
      for (i = 1; i <= ns; i++) {
        key = s" "st[i]; if (!(key in cpu)) continue
        off = (st[i] ~ /@base$/) ? s" off@base" : s" off"
        c0 = median(cpu[off]); w0 = median(wall[off])
        c = median(cpu[key]); w = median(wall[key])
        per = (s == "fast") ? " (" nfast " leads)" : " (" nslow " leads)"
        printf "%-5s %-14s %14.3f %9s %12.2f %9s%s%s\n", s, st[i], c, (c0 > 0 ? sprintf("%+.1f%%", 100 * (c - c0) / c0) : "-"), w, (w0 > 0 ? sprintf("%+.1f%%", 100 * (w - w0) / w0) : "-"), per, (bad[key] ? "  SOME RUNS FAILED" : "")
      }
    }
  }' "$OUT/ledger-rows.txt"
echo "Rows: $OUT/ledger-rows.txt (scenario store cpu_s wall_s exit); logs: $OUT/ledger-*.log"
