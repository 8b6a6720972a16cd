"""A snapshot's bytes: the object graph pickled in chunks, each loaded by an unpickler of its own.

One pickle of a whole emulation is cheap to write but costly to load: the unpickler's memo holds
every object it made until the end, the state dicts and argument tuples it built each record
from included (as much memory again as the records). Here every instance of the package's own
classes (a job, a transition, a scheduled event, a region, ...) is a *record*: referenced by
number (a persistent id), created empty when opening starts, and filled from its state in the
chunk it is written in, records in the order they were first referenced. A chunk is about
:data:`CHUNK_BYTES` of pickles with one memo, so what loading it builds beside the records is
dropped chunk by chunk.

A mutable object that is not a record (a dict, a list) pickled in one chunk and referenced again
from a later one (a warm pool's spec, which is its job's) is *exported*: the later chunk names
it by its place in the earlier chunk's memo, which the loader keeps for it. Immutable values
(strings, numbers, tuples, datetimes, enum members) referenced from two chunks are written in
each.

Layout: frames, each an 8-byte little-endian length and its bytes; the first frame is the
directory (:class:`Directory`), then one frame per chunk. Anything that does not add up (a
missing or extra chunk, a chunk with bytes left over, an unknown magic) is a ``ValueError``.
"""

from __future__ import annotations

import copyreg
import datetime
import enum
import io
import pickle
import struct
import types
from array import array
from typing import IO, Any, Callable, NamedTuple

#: The first bytes of a chunked snapshot.
MAGIC = b"SPLchunk2"
#: A chunk is closed once its pickles pass this size.
CHUNK_BYTES = 1 << 17
_PACKAGE = __name__.split(".", 1)[0] + "."
_LENGTH = struct.Struct("<Q")
_PLAIN, _RECORD, _TRACKED = 0, 1, 2
#: By record class: ``trim(record, state)``, the state a snapshot writes of that record.
States = dict[type, Callable[[Any, Any], Any]]
_PLAIN_TYPES = (
    str,
    bytes,
    int,
    float,
    complex,
    bool,
    type(None),
    tuple,
    frozenset,
    range,
    type,
    datetime.datetime,
    datetime.date,
    datetime.time,
    datetime.timedelta,
    datetime.timezone,
    types.FunctionType,
    types.BuiltinFunctionType,
)


class Directory(NamedTuple):
    """What opening needs before the chunks: each record's class, each chunk's record count, the exports."""

    classes: tuple[type, ...]
    kinds: bytes  # array("I"): the index in ``classes`` of each record, by number
    counts: bytes  # array("I"): the records each chunk fills, in number order
    export_chunks: bytes  # array("I"): the chunk of each export, by export number
    export_places: bytes  # array("I"): its place in that chunk's memo


def _kind(kind: type, dispatch: dict[type, Callable[[Any], Any]]) -> int:
    """How objects of ``kind`` are written: inline and duplicable, as records, or inline and exportable."""
    if issubclass(kind, _PLAIN_TYPES) or issubclass(kind, enum.Enum):
        return _PLAIN
    ours = kind.__module__.startswith(_PACKAGE)
    plain_object = all(base is object or base.__module__ != "builtins" for base in kind.__mro__)
    simple = (
        kind.__reduce_ex__ is object.__reduce_ex__  # type: ignore[comparison-overlap]
        and kind.__reduce__ is object.__reduce__  # type: ignore[comparison-overlap]
        and kind.__new__ is object.__new__
        and not hasattr(kind, "__getnewargs_ex__")
        and not hasattr(kind, "__getnewargs__")
    )
    identity = kind.__hash__ in (object.__hash__, None)  # an empty record is never hashed by value
    if ours and plain_object and simple and identity and kind not in dispatch:
        return _RECORD
    return _TRACKED


