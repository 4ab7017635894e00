"""A tool of yours (issue 43, `data.tools_of_yours`): a real module beside a real config, its schema as TRL renders it,
its calls recorded and replayed, the config errors (exit 2), a tool that raises or hangs failing by name, and the
fingerprints of configs without tools as they were."""

import inspect
import re
import threading
import time

import pytest
import yaml
from conftest import REPO
from live_episodes import documented_tool, live_items
from transformers.utils import get_json_schema

from rc1.app.checks import CHECKS
from rc1.checks.spec import RoundInputs
from rc1.checks.tools_of_yours import probe_arguments, tools_of_yours_check
from rc1.config.loading import load_config
from rc1.core.errors import BadInput, ExitCode
from rc1.core.workspace import Workspace
from rc1.data.environment import EpisodeEnvironment, ToolCall, call_tool
from rc1.data.user_tools import ToolOfYoursFailed, load_tools, tools_of
from rc1.scoring.episode_replay import replay_calls
from rc1.train.live_generation import tool_schemas
from rc1.train.live_tools import LiveEnvironment, live_environment_class, live_environment_factory

LOCAL = REPO / "configs" / "local.yaml"


DOC_MODULE, DOC_CONFIG = documented_tool()
MY_TOOLS = (
    DOC_MODULE
    + '''
import time


def explode(text: str) -> str:
    """Always fails.

    Args:
        text: Anything.
    """
    raise RuntimeError("the converter is down")


def sleepy(text: str) -> str:
    """Sleeps past its timeout.

    Args:
        text: Anything.
    """
    time.sleep(3)
    return text


def strict(value: float, unit: str) -> str:
    """The documented tool as first written: a unit it does not know raises.

    Args:
        value: How many of the unit.
        unit: One of km, m, cm.
    """
    return f"{value * {'km': 1000, 'm': 1, 'cm': 0.01}[unit]:g} m"


CALLS = []


def fickle(text: str) -> str:
    """Answers by how often it was called.

    Args:
        text: Anything.
    """
    CALLS.append(text)
    return f"{text} #{len(CALLS)}"


def counted(text: str) -> str:
    """Returns a number although it says str.

    Args:
        text: Anything.
    """
    return len(text)


def undocumented(text: str) -> str:
    return text


def untyped(text) -> str:
    """No type.

    Args:
        text: Anything.
    """
    return text
'''
)


def write_config(folder, tools, **data):
    """configs/local.yaml with the documented changes (live episodes), `tools` as its tools."""
    (folder / "my_tools.py").write_text(MY_TOOLS, encoding="utf-8")
    raw = yaml.safe_load(LOCAL.read_text(encoding="utf-8"))
    raw.setdefault("data", {}).update({**DOC_CONFIG["data"], "tools_of_yours": tools, **data})
    path = folder / "mine.yaml"
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    return path


CONVERT = DOC_CONFIG["data"]["tools_of_yours"][0]  # the documented tool


def test_a_tool_of_yours_loads_with_the_schema_trl_renders(tmp_path):
    loaded = load_config(write_config(tmp_path, [CONVERT]))
    tools = tools_of(loaded)
    assert [t.name for t in tools] == ["convert"] and tools[0].parameters == {"value": float, "unit": str}
    import my_tools

    cls = live_environment_class(tools)
    # TRL's discovery (G:691-702): every public function of the class but reset/get_reward, schema from the method
    found = [n for n, _ in inspect.getmembers(cls, inspect.isfunction) if n not in ("reset", "get_reward")]
    found = [n for n in found if not n.startswith("_")]
    assert found == ["ask", "calc", "convert", "wiki"]
    rendered = get_json_schema(cls({}).convert)
    assert rendered == get_json_schema(my_tools.convert) == tools[0].schema
    assert rendered["function"]["parameters"]["properties"] == {
        "value": {"type": "number", "description": "How many of the unit."},
        "unit": {"type": "string", "description": "One of km, m, cm."},
    }
    assert tool_schemas(tools) == [*tool_schemas()[:2], rendered, tool_schemas()[2]]  # ask, calc, convert, wiki
    assert [s["function"]["name"] for s in tool_schemas()] == ["ask", "calc", "wiki"]  # without: as before
    assert live_environment_class(()) is LiveEnvironment


