"""Appends racing truncates on several hosts (docs/files.md "Append versus
truncate"; issue "Trust under concurrency", defect 2).

Appenders on three hosts append batches of tagged records while a fourth
host cuts the file to record boundaries (logrotate's copytruncate).  Only
the truncater lowers the size and only appends raise it, so in every
serial order of these calls the file is always a gapless row of intact
records: a cut keeps a prefix, appends add after it.  The checks:

* every record slot holds one intact record (no zeros: an append that
  lost its range to a truncate must not bring the size back up over a
  gap; no torn or foreign bytes);
* no record appears twice, and each appender's records appear in the
  order it appended them, each at the offset its append returned;
* growing the file afterwards shows zeros, never cut records.
"""

import pytest

from helpers import append_workers as W, content, env, procs

daxfs = env.daxfs

REC = 4000
SEED = 20261124


def check_log(data, results):
    assert len(data) % REC == 0, "size %d is not a row of records" % len(data)
    where = {}
    for off in range(0, len(data), REC):
        slot = data[off:off + REC]
        assert slot.strip(b"\0"), "zeros in record slot at %d of %d" % (off, len(data))
        rec = content.parse_record(slot)
        assert rec is not None, "damaged record at offset %d" % off
        assert rec not in where, "record %s twice" % (rec,)
        where[rec] = off
    for idx, batches in enumerate(results):
        last = -1
        for seq, k, off in batches:
            for j in range(k):
                at = where.get((idx, seq + j))
                if at is None:
                    continue        # cut by a later truncate
                assert at == off + j * REC, \
                    "record (%d, %d) at %d, its append returned %d" % (
                        idx, seq + j, at, off + j * REC)
                assert at > last, "appender %d's records out of order" % idx
                last = at


@pytest.mark.parametrize("round_", range(3))
def test_appends_race_truncates(region_path, round_):
    env.mkfs(region_path, 64 * env.MiB)
    with daxfs.Region(region_path) as r:
        r.create("/log")
    args = [(region_path, REC, 500, SEED + round_)] * 3
    res = procs.run(_worker, [("a",) + a for a in args] +
                    [("t", region_path, REC, 3, SEED + round_)], timeout=240)
    with daxfs.Region(region_path) as r:
        f = r.open("/log")
        try:
            data = f.read_all()
            check_log(data, res[:3])
            f.truncate(len(data) + 64 * REC)
            tail = f.pread(64 * REC, len(data))
            assert tail == bytes(len(tail)), "cut records came back"
        finally:
            f.close()
    rc, out = env.fsck(region_path, "-n")
    assert rc == 0, "fsck.daxfs -n: exit %d\n%s" % (rc, out[-4000:])


def _worker(idx, barrier, kind, *args):
    if kind == "a":
        return W.appender(idx, barrier, *args)
    return W.truncater(idx, barrier, *args)
