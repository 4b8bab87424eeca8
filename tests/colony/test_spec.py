import pytest
from pydantic import ValidationError

from colony.spec import Determinism, GpuRequirement, ResourceRequirements, ToolSpec


def make(**overrides):
    return ToolSpec(**{"name": "demo", "capabilities": ("run_demo",), **overrides})


def test_identity_defaults_follow_the_name():
    spec = make()
    assert spec.tool_id == "tool:demo"
    assert spec.required_capabilities == ("tool:demo",)
    assert spec.deterministic is True
    assert make(determinism=Determinism.NONDETERMINISTIC).deterministic is False


def test_spec_is_frozen():
    spec = make()
    with pytest.raises(ValidationError):
        spec.name = "other"


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"version": "1.0"}, "version"),
        ({"version": "v1.0.0"}, "version"),
        ({"inputs_schema": {"type": "nonsense"}}, "inputs_schema"),
        ({"outputs_schema": {"properties": {"a": {"minimum": "x"}}}}, "outputs_schema"),
        ({"capabilities": ()}, "capabilities"),
        ({"capabilities": ("a", "a")}, "capabilities"),
        ({"resource_requirements": {"min_vcpus": -1}}, "resource_requirements.min_vcpus"),
        ({"resource_requirements": {"min_memory_gb": -2}}, "resource_requirements.min_memory_gb"),
        ({"tool_id": "tool:other"}, "tool_id"),
        ({"name": "Bad Name"}, "name"),
        ({"surprise": 1}, "surprise"),
    ],
)
def test_bad_spec_fails_naming_the_field(overrides, field):
    with pytest.raises(ValidationError) as caught:
        make(**overrides)
    reported = {".".join(str(part) for part in error["loc"]) for error in caught.value.errors()}
    # A field validator reports the field as its location; the identity check (a model
    # validator) has no location, so its message must name the field instead.
    assert any(location.startswith(field) for location in reported) or (reported == {""} and field == "tool_id")
    assert field.split(".")[0] in str(caught.value)


def test_schema_error_message_says_where():
    with pytest.raises(ValidationError, match=r"not a valid JSON Schema \(2020-12\) at properties/a/minimum"):
        make(outputs_schema={"properties": {"a": {"minimum": "x"}}})


def test_negative_gpu_rejected():
    with pytest.raises(ValidationError, match="count"):
        ResourceRequirements(gpu=GpuRequirement(kind="a100", count=0))


def test_semver_with_prerelease_accepted():
    assert make(version="2.1.0-rc.1+build.5").major_version == 2


def test_schema_is_checked_against_the_draft_it_declares():
    draft7_tuple_items = {"$schema": "http://json-schema.org/draft-07/schema#", "items": [{"type": "string"}]}
    assert make(inputs_schema=draft7_tuple_items).inputs_schema == draft7_tuple_items
    with pytest.raises(ValidationError, match=r"not a valid JSON Schema \(2020-12\)"):
        make(inputs_schema={"items": [{"type": "string"}]})
    with pytest.raises(ValidationError, match="unknown \\$schema"):
        make(inputs_schema={"$schema": "https://example.com/my-draft"})
