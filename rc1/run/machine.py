"""The run's state machine: the only authority on what may happen next.

Built with pytransitions, `auto_transitions=False` so no `to_<STATE>()` shortcut can
jump past a gate. Triggers are named after the events that fire them.
"""

from __future__ import annotations

from transitions import Machine

STATES = ["INIT", "R1_PASSED", "R2_PASSED", "TRAINING", "CHECKPOINTED", "HALTED"]

TRANSITIONS = [
    {"trigger": "round1_passed", "source": "INIT", "dest": "R1_PASSED"},
    {"trigger": "round2_passed", "source": "R1_PASSED", "dest": "R2_PASSED"},
    # A complete run (every seed's line finished) trains no more: a new run name, or an invalidated gate.
    {
        "trigger": "training_started",
        "source": ["R2_PASSED", "CHECKPOINTED", "TRAINING"],
        "dest": "TRAINING",
        "unless": "complete",
    },
    {"trigger": "checkpoint_saved", "source": "TRAINING", "dest": "CHECKPOINTED"},
    {"trigger": "train_step", "source": ["TRAINING", "CHECKPOINTED"], "dest": "TRAINING"},
    {
        "trigger": "gate_invalidated",
        "source": ["R1_PASSED", "R2_PASSED", "TRAINING", "CHECKPOINTED", "HALTED"],
        "dest": "INIT",
    },
    # A monitor rule whose action is halt (a monitor_tripped event) stops the run until a person chooses the way
    # forward: continue, roll back to a checkpoint, or stop the line (halt_acknowledged).
    {"trigger": "monitor_halted", "source": ["TRAINING", "CHECKPOINTED"], "dest": "HALTED"},
    {"trigger": "halt_acknowledged", "source": "HALTED", "dest": "CHECKPOINTED"},
]

TRIGGERS: frozenset[str] = frozenset(t["trigger"] for t in TRANSITIONS)
# The trigger an event fires is named after its type, except a monitor_tripped, which fires monitor_halted when its
# action is halt (a warn or a stop changes no state): rc1/run/door.py `trigger_of`.


# The triggers a stage of the run produces, in the order `advance` tries them: the first the machine allows is
# the run's next stage (views name it the same way).
STAGE_TRIGGERS = ("round1_passed", "round2_passed", "training_started")


class RunMachine:
    """The model object pytransitions drives; `state` is the run's state, `complete` whether every line of
    training has finished (replay keeps it current; the guard on training_started reads it)."""

    state: str

    def __init__(self, initial: str = "INIT", *, diagram: bool = False):
        self.complete = False
        if diagram:
            from transitions.extensions import GraphMachine

            self._machine = GraphMachine(
                model=self,
                states=STATES,
                transitions=TRANSITIONS,
                initial=initial,
                auto_transitions=False,
                graph_engine="mermaid",
                title="rc1 run",
            )
        else:
            self._machine = Machine(
                model=self, states=STATES, transitions=TRANSITIONS, initial=initial, auto_transitions=False
            )

    def allowed(self) -> list[str]:
        """Triggers the machine accepts now, its guards asked."""
        return sorted(t for t in self._machine.get_triggers(self.state) if self.may_trigger(t))

    def next_stage(self) -> tuple[str, bool] | None:
        """(the trigger of the run's next stage, whether that stage resumes training), or None when the machine
        allows no stage (a complete run)."""
        allowed = set(self.allowed())
        for trigger in STAGE_TRIGGERS:
            if trigger in allowed:
                return trigger, trigger == "training_started" and self.state != "R2_PASSED"
        return None

    def mermaid(self) -> str:
        return self.get_graph().draw(None)
