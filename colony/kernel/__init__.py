"""The Colony kernel: the actuation gate and the colony state it governs, in one database.

Public names are pinned by ``tests/colony/kernel/test_exports.py``.
"""

from colony.kernel.kernel import ColonyKernel
from colony.kernel.models import (
    AgentProfile,
    AttestationMode,
    ColonySignal,
    ColonyStatus,
    ConsequenceRecord,
    DecayRate,
    Decision,
    FalsificationFinding,
    FalsificationReport,
    GateVerdict,
    OutcomeRecord,
    ProposeActionRequest,
    PruningCandidate,
    PruningReport,
    RecordOutcomeRequest,
    Role,
    SignalSource,
    SignalType,
)
from colony.kernel.settings import KernelSettings

__all__ = [
    "AgentProfile",
    "AttestationMode",
    "ColonyKernel",
    "ColonySignal",
    "ColonyStatus",
    "ConsequenceRecord",
    "DecayRate",
    "Decision",
    "FalsificationFinding",
    "FalsificationReport",
    "GateVerdict",
    "KernelSettings",
    "OutcomeRecord",
    "ProposeActionRequest",
    "PruningCandidate",
    "PruningReport",
    "RecordOutcomeRequest",
    "Role",
    "SignalSource",
    "SignalType",
]
