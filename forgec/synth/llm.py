"""LLM backend (placeholder until filled in)."""
from __future__ import annotations
from dataclasses import dataclass


@dataclass(frozen=True)
class LLMConfig:
    base_url: str = "http://127.0.0.1:8000/v1"
    model: str = "gpt-4o-mini"
    api_key_env: str = "OPENAI_API_KEY"
    max_repair_rounds: int = 3
    timeout: float = 60.0
    max_retries: int = 3
