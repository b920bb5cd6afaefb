"""link(2) racing unlink(2) of its source between threads of one host
(docs/namespace.md, "Threads of one host").

One process, one handle (one host), two threads.  The first runs
link("/x/a", "/x/b") and waits (crash build, DAXFS_CRASH_STOP=thread) at
`link.nlink_raised`: it holds a's leaf (LINKING) and the rename claim and
has raised the link count; b is not published yet.  The second runs unlink("/x/a").  The unlink must not get
a out from under the link: either it waits until b is published (the
link comes first: b remains), or, if it returns first, the link must fail
with ENOENT (a was gone before b could be made).

The claim word names the host, not the thread: the unlink found the claim
"ours" and took the LINKING bit for a stale one of its own, removed a and
returned; the link then published b, a name for an inode whose only name
was gone while this host listed neither a nor b.  Found by the
linearizability checker with threads (`lc_run -P`, docs/lincheck.md).
"""

import errno

from helpers import env
import crashlib as cl

daxfs = env.daxfs

SIZE = 16 * env.MiB
LEASE_MS = 60000        # nobody declares the host dead during the test
# how long the unlink gets to return while the link waits (only the old
# code returns; the fixed unlink waits for the link)
UNLINK_SECONDS = 2
BODY = cl.data("a", 900)

SCRIPT = cl.HOST_SCRIPT + cl.THREADS_SCRIPT + r'''
tl = threading.Thread(target=call, args=("link", r.link, "/x/a", "/x/b"))
tl.start()
res["point"] = first_point()
tu = threading.Thread(target=call, args=("unlink", r.unlink, "/x/a"))
tu.start()
tu.join(float(sys.argv[3]))
if not tu.is_alive():
    res["seen"] = sorted(r.listdir("/x"))   # while the link still waits
resume(tl, tu)                              # the link goes on
res["final"] = sorted(r.listdir("/x"))
res["nlink"] = [r.lstat("/x/" + n).st_nlink for n in res["final"]]
done()
'''


def test_link_racing_unlink_same_host(crash_build):
    gen = env.lease_region("linkthr", SIZE, LEASE_MS)
    region = next(gen)
    try:
        with daxfs.Region(region) as r:
            r.mkdir("/x")
            r.write_file("/x/a", BODY)
        res = cl.run_threads(SCRIPT, region, "link.nlink_raised",
                             UNLINK_SECONDS)
        assert res["unlink"] == 0
        if "seen" in res:
            # the unlink returned while the link waited: a was gone and
            # b not there, so the link came after and must fail
            assert res["seen"] == [], res
            assert res["link"] == errno.ENOENT, res
        # whichever came first, the names left say which
        assert res["final"] == (["b"] if res["link"] == 0 else []), res
        assert res["nlink"] == [1] * len(res["final"]), res
        if res["final"]:
            with daxfs.Region(region) as r:
                assert r.read_file("/x/b") == BODY
        code, out = env.fsck(region, "-n")
        assert code == 0, out
    finally:
        next(gen, None)
