"""Layer 3, stages: one model or one signal each (VAD, LLM, TTS, Smart Turn, the echo guard,
playback) and the fakes registered like any plugin. Below them sit `pipeline/turns.py` (the
text signal the model signals build on) and `tools/`; above them the design card's `stt.py`,
`chunker.py` and `bargein.py`, which stay where the card puts them (docs/architecture.md)."""
