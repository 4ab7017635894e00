"""TRL's own reward functions run as they are: `trl.rewards` functions take conversational completions
(`completion[0]["content"]`), read the gold from a `solution` column, and some are factories of functions that read
`completion_ids`; an `async def` function is awaited within a timeout; answers outside [-1, 1] are scaled or clipped
as the config says, never silently. A config naming them passes round 1, trains, shows each component in `rc1 score`
and `rc1 rollouts`, and passes `audit --rescore`."""

import json
import textwrap

import pytest
from conftest import events, make_workspace, rc1_here

from rc1.config.loading import load_config
from rc1.config.schema import RewardFunctionConfig
from rc1.data.task import TaskItem
from rc1.scoring.functions import BatchContext, RewardFunction, RewardFunctionFailed, RewardFunctions, StepState, call

MY_ASYNC = textwrap.dedent(
    '''
    """An async reward function, as TRL awaits one (a judge-style reward: it would wait on a service)."""
    import asyncio
    import os


    async def polite(prompts, completions, **kwargs):
        await asyncio.sleep(float(os.environ.get("POLITE_SECONDS", "0.01")))
        return [0.5 if "please" in prompts[i][-1]["content"].lower() else 0.0 for i in range(len(completions))]


    def ten_point(completions, **kwargs):
        return [10.0 if "42" in c[0]["content"] else 0.0 for c in completions]
    '''
)
FUNCTIONS = [
    {"name": "think", "path": "trl.rewards:think_format_reward", "weight": 0.1},
    {"name": "accuracy", "path": "trl.rewards:accuracy_reward", "weight": 0.1},
    {
        "name": "overlong",
        "path": "trl.rewards:get_soft_overlong_punishment",
        "kwargs": {"max_completion_len": 64, "soft_punish_cache": 16},
        "weight": 0.05,
    },
    {"name": "polite", "path": "my_async:polite", "weight": 0.05},
]
WEIGHTS = {"correctness": 0.35, "f1": 0.1, "format": 0.15, "length": 0.1, "think": 0.1, "accuracy": 0.1}
WEIGHTS |= {"overlong": 0.05, "polite": 0.05}


def trl_workspace(root, **changes):
    root = make_workspace(
        root,
        **{
            "reward.functions": FUNCTIONS,
            "reward.columns": {"solution": "answer"},
            "reward.weights": "weights_trl.json",
            "train.max_completion_tokens": 64,
            **changes,
        },
    )
    (root / "configs/my_async.py").write_text(MY_ASYNC)
    (root / "configs/weights_trl.json").write_text(json.dumps(WEIGHTS))
    return root


def _item(answer: str, question: str = "What is 6 times 7?") -> TaskItem:
    return TaskItem(
        id=f"i-{answer}", task="gsm8k", question=question, answer=answer, difficulty="easy", prompt=question
    )


def test_trl_s_own_functions_score_conversational_completions_unchanged(tmp_path):
    root = trl_workspace(tmp_path)
    loaded = load_config(root / "configs/short.yaml")
    functions = RewardFunctions.of(loaded.config.reward, root / "configs")
    assert functions.names == ("think", "accuracy", "overlong", "polite") and functions.read_ids
    items = [_item("42"), _item("42"), _item("7", "Please, what is 3 + 4?")]
    completions = ["<think>6 x 7</think>The answer is $\\boxed{42}$.", "The answer is 41.", "<think>hm"]
    ids = [[1] * 10, [1] * 60, [1] * 64]  # 60 of 64 tokens: 12 into the 16-token soft zone
    scored = functions.score(items, completions, [len(i) for i in ids], BatchContext(completion_ids=ids))
    assert scored["think"] == [1.0, 0.0, 0.0]
    assert scored["accuracy"] == [1.0, 0.0, 0.0]  # the gold answer through the `solution` alias
    assert scored["overlong"] == [0.0, -0.75, -1.0]
    assert scored["polite"] == [0.0, 0.0, 0.5]  # prompts are the episode's messages


