"""One registry for what a config names by a string: the scorer providers (providers.py).

Import-light by design: config validates against it without torch, trl or an API client, and it imports
nothing of rc1 above it (its layer is below config's). The code that runs an entry is named "module:attr"
and imported by `spec.load` in the layer that runs it."""
