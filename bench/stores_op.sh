#!/bin/sh
# Stores one 4 KiB read through libdaxfs makes, and where they land:
# valgrind's lackey traces every store of build/bench/read_stores at two
# read counts; the difference, per read, is split into the destination
# buffer, the stack, and everything else (the region, the handle, the
# per-open-file cache, thread-local data), listed by 4 KiB page.  Exact,
# no timer: a store to a shared line added to the read path shows here.
# lackey counts a `rep movsb` byte by byte: the buffer's 4,096 is the copy.
#   bench/stores_op.sh [READ_STORES]
# Needs valgrind (a benchmark tool: not in setup.sh).
set -e
prog=${1:-build/bench/read_stores}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for n in 100 300; do
	valgrind --tool=lackey --trace-mem=yes --log-file="$tmp/trace.$n" \
		"$prog" /dev/shm/daxfs-stores-op.img $n > "$tmp/addr.$n"
	# "S addr,size" and "M addr,size" (a read-modify-write) are stores
	awk '$1 == "S" || $1 == "M" { split($2, a, ","); c[substr(a[1], 1, length(a[1]) - 3)]++ }
	     END { for (p in c) print p, c[p] }' "$tmp/trace.$n" | sort > "$tmp/pages.$n"
done
set -- $(cat "$tmp/addr.300")
buf=$(printf '%x' $(($2 >> 12)))
stk=$(printf '%x' $(($4 >> 12)))
join -a 2 -e 0 -o 0,1.2,2.2 "$tmp/pages.100" "$tmp/pages.300" |
awk -v buf="$buf" -v stk="$stk" '
	function hex(h,   i, v) {	# mawk has no strtonum
		v = 0
		for (i = 1; i <= length(h); i++)
			v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
		return v
	}
	{ d = ($3 - $2) / 200; p = $1; sub(/^0+/, "", p) }
	d < 0.5 { next }
	p == buf { b += d; next }
	# the stack: the pages within 64 KiB of the printed variable
	{ x = hex(p); s = hex(stk) }
	x >= s - 16 && x <= s + 16 { k += d; next }
	{ o += d; printf "  other page %s: %.1f stores per read\n", p, d }
	END { printf "per read: buffer %.1f, stack %.1f, other %.1f\n", b, k, o }'
