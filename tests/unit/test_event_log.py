"""The event log: hash chain, single writer, durable appends, torn tails, corruption."""

import json

import pytest
from conftest import REPO

from rc1.bench.synthetic import append_training
from rc1.core.errors import BadInput, CorruptLog, LogBusy
from rc1.core.workspace import Workspace
from rc1.eventlog.lines import line_hash
from rc1.eventlog.log import EventLog, read_log
from rc1.run import events as ev


@pytest.fixture
def ws(tmp_path):
    return Workspace(root=tmp_path, run="t")


def open_log(ws, **kw):
    return EventLog(ws.log_path, ws.lock_path, ws.run, **kw)


def fill(ws, n=5):
    with open_log(ws) as log:
        for i in range(n):
            log.append(ev.ArtifactWritten(path=f"f{i}", sha256="0" * 64, bytes=i))


def test_appends_are_sequenced_and_hash_chained(ws):
    fill(ws, 3)
    raw = ws.log_path.read_bytes().split(b"\n")[:-1]
    contents = read_log(ws.log_path)
    assert [e.seq for e in contents.events] == [0, 1, 2]
    assert contents.events[0].prev == ev.GENESIS_HASH
    assert contents.events[1].prev == line_hash(raw[0])
    assert contents.events[2].prev == line_hash(raw[1])
    assert all(e.run == "t" and e.v == ev.SCHEMA_VERSION and e.ts for e in contents.events)
    assert not contents.chain_breaks and not contents.torn


def test_reopening_continues_the_chain(ws):
    fill(ws, 2)
    fill(ws, 2)
    contents = read_log(ws.log_path)
    assert [e.seq for e in contents.events] == [0, 1, 2, 3]
    assert not contents.chain_breaks


def test_every_event_round_trips_through_the_union(ws):
    fp = ev.Fingerprints(pool="a", shadow="b", config="c", weights="d")
    samples = [
        ev.Round1Passed(fingerprints=fp, checks=["x"]),
        ev.TrainStep(
            step=1, loss=0.5, kl=0.0, ratio=0.0, lr=1e-3, reward=0.2, mem_used_mb=10.0, sec_per_step=0.1, tokens=9
        ),
        ev.CheckpointSaved(step=1, dir="checkpoints/t/step_00001", files={"a": "0" * 64}),
        ev.GateInvalidated(input="pool", old_sha256="a", new_sha256="b"),
    ]
    with open_log(ws) as log:
        for event in samples:
            log.append(event)
    decoded = read_log(ws.log_path).events
    assert [ev.event_type(e) for e in decoded] == [
        "round1_passed",
        "train_step",
        "checkpoint_saved",
        "gate_invalidated",
    ]
    assert decoded[0].fingerprints == fp


def test_a_second_writer_fails_fast(ws):
    with open_log(ws):
        with pytest.raises(LogBusy, match="another rc1 process"):
            open_log(ws)


def test_the_lock_is_released_on_close(ws):
    open_log(ws).close()
    open_log(ws).close()


def test_a_run_without_a_log_forgets_its_lock_and_the_next_writer_takes_a_new_one(ws):
    """A command refused before its run's first event removes the lock file it made, while still holding it; a writer
    holding a lock on a file no longer at the path would not be the one writer, so the next one takes the path's."""
    first = open_log(ws)
    first.forget()
    assert not ws.lock_path.exists()
    second = open_log(ws)  # no LogBusy: the first's lock is on a file that is gone
    assert ws.lock_path.exists()
    with pytest.raises(LogBusy):
        open_log(ws)
    first.close(), second.close()
    with open_log(ws) as log:  # a run with a log keeps its lock file
        log.append(ev.ArtifactWritten(path="f", sha256="0" * 64, bytes=0))
        log.forget()
    assert ws.lock_path.exists()


def test_an_edited_line_breaks_the_chain_at_the_next_seq(ws):
    fill(ws, 4)
    lines = ws.log_path.read_bytes().split(b"\n")
    lines[1] = lines[1].replace(b'"bytes":1', b'"bytes":7')
    ws.log_path.write_bytes(b"\n".join(lines))
    breaks = read_log(ws.log_path).chain_breaks
    assert [(b.seq, "prev hash" in b.message) for b in breaks] == [(2, True)]
    with pytest.raises(CorruptLog, match="seq 2"):
        open_log(ws)


def test_a_deleted_line_is_a_gap(ws):
    fill(ws, 4)
    lines = ws.log_path.read_bytes().split(b"\n")
    del lines[2]
    ws.log_path.write_bytes(b"\n".join(lines))
    messages = [b.message for b in read_log(ws.log_path).chain_breaks]
    assert any("seq 3 where 2 was expected" in m for m in messages)


