"""Zero-copy, read-only maps of region files (docs/python.md "Zero copy").

A FileMap maps the pool pages of a file from the region file itself
(MAP_SHARED, at the offsets daxfs_map_page gives), one address range in
file order, so that its buffer is the file's bytes in the region: no
read, no copy, and stores by any host show through.  The Region becomes a
mapping host (docs/reclaim.md "Mapping hosts"): a thread runs a
revalidation pass every lease/4 that maps again the pages a truncate
moved (a hole: zeros) before it announces, as the LD_PRELOAD library's
pass thread does (lib/preload/map.c).
"""

import ctypes
import errno
import mmap
import os
import threading
import weakref

PAGE = 4096                     # DAXFS_BLOCK_SIZE
CHANGE_WRITTEN = 1 << 47        # a rewrite's mark in st_change (format 14)
_MAP_FIXED = 0x10               # Linux
_HOLE, _COPIED = 0, -1          # page states besides a region offset
_ASK_PERIOD = 0.02              # s between looks for an asked-for pass

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                       ctypes.c_int, ctypes.c_int, ctypes.c_long]
_libc.mprotect.restype = ctypes.c_int
_libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]


def _bytes_moved(seen, now):
    """Whether pages copied after the change counter read seen may be
    older than the file's, now that it reads now: the word moved, or it
    still carries a rewrite's mark, which a read-only region cannot fold
    (core/daxfs_core.h daxfs_change_bytes_moved, docs/files.md)."""
    return now != seen or bool(now & CHANGE_WRITTEN)


def _os_check(ret, fail):
    if ret == fail:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return ret


