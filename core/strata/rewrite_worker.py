"""The rewrite half of an eviction run in a forked worker process, which has a GIL of its own.

In one process the reading thread's Python (escaping, tags, rows, the journal) and the rewrite thread's
share one GIL, so a run used about 1.2 of 2 cores. Here the rewrite (rename into `archive/`, the edit
check's `stat`, the blob's `pwrite`) runs in a child forked when the run starts, before the run starts any
thread, and only from a process whose one thread is the caller (`_may_fork`). The parent's rewrite thread
still waits for each batch's journal section to be fsync'd, then queues the batch: the names and versions
in a `marshal`led frame, the blobs one after the other in a second frame, and the files' and folders'
descriptors by `SCM_RIGHTS` (so the child writes through the very descriptor that read, as the thread
did). Another parent thread takes the answers, so the child starts each batch as soon as it has answered
the one before: the files whose version changed (the parent puts them back) or the error that stopped it.

Safety: the child inherits the store lock's open file description (an `flock` belongs to it, not to the
process), so no other process takes the lock and recovers while the child still renames, even if the parent
is killed; `PR_SET_PDEATHSIG` kills the child as soon as its parent dies. A child that dies makes the batch
raise `RewriteWorkerDied`: the run fails and leaves its journal to the next lock holder, as a crash does.
A batch queued behind one that failed may still be moved: its journal section was durable before it was
queued, so that next lock holder finishes it too.
The child runs only a short loop of `os` calls on functions bound before the fork (no imports, no logging,
no locks), never returns into the parent's code and ends in `os._exit`.
"""

from __future__ import annotations

import array
import ctypes
import gc
import marshal
import os
import signal
import socket
import sys
import threading

from stratagate.strata.errors import RewriteWorkerDied

# Runs of fewer files rewrite in a thread: the fork, the child's start and its exit cost about this many
# files' worth of wall time (measured: see docs/strata.md, "Sixth pass").
MIN_FILES = 1000
_FDS_PER_MESSAGE = 253  # SCM_MAX_FD: descriptors one message may carry
_HEADER = 8  # bytes of a frame's length
_PR_SET_PDEATHSIG = 1
_prctl = ctypes.CDLL(None, use_errno=True).prctl if sys.platform.startswith("linux") else None


def start_for(files: int) -> RewriteWorker | None:
    """A worker for a run of `files` files if this process may fork one now, else None (the run's rewrite
    thread does the work)."""
    if files < MIN_FILES or not _may_fork():
        return None
    try:
        return RewriteWorker()
    except OSError:  # no memory or processes left for a child
        return None


def _may_fork() -> bool:
    """Linux (descriptor passing, a parent-death signal) and no thread but the caller: a thread alive at
    the fork could hold a lock the child then waits on forever. `/proc/self/task` also lists threads Python
    did not start (Qt's, a database driver's), so a process with a GUI never forks."""
    if not sys.platform.startswith("linux") or _prctl is None:
        return False
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return False


class RewriteWorker:
    """The child process and the parent's end of its socket. One thread may `send` batches while another
    `receive`s their answers, in the same order."""

    def __init__(self) -> None:
        parent_end, child_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        parent_pid = os.getpid()
        pid = os.fork()
        if pid == 0:  # the child: never returns
            code = 70
            try:
                parent_end.close()
                code = _serve(child_end, parent_pid)
            finally:
                os._exit(code)
        child_end.close()
        self._socket = parent_end
        self.pid = pid
        self._status: int | None = None
        self._waiting = threading.Lock()

    def send(self, jobs: list[tuple], blobs: bytes, descriptors: list[int]) -> None:
        """Queue one batch: the child starts it as soon as it has answered the one before, so it never
        waits for this process to take the answer in. Each job: (file descriptor, folder descriptor, name,
        archive descriptor, blob name, (inode, size, mtime_ns), blob length); `blobs` holds the jobs' blobs
        one after the other (not `marshal`led with the jobs: that took 6.6 ms per 2,048 blobs, a join 1.5); every
        descriptor the jobs name is in `descriptors`, which must stay open until `receive` has answered
        for the batch."""
        payload = marshal.dumps((descriptors, jobs))
        try:
            self._socket.sendall(_frame_header(payload) + payload + _frame_header(blobs))
            self._socket.sendall(blobs)
            for start in range(0, len(descriptors), _FDS_PER_MESSAGE):
                chunk = array.array("i", descriptors[start : start + _FDS_PER_MESSAGE])
                self._socket.sendmsg([b"F"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, chunk)])
        except OSError:  # a broken pipe: the child is gone
            raise RewriteWorkerDied(self.pid, self._exit_description()) from None

    def receive(self) -> tuple[list[int], tuple | None]:
        """The answer for the oldest batch sent and not yet answered: (indices of jobs whose file changed,
        the error that stopped the batch, as (index, errno, strerror, filename, filename2), or None)."""
        try:
            reply = _receive_frame(self._socket)
        except OSError:
            reply = None
        if not reply:
            raise RewriteWorkerDied(self.pid, self._exit_description())
        return marshal.loads(reply)

    def close(self) -> None:
        """Tell the child to stop (end of its input) and wait until it has exited."""
        self._socket.close()
        self._wait()

    def _wait(self) -> None:
        with self._waiting:  # one thread sends and another receives: both may find the child gone
            if self._status is None:
                self._status = os.waitpid(self.pid, 0)[1]

    def _exit_description(self) -> str:
        self._socket.close()
        self._wait()
        assert self._status is not None
        if os.WIFSIGNALED(self._status):
            return f"was killed by signal {os.WTERMSIG(self._status)}"
        return f"exited with code {os.waitstatus_to_exitcode(self._status)}"


