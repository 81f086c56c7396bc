# _ops.py — the elementwise entry points on arrays and tensors: ffn.act, act_backward, glu,
# glu_backward, gate_up_split, convert. Each builds ffn_tensor views of its operands (_views.py),
# calls the library once, and raises the status's ffn.Error with the library's message. Nothing
# is computed in Python; nothing is written before the library has accepted every view.
import ctypes
import struct
import sys

from . import _lib
from . import _views
from ._context import (LIB, NULL_GUARD, Context, _defaults_gen, _tls, context_for,
                       host_context)
from ._errors import Error, InvalidArgumentError
from ._views import (F16, F32, check_writeable, copy_back, device_of, empty_like, operand,
                     parse_dtype, plan, same_device)

_byref = ctypes.byref

# Names accepted for an activation: the canonical ones (ffn_act_name), the gated combines'
# (ffn_glu_name: "swiglu" means silu), and the common framework spellings. "gelu" is the erf GeLU,
# as in torch.nn.functional.gelu and Hugging Face's ACT2FN.
ACT_ALIASES = {"gelu": "gelu_erf", "gelu_new": "gelu_tanh", "gelu_pytorch_tanh": "gelu_tanh",
               "gelu_fast": "gelu_tanh", "gelu_accurate": "gelu_tanh", "swish": "silu"}
for _i, _g in enumerate(_lib.GLU_NAMES):
    ACT_ALIASES[_g] = _lib.ACT_NAMES[_i]


def act_index(fn, act):
    if isinstance(act, int) and 0 <= act < len(_lib.ACT_NAMES):
        return act
    if isinstance(act, str):
        key = act.lower()
        key = ACT_ALIASES.get(key, key)
        if key in _lib.ACT:
            return _lib.ACT[key]
    raise InvalidArgumentError("%s: act=%r is not an activation; expected one of %s (or %s)" % (
        fn, act, ", ".join(_lib.ACT_NAMES), ", ".join(sorted(ACT_ALIASES))))


def _needs_autograd(*objs):
    t = sys.modules.get("torch")
    if t is None:
        return False
    T = t.Tensor
    for o in objs:
        if isinstance(o, T) and o.requires_grad:
            return t.is_grad_enabled()
    return False


def _no_autograd_out(fn, *objs):
    if _needs_autograd(*objs):
        raise InvalidArgumentError(
            "%s: out= with tensors that require grad would not be recorded by autograd; call it "
            "without out= (differentiable through ffn's backward kernels) or under "
            "torch.no_grad()" % fn)


def _is_bits(obj):
    dt = getattr(obj, "dtype", None)
    return str(dt) in ("uint16", "int16", "torch.int16")


def _out_operand(fn, name, obj, dt, odt):
    # An output's dtype: out_dtype when given, else dtype= for a uint16/int16 bits array.
    want = odt if odt is not None else (dt if dt is not None and _is_bits(obj) else None)
    op = operand(fn, name, obj, want)
    check_writeable(fn, op)
    return op


_increment_version = []


def _version_hook():
    """torch.autograd.graph.increment_version (torch >= 2.1), to tell autograd that a tensor
    was written through its pointer; older torch has no public hook (None)."""
    if not _increment_version:
        t = sys.modules.get("torch")
        g = getattr(getattr(t, "autograd", None), "graph", None)
        _increment_version.append(getattr(g, "increment_version", None))
    return _increment_version[0] is not None


def _on(fn, ctx, ops):
    """(context, stream guard) of a call on ops: they must lie on one device; the context is
    ctx (checked against that device) or the calling thread's for it."""
    dev = same_device(fn, ops)
    c = context_for(fn, ctx, dev)
    return c, (NULL_GUARD if dev is None else c.stream_guard())


def context_of(fn, ctx, named):
    """The context of a call on the tensors of `named` ((name, tensor) pairs; None entries
    skipped), as _on would pick it: for the autograd functions, whose backward must run where
    the forward did."""
    dev = False
    for n, t in named:
        if t is not None:
            d = device_of(fn, n, t)
            if dev is False:
                dev = d
            elif d != dev:
                break
    else:
        return host_context() if ctx is None and dev is None else context_for(fn, ctx, dev)
    devs = [(n, device_of(fn, n, t)) for n, t in named if t is not None]
    raise InvalidArgumentError(
        "%s: %s; the operands of one call must lie on one device (move them with "
        ".to(device)): ffn copies nothing between devices" % (
            fn, ", ".join("%s is on %s" % (n, "cpu" if d is None else "cuda:%d" % d)
                          for n, d in devs)))


