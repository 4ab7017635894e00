"""Live episodes on the record (issue 43): each archived live completion keeps its episode (the messages as TRL hands
them to the reward function, and the environment's calls), `rc1 rollouts` shows it, and `audit --rescore` runs its
tools again and reads its reward again from it. The rollouts are gold trajectories (rc1/data/gold_trajectory.py) played
as TRL plays them against real environments (tests/unit/test_episode_outcome.py `Rollout`), scored by the run's real
reward function (`make_reward_fn` with the environments) and recorded by the real `RolloutRecorder`, through a shard."""

import json

import msgspec
import pytest
import zstandard
from conftest import REPO
from test_episode_outcome import PACK_DIR, Rollout

from rc1.app.rescore import _rescore_rows
from rc1.app.rollouts import RolloutRecorder
from rc1.config.loading import load_config
from rc1.config.recorded import recorded_overrides
from rc1.data.environment import EpisodeEnvironment, call_tool
from rc1.data.episodes import dress
from rc1.data.generators import generate
from rc1.data.gold_trajectory import CLARIFY, gold_calls
from rc1.data.task import TaskItem
from rc1.data.templates import load_pack
from rc1.scoring.archive import EVAL, decode_shard, encode_shard, rows_of
from rc1.scoring.archive import Rollout as Row
from rc1.scoring.episode_outcome import outcome
from rc1.scoring.episode_record import Episode, episode_of, messages_of
from rc1.scoring.episode_replay import replay_calls
from rc1.scoring.pipeline import Scored, ScoringPipeline, components_for, make_reward_fn, rule_scorer
from rc1.scoring.weights import load_weights
from rc1.views.archive import Shard, ShardUnreadable, read_shard
from rc1.views.transcript import episode_lines

TOKENS = 20  # each completion's token count (under local.yaml's train.max_completion_tokens, 24)

RECORDED = recorded_overrides()  # configs/local.yaml as the tiny model runs it, recorded (rc1/config/recorded.py)


@pytest.fixture(scope="module")
def loaded():
    return load_config(REPO / "configs" / "local.yaml", [*RECORDED, "data.episodes=live", "monitors.drift=null"])


@pytest.fixture(scope="module")
def items() -> dict[str, TaskItem]:
    """A clear hotpotqa item (two wiki hops) and an unclear gsm8k one (an ask, then calc steps), dressed live."""
    raw = generate("hotpotqa", 1, 43, "archive-hotpotqa") + generate("gsm8k", 1, 43, "archive-gsm8k")
    pack = load_pack(PACK_DIR)
    dressed = dress(
        raw,
        pack,
        seed=43,
        stream="pool",
        max_turns=3,
        max_tool_hops=2,
        clarify_rate=0.5,
        tools=["wiki", "calc"],
        episodes="live",
    )
    hotpot, gsm8k = dressed
    assert not hotpot.needs_clarification and gsm8k.needs_clarification  # the stream above dresses them so
    return {"hotpot": hotpot, "gsm8k": gsm8k}


def gold(item: TaskItem, then=()) -> Rollout:
    """The item's gold calls, one per turn, then the calls `then` (one per turn), then its answer."""
    rollout = Rollout(item)
    for tool, arguments in [(call.tool, call.arguments) for call in gold_calls(item)] + list(then):
        rollout.said(calls=[(tool, arguments)])
    return rollout.said(f"Answer: {item.answer}")


def archived(loaded, rollouts: list[Rollout], step: int = 1) -> list[Row]:
    config = loaded.config
    recorder = RolloutRecorder(config, weights(loaded))
    pipeline = ScoringPipeline(rule_scorer(loaded, thinking=False))
    reward_fn = make_reward_fn(config.reward, weights(loaded), pipeline, record=recorder.record)
    reward_fn(
        [r.environment.item for r in rollouts],
        [r.messages for r in rollouts],
        [TOKENS] * len(rollouts),
        environments=[r.environment for r in rollouts],
    )
    recorder.close_step(step)
    return decode_shard(recorder.take_shard())


def rescored(loaded, rows: list[Row], known: dict[str, TaskItem]) -> tuple[list[str], int, int]:
    findings, replayed, not_replayed = _rescore_rows(loaded, [(9, row) for row in rows], known)
    return [f.message for f in findings], replayed, not_replayed


