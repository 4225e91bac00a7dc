"""`--output-format github`: GitHub Actions workflow commands, one line per finding.

`::error file=F,line=N,title=RULE::MESSAGE` (`::warning` / `::notice` for the milder
severities) puts the finding on the pull request's line. Escaped as GitHub's toolkit
does (`escapeData`, `escapeProperty`): `%`, CR and LF in the message; also `,` and `:` in
the properties. Other control characters are written as `\\xNN` so a message can neither
end the command nor drive the terminal of whoever reads the log.
"""

from __future__ import annotations

from nemo_rl_workers.errors import one_line
from nemo_rl_workers.findings.results import Finding, Results

_COMMAND = {"error": "error", "warning": "warning", "note": "notice"}


def escape_data(text: str) -> str:
    return one_line(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(finding: Finding) -> str:
    props: list[str] = []
    if finding.file is not None:
        props.append(f"file={escape_property(finding.file)}")
        if finding.line is not None:
            props.append(f"line={finding.line}")
    props.append(f"title={escape_property(finding.heading)}")
    return f"::{_COMMAND[finding.severity]} {','.join(props)}::{escape_data(finding.text)}"


def render(results: Results) -> str:
    return "".join(annotation(f) + "\n" for f in results.annotations())