def _describe(ops):
    return ", ".join("%s %s %s" % (op.name, tuple(op.shape), _lib.DTYPE_NAMES[op.dtype])
                     for op in ops)


def _run(fn, ctx, cfn, act, outs, ins, copy):
    """Plans one split for outs + ins, calls cfn(ctx, act, *views), copies back outputs that
    were computed into copies. Returns nothing; raises ffn.Error."""
    allops = outs + ins
    same_device(fn, allops)
    views, used = plan(fn, allops, copy)
    try:
        # ctypes passes a Structure by reference where the prototype says POINTER(Tensor).
        if act is None:
            ctx.call(cfn, *views)
        else:
            ctx.call(cfn, act, *views)
    except Error as e:
        # The library's message first, then the operands as Python sees them.
        e.library_message = e.message
        e.message = "%s [%s: %s]" % (e.message, fn, _describe(allops))
        e.args = (e.message,)
        raise
    if copy:
        for op, u in zip(outs, used):
            if u is not op:
                copy_back(op.obj, u.obj)
    if outs[0].kind == "torch" and _version_hook():
        for op in outs:
            if op.kind == "torch":
                try:
                    _increment_version[0](op.obj)
                except RuntimeError:  # inference tensors have no version counter
                    pass


# --- the common case in one pass ------------------------------------------------------------------
# Most calls pass dense operands of one shape, float32/bfloat16/float16, on one device, without
# dtype=/out_dtype= and with the default context or ctx=: then every view is one row of n
# elements (plan's fast path) and the call needs only the reads below. _fast tries that; where
# anything differs (a layout, a dtype, a device, a tensor that requires grad, a read-only or empty
# array, an object of another type) it returns None before anything was called or written, and
# the general path redoes every check and raises its messages. Shapes, aliasing and overlap are
# the library's to check (it does, for both paths).


class _Never:
    pass


_TT = _ND = _Never            # torch.Tensor and numpy.ndarray, once imported (_fast_types)
_STRIDED = _NF32 = _NF16 = _INCREMENT = None
_TD = _views._torch_dtypes    # torch dtype -> ffn dtype (filled by the general path)
_from_buffer = ctypes.c_char.from_buffer
_addressof = ctypes.addressof
# The names act_index accepts as they are spelled (other spellings go through act_index).
_ACT_STR = dict(_lib.ACT)
_ACT_STR.update((k, _lib.ACT[v]) for k, v in ACT_ALIASES.items())


# A view as struct packs it: the bytes of struct ffn_tensor (native alignment: the C layout, as
# the ctypes mirror), passed to entry points whose view parameters are declared char *: ctypes
# hands over the bytes object's own buffer (the library reads views through const pointers),
# which costs less than building a ctypes Structure and converting it to a pointer. None where the
# layouts differ (the fast path is then off).
_PK = None
if struct.calcsize("@Piqqq") == ctypes.sizeof(_lib.Tensor) and [
        getattr(_lib.Tensor, f).offset for f in ("data", "dtype", "rows", "cols", "row_stride")
] == [struct.calcsize(f) - struct.calcsize(f[-1]) for f in ("@P", "@Pi", "@Piq", "@Piqq",
                                                            "@Piqqq")]:
    _PK = struct.Struct("@Piqqq").pack


def _bytes_fn(name, nview):
    """LIB's `name` (ctx, act, nview views) with its views declared char *."""
    f = getattr(LIB, name)
    proto = ctypes.CFUNCTYPE(f.restype, ctypes.c_void_p, _lib.c_enum, *[ctypes.c_char_p] * nview)
    return proto(ctypes.cast(f, ctypes.c_void_p).value)


_BYTES_FN = {n: _bytes_fn(n, k) for n, k in (
    ("ffn_act_forward", 2), ("ffn_act_backward", 3), ("ffn_glu_forward", 3),
    ("ffn_glu_backward", 5))}


def _fast_types():
    """Looks the array types up once numpy / torch are imported; True when one was new."""
    global _TT, _ND, _STRIDED, _NF32, _NF16, _INCREMENT
    found = False
    t = sys.modules.get("torch")
    if t is not None and _TT is _Never:
        _TT, _STRIDED, found = t.Tensor, t.strided, True
        _views._dtype_tables()
        _INCREMENT = _increment_version[0] if _version_hook() else None
    np = sys.modules.get("numpy")
    if np is not None and _ND is _Never:
        _ND, _NF32, _NF16, found = np.ndarray, np.dtype(np.float32), np.dtype(np.float16), True
    return found


