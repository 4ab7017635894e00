"""Bring your own reward and data: a TRL-style reward function is a gated, fingerprinted reward component, and a task
rc1 does not know (a JSONL of arithmetic word problems written here) goes through the gates, the held-out sets,
training, the archive and the release verdict like a built-in one."""

import json
import random

import pytest
from conftest import events, make_workspace, rc1_here

from rc1.core.errors import BadInput
from rc1.data.loaders import load_source
from rc1.data.source_ref import Columns, SourceRef
from rc1.data.task import TaskItem
from rc1.scoring.rules import RuleScorer, as_completion

NAMES = (
    "Ava Ben Chloe Dev Ema Finn Gia Hugo Iris Jon Kai Lena Milo Nora Omar Pia Quin Rosa Sam Tara Uma Vic Wes "
    "Xia Yuri Zoe Abel Bea Cruz Dina Eli Faye Gus Hana Ivo Jada Kofi Lior Mina Nils Otto Priya Rhea Sven Tomas "
    "Ugo Vera Wren Yara Zane"
).split()
ADJECTIVES = "red blue green old new tiny large shiny rare plain striped wooden glass paper silver golden spare".split()
THINGS = (
    "apples marbles stamps coins books shells cards pencils stickers buttons seeds beads tokens tickets ribbons "
    "crayons bottles candles kites badges postcards pebbles cupcakes magnets"
).split()
PLACES = "market school park library harbor garden fair museum bakery station farm beach workshop attic cinema".split()
STEPS = {
    "gain": (
        "{s} buys {k} more at the {p}",
        "{o} from the {p} gives {n} {k} {a} {t}",
        "{n} wins {k} {t} in a contest",
        "{s} finds {k} more near the {p}",
        "{k} {a} {t} arrive by mail",
        "{o} adds {k} {a} ones",
    ),
    "lose": (
        "{s} loses {k} of them at the {p}",
        "{n} gives {k} away to {o}",
        "{k} of the {t} get ruined in the rain",
        "{s} donates {k} {t} to the {p}",
        "{n} sells {k} at the {p}",
    ),
    "groups": (
        "{s} receives {m} bags with {k} {t} each",
        "each of {m} cousins brings {k} more",
        "{n} opens {m} boxes holding {k} {a} {t} each",
        "{m} classmates of {o} each hand over {k} more",
    ),
    "double": ("the collection doubles", "{s} trades at the {p} and doubles the pile"),
}
OPEN = ("{n} has {x} {a} {t}", "at the {p}, {n} counts {x} {a} {t}", "{n} keeps {x} {t} in a {a} box")
LINK = ("Then", "After that,", "Later", "Next,", "The following day", "Soon after,", "By noon", "That evening")
ASK = ("How many {t} does {n} have now?", "What is the total number of {t}?", "How many {t} are there in the end?")


def arithmetic_items(n: int, seed: int) -> list[dict]:
    """n word problems of 1 to 7 steps (more steps: longer, more names, numbers and operations), with answers and
    the difficulty their writer declares: 1-2 steps easy, 3-4 medium, 5-7 hard."""
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        fill = {
            "n": rng.choice(NAMES),
            "t": rng.choice(THINGS),
            "p": rng.choice(PLACES),
            "a": rng.choice(ADJECTIVES),
            "s": rng.choice(["she", "he", "they"]),
            "o": rng.choice(NAMES),
        }
        total = rng.randint(12, 95)
        parts = [rng.choice(OPEN).format(x=total, **fill) + "."]
        steps = rng.randint(1, 7)
        for _ in range(steps):
            k, m, fill["o"] = rng.randint(2, 29), rng.randint(2, 6), rng.choice(NAMES)
            step = rng.choice(list(STEPS))
            step = "gain" if step == "lose" and total <= k else step
            total = {"gain": total + k, "lose": total - k, "groups": total + k * m, "double": total * 2}[step]
            parts.append(f"{rng.choice(LINK)} {rng.choice(STEPS[step]).format(k=k, m=m, **fill)}.")
        parts.append(rng.choice(ASK).format(**fill))
        difficulty = "easy" if steps <= 2 else "medium" if steps <= 4 else "hard"
        rows.append(
            {"question": " ".join(p[0].upper() + p[1:] for p in parts), "answer": total, "difficulty": difficulty}
        )
    return rows


