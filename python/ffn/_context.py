# _context.py — the loaded library and ffn.Context: a libffn context (kernels chosen for the
# CPU, thread count, accuracy tier, last error) owned by a Python object.
#
# Every function of the package takes `ctx=`; without it, the calling thread's current context
# is used: the innermost `with ctx:` block, else a per-thread default context made on first use
# from the module-level defaults (ffn.set_defaults). A libffn context must not be used by two
# threads at once, so each Context also holds a lock, taken around each library call.
import ctypes
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

# Backends a context can run on (enum ffn_backend once the header has it). The CUDA backend will
# add "cuda": 1; Context then fills opts.backend / device / stream and the array adapters pass
# device pointers of CUDA tensors on the current stream (see _views.py).
BACKENDS = {"cpu": 0}


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
    backend      "cpu" (the only backend of this libffn; "cuda" is reserved for the CUDA one)

    Use as `with ctx:` to make it the calling thread's current context.
    """

    def __init__(self, threads=0, accuracy="default", isa="auto", bf16_parity=False, log=None,
                 backend="cpu", device=None, stream=None):
        self._handle = None
        if backend not in BACKENDS:
            raise UnsupportedError(
                "ffn.Context: backend=%r is not in this libffn (backends: %s); the CUDA backend "
                "will take backend='cuda', device=<index>, stream=<cudaStream_t or None for "
                "torch's current stream>" % (backend, ", ".join(BACKENDS)))
        if device is not None or stream is not None:
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

    # --- calls ---

    def call(self, fn, *args):
        """fn(ctx, *args) under the lock; raises the status's ffn.Error with the message."""
        with self._lock:
            st = fn(self._handle, *args)
            if st != 0:
                raise error_for(st, LIB.ffn_ctx_last_error(self._handle).decode("utf-8",
                                                                                 "replace"))

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
        # is a new libffn context with the same settings (its log callback is not kept).
        return (_remake, (dict(self._init, threads=self.threads, accuracy=self.accuracy),))

    def __enter__(self):
        stack = getattr(_tls, "stack", None)
        if stack is None:
            stack = _tls.stack = []
        stack.append(self)
        return self

    def __exit__(self, *exc):
        _tls.stack.pop()
        return False

    def __repr__(self):
        if not self._handle:
            return "<ffn.Context closed>"
        return "<ffn.Context isa=%s threads=%d accuracy=%s bf16_parity=%s>" % (
            self.isa, self.threads, self.accuracy, self.bf16_parity)


def _remake(kw):
    return Context(**kw)


# --- the calling thread's context -----------------------------------------------------------------

_defaults = {"threads": 0, "accuracy": "default", "isa": "auto", "bf16_parity": False}
_defaults_gen = [0]


def get_context():
    """The calling thread's current context: the innermost `with ctx:`, else this thread's
    default context (made on first use from the defaults of ffn.set_defaults)."""
    stack = getattr(_tls, "stack", None)
    if stack:
        return stack[-1]
    c = getattr(_tls, "default", None)
    if c is None or _tls.default_gen != _defaults_gen[0]:
        c = Context(**_defaults)
        _tls.default = c
        _tls.default_gen = _defaults_gen[0]
    return c


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


__all__ = ["Context", "get_context", "set_defaults", "get_defaults", "Error"]
