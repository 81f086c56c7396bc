# _lib.py — finds and loads libffn, and mirrors the parts of include/ffn.h the package uses:
# enum values, the structs (ctypes.Structure, field for field) and the function prototypes.
#
# The mirrors must match the header exactly: a ctypes struct that is one field short corrupts
# memory silently. tests/python/test_abi.py compares every mirror here (size, each field's offset,
# each enum value) with a C program compiled against the real header (tests/python/abi_dump.c).
# Where the header grows a struct, extend the mirror here AND the table in abi_dump.c.
import ctypes
import ctypes.util
import os

# --- enums (values as in ffn.h) ------------------------------------------------------------------

STATUS_NAMES = ["OK", "INVALID_ARG", "UNSUPPORTED", "OUT_OF_MEMORY", "BAD_FORMAT", "IO",
                "NOT_FOUND", "NON_FINITE", "BACKEND", "INTERNAL"]
STATUS = {name: i for i, name in enumerate(STATUS_NAMES)}

DTYPE_F32, DTYPE_BF16, DTYPE_F16 = 0, 1, 2
DTYPE_NAMES = ["f32", "bf16", "f16"]
DTYPE_SIZE = [4, 2, 2]

ACT_NAMES = ["gelu_tanh", "gelu_erf", "silu", "relu", "sigmoid", "identity", "quick_gelu"]
ACT = {name: i for i, name in enumerate(ACT_NAMES)}
GLU_NAMES = ["geglu_tanh", "geglu_erf", "swiglu", "reglu", "glu", "bilinear", "quick_geglu"]

ISA_NAMES = ["auto", "scalar", "avx2", "avx512"]
ISA = {name: i for i, name in enumerate(ISA_NAMES)}

ACCURACY_NAMES = ["default", "high"]
ACCURACY = {name: i for i, name in enumerate(ACCURACY_NAMES)}

GATE_UP_ORDER = {"gate_first": 0, "up_first": 1}

ORIENT_NAMES = ["out_in", "in_out"]
ORIENT = {name: i for i, name in enumerate(ORIENT_NAMES)}

LAYOUT_NAMES = ["separate", "fused", "fused_up_first", "interleaved", "blocked"]
LAYOUT = {name: i for i, name in enumerate(LAYOUT_NAMES)}

SCHEDULE_NAMES = ["auto", "tiled", "separate"]
SCHEDULE = {name: i for i, name in enumerate(SCHEDULE_NAMES)}

BACKEND_NAMES = ["cpu", "cuda"]
BACKEND = {name: i for i, name in enumerate(BACKEND_NAMES)}

MATH_NAMES = ["strict", "bf16", "tf32"]
MATH = {name: i for i, name in enumerate(MATH_NAMES)}

POLICY_NONE, POLICY_SAVE, POLICY_RECOMPUTE = 0, 1, 2

FILE_DTYPE_NAMES = ["F32", "BF16", "F16", "F64", "I64", "I32", "I16", "I8", "U8", "BOOL",
                    "F8_E4M3", "F8_E5M2", "Q8_0", "Q4_0", "U16", "U32", "U64", "F8_E8M0"]

MAX_DIMS = 8

# Every enum the ABI test checks: C enum name -> its constants in value order (value = index).
ENUMS = {
    "ffn_status": ["FFN_STATUS_" + n for n in STATUS_NAMES],
    "ffn_dtype": ["FFN_DTYPE_F32", "FFN_DTYPE_BF16", "FFN_DTYPE_F16"],
    "ffn_act": ["FFN_ACT_" + n.upper() for n in ACT_NAMES],
    "ffn_isa": ["FFN_ISA_" + n.upper() for n in ISA_NAMES],
    "ffn_accuracy": ["FFN_ACCURACY_" + n.upper() for n in ACCURACY_NAMES],
    "ffn_gate_up_order": ["FFN_GATE_UP_GATE_FIRST", "FFN_GATE_UP_UP_FIRST"],
    "ffn_weight_orient": ["FFN_WEIGHT_" + n.upper() for n in ORIENT_NAMES],
    "ffn_gate_up_layout": ["FFN_GATE_UP_" + n.upper() for n in LAYOUT_NAMES],
    "ffn_block_schedule": ["FFN_BLOCK_SCHEDULE_" + n.upper() for n in SCHEDULE_NAMES],
    "ffn_block_math": ["FFN_BLOCK_MATH_" + n.upper() for n in MATH_NAMES],
    "ffn_backend": ["FFN_BACKEND_" + n.upper() for n in BACKEND_NAMES],
    "ffn_block_policy": ["FFN_BLOCK_POLICY_NONE", "FFN_BLOCK_POLICY_SAVE",
                         "FFN_BLOCK_POLICY_RECOMPUTE"],
    "ffn_file_dtype": ["FFN_FILE_DTYPE_" + n for n in FILE_DTYPE_NAMES],
}
# The COUNT constant of the enums that have one: a value added in C changes it.
ENUM_COUNTS = {
    "ffn_status": "FFN_STATUS_COUNT", "ffn_dtype": "FFN_DTYPE_COUNT", "ffn_act": "FFN_ACT_COUNT",
    "ffn_isa": "FFN_ISA_COUNT", "ffn_weight_orient": "FFN_WEIGHT_ORIENT_COUNT",
    "ffn_gate_up_layout": "FFN_GATE_UP_LAYOUT_COUNT",
    "ffn_block_schedule": "FFN_BLOCK_SCHEDULE_COUNT", "ffn_block_policy": "FFN_BLOCK_POLICY_COUNT",
    "ffn_block_math": "FFN_BLOCK_MATH_COUNT", "ffn_backend": "FFN_BACKEND_COUNT",
    "ffn_file_dtype": "FFN_FILE_DTYPE_COUNT",
}

