"""`rc1 audit` catches every kind of tampering and names where; `rc1 repair` mends a torn tail."""

from __future__ import annotations

import json

import pytest
from conftest import events, rc1

pytestmark = pytest.mark.e2e


def lines_of(root):
    return (root / "events/local.jsonl").read_bytes().split(b"\n")[:-1]


def write_lines(root, lines):
    (root / "events/local.jsonl").write_bytes(b"".join(line + b"\n" for line in lines))


def audit(root):
    result = rc1(root, "audit", "--json")
    return result.returncode, json.loads(result.stdout)


def first_index(root, kind):
    return next(i for i, e in enumerate(events(root)) if e["type"] == kind)


def test_an_edited_line_is_caught_at_the_next_seq(finished_copy):
    lines = lines_of(finished_copy)
    i = first_index(finished_copy, "train_step")
    record = json.loads(lines[i])
    record["loss"] = record["loss"] + 1.0
    lines[i] = json.dumps(record, separators=(",", ":")).encode()
    write_lines(finished_copy, lines)
    code, report = audit(finished_copy)
    assert code == 3
    assert {"check": "chain", "seq": i + 1} in [{"check": f["check"], "seq": f["seq"]} for f in report["findings"]]


def test_a_deleted_line_is_caught(finished_copy):
    lines = lines_of(finished_copy)
    i = first_index(finished_copy, "checkpoint_saved")
    del lines[i]
    write_lines(finished_copy, lines)
    code, report = audit(finished_copy)
    assert code == 3
    assert any(f["check"] == "chain" and f["seq"] == i + 1 and "expected" in f["message"] for f in report["findings"])


def test_reordered_lines_are_caught(finished_copy):
    lines = lines_of(finished_copy)
    i = first_index(finished_copy, "train_step")
    lines[i], lines[i + 1] = lines[i + 1], lines[i]
    write_lines(finished_copy, lines)
    code, report = audit(finished_copy)
    assert code == 3 and any(f["check"] == "chain" for f in report["findings"])


def test_lines_cut_off_the_end_are_caught_by_the_head_anchor(finished_copy):
    write_lines(finished_copy, lines_of(finished_copy)[:-3])
    code, report = audit(finished_copy)
    assert code == 3 and any(f["check"] == "anchor" and "cut off the end" in f["message"] for f in report["findings"])


def test_an_altered_checkpoint_byte_is_caught_naming_the_file_and_seq(finished_copy):
    saved = [e for e in events(finished_copy) if e["type"] == "checkpoint_saved"][1]
    target = next(name for name in saved["files"] if name.endswith(".safetensors"))
    path = finished_copy / saved["dir"] / target
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    code, report = audit(finished_copy)
    assert code == 3
    assert [(f["check"], f["seq"]) for f in report["findings"]] == [("checkpoint", saved["seq"])]
    assert target in report["findings"][0]["message"]


def test_an_altered_copy_in_best_is_caught_like_a_checkpoint(finished_copy, monkeypatch):
    from rc1.app.session import Session
    from rc1.config.loading import load_config
    from rc1.run import events as ev
    from rc1.train import checkpoints

    monkeypatch.chdir(finished_copy)
    saved = [e for e in events(finished_copy) if e["type"] == "checkpoint_saved"][-1]
    best = finished_copy / "checkpoints/local/best/step_99999"
    files = checkpoints.promote_best(finished_copy / saved["dir"], best)  # what the train stage does on a promotion
    with Session.open(load_config("configs/short.yaml")) as session:
        session.append(
            ev.BestPromoted(
                step=saved["step"],
                dir=str(best.relative_to(finished_copy)),
                metric="hard_success",
                value=1.0,
                files=files,
            )
        )
    assert audit(finished_copy)[0] == 0
    path = best / "rc1_meta.json"
    path.write_text(path.read_text().replace('"step"', '"Step"'))
    code, report = audit(finished_copy)
    promoted = events(finished_copy)[-1]
    assert code == 3 and promoted["type"] == "best_promoted"
    assert [(f["check"], f["seq"]) for f in report["findings"]] == [("checkpoint", promoted["seq"])]
    assert "best/step_99999/rc1_meta.json" in report["findings"][0]["message"]


def test_a_torn_tail_is_reported_then_repaired(finished_copy):
    log = finished_copy / "events/local.jsonl"
    clean = log.read_bytes()
    with open(log, "ab") as fh:
        fh.write(b'{"type":"train_step","seq":99,"lo')
    code, report = audit(finished_copy)
    assert code == 3 and [f["check"] for f in report["findings"]] == ["torn_tail"]
    # A writer refuses to append after torn bytes: bad input until repaired.
    assert rc1(finished_copy, "advance").returncode == 2

    result = rc1(finished_copy, "repair")
    assert result.returncode == 0, result.stderr
    assert log.read_bytes().startswith(clean)
    assert events(finished_copy)[-1]["type"] == "log_repaired"
    quarantined = finished_copy / events(finished_copy)[-1]["quarantine"]
    assert quarantined.read_bytes() == b'{"type":"train_step","seq":99,"lo'
    code, report = audit(finished_copy)
    assert code == 0, report


def test_an_illegal_transition_in_the_log_is_an_audit_failure(finished_copy):
    """A forged but well-chained line: training_started appended after the run completed from INIT's view."""
    from rc1.eventlog.log import EventLog
    from rc1.run import events as ev

    with EventLog(finished_copy / "events/local.jsonl", finished_copy / "events/local.lock", "local") as log:
        log.append(
            ev.Round2Passed(fingerprints=ev.Fingerprints(pool="a", shadow="b", config="c", weights="d"), checks=[])
        )
    code, report = audit(finished_copy)
    assert code == 3
    assert any(
        f["check"] == "transition" and "round2_passed is not allowed in state CHECKPOINTED" in f["message"]
        for f in report["findings"]
    )
    # What the refused line claims is not folded in, and no writer appends after it.
    status = json.loads(rc1(finished_copy, "status", "--json").stdout)
    assert status["state"] == "CHECKPOINTED" and status["complete"]
    before = (finished_copy / "events/local.jsonl").read_bytes()
    refused = rc1(finished_copy, "pool", "validate")
    assert (
        refused.returncode == 3
        and "event(s) the state machine refused" in refused.stderr
        and "rc1 audit" in refused.stderr
    )
    assert (finished_copy / "events/local.jsonl").read_bytes() == before
