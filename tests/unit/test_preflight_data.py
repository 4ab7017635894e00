"""Issue 3's data gate: template pack, episodes, 3-gram KL, framing coverage, difficulty, pre-run check."""

import shutil
from collections import Counter

import msgspec
import pytest
from conftest import REPO

from rc1.app.datasets import GENERATOR_DIFFICULTY_MIX
from rc1.checks.coverage import framing_coverage
from rc1.checks.difficulty import DifficultyLimits, difficulty_check, validate
from rc1.checks.ngram_kl import kl3, ngram_kl
from rc1.checks.scorer import scorer_selfcheck
from rc1.checks.seed_pool import seed_pool_check
from rc1.config.schema import DataConfig
from rc1.core.errors import BadInput
from rc1.data.balance import bucket_counts, rebalance
from rc1.data.difficulty import clue_overlap, measure
from rc1.data.episodes import dress
from rc1.data.pool import build_pool, build_shadow
from rc1.data.templates import load_pack
from rc1.scoring.rules import RuleScorer

PACK_DIR = REPO / "configs" / "templates" / "pack_v2"
MIX = {"hotpotqa": 0.45, "strategyqa": 0.30, "gsm8k": 0.25}
TARGET = {"easy": 0.25, "medium": 0.45, "hard": 0.30}
LIMITS = DifficultyLimits(
    min_hard=0.30,
    max_easy=0.30,
    max_len_tokens=4096,
    max_turns=3,
    max_tool_hops=2,
    max_tool_rounds=6,
    hard_clue_max=0.20,
    easy_clue_min=0.40,
    min_fraction=0.5,
)


@pytest.fixture(scope="module")
def pack():
    return load_pack(PACK_DIR)


@pytest.fixture(scope="module")
def episodes(pack):
    pool = build_pool(1200, MIX, 1234, GENERATOR_DIFFICULTY_MIX)
    return dress(
        pool, pack, seed=1234, stream="pool", max_turns=3, max_tool_hops=2, clarify_rate=0.10, tools=["wiki", "calc"]
    )


# --- template pack ---------------------------------------------------------------------------------


def test_the_shipped_pack_has_six_templates_per_task_four_roles_three_styles(pack):
    assert len(pack.roles) >= 4 and len(pack.styles) >= 3
    assert all(len(pack.tasks[t]) >= 6 for t in ("gsm8k", "hotpotqa", "strategyqa"))
    assert set(pack.tools) == {"wiki", "calc"}


def test_a_pack_too_small_or_with_a_bad_template_is_refused_naming_file_and_key(tmp_path):
    bad = tmp_path / "pack"
    shutil.copytree(PACK_DIR, bad)
    (bad / "styles.yaml").write_text("only: One style.\n")
    text = (bad / "tasks.yaml").read_text().replace('plain: "{question}"', 'plain: "{question} {contxt}"')
    (bad / "tasks.yaml").write_text(text)
    with pytest.raises(BadInput) as error:
        load_pack(bad)
    message = str(error.value)
    assert "styles.yaml: 1 styles; a pack needs at least 3" in message
    assert "tasks.yaml: gsm8k.plain: uses fields ['contxt', 'question']" in message


# --- episodes --------------------------------------------------------------------------------------


def test_episodes_use_every_role_style_and_template_and_an_exact_clarify_share(episodes, pack):
    assert {i.role for i in episodes} == set(pack.roles) and {i.style for i in episodes} == set(pack.styles)
    assert len({i.template for i in episodes}) == sum(len(t) for t in pack.tasks.values())
    assert sum(i.needs_clarification for i in episodes) == round(0.10 * len(episodes))
    assert all(i.turns[0].role == "system" and i.turns[-1].role == "user" for i in episodes)


