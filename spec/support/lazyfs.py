#!/usr/bin/env python3
"""A test filesystem that loses what was not fsynced, the idea of Jepsen's LazyFS (for the power-loss tests).

    python3 lazyfs.py BACKING_DIR MOUNTPOINT

Mounts MOUNTPOINT in the foreground as a pass-through view of BACKING_DIR, except for file data:
a write is kept in this process's memory (4 KiB blocks per file) and reaches BACKING_DIR only when
the file is fsynced or fdatasynced (the dirty blocks are written, the file truncated to its size and
the backing file fsynced). A "power cut" is SIGKILL of this process: every unsynced write is gone, and
after `fusermount -u -z MOUNTPOINT` and a new mount the files hold exactly what was synced.

Faithfulness (what a real power cut could do that this does not):
- Metadata is durable at once: create, unlink, rename, mkdir, truncate-to-zero of a new file and chmod
  go straight to BACKING_DIR, as if every directory were fsynced after each change. A writer that
  forgets to fsync a directory after a rename is therefore NOT caught; a writer that skips fsync on a
  file's data is.
- No torn blocks or reordering within one fsync: a synced file holds all of its synced writes.
- Reads see the unsynced data (one page cache shared by every process), as on a real kernel.
"""
import errno
import os
import sys

from fusepy import FUSE, FuseOSError, Operations

BLOCK = 4096


class Dirty:
    """The unsynced state of one file: changed blocks, its size, and the lowest size it was cut to."""

    def __init__(self, size):
        self.blocks = {}
        self.size = size
        self.floor = size  # backing bytes at or beyond this were cut off by a truncate: read as zeros


