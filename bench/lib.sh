# bench/lib.sh: what bench/conc.sh, bench/rate.sh and bench/hang.sh share,
# sourced by them from the repository's root (`. bench/lib.sh`) under
# `set -euo pipefail`.

# bench_setup DRIVER [BIN]: OUT=bench/out (made if missing) and BIN, the
# bulkload binary to measure: BIN when given, else built from this tree
# into $OUT/bulkload; then builds bench/DRIVER and bench/gen into $OUT.
bench_setup() {
  export PATH="$PATH:/usr/local/go/bin"
  OUT=bench/out
  mkdir -p "$OUT"
  BIN=${2:-}
  if [[ -z "$BIN" ]]; then
    echo "== build $OUT/bulkload" >&2
    go build -o "$OUT/bulkload" ./cmd/bulkload
    BIN="$OUT/bulkload"
  fi
  go build -o "$OUT/$1" "./bench/$1"
  go build -o "$OUT/gen" ./bench/gen
}

# bench_input FILE N SEED PREFIX: N valid leads generated into FILE, unless
# FILE is there and not empty (the same seed makes the same file).
bench_input() {
  [[ -s "$1" ]] || "$OUT/gen" -q -n "$2" -seed "$3" -invalid 0 -prefix "$4" -o "$1"
}

# bench_cpus, bench_load: this machine's CPUs and its load averages (1, 5,
# 15 minutes), or ? where unknown, for the line a script prints first.
bench_cpus() { nproc 2>/dev/null || echo ?; }
bench_load() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo ?; }