def test_harder_episodes_have_more_turns_and_tool_steps_up_to_the_caps(episodes):
    def mean(items, f):
        return sum(map(f, items)) / len(items)

    plain = [i for i in episodes if not i.needs_clarification]
    by = {d: [i for i in plain if i.difficulty == d] for d in ("easy", "medium", "hard")}
    users = lambda i: sum(t.role == "user" for t in i.turns)  # noqa: E731
    assert mean(by["easy"], users) == 1 and mean(by["easy"], lambda i: i.tool_hops) == 0
    assert mean(by["hard"], users) > mean(by["medium"], users) > 1
    assert mean(by["hard"], lambda i: i.tool_hops) > mean(by["medium"], lambda i: i.tool_hops) > 0
    assert max(users(i) for i in plain) <= 3 and max(i.tool_hops for i in plain) <= 2
    tools = Counter(t.tool for i in plain for t in i.turns if t.role == "tool")
    assert tools["wiki"] > 0 and tools["calc"] > 0


def test_a_tool_step_returns_real_material(episodes):
    for item in episodes:
        for call, result in zip(item.turns, item.turns[1:]):
            if result.role == "tool" and result.tool == "wiki":
                assert result.content in item.context
            if result.role == "tool" and result.tool == "calc":
                expression = call.content.split('calc("')[1].split('")')[0]
                k, m = map(int, expression.split(" * "))
                assert int(result.content) == k * m and f"{k} " in item.question


def test_an_underspecified_episode_withholds_what_the_question_needs(episodes):
    unclear = [i for i in episodes if i.needs_clarification]
    for item in unclear:
        shown = item.turns[-1].content
        if item.context:
            assert not any(line and line in shown for line in item.context.split("\n"))
        else:
            assert shown != item.question  # its first number is replaced by a vague quantity


def test_a_clarification_is_the_right_reply_to_an_underspecified_item_only(episodes):
    unclear = next(i for i in episodes if i.needs_clarification)
    clear = next(i for i in episodes if not i.needs_clarification)
    rule = RuleScorer(thinking=False, max_completion_tokens=64, overlong_cache=16)
    assert rule.score(unclear, "Which town do you mean?", 6)["correctness"] == 1
    assert rule.score(unclear, f"Answer: {unclear.answer}", 6)["correctness"] == 0
    assert rule.score(clear, "Which town do you mean?", 6)["correctness"] == 0
    assert scorer_selfcheck(episodes, rule).passed


# --- 3-gram KL and coverage ------------------------------------------------------------------------


def test_ngram_kl_passes_on_dressed_episodes_and_is_zero_for_one_framing(episodes):
    result = ngram_kl(episodes, 0.15)
    scopes = ("gsm8k", "hotpotqa", "strategyqa", "overall")
    assert result.passed and all(result.measured[scope] >= 0.15 for scope in scopes), result.detail
    for scope in scopes:  # the total is the sum of its chance-corrected per-dimension terms
        terms = [result.measured[f"{scope}.{d}"] for d in ("template", "role", "style")]
        assert result.measured[scope] == pytest.approx(sum(terms)) and all(t > 0 for t in terms)
    one = [msgspec.structs.replace(i, template="t", role="r", style="s") for i in episodes]
    assert kl3(one) == 0.0
    failed = ngram_kl(one, 0.15)
    assert not failed.passed and "below 0.15" in failed.detail


def test_ngram_kl_is_near_zero_when_framings_are_labels_on_the_same_text(episodes, pack):
    # Every item rendered with one role and style, then labelled with random framings: no real difference.
    same = dress(
        build_pool(1200, MIX, 99),
        msgspec.structs.replace(
            pack,
            roles={"r": "R."},
            styles={"s": "S."},
            tasks={t: {"only": next(iter(v.values()))} for t, v in pack.tasks.items()},
        ),
        seed=1,
        stream="pool",
        max_turns=1,
        max_tool_hops=0,
        clarify_rate=0.0,
        tools=[],
    )
    relabelled = [
        msgspec.structs.replace(i, role=f"r{k % 4}", style=f"s{k % 3}")
        for k, i in enumerate(i for i in same if i.task == "hotpotqa")
    ]
    real = [i for i in episodes if i.task == "hotpotqa"]
    fake = [
        msgspec.structs.replace(i, template=f"t{k % 6}", role=f"r{k % 5}", style=f"s{k % 4}")
        for k, i in enumerate(real)
    ]
    # Labels that do not follow the text score at chance level, which the correction takes to ~0.
    assert kl3(relabelled) < 0.03 and kl3(fake) < 0.03 and kl3(real) > 0.3
    assert not ngram_kl(fake, 0.15).passed


