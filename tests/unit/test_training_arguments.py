"""TrainingArguments keywords picked from the installed transformers' own fields (issue 51: transformers 5.17, the
GPU image's, has no `activation_checkpointing`)."""

import pytest
from trl import GRPOConfig, SFTConfig

from rc1.registry.training_arguments import checkpointing, checkpointing_of


@pytest.mark.parametrize("config_class", [GRPOConfig, SFTConfig])
@pytest.mark.parametrize("on", [True, False])
def test_the_checkpointing_keyword_is_one_the_installed_config_takes_and_sets(tmp_path, config_class, on):
    args = config_class(output_dir=str(tmp_path), use_cpu=True, report_to="none", **checkpointing(on))
    assert checkpointing_of(args) is on
    (name,) = checkpointing(on)
    assert name in {"activation_checkpointing", "gradient_checkpointing"}
