"""Repeat calls without re-deriving them: a per-signature launch plan for the CUDA path.

A training loop calls an estimator with tensors of the same shapes, strides, dtypes and
device, and the same scalar arguments, every step. The first such call runs the whole path
(validation, layout, Problem, config lookup, launch arguments) and, when that path ended in
direct launches of compiled kernels, records a plan: each launch's argument list with its
addresses marked by where they came from (an argument, an output, or an offset into a
workspace the launcher allocated). Later calls with the same signature only read their
tensors' addresses, allocate outputs and workspaces, and launch.

Why: on the H200's host the derivation cost ~34 us of a 47 us GAE call at 4096x128 (front end
17.7, launch arguments 16.5, the compiled launcher itself 6.1; 2026-11-30), against a device
time of 4.6 us.

What makes a replay exactly the recorded path: the signature holds everything validation and
the derivation read (each tensor's shape, strides, dtype, device, 16-byte alignment and
requires_grad, every other argument's value by type and value, the current CUDA device), so the
whole path would reach the same decisions and launch arguments but the addresses. A call is
recorded only if no tensor argument requires grad (whether that is allowed depends on grad mode),
every address a kernel receives is an argument's own (no copy), an output's or a recorded
workspace's, no two tensor arguments share an address, every launch was direct (none through
Triton's own path: a profiler's launch hook, a Triton version the launcher was not checked
against), and no check read tensor values (``forbid``:
``last_value`` with ``truncated`` scans the flags on every call). Anything else, and every call
while a test or benchmark hook, a forced config or a launch hook is active, takes the whole
path.
"""
import functools
import inspect
import threading

import torch

from . import _graph_pools
from .kernels import lookback_state

_plans: dict = {}     # signature -> _Plan, or None for "take the whole path"
_MAX_PLANS = 4096
# A function whose calls keep bringing new signatures (gamma annealed every step, say) stops
# recording after this many misses in a row, then records one miss in this many: recording
# costs the whole path a few microseconds more, and a plan nobody replays is waste.
_MISS_LIMIT = 64
_gate = None          # () -> bool: replays allowed now (set by the kernel launcher)

_local = threading.local()   # .rec: the _Recorder of this thread's call being recorded


class _Recorder:
    def __init__(self):
        self.launches = []      # (run, head, grid, args, objs, consts, device): record_launch
        self.workspaces = []    # (address, bytes, shape, dtype, fill or None, persistent)
        self.ok = True


def forbid() -> None:
    """Called by a check that reads tensor values: the current call must not be replayed."""
    rec = getattr(_local, "rec", None)
    if rec is not None:
        rec.ok = False


def record_launch(run, head, grid, args, objs, consts, device) -> None:
    """Called by the launcher for a direct launch of a compiled kernel: a replay calls
    ``run(grid[0], grid[1], 1, stream, *head, *args, *consts)`` with the call's addresses."""
    rec = getattr(_local, "rec", None)
    if rec is not None:
        rec.launches.append((run, head, grid, args, objs, consts, device))


def record_workspace(w: torch.Tensor, fill=None, persistent=None) -> None:
    """Called by the launcher for a scratch tensor it allocated (``fill``: its initial value)
    or, ``persistent`` = its span slots, a look-back workspace of kernels/lookback_state.py,
    which a replay looks up for its stream (and which no replay uses while a stream captures)."""
    rec = getattr(_local, "rec", None)
    if rec is not None:
        rec.workspaces.append((w.data_ptr(), w.numel() * w.element_size(), tuple(w.shape),
                               w.dtype, fill,
                               None if persistent is None else (w.device, persistent)))


not_replayable = forbid   # the launcher, for launches it does not describe (Triton's own path)


def forget() -> None:
    """Drop every plan (the tuning DB was reloaded: configs may differ now)."""
    _plans.clear()


