"""The superblock's checksum, and the one field tests rewrite in it.

include/daxfs/format.h `struct daxfs_super`: 512 bytes at offset 0, the
last four a CRC32C of the bytes before them.  A test that bends a field
must store a valid checksum again, or every tool stops at the header.
"""

import struct

CSUM_OFF = 508                  # daxfs_super.csum
LEASE_MS_OFF = 108              # daxfs_super.lease_ms (u32)

_CRC_TABLE = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1
    _CRC_TABLE.append(_c)


def crc32c(data):
    crc = 0xffffffff
    for b in data:
        crc = _CRC_TABLE[(crc ^ b) & 0xff] ^ (crc >> 8)
    return crc ^ 0xffffffff


def fix_csum(b):
    """Stores the superblock's checksum into b (a bytearray of the region's
    first bytes, at least 512)."""
    struct.pack_into("<I", b, CSUM_OFF, crc32c(bytes(b[:CSUM_OFF])))


def lease_ms(path):
    with open(path, "rb") as f:
        f.seek(LEASE_MS_OFF)
        return struct.unpack("<I", f.read(4))[0]


def set_lease_ms(path, ms):
    """Rewrites the region file's host lease length, checksum and all."""
    with open(path, "r+b") as f:
        b = bytearray(f.read(CSUM_OFF + 4))
        struct.pack_into("<I", b, LEASE_MS_OFF, ms)
        fix_csum(b)
        f.seek(0)
        f.write(b)
