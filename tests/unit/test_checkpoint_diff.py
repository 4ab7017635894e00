"""A retrained checkpoint against the recorded one: equal files by sha256, a differing one tensor by tensor (or key by
key), and only what the steps did not compute left out."""

from __future__ import annotations

import json
import math

import torch
from safetensors.torch import save_file

from rc1.core.fsutil import hash_tree
from rc1.train.checkpoint_diff import compare_checkpoint


def checkpoint(folder, weight: torch.Tensor, moment: torch.Tensor, step_time: float, num_tokens: int = 10):
    folder.mkdir()
    save_file({"a.weight": weight, "b.bias": torch.zeros(2)}, folder / "model.safetensors")
    torch.save(
        {"state": {0: {"exp_avg": moment, "step": torch.tensor(4.0)}}, "param_groups": [{"lr": 0.1}]},
        folder / "optimizer.pt",
    )
    log = [{"step": 1, "loss": 0.5, "step_time": step_time, "num_tokens": num_tokens}]
    (folder / "trainer_state.json").write_text(json.dumps({"global_step": 1, "log_history": log}))
    (folder / "rc1_meta.json").write_text(json.dumps({"log_seq": int(step_time * 100)}))
    return folder


def test_equal_steps_give_equal_files_whatever_their_times_and_the_log_head_they_saw(tmp_path):
    recorded = checkpoint(tmp_path / "recorded", torch.ones(3), torch.full((3,), 0.5), step_time=1.25)
    retrained = checkpoint(tmp_path / "retrained", torch.ones(3), torch.full((3,), 0.5), step_time=9.5, num_tokens=4)
    compared = compare_checkpoint(retrained, recorded, hash_tree(recorded), "checkpoints/local/step_00004", 4)
    assert compared.same and sorted(compared.equal) == ["model.safetensors", "optimizer.pt", "trainer_state.json"]


def test_a_differing_file_names_its_first_and_largest_differing_tensor(tmp_path):
    recorded = checkpoint(tmp_path / "recorded", torch.tensor([1.0, 2.0, 4.0]), torch.full((3,), 0.5), 1.0)
    retrained = checkpoint(tmp_path / "retrained", torch.tensor([1.0, 2.5, 4.0]), torch.full((3,), 0.25), 1.0)
    compared = compare_checkpoint(retrained, recorded, hash_tree(recorded), "checkpoints/local/step_00004", 4)
    differing = {d.file: d for d in compared.differing}
    assert sorted(differing) == ["model.safetensors", "optimizer.pt"] and compared.equal == ["trainer_state.json"]
    [weight] = differing["model.safetensors"].tensors
    assert (weight.name, weight.max_abs, weight.max_rel) == ("a.weight", 0.5, 0.125)  # 0.5 over the largest, 4.0
    assert differing["model.safetensors"].tensors_compared == 2
    [moment] = differing["optimizer.pt"].tensors
    assert moment.name == "state.0.exp_avg" and moment.max_abs == 0.25


def test_a_file_the_retrain_did_not_write_or_a_recorded_one_changed_since_is_named_without_reading_it(tmp_path):
    recorded = checkpoint(tmp_path / "recorded", torch.ones(3), torch.ones(3), 1.0)
    retrained = checkpoint(tmp_path / "retrained", torch.ones(3), torch.ones(3), 1.0)
    files = hash_tree(recorded)
    (retrained / "optimizer.pt").unlink()
    (recorded / "model.safetensors").write_bytes(b"changed since")
    compared = compare_checkpoint(retrained, recorded, files, "checkpoints/local/step_00004", 4)
    differing = {d.file: d for d in compared.differing}
    assert differing["optimizer.pt"].retrained_sha256 is None
    # the retrained weights equal the recorded sha256: the file on disk is not what the log vouches for, not the retrain
    assert "model.safetensors" in compared.equal


def test_a_log_entry_the_steps_computed_differs_key_by_key(tmp_path):
    recorded = checkpoint(tmp_path / "recorded", torch.ones(3), torch.ones(3), 1.0)
    retrained = checkpoint(tmp_path / "retrained", torch.ones(3), torch.ones(3), 1.0)
    state = json.loads((retrained / "trainer_state.json").read_text())
    state["log_history"][0]["loss"] = 0.75
    (retrained / "trainer_state.json").write_text(json.dumps(state))
    compared = compare_checkpoint(retrained, recorded, hash_tree(recorded), "checkpoints/local/step_00004", 4)
    [entry] = compared.differing[0].tensors
    assert entry.name == "log_history.0.loss" and math.isclose(entry.max_abs, 0.25)
