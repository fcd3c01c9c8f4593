"""Layer 2, stages: one model or one signal each (VAD, LLM, TTS, Smart Turn, the echo guard,
playback) and the fakes registered like any plugin. `pipeline/stt.py`, `turns.py` and
`chunker.py` belong to this layer too and stay where the design card puts them."""
