"""codegen: checked .forge ASTs -> Python env modules (emit.py, jinja2 templates) and their verification (verify.py).

Public API:
    emit_env(env: EnvDecl, source_file: str, et=None) -> str    (et: the checker's EnvTypes of env; else checked here)
    load_env_module(path, name=None) -> ModuleType
    verify.verify_env(module, env, seed=0, calls_per_tool=20) -> VerifyReport
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from forgec.codegen.emit import CodegenError, emit_env

__all__ = ["emit_env", "load_env_module", "CodegenError"]


def load_env_module(path: str | Path, name: str | None = None) -> ModuleType:
    """Import a generated env module from its file under a unique module name (no other side effects).

    The default name derives from the resolved path and the file's bytes, so two builds (or
    two versions of one file) load side by side; loading the same bytes twice reuses the module.
    """
    p = Path(path).resolve()
    data = p.read_bytes()
    if name is None:
        digest = hashlib.sha256(str(p).encode() + b"\0" + data).hexdigest()[:16]
        name = f"_forgec_env_{digest}"
    if name in sys.modules and getattr(sys.modules[name], "__file__", None) == str(p):
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, p)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {p}")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    try:
        spec.loader.exec_module(mod)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return mod
