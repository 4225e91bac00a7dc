"""Whether one config runs a finding, judged along the chains of calls that lead to it.

A finding is *reached* by a config only along a chain (`call_chain`) whose entry module
runs on that config (its entry config's top-level keys are all there: `entry_configs`)
and each of whose guards the config decides to hold (`interpret.conditions.decided`); the
verdict names that chain. It is *not reached* when every chain's entry runs on other
configs, or some guard on it the config decides against (the first named, with the
config's value). Anything else, a guard that is no config test (a helper's result, a
value built at run time), a test the config does not decide, or no chain of resolved
calls at all, leaves it *not known to be reached*, never reached.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nemo_rl_workers.checks.audit.call_chain import Chain
from nemo_rl_workers.interpret.conditions import decided, first_failed

MAX_NAMED = 2  # chains named in one reason, then how many more


def chain_verdict(chains: tuple[Chain, ...], entry_configs: Mapping[str, tuple[str, ...]],
                  config: Mapping[str, Any], gap: str = "") -> tuple[bool | None, str]:
    """(True: reached, False: not reached, None: not known), and why, in words; `gap`:
    where the walk back may have missed a route ("" where it missed none)."""
    if not chains:
        return None, ("not known to be reached: no chain of calls whose receivers resolve "
                      "leads to it from an entry of the tree" + (f" ({gap})" if gap else ""))
    top = set(config)
    reached: list[str] = []
    unknown: list[str] = []
    out: list[str] = []
    for chain in chains:
        needs = entry_configs.get(chain.entry_file)
        if needs is None:
            unknown.append(f"{chain.text()}: its entry declares no config")
            continue
        if not set(needs) <= top:
            missing = ", ".join(sorted(set(needs) - top))
            out.append(f"{chain.text()} runs on configs with {missing}")
            continue
        failed, open_ = _judged(chain, config)
        if failed is not None:
            out.append(f"along {chain.text()}: {failed}")
        elif open_ is not None:
            unknown.append(f"along {chain.text()}: {open_}")
        else:
            reached.append(chain.text())
    if reached:
        return True, f"reached by this config along {_some(reached)}"
    if unknown:
        return None, f"not known to be reached: {_some(unknown)}"
    if gap:  # every chain is ruled out, but a call the walk could not follow may reach it
        return None, f"not known to be reached: {_some(sorted(set(out)))}; but {gap}"
    return False, _some(sorted(set(out)))


def _judged(chain: Chain, config: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """(the first guard the config fails, the first it does not decide), in words."""
    first_open: str | None = None
    for link in chain.links:
        failed = first_failed(link.tests, lambda t: decided(t, config) is False)
        if failed is not None:
            return f"{failed.needs()}, and this config has {failed.given(config)}", None
        for test in link.tests:
            if decided(test, config) is None and first_open is None:
                first_open = (f"{test.where} ({test.text}) is not decided by this config "
                              f"({test.given(config)})")
        if link.undecided and first_open is None:
            where, _, text = link.undecided[0].partition(" ")
            first_open = f"{where} ({text}) is not a test on config values"
    return None, first_open


def _some(items: list[str]) -> str:
    shown = "; ".join(items[:MAX_NAMED])
    more = len(items) - MAX_NAMED
    return shown + (f"; and {more} more" if more > 0 else "")
