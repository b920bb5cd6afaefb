"""Workers for tests/test_append_truncate_race.py (own processes, own hosts).

Appenders append batches of fixed-size tagged records (helpers.content
records naming writer and sequence number); the truncater cuts the file
to a record boundary below its size.  Every size change is a multiple of
the record size, so the final file is a row of record slots.
"""

import random

from helpers import content, env

daxfs = env.daxfs

BARRIER_S = 60


def appender(idx, barrier, path, rec, nbatch, seed):
    """Appends nbatch batches of 1..4 records; returns [(seq, off)]."""
    rnd = random.Random(seed * 1000 + idx)
    done = []
    seq = 0
    with daxfs.Region(path) as r:
        f = r.open("/log")
        try:
            barrier.wait(BARRIER_S)
            for b in range(nbatch):
                if b == nbatch * 4 // 5:
                    r.create("/late%d" % idx)   # the truncater stops
                k = rnd.randint(1, 4)
                data = b"".join(content.record(idx, seq + j, rec)
                                for j in range(k))
                off = f.append(data)
                assert off % rec == 0, "append went to %d" % off
                done.append((seq, k, off))
                seq += k
        finally:
            f.close()
    return done


def truncater(idx, barrier, path, rec, nappenders, seed):
    """Cuts the file to a record boundary below its size until every
    appender has done 4/5 of its appends (so the file ends with appends
    made after the last cut); it is the only one that lowers the size, so
    its cut never extends.  Returns how many cuts it made."""
    rnd = random.Random(seed)
    i = 0
    with daxfs.Region(path) as r:
        f = r.open("/log")
        try:
            barrier.wait(BARRIER_S)
            while not all(r.exists("/late%d" % a) for a in range(nappenders)):
                i += 1
                slots = f.size // rec
                # every third cut is logrotate's copytruncate (to 0)
                t = 0 if i % 3 == 0 else rnd.randint(0, slots) * rec
                f.truncate(t)
        finally:
            f.close()
    return i
