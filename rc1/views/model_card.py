"""The model card of an export (`README.md`, the hub's card format: YAML front matter, then Markdown), written from
the run's log alone, so the model points back to the run that made it: base model, method, strategy, steps, the
gated inputs' fingerprints, the gates passed, the release verdict with its interval, the code versions and the
log's head (seq and hash, which `rc1 audit` holds the log to). A pure function of `CardFacts`."""

from __future__ import annotations

import msgspec

from rc1.run import events as ev
from rc1.run.projection import AcrossSeedsView, EvalPoint, ReleaseView
from rc1.views.release import verdict_text

FORMS = {
    "adapter": "a LoRA adapter in PEFT's layout",
    "merged": "the LoRA adapter merged into the base model's weights: a whole transformers model",
    "full": "a full fine-tune: every weight of the model, whole",
}


class GatePassed(msgspec.Struct, frozen=True, kw_only=True):
    name: str  # round1 | round2
    seq: int
    ts: str
    checks: list[str]


class CardFacts(msgspec.Struct, frozen=True, kw_only=True):
    run: str
    log: str  # the log's path, relative to the workspace
    log_seq: int
    log_hash: str
    form: str  # adapter | merged | full
    base_model: str  # model.name
    base_reference: str | None  # an adapter's base_model_name_or_path (a hub id, or ./base when exported beside it)
    base_on_hub: bool
    method: str  # finetune.method
    lora: dict[str, str]  # r, alpha, dropout, targets (empty for full)
    engine: str
    strategy: str
    hyper: dict[str, str]  # the training settings worth knowing (learning rate, β, replies per prompt, …)
    asked: str  # best | latest | step_N
    step: int
    max_steps: int | None
    checkpoint: str
    checkpoint_seq: int
    seed: int | None
    seeds: list[int]
    segments: int  # training segments of the line (1 + resumes)
    dtype: str
    parameters: int | None  # of the exported model, or an adapter's base (None: a hub base, which is not loaded)
    fingerprints: ev.Fingerprints | None
    gates: list[GatePassed]
    release: ReleaseView | None
    across_seeds: AcrossSeedsView | None
    evaluation: EvalPoint | None  # the shadow set's evaluation at the exported step, if there was one
    reward_weights: dict[str, float] = msgspec.field(default_factory=dict)  # the weights check of round 2, as logged
    functions: dict[str, str] = msgspec.field(default_factory=dict)  # your reward functions: name -> module:function
    mix: dict[str, float] = msgspec.field(default_factory=dict)  # data.mix
    your_tasks: dict[str, str] = msgspec.field(default_factory=dict)  # your tasks: name -> how answers are checked
    # The monitors (docs/monitors-and-runbook.md) up to the checkpoint: each trip of the line (rule, step, action,
    # what it said) and each training key a rollback from a halt amended (dotted key -> "old -> new").
    trips: list[str] = msgspec.field(default_factory=list)
    amended: dict[str, str] = msgspec.field(default_factory=dict)
    trained_by: list[str]  # code versions that wrote the log up to the checkpoint (run_started)
    exported_by: str
    files: dict[str, ev.ExportedFile]  # every file but the card itself


def render(f: CardFacts) -> str:
    return "\n".join([_front_matter(f), *_body(f)]) + "\n"


def _front_matter(f: CardFacts) -> str:
    lines = [
        "---",
        f"library_name: {'peft' if f.form == 'adapter' else 'transformers'}",
        "pipeline_tag: text-generation",
    ]
    if f.base_on_hub:
        lines.append(f"base_model: {f.base_model}")
    lines += ["tags:", "- rc1", f"- {f.strategy}", f"- {f.method}", "---"]
    return "\n".join(lines)


