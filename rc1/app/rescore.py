"""`rc1 audit --rescore`: the run's rewards derived again from its rollout archive.

Three comparisons, each mismatch a finding that names where:
- each sampled completion kept with its text: the rule components scored again from the text and the gold it was
  scored against, the questions it asks back, and the penalty, difficulty factor and reward computed again with the
  run's config and weights file as they are now; a judge's component is derived again from the judge's answer to
  the recorded request in the judge cache (`scorer.cache`), and the request must be in the ledger (rc1 never calls
  the judge again unless told to, `rejudge`: then each judged completion whose item the run's data files hold is
  sent to the judge anew, its request rebuilt and checked against the recorded one, and the new answer compared);
- each training step: the mean reward of its archived completions against the reward its train_step recorded
  (which the trainer computed), so a row edited, added or dropped without its text shows too;
- each GRPO advantage the trainer recorded: the group's rewards normalised again as TRL's GRPOTrainer (and rc1's
  own loop) does
  (reward − group mean) / (group std + 1e-4), groups of `train.num_generations` in the order they were scored;
- each release verdict: computed again from the two gate-set evaluations it was made from.

A live episode's row (data.episodes: live) that keeps its episode is checked against its tools and read again first
(rc1/app/rescore_live.py): each recorded call run again on its item must give back its recorded result, and the reply
scored and the penalty's `c` are read again from its transcript. A live row without one (archived before episodes
were kept) is scored from its text with its `c` as recorded.
"""

from __future__ import annotations

import math
import random
import time
from collections import defaultdict

import msgspec

from rc1.app.release import release_event
from rc1.app.rescore_live import read_live_row
from rc1.app.scoring import policy_thinking
from rc1.config.loading import LoadedConfig
from rc1.core.workspace import Workspace
from rc1.data.environment import wiki_view
from rc1.data.task import TaskItem
from rc1.eventlog.audit import Finding
from rc1.run import events as ev
from rc1.scoring.archive import EVAL_SAMPLED, TRAIN, Rollout, item_of
from rc1.scoring.cache import JudgeCache, request_key
from rc1.scoring.episode_record import Episode
from rc1.scoring.functions import BatchContext, RewardFunctionFailed, StepState
from rc1.scoring.judge import JUDGE_COMPONENT, MalformedAnswer, component, judge_messages, parse_verdict
from rc1.scoring.ledger import read_tail
from rc1.scoring.pipeline import build_judge, components_for, reward_functions, rule_scorer
from rc1.scoring.reward import configured_parts
from rc1.scoring.rules import RULE_COMPONENTS, clarification_count
from rc1.scoring.weights import load_weights
from rc1.views.archive import ShardChanged, archive_shards, read_shard

EXACT = 1e-9  # rc1 computed both: they agree to the last bit, up to float sums' order
TRAINER = 1e-5  # the trainer logs its reward as float32
ADVANTAGE = 1e-3  # …and normalises float32 rewards: a quotient of float32 differences
ALL_UP_TO = 5_000  # a run with this many archived completions or fewer is rescored whole by default
SAMPLE = 1_000


class RescoreReport(msgspec.Struct, kw_only=True):
    completions: int  # archived completions
    rescored: int  # of them, scored again (kept with their text, in the sample)
    steps: int  # training steps whose mean was compared
    verdicts: int  # release verdicts computed again
    replayed: int = 0  # live episodes whose tool calls were run again
    not_replayed: int = 0  # live episodes of items no data file holds (fresh items): read again, tools not run again
    judged: int = 0  # judge components derived again from the judge cache
    judge_unverifiable: int = 0  # judge components whose answer is not in the cache (scorer.cache off)
    rejudged: int = 0  # judge components asked of the judge again (--rejudge)
    seconds: float
    findings: list[Finding]


