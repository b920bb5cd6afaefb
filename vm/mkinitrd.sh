#!/bin/bash
# vm/mkinitrd.sh - build the guest initramfs (busybox + Debian kernel modules + vm/init).
#
#   vm/mkinitrd.sh [-o OUT] [-k KVER] [-m "more debian modules"] [EXTRA.ko ...]
#
# OUT defaults to build/vm/initrd.cpio.gz. Debian modules are resolved with their
# dependencies from /lib/modules/KVER/modules.dep (not modprobe: ndctl's modprobe.d rule
# hides libnvdimm from `modprobe --show-depends`) and loaded by /init in dependency order.
# EXTRA.ko files (e.g. kernel/daxfs.ko) go to /extra and are insmod'ed after them
# (kernel command line daxfsvm.noextra=1 skips that). vm/guest/*.sh are copied to /guest
# as a fallback; /init prefers the live copies read from the host over 9p.
set -euo pipefail
. "$(dirname "$0")/common.sh"

# nvdimm/pmem (nfit -> libnvdimm -> nd_pmem, fsdax is built into libnvdimm), devdax,
# 9p over virtio for the host root, ext4 (+crc32c, which ext4 requests by name) for comparisons.
BASE_MODS="nfit nd_pmem dax_pmem device_dax virtio_pci 9pnet_virtio 9p crc32c_generic ext4"
OUT=$DAXFS_VM_BUILD/initrd.cpio.gz
KVER=""
MORE=""
while getopts "o:k:m:h" o; do
    case $o in
        o) OUT=$OPTARG ;;
        k) KVER=$OPTARG ;;
        m) MORE=$OPTARG ;;
        *) sed -n '2,12p' "$0"; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ -n "$KVER" ] || KVER=$(daxfs_vm_kver)
MD=$DAXFS_VM_ROOT/lib/modules/$KVER
[ -f "$MD/modules.dep" ] || { echo "mkinitrd: $MD/modules.dep missing" >&2; exit 1; }
BB=/bin/busybox   # must be static (package busybox-static): the initramfs has no libc
[ -x "$BB" ] || { echo "mkinitrd: $BB not found (apt-get install busybox-static)" >&2; exit 1; }
if ldd "$BB" >/dev/null 2>&1; then echo "mkinitrd: $BB is dynamically linked (install busybox-static)" >&2; exit 1; fi
for f in "$@"; do [ -f "$f" ] || { echo "mkinitrd: extra module $f not found" >&2; exit 1; }; done

mkdir -p "$(dirname "$OUT")"
W=$(mktemp -d "$(dirname "$OUT")/.initrd-root.XXXXXX")
trap 'rm -rf "$W"' EXIT
mkdir -p "$W"/{bin,sbin,proc,sys,dev,tmp,run,mnt,host,out,extra,guest,lib/modules}
cp "$BB" "$W/bin/busybox"
ln -s busybox "$W/bin/sh"

# copy one module file (decompressing .xz/.zst/.gz: busybox insmod takes plain .ko)
put_mod() {
    local rel=$1 src=$MD/$1 base
    base=$(basename "$rel"); base=${base%.xz}; base=${base%.zst}; base=${base%.gz}
    case $rel in
        *.xz)  xz -dc "$src" > "$W/lib/modules/$base" ;;
        *.zst) zstd -qdc "$src" > "$W/lib/modules/$base" ;;
        *.gz)  gzip -dc "$src" > "$W/lib/modules/$base" ;;
        *)     cp "$src" "$W/lib/modules/$base" ;;
    esac
    echo "$base" >> "$W/modules.list"
}
: > "$W/modules.list"
declare -A seen
resolve() {   # modules.dep: "path: dep1 dep2 ..." with the transitive closure, deepest last
    local m=$1 line path d
    m=${m//-/_}
    line=$(grep -E "(^|/)(${m}|${m//_/-})\.ko(\.xz|\.zst|\.gz)?:" "$MD/modules.dep" | head -1) ||
        { echo "mkinitrd: no module '$1' in $MD (built in?) - skipped" >&2; return 0; }
    path=${line%%:*}
    for d in $(echo ${line#*:} | tr ' ' '\n' | tac); do
        [ -n "${seen[$d]:-}" ] && continue
        seen[$d]=1; put_mod "$d"
    done
    [ -n "${seen[$path]:-}" ] || { seen[$path]=1; put_mod "$path"; }
}
for m in $BASE_MODS $MORE; do resolve "$m"; done

: > "$W/extra.list"
for f in "$@"; do cp "$f" "$W/extra/"; basename "$f" >> "$W/extra.list"; done
cp "$DAXFS_VM_DIR"/guest/*.sh "$W/guest/" 2>/dev/null || true
cp "$DAXFS_VM_DIR/init" "$W/init"
chmod 755 "$W/init"
echo "$KVER" > "$W/kver"

(cd "$W" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0 | gzip -1) > "$OUT.tmp.$$"
mv "$OUT.tmp.$$" "$OUT"
echo "DAXFS-VM: initrd $OUT ($(du -h "$OUT" | cut -f1)) kernel $KVER"
echo "DAXFS-VM: modules: $(tr '\n' ' ' < "$W/modules.list")"
[ -s "$W/extra.list" ] && echo "DAXFS-VM: extra: $(tr '\n' ' ' < "$W/extra.list")"
exit 0
