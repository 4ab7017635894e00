"""Shared helpers: a workspace in a temp dir and the real CLI run as a subprocess."""

from __future__ import annotations

import atexit
import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import yaml

from rc1.config.recorded import RECORDED

REPO = Path(__file__).resolve().parent.parent

# How long any wait here lasts before the test calls it a hang: a guard, never a claim about speed. A loaded 2-core
# machine ran a short run 6× slower than an idle one (>600 s), so waits poll for their condition until this deadline.
PATIENCE = 1800.0

# Real samples of the official GSM8K and StrategyQA files, beside the repository (CI has them).
SHARED = REPO.parent / "shared" / "data"
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/data is not present")

# A short run of the embedded default as it is recorded (rc1/config/recorded.py: the tiny model, every tool step in the
# prompt; `make run`'s live run on the reader takes ~6 minutes of two cores, tests/e2e/test_reader_run.py runs a short
# one): same data, engine and method, fewer steps of fewer prompts, a smaller
# gate set, and a release verdict taken from 2 sampled replies per gate item instead of 8 (the step evaluations'
# hard-item successes too) at a threshold of 10 pp, which 60 items × 2 can tell from noise, so round 2's release_power
# check passes on its own terms. The verdict still runs to its end; at 8 samples its two gate-set evaluations took
# 10.7 s of a 40 s short run (profiled), in every test whose subject is not the verdict (FULL_VERDICT is for those whose
# subject is). Round 2's shadow run samples 2 replies per shadow item instead of 4 (its least): 1 s of each gating.
SHORT = {
    **RECORDED,
    "data.pool_size": 240,
    "data.shadow_size": 30,
    "shadow.samples": 2,
    "train.max_steps": 12,
    "train.save_steps": 4,
    "train.eval_steps": 4,
    "train.per_device_batch_size": 16,
    "train.num_generations": 4,
    "release.gate_size": 60,
    "release.samples": 2,
    "release.min_hard_gain_pp": 10.0,
}

# The embedded default's verdict (configs/local.yaml): 8 sampled replies per gate item, a threshold of 5 pp. For the
# tests whose subject is the verdict as the default takes it (`make_workspace(root, **FULL_VERDICT)`).
FULL_VERDICT = {"release.samples": 8, "release.min_hard_gain_pp": 5.0}


# Under pytest-xdist each worker takes its share of the cores (torch's default is all of them in every process, and
# two workers × two threads on two cores spent more CPU for the same work); the rc1 processes a test starts inherit it.
if "PYTEST_XDIST_WORKER_COUNT" in os.environ:
    os.environ.setdefault(
        "OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // int(os.environ["PYTEST_XDIST_WORKER_COUNT"])))
    )

# Trackio reads TRACKIO_DIR once, when it is first imported, and TRL imports it with its trainers: the tests' own
# store is set before anything here imports TRL, for this process and the rc1 processes it starts.
os.environ["TRACKIO_DIR"] = tempfile.mkdtemp(prefix="rc1-test-trackio-")
atexit.register(shutil.rmtree, os.environ["TRACKIO_DIR"], True)

# What the suite builds once (the built-in model, the completed run) lives in one folder that pytest-xdist's workers
# share: the process that first imports this makes it and removes it at exit, and the workers it starts inherit its
# name. `built_once` makes one worker build while the others wait on a lock.
if "RC1_TEST_SUITE_DIR" not in os.environ:
    os.environ["RC1_TEST_SUITE_DIR"] = tempfile.mkdtemp(prefix="rc1-test-suite-")
    atexit.register(shutil.rmtree, os.environ["RC1_TEST_SUITE_DIR"], True)
SUITE_DIR = Path(os.environ["RC1_TEST_SUITE_DIR"])

# The built-in model and its warm start are cached by the pool they are built on; workspaces of the same
# pool share one cache (rc1 builds under its lock) instead of building and warm-starting it again in every test.
MODELS = SUITE_DIR / "models"
MODELS.mkdir(exist_ok=True)