class _Writer:
    """The records and exports of one snapshot being written."""

    def __init__(self, dispatch: dict[type, Callable[[Any], Any]], states: States) -> None:
        self.dispatch = dispatch
        self.states = states
        self.kinds: dict[type, int] = dict.fromkeys(_PLAIN_TYPES, _PLAIN)
        self.numbers: dict[int, int] = {}  # id -> record number
        self.records: list[Any] = []
        self.first: dict[int, int] = {}  # id -> the chunk an exportable object was first written in
        self.picklers: list[pickle.Pickler] = []  # their memos keep every object written: no id reused
        self.places: dict[int, dict[int, int]] = {}  # chunk -> id -> memo place (read when one is exported)
        self.exports: dict[tuple[int, int], int] = {}  # (chunk, memo place) -> export number

    def persistent_id(self, obj: Any) -> int | None:
        kind = self.kinds.get(type(obj))
        if kind is None:
            kind = self.kinds[type(obj)] = _kind(type(obj), self.dispatch)
        if kind == _PLAIN:
            return None
        key = id(obj)
        if kind == _RECORD:
            number = self.numbers.get(key)
            if number is None:
                self.numbers[key] = number = len(self.records)
                self.records.append(obj)
            return number
        current = len(self.picklers) - 1
        chunk = self.first.setdefault(key, current)
        return None if chunk == current else self._export(chunk, key)

    def _export(self, chunk: int, key: int) -> int:
        places = self.places.get(chunk)
        if places is None:
            memo = self.picklers[chunk].memo.copy()
            places = self.places[chunk] = {key: place for key, (place, _) in memo.items()}
        export = self.exports.setdefault((chunk, places[key]), len(self.exports))
        return -1 - export

    def chunk(self, first: int) -> tuple[bytes, int]:
        """The next chunk: records from ``first`` on, until it is big enough; its bytes and count."""
        buffer = io.BytesIO()
        pickler = pickle.Pickler(buffer, protocol=5)
        pickler.dispatch_table = self.dispatch
        pickler.persistent_id = self.persistent_id  # type: ignore[method-assign]
        self.picklers.append(pickler)
        last = first
        while last < len(self.records) and buffer.tell() < CHUNK_BYTES:
            record = self.records[last]
            state = _state_of(record)
            trim = self.states.get(type(record))
            pickler.dump(state if trim is None else trim(record, state))
            last += 1
        return buffer.getvalue(), last - first


def _state_of(record: Any) -> Any:
    reduced = record.__reduce_ex__(5)
    if not (
        reduced[0] is copyreg.__newobj__  # type: ignore[attr-defined]  # it is there
        and reduced[1] == (type(record),)
        and all(part is None for part in reduced[3:])
    ):
        raise pickle.PicklingError(f"a {type(record).__name__} does not reduce to its state")
    return reduced[2] if len(reduced) > 2 else None


def dump(root: object, dispatch: dict[type, Callable[[Any], Any]], states: States | None = None) -> bytes:
    """``root`` and everything it holds, as a chunked snapshot's bytes.

    ``states``: by record class, what to write of a record's state instead (what it need not keep).
    """
    writer = _Writer(dispatch, states or {})
    if writer.persistent_id(root) != 0:
        raise pickle.PicklingError(f"a {type(root).__name__} cannot be a snapshot's root")
    chunks: list[bytes] = []
    counts = array("I")
    while sum(counts) < len(writer.records):
        data, count = writer.chunk(sum(counts))
        chunks.append(data)
        counts.append(count)
    classes = list(dict.fromkeys(type(record) for record in writer.records))
    index = {kind: place for place, kind in enumerate(classes)}
    places = sorted(writer.exports, key=writer.exports.__getitem__)
    directory = Directory(
        tuple(classes),
        array("I", (index[type(record)] for record in writer.records)).tobytes(),
        counts.tobytes(),
        array("I", (chunk for chunk, _ in places)).tobytes(),
        array("I", (place for _, place in places)).tobytes(),
    )
    frames = [pickle.dumps(directory, protocol=5), *chunks]
    return MAGIC + b"".join(_LENGTH.pack(len(frame)) + frame for frame in frames)


