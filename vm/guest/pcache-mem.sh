# vm/guest/pcache-mem.sh MODE DIR [BACKING] - guest side of bench/pcache_mem.py.
# Measures how much of this guest's own memory reading every file of a dataset
# costs: drop the caches, note /proc/meminfo, cat each file of DIR (busybox only,
# so that no host program pollutes the page cache), note /proc/meminfo again.
#   daxfs DIR BACKING   mount daxfs.ko split mode (-o backing=BACKING), read
#                       /host/mnt/daxfs/DIR: data comes from the shared page cache
#   private DIR         read DIR straight over 9p (cache=loose): the guest's own
#                       page cache, as with NFS
# Results: vm_result cached_kb=... used_kb=... bytes=...
mode=$1 dir=$2 backing=$3

kb() { sed -n "s/^$1: *\([0-9]*\) kB/\1/p" /proc/meminfo; }
used_kb() { echo $(( $(kb MemTotal) - $(kb MemFree) )); }

case $mode in
daxfs)
    set -- load "mount:phys:backing=$backing"
    . $DAXFS_REPO/vm/guest/daxfs-k.sh
    dir=/host/mnt/daxfs/$dir ;;
private) ;;
*) vm_fail "mode: daxfs or private, not '$mode'" ;;
esac
[ -d "$dir" ] || vm_fail "no directory $dir"

sync
echo 3 > /proc/sys/vm/drop_caches
c0=$(kb Cached) u0=$(used_kb)
bytes=0
for f in "$dir"/*; do
    [ -f "$f" ] || continue
    cat "$f" > /dev/null || vm_fail "read $f"
    bytes=$(( bytes + $(wc -c < "$f") ))
done
c1=$(kb Cached) u1=$(used_kb)
vm_log "read $bytes bytes of $dir: Cached $c0 -> $c1 kB, used $u0 -> $u1 kB"
vm_result cached_kb=$((c1 - c0)) used_kb=$((u1 - u0)) bytes=$bytes
if [ $mode = daxfs ]; then
    grep -A30 " /host/mnt/daxfs " /proc/self/mountstats 2>/dev/null | sed -n 2,12p |
        while read -r l; do vm_log "mountstats: $l"; done
fi