def test_an_async_function_past_its_timeout_fails_the_batch_naming_it(tmp_path, monkeypatch):
    root = trl_workspace(tmp_path, **{"reward.function_timeout_s": 0.2})
    loaded = load_config(root / "configs/short.yaml")
    functions = RewardFunctions.of(loaded.config.reward, root / "configs")
    monkeypatch.setenv("POLITE_SECONDS", "5")
    with pytest.raises(RewardFunctionFailed, match="polite did not answer within reward.function_timeout_s"):
        functions.score([_item("42")], ["42"], [1], BatchContext(completion_ids=[[1]]))


def test_answers_outside_the_range_are_scaled_or_clipped_as_configured_and_otherwise_refused(tmp_path):
    (tmp_path / "my_async.py").write_text(MY_ASYNC)
    items, completions = [_item("42"), _item("7")], ["42", "no"]

    def configured(**spec) -> RewardFunction:
        spec = RewardFunctionConfig(name="ten", path="my_async:ten_point", weight=0.1, **spec)
        return RewardFunction.load(spec, tmp_path)

    with pytest.raises(RewardFunctionFailed, match=r"ten answered 10.0 for item i-42; it must lie in \[-1, 1\]"):
        call(configured(), items, completions, [1, 1])
    assert call(configured(scale=10.0), items, completions, [1, 1]) == [1.0, 0.0]
    assert call(configured(clip=True), items, completions, [1, 1]) == [1.0, 0.0]
    assert call(configured(scale=20.0), items, completions, [1, 1]) == [0.5, 0.0]


def test_a_factory_and_its_arguments_are_part_of_the_fingerprint(tmp_path):
    root = trl_workspace(tmp_path / "a")
    changed = {**FUNCTIONS[2], "kwargs": {"max_completion_len": 64, "soft_punish_cache": 8}}
    other_root = trl_workspace(tmp_path / "b", **{"reward.functions": [*FUNCTIONS[:2], changed, FUNCTIONS[3]]})
    first = load_config(root / "configs/short.yaml")
    other = load_config(other_root / "configs/short.yaml")
    assert first.sha256 != other.sha256
    assert "reward.functions.overlong" in first.files and first.files["reward.functions.overlong"] != "missing"


def test_trainer_state_is_the_steps_done_before_the_batch(tmp_path):
    (tmp_path / "stepwise.py").write_text(
        "def ramp(completions, trainer_state, **kwargs):\n"
        "    return [trainer_state.global_step / trainer_state.max_steps for _ in completions]\n"
    )
    spec = RewardFunctionConfig(name="ramp", path="stepwise:ramp", weight=0.1)
    ramp = RewardFunction.load(spec, tmp_path)
    context = BatchContext(trainer_state=StepState(global_step=3, max_steps=12))
    assert call(ramp, [_item("1")], ["x"], [1], context) == [0.25]


@pytest.mark.e2e
def test_round_two_names_the_functions_that_score_every_reply_of_the_base_model_alike(tmp_path):
    """The tiny model does not open <think>, write LaTeX, near its 64-token limit or see a "please": TRL's
    think_format_reward, accuracy_reward, the soft overlong punishment and the async polite give each of its replies
    one score, a share of the reward no group's advantage sees. Round 2's component_spread fails, naming them and
    TRL's reasons; length, a built-in component, is noted."""
    root = trl_workspace(tmp_path)
    result = rc1_here(root, "advance", "--until", "R2_PASSED")
    assert result.returncode == 3, result.stderr
    [failed] = [e for e in events(root) if e["type"] == "check_failed"]
    assert failed["name"] == "component_spread" and failed["measured"]["constant"] == 4
    for said in (
        "think is 0 on every reply",
        "it wants the reply to open with <think>",
        "accuracy is 0",
        "polite is 0",
    ):
        assert said in failed["detail"]
    assert "component_spread" in result.stderr and "constant_ok: true" in result.stderr  # the runbook


