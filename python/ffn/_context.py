# _context.py — the loaded library and ffn.Context: a libffn context (kernels chosen for the
# CPU, thread count, accuracy tier, last error) owned by a Python object.
#
# Every function of the package takes `ctx=`; without it, the context is chosen by where the
# operands lie: for host memory (NumPy arrays, CPU tensors) the innermost `with ctx:` block of a
# CPU context, else a per-thread default CPU context made on first use from the module-level
# defaults (ffn.set_defaults); for CUDA tensors of device d the innermost `with` block of a CUDA
# context on d, else a per-thread default CUDA context of d. A libffn context must not be used
# by two threads at once, so each Context also holds a lock, taken around each library call.
#
# CUDA streams: a CUDA context made with stream=None follows torch's current stream of its device:
# before each call it reads it (torch.cuda.current_stream(d).cuda_stream) and, when it changed
# since the last call, hands it to the library with ffn_ctx_set_stream; the kernel is queued there
# and the call returns at once, ordered with the torch work of that stream. A context made with a
# stream of its own queues there, and a call runs inside `torch.cuda.stream(that stream)` (its
# allocations and copies too).
import ctypes
import sys
import threading

from . import _lib
from ._errors import Error, InvalidArgumentError, UnsupportedError, error_for

LIB, LIBRARY_PATH, LIBRARY_SOURCE = _lib.load()

# --- log callback --------------------------------------------------------------------------------
# One C-callable trampoline for all contexts; log_user carries a key into _SINKS. It also keeps
# the last level-0 message per thread: a failed ffn_ctx_create has no context to read it from.
_SINKS = {}
_tls = threading.local()
_next_key = [1]


def _log_trampoline(level, message, user):
    text = message.decode("utf-8", "replace") if message else ""
    if level == 0:
        _tls.create_error = text
    sink = _SINKS.get(user or 0)
    if sink is not None:
        try:
            sink(level, text)
        except Exception:  # a user's log function must not unwind through C
            pass


_LOG_FN = _lib.LogFn(_log_trampoline)

# Backends a context can run on (enum ffn_backend).
BACKENDS = dict(_lib.BACKEND)


def backend_available(backend="cuda"):
    """(True, "") when this libffn has `backend` ("cpu", "cuda") and it can run here, else
    (False, the library's reason: no CUDA backend in this build, no CUDA device, ...)."""
    if backend not in BACKENDS:
        raise InvalidArgumentError("backend=%r; expected one of %s" % (backend,
                                                                       ", ".join(BACKENDS)))
    why = ctypes.create_string_buffer(512)
    ok = LIB.ffn_backend_available(BACKENDS[backend], why, len(why))
    return bool(ok), "" if ok else why.value.decode("utf-8", "replace")


# --- torch's CUDA streams ------------------------------------------------------------------------

