"""A model whose output layer is tied to its input embeddings (the built-in tiny model, and Qwen3-4B:
`tie_word_embeddings: true`) saves that matrix once, under the embeddings' name. On every resume transformers'
Trainer loads the checkpoint non-strictly and warns "There were missing keys in the checkpoint model loaded:
['lm_head.weight']", which a user reads as a broken checkpoint. Nothing is missing: loading the embeddings restored
the tied layer, since it is the same tensor. While training resumes, that one record, when every key it names is a
tied one, keeps off the console and goes to logs/train.log with the reason (the session's library log). Any other
missing key still warns on the console as transformers wrote it.
"""

from __future__ import annotations

import ast
import contextlib
import logging

import torch

MISSING_KEYS = "There were missing keys in the checkpoint model loaded: "
_CONSOLE_OFF = "rc1_keep_off_console"


def tied_parameter_names(model: torch.nn.Module) -> set[str]:
    """The names under which a parameter already seen appears again: the tied copies (`lm_head.weight`)."""
    seen: set[int] = set()
    tied = set()
    for name, parameter in model.named_parameters(remove_duplicate=False):
        if id(parameter) in seen:
            tied.add(name)
        seen.add(id(parameter))
    return tied


class _ExplainTiedKeys(logging.Filter):
    """On transformers' trainer logger: the missing-keys record that names only tied keys gets its reason, and is
    marked to stay off the console."""

    def __init__(self, tied: set[str]):
        super().__init__()
        self._tied = tied

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if not message.startswith(MISSING_KEYS):
            return True
        try:
            missing = set(ast.literal_eval(message[len(MISSING_KEYS) :].rstrip(".")))
        except (ValueError, SyntaxError):
            return True
        if missing and missing <= self._tied:
            record.msg = (
                f"{message} Expected, not a broken checkpoint: {', '.join(sorted(missing))} is tied to the input "
                "embeddings (tie_word_embeddings), saved once under their name, and restored with them"
            )
            record.args = ()
            setattr(record, _CONSOLE_OFF, True)
        return True


class _OffConsole(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not getattr(record, _CONSOLE_OFF, False)


@contextlib.contextmanager
def tied_keys_explained(model: torch.nn.Module):
    """For the life of a resume: the tied keys' missing-keys warning goes to the log with its reason, not the
    console (transformers' own stream handler on its library logger)."""
    explain = _ExplainTiedKeys(tied_parameter_names(model))
    off_console = _OffConsole()
    trainer_logger = logging.getLogger("transformers.trainer")
    consoles = [
        handler
        for handler in logging.getLogger("transformers").handlers
        if isinstance(handler, logging.StreamHandler) and not isinstance(handler, logging.FileHandler)
    ]
    trainer_logger.addFilter(explain)
    for handler in consoles:
        handler.addFilter(off_console)
    try:
        yield
    finally:
        trainer_logger.removeFilter(explain)
        for handler in consoles:
            handler.removeFilter(off_console)
