"""Prefect Blocks for what a Colony deployment needs configured: the kernel, HPC, and secrets."""

from blocks.hpc import HPCConfig, load_hpc_settings
from blocks.kernel_config import DEFAULT_BLOCK_NAME, ColonyKernelConfig, load_kernel_settings
from blocks.secrets import install_secret_resolver, secret_block_name

__all__ = [
    "DEFAULT_BLOCK_NAME",
    "ColonyKernelConfig",
    "HPCConfig",
    "install_secret_resolver",
    "load_hpc_settings",
    "load_kernel_settings",
    "secret_block_name",
]
