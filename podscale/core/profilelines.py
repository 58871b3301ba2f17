"""Every kind of line a profiled process writes, typed: one TypedDict per kind with its
``Literal`` kind, its required fields and (``NotRequired``) the ones it may hold. A write
site is a dict literal passed to :func:`podscale.core.profilerecord.record`, so mypy fails
on a misspelt kind, a misspelt or missing field, at any site; the reader takes each kind's
fields from these declarations (:data:`podscale.core.profilerecord.KINDS`).

Field values stay loosely typed where the JSON they become is (rows, programs, peaks).
No ``from __future__ import annotations`` here: the required and the optional keys are
read from the classes at run time.
"""

from typing import Any, Literal, NotRequired, TypedDict


class DeviceFacts(TypedDict, total=False):
    """The device facts a ``join`` or ``devices`` line carries
    (:func:`podscale.attach.joining.devices`)."""

    platform: str
    device_kind: str
    local_devices: int
    peaks: Any
    slice: Any


class Start(TypedDict):
    kind: Literal["start"]
    attach: float
    schema: NotRequired[str]
    process_start: NotRequired[float | None]
    pid: NotRequired[int]
    host: NotRequired[str]
    script: NotRequired[str]
    argv: NotRequired[list[str]]


class Join(DeviceFacts):
    kind: Literal["join"]
    start: float
    end: float
    process: NotRequired[int]
    processes: NotRequired[int]


class Offset(TypedDict):
    kind: Literal["offset"]
    offset_us: float
    rtt_us: float


class Devices(DeviceFacts):
    kind: Literal["devices"]


class Memory(TypedDict):
    kind: Literal["memory"]
    devices: Any


class Degraded(TypedDict):
    kind: Literal["degraded"]
    hooks: dict[str, str]


class Computation(TypedDict):
    kind: Literal["computation"]
    id: int
    name: str
    wrapper: str


class Calls(TypedDict):
    kind: Literal["calls"]
    rows: list[Any]


class Threads(TypedDict):
    kind: Literal["threads"]
    calls: dict[str, int]


class Compile(TypedDict):
    kind: Literal["compile"]
    end: float
    event: NotRequired[str]
    fun: NotRequired[str | None]
    seconds: NotRequired[float]
    seq: NotRequired[int | None]
    ahead: NotRequired[bool]


class Cache(TypedDict):
    kind: Literal["cache"]
    hit: bool
    end: float
    seq: NotRequired[int | None]


class Arm(TypedDict):
    kind: Literal["arm"]
    vars: dict[str, str | None]


class ProgramFacts(TypedDict, total=False):
    """What a ``compiled`` line says of its program (:func:`podscale.attach.programs.
    describe`): fingerprint, peers, XLA's FLOPs and bytes, memory, the loops' further
    FLOPs and trip counts, the signature and ops."""

    program: str
    peers: Any
    flops: float | None
    bytes: float | None
    memory: dict[str, int] | None
    loop_flops: float
    loops: list[Any]
    identity: dict[str, Any]


class Compiled(ProgramFacts):
    kind: Literal["compiled"]
    id: int
    seq: int
    call: int
    shapes: NotRequired[Any]
    leaves: NotRequired[Any]
    outputs: NotRequired[Any]


class Step(TypedDict):
    kind: Literal["step"]
    name: str
    num: Any
    seqs: list[int]
    enter: float
    exit: float


class Program(TypedDict):
    kind: Literal["program"]
    name: str
    file: NotRequired[str]
    error: NotRequired[str]


class Capture(TypedDict):
    kind: Literal["capture"]
    steps: list[Any]
    file: str
    rows: Any
    cut: Any
    ops: NotRequired[Any]
    origin_us: NotRequired[float | None]
    start: NotRequired[Any]
    stop: NotRequired[Any]
    reduce_s: NotRequired[float]
    trigger: NotRequired[Any]
    wall: NotRequired[Any]


class CaptureSkipped(TypedDict):
    kind: Literal["capture_skipped"]
    reason: str
    steps: NotRequired[Any]
    trigger: NotRequired[Any]


class CaptureFailed(TypedDict):
    kind: Literal["capture_failed"]
    error: str
    steps: NotRequired[Any]
    trigger: NotRequired[Any]


class Gaps(TypedDict):
    kind: Literal["gaps"]
    rows: list[Any]


class Background(TypedDict):
    kind: Literal["background"]
    rows: list[Any]


#: ``from`` is a keyword: the functional form
Silent = TypedDict("Silent", {"kind": Literal["silent"], "from": float, "to": float})


class Hang(TypedDict):
    kind: Literal["hang"]
    verdict: str
    end: NotRequired[float]
    exit_code: NotRequired[int]


class End(TypedDict):
    kind: Literal["end"]
    end: float
    exit_code: int
    error: NotRequired[str | None]
    calls: NotRequired[Any]


#: every line a profiled process may write
Line = (Start | Join | Offset | Devices | Memory | Degraded | Computation | Calls | Threads
        | Compile | Cache | Arm | Compiled | Step | Program | Capture | CaptureSkipped
        | CaptureFailed | Gaps | Background | Silent | Hang | End)
#: every declaration, in :data:`Line`'s order
DECLARED: tuple[Any, ...] = Line.__args__


def kind_of(declared: Any) -> str:
    """A declaration's kind (its ``kind`` field's one Literal value)."""
    return str(declared.__annotations__["kind"].__args__[0])