def _fast_torch(objs, args):
    """Appends the packed one-row view (pointer, dtype, 1, n, n) of each tensor to args, for dense
    torch tensors of one shape and device that do not require grad. Returns (device, shape), or
    None: not the common case."""
    shape = dev = n = None
    for t in objs:
        if (not isinstance(t, _TT) or t.requires_grad or t.layout is not _STRIDED
                or not t.is_contiguous()):
            return None
        d = _TD.get(t.dtype)
        if d is None:
            return None
        if t.is_cpu:
            dv = None
        elif t.is_cuda:
            dv = t.get_device()
        else:
            return None
        if shape is None:
            shape, dev, n = t.shape, dv, t.numel()
        elif dv != dev or t.shape != shape:
            return None
        args.append(_PK(t.data_ptr(), d, 1, n, n))
    return dev, shape


def _fast_numpy(objs, args, nout):
    """As _fast_torch for C-contiguous float32/float16 arrays of one non-empty shape, the first
    nout writeable. Returns (None, shape) or None."""
    shape = n = None
    for a in objs:
        if type(a) is not _ND:
            return None
        dt = a.dtype
        if dt is _NF32:
            d = F32
        elif dt is _NF16:
            d = F16
        else:
            return None
        f = a.flags
        if shape is None:
            shape, n = a.shape, a.size
            if not n:
                return None
        elif a.shape != shape:
            return None
        if not f.c_contiguous:
            return None
        if f.writeable:
            # The buffer's address: a fraction of __array_interface__'s cost (a dict per call).
            args.append(_PK(_addressof(_from_buffer(a)), d, 1, n, n))
        elif len(args) < nout:
            return None
        else:
            args.append(_PK(a.__array_interface__["data"][0], d, 1, n, n))
    return None, shape


def _fast(fn, vfn, a, ctx, objs, nout, names):
    """Runs vfn (a _BYTES_FN entry point) on ctx and a, with the views of objs (nout outputs,
    then the inputs), when every operand is the common case (see above); outputs that are None
    are allocated like the first input. Returns the operands with the outputs first (a list),
    or None: nothing was done, take the general path."""
    x = objs[nout]
    if isinstance(x, _TT):
        torch = True
    elif type(x) is _ND:
        torch = False
    else:
        if _PK is not None and _fast_types():
            return _fast(fn, vfn, a, ctx, objs, nout, names)
        return None
    args = []
    alloc = objs[0] is None or (nout == 2 and objs[1] is None)
    if not alloc:
        # Outputs given (out=): one pass over all operands.
        info = _fast_torch(objs, args) if torch else _fast_numpy(objs, args, nout)
    else:
        info = _fast_torch(objs[nout:], args) if torch else _fast_numpy(objs[nout:], args, 0)
    if info is None:
        return None
    dev = info[0]
    # The context as the general path picks it (and its errors, raised at the same point).
    if ctx is None:
        if dev is None:
            h = getattr(_tls, "host", None)
            c = h[0] if h is not None and h[1] == _defaults_gen[0] else host_context()
        else:
            c = context_for(fn, ctx, dev)
    elif type(ctx) is Context and ctx._device == dev:
        c = ctx
    else:
        c = context_for(fn, ctx, dev)
    if alloc:
        shape = info[1]
        with (NULL_GUARD if dev is None else c.stream_guard()):  # allocations on its stream
            if torch:
                # As empty_like: a dense tensor of x's dtype and device (new_empty: the same, for
                # a plain tensor, at two thirds of the cost).
                t = sys.modules["torch"]
                outs = [o if o is not None else x.new_empty(shape) if type(x) is _TT else
                        t.empty(shape, dtype=x.dtype, device=x.device) for o in objs[:nout]]
            else:
                np = sys.modules["numpy"]
                outs = [o if o is not None else np.empty(shape, dtype=x.dtype)
                        for o in objs[:nout]]
        oargs = []
        if (_fast_torch(outs, oargs) if torch else _fast_numpy(outs, oargs, nout)) != info:
            return None
        args = oargs + args
        objs = outs + objs[nout:]
    try:
        if dev is None and not c._follow:
            # Context.call inlined: host memory, no stream to follow.
            lock = c._lock
            lock.acquire()
            try:
                st = vfn(c._handle, a, *args)
                if st:
                    c._check(st)
            finally:
                lock.release()
        else:
            with (NULL_GUARD if dev is None else c.stream_guard()):
                c.call(vfn, a, *args)
    except Error as e:
        e.library_message = e.message
        e.message = "%s [%s: %s]" % (e.message, fn, _describe(
            [operand(fn, nm, o) for nm, o in zip(names, objs)]))
        e.args = (e.message,)
        raise
    if torch and _INCREMENT is not None:
        for o in objs[:nout]:
            try:
                _INCREMENT(o)
            except RuntimeError:  # inference tensors have no version counter
                pass
    return objs


