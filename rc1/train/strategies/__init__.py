"""The objectives the torch engine runs: grpo, ppo, dpo, sft (see rc1.train.pairs for the table)."""
