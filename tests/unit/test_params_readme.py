"""README.md's parameter reference is generated from the Scenario model and must be current."""

from analysis import params, paths


def test_readme_parameter_reference_is_current():
    readme = (paths.ROOT / "README.md").read_text(encoding="utf-8")
    assert readme == params.readme_with_reference(readme), (
        "README.md's parameter reference is stale: run `make params-readme`"
    )


def test_reference_lists_every_key_of_every_section():
    text = params.parameter_reference()
    for model in (params.Scenario, params.Inference, params.LatencyTier, params.Cost):
        for name in model.model_fields:
            assert f"| `{name}` |" in text, (model.__name__, name)
    assert "### `cost` (Cost)" in text and "### `inference.tiers` (LatencyTier)" in text
