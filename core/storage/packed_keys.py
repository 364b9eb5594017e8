"""A long list of keys held compactly: one UTF-8 buffer and an array of offsets instead of a list of str.

A million event ids as Python strings cost about 75 MB and a second to build; packed they cost about 20 MB
(the bytes themselves plus 8 bytes a key) and are built from the driver's rows a chunk at a time. A key is
decoded only when asked for, and `index` searches the buffer in C.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import overload

from stratagate.arrays import np

SEPARATOR = "\x1f"
"""The ASCII unit separator: never in a sane id; a key holding it cannot be packed (`pack` returns None)."""
_SEPARATOR_BYTE = SEPARATOR.encode()
_ERRORS = "surrogatepass"
"""A lone surrogate (never read from a database, possible in a Python list) round-trips as it is."""


class PackedKeys(Sequence[str]):
    """Keys in order, read by position or searched for; immutable."""

    __slots__ = ("_buffer", "_bounds")

    def __init__(self, buffer: bytes, bounds: np.ndarray) -> None:
        """`buffer` is the keys each preceded and followed by the separator; `bounds` the separators' offsets."""
        self._buffer = buffer
        self._bounds = bounds

    @classmethod
    def from_joined(cls, parts: Iterable[str], count: int) -> PackedKeys | None:
        """`count` keys given as strings of separator-joined keys (chunks of the full list, in order); None when
        a key holds the separator itself (the caller then keeps a plain list)."""
        buffer = (SEPARATOR + SEPARATOR.join(parts) + SEPARATOR).encode(errors=_ERRORS) if count else _SEPARATOR_BYTE
        bounds = np.flatnonzero(np.frombuffer(buffer, dtype=np.uint8) == _SEPARATOR_BYTE[0]).astype(np.int64)
        return cls(buffer, bounds) if len(bounds) == count + 1 else None

    @classmethod
    def pack(cls, keys: Sequence[str]) -> PackedKeys | None:
        return cls.from_joined([SEPARATOR.join(keys)], len(keys))

    def __len__(self) -> int:
        return len(self._bounds) - 1

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self._key(position) for position in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self._key(index)

    def _key(self, index: int) -> str:
        return self._buffer[int(self._bounds[index]) + 1 : int(self._bounds[index + 1])].decode(errors=_ERRORS)

    def __iter__(self) -> Iterator[str]:
        return (self._key(index) for index in range(len(self)))

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self._find(key) >= 0

    def index(self, key: str, start: int = 0, stop: int | None = None) -> int:
        """The first position of `key` (from `start`); ValueError when absent."""
        position = self._find(key, start)
        if position < 0 or (stop is not None and position >= stop):
            raise ValueError(f"{key!r} is not in the list")
        return position

    def _find(self, key: str, start: int = 0) -> int:
        if SEPARATOR in key or not 0 <= start <= len(self):
            return -1
        at = self._buffer.find(_SEPARATOR_BYTE + key.encode(errors=_ERRORS) + _SEPARATOR_BYTE, int(self._bounds[start]))
        # The match starts at a separator, so it is one of the bounds: its position is the key's row.
        return -1 if at < 0 else int(self._bounds.searchsorted(at))

    @property
    def nbytes(self) -> int:
        """What the keys take in memory (for the benchmarks)."""
        return len(self._buffer) + self._bounds.nbytes