class _Plan:
    """A recorded call: what to allocate and launch again (set by ``_plan``), and ``replay``,
    a function generated from it by ``compile`` when the call first repeats (generating one
    costs ~0.3 ms: a signature that never repeats, gamma annealed every call, should not pay
    it)."""
    __slots__ = ("launches", "used", "workspaces", "places", "device", "dtype", "result_type",
                 "n_out", "replay", "source", "persistent")

    def first_replay(self, primary, sources):
        """``replay`` until the first one: generate the function, then run it."""
        if self.source is None:
            self.compile()                    # sets ``replay`` to the generated function
        return self.replay(primary, sources)

    def compile(self) -> None:
        """Generate ``replay(primary, sources)``: allocate the outputs and workspaces, read the
        addresses, launch, return the result. Every launch's argument list is written out, its
        constants bound as the function's (positional) defaults, so a call builds no list:
        against copying each recorded list and filling its address slots, on the dev box's CPU
        with the launcher stubbed (eighteenth session), GAE 4096x128 5.9 -> 4.2 us a replay,
        discounted returns 4.9 -> 3.0, chunked GAE 8x65536 (two launches) 11.8 -> 8.5; on the
        H200's host, pinned to one core, the estimators' loop figure at 4096x128 went from 1.56 to
        1.40 times a bare Triton launch's in the same process (nineteenth session; unpinned, the
        host's spread across cores hides it: benchmarks/NOTES.md item 8)."""
        bound = {"_empty_like": torch.empty_like, "_empty": torch.empty, "_full": torch.full,
                 "_stream": torch._C._cuda_getCurrentRawStream, "_dtype": self.dtype,
                 "_device": self.device, "_result": self.result_type}
        body = [f"o{k} = _empty_like(primary, dtype=_dtype)" for k in range(self.n_out)]
        body.append("stream = _stream(_device)")
        for w, (shape, dt, fill, persistent) in enumerate(self.workspaces):
            if persistent is not None:     # the stream's own (kernels/lookback_state.py)
                bound["_state"] = _graph_pools.eager_address
                bound[f"_pd{w}"], bound[f"_nk{w}"] = persistent
                body.append(f"w{w} = _state(_pd{w}, _nk{w}, stream)")
                continue
            bound[f"_ws{w}"], bound[f"_wt{w}"], bound[f"_wf{w}"] = shape, dt, fill
            make = (f"_empty(_ws{w}, dtype=_wt{w}, device=primary.device)" if fill is None else
                    f"_full(_ws{w}, _wf{w}, dtype=_wt{w}, device=primary.device)")
            body.append(f"w{w} = {make}.data_ptr()")
        # every distinct address once, a{j}: the arguments used, the outputs, workspace places
        addrs = [f"sources[{i}].data_ptr()" for i in self.used]
        addrs += [f"o{k}.data_ptr()" for k in range(self.n_out)]
        for j, (w, off) in enumerate(self.places, start=len(addrs)):
            bound[f"_off{j}"] = off
            addrs.append(f"w{w} + _off{j}")
        body += [f"a{j} = {expr}" for j, expr in enumerate(addrs)]
        for n, (run, head, g, args, fills) in enumerate(self.launches):
            fill = dict(fills)                # slot -> address index
            names = [f"_g{n}_0", f"_g{n}_1", "1", "stream"]
            bound[f"_r{n}"], bound[f"_g{n}_0"], bound[f"_g{n}_1"] = run, g[0], g[1]
            for m, h in enumerate(head):
                bound[f"_h{n}_{m}"] = h
                names.append(f"_h{n}_{m}")
            for slot, value in enumerate(args):   # the launch's arguments then its constexprs
                if slot in fill:
                    names.append(f"a{fill[slot]}")
                else:
                    bound[f"_c{n}_{slot}"] = value
                    names.append(f"_c{n}_{slot}")
            body.append(f"_r{n}({', '.join(names)})")
        outs = ", ".join(f"o{k}" for k in range(self.n_out))
        body.append(f"return _result({outs})" if self.result_type is not None else "return o0")
        self.source = (f"def replay(primary, sources, {', '.join(f'{k}={k}' for k in bound)}):\n"
                       + "".join(f"    {line}\n" for line in body))
        namespace = dict(bound)
        exec(compile(self.source, "<rlscan replay plan>", "exec"), namespace)  # noqa: S102
        self.replay = namespace["replay"]


# The signature of one argument: a tensor's shape, strides, dtype, device, 16-byte alignment
# and requires_grad (such calls are never replayed: the check depends on grad mode); anything
# else by type and value (gamma=True is rejected where gamma=1.0 is not, and
# True == 1.0). Written out inline in ``replayable``.
Tensor = torch.Tensor


