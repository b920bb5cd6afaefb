#!/usr/bin/env bash
# Installs everything the build and the test suite need on a fresh Debian 12
# machine (idempotent).  Set DAXFS_SETUP_VM=0 to skip the QEMU cluster's
# packages (kernel image, headers, qemu) when only user space is wanted.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
# libfuse3-dev, fuse3 and pkg-config: the FUSE mount (tools/fuse, `daxfs
# mount`, docs/fuse.md) and its tests (fusermount3).
# gcc-aarch64-linux-gnu and qemu-user-static: `make cross-arm64` builds
# libdaxfs and the C tests for arm64 and tests/test_cross_arm64.py runs them
# under qemu-aarch64-static (docs/design.md "Memory ordering").
# fio, git and sqlite3: real programs that tests/test_preload.py runs under
# `daxfs run` (docs/preload.md).
# attr, acl and rsync: setfattr/getfattr, setfacl/getfacl and `rsync -aX`
# in the extended attribute tests (docs/xattr.md).
# man-db: tests/test_man_pages.py renders man/ with man --warnings.
# debhelper, dh-dkms and lintian: `make deb` (debian/, docs/packaging.md);
# debootstrap: its Debian-root test (scripts/debroot-test.sh).
# strace: tests/test_populate.py counts libdaxfs' madvise calls.
for pkg in build-essential make gcc python3 python3-pip spin \
	gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user-static \
	fio git sqlite3 libfuse3-dev fuse3 pkg-config attr acl rsync man-db \
	debhelper dh-dkms lintian debootstrap strace; do
	dpkg -s "$pkg" >/dev/null 2>&1 || need_apt+=("$pkg")
done
if [ "${#need_apt[@]}" -gt 0 ]; then
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	apt-get install -y -q "${need_apt[@]}"
fi

python3 -m pip install -q --disable-pip-version-check -r tests/requirements.txt 2>/dev/null ||
	python3 -m pip install -q --disable-pip-version-check --break-system-packages \
		-r tests/requirements.txt

# Go builds the linearizability checker (tools/lincheck, docs/lincheck.md):
# the go on PATH, else /usr/local/go, else Debian's golang-go (1.19 on
# Debian 12, enough: tools/lincheck/go.mod asks for 1.19).  Its one module
# (porcupine, pinned in go.sum) comes from the Go module proxy.
go=$(command -v go || true)
[ -n "$go" ] || [ ! -x /usr/local/go/bin/go ] || go=/usr/local/go/bin/go
if [ -z "$go" ]; then
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	apt-get install -y -q golang-go
	go=$(command -v go)
fi
gover=$("$go" env GOVERSION | sed 's/^go//')
if ! printf '1.19\n%s\n' "$gover" | sort -V -C; then
	echo "setup.sh: Go $gover is too old for tools/lincheck (needs 1.19)" >&2
	exit 1
fi
(cd tools/lincheck && "$go" mod download)

if [ "${DAXFS_SETUP_VM:-1}" = 1 ] && [ -x vm/setup.sh ]; then
	vm/setup.sh
fi
