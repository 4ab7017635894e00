"""`rc1 export`: a checkpoint written out as a model (PEFT adapter with the built-in base beside it, merged, full), its
model card from the log, the model_exported event and its audit, the refusals (exit 2, exit 3) and a push to a hub
that cannot be reached (exit 1, one line)."""

from __future__ import annotations

import hashlib
import json
import shutil
import socket
from pathlib import Path

import pytest
from conftest import events, make_workspace, rc1, rc1_here

pytestmark = pytest.mark.e2e

GREEDY_PROMPTS = 10


@pytest.fixture(scope="module")
def lora_run(tmp_path_factory) -> Path:
    """The embedded default trained as a LoRA adapter for 2 steps (checkpoints at 1 and 2, evaluations at 0 and 2)."""
    root = make_workspace(
        tmp_path_factory.mktemp("export-lora"),
        **{"finetune.method": "lora", "train.max_steps": 2, "train.save_steps": 1, "train.eval_steps": 2},
    )
    result = rc1_here(root, "advance", "--all")
    assert result.returncode == 0, result.stdout + result.stderr
    return root


@pytest.fixture(scope="module")
def exported(lora_run) -> dict[str, Path]:
    """The last checkpoint exported as an adapter and merged (the lora run's log holds both model_exported)."""
    for name, extra in (("adapter", []), ("merged", ["--merge"])):
        result = rc1_here(lora_run, "export", "--checkpoint", "latest", "--out", f"exports/{name}", *extra)
        assert result.returncode == 0, result.stdout + result.stderr
    return {"adapter": lora_run / "exports/adapter", "merged": lora_run / "exports/merged"}


def exports_of(root: Path) -> dict[str, dict]:
    return {e["out"]: e for e in events(root) if e["type"] == "model_exported"}


def greedy(model, tokenizer, prompts: list[str]) -> list[list[int]]:
    import torch

    replies = []
    for prompt in prompts:
        ids = tokenizer(prompt, return_tensors="pt")
        with torch.no_grad():
            out = model.generate(**ids, max_new_tokens=24, do_sample=False)
        replies.append(out[0, ids["input_ids"].shape[1] :].tolist())
    return replies


def test_the_adapter_is_peft_s_layout_over_the_built_in_base_exported_beside_it(lora_run, exported, monkeypatch):
    from peft import AutoPeftModelForCausalLM

    from rc1.train.tiny_model import CHAT_TEMPLATE

    adapter = exported["adapter"]
    config = json.loads((adapter / "adapter_config.json").read_text())
    assert config["base_model_name_or_path"] == "./base"  # not this machine's path
    saved = [e for e in events(lora_run) if e["type"] == "checkpoint_saved"][-1]
    weights = hashlib.sha256((adapter / "adapter_model.safetensors").read_bytes()).hexdigest()
    assert weights == saved["files"]["adapter_model.safetensors"]  # the checkpoint's adapter, byte for byte
    assert {"config.json", "generation_config.json", "model.safetensors", "tokenizer.json"} <= {
        p.name for p in (adapter / "base").iterdir()
    }
    monkeypatch.chdir(adapter)  # as the card says: from inside the directory, the base is ./base
    model = AutoPeftModelForCausalLM.from_pretrained(".")
    assert model.peft_config["default"].r == 8
    from transformers import AutoTokenizer

    assert AutoTokenizer.from_pretrained(".").chat_template == CHAT_TEMPLATE


