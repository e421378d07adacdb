"""On-disk cache of LLM requests/responses, keyed by SHA-256 of (model, messages, params).

Why: a rebuild with the LLM backend must be reproducible offline — the same prompt
returns the same stored reply and issues no request. One JSON file per request, written
atomically (temp file + rename) so an interrupted build never leaves a torn entry.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any


def request_key(model: str, messages: list[dict], params: dict[str, Any]) -> str:
    blob = json.dumps({"model": model, "messages": messages, "params": params}, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class LLMCache:
    def __init__(self, root: Path | None):
        self.root = Path(root) / "llm" if root is not None else None

    def _path(self, key: str) -> Path | None:
        return self.root / key[:2] / f"{key}.json" if self.root is not None else None

    def get(self, key: str) -> str | None:
        p = self._path(key)
        if p is None or not p.is_file():
            return None
        try:
            return json.loads(p.read_text(encoding="utf-8"))["response"]
        except (OSError, ValueError, KeyError):
            return None  # a corrupt entry is a miss, never an error

    def put(self, key: str, request: dict, response: str) -> None:
        p = self._path(key)
        if p is None:
            return
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_suffix(f".tmp{os.getpid()}")
        text = json.dumps({"request": request, "response": response}, sort_keys=True, ensure_ascii=False, indent=1)
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:  # a reply with a lone surrogate ("\udfff" in the server's JSON): keep it, escaped
            data = json.dumps({"request": request, "response": response}, sort_keys=True, indent=1).encode("ascii")
        tmp.write_bytes(data)
        os.replace(tmp, p)
