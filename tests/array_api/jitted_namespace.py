"""``arrjit.numpy`` for the public array API test suite, with the linear algebra run through
``jit``: every ``linalg`` function, and ``matmul``, ``tensordot``, ``vecdot`` and
``matrix_transpose``, is compiled per call signature (non-array arguments static), the rest
runs eagerly.

The suite (https://github.com/data-apis/array-api-tests, not vendored here) runs with::

    git clone --recurse-submodules https://github.com/data-apis/array-api-tests
    cd array-api-tests && pip install -r requirements.txt
    ARRAY_API_TESTS_MODULE="exec('import jitted_namespace; xp = jitted_namespace.namespace')" \\
        PYTHONPATH=/path/to/arrjit/tests/array_api \\
        pytest array_api_tests/test_linalg.py array_api_tests/test_signatures.py -k linalg
"""
from __future__ import annotations

import functools
import types

import numpy as np

import arrjit
import arrjit.numpy as anp

_compiled: dict = {}


def through_jit(name: str, fn):
    """``fn`` compiled for each signature of its array arguments."""
    @functools.wraps(fn)
    def call(*args, **kwargs):
        positions = [k for k, a in enumerate(args) if isinstance(a, (np.ndarray, np.generic))]
        keys = [k for k, v in kwargs.items() if isinstance(v, (np.ndarray, np.generic))]
        static_args = tuple((k, a) for k, a in enumerate(args) if k not in positions)
        static_kwargs = tuple(sorted((k, v) for k, v in kwargs.items() if k not in keys))
        key = (name, len(args), tuple(positions), tuple(keys), static_args, static_kwargs)
        try:
            hash(key)
        except TypeError:
            return fn(*args, **kwargs)            # unhashable configuration: eager
        jitted = _compiled.get(key)
        if jitted is None:
            def traced(*arrays):
                full = list(args)
                for k, a in zip(positions, arrays[:len(positions)]):
                    full[k] = a
                kw = dict(static_kwargs)
                kw.update(zip(keys, arrays[len(positions):]))
                return fn(*full, **kw)
            jitted = _compiled[key] = arrjit.jit(traced)
        return jitted(*[args[k] for k in positions], *[kwargs[k] for k in keys])
    return call


linalg = types.ModuleType("jitted_namespace.linalg")
for _name in anp.linalg.__all__:
    _fn = getattr(anp.linalg, _name)
    setattr(linalg, _name, through_jit(_name, _fn) if _name[0].islower() else _fn)

namespace = types.ModuleType("jitted_namespace")
namespace.__dict__.update({k: v for k, v in vars(anp).items() if not k.startswith("__")})
namespace.__array_api_version__ = anp.__array_api_version__
namespace.__array_namespace_info__ = anp.__array_namespace_info__
for _name in ("matmul", "tensordot", "vecdot", "matrix_transpose"):
    setattr(namespace, _name, through_jit(_name, getattr(anp, _name)))
namespace.linalg = linalg
