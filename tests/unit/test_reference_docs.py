"""docs/cli.md and docs/config.md are generated from the parser and the config schema (rc1/cli/reference.py): they
are what the code says, every command and every section is in them, and every config key says what it does."""

from typing import Annotated

import msgspec
import pytest
from conftest import REPO, training_stack_after

import rc1.views.config_explain
from rc1.cli import reference
from rc1.cli.commands import COMMANDS
from rc1.config.schema import Config

REGENERATE = "regenerate: python -m rc1.cli.reference docs"


@pytest.mark.parametrize(
    "name, generate", [("cli.md", reference.cli_markdown), ("config.md", reference.config_markdown)]
)
def test_the_docs_are_what_the_code_says(name, generate):
    assert (REPO / "docs" / name).read_text(encoding="utf-8") == generate(), REGENERATE


def test_check_writes_nothing_and_fails_on_a_stale_file(tmp_path, capsys):
    assert reference.main([str(tmp_path)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cli.md", "config.md"]
    assert reference.main(["--check", str(tmp_path)]) == 0
    (tmp_path / "config.md").write_text("# edited by hand\n", encoding="utf-8")
    assert reference.main(["--check", str(tmp_path)]) == 1
    assert "config.md" in capsys.readouterr().err
    assert (tmp_path / "config.md").read_text(encoding="utf-8") == "# edited by hand\n"


def test_every_command_has_its_section_in_the_table_s_order():
    text = reference.cli_markdown()
    positions = [text.index(f"\n## rc1 {name}\n") for name in COMMANDS]
    assert positions == sorted(positions)
    assert "\n### rc1 config explain\n" in text and "\n### rc1 config schema\n" in text


def test_every_top_level_key_of_the_schema_has_its_section():
    text = reference.config_markdown()
    names = [field.encode_name for field in msgspec.inspect.type_info(Config).fields]
    positions = [text.index(f"\n## {name}\n") for name in names]
    assert positions == sorted(positions)


def test_every_config_key_says_what_it_does():
    rows = reference.config_rows()
    assert len(rows) > 100 and {"train.learning_rate", "data.sources.<task>.path"} <= {row.key for row in rows}
    undescribed = [row.key for row in rows if not row.description.strip()]
    assert not undescribed, f"give these a Meta(description=...) (a section: a docstring): {undescribed}"


def test_a_key_without_a_description_is_found(monkeypatch):
    class Section(msgspec.Struct, kw_only=True):
        """A section."""

        described: Annotated[int, msgspec.Meta(description="Has one.")] = 1
        bare: int = 2

    class Small(msgspec.Struct, kw_only=True):
        section: Section = msgspec.field(default_factory=Section)

    monkeypatch.setattr(rc1.views.config_explain, "Config", Small)
    rows = reference.config_rows()
    assert [row.key for row in rows if not row.description] == ["section.bare"]


def test_every_production_limit_names_a_config_key():
    """The production column reads the floors and the profile's rules by key: a renamed key would drop its limit."""
    keys = {row.key for row in reference.config_rows()}
    assert set(reference.production_limits()) <= keys
    assert reference.production_limits()["preflight.min_distinct2"] == "≥ 0.6"
    assert reference.production_limits()["train.max_steps"] == "must be ≥ 50000"


def test_generating_the_docs_imports_no_training_stack():
    assert training_stack_after("from rc1.cli import reference; reference.documents()") == []
