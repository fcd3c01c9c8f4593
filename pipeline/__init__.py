"""An offline streaming voice-agent pipeline: VAD, streaming STT, turns, LLM, TTS, barge-in."""

__version__ = "0.1.0"