def pytest_collection_modifyitems(config, items):
    """tests/e2e/ is the e2e mark (`pytest -m "not e2e"`, `make test-unit`): what trains, launches or simulates.

    The order is the order `make test` deals the work out in: first a test of the completed run, whose worker builds
    the built-in model, its warm start and the run (about a minute, under locks every other test of a model waits on);
    then the units marked `long` (minutes each alone: dealt late, one ran on after everything else, the suite's long
    pole), in the order of their places below; then the end-to-end tests that need no model (the simulations); then
    those that need the model but not the completed run; then those that read the completed run; the unit tests last,
    small units that even out the end. Order decides no result."""
    for item in items:
        if "e2e" in Path(item.fspath).parts:
            item.add_marker(pytest.mark.e2e)

    def reads_the_completed_run(item) -> bool:
        return "completed_run" in getattr(item, "fixturenames", ())

    first = next((item for item in items if reads_the_completed_run(item)), None)

    def place(item) -> int:
        if item is first:
            return 0
        if "e2e" not in Path(item.fspath).parts:
            return 4
        if _needs_no_model(Path(item.fspath)):
            return 1
        return 3 if reads_the_completed_run(item) else 2

    def long_units_first(item) -> tuple[int, int, int]:
        # Within a place, a module that builds a module-scoped fixture is one unit of work
        # (`pytest_xdist_make_scheduler`), minutes long for the live and launch modules: dealt first, it runs beside
        # the short units instead of after them.
        module = str(Path(item.fspath).relative_to(REPO))
        kind = 0 if item is first else 1 if item.get_closest_marker("long") is not None else 2
        return kind, place(item), 0 if _builds_a_module_fixture(module) else 1

    items.sort(key=long_units_first)  # stable: within a place and kind, the collected order


_modules_when_frozen = 0


def pytest_runtest_teardown(item, nextitem):
    """After a test that imported a library (the training stack is ~0.5 M objects that live as long as the worker),
    collect once and freeze what is left (`gc.freeze`): every later full collection of CPython's cyclic collector
    then walks only what the tests made since, not the libraries. Measured on a short run in a process with the
    training stack imported: 1.0–1.2 s of its ~19 s was the collector; 0.06 s after a freeze. Nothing rc1 decides
    depends on when the collector runs."""
    global _modules_when_frozen
    if len(sys.modules) > _modules_when_frozen + 100:
        import gc

        gc.collect()
        gc.freeze()
        _modules_when_frozen = len(sys.modules)


@functools.cache
def _needs_no_model(module: Path) -> bool:
    """A test module that never builds a workspace, a run or a model (the simulations)."""
    text = module.read_text(encoding="utf-8")
    return not any(name in text for name in ("make_workspace", "completed_run", "finished_copy", "build_tiny"))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """`make test` (pytest-xdist, --dist loadgroup): a module that builds a module-scoped fixture is one unit of work,
    so the fixture is built once, as on one process; every other test is a unit of its own, so the cores stay busy to
    the end. (xdist's own loadgroup reads groups from node ids, which pytest 9.2 no longer lets it change:
    pytest-dev/pytest-xdist#1386.)"""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    config.option.loadscopereorder = False  # deal the work out in the collected order (pytest_collection_modifyitems)

    class ModuleFixturesTogether(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            return module if _builds_a_module_fixture(module) else nodeid

    return ModuleFixturesTogether(config, log)


@functools.cache
def _builds_a_module_fixture(module: str) -> bool:
    return 'scope="module"' in (REPO / module).read_text(encoding="utf-8")


def built_once(name: str, build) -> Path:
    """`build(root)` once per suite, by whichever worker asks first (the others wait for it); its folder, to be read
    and copied, never changed. A build that failed part-way is done again by the next to ask."""
    from filelock import FileLock

    root = SUITE_DIR / name
    with FileLock(SUITE_DIR / f"{name}.lock", timeout=PATIENCE):
        if not (SUITE_DIR / f"{name}.built").exists():
            shutil.rmtree(root, ignore_errors=True)
            root.mkdir()
            build(root)
            (SUITE_DIR / f"{name}.built").touch()
    return root


def finished_with_launcher(completed_run: Path, root: Path) -> Path:
    """A copy of the finished run at `root`, with `bin/rc1` running this rc1 (put `root / "bin"` on the PATH)."""
    shutil.copytree(completed_run, root, symlinks=True)
    (root / "bin").mkdir(exist_ok=True)
    launcher = root / "bin/rc1"
    launcher.write_text(f'#!/usr/bin/env bash\nexec "{sys.executable}" -m rc1 "$@"\n')
    launcher.chmod(0o755)
    return root


def make_workspace(root: Path, **changes) -> Path:
    """Copy configs/ into root and write configs/short.yaml: local.yaml with SHORT and `changes` applied."""
    shutil.copytree(REPO / "configs", root / "configs")
    (root / "data").mkdir(exist_ok=True)
    (root / "data" / "models").symlink_to(MODELS, target_is_directory=True)
    raw = yaml.safe_load((REPO / "configs" / "local.yaml").read_text())
    for dotted, value in {**SHORT, **changes}.items():
        node = raw
        *parents, leaf = dotted.split(".")
        for key in parents:
            node = node.setdefault(key, {})
        node[leaf] = value
    (root / "configs" / "short.yaml").write_text(
        "# bin/rc1 advance --all --config configs/short.yaml\n" + yaml.safe_dump(raw)
    )
    return root


def rc1(
    root: Path, *args: str, config: str = "configs/short.yaml", timeout: float = PATIENCE, env: dict | None = None, **kw
) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "rc1", *args]
    if args and args[0] not in ("--help",):
        command += ["--config", config]
    env = {**(os.environ if env is None else env), "PYTHONUNBUFFERED": "1"}
    return subprocess.run(command, cwd=root, capture_output=True, text=True, timeout=timeout, env=env, **kw)


