"""Triton's interpreter without its redundant re-patching of ``triton.language``.

A kernel launched in the interpreter patches ``triton.language`` (its builtins, ``tl.tensor``'s
methods, ``tl.math``) for the whole run, then restores it. Each call the kernel makes to another
``@triton.jit`` function patches the same modules again (``inspect.getmembers`` over each of
them) and drops the result: an exact no-op when the callee's module sees the same language
modules as the kernel's, and the cost of most of an interpreted call, since
``tl.associative_scan`` calls its combine function once per step in Python. A GAE call on a
37 x 29 time-major buffer through a 128 x 4 tile (cProfile, triton 3.9): 14.4 s, 9.9 of them in
6,349 such re-patches.

:func:`install` skips exactly those re-patches (a callee whose language modules the running
kernel has patched); every other call runs as Triton ships it. It changes no result: the kernels
run the same interpreted operations on the same patched modules. On a Triton whose interpreter
lacks the hooks it wraps it changes nothing and returns False.
"""
import inspect

_originals = None    # (GridExecutor.__call__, InterpretedFunction.__call__) while installed


def _language_modules(fn) -> frozenset:
    """What ``triton.runtime.interpreter._patch_lang`` patches for ``fn``: the modules among its
    globals that are ``triton.language`` or ``triton.language.core``."""
    import triton.language as tl
    return frozenset(id(v) for v in fn.__globals__.values()
                     if inspect.ismodule(v) and v in (tl, tl.core))


def install() -> bool:
    """Skip the re-patching of ``triton.language`` at device-function calls inside a kernel
    whose launch has patched the same modules. Idempotent; returns whether it is in place
    (False: this Triton's interpreter differs from the one this was written against)."""
    global _originals
    if _originals is not None:
        return True
    try:
        from triton.runtime import interpreter as ti
        run_kernel, call_device_fn = ti.GridExecutor.__call__, ti.InterpretedFunction.__call__
        ti._patch_lang     # noqa: B018 (the hook a device call goes through)
    except (ImportError, AttributeError):
        return False
    running = []        # the language modules each running kernel patched, innermost last
    modules_of = {}     # (fn, size of its globals) -> _language_modules(fn)

    def modules(fn):
        # keyed by the globals' size too: the interpreter adds names to a module's globals
        # when it first rewrites a function of it
        key = (fn, len(fn.__globals__))
        got = modules_of.get(key)
        if got is None:
            got = modules_of[key] = _language_modules(fn)
        return got

    def kernel_run(self, *args, **kwargs):
        running.append(modules(self.fn))
        try:
            return run_kernel(self, *args, **kwargs)
        finally:
            running.pop()

    def device_call(self, *args, **kwargs):
        mods = modules(self.fn)
        if not running or not mods or not mods <= running[-1]:
            return call_device_fn(self, *args, **kwargs)
        patch = ti._patch_lang
        ti._patch_lang = _already_patched
        try:
            return call_device_fn(self, *args, **kwargs)
        finally:
            ti._patch_lang = patch

    ti.GridExecutor.__call__ = kernel_run
    ti.InterpretedFunction.__call__ = device_call
    _originals = (run_kernel, call_device_fn)
    return True


def uninstall() -> None:
    """Put Triton's interpreter back as it ships (no-op if :func:`install` is not in place)."""
    global _originals
    if _originals is not None:
        from triton.runtime import interpreter as ti
        ti.GridExecutor.__call__, ti.InterpretedFunction.__call__ = _originals
        _originals = None


def _already_patched(fn):
    """Stands in for ``_patch_lang`` at a device call the running kernel's patch covers."""
    return None
