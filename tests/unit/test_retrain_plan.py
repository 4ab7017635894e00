"""What `rc1 audit --retrain` trains again is read from the log alone: which checkpoint, from which, the steps the log
kept, the amendments in force, and whether the line's resume was exact."""

from __future__ import annotations

import msgspec
import pytest
from conftest import training_started_fields

from rc1.app.retrain_plan import plan_retrain, retrainable
from rc1.core.errors import BadInput
from rc1.run import events as ev


class Log:
    """A line of training written event by event, each with the next seq."""

    def __init__(self):
        self.events: list[ev.Event] = []

    def start(self, resume_from: int = 0, seed: int = 1234, exact: bool = True, processes: int = 1):
        fields = {**training_started_fields(resume_from, 12, seed), "exact_resume": exact, "processes": processes}
        return self._seq(ev.TrainingStarted(**fields))

    def steps(self, first: int, last: int, loss: float = 0.5):
        for step in range(first, last + 1):
            self._seq(
                ev.TrainStep(
                    step=step,
                    loss=loss,
                    kl=0.0,
                    ratio=1.0,
                    lr=1e-3,
                    reward=0.5,
                    mem_used_mb=1.0,
                    sec_per_step=0.5,
                    tokens=10,
                )
            )

    def save(self, step: int, line: str = "checkpoints/local"):
        return self._seq(ev.CheckpointSaved(step=step, dir=f"{line}/step_{step:05d}", files={"a": str(step)}))

    def amend(self, key: str, new: float):
        return self._seq(ev.TrainingAmended(changes={key: ev.Amended(old=1.0, new=new)}))

    def _seq(self, event):
        event = msgspec.structs.replace(event, seq=len(self.events) + 1)
        self.events.append(event)
        return event


def test_a_checkpoint_is_retrained_from_the_one_before_it_against_the_steps_the_log_kept():
    log = Log()
    log.start()
    log.steps(1, 4)
    log.save(4)
    log.steps(5, 6, loss=0.9)  # a segment killed after step 6: steps 5 and 6 are trained again below
    resumed = log.start(resume_from=4, exact=False)
    log.steps(5, 8, loss=0.1)
    eight = log.save(8)
    plan = plan_retrain(log.events, "step_8")
    # steps 5 and 6 are compared with their last record, and the plan says how they were trained again
    assert plan.trained_again == [5, 6] and plan.again_by == [(resumed.seq, False)] and not plan.exact
    assert plan.start.dir == "checkpoints/local/step_00004" and plan.target == ev_ref(eight)
    assert sorted(plan.steps) == [5, 6, 7, 8] and {s.loss for s in plan.steps.values()} == {0.1}
    assert plan.amended == [] and plan.between == []
    assert plan_retrain(log.events, "checkpoints/local/step_00008/").target.step == 8  # the folder names it too
    from_base = plan_retrain(log.events, "8", "step_0")
    assert from_base.start is None and sorted(from_base.steps) == list(range(1, 9))
    assert [ref.step for ref in from_base.between] == [4]  # compared on the way
    assert retrainable(log.events) == ["checkpoints/local/step_00004", "checkpoints/local/step_00008"]


def test_a_rollback_retrains_on_the_amended_config_and_puts_its_keys_over_the_checkpoint():
    log = Log()
    log.start()
    log.steps(1, 8)
    log.save(4)
    log.save(8)
    log.amend("train.learning_rate", 1e-4)  # a halt's way forward: back to step 4 at a lower learning rate
    log.start(resume_from=4)
    log.steps(5, 8, loss=0.2)
    log.save(8)  # the same folder, published again
    plan = plan_retrain(log.events, "step_8")
    assert plan.start.step == 4 and plan.amendments == {"train.learning_rate": 1e-4}
    assert plan.amended == ["train.learning_rate"] and {s.loss for s in plan.steps.values()} == {0.2}
    first = plan_retrain(log.events, "step_4")  # saved before the amendment: trained on the config before it
    assert first.amendments == {} and first.start is None


def test_a_retrain_across_an_amendment_its_segment_did_not_resume_across_is_refused_naming_where_to_start():
    log = Log()
    log.start()
    log.steps(1, 8)
    log.save(4)
    log.save(8)
    log.amend("train.beta", 0.1)
    log.start(resume_from=8)
    log.steps(9, 12)
    log.save(12)
    with pytest.raises(BadInput, match=r"amended at seq \d+ \(train.beta\).*--from step_8"):
        plan_retrain(log.events, "step_12", "step_4")
    assert plan_retrain(log.events, "step_12").amended == ["train.beta"]


def test_names_that_match_nothing_or_more_than_one_line_are_refused_with_what_would_match():
    log = Log()
    log.start(seed=1)
    log.steps(1, 4)
    log.save(4, "checkpoints/local/seed_1")
    log.start(seed=2)
    log.steps(1, 4)
    log.save(4, "checkpoints/local/seed_2")
    with pytest.raises(BadInput, match="more than one line of training has it"):
        plan_retrain(log.events, "step_4")
    assert plan_retrain(log.events, "checkpoints/local/seed_2/step_00004").seed == 2
    with pytest.raises(BadInput, match=r"--retrain step_9: no checkpoint .*checkpoints/local/seed_1/step_00004"):
        plan_retrain(log.events, "step_9")
    with pytest.raises(BadInput, match="--from step_2: no checkpoint of the checkpoints of"):
        plan_retrain(log.events, "checkpoints/local/seed_2/step_00004", "step_2")


def test_a_line_that_was_not_exact_or_changed_its_processes_says_so():
    log = Log()
    log.start(exact=False)
    log.steps(1, 4)
    log.save(4)
    assert not plan_retrain(log.events, "step_4").exact
    log.start(resume_from=4, processes=2)
    log.steps(5, 8)
    log.save(8)
    assert plan_retrain(log.events, "step_8").processes == 2
    with pytest.raises(BadInput, match=r"trained on \[1, 2\] processes"):
        plan_retrain(log.events, "step_8", "step_0")


def ev_ref(saved: ev.CheckpointSaved):
    from rc1.run.projection import CheckpointRef

    return CheckpointRef(step=saved.step, dir=saved.dir, files=saved.files, seq=saved.seq)
