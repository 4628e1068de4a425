#!/usr/bin/env bash
# Release build: static beet binaries for linux and darwin on amd64 and
# arm64, one tarball each (binary, LICENSE, README.md, CHANGELOG.md) and
# SHA256SUMS over the tarballs.
#
#   deploy/release.sh [VERSION]        # VERSION defaults to `git describe`
#   OUT=dist TARGETS="linux/amd64" deploy/release.sh 0.1.0
#
# CGO_ENABLED=0 makes every binary static and cross-compiles without a C
# toolchain: the SQLite driver is pure Go. -trimpath drops local paths, and
# SOURCE_DATE_EPOCH (default: the commit's time) pins the build date, so two
# runs on one commit give the same bytes.
set -euo pipefail
cd "$(dirname "$0")/.."

# Releases are built with the project's Go (go.mod's toolchain line), which
# the go command fetches from the module proxy; docs/SECURITY.md says why.
export GOTOOLCHAIN=go1.27.3

VERSION=${1:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
VERSION=${VERSION#v}
COMMIT=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
DATE=$(date -u -d "@$EPOCH" +%Y-%m-%dT%H:%M:%SZ 2>/dev/null || date -u -r "$EPOCH" +%Y-%m-%dT%H:%M:%SZ)
OUT=${OUT:-dist}
TARGETS=${TARGETS:-"linux/amd64 linux/arm64 darwin/amd64 darwin/arm64"}

pkg=github.com/beethq/beet/internal/version
# -X on a variable the package lacks is ignored by the linker, so Date is
# set here whether or not the version package reads it yet.
ldflags="-s -w -X $pkg.Version=$VERSION -X $pkg.Commit=$COMMIT -X $pkg.Date=$DATE"

rm -rf "$OUT"
mkdir -p "$OUT"
for target in $TARGETS; do
	os=${target%/*} arch=${target#*/}
	name=beet_${VERSION}_${os}_${arch}
	stage=$OUT/$name
	mkdir -p "$stage"
	echo "==> $os/$arch"
	CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath -ldflags "$ldflags" -o "$stage/beet" ./cmd/beet
	cp LICENSE README.md CHANGELOG.md "$stage/"
	# Fixed owner, order and times, so the tarball is as reproducible as the binary.
	tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$EPOCH" \
		-C "$OUT" -czf "$OUT/$name.tar.gz" "$name"
	rm -rf "$stage"
done
(cd "$OUT" && sha256sum -- *.tar.gz >SHA256SUMS)
cat "$OUT/SHA256SUMS"
