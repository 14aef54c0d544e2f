#!/usr/bin/env bash
# release/check.sh: the release pipeline from a fresh clone, as CI runs it
# (.ci/run). It proves that
#   1. `goreleaser release --snapshot --clean` builds, from a fresh clone of
#      HEAD, static archives for linux and darwin on amd64 and arm64, their
#      SHA-256 checksums, a minisign signature of the checksums (made with a
#      throwaway key, verified, and refused once the file or the key
#      differs) and a CycloneDX SBOM per binary;
#   2. every file README.md, deploy/README.md and release/README.md point
#      to is in the archive (or is one of the few only a clone builds or
#      runs: clone_only below), every tracked file of deploy/ is, and every
#      file of the archive is a tracked file as committed (a gitignored
#      deploy/out/ planted in the clone does not ship);
#   3. the linux/amd64 binary in its archive reports the pseudo-version Go
#      stamped from git (v0.0.0-<commit time>-<12 hex>, no "+dirty"), and
#      every binary is static (CGO_ENABLED=0) for its platform;
#   4. the image built from the archive (release/image.sh) runs:
#      `podman run --rm IMAGE` (the default command: the sample to the
#      simulator) exits 0 as deploy/README.md says, and with a read-only
#      root as user 65532 an upload writes its results to a volume;
#      the image's binary is the archive's, byte for byte, and it holds no
#      file git does not track (a results file and a partner's export
#      planted in samples/, and an edit of samples/leads.csv, stay out);
#   5. on a tagged commit, `bulkload version` says the tag (a v0 or v1 tag:
#      Go takes v2 and later only for a module path ending in /v2).
# Tools it installs when missing: goreleaser v2.15.1 and cyclonedx-gomod
# v1.10.0 (go install, into $(go env GOPATH)/bin: about 5 min and 40 s to
# compile on 2 cores, once), and the Debian packages release/README.md
# names (podman, buildah, runc, minisign, ca-certificates).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export PATH="$PATH:/usr/local/go/bin"
export PATH="$PATH:$(go env GOPATH)/bin"
log() { echo "release/check.sh: $*"; }
fail() { echo "release/check.sh: FAIL: $*" >&2; exit 1; }

need_go_tool() { # name module@version
  command -v "$1" >/dev/null && return
  log "installing $2 (go install)"
  local t0=$SECONDS
  GOFLAGS= go install "$2"
  log "installed $1 in $((SECONDS - t0)) s"
}
need_go_tool goreleaser github.com/goreleaser/goreleaser/v2@v2.15.1
need_go_tool cyclonedx-gomod github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod@v1.10.0

# The Debian packages: the one list release/README.md gives, so that the
# page stays the list that works.
debs=$(sed -n 's/^apt-get install -y --no-install-recommends //p' "$root/release/README.md")
[ -n "$debs" ] || fail "release/README.md has no 'apt-get install -y --no-install-recommends ...' line"
for want in podman buildah runc minisign ca-certificates; do
  grep -qw -- "$want" <<<"$debs" || fail "release/README.md's packages ($debs) lack $want, which this script uses"
done
missing=()
for p in $debs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing ${missing[*]} (Debian)"
  apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