def rc1_here(
    root: Path, *args: str, config: str | None = "configs/short.yaml", env: dict | None = None
) -> subprocess.CompletedProcess:
    """`rc1.cli.main.main` in this process, in `root`, with `env` added to the environment: what `rc1` does without
    the ~8 s a new process spends importing the training stack. Tests whose point is the process boundary
    (a kill, an exit code seen by a shell) use `rc1` instead."""
    import contextlib
    import io

    command = [*args, "--config", config] if args and args[0] != "--help" and config is not None else list(args)
    out, err = io.StringIO(), io.StringIO()
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    os.environ.update(env or {})
    os.chdir(root)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = _exit_code(command)
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    return subprocess.CompletedProcess(["rc1", *command], code, out.getvalue(), err.getvalue())


def _exit_code(command: list[str]) -> int:
    """`rc1 <command>`'s exit code, run by `rc1.cli.main.main` in this process."""
    from rc1.cli.main import main

    try:
        return main(command)
    except SystemExit as e:  # argparse
        return e.code if isinstance(e.code, int) else 2


def rc1_forked(root: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """`rc1 <args>` in `root` in a process of its own, with `env` added to the environment: its exit status, stdout
    and stderr, as `rc1` gives them.

    The process is forked from this one, which has imported the training stack already, instead of a new interpreter
    that spends ~8 s importing it again: it is still a process of its own, whose exit status is the kernel's and whose
    files are as it left them (a kill test's SIGKILL is real). Only where torch runs on one thread here (`make test`:
    each xdist worker's share of two cores is one): GNU OpenMP's threads do not survive a fork, and a run on another
    number of threads need not compute the same bits as the in-process run it is compared with. Elsewhere it is `rc1`.
    Tests whose point is a new interpreter (its imports, its resource limits, a timed kill) use `rc1`."""
    import importlib

    import torch

    for engine in ("rc1.train.engine_torch", "rc1.train.engine_trl"):  # what the forked process would otherwise import
        importlib.import_module(engine)  # (not `import rc1.…`: that would bind `rc1` here, over the helper below)

    if torch.get_num_threads() != 1:
        return rc1(root, *args, env={**os.environ, **(env or {})})
    command = [*args, "--config", "configs/short.yaml"]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        pid = os.fork()
        if pid == 0:  # the forked process: run the command, never return into pytest
            code = 1
            try:
                code = _run_forked(root, command, env or {}, out.fileno(), err.fileno())
            finally:
                os._exit(code)
        returncode = _wait(pid)
        out.seek(0), err.seek(0)
        return subprocess.CompletedProcess(
            ["rc1", *command], returncode, out.read().decode(errors="replace"), err.read().decode(errors="replace")
        )


def rc1_killed_at(root: Path, point: str, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """`rc1 <args>` (`advance --all` by default) in a process of its own (`rc1_forked`) that SIGKILLs itself at the
    failpoint `point` (rc1/core/failpoints.py)."""
    return rc1_forked(root, *(args or ("advance", "--all")), env={**(env or {}), "RC1_KILL_AT": point})


def _run_forked(root: Path, command: list[str], env: dict, out: int, err: int) -> int:
    import io
    import traceback

    os.dup2(out, 1), os.dup2(err, 2)
    # new stream objects: the inherited ones are pytest's captures, and another thread may have held their locks
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), line_buffering=True)
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), line_buffering=True)
    try:
        os.chdir(root)
        os.environ.update(env)
        try:
            return _exit_code(command)
        except BaseException:  # as a new interpreter would end
            traceback.print_exc()
            return 1
    finally:
        sys.stdout.flush(), sys.stderr.flush()


