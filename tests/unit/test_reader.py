"""The built-in reader (issue 50): built bit for bit from its recipe, shipped pinned, trained on nothing a run holds
out or trains on, and able to copy."""

import shutil

import msgspec
import pytest
from conftest import REPO

from rc1.core.errors import BadInput
from rc1.core.fsutil import sha256_file
from rc1.reader import shipped
from rc1.reader.build import BUILD_RECORD, TEMPLATES, Recipe, build_reader
from rc1.reader.corpus import reader_items

SMALL = Recipe(live_items=24, recorded_items=12, max_induction_steps=10, reading_steps=4, require_copying=False)


def test_two_builds_of_one_recipe_are_the_same_bytes_and_another_seed_is_not(tmp_path):
    first = build_reader(tmp_path / "a", SMALL, say=lambda _: None)
    build_reader(tmp_path / "b", SMALL, say=lambda _: None)
    build_reader(tmp_path / "c", msgspec.structs.replace(SMALL, seed=SMALL.seed + 1), say=lambda _: None)
    for name in shipped.PINNED:
        assert sha256_file(tmp_path / "a" / name) == sha256_file(tmp_path / "b" / name)
    assert sha256_file(tmp_path / "a" / "model.safetensors") != sha256_file(tmp_path / "c" / "model.safetensors")
    assert msgspec.json.decode((tmp_path / "a" / BUILD_RECORD).read_bytes())["recipe"]["seed"] == SMALL.seed
    assert first.induction_steps == 10 and first.reading_losses == [] and first.live_texts > 20


def test_a_build_whose_curriculum_forms_no_copying_is_refused(tmp_path):
    strict = msgspec.structs.replace(SMALL, require_copying=True)
    with pytest.raises(RuntimeError, match="did not form copying heads in 10 steps"):
        build_reader(tmp_path / "r", strict, say=lambda _: None)
    assert not (tmp_path / "r").exists()


def test_the_shipped_reader_is_the_pinned_bytes_and_a_changed_file_is_refused_by_name(tmp_path):
    assert shipped.reader_dir() == shipped.WEIGHTS
    copy = tmp_path / "weights"
    shutil.copytree(shipped.WEIGHTS, copy)
    assert shipped._checked(copy) == copy
    tampered = tmp_path / "tampered"
    shutil.copytree(shipped.WEIGHTS, tampered)
    (tampered / "tokenizer.json").write_text((tampered / "tokenizer.json").read_text().replace('"Ġ"', '"Ġ "', 1))
    with pytest.raises(BadInput, match=r"tokenizer\.json: sha256 .* is not the pinned"):
        shipped._checked(tampered)
    missing = tmp_path / "missing"
    shutil.copytree(shipped.WEIGHTS, missing)
    (missing / "model.safetensors").unlink()
    with pytest.raises(BadInput, match="model.safetensors is missing"):
        shipped._checked(missing)


def test_nothing_the_reader_reads_is_an_item_of_the_embedded_defaults_pool_shadow_or_gate_set(tmp_path):
    """The reader's items come from id prefixes of their own, so from other random streams than any run's; checked
    here on the embedded default's own sets, live and recorded (configs/local.yaml, built as round 1 builds them)."""
    from rc1.app.datasets import build_held_out, build_seed_pool
    from rc1.config.loading import load_config
    from rc1.config.recorded import recorded_overrides
    from rc1.core.workspace import Workspace

    shutil.copytree(REPO / "configs", tmp_path / "configs")
    run_questions = set()
    for kind, overrides in (("live", []), ("recorded", recorded_overrides())):
        loaded = load_config(tmp_path / "configs" / "local.yaml", overrides)
        ws = Workspace(root=tmp_path / kind, run=loaded.config.run.name)  # each its own sets, none read from the other
        held = build_held_out(loaded, ws)
        run_questions |= {i.question for i in build_seed_pool(loaded, ws) + held.shadow + held.gate}
    read = reader_items(2000, Recipe().seed, "reader", TEMPLATES, "live")
    read += reader_items(600, Recipe().seed, "reader-recorded", TEMPLATES, "recorded")
    assert len(run_questions) > 850 and not run_questions & {i.question for i in read}


def test_the_shipped_reader_was_built_by_this_recipe_on_the_corpus_this_code_makes():
    """A change to what the reader reads (the pack's dressing, the tools' schema, the gold paths, the generators)
    without `make reader` is caught here, in seconds, rather than by `make reader-check`'s 40 minutes."""
    from rc1.reader.build import RECIPE, corpus_digest, recipe_corpus

    record = msgspec.json.decode((shipped.WEIGHTS / BUILD_RECORD).read_bytes())
    assert record["recipe"] == msgspec.to_builtins(RECIPE)
    corpus = recipe_corpus(RECIPE)
    assert corpus_digest(corpus.live + corpus.recorded) == record["corpus_sha256"], "rebuild the reader: make reader"


class Stopped(Exception):
    pass


def test_a_build_stopped_part_way_goes_on_from_its_progress_to_the_same_bytes(tmp_path):
    """Stopped after its progress was saved in the curriculum and again in reading (as a session's end or a kill
    would stop it), the build goes on from the folder and ends in the bytes of a build that never stopped."""
    from rc1.reader import progress

    recipe = msgspec.structs.replace(SMALL, batch=4, window=128, max_induction_steps=6, reading_steps=6)
    whole = build_reader(tmp_path / "whole", recipe, say=lambda _: None)
    saves: list[str] = []

    def stop_at(count: int):
        def say(line: str) -> None:
            if line.startswith("progress saved"):
                saves.append(line)
                if len(saves) == count:
                    raise Stopped(line)

        return say

    state = tmp_path / "state"
    with pytest.raises(Stopped, match="curriculum step 4"):
        build_reader(tmp_path / "part", recipe, say=stop_at(2), state=state, save_every=2)
    with pytest.raises(Stopped, match="reading step 4"):
        build_reader(tmp_path / "part", recipe, say=stop_at(5), state=state, save_every=2)
    assert not (tmp_path / "part").exists()  # a whole build or none
    resumed = build_reader(tmp_path / "part", recipe, say=lambda _: None, state=state, save_every=2)
    for name in shipped.PINNED:
        assert sha256_file(tmp_path / "part" / name) == sha256_file(tmp_path / "whole" / name), name
    assert (resumed.induction_steps, resumed.stream_tokens) == (whole.induction_steps, whole.stream_tokens)
    with pytest.raises(ValueError, match="the progress of another recipe's build"):
        progress.load(state, msgspec.structs.replace(recipe, seed=recipe.seed + 1))