def test_framing_coverage_fails_when_a_task_uses_too_few_roles(episodes):
    assert framing_coverage(episodes, 4, 3).passed
    narrowed = [msgspec.structs.replace(i, role="tutor") if i.task == "gsm8k" else i for i in episodes]
    result = framing_coverage(narrowed, 4, 3)
    assert not result.passed and "gsm8k uses 1 roles (need 4)" in result.detail


# --- difficulty ------------------------------------------------------------------------------------


def test_clue_overlap_is_one_for_a_restated_evidence_sentence_and_zero_for_a_paraphrase():
    context = "Norvel Works was founded by Ada Brenley in 1850.\nAda Brenley was born in Tesmor."
    assert clue_overlap("Norvel Works was founded by Ada Brenley in 1850. Where was its founder born?", context) == 1.0
    assert clue_overlap("Which town is the birthplace of the person who set up Norvel Works?", context) == 0.0


def test_rebalancing_meets_the_target_per_task_and_keeps_the_mix(episodes):
    metrics = [measure(i) for i in episodes]
    balanced = rebalance(episodes, metrics, TARGET, MIX, 1234)
    assert len(balanced.items) >= 0.5 * len(episodes)
    for buckets in balanced.balanced_buckets.values():
        n = sum(buckets.values())
        assert buckets == bucket_counts(n, TARGET) and buckets["hard"] >= 0.30 * n and buckets["easy"] <= 0.30 * n
    tasks = Counter(i.task for i in balanced.items)
    assert all(abs(tasks[t] / len(balanced.items) - s) < 0.01 for t, s in MIX.items())
    result = validate(balanced, len(episodes), {m.id: m for m in metrics}, LIMITS)
    assert result.passed, result.detail


def test_when_a_bucket_cannot_be_filled_the_check_says_which_and_by_how_much(episodes):
    # A pool of generator-easy items only: hardly any measure hard.
    easy_only = [i for i in episodes if i.difficulty == "easy"]
    metrics = [measure(i) for i in easy_only]
    balanced = rebalance(easy_only, metrics, TARGET, MIX, 1234)
    result = validate(balanced, len(easy_only), {m.id: m for m in metrics}, LIMITS)
    assert not result.passed
    assert "/hard has" in result.detail and "short by" in result.detail and "votes hard for" in result.detail


def test_caps_and_clue_medians_fail_with_the_measured_value(episodes):
    metrics = [measure(i) for i in episodes]
    balanced = rebalance(episodes, metrics, TARGET, MIX, 1234)
    tight = msgspec.structs.replace(LIMITS, max_turns=1, easy_clue_min=1.01)
    result = validate(balanced, len(episodes), {m.id: m for m in metrics}, tight)
    assert not result.passed
    assert "turns reaches 3, above the cap 1" in result.detail and "median clue_overlap of easy items" in result.detail


def test_the_shadow_set_dressed_stays_stratified_and_scorable(pack):
    shadow = dress(
        build_shadow(245, MIX, 4242),
        pack,
        seed=4242,
        stream="shadow",
        max_turns=3,
        max_tool_hops=2,
        clarify_rate=0.1,
        tools=["wiki", "calc"],
    )
    cells = Counter((i.task, i.difficulty) for i in shadow)
    assert len(shadow) == 245 and len(cells) == 9 and min(cells.values()) >= 20
    for thinking in (False, True):
        assert scorer_selfcheck(
            shadow, RuleScorer(thinking=thinking, max_completion_tokens=2048, overlong_cache=512)
        ).passed


# --- seed pool -------------------------------------------------------------------------------------


