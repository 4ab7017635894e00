"""One registry for what a config names by a string: the training strategies (strategies/, one module each),
the engines that run them (engines.py) and the scorer providers (providers.py). Each table is built by
explicit imports, never by scanning packages; config, the engines, the checks and docs/tables.md read
it, and no other module decides by a strategy's or a provider's name.

Import-light by design: config validates against it without torch, trl or an API client, and it imports
nothing of rc1 (its layer is below config's). The code that runs an entry is named "module:attr" and
imported by `spec.load` in the layer that runs it."""
