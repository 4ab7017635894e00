"""The run config's sections, one module per group, each key a field with its type, bounds, default and help
(`msgspec.Meta(description=…)`; a section's help is its docstring): run.py (`run`, `model`, `finetune`, `engine`),
tasks.py and data.py (`data`), train.py (`train`, `priority_sampling`), reward.py (`reward`), scorer.py (`scorer`),
gates.py (`preflight`, `shadow`, `release`), outputs.py (`rollouts`, `tracking`); base.py what they share. The
`monitors` section is the monitor rules' (rc1/run/monitors/sections.py). rc1/config/schema.py assembles them into
`Config` in the config's order and re-exports every name; import them from there."""
