"""Prefect Blocks for what a Colony deployment needs configured: the kernel, and secrets."""

from blocks.kernel_config import DEFAULT_BLOCK_NAME, ColonyKernelConfig, load_kernel_settings
from blocks.secrets import install_secret_resolver, secret_block_name

__all__ = [
    "DEFAULT_BLOCK_NAME",
    "ColonyKernelConfig",
    "install_secret_resolver",
    "load_kernel_settings",
    "secret_block_name",
]