_NAMES_ACT = ("y", "x")
_NAMES_ACT_BWD = ("dx", "x", "dy")
_NAMES_GLU = ("h", "gate", "up")
_NAMES_GLU_BWD = ("dgate", "dup", "gate", "up", "dh")


def act(x, act, out=None, *, ctx=None, copy=False, dtype=None, out_dtype=None):
    """y = act(x), elementwise. Returns y (`out` when given; out may be x: in place).

    act        "gelu_tanh", "gelu_erf", "silu", "relu", "sigmoid", "identity", "quick_gelu"
               (aliases: "gelu" = gelu_erf, "gelu_new" / "gelu_pytorch_tanh" = gelu_tanh, "swish")
    copy       copy operands whose strides no 2-D view can express (else they are refused)
    dtype      "bf16" / "f16" when x holds those bits in a uint16/int16 array
    out_dtype  dtype of a new output (default x's); e.g. bf16 in, f32 out
    A torch tensor that requires grad (grad mode on, no out=) goes through ffn.torch.act.
    """
    fn = "ffn.act"
    a = _ACT_STR.get(act) if type(act) is str else None
    if a is None:
        a = act_index(fn, act)
    if dtype is None and out_dtype is None:
        r = _fast(fn, _BYTES_FN["ffn_act_forward"], a, ctx, [out, x], 1, _NAMES_ACT)
        if r is not None:
            return r[0]
    if out is None and _needs_autograd(x):
        from . import torch as ft
        return ft.act(x, a, ctx=ctx)
    if out is not None:
        _no_autograd_out(fn, x, out)
    dt, odt = parse_dtype(dtype), parse_dtype(out_dtype, "out_dtype")
    ox = operand(fn, "x", x, dt)
    c, guard = _on(fn, ctx, [ox])
    with guard:
        if out is None:
            out = empty_like(fn, ox, ox.shape, odt if odt is not None else ox.dtype)
        oy = _out_operand(fn, "y", out, dt, odt)
        _run(fn, c, LIB.ffn_act_forward, a, [oy], [ox], copy)
    return out


def act_backward(x, dy, act, out=None, *, ctx=None, copy=False, dtype=None, out_dtype=None):
    """dx = dy * act'(x), elementwise. Returns dx (`out` when given; it may be x or dy)."""
    fn = "ffn.act_backward"
    a = _ACT_STR.get(act) if type(act) is str else None
    if a is None:
        a = act_index(fn, act)
    if dtype is None and out_dtype is None:
        r = _fast(fn, _BYTES_FN["ffn_act_backward"], a, ctx, [out, x, dy], 1, _NAMES_ACT_BWD)
        if r is not None:
            return r[0]
    if out is not None:
        _no_autograd_out(fn, out)
    dt, odt = parse_dtype(dtype), parse_dtype(out_dtype, "out_dtype")
    ox, ody = operand(fn, "x", x, dt), operand(fn, "dy", dy, dt)
    c, guard = _on(fn, ctx, [ox, ody])
    with guard:
        if out is None:
            out = empty_like(fn, ox, ox.shape, odt if odt is not None else ox.dtype)
        odx = _out_operand(fn, "dx", out, dt, odt)
        _run(fn, c, LIB.ffn_act_backward, a, [odx], [ox, ody], copy)
    return out


def glu(gate, up, act, out=None, *, ctx=None, copy=False, dtype=None, out_dtype=None):
    """h = act(gate) * up, elementwise (SwiGLU with "silu", GeGLU with a GeLU, ReGLU with
    "relu", GLU with "sigmoid", Bilinear with "identity"). gate and up are not interchangeable.
    Returns h (`out` when given; it may be gate or up: in place)."""
    fn = "ffn.glu"
    a = _ACT_STR.get(act) if type(act) is str else None
    if a is None:
        a = act_index(fn, act)
    if dtype is None and out_dtype is None:
        r = _fast(fn, _BYTES_FN["ffn_glu_forward"], a, ctx, [out, gate, up], 1, _NAMES_GLU)
        if r is not None:
            return r[0]
    if out is None and _needs_autograd(gate, up):
        from . import torch as ft
        return ft.glu(gate, up, a, ctx=ctx)
    if out is not None:
        _no_autograd_out(fn, gate, up, out)
    dt, odt = parse_dtype(dtype), parse_dtype(out_dtype, "out_dtype")
    og, ou = operand(fn, "gate", gate, dt), operand(fn, "up", up, dt)
    c, guard = _on(fn, ctx, [og, ou])
    with guard:
        if out is None:
            out = empty_like(fn, og, og.shape, odt if odt is not None else og.dtype)
        oh = _out_operand(fn, "h", out, dt, odt)
        _run(fn, c, LIB.ffn_glu_forward, a, [oh], [og, ou], copy)
    return out


