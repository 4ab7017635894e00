"""The commands are a table: one module per command in rc1/cli/commands/, each owning its parser (`HELP`,
`arguments`) and its handler (`run`), listed once in `COMMANDS`. Adding a command is its module, its entry and its
test; a module left out of the table, or an entry with no module, fails here."""

import subprocess
import sys

from conftest import REPO, training_stack_after

from rc1.cli.commands import COMMANDS, command
from rc1.cli.main import build_parser

FOLDER = REPO / "rc1" / "cli" / "commands"


def test_every_module_of_the_folder_is_one_entry_of_the_table():
    modules = sorted(p.stem for p in FOLDER.glob("*.py") if p.name != "__init__.py")
    assert sorted(COMMANDS) == modules
    assert len(set(COMMANDS)) == len(COMMANDS)


def test_each_command_module_owns_its_help_its_arguments_and_its_handler():
    for name in COMMANDS:
        module = command(name)
        assert isinstance(module.HELP, str) and module.HELP, name
        assert callable(module.arguments) and callable(module.run), name
        assert module.__doc__ and f"`rc1 {name}" in module.__doc__, f"{name}: its docstring names `rc1 {name} …`"


def test_the_help_lists_the_commands_in_the_table_s_order():
    help_text = build_parser().format_help()
    positions = [help_text.index(f"\n    {name}") for name in COMMANDS]
    assert positions == sorted(positions)


def test_a_command_s_arguments_reach_its_handler():
    args = build_parser().parse_args(["train", "--all", "--rank-wait", "45", "--set", "train.max_steps=4"])
    assert (args.command, args.all, args.rank_wait, args.overrides) == ("train", True, 45.0, ["train.max_steps=4"])
    assert command(args.command).run.__module__ == "rc1.cli.commands.train"


def test_building_the_parser_imports_no_training_stack():
    """Every command's module is imported to build the parser: the training stack waits for a command's `run`."""
    assert training_stack_after("from rc1.cli.main import build_parser; build_parser()") == []


def test_what_a_launch_can_train_is_decided_before_the_training_stack_is_imported():
    """`rc1 train` refuses a launch it cannot train (tests/e2e/test_distributed.py) on every rank from the config and
    the launch's environment: torch is asked for the device, nothing else of the stack is imported."""
    decided = (
        "from rc1.config.loading import load_config; from rc1.train.launch import refuse_unsupported_launch; "
        "refuse_unsupported_launch(load_config('configs/local.yaml', []).config)"
    )
    assert training_stack_after(decided) == ["torch"]


def test_a_command_imports_its_own_module_and_no_other():
    """`rc1 status` builds the status command's parser in full and names the others only: their modules (and what
    they import) are not loaded. `rc1 --help` still lists every command with its line."""
    shown = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from rc1.cli.main import build_parser, _chosen_command; "
            "args = build_parser(_chosen_command(['status', '--json'])).parse_args(['status', '--json']); "
            "print(args.command, args.json, *sorted(m for m in sys.modules if m.startswith('rc1.cli.commands.')))",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    assert shown.stdout.split() == ["status", "True", "rc1.cli.commands.status"]
    assert all(f"\n    {name}" in build_parser().format_help() for name in COMMANDS)
