# ffn/torch.py — PyTorch integration: autograd functions for the activations and the gated
# combine (forward and backward through ffn's kernels), and nn.Modules over the library's FFN
# blocks (ffn_block_create / _forward / _backward) that take a Hugging Face MLP's weights where
# they lie.
#
#   act(x, "gelu_tanh"), glu(gate, up, "silu")        differentiable functions
#   Activation("silu"), GatedActivation("silu")       modules (GatedActivation takes a fused
#                                                     [..., 2m] input, like vLLM's SiluAndMul)
#   FFN, GatedFFN                                     the block modules (plain / gated)
#   from_hf_mlp(mlp)                                  a module sharing an HF MLP's Parameters
#   from_hf(model_dir, layer)                         a module from a checkpoint, read by libffn
#
# Weights: a block references f32 and bf16 weight matrices where they lie (no copy: an
# optimizer's in-place update is seen by the next call); f16 matrices and bf16/f16 biases are
# copied into f32 once, and the block is rebuilt when one of those changes (its version counter
# moves). Weight gradients come back through autograd
# in each weight's own shape, layout and dtype (a Phi-3 gate_up_proj [2m, d] gets a [2m, d] grad;
# a GPT-2 Conv1D [in, out] weight an [in, out] one; bf16 weights get bf16 gradients). Activations:
# the block takes f32 or bf16 x as it lies; other dtypes are converted (a copy) and y is returned
# in x's dtype.
#
# CUDA: the functions and modules take CUDA tensors as they lie (device pointers, on torch's
# current stream; see _context.py). The autograd functions pick their context in the forward
# (by the tensors' device) and run the backward on it, on the stream autograd gives the backward.
# The block modules pass CUDA weights and activations to ffn_block_* with a CUDA context; a
# libffn whose blocks do not run on CUDA says so (FFN_STATUS_UNSUPPORTED, its message).
import ctypes
import threading
import warnings

import torch
from torch import nn
from torch.autograd.function import once_differentiable

from . import _lib, _ops, _views
from ._context import LIB, context_for, device_name
from ._errors import InvalidArgumentError
from ._model import open_model

_byref = ctypes.byref
SLOTS = _lib.WEIGHT_SLOTS  # gate, up, gate_up, down, b_gate, b_up, b_gate_up, b_down
PARAM_NAMES = {"gate": "w_gate", "up": "w_up", "gate_up": "w_gate_up", "down": "w_down",
               "b_gate": "b_gate", "b_up": "b_up", "b_gate_up": "b_gate_up", "b_down": "b_down"}
_TORCH_DTYPE = {torch.float32: _lib.DTYPE_F32, torch.bfloat16: _lib.DTYPE_BF16,
                torch.float16: _lib.DTYPE_F16}


# --- elementwise autograd functions --------------------------------------------------------------

def _dense_grad(g):
    """An incoming gradient with a broadcast (stride-0) dimension, as autograd hands over the
    gradient of .sum() or .mean(), made dense here: copy=True would copy it anyway, and the dense
    copy takes the one-pass path of the ops instead of the layout planner."""
    if not g.is_contiguous() and 0 in g.stride():
        return g.contiguous()
    return g


class ActFunction(torch.autograd.Function):
    """y = act(x); backward dx = dy * act'(x), both through ffn's kernels."""

    @staticmethod
    def forward(ctx, x, act, fctx, copy):
        fctx = _ops.context_of("ffn.torch.act", fctx, [("x", x)])
        y = _ops.act(x.detach(), act, ctx=fctx, copy=copy)
        ctx.save_for_backward(x)
        ctx.act, ctx.fctx = act, fctx
        return y

    @staticmethod
    @once_differentiable
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        # dy comes from autograd in any layout (an expanded scalar after .sum()): copy if needed.
        dx = _ops.act_backward(x.detach(), _dense_grad(dy), ctx.act, ctx=ctx.fctx, copy=True)
        return dx, None, None, None


class GluFunction(torch.autograd.Function):
    """h = act(gate) * up; backward dgate = dh * up * act'(gate), dup = dh * act(gate)."""

    @staticmethod
    def forward(ctx, gate, up, act, fctx, copy):
        fctx = _ops.context_of("ffn.torch.glu", fctx, [("gate", gate), ("up", up)])
        h = _ops.glu(gate.detach(), up.detach(), act, ctx=fctx, copy=copy)
        ctx.save_for_backward(gate, up)
        ctx.act, ctx.fctx = act, fctx
        return h

    @staticmethod
    @once_differentiable
    def backward(ctx, dh):
        gate, up = ctx.saved_tensors
        dgate, dup = _ops.glu_backward(gate.detach(), up.detach(), _dense_grad(dh), ctx.act,
                                       ctx=ctx.fctx, copy=True)
        return dgate, dup, None, None, None


