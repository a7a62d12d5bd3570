"""Cold versus disk-warm first call, each in a fresh interpreter (``timeraw_``).

Imports (NumPy, arrjit, numba and numba's CPU target) are in the untimed setup; the timed code
is the first call of a jitted function: trace, fuse, codegen, then compile (cold) or load the
machine code from the disk cache (warm).
"""
import os
import subprocess
import sys
import tempfile

PRELUDE_CODE = """
import os, tempfile
os.environ["ARRJIT_CACHE_DIR"] = {cache_dir!r} or tempfile.mkdtemp(prefix="arrjit-cold-")
import numpy as np
import arrjit, arrjit.numpy as anp
from numba.core.registry import cpu_target
cpu_target.target_context.refresh()
x = np.linspace(0, 1, 1000)
"""

FIRST_CALL = """
f = arrjit.jit(lambda a, b: anp.exp(-a * a) * anp.tanh(b) + anp.sqrt(b) + b[::-1])
f(x, x)
"""


class FirstCall:
    timeout = 240
    repeat = 5
    number = 1

    def setup(self):
        self.warm_dir = os.path.join(tempfile.gettempdir(), "arrjit-asv-warm-cache")
        code = PRELUDE_CODE.format(cache_dir=self.warm_dir) + FIRST_CALL
        subprocess.run([sys.executable, "-c", code], check=True)

    def timeraw_cold_first_call(self):
        return FIRST_CALL, PRELUDE_CODE.format(cache_dir="")

    def timeraw_disk_warm_first_call(self):
        return FIRST_CALL, PRELUDE_CODE.format(cache_dir=os.path.join(tempfile.gettempdir(),
                                                               "arrjit-asv-warm-cache"))
