import math

import pytest

from colony import ToolInputError
from tools.mager_sumner_shielding import MagerSumnerShieldingCapability

MU = 20000.0
# (mu - 1)^2 / (4 mu) for mu = 20000, worked by hand: 19999^2 / 80000.
MU_TERM = 399960001 / 80000


@pytest.fixture
def tool():
    return MagerSumnerShieldingCapability()


async def shield(tool, **arguments):
    return await tool.invoke("compute_shielding_factor", arguments)


async def test_single_shell_worked_by_hand(tool):
    # a = 100, b = 101: S = 1 + 4999.5000125 * (1 - 100^2/101^2) = 1 + 4999.5000125 * 201/10201 = 99.5099012
    result = await shield(tool, layers_mm=[1.0], relative_permeability=[MU], inner_radius_mm=100.0)
    assert result["shielding_factor"] == pytest.approx(99.5099012, rel=1e-8)
    assert result["shielding_db"] == pytest.approx(20 * math.log10(99.5099012), rel=1e-8)
    assert result["outer_radius_mm"] == 101.0


async def test_thin_shell_agrees_with_mager_mu_d_over_diameter(tool):
    result = await shield(tool, layers_mm=[1.5], relative_permeability=[50000.0], inner_radius_mm=400.0)
    mager = 50000.0 * 1.5 / 800.0
    assert result["shielding_factor"] == pytest.approx(mager, rel=0.01)


async def test_two_spaced_shells_worked_by_hand(tool):
    # s1 = 4999.5000125 * 201/10201 = 98.5099012, s2 = 4999.5000125 * 301/22801 = 65.9992765 (a = 150, b = 151);
    # gap radii 101 and 150: 1 - (101/150)^2 = 0.5466222; S = 1 + s1 + s2 + s1 * s2 * 0.5466222 = 3719.41849
    result = await shield(
        tool, layers_mm=[1.0, 1.0], relative_permeability=[MU, MU], inner_radius_mm=100.0, gaps_mm=[49.0]
    )
    assert result["shielding_factor"] == pytest.approx(3719.41849, rel=1e-7)
    assert result["outer_radius_mm"] == 151.0


async def test_three_shells_follow_the_recursion(tool):
    # Innermost two as above (s = 3718.41849 at outer radius 151), then a = 200, b = 202, mu = 10000:
    # s3 = 9999^2/40000 * (1 - 200^2/202^2) = 2499.500025 * 804/40804 = 49.250025; coupling 1 - (151/200)^2 = 0.429975;
    # S = 1 + 3718.41849 + 49.250025 + 3718.41849 * 49.250025 * 0.429975 = 1 + 3718.41849 + 49.25 + 78742.27 = 82510.94
    s12 = 3718.41849
    s3 = (9999**2 / 40000) * (804 / 40804)
    expected = 1 + s12 + s3 + s12 * s3 * (1 - (151 / 200) ** 2)
    assert s3 == pytest.approx(49.250025, rel=1e-7)
    result = await shield(
        tool,
        layers_mm=[1.0, 1.0, 2.0],
        relative_permeability=[MU, MU, 10000.0],
        inner_radius_mm=100.0,
        gaps_mm=[49.0, 49.0],
    )
    assert result["shielding_factor"] == pytest.approx(expected, rel=1e-7)
    assert result["shielding_factor"] == pytest.approx(82_510.94, rel=1e-6)


async def test_touching_shells_add_like_one_thicker_shell(tool):
    # Two 1 mm layers with no gap: 1 + s(100..101) + s(101..102) = 1 + 98.5099012 + 97.5488757 = 197.0587769;
    # one 2 mm layer: 1 + 4999.5000125 * 404/10404 = 195.1366787, within 1%.
    touching = await shield(tool, layers_mm=[1.0, 1.0], relative_permeability=[MU, MU], inner_radius_mm=100.0)
    single = await shield(tool, layers_mm=[2.0], relative_permeability=[MU], inner_radius_mm=100.0)
    assert touching["shielding_factor"] == pytest.approx(197.0587769, rel=1e-8)
    assert single["shielding_factor"] == pytest.approx(1 + MU_TERM * 404 / 10404, rel=1e-12)
    assert touching["shielding_factor"] == pytest.approx(single["shielding_factor"], rel=0.011)


