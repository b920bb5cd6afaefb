"""Deterministic, self-describing file contents.

make(tag, size) returns size bytes that start with a header naming the tag
and the size, followed by pseudo-random bytes seeded by the tag.  check()
recomputes the whole thing from the header, so a reader that knows nothing
about who wrote a file can still tell whether it got exactly the bytes
that were written (and not, say, a page of another, freed file).
"""

import hashlib
import random
import struct

MAGIC = b"DXTC"
_HDR = struct.Struct("<4sHQ")  # magic, tag length, total size


def make(tag, size):
    tag_b = tag.encode()
    head = _HDR.pack(MAGIC, len(tag_b), size) + tag_b
    if size < len(head):
        # Too small for a header: plain seeded bytes (check() can't be used).
        return random.Random(tag).randbytes(size)
    body = random.Random(tag).randbytes(size - len(head))
    return head + body


def parse(data):
    """(tag, size) from a header, or None when there is no valid header."""
    if len(data) < _HDR.size:
        return None
    magic, tlen, size = _HDR.unpack_from(data)
    if magic != MAGIC or len(data) < _HDR.size + tlen:
        return None
    try:
        tag = data[_HDR.size:_HDR.size + tlen].decode()
    except UnicodeDecodeError:
        return None
    return tag, size


def check(data, tag=None):
    """Raises AssertionError unless data is exactly make(tag, len)."""
    hdr = parse(data)
    assert hdr is not None, "no content header (first bytes %r)" % bytes(data[:32])
    got_tag, size = hdr
    if tag is not None:
        assert got_tag == tag, "content of %r found where %r was expected" % (got_tag, tag)
    assert len(data) == size, "%r: %d bytes, header says %d" % (got_tag, len(data), size)
    if data != make(got_tag, size):
        exp = make(got_tag, size)
        bad = next(i for i in range(size) if data[i] != exp[i])
        raise AssertionError("%r: bytes differ from offset %d (page %d)" %
                             (got_tag, bad, bad // 4096))
    return got_tag


def sha256(data):
    return hashlib.sha256(data).hexdigest()


# Fixed-size tagged records for append tests.
_REC = struct.Struct("<4sIIQ")  # magic, writer, seq, crc-ish digest


def record(writer, seq, size):
    """A size-byte record naming (writer, seq) with a digest of itself."""
    fill = random.Random("%d/%d" % (writer, seq)).randbytes(size - _REC.size)
    dig = int.from_bytes(hashlib.blake2b(fill, digest_size=8).digest(), "little")
    return _REC.pack(b"DXRC", writer, seq, dig) + fill


def parse_record(buf):
    """(writer, seq) of an intact record, or None."""
    if len(buf) < _REC.size:
        return None
    magic, writer, seq, dig = _REC.unpack_from(buf)
    if magic != b"DXRC":
        return None
    if buf != record(writer, seq, len(buf)):
        return None
    return writer, seq