work=$(mktemp -d)
image= vol=
cleanup() {
  [ -z "$vol" ] || podman volume rm -f "$vol" >/dev/null 2>&1 || true
  [ -z "$image" ] || podman rmi -f "$image" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
git clone -q "$root" "$work/src"
cd "$work/src"
head=$(git rev-parse HEAD)

# A gitignored file where deploy/measure.sh writes its output: a release
# does not count it as a change, and it must not ship.
mkdir -p deploy/out && echo "row,ssn" >deploy/out/planted.results.csv

# 1. The snapshot, its checksums signed with a throwaway key.
minisign -G -W -p "$work/minisign.pub" -s "$work/minisign.key" >/dev/null
t0=$SECONDS
MINISIGN_SECRET_KEY="$work/minisign.key" goreleaser release --snapshot --clean >"$work/goreleaser.log" 2>&1 || { cat "$work/goreleaser.log"; fail "goreleaser release --snapshot"; }
log "goreleaser release --snapshot --clean: $((SECONDS - t0)) s"
cd dist
for p in linux_amd64 linux_arm64 darwin_amd64 darwin_arm64; do
  [ -f bulkload_*_"$p".tar.gz ] || fail "no archive for $p: $(ls)"
  [ -f bulkload_*_"$p".cdx.json ] || fail "no SBOM for $p"
  grep -q '"bomFormat": "CycloneDX"' bulkload_*_"$p".cdx.json || fail "$p SBOM is not CycloneDX"
  grep -q 'pkg:golang/github.com/prometheus/client_golang@' bulkload_*_"$p".cdx.json || fail "$p SBOM lacks the modules linked in"
  mkdir -p "$work/x/$p" && tar -C "$work/x/$p" -xzf bulkload_*_"$p".tar.gz
  goos=${p%_*} goarch=${p#*_}
  info=$(go version -m "$work/x/$p/bulkload")
  for want in "GOOS=$goos" "GOARCH=$goarch" "CGO_ENABLED=0" "vcs.revision=$head" "-trimpath=true"; do
    grep -q -- "$want" <<<"$info" || fail "$p binary: go version -m lacks $want"
  done
done
sha256sum --quiet -c bulkload_*_checksums.txt || fail "checksums do not match"
[ "$(wc -l <bulkload_*_checksums.txt)" -eq 8 ] || fail "want 8 checksums (4 archives, 4 SBOMs)"
sums=$(echo bulkload_*_checksums.txt)
[ -f "$sums.minisig" ] || fail "no signature $sums.minisig: $(ls)"
# As release/README.md tells a user to verify it.
minisign -V -p "$work/minisign.pub" -m "$sums" >"$work/verify.log" || fail "minisign -V refuses $sums.minisig"
grep -q "Trusted comment: bulkload .* checksums, commit $head" "$work/verify.log" || fail "the signature's trusted comment does not name the commit: $(cat "$work/verify.log")"
cp "$sums" "$work/tampered.txt" && cp "$sums.minisig" "$work/tampered.txt.minisig"
if [ "$(head -c 1 "$work/tampered.txt")" = 0 ]; then sed -i '1s/^./1/' "$work/tampered.txt"; else sed -i '1s/^./0/' "$work/tampered.txt"; fi
cmp -s "$sums" "$work/tampered.txt" && fail "the tampered copy is not changed"
minisign -V -q -p "$work/minisign.pub" -m "$work/tampered.txt" 2>/dev/null && fail "minisign accepts a changed checksums file"
minisign -G -W -p "$work/other.pub" -s "$work/other.key" >/dev/null
minisign -V -q -p "$work/other.pub" -m "$sums" 2>/dev/null && fail "minisign accepts the signature with another key"
log "archives, checksums (signed: verified; a changed file or another key refused) and SBOMs for linux and darwin x amd64 and arm64: OK"

# 2. What the archive holds: every file its READMEs point to (a path from
# the repository's root, or from the README's own folder), except the few
# only a clone builds or runs; every tracked file of deploy/; and nothing
# that is not a tracked file as committed.
clone_only=" .ci/run .goreleaser.yaml Dockerfile go.mod mapper/doc.go release/check.sh release/image.sh bench/conc.sh bench/rate.sh bench/upload.sh bench/validate.sh "
x=$work/x/linux_amd64
cd "$work/src"
for readme in README.md deploy/README.md release/README.md; do
  [ -f "$x/$readme" ] || fail "the archive lacks $readme"
  dir=$(dirname "$readme")
  for p in $(grep -oE '[A-Za-z0-9_.][A-Za-z0-9_./@-]*' "$readme" | sed 's/\.$//' | sort -u); do
    for q in "$dir/$p" "$p"; do
      q=${q#./}
      [ -f "$q" ] && git ls-files --error-unmatch -- "$q" >/dev/null 2>&1 || continue
      case "$clone_only" in *" $q "*) break ;; esac
      case "$q" in *_test.go) break ;; esac # tests serve a clone; the archive ships none
      [ -f "$x/$q" ] || fail "$readme points to $q, which the archive lacks (add it to .goreleaser.yaml's archive files, or to clone_only here if only a clone uses it)"
      break
    done
  done
done
for q in $(git ls-files deploy); do
  [ -f "$x/$q" ] || fail "the archive lacks $q, a tracked file of deploy/ (.goreleaser.yaml names deploy/ by its parts)"
done
(cd "$x" && find . -type f ! -path ./bulkload | sed 's|^\./||') | while read -r q; do
  git cat-file -e "HEAD:$q" 2>/dev/null || fail "the archive holds $q, which git does not track"
  git show "HEAD:$q" | cmp -s - "$x/$q" || fail "the archive's $q differs from the committed file"
done
log "archive: every file the READMEs point to, all of deploy/, only tracked files as committed: OK"
cd "$work/src/dist"

# 3. The version the archived binary reports.
commit_time=$(TZ=UTC git log -1 --date=format-local:%Y%m%d%H%M%S --format=%cd)
got=$("$work/x/linux_amd64/bulkload" version)
log "archived binary: $got"
case "$got" in
  "bulkload v"*"$commit_time-${head:0:12}, revision $head, committed "*) ;;
  *) fail "bulkload version = '$got', want the pseudo-version ...-$commit_time-${head:0:12} and revision $head, unmodified" ;;
esac