# --- structs -------------------------------------------------------------------------------------

c_enum = ctypes.c_int  # every ffn enum is an int-sized C enum (values 0..COUNT)
LogFn = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p)


class CtxOpts(ctypes.Structure):
    # struct ffn_ctx_opts (backend FFN_BACKEND_CPU = 0, device ordinal, cudaStream_t or NULL)
    _fields_ = [("size", ctypes.c_size_t), ("force_isa", c_enum), ("n_threads", ctypes.c_int),
                ("accuracy", c_enum), ("bf16_parity", ctypes.c_bool), ("log", LogFn),
                ("log_user", ctypes.c_void_p), ("backend", c_enum), ("device", ctypes.c_int),
                ("stream", ctypes.c_void_p)]


class Tensor(ctypes.Structure):
    # struct ffn_tensor: a 2-D row-major view.
    _fields_ = [("data", ctypes.c_void_p), ("dtype", c_enum), ("rows", ctypes.c_int64),
                ("cols", ctypes.c_int64), ("row_stride", ctypes.c_int64)]


class Weight(ctypes.Structure):
    # struct ffn_weight
    _fields_ = [("data", ctypes.c_void_p), ("dtype", c_enum), ("orient", c_enum),
                ("rows", ctypes.c_int64), ("cols", ctypes.c_int64), ("row_stride", ctypes.c_int64)]


WEIGHT_SLOTS = ["gate", "up", "gate_up", "down", "b_gate", "b_up", "b_gate_up", "b_down"]


class BlockSpec(ctypes.Structure):
    _fields_ = [("size", ctypes.c_size_t), ("d_model", ctypes.c_int64), ("d_ff", ctypes.c_int64),
                ("act", c_enum), ("gated", ctypes.c_bool), ("gate_up_layout", c_enum),
                ("tp_groups", ctypes.c_int64), ("bias_gate", ctypes.c_bool),
                ("bias_up", ctypes.c_bool), ("bias_down", ctypes.c_bool)]


class BlockWeights(ctypes.Structure):
    _fields_ = [("size", ctypes.c_size_t)] + [(s, Weight) for s in WEIGHT_SLOTS]


class BlockGrads(ctypes.Structure):
    # struct ffn_block_grads: void * members, all of one dtype (f32 or bf16).
    _fields_ = ([("size", ctypes.c_size_t)] + [(s, ctypes.c_void_p) for s in WEIGHT_SLOTS] +
                [("accumulate", ctypes.c_bool), ("dtype", c_enum)])


class BlockOpts(ctypes.Structure):
    # struct ffn_block_opts
    _fields_ = [("size", ctypes.c_size_t), ("schedule", c_enum), ("tile_rows", ctypes.c_int64),
                ("max_tokens", ctypes.c_int64), ("math", c_enum), ("save_dtype", c_enum),
                ("pack_weights", ctypes.c_bool)]


class BlockInfo(ctypes.Structure):
    _fields_ = [("size", ctypes.c_size_t), ("n_params", ctypes.c_int64),
                ("weight_bytes", ctypes.c_size_t), ("cache_bytes", ctypes.c_size_t),
                ("saved_bytes_save", ctypes.c_size_t), ("saved_bytes_recompute", ctypes.c_size_t),
                ("workspace_bytes", ctypes.c_size_t), ("schedule", c_enum),
                ("tile_rows", ctypes.c_int64), ("compute_dtype", c_enum),
                ("gemm_impl", ctypes.c_char * 64)]