def test_the_merged_export_loads_whole_and_answers_as_base_plus_adapter(lora_run, exported):
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from rc1.data.task import read_items
    from rc1.train.prompts import render_prompt
    from rc1.train.tiny_model import CHAT_TEMPLATE

    merged_dir, adapter_dir = exported["merged"], exported["adapter"]
    assert {"config.json", "generation_config.json", "model.safetensors", "tokenizer.json", "README.md"} <= {
        p.name for p in merged_dir.iterdir()
    }
    for path in merged_dir.glob("*.json"):
        assert str(lora_run) not in path.read_text(), f"{path.name} names this machine's path"
    tokenizer = AutoTokenizer.from_pretrained(merged_dir)
    assert tokenizer.chat_template == CHAT_TEMPLATE
    merged = AutoModelForCausalLM.from_pretrained(merged_dir).eval()
    assert merged.config.use_cache
    with_adapter = PeftModel.from_pretrained(
        AutoModelForCausalLM.from_pretrained(adapter_dir / "base"), adapter_dir
    ).eval()
    prompts = [
        render_prompt(tokenizer, item) for item in read_items(lora_run / "data/local/shadow.jsonl")[:GREEDY_PROMPTS]
    ]
    assert len(prompts) == GREEDY_PROMPTS
    assert greedy(merged, tokenizer, prompts) == greedy(with_adapter, tokenizer, prompts)
    base = with_adapter.get_base_model().state_dict()
    name = "model.layers.0.self_attn.q_proj.base_layer.weight"  # the adapter moved the merged weights off the base's
    assert not merged.state_dict()["model.layers.0.self_attn.q_proj.weight"].equal(base[name])


def test_the_model_card_points_back_to_the_run(lora_run, exported):
    log = events(lora_run)
    export = exports_of(lora_run)["exports/adapter"]
    card = (exported["adapter"] / "README.md").read_text()
    assert hashlib.sha256(card.encode()).hexdigest() == export["card_sha256"] == export["files"]["README.md"]["sha256"]
    lines = (lora_run / "events/local.jsonl").read_bytes().split(b"\n")
    head = hashlib.sha256(lines[export["log_seq"]]).hexdigest()
    assert export["log_hash"] == head and f"seq {export['log_seq']}" in card and head in card
    release = next(e for e in log if e["type"] == "release_evaluated")
    round2 = next(e for e in log if e["type"] == "round2_passed")
    started = next(e for e in log if e["type"] == "run_started")
    assert "base model | `builtin:tiny-qwen3`" in card
    assert "| method | lora (LoRA r 8" in card and "grpo on the trl engine" in card
    assert "step 2 of 2 (`--checkpoint latest`)" in card
    assert (
        f"[{release['ci_low_pp']:+.1f}, {release['ci_high_pp']:+.1f}]" in card
        and f"{release['hard_gain_pp']:+.1f} pp" in card
    )
    assert "The verdict measured this checkpoint (step 2)" in card
    assert all(round2["fingerprints"][name] in card for name in ("pool", "balanced_pool", "shadow", "gate", "config"))
    assert f"- round1: seq {next(e['seq'] for e in log if e['type'] == 'round1_passed')}" in card
    assert f"- round2: seq {round2['seq']}" in card
    assert f"trained by rc1 {started['code_version']}" in card
    assert "./base" in card and "library_name: peft" in card
    weights = json.loads((lora_run / "configs/weights.json").read_text())
    assert all(
        f"| {name} | {weight:g} | rc1 |" in card for name, weight in weights.items()
    )  # the reward it was trained on