def act(x, act, *, ctx=None, copy=False):
    """Differentiable act(x) (see ffn.act for the names). copy: as in ffn.act."""
    return ActFunction.apply(x, _ops.act_index("ffn.torch.act", act), ctx, copy)


def glu(gate, up, act, *, ctx=None, copy=False):
    """Differentiable act(gate) * up."""
    return GluFunction.apply(gate, up, _ops.act_index("ffn.torch.glu", act), ctx, copy)


class Activation(nn.Module):
    """act(x) as a module (a drop-in for nn.SiLU, nn.GELU(approximate="tanh"), ...)."""

    def __init__(self, act, ctx=None):
        super().__init__()
        self.act = _lib.ACT_NAMES[_ops.act_index("ffn.torch.Activation", act)]
        self.ctx = ctx

    def forward(self, x):
        return ActFunction.apply(x, _lib.ACT[self.act], self.ctx, True)

    def extra_repr(self):
        return self.act


class GatedActivation(nn.Module):
    """act(gate) * up from a fused [..., 2m] input ([gate | up] by default; order="up_first"
    for [up | gate]), without splitting it into copies."""

    def __init__(self, act, order="gate_first", ctx=None):
        super().__init__()
        self.act = _lib.ACT_NAMES[_ops.act_index("ffn.torch.GatedActivation", act)]
        self.order, self.ctx = order, ctx

    def forward(self, fused):
        gate, up = _ops.gate_up_split(fused, self.order, ctx=self.ctx)
        return GluFunction.apply(gate, up, _lib.ACT[self.act], self.ctx, True)

    def extra_repr(self):
        return "%s, %s" % (self.act, self.order)


# --- blocks ---------------------------------------------------------------------------------------

def _weight_view(name, t, bias):
    """struct ffn_weight of a tensor (host or device memory; no copy)."""
    if t.dtype not in _TORCH_DTYPE:
        raise InvalidArgumentError("ffn.torch: %s is %s; block weights are float32, bfloat16 or "
                                   "float16" % (name, t.dtype))
    w = _lib.Weight()
    w.data = t.data_ptr()
    w.dtype = _TORCH_DTYPE[t.dtype]
    if bias:
        if t.dim() != 1 or (t.shape[0] > 1 and t.stride(0) != 1):
            raise InvalidArgumentError("ffn.torch: %s has shape %s, strides %s; a bias is a "
                                       "contiguous vector" % (name, tuple(t.shape), t.stride()))
        w.rows, w.cols = 1, t.shape[0]
        return w
    if t.dim() != 2 or (t.shape[1] > 1 and t.stride(1) != 1) or t.stride(0) < 1:
        raise InvalidArgumentError(
            "ffn.torch: %s has shape %s, strides %s; a weight is a 2-D matrix whose rows are "
            "contiguous (any row stride)" % (name, tuple(t.shape), t.stride()))
    w.rows, w.cols = t.shape
    w.row_stride = t.stride(0) if t.shape[0] > 1 else 0
    return w


class _Lease:
    """A block taken from a pool for one forward (+ its backward). Returned to the pool by
    release(), or when the autograd graph holding it is freed without a backward."""

    __slots__ = ("pool", "handle", "gen")

    def __init__(self, pool, handle, gen):
        self.pool, self.handle, self.gen = pool, handle, gen

    def release(self):
        h, self.handle = self.handle, None
        if h:
            self.pool._put(h, self.gen)

    def __del__(self):
        try:
            self.release()
        except Exception:
            pass


def _copied(w):
    """True for a weight the library copies at block creation (f16 matrices into f32, bf16/f16
    biases into f32): its block must be rebuilt when the weight changes in place. f32 and bf16
    matrices are used where they lie (but for pack_weights=True: then every weight's version
    keys the block, so an in-place update repacks at the next call)."""
    return w.dtype == torch.float16 or (w.dtype == torch.bfloat16 and w.dim() == 1)


