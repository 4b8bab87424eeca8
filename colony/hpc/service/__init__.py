"""The HPC REST service: FastAPI over AWS Batch and S3, the side the HPC tools call.

``app`` is the HTTP layer, ``lifecycle`` the job lifecycle behind it, ``backend``
the boto3 calls, ``auth`` whose jobs a token reaches, ``aws_errors`` botocore's
exceptions as Colony's. Nothing on the tool side (``colony.hpc``'s other modules)
imports this package; both sides share ``colony.hpc.models``, ``parts`` and ``settings``.
"""

from colony.hpc.service.app import create_app

__all__ = ["create_app"]
