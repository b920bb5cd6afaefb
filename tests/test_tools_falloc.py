"""`daxfs fallocate` (docs/tools.md, docs/files.md "fallocate"): fallocate(1)'s
-n, -p, -z, -o and -l on files in a region, without a mount."""
from test_tools import dx, stat_fields

PAGE = 4096


def test_fallocate_command(region, tmp_path):
    src = tmp_path / "in"
    data = bytes(range(256)) * (10 * PAGE // 256)
    src.write_bytes(data)
    dx(region, "put", str(src), "/f")
    assert stat_fields(dx(region, "stat", "/f").stdout)["blocks"] == 10 * 8
    dx(region, "fallocate", "-p", "-o", "4096", "-l", "16K", "/f")
    st = stat_fields(dx(region, "stat", "/f").stdout)
    assert st["size"] == 10 * PAGE and st["blocks"] == 6 * 8
    got = dx(region, "cat", "/f", text=False).stdout
    assert got == data[:PAGE] + bytes(4 * PAGE) + data[5 * PAGE:]
    dx(region, "fallocate", "-z", "-o", "10", "-l", "10", "/f")
    got = dx(region, "cat", "/f", text=False).stdout
    assert got[:30] == data[:10] + bytes(10) + data[20:30]
    dx(region, "fallocate", "-n", "-o", "40K", "-l", "8K", "/f")
    st = stat_fields(dx(region, "stat", "/f").stdout)
    assert st["size"] == 10 * PAGE and st["blocks"] == 8 * 8
    dx(region, "fallocate", "-l", "1M", "/new")      # created, as fallocate(1)
    st = stat_fields(dx(region, "stat", "/new").stdout)
    assert st["size"] == 1 << 20 and st["blocks"] == (1 << 20) // 512
    dx(region, "fallocate", "/f", expect=2)           # no -l
    dx(region, "fallocate", "-l", "5X", "/f", expect=2)
    res = dx(region, "fallocate", "-l", "0", "/f", expect=1)
    assert "Invalid argument" in res.stderr