def _body(f: CardFacts) -> list[str]:
    seed = f" (seed {f.seed} of {', '.join(map(str, f.seeds))})" if len(f.seeds) > 1 else ""
    out = [
        "",
        f"# {f.run} — step {f.step}{seed}",
        "",
        f"Exported by rc1 from the run `{f.run}`: {FORMS[f.form]}. Everything below is read from the run's event log "
        f"(`{f.log}`), whose line seq {f.log_seq} has the sha256 `{f.log_hash}`: the log this model came from holds "
        "that line, and `rc1 audit` checks it still does.",
        "",
        "## Provenance",
        "",
        "| | |",
        "|---|---|",
        f"| base model | `{f.base_model}` |",
        f"| method | {f.method}{_lora(f.lora)} |",
        f"| strategy | {f.strategy} on the {f.engine} engine |",
        f"| checkpoint | step {f.step} of {f.max_steps if f.max_steps is not None else '?'} (`--checkpoint "
        f"{f.asked}`), "
        f"`{f.checkpoint}`, vouched for by `checkpoint_saved` at seq {f.checkpoint_seq} |",
        f"| training | {f.segments} segment(s) (1 + resumes); {', '.join(f'{k} {v}' for k, v in f.hyper.items())} |",
        f"| monitors | {'; '.join(f.trips) or 'no rule tripped'}"
        + (f"; amended on a rollback: {', '.join(f'{k} {v}' for k, v in f.amended.items())}" if f.amended else "")
        + " |",
        f"| weights | {_weights(f)} |",
        f"| code | trained by rc1 {', '.join(f.trained_by) or '?'}; exported by rc1 {f.exported_by} |",
        f"| log | `{f.log}`, head seq {f.log_seq}, sha256 `{f.log_hash}` |",
        "",
    ]
    out += _reward(f) + _data(f) + _gates(f) + _release(f) + _loading(f) + _files(f)
    return out


def _weights(f: CardFacts) -> str:
    if f.form == "adapter":
        return f"the adapter, over a base in {f.dtype}" + (f" of {f.parameters:,} parameters" if f.parameters else "")
    return f"{f.dtype}" + (f", {f.parameters:,} parameters" if f.parameters else "")


def _lora(lora: dict[str, str]) -> str:
    return f" (LoRA {', '.join(f'{k} {v}' for k, v in lora.items())})" if lora else ""


def _reward(f: CardFacts) -> list[str]:
    if not f.reward_weights and not f.mix:
        return []
    yours = {**{name: f"your function `{path}`" for name, path in f.functions.items()}}
    lines = ["## Reward and tasks", ""]
    if f.reward_weights:
        lines += [
            "Reward components and their weights (round 2's `weights` check):",
            "",
            "| component | weight | |",
            "|---|---|---|",
            *[f"| {name} | {weight:g} | {yours.get(name, 'rc1')} |" for name, weight in f.reward_weights.items()],
            "",
        ]
    if f.mix:
        lines += [
            "Task shares of the data (`data.mix`): "
            + ", ".join(
                f"{task} {share:g}" + (f" (yours, checked by {f.your_tasks[task]})" if task in f.your_tasks else "")
                for task, share in f.mix.items()
            )
            + ".",
            "",
        ]
    return lines


def _data(f: CardFacts) -> list[str]:
    if f.fingerprints is None:
        return []
    fp = f.fingerprints
    rows = [(name, getattr(fp, name)) for name in ev.GATED_INPUTS if getattr(fp, name)]
    return [
        "## Data fingerprints",
        "",
        "The sha256 of every input the gates passed on (`round2_passed`): training refuses to run on any other.",
        "",
        "| input | sha256 |",
        "|---|---|",
        *[f"| {name} | `{sha}` |" for name, sha in rows],
        "",
    ]


def _gates(f: CardFacts) -> list[str]:
    lines = ["## Gates passed", ""]
    for gate in f.gates:
        lines.append(f"- {gate.name}: seq {gate.seq}, {gate.ts}, {len(gate.checks)} checks: {', '.join(gate.checks)}")
    return lines + [""]