class _BlockPool:
    """ffn_block_t objects of one module. A block keeps one pending training forward, so each
    forward whose backward is still to come holds its own block; finished ones are reused. A
    change of the weights (pointer, dtype, layout; or the version of a converted weight) retires
    every block made before it."""

    KEEP = 4  # idle blocks kept for reuse

    def __init__(self):
        self.lock = threading.Lock()
        self.free, self.gen, self.sig = [], 0, None

    def acquire(self, sig, create):
        with self.lock:
            if sig != self.sig:
                self._drop()
                self.gen += 1
                self.sig = sig
            if self.free:
                return _Lease(self, self.free.pop(), self.gen)
            gen = self.gen
        return _Lease(self, create(), gen)

    def _put(self, h, gen):
        with self.lock:
            if gen == self.gen and len(self.free) < self.KEEP:
                self.free.append(h)
                return
        LIB.ffn_block_destroy(h)

    def _drop(self):
        for h in self.free:
            LIB.ffn_block_destroy(h)
        self.free = []

    def __del__(self):
        try:
            self._drop()
        except Exception:
            pass

    def __reduce__(self):
        # A copied or unpickled module makes its own blocks (they point at its own weights).
        return (_BlockPool, ())


_BLOCK_DTYPES = {torch.float32: _lib.DTYPE_F32, torch.bfloat16: _lib.DTYPE_BF16}


def _rows(fn, t, d):
    """t as an f32 or bf16 [T, d] view (the dtypes a block takes for x, y, dx, dy): (tensor kept
    alive, ffn_tensor, leading shape). Converts other dtypes to f32 and copies layouts the view
    cannot express."""
    if t.dim() == 0:
        raise InvalidArgumentError("%s: x is a scalar; the block takes [..., d_model=%d]" % (
            fn, d))
    lead = tuple(t.shape[:-1])  # a last dimension other than d: the library says so
    if t.dtype not in _BLOCK_DTYPES:
        t = t.float()
    op = _views.operand(fn, "x", t)
    (v,), used = _views.plan(fn, [op], copy=True, last_dim=True)
    return used[0].obj, v, lead


class _BlockFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, module, policy, fctx, *weights):
        fn = "ffn.torch.%s" % type(module).__name__
        d = module.d_model
        xk, xv, lead = _rows(fn, x.detach(), d)
        y = torch.empty(lead + (d,), dtype=xk.dtype, device=xk.device)  # f32 or bf16, as x
        yv = _lib.Tensor(y.data_ptr(), _BLOCK_DTYPES[xk.dtype], xv.rows, d, d)
        lease = module._lease(fctx, weights)
        try:
            fctx.call(LIB.ffn_block_forward, lease.handle, _byref(yv), _byref(xv), policy)
        except BaseException:
            lease.release()
            raise
        if policy == _lib.POLICY_NONE:
            lease.release()
        else:
            ctx.lease, ctx.fctx, ctx.fn = lease, fctx, fn
            ctx.dev = xk.device
            ctx.xv = xv
            ctx.x_dtype, ctx.lead, ctx.d = x.dtype, lead, d
            # The block reads x (and f32 weights) by pointer in the backward: keep them alive,
            # and let autograd's version check refuse an in-place change made in between.
            ctx.keep = [xk] + [w.detach() for w in weights if w is not None]
            ctx.save_for_backward(x if xk.data_ptr() == x.data_ptr() else None)
            ctx.wdtypes = [None if w is None else w.dtype for w in weights]
            ctx.wshapes = [None if w is None else tuple(w.shape) for w in weights]
            ctx.y_dtype = y.dtype
        return y if x.dtype == y.dtype else y.to(x.dtype)

    @staticmethod
    @once_differentiable
    def backward(ctx, dy):
        ctx.saved_tensors  # the version check of x
        lease = ctx.lease
        if lease is None or lease.handle is None:
            raise InvalidArgumentError("%s: backward called twice on one forward (retain_graph is "
                                       "not supported: the block's saved state is consumed)" %
                                       ctx.fn)
        try:
            with ctx.fctx.stream_guard():
                dx, grads = _BlockFunction._backward(ctx, dy, lease)
        finally:
            lease.release()
            ctx.lease = None
            ctx.keep = None
        return (dx, None, None, None) + tuple(grads)

    @staticmethod
    def _backward(ctx, dy, lease):
        dyk, dyv, _ = _rows(ctx.fn, dy, ctx.d)
        T = ctx.xv.rows
        dev = ctx.dev
        need_dx = ctx.needs_input_grad[0]
        dx = torch.empty(ctx.lead + (ctx.d,), dtype=ctx.y_dtype, device=dev) if need_dx else None
        dxv = (_lib.Tensor(dx.data_ptr(), _BLOCK_DTYPES[ctx.y_dtype], T, ctx.d, ctx.d)
               if need_dx else None)
        g = _lib.BlockGrads()
        g.size = ctypes.sizeof(_lib.BlockGrads)
        # One dtype for every gradient: bf16 when every weight asked for is bf16 (as torch
        # gives bf16 parameters bf16 gradients), else f32, converted after.
        asked = [i for i in range(len(SLOTS))
                 if ctx.wshapes[i] is not None and ctx.needs_input_grad[4 + i]]
        gdt = (torch.bfloat16 if asked and all(ctx.wdtypes[i] == torch.bfloat16
                                               for i in asked) else torch.float32)
        g.dtype = _BLOCK_DTYPES[gdt]
        grads = []
        for i, slot in enumerate(SLOTS):
            gt = None
            if i in asked:
                gt = torch.empty(ctx.wshapes[i], dtype=gdt, device=dev)
                setattr(g, slot, gt.data_ptr())
            grads.append(gt)
        ctx.fctx.call(LIB.ffn_block_backward, lease.handle, _byref(g),
                      _byref(dxv) if need_dx else None, _byref(dyv))
        if dx is not None and ctx.x_dtype != dx.dtype:
            dx = dx.to(ctx.x_dtype)
        grads = [gt if gt is None or ctx.wdtypes[i] == gt.dtype else gt.to(ctx.wdtypes[i])
                 for i, gt in enumerate(grads)]
        return dx, grads


