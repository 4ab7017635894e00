"""What the live-episode tests share (tests/e2e/test_live_tools_trl.py, test_live_generation.py): their items, a
tool call as the model writes one, the built-in model as `rc1 advance` builds it, TRL's arguments for one step on
the CPU, and docs/bring-your-own.md's tool of yours as a user copies it."""

from __future__ import annotations

from pathlib import Path

import yaml
from trl import GRPOConfig

from rc1.data.episodes import dress
from rc1.data.generators import generate
from rc1.data.task import TaskItem
from rc1.data.templates import load_pack
from rc1.train.tiny_model import build_tiny_qwen3

SEED = 11
PACK_DIR = Path(__file__).resolve().parents[1] / "configs" / "templates" / "pack_v2"
CALL = '<tool_call>\n{{"name": "{tool}", "arguments": {{"{argument}": "{value}"}}}}\n</tool_call><|im_end|>'


def documented_tool() -> tuple[str, dict]:
    """docs/bring-your-own.md's "A tool of yours": its module and its config changes, as a user copies them."""
    page = (PACK_DIR.parents[2] / "docs" / "bring-your-own.md").read_text(encoding="utf-8")
    section = page[page.index("## A tool of yours") :]
    module = section[section.index("```python\n") + 10 : section.index("```", section.index("```python\n") + 10)]
    start = section.index("```yaml\n") + 8
    return module, yaml.safe_load(section[start : section.index("```", start)])


def call(tool: str, argument: str, value: str) -> str:
    return CALL.format(tool=tool, argument=argument, value=value)


def live_items() -> list[TaskItem]:
    """Two items with pages to look up, two with arithmetic to do."""
    return generate("hotpotqa", 2, 43, "live-hotpotqa") + generate("gsm8k", 2, 43, "live-gsm8k")


def dressed(items: list[TaskItem], episodes: str = "live", *, rate: float = 0.2, stream: str = "pool") -> list:
    """`items` dressed as the embedded default's pack dresses a pool (seed 43, up to 3 turns and 2 tool hops, the tools
    wiki and calc), `rate` of them under-specified: live (the system turn and the question) or recorded."""
    return dress(
        items,
        load_pack(PACK_DIR),
        seed=43,
        stream=stream,
        max_turns=3,
        max_tool_hops=2,
        clarify_rate=rate,
        tools=["wiki", "calc"],
        episodes=episodes,
    )


def build_live_model(folder: Path) -> Path:
    """The built-in model as `rc1 advance` builds it before its warm start (rc1/app/policy.py): the tokenizer trained
    on the pool's prompts and gold answers, here those of a small generated pool; randomly initialised."""
    pool = [item for task in ("hotpotqa", "gsm8k", "strategyqa") for item in generate(task, 20, 43, f"live-{task}")]
    texts = [f"{item.prompt}\nAnswer: {item.answer}" for item in pool]
    return build_tiny_qwen3(texts, folder / "tiny-qwen3", seed=SEED)


def one_step_on_cpu(output_dir: Path, **arguments) -> GRPOConfig:
    """TRL's arguments for one step on the CPU, seeded, writing nothing but what the test asks for."""
    return GRPOConfig(
        output_dir=str(output_dir),
        max_steps=1,
        report_to="none",
        save_strategy="no",
        seed=SEED,
        use_cpu=True,
        bf16=False,
        dataloader_num_workers=0,
        disable_tqdm=True,
        **arguments,
    )
