"""The Batch job: read ``deck.json`` from the input prefix, simulate, write ``results.json``.

Run in the job's container as ``python -m tools.fdtd_sweep.job``. The HPC
service sets ``COLONY_HPC_INPUT_URI`` and ``COLONY_HPC_OUTPUT_URI``
(``s3://bucket/prefix/``); boto3 finds credentials and, against moto,
``AWS_ENDPOINT_URL`` in the environment. Progress goes to stdout, which Batch
keeps in CloudWatch; a bad deck exits 2 with the reasons on stderr.
"""

from __future__ import annotations

import json
import os
import sys
from urllib.parse import urlparse

import boto3

from tools.fdtd_sweep.simulation import simulate_sweep, validate_deck

DECK = "deck.json"
RESULTS = "results.json"


def _split(uri: str) -> tuple[str, str]:
    parsed = urlparse(uri)
    if parsed.scheme != "s3" or not parsed.netloc:
        raise SystemExit(f"not an s3:// URI: {uri!r}")
    return parsed.netloc, parsed.path.lstrip("/")


def main() -> int:
    """Run one sweep from S3 to S3; the process exit code."""
    bucket, inputs = _split(os.environ["COLONY_HPC_INPUT_URI"])
    out_bucket, outputs = _split(os.environ["COLONY_HPC_OUTPUT_URI"])
    s3 = boto3.client("s3")
    try:
        deck = json.loads(s3.get_object(Bucket=bucket, Key=inputs + DECK)["Body"].read())
        problems = validate_deck(deck) if isinstance(deck, dict) else ["the deck must be a JSON object"]
        if problems:
            print("invalid deck: " + "; ".join(problems), file=sys.stderr)
            return 2
        print(
            f"fdtd_sweep: {len(deck['relative_permittivities'])} point(s), {deck['cells']} cells, {deck['steps']} steps"
        )
        results = simulate_sweep(deck)
        body = json.dumps(results, indent=2).encode()
        s3.put_object(Bucket=out_bucket, Key=outputs + RESULTS, Body=body, ContentType="application/json")
        print(f"fdtd_sweep: wrote {RESULTS} ({len(body)} bytes)")
    finally:
        s3.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
