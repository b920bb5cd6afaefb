# vm/guest/hello.sh - trivial guest script: prints where it runs and what it sees.
vm_log "hello from $(uname -r), $(grep -c ^processor /proc/cpuinfo) cpu(s), args=[$*]"
vm_log "pmem: $(pmem_phys_range || echo none) mode=$(pmem_mode)"
[ -n "$DAXFS_HOST" ] && vm_log "host python: $(host python3 -c 'import sys; print(sys.version.split()[0])')"
vm_result hello=ok
