"""A resume of a model whose output layer is tied to its embeddings: transformers' Trainer warns that
`lm_head.weight` is missing from the checkpoint. rc1 keeps that one warning off the console and writes it, with the
reason, to the run's log; any other missing key still warns on the console."""

import subprocess
import sys

import pytest
from conftest import PATIENCE
from safetensors.torch import load_file
from transformers import AutoModelForCausalLM

from rc1.train.tied_weights import tied_parameter_names
from rc1.train.tiny_model import build_tiny_qwen3

TEXTS = [f"question {i}: what is {i} plus {i + 1}? answer {2 * i + 1}" for i in range(40)]

# Loads the checkpoint as Trainer's resume does (non-strict) and lets transformers' Trainer issue its own warning,
# three ways, in one fresh process so that the console is transformers' real stream handler on stderr: bare (the
# control), through rc1's filter, and through it with a key truly missing. Each way's console and log lines follow a
# header line of its own.
RESUME = """
import sys, types
from safetensors.torch import load_file
from transformers import AutoModelForCausalLM, Trainer
from rc1.train.tied_weights import tied_keys_explained
from rc1.views.library_log import LibraryOutput

model_dir = sys.argv[1]
model = AutoModelForCausalLM.from_pretrained(model_dir)
for way, drop, explained in (("bare", "", False), ("tied", "", True), ("missing", "model.norm.weight", True)):
    state = load_file(f"{model_dir}/model.safetensors")
    state.pop(drop, None)
    result = model.load_state_dict(state, strict=False)
    lines = []
    library = LibraryOutput(lines.append).install()
    print(f"== {way}", file=sys.stderr, flush=True)
    if explained:
        with tied_keys_explained(model):
            Trainer._issue_warnings_after_load(types.SimpleNamespace(model=model), result)
    else:
        Trainer._issue_warnings_after_load(types.SimpleNamespace(model=model), result)
    library.uninstall()
    print(f"== {way}", *lines, sep="\\n", flush=True)
"""


@pytest.fixture(scope="module")
def tied_checkpoint(tmp_path_factory):
    """The built-in model's directory: it ties lm_head to the embeddings and saves the matrix once."""
    return build_tiny_qwen3(TEXTS, tmp_path_factory.mktemp("tiny") / "model", seed=0)


@pytest.fixture(scope="module")
def resumed(tied_checkpoint) -> dict[str, tuple[str, str]]:
    """way -> (what reached the console, what reached the log)."""
    done = subprocess.run(
        [sys.executable, "-c", RESUME, str(tied_checkpoint)], capture_output=True, text=True, timeout=PATIENCE
    )
    assert done.returncode == 0, done.stderr
    return {way: (_part(done.stderr, way), _part(done.stdout, way)) for way in ("bare", "tied", "missing")}


def _part(text: str, way: str) -> str:
    """The lines after `== way` and before the next header."""
    lines = text.splitlines()
    start = lines.index(f"== {way}") + 1
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("== ")), len(lines))
    return "\n".join(lines[start:end])


def test_the_tied_output_layer_is_the_only_name_a_tied_model_saves_once(tied_checkpoint):
    model = AutoModelForCausalLM.from_pretrained(tied_checkpoint)
    assert tied_parameter_names(model) == {"lm_head.weight"}
    assert "lm_head.weight" not in load_file(tied_checkpoint / "model.safetensors")


def test_the_tied_keys_warning_goes_to_the_log_with_its_reason_and_not_to_the_console(resumed):
    console, _ = resumed["bare"]  # control: transformers prints it
    assert "There were missing keys in the checkpoint model loaded: ['lm_head.weight']" in console
    console, logged = resumed["tied"]
    assert "missing keys" not in console
    assert len(logged.strip().splitlines()) == 1 and "lm_head.weight is tied to the input embeddings" in logged


def test_a_key_truly_missing_still_warns_on_the_console(resumed):
    console, logged = resumed["missing"]
    assert "There were missing keys" in console and "model.norm.weight" in console
    assert "tied to the input embeddings" not in logged
