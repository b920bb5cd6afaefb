# vm/common.sh - sourced by the vm/*.sh scripts (not executable on its own).
# Paths and guest-kernel detection shared by setup.sh, mkinitrd.sh and run-guest.sh.
DAXFS_VM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
DAXFS_REPO=$(cd "$DAXFS_VM_DIR/.." && pwd)
DAXFS_VM_BUILD=${DAXFS_VM_BUILD:-$DAXFS_REPO/build/vm}

# $DAXFS_VM_ROOT: where boot/ and lib/modules/ of the guest kernels are (default /);
# a kernel package unpacked elsewhere (dpkg -x + depmod -b, scripts/kernel-compat.sh).
DAXFS_VM_ROOT=${DAXFS_VM_ROOT:-}

# Newest Debian kernel that has an image in /boot and a module tree; $DAXFS_VM_KVER overrides.
daxfs_vm_kver() {
    if [ -n "${DAXFS_VM_KVER:-}" ]; then echo "$DAXFS_VM_KVER"; return 0; fi
    local k best=""
    for k in $(ls "$DAXFS_VM_ROOT/lib/modules" 2>/dev/null | sort -V); do
        [ -f "$DAXFS_VM_ROOT/boot/vmlinuz-$k" ] && [ -f "$DAXFS_VM_ROOT/lib/modules/$k/modules.dep" ] && best=$k
    done
    [ -n "$best" ] || { echo "DAXFS-VM: no Debian kernel in /boot + /lib/modules (run vm/setup.sh)" >&2; return 1; }
    echo "$best"
}