def tampered(row: Row, index: int, result: str) -> Row:
    """`row` with call `index`'s result edited, in the transcript and in the tool message the model read."""
    episode = row.episode
    old = episode.calls[index].result
    calls = list(episode.calls)
    calls[index] = msgspec.structs.replace(calls[index], result=result)
    turns = [
        msgspec.structs.replace(t, content=result) if t.role == "tool" and t.content == old else t
        for t in episode.messages
    ]
    return msgspec.structs.replace(row, episode=msgspec.structs.replace(episode, calls=calls, messages=turns))


def test_each_live_row_keeps_its_episode_through_the_archive_and_reads_as_the_rollout(loaded, items):
    rollouts = [gold(items["hotpot"]), gold(items["gsm8k"])]
    rows = archived(loaded, rollouts)
    assert [row.item_id for row in rows] == [items["hotpot"].id, items["gsm8k"].id]
    for row, rollout in zip(rows, rollouts, strict=True):
        item, transcript = rollout.environment.item, rollout.environment.transcript
        assert isinstance(row.episode, Episode)
        assert row.episode == episode_of(item, rollout.messages, transcript)
        assert row.episode.calls == list(transcript) and len(transcript) == len(gold_calls(item))
        assert all(call.ok for call in row.episode.calls)
        # the scorer's item has the flag off; the episode keeps the item's own
        assert not row.needs_clarification and row.episode.needs_clarification == item.needs_clarification
        assert messages_of(row.episode) == rollout.messages  # TRL's messages, rebuilt exactly
        assert outcome(item, messages_of(row.episode), row.episode.calls) == outcome(item, rollout.messages, transcript)
        # whose text is whose: the model's turns (its calls, then its answer) and the tools' results between them
        turns = row.episode.messages
        assert [t.role for t in turns] == ["assistant", "tool"] * len(transcript) + ["assistant"]
        assert [c.name for t in turns for c in t.calls] == [c.tool for c in gold_calls(item)]
        assert [t.content for t in turns if t.role == "tool"] == [c.result for c in transcript]
        assert turns[-1].content == row.completion == f"Answer: {item.answer}"
    assert rows[1].episode.calls[0].tool == "ask" and rows[1].episode.calls[0].arguments == {"question": CLARIFY}


def test_a_one_turn_row_encodes_byte_for_byte_as_before_and_keeps_no_episode():
    row = Row(
        kind="train",
        step=3,
        item_id="gsm8k-000001",
        task="gsm8k",
        difficulty="medium",
        needs_clarification=False,
        gold="42",
        prompt_sha256="ab" * 32,
        completion="Answer: 42",
        tokens=5,
        components={"correctness": 1.0, "format": 1.0},
        clarifications=0,
        penalty=0.0,
        difficulty_factor=1.0,
        reward=0.75,
        advantage=0.5,
    )
    # the line 99c74e1's archive.py writes for this row (before the episode field)
    before = (
        '{"kind":"train","step":3,"item_id":"gsm8k-000001","task":"gsm8k","difficulty":"medium",'
        '"needs_clarification":false,"gold":"42","prompt_sha256":"' + "ab" * 32 + '","completion":"Answer: 42",'
        '"tokens":5,"components":{"correctness":1.0,"format":1.0},"clarifications":0,"penalty":0.0,'
        '"difficulty_factor":1.0,"reward":0.75,"judge_request":null,"advantage":0.5,"completion_ids":null,"logged":{}}'
    )
    assert zstandard.ZstdDecompressor().decompress(encode_shard([row])) == (before + "\n").encode()
    assert decode_shard(encode_shard([row])) == [row] and row.episode is msgspec.UNSET


def test_an_evaluation_s_live_rows_keep_their_episodes_where_their_text_is_kept(loaded, items):
    hotpot = items["hotpot"]
    rollout = gold(hotpot)
    episode = episode_of(hotpot, rollout.messages, rollout.environment.transcript, turn_tokens=[9, 8, 5])
    assert [t.tokens for t in episode.messages] == [9, None, 8, None, 5]  # the model's turns' own tokens
    config = loaded.config
    scored = [Scored(components={"correctness": 1.0, "f1": 1.0, "format": 1.0, "length": 1.0}, clarifications=0)]

    def rows(rollouts):
        return rows_of(EVAL, 0, [hotpot], ["x"], [4], scored, config.reward, weights(loaded), rollouts, [episode])

    assert rows(config.rollouts)[0].episode == episode
    assert decode_shard(encode_shard(rows(config.rollouts)))[0].episode == episode
    none = rows(msgspec.structs.replace(config.rollouts, keep_text="none"))
    assert none[0].episode is msgspec.UNSET and b"episode" not in zstandard.ZstdDecompressor().decompress(
        encode_shard(none)
    )


