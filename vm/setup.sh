#!/bin/bash
# vm/setup.sh - idempotent installation of what the DaxFS emulated-cluster harness needs
# (Debian 12, run as root). Installs QEMU, Debian's own kernel + headers (the guest kernel,
# never loaded into this machine's kernel), busybox-static, cpio, ndctl, fio, ...
# Prints the guest kernel version it will use as the last line: "DAXFS-VM: kernel <ver>".
#
#   vm/setup.sh            install what is missing
#   vm/setup.sh --check    install nothing; exit 1 if something is missing
#   vm/setup.sh --xfstests also what building xfstests outside the repository and running it
#                          in a guest needs (the guest runs the host's tools: xfs_io, ...)
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

# xfsprogs: the guests run this machine's tools over 9p, and tests/vm/test_kernel_falloc.py
# lists extents with xfs_io (a machine without it failed that test).
PKGS=(qemu-system-x86 qemu-utils linux-image-amd64 linux-headers-amd64 busybox-static cpio
      ndctl fio kmod gzip e2fsprogs xfsprogs make gcc python3 python3-pytest)
XFSTESTS=0
if [ "${1:-}" = --xfstests ]; then
    shift
    XFSTESTS=1
    PKGS+=(xfslibs-dev libattr1-dev libacl1-dev uuid-dev libaio-dev autoconf automake
           libtool pkg-config gawk perl bc psmisc attr acl
           libgdbm-dev libgdbm-compat-dev liburing-dev libcap-dev
           quota dbench)   # quota: the quota tests say "daxfs has no quotas", not "no tools"
fi

missing=()
for p in "${PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if [ "${1:-}" = --check ]; then
    if [ ${#missing[@]} -gt 0 ]; then echo "DAXFS-VM: missing packages: ${missing[*]}" >&2; exit 1; fi
elif [ ${#missing[@]} -gt 0 ]; then
    [ "$(id -u)" = 0 ] || { echo "setup.sh: must run as root to install: ${missing[*]}" >&2; exit 1; }
    echo "DAXFS-VM: installing: ${missing[*]}"
    # apt-get update once: only when the package lists are absent or older than a day
    if [ -z "$(find /var/lib/apt/lists -maxdepth 1 -name '*Packages*' -mtime -1 2>/dev/null | head -1)" ]; then
        apt-get update -qq
    fi
    install() {
        apt-get install -y -qq --no-install-recommends \
            -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "${missing[@]}" >/dev/null
    }
    install || { apt-get update -qq && install; }   # stale lists: update once and retry
fi

# xfstests' tests that switch users want fsgqa, fsgqa2, 123456-fsgqa and the group fsgqa
# (its README, step 6); the guest runs in this machine's root, so they are this machine's.
if [ "$XFSTESTS" = 1 ] && [ "$(id -u)" = 0 ]; then
    for u in fsgqa fsgqa2 123456-fsgqa; do
        id "$u" >/dev/null 2>&1 || useradd -m "$u"
    done
    getent group fsgqa >/dev/null || groupadd fsgqa
fi

# Guest kernel: newest Debian kernel with an image in /boot and a module tree (never hard-coded).
. "$(dirname "$0")/common.sh"
kver=$(daxfs_vm_kver)
[ -d "/usr/src/linux-headers-$kver" ] || echo "DAXFS-VM: warning: /usr/src/linux-headers-$kver missing (cannot build daxfs.ko)" >&2
if [ -e /sys/module/kvm_pvm ]; then
    echo "DAXFS-VM: note: /dev/kvm is PVM (kvm_pvm loaded): stock kernels do not boot under it, TCG will be used"
fi
echo "DAXFS-VM: qemu $(qemu-system-x86_64 --version | head -1 | awk '{print $4}')"
echo "DAXFS-VM: build daxfs.ko with: make -C kernel KDIR=/usr/src/linux-headers-$kver"
echo "DAXFS-VM: kernel $kver"
