"""`--output-format junit`: JUnit XML, one test case per config, class or worker pair.

Built with `junitparser`: one `<testsuite>` named after the command; a case with
findings of severity error fails (one `<failure>` per finding, its rule as the type), one
that could not be judged at all is an `<error>`, warnings and notes go to its
`<system-out>`. Characters XML 1.0 cannot hold are written as `\\xNN`.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from nemo_rl.workers.formats.findings import Case, Finding, Results

if TYPE_CHECKING:
    from junitparser import TestCase

# XML 1.0's Char production, less what it allows; surrogates cannot be encoded either.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_safe(text: str) -> str:
    return _NOT_XML.sub(lambda m: f"\\x{ord(m[0]):02x}" if ord(m[0]) < 0x100
                        else f"\\u{ord(m[0]):04x}", text)


def _line(finding: Finding) -> str:
    where = ""
    if finding.file is not None:
        where = f"{finding.file}:{finding.line}: " if finding.line else f"{finding.file}: "
    return xml_safe(f"{where}{finding.message}")


def _case(case: Case) -> TestCase:
    from junitparser import Error, Failure, TestCase
    from junitparser.junitparser import FinalResult

    test = TestCase(xml_safe(case.name), xml_safe(f"nemo-rl-workers.{case.suite}"))
    outcome: list[FinalResult] = []
    if case.error is not None:
        error = Error(xml_safe(case.error), "unusable")
        error.text = xml_safe(case.error)
        outcome.append(error)
    for finding in case.findings:
        if finding.severity == "error":
            failure = Failure(_line(finding), xml_safe(finding.rule))
            failure.text = _line(finding)
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
    for case in results.cases:
        suite.add_testcase(_case(case))
    xml = JUnitXml()
    xml.add_testsuite(suite)
    unannotated: Any = xml  # junitparser leaves these two methods unannotated
    unannotated.update_statistics()
    text: bytes = unannotated.tostring()
    return text.decode("utf-8") + ("" if text.endswith(b"\n") else "\n")