async def test_air_shells_do_not_shield(tool):
    assert (await shield(tool, layers_mm=[3.0], relative_permeability=[1.0], inner_radius_mm=10.0))[
        "shielding_factor"
    ] == 1.0
    with_air = await shield(
        tool, layers_mm=[1.0, 5.0], relative_permeability=[MU, 1.0], inner_radius_mm=100.0, gaps_mm=[10.0]
    )
    assert with_air["shielding_factor"] == pytest.approx(99.5099012, rel=1e-8)


async def test_more_gap_shields_better(tool):
    factors = [
        (
            await shield(
                tool, layers_mm=[1.0, 1.0], relative_permeability=[MU, MU], inner_radius_mm=100.0, gaps_mm=[gap]
            )
        )["shielding_factor"]
        for gap in (0.0, 10.0, 50.0, 100.0)
    ]
    assert factors == sorted(factors)


@pytest.mark.parametrize(
    ("arguments", "field", "message"),
    [
        (
            {"layers_mm": [1, 1], "relative_permeability": [MU], "inner_radius_mm": 10},
            "relative_permeability",
            "1 values for 2 layers",
        ),
        (
            {"layers_mm": [1], "relative_permeability": [MU, MU], "inner_radius_mm": 10},
            "relative_permeability",
            "2 values for 1 layers",
        ),
        (
            {"layers_mm": [1, 1], "relative_permeability": [MU, MU], "inner_radius_mm": 10, "gaps_mm": [1, 2]},
            "gaps_mm",
            "2 values for 2 layers",
        ),
        ({"layers_mm": [0.0], "relative_permeability": [MU], "inner_radius_mm": 10}, "layers_mm.0", "greater than 0"),
        (
            {"layers_mm": [1, -2], "relative_permeability": [MU, MU], "inner_radius_mm": 10},
            "layers_mm.1",
            "greater than 0",
        ),
        (
            {"layers_mm": [1], "relative_permeability": [0.5], "inner_radius_mm": 10},
            "relative_permeability.0",
            "greater than or equal to 1",
        ),
        ({"layers_mm": [1], "relative_permeability": [MU], "inner_radius_mm": 0}, "inner_radius_mm", "greater than 0"),
        ({"layers_mm": [], "relative_permeability": [], "inner_radius_mm": 10}, "layers_mm", "at least 1 item"),
        (
            {"layers_mm": [1] * 17, "relative_permeability": [MU] * 17, "inner_radius_mm": 10},
            "layers_mm",
            "at most 16 items",
        ),
        (
            {"layers_mm": [math.inf], "relative_permeability": [MU], "inner_radius_mm": 10},
            "layers_mm.0",
            "finite number",
        ),
        ({"layers_mm": ["1"], "relative_permeability": [MU], "inner_radius_mm": 10}, "layers_mm.0", "valid number"),
        (
            {"layers_mm": [1], "relative_permeability": [MU], "inner_radius_mm": 10, "geometry": "sphere"},
            "geometry",
            "unexpected argument",
        ),
        ({"layers_mm": [1], "relative_permeability": [MU]}, "inner_radius_mm", "required argument is missing"),
    ],
)
async def test_bad_input_names_the_field(tool, arguments, field, message):
    with pytest.raises(ToolInputError) as caught:
        await shield(tool, **arguments)
    errors = {error.field: error.message for error in caught.value.errors}
    assert field in errors
    assert message in errors[field]


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        (
            {"layers_mm": [1e300] * 16, "relative_permeability": [1e300] * 16, "inner_radius_mm": 1e-300},
            "relative_permeability",
        ),
        ({"layers_mm": [1e308] * 4, "relative_permeability": [1.0] * 4, "inner_radius_mm": 1e308}, "layers_mm"),
    ],
)
async def test_numbers_too_large_for_a_float_are_an_input_error(tool, arguments, field):
    with pytest.raises(ToolInputError, match="overflows a float") as caught:
        await shield(tool, **arguments)
    assert [error.field for error in caught.value.errors] == [field]


def test_spec_follows_the_seed_sketch():
    spec = MagerSumnerShieldingCapability.spec
    assert (spec.name, spec.domain, spec.capabilities) == (
        "mager_sumner_shielding",
        "em",
        ("compute_shielding_factor",),
    )
    assert spec.cost_model.cpu_seconds == 0.1
    assert (spec.resource_requirements.min_vcpus, spec.resource_requirements.min_memory_gb) == (1, 0.5)
    assert spec.required_capabilities == ("tool:mager_sumner_shielding",)
    assert {"tool", "em", "magnetic_shielding"} <= MagerSumnerShieldingCapability().get_capability_tags()
