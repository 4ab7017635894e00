"""Live episodes in evaluations (issue 43): every evaluation scores what `evaluate_policy` returned through one
reading (rc1/scoring/pipeline.py `evaluated_inputs`), the same as training's rewards: an under-specified item answered
after an `ask` is checked against its gold answer with the flag off, one answered without asking is wrong, and the
penalty's `c` is the episode's needless asks. The episodes are played against real environments as TRL plays them
(tests/unit/test_episode_outcome.py `Rollout`)."""

from test_episode_outcome import PACK_DIR, Rollout, _answer

from rc1.app.gate_set import correct_counts, score_replies
from rc1.app.rescore import _scored_item
from rc1.data.episodes import dress
from rc1.data.generators import generate
from rc1.data.templates import load_pack
from rc1.scoring.archive import Rollout as Row
from rc1.scoring.pipeline import evaluated_inputs
from rc1.scoring.rules import RuleScorer
from rc1.train.metrics import EvalResult

RULE = RuleScorer(thinking=False, max_completion_tokens=64, overlong_cache=16)


def _items():
    items = generate("gsm8k", 2, 43, "outcome-unclear")
    pack = load_pack(PACK_DIR)
    unclear = dress(items, pack, seed=43, stream="pool", max_turns=1, max_tool_hops=0, clarify_rate=1.0, tools=[])[0]
    assert unclear.needs_clarification
    clear = generate("hotpotqa", 1, 43, "outcome-hotpotqa")[0]
    return unclear, clear


def _evaluated(rollouts: list[Rollout], samples: int) -> EvalResult:
    outcomes = [r.outcome() for r in rollouts]
    return EvalResult(
        item_ids=[r.environment.item.id for r in rollouts],
        completions=[o.final_text for o in outcomes],
        completion_tokens=[8] * len(rollouts),
        seconds=0.0,
        samples=samples,
        outcomes=outcomes,
    )


def test_an_unclear_item_answered_after_an_ask_scores_correct_and_without_asking_wrong():
    unclear, _ = _items()
    asked = Rollout(unclear).said(calls=[("ask", {"question": "How many were there?"})]).said(_answer(unclear))
    unasked = Rollout(unclear).said(_answer(unclear))
    replies = _evaluated([asked, unasked], samples=2)
    scored = score_replies(RULE, [unclear], replies)
    assert [s.components["correctness"] for s in scored] == [1.0, 0.0]
    assert [s.clarifications for s in scored] == [0, 0]  # asks on an item that needed one cost nothing
    assert correct_counts(RULE, [unclear], replies, scored) == [1]
    inputs = evaluated_inputs([unclear], replies)
    assert [item.needs_clarification for item in inputs.items] == [False, False]
    assert inputs.texts == [_answer(unclear), ""]  # the unasked answer is forced wrong, whatever it says


def test_a_needless_ask_is_the_penalty_s_c_and_one_turn_replies_are_scored_as_they_are():
    unclear, clear = _items()
    needless = Rollout(clear).said(calls=[("ask", {"question": "Which one?"})]).said(_answer(clear))
    inputs = evaluated_inputs([clear], _evaluated([needless], samples=1))
    assert inputs.clarifications == [1] and inputs.texts == [_answer(clear)]
    assert score_replies(RULE, [clear], _evaluated([needless], samples=1))[0].clarifications == 1
    one_turn = EvalResult(item_ids=[unclear.id], completions=[_answer(unclear)], completion_tokens=[8], seconds=0.0)
    inputs = evaluated_inputs([unclear], one_turn)
    assert inputs.clarifications is None and inputs.items == [unclear]  # recorded episodes: nothing changes
    assert score_replies(RULE, [unclear], one_turn)[0].components["correctness"] == 0.0  # it asked nothing back


def test_rescore_checks_an_archived_live_row_against_the_item_as_scored():
    unclear, _ = _items()
    row = Row(
        kind="eval",
        step=2,
        item_id=unclear.id,
        task=unclear.task,
        difficulty=unclear.difficulty,
        needs_clarification=False,  # as the live scorer saw it
        gold=unclear.answer,
        prompt_sha256="",
        completion=_answer(unclear),
        tokens=8,
        components={},
        clarifications=0,
        penalty=0.0,
        difficulty_factor=1.0,
        reward=0.0,
    )
    item = _scored_item(row, {unclear.id: unclear})
    assert not item.needs_clarification and item.question == unclear.question
    assert RULE.score(item, row.completion, 8)["correctness"] == 1.0
