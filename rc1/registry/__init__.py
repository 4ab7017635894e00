"""One registry for what a config names by a string: the training strategies (strategies/, one module each),
the engines that run them (engines.py), the scorer providers (providers.py) and the experiment trackers
(trackers.py). Each table is built by explicit imports, never by scanning packages; config, the engines, the
checks and docs/tables.md read it, and no other module decides by a strategy's or a provider's name (a tracker's
backend class is looked up by name in rc1/views/trackers.py, whose table a test holds equal to this one's).

Import-light by design: config validates against it without torch, trl, an API client or a tracker's client, and
it imports nothing of rc1 (its layer is below config's). The code that runs an entry is named "module:attr" and
imported by `spec.load` in the layer that runs it."""