class FileMap:
    """A read-only, zero-copy view of a region file (Region.map_file).

    buffer: a read-only memoryview of the file's size bytes (numpy:
    numpy.frombuffer(m.buffer, dtype)); address: where it starts;
    region_offsets(): the region offset of each page (0: a hole).  It
    shows the file as it is now, like a MAP_SHARED mapping: stores by any
    host at once, a truncate's moved pages after the next pass (lease/4);
    its length is the size at map time.  close() (or the with block)
    unmaps; it refuses (BufferError) while views of buffer are alive.
    """

    def __init__(self, region, ino, size, check, extents=()):
        self.region = region
        self.ino = ino
        self.size = size
        self._check = check
        self._lib = region._lib
        npages = (size + PAGE - 1) // PAGE
        self._pages = [_HOLE] * npages
        self._mm = None
        self._change = region.fstat(ino).st_change
        if not size:
            self.address = 0
            self.buffer = memoryview(b"")
            return
        # the address range: anonymous (holes read as zeros), owned by an
        # mmap object so that close() fails while views are exported
        self._mm = mmap.mmap(-1, npages * PAGE)
        c = ctypes.c_char.from_buffer(self._mm)
        self.address = ctypes.addressof(c)
        del c
        try:
            self._fd = self._lib.daxfs_region_fd(region._handle())
            if self._fd < 0:    # the program closed the region's descriptor
                raise OSError(-self._fd, os.strerror(-self._fd))
            if self._no_page_maps_alone():
                extents = ()    # every page is copied (_lookup)
            self._map_extents(extents, npages)
            self._map_pages([pg for pg in range(npages)
                             if self._pages[pg] == _HOLE])
            _os_check(_libc.mprotect(self.address, npages * PAGE,
                                     mmap.PROT_READ), -1)
        except BaseException:
            self._mm.close()
            raise
        self.buffer = memoryview(self._mm)[:size].toreadonly()

    def _no_page_maps_alone(self):
        """devdax, hugetlbfs: the region maps only in 2 MiB pieces."""
        off = ctypes.c_uint64()
        return self._lib.daxfs_map_page(self.region._handle(), self.ino, 0,
                                        0, ctypes.byref(off)) == -errno.ENODEV

    def _lookup(self, pgoff):
        off = ctypes.c_uint64()
        ret = self._lib.daxfs_map_page(self.region._handle(), self.ino, pgoff,
                                       0, ctypes.byref(off))
        if ret in (-errno.EAGAIN, -errno.ENODEV):
            return _COPIED      # not mappable (devdax, a partial base page)
        self._check(ret)
        return off.value or _HOLE

    def _map_extents(self, extents, npages):
        """Maps the pool runs that File.extents() named (looked up after
        the first announcement, and the change counter read before: a
        truncate meanwhile makes the first pass look every page up), one
        mmap per run instead of a look-up per page."""
        for e in extents:
            first, n = e.logical // PAGE, min(e.length // PAGE,
                                               npages - e.logical // PAGE)
            if e.flags or e.logical % PAGE or e.physical % PAGE or n <= 0:
                continue        # base or unmapped data: page by page
            self._fixed(first, n, mmap.PROT_READ, mmap.MAP_SHARED, self._fd,
                        e.physical)
            self._pages[first:first + n] = range(e.physical,
                                                 e.physical + n * PAGE, PAGE)

    def _map_pages(self, pgoffs):
        """Maps (again) the pages pgoffs, runs of adjacent pool pages in
        one mmap each."""
        run = []
        for pg in pgoffs:
            where, was = self._lookup(pg), self._pages[pg]
            self._pages[pg] = where
            if where > 0 and run and run[-1][0] + 1 == pg and \
                    run[-1][1] + PAGE == where:
                run.append((pg, where))
                continue
            self._map_run(run)
            run = [(pg, where)] if where > 0 else []
            if where == _HOLE and was != _HOLE:
                self._fixed(pg, 1, mmap.PROT_READ,
                            mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
            elif where == _COPIED:
                self._copy_page(pg)
        self._map_run(run)

    def _map_run(self, run):
        if run:
            self._fixed(run[0][0], len(run), mmap.PROT_READ,
                        mmap.MAP_SHARED, self._fd, run[0][1])

    def _fixed(self, pg, n, prot, flags, fd, off):
        addr = self.address + pg * PAGE
        _os_check(_libc.mmap(addr, n * PAGE, prot, flags | _MAP_FIXED, fd,
                             off), ctypes.c_void_p(-1).value)

    def _copy_page(self, pg):
        self._fixed(pg, 1, mmap.PROT_READ | mmap.PROT_WRITE,
                    mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
        buf = (ctypes.c_char * PAGE).from_address(self.address + pg * PAGE)
        self._check(self._lib.daxfs_pread(self.region._handle(), self.ino,
                                          buf, PAGE, pg * PAGE))
        _os_check(_libc.mprotect(self.address + pg * PAGE, PAGE,
                                 mmap.PROT_READ), -1)

    def revalidate(self):
        """One pass over this map (the Region's pass thread runs it):
        when the file changed, pages that moved are mapped again."""
        if self._mm is None or self._mm.closed:
            return
        try:
            change = self.region.fstat(self.ino).st_change
        except FileNotFoundError:
            # gone (a read-only Region holds no file): its copies stay,
            # as a mapping of a deleted file keeps its bytes; inode
            # numbers are never reused, so no other file takes its place
            return
        if not _bytes_moved(self._change, change):
            return
        moved = [pg for pg, was in enumerate(self._pages)
                 if was == _COPIED or self._lookup(pg) != was]
        self._map_pages(moved)
        self._change = change

    def region_offsets(self):
        """The region offset of each page as mapped now (0: a hole, -1:
        a copy, where the page cannot be mapped)."""
        return list(self._pages)

    @property
    def zero_copy(self):
        """True when no page is a copy."""
        return _COPIED not in self._pages

    @property
    def closed(self):
        return self._mm is None or self._mm.closed

    def close(self):
        self.region._map_close(self)

    def _unmap(self):
        if self._mm is not None and not self._mm.closed:
            self.buffer.release()
            self._mm.close()    # BufferError while views are exported

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


_MAPPERS = weakref.WeakSet()


def _after_fork_in_child():
    # the pass thread is not in the child, and its lock may have been
    # held: the child's Region is a new host, with no maps of its own
    for mp in list(_MAPPERS):
        mp.lock = threading.Lock()
        mp.maps = []
        mp._thread = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


class Mapper:
    """A Region's maps and its revalidation pass thread."""

    def __init__(self, region):
        self.region = region
        self.lock = threading.Lock()
        self.maps = []
        self._stop = threading.Event()
        lease_ms = region.info()["lease_ms"] or 1000
        self._period = max(0.01, lease_ms / 4000.0)
        self._thread = None
        _MAPPERS.add(self)

    def add(self, make, check):
        """Announces an epoch, then builds the map with make() (its page
        lookups) and adds it, all under the lock: a pass or the last
        remove announcing 0 in between would leave its pages unheld."""
        lib, h = self.region._lib, self.region._handle()
        with self.lock:
            check(lib.daxfs_map_begin(h))
            m = make()
            self.maps.append(m)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="daxfs-map-pass", daemon=True)
                self._thread.start()
        return m

    def remove(self, m):
        with self.lock:
            m._unmap()
            self.maps.remove(m)
            lib, h = self.region._lib, self.region._handle()
            lib.daxfs_map_unhold(h, m.ino)
            if not self.maps:
                # nothing of ours is mapped: hold no freed page back
                # until a pass, and let the pass thread end
                lib.daxfs_map_pass_end(h, 0)

    def run_pass(self):
        """Revalidates every map, then announces (0: nothing mapped)."""
        lib, h = self.region._lib, self.region._handle()
        with self.lock:
            if not self.maps:
                lib.daxfs_map_pass_end(h, 0)
                return
            e = lib.daxfs_map_pass_begin(h)
            if e < 0:
                return
            for m in self.maps:
                m.revalidate()
            lib.daxfs_map_pass_end(h, e)

    def _asked(self):
        """A host waiting for space asked for a pass before the next tick
        (docs/reclaim.md "Asking for a pass")."""
        lib, h = self.region._lib, self.region._handle()
        return lib.daxfs_map_pass_wanted(h) == 1

    def _run(self):
        step = min(self._period, _ASK_PERIOD)
        waited = 0.0
        while not self._stop.wait(step):
            waited += step
            try:
                if waited >= self._period or self._asked():
                    waited = 0.0
                    self.run_pass()
            except (OSError, ValueError):
                pass            # a failed pass keeps the older announcement
            with self.lock:
                if not self.maps:
                    # the last remove announced 0: no pass, no ask to
                    # answer, no wakeups until add starts a new thread
                    self._thread = None
                    return

    def stop(self):
        """Stops the passes and unmaps what can be unmapped (before the
        Region closes)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        with self.lock:
            for m in self.maps:
                try:
                    m._unmap()
                except BufferError:
                    pass        # views alive: the pages stay mapped
            self.maps = []