class _BlockModule(nn.Module):
    """Common part of FFN and GatedFFN: the weights as Parameters (shared, never copied), the
    block spec, a pool of library blocks, forward and backward through ffn_block_*."""

    def __init__(self, *, gated, act, orient, layout, weights, tp_groups=1, recompute=False,
                 ctx=None, schedule="auto", tile_rows=0, pack_weights=False):
        super().__init__()
        fn = "ffn.torch.%s" % type(self).__name__
        self.gated = gated
        self.act = _lib.ACT_NAMES[_ops.act_index(fn, act)]
        if orient not in _lib.ORIENT:
            raise InvalidArgumentError("%s: orient=%r; expected 'out_in' (nn.Linear) or 'in_out' "
                                       "(GPT-2 Conv1D)" % (fn, orient))
        if layout not in _lib.LAYOUT:
            raise InvalidArgumentError("%s: layout=%r; expected one of %s" % (
                fn, layout, ", ".join(_lib.LAYOUT_NAMES)))
        if schedule not in _lib.SCHEDULE:
            raise InvalidArgumentError("%s: schedule=%r; expected one of %s" % (
                fn, schedule, ", ".join(_lib.SCHEDULE_NAMES)))
        self.orient, self.layout, self.tp_groups = orient, layout, int(tp_groups)
        self.recompute, self.ctx = bool(recompute), ctx
        self.schedule, self.tile_rows = schedule, int(tile_rows)
        self.pack_weights = bool(pack_weights)
        self.source_names = {}
        for slot in SLOTS:
            t = weights.get(slot)
            if t is not None and not isinstance(t, torch.Tensor):
                raise InvalidArgumentError("%s: %s is a %s, not a tensor" % (fn, slot,
                                                                             type(t).__name__))
            if t is not None and not isinstance(t, nn.Parameter):
                t = nn.Parameter(t)  # the same storage, no copy
            self.register_parameter(PARAM_NAMES[slot], t)
        down = weights.get("down")
        if down is None or down.dim() != 2:
            raise InvalidArgumentError("%s: down is required, a 2-D weight" % fn)
        self.d_model, self.d_ff = (down.shape if orient == "out_in" else down.shape[::-1])
        self.d_model, self.d_ff = int(self.d_model), int(self.d_ff)
        self._pool = _BlockPool()
        # Validate now: the library checks every shape against the spec, with its messages (and
        # a libffn whose blocks do not run where the weights lie says so here).
        weights = self._weights()
        self._lease(context_for(fn, ctx, self._device_of(fn, weights)), weights).release()

    # --- the block ---

    def _weights(self):
        return [getattr(self, PARAM_NAMES[s]) for s in SLOTS]

    @staticmethod
    def _device_of(fn, weights):
        """Where the weights lie (None: host memory; a CUDA ordinal): all in one place."""
        devs = [(PARAM_NAMES[s], _views.device_of(fn, PARAM_NAMES[s], w))
                for s, w in zip(SLOTS, weights) if w is not None]
        dev = devs[0][1]
        if any(d != dev for _, d in devs):
            raise InvalidArgumentError("%s: the weights lie on several devices (%s); move the "
                                       "module with .to(device)" % (fn, ", ".join(
                                           "%s %s" % (n, device_name(d)) for n, d in devs)))
        return dev

    def _spec(self):
        s = _lib.BlockSpec()
        s.size = ctypes.sizeof(_lib.BlockSpec)
        s.d_model, s.d_ff = self.d_model, self.d_ff
        s.act = _lib.ACT[self.act]
        s.gated = self.gated
        s.gate_up_layout = _lib.LAYOUT[self.layout]
        s.tp_groups = self.tp_groups
        w = dict(zip(SLOTS, self._weights()))
        s.bias_gate = w["b_gate"] is not None or (self.gated and w["b_gate_up"] is not None)
        s.bias_up = w["b_up"] is not None or w["b_gate_up"] is not None
        s.bias_down = w["b_down"] is not None
        return s

    def _packs(self):
        return getattr(self, "pack_weights", False)  # modules saved before the option: off

    def _lease(self, fctx, weights):
        sig = tuple(None if w is None else
                    (w.data_ptr(), w.dtype, tuple(w.shape), w.stride(),
                     w._version if _copied(w) or self._packs() else 0) for w in weights)

        def create():
            bw = _lib.BlockWeights()
            bw.size = ctypes.sizeof(_lib.BlockWeights)
            for slot, w in zip(SLOTS, weights):
                if w is not None:
                    wv = _weight_view(PARAM_NAMES[slot], w.detach(), slot.startswith("b_"))
                    wv.orient = _lib.ORIENT[self.orient]
                    setattr(bw, slot, wv)
            o = _lib.BlockOpts()
            o.size = ctypes.sizeof(_lib.BlockOpts)
            o.schedule = _lib.SCHEDULE[self.schedule]
            o.tile_rows = self.tile_rows
            o.pack_weights = self._packs()
            h = ctypes.c_void_p()
            fctx.call(LIB.ffn_block_create, _byref(self._spec()), _byref(bw), _byref(o),
                      _byref(h))
            return h.value

        return self._pool.acquire(sig, create)

    def block_info(self, n_tokens=1):
        """ffn_block_info as a dict: n_params, weight_bytes, cache_bytes (0 when every weight is
        f32: used in place), saved_bytes_save / _recompute, workspace_bytes, schedule,
        tile_rows."""
        weights = self._weights()
        fn = "ffn.torch.%s.block_info" % type(self).__name__
        c = context_for(fn, self.ctx, self._device_of(fn, weights))
        info = _lib.BlockInfo()
        info.size = ctypes.sizeof(_lib.BlockInfo)
        lease = self._lease(c, weights)
        try:
            c.call(LIB.ffn_block_info, lease.handle, int(n_tokens), _byref(info))
        finally:
            lease.release()
        out = {k: getattr(info, k) for k, _ in _lib.BlockInfo._fields_ if k != "size"}
        out["schedule"] = _lib.SCHEDULE_NAMES[out["schedule"]]
        return out

    def forward(self, x):
        fn = "ffn.torch.%s" % type(self).__name__
        weights = self._weights()
        dev = self._device_of(fn, weights)
        xdev = _views.device_of(fn, "x", x)
        if xdev != dev:
            raise InvalidArgumentError("%s: x is on %s, the weights on %s; ffn copies nothing "
                                       "between devices: move x or the module (.to(device))" % (
                                           fn, device_name(xdev), device_name(dev)))
        fctx = context_for(fn, self.ctx, dev)
        training = torch.is_grad_enabled() and (
            x.requires_grad or any(w is not None and w.requires_grad for w in weights))
        if not training:
            policy = _lib.POLICY_NONE
        else:
            policy = _lib.POLICY_RECOMPUTE if self.recompute else _lib.POLICY_SAVE
        with fctx.stream_guard():
            return _BlockFunction.apply(x, self, policy, fctx, *weights)

    def extra_repr(self):
        present = [PARAM_NAMES[s] for s, w in zip(SLOTS, self._weights()) if w is not None]
        return "d_model=%d, d_ff=%d, act=%s, %s, %s%s, params=[%s]" % (
            self.d_model, self.d_ff, self.act, self.orient,
            self.layout + ", " if self.gated else "", "recompute" if self.recompute else "save",
            ", ".join(present))