class FileTensor(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", c_enum), ("n_dims", ctypes.c_int),
                ("shape", ctypes.c_int64 * MAX_DIMS), ("data", ctypes.c_void_p),
                ("nbytes", ctypes.c_size_t)]


class ModelDesc(ctypes.Structure):
    _fields_ = [("arch", ctypes.c_char * 32), ("format", ctypes.c_char * 16),
                ("n_layers", ctypes.c_int64), ("d_model", ctypes.c_int64),
                ("d_ff", ctypes.c_int64), ("n_experts", ctypes.c_int64), ("act", c_enum),
                ("gated", ctypes.c_bool), ("hf_in_out", ctypes.c_bool),
                ("act_source", ctypes.c_char * 96), ("note", ctypes.c_char * 512),
                ("n_params", ctypes.c_int64), ("n_params_ffn", ctypes.c_int64)]


class ModelLayer(ctypes.Structure):
    _fields_ = ([("layer", ctypes.c_int64), ("expert", ctypes.c_int64),
                 ("d_model", ctypes.c_int64), ("d_ff", ctypes.c_int64), ("act", c_enum),
                 ("gated", ctypes.c_bool), ("orient", c_enum), ("layout", c_enum),
                 ("prefix", ctypes.c_char * 128)] + [(s, FileTensor) for s in WEIGHT_SLOTS])


# Mirrored structs by C name, for the ABI test.
STRUCTS = {
    "ffn_ctx_opts": CtxOpts, "ffn_tensor": Tensor, "ffn_weight": Weight,
    "ffn_block_spec": BlockSpec, "ffn_block_weights": BlockWeights,
    "ffn_block_grads": BlockGrads, "ffn_block_opts": BlockOpts, "ffn_block_info": BlockInfo,
    "ffn_file_tensor": FileTensor, "ffn_model_desc": ModelDesc, "ffn_model_layer": ModelLayer,
}

# --- prototypes ----------------------------------------------------------------------------------

_P = ctypes.POINTER
_vp, _cp, _i64 = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int64
_int, _sz = ctypes.c_int, ctypes.c_size_t
_T = _P(Tensor)

PROTOTYPES = {
    # name: (restype, argtypes)
    "ffn_status_string": (_cp, [c_enum]),
    "ffn_dtype_size": (_sz, [c_enum]),
    "ffn_act_name": (_cp, [c_enum]),
    "ffn_isa_name": (_cp, [c_enum]),
    "ffn_isa_supported": (ctypes.c_bool, [c_enum]),
    "ffn_ctx_create": (c_enum, [_P(CtxOpts), _P(_vp)]),
    "ffn_ctx_destroy": (None, [_vp]),
    "ffn_ctx_last_error": (_cp, [_vp]),
    "ffn_ctx_isa": (c_enum, [_vp]),
    "ffn_ctx_set_threads": (c_enum, [_vp, _int]),
    "ffn_ctx_threads": (_int, [_vp]),
    "ffn_ctx_set_accuracy": (c_enum, [_vp, c_enum]),
    "ffn_ctx_accuracy": (c_enum, [_vp]),
    "ffn_backend_name": (_cp, [c_enum]),
    "ffn_backend_available": (ctypes.c_bool, [c_enum, _P(ctypes.c_char), _sz]),
    "ffn_ctx_backend": (c_enum, [_vp]),
    "ffn_ctx_device": (_int, [_vp]),
    "ffn_ctx_set_stream": (c_enum, [_vp, _vp]),
    "ffn_ctx_stream": (_vp, [_vp]),
    "ffn_ctx_synchronize": (c_enum, [_vp]),
    "ffn_gate_up_split": (c_enum, [_vp, _T, c_enum, _T, _T]),
    "ffn_act_forward": (c_enum, [_vp, c_enum, _T, _T]),
    "ffn_act_backward": (c_enum, [_vp, c_enum, _T, _T, _T]),
    "ffn_glu_forward": (c_enum, [_vp, c_enum, _T, _T, _T]),
    "ffn_glu_backward": (c_enum, [_vp, c_enum, _T, _T, _T, _T, _T]),
    "ffn_tensor_convert": (c_enum, [_vp, _T, _T]),
    "ffn_block_create": (c_enum, [_vp, _P(BlockSpec), _P(BlockWeights), _P(BlockOpts), _P(_vp)]),
    "ffn_block_destroy": (None, [_vp]),
    "ffn_block_forward": (c_enum, [_vp, _vp, _T, _T, c_enum]),
    "ffn_block_backward": (c_enum, [_vp, _vp, _P(BlockGrads), _T, _T]),
    "ffn_block_info": (c_enum, [_vp, _vp, _i64, _P(BlockInfo)]),
    "ffn_model_open": (c_enum, [_vp, _cp, _P(_vp)]),
    "ffn_model_close": (None, [_vp]),
    "ffn_model_desc": (_P(ModelDesc), [_vp]),
    "ffn_model_layer": (c_enum, [_vp, _vp, _i64, _i64, _P(ModelLayer)]),
    "ffn_model_config_json": (_cp, [_vp]),
    "ffn_file_dtype_name": (_cp, [c_enum]),
    "ffn_file_tensor_numel": (_i64, [_P(FileTensor)]),
    "ffn_file_tensor_to_f32": (c_enum, [_vp, _P(ctypes.c_float), _i64, _P(FileTensor)]),
}