def weights(loaded) -> dict[str, float]:
    return load_weights(loaded.weights_path, components_for(loaded))


def test_rescore_runs_the_tools_again_and_derives_the_reward_from_the_transcript(loaded, items):
    rows = archived(loaded, [gold(items["hotpot"]), gold(items["gsm8k"])])
    known = {item.id: item for item in items.values()}
    assert rescored(loaded, rows, known) == ([], 2, 0)
    assert rescored(loaded, rows, {}) == ([], 0, 2)  # fresh items: read again, their tools not run again


def test_an_edited_tool_success_is_a_finding(loaded, items):
    """tool_success is read again from the episode's calls, not taken as recorded."""
    (row,) = archived(loaded, [gold(items["hotpot"], then=[("wiki", {"title": "No Such Page"})])])
    assert 0 < row.components["tool_success"] < 1  # one lookup of its calls failed
    edited = msgspec.structs.replace(row, components={**row.components, "tool_success": 1.0})
    (message,) = rescored(loaded, [edited], {items["hotpot"].id: items["hotpot"]})[0]
    assert message.endswith(f"tool_success recorded 1.0, scored again {row.components['tool_success']}")


def test_an_edited_tool_result_is_a_finding_naming_the_step_item_call_and_tool(loaded, items):
    rows = archived(loaded, [gold(items["hotpot"]), gold(items["gsm8k"])], step=4)
    known = {item.id: item for item in items.values()}
    hotpot = tampered(rows[0], 1, f"The answer is {items['hotpot'].answer}.")
    messages, replayed, _ = rescored(loaded, [hotpot, rows[1]], known)
    assert replayed == 2 and len(messages) == 1
    assert messages[0].startswith(
        f"train step 4 item {items['hotpot'].id}: call 1 (wiki) of its transcript: "
        f"result recorded 'The answer is {items['hotpot'].answer}.', the tool gives "
    )
    # a failure recorded as a success (or the reverse) names both
    calls = list(rows[1].episode.calls)
    calls[2] = msgspec.structs.replace(calls[2], ok=False, error="bad_expression")
    flipped = msgspec.structs.replace(rows[1], episode=msgspec.structs.replace(rows[1].episode, calls=calls))
    message, tool_success = rescored(loaded, [flipped], known)[0]
    assert (
        f"item {items['gsm8k'].id}: call 2 (calc) of its transcript: recorded failed (bad_expression), replayed ok"
        in (message)
    )
    # …and the episode read from that record has a failed call its row's tool_success did not count
    assert tool_success.endswith(f"item {items['gsm8k'].id}: tool_success recorded 1.0, scored again 0.75")


def test_the_penalty_s_c_and_the_reply_scored_are_read_again_from_the_episode(loaded, items):
    hotpot, gsm8k = items["hotpot"], items["gsm8k"]
    needless = Rollout(hotpot).said(calls=[("ask", {"question": "Which one?"})]).said(f"Answer: {hotpot.answer}")
    unasked = Rollout(gsm8k).said(f"Answer: {gsm8k.answer}")  # right, but the item needed an ask: forced wrong
    rows = archived(loaded, [needless, unasked])
    assert [row.clarifications for row in rows] == [1, 0] and rows[1].completion == ""
    known = {item.id: item for item in items.values()}
    assert rescored(loaded, rows, known) == ([], 2, 0)
    edited = [
        msgspec.structs.replace(rows[0], clarifications=0),
        msgspec.structs.replace(rows[1], completion=f"Answer: {gsm8k.answer}"),
    ]
    messages = rescored(loaded, edited, known)[0]
    assert f"train step 1 item {hotpot.id}: clarifications recorded 0, counted again 1" in messages
    assert (
        f"train step 1 item {gsm8k.id}: completion recorded 'Answer: {gsm8k.answer}', read again from its episode '' "
        "(the item needed clarification and nobody was asked)" in messages
    )
    flag = msgspec.structs.replace(rows[1], episode=msgspec.structs.replace(rows[1].episode, needs_clarification=False))
    assert (
        f"train step 1 item {gsm8k.id}: its episode records needs_clarification False, the item's is True"
        in rescored(loaded, [flag], known)[0]
    )