class FFN(_BlockModule):
    """Plain FFN block: y = act(x·W_up + b_up)·W_down + b_down.

    up, down: weight tensors ([m, d] and [d, m] for orient="out_in", i.e. nn.Linear; [d, m] and
    [m, d] for "in_out", GPT-2's Conv1D); b_up [m], b_down [d] optional. Tensors are used as
    they are (Parameters are registered as given; other tensors wrapped without a copy).
    recompute=True keeps only x for the backward (recomputes x·W_up) instead of the
    pre-activations. pack_weights=True (CPU, inference) has the library keep its weights in the
    GEMM library's blocked layout as well (opts.pack_weights: faster forwards from 7 tokens, the
    weights' bytes again); an in-place update of a weight repacks at the next call.
    """

    def __init__(self, up, down, b_up=None, b_down=None, act="gelu_tanh", orient="out_in",
                 recompute=False, ctx=None, schedule="auto", tile_rows=0, pack_weights=False):
        super().__init__(gated=False, act=act, orient=orient, layout="separate",
                         weights={"up": up, "down": down, "b_up": b_up, "b_down": b_down},
                         recompute=recompute, ctx=ctx, schedule=schedule, tile_rows=tile_rows,
                         pack_weights=pack_weights)

    @classmethod
    def create(cls, d_model, d_ff, act="gelu_tanh", bias=True, orient="out_in",
               dtype=torch.float32, **kw):
        """New weights, initialised as nn.Linear initialises its own."""
        up, b_up = _linear_init(d_model, d_ff, bias, orient, dtype)
        down, b_down = _linear_init(d_ff, d_model, bias, orient, dtype)
        return cls(up, down, b_up, b_down, act=act, orient=orient, **kw)