def load(stream: IO[bytes]) -> Any:
    """The root of a chunked snapshot read from ``stream`` (``ValueError`` if its frames do not add up)."""
    if stream.read(len(MAGIC)) != MAGIC:
        raise ValueError("it is not a chunked snapshot")
    directory = Directory(*pickle.loads(_frame(stream)))
    classes: tuple[Any, ...] = directory.classes
    records = [classes[kind].__new__(classes[kind]) for kind in _numbers(directory.kinds)]
    exported: list[Any] = [None] * (len(directory.export_places) // 4)
    wanted: dict[int, list[tuple[int, int]]] = {}
    for export, (chunk, place) in enumerate(
        zip(_numbers(directory.export_chunks), _numbers(directory.export_places))
    ):
        wanted.setdefault(chunk, []).append((place, export))

    def persistent_load(number: int) -> Any:
        return records[number] if number >= 0 else exported[-1 - number]

    made: dict[type, _Made] = {}
    methods = _Methods()
    number = 0
    for chunk, count in enumerate(_numbers(directory.counts)):
        data = _frame(stream)
        source = io.BytesIO(data)
        unpickler = _Unpickler(source, made, methods)
        unpickler.persistent_load = persistent_load  # type: ignore[method-assign]
        for _ in range(count):
            _build(records[number], unpickler.load())
            number += 1
        if source.tell() != len(data):
            raise ValueError(f"chunk {chunk} holds more than its {count} records")
        if chunk in wanted:
            _keep(unpickler, wanted.pop(chunk), exported)
    if number != len(records) or stream.read(1):
        raise ValueError("its chunks do not fill its records")
    return records[0]


class _Made(dict):
    """The values of one immutable class made so far, by their arguments: made once each."""

    def __init__(self, kind: type) -> None:
        super().__init__()
        self.kind = kind

    def __missing__(self, arguments: tuple) -> Any:
        value = self[arguments] = self.kind(*arguments)
        return value

    def make(self, *arguments: Any) -> Any:
        try:
            return self[arguments]
        except TypeError:  # an unhashable argument (a tzinfo of its own)
            return self.kind(*arguments)


class _Methods(dict):
    """The bound methods made so far, by owner and name: made once each."""

    def make(self, owner: Any, name: str) -> Any:
        """``getattr(owner, name)``, how a bound method is pickled: one object per owner and name
        (a method scheduled for each job is one bound method, not one per event)."""
        key = (id(owner), name)
        found = self.get(key)
        if found is None:
            found = getattr(owner, name)
            if type(found) is types.MethodType:
                self[key] = found  # it holds its owner: the id is not reused during the load
        return found


class _Unpickler(pickle.Unpickler):
    """A chunk's unpickler: equal datetimes, dates and timedeltas, in any chunk, are one object
    (a state's moments repeat: each event's due time, each job's last change), and so is each
    bound method of one owner."""

    def __init__(self, source: IO[bytes], made: dict[type, _Made], methods: _Methods) -> None:
        super().__init__(source)
        self._made = made
        self._methods = methods

    def find_class(self, module: str, name: str) -> Any:
        found = super().find_class(module, name)
        if found is getattr:
            return self._methods.make  # not a method of the unpickler: its memo would hold it
        if found not in _SHARED:
            return found
        made = self._made.get(found)
        if made is None:
            made = self._made[found] = _Made(found)
        return made.make


_SHARED = (datetime.datetime, datetime.date, datetime.timedelta)


def _keep(unpickler: pickle.Unpickler, places: list[tuple[int, int]], exported: list[Any]) -> None:
    """Keep a chunk's exported objects (its memo, with what it built its records from, then goes)."""
    memo = unpickler.memo.copy()
    for place, export in places:
        exported[export] = memo[place]


def _numbers(packed: bytes) -> array[int]:
    numbers = array("I")
    numbers.frombytes(packed)
    return numbers


def _frame(stream: IO[bytes]) -> bytes:
    head = stream.read(_LENGTH.size)
    if len(head) != _LENGTH.size:
        raise ValueError("a chunk is missing")
    (length,) = _LENGTH.unpack(head)
    data = stream.read(length)
    if len(data) != length:
        raise ValueError("a chunk is torn")
    return data


def _build(record: Any, state: Any) -> None:
    """Fill an empty record from its state, as pickle's BUILD does."""
    if state is None:
        return
    setstate = getattr(record, "__setstate__", None)
    if setstate is not None:
        setstate(state)
        return
    slots = None
    if isinstance(state, tuple) and len(state) == 2:
        state, slots = state
    if state:
        record.__dict__.update(state)
    for name, value in (slots or {}).items():
        setattr(record, name, value)
