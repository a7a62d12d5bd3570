"""The launch rule: threads per block and blocks per grid for each form of kernel.

- Threads per block: ``cuda_threads_per_block`` (default 256: 8 warps, enough to hide memory
  latency while a block reduction stays 8 halvings deep; 16 on the simulator, which runs one
  OS thread per GPU thread). Block reductions' shared arrays are sized by it, so it is part
  of the generated source.
- Blocks: enough to cover the work, at most ``cuda_blocks_per_sm`` per SM (default 32; grid-
  stride loops take the rest), at least one. On the simulator: at most 2.

  ============  ==========================================  =========================
  strategy      blocks                                      covers
  ============  ==========================================  =========================
  elementwise   ceil(elements / threads)                    one element per thread
  block         output rows                                 one row per block
  serial        ceil(output rows / threads)                 one row per thread
  split         ceil(elements / threads), then 1 to finish  a share per block
  ============  ==========================================  =========================

>>> LaunchRule(256, 4096).blocks(10**9)
4096
>>> LaunchRule(256, 4096).blocks(0)
1
"""
from __future__ import annotations

from dataclasses import dataclass

from ...config import config
from .device import properties, simulated


@dataclass(frozen=True)
class LaunchRule:
    threads: int        # per block, a power of two
    max_blocks: int

    def blocks(self, units: int, per_block: int = 0) -> int:
        """Blocks for ``units`` of work, ``per_block`` (default: ``threads``) per block."""
        per = per_block or self.threads
        return max(1, min(self.max_blocks, -(-units // per)))


def current_rule() -> LaunchRule:
    threads = int(config.cuda_threads_per_block) or (16 if simulated() else 256)
    if threads & (threads - 1) or not 1 <= threads <= 1024:
        raise ValueError(f"cuda_threads_per_block={threads} must be a power of two from 1 to "
                         f"1024")
    if simulated():
        return LaunchRule(threads, 2)
    sms = properties()[1]
    return LaunchRule(threads, max(1, sms * int(config.cuda_blocks_per_sm)))