def test_reordered_lines_are_detected(ws):
    fill(ws, 4)
    lines = ws.log_path.read_bytes().split(b"\n")
    lines[1], lines[2] = lines[2], lines[1]
    ws.log_path.write_bytes(b"\n".join(lines))
    assert read_log(ws.log_path).chain_breaks


def test_a_torn_tail_is_detected_and_blocks_writers_until_repaired(ws):
    fill(ws, 3)
    good = ws.log_path.stat().st_size
    with open(ws.log_path, "ab") as fh:
        fh.write(b'{"type":"train_step","seq":3,"st')
    contents = read_log(ws.log_path)
    assert len(contents.events) == 3 and contents.good_bytes == good and contents.torn.startswith(b'{"type"')
    with pytest.raises(BadInput, match="torn tail of 32 bytes"):
        open_log(ws)
    with open_log(ws, allow_torn=True) as log:
        log.truncate_torn_tail()
        log.append(ev.ArtifactWritten(path="x", sha256="0" * 64, bytes=0))
    contents = read_log(ws.log_path)
    assert [e.seq for e in contents.events] == [0, 1, 2, 3] and not contents.chain_breaks and not contents.torn


def test_an_undecodable_last_line_with_newline_is_a_torn_tail(ws):
    fill(ws, 2)
    with open(ws.log_path, "ab") as fh:
        fh.write(b'{"type":"no_such_event"}\n')
    contents = read_log(ws.log_path)
    assert len(contents.events) == 2 and contents.torn == b'{"type":"no_such_event"}\n'


def test_damage_before_the_tail_is_corruption_naming_the_line(ws):
    fill(ws, 3)
    lines = ws.log_path.read_bytes().split(b"\n")
    lines[1] = b"garbage"
    ws.log_path.write_bytes(b"\n".join(lines))
    with pytest.raises(CorruptLog, match=r"t\.jsonl:2: line 2 of 3 does not decode"):
        read_log(ws.log_path)


def test_old_lines_with_new_optional_fields_missing_still_decode(ws):
    fill(ws, 1)
    record = json.loads(ws.log_path.read_bytes())
    step = {
        **record,
        "type": "train_step",
        "step": 1,
        "loss": 0.1,
        "kl": 0.0,
        "ratio": 0.0,
        "lr": 0.1,
        "reward": 0.0,
        "mem_used_mb": 1.0,
        "sec_per_step": 0.1,
        "tokens": 3,
    }
    for key in ("path", "sha256", "bytes", "kind"):
        step.pop(key)
    # reward_std was added with a default: a line written before it existed must decode.
    ws.log_path.write_text(json.dumps(step) + "\n")
    (event,) = read_log(ws.log_path).events
    assert event.reward_std == 0.0


@pytest.mark.parametrize(
    "newer",
    [
        {"type": "quantum_leap", "v": 1},  # an event type this rc1 does not know
        {"type": "artifact_written", "v": ev.SCHEMA_VERSION + 1, "path": "f", "sha256": "0" * 64, "bytes": 1},
    ],
)
@pytest.mark.parametrize("where", ["last", "middle"])
def test_a_line_written_by_a_newer_rc1_says_upgrade_and_is_never_repaired_away(ws, newer, where):
    from rc1.core.errors import WrittenByNewerRc1

    fill(ws, 3)
    lines = ws.log_path.read_bytes().split(b"\n")[:-1]
    head = read_log(ws.log_path)
    line = json.dumps(
        {**newer, "seq": 3, "ts": "2026-11-23T00:00:00+00:00", "run": "t", "prev": head.head_hash},
        separators=(",", ":"),
    ).encode()
    lines = lines + [line] if where == "last" else lines[:2] + [line] + lines[2:]
    ws.log_path.write_bytes(b"".join(x + b"\n" for x in lines))
    before = ws.log_path.read_bytes()
    number = 4 if where == "last" else 3
    with pytest.raises(
        WrittenByNewerRc1, match=rf"t\.jsonl:{number}: event type .* was written by a newer rc1: upgrade"
    ):
        read_log(ws.log_path)
    with pytest.raises(BadInput, match="newer rc1"):  # exit 2; a writer does not treat it as a torn tail
        open_log(ws, allow_torn=True)
    assert ws.log_path.read_bytes() == before


def _fold(ws):
    from rc1.run.replay import replay

    return replay(read_log(ws.log_path).events).projection