def glu_backward(gate, up, dh, act, out=None, *, ctx=None, copy=False, dtype=None,
                 out_dtype=None):
    """dgate = dh * up * act'(gate), dup = dh * act(gate). Returns (dgate, dup); out=(dgate, dup)
    writes there (either may be None: allocated); out=(gate, up) overwrites the inputs."""
    fn = "ffn.glu_backward"
    a = _ACT_STR.get(act) if type(act) is str else None
    if a is None:
        a = act_index(fn, act)
    if dtype is None and out_dtype is None and (out is None or (
            type(out) in (tuple, list) and len(out) == 2)):
        r = _fast(fn, _BYTES_FN["ffn_glu_backward"], a, ctx,
                  [None, None, gate, up, dh] if out is None else [out[0], out[1], gate, up, dh],
                  2, _NAMES_GLU_BWD)
        if r is not None:
            return r[0], r[1]
    dt, odt = parse_dtype(dtype), parse_dtype(out_dtype, "out_dtype")
    og, ou = operand(fn, "gate", gate, dt), operand(fn, "up", up, dt)
    odh = operand(fn, "dh", dh, dt)
    if out is None:
        out = (None, None)
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise InvalidArgumentError("%s: out must be a pair (dgate, dup)" % fn)
    c, guard = _on(fn, ctx, [og, ou, odh])
    with guard:
        outs = list(out)
        for i in range(2):
            if outs[i] is None:
                outs[i] = empty_like(fn, og, og.shape, odt if odt is not None else og.dtype)
            else:
                _no_autograd_out(fn, outs[i])
        odg = _out_operand(fn, "dgate", outs[0], dt, odt)
        odu = _out_operand(fn, "dup", outs[1], dt, odt)
        _run(fn, c, LIB.ffn_glu_backward, a, [odg, odu], [og, ou, odh], copy)
    return outs[0], outs[1]


def gate_up_split(fused, order="gate_first", *, ctx=None, dtype=None):
    """Splits a fused [..., 2m] gate/up buffer into its (gate, up) halves along the last
    dimension, as views of `fused` (no copy). order: "gate_first" ([gate | up], Phi-3's
    gate_up_proj, vLLM) or "up_first". An odd last dimension raises the library's message."""
    fn = "ffn.gate_up_split"
    if order not in _lib.GATE_UP_ORDER:
        raise InvalidArgumentError("%s: order=%r; expected 'gate_first' or 'up_first'" % (
            fn, order))
    of = operand(fn, "fused", fused, parse_dtype(dtype))
    c, _ = _on(fn, ctx, [of])
    if len(of.shape) == 0:
        raise InvalidArgumentError("%s: fused is a scalar; it needs a last dimension of 2m" % fn)
    (vf,), _ = plan(fn, [of], copy=False, last_dim=True)
    g, u = _lib.Tensor(), _lib.Tensor()
    try:
        c.call(LIB.ffn_gate_up_split, _byref(vf), _lib.GATE_UP_ORDER[order], _byref(g),
               _byref(u))
    except Error as e:
        e.library_message = e.message
        e.message = "%s [%s: %s]" % (e.message, fn, _describe([of]))
        e.args = (e.message,)
        raise
    es = _lib.DTYPE_SIZE[of.dtype]
    halves = []
    for t in (g, u):
        c0 = ((t.data or 0) - (vf.data or 0)) // es if vf.rows and vf.cols else 0
        halves.append(fused[..., c0:c0 + t.cols])
    return halves[0], halves[1]


def convert(x, dtype, out=None, *, ctx=None, copy=False, in_dtype=None):
    """x converted to `dtype` ("f32", "bf16", "f16"), rounding to nearest even (NaN stays NaN).
    in_dtype names the bits of a uint16/int16 x."""
    fn = "ffn.convert"
    odt = parse_dtype(dtype)
    if odt is None:
        raise InvalidArgumentError("%s: dtype is required" % fn)
    ox = operand(fn, "src", x, parse_dtype(in_dtype, "in_dtype"))
    c, guard = _on(fn, ctx, [ox])
    with guard:
        if out is None:
            out = empty_like(fn, ox, ox.shape, odt)
        od = _out_operand(fn, "dst", out, None, odt)
        _run(fn, c, LIB.ffn_tensor_convert, None, [od], [ox], copy)
    return out


__all__ = ["act", "act_backward", "glu", "glu_backward", "gate_up_split", "convert"]
