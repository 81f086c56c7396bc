"""ffn — the feed-forward stage of transformers (libffn) on NumPy arrays and torch tensors.

    import ffn
    y = ffn.act(x, "gelu_tanh")              # y = gelu(x); out=x works in place
    h = ffn.glu(gate, up, "silu")            # SwiGLU combine: silu(gate) * up, one pass
    gate, up = ffn.gate_up_split(fused)      # views of a fused [..., 2m] buffer, no copy

PyTorch: ffn.torch (autograd functions, FFN / GatedFFN modules over the library's FFN blocks,
from_hf). CUDA tensors run on the library's CUDA backend, on torch's current stream
(ffn.backend_available("cuda") says whether this libffn can). Everything runs in libffn (C,
SIMD, OpenMP, CUDA) through ctypes; this package computes nothing itself. Which library was
loaded, and from where: ffn.library_path, ffn.library_source (or `python -m ffn`). API:
python/README.md.
"""
from . import _lib
from ._errors import (Error, InvalidArgumentError, UnsupportedError, OutOfMemoryError,
                      BadFormatError, IoError, NotFoundError, NonFiniteError, BackendError,
                      InternalError)
from ._lib import LibraryNotFound
from ._context import (Context, get_context, set_defaults, get_defaults, backend_available,
                       LIBRARY_PATH, LIBRARY_SOURCE)
from ._ops import act, act_backward, glu, glu_backward, gate_up_split, convert
from ._model import Model, open_model

__version__ = "0.1.0"

library_path = LIBRARY_PATH
library_source = LIBRARY_SOURCE

ACTS = tuple(_lib.ACT_NAMES)
GLUS = tuple(_lib.GLU_NAMES)
DTYPES = tuple(_lib.DTYPE_NAMES)


def isa_supported(isa):
    """True when this libffn has kernels for `isa` ("scalar", "avx2", "avx512") and the CPU
    and OS can run them."""
    from ._context import LIB
    if isa not in _lib.ISA:
        raise InvalidArgumentError("isa=%r; expected one of %s" % (isa, ", ".join(_lib.ISA)))
    return bool(LIB.ffn_isa_supported(_lib.ISA[isa]))


def info():
    """A dict describing the loaded library and the calling thread's context."""
    c = get_context()
    cuda, why = backend_available("cuda")
    return {"library": library_path, "found_via": library_source, "version": __version__,
            "isa": c.isa, "threads": c.threads, "accuracy": c.accuracy,
            "isas_supported": [i for i in _lib.ISA_NAMES[1:] if isa_supported(i)],
            "cuda": "available" if cuda else "no: " + why}


def __getattr__(name):
    # `ffn.torch` imports torch only when asked for.
    if name == "torch":
        import importlib
        return importlib.import_module(".torch", __name__)
    raise AttributeError("module 'ffn' has no attribute %r" % name)


__all__ = ["act", "act_backward", "glu", "glu_backward", "gate_up_split", "convert", "Context",
           "get_context", "set_defaults", "get_defaults", "backend_available", "Model",
           "open_model", "Error",
           "InvalidArgumentError", "UnsupportedError", "OutOfMemoryError", "BadFormatError",
           "IoError", "NotFoundError", "NonFiniteError", "BackendError", "InternalError",
           "LibraryNotFound", "library_path", "library_source", "isa_supported", "info"]
