"""What several commands share, so that no command imports another: loading a build for a command (through
`forgec.runtime.load`, the one reader of a build) with its diagnostics and exits, the option help texts, and the
training configuration's loading and display (`train`, `sft`)."""

from __future__ import annotations

from pathlib import Path

import typer

from forgec.train.config import TrainConfig

ALLOW_MODIFIED_HELP = ("Use the build even if generated files (env modules, states, tasks) differ from manifest.json "
                       "or are missing; without it such a build is refused (corrupt-build).")


def load_build(build: Path, allow_modified_build: bool):
    """Load a build for a command (eval, play); integrity problems exit 1, accepted ones print a warning."""
    from forgec import diagnostics as D
    from forgec.runtime import BuildError, load

    try:
        b = load(build, allow_modified_build=allow_modified_build)
    except BuildError as e:
        D.emit(e.diagnostic())
        raise typer.Exit(D.EXIT_ERRORS) from None
    if b.modified:
        import dataclasses

        w = D.warning("corrupt-build", f"using a modified build ({len(b.modified)} file(s) differ from manifest.json), "
                      "as --allow-modified-build asked", D.Span(str(build / "manifest.json")),
                      help="results may not match the tasks' gold states; recompile for a faithful build")
        D.emit(dataclasses.replace(w, notes=tuple(b.modified[:20])))
    return b


def _keys() -> str:
    from pydantic import BaseModel

    keys = []
    for name, f in TrainConfig.model_fields.items():
        ann = f.annotation
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            keys += [f"{name}.{k}" for k in ann.model_fields]
        else:
            keys.append(name)
    return ", ".join(keys)


SET_HELP = "Override a config field, KEY=VALUE (YAML value); repeatable. `--show-config` prints every field with its help. Keys: " + _keys()


def load_or_exit(config: str | None, overrides: list[str], output: str | None):
    from forgec.train.config import ConfigError, load_config

    try:
        sets = list(overrides) + ([f"output={output}"] if output else [])
        return load_config(config, sets)
    except ConfigError as e:
        from forgec.diagnostics import fail

        fail("train-config", str(e), help=_did_you_mean(str(e)))


def _did_you_mean(message: str) -> str:
    """`optim.stepz: Extra inputs are not permitted` -> a help naming `optim.steps` ("" when nothing is near)."""
    import difflib
    import re

    keys = _keys().split(", ")
    hints = []
    for bad in re.findall(r"^\s*([\w.]+): Extra inputs are not permitted", message, flags=re.M):
        near = difflib.get_close_matches(bad, keys, n=1, cutoff=0.6)
        if near:
            hints.append(f"`{bad}` -> `{near[0]}`")
    return ("did you mean " + ", ".join(hints) + "?") if hints else ""


def build_failed(e) -> None:
    """A `BuildError` from loading the build: its diagnostic on stderr, exit 1."""
    from forgec import diagnostics as D

    D.emit(e.diagnostic())
    raise typer.Exit(D.EXIT_ERRORS) from None


def check_build(build: Path, allow_modified_build: bool) -> None:
    """Verify the build against its manifest (a few ms) so a tampered build fails before torch loads."""
    from forgec.runtime.loader import BuildError, load

    try:
        load(build, allow_modified_build=allow_modified_build)
    except BuildError as e:
        build_failed(e)


def show_config(cfg) -> None:
    import yaml

    from forgec.train.config import config_help_markdown

    typer.echo(config_help_markdown())
    typer.echo("## Resolved configuration\n")
    typer.echo(yaml.safe_dump(cfg.model_dump(mode="json"), sort_keys=True))
    from forgec.train.cluster import plan_text

    typer.echo(plan_text(cfg))


def user_factory(user: str, o: dict):
    """The simulated user of `--user scripted|llm` (eval and serve's episodes: one choice, one error)."""
    from forgec.diagnostics import usage_error
    from forgec.runtime.users import LLMUser, ScriptedUser

    if user == "scripted":
        return ScriptedUser
    if user == "llm":
        if not (o["user_base_url"] and o["user_model"]):
            usage_error("--user llm needs --user-base-url and --user-model")
        return lambda task, trial: LLMUser(task, o["user_base_url"], o["user_model"], timeout=o["timeout"],
                                           max_retries=o["max_retries"], seed=o["seed"] * 1_000_003 + trial)
    usage_error(f"unknown --user {user!r}; choose scripted or llm")


def judge_for(judge: str, o: dict):
    """The judge of `--judge rule|llm|none` (eval and serve's episodes)."""
    from forgec.diagnostics import usage_error
    from forgec.runtime.judge import LLMJudge, RuleJudge

    if judge == "rule":
        return RuleJudge()
    if judge == "none":
        return None
    if judge == "llm":
        if not (o["judge_base_url"] and o["judge_model"]):
            usage_error("--judge llm needs --judge-base-url and --judge-model")
        return LLMJudge(o["judge_base_url"], o["judge_model"], timeout=o["timeout"], max_retries=o["max_retries"], seed=o["seed"])
    usage_error(f"unknown --judge {judge!r}; choose rule, llm or none")


def check_server_limits(port: int, max_sessions: int, idle_timeout: float, body_limit: int) -> None:
    """The bounds `forgec serve` and `forgec serve-openenv` both take, as usage errors (one wording for both)."""
    from forgec import diagnostics as D

    if not 0 <= port <= 65535:
        D.usage_error(f"--port must be between 0 and 65535, not {port}")
    if max_sessions < 1:
        D.usage_error(f"--max-sessions must be at least 1, not {max_sessions}")
    if not idle_timeout > 0:
        D.usage_error(f"--idle-timeout must be a positive number of seconds, not {idle_timeout}")
    if body_limit < 1024:
        D.usage_error(f"--body-limit must be at least 1024 bytes, not {body_limit}")