def _data(**changes):
    return DataConfig(
        **{
            "pool_size": 1200,
            "shadow_size": 60,
            "max_turns": 3,
            "max_tool_hops": 2,
            "clarify_rate": 0.10,
            "tools": ["wiki", "calc"],
            **changes,
        }
    )


def test_the_seed_pool_check_passes_on_the_dressed_pool_and_names_its_sha256(episodes, pack):
    result = seed_pool_check(episodes, _data(), pack, "ab" * 32)
    assert result.passed, result.detail
    assert result.measured["items"] == 1200 and result.measured["clarify_share"] == pytest.approx(0.10)
    assert 2 <= result.measured["max_user_turns"] <= 3 and result.measured["max_tool_hops"] == 2
    assert "pool sha256 abababababab" in result.detail and pack.sha256[:12] in result.detail


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"pool_size": 30000}, "1200 items, data.pool_size is 30000"),
        ({"max_turns": 1}, "user turns > data.max_turns 1"),
        ({"max_tool_hops": 1}, "tool hops > data.max_tool_hops 1"),
        ({"clarify_rate": 0.2}, "clarification share 0.1000 vs data.clarify_rate 0.2"),
        ({"tools": ["calc"]}, "tools ['wiki'] used but not in data.tools"),
    ],
)
def test_the_seed_pool_check_fails_when_the_pool_is_not_the_one_configured(episodes, pack, changes, message):
    result = seed_pool_check(episodes, _data(**changes), pack, "ab" * 32)
    assert not result.passed and message in result.detail


def test_episodes_honour_a_lower_tool_hop_cap_and_the_seed_pool_check_agrees(pack):
    capped = dress(
        build_pool(1200, MIX, 1234, GENERATOR_DIFFICULTY_MIX),
        pack,
        seed=1234,
        stream="pool",
        max_turns=3,
        max_tool_hops=1,
        clarify_rate=0.10,
        tools=["wiki", "calc"],
    )
    assert max(item.tool_hops for item in capped) == 1
    assert seed_pool_check(capped, _data(max_tool_hops=1), pack, "ab" * 32).passed


def test_an_undressed_item_in_the_seed_pool_fails_it(episodes, pack):
    raw = [msgspec.structs.replace(episodes[0], turns=[], template="", role="", style="")]
    result = seed_pool_check(episodes[1:] + raw, _data(), pack, "ab" * 32)
    assert not result.passed and "1 items carry no framing of the pack" in result.detail


def test_the_data_stage_builds_from_a_config_and_paths_alone(tmp_path):
    """Stage helpers take the config and the run's paths, not the writing session: the gated inputs can be
    built and checked in-process for an explicit workspace root, and no log or lock comes into being."""
    from rc1.app import datasets
    from rc1.config.loading import load_config
    from rc1.core.workspace import Workspace

    repo = REPO
    shutil.copytree(repo / "configs", tmp_path / "configs")
    loaded = load_config(tmp_path / "configs/local.yaml", ["data.pool_size=120", "data.shadow_size=24"])
    ws = Workspace(root=tmp_path, run=loaded.config.run.name)
    pool, held = datasets.build_seed_pool(loaded, ws), datasets.build_held_out(loaded, ws)
    shadow = held.shadow
    metrics = datasets.measure_all(pool)
    balanced = datasets.balance(loaded.config, pool, metrics)
    ws.reports_dir.mkdir(parents=True, exist_ok=True)
    ws.difficulty_report_path.parent.mkdir(parents=True, exist_ok=True)
    result = difficulty_check(loaded, ws, pool, metrics, balanced)
    assert len(pool) == 120 and len(shadow) == 24 and not {i.id for i in pool} & {i.id for i in shadow}
    assert len(held.gate) == loaded.config.release.gate_size and not {i.id for i in held.gate} & {
        i.id for i in pool + shadow
    }
    assert result.name and ws.difficulty_report_path.exists()
    assert not ws.log_path.exists() and not ws.lock_path.exists()
