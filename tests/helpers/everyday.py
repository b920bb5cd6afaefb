"""Everyday programs, one script for every front end: coreutils, tar, git,
sqlite3 in WAL mode, python3 and fio run it in a tmpfs directory and in a
DaxFS directory (FUSE: tests/test_fuse_programs.py; the preload:
tests/test_preload.py; daxfs.ko in a guest: vm/vfs_kguest.py "programs"),
and its output and the tree it leaves (manifest: names, types, modes, link
counts, sizes, contents, symlink targets) must be the same.  Plain Python
(no pytest): the guest imports it too.
"""
import hashlib
import os
import stat
import subprocess

SCRIPT = r"""
set -eu
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t
export GIT_AUTHOR_DATE='2026-01-01T00:00:00Z' GIT_COMMITTER_DATE='2026-01-01T00:00:00Z'
export HOME="$PWD"
# coreutils
mkdir -p a/b/c
cp -r "$DOCS" docs
sort docs/design.md | uniq -c | sort -rn | head -5
cp -p docs/format.md a/b/c/f
ln a/b/c/f a/hard
ln -s b/c/f a/soft
mv docs/fuse.md a/moved.md
chmod 640 a/moved.md
dd if=/dev/zero of=a/zeros bs=4096 count=33 status=none
truncate -s 100000 a/zeros
truncate -s 7 a/b/c/f
printf 'x%.0s' $(seq 1 5000) >> a/hard
cat a/soft | wc -c
rm -r docs/models 2>/dev/null || true
ls -l a | awk '/^total/ {next} /^d/ {print $1, $9; next} {print $1, $2, $5, $9}'
# links: out of the tree, ".." after a link, a pipe spliced from a file
ln -s "$DOCS" docslink
ls docslink | head -3
head -c 40 docslink/../README.md; echo
ln -s a/b/c lc
ls lc/..
wc -c < lc/../c/f
python3 -c 'import os; r, w = os.pipe(); f = os.open("a/hard", os.O_RDONLY); print(os.splice(f, w, 9), os.read(r, 9))'
rm docslink
# tar
tar cf t.tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner docs a
mkdir x && tar xf t.tar -C x
diff -r docs x/docs
# git
git init -q repo
cp -r docs repo/
git -C repo add -A
git -C repo commit -qm one
echo more >> repo/docs/design.md
git -C repo commit -qam two
git -C repo log --format='%H %s'
git -C repo fsck --strict 2>&1
git -C repo gc -q
git -C repo status --short
# sqlite3, WAL
python3 - <<'PY'
import sqlite3
db = sqlite3.connect("db.sqlite")
assert db.execute("pragma journal_mode=wal").fetchone()[0] == "wal"
db.execute("create table t (k integer primary key, v text)")
with db:
    db.executemany("insert into t values (?, ?)", ((i, "v%d" % i * 3) for i in range(20000)))
with db:
    db.execute("delete from t where k % 3 = 0")
    db.execute("update t set v = 'u' where k % 7 = 0")
other = sqlite3.connect("db.sqlite")
print(other.execute("select count(*), sum(length(v)) from t").fetchone())
db.execute("pragma wal_checkpoint(truncate)")
print(db.execute("pragma integrity_check").fetchone()[0])
db.close(); other.close()
PY
sqlite3 db.sqlite 'select count(*) from t where v = "u";'
# python3
python3 - <<'PY'
import os
with open("py.bin", "wb") as f:
    for i in range(1000):
        f.write(os.urandom(0)[:0] + bytes([i % 251]) * 997)
os.replace("py.bin", "py2.bin")
print(sum(len(fs) for _, _, fs in os.walk(".")))
PY
# fio, verifying what it wrote
fio --name=v --directory=. --rw=randwrite --bs=4k --size=8M --verify=crc32c \
    --do_verify=1 --ioengine=psync --randseed=1 --output=/dev/null
rm -f v.0.0
"""


def manifest(root):
    out = []
    for d, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(dirs + files):
            p = os.path.join(d, name)
            st = os.lstat(p)
            rel = os.path.relpath(p, root)
            if rel.startswith("repo/.git/") and ("index" in rel or "gc.log" in rel):
                continue        # git's stat cache holds inode numbers
            if stat.S_ISLNK(st.st_mode):
                what = "-> " + os.readlink(p)
            elif stat.S_ISREG(st.st_mode):
                with open(p, "rb") as f:
                    what = "%d %s" % (st.st_size, hashlib.sha256(f.read()).hexdigest())
            else:
                what = ""
            out.append("%s %o %d %s" % (rel, st.st_mode, st.st_nlink if not
                                        stat.S_ISDIR(st.st_mode) else 0, what))
    return out


def run_script(where, docs, argv=(), timeout=600):
    """Runs SCRIPT in directory where, made if missing (argv: a prefix,
    such as the preload's `daxfs run --`, for which where need not exist
    in the kernel), with $DOCS the directory it copies; (exit status,
    stdout, stderr)."""
    p = subprocess.run([*argv, "bash", "-c",
                        'mkdir -p "$EVERYDAY_DIR" && cd "$EVERYDAY_DIR" && '
                        'eval "$EVERYDAY_SCRIPT"'],
                       capture_output=True, text=True, timeout=timeout,
                       env=dict(os.environ, DOCS=docs, EVERYDAY_DIR=where,
                                EVERYDAY_SCRIPT=SCRIPT))
    return p.returncode, p.stdout, p.stderr