def replayable(fn):
    """Decorate a public estimator: replay its recorded plan for a known signature."""
    params = list(inspect.signature(fn).parameters)
    primary_name = params[0]
    misses = [0]          # calls in a row that found no plan for their signature

    @functools.wraps(fn)
    def call(*args, **kwargs):
        if _gate is None or not _gate():
            return fn(*args, **kwargs)
        sources = (*args, *kwargs.values())
        try:
            # each argument's signature (see Tensor above), inline: a function call per
            # argument cost ~10% of a replay
            key = (fn, *[(x.shape, x.stride(), x.dtype, x.device, x.data_ptr() & 15,
                          x.requires_grad)
                         if isinstance(x, Tensor) else (type(x), x) for x in sources], *kwargs)
            plan = _plans.get(key, False)
        except TypeError:                     # an unhashable argument: no signature
            return fn(*args, **kwargs)
        if plan is False:
            misses[0] += 1
            if misses[0] > _MISS_LIMIT and misses[0] % _MISS_LIMIT:
                return fn(*args, **kwargs)
            return _record(fn, key, args, kwargs, primary_name)
        if plan is None or torch._C._cuda_getDevice() != plan.device or (
                plan.persistent is not None and lookback_state.capturing(plan.persistent)):
            return fn(*args, **kwargs)
        misses[0] = 0
        return plan.replay(args[0] if args else kwargs[primary_name], sources)

    return call


def _record(fn, key, args, kwargs, primary_name):
    rec = _local.rec = _Recorder()
    try:
        result = fn(*args, **kwargs)
    finally:
        _local.rec = None
    if len(_plans) >= _MAX_PLANS:     # many distinct signatures: start over rather than grow
        _plans.clear()
    _plans[key] = _plan(rec, result, args, kwargs, primary_name)
    return result


def _plan(rec, result, args, kwargs, primary_name):
    """The plan for a recorded call, or None when it cannot be replayed."""
    if not rec.ok or not rec.launches:
        return None
    outs = list(result) if isinstance(result, tuple) else [result]
    sources = (*args, *kwargs.values())
    if any(isinstance(x, torch.Tensor) and x.requires_grad for x in sources):
        return None                   # whether that is allowed depends on grad mode: check it
    owner = {}                        # address -> source index (outputs: ~k)
    for i, x in enumerate(sources):
        if isinstance(x, torch.Tensor) and x.numel():
            if x.data_ptr() in owner:
                return None           # two arguments share an address: ambiguous
            owner[x.data_ptr()] = i
    primary = args[0] if args else kwargs[primary_name]
    for k, o in enumerate(outs):
        if o.data_ptr() in owner:
            return None
        owner[o.data_ptr()] = ~k
        # the replay allocates outputs like this; the recorded ones must have come out the same
        probe = torch.empty_like(primary, dtype=o.dtype, device="meta")
        if probe.stride() != o.stride() or probe.shape != o.shape or o.dtype != outs[0].dtype:
            return None

    def source(addr):
        if addr in owner:
            return owner[addr]
        for w, (base, size, *_) in enumerate(rec.workspaces):
            if base <= addr < base + size:
                return w, addr - base
        return None                   # a copy: not an argument's own memory

    launches, at = [], {}             # at: source -> its index in a replay's address list
    for run, head, grid, launch_args, objs, consts, device in rec.launches:
        srcs = [source(launch_args[slot]) for slot, _ in objs]
        if None in srcs or device != rec.launches[0][-1]:
            return None
        for src in srcs:
            at.setdefault(src, None)
        launches.append((run, head, grid, [*launch_args, *consts], [slot for slot, _ in objs],
                         srcs))
    used = [s for s in at if type(s) is int and s >= 0]
    places = [s for s in at if type(s) is tuple]
    order = used + [~k for k in range(len(outs))] + places
    at = {s: j for j, s in enumerate(order)}
    plan = _Plan()
    plan.launches = tuple((run, head, grid, args, tuple(zip(slots, (at[s] for s in srcs))))
                          for run, head, grid, args, slots, srcs in launches)
    plan.used, plan.places, plan.device = tuple(used), tuple(places), rec.launches[0][-1]
    plan.workspaces = tuple(w[2:] for w in rec.workspaces)     # (shape, dtype, fill, persistent)
    # the device of a look-back workspace: such a plan is not replayed while its stream captures
    plan.persistent = next((w[-1][0] for w in rec.workspaces if w[-1] is not None), None)
    plan.dtype, plan.n_out = outs[0].dtype, len(outs)
    plan.result_type = type(result) if isinstance(result, tuple) else None
    plan.source = None
    plan.replay = plan.first_replay
    return plan
