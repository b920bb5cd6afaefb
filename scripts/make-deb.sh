#!/usr/bin/env bash
# `make deb`: builds the Debian packages daxfs-tools and daxfs-dkms
# (debian/, docs/packaging.md) with dpkg-buildpackage in a scratch copy of
# the tree (the tracked and the untracked-but-not-ignored files), so that
# nothing is left in the tree; then runs lintian, which must find no error.
#
#   scripts/make-deb.sh [OUTDIR]      (default build/deb)
#
# Needs debhelper, dh-dkms, lintian, libfuse3-dev (scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:-build/deb}")
ver=$(dpkg-parsechangelog -SVersion)
scratch=$(mktemp -d "${TMPDIR:-/tmp}/daxfs-deb.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
src=$scratch/daxfs-$ver
mkdir -p "$src"
git ls-files -z -co --exclude-standard |
	xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' _ |
	tar --null -T - -cf - | tar -xf - -C "$src"
(cd "$src" && dpkg-buildpackage -us -uc -b -j"$(nproc)" > "$scratch/build.log" 2>&1) || {
	tail -40 "$scratch/build.log"
	echo "make-deb: dpkg-buildpackage failed" >&2
	exit 1
}
mkdir -p "$out"
rm -f "$out"/daxfs*_"$ver"_*
cp "$scratch"/*.deb "$scratch"/*.changes "$scratch"/*.buildinfo "$out"/
lintian --fail-on error \
	"$out"/daxfs_"$ver"_*.changes
ls -1 "$out"/*_"$ver"_*.deb