def test_a_snapshot_is_used_only_while_the_log_still_holds_its_anchor_line(ws):
    from rc1.eventlog.snapshot import replay_log, snapshot_path, write_snapshot
    from rc1.run.replay import replay

    fill(ws, 4)
    with open_log(ws) as log:
        replayer = replay(log.contents.events)
        write_snapshot(ws, replayer, log.anchor)
        log.append(ev.ArtifactWritten(path="later", sha256="1" * 64, bytes=9))  # after the snapshot: the tail
    replayer, read = replay_log(ws)
    assert [e.seq for e in read.events] == [4]  # only the tail was decoded
    assert replayer.projection == _fold(ws)

    # The log no longer holds the anchor line (rewritten under the snapshot): the snapshot is ignored.
    lines = ws.log_path.read_bytes().split(b"\n")[:-1]
    lines[3] = lines[3].replace(b'"f3"', b'"f9"')
    ws.log_path.write_bytes(b"".join(x + b"\n" for x in lines))
    replayer, read = replay_log(ws)
    assert len(read.events) == 5 and read.chain_breaks  # replayed whole; the audit's chain check will name it

    snapshot_path(ws).write_bytes(b"not json")  # unreadable: ignored, never an error
    assert len(replay_log(ws)[1].events) == 5


def _steps(ws, n, *, every=7):
    """A training-shaped log: n train_steps with a checkpoint every `every` steps."""
    with open_log(ws) as log:
        append_training(log, n, checkpoint_every=every)


def test_a_big_log_read_in_parallel_equals_the_same_log_read_line_by_line(ws, monkeypatch):
    """Above PARALLEL_BYTES a second process hashes the lines while this one decodes them in chunks; the
    result is the same LogContents, torn tail included, and any damage is named by the line-by-line read."""
    import rc1.eventlog.big_log as big_log_module
    import rc1.eventlog.log as log_module

    _steps(ws, 300)
    with open(ws.log_path, "ab") as fh:
        fh.write(b'{"type":"train_step","seq":9')  # a torn tail
    serial = read_log(ws.log_path)
    monkeypatch.setattr(log_module, "PARALLEL_BYTES", 1)
    monkeypatch.setattr(big_log_module, "CHUNK", 1000)  # lines straddle chunks; some are longer than one
    parallel = read_log(ws.log_path)
    assert parallel.events == serial.events and parallel.torn == serial.torn
    assert list(parallel.line_hashes) == list(serial.line_hashes)
    assert (parallel.good_bytes, parallel.last_line_start) == (serial.good_bytes, serial.last_line_start)

    lines = ws.log_path.read_bytes().split(b"\n")
    lines[100] = lines[100].replace(b'"loss":0.1', b'"loss":0.2')
    ws.log_path.write_bytes(b"\n".join(lines))
    breaks = read_log(ws.log_path).chain_breaks
    assert [(b.line, b.seq) for b in breaks] == [(102, 101)]


def test_a_big_log_is_read_whole_once_by_a_reader_and_then_its_writer_until_it_changes(ws, monkeypatch):
    """`advance` on a log without a snapshot asks as a reader whether the run's kept config is in force, then opens it
    as its writer: a big log is decoded and verified once, and read again once anything was written to it."""
    import rc1.eventlog.log as log_module
    from rc1.eventlog.log import read_whole_log

    _steps(ws, 50)
    monkeypatch.setattr(log_module, "PARALLEL_BYTES", 1)  # this log counts as big
    read = read_whole_log(ws.log_path)
    assert read_whole_log(ws.log_path) is read
    with open_log(ws) as log:
        assert log.contents is read  # the writer, under its lock, on the file as it was read
        log.append(ev.ArtifactWritten(path="x", sha256="0" * 64, bytes=1))
    again = read_whole_log(ws.log_path)
    assert again is not read and again.events[:-1] == read.events and again.events[-1].path == "x"
    monkeypatch.setattr(log_module, "PARALLEL_BYTES", 2**40)  # a small log is read each time
    assert read_whole_log(ws.log_path) is not read_whole_log(ws.log_path)


