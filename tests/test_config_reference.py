"""docs/configuration.md is written from the code: it lists every setting, and a change to a
setting's type, default or comment that the page does not show fails here."""

from __future__ import annotations

from dataclasses import fields

from pipeline.base import config as cfg
from pipeline.base.config_reference import COMMAND, reference

from .conftest import ROOT

PAGE = ROOT / "docs" / "configuration.md"


def test_the_reference_page_is_the_code_s():
    assert PAGE.read_text(encoding="utf-8") == reference(), (
        f"docs/configuration.md is stale: run `{COMMAND}` and commit it")


def test_every_policy_key_is_in_the_reference_with_its_default():
    page = reference()
    for section, cls in cfg.POLICIES.items():
        assert f"## [{section}]" in page
        for f in fields(cls):
            assert f"| `{f.name}` |" in page, f"{section}.{f.name}"
    assert "| `early_silence_ms` | integer | `0` | Early commit" in page
    assert "| `speculate_from` | `\"quick\"` or `\"partial\"` or `\"final\"` | `\"quick\"` |" in page


def test_the_default_stages_keys_are_in_the_reference():
    page = reference()
    for kind in cfg.STAGES:
        assert f"## [{kind}]: `{cfg.Config.default().stage(kind).name}`" in page
    assert 'The default configuration sets `model = "qwen2.5-coder-0.5b"`.' in page
    assert "| `model_path` | string, or unset | unset | a GGUF file, in place of `model` |" in page
