# _views.py — NumPy arrays and torch tensors as ffn_tensor views (pointer, dtype, rows, cols,
# row_stride: 2-D row-major, elements of a row contiguous).
#
# An N-d array is seen as [rows, cols] by splitting its dimensions (size-1 ones dropped) into a
# leading group that folds into one row stride and a trailing group that is contiguous. All the
# operands of one call get the same split, the most contiguous that every one of them allows, so
# a fused [T, 2m] buffer's gate half ([T, m], row stride 2m) pairs with a dense [T, m] output.
# An operand no split can express (a transposed matrix, a negative or zero stride) is refused
# with a message, or, with copy=True, replaced by a contiguous copy (an output is then computed
# into the copy and copied back after the call succeeded).
#
# dtypes: float32, float16 and bfloat16. NumPy has no bfloat16: an ml_dtypes.bfloat16 array is
# taken as bf16, and a uint16 / int16 array holds bf16 or f16 bits when the call says which with
# dtype="bf16" / "f16". Torch tensors: torch.float32 / bfloat16 / float16, on the CPU or on a CUDA
# device (their device pointers pass as they are; Operand.device is the CUDA ordinal, None for
# host memory, and every operand of a call must agree: see same_device).
import sys

from . import _lib
from ._errors import InvalidArgumentError, UnsupportedError

F32, BF16, F16 = _lib.DTYPE_F32, _lib.DTYPE_BF16, _lib.DTYPE_F16

_DTYPE_ALIASES = {"f32": F32, "float32": F32, "float": F32, "bf16": BF16, "bfloat16": BF16,
                  "f16": F16, "float16": F16, "half": F16}


def parse_dtype(d, what="dtype"):
    """An ffn dtype from "f32"/"bf16"/"f16" (or the long names, a numpy or torch dtype);
    None stays None."""
    if d is None:
        return None
    if isinstance(d, int) and d in (F32, BF16, F16):
        return d
    name = str(d).lower()
    if name.startswith("torch."):
        name = name[6:]
    name = {"<class 'numpy.float32'>": "float32", "<class 'numpy.float16'>": "float16"}.get(
        name, name)
    if name in _DTYPE_ALIASES:
        return _DTYPE_ALIASES[name]
    raise InvalidArgumentError("%s=%r is not one of f32, bf16, f16" % (what, d))


def _np():
    return sys.modules.get("numpy")


def _torch():
    return sys.modules.get("torch")


def _ml_bf16():
    m = sys.modules.get("ml_dtypes")
    if m is None:
        try:
            import ml_dtypes as m  # optional: a NumPy bfloat16 dtype
        except ImportError:
            return None
    return m.bfloat16


