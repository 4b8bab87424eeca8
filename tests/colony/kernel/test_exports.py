"""The kernel's public surface is exactly what KERNEL_API.md promises (plus the listed extensions)."""

import colony.kernel

PROMISED = {
    "ColonyKernel",
    "KernelSettings",
    "ProposeActionRequest",
    "GateVerdict",
    "RecordOutcomeRequest",
    "OutcomeRecord",
    "AgentProfile",
    "ColonyStatus",
    "ColonySignal",
    "FalsificationReport",
    "PruningReport",
    "Decision",
    "SignalType",
    "Role",
    "AttestationMode",
}
EXTENSIONS = {
    "ActionKind",
    "Approval",
    "ApprovalClaim",
    "ApprovalFinding",
    "ApprovalState",
    "arguments_digest",
    "AuditCheck",
    "AuditEntry",
    "AuditRecord",
    "ConsequenceKind",
    "ConsequenceRecord",
    "DecayRate",
    "FalsificationFinding",
    "ProposalCounts",
    "Reporter",
    "PruningCandidate",
    "SignalSource",
}


def test_exported_names() -> None:
    assert set(colony.kernel.__all__) == PROMISED | EXTENSIONS
    for name in colony.kernel.__all__:
        assert getattr(colony.kernel, name) is not None


def test_enums_carry_the_seed_values() -> None:
    from colony.kernel import AttestationMode, Decision, Role, SignalType

    assert [d.value for d in Decision] == ["execute", "hold", "refuse"]
    assert [s.value for s in SignalType] == ["failure", "success", "risk", "need", "dependency", "human_priority"]
    assert [r.value for r in Role] == ["sandbox", "repair_ant", "memory_ant", "dispatcher", "guard_ant"]
    assert [m.value for m in AttestationMode] == ["off", "optional", "required"]


def test_settings_read_the_environment(monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from colony.kernel import KernelSettings

    monkeypatch.setenv("COLONY_HOME", str(tmp_path))
    monkeypatch.setenv("COLONY_ATTESTATION", "required")
    monkeypatch.setenv("COLONY_BUDGET_LLM_CALLS", "7")
    settings = KernelSettings()
    assert settings.attestation.value == "required"
    assert settings.budget_limits() == {"llm_calls": 7, "runtime_seconds": 3600.0}
    assert settings.resolved_database_url() == f"sqlite:///{tmp_path / 'kernel.db'}"


def test_a_bad_environment_variable_is_named(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import pytest

    from colony.errors import KernelInputError
    from colony.kernel import ColonyKernel

    monkeypatch.setenv("COLONY_ATTESTATION", "sometimes")
    with pytest.raises(KernelInputError) as caught:
        ColonyKernel.from_env()
    assert caught.value.fields == ["COLONY_ATTESTATION"]
