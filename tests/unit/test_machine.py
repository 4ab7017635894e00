"""The state machine is the only authority on what may happen next."""

import pytest
from transitions import MachineError

from rc1.run import events as ev
from rc1.run.machine import RunMachine
from rc1.run.replay import replay

FP = ev.Fingerprints(pool="p", shadow="s", config="c", weights="w")


def stamped(events):
    return [e.__class__(**{**{f: getattr(e, f) for f in e.__struct_fields__}, "seq": i}) for i, e in enumerate(events)]


def test_the_happy_path_and_what_each_state_allows():
    m = RunMachine()
    assert m.allowed() == ["round1_passed"]
    m.trigger("round1_passed")
    assert m.allowed() == ["gate_invalidated", "round2_passed"]
    m.trigger("round2_passed")
    m.trigger("training_started")
    m.trigger("checkpoint_saved")
    assert m.state == "CHECKPOINTED"
    assert set(m.allowed()) == {"gate_invalidated", "monitor_halted", "train_step", "training_started"}


def test_a_halt_leaves_training_only_through_its_acknowledgement_or_an_invalidated_gate():
    m = RunMachine()
    for t in ("round1_passed", "round2_passed", "training_started", "monitor_halted"):
        m.trigger(t)
    assert m.state == "HALTED" and m.allowed() == ["gate_invalidated", "halt_acknowledged"]
    assert m.next_stage() is None  # advance has no stage to run: the way forward is a person's
    for refused in ("train_step", "training_started", "checkpoint_saved", "monitor_halted"):
        with pytest.raises(MachineError):
            m.trigger(refused)
    m.trigger("halt_acknowledged")
    assert m.state == "CHECKPOINTED" and "training_started" in m.allowed()
    m.trigger("monitor_halted")
    m.trigger("gate_invalidated")
    assert m.state == "INIT"


def test_no_shortcut_past_the_gates():
    m = RunMachine()
    assert not hasattr(m, "to_TRAINING")
    with pytest.raises(MachineError):
        m.trigger("training_started")


def test_invalidation_returns_to_init():
    m = RunMachine()
    for t in ("round1_passed", "round2_passed", "training_started", "gate_invalidated"):
        m.trigger(t)
    assert m.state == "INIT"


def test_replay_records_an_illegal_transition_with_its_seq():
    events = stamped(
        [
            ev.Round1Passed(fingerprints=FP, checks=[]),
            ev.TrainingStarted(
                resume_from_step=0,
                resume_from_dir=None,
                max_steps=5,
                engine="trl",
                strategy="grpo",
                model="m",
                device="cpu",
                dtype="float32",
            ),
        ]
    )
    r = replay(events)
    assert r.projection.state == "R1_PASSED"
    assert [(v.seq, v.message) for v in r.projection.violations] == [
        (1, "training_started is not allowed in state R1_PASSED")
    ]


def test_replay_folds_training_into_the_projection():
    def step(n):
        return ev.TrainStep(
            step=n, loss=0.1 * n, kl=0.0, ratio=0.0, lr=1e-3, reward=0.5, mem_used_mb=1.0, sec_per_step=0.1, tokens=4
        )

    events = stamped(
        [
            ev.Round1Passed(fingerprints=FP, checks=[]),
            ev.Round2Passed(fingerprints=FP, checks=[]),
            ev.TrainingStarted(
                resume_from_step=0,
                resume_from_dir=None,
                max_steps=4,
                engine="trl",
                strategy="grpo",
                model="m",
                device="cpu",
                dtype="float32",
            ),
            step(1),
            step(2),
            ev.CheckpointSaved(step=2, dir="c/step_00002", files={}),
            step(3),
        ]
    )
    p = replay(events).projection
    assert (p.state, p.step, p.max_steps, p.latest_checkpoint.step, p.complete) == ("TRAINING", 3, 4, 2, False)
    assert p.gates["round2"].fingerprints == FP and not p.violations


def test_mermaid_diagram_needs_no_graphviz():
    text = RunMachine(diagram=True).mermaid()
    assert "R2_PASSED" in text and "training_started" in text