def _release(f: CardFacts) -> list[str]:
    lines = ["## Release verdict", ""]
    r = f.release
    if r is None:
        lines.append("Not evaluated: the line of training had not finished when this was exported.")
    else:
        what = (
            "RC1 release gate"
            if r.release
            else "The RC1 release gate's rule on a smoke run's small gate set (profile smoke)"
        )
        lines.append(f"{what} (held-out gate set, paired, 95 % bootstrap interval): {verdict_text(r)}.")
        if r.step == f.step:
            lines.append(f"The verdict measured this checkpoint (step {f.step}).")
        else:
            lines.append(
                f"The verdict measured step {r.step}, not this checkpoint (step {f.step}): it does not speak "
                "for this export."
            )
    if f.across_seeds is not None:
        a = f.across_seeds
        lines.append(
            f"Across seeds: {'PASSED' if a.passed else 'NOT PASSED'}, mean gain {a.mean_pp:+.1f} pp, spread "
            f"{a.spread_pp:.1f} pp (needs mean − spread ≥ {a.threshold_pp:g} pp and every seed passed)."
        )
    if f.evaluation is not None:
        e = f.evaluation
        sampled = f", sampled {e.hard_sampled_success:.3f}" if e.hard_sampled_success is not None else ""
        hard = f"; hard release items greedy {e.hard_success:.3f}{sampled}" if e.hard_success is not None else ""
        lines.append(f"Shadow set at step {e.step}: success {e.success:.3f}, mean reward {e.mean_reward:.4f}{hard}.")
    return lines + [""]


def _loading(f: CardFacts) -> list[str]:
    if f.form != "adapter":
        lines = [
            "## Loading",
            "",
            "```python",
            "from transformers import AutoModelForCausalLM, AutoTokenizer",
            'model = AutoModelForCausalLM.from_pretrained("<this directory or repo>")',
            'tokenizer = AutoTokenizer.from_pretrained("<this directory or repo>")  # with its chat template',
            "```",
            "",
            "vLLM: `vllm serve <this directory or repo>`.",
            "",
        ]
        if f.form == "merged" and f.method == "qlora":
            lines += [
                f"QLoRA trained on a 4-bit base; to merge, the base was loaded in {f.dtype} (as PEFT recommends: "
                "merging into 4-bit weights rounds the adapter away), so this model is the size of the base "
                f"in {f.dtype}{_memory(f)}.",
                "",
            ]
        return lines
    if f.base_on_hub:
        return [
            "## Loading",
            "",
            f"The base is `{f.base_reference}` on the hub (`base_model_name_or_path`).",
            "",
            "```python",
            "from peft import AutoPeftModelForCausalLM",
            "from transformers import AutoTokenizer",
            'model = AutoPeftModelForCausalLM.from_pretrained("<this directory or repo>")',
            'tokenizer = AutoTokenizer.from_pretrained("<this directory or repo>")',
            "```",
            "",
        ]
    return [
        "## Loading",
        "",
        f"The base (`{f.base_model}`, on no hub) is exported beside the adapter in `base/`, a whole transformers "
        f"model with its tokenizer; `base_model_name_or_path` is `{f.base_reference}`, a path relative to the "
        "directory the reader runs in:",
        "",
        "```python",
        "from peft import PeftModel",
        "from transformers import AutoModelForCausalLM, AutoTokenizer",
        'base = AutoModelForCausalLM.from_pretrained("<dir>/base")',
        'model = PeftModel.from_pretrained(base, "<dir>")',
        'tokenizer = AutoTokenizer.from_pretrained("<dir>")',
        "```",
        "",
        'or, from inside the directory, `AutoPeftModelForCausalLM.from_pretrained(".")`.',
        "",
    ]


def _memory(f: CardFacts) -> str:
    if not f.parameters:
        return ""
    size = {"bfloat16": 2, "float16": 2, "float32": 4}.get(f.dtype, 2)
    return (
        f": about {f.parameters * size / 1e9:.1f} GB of memory to merge and to load ({f.parameters / 1e9:.2f} B "
        f"parameters × {size} bytes), against about {f.parameters * 0.5 / 1e9:.1f} GB for the 4-bit base"
    )


def _files(f: CardFacts) -> list[str]:
    return [
        "## Files",
        "",
        "| file | bytes | sha256 |",
        "|---|---:|---|",
        *[f"| `{rel}` | {entry.bytes:,} | `{entry.sha256}` |" for rel, entry in sorted(f.files.items())],
    ]