class GatedFFN(_BlockModule):
    """Gated FFN block: y = (act(x·W_gate + b_gate) ⊙ (x·W_up + b_up))·W_down + b_down.

    Either gate and up (layout "separate") or one fused gate_up ([2m, d] out_in / [d, 2m]
    in_out) with layout "fused" ([gate | up], Phi-3's gate_up_proj), "fused_up_first",
    "interleaved" or "blocked" (tp_groups groups [g_0 u_0 | g_1 u_1 ...], Megatron). Biases
    optional (b_gate, b_up; or b_gate_up [2m] with a fused layout). Tensors are used as they are.
    recompute and pack_weights as for FFN.
    """

    def __init__(self, gate=None, up=None, down=None, gate_up=None, b_gate=None, b_up=None,
                 b_gate_up=None, b_down=None, act="silu", orient="out_in", layout=None,
                 tp_groups=1, recompute=False, ctx=None, schedule="auto", tile_rows=0,
                 pack_weights=False):
        if layout is None:
            layout = "fused" if gate_up is not None else "separate"
        super().__init__(gated=True, act=act, orient=orient, layout=layout,
                         weights={"gate": gate, "up": up, "gate_up": gate_up, "down": down,
                                  "b_gate": b_gate, "b_up": b_up, "b_gate_up": b_gate_up,
                                  "b_down": b_down},
                         tp_groups=tp_groups, recompute=recompute, ctx=ctx, schedule=schedule,
                         tile_rows=tile_rows, pack_weights=pack_weights)

    @classmethod
    def create(cls, d_model, d_ff, act="silu", bias=False, orient="out_in", layout="separate",
               dtype=torch.float32, **kw):
        """New weights, initialised as nn.Linear initialises its own."""
        down, b_down = _linear_init(d_ff, d_model, bias, orient, dtype)
        if layout == "separate":
            gate, b_gate = _linear_init(d_model, d_ff, bias, orient, dtype)
            up, b_up = _linear_init(d_model, d_ff, bias, orient, dtype)
            return cls(gate=gate, up=up, down=down, b_gate=b_gate, b_up=b_up, b_down=b_down,
                       act=act, orient=orient, layout=layout, **kw)
        gate_up, b_gate_up = _linear_init(d_model, 2 * d_ff, bias, orient, dtype)
        return cls(gate_up=gate_up, down=down, b_gate_up=b_gate_up, b_down=b_down, act=act,
                   orient=orient, layout=layout, **kw)


