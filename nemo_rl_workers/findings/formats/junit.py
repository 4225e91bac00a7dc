"""`--output-format junit`: JUnit XML, one test case per config, class or worker pair.

Built with `junitparser`: one `<testsuite>` named after the command; a case with
findings of severity error fails (one `<failure>`: the first finding as its message, the
rules as its type, every finding on its own line as its text), one
that could not be judged at all is an `<error>`, warnings and notes go to its
`<system-out>`. Characters XML 1.0 cannot hold are written as `\\xNN`, and CR as `\\r`
(a parser would read it as LF).
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from nemo_rl_workers.findings.results import Case, Finding, Results

if TYPE_CHECKING:
    from junitparser import TestCase

# Outside XML 1.0's Char production (surrogates cannot be encoded either), and CR, which
# an XML parser turns into LF.
_NOT_XML = re.compile("[^\t\n\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_safe(text: str) -> str:
    return _NOT_XML.sub(lambda m: "\\r" if m[0] == "\r" else f"\\x{ord(m[0]):02x}"
                        if ord(m[0]) < 0x100 else f"\\u{ord(m[0]):04x}", text)


def _line(finding: Finding) -> str:
    where = ""
    if finding.file is not None:
        where = f"{finding.file}:{finding.line}: " if finding.line else f"{finding.file}: "
    return xml_safe(f"{where}{finding.text}")


def _case(case: Case) -> TestCase:
    from junitparser import Error, Failure, TestCase
    from junitparser.junitparser import FinalResult

    test = TestCase(xml_safe(case.name), xml_safe(f"nemo-rl-workers.{case.suite}"))
    outcome: list[FinalResult] = []
    if case.error is not None:
        error = Error(xml_safe(case.error), "unusable")
        error.text = xml_safe(case.error)
        outcome.append(error)
    failed = [f for f in case.findings if f.severity == "error"]
    if failed:
        # One <failure> per case, as JUnit readers count them: every finding on its line.
        summary = _line(failed[0]) + (f" (and {len(failed) - 1} more)" if failed[1:] else "")
        failure = Failure(summary, xml_safe(",".join(dict.fromkeys(f.rule for f in failed))))
        failure.text = "\n".join(_line(f) for f in failed)
        outcome.append(failure)
    test.result = outcome
    notes = [_line(f) for f in case.findings if f.severity != "error"]
    notes += [xml_safe(n) for n in case.notes]
    if notes:
        test.system_out = "\n".join(notes)
    return test


def render(results: Results) -> str:
    from junitparser import JUnitXml, TestSuite

    suite = TestSuite(f"nemo-rl-workers {results.command}")
    if results.nemo_rl is not None:  # which NeMo-RL was judged, as a suite property
        suite.add_property("nemo_rl", json.dumps(results.nemo_rl, sort_keys=True))
    for case in results.cases:
        suite.add_testcase(_case(case))
    xml = JUnitXml()
    xml.add_testsuite(suite)
    unannotated: Any = xml  # junitparser leaves these two methods unannotated
    unannotated.update_statistics()
    text: bytes = unannotated.tostring()
    return text.decode("utf-8") + ("" if text.endswith(b"\n") else "\n")
