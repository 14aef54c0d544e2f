#!/usr/bin/env bash
# release/image.sh: build bulkload's image from goreleaser's linux archive
# (dist/, made by `goreleaser release --snapshot --clean` or a release) with
# Dockerfile. The image's binary is the archive's, byte for byte.
#
#   release/image.sh [DIST]        # DIST defaults to ./dist; ARCH=arm64 for the other
#
# Prints the image's name (bulkload:<version>) on its last line. Needs podman
# (Debian: apt-get install podman buildah) and Debian's CA bundle
# (/etc/ssl/certs/ca-certificates.crt, package ca-certificates).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dist=$(cd "${1:-$root/dist}" && pwd)
arch=${ARCH:-amd64}
archives=("$dist"/bulkload_*_linux_"$arch".tar.gz)
if [ ${#archives[@]} -ne 1 ] || [ ! -f "${archives[0]}" ]; then
  echo "image.sh: want one bulkload_*_linux_$arch.tar.gz in $dist (run goreleaser release --snapshot --clean first)" >&2
  exit 2
fi
archive=${archives[0]}
version=$(basename "$archive" "_linux_$arch.tar.gz")
version=${version#bulkload_}

ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
tar -C "$ctx" -xzf "$archive" bulkload
mkdir -p "$ctx/rootfs/etc/ssl/certs" "$ctx/rootfs/tmp" "$ctx/rootfs/samples" "$ctx/data/in" "$ctx/data/results"
chmod 1777 "$ctx/rootfs/tmp"
cp "$root"/release/image/etc/passwd "$root"/release/image/etc/group "$ctx/rootfs/etc/"
cp /etc/ssl/certs/ca-certificates.crt "$ctx/rootfs/etc/ssl/certs/"
cp "$root"/samples/*.csv "$root"/samples/*.jsonl "$root"/samples/mapping.yaml "$ctx/rootfs/samples/"
cp "$root/Dockerfile" "$ctx/Dockerfile"
# Reproducible layers: every file's time is the archive's.
find "$ctx" -exec touch -h -r "$archive" {} +
podman build --quiet --platform "linux/$arch" --timestamp "$(stat -c %Y "$archive")" -t "bulkload:$version" "$ctx" >&2
echo "bulkload:$version"
