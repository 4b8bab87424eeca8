"""Serve gated-action and tool-call as deployments NAME in a process a test can stop.

``python -m tests.flows.serve_runner NAME``
"""

import sys

from prefect import serve

from flows.gated_action import gated_action
from flows.tool_call import tool_call

if __name__ == "__main__":
    serve(gated_action.to_deployment(name=sys.argv[1]), tool_call.to_deployment(name=sys.argv[1]))