# A reward function as TRL takes it. BREVITY_FAILS (read at call time, outside its source: the source is
# fingerprinted) makes it raise on any batch that is not round 1's probe, i.e. during training.
MY_REWARDS = '''"""Short visible replies earn more (a TRL reward function: prompts, completions, columns as kwargs)."""
import os


def brevity(prompts, completions, completion_tokens, **columns):
    if os.environ.get("BREVITY_FAILS") and not any("xyzzy" in c for c in completions):
        raise ValueError("brevity cannot score a batch without its probe")
    return [1.0 if tokens <= 8 else 8 / tokens for tokens in completion_tokens]


def moody(prompts, completions, **columns):
    moody.calls = getattr(moody, "calls", 0) + 1
    return [0.5 if moody.calls % 2 else 0.25 for _ in completions]


def relative(prompts, completions, completion_tokens, **columns):
    mean = sum(completion_tokens) / len(completion_tokens)
    return [max(-1.0, min(1.0, (tokens - mean) / 10)) for tokens in completion_tokens]


def unbounded(prompts, completions, answer, **columns):
    return [float("nan") if a == answer[0] else 0.0 for a in answer]
'''
WEIGHTS = {"correctness": 0.4, "f1": 0.15, "format": 0.2, "length": 0.15, "brevity": 0.1}


def your_workspace(root, *, functions=("brevity",), **changes):
    """The short run with a task of yours (arith, 20 % of the mix, half of the release question) and your functions."""
    weights = {
        **WEIGHTS,
        "format": 0.2 - 0.04 * (len(functions) - 1) / 2,
        "length": 0.15 - 0.04 * (len(functions) - 1) / 2,
        **dict.fromkeys(functions[1:], 0.04),
    }
    root = make_workspace(
        root,
        **{
            "data.pool_size": 400,
            "preflight.min_distinct2": 0.35,  # templated arithmetic is less varied than prose
            "data.tasks": {"arith": {"path": "arith.jsonl", "check": "math"}},
            "data.mix": {"gsm8k": 0.25, "hotpotqa": 0.3, "strategyqa": 0.25, "arith": 0.2},
            "release.tasks": ["hotpotqa", "arith"],
            "reward.functions": [
                {"name": name, "path": f"my_rewards:{name}", "weight": weights[name]} for name in functions
            ],
            **changes,
        },
    )
    (root / "configs/arith.jsonl").write_text("".join(json.dumps(row) + "\n" for row in arithmetic_items(700, 7)))
    (root / "configs/my_rewards.py").write_text(MY_REWARDS)
    (root / "configs/weights.json").write_text(json.dumps(weights))
    return root