def rescore(
    ws: Workspace, loaded: LoadedConfig, events: list[ev.Event], sample: int | None, seed: int, rejudge: bool = False
) -> RescoreReport:
    start = time.perf_counter()
    findings: list[Finding] = []
    rows: list[tuple[int, Rollout]] = []  # (the seq of the event vouching for its shard, row)
    shards = archive_shards(events)
    line_of = {shard.seq: shard.seed for shard in shards}  # a step number is a step of one line of training
    for shard in shards:
        try:
            rows += [(shard.seq, row) for row in read_shard(ws.root, shard, verify=False)]
        except ShardChanged as e:
            findings.append(Finding(check="rescore", seq=shard.seq, message=str(e)))
    with_text = [(seq, row) for seq, row in rows if row.completion is not None]
    count = sample if sample is not None else (len(with_text) if len(with_text) <= ALL_UP_TO else SAMPLE)
    chosen = with_text if count >= len(with_text) else random.Random(seed).sample(with_text, count)
    rescored, replayed, not_replayed = _rescore_rows(loaded, chosen, _items_on_disk(ws))
    findings += rescored
    judged, unverifiable, judge_findings = _judge_findings(ws, loaded, chosen)
    findings += judge_findings
    rejudged = 0
    if rejudge:
        rejudged, rejudge_findings = _rejudge_findings(ws, loaded, chosen)
        findings += rejudge_findings
    steps = _train_step_rewards(events)
    findings += _step_findings(rows, steps, line_of)
    if loaded.config.engine.strategy == "grpo":  # TRL's and rc1's loop normalise a group the same way
        findings += _advantage_findings(rows, loaded.config.train.num_generations, line_of)
    verdicts, verdict_findings = _verdict_findings(events)
    return RescoreReport(
        completions=len(rows),
        rescored=len(chosen),
        steps=len(steps),
        verdicts=verdicts,
        replayed=replayed,
        not_replayed=not_replayed,
        judged=judged,
        judge_unverifiable=unverifiable,
        rejudged=rejudged,
        seconds=time.perf_counter() - start,
        findings=findings + verdict_findings,
    )


def _judge_findings(
    ws: Workspace, loaded: LoadedConfig, rows: list[tuple[int, Rollout]]
) -> tuple[int, int, list[Finding]]:
    judged_rows = [(seq, row) for seq, row in rows if row.judge_request is not None]
    if not judged_rows:
        return 0, 0, []
    asked = {record.request_sha256 for record in read_tail(ws.ledger_path, None) if not record.error}
    cache = JudgeCache(ws.scorer_cache_dir) if loaded.config.scorer.cache else None
    judged = unverifiable = 0
    findings = []
    for seq, row in judged_rows:
        where = f"{row.kind} step {row.step} item {row.item_id}"
        if row.judge_request not in asked:
            findings.append(
                Finding(
                    check="rescore",
                    seq=seq,
                    message=f"{where}: its judge request "
                    f"{row.judge_request[:12]} is not in the ledger {ws.ledger_path.name}",
                )
            )
            continue
        answer = cache.get(row.judge_request) if cache is not None else None
        if answer is None:
            unverifiable += 1
            continue
        try:
            again = component(item_of(row), parse_verdict(answer))
        except MalformedAnswer as e:
            findings.append(
                Finding(check="rescore", seq=seq, message=f"{where}: the cached judge answer is not a verdict ({e})")
            )
            continue
        judged += 1
        if again != row.components.get(JUDGE_COMPONENT):
            findings.append(
                Finding(
                    check="rescore",
                    seq=seq,
                    message=f"{where}: judge recorded "
                    f"{row.components.get(JUDGE_COMPONENT)}, the cached answer gives {again}",
                )
            )
    return judged, unverifiable, findings


def _items_on_disk(ws: Workspace) -> dict[str, TaskItem]:
    """The run's items by id, as its data files hold them (a fresh item drawn while training is in none)."""
    from rc1.data.task import read_items

    paths = (ws.pool_path, ws.balanced_pool_path, ws.shadow_path, ws.gate_path)
    return {item.id: item for path in paths if path.exists() for item in read_items(path)}


def _scored_item(row: Rollout, known: dict[str, TaskItem]) -> TaskItem:
    """The item as the scorer saw it: from the data files where they hold it (its prompt, question and context, for
    a function that reads them), scored against the gold and the clarification flag the row records (a live
    episode's item is scored with the flag off: its clarification was the `ask`); else what the row itself keeps."""
    item = known.get(row.item_id)
    if item is None:
        return item_of(row)
    return msgspec.structs.replace(item, answer=row.gold, needs_clarification=row.needs_clarification)