def test_the_export_is_an_event_that_names_every_file(lora_run, exported):
    for out, export in exports_of(lora_run).items():
        directory = lora_run / out
        on_disk = {str(p.relative_to(directory)) for p in directory.rglob("*") if p.is_file()}
        assert set(export["files"]) == on_disk
        for rel, recorded in export["files"].items():
            data = (directory / rel).read_bytes()
            assert recorded == {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
    merged = exports_of(lora_run)["exports/merged"]
    assert (merged["form"], merged["step"], merged["asked"], merged["seed"]) == ("merged", 2, "latest", 1234)
    status = json.loads(rc1_here(lora_run, "status", "--json").stdout)
    assert {(e["out"], e["form"]) for e in status["exports"]} >= {
        ("exports/adapter", "adapter"),
        ("exports/merged", "merged"),
    }


def test_audit_verifies_exports_an_edited_file_is_a_finding_a_moved_export_a_note(lora_run, exported, tmp_path):
    passed = rc1_here(lora_run, "audit", "--json")
    assert passed.returncode == 0, passed.stdout
    copy = tmp_path / "copy"
    shutil.copytree(lora_run, copy, symlinks=True)
    config = copy / "exports/merged/config.json"
    config.write_text(config.read_text().replace('"use_cache": true', '"use_cache": false'))
    shutil.move(copy / "exports/adapter", tmp_path / "shipped")
    audited = rc1_here(copy, "audit", "--json")
    report = json.loads(audited.stdout)
    merged, adapter = exports_of(copy)["exports/merged"], exports_of(copy)["exports/adapter"]
    assert audited.returncode == 3
    assert [(f["check"], f["seq"]) for f in report["findings"]] == [("export", merged["seq"])]
    assert "exports/merged/config.json" in report["findings"][0]["message"]
    assert [(n["check"], n["seq"]) for n in report["notes"]] == [("export", adapter["seq"])]
    assert "moved or deleted" in report["notes"][0]["message"]


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["--checkpoint", "step_99"],
            r"no checkpoint_saved of this line of training for step 99 \(its checkpoints: steps 1, 2\)",
        ),
        (["--checkpoint", "bogus"], "use best, latest or step_N"),
        (["--checkpoint", "latest", "--seed", "7"], "this run trains seed 1234 only"),
        (["--checkpoint", "latest", "--out", "exports/adapter"], "exists and is not empty"),
        (["--checkpoint", "latest", "--out", "configs/short.yaml"], "exists and is not a directory"),
        (["--checkpoint", "latest", "--push-to-hub", "not a repo"], "not a hub repo id"),
    ],
)
def test_a_bad_checkpoint_or_out_is_exit_2_and_appends_nothing(lora_run, exported, args, message):
    import re

    before = (lora_run / "events/local.jsonl").read_bytes()
    out = [] if "--out" in args else ["--out", "exports/never"]
    result = rc1_here(lora_run, "export", *args, *out)
    assert result.returncode == 2, result.stderr
    assert re.search(message, result.stderr), result.stderr
    assert (lora_run / "events/local.jsonl").read_bytes() == before
    assert not (lora_run / "exports/never").exists()


def test_an_export_is_refused_once_the_gates_its_training_passed_are_invalidated(lora_run, tmp_path, monkeypatch):
    from rc1.app.session import Session
    from rc1.config.loading import load_config
    from rc1.run import events as ev

    copy = tmp_path / "copy"
    shutil.copytree(lora_run, copy, symlinks=True)
    monkeypatch.chdir(copy)
    with Session.open(load_config("configs/short.yaml")) as session:
        session.append(ev.GateInvalidated(input="pool", old_sha256="a" * 64, new_sha256="b" * 64))
    before = (copy / "events/local.jsonl").read_bytes()
    result = rc1_here(copy, "export", "--checkpoint", "latest", "--out", "again")
    assert result.returncode == 3
    assert "model_exported is not allowed in state INIT" in result.stderr
    assert (copy / "events/local.jsonl").read_bytes() == before and not (copy / "again").exists()


def test_a_push_to_an_unreachable_hub_is_exit_1_in_one_line_and_the_export_stands(lora_run, exported):
    with socket.socket() as s:  # a port nothing listens on: a real HTTP attempt, refused
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {"HF_ENDPOINT": f"http://127.0.0.1:{port}", "HF_HUB_OFFLINE": "0", "HF_TOKEN": "hf_rc1_test_token"}
    import os

    result = rc1(
        lora_run,
        "export",
        "--checkpoint",
        "step_1",
        "--out",
        "exports/pushed",
        "--push-to-hub",
        "me/tiny",
        env={**os.environ, **env},
    )
    stderr = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr and len(stderr) == 1, result.stderr
    assert stderr[0].startswith("FATAL: --push-to-hub me/tiny: cannot reach http://127.0.0.1:")
    assert "exports/pushed" in stderr[0] and "hf upload me/tiny" in stderr[0]
    pushed = exports_of(lora_run)["exports/pushed"]
    assert pushed["step"] == 1 and (lora_run / "exports/pushed/adapter_model.safetensors").is_file()
    assert rc1_here(lora_run, "audit").returncode == 0