def _linear_init(n_in, n_out, bias, orient, dtype):
    lin = nn.Linear(n_in, n_out, bias=bias)
    w = lin.weight.detach()
    if orient == "in_out":
        w = w.t()
    w = nn.Parameter(w.contiguous().to(dtype))
    b = nn.Parameter(lin.bias.detach().to(dtype)) if bias else None
    return w, b


# --- Hugging Face ---------------------------------------------------------------------------------

# Activation modules of transformers (and torch) by class name.
_HF_ACTS = {"SiLU": "silu", "SiLUActivation": "silu", "Swish": "silu",
            "NewGELUActivation": "gelu_tanh", "GELUTanh": "gelu_tanh",
            "PytorchGELUTanh": "gelu_tanh", "GELUPytorchTanh": "gelu_tanh",
            "FastGELUActivation": "gelu_tanh", "AccurateGELUActivation": "gelu_tanh",
            "GELUActivation": "gelu_erf", "ReLU": "relu", "ReLUActivation": "relu",
            "Sigmoid": "sigmoid", "Identity": "identity", "QuickGELUActivation": "quick_gelu"}
_HF_ACT_FUNCS = {"silu": "silu", "gelu": "gelu_erf", "relu": "relu", "sigmoid": "sigmoid"}

# (gate, up, gate_up, down) submodule names of the MLP classes, by family.
_HF_GATED = [("gate_proj", "up_proj", None, "down_proj"),   # LLaMA, Mistral, Qwen, Gemma, OLMo
             (None, None, "gate_up_proj", "down_proj"),      # Phi-3
             ("wi_0", "wi_1", None, "wo"),                   # T5 (gated-gelu)
             ("w1", "w3", None, "w2")]                       # Mixtral expert
_HF_PLAIN = [("c_fc", "c_proj"), ("fc_in", "fc_out"), ("fc1", "fc2"),
             ("dense_h_to_4h", "dense_4h_to_h"), ("wi", "wo")]


def _hf_act(mlp):
    for attr in ("act_fn", "act", "activation_fn", "activation", "act_func"):
        a = getattr(mlp, attr, None)
        if a is None:
            continue
        name = type(a).__name__
        if name == "GELU":
            return "gelu_tanh" if getattr(a, "approximate", "none") == "tanh" else "gelu_erf"
        if name in _HF_ACTS:
            return _HF_ACTS[name]
        fname = getattr(a, "__name__", "")
        if fname in _HF_ACT_FUNCS:
            return _HF_ACT_FUNCS[fname]
        raise InvalidArgumentError(
            "ffn.torch.from_hf_mlp: %s.%s is a %s, an activation ffn does not recognise; pass "
            "act= (one of %s)" % (type(mlp).__name__, attr, name, ", ".join(_lib.ACT_NAMES)))
    raise InvalidArgumentError("ffn.torch.from_hf_mlp: %s has no act_fn/act/activation_fn "
                               "attribute; pass act=" % type(mlp).__name__)


def _proj(mlp, name):
    sub = getattr(mlp, name, None) if name else None
    if sub is None or not isinstance(getattr(sub, "weight", None), torch.Tensor):
        return None
    # transformers' Conv1D (GPT-2) stores [in, out]; nn.Linear and the rest [out, in].
    return sub, ("in_out" if type(sub).__name__ == "Conv1D" else "out_in")


