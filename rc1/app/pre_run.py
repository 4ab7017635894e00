"""Round 2's checks that the inputs it is about to train and evaluate on are the ones round 1 built: the balanced
pool rebuilds to the file on disk, and the shadow set matches its manifest and shares nothing with training."""

from __future__ import annotations

import json

from rc1.app.session import Session
from rc1.checks.result import CheckResult
from rc1.checks.spec import Check
from rc1.core.fsutil import sha256_file
from rc1.core.runbook import Runbook
from rc1.data.balance import Balanced
from rc1.data.task import TaskItem


def same_balanced_pool(on_disk: list[TaskItem], rebuilt: Balanced) -> CheckResult:
    same = on_disk == rebuilt.items
    return CheckResult(
        name="balanced_pool_reproduces",
        passed=same,
        measured={"on_disk": float(len(on_disk)), "rebuilt": float(len(rebuilt.items)), "identical": float(same)},
        thresholds={"identical": 1.0},
        detail="rebalancing the seed pool gives the balanced pool on disk"
        if same
        else "rebalancing the seed pool no longer gives the balanced pool on disk: rebuild it with `rc1 advance` from "
        "INIT",
    )


def pre_run_shadow_check(session: Session, shadow: list[TaskItem], train_pool: list[TaskItem]) -> CheckResult:
    """The shadow set about to be evaluated is the one materialized, and training never sees it."""
    problems = []
    path = session.ws.shadow_manifest_path
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        manifest = {}
        problems.append(f"{path}: unreadable ({e})")
    if manifest and manifest.get("sha256") != sha256_file(session.ws.shadow_path):
        problems.append(f"{session.ws.shadow_path}: sha256 differs from its manifest")
    if manifest and manifest.get("ids") != [item.id for item in shadow]:
        problems.append("shadow ids differ from the manifest's")
    shadow_questions = {item.question for item in shadow}
    shadow_ids = {item.id for item in shadow}
    seen = sum(1 for item in train_pool if item.id in shadow_ids or item.question in shadow_questions)
    if seen:
        problems.append(f"{seen} training items share an id or a question with the shadow set")
    return CheckResult(
        name="shadow_pre_run",
        passed=not problems,
        tags=["pre_run_check"],
        measured={
            "shadow_items": float(len(shadow)),
            "training_items_seen_in_shadow": float(seen),
            "manifest_ok": float(bool(manifest) and not problems),
        },
        thresholds={"training_items_seen_in_shadow": 0.0},
        detail="; ".join(problems)
        if problems
        else f"{len(shadow)} shadow items match their manifest; none is in the training pool",
    )


BALANCED_POOL_REPRODUCES = Check(
    name="balanced_pool_reproduces",
    rounds=(2,),
    run=lambda r: same_balanced_pool(r.on_disk_balanced, r.balanced),
    runbook=Runbook(
        means="rebalancing the seed pool now gives other items than pool_balanced.jsonl on disk: the difficulty "
        "metrics or the rebalancing changed since round 1 ran (another rc1 version)",
        tries=(
            "run round 2 with the rc1 that ran round 1 (run_started records its code version; rc1 --version)",
            "or rebuild every input with this version: start a new run, rc1 advance --run <new name>",
        ),
    ),
)

SHADOW_PRE_RUN = Check(
    name="shadow_pre_run",
    rounds=(2,),
    run=lambda r: pre_run_shadow_check(r.session, r.shadow, r.on_disk_balanced),
    runbook=Runbook(
        means="the shadow set about to be evaluated is not the one round 1 materialized (its manifest is missing, "
        "unreadable or names another sha256 or ids), or training items share an id or a question with it",
        tries=(
            "restore data/<run>/shadow_manifest.json as round 1 wrote it; rc1 audit checks the gated inputs "
            "against round 1's fingerprints",
            "if the held-out sets must change, rebuild every input: rc1 advance --run <new name>, or change an "
            "input with --accept-changed-inputs so both rounds run again",
            "training items in the shadow set: make data.sources.<task>.shadow_path / shadow_split disjoint from "
            "path / split",
        ),
    ),
)
