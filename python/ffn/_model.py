# _model.py — a checkpoint's FFN layers through the library's readers: ffn_model_open (a
# Hugging Face directory with config.json + safetensors, or a .gguf file), the architecture maps
# and ffn_model_layer. Tensors come out as read-only NumPy views of the library's memory mapping
# (no copy); the views keep the model open for as long as they live.
import ctypes
import os

from . import _lib
from ._context import LIB, _resolve
from ._errors import InvalidArgumentError

_COMPUTE = {"F32": "float32", "F16": "float16", "BF16": "bfloat16"}


def _s(b):
    return b.decode("utf-8", "replace")


class FileTensor:
    """One tensor of the checkpoint: name, file dtype ("F32", "BF16", "Q8_0", ...), shape (as
    PyTorch's .shape), and where it lies."""

    def __init__(self, model, ft):
        self._model = model
        self._ft = ft  # a copy of the C struct (its pointers stay valid while the model is open)
        self.name = _s(ft.name)
        self.file_dtype = _lib.FILE_DTYPE_NAMES[ft.dtype]
        self.shape = tuple(ft.shape[i] for i in range(ft.n_dims))
        self.nbytes = ft.nbytes

    @property
    def ffn_dtype(self):
        """"f32", "bf16", "f16", or None for a dtype the kernels do not take (convert: f32())."""
        return {"F32": "f32", "BF16": "bf16", "F16": "f16"}.get(self.file_dtype)

    def numpy(self):
        """A read-only NumPy view of the mapped data, no copy: float32, float16, and bfloat16
        as ml_dtypes.bfloat16 when installed, else uint16 bits. Other dtypes: use f32()."""
        import numpy as np
        if self.ffn_dtype is None:
            raise InvalidArgumentError("%s is %s; take an f32 copy with .f32()" % (
                self.name, self.file_dtype))
        if self.ffn_dtype == "bf16":
            try:
                import ml_dtypes
                nd = ml_dtypes.bfloat16
            except ImportError:
                nd = np.uint16
        else:
            nd = _COMPUTE[self.file_dtype]
        if self.nbytes == 0:
            return np.zeros(self.shape, dtype=nd)
        buf = (ctypes.c_uint8 * self.nbytes).from_address(self._ft.data)
        buf._ffn_model = self._model  # the mapping lives as long as any view of it
        a = np.frombuffer(buf, dtype=nd).reshape(self.shape)
        a.flags.writeable = False
        return a

    def f32(self, ctx=None):
        """A float32 copy (Q8_0 / Q4_0 dequantised) through ffn_file_tensor_to_f32."""
        import numpy as np
        c = _resolve(ctx)
        n = LIB.ffn_file_tensor_numel(ctypes.byref(self._ft))
        out = np.empty(self.shape, dtype=np.float32)
        c.call(LIB.ffn_file_tensor_to_f32, out.ctypes.data_as(ctypes.POINTER(ctypes.c_float)), n,
               ctypes.byref(self._ft))
        return out

    def __repr__(self):
        return "<ffn.FileTensor %s %s %s>" % (self.name, self.file_dtype, list(self.shape))


class Layer:
    """The FFN of one layer (or one expert): spec and tensors as the architecture map found
    them. `tensors` maps the block's slot names ("gate", "up", "gate_up", "down", "b_gate",
    "b_up", "b_gate_up", "b_down") to FileTensor for the ones present."""

    def __init__(self, model, ml):
        self.layer, self.expert = ml.layer, ml.expert
        self.d_model, self.d_ff = ml.d_model, ml.d_ff
        self.act = _lib.ACT_NAMES[ml.act]
        self.gated = bool(ml.gated)
        self.orient = _lib.ORIENT_NAMES[ml.orient]
        self.layout = _lib.LAYOUT_NAMES[ml.layout]
        self.prefix = _s(ml.prefix)
        self.tensors = {}
        for slot in _lib.WEIGHT_SLOTS:
            ft = getattr(ml, slot)
            if ft.name:
                self.tensors[slot] = FileTensor(model, _lib.FileTensor.from_buffer_copy(ft))

    def param_name(self, slot):
        """The tensor's name inside the module ("gate_proj.weight"), without the prefix."""
        name = self.tensors[slot].name
        return name[len(self.prefix):] if name.startswith(self.prefix) else name

    def __repr__(self):
        return "<ffn.Layer %d%s d=%d m=%d %s%s %s %s: %s>" % (
            self.layer, "" if self.expert < 0 else " expert %d" % self.expert, self.d_model,
            self.d_ff, "gated " if self.gated else "", self.act, self.orient, self.layout,
            ", ".join(self.tensors))


class Model:
    """A checkpoint opened by ffn_model_open: `desc` (a dict: arch, format, n_layers, d_model,
    d_ff, n_experts, act, gated, hf_in_out, act_source, note, n_params, n_params_ffn) and
    layer(i, expert) -> Layer. Closed when the object and every view of its tensors are gone."""

    def __init__(self, path, ctx=None):
        self._h = None
        self._ctx = _resolve(ctx)
        h = ctypes.c_void_p()
        self._ctx.call(LIB.ffn_model_open, os.fsencode(os.fspath(path)), ctypes.byref(h))
        self._h = h.value
        self.path = os.fspath(path)
        d = LIB.ffn_model_desc(self._h).contents
        self.desc = {"arch": _s(d.arch), "format": _s(d.format), "n_layers": d.n_layers,
                     "d_model": d.d_model, "d_ff": d.d_ff, "n_experts": d.n_experts,
                     "act": _lib.ACT_NAMES[d.act], "gated": bool(d.gated),
                     "hf_in_out": bool(d.hf_in_out), "act_source": _s(d.act_source),
                     "note": _s(d.note), "n_params": d.n_params, "n_params_ffn": d.n_params_ffn}

    def layer(self, layer, expert=None):
        ml = _lib.ModelLayer()
        self._ctx.call(LIB.ffn_model_layer, self._h, int(layer), -1 if expert is None
                       else int(expert), ctypes.byref(ml))
        return Layer(self, ml)

    @property
    def config_json(self):
        s = LIB.ffn_model_config_json(self._h)
        return _s(s) if s else None

    def __del__(self):
        h, self._h = getattr(self, "_h", None), None
        if h:
            LIB.ffn_model_close(h)

    def __repr__(self):
        return "<ffn.Model %s: %s, %d layers, d=%d, m=%d, %s%s>" % (
            self.path, self.desc["arch"], self.desc["n_layers"], self.desc["d_model"],
            self.desc["d_ff"], "gated " if self.desc["gated"] else "", self.desc["act"])


def open_model(path, ctx=None):
    """Opens a checkpoint (Hugging Face directory or .gguf) through libffn's readers."""
    return Model(path, ctx)