class Operand:
    """One array/tensor argument: where it lives and how it is laid out. `strides` (in elements)
    are computed only for operands that are not C-contiguous (`contig`)."""

    __slots__ = ("obj", "name", "kind", "shape", "_strides", "ptr", "dtype", "bits", "writeable",
                 "contig", "numel", "device")

    def view(self, rows, cols, row_stride):
        return _lib.Tensor(self.ptr, self.dtype, rows, cols, row_stride)

    @property
    def strides(self):
        if self._strides is False:
            if self.kind == "torch":
                self._strides = tuple(self.obj.stride())
            else:
                isz = self.obj.dtype.itemsize
                bs = self.obj.strides
                # Strides that are not whole elements: no view can express them.
                self._strides = None if any(v % isz for v in bs) else tuple(v // isz for v in bs)
        return self._strides


_np_dtypes = {}
_torch_dtypes = {}


def _dtype_tables():
    np, t = _np(), _torch()
    if np is not None and not _np_dtypes:
        _np_dtypes.update({np.dtype(np.float32): F32, np.dtype(np.float16): F16})
    if t is not None and not _torch_dtypes:
        _torch_dtypes.update({t.float32: F32, t.bfloat16: BF16, t.float16: F16})


def operand(fn, name, obj, dtype=None):
    """Describes `obj` (numpy.ndarray or torch.Tensor). dtype: the ffn dtype the call was told
    for uint16/int16 bit arrays (None: from the array's own dtype)."""
    op = Operand()
    op.obj, op.name, op._strides = obj, name, False
    t = _torch()
    if t is not None and isinstance(obj, t.Tensor):
        op.kind = "torch"
        if not _torch_dtypes:
            _dtype_tables()
        if obj.layout != t.strided:
            raise InvalidArgumentError("%s: %s is a %s tensor; ffn takes strided (dense) tensors"
                                       % (fn, name, obj.layout))
        if obj.is_cuda:
            op.device = obj.get_device()
        elif obj.is_cpu:
            op.device = None
        else:
            raise UnsupportedError("%s: %s is on %s; ffn runs on the CPU and on CUDA devices: move "
                                   "it with .cpu() or .cuda()" % (fn, name, obj.device))
        td = obj.dtype
        d = _torch_dtypes.get(td)
        if d is not None:
            op.dtype, op.bits = d, False
        elif td == t.int16 and dtype in (BF16, F16):
            op.dtype, op.bits = dtype, True
        else:
            raise InvalidArgumentError(
                "%s: %s is %s; ffn computes on torch.float32, torch.bfloat16 and torch.float16 "
                "(convert with .float())" % (fn, name, td))
        op.shape = obj.shape  # torch.Size: a tuple
        op.ptr = obj.data_ptr()
        op.writeable = True
        op.contig = obj.is_contiguous()
        op.numel = obj.numel()
    else:
        np = _np()
        if np is None or not isinstance(obj, np.ndarray):
            raise InvalidArgumentError("%s: %s is a %s; expected a numpy.ndarray or a torch.Tensor"
                                       % (fn, name, type(obj).__name__))
        op.kind = "numpy"
        op.device = None
        if not _np_dtypes:
            _dtype_tables()
        nd = obj.dtype
        d = _np_dtypes.get(nd)
        if d is not None:
            op.dtype, op.bits = d, False
        elif nd.name == "bfloat16":
            op.dtype, op.bits = BF16, False
        elif nd in (np.uint16, np.int16) and dtype in (BF16, F16):
            op.dtype, op.bits = dtype, True
        elif nd in (np.uint16, np.int16):
            raise InvalidArgumentError(
                "%s: %s is %s; to pass bf16 or f16 bits, say which with dtype='bf16' or "
                "dtype='f16' (or use an ml_dtypes.bfloat16 array)" % (fn, name, nd))
        else:
            raise InvalidArgumentError(
                "%s: %s is %s; ffn computes on float32, float16 and bfloat16 (ml_dtypes, or uint16 "
                "bits with dtype='bf16'): convert with .astype(numpy.float32)" % (fn, name, nd))
        op.shape = obj.shape
        op.ptr = obj.__array_interface__["data"][0]
        flags = obj.flags
        op.writeable = flags.writeable
        op.contig = flags.c_contiguous
        op.numel = obj.size
    if dtype is not None and dtype != op.dtype:
        raise InvalidArgumentError("%s: %s is %s but dtype=%s was given" % (
            fn, name, _lib.DTYPE_NAMES[op.dtype], _lib.DTYPE_NAMES[dtype]))
    return op


def device_of(fn, name, obj):
    """Where a torch tensor or NumPy array lies: None (host memory) or a CUDA ordinal."""
    t = _torch()
    if t is not None and isinstance(obj, t.Tensor):
        if obj.is_cuda:
            return obj.get_device()
        if not obj.is_cpu:
            raise UnsupportedError("%s: %s is on %s; ffn runs on the CPU and on CUDA devices: "
                                   "move it with .cpu() or .cuda()" % (fn, name, obj.device))
    return None


def _where(op):
    if op.device is not None:
        return "cuda:%d" % op.device
    return "cpu" if op.kind == "torch" else "host memory (NumPy)"


def same_device(fn, ops):
    """The device every operand lies on (None: host memory); raises when they differ."""
    dev = ops[0].device
    for op in ops:
        if op.device != dev:
            raise InvalidArgumentError(
                "%s: %s; the operands of one call must lie on one device (move them with "
                ".to(device)): ffn copies nothing between devices" % (
                    fn, ", ".join("%s is on %s" % (o.name, _where(o)) for o in ops)))
    return dev


# --- layouts -------------------------------------------------------------------------------------

def _fold(dims):
    """(size, stride) dims that fold into one: returns (count, stride) or None."""
    if not dims:
        return 1, 0
    n, s = dims[-1]
    for m, t in reversed(dims[:-1]):
        if t != s * n:
            return None
        n *= m
    return n, dims[-1][1]


def _split_view(op, k):
    """[rows, cols, row_stride] with the last k non-unit dims as columns, or None."""
    if op.strides is None:
        return None
    if 0 in op.shape:
        return 0, 0, 0
    dims = [(n, s) for n, s in zip(op.shape, op.strides) if n != 1]
    if any(s <= 0 for _, s in dims):
        return None  # broadcast (0) or reversed (< 0) dimensions
    nd = len(dims)
    if k > nd:
        return None
    lead, tail = dims[:nd - k], dims[nd - k:]
    if tail:
        if tail[-1][1] != 1:
            return None
        ft = _fold(tail)
        if ft is None:
            return None
        cols = ft[0]
    else:
        cols = 1
    fl = _fold(lead)
    if fl is None:
        return None
    rows, rs = fl
    if not lead:
        rs = cols
    return rows, cols, rs


def _prod(dims):
    p = 1
    for n in dims:
        p *= n
    return p


def _nonunit(op):
    return sum(1 for n in op.shape if n != 1)


def _last_dim_view(op):
    """[rows, cols, row_stride] with cols = the last dimension exactly (gate/up split, blocks)."""
    if op.strides is None:
        return None
    shape, strides = op.shape, op.strides
    if len(shape) == 0:
        return 1, 1, 1
    if 0 in shape:
        return (0 if shape[-1] else 1), shape[-1], shape[-1]
    cols = shape[-1]
    if cols > 1 and strides[-1] != 1:
        return None
    lead = [(n, s) for n, s in zip(shape[:-1], strides[:-1]) if n != 1]
    if any(s <= 0 for _, s in lead):
        return None
    fl = _fold(lead)
    if fl is None:
        return None
    rows, rs = fl
    return rows, cols, (rs if lead else cols)


def _refuse(fn, bad):
    parts = ["%s (shape %s, strides %s in elements)" % (
        op.name, tuple(op.shape), op.strides if op.strides is not None else "not whole elements")
        for op in bad]
    return InvalidArgumentError(
        "%s: %s cannot be passed as a 2-D row-major view (pointer, rows, cols, row_stride): its "
        "last dimension must have stride 1 and the others must fold into one positive row stride%s."
        " Pass copy=True to let ffn copy it, or make it contiguous" % (
            fn, " and ".join(parts), "" if len(bad) == 1 else ", with one split for all"))


def contiguous_copy(op):
    """A dense copy of op's array (same kind and dtype) as a new Operand."""
    obj = op.obj
    if op.kind == "torch":
        c = obj.contiguous()
        if c.data_ptr() == obj.data_ptr():
            c = obj.clone(memory_format=_torch().contiguous_format)
    else:
        c = _np().array(obj, order="C", copy=True)
    return operand("copy", op.name, c, op.dtype if op.bits else None)


def plan(fn, ops, copy=False, last_dim=False):
    """Views for ops (a list of Operand), one shared [rows, cols] split. Returns (views, ops),
    ops possibly with contiguous copies in place of the ones no split fits (copy=True)."""
    # Fast path: every operand dense and of one shape -> one long row.
    shape0 = ops[0].shape
    for op in ops:
        if not op.contig or op.shape != shape0:
            break
    else:
        n = ops[0].numel
        if not last_dim or len(shape0) < 2:
            return [_lib.Tensor(op.ptr, op.dtype, 1, n, n) for op in ops], ops
        c = shape0[-1]
        r = n // c if c else _prod(shape0[:-1])
        return [_lib.Tensor(op.ptr, op.dtype, r, c, c) for op in ops], ops
    ops = list(ops)
    if last_dim:
        views = [_last_dim_view(op) for op in ops]
        bad = [i for i, v in enumerate(views) if v is None]
        if bad:
            if not copy:
                raise _refuse(fn, [ops[i] for i in bad])
            for i in bad:
                ops[i] = contiguous_copy(ops[i])
                views[i] = _last_dim_view(ops[i])
        return [op.view(*v) for op, v in zip(ops, views)], ops
    shapes_agree = all(tuple(op.shape) == tuple(ops[0].shape) for op in ops)
    if not shapes_agree:
        # The library reports the shapes that disagree; in the arrays' own terms where the
        # last dimension can be the columns of every view, else each operand on its own.
        views = []
        lastdim = [_last_dim_view(op) for op in ops]
        for i, op in enumerate(ops):
            v = lastdim[i] if None not in lastdim else next(
                (_split_view(op, k) for k in range(_nonunit(op), -1, -1)
                 if _split_view(op, k) is not None), None)
            if v is None:
                if not copy:
                    raise _refuse(fn, [op])
                ops[i] = contiguous_copy(op)
                v = _split_view(ops[i], _nonunit(op))
            views.append(v)
        return [op.view(*v) for op, v in zip(ops, views)], ops
    nd = _nonunit(ops[0])
    while True:
        valid = [set(k for k in range(nd + 1) if _split_view(op, k) is not None) for op in ops]
        common = set.intersection(*valid) if valid else {nd}
        if common:
            k = max(common)
            return [op.view(*_split_view(op, k)) for op in ops], ops
        if not copy:
            raise _refuse(fn, [op for op, v in zip(ops, valid) if len(v) < nd + 1] or ops)
        # Copy the operand with the fewest possible splits (a copy fits all), then retry.
        i = min(range(len(ops)), key=lambda j: len(valid[j]))
        ops[i] = contiguous_copy(ops[i])


# --- outputs -------------------------------------------------------------------------------------

def empty_like(fn, like, shape, dtype):
    """A new output of `shape` and ffn `dtype`, of like's kind (numpy/torch) and device. bf16
    NumPy outputs are ml_dtypes.bfloat16 when the input was, else uint16 bits."""
    if like.kind == "torch":
        t = _torch()
        if like.bits and dtype == like.dtype:
            return t.empty(shape, dtype=t.int16, device=like.obj.device)
        td = {F32: t.float32, BF16: t.bfloat16, F16: t.float16}[dtype]
        return t.empty(shape, dtype=td, device=like.obj.device)
    np = _np()
    if like.bits and dtype == like.dtype:
        nd = like.obj.dtype  # bits in, bits out
    elif dtype == F32:
        nd = np.float32
    elif dtype == F16:
        nd = np.float16
    elif like.dtype == BF16 and not like.bits:
        nd = like.obj.dtype  # ml_dtypes.bfloat16
    else:
        nd = _ml_bf16() or np.uint16
    return np.empty(shape, dtype=nd)


def check_writeable(fn, op):
    if not op.writeable:
        raise InvalidArgumentError("%s: %s is read-only (numpy writeable=False)" % (fn, op.name))


def copy_back(dst, src):
    """dst[...] = src for two arrays/tensors of one kind (after a call into a contiguous copy)."""
    if hasattr(dst, "copy_"):
        dst.copy_(src)
    else:
        _np().copyto(dst, src)