# 4. The image, built by the clone's image.sh after a results file (mode
# 0600, as a run writes it) and a partner's export were dropped in its
# samples/ and its samples/leads.csv was edited: none may reach the image.
cd "$work/src"
echo "row,status" >samples/leads.simulated.results.csv && chmod 0600 samples/leads.simulated.results.csv
echo "leadId,ssn" >samples/partner-globex.csv
echo "planted,row" >>samples/leads.csv
image=$("$work/src/release/image.sh" "$work/src/dist" 2>"$work/image.log" | tail -n 1) || { cat "$work/image.log"; fail "release/image.sh"; }
log "built $image"
mnt=$(podman image mount "$image")
(cd "$mnt" && find . -type f | sed 's|^\./||') >"$work/image-files"
while read -r q; do
  case "$q" in
    usr/local/bin/bulkload) cmp -s "$mnt/$q" "$work/x/linux_amd64/bulkload" || fail "the image's /$q is not the archive's binary" ;;
    etc/ssl/certs/ca-certificates.crt) cmp -s "$mnt/$q" /etc/ssl/certs/ca-certificates.crt || fail "the image's CA bundle is not the build machine's" ;;
    etc/passwd | etc/group) git show "HEAD:release/image/$q" | cmp -s - "$mnt/$q" || fail "the image's /$q is not release/image/$q as committed" ;;
    samples/*)
      git cat-file -e "HEAD:$q" 2>/dev/null || fail "the image holds /$q, which git does not track"
      git show "HEAD:$q" | cmp -s - "$mnt/$q" || fail "the image's /$q differs from the committed file (the working tree's?)"
      ;;
    *) fail "the image holds /$q, which is neither the archive's binary, a tracked file nor the CA bundle" ;;
  esac
done <"$work/image-files"
podman image unmount "$image" >/dev/null
grep -qx samples/leads.csv "$work/image-files" || fail "the image has no /samples/leads.csv (its default command's input)"
log "image: $(wc -l <"$work/image-files") files, each the archive's binary, a tracked file as committed or the CA bundle: OK"
# This project's machines (a Firecracker VM, cgroups v1 + v2 hybrid, lower
# rlimits than podman's defaults) need runc and explicit ulimits; crun
# refuses the hybrid cgroups. Elsewhere the plain command works.
run=(podman run --rm)
if ! "${run[@]}" "$image" version >/dev/null 2>"$work/podman.err"; then
  log "plain podman run failed ($(tail -n 1 "$work/podman.err")); using runc and explicit ulimits"
  run=(podman --runtime runc run --rm --ulimit nofile=1024:1024 --ulimit nproc=1024:1024)
fi
ctr=$(podman create "$image")
podman cp "$ctr:/usr/local/bin/bulkload" "$work/image-bulkload" && podman rm "$ctr" >/dev/null
cmp -s "$work/image-bulkload" "$work/x/linux_amd64/bulkload" || fail "the image's /usr/local/bin/bulkload is not the archive's binary"
got=$("${run[@]}" "$image" version)
[ "$got" = "$("$work/x/linux_amd64/bulkload" version)" ] || fail "the image's bulkload version '$got' differs from the archive's"
"${run[@]}" --entrypoint /usr/local/bin/bulkload "$image" version >/dev/null
set +e
"${run[@]}" "$image" >"$work/default.log" 2>&1
code=$?
set -e
[ "$code" -eq 0 ] || { cat "$work/default.log"; fail "podman run --rm $image (the default command) exited $code, deploy/README.md says 0"; }
grep -q 'podman run --rm bulkload:<version>.*exits 0' "$root/deploy/README.md" || fail "deploy/README.md no longer states the default command's exit status"
vol="bulkload-check-$$"
podman volume create "$vol" >/dev/null
"${run[@]}" --read-only --read-only-tmpfs=false --user 65532 -v "$vol:/data/results" "$image" \
  upload --simulate --progress off --results /data/results/x.results.csv --summary-json /data/results/x.summary.json /samples/leads.csv >"$work/ro.log" 2>&1 \
  || { cat "$work/ro.log"; fail "upload with a read-only root as 65532 onto a volume"; }
"${run[@]}" --read-only --read-only-tmpfs=false --user 65532 -v "$vol:/data/results" "$image" summary /data/results/x.results.csv >/dev/null 2>&1 \
  || fail "bulkload summary of the results on the volume"
log "image: default command exit 0; read-only root, user 65532, results on a volume: OK"
# 5. A tagged commit (last: it replaces dist/): bulkload version says the tag.
cd "$work/src"
rm -f samples/leads.simulated.results.csv samples/partner-globex.csv
git checkout -q -- samples/leads.csv
git tag v0.99.0-check
goreleaser build --snapshot --clean --single-target --id bulkload -o "$work/tagged" >"$work/goreleaser-tag.log" 2>&1 || { cat "$work/goreleaser-tag.log"; fail "goreleaser build on a tag"; }
got=$("$work/tagged" version)
case "$got" in
  "bulkload v0.99.0-check, revision $head, "*) log "tagged build: $got" ;;
  *) fail "on tag v0.99.0-check, bulkload version = '$got'" ;;
esac
git tag -d v0.99.0-check >/dev/null

echo "release/check.sh: OK"
