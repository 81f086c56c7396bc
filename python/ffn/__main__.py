# `python -m ffn`: which libffn was loaded, from where, and what it runs on.
import sys

try:
    import ffn
except ImportError as e:  # LibraryNotFound lists every place tried
    print(e, file=sys.stderr)
    sys.exit(1)

for k, v in ffn.info().items():
    print("%-15s %s" % (k, v))
