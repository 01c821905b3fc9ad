"""The switch's warning, once per program, about constructs BMv2 would refuse.

The embedded switch runs programs that p4c-bm2-ss / simple_switch refuse (see
:mod:`netweft.p4.compiler.bmv2_target` and docs/bmv2-differences.md).  It keeps
running them, but says so once per compiled program, naming each construct and
its location, so that a program that will not deploy is known before deployment.
"""

from __future__ import annotations

import logging
import weakref

from netweft.p4.compiler.bmv2_target import Diagnostic, check_bmv2
from netweft.p4.compiler.program import Program

LOG = logging.getLogger("netweft.switch")

_warned: weakref.WeakSet[Program] = weakref.WeakSet()


def warn_if_undeployable(program: Program) -> list[Diagnostic]:
    """Log what BMv2 would refuse or warn about in ``program``, the first time only.

    Returns the findings logged now (empty on later calls for the same program).
    """
    if program in _warned:
        return []
    _warned.add(program)
    try:
        found = check_bmv2(program)
    except Exception as exc:  # an advisory check must not stop the switch
        LOG.warning("%s: could not check what BMv2 would refuse (internal error: %s: %s); "
                    "please report it with the program", program.source_path,
                    type(exc).__name__, exc)
        return []
    for d in found:
        verdict = "would not deploy to BMv2" if d.is_error else "draws a p4c warning"
        LOG.warning("%s: %s %s (netweft runs it): %s", d.loc, d.construct, verdict, d.message)
    return found