def _frame_header(data: bytes) -> bytes:
    return len(data).to_bytes(_HEADER, "little")


def _receive_frame(channel: socket.socket) -> bytearray | None:
    """The next length-prefixed frame, or None if the other end closed first."""
    header = _receive_exactly(channel, _HEADER)
    if not header:
        return None
    return _receive_exactly(channel, int.from_bytes(header, "little"))


def _receive_exactly(channel: socket.socket, size: int) -> bytearray:
    """`size` bytes, or an empty buffer if the other end closed first."""
    buffer = bytearray(size)
    view = memoryview(buffer)
    received = 0
    while received < size:
        count = channel.recv_into(view[received:], size - received, socket.MSG_WAITALL)
        if count == 0:
            return bytearray()
        received += count
    return buffer


def _serve(channel: socket.socket, parent_pid: int) -> int:
    """The child's whole life: batches until the parent closes its end (0) or dies."""
    gc.disable()  # a collection could run finalizers of the parent's objects (a database connection)
    # The child's life is its parent's: Ctrl-C or a stop request (sent to the whole group) is the parent's
    # to handle, which ends the run and with it the child; the parent's death kills it.
    for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, signal.SIG_IGN)
    if _prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) != 0 or os.getppid() != parent_pid:
        return 71  # no parent-death signal, or the parent is already gone
    rename, stat, pwrite, close = os.rename, os.stat, os.pwrite, os.close
    space = socket.CMSG_SPACE(_FDS_PER_MESSAGE * array.array("i").itemsize)
    while True:
        frame = _receive_frame(channel)
        if frame is None:
            return 0
        descriptors, jobs = marshal.loads(frame)
        blobs = memoryview(_receive_frame(channel) or b"")
        received: list[int] = []
        while len(received) < len(descriptors):
            _data, ancillary, _flags, _address = channel.recvmsg(1, space)
            for _level, _type, data in ancillary:
                chunk = array.array("i")
                chunk.frombytes(data[: len(data) - len(data) % chunk.itemsize])
                received += chunk
            if not ancillary:
                return 72  # the parent died mid-message
        local = dict(zip(descriptors, received, strict=True))
        changed, error = [], None
        end = 0
        for index, (file, folder, name, archive, blob_name, version, length) in enumerate(jobs):
            start, end = end, end + length
            try:
                archive = local[archive]
                rename(name, blob_name, src_dir_fd=local[folder], dst_dir_fd=archive)
                # Only the file that was read may be rewritten: see `evict_journal._turn_into_blobs`.
                moved = stat(blob_name, dir_fd=archive, follow_symlinks=False)
                if (moved.st_ino, moved.st_size, moved.st_mtime_ns) != version:
                    changed.append(index)
                    continue
                file = local[file]
                written = pwrite(file, blobs[start:end], 0)
                while written < length:
                    written += pwrite(file, blobs[start + written : end], written)
            except OSError as failure:
                error = (index, failure.errno, failure.strerror, failure.filename, failure.filename2)
                break
        for descriptor in received:
            close(descriptor)
        reply = marshal.dumps((changed, error))
        channel.sendall(_frame_header(reply) + reply)
