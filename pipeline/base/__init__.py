"""Layer 1, foundations: the stage protocols, events, clocks, audio, configuration, plugins and
conversation items that every other layer builds on. Nothing here imports a higher layer."""
