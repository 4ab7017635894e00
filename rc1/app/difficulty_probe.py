"""Round 1's difficulty probe: the base model's success on the records of each task of yours whose difficulty is
measured (rc1/data/task_difficulty.py), before the pool is drawn from them.

Each probed record is asked as a one-turn episode of the template pack (the system turn and the question, no earlier
turns or tool steps: what the record itself asks), `probe_samples` times with the run's sampling (train.temperature,
top_p, top_k, the completion limit) from a sampler seeded by `run.seed`, and each reply is checked by the task's
`check` as the reward's correctness is. Solved in every reply: easy; in none: hard; else medium.

The labels go to data/<run>/difficulty_probe_<task>.json with what they were measured from (`key`: the model, the
records' sha256, the sampling, the ids), recorded by an artifact_written event; a round 1 run again with the same key
reuses them instead of generating again.
"""

from __future__ import annotations

import hashlib
import json
import time

import msgspec

from rc1.app.datasets import template_pack
from rc1.app.gate_set import Policy, correct_counts, sampled_as_trained
from rc1.app.scoring import policy_thinking
from rc1.app.session import Session
from rc1.core.fsutil import atomic_write_bytes, sha256_file
from rc1.data.episodes import dress
from rc1.data.loaders import your_records
from rc1.data.sources import measuring, your_tasks
from rc1.data.task import TaskItem
from rc1.data.task_difficulty import ProbedItem, ProbeLabels, from_successes, read_labels
from rc1.scoring.pipeline import rule_scorer


def probe_measured_tasks(session: Session) -> list[ProbeLabels]:
    """The labels of every task of yours with a measured difficulty: read back where the same probe ran already,
    else measured now (the base model loaded once, for all of them)."""
    loaded, ws = session.loaded, session.ws
    policy: Policy | None = None
    done = []
    for task, ref in your_tasks(loaded.config.data.tasks, loaded.resolve, "all", measuring(loaded, ws)).items():
        records = your_records(task, ref)
        if records.signal.kind != "measured":
            continue
        path = ref.difficulty.labels
        key = probe_key(session, task, records.items)
        if path.is_file():
            kept = read_labels(path)
            if kept.key == key:
                done.append(kept)
                continue
        if policy is None:
            policy = _base_policy(session)
        labels = probe(session, policy, task, list(records.items), key)
        atomic_write_bytes(path, msgspec.json.format(msgspec.json.encode(labels)))
        session.append(
            session.run.write_artifact(
                str(path.relative_to(ws.root)), sha256_file(path), path.stat().st_size, "difficulty_probe"
            )
        )
        done.append(labels)
    if policy is not None:
        from rc1.train.runtime import free_memory

        device = policy.device
        del policy
        free_memory(device)
    return done


def probe(session: Session, policy: Policy, task: str, records: list[TaskItem], key: str) -> ProbeLabels:
    config = session.config
    spec = config.data.tasks[task]
    k = spec.probe_samples
    print(
        f"  measuring {task}'s difficulty: {len(records)} records × {k} replies of {config.model.name}",
        flush=True,
    )
    asked = _as_asked(session, records)
    started = time.perf_counter()
    replies = sampled_as_trained(config, policy.model, policy.tokenizer, policy.device, asked, k)
    thinking = policy_thinking(session.loaded, policy.tokenizer.chat_template, template_known=True)
    solved = correct_counts(rule_scorer(session.loaded, thinking), asked, replies)
    ended = replies.ended or [True] * len(replies.completions)
    items = [
        ProbedItem(
            id=item.id,
            solved=s,
            cut=sum(not e for e in ended[i * k : (i + 1) * k]),
            difficulty=from_successes(s, k),
        )
        for i, (item, s) in enumerate(zip(records, solved, strict=True))
    ]
    return ProbeLabels(
        task=task,
        key=key,
        model=config.model.name,
        samples=k,
        temperature=config.train.temperature,
        max_completion_tokens=config.train.max_completion_tokens,
        seconds=round(time.perf_counter() - started, 3),
        items=items,
    )


def probe_key(session: Session, task: str, records: tuple[TaskItem, ...]) -> str:
    """What a probe's labels depend on; the same key reuses them."""
    config = session.config
    train = config.train
    basis = {
        "model": config.model.name,
        "thinking": config.model.thinking,
        "records": session.loaded.files.get(f"data.tasks.{task}", ""),
        "check": config.data.tasks[task].check,
        "samples": config.data.tasks[task].probe_samples,
        "sampling": [train.temperature, train.top_p, train.top_k, train.max_completion_tokens, train.max_prompt_tokens],
        "seed": config.run.seed,
        "ids": [item.id for item in records],
    }
    return hashlib.sha256(json.dumps(basis, sort_keys=True).encode()).hexdigest()


def _as_asked(session: Session, records: list[TaskItem]) -> list[TaskItem]:
    """Each record as a one-turn episode: the pack's system turn and the question (its context beside it)."""
    data = session.config.data
    return dress(
        [msgspec.structs.replace(r, difficulty="medium") for r in records],
        template_pack(session.loaded),
        seed=session.config.run.seed,
        stream="probe",
        max_turns=1,
        max_tool_hops=0,
        clarify_rate=0.0,
        tools=list(data.tools),
    )


def _base_policy(session: Session) -> Policy:
    from rc1.app.policy import load_run_policy

    model, tokenizer, device, _ = load_run_policy(session, [])
    return Policy(model, tokenizer, device)