def test_a_call_is_recorded_in_the_transcript_and_replayed(tmp_path):
    tools = tools_of(load_config(write_config(tmp_path, [CONVERT])))
    item = live_items()[0]
    env = live_environment_factory([item], tools)()
    env.reset(item_id=item.id, prompt=[])
    assert env.convert(value=2, unit="km") == "2000 m"  # as TRL calls it, an int where the schema says number
    assert env.calc(expression="1+1") == "2"
    env.convert(unit="km")  # arguments that are not its call: a recorded failure the model reads
    calls = list(env.transcript)
    assert calls[0] == ToolCall(tool="convert", arguments={"value": 2, "unit": "km"}, result="2000 m", ok=True)
    assert calls[2].tool == "convert" and not calls[2].ok and calls[2].error == "malformed_call"
    assert replay_calls(item, calls, tools) == []
    edited = [calls[0].__class__(tool="convert", arguments=calls[0].arguments, result="3 m", ok=True), *calls[1:]]
    differs = replay_calls(item, edited, tools)
    assert [(d.index, d.tool) for d in differs] == [(0, "convert")] and "'2000 m'" in differs[0].what
    # Without the run's tools the call is an unknown tool, a finding: rescore must replay with them.
    assert [d.index for d in replay_calls(item, calls, ())] == [0, 2]


@pytest.mark.parametrize(
    "tool, message",
    [
        (
            {"name": "conv", "path": "missing_module:convert"},
            r"data\.tools_of_yours\[0\]\.path: missing_module:convert "
            r"does not import: ModuleNotFoundError",
        ),
        ({"name": "wiki", "path": "my_tools:convert"}, r"data\.tools_of_yours\[0\]\.name: 'wiki' is taken"),
        ({"name": "reset", "path": "my_tools:convert"}, r"data\.tools_of_yours\[0\]\.name: 'reset' is taken"),
        (
            {"name": "undocumented", "path": "my_tools:undocumented"},
            r"data\.tools_of_yours\[0\]\.path: "
            r"my_tools:undocumented: no tool schema \(DocstringParsingException",
        ),
        ({"name": "untyped", "path": "my_tools:untyped"}, r"argument text is untyped; a tool's arguments are str"),
        ({"name": "conv", "path": "my_tools.py:convert"}, r"does not import"),
    ],
)
def test_a_tool_that_cannot_be_a_tool_is_a_config_error(tmp_path, tool, message):
    path = write_config(tmp_path, [tool])
    with pytest.raises(BadInput, match=message) as refused:
        tools_of(load_config(path))  # a name at load; an import or a schema where a run first uses them (round 1)
    assert str(refused.value).startswith(str(path)) and refused.value.exit_code == ExitCode.BAD_INPUT == 2


def test_two_tools_of_one_name_and_tools_of_a_recorded_run_are_config_errors(tmp_path):
    with pytest.raises(BadInput, match=r"data\.tools_of_yours\[1\]\.name: 'convert' names two tools"):
        load_config(write_config(tmp_path, [CONVERT, CONVERT]))
    with pytest.raises(BadInput, match=r"data\.tools_of_yours: tools are called in live episodes only"):
        load_config(write_config(tmp_path, [CONVERT], episodes="recorded"))


def test_a_tool_that_raises_fails_by_name_and_the_reward_raises_it_again(tmp_path):
    tools, problems = load_tools(
        load_config(
            write_config(tmp_path, [{"name": "explode", "path": "my_tools:explode"}])
        ).config.data.tools_of_yours,
        tmp_path,
    )
    assert problems == []
    item = live_items()[0]
    env = EpisodeEnvironment(item, tools)
    with pytest.raises(
        ToolOfYoursFailed,
        match=r"tool explode \(my_tools:explode\) raised RuntimeError: the converter "
        r"is down when called with \{'text': 'x'\}",
    ):
        call_tool(env, "explode", {"text": "x"})
    assert env.transcript == () and isinstance(env.failure, ToolOfYoursFailed)
    # Under TRL the method raises (TRL's loop catches it); the environment keeps it for rc1's reward function.
    live = live_environment_factory([item], tools)()
    live.reset(item_id=item.id)
    with pytest.raises(ToolOfYoursFailed):
        live.explode(text="x")
    assert "explode" in str(live.failure)
    from rc1.scoring.pipeline import make_reward_fn

    reward = make_reward_fn(None, {}, pipeline=None)
    with pytest.raises(ToolOfYoursFailed, match="tool explode"):
        reward([item], [[]], [1], None, environments=[live])
    live.reset(item_id=item.id)
    assert live.failure is None


def test_a_tool_that_hangs_past_its_timeout_fails_by_name(tmp_path):
    spec = {"name": "sleepy", "path": "my_tools:sleepy", "timeout_s": 1}
    tools = tools_of(load_config(write_config(tmp_path, [spec])))
    env = EpisodeEnvironment(live_items()[0], tools)
    started = time.monotonic()
    with pytest.raises(ToolOfYoursFailed, match=r"tool sleepy \(my_tools:sleepy\) did not return within 1 s"):
        call_tool(env, "sleepy", {"text": "x"})
    # It gave up at the timeout, not when the function ended: the worker is still sleeping, left behind.
    assert time.monotonic() - started >= 1 and any(t.name == "rc1-tool-sleepy" for t in threading.enumerate())


