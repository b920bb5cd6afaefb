# Sourced by kernel-compat.sh and kernel-root.sh, which define apt_cache
# (apt-cache with their own lists: a private one, or the build root's).

# suite_kver SUITE: the kernel ABI name (e.g. 7.3.4+deb13-amd64) that
# SUITE's linux-headers-amd64 depends on.  The filters read all of their
# input: one that quits at its first match can kill apt-cache with SIGPIPE,
# which pipefail turns into a failure that prints nothing.
suite_kver() {
	local ver kver
	ver=$(apt_cache madison linux-headers-amd64 |
	      awk -F'|' -v s="$1" '!v && $3 ~ " "s"/" {v = $2; gsub(/ /, "", v)}
				   END {print v}')
	[ -n "$ver" ] || { echo "$1: no linux-headers-amd64" >&2; return 1; }
	kver=$(apt_cache show "linux-headers-amd64=$ver" |
	       awk '!k && /^Depends: / && match($0, /linux-headers-[^ ,]*-amd64/) {
			k = substr($0, RSTART + 14, RLENGTH - 14)
		    }
		    END {print k}')
	[ -n "$kver" ] || { echo "$1: linux-headers-amd64 $ver names no headers" >&2; return 1; }
	echo "$kver"
}

# Under set -e a failed command ends the script, silently when it printed
# nothing (stop 46: kernel-root.sh exited 1 after debootstrap, unexplained):
# name the line.
trap 'echo "${0##*/}: line $LINENO: exit $?" >&2' ERR