def test_a_malformed_archived_episode_is_an_error_naming_the_file_line_and_field(loaded, items, tmp_path):
    (row,) = archived(loaded, [gold(items["hotpot"])])
    line = json.loads(msgspec.json.encode(row))
    line["episode"]["calls"][0]["ok"] = "yes"
    path = tmp_path / "rollouts.jsonl.zst"
    good = msgspec.json.encode(row).decode()
    path.write_bytes(zstandard.ZstdCompressor().compress(f"{good}\n{json.dumps(line)}\n".encode()))
    shard = Shard(kind="train", step=1, seed=None, path=path.name, sha256="", seq=3)
    with pytest.raises(
        ShardUnreadable,
        match=r"rollouts\.jsonl\.zst: line 2: Expected `bool`, got `str` - at `\$\.episode\.calls\[0\]\.ok`",
    ):
        read_shard(tmp_path, shard, verify=False)


def test_a_non_string_tool_name_replays_as_recorded():
    """The one allowance of the replay: a name the model wrote as a number is recorded as its str."""
    item = generate("gsm8k", 1, 43, "archive-gsm8k")[0]
    env = EpisodeEnvironment(item)
    call_tool(env, 5, {"x": 1})
    call_tool(env, "search", {"query": "x"})
    assert replay_calls(item, env.transcript) == []
    edited = [msgspec.structs.replace(c, result=c.result + "!") for c in env.transcript]
    assert [(d.index, d.tool) for d in replay_calls(item, edited)] == [(0, "5"), (1, "search")]


def test_rc1_rollouts_shows_each_call_its_status_a_clipped_result_and_the_answer(loaded, items):
    gsm8k = items["gsm8k"]
    rollout = gold(gsm8k, then=[("calc", {"expression": "1 / 0"})])
    (row,) = archived(loaded, [rollout])
    lines = episode_lines(row, row.episode)
    calls = gold_calls(gsm8k)
    assert lines[0] == f"    {len(calls) + 2} model turn(s), {len(calls) + 1} tool call(s) run"
    assert lines[1].startswith(f"    call 0  ask(question='{CLARIFY}')  ok  → Sorry, I left the number out.")
    assert lines[2] == f"    call 1  calc(expression='{calls[1].arguments['expression']}')  ok  → " + (
        rollout.environment.transcript[1].result
    )
    assert lines[-2] == "    call 4  calc(expression='1 / 0')  failed (division_by_zero)  → " + (
        rollout.environment.transcript[-1].result
    )
    assert lines[-1] == f"    answer: 'Answer: {gsm8k.answer}'"
    assert len(lines[1].split("→ ")[1]) == 60 and lines[1].endswith("…")  # the user's long reply, clipped


@pytest.mark.parametrize(
    "messages",
    [
        "a completion that is not a message list",
        [{"role": "assistant", "content": None}],
        [{"role": "assistant", "content": "x", "tool_calls": "not a list"}, {"role": "tool", "name": 5, "content": 7}],
        [{"role": "system", "content": "?"}, {"role": "assistant", "tool_calls": [{"function": {"name": "wiki"}}]}],
    ],
)
def test_a_completion_trl_never_writes_is_kept_as_its_outcome_reads_it(items, messages):
    """Kept as `outcome` reads it, so the episode read again from the record is the one training read (what it says
    was malformed may name a value by what the record kept of it)."""
    hotpot = items["hotpot"]
    transcript = gold(hotpot).environment.transcript
    episode = decode_shard(encode_shard([_row_with(episode_of(hotpot, messages, transcript))]))[0].episode
    again, read = outcome(hotpot, messages_of(episode), episode.calls), outcome(hotpot, messages, transcript)
    assert again.malformed and read.malformed
    assert msgspec.structs.replace(again, malformed="") == msgspec.structs.replace(read, malformed="")


def _row_with(episode: Episode) -> Row:
    return Row(
        kind="train",
        step=1,
        item_id="x",
        task="hotpotqa",
        difficulty="easy",
        needs_clarification=False,
        gold="",
        prompt_sha256="",
        completion="",
        tokens=0,
        components={},
        clarifications=0,
        penalty=0.0,
        difficulty_factor=1.0,
        reward=0.0,
        episode=episode,
    )