def test_the_documented_tool_answers_every_probe_call_the_rounds_make(tmp_path):
    loaded = load_config(write_config(tmp_path, [CONVERT]))
    result = tools_of_yours_check(tools_of(loaded))
    assert result.passed and result.measured == {"tools": 1.0, "probe_calls": 3.0, "failing": 0.0}, result.detail
    # what the probe passes: every argument its type's value of the call, an int where the schema says number too
    assert probe_arguments(tools_of(loaded)[0]) == [
        {"value": 0.0, "unit": ""},
        {"value": -1.5, "unit": "xyzzy"},
        {"value": 1e12, "unit": "0"},
    ]
    # rounds 1 and 2 run it from the check table; a run without tools of yours records nothing of it
    entry = next(check for check in CHECKS if check.name == "tools_of_yours")
    assert entry.rounds == (1, 2)
    assert entry.run(RoundInputs(loaded=loaded, ws=Workspace(root=tmp_path, run="local"), round_no=1)).passed
    assert entry.run(RoundInputs(loaded=load_config(LOCAL), ws=Workspace(root=REPO, run="local"), round_no=1)) is None


@pytest.mark.parametrize(
    "spec, why",
    [
        (
            {"name": "strict", "path": "my_tools:strict"},
            r"tool strict \(my_tools:strict\) raised KeyError: '' when called with \{'value': 0\.0, 'unit': ''\}: a "
            r"policy writes such arguments, and a call that fails so fails the batch being trained",
        ),
        ({"name": "explode", "path": "my_tools:explode"}, r"tool explode \(my_tools:explode\) raised RuntimeError"),
        (
            {"name": "sleepy", "path": "my_tools:sleepy", "timeout_s": 0.5},
            r"tool sleepy \(my_tools:sleepy\) did not return within 0\.5 s",
        ),
        (
            {"name": "counted", "path": "my_tools:counted"},
            r"tool counted \(my_tools:counted\) returned int 0, not a str",
        ),
        (
            {"name": "fickle", "path": "my_tools:fickle"},
            r"tool fickle \(my_tools:fickle\) answered ' #\d+' then ' #\d+' when called twice with \{'text': ''\}; "
            r"it must be deterministic",
        ),
    ],
)
def test_a_tool_that_fails_a_call_a_policy_writes_fails_the_round_by_name(tmp_path, spec, why):
    result = tools_of_yours_check(tools_of(load_config(write_config(tmp_path, [CONVERT, spec]))))
    assert not result.passed and result.measured["failing"] == 1.0
    assert re.search(why, result.detail), result.detail
    assert "tool convert" not in result.detail  # the total one is not blamed


def test_the_tool_files_are_fingerprinted_and_configs_without_tools_are_as_they_were(tmp_path):
    path = write_config(tmp_path, [CONVERT])
    before = load_config(path)
    assert set(before.files) == {"data.tools_of_yours.convert"}
    source = tmp_path / "my_tools.py"
    source.write_text(source.read_text() + "\n# an edit\n", encoding="utf-8")
    after = load_config(path)
    assert after.files["data.tools_of_yours.convert"] != before.files["data.tools_of_yours.convert"]
    assert after.sha256 != before.sha256
    plain = load_config(LOCAL)
    assert plain.files == {} and load_config(LOCAL, ["data.tools_of_yours=[]"]).sha256 == plain.sha256


def test_the_warm_start_offers_your_tools_as_training_does_in_a_cache_of_its_own(tmp_path):
    """The built-in model's warm start on gold episodes (rc1/app/policy.py): its prompts offer your tools beside the
    built-in ones, as a live rollout's do (no gold episode calls one); its tokenizer's texts offer the built-in ones
    only, so runs of one pool with and without tools of yours share one base; each set of tools warm-starts apart."""
    from rc1.app.policy import gold_texts, live_pairs, warm_start_dir

    tools = tools_of(load_config(write_config(tmp_path, [CONVERT])))
    items = live_items()
    pairs, plain_pairs = live_pairs(items, tools), live_pairs(items)
    assert all('"name": "convert"' not in text for text in gold_texts(items)) and len(pairs) == len(plain_pairs) > 0
    assert all(
        '"name": "convert"' in prompt and '"name": "convert"' not in plain
        for (prompt, _), (plain, _) in zip(pairs, plain_pairs)
    )
    assert [turn for _, turn in pairs] == [turn for _, turn in plain_pairs]
    base = tmp_path / "tiny-qwen3-live-abc-seed1234"
    assert warm_start_dir(base, 60) == tmp_path / "tiny-qwen3-live-abc-seed1234-sft60"  # the name it always had
    assert warm_start_dir(base, 60, tools).name.startswith("tiny-qwen3-live-abc-seed1234-sft60-tools-")
    other = tools_of(load_config(write_config(tmp_path, [CONVERT, {"name": "fickle", "path": "my_tools:fickle"}])))
    assert warm_start_dir(base, 60, other) != warm_start_dir(base, 60, tools)
