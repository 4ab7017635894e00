"""The run's state machine: the only authority on what may happen next.

Built with pytransitions, `auto_transitions=False` so no `to_<STATE>()` shortcut can
jump past a gate. Triggers are named after the events that fire them.
"""

from __future__ import annotations

from transitions import Machine

STATES = ["INIT", "R1_PASSED", "R2_PASSED", "TRAINING", "CHECKPOINTED"]

TRANSITIONS = [
    {"trigger": "round1_passed", "source": "INIT", "dest": "R1_PASSED"},
    {"trigger": "round2_passed", "source": "R1_PASSED", "dest": "R2_PASSED"},
    # A complete run (every seed's line finished) trains no more: a new run name, or an invalidated gate.
    {"trigger": "training_started", "source": ["R2_PASSED", "CHECKPOINTED", "TRAINING"], "dest": "TRAINING",
     "unless": "complete"},
    {"trigger": "checkpoint_saved", "source": "TRAINING", "dest": "CHECKPOINTED"},
    {"trigger": "train_step", "source": ["TRAINING", "CHECKPOINTED"], "dest": "TRAINING"},
    {"trigger": "gate_invalidated", "source": ["R1_PASSED", "R2_PASSED", "TRAINING", "CHECKPOINTED"], "dest": "INIT"},
]

TRIGGERS: frozenset[str] = frozenset(t["trigger"] for t in TRANSITIONS)


GUARDED: frozenset[str] = frozenset(t["trigger"] for t in TRANSITIONS if "unless" in t or "conditions" in t)


class RunMachine:
    """The model object pytransitions drives; `state` is the run's state, `complete` whether every line of
    training has finished (replay keeps it current; the guard on training_started reads it)."""

    state: str

    def __init__(self, initial: str = "INIT", *, diagram: bool = False):
        self.complete = False
        if diagram:
            from transitions.extensions import GraphMachine

            self._machine = GraphMachine(
                model=self, states=STATES, transitions=TRANSITIONS, initial=initial,
                auto_transitions=False, graph_engine="mermaid", title="rc1 run",
            )
        else:
            self._machine = Machine(
                model=self, states=STATES, transitions=TRANSITIONS, initial=initial, auto_transitions=False
            )
        # trigger -> {source: dest}, read off the machine itself so the fold's fast path
        # (a train_step that keeps TRAINING) agrees with it by construction.
        self._table: dict[str, dict[str, str]] = {
            trigger: {
                source: transition.dest
                for source, transitions in event.transitions.items()
                for transition in transitions
            }
            for trigger, event in self._machine.events.items()
        }

    def allowed(self) -> list[str]:
        """Triggers the machine accepts now (there are no conditions, but ask it anyway)."""
        return sorted(t for t in self._machine.get_triggers(self.state) if self.may_trigger(t))

    def legal(self, trigger: str) -> bool:
        """Whether the machine accepts `trigger` now, its guards included. An unguarded trigger that keeps the
        state (a train_step in TRAINING: the hot path of a replay) is answered from the transition table."""
        dest = self._table.get(trigger, {}).get(self.state)
        if dest is None:
            return False
        if dest == self.state and trigger not in GUARDED:
            return True
        return self.may_trigger(trigger)

    def fire(self, trigger: str) -> None:
        """Apply a trigger that `legal` accepted; skips the machine call for self-loops (hot path)."""
        if self._table[trigger][self.state] != self.state or trigger in GUARDED:
            self.trigger(trigger)

    def mermaid(self) -> str:
        return self.get_graph().draw(None)