def _torch_stream_source():
    """A function device -> torch's current stream there, as an int (0: the default stream).
    torch._C._cuda_getCurrentRawStream is what torch's own compiled code calls (a fraction of
    torch.cuda.current_stream(d).cuda_stream's cost); the public form where it is missing."""
    t = sys.modules.get("torch")
    if t is None:
        return None
    raw = getattr(getattr(t, "_C", None), "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return raw
    return lambda d: t.cuda.current_stream(d).cuda_stream


_stream_fn = []  # the cached source (the tests replace it through set_stream_source)


def current_stream(device):
    """torch's current stream on CUDA device `device`, as a cudaStream_t int (0: the default
    stream; also 0 while torch is not imported, as no CUDA tensor can exist then)."""
    if not _stream_fn:
        f = _torch_stream_source()
        if f is None:
            return 0
        _stream_fn.append(f)
    return _stream_fn[0](device)


def set_stream_source(fn):
    """Replaces how the current stream is read (fn(device) -> int); None restores torch's.
    For tests without a GPU. Returns the previous source (or None)."""
    old = _stream_fn[0] if _stream_fn else None
    del _stream_fn[:]
    if fn is not None:
        _stream_fn.append(fn)
    return old


def device_index(device, what="device"):
    """A CUDA device ordinal from an int, "cuda", "cuda:N" or a torch.device; None: torch's
    current device when torch has CUDA, else 0."""
    if device is None:
        t = sys.modules.get("torch")
        if t is not None and t.cuda.is_available():
            return t.cuda.current_device()
        return 0
    if isinstance(device, bool):
        pass
    elif isinstance(device, int):
        if device >= 0:
            return device
    else:
        name = str(device)
        if name == "cuda":
            return device_index(None)
        if name.startswith("cuda:") and name[5:].isdigit():
            return int(name[5:])
    raise InvalidArgumentError("%s=%r; expected a CUDA device: an index >= 0, 'cuda', 'cuda:N' "
                               "or a torch.device" % (what, device))


def device_name(device):
    return "cpu" if device is None else "cuda:%d" % device


class _NullGuard:
    __slots__ = ()

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


NULL_GUARD = _NullGuard()


def _enum(table, value, what):
    if isinstance(value, str):
        key = value.lower()
        if key in table:
            return table[key]
    elif isinstance(value, int) and 0 <= value < len(table):
        return value
    raise InvalidArgumentError("ffn.Context: %s=%r; expected one of %s" %
                               (what, value, ", ".join(table)))


class Context:
    """A libffn context.

    threads      kernel and GEMM threads; 0 = OpenMP's default (OMP_NUM_THREADS or the cores)
    accuracy     "default" (the fast tier) or "high" (GeLU/GeGLU forward within 2 ulp)
    isa          "auto" (best the CPU supports, or $FFN_ISA), "scalar" (the C reference),
                 "avx2", "avx512"
    bf16_parity  gated forward in bf16/f16: round act(gate) to the storage type before the
                 multiply, as PyTorch eager code does
    log          optional callable(level, message): 0 error, 1 warning, 2 info, 3 debug
    backend      "cpu" (host memory: NumPy arrays, CPU tensors) or "cuda" (CUDA tensors of one
                 device; raises ffn.UnsupportedError with the library's reason where it cannot run)
    device       CUDA: the device (an index, "cuda:N", a torch.device; None: torch's current one)
    stream       CUDA: None follows torch's current stream of the device (read before each call);
                 a torch.cuda.Stream or a cudaStream_t int (0: the default stream) queues every
                 call there, each call running inside `torch.cuda.stream(stream)`

    Use as `with ctx:` to make it the calling thread's current context for the operands of its
    device (a CPU context for host memory, a CUDA context for its device's tensors).
    """

    def __init__(self, threads=0, accuracy="default", isa="auto", bf16_parity=False, log=None,
                 backend="cpu", device=None, stream=None):
        self._handle = None
        self._device = None
        self._follow = False
        if backend not in BACKENDS:
            raise InvalidArgumentError("ffn.Context: backend=%r; expected one of %s" % (
                backend, ", ".join(BACKENDS)))
        if backend == "cpu" and (device is not None or stream is not None):
            raise InvalidArgumentError("ffn.Context: device/stream apply to backend='cuda' only")
        if not isinstance(threads, int) or threads < 0:
            raise InvalidArgumentError("ffn.Context: threads=%r; expected an int >= 0 "
                                       "(0: OpenMP's default)" % (threads,))
        self.backend = backend
        self._init = {"threads": threads, "accuracy": accuracy, "isa": isa,
                      "bf16_parity": bool(bf16_parity)}
        opts = _lib.CtxOpts()
        opts.size = ctypes.sizeof(_lib.CtxOpts)
        opts.force_isa = _enum(_lib.ISA, isa, "isa")
        opts.n_threads = threads
        opts.accuracy = _enum(_lib.ACCURACY, accuracy, "accuracy")
        opts.bf16_parity = bool(bf16_parity)
        self._stream_obj = None  # a torch stream given (kept alive), or made for the guard
        self._stream = 0         # the cudaStream_t the library has now (0: NULL)
        if backend == "cuda":
            ok, why = backend_available("cuda")
            if not ok:
                raise UnsupportedError("ffn.Context: backend='cuda' cannot run: %s (libffn: %s)"
                                       % (why, LIBRARY_PATH))
            dev = device_index(device)
            self._device = dev
            self._init.update(backend="cuda", device=dev)
            opts.backend = BACKENDS["cuda"]
            opts.device = dev
            if stream is None:
                self._follow = True
            else:
                self._stream, self._stream_obj = _stream_handle(stream, dev)
                opts.stream = self._stream or None
        key = _next_key[0]
        _next_key[0] += 1
        self._key = key
        if log is not None:
            _SINKS[key] = log
        opts.log = _LOG_FN
        opts.log_user = key
        self._lock = threading.Lock()
        self.bf16_parity = bool(bf16_parity)
        handle = ctypes.c_void_p()
        _tls.create_error = ""
        st = LIB.ffn_ctx_create(ctypes.byref(opts), ctypes.byref(handle))
        if st != 0:
            _SINKS.pop(key, None)
            msg = getattr(_tls, "create_error", "") or LIB.ffn_status_string(st).decode()
            raise error_for(st, msg)
        self._handle = handle.value
        self._stack_depth = 0

    # --- properties ---

    @property
    def handle(self):
        """The ffn_ctx_t as an int (for ctypes calls of your own)."""
        return self._handle

    @property
    def isa(self):
        """The ISA whose kernels this context runs: "scalar", "avx2" or "avx512"."""
        return _lib.ISA_NAMES[LIB.ffn_ctx_isa(self._handle)]

    @property
    def threads(self):
        return LIB.ffn_ctx_threads(self._handle)

    @threads.setter
    def threads(self, n):
        if not isinstance(n, int):
            raise InvalidArgumentError("ffn.Context.threads=%r; expected an int" % (n,))
        self.call(LIB.ffn_ctx_set_threads, n)

    @property
    def accuracy(self):
        return _lib.ACCURACY_NAMES[LIB.ffn_ctx_accuracy(self._handle)]

    @accuracy.setter
    def accuracy(self, value):
        self.call(LIB.ffn_ctx_set_accuracy, _enum(_lib.ACCURACY, value, "accuracy"))

    @property
    def last_error(self):
        return LIB.ffn_ctx_last_error(self._handle).decode("utf-8", "replace")

    @property
    def device(self):
        """The CUDA device ordinal of a CUDA context; None for a CPU context."""
        return self._device

    @property
    def stream(self):
        """CUDA: the cudaStream_t (an int; 0: the default stream) the library queues on now: the
        context's own, or the torch stream of its last call when it follows torch's."""
        return LIB.ffn_ctx_stream(self._handle) or 0

    @property
    def follows_current_stream(self):
        """True for a CUDA context made with stream=None (torch's current stream, per call)."""
        return self._follow

    def set_stream(self, stream):
        """CUDA: queue later calls on `stream` (a torch.cuda.Stream or a cudaStream_t int);
        None: follow torch's current stream again."""
        if self._device is None:
            raise InvalidArgumentError("ffn.Context.set_stream: a CPU context has no stream")
        with self._lock:
            if stream is None:
                self._follow, self._stream_obj = True, None
                return
            h, obj = _stream_handle(stream, self._device)
            self._check(LIB.ffn_ctx_set_stream(self._handle, h or None))
            self._follow, self._stream, self._stream_obj = False, h, obj

    def synchronize(self):
        """Waits until the work this context queued has finished (CUDA: its stream, or the torch
        stream of its last call; CPU: returns at once). Errors of earlier asynchronous work on
        the device surface here as ffn.BackendError."""
        with self._lock:
            self._check(LIB.ffn_ctx_synchronize(self._handle))

    # --- calls ---

    def _check(self, st):
        if st != 0:
            raise error_for(st, LIB.ffn_ctx_last_error(self._handle).decode("utf-8", "replace"))

    def call(self, fn, *args):
        """fn(ctx, *args) under the lock; raises the status's ffn.Error with the message. A CUDA
        context that follows torch's current stream sets it first when it changed."""
        with self._lock:
            if self._follow:
                h = current_stream(self._device)
                if h != self._stream:
                    self._check(LIB.ffn_ctx_set_stream(self._handle, h or None))
                    self._stream = h
            st = fn(self._handle, *args)
            if st != 0:
                raise error_for(st, LIB.ffn_ctx_last_error(self._handle).decode("utf-8",
                                                                                 "replace"))

    def stream_guard(self):
        """The context manager a call on this context runs in: `torch.cuda.stream(s)` for a
        CUDA context with a stream s of its own that is not torch's current one (so that the
        call's allocations and copies are ordered with its kernel), else a no-op."""
        if self._follow or self._device is None:
            return NULL_GUARD
        if self._stream == current_stream(self._device):
            return NULL_GUARD
        t = sys.modules["torch"]
        if self._stream_obj is None:
            self._stream_obj = (t.cuda.default_stream(self._device) if self._stream == 0 else
                                t.cuda.ExternalStream(self._stream, device=self._device))
        return t.cuda.stream(self._stream_obj)

    def close(self):
        """Frees the libffn context (also done when the object is collected)."""
        h, self._handle = self._handle, None
        if h:
            LIB.ffn_ctx_destroy(h)
        _SINKS.pop(getattr(self, "_key", None), None)

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __reduce__(self):
        # Pickled (torch.save of a module holding one) and deep-copied as its options: the copy
        # is a new libffn context with the same settings (its log callback is not kept; a CUDA
        # copy follows torch's current stream: a stream handle means nothing in another process).
        return (_remake, (dict(self._init, threads=self.threads, accuracy=self.accuracy),))

    def __enter__(self):
        stack = getattr(_tls, "stack", None)
        if stack is None:
            stack = _tls.stack = []
        stack.append(self)
        _tls.host = None
        return self

    def __exit__(self, *exc):
        _tls.stack.pop()
        _tls.host = None
        return False

    def __repr__(self):
        if not self._handle:
            return "<ffn.Context closed>"
        if self._device is not None:
            return "<ffn.Context cuda:%d stream=%s accuracy=%s bf16_parity=%s>" % (
                self._device, "torch's current" if self._follow else hex(self._stream),
                self.accuracy, self.bf16_parity)
        return "<ffn.Context isa=%s threads=%d accuracy=%s bf16_parity=%s>" % (
            self.isa, self.threads, self.accuracy, self.bf16_parity)


def _remake(kw):
    return Context(**kw)


def _stream_handle(stream, device):
    """(cudaStream_t int, torch stream object or None) of a stream given by the caller."""
    if isinstance(stream, bool):
        pass
    elif isinstance(stream, int):
        if stream >= 0:
            return stream, None
    elif hasattr(stream, "cuda_stream"):  # torch.cuda.Stream / ExternalStream
        dev = getattr(getattr(stream, "device", None), "index", None)
        if dev is not None and dev != device:
            raise InvalidArgumentError("ffn.Context: the stream is on cuda:%d, the context on "
                                       "cuda:%d" % (dev, device))
        return int(stream.cuda_stream), stream
    raise InvalidArgumentError("ffn.Context: stream=%r; expected None (torch's current stream), "
                               "a torch.cuda.Stream or a cudaStream_t int" % (stream,))


# --- the calling thread's context -----------------------------------------------------------------

_defaults = {"threads": 0, "accuracy": "default", "isa": "auto", "bf16_parity": False}
_defaults_gen = [0]


def get_context(device=None):
    """The context a call on operands of `device` uses without ctx= in the calling thread:
    device None or "cpu" (host memory): the innermost `with ctx:` of a CPU context, else this
    thread's default CPU context (made on first use from the defaults of ffn.set_defaults);
    a CUDA device (an index, "cuda:N", a torch.device): the innermost `with` of a CUDA context
    on it, else this thread's default CUDA context of that device."""
    if device is None or str(device) == "cpu":
        return context_for("ffn.get_context", None, None)
    return context_for("ffn.get_context", None, device_index(device))


def context_for(fn, ctx, device):
    """The context of a call whose operands lie on `device` (None: host memory; an int: that
    CUDA device): ctx when given (it must run there), else the calling thread's (see
    get_context). Raises ffn.InvalidArgumentError for a ctx of another device, and
    ffn.UnsupportedError naming the library's reason where CUDA cannot run."""
    if ctx is not None:
        if not isinstance(ctx, Context):
            raise InvalidArgumentError("%s: ctx=%r is not an ffn.Context" % (fn, ctx))
        if ctx._device != device:
            raise InvalidArgumentError(
                "%s: the operands are %s but ctx runs on %s; pass a context of their device%s, "
                "or none" % (fn, _where(device), device_name(ctx._device),
                             "" if device is None else
                             " (ffn.Context(backend='cuda', device=%d))" % device))
        return ctx
    stack = getattr(_tls, "stack", None)
    if stack:
        for c in reversed(stack):
            if c._device == device:
                return c
    gen = _defaults_gen[0]
    if device is None:
        c = getattr(_tls, "default", None)
        if c is None or _tls.default_gen != gen:
            c = Context(**_defaults)
            _tls.default = c
            _tls.default_gen = gen
        return c
    cuda = getattr(_tls, "cuda", None)
    if cuda is None or _tls.cuda_gen != gen:
        cuda = _tls.cuda = {}
        _tls.cuda_gen = gen
    c = cuda.get(device)
    if c is None:
        c = cuda[device] = _default_cuda(fn, device)
    return c


def host_context():
    """context_for(fn, None, None), the context of host operands without ctx=, cached per
    thread until a `with` block opens or closes or the defaults change."""
    h = getattr(_tls, "host", None)  # (context, defaults generation); `with` drops it
    if h is not None and h[1] == _defaults_gen[0]:
        return h[0]
    gen = _defaults_gen[0]
    c = context_for("ffn", None, None)
    _tls.host = (c, gen)
    return c


def _where(device):
    return "in host memory" if device is None else "on %s" % device_name(device)


def _default_cuda(fn, device):
    ok, why = backend_available("cuda")
    if not ok:
        raise UnsupportedError("%s: the operands are on cuda:%d, but this libffn cannot run CUDA: "
                               "%s (libffn: %s)" % (fn, device, why, LIBRARY_PATH))
    try:
        return Context(accuracy=_defaults["accuracy"], bf16_parity=_defaults["bf16_parity"],
                       backend="cuda", device=device)
    except Error as e:  # a device that does not exist, too old, the runtime failed
        raise type(e)("%s: the operands are on cuda:%d: %s" % (fn, device, e.message))


def set_defaults(threads=None, accuracy=None, isa=None, bf16_parity=None):
    """Changes the options of the per-thread default contexts (every thread's, from its next
    call on). Returns the previous defaults as a dict."""
    new = dict(_defaults)
    for k, v in (("threads", threads), ("accuracy", accuracy), ("isa", isa),
                 ("bf16_parity", bf16_parity)):
        if v is not None:
            new[k] = v
    Context(**new).close()  # validates: raises on a bad value or an ISA the CPU lacks
    old = dict(_defaults)
    _defaults.update(new)
    _defaults_gen[0] += 1
    return old


def get_defaults():
    return dict(_defaults)


def _resolve(ctx):
    if ctx is None:
        return get_context()
    if not isinstance(ctx, Context):
        raise InvalidArgumentError("ctx=%r is not an ffn.Context" % (ctx,))
    return ctx


__all__ = ["Context", "get_context", "set_defaults", "get_defaults", "backend_available",
           "Error"]