@pytest.mark.e2e
def test_your_task_and_reward_function_go_through_gates_training_archive_and_verdict(tmp_path):
    # One checkpoint, one evaluation, and a short warm start of the model built on this pool (no other test's pool
    # is this one, so nothing is cached for it): the suite's time. After 20 warm-start steps most of the tiny model's
    # replies still run to the 24-token limit, which round 2's thinking_fits refuses, rightly: opened here, where the
    # subject is your task's and function's way through the gates, training, the archive and the verdict. (At 10 steps
    # every reply is cut and scores alike: round 2's shadow_run and component_spread refuse that too.)
    root = your_workspace(
        tmp_path, **{"train.max_steps": 4, "model.warm_start_steps": 20, "preflight.max_cut_share": 1.0}
    )
    assert rc1_here(root, "advance", "--until", "R2_PASSED").returncode == 0
    log = events(root)
    probe = next(e for e in log if e["type"] == "check_passed" and e["name"] == "reward_functions")
    assert probe["measured"]["functions"] == 1 and "brevity" in probe["detail"]
    mix = next(e for e in log if e["type"] == "check_passed" and e["name"] == "task_mix")
    assert mix["round"] == 1 and "arith" in json.dumps(mix["measured"])
    pool, shadow, gate = (
        [json.loads(line) for line in (root / f"data/local/{name}.jsonl").read_text().splitlines()]
        for name in ("pool", "shadow", "gate")
    )
    mine = [item for item in pool if item["task"] == "arith"]
    assert len(mine) == 80 and all(item["source"].endswith("configs/arith.jsonl") for item in mine)
    held = {item["question"] for item in shadow + gate if item["task"] == "arith"}
    assert len([i for i in gate if i["task"] == "arith"]) == 24 and all(i["difficulty"] == "hard" for i in gate)
    assert held and not held & {item["question"] for item in mine}  # the held-out share never reaches the pool

    # The task's records are fingerprinted with the config (training reads them again for fresh items): an edit
    # after the gates is refused, naming the file's key, and nothing is appended.
    records = root / "configs/arith.jsonl"
    kept = records.read_bytes()
    records.write_bytes(kept + b'{"question": "How many sides has a square?", "answer": 4}\n')
    before = len(events(root))
    refused = rc1_here(root, "advance")
    assert refused.returncode == 3 and "the content of data.tasks.arith changed" in refused.stderr, refused.stderr
    assert len(events(root)) == before
    records.write_bytes(kept)

    # A function that raises during training fails the run with its traceback; it is never a silent 0.
    failed = rc1_here(root, "advance", env={"BREVITY_FAILS": "1"})
    assert (
        failed.returncode == 1
        and "FATAL" in failed.stderr
        and "reward function brevity raised ValueError" in failed.stderr
    )
    report = json.loads(next((root / "reports").glob("ERROR_*.json")).read_text())
    assert "brevity cannot score a batch" in "".join(report["trace"]) and "my_rewards.py" in "".join(report["trace"])

    resumed = rc1_here(root, "advance", "--all")
    assert resumed.returncode == 0, resumed.stderr
    log = events(root)
    steps = [e for e in log if e["type"] == "train_step"]
    assert steps and all(set(e["components"]) == set(WEIGHTS) for e in steps)
    shown = rc1_here(root, "rollouts", "--step", "2", "--task", "arith", "--json")
    rows = json.loads(shown.stdout)
    assert rows and all(row["task"] == "arith" and "brevity" in row["components"] for row in rows)
    release = [e for e in log if e["type"] == "release_evaluated"][-1]
    assert release["n"] == 60 and release["ci_low_pp"] <= release["hard_gain_pp"] <= release["ci_high_pp"]
    rescored = rc1_here(root, "audit", "--rescore")
    assert rescored.returncode == 0 and "audit passed" in rescored.stdout, rescored.stdout

    # The function's source is part of the config's fingerprint: an edit after the gates is a finding.
    (root / "configs/my_rewards.py").write_text(MY_REWARDS.replace("8 / tokens", "6 / tokens"))
    audit = rc1_here(root, "audit")
    assert audit.returncode == 3 and "config changed since round2 passed" in audit.stdout


@pytest.mark.e2e
def test_round_one_names_each_failing_function_and_the_task_that_is_too_templated(tmp_path):
    root = your_workspace(
        tmp_path, functions=("brevity", "moody", "relative", "unbounded", "missing"), **{"preflight.min_distinct2": 0.6}
    )
    failed = rc1_here(root, "advance")
    assert failed.returncode == 3
    log = events(root)
    probe = next(e for e in log if e["type"] == "check_failed" and e["name"] == "reward_functions")
    assert probe["measured"]["failing"] == 4
    assert "reward function moody answered 0.5 then 0.25 for the same completion of item " in probe["detail"]
    assert "reward function relative answered " in probe["detail"] and " in a batch and alone: " in probe["detail"]
    assert "reward function unbounded answered nan for item " in probe["detail"]
    assert next(
        e for e in log if e.get("name") == "weights" and e["type"] == "check_passed"
    )  # 4 functions, weights sum to 1
    assert "missing (my_rewards:missing) does not import: AttributeError" in probe["detail"]
    distinct = next(e for e in log if e["type"] == "check_failed" and e["name"] == "distinct2")
    assert "arith" in distinct["detail"] and distinct["measured"]["arith"] < 0.6
    assert "round2_passed" not in {e["type"] for e in log}


def test_a_functions_fingerprint_covers_its_package_and_runs_none_of_it(tmp_path):
    from rc1.core.user_code import source_files

    (tmp_path / "mine").mkdir()
    (tmp_path / "mine/__init__.py").write_text("raise RuntimeError('a package that cannot be imported here')\n")
    (tmp_path / "mine/rewards.py").write_text(
        "def f(prompts, completions, **kw):\n    return [0.0] * len(completions)\n"
    )
    (tmp_path / "mine/helpers.py").write_text("X = 1\n")
    assert [p.name for p in source_files("mine.rewards:f", tmp_path)] == ["__init__.py", "helpers.py", "rewards.py"]
    assert source_files("nowhere:f", tmp_path) == []


