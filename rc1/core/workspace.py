"""Where a run's files live. Outputs are relative to the working directory (the workspace root)."""

from __future__ import annotations

from pathlib import Path

import msgspec

# The embedded default's run (configs/local.yaml) keeps the seed's paths: logs/train.log, reports/metrics.jsonl, …
# Every other run has its own: logs/<run>/train.log, reports/<run>/metrics.jsonl, … Two runs of one workspace
# never write into each other's views.
DEFAULT_RUN = "local"


class Workspace(msgspec.Struct, frozen=True, kw_only=True):
    root: Path
    run: str
    line: str = ""  # a run training several seeds keeps each seed's checkpoints apart: "seed_<s>"

    @classmethod
    def here(cls, run: str) -> Workspace:
        return cls(root=Path.cwd(), run=run)

    @property
    def events_dir(self) -> Path:
        return self.root / "events"

    def runs(self) -> list[str]:
        """The runs this workspace has: one event log each (events/<run>.jsonl), by name."""
        logs = self.events_dir.glob("*.jsonl") if self.events_dir.is_dir() else []
        return sorted(path.stem for path in logs if not path.name.endswith(".ledger.jsonl"))

    @property
    def log_path(self) -> Path:
        return self.events_dir / f"{self.run}.jsonl"

    @property
    def ledger_path(self) -> Path:
        """One record per judge call (rc1.scoring.ledger)."""
        return self.events_dir / f"{self.run}.ledger.jsonl"

    @property
    def scorer_cache_dir(self) -> Path:
        """Judge answers by request hash (`scorer.cache: true`), shared by the runs of this workspace."""
        return self.root / "data" / "scorer_cache"

    @property
    def lock_path(self) -> Path:
        return self.events_dir / f"{self.run}.lock"

    @property
    def data_dir(self) -> Path:
        return self.root / "data" / self.run

    @property
    def pool_path(self) -> Path:
        return self.data_dir / "pool.jsonl"

    @property
    def balanced_pool_path(self) -> Path:
        return self.data_dir / "pool_balanced.jsonl"

    @property
    def shadow_path(self) -> Path:
        return self.data_dir / "shadow.jsonl"

    @property
    def shadow_manifest_path(self) -> Path:
        return self.data_dir / "shadow_manifest.json"

    @property
    def gate_path(self) -> Path:
        """The release verdict's held-out items (docs/release-verdict.md)."""
        return self.data_dir / "gate.jsonl"

    @property
    def gate_manifest_path(self) -> Path:
        return self.data_dir / "gate_manifest.json"

    @property
    def metrics_path(self) -> Path:
        """Per-item difficulty metrics of the seed pool (`rc1 difficulty metrics`)."""
        return self.data_dir / "difficulty_metrics.jsonl"

    @property
    def difficulty_report_path(self) -> Path:
        return self.reports_dir / "rc1" / "difficulty_report.json"

    @property
    def model_cache_dir(self) -> Path:
        return self.root / "data" / "models"

    @property
    def checkpoints_dir(self) -> Path:
        return self.root / "checkpoints" / self.run / self.line if self.line else self.root / "checkpoints" / self.run

    @property
    def evaluations_dir(self) -> Path:
        """The rollout archive's evaluation shards of the line of training (training's are in its checkpoints)."""
        return self.checkpoints_dir / "evaluations"

    @property
    def staging_dir(self) -> Path:
        return self.checkpoints_dir / ".staging"

    @property
    def reports_dir(self) -> Path:
        """The run's reports: metrics, manifests, preflight reports, plots, shadow runs, its error reports."""
        return self.root / "reports" if self.run == DEFAULT_RUN else self.root / "reports" / self.run

    @property
    def logs_dir(self) -> Path:
        return self.root / "logs" if self.run == DEFAULT_RUN else self.root / "logs" / self.run

    @property
    def train_log_path(self) -> Path:
        return self.logs_dir / "train.log"

    def checkpoint_dir(self, step: int) -> Path:
        return self.checkpoints_dir / f"step_{step:05d}"