def test_prevs_shifted_by_a_character_that_join_to_the_same_string_are_still_a_break(ws):
    """The fast chain check compares all prevs joined against all line hashes joined. A forger can give line 1
    the prev h0 + x and line 2 the prev h1[1:], where h1 is the hash of the forged line 1 and x its first digit
    (one x in 16 works; the forger varies another field until one does), then re-chain the lines after: the joined
    strings agree. Each prev must be one whole hash, so both lines are still breaks."""
    fill(ws, 4)
    lines = ws.log_path.read_bytes().splitlines()
    h0, old1, old2 = line_hash(lines[0]), json.loads(lines[1])["prev"], json.loads(lines[2])["prev"]
    forged1 = next(
        line
        for nonce in range(1000)
        for x in "0123456789abcdef"  # vary the path until a digit fits
        for line in [lines[1].replace(old1.encode(), (h0 + x).encode()).replace(b'"f1"', f'"f1-{nonce}"'.encode())]
        if line_hash(line)[0] == x
    )
    h1 = line_hash(forged1)
    forged2 = lines[2].replace(old2.encode(), h1[1:].encode())
    lines[1], lines[2] = forged1, forged2
    lines[3] = lines[3].replace(json.loads(lines[3])["prev"].encode(), line_hash(forged2).encode())
    ws.log_path.write_bytes(b"".join(line + b"\n" for line in lines))
    breaks = read_log(ws.log_path).chain_breaks
    assert [b.seq for b in breaks] == [1, 2] and all("prev hash" in b.message for b in breaks)


def test_replay_folds_a_run_of_steps_in_one_go_exactly_as_one_by_one(ws):
    from rc1.run.replay import Replayer, replay

    _steps(ws, 50)
    events = read_log(ws.log_path).events
    one_by_one = Replayer()
    for event in events:
        one_by_one.apply(event)
    assert replay(events).projection == one_by_one.projection
    # A run of steps the machine refuses (no gate passed) is refused step by step, in bulk as one by one.
    steps = [e for e in events if isinstance(e, ev.TrainStep)][:5]
    refused = replay(steps).projection
    assert [v.seq for v in refused.violations] == [e.seq for e in steps] and refused.step == 0


def test_a_writer_opened_after_a_snapshot_reads_only_the_lines_after_its_anchor(ws):
    from rc1.eventlog.snapshot import read_snapshot, write_snapshot
    from rc1.run.replay import replay

    _steps(ws, 20)
    with open_log(ws) as log:
        write_snapshot(ws, replay(log.contents.events), log.anchor)
        log.append(ev.ArtifactWritten(path="after", sha256="1" * 64, bytes=1))
    anchor = read_snapshot(ws).anchor
    with open_log(ws, after=anchor) as log:
        assert [e.seq for e in log.contents.events] == [anchor.seq + 1] and log.contents.base == anchor
        log.append(ev.ArtifactWritten(path="later", sha256="2" * 64, bytes=2))
    whole = read_log(ws.log_path)
    assert not whole.chain_breaks and [e.seq for e in whole.events] == list(range(len(whole.events)))

    # A log that no longer holds the anchor line is read whole, and its damage refused as before.
    lines = ws.log_path.read_bytes().split(b"\n")
    lines[anchor.seq] = lines[anchor.seq].replace(b'"step":', b'"step": ')
    ws.log_path.write_bytes(b"\n".join(lines))
    with pytest.raises(CorruptLog, match=f"seq {anchor.seq + 1}"):
        open_log(ws, after=anchor)


DATA = REPO / "tests" / "data"


@pytest.mark.parametrize("version", range(1, ev.SCHEMA_VERSION))
@pytest.mark.parametrize("parallel", [False, True])
def test_a_log_of_every_older_schema_version_still_reads_and_replays(version, parallel, monkeypatch):
    """tests/data/schema_v<N>.jsonl: a whole `make run` log as rc1 wrote it at schema version N, never edited.
    Every type whose shape changed since has a line there, and each is read in today's shape."""
    import rc1.eventlog.log as log_module
    from rc1.run.replay import replay

    path = DATA / f"schema_v{version}.jsonl"
    raw = [json.loads(line) for line in path.read_bytes().splitlines()]
    assert {record["v"] for record in raw} == {version}
    assert {kind for kind, since in ev.UPCASTERS if since >= version} <= {record["type"] for record in raw}
    if parallel:
        monkeypatch.setattr(log_module, "PARALLEL_BYTES", 1)
    contents = read_log(path)
    assert not contents.chain_breaks and not contents.torn and len(contents.events) == len(raw)
    for record, event in zip(raw, contents.events):
        assert ev.event_type(event) == record["type"]
        if record["type"] == "eval_completed" and version == 1:
            assert (event.success, event.per_task_success) == (record["accuracy"], record["per_task_accuracy"])
        if record["type"] == "release_evaluated" and version <= 2:  # v2's verdict: greedy, on the shadow's hard items
            assert (event.baseline_success, event.selected_success) == (
                record["baseline_hard_success"],
                record["hard_success"],
            )
            assert (event.items, event.samples, event.ci_low_pp, event.passed) == (
                "shadow_hard",
                0,
                None,
                record["passed"],
            )
            assert event.failed or event.passed
    projection = replay(contents.events).projection
    assert projection.complete and not projection.violations and projection.evals
