"""What the real-client tests share: a scripted model that can choose a tool, and its story.

Each client test drives a third-party realtime client (its own event loop, its own socket)
against `pipeline serve` as a user would, so the server runs on a loop of its own
(`pipeline.testing.ServerThread`).
"""

from __future__ import annotations

from pipeline.stages.fakes import ScriptedLLM

WEATHER_TOOL = {"type": "function", "name": "get_weather",
                "description": "Look up today's weather in a city.",
                "parameters": {"type": "object", "required": ["city"],
                               "properties": {"city": {"type": "string"}}}}
STORY = ("Once upon a time a lighthouse keeper counted the ships that passed his rock. "
         "Every night he wrote their names in a blue book. One winter a ship with no name "
         "came by, and he followed its light until morning. Nobody ever saw it again.")


def scripted_llm() -> ScriptedLLM:
    """The client tests' model: it can choose a tool, which the tiny real LLM cannot."""
    return ScriptedLLM(replies=["Hello! How can I help you today?"], rules=[
        [r"result of get_weather", "It is sunny in {city}, twenty degrees."],
        [r"weather", {"name": "get_weather", "arguments": {"city": "Paris"}}],
        [r"story", STORY],
    ])