def _wait(pid: int) -> int:
    """The forked process's exit status as subprocess gives it (−9: killed by SIGKILL); killed at the deadline."""
    import time

    deadline = time.monotonic() + PATIENCE
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    raise subprocess.TimeoutExpired(["rc1 (forked)"], PATIENCE)


TRAINING_STACK = ("torch", "transformers", "trl", "peft", "datasets")


def training_stack_after(code: str) -> list[str]:
    """The modules of the training stack a fresh interpreter has imported after running `code` in the repository."""
    probe = f"import sys; {code}; print(sorted(m for m in {TRAINING_STACK!r} if m in sys.modules))"
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=PATIENCE, check=True
    )
    return json.loads(result.stdout.strip().replace("'", '"'))


def training_started_fields(step: int = 0, max_steps: int = 4, seed: int = 1234) -> dict:
    """A training_started payload for the domain's tests (a line of seed `seed` of the built-in model on trl×grpo)."""
    return dict(
        resume_from_step=step,
        resume_from_dir=None,
        max_steps=max_steps,
        engine="trl",
        strategy="grpo",
        model="m",
        device="cpu",
        dtype="float32",
        seed=seed,
        seeds=[seed],
    )


def events(root: Path, run: str = "local") -> list[dict]:
    """The log's complete lines (a line being written by a live writer is left out)."""
    path = root / "events" / f"{run}.jsonl"
    if not path.exists():
        return []
    data = path.read_bytes()
    return [json.loads(line) for line in data[: data.rfind(b"\n") + 1].splitlines()]


def types(root: Path) -> list[str]:
    return [e["type"] for e in events(root)]


@pytest.fixture(scope="session")
def completed_run() -> Path:
    """One uninterrupted short run, shared (read-only) by the tests that inspect a finished run, on every worker."""

    def run(root: Path) -> None:
        make_workspace(root)
        result = rc1_forked(root, "advance", "--all")
        assert result.returncode == 0, result.stdout + result.stderr

    return built_once("completed", run)


@pytest.fixture
def finished_copy(completed_run, tmp_path) -> Path:
    """A private copy of the finished run, free to tamper with."""
    copy = tmp_path / "copy"
    shutil.copytree(completed_run, copy, symlinks=True)
    return copy


def launch(root, processes: int, env: dict | None = None, args: tuple[str, ...] = (), command: str = "train"):
    """`rc1 <command>` (train) under torchrun with `processes` CPU ranks (one thread each, as the one-process runs
    here)."""
    return subprocess.run(
        # --standalone: the rendezvous takes a free port itself (no window for another process to take it).
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--standalone",
            "--nproc_per_node",
            str(processes),
            "-m",
            "rc1",
            command,
            *args,
            "--config",
            "configs/short.yaml",
        ],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=PATIENCE,
        env={**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1", **(env or {})},
    )


def failure(launched) -> str:
    """What a failed launch printed: its error lines, then the end of its stderr."""
    why = [
        line
        for line in launched.stderr.splitlines()
        if any(w in line for w in ("Error", "FATAL", "error:", "Traceback"))
    ]
    return "\n".join(why[:40]) + "\n...\n" + launched.stderr[-2000:]