def _rescore_rows(
    loaded: LoadedConfig, rows: list[tuple[int, Rollout]], known: dict[str, TaskItem]
) -> tuple[list[Finding], int, int]:
    """The findings, and how many live episodes' tools were run again and how many could not be (fresh items)."""
    config = loaded.config
    rule = rule_scorer(loaded, policy_thinking(loaded))
    weights = load_weights(loaded.weights_path, components_for(loaded))
    from rc1.data.user_tools import tools_of

    tools = tools_of(loaded)  # yours, run again beside the built-in tools
    functions = reward_functions(loaded)
    live = config.data.episodes == "live"
    findings = []
    replayed = not_replayed = 0  # live episodes whose tools ran again, and those whose item no data file holds
    for seq, row in rows:
        where = f"{row.kind} step {row.step} item {row.item_id}"
        if isinstance(row.episode, Episode):  # the reply and its `c` read again from the episode, its tools run again
            reading = read_live_row(row, row.episode, known, tools, wiki_view(config.data))
            findings += [Finding(check="rescore", seq=seq, message=f"{where}: {p}") for p in reading.problems]
            replayed, not_replayed = replayed + reading.replayed, not_replayed + (not reading.replayed)
            item, text, clarifications = reading.item, reading.text, reading.clarifications
            own = reading.components
        else:
            # A live row archived without its episode: `c` taken as recorded. A one-turn reply's is the questions it
            # asks back, counted again.
            item, text = _scored_item(row, known), row.completion
            clarifications = row.clarifications if live else clarification_count(rule.reply(text).visible)
            own = {}  # a one-turn row has no episode; a live row without one keeps its tool_success as recorded
        try:  # a task checked by a function of yours calls it here
            components = rule.score(item, text, row.tokens)
        except RewardFunctionFailed as e:
            findings.append(Finding(check="rescore", seq=seq, message=f"{where}: scored again: {e}"))
            continue
        # Your reward functions are asked again (the round-1 probe held them deterministic) where the row was
        # scored by them: a sampled evaluation reply was scored by the rules alone.
        yours = [name for name in (functions.names if functions else ()) if name in row.components]
        if yours:
            # What the function was handed beside the completion: its ids where the archive kept them, and the
            # steps done before it was sampled (a training row) or evaluated (an evaluation row).
            done = row.step - 1 if row.kind == TRAIN else row.step
            context = BatchContext(
                completion_ids=[row.completion_ids] if row.completion_ids is not None else None,
                trainer_state=StepState(global_step=done, max_steps=config.train.max_steps),
            )
            try:
                again = functions.score([item], [text], [row.tokens], context)
            except RewardFunctionFailed as e:
                findings.append(Finding(check="rescore", seq=seq, message=f"{where}: scored again: {e}"))
                continue
            components.update({name: again[name][0] for name in yours})
        components.update(own)
        for name in (*RULE_COMPONENTS, *yours, *own):
            if not math.isclose(components[name], row.components.get(name, math.nan), abs_tol=EXACT):
                findings.append(
                    Finding(
                        check="rescore",
                        seq=seq,
                        message=f"{where}: {name} recorded {row.components.get(name)}, scored again {components[name]}",
                    )
                )
        if clarifications != row.clarifications:
            findings.append(
                Finding(
                    check="rescore",
                    seq=seq,
                    message=f"{where}: clarifications recorded {row.clarifications}, counted again {clarifications}",
                )
            )
        # A judge's verdict is taken as recorded; a sampled evaluation reply was scored by the rules alone.
        components.update({k: v for k, v in row.components.items() if k not in components})
        used = {k: weights[k] for k in components} if row.kind == EVAL_SAMPLED else weights
        if set(used) != set(components):
            findings.append(
                Finding(
                    check="rescore",
                    seq=seq,
                    message=f"{where}: components {sorted(components)} but the weights file weighs {sorted(used)}",
                )
            )
            continue
        parts = configured_parts(config.reward, components, used, item, clarifications)
        for name, again, recorded in (
            ("penalty", parts.penalty, row.penalty),
            ("difficulty factor", parts.difficulty_factor, row.difficulty_factor),
            ("reward", parts.total, row.reward),
        ):
            if not math.isclose(again, recorded, abs_tol=EXACT):
                findings.append(
                    Finding(
                        check="rescore", seq=seq, message=f"{where}: {name} recorded {recorded}, computed again {again}"
                    )
                )
    return findings, replayed, not_replayed


def _rejudge_findings(
    ws: Workspace, loaded: LoadedConfig, rows: list[tuple[int, Rollout]]
) -> tuple[int, list[Finding]]:
    """Ask the judge again (paid calls, in the ledger under the scope "rescore") about each judged completion whose
    item the run's data files hold; the rebuilt request must be the recorded one (same judge, rubric and item)."""
    from rc1.train.device import select_device

    judge = build_judge(loaded, ws.ledger_path, ws.scorer_cache_dir, select_device())
    judged_rows = [(seq, row) for seq, row in rows if row.judge_request is not None]
    if judge is None or not judged_rows:
        return 0, []
    items = _items_on_disk(ws)
    rule = rule_scorer(loaded, policy_thinking(loaded))
    findings, asked = [], []
    for seq, row in judged_rows:
        where = f"{row.kind} step {row.step} item {row.item_id}"
        known = items.get(row.item_id)
        if known is None:
            findings.append(
                Finding(
                    check="rescore",
                    seq=seq,
                    message=f"{where}: not in the run's data files (a fresh "
                    "item): its judge request cannot be rebuilt to ask again",
                )
            )
            continue
        item = msgspec.structs.replace(known, answer=row.gold)
        visible = rule.reply(row.completion).visible
        messages = judge_messages(judge.rubric, item, visible)
        if request_key(judge.backend.provider, judge.backend.model, judge.rubric.sha256, messages) != row.judge_request:
            findings.append(
                Finding(
                    check="rescore",
                    seq=seq,
                    message=f"{where}: its judge request rebuilt now differs "
                    "from the recorded one (another judge, rubric or item)",
                )
            )
            continue
        asked.append((seq, row, item, visible))
    judge.ledger.scope = "rescore"
    answers = judge.judged([item for _, _, item, _ in asked], [visible for _, _, _, visible in asked], use_cache=False)
    for (seq, row, _, _), (again, _) in zip(asked, answers, strict=True):
        if again != row.components.get(JUDGE_COMPONENT):
            findings.append(
                Finding(
                    check="rescore",
                    seq=seq,
                    message=f"{row.kind} step {row.step} item {row.item_id}: "
                    f"judge recorded {row.components.get(JUDGE_COMPONENT)}, asked again it gives {again}",
                )
            )
    return len(asked), findings


