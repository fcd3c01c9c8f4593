"""Every command the README and the user's guides show exists: each `pipeline` subcommand answers
`--help` and lists every flag shown with it, each `make` target is in the Makefile, and each
example script or shell script shown is there and answers `--help`."""

from __future__ import annotations

import functools
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = ["README.md", "docs/quickstart.md", "docs/agent.md", "docs/models.md", "docs/plugins.md"]
SHELL_BLOCK = re.compile(r"```(?:sh|bash|shell|console)?\n(.*?)```", re.S)
ANY_BLOCK = re.compile(r"```.*?```", re.S)
INLINE = re.compile(r"`([^`\n]+)`")
PROGRAMS = (("pipeline",), (".venv/bin/pipeline",), ("python", "-m", "pipeline"),
            (".venv/bin/python", "-m", "pipeline"))


def commands(text: str) -> list[list[str]]:
    """The commands a page shows: its shell blocks' lines (continuations joined, comments and
    leading VAR=value dropped) and its inline code that starts with a command."""
    lines = [line for block in SHELL_BLOCK.findall(text) for line in block.replace("\\\n", " ").splitlines()]
    lines += [span for span in INLINE.findall(ANY_BLOCK.sub("", text))
              if re.match(r"(pipeline|python|\.venv/bin/|make) ", span)]
    out = []
    for line in lines:
        try:
            tokens = shlex.split(line, comments=True)
        except ValueError:  # prose quotes in an inline span: not a command to run
            continue
        while tokens and re.fullmatch(r"[A-Z_]+=\S*", tokens[0]):
            tokens = tokens[1:]
        if tokens:
            out.append(tokens)
    return out


def shown() -> list[tuple[str, list[str]]]:
    return [(page, tokens) for page in PAGES for tokens in commands((ROOT / page).read_text("utf-8"))]


@functools.cache
def help_of(path: tuple[str, ...]) -> tuple[int, str]:
    proc = subprocess.run([sys.executable, "-m", "pipeline", *path, "--help"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stdout + proc.stderr


def subcommands(help_text: str) -> set[str]:
    """The subcommands a usage line offers (argparse writes them `{a,b} ...`; an option's
    choices have no `...`)."""
    usage = help_text.split("\n\n")[0]
    return {name for group in re.findall(r"\{([\w,-]+)\} \.\.\.", usage) for name in group.split(",")}


def pipeline_args(tokens: list[str]) -> list[str] | None:
    for program in PROGRAMS:
        if tuple(tokens[: len(program)]) == program:
            return tokens[len(program):]
    return None


def check_pipeline(args: list[str]) -> list[str]:
    """What is wrong with one `pipeline ...` command: a subcommand or a flag that is not there."""
    path: list[str] = []
    flags: list[tuple[tuple[str, ...], str]] = []
    positional = False
    for token in args:
        if token.startswith("-") and token != "-":
            flags.append((tuple(path), token.split("=", 1)[0]))
        elif token == "..." or re.fullmatch(r"[A-Z][A-Z_]*", token):  # a placeholder: NAME, N
            positional = True
        elif not positional and (offered := subcommands(help_of(tuple(path))[1])):
            if token not in offered:
                return [f"`pipeline {' '.join(path)}` has no subcommand {token}"]
            path.append(token)
        else:
            positional = True
    rc, text = help_of(tuple(path))
    if rc != 0:
        return [f"`pipeline {' '.join(path)} --help` exited {rc}: {text.strip()[-300:]}"]
    problems = []
    for where, flag in flags:
        if not re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", help_of(where)[1]):
            problems.append(f"`pipeline {' '.join(where)}` has no option {flag}")
    return problems


def test_every_pipeline_command_shown_exists() -> None:
    seen, problems = set(), []
    for page, tokens in shown():
        args = pipeline_args(tokens)
        if args is None or tuple(args) in seen:
            continue
        seen.add(tuple(args))
        problems += [f"{page}: {' '.join(tokens)}: {p}" for p in check_pipeline(args)]
    assert len(seen) >= 10, f"the pages show too few pipeline commands to be read right: {seen}"
    assert not problems, "\n".join(problems)


def test_every_make_target_shown_is_in_the_makefile() -> None:
    makefile = (ROOT / "Makefile").read_text("utf-8")
    targets = set(re.findall(r"^([\w.-]+):", makefile, re.M))
    named = {(page, t) for page, tokens in shown() if tokens[0] == "make"
             for t in tokens[1:] if "=" not in t and not t.startswith("-")}
    assert {"demo", "test"} <= {t for _, t in named}, "the README shows its two commands"
    missing = sorted(f"{page}: make {t}" for page, t in named if t not in targets)
    assert not missing, "not Makefile targets: " + ", ".join(missing)


def test_every_script_shown_is_there_and_answers_help() -> None:
    scripts = {tokens[1] for _, tokens in shown()
               if len(tokens) > 1 and tokens[0] in ("python", "bash", ".venv/bin/python")
               and re.fullmatch(r"(examples|scripts)/[\w.-]+\.(py|sh)", tokens[1])}
    assert "examples/my_agent.py" in scripts
    problems = []
    for script in sorted(scripts):
        if not (ROOT / script).is_file():
            problems.append(f"{script} does not exist")
        elif script.endswith(".py"):
            proc = subprocess.run([sys.executable, script, "--help"], cwd=ROOT, capture_output=True,
                                  text=True, timeout=120, env=_with_root_on_path())
            if proc.returncode != 0 or "usage:" not in proc.stdout:
                problems.append(f"python {script} --help exited {proc.returncode}: {proc.stderr[-300:]}")
    assert not problems, "\n".join(problems)


def _with_root_on_path() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
