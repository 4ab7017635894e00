"""Every command the README and the docs show runs as printed. A ```bash block is run, line by line, in a copy of a
finished run's workspace (the short run every e2e test shares), and each line must exit 0. A block that needs a GPU,
the network or minutes of training is fenced ```bash gpu, ```bash network or ```bash training: its rc1 commands are
parsed by rc1's own parser, its make targets looked up in the Makefile, and nothing is run. Every fenced block names
its language, so a command cannot hide in an untagged block."""

import re
import shlex
import subprocess

import pytest
from conftest import PATIENCE, REPO, finished_with_launcher

from rc1.cli.main import build_parser

pytestmark = pytest.mark.e2e

# The pages a user reads; docs/cli.md, config.md and tables.md are generated from the code and hold no examples.
PAGES = sorted(
    [REPO / "README.md", REPO / "CONTRIBUTING.md", *(REPO / "docs").glob("*.md")],
    key=lambda path: path.relative_to(REPO).as_posix(),
)
GENERATED = {"docs/cli.md", "docs/config.md", "docs/tables.md", "docs/DESIGN.md"}
PARSED_ONLY = {"gpu", "network", "training"}
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```\s*$", re.MULTILINE | re.DOTALL)


def _blocks(page) -> list[tuple[str, str, int]]:
    """(info string, body, line number) of every fenced block of a page."""
    text = page.read_text(encoding="utf-8")
    return [(m.group(1).strip(), m.group(2), text.count("\n", 0, m.start()) + 1) for m in FENCE.finditer(text)]


def _commands(body: str) -> list[str]:
    """The block's commands: a line ending in a backslash goes on, comments and blank lines are no command."""
    joined = re.sub(r"\\\n\s*", " ", body)
    return [line.strip() for line in joined.splitlines() if line.strip() and not line.strip().startswith("#")]


def _pages_with(tag: str | None) -> list:
    cases = []
    for page in PAGES:
        name = page.relative_to(REPO).as_posix()
        if name in GENERATED or not page.exists():
            continue
        for info, body, line in _blocks(page):
            words = info.split()
            if words[:1] != ["bash"]:
                continue
            kind = words[1] if len(words) > 1 else None
            if kind == tag or (tag == "parsed" and kind in PARSED_ONLY):
                cases.append(pytest.param(page, body, id=f"{name}:{line}"))
    return cases


def test_every_page_exists_and_every_fenced_block_names_its_language():
    assert (REPO / "CONTRIBUTING.md").exists() and (REPO / "CHANGELOG.md").exists()
    untagged = [
        f"{page.relative_to(REPO)}:{line}"
        for page in PAGES
        if page.exists()
        for info, _, line in _blocks(page)
        if not info
    ]
    assert not untagged, f"fence these with their language (bash, text, yaml, python, …): {untagged}"
    kinds = {
        info.split()[1]
        for page in PAGES
        if page.exists()
        for info, _, _ in _blocks(page)
        if info.startswith("bash ") and len(info.split()) > 1
    }
    assert kinds <= PARSED_ONLY, f"unknown block tags {kinds - PARSED_ONLY}: use one of {sorted(PARSED_ONLY)}"


def test_the_front_page_is_short_and_its_first_screen_reaches_the_gpu_guide():
    readme = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(readme) <= 200, f"README.md has {len(readme)} lines: the reference belongs in docs/"
    assert any("docs/gpu.md" in line for line in readme[:40]), "the first screen links docs/gpu.md"
    linked = set(re.findall(r"\]\(((?:docs/)?[\w./-]+\.md)", "\n".join(readme)))
    missing = [name for name in linked if not (REPO / name).exists()]
    assert not missing, f"README links pages that do not exist: {missing}"


def _rc1_argv(words: list[str]) -> list[str] | None:
    """The arguments of the rc1 invocation in a command line (`bin/rc1 …`, `rc1 …`, `python -m rc1 …`, or one
    under torchrun, accelerate launch or srun), or None."""
    for index, word in enumerate(words):
        if word in ("rc1", "bin/rc1", "./bin/rc1") or word.endswith("/bin/rc1"):
            return words[index + 1 :]
        if word == "-m" and index + 1 < len(words) and words[index + 1] == "rc1":
            return words[index + 2 :]
    return None


def _make_targets() -> set[str]:
    return set(re.findall(r"^([\w-]+):", (REPO / "Makefile").read_text(), re.MULTILINE))


@pytest.mark.parametrize("page, body", _pages_with("parsed"))
def test_a_block_that_needs_a_gpu_the_network_or_training_parses(page, body):
    parser = build_parser()
    for command in _commands(body):
        for words in _simple_commands(command):
            while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=\S*", words[0]):  # VAR=value before the command
                words = words[1:]
            if words[:1] == ["make"]:
                targets = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
                assert set(targets) <= _make_targets(), f"{command}: no such make target"
            argv = _rc1_argv(words)
            if argv is not None:
                try:
                    parser.parse_args(argv)
                except SystemExit as e:
                    pytest.fail(f"{page.name}: {command!r} does not parse (exit {e.code})")


def _simple_commands(command: str) -> list[list[str]]:
    """A shell line's simple commands, as the shell splits them: words, at `&&`, `||`, `;` and `|`, with
    redirections and what they redirect to left out."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    commands, words, redirected = [], [], False
    for token in lexer:
        if token in ("&&", "||", ";", "|", "&"):
            commands.append(words)
            words, redirected = [], False
        elif token in (">", ">>", "<", ">&", "<&"):
            if words and words[-1].isdigit():  # the 2 of 2>&1
                words.pop()
            redirected = True
        elif redirected:
            redirected = False
        else:
            words.append(token)
    return [*commands, words]


@pytest.fixture
def workspace(completed_run, tmp_path):
    """A copy of the finished run, with `bin/rc1` and `rc1` on its path running this rc1."""
    return finished_with_launcher(completed_run, tmp_path / "ws")


@pytest.mark.parametrize("page, body", _pages_with(None))
def test_a_block_runs_as_printed_on_a_finished_run(page, body, workspace):
    env_path = f"{workspace / 'bin'}:{subprocess.os.environ['PATH']}"
    for command in _commands(body):
        done = subprocess.run(
            ["bash", "-o", "pipefail", "-c", command],
            cwd=workspace,
            capture_output=True,
            text=True,
            timeout=PATIENCE,
            env={**subprocess.os.environ, "PATH": env_path},
        )
        assert done.returncode == 0, f"{page.name}: {command!r} exited {done.returncode}:\n{done.stdout}{done.stderr}"


VENV_ONLY = ("accelerate", "trl", "hf", "torchrun")  # console scripts `make setup` installs into .venv/bin only


@pytest.mark.parametrize("page, body", _pages_with("parsed"))
def test_a_launcher_in_a_block_is_the_venvs_so_it_runs_in_a_fresh_shell(page, body):
    """`make setup` installs accelerate, trl and hf into .venv/bin, not on the PATH: a block that names them bare
    needs an activated venv the page never asks for."""
    for command in _commands(body):
        for words in _simple_commands(command):
            while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=\S*", words[0]):
                words = words[1:]
            if words[:2] == ["srun", "bash"] and len(words) > 3:  # srun bash -c '<command>'
                words = shlex.split(words[3])
            assert not words or words[0] not in VENV_ONLY, f"{page.name}: {command!r}: use .venv/bin/{words[0]}"