def from_hf_mlp(mlp, act=None, recompute=False, ctx=None, pack_weights=False):
    """A GatedFFN or FFN that shares the Parameters of a Hugging Face MLP module (LlamaMLP and
    its kin, Phi3MLP's fused gate_up_proj, GPT2MLP's Conv1D [in, out] weights, T5's wi_0/wi_1/wo,
    GPT-J, GPT-NeoX, Falcon, CLIP-style fc1/fc2): no copy; training either module trains both.
    The activation is read from the module's act_fn/act/activation_fn unless act= is given."""
    act = act if act is not None else _hf_act(mlp)
    for g, u, gu, d in _HF_GATED:
        parts = {k: _proj(mlp, n) for k, n in (("gate", g), ("up", u), ("gate_up", gu),
                                               ("down", d))}
        need = ["gate_up", "down"] if gu else ["gate", "up", "down"]
        if all(parts[k] is not None for k in need):
            orient = parts["down"][1]
            w, names = {}, {}
            for k in need:
                sub = parts[k][0]
                w[k] = sub.weight
                names[PARAM_NAMES[k]] = "%s.weight" % (gu if k == "gate_up" else
                                                       {"gate": g, "up": u, "down": d}[k])
                if getattr(sub, "bias", None) is not None:
                    w["b_" + k] = sub.bias
                    names[PARAM_NAMES["b_" + k]] = names[PARAM_NAMES[k]][:-6] + "bias"
            m = GatedFFN(act=act, orient=orient, recompute=recompute, ctx=ctx,
                         layout="fused" if gu else "separate", pack_weights=pack_weights, **w)
            m.source_names = names
            return m
    for u, d in _HF_PLAIN:
        pu, pd = _proj(mlp, u), _proj(mlp, d)
        if pu is not None and pd is not None:
            w = {"up": pu[0].weight, "down": pd[0].weight}
            names = {"w_up": u + ".weight", "w_down": d + ".weight"}
            if getattr(pu[0], "bias", None) is not None:
                w["b_up"], names["b_up"] = pu[0].bias, u + ".bias"
            if getattr(pd[0], "bias", None) is not None:
                w["b_down"], names["b_down"] = pd[0].bias, d + ".bias"
            m = FFN(act=act, orient=pd[1], recompute=recompute, ctx=ctx,
                    pack_weights=pack_weights, **w)
            m.source_names = names
            return m
    raise InvalidArgumentError(
        "ffn.torch.from_hf_mlp: %s has none of the known projection sets (gate_proj/up_proj/"
        "down_proj, gate_up_proj/down_proj, c_fc/c_proj, fc_in/fc_out, fc1/fc2, dense_h_to_4h/"
        "dense_4h_to_h, wi_0/wi_1/wo, wi/wo, w1/w3/w2); build GatedFFN/FFN from its weights"
        % type(mlp).__name__)


def _file_tensor_to_torch(ft, copy):
    import numpy as np
    if ft.ffn_dtype is None:
        return torch.from_numpy(ft.f32())  # quantised or other: an f32 copy
    a = ft.numpy()
    with warnings.catch_warnings():
        # The mapping is read-only; torch warns that it cannot mark a tensor so.
        warnings.simplefilter("ignore", UserWarning)
        if ft.ffn_dtype == "bf16":
            t = torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)
        else:
            t = torch.from_numpy(a)
    return t.clone() if copy else t


def from_hf(model_dir, layer, expert=None, copy=True, recompute=False, ctx=None):
    """The FFN of `layer` (and `expert`, for a mixture of experts) of a checkpoint, read by
    libffn's readers (ffn_model_open: a Hugging Face directory or a .gguf file; the
    architecture map names the tensors, their orientation and gate/up layout).

    copy=True (default): the weights are copied once into tensors torch owns (trainable).
    copy=False: the Parameters are views of the library's read-only memory mapping (no copy),
    frozen (requires_grad=False): inference, or gradients for x only. Writing them would fault.

    The module's source_names maps its parameters to the checkpoint's names inside the MLP
    ("w_gate" -> "gate_proj.weight"); model_desc is the checkpoint's description."""
    c = context_for("ffn.torch.from_hf", ctx, None)  # read into host memory (.cuda() after)
    model = open_model(model_dir, ctx=c)
    L = model.layer(layer, expert)
    w, names = {}, {}
    for slot, ft in L.tensors.items():
        t = _file_tensor_to_torch(ft, copy)
        w[slot] = nn.Parameter(t, requires_grad=bool(copy))
        names[PARAM_NAMES[slot]] = L.param_name(slot)
    if L.gated:
        m = GatedFFN(act=L.act, orient=L.orient, layout=L.layout, recompute=recompute, ctx=ctx,
                     **w)
    else:
        w.pop("gate", None)
        m = FFN(act=L.act, orient=L.orient, recompute=recompute, ctx=ctx,
                **{k: v for k, v in w.items() if k in ("up", "down", "b_up", "b_down")})
    m.source_names = names
    m.model_desc = model.desc
    m.layer_index, m.expert_index = L.layer, L.expert
    return m


__all__ = ["act", "glu", "ActFunction", "GluFunction", "Activation", "GatedActivation", "FFN",
           "GatedFFN", "from_hf_mlp", "from_hf"]
