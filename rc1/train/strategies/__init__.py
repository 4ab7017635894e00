"""The objectives the torch engine runs, one module per strategy; each strategy's spec (rc1/registry/strategies/)
names its objective here."""
