"""forgec.runtime: load a build, run episodes (agent, simulated user, env), reward, MEU judge, pass^k.

`load(build_dir)` is the entry point; see docs/runtime.md. Importing this
package is cheap (no openai, torch or transformers until an LLM/HF party is used).
"""

from forgec.runtime.loader import Build, BuildError, load

__all__ = ["Build", "BuildError", "load"]