def test_a_task_checked_by_your_function_scores_correctness_with_it(tmp_path):
    folder = tmp_path
    (folder / "judge_mine.py").write_text(
        "def exact_number(prompts, completions, answer, **kw):\n"
        "    return [1.0 if c.strip().endswith(a) else -0.5 for c, a in zip(completions, answer)]\n"
    )
    from rc1.config.schema import RewardFunctionConfig
    from rc1.scoring.functions import RewardFunction

    def as_configured(name: str) -> RewardFunction:  # text: the completions as strings
        spec = RewardFunctionConfig(name=name, path=f"judge_mine:{name}", weight=0.1, format="text")
        return RewardFunction.load(spec, folder)

    rule = RuleScorer(
        thinking=False,
        max_completion_tokens=64,
        overlong_cache=16,
        checks={"mine": "exact_number"},
        check_function=as_configured,
    )
    item = TaskItem(id="mine-1", task="mine", question="q", answer="42", difficulty="easy", prompt="q")
    assert rule.score(item, as_completion("Answer: 42", False), 4)["correctness"] == 1.0
    assert rule.score(item, as_completion("Answer: 41", False), 4)["correctness"] == 0.0  # -0.5 clipped to 0


def test_a_function_that_checks_a_task_and_is_a_component_is_asked_once_per_batch(tmp_path):
    from rc1.config.schema import RewardFunctionConfig
    from rc1.scoring.functions import RewardFunction, RewardFunctions
    from rc1.scoring.pipeline import ScoringPipeline

    calls = []

    def exact_number(prompts, completions, answer, **kw):
        calls.append(len(completions))
        return [1.0 if c.strip().endswith(a) else 0.0 for c, a in zip(completions, answer)]

    rule = RuleScorer(thinking=False, max_completion_tokens=64, overlong_cache=16, checks={"mine": "exact_number"})
    spec = RewardFunctionConfig(name="exact_number", path="mine:exact_number", weight=0.1, format="text")
    pipeline = ScoringPipeline(rule, None, RewardFunctions([RewardFunction(spec, exact_number)]))
    items = [
        TaskItem(id=f"mine-{i}", task="mine", question="q", answer=str(i), difficulty="easy", prompt="q")
        for i in range(3)
    ]
    scored = pipeline.score(items, [as_completion(f"Answer: {a}", False) for a in (0, 1, 7)], [4, 4, 4])
    assert [s.components["correctness"] for s in scored] == [1.0, 1.0, 0.0]
    assert [s.components["exact_number"] for s in scored] == [1.0, 1.0, 0.0]
    assert calls == [3]  # the batch once: the rule scorer took its answers instead of asking item by item


def test_your_csv_task_splits_held_out_records_by_question_and_names_a_missing_column(tmp_path):
    csv = tmp_path / "qa.csv"
    csv.write_text("prompt,gold\n" + "".join(f"What is {i} plus {i}?,{2 * i}\n" for i in range(200)))
    holed = tmp_path / "holed.csv"
    holed.write_text("prompt,gold\nWhat is 1 plus 1?,2\nWhat is 2 plus 2?,\n")
    with pytest.raises(BadInput, match=r"holed.csv\[1\]: column `gold` is empty"):  # an empty cell, not "nan"
        load_source("mine", SourceRef(path=holed, columns=Columns(question="prompt", answer="gold"), part="all"))
    ref = dict(path=csv, columns=Columns(question="prompt", answer="gold"), held_out_share=0.25)
    pool, held = (load_source("mine", SourceRef(part=part, **ref)) for part in ("pool", "held_out"))
    assert len(pool) + len(held) == 200 and 30 < len(held) < 70
    assert not {i.question for i in pool} & {i.question for i in held}
    assert held[0].answer == str(2 * int(held[0].question.split()[2])) and held[0].task == "mine"
    with pytest.raises(BadInput, match=r"qa.csv: no column 'question' \(it has prompt, gold\); name the columns"):
        load_source("mine", SourceRef(path=csv, columns=Columns(question="question", answer="gold"), part="pool"))
