"""The Colony kernel: the actuation gate and the colony state it governs, in one database.

Public names are pinned by ``tests/colony/kernel/test_exports.py``.
"""

from colony.kernel.actions import ActionKind
from colony.kernel.approvals import arguments_digest
from colony.kernel.audit import AuditCheck, AuditEntry, AuditRecord
from colony.kernel.kernel import ColonyKernel
from colony.kernel.models import (
    AgentProfile,
    Approval,
    ApprovalClaim,
    ApprovalFinding,
    ApprovalState,
    AttestationMode,
    ColonySignal,
    ColonyStatus,
    ConsequenceKind,
    ConsequenceRecord,
    DecayRate,
    Decision,
    FalsificationFinding,
    FalsificationReport,
    GateVerdict,
    OutcomeRecord,
    ProposalCounts,
    ProposeActionRequest,
    PruningCandidate,
    PruningReport,
    RecordOutcomeRequest,
    Reporter,
    Role,
    SignalSource,
    SignalType,
)
from colony.kernel.settings import KernelSettings

__all__ = [
    "ActionKind",
    "AgentProfile",
    "Approval",
    "ApprovalClaim",
    "ApprovalFinding",
    "ApprovalState",
    "AttestationMode",
    "AuditCheck",
    "AuditEntry",
    "AuditRecord",
    "ColonyKernel",
    "ColonySignal",
    "ColonyStatus",
    "ConsequenceKind",
    "ConsequenceRecord",
    "DecayRate",
    "Decision",
    "FalsificationFinding",
    "FalsificationReport",
    "GateVerdict",
    "KernelSettings",
    "OutcomeRecord",
    "ProposalCounts",
    "ProposeActionRequest",
    "PruningCandidate",
    "PruningReport",
    "RecordOutcomeRequest",
    "Reporter",
    "Role",
    "SignalSource",
    "SignalType",
    "arguments_digest",
]