def test_a_full_fine_tune_exports_its_model_whole_from_the_best_checkpoint(finished_copy, monkeypatch):
    """The embedded default trains every weight: `best` (the default) is the line's last best/ promotion."""
    from safetensors.torch import load_file
    from transformers import AutoModelForCausalLM

    from rc1.app.session import Session
    from rc1.config.loading import load_config
    from rc1.run import events as ev
    from rc1.train import checkpoints

    monkeypatch.chdir(finished_copy)
    saved = {e["step"]: e for e in events(finished_copy) if e["type"] == "checkpoint_saved"}
    step = sorted(saved)[-2]  # not the final checkpoint: `best` must not mean `latest`
    best = finished_copy / f"checkpoints/local/best/step_{step:05d}"
    files = checkpoints.promote_best(finished_copy / saved[step]["dir"], best)
    with Session.open(load_config("configs/short.yaml")) as session:
        session.append(
            ev.BestPromoted(
                step=step, dir=str(best.relative_to(finished_copy)), metric="sampled_success", value=1.0, files=files
            )
        )
    result = rc1_here(finished_copy, "export", "--out", "full")
    assert result.returncode == 0, result.stderr
    export = exports_of(finished_copy)["full"]
    assert (export["form"], export["step"], export["asked"]) == ("full", step, "best")
    model = AutoModelForCausalLM.from_pretrained(finished_copy / "full")
    trained = load_file(finished_copy / saved[step]["dir"] / "model.safetensors")
    state = model.state_dict()
    assert trained and all(state[name].equal(tensor) for name, tensor in trained.items())
    card = (finished_copy / "full/README.md").read_text()
    assert "| method | full |" in card and "library_name: transformers" in card
    assert rc1_here(finished_copy, "audit").returncode == 0


def test_the_line_of_a_seed_is_the_log_up_to_its_run_completed():
    """With several seeds, --seed picks the line: a finished one is the log replayed to its run_completed. A line
    nothing was promoted to best/ in has no `best`: refused, naming the checkpoints there are."""
    import msgspec

    from rc1.app.export import line_of, pick_checkpoint
    from rc1.core.errors import BadInput
    from rc1.run import events as ev
    from rc1.run.replay import replay

    fp = ev.Fingerprints(pool="p", shadow="s", config="c", weights="w")
    started = dict(
        resume_from_step=0,
        resume_from_dir=None,
        max_steps=2,
        engine="trl",
        strategy="grpo",
        model="m",
        device="cpu",
        dtype="float32",
        seeds=[1, 2],
    )
    log = [
        ev.Round1Passed(fingerprints=fp, checks=[]),
        ev.Round2Passed(fingerprints=fp, checks=[]),
        ev.TrainingStarted(seed=1, **started),
        ev.CheckpointSaved(step=2, dir="c/seed_1/step_00002", files={}),
        ev.RunCompleted(step=2, best_step=None, final_checkpoint="c/seed_1/step_00002", seed=1),
        ev.TrainingStarted(seed=2, **started),
        ev.CheckpointSaved(step=1, dir="c/seed_2/step_00001", files={}),
    ]
    log = [msgspec.structs.replace(e, seq=i) for i, e in enumerate(log)]
    current = replay(log).projection
    assert pick_checkpoint(line_of(log, [1, 2], 1, current).projection, "latest").dir == "c/seed_1/step_00002"
    assert pick_checkpoint(line_of(log, [1, 2], 2, current).projection, "latest").dir == "c/seed_2/step_00001"
    for seed, message in ((None, "this run trains 2 seeds"), (3, "not a seed of this run")):
        with pytest.raises(BadInput, match=message):
            line_of(log, [1, 2], seed, current)
    with pytest.raises(BadInput, match="has not started yet"):
        line_of(log[:5], [1, 2], 2, replay(log[:5]).projection)
    with pytest.raises(
        BadInput,
        match=r"no checkpoint of this line of training was promoted to best/ \(its checkpoints: "
        r"steps 2\); export one with --checkpoint latest or step_N",
    ):
        pick_checkpoint(line_of(log, [1, 2], 1, current).projection, "best")