def _train_step_rewards(events: list[ev.Event]) -> dict[tuple[int | None, int], tuple[int, float]]:
    """(seed, step) -> (seq, reward) of the train_step the run stands on for that step of that line."""
    steps: dict[tuple[int | None, int], tuple[int, float]] = {}
    seed = None
    for event in events:
        if isinstance(event, ev.TrainingStarted):
            seed = event.seed
        elif isinstance(event, ev.TrainStep) and event.components:  # written with the archive
            steps[(seed, event.step)] = (event.seq, event.reward)
    return steps


def _step_findings(rows: list[tuple[int, Rollout]], steps: dict, line_of: dict[int, int | None]) -> list[Finding]:
    rewards: dict[tuple[int | None, int], list[float]] = defaultdict(list)
    for seq, row in rows:
        if row.kind == TRAIN:
            rewards[(line_of[seq], row.step)].append(row.reward)
    findings = []
    for (line, step), (seq, logged) in sorted(steps.items(), key=lambda kv: kv[1][0]):
        archived = rewards.get((line, step))
        if not archived:
            findings.append(Finding(check="rescore", seq=seq, message=f"train step {step}: no archived completion"))
        elif not math.isclose(math.fsum(archived) / len(archived), logged, abs_tol=TRAINER):
            findings.append(
                Finding(
                    check="rescore",
                    seq=seq,
                    message=f"train step {step}: the trainer's reward "
                    f"{logged:.6f}, the archived completions' mean {math.fsum(archived) / len(archived):.6f}",
                )
            )
    return findings


def _advantage_findings(rows: list[tuple[int, Rollout]], group: int, line_of: dict[int, int | None]) -> list[Finding]:
    by_step: dict[tuple[int | None, int], list[tuple[int, Rollout]]] = defaultdict(list)
    for seq, row in rows:
        if row.kind == TRAIN and row.advantage is not None:
            by_step[(line_of[seq], row.step)].append((seq, row))
    findings = []
    for (_, step), members in sorted(by_step.items(), key=lambda kv: (str(kv[0][0]), kv[0][1])):
        for start in range(0, len(members) - group + 1, group):
            chunk = members[start : start + group]
            rewards = [row.reward for _, row in chunk]
            mean = math.fsum(rewards) / group
            std = math.sqrt(math.fsum((r - mean) ** 2 for r in rewards) / (group - 1)) if group > 1 else 0.0
            for seq, row in chunk:
                again = (row.reward - mean) / (std + 1e-4)
                if not math.isclose(again, row.advantage, abs_tol=ADVANTAGE):
                    findings.append(
                        Finding(
                            check="rescore",
                            seq=seq,
                            message=f"train step {step} item {row.item_id}: "
                            f"advantage recorded {row.advantage:.6f}, normalised again {again:.6f}",
                        )
                    )
    return findings


def _verdict_findings(events: list[ev.Event]) -> tuple[int, list[Finding]]:
    base = selected = None
    count, findings = 0, []
    for event in events:
        if isinstance(event, ev.GateSetEvaluated):
            if event.policy == "base":
                base = event
            else:
                selected = event
        elif isinstance(event, ev.ReleaseEvaluated) and event.items == "gate" and base and selected:
            count += 1
            again = release_event(base, selected, event.threshold_pp, event.metric, event.seed, event.release)
            recorded = msgspec.structs.asdict(event)
            for name, value in msgspec.structs.asdict(again).items():
                if name in ("seq", "ts", "run", "v", "prev"):
                    continue
                same = (
                    math.isclose(value, recorded[name], abs_tol=EXACT)
                    if isinstance(value, float)
                    else value == recorded[name]
                )
                if not same:
                    findings.append(
                        Finding(
                            check="rescore",
                            seq=event.seq,
                            message=f"release verdict: {name} recorded {recorded[name]}, computed again {value}",
                        )
                    )
    return count, findings
