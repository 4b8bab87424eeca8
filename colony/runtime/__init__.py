"""The one call pipeline: Principal, CallRequest, Runtime.call, the Governor, the Catalog and the ToolPool."""

from colony.runtime.authorization import Authorization
from colony.runtime.call import CallOutcome, CallRequest, CallStatus
from colony.runtime.case import GOVERNANCE_PROPERTIES, NO_CASE, GateCase, split_case
from colony.runtime.catalog import Catalog, CatalogTool, UnavailableTool
from colony.runtime.executor import Executor, InProcessExecutor
from colony.runtime.governor import GovernanceEvents, Governor, HeldCall, HoldDecision, HoldStrategy
from colony.runtime.kernels import KernelProvider
from colony.runtime.pool import ToolPool
from colony.runtime.principal import ALL_CAPABILITIES, LOCAL_OPERATOR, OPERATOR_SCOPE, Acting, Principal
from colony.runtime.runtime import Runtime
from colony.runtime.views import ApprovalView, RecordView, VerdictView, wire

__all__ = [
    "ALL_CAPABILITIES",
    "GOVERNANCE_PROPERTIES",
    "LOCAL_OPERATOR",
    "NO_CASE",
    "OPERATOR_SCOPE",
    "Acting",
    "ApprovalView",
    "Authorization",
    "CallOutcome",
    "CallRequest",
    "CallStatus",
    "Catalog",
    "CatalogTool",
    "Executor",
    "GateCase",
    "GovernanceEvents",
    "Governor",
    "HeldCall",
    "HoldDecision",
    "HoldStrategy",
    "InProcessExecutor",
    "KernelProvider",
    "Principal",
    "RecordView",
    "Runtime",
    "ToolPool",
    "UnavailableTool",
    "VerdictView",
    "split_case",
    "wire",
]