def test_the_card_of_a_merged_qlora_export_names_its_hub_base_and_what_merging_cost():
    """A production export, rendered without a hub: the base is a hub id in the front matter, and a QLoRA merge says
    the base was loaded in bf16 and what that weighs."""
    from rc1.run import events as ev
    from rc1.views.model_card import CardFacts, render

    card = render(
        CardFacts(
            run="rc1",
            log="events/rc1.jsonl",
            log_seq=9,
            log_hash="h" * 64,
            form="merged",
            base_model="Qwen/Qwen3-4B-Thinking-2507",
            base_reference=None,
            base_on_hub=True,
            method="qlora",
            lora={"r": "8", "alpha": "16"},
            engine="trl",
            strategy="grpo",
            hyper={"learning rate": "1e-05"},
            asked="best",
            step=500,
            max_steps=50000,
            checkpoint="checkpoints/rc1/seed_1234/step_00500",
            checkpoint_seq=7,
            seed=1234,
            seeds=[1234, 2345, 3456],
            segments=1,
            dtype="bfloat16",
            parameters=4_022_468_096,
            fingerprints=None,
            gates=[],
            release=None,
            across_seeds=None,
            evaluation=None,
            trained_by=["0.1.0"],
            exported_by="0.1.0",
            files={"model.safetensors": ev.ExportedFile(sha256="s" * 64, bytes=8_044_936_192)},
        )
    )
    assert card.startswith("---\nlibrary_name: transformers\n") and "base_model: Qwen/Qwen3-4B-Thinking-2507\n" in card
    assert "# rc1 — step 500 (seed 1234 of 1234, 2345, 3456)" in card
    assert "loaded in bfloat16" in card and "about 8.0 GB of memory" in card and "4.02 B parameters × 2 bytes" in card
    assert "Not evaluated" in card and f"| `model.safetensors` | 8,044,936,192 | `{'s' * 64}` |" in card


def test_an_adapter_is_not_exported_over_a_base_that_changed_since_its_line_started(lora_run, exported, tmp_path):
    """The line recorded its frozen base's sampled hashes when it started; the built-in base in the model cache is
    then changed (one step up in the first value of every weight): the export refuses it, exit 3, appending
    nothing and writing nothing, and `rc1 audit` finds it, exit 3, where it passed on the base as trained."""
    import torch
    from conftest import MODELS
    from safetensors.torch import load_file, save_file

    from rc1.app.policy import builtin_folders
    from rc1.config.loading import load_config
    from rc1.core.workspace import Workspace

    copy = tmp_path / "copy"
    shutil.copytree(lora_run, copy, symlinks=True)
    loaded = load_config(copy / "configs/short.yaml")
    used = [folder.name for folder in builtin_folders(Workspace(root=copy, run="local"), loaded, 1234) if folder]
    (copy / "data/models").unlink()  # the suite's shared cache: the run's own models changed in a copy of it only
    for name in used:
        shutil.copytree(MODELS / name, copy / "data/models" / name)
    for weights in (copy / "data/models").rglob("model.safetensors"):
        tensors = load_file(weights)
        for tensor in tensors.values():
            if tensor.is_floating_point():
                tensor.view(-1)[0] = torch.nextafter(tensor.view(-1)[0], torch.tensor(float("inf"), dtype=tensor.dtype))
        save_file(tensors, weights, metadata={"format": "pt"})
    before = (copy / "events/local.jsonl").read_bytes()
    result = rc1_here(copy, "export", "--checkpoint", "latest", "--out", "exports/again")
    assert result.returncode == 3, result.stderr
    assert "hash otherwise than the base loaded now" in result.stderr and "Traceback" not in result.stderr
    assert (copy / "events/local.jsonl").read_bytes() == before and not (copy / "exports/again").exists()
    audited = rc1_here(copy, "audit")
    assert audited.returncode == 3, audited.stdout + audited.stderr
    assert "FAIL [frozen_base]" in audited.stdout and "hash otherwise than the base loaded now" in audited.stdout
    assert audited.stdout.count("FAIL [") == 1  # nothing else the audit checks changed
    untouched = rc1_here(lora_run, "audit")
    assert untouched.returncode == 0 and "frozen_base" in untouched.stdout, untouched.stdout + untouched.stderr