class LazyFS(Operations):
    def __init__(self, root):
        self.root = os.path.realpath(root)
        self.dirty = {}

    def _full(self, path):
        return os.path.join(self.root, path.lstrip('/'))

    def _backing_read(self, path, d, offset, size):
        limit = d.floor if d else None
        if limit is not None:
            size = max(0, min(size, limit - offset))
        if size <= 0:
            return b''
        fd = os.open(self._full(path), os.O_RDONLY)
        try:
            return os.pread(fd, size, offset)
        finally:
            os.close(fd)

    def _ino(self, path):
        return os.lstat(self._full(path)).st_ino

    def _get(self, path):
        try:
            return self.dirty.get(self._ino(path))
        except OSError:
            return None

    def _state(self, path):
        st = os.lstat(self._full(path))
        d = self.dirty.get(st.st_ino)
        if d is None:
            d = Dirty(st.st_size)
            self.dirty[st.st_ino] = d
        return d

    def _block(self, path, d, index):
        b = d.blocks.get(index)
        if b is None:
            data = self._backing_read(path, d, index * BLOCK, BLOCK)
            b = bytearray(data) + bytearray(BLOCK - len(data))
            d.blocks[index] = b
        return b

    # --- metadata: straight to the backing directory ---
    def access(self, path, mode):
        if not os.access(self._full(path), mode):
            raise FuseOSError(errno.EACCES)

    def getattr(self, path, fh=None):
        try:
            st = os.lstat(self._full(path))
        except OSError as e:
            raise FuseOSError(e.errno)
        attrs = {k: getattr(st, k) for k in ('st_atime', 'st_ctime', 'st_gid', 'st_mode', 'st_mtime', 'st_nlink', 'st_size', 'st_uid')}
        d = self.dirty.get(st.st_ino)
        if d is not None:
            attrs['st_size'] = d.size
        return attrs

    def readdir(self, path, fh):
        return ['.', '..'] + os.listdir(self._full(path))

    def mkdir(self, path, mode):
        os.mkdir(self._full(path), mode)

    def rmdir(self, path):
        os.rmdir(self._full(path))

    def chmod(self, path, mode):
        os.chmod(self._full(path), mode)

    def chown(self, path, uid, gid):
        os.chown(self._full(path), uid, gid)

    def utimens(self, path, times=None):
        os.utime(self._full(path), times)

    def unlink(self, path):
        st = os.lstat(self._full(path))
        os.unlink(self._full(path))
        if st.st_nlink <= 1:
            self.dirty.pop(st.st_ino, None)  # its inode number may be reused by a new file

    def rename(self, old, new):
        try:
            st = os.lstat(self._full(new))
            if st.st_nlink <= 1 and st.st_ino != self._ino(old):
                self.dirty.pop(st.st_ino, None)
        except FileNotFoundError:
            pass
        os.rename(self._full(old), self._full(new))

    def link(self, target, source):
        os.link(self._full(source), self._full(target))

    def symlink(self, target, source):
        os.symlink(source, self._full(target))

    def readlink(self, path):
        return os.readlink(self._full(path))

    def statfs(self, path):
        st = os.statvfs(self._full(path))
        return {k: getattr(st, k) for k in ('f_bavail', 'f_bfree', 'f_blocks', 'f_bsize', 'f_favail', 'f_ffree', 'f_files', 'f_flag', 'f_frsize', 'f_namemax')}

    # --- file data: kept here until fsync ---
    def create(self, path, mode, fi=None):
        os.close(os.open(self._full(path), os.O_WRONLY | os.O_CREAT, mode))
        return 0

    def open(self, path, flags):
        if flags & os.O_TRUNC:
            self.truncate(path, 0)
        return 0

    def read(self, path, size, offset, fh):
        d = self._get(path)
        if d is None:
            return self._backing_read(path, None, offset, size)
        end = min(offset + size, d.size)
        out = bytearray()
        pos = offset
        while pos < end:
            index, inner = divmod(pos, BLOCK)
            take = min(BLOCK - inner, end - pos)
            b = d.blocks.get(index)
            if b is not None:
                out += b[inner:inner + take]
            else:
                data = self._backing_read(path, d, pos, take)
                out += data + bytes(take - len(data))
            pos += take
        return bytes(out)

    def write(self, path, data, offset, fh):
        d = self._state(path)
        pos = 0
        while pos < len(data):
            index, inner = divmod(offset + pos, BLOCK)
            take = min(BLOCK - inner, len(data) - pos)
            self._block(path, d, index)[inner:inner + take] = data[pos:pos + take]
            pos += take
        d.size = max(d.size, offset + len(data))
        return len(data)

    def truncate(self, path, length, fh=None):
        d = self._state(path)
        if length < d.size:
            last = length // BLOCK
            for index in [i for i in d.blocks if i > last or (i == last and length % BLOCK == 0)]:
                del d.blocks[index]
            if length % BLOCK:
                b = self._block(path, d, last)
                b[length % BLOCK:] = bytearray(BLOCK - length % BLOCK)
            d.floor = min(d.floor, length)
        d.size = length

    def fsync(self, path, datasync, fh):
        full = self._full(path)
        d = self.dirty.pop(self._ino(path), None)
        if d is None:
            if os.path.isfile(full):
                fd = os.open(full, os.O_RDONLY)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
            return 0
        fd = os.open(full, os.O_WRONLY)
        try:
            os.ftruncate(fd, min(d.floor, d.size))
            for index, b in d.blocks.items():
                start = index * BLOCK
                if start < d.size:
                    os.pwrite(fd, bytes(b[:min(BLOCK, d.size - start)]), start)
            os.ftruncate(fd, d.size)
            os.fsync(fd)
        finally:
            os.close(fd)
        return 0

    def fsyncdir(self, path, datasync, fh):
        return 0  # metadata is durable at once (see the module's comment)

    def flush(self, path, fh):
        return 0  # close() is not a sync: the data stays in memory

    def release(self, path, fh):
        return 0


if __name__ == '__main__':
    if len(sys.argv) != 3:
        sys.exit('usage: lazyfs.py BACKING_DIR MOUNTPOINT')
    FUSE(LazyFS(sys.argv[1]), sys.argv[2], foreground=True, nothreads=True, allow_other=False)