@pytest.mark.e2e
def test_a_run_rewarded_by_trl_s_functions_trains_shows_each_component_and_passes_audit_rescore(tmp_path):
    # constant on the tiny base model (the test above): noted here, where the subject is how they run
    noted = [{**function, "constant_ok": True} for function in FUNCTIONS]
    root = trl_workspace(tmp_path, **{"train.max_steps": 4, "reward.functions": noted})
    assert rc1_here(root, "advance", "--until", "R1_PASSED").returncode == 0
    probe = next(e for e in events(root) if e["type"] == "check_passed" and e["name"] == "reward_functions")
    assert probe["measured"]["functions"] == 4
    done = rc1_here(root, "advance", "--all")
    assert done.returncode == 0, done.stderr
    steps = [e for e in events(root) if e["type"] == "train_step"]
    assert len(steps) == 4 and all(set(e["components"]) == set(WEIGHTS) for e in steps)
    rows = json.loads(rc1_here(root, "rollouts", "--step", "2", "--json").stdout)
    assert rows and all(set(WEIGHTS) <= set(row["components"]) for row in rows)
    assert all(row["completion_ids"] and len(row["completion_ids"]) == row["tokens"] for row in rows)
    (root / "reply.txt").write_text("<think>6 x 7</think>The answer is $\\boxed{42}$.")
    shown = rc1_here(root, "score", "--task", "gsm8k", "--gold", "42", "--completion-file", "reply.txt", "--json")
    assert shown.returncode == 0, shown.stderr
    assert set(json.loads(shown.stdout)["components"]) == set(WEIGHTS)
    rescored = rc1_here(root, "audit", "--rescore")
    assert rescored.returncode == 0 and "audit passed" in rescored.stdout, rescored.stdout

    # An ablation arm of a run with functions moves a function's weight in its entry as in the weights file.
    ablated = rc1_here(root, "ablate", "--component", "polite", "--json")
    assert ablated.returncode == 0, ablated.stderr
    (arm,) = json.loads(ablated.stdout)["arms"]
    entries = {
        e["name"]: e["weight"]
        for e in json.loads((root / "data/local-without-polite/config.json").read_text())["config"]["reward"][
            "functions"
        ]
    }
    assert entries["polite"] == 0 and entries == {name: arm["weights"][name] for name in entries}


def test_what_a_function_logs_is_kept_with_each_completion(tmp_path):
    """log_extra's columns (TRL's completions table: accuracy_reward logs the gold it parsed) go on each completion's
    archive row; log_metric's values are the batch's, their mean on each row as metric.<name>."""
    from rc1.scoring.pipeline import ScoringPipeline
    from rc1.scoring.rules import RuleScorer

    (tmp_path / "metered.py").write_text(
        "def metered(completions, log_metric, **kwargs):\n"
        "    log_metric('calls', 1.0)\n"
        "    log_metric('calls', 3.0)\n"
        "    return [0.0 for _ in completions]\n"
    )
    specs = [
        RewardFunctionConfig(name="accuracy", path="trl.rewards:accuracy_reward", weight=0.1),
        RewardFunctionConfig(name="metered", path="metered:metered", weight=0.1),
    ]
    functions = RewardFunctions([RewardFunction.load(spec, tmp_path, {"solution": "answer"}) for spec in specs])
    rule = RuleScorer(thinking=False, max_completion_tokens=64, overlong_cache=16)
    scored = ScoringPipeline(rule, None, functions).score([_item("42"), _item("7")], ["$\\boxed{42}$", "no"], [4, 1])
    assert [s.logged["solution"] for s in scored] == ["42", "7"]
    assert scored[0].logged["answer_parsed"] != "[unparseable]" and scored[1].logged["answer_parsed"] == "[unparseable]"
    assert all(s.logged["metric.calls"] == "2.0" for s in scored)