# --- loading -------------------------------------------------------------------------------------

ENV_VAR = "FFN_LIBRARY"
_NAMES = ["libffn.so", "libffn.so.0", "libffn.dylib", "ffn.dll"]


class LibraryNotFound(ImportError):
    """libffn could not be loaded; the message lists every place tried and why it failed."""


def _try_load(path):
    try:
        return ctypes.CDLL(path), None
    except OSError as e:
        return None, str(e)


def _candidates():
    """(path, source) pairs in search order, after the environment variable."""
    here = os.path.dirname(os.path.abspath(__file__))
    for name in _NAMES:
        yield os.path.join(here, name), "next to the package (%s)" % here
    # A source checkout (python/ffn/ beside python/pyproject.toml): the repository's build/.
    if os.path.exists(os.path.join(here, os.pardir, "pyproject.toml")):
        build = os.path.normpath(os.path.join(here, os.pardir, os.pardir, "build"))
        for name in _NAMES[:2]:
            yield os.path.join(build, name), "the source tree's build folder (%s)" % build
    found = ctypes.util.find_library("ffn")
    if found:
        yield found, "the system (ctypes.util.find_library('ffn'))"
    yield "libffn.so.0", "the system loader path (LD_LIBRARY_PATH, ld.so.cache)"


def load():
    """Loads libffn; returns (CDLL, path, source). Raises LibraryNotFound with every attempt."""
    tried = []
    env = os.environ.get(ENV_VAR)
    if env:
        lib, err = _try_load(env)
        if lib is None:
            # An explicit choice that fails is an error, not a reason to pick another library.
            raise LibraryNotFound("ffn: %s=%s could not be loaded: %s" % (ENV_VAR, env, err))
        return (_bind(lib, env), _loaded_path(lib, os.path.abspath(env)),
                "the %s environment variable" % ENV_VAR)
    for path, source in _candidates():
        if os.path.isabs(path) and not os.path.exists(path):
            tried.append("  %s: not there" % path)
            continue
        lib, err = _try_load(path)
        if lib is None:
            tried.append("  %s: %s" % (path, err))
            continue
        return _bind(lib, path), _loaded_path(lib, path), source
    raise LibraryNotFound(
        "ffn: libffn was not found. Tried:\n%s\n%s=/path/to/libffn.so chooses one; "
        "`make` builds build/libffn.so, and `pip install ./python` from a built tree bundles it."
        % ("\n".join(tried), ENV_VAR))


def _loaded_path(lib, fallback):
    """The file the loader actually opened (dladdr on one of its symbols, symlinks resolved),
    else `fallback`."""
    class DlInfo(ctypes.Structure):
        _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                    ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]
    try:
        libdl = ctypes.CDLL(None)
        dladdr = libdl.dladdr
    except (OSError, AttributeError):
        return fallback
    info = DlInfo()
    addr = ctypes.cast(lib.ffn_status_string, ctypes.c_void_p)
    if dladdr(addr, ctypes.byref(info)) and info.dli_fname:
        return os.path.realpath(info.dli_fname.decode())
    return fallback


def _bind(lib, path):
    missing = []
    for name, (res, args) in PROTOTYPES.items():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            missing.append(name)
            continue
        fn.restype = res
        fn.argtypes = args
    if missing:
        raise LibraryNotFound("ffn: %s is not a usable libffn: it lacks %s" %
                              (path, ", ".join(missing)))
    return lib
