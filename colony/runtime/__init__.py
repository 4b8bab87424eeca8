"""The one call pipeline: Principal, CallRequest, Runtime.call, the Governor, the Catalog and the ToolPool."""

from colony.runtime.authorization import Authorization
from colony.runtime.call import GOVERNANCE_PROPERTIES, CallOutcome, CallRequest, CallStatus
from colony.runtime.catalog import Catalog, CatalogTool, UnavailableTool
from colony.runtime.executor import Executor, InProcessExecutor
from colony.runtime.governor import GovernanceEvents, Governor, HeldCall, HoldDecision, HoldStrategy
from colony.runtime.kernels import KernelProvider
from colony.runtime.pool import ToolPool
from colony.runtime.principal import ALL_CAPABILITIES, LOCAL_OPERATOR, OPERATOR_SCOPE, Acting, Principal
from colony.runtime.runtime import Runtime

__all__ = [
    "ALL_CAPABILITIES",
    "GOVERNANCE_PROPERTIES",
    "LOCAL_OPERATOR",
    "OPERATOR_SCOPE",
    "Acting",
    "Authorization",
    "CallOutcome",
    "CallRequest",
    "CallStatus",
    "Catalog",
    "CatalogTool",
    "Executor",
    "GovernanceEvents",
    "Governor",
    "HeldCall",
    "HoldDecision",
    "HoldStrategy",
    "InProcessExecutor",
    "KernelProvider",
    "Principal",
    "Runtime",
    "ToolPool",
    "UnavailableTool",
]
