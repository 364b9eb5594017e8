"""Strata: the three-tier markdown memory (active → cooled → archive), compatible with the reference's data dirs.

`StrataStore` is a data directory; `janitor` moves files between tiers (plan = dry run, then apply);
`cascade.read` reads through the tiers; `search.search` searches them; `daemon.StrataDaemon` runs the
janitor periodically; `repair` rebuilds a damaged sidecar or shadow index. No Qt here.
"""

from stratagate.strata.config import StrataConfig, detect_base_dir, load_config, save_config
from stratagate.strata.store import StrataStore, Tier, TierFile

__all__ = ["StrataConfig", "StrataStore", "Tier", "TierFile", "detect_base_dir", "load_config", "save_config"]
